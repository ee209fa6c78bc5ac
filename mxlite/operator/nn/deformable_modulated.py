"""``ModulatedDeformableConvolution`` (DCNv2) and its backward op.

The CPU forward exists in MXNet; its backward is GPU-only. The GPU backward is the
exact derivative of the (zero-padded bilinear) forward, and so is mxlite's. Second-order
gradients are not supported (MXNet has none either).
"""

import numpy as np

from ... import nd
from ...base import MXNetError, parse_int
from ..registry import register_op, Param
from ..util import no_second_order as _no_second_order
# NOTE: private helpers of the DCNv1 op, reused on purpose: ``_gather`` reads
# (N, dg, Cg, H*W) maps at flat indices and ``_scatter`` adds column gradients back at
# (index, weight) corners; both are independent of DCNv1's border rule. The shape rules
# and params are DCNv1's with the mask input (and im2col_step) added.
from .deformable import (_PARAMS, _check_inputs, _gather, _geometry, _scatter,
                         corner_offset_grad, infer_shapes)

_MDCN = "ModulatedDeformableConvolution"
_MDCN_INPUTS = ("offset", "mask", "weight", "bias")


def _mdcn_check(p, data, others):
    """Check the inputs; returns (kernel, stride, dilate, pad, out)."""
    _check_inputs(p, data, others, _MDCN_INPUTS, _MDCN)
    n, step = data.shape[0], min(p.im2col_step, data.shape[0])
    if step <= 0 or n % step:
        raise MXNetError("%s: the batch size (%d) must be divisible by im2col_step=%d (or "
                         "smaller than it)" % (_MDCN, n, p.im2col_step))
    return _geometry(p, data.shape, _MDCN)


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
    v = {(a, b): _gather(xp, d, idx) * ok[:, :, None, :]
         for a in (0, 1) for b in (0, 1) for idx, ok in [plan.corner(a, b)]}
    return corner_offset_grad(xp, gm, v, plan.ly, plan.lx, plan.inside.astype(plan.dt), plan.k)


def _mdcn_grad(p, x, y, gy, need):
    outs = nd._internal._backward_ModulatedDeformableConvolution(
        gy[0], x[0], x[1], x[2], x[3], **dict(p.items()))
    gx = [outs[0], outs[1], outs[2], outs[3]]
    if not p.no_bias:
        gx.append(nd.sum(gy[0], axis=(0, 2, 3)))
    return gx


# DCNv1's params (its order: MXNet's positional order), with im2col_step before layout
_MDCN_PARAMS = _PARAMS[:-1] + [
    Param("im2col_step", parse_int, 64, "Images per im2col in MXNet; the batch must be "
                                        "divisible by it or smaller (checked, else unused)."),
    _PARAMS[-1]]

register_op("_contrib_ModulatedDeformableConvolution", _mdcn_forward,
            inputs=lambda p: ("data", "offset", "mask", "weight") if p.no_bias
            else ("data", "offset", "mask", "weight", "bias"),
            params=_MDCN_PARAMS, gradient=_mdcn_grad, saves="x",
            infer_shape=infer_shapes(_MDCN_INPUTS, _MDCN),
            doc="2-D modulated deformable convolution (DCNv2): every kernel tap samples the "
                "input bilinearly (zero outside the map) at its place plus a learned offset and "
                "scales it by a learned mask. offset: (N, dg * 2 * kh * kw, out_h, out_w), "
                "(dy, dx) per tap; mask: (N, dg * kh * kw, out_h, out_w).")
register_op("_backward_ModulatedDeformableConvolution", _mdcn_backward,
            inputs=("grad", "data", "offset", "mask", "weight"), params=_MDCN_PARAMS,
            gradient=_no_second_order(_MDCN), saves="", num_outputs=4,
            output_names=("data_grad", "offset_grad", "mask_grad", "weight_grad"),
            doc="Gradients (data, offset, mask, weight) of ModulatedDeformableConvolution.")
