"""More MXNet 1.9.1 contrib ops: ``Correlation`` (FlowNet), ``ModulatedDeformableConvolution``
(DCNv2), ``DeformablePSROIPooling``, ``RROIAlign`` and ``hawkesll``.

Where MXNet's CPU build has no kernel, the numbers follow its CUDA kernel:

- ``DeformablePSROIPooling``: MXNet's CPU forward and backward are empty (the output
  stays ``-FLT_MAX``); mxlite computes what the GPU kernel computes, forward and
  gradients (data, trans; rois get 0).
- ``ModulatedDeformableConvolution``: the CPU forward exists; its backward is GPU-only.
  The GPU backward is the exact derivative of the (zero-padded bilinear) forward, and so
  is mxlite's.
- ``RROIAlign`` has no backward in MXNet (its backward aborts); mxlite raises on backward.
- ``hawkesll``'s gradient is MXNet's: d loglik / d (lda, alpha, beta) for the head
  gradient of ``loglik``; the head gradient of the returned state is ignored and
  ``state`` gets 0, as in MXNet.

Every op here has a registered backward op; second-order gradients are not supported
(MXNet has none either).
"""
import math

import numpy as np

from ... import nd
from ...base import MXNetError, parse_shape, parse_int, parse_bool, parse_float
from .. import libm
from ..registry import register_op, Param, on_ndarrays
from .convolution import geometry, conv_out_size
# NOTE: private helpers of the DCNv1 op, reused on purpose: ``_gather`` reads
# (N, dg, Cg, H*W) maps at flat indices and ``_scatter`` adds column gradients back at
# (index, weight) corners; both are independent of DCNv1's border rule.
from .deformable import _gather, _scatter
from .detection import _host, _c_round, _check_rois, _batch_index
from .two_stage import _ps_channels


def _no_second_order(name):
    @on_ndarrays
    def rule(p, x, y, gy, need):
        raise MXNetError("%s: second-order gradients are not supported (MXNet has none "
                         "either)" % name)
    return rule


# == Correlation ========================================================================

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


# == ModulatedDeformableConvolution (DCNv2) =============================================

_MDCN = "ModulatedDeformableConvolution"


def _mdcn_shapes(p, dshape):
    """(offset, mask, weight, bias) shapes and (kernel, stride, dilate, pad, out)."""
    if len(dshape) != 4:
        raise MXNetError("%s: data must be 4-D (batch, channel, height, width), got shape %s"
                         % (_MDCN, tuple(dshape)))
    if p.layout not in (None, "NCHW"):
        raise MXNetError("%s: layout=%r is not supported; only NCHW" % (_MDCN, p.layout))
    kernel, stride, dilate, pad = geometry(p, 2, _MDCN)
    out = tuple(conv_out_size(_MDCN, dshape[2:], kernel, stride, dilate, pad))
    c, g, dg, f = dshape[1], p.num_group, p.num_deformable_group, p.num_filter
    if g <= 0 or c % g or f % g:
        raise MXNetError("%s: num_group=%d must divide the input channels (%d) and num_filter "
                         "(%d)" % (_MDCN, g, c, f))
    if dg <= 0 or c % dg:
        raise MXNetError("%s: num_deformable_group=%d must divide the input channels (%d)"
                         % (_MDCN, dg, c))
    k = kernel[0] * kernel[1]
    n = dshape[0]
    shapes = ((n, 2 * k * dg) + out, (n, k * dg) + out,
              (f, c // g) + tuple(kernel), (f,))
    return shapes, (kernel, stride, dilate, pad, out)


def _mdcn_check(p, data, others):
    shapes, geo = _mdcn_shapes(p, data.shape)
    names = ("offset", "mask", "weight", "bias")
    for name, a, want in zip(names, others, shapes):
        if a is not None and tuple(a.shape) != want:
            raise MXNetError("%s: %s has shape %s, expected %s for data of shape %s, kernel=%s, "
                             "num_filter=%d, num_group=%d and num_deformable_group=%d"
                             % (_MDCN, name, tuple(a.shape), want, tuple(data.shape),
                                tuple(p.kernel), p.num_filter, p.num_group,
                                p.num_deformable_group))
    n, step = data.shape[0], min(p.im2col_step, data.shape[0])
    if step <= 0 or n % step:
        raise MXNetError("%s: the batch size (%d) must be divisible by im2col_step=%d (or "
                         "smaller than it)" % (_MDCN, n, p.im2col_step))
    return geo


class _ModPlan:
    """DCNv2's sampling: per deformable group, tap and output position (N, dg, K*L), the
    four bilinear corners of ``y, x``; a corner outside the map reads 0 (MXNet's
    ``dmcn_im2col_bilinear``) and a point outside ``(-1, H) x (-1, W)`` reads 0."""

    def __init__(self, xp, offset, shape, geo, dg):
        kernel, stride, dilate, pad, out = geo
        n, _, h, w = shape
        dt = offset.dtype
        k, l = kernel[0] * kernel[1], out[0] * out[1]
        off = offset.reshape(n, dg, k, 2, l)
        ti, tj = np.divmod(np.arange(k), kernel[1])
        base_y = (np.arange(out[0]) * stride[0] - pad[0])[None, :, None] \
            + (ti * dilate[0])[:, None, None]
        base_x = (np.arange(out[1]) * stride[1] - pad[1])[None, None, :] \
            + (tj * dilate[1])[:, None, None]
        base_y = np.broadcast_to(base_y, (k,) + tuple(out)).reshape(k, l).astype(dt)
        base_x = np.broadcast_to(base_x, (k,) + tuple(out)).reshape(k, l).astype(dt)
        y = (xp.asarray(base_y) + off[:, :, :, 0]).reshape(n, dg, -1)
        x = (xp.asarray(base_x) + off[:, :, :, 1]).reshape(n, dg, -1)
        self.inside = (y > -1) & (x > -1) & (y < h) & (x < w)
        with np.errstate(invalid="ignore"):
            y0, x0 = xp.floor(y), xp.floor(x)
        self.ly = xp.where(self.inside, y - y0, dt.type(0))
        self.lx = xp.where(self.inside, x - x0, dt.type(0))
        y0 = xp.clip(xp.nan_to_num(y0), -1, h).astype(np.int64)
        x0 = xp.clip(xp.nan_to_num(x0), -1, w).astype(np.int64)
        self.rows = (y0, y0 + 1)
        self.cols = (x0, x0 + 1)
        self.h, self.w, self.xp, self.dt, self.k = h, w, xp, dt, k

    def corner(self, a, b):
        """(flat index (clipped), 0/1 validity) of corner (row a, column b)."""
        r, c = self.rows[a], self.cols[b]
        ok = self.inside & (r >= 0) & (r < self.h) & (c >= 0) & (c < self.w)
        xp = self.xp
        idx = xp.clip(r, 0, self.h - 1) * self.w + xp.clip(c, 0, self.w - 1)
        return idx, ok.astype(self.dt)

    def weights(self):
        """Bilinear weights of corners (0,0), (0,1), (1,0), (1,1): MXNet's w1..w4."""
        one = self.dt.type(1)
        hy, hx = one - self.ly, one - self.lx
        return ((0, 0, hy * hx), (0, 1, hy * self.lx), (1, 0, self.ly * hx),
                (1, 1, self.ly * self.lx))

    def corners(self):
        """[(flat index, weight)] with out-of-map corners weighted 0."""
        out = []
        for a, b, wt in self.weights():
            idx, ok = self.corner(a, b)
            out.append((idx, wt * ok))
        return out


def _mdcn_sample(p, xp, data, offset, geo):
    """Bilinear samples (N, dg, Cg, K*L) (before the mask) and the plan."""
    n, c = data.shape[:2]
    dg = p.num_deformable_group
    plan = _ModPlan(xp, offset, data.shape, geo, dg)
    d = data.reshape(n, dg, c // dg, -1)
    val = None
    for idx, wt in plan.corners():
        term = wt[:, :, None, :] * _gather(xp, d, idx)
        val = term if val is None else val + term
    return val, plan


def _mdcn_forward(p, xp, data, offset, mask, weight, bias=None):
    geo = _mdcn_check(p, data, (offset, mask, weight, bias))
    n, c = data.shape[:2]
    dg, g, f = p.num_deformable_group, p.num_group, p.num_filter
    val, _ = _mdcn_sample(p, xp, data, offset, geo)
    cols = val * mask.reshape(n, dg, 1, -1)                         # (N, dg, Cg, K*L)
    l = geo[4][0] * geo[4][1]
    cols = cols.reshape(n, g, -1, l)                                 # rows c * K + k
    y = xp.matmul(weight.reshape(1, g, f // g, -1), cols).reshape((n, f) + geo[4])
    if bias is not None:
        y = y + bias.reshape(1, -1, 1, 1)
    return y.astype(data.dtype, copy=False)


def _mdcn_backward(p, xp, gy, data, offset, mask, weight):
    """(gdata, goffset, gmask, gweight) of DCNv2, as MXNet's CUDA kernels."""
    geo = _mdcn_check(p, data, (offset, mask, weight, None))
    n, c, h, w = data.shape
    dg, g, f = p.num_deformable_group, p.num_group, p.num_filter
    k, l = geo[0][0] * geo[0][1], geo[4][0] * geo[4][1]
    val, plan = _mdcn_sample(p, xp, data, offset, geo)
    m = mask.reshape(n, dg, 1, k * l)
    gy = gy.reshape(n, g, f // g, l)
    cols = (val * m).reshape(n, g, -1, l)
    gw = xp.matmul(gy, xp.swapaxes(cols, 2, 3)).sum(axis=0).reshape(weight.shape)
    wt = xp.swapaxes(weight.reshape(g, f // g, -1), 1, 2)[None]
    gcols = xp.matmul(wt, gy).reshape(n, dg, c // dg, k * l)         # d loss / d column
    gmask = (gcols * val).sum(axis=2).reshape(mask.shape)
    gm = gcols * m
    gdata = _scatter(xp, gm, plan.corners(), data.shape, dg)
    goff = _mdcn_offset_grad(xp, gm, data, plan, dg)                # (N, dg, K, 2, L)
    return (gdata.astype(data.dtype, copy=False), goff.reshape(offset.shape),
            gmask.astype(data.dtype, copy=False), gw.astype(data.dtype, copy=False))


def _mdcn_offset_grad(xp, gm, data, plan, dg):
    """d loss / d (dy, dx) per tap (N, dg, K, 2, L): MXNet's dmcn_get_coordinate_weight
    (the derivative of the zero-padded bilinear sample) times the masked column grad."""
    n, c = data.shape[:2]
    d = data.reshape(n, dg, c // dg, -1)
    v = {}
    for a in (0, 1):
        for b in (0, 1):
            idx, ok = plan.corner(a, b)
            v[a, b] = _gather(xp, d, idx) * ok[:, :, None, :]
    one = plan.dt.type(1)
    ly, lx = plan.ly[:, :, None, :], plan.lx[:, :, None, :]
    dy = (one - lx) * (v[1, 0] - v[0, 0]) + lx * (v[1, 1] - v[0, 1])
    dx = (one - ly) * (v[0, 1] - v[0, 0]) + ly * (v[1, 1] - v[1, 0])
    inside = plan.inside.astype(plan.dt)
    gyy = (gm * dy).sum(axis=2) * inside
    gxx = (gm * dx).sum(axis=2) * inside
    k = plan.k
    return xp.stack([gyy.reshape(n, dg, k, -1), gxx.reshape(n, dg, k, -1)], axis=3)


def _mdcn_grad(p, x, y, gy, need):
    outs = nd._internal._backward_ModulatedDeformableConvolution(
        gy[0], x[0], x[1], x[2], x[3], **dict(p.items()))
    gx = [outs[0], outs[1], outs[2], outs[3]]
    if not p.no_bias:
        gx.append(nd.sum(gy[0], axis=(0, 2, 3)))
    return gx


def _mdcn_infer_shape(p, shapes):
    shapes = list(shapes)
    d = shapes[0]
    if d is None or len(d) != 4 or 0 in d:
        return shapes
    want, _ = _mdcn_shapes(p, d)
    names = ("offset", "mask", "weight", "bias")
    for i in range(1, len(shapes)):
        got = shapes[i]
        if got is None or len(got) == 0 or 0 in got:
            shapes[i] = want[i - 1]
        elif tuple(got) != want[i - 1]:
            raise MXNetError("%s: %s has shape %s, expected %s for data of shape %s"
                             % (_MDCN, names[i - 1], tuple(got), want[i - 1], tuple(d)))
    return shapes


_MDCN_PARAMS = [
    Param("kernel", parse_shape, doc="Kernel size (h, w)."),
    Param("stride", parse_shape, (), "Stride (h, w); 1 if empty."),
    Param("dilate", parse_shape, (), "Dilation (h, w); 1 if empty."),
    Param("pad", parse_shape, (), "Zero padding (h, w); 0 if empty."),
    Param("num_filter", parse_int, doc="Number of output channels."),
    Param("num_group", parse_int, 1, "Number of groups."),
    Param("num_deformable_group", parse_int, 1, "Number of offset/mask groups."),
    Param("workspace", parse_int, 1024, "Ignored (MXNet's scratch size in MB)."),
    Param("no_bias", parse_bool, False, "Whether to leave out the bias."),
    Param("im2col_step", parse_int, 64, "Images per im2col in MXNet; the batch must be "
                                        "divisible by it or smaller (checked, else unused)."),
    Param("layout", None, None, "NCHW only (as MXNet runs it).", choices=(None, "NCHW")),
]

register_op("_contrib_ModulatedDeformableConvolution", _mdcn_forward,
            inputs=lambda p: ("data", "offset", "mask", "weight") if p.no_bias
            else ("data", "offset", "mask", "weight", "bias"),
            params=_MDCN_PARAMS, gradient=_mdcn_grad, saves="x",
            infer_shape=_mdcn_infer_shape,
            doc="2-D modulated deformable convolution (DCNv2): every kernel tap samples the "
                "input bilinearly (zero outside the map) at its place plus a learned offset and "
                "scales it by a learned mask. offset: (N, dg * 2 * kh * kw, out_h, out_w), "
                "(dy, dx) per tap; mask: (N, dg * kh * kw, out_h, out_w).")
register_op("_backward_ModulatedDeformableConvolution", _mdcn_backward,
            inputs=("grad", "data", "offset", "mask", "weight"), params=_MDCN_PARAMS,
            gradient=_no_second_order(_MDCN), saves="", num_outputs=4,
            output_names=("data_grad", "offset_grad", "mask_grad", "weight_grad"),
            doc="Gradients (data, offset, mask, weight) of ModulatedDeformableConvolution.")


# == DeformablePSROIPooling ==============================================================

_DPS = "DeformablePSROIPooling"


def _dps_sizes(p):
    gs, ps = p.group_size, p.part_size if p.part_size > 0 else p.pooled_size
    if p.pooled_size <= 0 or p.output_dim <= 0 or gs <= 0 or p.sample_per_part <= 0:
        raise MXNetError("%s: pooled_size=%d, output_dim=%d, group_size=%d and sample_per_part="
                         "%d must be positive" % (_DPS, p.pooled_size, p.output_dim, gs,
                                                  p.sample_per_part))
    return gs, ps


def _dps_check(p, data, rois, trans):
    _check_rois(_DPS, data, rois, (5,))
    gs, ps = _dps_sizes(p)
    if data.shape[1] != p.output_dim * gs * gs:
        raise MXNetError("%s: data has %d channels, expected output_dim * group_size^2 = "
                         "%d * %d^2 = %d" % (_DPS, data.shape[1], p.output_dim, gs,
                                             p.output_dim * gs * gs))
    if trans is not None:
        ok = trans.ndim == 4 and trans.shape[0] == rois.shape[0] and trans.shape[1] >= 2 \
            and trans.shape[1] % 2 == 0 and trans.shape[2:] == (ps, ps) \
            and p.output_dim % (trans.shape[1] // 2) == 0
        if not ok:
            raise MXNetError("%s: trans has shape %s, expected (num_rois=%d, 2 * num_classes, "
                             "part_size=%d, part_size=%d) with num_classes dividing output_dim="
                             "%d" % (_DPS, tuple(trans.shape), rois.shape[0], ps, ps,
                                     p.output_dim))
    return gs, ps


class _DPSPlan:
    """Every sample point of every output bin, shape (R, D, P, P, S, S) (MXNet's CUDA
    kernel): its flat data index at the four corners, the bilinear fractions, whether it
    counts (inside ``[-0.5, size - 0.5]``), and where its trans lives."""

    def __init__(self, p, xp, shape, rois, trans):
        _, c, h, w = shape
        dt = rois.dtype
        gs, ps = _dps_sizes(p)
        n_bins, dim, s = p.pooled_size, p.output_dim, p.sample_per_part
        b = _batch_index(xp, _DPS, rois, shape[0], negative_ok=False)
        scale, half = dt.type(np.float32(p.spatial_scale)), dt.type(0.5)
        r = _c_round(xp, rois[:, 1:5])
        start_w, start_h = r[:, 0] * scale - half, r[:, 1] * scale - half
        end_w = (r[:, 2] + dt.type(1)) * scale - half
        end_h = (r[:, 3] + dt.type(1)) * scale - half
        tenth = dt.type(0.1)
        self.roi_w = xp.maximum(end_w - start_w, tenth)
        self.roi_h = xp.maximum(end_h - start_h, tenth)
        bin_w, bin_h = self.roi_w / dt.type(n_bins), self.roi_h / dt.type(n_bins)
        sub_w, sub_h = bin_w / dt.type(s), bin_h / dt.type(s)
        i = np.arange(n_bins)
        part = np.floor(i.astype(dt) / dt.type(n_bins) * dt.type(ps)).astype(np.int64)
        if trans is None:
            n_cls, tx, ty = 1, 0, 0
        else:
            n_cls = trans.shape[1] // 2
            cls = np.arange(dim) // (dim // n_cls)
            std = dt.type(np.float32(p.trans_std))
            # (R, D, P, P) flat positions of trans_x; trans_y is one part plane further
            self.tpos = ((np.arange(rois.shape[0])[:, None, None, None] * n_cls
                          + cls[None, :, None, None]) * 2 * ps
                         + part[None, None, :, None]) * ps + part[None, None, None, :]
            self.tpos = xp.asarray(self.tpos)
            flat = trans.reshape(-1)
            tx = flat[self.tpos] * std
            ty = flat[self.tpos + ps * ps] * std
        ii = xp.asarray(i.astype(dt))
        e4 = (slice(None), None, None, None)
        wstart = ii[None, None, None, :] * bin_w[e4] + start_w[e4]
        wstart = wstart + tx * self.roi_w[e4]
        hstart = ii[None, None, :, None] * bin_h[e4] + start_h[e4]
        hstart = hstart + ty * self.roi_h[e4]
        ss = xp.asarray(np.arange(s).astype(dt))
        e6 = (slice(None), None, None, None, None, None)
        wv = wstart[..., None, None] + ss[None, None, None, None, None, :] * sub_w[e6]
        hv = hstart[..., None, None] + ss[None, None, None, None, :, None] * sub_h[e6]
        full = (rois.shape[0], dim, n_bins, n_bins, s, s)
        wv, hv = xp.broadcast_to(wv, full), xp.broadcast_to(hv, full)
        self.valid = ~((wv < -half) | (wv > dt.type(w) - half)
                       | (hv < -half) | (hv > dt.type(h) - half))
        wv = xp.clip(wv, dt.type(0), dt.type(w - 1))
        hv = xp.clip(hv, dt.type(0), dt.type(h - 1))
        x0, y0 = xp.floor(wv), xp.floor(hv)
        self.dx, self.dy = wv - x0, hv - y0
        x0, y0 = x0.astype(np.int64), y0.astype(np.int64)
        x1, y1 = xp.ceil(wv).astype(np.int64), xp.ceil(hv).astype(np.int64)
        g = _ps_channels(gs, n_bins)
        chan = (np.arange(dim)[:, None, None] * gs + g[None, :, None]) * gs + g[None, None, :]
        base = (b[:, None, None, None] * c + xp.asarray(chan)[None]) * (h * w)
        base = base[..., None, None]
        self.idx = {(0, 0): base + y0 * w + x0, (1, 0): base + y1 * w + x0,
                    (0, 1): base + y0 * w + x1, (1, 1): base + y1 * w + x1}
        self.count = self.valid.sum(axis=(4, 5)).astype(dt)
        self.dt, self.xp = dt, xp

    def weights(self):
        """Bilinear weight per corner (row step, column step), 0 for skipped samples."""
        one, dx, dy = self.dt.type(1), self.dx, self.dy
        v = self.valid.astype(self.dt)
        return {(0, 0): (one - dx) * (one - dy) * v, (1, 0): (one - dx) * dy * v,
                (0, 1): dx * (one - dy) * v, (1, 1): dx * dy * v}


def _dps_inputs(p):
    return ("data", "rois") if p.no_trans else ("data", "rois", "trans")


def _dps_forward(p, xp, data, rois, trans=None):
    trans = None if p.no_trans else trans
    _dps_check(p, data, rois, trans)
    plan = _DPSPlan(p, xp, data.shape, rois, trans)
    flat = data.reshape(-1)
    total = 0
    for key, wt in plan.weights().items():
        total = total + wt * flat[plan.idx[key]]
    total = total.sum(axis=(4, 5))
    safe = xp.maximum(plan.count, plan.dt.type(1))
    out = xp.where(plan.count > 0, total / safe, plan.dt.type(0))
    return out.astype(data.dtype, copy=False), plan.count


def _dps_backward(p, xp, gy, data, rois, trans=None):
    trans = None if p.no_trans else trans
    _dps_check(p, data, rois, trans)
    plan = _DPSPlan(p, xp, data.shape, rois, trans)
    dt = data.dtype
    diff = xp.where(plan.count > 0, gy / xp.maximum(plan.count, dt.type(1)), dt.type(0))
    diff = diff[..., None, None]
    gdata = 0
    weights = plan.weights()
    for key, wt in weights.items():
        gdata = gdata + xp.bincount(plan.idx[key].ravel(), weights=(wt * diff).ravel(),
                                    minlength=data.size)
    gdata = gdata.reshape(data.shape).astype(dt, copy=False)
    if trans is None:
        return (gdata,)
    flat = data.reshape(-1)
    u = {k: flat[i] for k, i in plan.idx.items()}
    one, dx, dy = dt.type(1), plan.dx, plan.dy
    std = dt.type(np.float32(p.trans_std))
    valid = plan.valid.astype(dt)
    e6 = (slice(None), None, None, None, None, None)
    gx = (u[1, 1] * dy + u[0, 1] * (one - dy) - u[1, 0] * dy - u[0, 0] * (one - dy)) \
        * std * diff * valid * plan.roi_w[e6]
    gty = (u[1, 1] * dx + u[1, 0] * (one - dx) - u[0, 1] * dx - u[0, 0] * (one - dx)) \
        * std * diff * valid * plan.roi_h[e6]
    ps2 = trans.shape[2] * trans.shape[3]
    pos = plan.tpos.ravel()
    gtrans = xp.bincount(pos, weights=gx.sum(axis=(4, 5)).ravel(), minlength=trans.size) \
        + xp.bincount(pos + ps2, weights=gty.sum(axis=(4, 5)).ravel(), minlength=trans.size)
    return gdata, gtrans.reshape(trans.shape).astype(dt, copy=False)


def _dps_grad(p, x, y, gy, need):
    outs = nd._internal._backward_DeformablePSROIPooling(gy[0], *x, **dict(p.items()))
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    gx = [outs[0], nd.zeros_like(x[1])]
    if not p.no_trans:
        gx.append(outs[1])
    return gx


def _dps_shape(p, shapes):
    d, r = shapes[0], shapes[1] if len(shapes) > 1 else None
    if d is None or r is None or 0 in d or 0 in r:
        return shapes, None
    out = (r[0], p.output_dim, p.pooled_size, p.pooled_size)
    return shapes, [out, out]


_DPS_PARAMS = [
    Param("spatial_scale", parse_float, doc="Feature map size over image size."),
    Param("output_dim", parse_int, doc="Output channels.", low=1),
    Param("group_size", parse_int, doc="Cells per side of the position-sensitive maps."),
    Param("pooled_size", parse_int, doc="Bins per side of every roi.", low=1),
    Param("part_size", parse_int, 0, "Cells per side of trans; 0: pooled_size."),
    Param("sample_per_part", parse_int, 1, "Samples per side of every bin."),
    Param("trans_std", parse_float, 0.0, "Scale of the offsets in trans."),
    Param("no_trans", parse_bool, False, "Whether to pool without offsets (no trans input)."),
]

register_op("_contrib_DeformablePSROIPooling", _dps_forward, inputs=_dps_inputs,
            params=_DPS_PARAMS, gradient=_dps_grad, saves="x",
            num_outputs=2, num_visible_outputs=1, output_names=("output", "top_count"),
            infer_shape=_dps_shape,
            infer_type=lambda p, dtypes: [dtypes[0], dtypes[0]],
            doc="Deformable position-sensitive ROI pooling (Deformable ConvNets): bin (i, j) "
                "of channel c averages sample_per_part^2 bilinear samples of input channel "
                "(c * gs + gi) * gs + gj, the bin shifted by trans * trans_std * roi size. "
                "Hidden output top_count: the samples that fell inside the map.")
register_op("_backward_DeformablePSROIPooling", _dps_backward,
            inputs=lambda p: ("grad",) + _dps_inputs(p), params=_DPS_PARAMS,
            gradient=_no_second_order(_DPS), saves="",
            num_outputs=lambda p: 1 if p.no_trans else 2,
            doc="Gradients (data, trans) of DeformablePSROIPooling.")


# == RROIAlign ===========================================================================

_RROI = "RROIAlign"


def _rroi_points(p, xp, roi, h, w, dt):
    """Flat corner indices (4, PH, gh, PW, gw) and weights of one rotated roi."""
    ph_n, pw_n = p.pooled_size
    scale = dt.type(np.float32(p.spatial_scale))
    cw, ch = roi[1] * scale, roi[2] * scale
    rw = max(roi[3] * scale, dt.type(1))
    rh = max(roi[4] * scale, dt.type(1))
    theta = dt.type(float(roi[5]) * math.pi / 180.0)
    start_h, start_w = dt.type(-float(rh) / 2.0), dt.type(-float(rw) / 2.0)
    bin_h, bin_w = rh / dt.type(ph_n), rw / dt.type(pw_n)
    sr = p.sampling_ratio
    gh = sr if sr > 0 else int(math.ceil(rh / dt.type(ph_n)))
    gw = sr if sr > 0 else int(math.ceil(rw / dt.type(pw_n)))
    yy = (start_h + np.arange(ph_n).astype(dt)[:, None] * bin_h) \
        + (np.arange(gh) + np.float32(0.5)).astype(dt)[None, :] * bin_h / dt.type(gh)
    xx = (start_w + np.arange(pw_n).astype(dt)[:, None] * bin_w) \
        + (np.arange(gw) + np.float32(0.5)).astype(dt)[None, :] * bin_w / dt.type(gw)
    yy, xx = yy[:, :, None, None], xx[None, None, :, :]
    cos, sin = np.cos(theta), np.sin(theta)
    x = xx * cos + yy * sin + cw
    y = yy * cos - xx * sin + ch
    empty = (y < -1.0) | (y > h) | (x < -1.0) | (x > w)
    y, x = np.maximum(y, dt.type(0)), np.maximum(x, dt.type(0))
    y0, x0 = y.astype(np.int64), x.astype(np.int64)
    ey, ex = y0 >= h - 1, x0 >= w - 1
    y0, x0 = np.where(ey, h - 1, y0), np.where(ex, w - 1, x0)
    y = np.where(ey, y0.astype(dt), y)
    x = np.where(ex, x0.astype(dt), x)
    y1, x1 = np.where(ey, y0, y0 + 1), np.where(ex, x0, x0 + 1)
    ly, lx = y - y0.astype(dt), x - x0.astype(dt)
    one = dt.type(1)
    hy, hx = one - ly, one - lx
    keep = (~empty).astype(dt)
    pos = np.stack([y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1])
    wts = np.stack([hy * hx, hy * lx, ly * hx, ly * lx]) * keep
    pos = np.where(empty, 0, pos)
    return xp.asarray(pos), xp.asarray(wts), gh * gw


def _rroi_align(p, xp, data, rois):
    if data.ndim != 4:
        raise MXNetError("%s: data must be 4-D (batch, channel, height, width), got shape %s"
                         % (_RROI, data.shape))
    if rois.ndim != 2 or rois.shape[1] != 6:
        raise MXNetError("%s: rois must be 2-D (num_rois, 6) [batch_index, x, y, w, h, angle], "
                         "got shape %s" % (_RROI, rois.shape))
    if len(p.pooled_size) != 2 or min(p.pooled_size) <= 0:
        raise MXNetError("%s: pooled_size=%s, expected two positive integers (h, w)"
                         % (_RROI, tuple(p.pooled_size)))
    n, c, h, w = data.shape
    dt = data.dtype
    b = _batch_index(xp, _RROI, rois, n, negative_ok=False)
    host = _host(rois).astype(dt)
    out = xp.zeros((rois.shape[0], c) + tuple(p.pooled_size), dtype=dt)
    for r in range(rois.shape[0]):
        pos, wts, count = _rroi_points(p, xp, host[r], h, w, dt)
        img = data[int(b[r])].reshape(c, -1)
        vals = (img[:, pos] * wts[None]).sum(axis=(1, 3, 5))       # (C, PH, PW)
        out[r] = vals / dt.type(count)
    return out


@on_ndarrays
def _rroi_grad(p, x, y, gy, need):
    raise MXNetError("%s: backward is not supported (MXNet 1.9.1 has no RROIAlign gradient)"
                     % _RROI)


register_op("_contrib_RROIAlign", _rroi_align, inputs=("data", "rois"),
            params=[Param("pooled_size", parse_shape, doc="Output size (h, w).", low=1),
                    Param("spatial_scale", parse_float, doc="Feature map size over image size."),
                    Param("sampling_ratio", parse_int, -1,
                          "Samples per bin side; <= 0: ceil(roi size / pooled size).")],
            gradient=_rroi_grad, saves="",
            doc="Rotated ROI align: rois (R, 6) [batch_index, x_center, y_center, width, height, "
                "angle in degrees]; every bin averages bilinear samples of the rotated grid. "
                "Forward only, as in MXNet.")


# == hawkesll ============================================================================

_HAWKES = "hawkesll"


def _expf(xp, v):
    """MXNet's ``expf``: the C float32 function, in every dtype (a float64 op too)."""
    return libm.expf(xp, v.astype(np.float32)).astype(v.dtype)


def _logf(xp, v):
    """MXNet's ``logf`` (float32 in every dtype, see :func:`_expf`)."""
    with np.errstate(all="ignore"):
        return libm.logf(xp, v.astype(np.float32)).astype(v.dtype)


def _hawkes_check(xp, lda, alpha, beta, state, lags, marks, valid_length, max_time):
    if lda.ndim != 2 or lags.ndim != 2:
        raise MXNetError("%s: lda must be (N, K) and lags (N, T), got %s and %s"
                         % (_HAWKES, lda.shape, lags.shape))
    n, k = lda.shape
    t = lags.shape[1]
    want = {"alpha": (alpha, (k,)), "beta": (beta, (k,)), "state": (state, (n, k)),
            "lags": (lags, (n, t)), "marks": (marks, (n, t)),
            "valid_length": (valid_length, (n,)), "max_time": (max_time, (n,))}
    for name, (a, shape) in want.items():
        if tuple(a.shape) != shape:
            raise MXNetError("%s: %s has shape %s, expected %s for lda of shape %s and lags of "
                             "shape %s" % (_HAWKES, name, tuple(a.shape), shape, (n, k), (n, t)))
    active = np.arange(t)[None, :] < _host(valid_length)[:, None]
    m = _host(marks)
    if active.any():
        bad = active & ((m < 0) | (m >= k) | (m != np.floor(m)))
        if bad.any():
            raise MXNetError("%s: marks must be integers in [0, %d) within valid_length, got %s"
                             % (_HAWKES, k, m[bad][0]))
    return n, k, t, xp.asarray(np.where(active, m, 0).astype(np.int64)), xp.asarray(active)


def _hawkes_forward(p, xp, lda, alpha, beta, state, lags, marks, valid_length, max_time):
    n, k, t_len, marks, active = _hawkes_check(xp, lda, alpha, beta, state, lags, marks,
                                               valid_length, max_time)
    dt = lda.dtype
    one = dt.type(1)
    st, last = state.astype(dt, copy=True), xp.zeros((n, k), dtype=dt)
    t, ll = xp.zeros(n, dtype=dt), xp.zeros(n, dtype=dt)
    rows = xp.arange(n)
    for j in range(t_len):
        act = active[:, j]
        ci = marks[:, j]
        t = xp.where(act, t + lags[:, j], t)
        d = t - last[rows, ci]
        ed = _expf(xp, -beta[ci] * d)
        s, mu = st[rows, ci], lda[rows, ci]
        term = _logf(xp, mu + alpha[ci] * beta[ci] * s * ed) - (mu * d + alpha[ci] * s * (one - ed))
        ll = xp.where(act, ll + term, ll)
        r, c = rows[act], ci[act]
        st[r, c] = (one + s * ed)[act]
        last[r, c] = t[act]
    d = max_time[:, None].astype(dt) - last
    ed = _expf(xp, -beta[None] * d)
    ll = ll - (lda * d + alpha[None] * st * (one - ed)).sum(axis=1)
    return ll, ed * st


def _hawkes_backward(p, xp, gll, gstate, lda, alpha, beta, state, lags, marks, valid_length,
                     max_time):
    """MXNet's ``_contrib_backward_hawkesll``: the gradients of the eight inputs for the
    head gradients of (loglik, state). Only loglik's counts and only lda, alpha, beta get
    one (as MXNet: the state output and the input state are not differentiated; their
    gradients and those of the data inputs are zeros here)."""
    n, k, t_len, marks, active = _hawkes_check(xp, lda, alpha, beta, state, lags, marks,
                                               valid_length, max_time)
    dt = lda.dtype
    one = dt.type(1)
    phi, phig = state.astype(dt, copy=True), xp.zeros((n, k), dtype=dt)
    last, t = xp.zeros((n, k), dtype=dt), xp.zeros(n, dtype=dt)
    gmu, ga, gb = (xp.zeros((n, k), dtype=dt) for _ in range(3))
    rows = xp.arange(n)
    for j in range(t_len):
        act = active[:, j]
        ci = marks[:, j]
        t = xp.where(act, t + lags[:, j], t)
        d = t - last[rows, ci]
        a, b = alpha[ci], beta[ci]
        ed = _expf(xp, -b * d)
        s, sg = phi[rows, ci], phig[rows, ci]
        with np.errstate(all="ignore"):
            lam = lda[rows, ci] + a * b * s * ed
            dmu = one / lam - d
            da = (b * s * ed) / lam - s * (one - ed)
            db = a * ed * (s * (one - b * d) + b * sg) / lam - a * (sg * (one - ed) + s * d * ed)
        r, c = rows[act], ci[act]
        gmu[r, c] += dmu[act]
        ga[r, c] += da[act]
        gb[r, c] += db[act]
        phig[r, c] = (ed * (-d * s + sg))[act]
        phi[r, c] = (one + s * ed)[act]
        last[r, c] = t[act]
    d = max_time[:, None].astype(dt) - last
    ed = _expf(xp, -beta[None] * d)
    gmu = (gmu - d) * gll[:, None]
    ga = (ga - phi * (one - ed)) * gll[:, None]
    gb = (gb - alpha[None] * (phig * (one - ed) + phi * d * ed)) * gll[:, None]
    return (gmu, ga.sum(axis=0), gb.sum(axis=0), xp.zeros_like(state), xp.zeros_like(lags),
            xp.zeros_like(marks), xp.zeros_like(valid_length), xp.zeros_like(max_time))


def _hawkes_grad(p, x, y, gy, need):
    gstate = gy[1] if gy[1] is not None else nd.zeros_like(x[3])
    g = nd.contrib.backward_hawkesll(gy[0], gstate, *x)
    return [g[0], g[1], g[2], g[3], None, None, None, None]


_HAWKES_INPUTS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")

register_op("_contrib_hawkesll", _hawkes_forward, inputs=_HAWKES_INPUTS,
            gradient=_hawkes_grad, saves="x", num_outputs=2,
            output_names=("output", "state"),
            infer_type=lambda p, dtypes: [dtypes[0], dtypes[0]],
            no_grad_inputs=(4, 5, 6, 7),
            doc="Log likelihood of a marked univariate Hawkes process with exponential decay "
                "per mark (lda (N, K) background intensities, alpha/beta (K,)), for the points "
                "given by inter-arrival times lags and marks (N, T), the first valid_length of "
                "each row, observed up to max_time; returns (loglik (N,), new state (N, K)). "
                "The gradient covers lda, alpha and beta (MXNet's); state gets 0.")
register_op("_contrib_backward_hawkesll", _hawkes_backward,
            inputs=("ograd", "state_ograd") + _HAWKES_INPUTS,
            gradient=_no_second_order(_HAWKES), saves="", num_outputs=8,
            output_names=tuple(n + "_grad" for n in _HAWKES_INPUTS),
            doc="The backward of hawkesll (MXNet's inputs: the head gradients of loglik and "
                "state, then hawkesll's eight inputs): the gradients of the eight inputs, "
                "of which only lda, alpha and beta are not zero.")
