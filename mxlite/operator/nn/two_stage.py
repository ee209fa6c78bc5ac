"""Two-stage detector ops: RPN proposals (``_contrib_Proposal``,
``_contrib_MultiProposal``) and R-FCN's position-sensitive ROI pooling
(``_contrib_PSROIPooling``), with MXNet 1.9.1's numbers.

Proposal follows MXNet's CPU kernel step by step, in float32 and in MXNet's order
of operations (C++'s double intermediates kept where MXNet has them):

1. anchors from ``scales`` x ``ratios`` around a ``feature_stride`` square (ratio
   major), shifted to every feature-map cell (rows: cell-major, anchor-minor);
2. ``bbox_pred`` deltas applied (or added corners with ``iou_loss``), boxes clipped
   to the image, cells past ``im_info``'s real size scored -1;
3. boxes smaller than ``rpn_min_size * scale`` widened by half of it and scored -1;
4. a stable sort by descending score: tied scores (every -1 box) keep their anchor
   order, which is what MXNet 1.9.1's CPU build gives (checked on maps of 50k
   anchors with heavy ties; its source calls ``std::sort``, which promises nothing);
5. greedy NMS (IoU with MXNet's +1 pixel areas, suppress above ``threshold``) over
   the first ``rpn_pre_nms_top_n``, keeping up to ``rpn_post_nms_top_n``; when fewer
   survive, the kept rows repeat cyclically to fill the output.

PSROIPooling averages every bin of the roi (corners rounded, ends + 1, bins floor/
ceil) over the input channel of the bin's group cell; it is linear in ``data``, and
its gradient is a registered adjoint op whose own gradient is PSROIPooling again.
As in MXNet, ``rois`` get no gradient and Proposal's gradients are zero.
"""
import numpy as np

from ... import nd
from ...base import MXNetError, parse_float, parse_int, parse_bool, parse_float_tuple, \
    parse_shape
from .. import libm
from ..registry import register_op, Param, ranks
from ..util import zeros_grad
from ..util import host
from .detection import _c_round, _check_rois, _batch_index

_F32 = np.float32


# -- Proposal ---------------------------------------------------------------------------

def _anchors(p):
    """(A, 4) float32 base anchors, ratio-major, as MXNet's GenerateAnchors."""
    f = _F32
    side = f(p.feature_stride - 1.0)
    w = h = side - f(0) + f(1)
    ctr = f(0.0 + 0.5 * (float(w) - 1.0))
    out = []
    for ratio in p.ratios:
        for scale in p.scales:
            size_ratios = np.floor(w * h / f(ratio))
            new_w = np.floor(np.sqrt(size_ratios) + f(0.5)) * f(scale)
            new_h = np.floor(new_w / f(scale) * f(ratio) + f(0.5)) * f(scale)
            out.append([ctr - f(0.5) * (new_w - f(1)), ctr - f(0.5) * (new_h - f(1)),
                        ctr + f(0.5) * (new_w - f(1)), ctr + f(0.5) * (new_h - f(1))])
    return np.array(out, dtype=f).reshape(-1, 4)


def _shifted_anchors(p, height, width):
    """(H * W * A, 4): every anchor at every cell, index (h * W + w) * A + a."""
    base = _anchors(p)
    s = p.feature_stride
    sx = (np.arange(width) * s).astype(_F32)[None, :, None]
    sy = (np.arange(height) * s).astype(_F32)[:, None, None]
    x1 = base[None, None, :, 0] + sx
    y1 = base[None, None, :, 1] + sy
    x2 = base[None, None, :, 2] + sx
    y2 = base[None, None, :, 3] + sy
    return np.stack(np.broadcast_arrays(x1, y1, x2, y2), axis=-1).reshape(-1, 4)


def _to_cells(a, width):
    """(A * width, H, W) -> (H * W * A, width): MXNet's proposal order."""
    k, h, w = a.shape
    return a.reshape(k // width, width, h, w).transpose(2, 3, 0, 1).reshape(-1, width)


def _transform(p, anchors, deltas, im_h, im_w):
    """Predicted boxes (n, 4) float32, clipped to the image (MXNet's arithmetic)."""
    f, d = _F32, np.float64
    x1, y1, x2, y2 = (anchors[:, i] for i in range(4))
    dx, dy, dw, dh = (deltas[:, i] for i in range(4))
    if p.iou_loss:
        box = [x1 + dx, y1 + dy, x2 + dw, y2 + dh]
    else:
        width = (x2 - x1) + f(1)
        height = (y2 - y1) + f(1)
        # NOTE: ``x1 + 0.5 * (width - 1.0)`` is double arithmetic in MXNet, rounded once.
        cx = (x1.astype(d) + 0.5 * (width.astype(d) - 1.0)).astype(f)
        cy = (y1.astype(d) + 0.5 * (height.astype(d) - 1.0)).astype(f)
        px = dx * width + cx
        py = dy * height + cy
        pw = libm.expf(np, dw) * width
        ph = libm.expf(np, dh) * height
        hw = 0.5 * (pw.astype(d) - 1.0)
        hh = 0.5 * (ph.astype(d) - 1.0)
        box = [(px.astype(d) - hw).astype(f), (py.astype(d) - hh).astype(f),
               (px.astype(d) + hw).astype(f), (py.astype(d) + hh).astype(f)]
    lim = [im_w - f(1), im_h - f(1), im_w - f(1), im_h - f(1)]
    return np.stack([np.maximum(np.minimum(b, m), f(0)) for b, m in zip(box, lim)], axis=1)


def _filter(boxes, scores, min_size):
    """MXNet's FilterBox: boxes under ``min_size`` widen by half of it, score -1."""
    f = _F32
    iw = boxes[:, 2] - boxes[:, 0] + f(1)
    ih = boxes[:, 3] - boxes[:, 1] + f(1)
    small = (iw < min_size) | (ih < min_size)
    half = min_size / f(2)
    shift = np.array([-half, -half, half, half], dtype=f)
    boxes = np.where(small[:, None], boxes + shift, boxes)
    return boxes, np.where(small, f(-1), scores)


def _nms(dets, thresh, post):
    """Greedy NMS over score-ordered ``dets`` (n, 4): kept indices, at most ``post``."""
    f = _F32
    x1, y1, x2, y2 = (dets[:, i] for i in range(4))
    area = (x2 - x1 + f(1)) * (y2 - y1 + f(1))
    suppressed = np.zeros(len(dets), dtype=bool)
    keep = []
    for i in range(len(dets)):
        if len(keep) >= post:
            break
        if suppressed[i]:
            continue
        keep.append(i)
        j = slice(i + 1, None)
        w = np.maximum(f(0), np.minimum(x2[i], x2[j]) - np.maximum(x1[i], x1[j]) + f(1))
        h = np.maximum(f(0), np.minimum(y2[i], y2[j]) - np.maximum(y1[i], y1[j]) + f(1))
        inter = w * h
        with np.errstate(divide="ignore", invalid="ignore"):
            ovr = inter / (area[i] + area[j] - inter)
        suppressed[j] |= ovr > thresh
    return np.asarray(keep, dtype=np.int64)


def _proposal_image(p, anchors, score, deltas, info, shape):
    """Rows (post, 4) and scores (post,) of one image."""
    f = _F32
    height, width = shape
    im_h, im_w, im_scale = (f(v) for v in info[:3])
    real_h = int(im_h / f(p.feature_stride))
    real_w = int(im_w / f(p.feature_stride))
    if real_h > height or real_w > width:
        raise MXNetError("Proposal: im_info (%g, %g) with feature_stride=%d needs a feature map "
                         "of at least %d x %d, got %d x %d" % (im_h, im_w, p.feature_stride,
                                                              real_h, real_w, height, width))
    scores = _to_cells(score, 1).ravel().copy()
    boxes = _transform(p, anchors, _to_cells(deltas, 4), im_h, im_w)
    a = anchors.shape[0] // (height * width)
    cell_h = np.arange(height).repeat(width * a)
    cell_w = np.tile(np.arange(width).repeat(a), height)
    scores[(cell_h >= real_h) | (cell_w >= real_w)] = f(-1)
    boxes, scores = _filter(boxes, scores, f(f(p.rpn_min_size) * im_scale))
    count = len(scores)
    pre = min(p.rpn_pre_nms_top_n if p.rpn_pre_nms_top_n > 0 else count, count)
    post = min(p.rpn_post_nms_top_n, pre)
    # NOTE: stable, as MXNet 1.9.1's binary behaves: ties (the -1 boxes) reach the
    # NMS and the cyclic fill in anchor order.
    order = np.argsort(-scores, kind="stable")[:pre]
    boxes, scores = boxes[order], scores[order]
    keep = _nms(boxes, f(p.threshold), post)
    pick = keep[np.arange(p.rpn_post_nms_top_n) % len(keep)]
    return boxes[pick], scores[pick]


def _check_proposal(name, p, cls_prob, bbox_pred, im_info):
    n, c, h, w = cls_prob.shape
    a = len(p.scales) * len(p.ratios)
    if c != 2 * a:
        raise MXNetError("%s: cls_prob has %d channels, expected 2 * len(scales) * len(ratios) "
                         "= %d" % (name, c, 2 * a))
    if tuple(bbox_pred.shape) != (n, 4 * a, h, w):
        raise MXNetError("%s: bbox_pred has shape %s, expected %s" % (
            name, tuple(bbox_pred.shape), (n, 4 * a, h, w)))
    if tuple(im_info.shape) != (n, 3):
        raise MXNetError("%s: im_info has shape %s, expected %s (height, width, scale)"
                         % (name, tuple(im_info.shape), (n, 3)))
    for arg, a_ in (("cls_prob", cls_prob), ("bbox_pred", bbox_pred), ("im_info", im_info)):
        if a_.dtype != np.float32:
            raise MXNetError("%s: %s has dtype %s, expected float32 (MXNet's kernel supports "
                             "float32 only)" % (name, arg, a_.dtype))
    if p.rpn_post_nms_top_n <= 0:
        raise MXNetError("%s: rpn_post_nms_top_n=%d must be positive"
                         % (name, p.rpn_post_nms_top_n))


def _proposals(name, p, xp, cls_prob, bbox_pred, im_info, single):
    _check_proposal(name, p, cls_prob, bbox_pred, im_info)
    if single and cls_prob.shape[0] != 1:
        raise MXNetError("Proposal: cls_prob has batch %d; Proposal handles one image "
                         "(use MultiProposal for a batch)" % cls_prob.shape[0])
    prob, deltas, info = host(cls_prob), host(bbox_pred), host(im_info)
    n, c, h, w = prob.shape
    anchors = _shifted_anchors(p, h, w)
    rows, scores = [], []
    for b in range(n):
        box, score = _proposal_image(p, anchors, prob[b, c // 2:], deltas[b], info[b], (h, w))
        rows.append(np.concatenate([np.full((len(box), 1), b, dtype=_F32), box], axis=1))
        scores.append(score[:, None])
    return xp.asarray(np.concatenate(rows)), xp.asarray(np.concatenate(scores))


def _proposal_shape(per_batch):
    def rule(p, shapes):
        d = shapes[0]
        if d is None or len(d) != 4 or 0 in d:
            return shapes, None
        a = len(p.scales) * len(p.ratios)
        shapes = [d, (d[0], 4 * a, d[2], d[3]), (d[0], 3)]
        rows = p.rpn_post_nms_top_n * (d[0] if per_batch else 1)
        return shapes, [(rows, 5), (rows, 1)]
    return rule


_PROPOSAL_PARAMS = [
    Param("rpn_pre_nms_top_n", parse_int, 6000,
          "Boxes kept (by score) before NMS; <= 0: all."),
    Param("rpn_post_nms_top_n", parse_int, 300, "Boxes kept after NMS (rows per image)."),
    Param("threshold", parse_float, 0.7, "NMS: suppress boxes with IoU above this."),
    Param("rpn_min_size", parse_int, 16, "Minimum box height or width (times im_info scale)."),
    Param("scales", parse_float_tuple, (4.0, 8.0, 16.0, 32.0), "Anchor scales."),
    Param("ratios", parse_float_tuple, (0.5, 1.0, 2.0), "Anchor aspect ratios (h / w)."),
    Param("feature_stride", parse_int, 16, "Image pixels per feature-map cell."),
    Param("output_score", parse_bool, False, "Also return the scores (N * post, 1)."),
    Param("iou_loss", parse_bool, False, "Deltas are corner offsets (IoU loss) instead of "
                                         "center/size deltas."),
]


def _register_proposal(name, per_batch, doc):
    register_op(name, lambda p, xp, *x: _proposals(name[len("_contrib_"):], p, xp, *x,
                                                   single=not per_batch),
                inputs=("cls_prob", "bbox_pred", "im_info"), params=_PROPOSAL_PARAMS,
                check=ranks(cls_prob=(4, 4)),
                gradient=zeros_grad, saves="", num_outputs=2,
                num_visible_outputs=lambda p: 2 if p.output_score else 1,
                output_names=("output", "score"), infer_shape=_proposal_shape(per_batch),
                doc=doc)


_register_proposal(
    "_contrib_Proposal", False,
    "Region proposals of an RPN for one image: rows [0, x1, y1, x2, y2] "
    "(rpn_post_nms_top_n, 5) and, with output_score, their scores. cls_prob (1, 2A, H, W) "
    "(foreground: the last A channels), bbox_pred (1, 4A, H, W), im_info (1, 3) [height, "
    "width, scale]. Zero gradients, as in MXNet.")
_register_proposal(
    "_contrib_MultiProposal", True,
    "Proposal for every image of a batch: rows [batch_index, x1, y1, x2, y2] "
    "(N * rpn_post_nms_top_n, 5). Zero gradients, as in MXNet.")


# -- PSROIPooling ----------------------------------------------------------------------

def _ps_geometry(p, name, data_shape):
    """(group_size, pooled size, output_dim) checked against the data."""
    if p.pooled_size <= 0 or p.output_dim <= 0 or p.group_size < 0:
        raise MXNetError("%s: pooled_size=%d and output_dim=%d must be positive, group_size=%d "
                         "non-negative" % (name, p.pooled_size, p.output_dim, p.group_size))
    gs = p.group_size if p.group_size > 0 else p.pooled_size
    if len(data_shape) == 4 and data_shape[1] != p.output_dim * gs * gs:
        raise MXNetError("%s: data has %d channels, expected output_dim * group_size^2 = "
                         "%d * %d^2 = %d" % (name, data_shape[1], p.output_dim, gs,
                                             p.output_dim * gs * gs))
    return gs, p.pooled_size, p.output_dim


def _ps_bins(p, xp, rois, shape):
    """Per roi: bin masks My (R, P, H), Mx (R, P, W) and 1 / bin area (R, P, P)
    (0 for empty bins), as MXNet's kernel rounds and clips."""
    dt = rois.dtype
    n_bins = p.pooled_size
    scale = dt.type(np.float32(p.spatial_scale))
    r = _c_round(xp, rois[:, 1:5])
    start_w, start_h = r[:, 0] * scale, r[:, 1] * scale
    end_w, end_h = (r[:, 2] + dt.type(1)) * scale, (r[:, 3] + dt.type(1)) * scale
    tenth = dt.type(0.1)
    bin_w = xp.maximum(end_w - start_w, tenth) / dt.type(n_bins)
    bin_h = xp.maximum(end_h - start_h, tenth) / dt.type(n_bins)
    i = xp.arange(n_bins, dtype=dt)[None]

    def axis(start, size, n):
        lo = xp.floor(i * size[:, None] + start[:, None]).astype(np.int64)
        hi = xp.ceil((i + dt.type(1)) * size[:, None] + start[:, None]).astype(np.int64)
        lo, hi = xp.clip(lo, 0, n), xp.clip(hi, 0, n)
        cells = xp.arange(n)[None, None, :]
        mask = (cells >= lo[..., None]) & (cells < hi[..., None])
        return mask.astype(dt), xp.maximum(hi - lo, 0)

    my, nh = axis(start_h, bin_h, shape[2])
    mx, nw = axis(start_w, bin_w, shape[3])
    area = (nh[:, :, None] * nw[:, None, :]).astype(dt)
    with np.errstate(divide="ignore"):
        inv = xp.where(area > 0, dt.type(1) / xp.maximum(area, dt.type(1)), dt.type(0))
    return my, mx, inv


def _ps_channels(gs, n_bins):
    """Group cell (gh, gw) each pooled bin reads, MXNet's floor(i * gs / P) clipped."""
    g = np.floor(np.arange(n_bins, dtype=np.float64) * gs / n_bins).astype(np.int64)
    return np.clip(g, 0, gs - 1)


def _ps_check(p, name, data, rois):
    _check_rois(name, rois)
    if p.spatial_scale <= 0:
        raise MXNetError("%s: spatial_scale=%g, expected a positive number"
                         % (name, p.spatial_scale))
    return _ps_geometry(p, name, data.shape)


def _psroi_pool(p, xp, data, rois):
    gs, n_bins, dim = _ps_check(p, "PSROIPooling", data, rois)
    b = _batch_index(xp, "PSROIPooling", rois, data.shape[0], negative_ok=False)
    my, mx, inv = _ps_bins(p, xp, rois, data.shape)
    g = xp.asarray(_ps_channels(gs, n_bins))
    out = xp.zeros((rois.shape[0], dim, n_bins, n_bins), dtype=data.dtype)
    for img in sorted({int(i) for i in host(b)}):
        sel = xp.nonzero(b == img)[0]
        d = data[img].reshape((dim, gs, gs) + data.shape[2:])[:, g][:, :, g]  # (D, P, P, H, W)
        t = xp.einsum("rph,dpqhw->rdpqw", my[sel], d)
        out[sel] = xp.einsum("rdpqw,rqw->rdpq", t, mx[sel])
    return out * inv[:, None]


def _psroi_scatter_rule(p, grad, rois):
    """The adjoint's inputs: ``in_shape`` the data's (N, C, H, W), ``rois`` (R, 5) and
    ``grad`` the pooled output's (R, output_dim, P, P)."""
    if len(p.in_shape) != 4:
        raise MXNetError("in_shape expected 4 entries (N, C, H, W), got %s" % (p.in_shape,))
    if rois.ndim != 2 or rois.shape[1] != 5:
        raise MXNetError("rois expected shape (num_rois, 5), got %s" % (rois.shape,))
    _ps_geometry(p, "PSROIPooling", p.in_shape)
    want = (rois.shape[0], p.output_dim, p.pooled_size, p.pooled_size)
    if grad.shape != want:
        raise MXNetError("grad has shape %s, expected %s (the output's)" % (grad.shape, want))


def _psroi_scatter(p, xp, grad, rois):
    shape = tuple(p.in_shape)
    gs, n_bins, dim = _ps_geometry(p, "PSROIPooling", shape)
    b = _batch_index(xp, "PSROIPooling", rois, shape[0], negative_ok=False)
    my, mx, inv = _ps_bins(p, xp, rois, shape)
    g = _ps_channels(gs, n_bins)
    gx = xp.zeros((shape[0], dim, gs, gs) + shape[2:], dtype=grad.dtype)
    gb = grad * inv[:, None]
    for img in sorted({int(i) for i in host(b)}):
        sel = xp.nonzero(b == img)[0]
        t = xp.einsum("rdpq,rqw->rdpqw", gb[sel], mx[sel])
        cells = xp.einsum("rph,rdpqw->dpqhw", my[sel], t)       # (D, P, P, H, W)
        # Bins sharing a group cell (pooled_size > group_size) add up there.
        for i in range(n_bins):
            for j in range(n_bins):
                gx[img, :, g[i], g[j]] += cells[:, i, j]
    return gx.reshape(shape)


def _psroi_grad(p, x, y, gy, need):
    return [nd._internal._psroi_pool_scatter(gy[0], x[1], in_shape=x[0].shape,
                                             **dict(p.items())),
            nd.zeros_like(x[1])]


def _psroi_scatter_grad(p, x, y, gy, need):
    kw = {k: v for k, v in p.items() if k != "in_shape"}
    return [nd.contrib.PSROIPooling(gy[0], x[1], **kw), nd.zeros_like(x[1])]


def _psroi_shape(p, shapes):
    d, r = shapes[0], shapes[1] if len(shapes) > 1 else None
    if d is None or r is None or 0 in d or 0 in r:
        return shapes, None
    return shapes, [(r[0], p.output_dim, p.pooled_size, p.pooled_size)]


_PSROI_PARAMS = [
    Param("spatial_scale", parse_float,
          doc="Feature map size over image size (1 / total stride)."),
    Param("output_dim", parse_int, doc="Output channels.", low=1),
    Param("pooled_size", parse_int, doc="Bins per side of every roi.", low=1),
    Param("group_size", parse_int, 0, "Cells per side of the position-sensitive score maps; "
                                      "0: pooled_size."),
]

register_op("_contrib_PSROIPooling", _psroi_pool, inputs=("data", "rois"),
            params=_PSROI_PARAMS, gradient=_psroi_grad, check=ranks(data=(4, 4)),
            saves="x", infer_shape=_psroi_shape,
            doc="Position-sensitive ROI pooling (R-FCN): output (R, output_dim, P, P), bin "
                "(i, j) of channel c the average of input channel (c * gs + gi) * gs + gj over "
                "the bin (empty bins 0). data: (N, output_dim * gs^2, H, W); rois (R, 5) "
                "[batch_index, x1, y1, x2, y2], corners rounded.")
register_op(
    "_psroi_pool_scatter", _psroi_scatter, inputs=("grad", "rois"),
    params=_PSROI_PARAMS + [Param("in_shape", parse_shape, doc="The data's shape.")],
    gradient=_psroi_scatter_grad, saves="x", check=_psroi_scatter_rule,
    doc="Gradient of PSROIPooling (its transpose for fixed rois).")
