"""gluon.loss: the MXNet 1.9.1 reference cases (losses and input gradients), NumPy
references for every loss, numeric gradients in float64, sample_weight, batch_axis,
stability, symbols, reprs and errors."""
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import loss as gloss

REF = os.path.join(os.path.dirname(__file__), "reference", "train")
with open(os.path.join(REF, "manifest.json")) as _f:
    _MANIFEST = json.load(_f)["losses"]
_CASES = {c["id"]: c for c in _MANIFEST["cases"]}


@pytest.fixture(scope="module")
def ref():
    with np.load(os.path.join(REF, _MANIFEST["file"])) as data:
        yield data


def _rand(*shape, low=-1, high=1):
    return np.random.uniform(low, high, shape)


def _softrelu(x):
    return np.logaddexp(0, x)


def _log_softmax(x, axis=-1):
    m = x.max(axis=axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=axis, keepdims=True))


# ----------------------------------------------------------------------------
# The reference cases from MXNet 1.9.1

@pytest.mark.parametrize("case_id", sorted(_CASES))
def test_reference_case(ref, case_id):
    case = _CASES[case_id]
    fn = getattr(gloss, case["class"].split(".")[-1])(**case["ctor_kwargs"])
    names = case["call_positional"]
    args = [None if n is None else mx.nd.array(ref["%s/%s" % (case_id, n)]) for n in names]
    for a, n in zip(args, names):
        if a is not None and "grad_" + n in case["grads"]:
            a.attach_grad()
    with mx.autograd.record():
        out = fn(*args)
    out.backward()
    tol = dict(rtol=case["rtol"], atol=case["atol"])
    assert out.shape == tuple(case["loss_shape"])
    np.testing.assert_allclose(out.asnumpy(), ref[case_id + "/loss"], **tol)
    for g in case["grads"]:
        x = args[names.index(g[len("grad_"):])]
        np.testing.assert_allclose(x.grad.asnumpy(), ref["%s/%s" % (case_id, g)], **tol)


# ----------------------------------------------------------------------------
# NumPy references (float64)

def _bce_logits(x, z, pw=None):
    if pw is None:
        return np.maximum(x, 0) - x * z + _softrelu(-np.abs(x))
    return x - x * z + (1 + z * (pw - 1)) * (_softrelu(-np.abs(x)) + np.maximum(-x, 0))


def _cos(a, b):
    dot = (a * b).sum(-1)
    return (dot / np.maximum(np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1),
                             1e-12))[:, None]


def _sdml(x1, x2, s=0.3):
    n = x1.shape[0]
    d = ((x1[:, None, :] - x2[None, :, :]) ** 2).sum(-1)
    logp = _log_softmax(-d, axis=1)
    lab = np.eye(n) * (1 - s) + (1 - np.eye(n)) * s / (n - 1)
    return (lab * (np.log(lab + 1e-12) - logp)).sum(1)


def _poisson_full(p, t):
    loss = p - t * np.log(p + 1e-8)
    safe = np.maximum(t, 1)
    return (loss + np.where(t > 1, safe * np.log(safe) - safe + 0.5 * np.log(2 * np.pi * safe),
                            0)).mean().reshape(1)


_LABEL = lambda *s: np.sign(_rand(*s)) + (np.sign(_rand(*s)) == 0)  # noqa: E731
_PROB = lambda *s: _rand(*s, low=0.05, high=0.95)  # noqa: E731

# (name, constructor, input generators, NumPy reference of the per-sample loss)
_ROWS = [
    ("l2", lambda: gloss.L2Loss(), (_rand, _rand),
     lambda p, l: (0.5 * (l - p) ** 2).mean(1)),
    ("l1_weight", lambda: gloss.L1Loss(weight=3.0), (_rand, _rand),
     lambda p, l: 3 * np.abs(l - p).mean(1)),
    ("bce", lambda: gloss.SigmoidBCELoss(), (_rand, _PROB),
     lambda p, l: _bce_logits(p, l).mean(1)),
    ("bce_from_sigmoid", lambda: gloss.SigmoidBCELoss(from_sigmoid=True), (_PROB, _PROB),
     lambda p, l: -(l * np.log(p + 1e-12) + (1 - l) * np.log(1 - p + 1e-12)).mean(1)),
    ("softmax_ce", lambda: gloss.SoftmaxCELoss(), (_rand, lambda n, c: np.arange(n) % c),
     lambda p, l: -_log_softmax(p)[np.arange(len(l)), l.astype(int)]),
    ("softmax_ce_dense", lambda: gloss.SoftmaxCELoss(sparse_label=False),
     (_rand, lambda n, c: np.eye(c)[np.arange(n) % c] * 0.7 + 0.3 / c),
     lambda p, l: -(l * _log_softmax(p)).sum(1)),
    ("kldiv", lambda: gloss.KLDivLoss(from_logits=False), (_rand, _PROB),
     lambda p, l: (l * (np.log(l + 1e-12) - _log_softmax(p))).sum(1)),
    ("huber", lambda: gloss.HuberLoss(rho=0.5), (lambda *s: 2 * _rand(*s), _rand),
     lambda p, l: np.where(np.abs(l - p) > 0.5, np.abs(l - p) - 0.25,
                           (l - p) ** 2).mean(1)),
    ("hinge", lambda: gloss.HingeLoss(), (_rand, _LABEL),
     lambda p, l: np.maximum(0, 1 - p * l).mean(1)),
    ("squared_hinge", lambda: gloss.SquaredHingeLoss(margin=2), (_rand, _LABEL),
     lambda p, l: (np.maximum(0, 2 - p * l) ** 2).mean(1)),
    ("logistic_signed", lambda: gloss.LogisticLoss(), (_rand, _LABEL),
     lambda p, l: np.log1p(np.exp(-p * l)).mean(1)),
    ("logistic_binary", lambda: gloss.LogisticLoss(label_format="binary"),
     (_rand, lambda *s: (_rand(*s) > 0).astype(float)),
     lambda p, l: np.log1p(np.exp(-p * (2 * l - 1))).mean(1)),
    ("triplet", lambda: gloss.TripletLoss(margin=0.5), (_rand, _rand, _rand),
     lambda p, a, b: np.maximum(0, ((a - p) ** 2 - (b - p) ** 2).sum(1) + 0.5)),
    ("poisson_logits", lambda: gloss.PoissonNLLLoss(),
     (_rand, lambda *s: np.random.randint(0, 5, s).astype(float)),
     lambda p, t: np.array([(np.exp(p) - t * p).mean()])),
    ("poisson_full", lambda: gloss.PoissonNLLLoss(from_logits=False, compute_full=True),
     (_PROB, lambda *s: np.random.randint(0, 5, s).astype(float)), _poisson_full),
    ("cosine", lambda: gloss.CosineEmbeddingLoss(margin=0.1),
     (_rand, _rand, lambda n, c: np.where(np.arange(n) % 2, 1.0, -1.0)),
     lambda a, b, y: np.where(y[:, None] == 1, 1 - _cos(a, b),
                              np.maximum(0, _cos(a, b) - 0.1))),
    ("sdml", lambda: gloss.SDMLLoss(), (_rand, _rand), _sdml),
]


@pytest.mark.parametrize("name, make, gens, want", _ROWS, ids=[r[0] for r in _ROWS])
def test_matches_numpy(name, make, gens, want):
    xs = [g(4, 3) for g in gens]
    out = make()(*[mx.nd.array(x, dtype="float64") for x in xs])
    np.testing.assert_allclose(out.asnumpy(), want(*xs), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, make, gens, want",
                         [r for r in _ROWS if r[0] not in ("hinge", "l1_weight")],
                         ids=[r[0] for r in _ROWS if r[0] not in ("hinge", "l1_weight")])
def test_gradient_of_pred_matches_finite_differences(name, make, gens, want):
    # hinge and L1 have kinks; every other loss is smooth at random inputs.
    xs = [g(4, 3) for g in gens]
    fn = make()
    pred = mx.nd.array(xs[0], dtype="float64")
    pred.attach_grad()
    rest = [mx.nd.array(x, dtype="float64") for x in xs[1:]]
    with mx.autograd.record():
        out = fn(pred, *rest)
    out.backward()
    eps = 1e-6
    num = np.zeros_like(xs[0])
    for i in np.ndindex(*xs[0].shape):
        hi, lo = xs[0].copy(), xs[0].copy()
        hi[i] += eps
        lo[i] -= eps
        num[i] = (want(hi, *xs[1:]).sum() - want(lo, *xs[1:]).sum()) / (2 * eps)
    np.testing.assert_allclose(pred.grad.asnumpy(), num, rtol=1e-5, atol=1e-7)


# Values printed by MXNet 1.9.1 for these inputs (np.random.seed(0)).
def test_values_observed_in_mxnet():
    np.random.seed(0)
    p = mx.nd.array(np.random.rand(3, 4))
    lab = mx.nd.array(np.random.rand(3, 4))
    x1 = mx.nd.array(np.random.randn(3, 4))
    x2 = mx.nd.array(np.random.randn(3, 4))
    sign = mx.nd.array([1, -1, 1])
    close = dict(rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gloss.KLDivLoss()(p, lab).asnumpy(),
                               [-1.857332, -2.2104383, -2.778263], **close)
    np.testing.assert_allclose(
        gloss.CosineEmbeddingLoss(margin=0.2)(x1, x2, sign, mx.nd.array([[1], [2], [3]]))
        .asnumpy(), [[0.8867562], [0.], [5.8067317]], **close)
    np.testing.assert_allclose(gloss.SDMLLoss()(x1, x2).asnumpy(),
                               [3.237243, 0.03454263, 12.173737], rtol=1e-4)
    np.testing.assert_allclose(gloss.TripletLoss()(x1, x2, lab).asnumpy(),
                               [1.8177705, 0.595649, 12.74732], **close)
    np.testing.assert_allclose(gloss.PoissonNLLLoss()(p, mx.nd.array(
        [[0, 1, 2, 3], [4, 0, 1, 2], [5, 2, 0, 1]])).asnumpy(), [0.76321954], **close)
    np.testing.assert_allclose(gloss.LogisticLoss()(x1, mx.nd.sign(x2)).asnumpy(),
                               [0.72623813, 1.0275393, 1.1812353], **close)
    np.testing.assert_allclose(gloss.SquaredHingeLoss()(x1, mx.nd.sign(x2)).asnumpy(),
                               [1.6610004, 3.133793, 3.5667462], **close)


# ----------------------------------------------------------------------------
# sample_weight, weight, batch_axis

def test_sample_weight_broadcasts_per_sample_and_per_element():
    p, l = _rand(3, 4), _rand(3, 4)
    base = ((l - p) ** 2 / 2).mean(1)
    sw = np.array([[0.], [1.], [2.]])
    out = gloss.L2Loss()(mx.nd.array(p), mx.nd.array(l), mx.nd.array(sw))
    np.testing.assert_allclose(out.asnumpy(), base * sw[:, 0], rtol=1e-5)
    elem = _rand(3, 4)
    out = gloss.L1Loss()(mx.nd.array(p), mx.nd.array(l), mx.nd.array(elem))
    np.testing.assert_allclose(out.asnumpy(), (np.abs(l - p) * elem).mean(1), rtol=1e-5,
                               atol=1e-7)
    out = gloss.HingeLoss(weight=0.5)(mx.nd.array(p), mx.nd.array(np.sign(l)),
                                      mx.nd.array(sw))
    np.testing.assert_allclose(out.asnumpy(),
                               0.5 * sw[:, 0] * np.maximum(0, 1 - p * np.sign(l)).mean(1),
                               rtol=1e-5)


def test_sample_weight_scales_the_gradient():
    p = mx.nd.array(_rand(2, 3))
    p.attach_grad()
    with mx.autograd.record():
        out = gloss.SoftmaxCELoss()(p, mx.nd.array([0, 2]), mx.nd.array([[0.], [3.]]))
    out.backward()
    soft = np.exp(_log_softmax(p.asnumpy().astype(np.float64)))
    onehot = np.eye(3)[[0, 2]]
    np.testing.assert_allclose(p.grad.asnumpy(), (soft - onehot) * [[0.], [3.]], rtol=1e-5,
                               atol=1e-7)


def test_batch_axis_keeps_that_axis():
    p, l = _rand(2, 5, 3), _rand(2, 5, 3)
    out = gloss.L2Loss(batch_axis=1)(mx.nd.array(p), mx.nd.array(l))
    assert out.shape == (5,)
    np.testing.assert_allclose(out.asnumpy(), ((l - p) ** 2 / 2).mean(axis=(0, 2)), rtol=1e-5)
    out = gloss.KLDivLoss(batch_axis=2)(mx.nd.array(p), mx.nd.array(np.abs(l)))
    la = np.abs(l)
    np.testing.assert_allclose(out.asnumpy(), (la * (np.log(la + 1e-12) - p)).sum(axis=(0, 1)),
                               rtol=1e-5)


def test_softmax_ce_axis_and_from_logits():
    p = _rand(2, 3, 4)
    lab = np.array([[0, 1, 2, 1], [2, 2, 0, 1]], dtype=np.float64)
    out = gloss.SoftmaxCELoss(axis=1)(mx.nd.array(p), mx.nd.array(lab))
    lp = _log_softmax(p, axis=1)
    picked = np.take_along_axis(lp, lab.astype(int)[:, None, :], axis=1)[:, 0, :]
    np.testing.assert_allclose(out.asnumpy(), -picked.mean(1), rtol=1e-5)
    out = gloss.SoftmaxCELoss(axis=1, from_logits=True)(mx.nd.array(lp), mx.nd.array(lab))
    np.testing.assert_allclose(out.asnumpy(), -picked.mean(1), rtol=1e-5)


def test_ctc_layouts_and_sample_weight():
    np.random.seed(3)
    pred = _rand(2, 6, 5).astype(np.float32)            # N, T, C (blank = 4)
    label = np.array([[0, 1, 2], [3, 3, -1]], np.float32)
    ntc = gloss.CTCLoss()(mx.nd.array(pred), mx.nd.array(label))
    tnc = gloss.CTCLoss(layout="TNC", label_layout="TN")(
        mx.nd.array(pred.transpose(1, 0, 2)), mx.nd.array(label.T))
    np.testing.assert_allclose(ntc.asnumpy(), tnc.asnumpy(), rtol=1e-6)
    weighted = gloss.CTCLoss(weight=2.0)(mx.nd.array(pred), mx.nd.array(label),
                                         None, None, mx.nd.array([1., 0.5]))
    np.testing.assert_allclose(weighted.asnumpy(), ntc.asnumpy() * [2., 1.], rtol=1e-6)
    # a sequence of one frame per label symbol has a single alignment
    one = np.full((1, 2, 3), -50.0, np.float32)
    one[0, 0, 1] = one[0, 1, 0] = 50.0
    out = gloss.CTCLoss()(mx.nd.array(one), mx.nd.array([[1, 0]]))
    assert out.asnumpy()[0] < 1e-3
    assert gloss.CTCLoss(label_layout="TN")._batch_axis == 1


# ----------------------------------------------------------------------------
# Numerics, symbols, reprs, errors

def test_stable_for_large_logits():
    p = mx.nd.array([[100., -100.], [-1000., 1000.]])
    bce = gloss.SigmoidBCELoss()(p, mx.nd.array([[1., 0.], [1., 0.]])).asnumpy()
    np.testing.assert_allclose(bce, [0., 1000.], atol=1e-4)
    bce = gloss.SigmoidBCELoss()(p, mx.nd.array([[1., 0.], [1., 0.]]), None,
                                 mx.nd.array([[2., 2.]])).asnumpy()
    np.testing.assert_allclose(bce, [0., 1500.], atol=1e-3)
    ce = gloss.SoftmaxCELoss()(mx.nd.array([[1000., 0.], [0., 1000.]]),
                               mx.nd.array([1, 1])).asnumpy()
    np.testing.assert_allclose(ce, [1000., 0.], atol=1e-3)
    assert np.isfinite(gloss.LogisticLoss()(p, mx.nd.array([[1, -1], [1, -1]])).asnumpy()).all()


def test_poisson_full_is_finite_at_zero_targets():
    # MXNet 1.9.1 returns NaN here (0 * log 0 in the masked Stirling term).
    p = mx.nd.array([[0.5, 2.0]])
    p.attach_grad()
    with mx.autograd.record():
        out = gloss.PoissonNLLLoss(from_logits=False, compute_full=True)(p, mx.nd.array([[0, 3]]))
    out.backward()
    assert np.isfinite(out.asnumpy()).all() and np.isfinite(p.grad.asnumpy()).all()


def test_losses_trace_to_symbols():
    pred, label = mx.sym.var("pred"), mx.sym.var("label")
    sym = gloss.SoftmaxCELoss()(pred, label)
    assert sorted(sym.list_arguments()) == ["label", "pred"]
    p = _rand(3, 4).astype(np.float32)
    lab = np.array([0, 3, 1], np.float32)
    out = sym.eval(pred=mx.nd.array(p), label=mx.nd.array(lab))[0]
    want = gloss.SoftmaxCELoss()(mx.nd.array(p), mx.nd.array(lab))
    np.testing.assert_allclose(out.asnumpy(), want.asnumpy(), rtol=1e-6)
    for fn, n in [(gloss.CosineEmbeddingLoss(), 3), (gloss.PoissonNLLLoss(compute_full=True), 2),
                  (gloss.SigmoidBCELoss(), 2), (gloss.HuberLoss(), 2), (gloss.CTCLoss(), 2),
                  (gloss.SDMLLoss(), 2), (gloss.TripletLoss(), 3)]:
        args = [mx.sym.var("v%d" % i) for i in range(n)]
        assert sorted(fn(*args).list_arguments()) == ["v%d" % i for i in range(n)]


def test_hybridized_loss_gives_the_same_values():
    fn = gloss.HuberLoss()
    p, l = mx.nd.array(_rand(3, 2)), mx.nd.array(_rand(3, 2))
    before = fn(p, l).asnumpy()
    fn.hybridize()
    np.testing.assert_allclose(fn(p, l).asnumpy(), before, rtol=1e-6)


# MXNet 1.9.1: repr(gluon.loss.X()) and the default prefix.
@pytest.mark.parametrize("make, text, prefix", [
    (lambda: gloss.L2Loss(), "L2Loss(batch_axis=0, w=1.0)", "l2loss"),
    (lambda: gloss.L1Loss(), "L1Loss(batch_axis=0, w=None)", "l1loss"),
    (lambda: gloss.SigmoidBCELoss(), "SigmoidBinaryCrossEntropyLoss(batch_axis=0, w=None)",
     "sigmoidbinarycrossentropyloss"),
    (lambda: gloss.SoftmaxCELoss(), "SoftmaxCrossEntropyLoss(batch_axis=0, w=None)",
     "softmaxcrossentropyloss"),
    (lambda: gloss.CTCLoss(label_layout="TN"), "CTCLoss(batch_axis=1, w=None)", "ctcloss"),
    (lambda: gloss.SDMLLoss(), "SDMLLoss(batch_axis=0, w=1.0)", "sdmlloss"),
    (lambda: gloss.HuberLoss(weight=2), "HuberLoss(batch_axis=0, w=2)", "huberloss"),
])
def test_repr_and_prefix_as_mxnet(make, text, prefix):
    fn = make()
    assert repr(fn) == text
    assert fn.prefix.startswith(prefix) and fn.prefix[len(prefix):-1].isdigit()
    assert len(fn.collect_params()) == 0


def test_errors_name_the_loss_and_shapes():
    with pytest.raises(ValueError, match=r"L2Loss: label of shape \(3, 3\) cannot be reshaped "
                                         r"to the prediction's shape \(2, 3\)"):
        gloss.L2Loss()(mx.nd.ones((2, 3)), mx.nd.ones((3, 3)))
    with pytest.raises(ValueError, match=r"SoftmaxCrossEntropyLoss: sparse label of shape "
                                         r"\(2, 4\) does not match pred of shape \(2, 4\)"):
        gloss.SoftmaxCELoss()(mx.nd.ones((2, 4)), mx.nd.ones((2, 4)))
    with pytest.raises(ValueError, match="TripletLoss: negative of shape"):
        gloss.TripletLoss()(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)), mx.nd.ones((2, 2)))
    with pytest.raises(ValueError, match="SDMLLoss: x1 and x2 must both have shape"):
        gloss.SDMLLoss()(mx.nd.ones((2, 3)), mx.nd.ones((3, 3)))
    with pytest.raises(ValueError, match="Only 'NTC' and 'TNC' layouts"):
        gloss.CTCLoss(layout="NCT")
    with pytest.raises(ValueError, match="label_format can only be signed or binary"):
        gloss.LogisticLoss(label_format="onehot")
    with pytest.raises(TypeError, match="loss weight must be a number"):
        gloss.L1Loss(weight="2")(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)))
    # reshaping a label of the same size is allowed, as in MXNet
    out = gloss.L2Loss()(mx.nd.ones((2, 3)), mx.nd.zeros((3, 2)))
    np.testing.assert_allclose(out.asnumpy(), [0.5, 0.5])
