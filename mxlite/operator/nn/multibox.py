"""SSD's training targets and detection output: ``_contrib_MultiBoxTarget`` and
``_contrib_MultiBoxDetection``, with MXNet 1.9.1's numbers, ties and quirks.

Both ops run per image on the host's logic (matching and NMS are sequential greedy
algorithms) with every inner loop vectorised over anchors. They follow MXNet's CPU
kernels bit for bit where it matters:

- arithmetic in float32 in MXNet's order, with the platform C library's ``logf`` and
  ``expf`` (what MXNet's kernels call) where their results land in an output; NumPy's
  float32 ``log``/``exp`` differ from them by an ulp for many inputs;
- ties: the first anchor (then the first ground truth) wins a match, sorts are stable;
- MultiBoxTarget reads labels up to the first row whose class is -1 (later rows are
  ignored, as in MXNet), leaves an image without ground truth at ``ignore_label``,
  and with hard negative mining marks only the mined anchors as background;
- MultiBoxDetection keeps suppressed rows (class -1, score and box kept), and with
  ``nms_topk`` leaves rows past the top k unsorted with class -1, as MXNet does.

As in MXNet, only float32 inputs are accepted, ``background_id`` of MultiBoxDetection
and ``minimum_negative_samples`` of MultiBoxTarget are accepted but unused (class 0 is
the background), and the gradients are zero.
"""
import numpy as np

from ...base import MXNetError, parse_float, parse_int, parse_bool, parse_float_tuple
from .. import libm
from ..registry import register_op, Param
from ..util import zeros_grad
from ..util import host

_F32 = np.float32


def _check_float32(name, **arrays):
    for what, a in arrays.items():
        if a.dtype != np.float32:
            raise MXNetError("%s: %s has dtype %s, expected float32 (MXNet's kernel "
                             "supports float32 only)" % (name, what, a.dtype))


def _variances(name, p):
    if len(p.variances) != 4:
        raise MXNetError("%s: variances=%s, expected 4 values (x, y, w, h)"
                         % (name, tuple(p.variances)))
    return [_F32(v) for v in p.variances]


def _expf_fast(xp, v):
    """float64 exp rounded to float32: within an ulp of ``expf``, vectorised."""
    return xp.exp(v.astype(np.float64)).astype(_F32)


# -- MultiBoxTarget ------------------------------------------------------------------

def _target_shapes(anchor, label, cls_pred):
    """MXNet's shape checks; returns (batch, num_anchors)."""
    name = "MultiBoxTarget"
    if len(anchor) != 3 or anchor[0] != 1 or anchor[1] <= 0 or anchor[2] != 4:
        raise MXNetError("%s: anchor must have shape (1, num_anchors, 4), shared by the "
                         "batch, got %s" % (name, tuple(anchor)))
    if len(label) != 3 or label[1] <= 0 or label[2] < 5:
        raise MXNetError("%s: label must have shape (batch, num_labels > 0, width >= 5) "
                         "with rows [class, xmin, ymin, xmax, ymax, ...], got %s"
                         % (name, tuple(label)))
    if len(cls_pred) != 3 or cls_pred[2] != anchor[1]:
        raise MXNetError("%s: cls_pred must have shape (batch, num_classes, %d) for %d "
                         "anchors, got %s" % (name, anchor[1], anchor[1], tuple(cls_pred)))
    return label[0], anchor[1]


def _overlaps(xp, anchors, gts):
    """IoU (A, G) as MXNet's MultiBoxTarget computes it: union not clamped, 0 where the
    union is 0."""
    a = [anchors[:, i][:, None] for i in range(4)]
    g = [gts[:, i][None, :] for i in range(4)]
    zero = _F32(0)
    iw = xp.maximum(zero, xp.minimum(a[2], g[2]) - xp.maximum(a[0], g[0]))
    ih = xp.maximum(zero, xp.minimum(a[3], g[3]) - xp.maximum(a[1], g[1]))
    inter = iw * ih
    union = (a[2] - a[0]) * (a[3] - a[1]) + (g[2] - g[0]) * (g[3] - g[1]) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.where(union == 0, zero, inter / xp.where(union == 0, _F32(1), union))


def _num_valid(label):
    """Ground truths of one image: the rows before the first class -1 (MXNet checks
    that such a padding row is all -1)."""
    cls = host(label[:, 0])
    pad = np.nonzero(cls == -1)[0]
    if not len(pad):
        return label.shape[0]
    row = host(label[pad[0], 1:5])
    if not (row == -1).all():
        raise MXNetError("MultiBoxTarget: label row %d has class -1 (padding) but box %s; "
                         "padding rows must be all -1" % (pad[0], row.tolist()))
    return int(pad[0])


def _match_best(xp, iou):
    """Greedy bipartite stage: repeatedly the largest overlap over unmatched anchors and
    unmatched ground truths (first anchor, then first ground truth on ties) above 1e-6.
    Returns (anchor, gt) pairs."""
    a_n, g_n = iou.shape
    taken_a = xp.zeros(a_n, dtype=bool)
    taken_g = xp.zeros(g_n, dtype=bool)
    pairs = []
    for _ in range(g_n):
        masked = xp.where(taken_a[:, None] | taken_g[None, :], -xp.inf, iou)
        flat = int(xp.argmax(masked))
        j, k = divmod(flat, g_n)
        v = iou[j, k]
        if not bool(v > _F32(1e-6)):
            break
        pairs.append((j, k))
        taken_a[j] = True
        taken_g[k] = True
    return pairs


def _best_gt(xp, iou):
    """Each anchor's best ground truth (first maximum) and its overlap; -1 / -1 where
    no overlap exceeds -1 (MXNet's loop starts from -1 with a strict ``>``)."""
    best = xp.argmax(iou, axis=1)
    m = xp.take_along_axis(iou, best[:, None], axis=1)[:, 0]
    found = m > _F32(-1)
    return xp.where(found, best, -1), xp.where(found, m, _F32(-1))


def _background_prob(xp, logits, exp):
    """Softmax probability of class 0 per anchor, from logits (C, A), in float32 with
    MXNet's sequential sum over classes."""
    top = logits.max(axis=0)
    total = xp.zeros_like(top)
    for k in range(logits.shape[0]):
        total = total + exp(xp, logits[k] - top)
    return exp(xp, logits[0] - top) / total


def _hardest(xp, logits, n):
    """Indices (into the columns of ``logits``) of the ``n`` lowest background
    probabilities, ties to the lower index: MXNet's stable sort, first ``n``.

    The probabilities of every anchor come vectorised (within a few ulp of MXNet's);
    only the anchors near the cut, whose side could depend on those ulps, are
    recomputed with the C library's expf."""
    prob = _background_prob(xp, logits, _expf_fast)
    order = xp.argsort(prob, kind="stable")
    if n >= prob.shape[0] or xp is not np or libm.c_function("expf") is None:
        return order[:n]
    cut = prob[order[n - 1]]
    # Each of the C exps and sums may move the result by an ulp: a band of twice
    # that error around the cut holds every anchor whose side is in doubt.
    tol = _F32(2.0 ** -20 * (logits.shape[0] + 8)) * abs(cut) + _F32(2.0 ** -140)
    sure = xp.nonzero(prob < cut - tol)[0]
    band = xp.nonzero(abs(prob - cut) <= tol)[0]
    exact = _background_prob(xp, logits[:, band], libm.expf)
    pick = band[xp.argsort(exact, kind="stable")[:n - len(sure)]]
    return xp.sort(xp.concatenate([sure, pick]))


def _mine_negatives(p, xp, flags, best_iou, logits):
    """Hard negative mining: the ``ratio * positives`` non-positive anchors with the
    lowest background probability among those whose best overlap is below
    ``negative_mining_thresh`` become negatives (0); the rest stay ignored (-1)."""
    if not p.negative_mining_thresh > 0:
        raise MXNetError("MultiBoxTarget: negative_mining_thresh=%g, expected > 0 with "
                         "negative mining" % p.negative_mining_thresh)
    a_n = flags.shape[0]
    n_pos = int((flags == 1).sum())
    # NOTE: int * float in C++: a float32 product truncated to int.
    n_neg = min(int(_F32(n_pos) * _F32(p.negative_mining_ratio)), a_n - n_pos)
    if n_neg <= 0:
        return flags
    cand = xp.nonzero((flags != 1) & (best_iou < _F32(p.negative_mining_thresh)))[0]
    if len(cand) < n_neg:
        raise MXNetError("MultiBoxTarget: negative mining needs %d negatives but only %d "
                         "anchors have overlap below negative_mining_thresh=%g"
                         % (n_neg, len(cand), p.negative_mining_thresh))
    flags = flags.copy()
    flags[cand[_hardest(xp, logits[:, cand], n_neg)]] = 0
    return flags


def _loc_targets(xp, anchors, boxes, var):
    """MXNet's AssignLocTargets in float32: center offsets over anchor size, log size
    ratios, each divided by its variance."""
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax = (anchors[:, 0] + anchors[:, 2]) * _F32(0.5)
    ay = (anchors[:, 1] + anchors[:, 3]) * _F32(0.5)
    gw, gh = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    gx = (boxes[:, 0] + boxes[:, 2]) * _F32(0.5)
    gy = (boxes[:, 1] + boxes[:, 3]) * _F32(0.5)
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.stack([(gx - ax) / aw / var[0], (gy - ay) / ah / var[1],
                         libm.logf(xp, gw / aw) / var[2], libm.logf(xp, gh / ah) / var[3]], axis=1)


def _target_image(p, xp, anchors, label, logits, var):
    """(flags, matched gt) of one image: flags 1 positive, 0 negative, -1 ignored."""
    a_n = anchors.shape[0]
    n_gt = _num_valid(label)
    flags = xp.full(a_n, -1, dtype=np.int8)
    match = xp.full(a_n, -1, dtype=np.int64)
    if n_gt == 0:
        return flags, match
    iou = _overlaps(xp, anchors, label[:n_gt, 1:5])
    best, best_iou = _best_gt(xp, iou)
    for j, k in _match_best(xp, iou):
        flags[j] = 1
        match[j] = k
    free = flags != 1
    if p.overlap_threshold > 0:
        pos = free & (best_iou > _F32(p.overlap_threshold))
        flags = xp.where(pos, np.int8(1), flags)
        match = xp.where(pos, best, match)
    if p.negative_mining_ratio > 0:
        flags = _mine_negatives(p, xp, flags, best_iou, logits)
    else:
        flags = xp.where(flags != 1, np.int8(0), flags)
    return flags, match


def _multibox_target(p, xp, anchor, label, cls_pred):
    _check_float32("MultiBoxTarget", anchor=anchor, label=label, cls_pred=cls_pred)
    b_n, a_n = _target_shapes(anchor.shape, label.shape, cls_pred.shape)
    var = _variances("MultiBoxTarget", p)
    anchors = anchor.reshape(a_n, 4)
    loc = xp.zeros((b_n, a_n, 4), dtype=_F32)
    mask = xp.zeros((b_n, a_n, 4), dtype=_F32)
    cls = xp.full((b_n, a_n), _F32(p.ignore_label), dtype=_F32)
    for b in range(b_n):
        flags, match = _target_image(p, xp, anchors, label[b], cls_pred[b], var)
        pos = xp.nonzero(flags == 1)[0]
        gts = label[b][match[pos]]
        cls[b] = xp.where(flags == 0, _F32(0), cls[b])
        cls[b, pos] = gts[:, 0] + _F32(1)      # class 0 is the background
        mask[b, pos] = _F32(1)
        loc[b, pos] = _loc_targets(xp, anchors[pos], gts[:, 1:5], var)
    return loc.reshape(b_n, a_n * 4), mask.reshape(b_n, a_n * 4), cls


def _target_infer_shape(p, shapes):
    anchor, label, cls_pred = shapes
    if anchor is None or label is None or 0 in anchor or 0 in label:
        return shapes
    if cls_pred is None or 0 in cls_pred:
        return shapes
    b_n, a_n = _target_shapes(anchor, label, cls_pred)
    return shapes, [(b_n, a_n * 4), (b_n, a_n * 4), (b_n, a_n)]


register_op("_contrib_MultiBoxTarget", _multibox_target,
            inputs=("anchor", "label", "cls_pred"), params=[
                Param("overlap_threshold", parse_float, 0.5,
                      "Anchor-ground truth overlap above which an anchor is positive."),
                Param("ignore_label", parse_float, -1.0, "cls_target of ignored anchors."),
                Param("negative_mining_ratio", parse_float, -1.0,
                      "Most negatives per positive; -1: every non-positive is negative."),
                Param("negative_mining_thresh", parse_float, 0.5,
                      "Only anchors whose best overlap is below this are mined."),
                Param("minimum_negative_samples", parse_int, 0,
                      "Accepted and unused, as in MXNet's kernel."),
                Param("variances", parse_float_tuple, (0.1, 0.1, 0.2, 0.2),
                      "Divisors of the encoded (x, y, w, h) offsets."),
            ],
            gradient=zeros_grad, saves="", num_outputs=3,
            output_names=("loc_target", "loc_mask", "cls_target"),
            infer_shape=_target_infer_shape,
            doc="SSD training targets. anchor (1, A, 4) corners, label (B, L, >= 5) rows "
                "[class, xmin, ymin, xmax, ymax] padded with -1 rows, cls_pred (B, C, A) "
                "logits. Returns loc_target and loc_mask (B, A * 4) and cls_target (B, A): "
                "class + 1 for positives, 0 for negatives, ignore_label otherwise. Each "
                "ground truth first takes its best anchor, then every anchor whose best "
                "overlap exceeds overlap_threshold is positive. Zero gradients.")


# -- MultiBoxDetection ---------------------------------------------------------------

def _detection_shapes(cls_prob, loc_pred, anchor):
    name = "MultiBoxDetection"
    if len(cls_prob) != 3 or len(loc_pred) != 2 or len(anchor) != 3:
        raise MXNetError("%s: expected cls_prob (batch, num_classes, A), loc_pred "
                         "(batch, A * 4) and anchor (1, A, 4), got %s, %s and %s"
                         % (name, tuple(cls_prob), tuple(loc_pred), tuple(anchor)))
    a_n = cls_prob[2]
    if anchor[1] != a_n or anchor[2] != 4 or loc_pred[1] != a_n * 4 or a_n <= 0:
        raise MXNetError("%s: the number of anchors disagrees: cls_prob %s, loc_pred %s, "
                         "anchor %s (expected (batch, C, A), (batch, A * 4), (1, A, 4))"
                         % (name, tuple(cls_prob), tuple(loc_pred), tuple(anchor)))
    if loc_pred[0] != cls_prob[0]:
        raise MXNetError("%s: loc_pred has batch %d, cls_prob has %d"
                         % (name, loc_pred[0], cls_prob[0]))
    return cls_prob[0], a_n


def _decode(p, xp, anchors, loc, var):
    """MXNet's TransformLocations in float32: boxes (n, 4) from offsets (n, 4)."""
    al, at, ar, ab = (anchors[:, i] for i in range(4))
    aw, ah = ar - al, ab - at
    ax, ay = (al + ar) / _F32(2), (at + ab) / _F32(2)
    ox = loc[:, 0] * var[0] * aw + ax
    oy = loc[:, 1] * var[1] * ah + ay
    ow = libm.expf(xp, loc[:, 2] * var[2]) * aw / _F32(2)
    oh = libm.expf(xp, loc[:, 3] * var[3]) * ah / _F32(2)
    box = xp.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=1)
    if p.clip:
        box = xp.maximum(_F32(0), xp.minimum(_F32(1), box))
    return box


def _iou_matrix(xp, a, b):
    """MXNet's CalculateOverlap of every box in ``a`` (m, 4) with every box in ``b``
    (k, 4): (m, k), 0 where the union is not positive."""
    a, b = a[:, None], b[None]
    zero = _F32(0)
    w = xp.maximum(zero, xp.minimum(a[..., 2], b[..., 2]) - xp.maximum(a[..., 0], b[..., 0]))
    h = xp.maximum(zero, xp.minimum(a[..., 3], b[..., 3]) - xp.maximum(a[..., 1], b[..., 1]))
    i = w * h
    u = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1]) \
        + (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1]) - i
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.where(u <= 0, zero, i / xp.where(u <= 0, _F32(1), u))


def _greedy_keep(xp, boxes, thr, block=1024):
    """Which of ``boxes`` (n, 4), visited in order, survive greedy NMS: a box goes when
    its IoU with an earlier surviving box is >= ``thr``.

    Blocks of ``block`` boxes: each is first checked against every survivor before
    it in one product, then resolved in order within itself."""
    n = boxes.shape[0]
    keep = np.ones(n, dtype=bool)
    for s in range(0, n, block):
        blk = boxes[s:s + block]
        alive = keep[s:s + block]
        prev = np.nonzero(keep[:s])[0]
        if len(prev):
            alive &= ~host((_iou_matrix(xp, boxes[xp.asarray(prev)], blk) >= thr).any(0))
        hit = host(_iou_matrix(xp, blk, blk) >= thr)
        for i in range(len(alive)):
            if alive[i]:
                alive[i + 1:] &= ~hit[i, i + 1:]
    return keep


def _nms(p, xp, rows):
    """Greedy NMS over ``rows`` (n, 6) in order, in place: a row whose IoU with a kept
    earlier row (of the same class unless force_suppress) is >= nms_threshold gets
    class -1. Classes never suppress each other, so each is resolved alone."""
    thr = _F32(p.nms_threshold)
    ids = host(rows[:, 0])
    groups = [np.arange(len(ids))] if p.force_suppress else \
        [np.nonzero(ids == c)[0] for c in np.unique(ids)]
    for idx in groups:
        gone = ~_greedy_keep(xp, rows[xp.asarray(idx), 2:6], thr)
        rows[xp.asarray(idx[gone]), 0] = _F32(-1)
    return rows


def _detect_image(p, xp, prob, loc, anchors, var):
    """The valid rows (n, 6) of one image: [class, score, box] before NMS, in anchor
    order."""
    if prob.shape[0] < 2:
        return xp.zeros((0, 6), dtype=_F32)
    fg = prob[1:]
    best = xp.argmax(fg, axis=0)
    score = xp.take_along_axis(fg, best[None], axis=0)[0]
    # MXNet starts from score -1 with a strict ``>``, then drops scores below threshold.
    keep = (score > _F32(-1)) & ~(score < _F32(p.threshold))
    idx = xp.nonzero(keep)[0]
    box = _decode(p, xp, anchors[idx], loc.reshape(-1, 4)[idx], var)
    return xp.concatenate([best[idx, None].astype(_F32), score[idx, None], box], axis=1)


def _multibox_detection(p, xp, cls_prob, loc_pred, anchor):
    _check_float32("MultiBoxDetection", cls_prob=cls_prob, loc_pred=loc_pred, anchor=anchor)
    b_n, a_n = _detection_shapes(cls_prob.shape, loc_pred.shape, anchor.shape)
    var = _variances("MultiBoxDetection", p)
    anchors = anchor.reshape(a_n, 4)
    out = xp.full((b_n, a_n, 6), _F32(-1), dtype=_F32)
    nms_on = 0 < p.nms_threshold <= 1
    for b in range(b_n):
        rows = _detect_image(p, xp, cls_prob[b], loc_pred[b], anchors, var)
        n = rows.shape[0]
        out[b, :n] = rows
        if n == 0 or not nms_on:
            continue
        # Descending score, stable; past the top k MXNet leaves the rows in anchor
        # order and marks them class -1.
        order = xp.argsort(-rows[:, 1], kind="stable")
        k = min(p.nms_topk, n) if p.nms_topk > 0 else n
        out[b, :k] = _nms(p, xp, rows[order[:k]])
        out[b, k:n, 0] = _F32(-1)
    return out


def _detection_infer_shape(p, shapes):
    if any(s is None or 0 in s for s in shapes):
        return shapes
    b_n, a_n = _detection_shapes(*shapes)
    return shapes, [(b_n, a_n, 6)]


register_op("_contrib_MultiBoxDetection", _multibox_detection,
            inputs=("cls_prob", "loc_pred", "anchor"), params=[
                Param("clip", parse_bool, True, "Clip the boxes to [0, 1]."),
                Param("threshold", parse_float, 0.01,
                      "Lowest score of a detection (best non-background class)."),
                Param("background_id", parse_int, 0,
                      "Accepted and unused, as in MXNet's kernel: class 0 is background."),
                Param("nms_threshold", parse_float, 0.5,
                      "IoU at which NMS suppresses; outside (0, 1] no sort and no NMS."),
                Param("force_suppress", parse_bool, False, "Suppress across classes too."),
                Param("variances", parse_float_tuple, (0.1, 0.1, 0.2, 0.2),
                      "Scales of the decoded (x, y, w, h) offsets."),
                Param("nms_topk", parse_int, -1, "NMS over the top k scores; -1: all."),
            ],
            gradient=zeros_grad, saves="", infer_shape=_detection_infer_shape,
            doc="SSD detections (B, A, 6) rows [class, score, xmin, ymin, xmax, ymax] from "
                "cls_prob (B, C, A) (class 0 background), loc_pred (B, A * 4) and anchor "
                "(1, A, 4): sorted by score, suppressed rows with class -1, unused rows -1. "
                "Zero gradients.")
