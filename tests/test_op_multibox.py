"""SSD's MultiBoxTarget and MultiBoxDetection against real MXNet 1.9.1, bit for bit:
matching, hard negative mining, NMS order and suppression, through mx.nd, mx.sym and a
hybridized SSD head, with zero gradients and MXNet's refusals.

Golden data: ``reference_extra/multibox.npz``, written by ``gen_multibox.py`` under
MXNet 1.9.1. Per op case ``<case>``: ``op`` (op name), ``params`` (JSON keyword params),
``in<i>`` inputs, and ``out<i>`` outputs, or ``error`` (MXNet's message) where MXNet
refuses the inputs; ``target_default`` and ``det_default`` add ``grad<i>`` (input
gradients of the sum of all outputs). Target cases: anchors from MultiBoxPrior, random
padded labels (images without objects, objects after a padding row, boxes beyond
[0, 1], zero-width boxes, width-6 labels), overlap thresholds 0.7 to -1, mining ratios
2 to 100 with near-tied and tied background scores, duplicated anchors and ground
truths. Detection cases: NMS thresholds in and outside (0, 1], clip, force_suppress,
nms_topk, tied scores, duplicated anchors, a background-only head. ``ssd_e2e/`` holds a
tiny SSD (``TinySSD`` in the generator): weights ``w_<name>``, ``x``, ``label`` and its
seven outputs from a hybridized run.
"""
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.operator import libm
from mxlite.operator.nn import multibox

HERE = os.path.dirname(os.path.abspath(__file__))
GOLD = np.load(os.path.join(HERE, "reference_extra", "multibox.npz"))
NAMES = sorted(k.split("/")[0] for k in GOLD.files if k.endswith("/op"))
RNG = np.random.default_rng(11)


def _gold(name):
    g = {k.split("/", 1)[1]: GOLD[k] for k in GOLD.files if k.startswith(name + "/")}
    ins = [g["in%d" % i] for i in range(3)]
    outs = [g["out%d" % i] for i in range(3) if "out%d" % i in g]
    return str(g["op"]), json.loads(str(g["params"])), ins, outs, g


def _fn(op):
    return getattr(mx.nd.contrib, op[len("_contrib_"):])


# -- golden cases -------------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n in NAMES if "error" not in _gold(n)[4]])
def test_golden_forward_exact(name):
    op, params, ins, outs, g = _gold(name)
    xs = [mx.nd.array(a) for a in ins]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        ys = _fn(op)(*xs, **params)
        ys = ys if isinstance(ys, list) else [ys]
        total = sum(y.sum() for y in ys)
    assert len(ys) == len(outs)
    for i, (y, ref) in enumerate(zip(ys, outs)):
        assert y.dtype == ref.dtype and y.shape == ref.shape
        np.testing.assert_array_equal(y.asnumpy(), ref, err_msg="%s output %d" % (name, i))
    if "grad0" in g:
        total.backward()
        for i, x in enumerate(xs):
            np.testing.assert_array_equal(x.grad.asnumpy(), g["grad%d" % i])
            assert not x.grad.asnumpy().any()


ERRORS = {
    "target_bad_padding": "padding rows must be all -1",
    "target_mining_bad_thresh": "negative_mining_thresh=0, expected > 0",
    "target_mining_too_few": "needs 61 negatives but only 38",
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_golden_refusals(name):
    op, params, ins, _, g = _gold(name)
    assert "error" in g                     # MXNet refuses these inputs too
    with pytest.raises(MXNetError, match=ERRORS[name]):
        _fn(op)(*[mx.nd.array(a) for a in ins], **params)


def test_without_c_library_within_an_ulp(monkeypatch):
    """Without the C library's expf/logf (GPU, other platforms) the float64 fallback
    stays within an ulp of MXNet."""
    monkeypatch.setattr(libm, "c_function", lambda name: None)
    for name in ("target_large_plain_0", "target_large_0", "det_large_2"):
        op, params, ins, outs, _ = _gold(name)
        ys = _fn(op)(*[mx.nd.array(a) for a in ins], **params)
        ys = ys if isinstance(ys, list) else [ys]
        for y, ref in zip(ys, outs):
            np.testing.assert_allclose(y.asnumpy(), ref, rtol=3e-7, atol=1e-7)


# -- semantics that the golden cases rest on ----------------------------------------

def test_mining_band_equals_exact_ranking():
    """The vectorised ranking refined near the cut picks what ranking every anchor by
    the C library's expf picks, ties to the lower index."""
    if libm.c_function("expf") is None:
        pytest.skip("no C library expf here")
    for scale in (1e-7, 1e-3, 2.0):
        base = RNG.standard_normal((6, 1))
        z = (base + RNG.standard_normal((6, 400)) * scale).astype(np.float32)
        z[:, ::7] = z[:, :1]
        exact = multibox._background_prob(np, z, libm.expf)
        for n in (1, 37, 200, 399):
            want = np.sort(np.argsort(exact, kind="stable")[:n])
            np.testing.assert_array_equal(multibox._hardest(np, z, n), want)


def test_blocked_nms_equals_sequential_loop():
    """Blocked greedy NMS keeps what MXNet's row-by-row loop keeps."""
    xy = np.sort(RNG.uniform(0, 1, (300, 2)), axis=0)
    boxes = np.concatenate([xy, xy + RNG.uniform(0.01, 0.3, (300, 2))], 1).astype(np.float32)
    boxes[50] = boxes[49]                                   # IoU exactly 1
    for thr in (0.1, 0.4, 1.0):
        thr = np.float32(thr)
        iou = multibox._iou_matrix(np, boxes, boxes)
        want = np.ones(300, dtype=bool)
        for i in range(300):
            for j in range(i + 1, 300):
                if want[i] and want[j] and iou[i, j] >= thr:
                    want[j] = False
        for block in (7, 64, 1024):
            np.testing.assert_array_equal(multibox._greedy_keep(np, boxes, thr, block), want)
        assert 0 < want.sum() < 300


def _small_target(**kw):
    anchor = mx.nd.array([[[0.0, 0.0, 0.5, 0.5], [0.5, 0.5, 1.0, 1.0],
                           [0.0, 0.0, 0.5, 0.5], [0.1, 0.1, 0.6, 0.6]]])
    label = mx.nd.array([[[1, 0.05, 0.0, 0.5, 0.5], [-1, -1, -1, -1, -1]],
                         [[-1, -1, -1, -1, -1], [-1, -1, -1, -1, -1]]])
    cls_pred = mx.nd.zeros((2, 3, 4))
    return mx.nd.contrib.MultiBoxTarget(anchor, label, cls_pred, **kw)


def test_target_ties_first_anchor_and_empty_image():
    loc, mask, cls = _small_target(overlap_threshold=0.95, ignore_label=-3)
    # Anchors 0 and 2 are the same box: the first takes the object, the other is
    # background; an image without objects stays at ignore_label.
    np.testing.assert_array_equal(cls.asnumpy(), [[2, 0, 0, 0], [-3, -3, -3, -3]])
    np.testing.assert_array_equal(mask.asnumpy()[0], [1] * 4 + [0] * 12)
    t = loc.asnumpy()[0, :4]
    np.testing.assert_allclose(t, [0.025 / 0.5 / 0.1, 0, np.log(0.45 / 0.5) / 0.2, 0],
                               rtol=1e-6, atol=1e-7)


def test_detection_order_suppression_and_topk():
    anchor = mx.nd.array([[[0.1, 0.1, 0.4, 0.4], [0.1, 0.1, 0.4, 0.4],
                           [0.6, 0.6, 0.9, 0.9], [0.12, 0.1, 0.4, 0.4]]])
    prob = mx.nd.array([[[0.2, 0.1, 0.5, 0.6], [0.5, 0.1, 0.3, 0.4], [0.3, 0.8, 0.2, 0.0]]])
    loc = mx.nd.zeros((1, 16))
    out = mx.nd.contrib.MultiBoxDetection(prob, loc, anchor).asnumpy()[0]
    # Sorted by score; anchor 3 (class 0) overlaps anchor 0 (class 0): suppressed,
    # keeping its score and box; anchor 1 is class 1 and survives.
    np.testing.assert_allclose(out[:, :2], [[1, 0.8], [0, 0.5], [-1, 0.4], [0, 0.3]])
    np.testing.assert_allclose(out[0, 2:], [0.1, 0.1, 0.4, 0.4])
    forced = mx.nd.contrib.MultiBoxDetection(prob, loc, anchor, force_suppress=True)
    np.testing.assert_allclose(forced.asnumpy()[0, :, 0], [1, -1, -1, 0])
    top = mx.nd.contrib.MultiBoxDetection(prob, loc, anchor, nms_topk=2).asnumpy()[0]
    # Past the top 2 MXNet leaves the rows in anchor order, marked -1.
    np.testing.assert_allclose(top[2:, :2], [[-1, 0.3], [-1, 0.4]])


# -- mx.sym and a hybridized SSD head -----------------------------------------------

def test_symbol_simple_bind_forward():
    for name in ("target_mining", "det_topk_force"):
        op, params, ins, outs, _ = _gold(name)
        fn = getattr(mx.sym.contrib, op[len("_contrib_"):])
        args = ["anchor", "label", "cls_pred"] if "Target" in op else \
            ["cls_prob", "loc_pred", "anchor"]
        sym = fn(*[mx.sym.var(a) for a in args], name="mb", **params)
        sym = mx.sym.load_json(sym.tojson())
        expect = ["mb_loc_target", "mb_loc_mask", "mb_cls_target"] if "Target" in op else \
            ["mb_output"]
        assert sym.list_outputs() == expect
        shapes = dict(zip(args, [a.shape for a in ins]))
        _, out_shapes, _ = sym.infer_shape(**shapes)
        assert out_shapes == [o.shape for o in outs]
        ex = sym.simple_bind(mx.cpu(), **shapes)
        ys = ex.forward(**{k: mx.nd.array(a) for k, a in zip(args, ins)})
        for y, ref in zip(ys, outs):
            np.testing.assert_array_equal(y.asnumpy(), ref)


class TinySSD(mx.gluon.HybridBlock):
    """The generator's TinySSD: MultiBoxPrior -> heads -> MultiBoxTarget/Detection."""

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


def test_hybridized_tiny_ssd_matches_mxnet():
    g = {k.split("/", 1)[1]: GOLD[k] for k in GOLD.files if k.startswith("ssd_e2e/")}
    net = TinySSD(prefix="tinyssd_")
    net.initialize()
    net(mx.nd.array(g["x"]), mx.nd.array(g["label"]))       # resolve deferred shapes
    for k, v in net.collect_params().items():
        v.set_data(mx.nd.array(g["w_" + k]))
    net.hybridize()
    outs = [o.asnumpy() for o in net(mx.nd.array(g["x"]), mx.nd.array(g["label"]))]
    names = ["anchor", "cls", "loc", "loc_target", "loc_mask", "cls_target", "det"]
    for i, (name, y) in enumerate(zip(names, outs)):
        ref = g["out%d" % i]
        if name in ("cls", "loc", "det"):       # convolutions: summation order
            np.testing.assert_allclose(y, ref, rtol=1e-5, atol=1e-6, err_msg=name)
        else:
            np.testing.assert_array_equal(y, ref, err_msg=name)
    assert (outs[5] > 0).any() and (outs[5] == 0).any() and (outs[5] == -1).any()


# -- errors -------------------------------------------------------------------------

A4 = mx.nd.zeros((1, 4, 4))


@pytest.mark.parametrize("call, match", [
    (lambda: mx.nd.contrib.MultiBoxTarget(A4.astype("float64"), mx.nd.zeros((1, 2, 5)),
                                          mx.nd.zeros((1, 3, 4))),
     "anchor has dtype float64, expected float32"),
    (lambda: mx.nd.contrib.MultiBoxTarget(mx.nd.zeros((2, 4, 4)), mx.nd.zeros((1, 2, 5)),
                                          mx.nd.zeros((1, 3, 4))),
     r"anchor must have shape \(1, num_anchors, 4\)"),
    (lambda: mx.nd.contrib.MultiBoxTarget(A4, mx.nd.zeros((1, 2, 4)), mx.nd.zeros((1, 3, 4))),
     "label must have shape"),
    (lambda: mx.nd.contrib.MultiBoxTarget(A4, mx.nd.zeros((1, 2, 5)), mx.nd.zeros((1, 3, 5))),
     r"cls_pred must have shape \(batch, num_classes, 4\)"),
    (lambda: mx.nd.contrib.MultiBoxTarget(A4, mx.nd.zeros((1, 2, 5)), mx.nd.zeros((1, 3, 4)),
                                          variances=(0.1, 0.2)),
     "variances=.*expected 4 values"),
    (lambda: mx.nd.contrib.MultiBoxDetection(mx.nd.zeros((1, 3, 4)), mx.nd.zeros((1, 12)), A4),
     "number of anchors disagrees"),
    (lambda: mx.nd.contrib.MultiBoxDetection(mx.nd.zeros((1, 3, 4)), mx.nd.zeros((2, 16)), A4),
     "loc_pred has batch 2, cls_prob has 1"),
    (lambda: mx.nd.contrib.MultiBoxDetection(mx.nd.zeros((1, 3, 4), dtype="float16"),
                                             mx.nd.zeros((1, 16)), A4),
     "cls_prob has dtype float16"),
])
def test_errors(call, match):
    with pytest.raises(MXNetError, match=match):
        call()
