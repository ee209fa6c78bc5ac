"""``Correlation`` (FlowNet's correlation layer) and its backward op.

Its registered backward op has no gradient of its own: second-order gradients are not
supported (MXNet has none either).
"""
import math

import numpy as np

from ... import nd
from ...base import MXNetError, parse_int, parse_bool
from ..registry import register_op, Param
from ..util import no_second_order as _no_second_order


def _corr_geometry(p, shape1, shape2):
    """(padded h, w, top h, w, grid radius, grid width, span h, span w) of Correlation."""
    if len(shape1) != 4 or tuple(shape1) != tuple(shape2):
        raise MXNetError("Correlation: data1 and data2 must be 4-D (N, C, H, W) of the same "
                         "shape, got %s and %s" % (tuple(shape1), tuple(shape2)))
    if p.kernel_size % 2 == 0:
        raise MXNetError("Correlation: kernel_size=%d, expected an odd number" % p.kernel_size)
    if p.stride1 < 1 or p.stride2 < 1:
        raise MXNetError("Correlation: stride1=%d and stride2=%d must be >= 1"
                         % (p.stride1, p.stride2))
    ph, pw = shape1[2] + 2 * p.pad_size, shape1[3] + 2 * p.pad_size
    border = p.max_displacement + (p.kernel_size - 1) // 2
    # NOTE: MXNet rounds the float32 quotient up.
    th = int(math.ceil(np.float32(ph - 2 * border) / np.float32(p.stride1)))
    tw = int(math.ceil(np.float32(pw - 2 * border) / np.float32(p.stride1)))
    if th < 1 or tw < 1:
        raise MXNetError("Correlation: the neighborhood (max_displacement=%d) and kernel "
                         "(kernel_size=%d) do not fit in data of padded size %dx%d"
                         % (p.max_displacement, p.kernel_size, ph, pw))
    r = p.max_displacement // p.stride2
    span_h = (th - 1) * p.stride1 + p.kernel_size
    span_w = (tw - 1) * p.stride1 + p.kernel_size
    return ph, pw, th, tw, r, 2 * r + 1, span_h, span_w


def _corr_padded(p, xp, x, ph, pw):
    """MXNet's tmp output: ``x`` zero-padded and laid out (N, H + 2 pad, W + 2 pad, C)."""
    n, c, h, w = x.shape
    t = xp.zeros((n, ph, pw, c), dtype=x.dtype)
    t[:, p.pad_size:p.pad_size + h, p.pad_size:p.pad_size + w] = x.transpose(0, 2, 3, 1)
    return t


def _corr_windows(p, geo):
    """Per top channel: (rows, cols) slices of data1's and data2's padded maps."""
    _, _, _, _, r, gw, sh, sw = geo
    md = p.max_displacement
    for t in range(gw * gw):
        dy, dx = (t // gw - r) * p.stride2, (t % gw - r) * p.stride2
        yield t, (slice(md, md + sh), slice(md, md + sw)), \
            (slice(md + dy, md + dy + sh), slice(md + dx, md + dx + sw))


def _corr_taps(p, geo):
    """Slices of a span map that kernel tap (i, j) reads for every top position."""
    _, _, th, tw = geo[:4]
    s, k = p.stride1, p.kernel_size
    for i in range(k):
        for j in range(k):
            yield slice(i, i + (th - 1) * s + 1, s), slice(j, j + (tw - 1) * s + 1, s)


def _correlation(p, xp, data1, data2):
    geo = _corr_geometry(p, data1.shape, data2.shape)
    ph, pw, th, tw = geo[:4]
    t1, t2 = _corr_padded(p, xp, data1, ph, pw), _corr_padded(p, xp, data2, ph, pw)
    n, c = data1.shape[:2]
    out = xp.empty((n, geo[5] ** 2, th, tw), dtype=data1.dtype)
    taps = list(_corr_taps(p, geo))
    for t, (ya, xa), (yb, xb) in _corr_windows(p, geo):
        a, b = t1[:, ya, xa], t2[:, yb, xb]
        q = (a * b).sum(axis=3) if p.is_multiply else xp.abs(a - b).sum(axis=3)
        acc = 0
        for ty, tx in taps:
            acc = acc + q[:, ty, tx]
        out[:, t] = acc
    out /= data1.dtype.type(p.kernel_size * p.kernel_size * c)
    return out, t1, t2


def _correlation_backward(p, xp, gy, data1, data2):
    geo = _corr_geometry(p, data1.shape, data2.shape)
    ph, pw = geo[:2]
    t1, t2 = _corr_padded(p, xp, data1, ph, pw), _corr_padded(p, xp, data2, ph, pw)
    g1, g2 = xp.zeros_like(t1), xp.zeros_like(t2)
    n, c, h, w = data1.shape
    gy = gy / data1.dtype.type(p.kernel_size * p.kernel_size * c)
    taps = list(_corr_taps(p, geo))
    for t, (ya, xa), (yb, xb) in _corr_windows(p, geo):
        gq = xp.zeros((n, geo[6], geo[7]), dtype=gy.dtype)
        for ty, tx in taps:
            gq[:, ty, tx] += gy[:, t]
        gq = gq[..., None]
        a, b = t1[:, ya, xa], t2[:, yb, xb]
        if p.is_multiply:
            g1[:, ya, xa] += gq * b
            g2[:, yb, xb] += gq * a
        else:
            # NOTE: MXNet's sign is +1 for data1 where the two are equal.
            sign = xp.where(a >= b, gy.dtype.type(1), gy.dtype.type(-1))
            g1[:, ya, xa] += gq * sign
            g2[:, yb, xb] -= gq * sign
    crop = (slice(None), slice(p.pad_size, p.pad_size + h), slice(p.pad_size, p.pad_size + w))
    return g1[crop].transpose(0, 3, 1, 2).copy(), g2[crop].transpose(0, 3, 1, 2).copy()


def _correlation_grad(p, x, y, gy, need):
    g = nd._internal._backward_Correlation(gy[0], x[0], x[1], **dict(p.items()))
    return [g[0], g[1]]


_CORR_PARAMS = [
    Param("kernel_size", parse_int, 1, "Patch size (odd)."),
    Param("max_displacement", parse_int, 1, "Largest displacement compared."),
    Param("stride1", parse_int, 1, "Stride over data1's positions."),
    Param("stride2", parse_int, 1, "Stride of the displacements around each position."),
    Param("pad_size", parse_int, 0, "Zero padding of both inputs."),
    Param("is_multiply", parse_bool, True, "Multiply (True) or absolute difference (False)."),
]

register_op("Correlation", _correlation, inputs=("data1", "data2"), params=_CORR_PARAMS,
            gradient=_correlation_grad, saves="x",
            num_outputs=3, num_visible_outputs=1, output_names=("output", "tmp1", "tmp2"),
            doc="FlowNet's correlation layer: for every position of data1 (stride1) and "
                "displacement (stride2, up to max_displacement), the mean over a "
                "kernel_size^2 patch and the channels of data1 * data2 (or |data1 - data2|). "
                "Output (N, (2 * (max_displacement // stride2) + 1)^2, top_h, top_w); hidden "
                "outputs tmp1, tmp2 are the padded inputs in (N, H, W, C) layout.")
register_op("_backward_Correlation", _correlation_backward,
            inputs=("grad", "data1", "data2"), params=_CORR_PARAMS,
            gradient=_no_second_order("Correlation"), saves="", num_outputs=2,
            output_names=("data1_grad", "data2_grad"),
            doc="Gradients (data1, data2) of Correlation.")
