"""Golden data for the detection ops, from real MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_detection.py`` from an environment with
``pip install "numpy<1.24" mxnet==1.9.1``.
Writes ``detection.npz``: for every case ``<case>`` the keys
``<case>/op`` (registered op name), ``<case>/params`` (JSON of the keyword params),
``<case>/in<i>`` (inputs), ``<case>/out<i>`` (visible outputs), and, for cases with
gradients, ``<case>/head`` (head gradient of output 0) and ``<case>/grad<i>`` (input
gradients).
"""
import json
import os

import mxnet as mx
import numpy as np

RNG = np.random.RandomState(42)
CASES = {}


def case(name, op, inputs, params, grad=False, dtype="float32"):
    """Run ``op`` in MXNet and store inputs, outputs and (if ``grad``) gradients."""
    fn = getattr(mx.nd.contrib, op[len("_contrib_"):]) if op.startswith("_contrib_") \
        else getattr(mx.nd, op)
    xs = [mx.nd.array(a, dtype=dtype) for a in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        ys = fn(*xs, **params)
    ys = ys if isinstance(ys, list) else [ys]
    rec = {"op": np.array(op), "params": np.array(json.dumps(params))}
    for i, a in enumerate(xs):
        rec["in%d" % i] = a.asnumpy()
    for i, y in enumerate(ys):
        rec["out%d" % i] = y.asnumpy()
    if grad:
        head = RNG.uniform(-1, 1, ys[0].shape).astype(dtype)
        ys[0].backward(mx.nd.array(head, dtype=dtype))
        rec["head"] = head
        for i, x in enumerate(xs):
            rec["grad%d" % i] = x.grad.asnumpy()
    CASES[name] = rec


def _rois(n, batch, size, lo=0.0):
    x1 = RNG.uniform(lo, size * 0.7, n)
    y1 = RNG.uniform(lo, size * 0.7, n)
    x2 = x1 + RNG.uniform(0.5, size * 0.6, n)
    y2 = y1 + RNG.uniform(0.5, size * 0.6, n)
    b = RNG.randint(0, batch, n)
    return np.stack([b, x1, y1, x2, y2], axis=1)


def _boxes(n, ncls=3, with_id=True):
    """Rows [id, score, x1, y1, x2, y2] with many overlaps and a few tied scores."""
    xy = RNG.uniform(0, 6, (n, 2))
    wh = RNG.uniform(0.5, 4, (n, 2))
    score = np.round(RNG.uniform(0, 1, n), 1)
    ids = RNG.randint(0, ncls, n)
    rows = np.concatenate([ids[:, None], score[:, None], xy, xy + wh], axis=1)
    return rows if with_id else rows[:, 1:]


def roi_cases():
    data = RNG.uniform(-1, 1, (2, 3, 12, 10))
    rois = _rois(6, 2, 40)
    rois[0] = [0, -8, -8, 20, 12]           # partly outside the map
    rois[1] = [1, 30, 30, 31, 31]           # tiny roi
    rois[2] = [1, 2.5, 3.5, 17.5, 10.5]     # halves: C round away from zero
    case("roipool_basic", "ROIPooling", [data, rois],
         {"pooled_size": (3, 2), "spatial_scale": 0.25}, grad=True)
    case("roipool_f64", "ROIPooling", [data, rois],
         {"pooled_size": (4, 4), "spatial_scale": 0.3}, grad=True, dtype="float64")
    ties = np.zeros((1, 2, 6, 6))
    ties[0, 0, 1:4, 1:4] = 1.0              # plateau: gradient goes to the first maximum
    case("roipool_ties", "ROIPooling", [ties, np.array([[0, 0, 0, 5, 5]])],
         {"pooled_size": (2, 2), "spatial_scale": 1.0}, grad=True)
    # bins past the map edge are empty (output 0)
    case("roipool_empty", "ROIPooling", [data[:1], np.array([[0, 36, 44, 60, 60]])],
         {"pooled_size": (3, 3), "spatial_scale": 0.25}, grad=True)

    for name, kw in [("roialign_basic", {}),
                     ("roialign_ratio2", {"sample_ratio": 2}),
                     ("roialign_aligned", {"aligned": True}),
                     ("roialign_ratio1_aligned", {"sample_ratio": 1, "aligned": True})]:
        params = dict({"pooled_size": (3, 2), "spatial_scale": 0.25}, **kw)
        case(name, "_contrib_ROIAlign", [data, rois], params, grad=True)
    case("roialign_f64", "_contrib_ROIAlign", [data, rois],
         {"pooled_size": (2, 3), "spatial_scale": 0.3, "sample_ratio": 3}, grad=True,
         dtype="float64")
    ps = RNG.uniform(-1, 1, (2, 8, 9, 11))
    case("roialign_possens", "_contrib_ROIAlign", [ps, rois],
         {"pooled_size": (2, 2), "spatial_scale": 0.25, "position_sensitive": True},
         grad=True)


def box_cases():
    a = RNG.uniform(0, 5, (2, 3, 4))
    a[..., 2:] += a[..., :2]
    b = RNG.uniform(0, 5, (5, 4))
    b[:, 2:] += b[:, :2]
    b[0] = a[0, 0]                          # identical boxes: IoU 1
    b[1] = [20, 20, 21, 21]                 # disjoint: IoU 0
    case("iou_corner", "_contrib_box_iou", [a, b], {"format": "corner"}, grad=True)
    c = RNG.uniform(0.5, 5, (4, 4))
    case("iou_center", "_contrib_box_iou", [c, c[:3]], {"format": "center"})

    x = _boxes(12)
    case("nms_default", "_contrib_box_nms", [x], {"overlap_thresh": 0.3}, grad=True)
    case("nms_ids", "_contrib_box_nms", [x[None]],
         {"overlap_thresh": 0.2, "id_index": 0, "valid_thresh": 0.15, "topk": 7},
         grad=True)
    batch = np.stack([_boxes(10), _boxes(10), _boxes(10)])
    batch[1, :, 1] = 0.05                   # one batch row entirely invalid
    case("nms_batch_bg_force", "_contrib_box_nms", [batch.reshape(3, 1, 10, 6)],
         {"overlap_thresh": 0.25, "id_index": 0, "background_id": 1,
          "force_suppress": True, "valid_thresh": 0.1}, grad=True)
    y = _boxes(9)
    y[3, 2] = -1.5                          # negative x1: not converted to center
    case("nms_out_center", "_contrib_box_nms", [y],
         {"overlap_thresh": 0.4, "out_format": "center"}, grad=True)
    cen = _boxes(8)
    cen[:, 4:] -= cen[:, 2:4]               # (x, y, w, h)
    case("nms_in_center", "_contrib_box_nms", [cen], {"in_format": "center"}, grad=True)
    # scores in column 0 and coordinates first, no ids
    z = _boxes(8, with_id=False)[:, [1, 2, 3, 4, 0]]
    case("nms_layout", "_contrib_box_nms", [z],
         {"coord_start": 0, "score_index": 4, "overlap_thresh": 0.3}, grad=True)
    case("nms_topk0", "_contrib_box_nms", [x], {"topk": 0}, grad=True)
    case("nms_none_valid", "_contrib_box_nms", [x], {"valid_thresh": 2.0}, grad=True)
    case("nms_f64", "_contrib_box_nms", [x], {"overlap_thresh": 0.3}, grad=True,
         dtype="float64")

    feat = np.zeros((2, 3, 4, 5))
    case("prior_basic", "_contrib_MultiBoxPrior", [feat],
         {"sizes": (0.5, 0.25, 0.1), "ratios": (1, 2, 0.5)}, grad=True)
    case("prior_clip_steps", "_contrib_MultiBoxPrior", [feat],
         {"sizes": (0.75,), "ratios": (1, 3), "clip": True, "steps": (0.3, 0.2),
          "offsets": (0.2, 0.7)})

    bsz, n, m = 2, 5, 3
    anchors = RNG.uniform(0, 4, (bsz, n, 4))
    anchors[..., 2:] += anchors[..., :2] + 0.5
    refs = RNG.uniform(0, 4, (bsz, m, 4))
    refs[..., 2:] += refs[..., :2] + 0.5
    samples = RNG.choice([-1, 0, 1], (bsz, n)).astype(float)
    samples[0, 0] = 1
    matches = RNG.randint(0, m, (bsz, n)).astype(float)
    case("encode", "_contrib_box_encode",
         [samples, matches, anchors, refs, np.array([0.1, -0.1, 0.0, 0.2]),
          np.array([0.1, 0.1, 0.2, 0.2])], {}, grad=True)
    off = RNG.uniform(-1, 1, (bsz, n, 4))
    off[0, 0, 2:] = 3.0                     # clipped by clip=1.5
    case("decode_corner", "_contrib_box_decode", [off, anchors[:1]],
         {"std0": 0.1, "std1": 0.2, "std2": 0.3, "std3": 0.4, "format": "corner",
          "clip": 1.5}, grad=True)
    cen_anchor = anchors[:1].copy()
    cen_anchor[..., 2:] -= cen_anchor[..., :2]
    case("decode_center", "_contrib_box_decode", [off, cen_anchor], {})


def main():
    roi_cases()
    box_cases()
    flat = {}
    for name, rec in CASES.items():
        for k, v in rec.items():
            flat["%s/%s" % (name, k)] = v
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "detection.npz")
    np.savez_compressed(path, **flat)
    print("wrote %d cases to %s" % (len(CASES), path))


if __name__ == "__main__":
    main()
