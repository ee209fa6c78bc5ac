"""UpSampling: nearest-neighbour (any number of inputs) or bilinear (a fixed
depthwise Deconvolution with a ``weight`` input, as in MXNet).

The nearest gradient is a reshape and a sum over each ``scale x scale`` block,
in mxlite ops; the bilinear one is Deconvolution's.
"""
from ... import nd
from ...base import MXNetError, parse_int
from ..registry import register_op, Param, ranks
from .convolution import deconv_nd


def _scales(p, xs):
    """The output (H, W) and each input's integer scale to reach it."""
    h, w = xs[0].shape[2] * p.scale, xs[0].shape[3] * p.scale
    scales = []
    for i, x in enumerate(xs):
        if x.ndim != 4:
            raise MXNetError("UpSampling: input %d must be 4-D (N, C, H, W), got shape %s"
                             % (i, tuple(x.shape)))
        if h % x.shape[2] or w % x.shape[3] or h // x.shape[2] != w // x.shape[3]:
            raise MXNetError("UpSampling: input %d of shape %s cannot be scaled to %dx%d by an "
                             "integer factor" % (i, tuple(x.shape), h, w))
        scales.append(h // x.shape[2])
    return scales


def _bilinear_geometry(p):
    s = p.scale
    k = 2 * s - s % 2
    q = (s - 1 + 1) // 2          # ceil((s - 1) / 2)
    return (k, k), (s, s), (1, 1), (q, q)


def _compute(p, xp, *xs):
    if p.sample_type == "bilinear":
        x, w = xs
        kernel, stride, dilate, pad = _bilinear_geometry(p)
        c = x.shape[1]
        if tuple(w.shape) != (c, 1) + kernel:
            raise MXNetError("UpSampling: weight has shape %s, expected %s for bilinear scale=%d "
                             "and data of shape %s" % (tuple(w.shape), (c, 1) + kernel, p.scale,
                                                       tuple(x.shape)))
        return deconv_nd(xp, x, w, kernel, stride, dilate, pad, (0, 0), c).astype(x.dtype)
    ups = [xp.repeat(xp.repeat(x, s, axis=2), s, axis=3) for x, s in zip(xs, _scales(p, xs))]
    if len(ups) == 1:
        return ups[0]
    if p.multi_input_mode == "sum":
        y = ups[0].copy()
        for u in ups[1:]:
            y += u
        return y
    return xp.concatenate(ups, axis=1)


def _block_sum(g, s):
    n, c, h, w = g.shape
    if s == 1:
        return g
    return nd.sum(g.reshape((n, c, h // s, s, w // s, s)), axis=(3, 5))


def _gradient(p, x, y, gy, need):
    g = gy[0]
    if p.sample_type == "bilinear":
        data, w = x
        kernel, stride, dilate, pad = _bilinear_geometry(p)
        common = dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad,
                      num_group=data.shape[1])
        gx = nd.Convolution(g, w, num_filter=data.shape[1], no_bias=True, **common)
        return [gx, nd._internal._conv_weight_grad(g, data, **common)]
    scales = _scales(p, x)
    if len(x) == 1:
        return [_block_sum(g, scales[0])]
    grads, c0 = [], 0
    for xi, s in zip(x, scales):
        if p.multi_input_mode == "sum":
            gi = g
        else:
            gi = g[:, c0:c0 + xi.shape[1]]
            c0 += xi.shape[1]
        grads.append(_block_sum(gi, s))
    return grads


def _inputs(p):
    if p.sample_type == "bilinear":
        return ("data", "weight")
    return tuple("arg%d" % i for i in range(p.num_args))


register_op("UpSampling", _compute, gradient=_gradient, saves="x", inputs=_inputs,
            check=ranks(arg0=(4, 4), data=(4, 4)),
            variadic="num_args",
            params=[Param("scale", parse_int, doc="Upsampling factor.", low=1),
                    Param("num_filter", parse_int, 0, "Channels (bilinear).", low=0),
                    Param("sample_type", None, "nearest", choices=("nearest", "bilinear")),
                    Param("multi_input_mode", None, "concat",
                          "concat or sum the upsampled inputs.", choices=("concat", "sum")),
                    Param("num_args", parse_int, 1, "Number of inputs.", low=1),
                    Param("workspace", parse_int, 512, "Ignored.")],
            doc="Upsample 4-D data by ``scale``: nearest neighbour (several inputs are each "
                "scaled to the first one's output size, then concatenated or summed) or "
                "bilinear (a depthwise Deconvolution with the ``weight`` input).")
