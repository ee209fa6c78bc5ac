"""Smaller ops MXNet models and scripts use: make_loss, batch_take, Crop, amp_cast,
amp_multicast, im2col/col2im and a few contrib helpers (index_array,
gradientmultiplier, round_ste, sign_ste, allclose, quadratic).

Where MXNet 1.9.1 silently reads out of bounds (``batch_take`` on data of more than
two dimensions, ``index_array`` with an axis out of range, ``Crop`` with a negative
offset) or fails for a case it documents (``im2col``/``col2im`` with one spatial
dimension (and three), ``Crop`` for anything but float32, ``amp_cast`` and
``amp_multicast`` for float16/float64 data on CPU), these ops raise a clear error
or do the documented thing instead. bfloat16 has no NumPy type and is not offered.
"""
import itertools

import numpy as np

from ... import nd
from ...base import (MXNetError, np_dtype, parse_bool, parse_float, parse_int, parse_shape,
                     optional)
from ..nn.convolution import geometry, conv_out_size, pad_spatial, windows
from ..registry import register_op, Param, dtypes, ranks
from ..util import fill_missing, identity_grad, zeros_grad, same_dtype

_F16_F32 = (np.dtype(np.float16), np.dtype(np.float32))


# -- make_loss ------------------------------------------------------------------------

def _make_loss_grad(p, x, y, gy, need):
    return [nd.ones_like(gy[0])]


register_op("make_loss", lambda p, xp, x: x.copy(), gradient=_make_loss_grad,
            saves="", output_names=("loss",),
            doc="Mark an array as a loss: identity forward, and a gradient of ones whatever "
                "the head gradient (unlike ``MakeLoss`` it has no grad_scale or "
                "normalization).", same_shape=(0,))


# -- batch_take -----------------------------------------------------------------------

def _batch_take_check(a, indices):
    if indices.dtype.kind not in "iu":
        raise MXNetError("batch_take: indices must be an integer array (int32), got %s"
                         % indices.dtype)
    if indices.size != a.shape[0]:
        raise MXNetError("batch_take: indices has %d element(s) (shape %s), expected one "
                         "per row of data %s" % (indices.size, indices.shape, a.shape))


def _batch_take(p, xp, a, indices):
    _batch_take_check(a, indices)
    # Out-of-range indices are clipped to [0, M - 1], as MXNet does.
    j = xp.clip(indices.reshape(-1).astype(np.int64), 0, a.shape[1] - 1)
    return a[xp.arange(a.shape[0]), j].reshape(indices.shape)


def _batch_take_shape(p, shapes):
    a, idx = shapes
    if a is None or idx is None:
        return shapes
    if len(a) != 2 or int(np.prod(idx)) != a[0]:
        raise MXNetError("batch_take: expected data (N, M) and N indices, got data %s and "
                         "indices %s" % (tuple(a), tuple(idx)))
    return shapes, [tuple(idx)]


# NOTE: MXNet 1.9.1 takes data of more dimensions but then reads past it (its row length
# is size / shape[0], its check uses shape[-1]): 2-D only here.
register_op("batch_take", _batch_take, inputs=("a", "indices"), infer_shape=_batch_take_shape,
            check=ranks(a=(2, 2)),
            doc="``out[i] = a[i, indices[i]]`` for 2-D ``a``; indices out of range are "
                "clipped to the row. Not differentiable (as in MXNet; use ``pick``).")


# -- Crop -----------------------------------------------------------------------------

def _crop_box(p, shape, like_shape):
    """(top, left, height, width) of the crop of a 4-D ``shape``."""
    if len(shape) != 4:
        raise MXNetError("Crop: data must be 4-D (batch, channel, height, width), got shape %s"
                         % (shape,))
    if like_shape is not None:
        if len(like_shape) != 4:
            raise MXNetError("Crop: crop_like must be 4-D, got shape %s" % (like_shape,))
        h, w = like_shape[2:]
    else:
        if len(p.h_w) != 2 or min(p.h_w) < 1:
            raise MXNetError("Crop: h_w=%s must be two positive sizes (height, width) when "
                             "num_args=1" % (p.h_w,))
        h, w = p.h_w
    H, W = shape[2:]
    if h > H or w > W:
        raise MXNetError("Crop: crop size (%d, %d) is larger than the data's (%d, %d)"
                         % (h, w, H, W))
    if p.center_crop:
        return (H - h) // 2, (W - w) // 2, h, w
    if len(p.offset) != 2:
        raise MXNetError("Crop: offset=%s must have 2 elements (y, x)" % (p.offset,))
    top, left = p.offset
    if not (0 <= top <= H - h and 0 <= left <= W - w):
        raise MXNetError("Crop: offset=%s puts the (%d, %d) crop outside the data's "
                         "(%d, %d); expected 0 <= offset <= (%d, %d)"
                         % (p.offset, h, w, H, W, H - h, W - w))
    return top, left, h, w


def _crop(p, xp, x, like=None):
    top, left, h, w = _crop_box(p, x.shape, None if like is None else like.shape)
    return xp.ascontiguousarray(x[:, :, top:top + h, left:left + w])


def _crop_grad(p, x, y, gy, need):
    top, left, h, w = _crop_box(p, x[0].shape, x[1].shape if len(x) > 1 else None)
    H, W = x[0].shape[2:]
    # the adjoint of a crop: zero padding back to the data's size (differentiable)
    gx = nd.pad(gy[0], mode="constant", constant_value=0,
                pad_width=(0, 0, 0, 0, top, H - h - top, left, W - w - left))
    return [gx] + [nd.zeros_like(like) for like in x[1:]]


def _crop_inputs(p):
    return ("data", "crop_like") if p.num_args == 2 else ("data",)


register_op("Crop", _crop, inputs=_crop_inputs, variadic="num_args", gradient=_crop_grad,
            saves="",
            params=[Param("num_args", parse_int, 1, "1: crop to h_w; 2: crop to the height "
                          "and width of the second input (crop_like).", low=1, high=2),
                    Param("offset", parse_shape, (0, 0), "Top-left corner (y, x) of the crop."),
                    Param("h_w", parse_shape, (0, 0), "Crop (height, width) when num_args=1."),
                    Param("center_crop", parse_bool, False, "Crop the centre; ignores offset.")],
            doc="Crop the height and width of 4-D data to ``h_w`` or to ``crop_like``'s, "
                "at ``offset`` or centred; crop_like gets a zero gradient.")


# -- amp_cast / amp_multicast ---------------------------------------------------------

def _amp_target(dtype_in, dtype):
    """AMP casts only float16/float32 inputs; any other type passes through."""
    return dtype if np.dtype(dtype_in) in _F16_F32 else np.dtype(dtype_in)


def _amp_cast(p, xp, x):
    dt = _amp_target(x.dtype, p.dtype)
    # NOTE: NaN or out-of-range floats have no integer value (C leaves it undefined);
    # NumPy warns about them, the value is as arbitrary either way.
    with np.errstate(invalid="ignore", over="ignore"):
        return _amp_cast_to(xp, x, dt)


def _amp_cast_to(xp, x, dt):
    if dt.kind in "iu" and x.dtype == np.float32:
        # NOTE: MXNet's CPU build casts float32 with an MKL-DNN reorder: round half to
        # even and saturate at the integer type's range (a C cast truncates instead,
        # as it does for float16 sources).
        info = np.iinfo(dt)
        lo, hi = np.float32(info.min), np.float32(info.max)
        if int(hi) > info.max:      # int32's max is no float32: the largest one below
            hi = np.nextafter(hi, np.float32(0))
        return xp.clip(xp.rint(x), lo, hi).astype(dt)
    return x.astype(dt)


def _amp_cast_grad(p, x, y, gy, need):
    return [nd.Cast(gy[0], dtype=x[0].dtype)]


register_op("amp_cast", _amp_cast, gradient=_amp_cast_grad,
            saves="", infer_type=lambda p, dts: [_amp_target(dts[0], p.dtype)],
            params=[Param("dtype", lambda v: np_dtype(v, "amp_cast"), doc="Output dtype.")],
            doc="AMP's cast: float16/float32 inputs become ``dtype``, inputs of any other "
                "type pass unchanged. The gradient is cast back to the input's type.")


def _multicast_types(p, dtypes):
    amp = [np.dtype(d) for d in dtypes if np.dtype(d) in _F16_F32]
    if not amp:
        return [np.dtype(d) for d in dtypes]
    pick = min if p.cast_narrow else max
    target = pick(amp, key=lambda d: d.itemsize)
    return [target if np.dtype(d) in _F16_F32 else np.dtype(d) for d in dtypes]


def _amp_multicast(p, xp, *x):
    if len(x) != p.num_outputs:
        raise MXNetError("amp_multicast: num_outputs=%d but %d inputs were given"
                         % (p.num_outputs, len(x)))
    return tuple(xi.astype(dt) for xi, dt in zip(x, _multicast_types(p, [xi.dtype for xi in x])))


def _amp_multicast_grad(p, x, y, gy, need):
    gy = fill_missing(gy, y)
    return [nd.Cast(g, dtype=xi.dtype) if n else None for xi, g, n in zip(x, gy, need)]


register_op("amp_multicast", _amp_multicast, gradient=_amp_multicast_grad,
            saves="", variadic="num_outputs",
            inputs=lambda p: tuple("data_%d" % i for i in range(p.num_outputs)),
            num_outputs=lambda p: p.num_outputs, infer_type=_multicast_types,
            params=[Param("num_outputs", parse_int, doc="Number of inputs (and outputs)."),
                    Param("cast_narrow", parse_bool, False,
                          "Cast to the narrowest float type among the inputs, not the widest.")],
            doc="AMP's cast of several inputs to one float type: the widest (or, with "
                "cast_narrow, the narrowest) of the float16/float32 inputs; inputs of "
                "other types pass unchanged. Gradients are cast back.")


# -- im2col / col2im ------------------------------------------------------------------

_IM2COL_PARAMS = [
    Param("kernel", parse_shape, doc="Sliding kernel size: (w,), (h, w) or (d, h, w)."),
    Param("stride", parse_shape, (), "Stride between blocks; 1 per dimension by default."),
    Param("dilate", parse_shape, (), "Spacing of kernel points; 1 per dimension by default."),
    Param("pad", parse_shape, (), "Zero padding on both sides; 0 by default."),
]


def _spatial(name, p, ndim):
    nsp = len(p.kernel)
    if nsp not in (1, 2, 3):
        raise MXNetError("%s: kernel=%s must have 1, 2 or 3 dimensions" % (name, p.kernel))
    if ndim != nsp + 2:
        raise MXNetError("%s: data has %d dimension(s), expected %d (N, C and %d spatial "
                         "like kernel=%s)" % (name, ndim, nsp + 2, nsp, p.kernel))
    return geometry(p, nsp, name)


def _im2col(p, xp, x):
    kernel, stride, dilate, pad = _spatial("im2col", p, x.ndim)
    out = conv_out_size("im2col", x.shape[2:], kernel, stride, dilate, pad)
    v = windows(xp, pad_spatial(xp, x, pad), kernel, stride, dilate, out)  # (N,1,C,*out,*k)
    nsp = len(kernel)
    # rows are (channel, kernel offset), channel-major; columns are output positions
    perm = (0, 1, 2) + tuple(range(3 + nsp, 3 + 2 * nsp)) + tuple(range(3, 3 + nsp))
    n, c = x.shape[:2]
    k, positions = int(np.prod(kernel)), int(np.prod(out))
    return xp.ascontiguousarray(xp.transpose(v, perm)).reshape(n, c * k, positions)


def _col2im(p, xp, x):
    if len(p.output_size) != len(p.kernel):
        raise MXNetError("col2im: output_size=%s must have as many dimensions as kernel=%s"
                         % (p.output_size, p.kernel))
    if x.ndim != 3:
        raise MXNetError("col2im: data must be 3-D (N, C * prod(kernel), L), got shape %s"
                         % (x.shape,))
    kernel, stride, dilate, pad = _spatial("col2im", p, len(p.kernel) + 2)
    out = conv_out_size("col2im", p.output_size, kernel, stride, dilate, pad)
    n, ck, positions = x.shape
    k = int(np.prod(kernel))
    if ck % k or positions != int(np.prod(out)):
        raise MXNetError("col2im: data has shape %s, expected (N, C * %d, %d) for kernel=%s, "
                         "output_size=%s, stride=%s, dilate=%s, pad=%s"
                         % (x.shape, k, int(np.prod(out)), kernel, p.output_size, stride,
                            dilate, pad))
    c = ck // k
    cols = x.reshape((n, c) + tuple(kernel) + tuple(out))
    full = tuple(o + 2 * q for o, q in zip(p.output_size, pad))
    y = xp.zeros((n, c) + full, dtype=x.dtype)
    # one strided add per kernel offset: the blocks of one offset never overlap
    for off in itertools.product(*[range(kk) for kk in kernel]):
        dst = tuple(slice(o * d, o * d + s * (m - 1) + 1, s)
                    for o, d, s, m in zip(off, dilate, stride, out))
        y[(slice(None), slice(None)) + dst] += cols[(slice(None), slice(None)) + off]
    crop = tuple(slice(q, q + o) for q, o in zip(pad, p.output_size))
    return xp.ascontiguousarray(y[(slice(None), slice(None)) + crop])


def _geometry_kwargs(p):
    return dict(kernel=p.kernel, stride=p.stride, dilate=p.dilate, pad=p.pad)


def _im2col_grad(p, x, y, gy, need):
    return [nd.col2im(gy[0], output_size=x[0].shape[2:], **_geometry_kwargs(p))]


def _col2im_grad(p, x, y, gy, need):
    return [nd.im2col(gy[0], **_geometry_kwargs(p))]


register_op("im2col", _im2col, gradient=_im2col_grad, saves="", params=_IM2COL_PARAMS,
            doc="Sliding blocks of (N, C, *S) data as columns (N, C * prod(kernel), L), L the "
                "number of block positions (a convolution's output size); rows are "
                "channel-major. Its gradient is col2im.")
register_op("col2im", _col2im, gradient=_col2im_grad, saves="",
            params=[Param("output_size", parse_shape, doc="Spatial size of the image.")]
            + _IM2COL_PARAMS,
            doc="Sum columns (N, C * prod(kernel), L) back into an (N, C, *output_size) "
                "image, overlapping blocks added: the adjoint (gradient) of im2col.")


# -- contrib helpers ------------------------------------------------------------------

def _index_axes(p, ndim):
    if p.axes is None:
        return tuple(range(ndim))
    for a in p.axes:
        if not -ndim <= a < ndim:
            raise MXNetError("_contrib_index_array: axes=%s has axis %d out of range for "
                             "data of %d dimension(s)" % (p.axes, a, ndim))
    return tuple(a % ndim for a in p.axes)


def _index_array(p, xp, x):
    axes = _index_axes(p, x.ndim)
    grid = xp.indices(x.shape, dtype=np.int64)
    out = xp.empty(x.shape + (len(axes),), dtype=np.int64)
    for i, a in enumerate(axes):
        out[..., i] = grid[a]
    return out


register_op("_contrib_index_array", _index_array, gradient=zeros_grad, saves="",
            infer_type=lambda p, dts: [np.dtype(np.int64)],
            params=[Param("axes", optional(parse_shape), None,
                          "The axes whose indices are returned (all by default).")],
            doc="The int64 index of every element: shape ``data.shape + (len(axes),)``, "
                "``out[i, j, ..., k] = (i, j, ...)[axes[k]]``.")


_MULTIPLIER_PARAMS = [Param("scalar", parse_float, 1.0, "The factor on the gradient."),
                      Param("is_int", parse_bool, True, "Ignored (MXNet's scalar type flag).")]


def _gradient_multiplier_grad(p, x, y, gy, need):
    return [nd.contrib.backward_gradientmultiplier(gy[0], scalar=p.scalar)]


register_op("_contrib_gradientmultiplier", lambda p, xp, x: x.copy(),
            gradient=_gradient_multiplier_grad, saves="", params=_MULTIPLIER_PARAMS,
            doc="Identity forward; the backward pass multiplies the gradient by ``scalar`` "
                "(a gradient reversal layer with a negative scalar).")
register_op("_contrib_backward_gradientmultiplier",
            lambda p, xp, gy: (gy * p.scalar).astype(gy.dtype, copy=False),
            gradient=_gradient_multiplier_grad, saves="", params=_MULTIPLIER_PARAMS,
            doc="The backward of gradientmultiplier: ``data * scalar``.")


def _round_away(xp, x):
    if x.dtype.kind not in "fc":
        return x.copy()
    return xp.where(x >= 0, xp.floor(x + 0.5), xp.ceil(x - 0.5)).astype(x.dtype, copy=False)


register_op("_contrib_round_ste", lambda p, xp, x: _round_away(xp, x),
            gradient=identity_grad, saves="",
            doc="Round halves away from zero, with the straight-through gradient: the "
                "head gradient passes unchanged.")
register_op("_contrib_sign_ste", lambda p, xp, x: xp.sign(x), check=dtypes(data="fiu"),
            gradient=identity_grad, saves="",
            doc="The sign (-1, 0, 1), with the straight-through gradient: the head gradient "
                "passes unchanged.")


def _f32(v):
    """A float param as MXNet stores it (C float) and uses it in the kernel."""
    return float(np.float32(v))


def _allclose(p, xp, a, b):
    if a.shape != b.shape:
        raise MXNetError("_contrib_allclose: a and b must have one shape, got %s and %s"
                         % (a.shape, b.shape))
    same_dtype("_contrib_allclose", a, b)
    # NOTE: float16 and integers are compared in float32 arithmetic, as the C kernel's
    # promotion does; the tolerances are C floats in every case.
    ct = np.float64 if a.dtype == np.float64 else np.float32
    a, b = a.astype(ct, copy=False), b.astype(ct, copy=False)
    with np.errstate(invalid="ignore", over="ignore"):
        # NOTE: as MXNet (not NumPy): |a - b| <= atol + rtol * |b| alone, so infinities
        # of opposite signs count as close.
        close = (a == b) | (xp.abs(a - b) <= ct(_f32(p.atol)) + ct(_f32(p.rtol)) * xp.abs(b))
    na, nb = xp.isnan(a), xp.isnan(b)
    close = xp.where(na | nb, na & nb & p.equal_nan, close)
    return xp.asarray(close.all(), dtype=np.uint8).reshape(())


register_op("_contrib_allclose", _allclose, inputs=("a", "b"),
            infer_type=lambda p, dts: [np.dtype(np.uint8)],
            params=[Param("rtol", parse_float, 1e-5, "Relative tolerance."),
                    Param("atol", parse_float, 1e-8, "Absolute tolerance."),
                    Param("equal_nan", parse_bool, True, "Whether NaNs in a and b at the same "
                          "place compare equal.")],
            doc="1 (uint8, shape ()) when ``|a - b| <= atol + rtol * |b|`` everywhere, else "
                "0. Not differentiable.")


def _quadratic(p, xp, x):
    a, b, c = _f32(p.a), _f32(p.b), _f32(p.c)
    if x.dtype == np.float64:
        return a * x * x + b * x + c
    # NOTE: float16 and integer inputs are computed in float32 and cast back
    # (integers truncate towards zero, as MXNet's C cast does).
    xf = x.astype(np.float32)
    af, bf, cf = np.float32(a), np.float32(b), np.float32(c)
    return (af * xf * xf + bf * xf + cf).astype(x.dtype)


_QUADRATIC_PARAMS = [Param("a", parse_float, 0.0, "Coefficient of x ** 2."),
                     Param("b", parse_float, 0.0, "Coefficient of x."),
                     Param("c", parse_float, 0.0, "Constant term.")]


def _quadratic_grad(p, x, y, gy, need):
    return [nd.contrib.backward_quadratic(gy[0], x[0], a=p.a, b=p.b, c=p.c)]


def _backward_quadratic(p, xp, gy, x):
    """``gy * (2 a x + b)``, as MXNet's kernel: in float32 but for float64 inputs."""
    ct = np.float64 if x.dtype == np.float64 else np.float32
    a, b = ct(_f32(p.a)), ct(_f32(p.b))
    return (gy.astype(ct) * (x.astype(ct) * (2 * a) + b)).astype(x.dtype, copy=False)


def _backward_quadratic_grad(p, x, y, gy, need):
    gy_in, data = x
    return [gy[0] * (data * (2 * _f32(p.a)) + _f32(p.b)), gy[0] * gy_in * (2 * _f32(p.a))]


register_op("_contrib_quadratic", _quadratic, gradient=_quadratic_grad, saves="x",
            params=_QUADRATIC_PARAMS, doc="Elementwise ``a * x ** 2 + b * x + c``.")
register_op("_contrib_backward_quadratic", _backward_quadratic, inputs=("ograd", "data"),
            gradient=_backward_quadratic_grad, saves="x", params=_QUADRATIC_PARAMS,
            doc="The backward of quadratic: ``ograd * (2 * a * data + b)``.")
