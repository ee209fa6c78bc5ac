"""Golden data for SSD's MultiBoxTarget and MultiBoxDetection, from real MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_multibox.py`` from an
environment with ``pip install "numpy<1.24" mxnet==1.9.1``.
Writes ``multibox.npz``: for every case ``<case>`` the keys ``<case>/op`` (registered op
name), ``<case>/params`` (JSON of the keyword params), ``<case>/in<i>`` (inputs) and
``<case>/out<i>`` (outputs), or ``<case>/error`` (MXNet's message) where MXNet refuses
the inputs; cases with gradients add ``<case>/grad<i>`` (input gradients of the sum of
all outputs).
"""
import json
import os

import mxnet as mx
import numpy as np

RNG = np.random.RandomState(7)
CASES = {}


def case(name, op, inputs, params, grad=False):
    """Run ``op`` in MXNet and store inputs, outputs (or the error) and gradients."""
    fn = getattr(mx.nd.contrib, op[len("_contrib_"):])
    xs = [mx.nd.array(a, dtype="float32") for a in inputs]
    rec = {"op": np.array(op), "params": np.array(json.dumps(params))}
    for i, a in enumerate(xs):
        rec["in%d" % i] = a.asnumpy()
    for x in xs:
        x.attach_grad()
    try:
        with mx.autograd.record():
            ys = fn(*xs, **params)
            ys = ys if isinstance(ys, list) else [ys]
            total = sum(y.sum() for y in ys)
        for y in ys:
            y.wait_to_read()
    except mx.MXNetError as e:
        rec["error"] = np.array(str(e).strip().splitlines()[-1])
        CASES[name] = rec
        return
    for i, y in enumerate(ys):
        rec["out%d" % i] = y.asnumpy()
    if grad:
        total.backward()
        for i, x in enumerate(xs):
            rec["grad%d" % i] = x.grad.asnumpy()
    CASES[name] = rec


def anchors(h, w, sizes, ratios, **kw):
    return mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, h, w)), sizes=sizes,
                                       ratios=ratios, **kw).asnumpy()


def labels(batch, width, max_gt, ncls, lo=0.0, hi=1.0, counts=None):
    """Random ground truths, ``counts[b]`` per image, padded with -1 rows."""
    out = -np.ones((batch, max_gt, width), dtype=np.float32)
    for b in range(batch):
        n = RNG.randint(0, max_gt + 1) if counts is None else counts[b]
        xy = RNG.uniform(lo, hi * 0.8, (n, 2))
        wh = RNG.uniform(0.05, 0.5, (n, 2))
        out[b, :n, 0] = RNG.randint(0, ncls, n)
        out[b, :n, 1:3] = xy
        out[b, :n, 3:5] = xy + wh
        if width > 5:
            out[b, :n, 5:] = RNG.uniform(0, 1, (n, width - 5))
    return out


def logits(batch, ncls, n, scale=2.0):
    return (RNG.standard_normal((batch, ncls, n)) * scale).astype(np.float32)


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


# -- MultiBoxTarget ------------------------------------------------------------------

def target_cases():
    tgt = "_contrib_MultiBoxTarget"
    a1 = anchors(4, 4, [0.3, 0.15], [1, 2, 0.5])                   # 64 anchors
    lab = labels(4, 5, 5, 4, counts=[3, 0, 5, 1])
    cp = logits(4, 5, a1.shape[1])
    case("target_default", tgt, [a1, lab, cp], {}, grad=True)
    for thr in (0.3, 0.7, 0.0, -1.0):
        case("target_overlap_%s" % thr, tgt, [a1, lab, cp], {"overlap_threshold": thr})
    case("target_mining", tgt, [a1, lab, cp], {"negative_mining_ratio": 3})
    case("target_mining_2p5_thr0p4", tgt, [a1, lab, cp],
         {"negative_mining_ratio": 2.5, "negative_mining_thresh": 0.4,
          "overlap_threshold": 0.4})
    case("target_mining_no_overlap_stage", tgt, [a1, lab, cp],
         {"negative_mining_ratio": 2, "overlap_threshold": 0.0})
    case("target_mining_clamped", tgt, [a1, lab, cp],
         {"negative_mining_ratio": 100, "negative_mining_thresh": 1.0})
    case("target_mining_too_few", tgt, [a1, lab, cp],
         {"negative_mining_ratio": 100, "negative_mining_thresh": 0.05})
    case("target_mining_bad_thresh", tgt, [a1, lab, cp],
         {"negative_mining_ratio": 3, "negative_mining_thresh": 0.0})
    case("target_params", tgt, [a1, lab, cp],
         {"ignore_label": -2, "variances": (0.2, 0.3, 0.5, 0.4), "overlap_threshold": 0.45,
          "minimum_negative_samples": 5})
    # All padding, and ground truths after a padding row (ignored by MXNet).
    empty = -np.ones((2, 3, 5), np.float32)
    case("target_all_padding", tgt, [a1, empty, cp[:2]], {"negative_mining_ratio": 3})
    late = labels(2, 5, 4, 3, counts=[2, 2])
    late[:, 1] = -1
    late[0, 2:] = [[1, 0.1, 0.1, 0.6, 0.6], [-1, -1, -1, -1, -1]]
    late[1, 2:] = [[2, 0.3, 0.2, 0.9, 0.7], [0, 0.0, 0.0, 0.4, 0.4]]
    case("target_after_padding", tgt, [a1, late, cp[:2]], {})
    bad = late.copy()
    bad[0, 1] = [-1, 0.1, 0.1, 0.2, 0.2]
    case("target_bad_padding", tgt, [a1, bad, cp[:2]], {})
    # Boxes beyond [0, 1], wide labels, degenerate boxes.
    out = labels(3, 6, 4, 3, lo=-0.3, hi=1.4, counts=[4, 3, 2])
    out[2, 1] = [1, 0.5, 0.5, 0.5, 0.9, 0.3]                        # zero width
    case("target_outside_wide", tgt, [a1, out, cp[:3]], {"negative_mining_ratio": 2})
    # Ties: duplicated anchors, duplicated ground truths, constant logits.
    a2 = anchors(3, 3, [0.4, 0.4, 0.2], [1, 2])
    dup = labels(2, 5, 4, 3, counts=[4, 3])
    dup[0, 1] = dup[0, 0]
    dup[1, 2, 1:] = dup[1, 0, 1:]
    flat = np.zeros((2, 3, a2.shape[1]), np.float32)
    case("target_ties", tgt, [a2, dup, flat], {})
    case("target_ties_mining", tgt, [a2, dup, flat], {"negative_mining_ratio": 3})
    # Near-tied background probabilities: the mining cut falls among values a few ulp
    # apart (and among exact ties).
    base = np.tile(RNG.standard_normal((1, 5, 1)), (4, 1, a1.shape[1]))
    near = (base + RNG.standard_normal(base.shape) * 2e-7).astype(np.float32)
    case("target_mining_near_ties", tgt, [a1, lab, near], {"negative_mining_ratio": 3})
    near[:, :, ::3] = near[:, :, :1]
    case("target_mining_exact_ties", tgt, [a1, lab, near], {"negative_mining_ratio": 2})
    # Clipped anchors on a larger map with many objects; several seeds.
    a3 = anchors(8, 8, [0.2, 0.1, 0.4], [1, 2, 0.5], clip=True)      # 320 anchors
    for s in range(3):
        lab3 = labels(6, 5, 10, 8)
        cp3 = logits(6, 9, a3.shape[1], scale=3.0)
        case("target_large_%d" % s, tgt, [a3, lab3, cp3],
             {"negative_mining_ratio": 3, "overlap_threshold": 0.5 - 0.1 * s})
        case("target_large_plain_%d" % s, tgt, [a3, lab3, cp3],
             {"overlap_threshold": 0.3 + 0.1 * s})


# -- MultiBoxDetection ---------------------------------------------------------------

def detection_cases():
    det = "_contrib_MultiBoxDetection"
    a1 = anchors(4, 4, [0.3, 0.15], [1, 2, 0.5])                   # 64 anchors
    n = a1.shape[1]
    prob = softmax(logits(3, 4, n))
    loc = RNG.standard_normal((3, n * 4)).astype(np.float32)
    case("det_default", det, [prob, loc, a1], {}, grad=True)
    for thr in (0.3, 0.7, 1.0, 0.0, 1.5):
        case("det_nms_%s" % thr, det, [prob, loc, a1], {"nms_threshold": thr})
    case("det_noclip_threshold", det, [prob, loc * 3, a1], {"clip": False, "threshold": 0.3})
    case("det_clip_far", det, [prob, loc * 3, a1], {"threshold": 0.2})
    case("det_force", det, [prob, loc, a1], {"force_suppress": True, "nms_threshold": 0.3})
    for k in (1, 5, 20, 1000):
        case("det_topk_%d" % k, det, [prob, loc, a1], {"nms_topk": k, "nms_threshold": 0.4})
    case("det_topk_force", det, [prob, loc, a1],
         {"nms_topk": 7, "force_suppress": True, "nms_threshold": 0.2, "threshold": 0.2})
    case("det_params", det, [prob, loc, a1],
         {"variances": (0.2, 0.3, 0.1, 0.4), "background_id": 2, "threshold": 0.05})
    # Tied scores, duplicated anchors (IoU exactly 1), an image with nothing above the
    # threshold, and a single class (background only).
    a2 = anchors(3, 3, [0.4, 0.4, 0.2], [1, 2])
    m = a2.shape[1]
    tied = np.round(softmax(logits(3, 3, m, scale=1.0)), 1)
    tied[2] = 0
    tied[2, 0] = 1
    zero = np.zeros((3, m * 4), np.float32)
    case("det_ties", det, [tied, zero, a2], {"threshold": 0.1})
    case("det_ties_force", det, [tied, zero, a2], {"threshold": 0.1, "force_suppress": True})
    case("det_ties_topk", det, [tied, zero, a2], {"threshold": 0.1, "nms_topk": 4})
    case("det_one_class", det, [np.ones((2, 1, m), np.float32), zero[:2], a2], {})
    # A larger head with clipped anchors, several seeds.
    a3 = anchors(8, 8, [0.2, 0.1, 0.4], [1, 2, 0.5], clip=True)      # 320 anchors
    for s in range(3):
        p3 = softmax(logits(4, 6, a3.shape[1], scale=2.5))
        l3 = (RNG.standard_normal((4, a3.shape[1] * 4)) * 2).astype(np.float32)
        case("det_large_%d" % s, det, [p3, l3, a3],
             {"nms_threshold": 0.3 + 0.2 * s, "force_suppress": s == 1,
              "nms_topk": [-1, -1, 50][s], "clip": s != 2})


class TinySSD(mx.gluon.HybridBlock):
    """One feature map, two anchor shapes, a class and a box head (the end-to-end case
    of the tests, which rebuild it with mxlite)."""

    def __init__(self, num_classes=3, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.body = mx.gluon.nn.Conv2D(8, 3, strides=2, padding=1, activation="relu")
            self.cls = mx.gluon.nn.Conv2D(3 * (num_classes + 1), 3, padding=1)
            self.loc = mx.gluon.nn.Conv2D(3 * 4, 3, padding=1)
        self.num_classes = num_classes

    def hybrid_forward(self, F, x, label):
        feat = self.body(x)
        anchor = F.contrib.MultiBoxPrior(feat, sizes=(0.5, 0.3), ratios=(1, 2))
        cls = F.transpose(self.cls(feat), (0, 2, 3, 1)).reshape((0, -1, self.num_classes + 1))
        cls = F.transpose(cls, (0, 2, 1))
        loc = F.flatten(F.transpose(self.loc(feat), (0, 2, 3, 1)))
        loc_t, loc_m, cls_t = F.contrib.MultiBoxTarget(anchor, label, cls,
                                                       negative_mining_ratio=3)
        det = F.contrib.MultiBoxDetection(F.softmax(cls, axis=1), loc, anchor,
                                          nms_threshold=0.45)
        return anchor, cls, loc, loc_t, loc_m, cls_t, det


def e2e_case():
    """TinySSD hybridized: weights, inputs and every output, under ``ssd_e2e/``."""
    net = TinySSD(prefix="tinyssd_")
    net.initialize(mx.init.Normal(0.5))
    net.hybridize()
    x = RNG.uniform(0, 1, (2, 3, 8, 8)).astype(np.float32)
    lab = labels(2, 5, 3, 3, counts=[2, 1])
    outs = net(mx.nd.array(x), mx.nd.array(lab))
    rec = {"x": x, "label": lab}
    for k, v in net.collect_params().items():
        rec["w_" + k] = v.data().asnumpy()
    for i, o in enumerate(outs):
        rec["out%d" % i] = o.asnumpy()
    CASES["ssd_e2e"] = rec


def main():
    target_cases()
    detection_cases()
    e2e_case()
    flat = {"%s/%s" % (c, k): v for c, rec in CASES.items() for k, v in rec.items()}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "multibox.npz")
    np.savez_compressed(path, **flat)
    print("wrote %d cases to %s" % (len(CASES), path))


if __name__ == "__main__":
    main()
