"""Detection ops: ROIPooling, ROIAlign and the contrib box ops (box_iou, box_nms,
MultiBoxPrior, box_encode/box_decode), with MXNet 1.9.1's numbers.

ROIPooling and ROIAlign are linear in ``data`` for fixed ``rois`` (ROIPooling once
its argmax is known), so each gradient is a registered adjoint op whose own
gradient is the forward again: ``_roi_pool_scatter``/``_roi_pool_gather`` route
through ROIPooling's hidden ``maxidx`` output, ``_roi_align_scatter`` is ROIAlign
transposed. ROIAlign's bilinear sampling is separable, so it runs as two small
matrix products per image (rows ``Ay``, columns ``Ax``) instead of a loop over
pixels. ``box_nms`` keeps MXNet's hidden ``record`` output (where each kept row
came from) and its gradient copies the head gradient's rows back there.
As in MXNet, ``rois`` get no gradient, and box_iou, box_encode, box_decode and
MultiBoxPrior give zero gradients.
"""
import numpy as np

from ... import nd
from ...base import (MXNetError, parse_shape, parse_float, parse_int, parse_bool,
                     parse_float_tuple)
from ..registry import register_op, Param, dtypes, ranks
from ..util import host, zeros_grad

_FLT_MAX = float(np.finfo(np.float32).max)
_FORMATS = ("corner", "center")


def _as_dtype(x, v):
    """Param ``v`` (a C float in MXNet) as a scalar of ``x``'s dtype.

    NOTE: MXNet stores float params as float32 and mixes them into DType arithmetic,
    so a float64 op sees ``double(float(v))``, not ``v``."""
    return x.dtype.type(np.float32(v))


def _c_round(xp, v):
    """C's ``round``: halves away from zero (NumPy's ``round`` goes to even)."""
    return xp.sign(v) * xp.floor(xp.abs(v) + 0.5)


def _pooled(p, name):
    return _pair(p.pooled_size, name, "pooled_size")


def _pair(v, name, what):
    if len(v) != 2 or v[0] <= 0 or v[1] <= 0:
        raise MXNetError("%s: %s=%s, expected two positive integers (h, w)"
                         % (name, what, tuple(v)))
    return int(v[0]), int(v[1])


def _check_rois(name, rois):
    """(The data's rank is the ops' ``ranks()`` rule: the adjoints get no data.)"""
    if rois.ndim != 2 or rois.shape[1] != 5:
        raise MXNetError("%s: rois must be 2-D (num_rois, 5) [batch_index, x1, y1, x2, y2], "
                         "got shape %s" % (name, rois.shape))


def _batch_index(xp, name, rois, batch, negative_ok):
    """Each roi's image: column 0 truncated to int (as C casts), range-checked."""
    b = rois[:, 0].astype(np.int64)
    if b.size:
        lo, hi = int(b.min()), int(b.max())
        if hi >= batch or (lo < 0 and not negative_ok):
            raise MXNetError("%s: rois batch index must be in [0, %d) for data of batch %d, "
                             "got %d" % (name, batch, batch, hi if hi >= batch else lo))
    return b


# -- ROIPooling ----------------------------------------------------------------------

def _roi_pool_bins(p, xp, rois, shape):
    """Bin bounds [start, end) per roi and pooled row/column, as MXNet computes them:
    roi corners rounded, bins ``floor(i * bin)`` to ``ceil((i + 1) * bin)`` in DType,
    clipped to the feature map."""
    ph_n, pw_n = _pooled(p, "ROIPooling")
    dt = rois.dtype
    corners = _c_round(xp, rois[:, 1:5] * _as_dtype(rois, p.spatial_scale)).astype(np.int64)
    x1, y1, x2, y2 = (corners[:, i] for i in range(4))

    def axis(start, end, n, size):
        length = xp.maximum(end - start + 1, 1).astype(dt)
        step = (length / dt.type(n))[:, None]
        i = xp.arange(n, dtype=dt)[None]
        lo = xp.floor(i * step).astype(np.int64) + start[:, None]
        hi = xp.ceil((i + 1) * step).astype(np.int64) + start[:, None]
        return xp.clip(lo, 0, size), xp.clip(hi, 0, size)

    hs, he = axis(y1, y2, ph_n, shape[2])
    ws, we = axis(x1, x2, pw_n, shape[3])
    return hs, he, ws, we


def _roi_pool(p, xp, data, rois):
    _check_rois("ROIPooling", rois)
    if p.spatial_scale <= 0:
        raise MXNetError("ROIPooling: spatial_scale=%g, expected a positive number"
                         % p.spatial_scale)
    n, c, h, w = data.shape
    b = _batch_index(xp, "ROIPooling", rois, n, negative_ok=False)
    hs, he, ws, we = _roi_pool_bins(p, xp, rois, data.shape)
    r = rois.shape[0]
    shape = (r, c, hs.shape[1], ws.shape[1])
    top = xp.full(shape, -_FLT_MAX, dtype=data.dtype)
    arg = xp.full(shape, -1, dtype=np.int64)
    kh = int((he - hs).max()) if r else 0
    kw = int((we - ws).max()) if r else 0
    bi, ci = b[:, None, None, None], xp.arange(c)[None, :, None, None]
    # One pass per offset inside the largest bin, in MXNet's row-major order with a
    # strict ``>``: each bin keeps its first maximum, as MXNet's argmax does.
    for i in range(kh):
        row = hs + i
        rvalid = (row < he)[:, None, :, None]
        row = xp.minimum(row, h - 1)[:, None, :, None]
        for j in range(kw):
            col = ws + j
            valid = rvalid & (col < we)[:, None, None, :]
            col = xp.minimum(col, w - 1)[:, None, None, :]
            v = data[bi, ci, row, col]
            hit = valid & (v > top)
            top = xp.where(hit, v, top)
            arg = xp.where(hit, row * w + col, arg)
    empty = (he <= hs)[:, None, :, None] | (we <= ws)[:, None, None, :]
    top = xp.where(empty, data.dtype.type(0), top)
    return top, arg.astype(data.dtype)


def _roi_flat_index(xp, rois, maxidx, in_shape):
    """Flat index into data of (N, C, H, W) for every pooled value (-1: none)."""
    n, c, h, w = in_shape
    b = _batch_index(xp, "ROIPooling", rois, n, negative_ok=False)
    k = maxidx.astype(np.int64)
    base = (b[:, None, None, None] * c + xp.arange(c)[None, :, None, None]) * (h * w)
    return xp.where(k >= 0, base + k, -1)


def _pooled_rule(in_shape, pooled, maxidx, rois):
    """The shapes the adjoints of ROIPooling take: ``in_shape`` (N, C, H, W), ``rois``
    (R, 5) and the pooled arrays (R, C, ph, pw) with ``maxidx`` in [-1, H * W)."""
    if len(in_shape) != 4:
        raise MXNetError("data expected shape (N, C, H, W), got %s" % (tuple(in_shape),))
    if rois.ndim != 2 or rois.shape[1] != 5:
        raise MXNetError("rois expected shape (num_rois, 5), got %s" % (rois.shape,))
    want = (rois.shape[0], in_shape[1]) + pooled.shape[2:]
    for name, a in (("grad", pooled), ("maxidx", maxidx)):
        if a.ndim != 4 or a.shape != want:
            raise MXNetError("%s has shape %s, expected %s (num_rois, channels, ph, pw)"
                             % (name, a.shape, want))
    hw = in_shape[2] * in_shape[3]
    if maxidx.size and not bool(((maxidx >= -1) & (maxidx < hw)).all()):
        raise MXNetError("maxidx expected values in [-1, %d) (a position in H x W), got %s"
                         % (hw, maxidx.min() if maxidx.min() < -1 else maxidx.max()))


def _roi_pool_scatter(p, xp, grad, maxidx, rois):
    shape = tuple(p.in_shape)
    idx = _roi_flat_index(xp, rois, maxidx, shape).ravel()
    keep = idx >= 0
    size = int(np.prod(shape))
    g = xp.bincount(idx[keep], weights=grad.ravel()[keep], minlength=size)
    return g.astype(grad.dtype, copy=False).reshape(shape)


def _roi_pool_gather(p, xp, g, maxidx, rois):
    idx = _roi_flat_index(xp, rois, maxidx, g.shape)
    flat = g.ravel()
    return xp.where(idx >= 0, flat[xp.maximum(idx, 0)], g.dtype.type(0))


def _roi_pool_grad(p, x, y, gy, need):
    return [nd._internal._roi_pool_scatter(gy[0], y[1], x[1], in_shape=x[0].shape,
                                           **dict(p.items())),
            nd.zeros_like(x[1])]


def _roi_pool_scatter_grad(p, x, y, gy, need):
    kw = {k: v for k, v in p.items() if k != "in_shape"}
    return [nd._internal._roi_pool_gather(gy[0], x[1], x[2], **kw),
            nd.zeros_like(x[1]), nd.zeros_like(x[2])]


def _roi_pool_gather_grad(p, x, y, gy, need):
    return [nd._internal._roi_pool_scatter(gy[0], x[1], x[2], in_shape=x[0].shape,
                                           **dict(p.items())),
            nd.zeros_like(x[1]), nd.zeros_like(x[2])]


_ROI_POOL_PARAMS = [
    Param("pooled_size", parse_shape, doc="Output (height, width) of every roi.", low=1),
    Param("spatial_scale", parse_float,
          doc="Feature map size over image size (1 / total stride)."),
]

register_op("ROIPooling", _roi_pool, inputs=("data", "rois"), params=_ROI_POOL_PARAMS,
            gradient=_roi_pool_grad, saves="xy", check=ranks(data=(4, 4)),
            num_outputs=2, num_visible_outputs=1, output_names=("output", "maxidx"),
            doc="Max pooling of every region of interest to ``pooled_size`` (Fast R-CNN). "
                "rois: (R, 5) rows [batch_index, x1, y1, x2, y2]; output (R, C, ph, pw). "
                "Empty bins give 0; the gradient goes to each bin's first maximum.")
register_op(
    "_roi_pool_scatter", _roi_pool_scatter, inputs=("grad", "maxidx", "rois"),
    params=_ROI_POOL_PARAMS + [Param("in_shape", parse_shape, doc="The data's shape.")],
    gradient=_roi_pool_scatter_grad, saves="x",
    check=lambda p, grad, maxidx, rois: _pooled_rule(p.in_shape, grad, maxidx, rois),
    doc="Gradient of ROIPooling: ``grad`` added at each bin's maximum.")
register_op("_roi_pool_gather", _roi_pool_gather, inputs=("data", "maxidx", "rois"),
            params=_ROI_POOL_PARAMS, gradient=_roi_pool_gather_grad, saves="x",
            check=lambda p, data, maxidx, rois: _pooled_rule(data.shape, maxidx, maxidx, rois),
            doc="``data`` read at each ROIPooling bin's maximum (adjoint of _roi_pool_scatter).")


# -- ROIAlign ------------------------------------------------------------------------

def _align_axis(xp, start, length, grid, n, size, dt):
    """(R, n, size) weights of one axis: the bilinear weights of the ``grid`` samples
    of every bin, divided by ``grid`` (MXNet's sampling and clamping rules)."""
    r = start.shape[0]
    g = int(grid.max()) if r else 0
    step = (length / dt.type(n))[:, None, None]
    i = xp.arange(g, dtype=dt)[None, None, :]
    k = xp.arange(n, dtype=dt)[None, :, None]
    gr = grid[:, None, None]
    pos = start[:, None, None] + k * step + (i + dt.type(0.5)) * step / gr.astype(dt)
    used = (xp.arange(g)[None, None, :] < gr) & (pos >= -1) & (pos <= size)
    pos = xp.maximum(pos, 0)
    low = pos.astype(np.int64)
    edge = low >= size - 1
    low = xp.where(edge, size - 1, low)
    high = xp.where(edge, size - 1, low + 1)
    pos = xp.where(edge, low.astype(dt), pos)
    frac = pos - low.astype(dt)
    scale = xp.where(used, dt.type(1) / xp.maximum(gr, 1).astype(dt), dt.type(0))
    cells = xp.arange(size)[None, None, None, :]
    m = ((1 - frac) * scale)[..., None] * (cells == low[..., None]) \
        + (frac * scale)[..., None] * (cells == high[..., None])
    return m.sum(axis=2).astype(dt, copy=False)


def _align_weights(p, xp, rois, shape):
    """(batch index, Ay (R, ph, H), Ax (R, pw, W)) of ROIAlign for ``rois``."""
    ph, pw = _pooled(p, "ROIAlign")
    dt = rois.dtype
    b = _batch_index(xp, "ROIAlign", rois, shape[0], negative_ok=True)
    box = rois[:, 1:5] * _as_dtype(rois, p.spatial_scale)
    if p.aligned:
        box = box - dt.type(0.5)
    width, height = box[:, 2] - box[:, 0], box[:, 3] - box[:, 1]
    if p.aligned:
        if width.size and not bool(((width > 0) & (height > 0)).all()):
            raise MXNetError("ROIAlign: with aligned=True every roi needs x2 > x1 and y2 > y1")
    else:       # MXNet forces malformed rois to 1 x 1
        width, height = xp.maximum(width, dt.type(1)), xp.maximum(height, dt.type(1))
    if p.sample_ratio > 0:
        gh = gw = xp.full(rois.shape[0], p.sample_ratio, dtype=np.int64)
    else:
        gh = xp.ceil(height / dt.type(ph)).astype(np.int64)
        gw = xp.ceil(width / dt.type(pw)).astype(np.int64)
    ay = _align_axis(xp, box[:, 1], height, gh, ph, shape[2], dt)
    ax = _align_axis(xp, box[:, 0], width, gw, pw, shape[3], dt)
    return b, ay, ax


def _align_check(p, data, rois, name="ROIAlign"):
    _check_rois(name, rois)
    ph, pw = _pooled(p, name)
    if p.position_sensitive and data.shape[1] % (ph * pw):
        raise MXNetError("%s: position_sensitive needs channels (%d) divisible by "
                         "pooled_size %d x %d" % (name, data.shape[1], ph, pw))
    return ph, pw


def _images(b):
    """The images (batch indices >= 0) that some roi reads."""
    return [int(i) for i in np.unique(host(b)) if i >= 0]


def _roi_align(p, xp, data, rois):
    ph, pw = _align_check(p, data, rois)
    b, ay, ax = _align_weights(p, xp, rois, data.shape)
    c = data.shape[1] // (ph * pw) if p.position_sensitive else data.shape[1]
    out = xp.zeros((rois.shape[0], c, ph, pw), dtype=data.dtype)
    for img in _images(b):
        sel = xp.nonzero(b == img)[0]
        wy, wx = ay[sel], ax[sel]
        if p.position_sensitive:
            d = data[img].reshape((c, ph, pw) + data.shape[2:])
            t = xp.einsum("rph,cpqhw->rcpqw", wy, d)
            out[sel] = xp.einsum("rcpqw,rqw->rcpq", t, wx)
        else:
            t = xp.matmul(wy[:, None], data[img][None])           # (r, C, ph, W)
            out[sel] = xp.matmul(t, wx.transpose(0, 2, 1)[:, None])
    return out


def _align_scatter_rule(p, grad, rois):
    """The adjoint's inputs: ``in_shape`` the data's (N, C, H, W), ``rois`` (R, 5) and
    ``grad`` the pooled output's (R, C, ph, pw)."""
    shape = tuple(p.in_shape)
    if len(shape) != 4:
        raise MXNetError("in_shape expected 4 entries (N, C, H, W), got %s" % (shape,))
    ph, pw = _align_check(p, np.broadcast_to(np.float32(0), shape), rois)
    want = (rois.shape[0], shape[1] // (ph * pw) if p.position_sensitive else shape[1], ph, pw)
    if grad.shape != want:
        raise MXNetError("grad has shape %s, expected %s (the output's)" % (grad.shape, want))


def _roi_align_scatter(p, xp, grad, rois):
    shape = tuple(p.in_shape)
    ph, pw = _pooled(p, "ROIAlign")
    b, ay, ax = _align_weights(p, xp, rois, shape)
    gx = xp.zeros(shape, dtype=grad.dtype)
    for img in _images(b):
        sel = xp.nonzero(b == img)[0]
        wy, wx, g = ay[sel], ax[sel], grad[sel]
        if p.position_sensitive:
            t = xp.einsum("rcpq,rqw->rcpqw", g, wx)
            gx[img] = xp.einsum("rph,rcpqw->cpqhw", wy, t).reshape(shape[1:])
        else:
            t = xp.matmul(g, wx[:, None])                           # (r, C, ph, W)
            gx[img] = xp.tensordot(wy, t, axes=([0, 1], [0, 2])).transpose(1, 0, 2)
    return gx


def _roi_align_grad(p, x, y, gy, need):
    return [nd._internal._roi_align_scatter(gy[0], x[1], in_shape=x[0].shape,
                                            **dict(p.items())),
            nd.zeros_like(x[1])]


def _roi_align_scatter_grad(p, x, y, gy, need):
    kw = {k: v for k, v in p.items() if k != "in_shape"}
    return [nd.contrib.ROIAlign(gy[0], x[1], **kw), nd.zeros_like(x[1])]


_ROI_ALIGN_PARAMS = [
    Param("pooled_size", parse_shape, doc="Output (height, width) of every roi.", low=1),
    Param("spatial_scale", parse_float,
          doc="Feature map size over image size (1 / total stride)."),
    Param("sample_ratio", parse_int, -1,
          "Samples per bin along each axis; -1: ceil(roi size / pooled size)."),
    Param("position_sensitive", parse_bool, False,
          "R-FCN's PSRoIAlign: output channel c at bin (i, j) reads input channel "
          "c * ph * pw + i * pw + j."),
    Param("aligned", parse_bool, False, "Detectron2's half-pixel shift of the roi corners."),
]

register_op("_contrib_ROIAlign", _roi_align, inputs=("data", "rois"),
            params=_ROI_ALIGN_PARAMS, gradient=_roi_align_grad, saves="x", check=ranks(data=(4, 4)),
            doc="Average of bilinear samples in every bin of every roi (Mask R-CNN). "
                "rois: (R, 5) [batch_index, x1, y1, x2, y2]; "
                "a negative batch index gives zeros (MXNet zeroes only one element of "
                "such a roi's output and leaves the rest unset).")
register_op(
    "_roi_align_scatter", _roi_align_scatter, inputs=("grad", "rois"), check=_align_scatter_rule,
    params=_ROI_ALIGN_PARAMS + [Param("in_shape", parse_shape, doc="The data's shape.")],
    gradient=_roi_align_scatter_grad, saves="x",
    doc="Gradient of ROIAlign (its transpose for fixed rois).")


# -- box_iou -------------------------------------------------------------------------

def _corners(xp, box, fmt):
    """(x1, y1, x2, y2) of boxes (..., 4) in ``fmt``."""
    a, b, c, d = (box[..., i] for i in range(4))
    if fmt == "corner":
        return a, b, c, d
    hw, hh = c / 2, d / 2
    return a - hw, b - hh, a + hw, b + hh


def _area(xp, box, fmt):
    """MXNet's BoxArea: zero for a box of negative width or height."""
    if fmt == "corner":
        w, h = box[..., 2] - box[..., 0], box[..., 3] - box[..., 1]
    else:
        w, h = box[..., 2], box[..., 3]
    return xp.where((w < 0) | (h < 0), box.dtype.type(0), w * h)


def _iou(xp, lhs, rhs, fmt):
    """IoU of every lhs (L, 4) with every rhs (M, 4): (L, M), MXNet's arithmetic."""
    l1 = _corners(xp, lhs[:, None], fmt)
    r1 = _corners(xp, rhs[None], fmt)
    zero = lhs.dtype.type(0)
    iw = xp.maximum(xp.minimum(l1[2], r1[2]) - xp.maximum(l1[0], r1[0]), zero)
    ih = xp.maximum(xp.minimum(l1[3], r1[3]) - xp.maximum(l1[1], r1[1]), zero)
    inter = iw * ih
    union = _area(xp, lhs, fmt)[:, None] + _area(xp, rhs, fmt)[None] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.where(inter > 0, inter / xp.where(inter > 0, union, 1), zero)


def _box_iou(p, xp, lhs, rhs):
    for name, a in (("lhs", lhs), ("rhs", rhs)):
        if a.ndim < 2 or a.shape[-1] != 4:
            raise MXNetError("box_iou: %s must have at least 2 dims and last dim 4, got shape %s"
                             % (name, a.shape))
    lhs2, rhs2 = lhs.reshape(-1, 4), rhs.reshape(-1, 4)
    out = _iou(xp, lhs2, rhs2, p.format)
    # NOTE: a NaN coordinate gives a NaN IoU. MXNet's min/max let it through only in
    # some argument positions and return 0 (a finite, wrong answer) in the others.
    nan = xp.isnan(lhs2).any(axis=1)[:, None] | xp.isnan(rhs2).any(axis=1)[None]
    if nan.any():
        out = xp.where(nan, lhs.dtype.type(np.nan), out)
    return out.reshape(lhs.shape[:-1] + rhs.shape[:-1]).astype(lhs.dtype, copy=False)


register_op("_contrib_box_iou", _box_iou, inputs=("lhs", "rhs"),
            params=[Param("format", None, "corner", "'corner' (x1, y1, x2, y2) or "
                          "'center' (x, y, w, h).", choices=_FORMATS)],
            gradient=zeros_grad, saves="",
            doc="Intersection over union of every lhs box with every rhs box: shape "
                "lhs.shape[:-1] + rhs.shape[:-1]. Zero gradient, as in MXNet.")


# -- box_nms -------------------------------------------------------------------------

def _nms_check(p, shape):
    if len(shape) < 2:
        raise MXNetError("box_nms: data must have at least 2 dims (..., num_boxes, width), "
                         "got shape %s" % (shape,))
    width = shape[-1]
    need = 6 if p.id_index > 0 else 5
    if width < need:
        raise MXNetError("box_nms: the last dim must hold at least %d values (score and 4 "
                         "coordinates%s), got %d" % (need, ", id" if need == 6 else "", width))
    cs, ce, si = p.coord_start, p.coord_start + 3, p.score_index
    if not 0 <= si < width:
        raise MXNetError("box_nms: score_index=%d out of range [0, %d)" % (si, width))
    if cs <= si <= ce:
        raise MXNetError("box_nms: score_index=%d overlaps the coordinates [%d, %d]"
                         % (si, cs, ce))
    if cs < 0 or ce >= width:
        raise MXNetError("box_nms: coordinates [%d, %d] (coord_start=%d) out of range "
                         "[0, %d)" % (cs, ce, cs, width))
    if p.id_index >= 0:
        ii = p.id_index
        if ii >= width or cs <= ii <= ce or ii == si:
            raise MXNetError("box_nms: id_index=%d must be in [0, %d) and differ from "
                             "score_index=%d and the coordinates [%d, %d]"
                             % (ii, width, si, cs, ce))


def _nms_candidates(p, xp, rows):
    """Indices of the valid rows of one batch sorted by score (stable, descending),
    the first ``topk``."""
    scores = rows[:, p.score_index]
    valid = scores > _as_dtype(rows, p.valid_thresh)
    if p.id_index >= 0 and p.background_id >= 0:
        valid &= rows[:, p.id_index].astype(np.int64) != p.background_id
    idx = xp.nonzero(valid)[0]
    order = xp.argsort(-scores[idx], kind="stable")
    topk = rows.shape[0] if p.topk < 0 else p.topk
    return idx[order][:topk]


def _nms_keep(p, xp, rows, cand):
    """Which candidates survive, visiting them in score order (sequential)."""
    boxes = rows[cand][:, p.coord_start:p.coord_start + 4]
    iou = host(_iou(xp, boxes, boxes, p.in_format) > _as_dtype(rows, p.overlap_thresh))
    if p.id_index >= 0 and not p.force_suppress:
        ids = host(rows[cand, p.id_index].astype(np.int64))
        iou &= ids[:, None] == ids[None, :]
    keep = np.ones(len(cand), dtype=bool)
    for i in range(len(cand)):
        if keep[i]:
            keep[i + 1:] &= ~iou[i, i + 1:]
    return keep


def _convert(xp, box, to):
    """MXNet's in-place format conversion of output rows; rows whose first coordinate
    is negative (the -1 rows, and any box left of 0) are left as they are."""
    a, b, c, d = (box[:, i] for i in range(4))
    if to == "center":
        new = ((a + c) / 2, (b + d) / 2, c - a, d - b)
    else:
        new = (a - c / 2, b - d / 2, a + c / 2, b + d / 2)
    skip = a < 0
    return xp.stack([xp.where(skip, o, n) for o, n in zip((a, b, c, d), new)], axis=1)


def _box_nms(p, xp, data):
    _nms_check(p, data.shape)
    n, k = data.shape[-2:]
    rows = data.reshape(-1, n, k)
    dt = data.dtype
    rshape = data.shape[:-1] + (1,)
    if p.topk == 0:
        return data.copy(), xp.arange(rows.shape[0] * n, dtype=dt).reshape(rshape)
    out = xp.full(rows.shape, -1, dtype=dt)
    record = xp.full(rows.shape[:2], -1, dtype=dt)
    for b in range(rows.shape[0]):
        cand = _nms_candidates(p, xp, rows[b])
        if not len(cand):
            continue
        kept = cand[xp.asarray(_nms_keep(p, xp, rows[b], cand))]
        out[b, :len(kept)] = rows[b, kept]
        record[b, :len(kept)] = (kept + b * n).astype(dt)
    if p.in_format != p.out_format:
        cs = p.coord_start
        flat = out.reshape(-1, k)
        flat[:, cs:cs + 4] = _convert(xp, flat[:, cs:cs + 4], p.out_format)
    return out.reshape(data.shape), record.reshape(rshape)


def _nms_rows(record):
    """Flat row of the input each output row came from (-1: none)."""
    return record.reshape(-1).astype(np.int64)


def _nms_rule(p, g, record):
    """box_nms's adjoints take rows (..., k) and ``record`` (..., 1): one input row
    index (or -1) per row."""
    if g.ndim < 2 or record.shape != g.shape[:-1] + (1,):
        raise MXNetError("record has shape %s, expected %s for rows of shape %s"
                         % (record.shape, g.shape[:-1] + (1,) if g.ndim >= 2 else "(..., 1)",
                            g.shape))
    rows = record.size
    if rows and not bool((record < rows).all()):
        raise MXNetError("record expected row indices below %d, got %s" % (rows, record.max()))


def _nms_scatter(p, xp, grad, record):
    k = grad.shape[-1]
    src = _nms_rows(record)
    flat = grad.reshape(-1, k)
    gx = xp.zeros_like(flat)
    keep = src >= 0
    gx[src[keep]] = flat[keep]
    return gx.reshape(grad.shape)


def _nms_gather(p, xp, g, record):
    k = g.shape[-1]
    src = _nms_rows(record)
    flat = g.reshape(-1, k)
    out = xp.where((src >= 0)[:, None], flat[xp.maximum(src, 0)], g.dtype.type(0))
    return out.reshape(g.shape)


def _box_nms_grad(p, x, y, gy, need):
    return [nd._internal._box_nms_scatter(gy[0], y[1])]


def _nms_scatter_grad(p, x, y, gy, need):
    return [nd._internal._box_nms_gather(gy[0], x[1]), nd.zeros_like(x[1])]


def _nms_gather_grad(p, x, y, gy, need):
    return [nd._internal._box_nms_scatter(gy[0], x[1]), nd.zeros_like(x[1])]


register_op("_contrib_box_nms", _box_nms, aliases=("_contrib_box_non_maximum_suppression",),
            params=[
                Param("overlap_thresh", parse_float, 0.5,
                      "Suppress a box whose IoU with a kept higher-scored box exceeds this."),
                Param("valid_thresh", parse_float, 0.0, "Keep boxes with score above this."),
                Param("topk", parse_int, -1, "NMS over the topk highest scores; -1: all."),
                Param("coord_start", parse_int, 2, "Index of the first of 4 coordinates."),
                Param("score_index", parse_int, 1, "Index of the score."),
                Param("id_index", parse_int, -1, "Index of the class id; -1: no classes."),
                Param("background_id", parse_int, -1, "Class id dropped before NMS; -1: none."),
                Param("force_suppress", parse_bool, False,
                      "Suppress across classes too (with id_index)."),
                Param("in_format", None, "corner", choices=_FORMATS),
                Param("out_format", None, "corner", choices=_FORMATS),
            ],
            gradient=_box_nms_grad, saves="y",
            num_outputs=2, num_visible_outputs=1, output_names=("output", "record"),
            doc="Non-maximum suppression per batch row: kept boxes first, by descending "
                "score (ties keep input order), every other row -1. The gradient copies "
                "each output row's head gradient back to the input row it came from.")
register_op("_box_nms_scatter", _nms_scatter, inputs=("grad", "record"),
            gradient=_nms_scatter_grad, saves="x", check=_nms_rule,
            doc="Gradient of box_nms: output rows' gradients copied to their input rows.")
register_op("_box_nms_gather", _nms_gather, inputs=("data", "record"),
            gradient=_nms_gather_grad, saves="x", check=_nms_rule,
            doc="Input rows read at box_nms's output positions (adjoint of _box_nms_scatter).")


# -- MultiBoxPrior -------------------------------------------------------------------

def _multibox_prior(p, xp, data):
    sizes, ratios = tuple(p.sizes), tuple(p.ratios)
    if not sizes or not ratios or min(sizes) <= 0 or min(ratios) <= 0:
        raise MXNetError("MultiBoxPrior: sizes=%s and ratios=%s must be non-empty and positive"
                         % (sizes, ratios))
    if len(p.steps) != 2 or len(p.offsets) != 2:
        raise MXNetError("MultiBoxPrior: steps=%s and offsets=%s must have 2 values (y, x)"
                         % (tuple(p.steps), tuple(p.offsets)))
    h, w = data.shape[2:]
    f = np.float32
    # NOTE: MXNet computes in float (float32) whatever the sizes' precision.
    step_y = f(p.steps[0]) if p.steps[0] > 0 else f(1) / f(h)
    step_x = f(p.steps[1]) if p.steps[1] > 0 else f(1) / f(w)
    cy = (xp.arange(h, dtype=f) + f(p.offsets[0])) * step_y
    cx = (xp.arange(w, dtype=f) + f(p.offsets[1])) * step_x
    half_w, half_h = [], []
    for s in sizes:
        half_w.append(f(s) * f(h) / f(w) / f(2))
        half_h.append(f(s) / f(2))
    for r in ratios[1:]:
        q = np.sqrt(f(r))
        half_w.append(f(sizes[0]) * f(h) / f(w) * q / f(2))
        half_h.append(f(sizes[0]) / q / f(2))
    hw = xp.asarray(np.array(half_w, dtype=f))
    hh = xp.asarray(np.array(half_h, dtype=f))
    a = len(half_w)
    x_c = xp.broadcast_to(cx[None, :, None], (h, w, a))
    y_c = xp.broadcast_to(cy[:, None, None], (h, w, a))
    out = xp.stack([x_c - hw, y_c - hh, x_c + hw, y_c + hh], axis=-1)
    if p.clip:
        out = xp.clip(out, f(0), f(1))
    return out.reshape(1, h * w * a, 4).astype(data.dtype, copy=False)


register_op("_contrib_MultiBoxPrior", _multibox_prior, params=[
    Param("sizes", parse_float_tuple, (1.0,), "Anchor sizes (fractions of the image)."),
    Param("ratios", parse_float_tuple, (1.0,), "Aspect ratios (width / height)."),
    Param("clip", parse_bool, False, "Clip the anchors to [0, 1]."),
    Param("steps", parse_float_tuple, (-1.0, -1.0), "Step (y, x) between centers; -1: 1/size."),
    Param("offsets", parse_float_tuple, (0.5, 0.5), "Center offsets (y, x) within a cell."),
], gradient=zeros_grad, saves="", check=ranks(data=(4, 4)),
    doc="Anchor boxes (1, H * W * (len(sizes) + len(ratios) - 1), 4) in corner format: per "
        "pixel (row-major) every size with ratios[0], then sizes[0] with ratios[1:].")


# -- box_encode / box_decode ---------------------------------------------------------

def _center(box):
    w = box[..., 2] - box[..., 0]
    h = box[..., 3] - box[..., 1]
    return box[..., 0] + w * 0.5, box[..., 1] + h * 0.5, w, h


def _box_encode(p, xp, samples, matches, anchors, refs, means, stds):
    if anchors.ndim != 3 or anchors.shape[-1] != 4 or refs.ndim != 3 or refs.shape[-1] != 4:
        raise MXNetError("box_encode: anchors (B, N, 4) and refs (B, M, 4) expected, got %s "
                         "and %s" % (anchors.shape, refs.shape))
    b, n = anchors.shape[:2]
    if samples.shape != (b, n) or matches.shape != (b, n):
        raise MXNetError("box_encode: samples and matches must have shape %s (anchors' first "
                         "two dims), got %s and %s" % ((b, n), samples.shape, matches.shape))
    if means.shape != (4,) or stds.shape != (4,):
        raise MXNetError("box_encode: means and stds must have shape (4,), got %s and %s"
                         % (means.shape, stds.shape))
    m = refs.shape[1]
    # NOTE: rows that are not positive may hold any match; clip so the gather is safe.
    j = xp.clip(matches.astype(np.int64), 0, max(m - 1, 0))
    ref = xp.take_along_axis(refs, j[..., None], axis=1) if m else xp.zeros_like(anchors)
    rx, ry, rw, rh = _center(ref)
    ax, ay, aw, ah = _center(anchors)
    valid = samples > 0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        t = xp.stack([(rx - ax) / aw, (ry - ay) / ah, xp.log(rw / aw), xp.log(rh / ah)], -1)
        t = (t - means) / stds
    t = xp.where(valid[..., None], t, anchors.dtype.type(0))
    mask = xp.broadcast_to(valid[..., None], t.shape).astype(anchors.dtype)
    return t.astype(anchors.dtype, copy=False), mask


register_op("_contrib_box_encode", _box_encode,
            inputs=("samples", "matches", "anchors", "refs", "means", "stds"),
            gradient=zeros_grad, saves="", num_outputs=2, output_names=("targets", "masks"),
            doc="Regression targets (B, N, 4) of every anchor toward its matched ref box "
                "(both corner format), normalised by means/stds, and masks (1 for positive "
                "samples). Zero gradients, as in MXNet.")


def _box_decode(p, xp, data, anchors):
    if data.ndim != 3 or data.shape[-1] != 4:
        raise MXNetError("box_decode: data must have shape (B, N, 4), got %s" % (data.shape,))
    n = data.shape[1]
    if anchors.ndim < 3 or anchors.shape[-1] != 4 or anchors.size != n * 4:
        raise MXNetError("box_decode: anchors must have shape (1, %d, 4) for data of shape %s, "
                         "got %s" % (n, data.shape, anchors.shape))
    fmt = p.format
    a = anchors.reshape(1, n, 4)
    if fmt == "corner":
        ax, ay, aw, ah = _center(a)
    else:
        ax, ay, aw, ah = (a[..., i] for i in range(4))
    s = [_as_dtype(data, v) for v in (p.std0, p.std1, p.std2, p.std3)]
    ox = data[..., 0] * s[0] * aw + ax
    oy = data[..., 1] * s[1] * ah + ay
    dw, dh = data[..., 2] * s[2], data[..., 3] * s[3]
    if p.clip > 0:
        clip = _as_dtype(data, p.clip)
        dw, dh = xp.minimum(dw, clip), xp.minimum(dh, clip)
    ow = xp.exp(dw) * aw * 0.5
    oh = xp.exp(dh) * ah * 0.5
    out = xp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)
    return out.astype(data.dtype, copy=False)


register_op("_contrib_box_decode", _box_decode, inputs=("data", "anchors"), params=[
    Param("std0", parse_float, 1.0, "Scale of the x offsets."),
    Param("std1", parse_float, 1.0, "Scale of the y offsets."),
    Param("std2", parse_float, 1.0, "Scale of the log-width offsets."),
    Param("std3", parse_float, 1.0, "Scale of the log-height offsets."),
    Param("clip", parse_float, -1.0, "Clip the log-size offsets above at this (if > 0)."),
    Param("format", None, "center", "The anchors' format.", choices=_FORMATS),
], gradient=zeros_grad, saves="",
    doc="Boxes (B, N, 4) in corner format decoded from offsets ``data`` relative to "
        "``anchors`` (1, N, 4). Zero gradients, as in MXNet.")


# -- _contrib_bipartite_matching ---------------------------------------------------------------

def _bipartite(p, xp, data):
    """Greedy matching by score: (B, N, M) -> row matches (B, N), column matches (B, M)."""
    s = np.asarray(data.get() if hasattr(data, "get") else data)
    if s.ndim < 2:
        raise MXNetError("bipartite_matching: data must be at least 2-D (..., N, M), got "
                         "shape %s" % (s.shape,))
    if p.topk > 0:
        # NOTE: MXNet 1.9.1 keeps more than topk matches (its topk cuts the sorted
        # candidate list in a way not reproduced yet): refuse rather than differ.
        raise MXNetError("bipartite_matching: topk=%d is not supported (only -1)" % p.topk)
    lead, (n, m) = s.shape[:-2], s.shape[-2:]
    s = s.reshape((int(np.prod(lead)), n, m))
    rows = np.full((s.shape[0], n), -1, s.dtype)
    cols = np.full((s.shape[0], m), -1, s.dtype)
    for b in range(s.shape[0]):
        flat = s[b].reshape(-1)
        order = np.argsort(flat if p.is_ascend else -flat, kind="stable")
        for k in order:
            v = flat[k]
            if (v > p.threshold) if p.is_ascend else (v < p.threshold):
                break
            i, j = divmod(int(k), m)
            if rows[b, i] == -1 and cols[b, j] == -1:
                rows[b, i], cols[b, j] = j, i
    return xp.asarray(rows.reshape(lead + (n,))), xp.asarray(cols.reshape(lead + (m,)))


register_op("_contrib_bipartite_matching", _bipartite, num_outputs=2, check=dtypes(data="f"),
            params=[Param("is_ascend", parse_bool, False, "Match the lowest scores first."),
                    Param("threshold", parse_float, doc="Ignore scores below it (above it "
                                                        "with is_ascend)."),
                    Param("topk", parse_int, -1, "Only -1 (no limit) is supported.")],
            gradient=lambda p, x, y, gy, need: [nd.zeros_like(x[0])], saves="x",
            doc="Greedy bipartite matching on a score matrix (B, N, M): the matched column "
                "of each row (-1: none) and the matched row of each column. Zero gradient.")
