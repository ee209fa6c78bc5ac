"""Image ops: ``mx.nd.image.*`` / ``mx.sym.image.*`` (MXNet's ``_image_<name>``).

Layout is HWC (one image) or NHWC (a batch) except ``normalize``, which takes the
CHW / NCHW tensors that ``to_tensor`` makes. As in MXNet 1.9.1, the flips, the colour
ops and the lighting ops take one HWC image with 1 or 3 channels; ``to_tensor``,
``resize`` and ``crop`` also take NHWC batches.

Numbers follow MXNet's CPU kernels: colour arithmetic in float32, integer outputs
clipped to [0, 255] and truncated (MXNet's ``saturate_cast``); ``resize`` is OpenCV's
``cv::resize`` (which MXNet calls), with its fixed-point bilinear for uint8. Two MXNet
bugs are not copied: its flips leave the middle column (row) of an odd-sized image
unwritten, and its saturation takes 0.114 * blue as the grey level (mxlite uses the
BT.601 luma of the other colour ops).

Random ops draw from ``mx.random``'s generator of the input's device, so
``mx.random.seed(n)`` repeats them. Those whose gradient needs the draw (the flips and
the brightness/contrast/saturation factors) keep it as a hidden second output, as
Dropout keeps its mask.

Gradients, where MXNet differs: MXNet passes the head gradient straight through every
flip and colour op (``_copy``), which is wrong for a flip or a scaling, and its
``to_tensor``/``resize`` backward fails on shapes. mxlite gives the true derivative of
the flips, ``crop``, ``normalize``, brightness, contrast, saturation and lighting (on
float data, where no clipping happens); ``random_hue`` and ``random_color_jitter`` keep
MXNet's straight-through rule (their exact Jacobian is not worth its cost for an
augmentation); ``to_tensor`` and ``resize`` are not differentiable.
"""
import numpy as np

from .. import nd
from ..base import MXNetError, parse_int, parse_bool, parse_float, parse_float_tuple, parse_shape
from .registry import register_op, Param
from .util import const_like, generator_of, host

_GRAY = (0.299, 0.587, 0.114)       # ITU-R BT.601 luma, MXNet's grey level
_F32 = np.float32


# -- shared helpers ------------------------------------------------------------

def _uniform(xp, x, low, high):
    """One float32 draw in [low, high), MXNet's ``uniform_real_distribution<float>``."""
    u = float(generator_of(x).random())
    return _F32(low + (high - low) * u)


def _check_hwc(name, x, batch=False, channels=(1, 3)):
    ndims = (3, 4) if batch else (3,)
    if x.ndim not in ndims:
        raise MXNetError("%s: input image must have shape (height, width, channels)%s, got %s"
                         % (name, " or (N, height, width, channels)" if batch else "",
                            tuple(x.shape)))
    if channels and x.shape[-1] not in channels:
        raise MXNetError("%s: the last dimension of the image must be its channels, %s, "
                         "got shape %s" % (name, " or ".join(map(str, channels)), tuple(x.shape)))


def _saturate(xp, v, dtype):
    """MXNet's ``saturate_cast``: integer types clip to [0, 255] and truncate."""
    if np.issubdtype(dtype, np.integer):
        return xp.clip(v, 0, 255).astype(dtype)
    return v.astype(dtype, copy=False)


def _as_f32(xp, x):
    return x.astype(_F32, copy=False)


def _arith_dtype(x):
    """float32 arithmetic except for float64 data (C's promotion of DType * float)."""
    return np.float64 if x.dtype == np.float64 else _F32


def _identity_grad(p, x, y, gy, need):
    """MXNet's straight-through rule (``_copy``); exact where the op adds a constant."""
    return [gy[0] * 1]


def _float_out_type(p, dtypes):
    """Output keeps the data type; the hidden draw is float32."""
    return [dtypes[0], np.dtype(_F32)]


# -- to_tensor, normalize ---------------------------------------------------------

def _to_tensor(p, xp, x):
    _check_hwc("to_tensor", x, batch=True, channels=())
    y = xp.moveaxis(_as_f32(xp, x), -1, -3) / _F32(255)
    return xp.ascontiguousarray(y)


register_op("_image_to_tensor", _to_tensor, gradient=None,
            infer_type=lambda p, dtypes: [np.dtype(_F32)],
            doc="HWC (or NHWC) image in [0, 255] -> CHW (NCHW) float32 tensor in [0, 1].\n\n"
                "Not differentiable (MXNet's backward fails on the transposed shape).")


def _norm_stats(p, x, xp):
    if x.ndim not in (3, 4):
        raise MXNetError("normalize: input must have shape (channels, height, width) or "
                         "(N, channels, height, width), got %s" % (tuple(x.shape),))
    c = x.shape[-3]
    if c not in (1, 3):
        raise MXNetError("normalize: the channel dimension must have 1 or 3 elements, got "
                         "shape %s" % (tuple(x.shape),))
    stats = []
    for name, v in (("mean", p.mean), ("std", p.std)):
        if len(v) not in (1, c):
            raise MXNetError("normalize: %s must have 1 or %d elements for data of shape %s, "
                             "got %s" % (name, c, tuple(x.shape), v))
        v = np.broadcast_to(np.array(v[:c] if len(v) >= c else v, np.float64), (c,))
        stats.append(v.reshape(c, 1, 1))
    return stats


def _normalize(p, xp, x):
    mean, std = _norm_stats(p, x, xp)
    dt = x.dtype
    y = (x - xp.asarray(mean.astype(dt))) / xp.asarray(std.astype(dt))
    return y.astype(dt, copy=False)


def _normalize_grad(p, x, y, gy, need):
    _, std = _norm_stats(p, x[0], np)
    # NOTE: MXNet multiplies by 1.0 / std in double; float32 rounding may differ by 1 ulp.
    inv = const_like(gy[0], (1.0 / std).astype(gy[0].dtype))
    return [nd.broadcast_mul(gy[0], inv.reshape((1,) * (x[0].ndim - 3) + inv.shape))]


def _pad_channels(v):
    v = parse_float_tuple(v)
    if v is None or len(v) == 0:
        raise ValueError("expected a number or a tuple of 1 or 3 numbers")
    return v


register_op("_image_normalize", _normalize, gradient=_normalize_grad, saves="x",
            params=[Param("mean", _pad_channels, (0.0, 0.0, 0.0, 0.0), "Mean per channel."),
                    Param("std", _pad_channels, (1.0, 1.0, 1.0, 1.0), "Std per channel.")],
            doc="``(x - mean[c]) / std[c]`` on a CHW or NCHW tensor; one value for all "
                "channels or one per channel.", same_shape=(0,))


# -- resize (OpenCV's cv::resize) --------------------------------------------------

_COEF_BITS = 11                 # OpenCV's INTER_RESIZE_COEF_BITS
_COEF_SCALE = 1 << _COEF_BITS


def _linear_taps(n_in, n_out, clamp_weights):
    """OpenCV's bilinear sources (i0, i1) and float32 weights (w0, w1) per output.

    Columns clamp the fraction at the borders (``clamp_weights``); rows keep it and
    clamp only the row indices, as OpenCV's resize loops do.
    """
    scale = 1.0 / (n_out / n_in)
    f = ((np.arange(n_out) + 0.5) * scale - 0.5).astype(_F32)
    s = np.floor(f).astype(np.int64)
    f = (f - s.astype(_F32)).astype(_F32)
    if clamp_weights:
        f[s < 0], s[s < 0] = 0, 0
        high = s >= n_in - 1
        f[high], s[high] = 0, n_in - 1
    i0, i1 = np.clip(s, 0, n_in - 1), np.clip(s + 1, 0, n_in - 1)
    return i0, i1, (_F32(1) - f).astype(_F32), f


def _fixed(w):
    return np.rint(w * _COEF_SCALE).astype(np.int64)


def _resize_linear(xp, x, h, w):
    hax = x.ndim - 3
    sh, sw, c = x.shape[hax], x.shape[hax + 1], x.shape[-1]
    if sw == 2 * w and sh == 2 * h:
        return _area_half(xp, x)
    ci0, ci1, cw0, cw1 = _linear_taps(sw, w, True)
    ri0, ri1, rw0, rw1 = _linear_taps(sh, h, False)
    cshape = (1,) * hax + (1, w, 1)
    rshape = (1,) * hax + (h, 1)
    if x.dtype == np.uint8:
        xi = x.astype(np.int64)
        t = (xp.take(xi, xp.asarray(ci0), axis=hax + 1) * xp.asarray(_fixed(cw0).reshape(cshape))
             + xp.take(xi, xp.asarray(ci1), axis=hax + 1) * xp.asarray(_fixed(cw1).reshape(cshape)))
        t = t.reshape(x.shape[:hax] + (sh, w * c))
        t0 = xp.take(t, xp.asarray(ri0), axis=hax)
        t1 = xp.take(t, xp.asarray(ri1), axis=hax)
        y = _vresize_u8_xp(xp, t0, t1, _fixed(rw0).reshape(rshape), _fixed(rw1).reshape(rshape))
        return xp.clip(y, 0, 255).astype(np.uint8).reshape(x.shape[:hax] + (h, w, c))
    dt = np.float64 if x.dtype == np.float64 else _F32
    xf = x.astype(dt, copy=False)
    t = (xp.take(xf, xp.asarray(ci0), axis=hax + 1) * xp.asarray(cw0.astype(dt).reshape(cshape))
         + xp.take(xf, xp.asarray(ci1), axis=hax + 1) * xp.asarray(cw1.astype(dt).reshape(cshape)))
    rshape = rshape + (1,)
    y = (xp.take(t, xp.asarray(ri0), axis=hax) * xp.asarray(rw0.astype(dt).reshape(rshape))
         + xp.take(t, xp.asarray(ri1), axis=hax) * xp.asarray(rw1.astype(dt).reshape(rshape)))
    return y.astype(x.dtype, copy=False)


def _vresize_u8_xp(xp, t0, t1, b0, b1):
    """OpenCV's vertical uint8 pass; ``t0``/``t1``: int rows, ``b0``/``b1``: fixed weights."""
    # NOTE: OpenCV's SIMD kernel (VResizeLinearVec_32s8u) drops 4 bits of each row sum
    # and keeps the high half of 16-bit products before a rounded shift by 2: not the
    # exact (b0 t0 + b1 t1 + 2^21) >> 22, and MXNet's numbers are these (off by 1 at times).
    b0, b1 = xp.asarray(b0), xp.asarray(b1)
    return (((t0 >> 4) * b0 >> 16) + ((t1 >> 4) * b1 >> 16) + 2) >> 2


def _area_half(xp, x):
    """OpenCV turns an exact 2x bilinear shrink into its fast area mean of 2x2 blocks."""
    hax = x.ndim - 3
    h, w = x.shape[hax] // 2, x.shape[hax + 1] // 2
    b = x.reshape(x.shape[:hax] + (h, 2, w, 2, x.shape[-1]))
    a, bb = b[..., 0, :, 0, :], b[..., 0, :, 1, :]
    cc, d = b[..., 1, :, 0, :], b[..., 1, :, 1, :]
    if x.dtype == np.uint8:
        s = a.astype(np.int64) + bb + cc + d
        return ((s + 2) >> 2).astype(np.uint8)
    dt = x.dtype.type
    return ((a + bb + cc + d) * dt(0.25)).astype(x.dtype, copy=False)


def _resize_nearest(xp, x, h, w):
    hax = x.ndim - 3

    def src(n_in, n_out):
        return np.minimum(np.floor(np.arange(n_out) * (1.0 / (n_out / n_in))).astype(np.int64),
                          n_in - 1)
    y = xp.take(x, xp.asarray(src(x.shape[hax], h)), axis=hax)
    return xp.take(y, xp.asarray(src(x.shape[hax + 1], w)), axis=hax + 1)


def _resize_size(p, x):
    """(height, width) of the output, MXNet's ``GetHeightAndWidth``."""
    size = p.size
    if len(size) not in (1, 2):
        raise MXNetError("resize: size must be an int or (width, height), got %s" % (size,))
    if any(s <= 0 for s in size):
        raise MXNetError("resize: size must be positive, got %s" % (size,))
    if len(size) == 2:
        return size[1], size[0]
    hax = x.ndim - 3
    dh, dw, s = x.shape[hax], x.shape[hax + 1], size[0]
    if not p.keep_ratio:
        return s, s
    if dh > dw:
        return dh * s // dw, s
    return s, dw * s // dh


def _resize(p, xp, x):
    _check_hwc("resize", x, batch=True, channels=())
    if x.dtype not in (np.uint8, np.float32, np.float64):
        raise MXNetError("resize: data type %s is not supported; use uint8, float32 or "
                         "float64" % x.dtype)
    h, w = _resize_size(p, x)
    hax = x.ndim - 3
    if (x.shape[hax], x.shape[hax + 1]) == (h, w):
        return x.copy()
    if p.interp == 0:
        return _resize_nearest(xp, x, h, w)
    if p.interp == 1:
        return _resize_linear(xp, x, h, w)
    return _resize_other(p, xp, x, h, w)


def _resize_other(p, xp, x, h, w):
    """Bicubic, area and Lanczos: ``mx.image``'s OpenCV port (NumPy only)."""
    if xp is not np or p.interp not in (2, 3, 4):
        raise MXNetError("resize: interp=%d is not supported%s; use 0 (nearest) or "
                         "1 (bilinear)" % (p.interp, "" if xp is np else " on GPU"))
    from ..image._resize import resize_hwc
    if x.ndim == 3:
        return resize_hwc(x, w, h, p.interp)
    return np.stack([resize_hwc(img, w, h, p.interp) for img in x])


def _parse_size(v):
    v = parse_shape(v)
    return () if v is None else v


register_op("_image_resize", _resize, gradient=None,
            params=[Param("size", _parse_size, (), "Output size: an int or (width, height)."),
                    Param("keep_ratio", parse_bool, False,
                          "With an int size: resize the short edge to it, keeping the ratio."),
                    Param("interp", parse_int, 1,
                          "0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos (OpenCV's).")],
            doc="Resize an HWC image or NHWC batch as OpenCV's ``cv::resize``. "
                "Not differentiable.")


# -- crop, flips -----------------------------------------------------------------

def _crop_window(p, x):
    _check_hwc("crop", x, batch=True)
    hax = x.ndim - 3
    hh, ww = x.shape[hax], x.shape[hax + 1]
    if p.x < 0 or p.y < 0 or p.width <= 0 or p.height <= 0 \
            or p.x + p.width > ww or p.y + p.height > hh:
        raise MXNetError("crop: the window x=%d, y=%d, width=%d, height=%d does not fit an "
                         "image of width %d and height %d" % (p.x, p.y, p.width, p.height, ww, hh))
    return (slice(None),) * hax + (slice(p.y, p.y + p.height), slice(p.x, p.x + p.width))


def _crop(p, xp, x):
    return x[_crop_window(p, x)].copy()


def _crop_backward(p, xp, gy, x):
    gx = xp.zeros(x.shape, dtype=gy.dtype)
    gx[_crop_window(p, x)] = gy
    return gx


_CROP_PARAMS = [Param("x", parse_int, doc="Left edge of the window."),
                Param("y", parse_int, doc="Top edge of the window."),
                Param("width", parse_int, doc="Width of the window."),
                Param("height", parse_int, doc="Height of the window.")]

def _crop_grad(p, x, y, gy, need):
    return [nd._internal._backward_image_crop(gy[0], x[0], **dict(p.items()))]


register_op("_image_crop", _crop, saves="x", gradient=_crop_grad,
            params=_CROP_PARAMS,
            doc="Crop the window (x, y, width, height) of an HWC image or NHWC batch.")

register_op("_backward_image_crop", _crop_backward, inputs=("ograd", "data"), saves="",
            gradient=lambda p, x, y, gy, need: [nd.image.crop(gy[0], **dict(p.items())),
                                                nd.zeros_like(x[1])],
            params=_CROP_PARAMS, no_grad_inputs=(1,),
            doc="Gradient of ``image.crop``: ``ograd`` placed in the window, zeros elsewhere.")


def _flip_op(name, axis):
    def compute(p, xp, x):
        _check_hwc(name, x)
        return xp.flip(x, axis=axis).copy()

    register_op("_image_" + name, compute, saves="",
                gradient=lambda p, x, y, gy, need: [nd.reverse(gy[0], axis=axis)],
                doc="Reverse an HWC image along its %s axis. MXNet's gradient is the head "
                    "gradient unflipped; mxlite's is the true one."
                    % ("width", "height")[axis == 0],
                same_shape=(0,))


def _random_flip_op(name, axis):
    def compute(p, xp, x):
        _check_hwc("random_" + name, x)
        # MXNet: bernoulli(0.5) true keeps the image.
        flip = not float(generator_of(x).random()) < 0.5
        y = xp.flip(x, axis=axis).copy() if flip else x.copy()
        return y, xp.full((1,), float(flip), dtype=_F32)

    def gradient(p, x, y, gy, need):
        if y[1].item():
            return [nd.reverse(gy[0], axis=axis)]
        return [gy[0] * 1]

    register_op("_image_random_" + name, compute, gradient=gradient, saves="y",
                num_outputs=2, num_visible_outputs=1, infer_type=_float_out_type,
                doc="``flip_%s`` with probability 0.5 (the draw is a hidden output, so the "
                    "gradient follows it)." % name)


for _name, _axis in (("left_right", 1), ("top_bottom", 0)):
    _flip_op("flip_" + _name, _axis)
    _random_flip_op("flip_" + _name, _axis)


# -- colour: brightness, contrast, saturation ---------------------------------------

def _gray_mean(xp, x):
    """MXNet's mean grey level: a float32 running sum, pixel by pixel."""
    n = x.shape[0] * x.shape[1]
    if x.shape[2] > 1:
        v = x[..., :3].astype(_arith_dtype(x)) * xp.asarray(np.array(_GRAY, _F32))
    else:
        v = x
    # NOTE: a sequential sum (cumsum), as MXNet's loop: NumPy's pairwise sum rounds
    # differently, and a uint8 output can then flip by one.
    total = host(xp.cumsum(v.reshape(-1).astype(_F32))[-1])
    return _F32(total) / _F32(n)


def _adjust_brightness(xp, x, alpha):
    return _saturate(xp, _as_f32(xp, x) * _F32(alpha), x.dtype)


def _adjust_contrast(xp, x, alpha):
    beta = (_F32(1) - _F32(alpha)) * _gray_mean(xp, x)
    dt = _arith_dtype(x)
    return _saturate(xp, x.astype(dt) * dt(alpha) + dt(beta), x.dtype)


def _adjust_saturation(xp, x, alpha):
    if x.shape[2] == 1:
        return x.copy()
    dt = _arith_dtype(x)
    # NOTE: MXNet 1.9.1's loop assigns where it should accumulate, so its "grey" is
    # 0.114 * blue alone and its saturation also tints the image. mxlite uses the
    # grey level of the other colour ops (BT.601 luma, the contrast op's too).
    v = x[..., :3].astype(dt)
    gray = (v[..., 0:1] * dt(_F32(_GRAY[0])) + v[..., 1:2] * dt(_F32(_GRAY[1]))
            + v[..., 2:3] * dt(_F32(_GRAY[2]))) * dt(_F32(1) - _F32(alpha))
    return _saturate(xp, gray + x.astype(dt) * dt(alpha), x.dtype)


def _random_enhance_op(name, adjust, gradient):
    def compute(p, xp, x):
        _check_hwc(name, x)
        alpha = _uniform(xp, x, p.min_factor, p.max_factor)
        return adjust(xp, x, alpha), xp.full((1,), alpha, dtype=_F32)

    register_op("_image_" + name, compute, gradient=gradient, saves="y",
                num_outputs=2, num_visible_outputs=1, infer_type=_float_out_type,
                params=[Param("min_factor", parse_float, doc="Minimum factor.", low=0),
                        Param("max_factor", parse_float, doc="Maximum factor.", low=0)],
                doc="%s of an HWC image by a factor drawn uniformly in [min_factor, max_factor); "
                    "the factor is a hidden output, which the gradient reads." % name)


def _brightness_grad(p, x, y, gy, need):
    return [gy[0] * y[1].item()]


def _contrast_grad(p, x, y, gy, need):
    # y = a x + (1 - a) mean(gray(x)): the mean spreads sum(gy) back over the pixels.
    g = gy[0]
    a = y[1].item()
    h, w, c = x[0].shape
    coef = _GRAY if c > 1 else (1.0,)
    weights = const_like(g, (np.array(coef + (0.0,) * (c - len(coef))).reshape(1, 1, c)
                             * (1.0 - a) / (h * w)).astype(g.dtype))
    return [g * a + nd.broadcast_mul(nd.sum(g).reshape((1, 1, 1)), weights)]


def _saturation_grad(p, x, y, gy, need):
    g = gy[0]
    a = y[1].item()
    if x[0].shape[2] == 1:
        return [g * 1]
    # y_c = a x_c + (1 - a) gray, gray = sum_k w_k x_k over R, G, B (_adjust_saturation)
    c = x[0].shape[2]
    weights = const_like(g, (np.array(_GRAY + (0.0,) * (c - 3)).reshape(1, 1, c)
                             * (1.0 - a)).astype(g.dtype))
    return [g * a + nd.broadcast_mul(nd.sum(g, axis=2, keepdims=True), weights)]


_random_enhance_op("random_brightness", _adjust_brightness, _brightness_grad)
_random_enhance_op("random_contrast", _adjust_contrast, _contrast_grad)
_random_enhance_op("random_saturation", _adjust_saturation, _saturation_grad)


# -- hue (through HLS, as MXNet's RGB2HLSConvert / HLS2RGBConvert) ----------------

def _rgb_to_hls(xp, r, g, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return _rgb_to_hls_raw(xp, r, g, b)


def _rgb_to_hls_raw(xp, r, g, b):
    r, g, b = r / _F32(255), g / _F32(255), b / _F32(255)
    vmax = xp.maximum(xp.maximum(r, g), b)
    vmin = xp.minimum(xp.minimum(r, g), b)
    diff = vmax - vmin
    l = (vmax + vmin) * _F32(0.5)
    chroma = diff > np.finfo(_F32).eps
    s = xp.where(l < _F32(0.5), diff / (vmax + vmin), diff / (_F32(2) - vmax - vmin))
    k = _F32(60) / diff
    h = xp.where(vmax == r, (g - b) * k,
                 xp.where(vmax == g, (b - r) * k + _F32(120), (r - g) * k + _F32(240)))
    h = xp.where(h < 0, h + _F32(360), h)
    return xp.where(chroma, h, _F32(0)), l, xp.where(chroma, s, _F32(0))


# MXNet's c_HlsSectorData: for each sector, the tab index of b, g and r.
_SECTORS = np.array([[1, 3, 0], [1, 0, 2], [3, 0, 1], [0, 2, 1], [0, 1, 3], [2, 1, 0]])


def _hls_to_rgb(xp, h, l, s):
    p2 = xp.where(l <= _F32(0.5), l * (_F32(1) + s), l + s - l * s)
    p1 = _F32(2) * l - p2
    h = h * (_F32(1) / _F32(60))
    # NOTE: wrapped by repeated +-6 as MXNet's do-while loops (not a modulo: the
    # float32 roundings differ).
    while bool((h < 0).any()):
        h = xp.where(h < 0, h + _F32(6), h)
    while bool((h >= 6).any()):
        h = xp.where(h >= 6, h - _F32(6), h)
    sector = h.astype(np.int64)
    h = h - sector.astype(_F32)
    tab = xp.stack([p2, p1, p1 + (p2 - p1) * (_F32(1) - h), p1 + (p2 - p1) * h])
    idx = xp.asarray(_SECTORS)[sector]                      # (..., 3): b, g, r
    pick = [xp.take_along_axis(tab, idx[None, ..., k], axis=0)[0] for k in range(3)]
    gray = s == 0
    b, g, r = (xp.where(gray, l, v) * _F32(255) for v in pick)
    return r, g, b


def _adjust_hue(xp, x, alpha):
    if x.shape[2] == 1:
        # MXNet leaves the output unwritten here; the identity is what it means.
        return x.copy()
    xf = _as_f32(xp, x)
    h, l, s = _rgb_to_hls(xp, xf[..., 0], xf[..., 1], xf[..., 2])
    r, g, b = _hls_to_rgb(xp, h + _F32(alpha) * _F32(360), l, s)
    return _saturate(xp, xp.stack([r, g, b], axis=-1), x.dtype)


def _random_hue(p, xp, x):
    _check_hwc("random_hue", x)
    return _adjust_hue(xp, x, _uniform(xp, x, p.min_factor, p.max_factor))


register_op("_image_random_hue", _random_hue, gradient=_identity_grad, saves="",
            params=[Param("min_factor", parse_float, doc="Minimum hue shift (turns).", low=0),
                    Param("max_factor", parse_float, doc="Maximum hue shift (turns).", low=0)],
            doc="Rotate the hue of an HWC RGB image (values in [0, 255]) by a fraction of a "
                "turn drawn in [min_factor, max_factor). Gradient: straight through, as MXNet.")


# -- colour jitter ----------------------------------------------------------------

def _random_color_jitter(p, xp, x):
    _check_hwc("random_color_jitter", x)
    g = generator_of(x)
    y = x
    for k in host(g.permutation(4)).tolist():
        amount = (p.brightness, p.contrast, p.saturation, p.hue)[k]
        if amount <= 0:
            continue
        shift = _uniform(xp, x, -amount, amount)
        if k == 0:
            y = _adjust_brightness(xp, y, _F32(1) + shift)
        elif k == 1:
            y = _adjust_contrast(xp, y, _F32(1) + shift)
        elif k == 2:
            y = _adjust_saturation(xp, y, _F32(1) + shift)
        else:
            y = _adjust_hue(xp, y, shift)
    return y.copy() if y is x else y


register_op("_image_random_color_jitter", _random_color_jitter, gradient=_identity_grad,
            saves="",
            params=[Param("brightness", parse_float, doc="How much to jitter brightness."),
                    Param("contrast", parse_float, doc="How much to jitter contrast."),
                    Param("saturation", parse_float, doc="How much to jitter saturation."),
                    Param("hue", parse_float, doc="How much to jitter hue.")],
            doc="Brightness, contrast, saturation and hue jitter in a random order; each "
                "factor 1 + U(-v, v) (hue: a shift of U(-v, v) turns); 0 disables one. "
                "Gradient: straight through, as MXNet.")


# -- lighting (AlexNet's PCA noise) --------------------------------------------------

_EIG = np.array([[55.46 * -0.5675, 4.794 * 0.7192, 1.148 * 0.4009],
                 [55.46 * -0.5808, 4.794 * -0.0045, 1.148 * -0.8140],
                 [55.46 * -0.5836, 4.794 * -0.6948, 1.148 * 0.4203]]).astype(_F32)


def _adjust_lighting_impl(xp, x, alpha):
    if x.shape[2] == 1:
        # MXNet leaves the output unwritten here; the identity is what it means.
        return x.copy()
    a = np.array(alpha, _F32)
    pca = [(_EIG[i, 0] * a[0] + _EIG[i, 1] * a[1]) + _EIG[i, 2] * a[2] for i in range(3)]
    return _saturate(xp, _as_f32(xp, x) + xp.asarray(np.array(pca, _F32)), x.dtype)


def _adjust_lighting(p, xp, x):
    _check_hwc("adjust_lighting", x)
    if len(p.alpha) != 3:
        raise MXNetError("adjust_lighting: alpha must have 3 elements (R, G, B), got %s"
                         % (p.alpha,))
    return _adjust_lighting_impl(xp, x, p.alpha)


def _random_lighting(p, xp, x):
    _check_hwc("random_lighting", x)
    alpha = generator_of(x).standard_normal(3) * p.alpha_std
    return _adjust_lighting_impl(xp, x, [float(a) for a in alpha])


register_op("_image_adjust_lighting", _adjust_lighting, gradient=_identity_grad, saves="",
            params=[Param("alpha", parse_float_tuple, doc="Lighting alphas for R, G, B.")],
            doc="Add AlexNet-style PCA lighting noise ``eig @ alpha`` to each pixel of an "
                "HWC RGB image.", same_shape=(0,))
register_op("_image_random_lighting", _random_lighting, gradient=_identity_grad, saves="",
            params=[Param("alpha_std", parse_float, 0.05, "Std of the lighting alphas.")],
            doc="``adjust_lighting`` with alphas drawn from N(0, alpha_std).", same_shape=(0,))
