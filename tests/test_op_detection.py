"""Detection ops: ROIPooling, ROIAlign, box_iou, box_nms, MultiBoxPrior, box_encode and
box_decode against real MXNet 1.9.1, float64 numeric gradients, second order through
the adjoint gradient ops, mx.sym and hybridized blocks, and error messages.

Golden data: ``reference_extra/detection.npz``, written by ``gen_detection.py`` under
MXNet 1.9.1. Per case ``<case>``: ``op`` (op name), ``params`` (JSON keyword params),
``in<i>`` inputs, ``out<i>`` visible outputs, and for cases with gradients ``head``
(head gradient of output 0) and ``grad<i>`` (MXNet's input gradients). Cases cover
rois partly outside the map, tiny rois, half-way coordinates (C rounding), tied
maxima, empty bins, sample_ratio / aligned / position_sensitive, NMS with ids,
background, force_suppress, topk, batch dims, center in/out formats, custom column
layouts, all-invalid inputs, float64, anchors with clip/steps/offsets, and
box_encode/box_decode in both formats with clip.
"""
import json
import os

import numpy as np
import pytest

import mxlite as mx
import mxlite.autograd as autograd
from mxlite.base import MXNetError
from mxlite.operator.registry import OPS, runs_on_raw
from optable import central_difference

HERE = os.path.dirname(os.path.abspath(__file__))
GOLD = np.load(os.path.join(HERE, "reference_extra", "detection.npz"))
NAMES = sorted({k.split("/")[0] for k in GOLD.files})
RNG = np.random.default_rng(3)


def _nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def _gold(name):
    g = {k.split("/", 1)[1]: GOLD[k] for k in GOLD.files if k.startswith(name + "/")}
    n_in = sum(1 for k in g if k.startswith("in"))
    n_out = sum(1 for k in g if k.startswith("out"))
    return (str(g["op"]), json.loads(str(g["params"])), [g["in%d" % i] for i in range(n_in)],
            [g["out%d" % i] for i in range(n_out)], g)


def _fn(op):
    if op.startswith("_contrib_"):
        return getattr(mx.nd.contrib, op[len("_contrib_"):])
    return getattr(mx.nd, op)


def _tol(dtype):
    return (1e-5, 1e-6) if dtype == np.float32 else (1e-12, 1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_golden_forward_and_gradient(name):
    op, params, inputs, outs, g = _gold(name)
    xs = [_nd(a) for a in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        ys = _fn(op)(*xs, **params)
    ys = ys if isinstance(ys, list) else [ys]
    assert len(ys) == len(outs)
    rtol, atol = _tol(inputs[0].dtype)
    for y, ref in zip(ys, outs):
        assert y.dtype == ref.dtype and y.shape == ref.shape
        np.testing.assert_allclose(y.asnumpy(), ref, rtol=rtol, atol=atol, err_msg=name)
    if "head" in g:
        ys[0].backward(_nd(g["head"]))
        for i, x in enumerate(xs):
            np.testing.assert_allclose(x.grad.asnumpy(), g["grad%d" % i], rtol=rtol,
                                       atol=atol, err_msg="%s grad %d" % (name, i))


RAW_CASES = [n for n in NAMES if "head" in _gold(n)[4] and runs_on_raw(OPS[_gold(n)[0]])]


@pytest.mark.parametrize("name", RAW_CASES)
def test_raw_rules_equal_ndarray_rules(name):
    op, params, inputs, _, g = _gold(name)

    def grads(raw):
        old = autograd.RAW_RULES
        autograd.RAW_RULES = raw
        try:
            xs = [_nd(a) for a in inputs]
            for x in xs:
                x.attach_grad()
            with mx.autograd.record():
                y = _fn(op)(*xs, **params)
            (y[0] if isinstance(y, list) else y).backward(_nd(g["head"]))
            return [x.grad.asnumpy() for x in xs]
        finally:
            autograd.RAW_RULES = old

    for a, b in zip(grads(True), grads(False)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b, err_msg=name)


# -- numeric gradients (float64) ------------------------------------------------------

def _check_data_grad(fn, data, others, order2=True, eps=1e-6, mask=1.0):
    """Autograd gradient (and Hessian-vector product of a squared loss) w.r.t. data
    against central differences along a random direction (times ``mask``)."""
    data = data.astype(np.float64)
    ws = RNG.uniform(-1, 1, fn(_nd(data), *[_nd(o) for o in others]).shape)

    def loss(d, power):
        y = fn(d, *[_nd(o) for o in others])
        return ((y ** power) * _nd(ws)).sum()

    def grad_of(d_np, power):
        d = _nd(d_np)
        d.attach_grad()
        with mx.autograd.record():
            val = loss(d, power)
        val.backward()
        return d.grad.asnumpy()

    v = RNG.standard_normal(data.shape) * mask
    num = central_difference(lambda d: float(loss(_nd(d[0]), 1).asscalar()), [data], 0, v, eps)
    assert np.isclose((grad_of(data, 1) * v).sum(), num, rtol=1e-6, atol=1e-9)
    if not order2:
        return
    u = RNG.standard_normal(data.shape)
    d = _nd(data)
    d.attach_grad()
    with mx.autograd.record():
        gd = mx.autograd.grad(loss(d, 2), [d], create_graph=True)[0]
        gu = (gd * _nd(u)).sum()
    gu.backward()
    num2 = central_difference(lambda d: (grad_of(d[0], 2) * u).sum(), [data], 0, v, eps)
    assert np.isclose((d.grad.asnumpy() * v).sum(), num2, rtol=1e-5, atol=1e-8)


ROIS = np.array([[0, 1.3, 2.2, 25.1, 30.7], [1, -4.0, 3.0, 14.0, 12.0],
                 [1, 10.2, 8.9, 38.0, 22.5]])


@pytest.mark.parametrize("kw", [{}, {"sample_ratio": 2, "aligned": True},
                                {"position_sensitive": True}])
def test_roi_align_numeric_gradient(kw):
    data = RNG.uniform(-1, 1, (2, 8, 9, 10))
    p = dict({"pooled_size": (2, 2), "spatial_scale": 0.25}, **kw)
    _check_data_grad(lambda d, r: mx.nd.contrib.ROIAlign(d, r, **p), data, [ROIS])


def test_roi_pooling_numeric_gradient():
    # distinct values: the max of every bin is unique, so ROIPooling is smooth here
    data = RNG.permutation(2 * 3 * 9 * 10).reshape(2, 3, 9, 10) / 7.0
    _check_data_grad(lambda d, r: mx.nd.ROIPooling(d, r, pooled_size=(3, 2),
                                                   spatial_scale=0.25), data, [ROIS])


def test_box_nms_numeric_gradient():
    _, params, inputs, _, _ = _gold("nms_ids")
    # perturb the coordinates only: ids are truncated to int and scores are tied, so
    # moving either can change which boxes are kept (the function jumps there)
    x = inputs[0].astype(np.float64)
    mask = np.array([0, 0, 1, 1, 1, 1.0])
    _check_data_grad(lambda d: mx.nd.contrib.box_nms(d, **params), x, [], mask=mask)


# -- reference semantics --------------------------------------------------------------

def np_roi_pool(data, rois, pooled, scale):
    """Loop-per-bin reference, independent of the vectorised kernel (float64)."""
    ph_n, pw_n = pooled
    n, c, h, w = data.shape
    out = np.zeros((len(rois), c, ph_n, pw_n))
    for r, roi in enumerate(rois):
        b = int(roi[0])
        x1, y1, x2, y2 = [int(np.floor(abs(v * scale) + 0.5) * np.sign(v)) for v in roi[1:]]
        rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
        for i in range(ph_n):
            for j in range(pw_n):
                hs = min(max(int(np.floor(i * rh / ph_n)) + y1, 0), h)
                he = min(max(int(np.ceil((i + 1) * rh / ph_n)) + y1, 0), h)
                ws = min(max(int(np.floor(j * rw / pw_n)) + x1, 0), w)
                we = min(max(int(np.ceil((j + 1) * rw / pw_n)) + x1, 0), w)
                if he > hs and we > ws:
                    out[r, :, i, j] = data[b, :, hs:he, ws:we].max(axis=(1, 2))
    return out


def test_roi_pooling_matches_loop_reference():
    data = RNG.uniform(-1, 1, (2, 4, 11, 13))
    rois = np.array([[0, 0, 0, 40, 40], [1, 8, 4, 30, 50], [0, 50, 50, 70, 60]], float)
    y = mx.nd.ROIPooling(_nd(data), _nd(rois), pooled_size=(3, 4), spatial_scale=0.25)
    np.testing.assert_allclose(y.asnumpy(), np_roi_pool(data, rois, (3, 4), 0.25))


def test_roi_align_negative_batch_index_gives_zeros():
    data = _nd(RNG.uniform(0.5, 1, (1, 2, 5, 5)))
    rois = _nd(np.array([[-1, 0, 0, 3, 3], [0, 0, 0, 3, 3]], float))
    y = mx.nd.contrib.ROIAlign(data, rois, pooled_size=(2, 2), spatial_scale=1.0).asnumpy()
    assert (y[0] == 0).all() and (y[1] > 0).all()


def test_box_iou_matches_numpy():
    a = RNG.uniform(0, 5, (6, 4))
    a[:, 2:] += a[:, :2]
    b = RNG.uniform(0, 5, (3, 4))
    b[:, 2:] += b[:, :2]
    y = mx.nd.contrib.box_iou(_nd(a), _nd(b)).asnumpy()
    for i in range(6):
        for j in range(3):
            iw = max(0, min(a[i, 2], b[j, 2]) - max(a[i, 0], b[j, 0]))
            ih = max(0, min(a[i, 3], b[j, 3]) - max(a[i, 1], b[j, 1]))
            area = lambda z: (z[2] - z[0]) * (z[3] - z[1])  # noqa: E731
            ref = iw * ih / (area(a[i]) + area(b[j]) - iw * ih)
            assert np.isclose(y[i, j], ref)


def test_box_nms_alias_and_hidden_record():
    _, params, inputs, outs, _ = _gold("nms_ids")
    y = mx.nd.contrib.box_non_maximum_suppression(_nd(inputs[0]), **params)
    np.testing.assert_allclose(y.asnumpy(), outs[0], rtol=1e-6)
    kept = (outs[0][..., 1] >= 0).sum()
    assert 0 < kept < inputs[0].shape[1]


def test_multibox_prior_layout():
    y = mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 2, 3)), sizes=(0.4, 0.2),
                                    ratios=(1, 4)).asnumpy()
    assert y.shape == (1, 2 * 3 * 3, 4)
    # anchor 4 = pixel (0, 1), size 0.2: centered at ((1 + .5) / 3, .5 / 2)
    cx, cy = (y[0, 4, 0] + y[0, 4, 2]) / 2, (y[0, 4, 1] + y[0, 4, 3]) / 2
    assert np.allclose([cx, cy], [0.5, 0.25])
    assert np.isclose(y[0, 4, 3] - y[0, 4, 1], 0.2)
    # ratio 4 with sizes[0]: width doubles, height halves (times H / W for the width)
    assert np.isclose(y[0, 5, 2] - y[0, 5, 0], 0.4 * 2 / 3 * 2)
    assert np.isclose(y[0, 5, 3] - y[0, 5, 1], 0.4 / 2)


def test_box_encode_decode_round_trip():
    anchors = RNG.uniform(0, 4, (1, 6, 4))
    anchors[..., 2:] += anchors[..., :2] + 0.5
    refs = RNG.uniform(0, 4, (1, 6, 4))
    refs[..., 2:] += refs[..., :2] + 0.5
    # NOTE: box_decode's std params are float32 in MXNet: pick values exact in float32
    stds = np.array([0.125, 0.125, 0.25, 0.25])
    t, m = mx.nd.contrib.box_encode(_nd(np.ones((1, 6))), _nd(np.arange(6.)[None]),
                                    _nd(anchors), _nd(refs), _nd(np.zeros(4)), _nd(stds))
    assert (m.asnumpy() == 1).all()
    back = mx.nd.contrib.box_decode(t, _nd(anchors), std0=0.125, std1=0.125,
                                    std2=0.25, std3=0.25, format="corner")
    np.testing.assert_allclose(back.asnumpy(), refs, rtol=1e-10)


# -- symbol and hybridized block ------------------------------------------------------

def test_symbol_and_json_round_trip():
    _, params, inputs, outs, _ = _gold("roialign_ratio2")
    data, rois = mx.sym.var("data"), mx.sym.var("rois")
    net = mx.sym.contrib.ROIAlign(data, rois, **params)
    net = mx.sym.load_json(net.tojson())
    ex = net.bind(mx.cpu(), {"data": _nd(inputs[0]), "rois": _nd(inputs[1])})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), outs[0], rtol=1e-5, atol=1e-6)

    _, params, inputs, outs, _ = _gold("roipool_basic")
    pool = mx.sym.ROIPooling(data, rois, **params)
    assert pool.list_outputs() == [pool.name + "_output"]
    ex = pool.bind(mx.cpu(), {"data": _nd(inputs[0]), "rois": _nd(inputs[1])})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), outs[0], rtol=1e-6)


class _Detect(mx.gluon.HybridBlock):
    """Anchors from a feature map, decoded offsets, IoU with them, then NMS."""

    def hybrid_forward(self, F, feat, offsets, boxes, rois):
        anchors = F.contrib.MultiBoxPrior(feat, sizes=(0.5, 0.25), ratios=(1, 2))
        decoded = F.contrib.box_decode(offsets, anchors, format="corner")
        iou = F.contrib.box_iou(decoded, anchors)
        kept = F.contrib.box_nms(boxes, overlap_thresh=0.3)
        pooled = F.ROIPooling(feat, rois, pooled_size=(2, 2), spatial_scale=1.0)
        aligned = F.contrib.ROIAlign(feat, rois, pooled_size=(2, 2), spatial_scale=1.0)
        return decoded, iou, kept, pooled, aligned


def test_hybridized_block_matches_imperative():
    feat = _nd(RNG.uniform(-1, 1, (1, 2, 4, 4)).astype(np.float32))
    offsets = _nd(RNG.uniform(-0.2, 0.2, (1, 48, 4)).astype(np.float32))
    _, _, inputs, _, _ = _gold("nms_default")
    boxes = _nd(inputs[0])
    rois = _nd(np.array([[0, 0, 0, 2, 3], [0, 1, 1, 3, 3]], np.float32))
    net = _Detect()
    ref = [y.asnumpy() for y in net(feat, offsets, boxes, rois)]
    net.hybridize()
    for _ in range(2):
        got = net(feat, offsets, boxes, rois)
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a.asnumpy(), b, rtol=1e-6)


# -- errors ---------------------------------------------------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: mx.nd.ROIPooling(mx.nd.zeros((1, 1, 4, 4)), mx.nd.zeros((2, 4)),
                              pooled_size=(2, 2), spatial_scale=1.0), "rois must be 2-D"),
    (lambda: mx.nd.ROIPooling(mx.nd.zeros((1, 4, 4)), mx.nd.zeros((2, 5)),
                              pooled_size=(2, 2), spatial_scale=1.0),
     r"ROIPooling: data expected 4 dims, got shape \(1, 4, 4\)"),
    (lambda: mx.nd.ROIPooling(mx.nd.zeros((1, 1, 4, 4)), mx.nd.array([[3, 0, 0, 1, 1]]),
                              pooled_size=(2, 2), spatial_scale=1.0), "batch index"),
    (lambda: mx.nd.ROIPooling(mx.nd.zeros((1, 1, 4, 4)), mx.nd.zeros((2, 5)),
                              pooled_size=(2,), spatial_scale=1.0), "pooled_size"),
    (lambda: mx.nd.contrib.ROIAlign(mx.nd.zeros((6, 4, 4)), mx.nd.zeros((2, 5)),
                                    pooled_size=(2, 2), spatial_scale=1.0),
     r"ROIAlign: data expected 4 dims, got shape \(6, 4, 4\)"),
    (lambda: mx.nd.contrib.PSROIPooling(mx.nd.zeros((8, 4, 4)), mx.nd.zeros((2, 5)),
                                        spatial_scale=1.0, output_dim=2, pooled_size=2),
     r"PSROIPooling: data expected 4 dims"),
    (lambda: mx.nd.contrib.ROIAlign(mx.nd.zeros((1, 6, 4, 4)), mx.nd.zeros((2, 5)),
                                    pooled_size=(2, 2), spatial_scale=1.0,
                                    position_sensitive=True), "divisible"),
    (lambda: mx.nd.contrib.ROIAlign(mx.nd.zeros((1, 1, 4, 4)), mx.nd.zeros((2, 5)),
                                    pooled_size=(2, 2), spatial_scale=1.0, aligned=True),
     "x2 > x1"),
    (lambda: mx.nd.contrib.box_iou(mx.nd.zeros((2, 3)), mx.nd.zeros((2, 4))), "last dim 4"),
    (lambda: mx.nd.contrib.box_iou(mx.nd.zeros((2, 4)), mx.nd.zeros((2, 4)), format="xywh"),
     "corner"),
    (lambda: mx.nd.contrib.box_nms(mx.nd.zeros((3, 4))), "at least 5"),
    (lambda: mx.nd.contrib.box_nms(mx.nd.zeros((3, 6)), score_index=3), "overlaps"),
    (lambda: mx.nd.contrib.box_nms(mx.nd.zeros((3, 6)), id_index=1), "id_index"),
    (lambda: mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 4, 4)), sizes=(0.5,)),
     r"MultiBoxPrior: data expected 4 dims, got shape \(1, 4, 4\)"),
    (lambda: mx.nd.contrib.MultiBoxPrior(mx.nd.zeros((1, 1, 4, 4)), steps=(0.1,)), "steps"),
    (lambda: mx.nd.contrib.box_decode(mx.nd.zeros((1, 3, 4)), mx.nd.zeros((1, 2, 4))),
     "anchors must have shape"),
    (lambda: mx.nd.contrib.box_encode(mx.nd.zeros((1, 3)), mx.nd.zeros((1, 2)),
                                      mx.nd.zeros((1, 3, 4)), mx.nd.zeros((1, 2, 4)),
                                      mx.nd.zeros(4), mx.nd.ones(4)), "matches"),
])
def test_errors(call, match):
    with pytest.raises((MXNetError, ValueError), match=match):
        call()


def test_box_iou_of_a_box_with_nan_is_nan():
    nan = float("nan")
    boxes = mx.nd.array([[0, 0, 1, 1], [nan, 0, 1, 1], [0, 0, 2, nan]])
    for fmt in ("corner", "center"):
        iou = mx.nd.contrib.box_iou(boxes, boxes, format=fmt).asnumpy()
        assert iou[0, 0] == 1 and np.isnan(iou[1:]).all() and np.isnan(iou[:, 1:]).all()
