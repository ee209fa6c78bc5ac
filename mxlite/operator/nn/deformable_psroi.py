"""``DeformablePSROIPooling`` and its backward op.

MXNet's CPU forward and backward are empty (the output stays ``-FLT_MAX``); mxlite
computes what the GPU kernel computes, forward and gradients (data, trans; rois get 0).
Second-order gradients are not supported (MXNet has none either).
"""

import numpy as np

from ... import nd
from ...base import MXNetError, parse_int, parse_bool, parse_float
from ..registry import register_op, Param, ranks
from ..util import no_second_order as _no_second_order
from .detection import _c_round, _check_rois, _batch_index
from .two_stage import _ps_channels


_DPS = "DeformablePSROIPooling"


def _dps_sizes(p):
    gs, ps = p.group_size, p.part_size if p.part_size > 0 else p.pooled_size
    if p.pooled_size <= 0 or p.output_dim <= 0 or gs <= 0 or p.sample_per_part <= 0:
        raise MXNetError("%s: pooled_size=%d, output_dim=%d, group_size=%d and sample_per_part="
                         "%d must be positive" % (_DPS, p.pooled_size, p.output_dim, gs,
                                                  p.sample_per_part))
    return gs, ps


def _dps_check(p, data, rois, trans):
    _check_rois(_DPS, rois)
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
            params=_DPS_PARAMS, gradient=_dps_grad, saves="x", check=ranks(data=(4, 4)),
            num_outputs=2, num_visible_outputs=1, output_names=("output", "top_count"),
            infer_shape=_dps_shape,
            infer_type=lambda p, dtypes: [dtypes[0], dtypes[0]],
            doc="Deformable position-sensitive ROI pooling (Deformable ConvNets): bin (i, j) "
                "of channel c averages sample_per_part^2 bilinear samples of input channel "
                "(c * gs + gi) * gs + gj, the bin shifted by trans * trans_std * roi size. "
                "Hidden output top_count: the samples that fell inside the map.")
register_op("_backward_DeformablePSROIPooling", _dps_backward,
            inputs=lambda p: ("grad",) + _dps_inputs(p), params=_DPS_PARAMS,
            gradient=_no_second_order(_DPS), saves="", check=ranks(data=(4, 4)),
            num_outputs=lambda p: 1 if p.no_trans else 2,
            doc="Gradients (data, trans) of DeformablePSROIPooling.")
