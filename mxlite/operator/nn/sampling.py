"""Resizing and sampling ops: BilinearResize2D, AdaptiveAvgPooling2D, GridGenerator,
BilinearSampler and SpatialTransformer.

Resizing and adaptive pooling are separable linear maps ``y = Ah x Aw^T``. Each is a
pair of registered adjoint ops (the forward and its ``_backward_*`` twin), so that a
gradient differentiates again. The resize forward gathers the two neighbours of every
output row and column and blends them in MXNet's order, so values match its CPU kernel;
its source positions are computed in float32 for every dtype, as MXNet does.

The sampler's gradient is written with ``take`` and its scatter-add adjoint
``_backward_take`` over the four corners of each sample (weights differentiable in the
grid, corner indices constant), so second-order gradients work too. SpatialTransformer
is ``BilinearSampler(data, GridGenerator(loc))``: MXNet 1.9.1 gives the same numbers.
"""
import numpy as np

from ... import nd
from ...base import (MXNetError, parse_int, parse_float, parse_bool, parse_shape,
                     optional)
from ..registry import register_op, Param, apply, array_module_of, dtypes, ranks
from ..util import same_dtype, const_like, raw_data

_RESIZE_MODES = ("size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
                 "to_odd_up")
_F32 = np.float32


def _check_4d(name, what, shape):
    if len(shape) != 4:
        raise MXNetError("%s: %s must be 4-D (N, C, H, W), got shape %s"
                         % (name, what, tuple(shape)))


def _check_float(name, x):
    if x.dtype.kind != "f":
        raise MXNetError("%s: data must be a floating-point array, got dtype %s"
                         % (name, x.dtype))


def _separable(xp, x, ah, aw):
    """``ah @ x @ aw.T`` over the last two axes of (N, C, H, W) ``x``."""
    return xp.matmul(xp.matmul(ah, x), aw.T)


# -- BilinearResize2D ------------------------------------------------------------------

def _scaled(n, scale):
    # NOTE: MXNet multiplies in float32 and truncates (0.3 * 10 is 3, not 2.999...).
    return int(_F32(scale) * _F32(n))


def _resize_size(p, shape, like_shape=None):
    """The output (height, width) of BilinearResize2D for data of ``shape``."""
    h, w = shape[2], shape[3]
    mode = p.mode
    if mode == "size":
        # NOTE: MXNet reads scale_width only when scale_height is set (and fails when
        # scale_width is then missing); a lone scale_width falls back to height/width.
        if p.scale_height is None:
            return p.height, p.width
        if p.scale_width is None:
            raise MXNetError("_contrib_BilinearResize2D: scale_height=%r is set but "
                             "scale_width is not; give both scales (or neither)"
                             % (p.scale_height,))
        return _scaled(h, p.scale_height), _scaled(w, p.scale_width)
    if mode == "odd_scale":
        if p.scale_height is None or p.scale_width is None:
            raise MXNetError("_contrib_BilinearResize2D: mode='odd_scale' needs scale_height "
                             "and scale_width, got %r and %r" % (p.scale_height, p.scale_width))
        return tuple(_scaled(n, s) if n % 2 == 0 else _scaled(n - 1, s) + 1
                     for n, s in ((h, p.scale_height), (w, p.scale_width)))
    if mode == "like":
        return like_shape[2], like_shape[3]
    even = mode.startswith("to_even")
    step = -1 if mode.endswith("down") else 1
    return tuple(n if (n % 2 == 0) == even else n + step for n in (h, w))


def _resize_axis(n_in, n_out, align_corners):
    """Source rows (or columns) ``i0``, ``i1`` and the weight ``lam`` of ``i1`` for each
    output position, as MXNet's CPU kernel computes them (float32 positions)."""
    if n_out > 1:
        scale = _F32(n_in - 1) / _F32(n_out - 1) if align_corners else _F32(n_in) / _F32(n_out)
    else:
        scale = _F32(0)
    dst = np.arange(n_out)
    if align_corners:
        src = scale * dst.astype(_F32)
    else:
        # NOTE: MXNet forms scale * (dst + 0.5) - 0.5 in double, then stores a float.
        src = (np.float64(scale) * (dst + 0.5) - 0.5).astype(_F32)
        src = np.maximum(src, _F32(0))
    i0 = src.astype(np.int64)
    i1 = np.where(i0 < n_in - 1, i0 + 1, i0)
    return i0, i1, src - i0.astype(_F32)


def _resize_weights(xp, n_in, n_out, align_corners, dtype, axis):
    """(i0, i1, lam0, lam1) on ``xp``, weights shaped to broadcast along ``axis``."""
    i0, i1, lam = _resize_axis(n_in, n_out, align_corners)
    shape = (-1, 1) if axis == 2 else (-1,)
    lam1 = lam.astype(dtype).reshape(shape)
    lam0 = dtype.type(1) - lam1
    return xp.asarray(i0), xp.asarray(i1), xp.asarray(lam0), xp.asarray(lam1)


def _resize_matrix(n_in, n_out, align_corners, dtype):
    """The (n_out, n_in) interpolation matrix of one axis (NumPy)."""
    i0, i1, lam = _resize_axis(n_in, n_out, align_corners)
    lam1 = lam.astype(dtype)
    a = np.zeros((n_out, n_in), dtype)
    rows = np.arange(n_out)
    np.add.at(a, (rows, i0), dtype.type(1) - lam1)
    np.add.at(a, (rows, i1), lam1)
    return a


def _check_resize_params(p):
    for name in ("height", "width"):
        v = getattr(p, name)
        if not 1 <= v <= 10000:
            raise MXNetError("_contrib_BilinearResize2D: %s=%d must be in [1, 10000]"
                             % (name, v))


def _resize(p, xp, x, like=None):
    name = "_contrib_BilinearResize2D"
    _check_resize_params(p)
    _check_4d(name, "data", x.shape)
    _check_float(name, x)
    if like is not None:
        _check_4d(name, "like", like.shape)
    ho, wo = _resize_size(p, x.shape, None if like is None else like.shape)
    if ho < 0 or wo < 0:
        raise MXNetError("%s: the output size (%d, %d) for data of shape %s is negative; "
                         "expected non-negative scales" % (name, ho, wo, tuple(x.shape)))
    h, w = x.shape[2:]
    if (ho, wo) == (h, w):
        return x.copy()
    dtype = x.dtype
    ih0, ih1, lh0, lh1 = _resize_weights(xp, h, ho, p.align_corners, dtype, 2)
    iw0, iw1, lw0, lw1 = _resize_weights(xp, w, wo, p.align_corners, dtype, 3)
    # MXNet's blend, h0 * (w0 * p00 + w1 * p01) + h1 * (w0 * p10 + w1 * p11): the
    # columns of every input row first (same numbers, fewer gathers), then the rows.
    u = lw0 * xp.take(x, iw0, axis=3) + lw1 * xp.take(x, iw1, axis=3)
    y = lh0 * u[:, :, ih0] + lh1 * u[:, :, ih1]
    return y.astype(dtype, copy=False)


def _resize_backward(p, xp, gy):
    """The adjoint of the resize: gy of (N, C, Ho, Wo) back onto (N, C, height, width)."""
    dtype = gy.dtype
    ah = xp.asarray(_resize_matrix(p.height, gy.shape[2], p.align_corners, dtype))
    aw = xp.asarray(_resize_matrix(p.width, gy.shape[3], p.align_corners, dtype))
    return _separable(xp, gy, ah.T, aw.T).astype(dtype, copy=False)


def _resize_grad(p, x, y, gy, need):
    data = x[0]
    op = _RESIZE_BWD
    gx = apply(op, (gy[0],), op.parse_params({
        "height": data.shape[2], "width": data.shape[3], "align_corners": p.align_corners}))
    return [gx] + [nd.zeros_like(like) for like in x[1:]]


def _resize_backward_grad(p, x, y, gy, need):
    g = x[0]
    return [nd.contrib.BilinearResize2D(gy[0], height=g.shape[2], width=g.shape[3],
                                        align_corners=p.align_corners)]


_RESIZE_PARAMS = [
    Param("height", parse_int, 1, "Output height (mode 'size' without scale_height)."),
    Param("width", parse_int, 1, "Output width (mode 'size' without scale_height)."),
    Param("scale_height", optional(parse_float), None,
          "Scale of the height (modes 'size' and 'odd_scale')."),
    Param("scale_width", optional(parse_float), None,
          "Scale of the width (modes 'size' and 'odd_scale')."),
    Param("mode", None, "size", choices=_RESIZE_MODES, doc=
          "'size', 'odd_scale', 'like' (the ``like`` input's height and width), "
          "'to_even_down', 'to_even_up', 'to_odd_down' or 'to_odd_up'."),
    Param("align_corners", parse_bool, True,
          "Map corner pixel centres onto each other (True) or scale pixel areas (False)."),
]

register_op(
    "_contrib_BilinearResize2D", _resize, gradient=_resize_grad, saves="",
    inputs=lambda p: ("data", "like") if p.mode == "like" else ("data",),
    params=_RESIZE_PARAMS,
    doc="Resize 4-D (N, C, H, W) data with bilinear interpolation, as MXNet 1.9.1's CPU "
        "kernel. Mode 'size' with scales reads scale_width only when scale_height is set, as "
        "MXNet does; ``like`` may have any batch size (MXNet's backward overflows a buffer "
        "when it differs from data's).\n\n>>> x = mx.nd.array([[[[1, 2], [3, 4]]]])\n"
        ">>> mx.nd.contrib.BilinearResize2D(x, height=3, width=3)  # [[1, 1.5, 2], ...]")

_RESIZE_BWD = register_op(
    "_backward_contrib_BilinearResize2D", _resize_backward, gradient=_resize_backward_grad,
    saves="", inputs=("ograd",), check=ranks(ograd=(4, 4)),
    params=[Param("height", parse_int, doc="The resized data's height.", low=1),
            Param("width", parse_int, doc="The resized data's width.", low=1),
            Param("align_corners", parse_bool, True, "As in the forward.")],
    doc="The adjoint of BilinearResize2D: spread ``ograd`` back onto (height, width).")


# -- AdaptiveAvgPooling2D ----------------------------------------------------------------

def _pool_size(p, shape):
    size = p.output_size
    if size is None or len(size) == 0:
        size = (1, 1)
    elif len(size) == 1:
        size = (size[0], size[0])
    if len(size) != 2 or min(size) < 0:
        raise MXNetError("_contrib_AdaptiveAvgPooling2D: output_size=%s, expected an int or "
                         "a (height, width) pair of non-negative ints" % (p.output_size,))
    return size


def _pool_matrix(n_in, n_out, dtype):
    """(n_out, n_in) averaging matrix: output o averages [floor(o*n/m), ceil((o+1)*n/m))."""
    o = np.arange(n_out)
    start = (o * n_in) // n_out
    end = -((-(o + 1) * n_in) // n_out)
    cols = np.arange(n_in)
    inside = (cols >= start[:, None]) & (cols < end[:, None])
    return (inside / (end - start)[:, None]).astype(dtype)


def _adaptive_pool(p, xp, x):
    _check_4d("_contrib_AdaptiveAvgPooling2D", "data", x.shape)
    _check_float("_contrib_AdaptiveAvgPooling2D", x)
    ho, wo = _pool_size(p, x.shape)
    ah = xp.asarray(_pool_matrix(x.shape[2], ho, x.dtype))
    aw = xp.asarray(_pool_matrix(x.shape[3], wo, x.dtype))
    return _separable(xp, x, ah, aw).astype(x.dtype, copy=False)


def _adaptive_pool_backward(p, xp, gy):
    ah = xp.asarray(_pool_matrix(p.height, gy.shape[2], gy.dtype))
    aw = xp.asarray(_pool_matrix(p.width, gy.shape[3], gy.dtype))
    return _separable(xp, gy, ah.T, aw.T).astype(gy.dtype, copy=False)


def _adaptive_pool_grad(p, x, y, gy, need):
    op = _POOL_BWD
    return [apply(op, (gy[0],), op.parse_params({"height": x[0].shape[2],
                                                  "width": x[0].shape[3]}))]


def _adaptive_pool_backward_grad(p, x, y, gy, need):
    return [nd.contrib.AdaptiveAvgPooling2D(gy[0], output_size=tuple(x[0].shape[2:]))]


register_op(
    "_contrib_AdaptiveAvgPooling2D", _adaptive_pool, gradient=_adaptive_pool_grad, saves="",
    params=[Param("output_size", parse_shape, (),
                  "Output (height, width); one int for a square; empty for 1x1.")],
    doc="Average pooling of 4-D data onto a fixed output size: output row o averages input "
        "rows [floor(o*H/Ho), ceil((o+1)*H/Ho)), likewise for columns.\n\n"
        ">>> mx.nd.contrib.AdaptiveAvgPooling2D(mx.nd.ones((1, 1, 5, 5)), output_size=2)")

_POOL_BWD = register_op(
    "_backward_contrib_AdaptiveAvgPooling2D", _adaptive_pool_backward,
    gradient=_adaptive_pool_backward_grad, saves="", inputs=("ograd",),
    check=ranks(ograd=(4, 4)),
    params=[Param("height", parse_int, doc="The pooled data's height.", low=1),
            Param("width", parse_int, doc="The pooled data's width.", low=1)],
    doc="The adjoint of AdaptiveAvgPooling2D: spread ``ograd`` back onto (height, width).")


# -- GridGenerator -------------------------------------------------------------------------

def _check_grid_size(name, what, h, w):
    # NOTE: MXNet divides by (size - 1) and returns NaN grids for a size of 1.
    if h < 2 or w < 2:
        raise MXNetError("%s: %s (%d, %d) must be at least 2 in each dim (a grid spans "
                         "[-1, 1] with size - 1 steps)" % (name, what, h, w))


def _affine_dst(h, w, dtype):
    """MXNet's (3, h*w) target grid: normalised x, y and ones (NumPy)."""
    j = np.arange(h * w)
    xs = dtype.type(-1) + (j % w).astype(dtype) * dtype.type(2.0 / (w - 1))
    ys = dtype.type(-1) + (j // w).astype(dtype) * dtype.type(2.0 / (h - 1))
    return np.stack([xs, ys, np.ones(h * w, dtype)])


def _warp_scale(h, w, dtype):
    """(1, 2, 1, 1) divisors (W - 1) / 2 and (H - 1) / 2 of a warp (NumPy)."""
    return np.array([(w - 1) / 2.0, (h - 1) / 2.0], dtype).reshape(1, 2, 1, 1)


def _check_affine(name, what, loc, target_shape):
    if len(loc.shape) != 2 or loc.shape[1] != 6:
        raise MXNetError("%s: %s must have shape (batch, 6) (an affine matrix per sample), "
                         "got %s" % (name, what, tuple(loc.shape)))
    if len(target_shape) != 2 or min(target_shape) <= 0:
        raise MXNetError("%s: target_shape=%s, expected a positive (height, width)"
                         % (name, tuple(target_shape)))
    _check_grid_size(name, "target_shape", *target_shape)


def _affine_grid(xp, loc, target_shape):
    h, w = target_shape
    dst = xp.asarray(_affine_dst(h, w, loc.dtype))
    theta = loc.reshape(loc.shape[0], 2, 3)
    return xp.matmul(theta, dst).reshape(loc.shape[0], 2, h, w)


def _grid_generator(p, xp, x):
    name = "GridGenerator"
    _check_float(name, x)
    if p.transform_type == "affine":
        _check_affine(name, "data", x, p.target_shape)
        return _affine_grid(xp, x, p.target_shape)
    if len(x.shape) != 4 or x.shape[1] != 2:
        raise MXNetError("%s: data must be a flow of shape (batch, 2, H, W) for "
                         "transform_type='warp', got %s" % (name, tuple(x.shape)))
    h, w = x.shape[2:]
    _check_grid_size(name, "the flow's (H, W)", h, w)
    cols = np.broadcast_to(np.arange(w, dtype=x.dtype), (h, w))
    rows = np.broadcast_to(np.arange(h, dtype=x.dtype)[:, None], (h, w))
    dst = xp.asarray(np.stack([cols, rows]))
    return ((x + dst) / xp.asarray(_warp_scale(h, w, x.dtype)) - 1).astype(x.dtype, copy=False)


def _affine_grid_grad(g, target_shape):
    """d loc of an affine grid for grid gradient ``g`` (N, 2, H, W), in mxlite ops."""
    h, w = target_shape
    n = g.shape[0]
    dst_t = const_like(g, np.ascontiguousarray(_affine_dst(h, w, np.dtype(g.dtype)).T))
    return nd.dot(g.reshape((n * 2, h * w)), dst_t).reshape((n, 6))


def _grid_generator_grad(p, x, y, gy, need):
    g = gy[0]
    if p.transform_type == "affine":
        return [_affine_grid_grad(g, p.target_shape)]
    h, w = g.shape[2:]
    return [nd.broadcast_div(g, const_like(g, _warp_scale(h, w, np.dtype(g.dtype))))]


register_op(
    "GridGenerator", _grid_generator, gradient=_grid_generator_grad, saves="",
    params=[Param("transform_type", choices=("affine", "warp"),
                  doc="'affine' (data: (batch, 6) matrices) or 'warp' (data: a "
                      "(batch, 2, H, W) flow in pixels)."),
            Param("target_shape", parse_shape, (0, 0), "Output (H, W) for 'affine'.")],
    doc="Sampling grids for BilinearSampler, normalised to [-1, 1]: an affine map of the "
        "target grid, or the pixel grid moved by a flow. MXNet's grids are NaN for a size "
        "of 1; mxlite raises instead. MXNet's CPU kernel takes float32 only; mxlite also "
        "float64.\n\n"
        ">>> mx.nd.GridGenerator(mx.nd.array([[1, 0, 0, 0, 1, 0]]), transform_type='affine',"
        "\n...                  target_shape=(2, 2))")


# -- BilinearSampler -------------------------------------------------------------------------

_CORNERS = ((0, 0), (0, 1), (1, 0), (1, 1))


def _check_sampler(name, data, grid, grid_what="grid"):
    _check_4d(name, "data", data.shape)
    _check_float(name, data)
    if len(grid.shape) != 4 or grid.shape[1] != 2:
        raise MXNetError("%s: %s must have shape (batch, 2, H, W), got %s"
                         % (name, grid_what, tuple(grid.shape)))
    if grid.shape[0] != data.shape[0]:
        raise MXNetError("%s: %s has batch size %d, expected %d as data of shape %s"
                         % (name, grid_what, grid.shape[0], data.shape[0], tuple(data.shape)))
    same_dtype(name, data, grid)


def _sample_points(xp, grid, h, w):
    """Source positions of each sample: top-left corner (x0, y0) as floats and the
    fractions (fx, fy) past it, in the grid's dtype as MXNet computes them."""
    xr = (grid[:, 0] + 1) * (w - 1) / 2
    yr = (grid[:, 1] + 1) * (h - 1) / 2
    x0, y0 = xp.floor(xr), xp.floor(yr)
    return x0, y0, xr - x0, yr - y0


def _corner_index(xp, x0, y0, h, w, dy, dx):
    """Flat index into (H*W) of one corner, 0 where it falls outside, and its mask."""
    xi = x0.astype(np.int64) + dx
    yi = y0.astype(np.int64) + dy
    valid = (xi >= 0) & (xi < w) & (yi >= 0) & (yi < h)
    return xp.where(valid, yi * w + xi, 0), valid


def _bilinear_sample(xp, data, grid):
    n, c, h, w = data.shape
    ho, wo = grid.shape[2:]
    x0, y0, fx, fy = _sample_points(xp, grid, h, w)
    wx = (1 - fx, fx)
    wy = (1 - fy, fy)
    flat = data.reshape(n, c, h * w)
    y = xp.zeros((n, c, ho, wo), data.dtype)
    for dy, dx in _CORNERS:
        idx, valid = _corner_index(xp, x0, y0, h, w, dy, dx)
        v = xp.take_along_axis(flat, idx.reshape(n, 1, ho * wo), axis=2).reshape(n, c, ho, wo)
        # out-of-range corners read zeros (MXNet's zero padding)
        v = xp.where(valid[:, None], v, 0)
        y += v * wy[dy][:, None] * wx[dx][:, None]
    return y


def _sampler(p, xp, data, grid):
    _check_sampler("BilinearSampler", data, grid)
    return _bilinear_sample(xp, data, grid)


def _scatter_add_rule(p, vals, idx):
    if idx.shape != vals.shape:
        raise MXNetError("indices has shape %s, expected %s (the data's)" % (idx.shape, vals.shape))
    if idx.size and not bool(((idx >= 0) & (idx < p.size)).all()):
        raise MXNetError("indices expected values in [0, %d), got %s"
                         % (p.size, idx.min() if idx.min() < 0 else idx.max()))


def _scatter_add_raw(p, xp, vals, idx):
    # NOTE: bincount sums in float64 and is many times faster than add.at.
    y = xp.bincount(idx.ravel(), weights=vals.ravel(), minlength=p.size)
    return y.astype(vals.dtype, copy=False)


def _scatter_add_grad(p, x, y, gy, need):
    return [nd.take(gy[0], x[1], axis=0, mode="clip"), None]


_SCATTER = register_op(
    "_sampling_scatter_add", _scatter_add_raw, gradient=_scatter_add_grad, saves="x",
    inputs=("data", "indices"), params=[Param("size", parse_int, doc="Output length.", low=0)],
    check=(dtypes(indices="iu"), _scatter_add_rule),
    doc="A 1-D array of ``size`` zeros with ``data`` added at integer ``indices`` "
        "(the adjoint of ``take`` along axis 0).")


def _scatter_add(vals, idx, size):
    return apply(_SCATTER, (vals, idx), _SCATTER.parse_params({"size": size}))


def _sampler_grad_nd(data, grid, g):
    """[d data, d grid] of BilinearSampler for head gradient ``g``, in mxlite ops.

    Corner indices and masks are constants (the floor is flat); the bilinear weights
    are mxlite expressions of ``grid``, so the result differentiates again.
    """
    n, c, h, w = data.shape
    ho, wo = grid.shape[2:]
    graw = raw_data(grid)
    xp = array_module_of(graw)
    x0, y0, _, _ = _sample_points(xp, graw, h, w)
    base = (xp.arange(n * c, dtype=np.int64) * (h * w)).reshape(n, c, 1, 1)
    gxr = (nd.slice_axis(grid, axis=1, begin=0, end=1) + 1) * ((w - 1) / 2.0)
    gyr = (nd.slice_axis(grid, axis=1, begin=1, end=2) + 1) * ((h - 1) / 2.0)
    fx = gxr - const_like(data, x0[:, None])
    fy = gyr - const_like(data, y0[:, None])
    wx, wy = (1 - fx, fx), (1 - fy, fy)
    flat = data.reshape((-1,))
    vals, idxs, v = [], [], {}
    for dy, dx in _CORNERS:
        idx, valid = _corner_index(xp, x0, y0, h, w, dy, dx)
        full = base + idx[:, None]
        mask = const_like(data, valid[:, None].astype(data.dtype))
        v[dy, dx] = nd.take(flat, const_like(data, full), axis=0, mode="clip") * mask
        vals.append(g * (wy[dy] * wx[dx] * mask))
        idxs.append(full)
    all_idx = const_like(data, xp.concatenate(idxs))
    gdata = _scatter_add(nd.concat(*vals, dim=0), all_idx, data.size).reshape(data.shape)
    # d out / d fx and d fy: the differences between neighbouring corners
    dfx = wy[0] * (v[0, 1] - v[0, 0]) + wy[1] * (v[1, 1] - v[1, 0])
    dfy = wx[0] * (v[1, 0] - v[0, 0]) + wx[1] * (v[1, 1] - v[0, 1])
    ggx = nd.sum(g * dfx, axis=1, keepdims=True) * ((w - 1) / 2.0)
    ggy = nd.sum(g * dfy, axis=1, keepdims=True) * ((h - 1) / 2.0)
    return [gdata, nd.concat(ggx, ggy, dim=1)]


def _sampler_grad(p, x, y, gy, need):
    return _sampler_grad_nd(x[0], x[1], gy[0])


register_op(
    "BilinearSampler", _sampler, gradient=_sampler_grad, saves="x", inputs=("data", "grid"),
    params=[Param("cudnn_off", optional(parse_bool), None, "Ignored (no cuDNN).")],
    doc="Sample 4-D data at a grid of (x, y) positions normalised to [-1, 1] with bilinear "
        "interpolation; corners outside the data read zeros. Output: (N, C, grid H, grid W)."
        "\n\n>>> grid = mx.nd.GridGenerator(mx.nd.array([[1, 0, 0, 0, 1, 0]]), "
        "transform_type='affine', target_shape=(4, 4))\n"
        ">>> mx.nd.BilinearSampler(mx.nd.ones((1, 1, 4, 4)), grid)")


# -- SpatialTransformer -----------------------------------------------------------------------

def _check_transformer(p, data, loc):
    name = "SpatialTransformer"
    _check_4d(name, "data", data.shape)
    _check_affine(name, "loc", loc, p.target_shape)
    if loc.shape[0] != data.shape[0]:
        raise MXNetError("%s: loc has batch size %d, expected %d as data of shape %s"
                         % (name, loc.shape[0], data.shape[0], tuple(data.shape)))
    same_dtype(name, data, loc)


def _transformer(p, xp, data, loc):
    _check_transformer(p, data, loc)
    _check_float("SpatialTransformer", data)
    return _bilinear_sample(xp, data, _affine_grid(xp, loc, p.target_shape))


def _transformer_grad(p, x, y, gy, need):
    data, loc = x
    grid = nd.GridGenerator(loc, transform_type="affine", target_shape=p.target_shape)
    gdata, ggrid = _sampler_grad_nd(data, grid, gy[0])
    return [gdata, _affine_grid_grad(ggrid, p.target_shape)]


register_op(
    "SpatialTransformer", _transformer, gradient=_transformer_grad, saves="x",
    inputs=("data", "loc"),
    params=[Param("target_shape", parse_shape, (0, 0), "Output (H, W)."),
            Param("transform_type", choices=("affine",)),
            Param("sampler_type", choices=("bilinear",)),
            Param("cudnn_off", optional(parse_bool), None, "Ignored (no cuDNN).")],
    doc="A spatial transformer: BilinearSampler(data, GridGenerator(loc, 'affine', "
        "target_shape)), with ``loc`` the (batch, 6) affine matrices of a localisation net.")
