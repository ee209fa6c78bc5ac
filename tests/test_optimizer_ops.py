"""The fused optimizer update ops (``sgd_update`` ... ``_adamw_update``, ``multi_*``)
against real MXNet 1.9.1, bit for bit.

Golden data: ``reference_extra/optimizer_ops.npz`` (made by
``reference_extra/gen_optimizer_ops.py`` under MXNet 1.9.1): for case ``c`` the inputs
before the call ``c/x<i>``, the same inputs after it ``c/a<i>`` (the states updated in
place), the outputs ``c/y<i>``; ``__manifest__`` lists {name, op, kwargs, n_in, n_out,
inplace, stride}. ``inplace`` cases pass ``out=`` the weight(s), as MXNet's optimizers do.
float32, float64 and float16 weights, multi-precision (float16 + float32 master) ops.
"""
import json
import os

import numpy as np
import pytest

import mxlite as mx
from conftest import REF

Z = np.load(os.path.join(os.path.dirname(REF), "reference_extra", "optimizer_ops.npz"))
MANIFEST = json.loads(str(Z["__manifest__"]))
# NOTE: MXNet's nag_mom_update reads the weight after writing its output: with a
# separate output (and wd != 0) its momentum differs; mxlite gives the in-place numbers.
NOT_BIT_EXACT = {"nag_not_inplace"}


def _op(path):
    fn = mx.nd
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


def _inputs(c):
    return [mx.nd.array(Z["%s/x%d" % (c["name"], i)], dtype=Z["%s/x%d" % (c["name"], i)].dtype)
            for i in range(c["n_in"])]


def _call(c, xs):
    kw = dict(c["kwargs"])
    if c["inplace"]:
        s = c["stride"]
        kw["out"] = xs[0] if s is None else [xs[i] for i in range(0, len(xs), s)]
    ys = _op(c["op"])(*xs, **kw)
    return ys if isinstance(ys, list) else [ys]


@pytest.mark.parametrize("c", MANIFEST, ids=[c["name"] for c in MANIFEST])
def test_matches_mxnet(c):
    xs = _inputs(c)
    ys = _call(c, xs)
    assert len(ys) == c["n_out"]
    exact = c["name"] not in NOT_BIT_EXACT
    for i, y in enumerate(ys):
        want = Z["%s/y%d" % (c["name"], i)]
        assert y.dtype == want.dtype
        np.testing.assert_array_equal(y.asnumpy(), want)
    for i, x in enumerate(xs):
        want = Z["%s/a%d" % (c["name"], i)]
        if exact:
            np.testing.assert_array_equal(x.asnumpy(), want, err_msg="input %d" % i)
        else:
            np.testing.assert_allclose(x.asnumpy(), want, rtol=0, atol=2e-3)


def test_states_bump_versions_and_weight_in_place():
    w, g, m = mx.nd.ones((3,)), mx.nd.ones((3,)), mx.nd.zeros((3,))
    data = w._data
    v0 = m._version[0] if m._version is not None else None
    out = mx.nd.sgd_mom_update(w, g, m, lr=0.1, momentum=0.9, out=w)
    assert out is w and w._data is data
    np.testing.assert_allclose(w.asnumpy(), 0.9)
    np.testing.assert_allclose(m.asnumpy(), -0.1)
    if v0 is not None:
        assert m._version[0] > v0


def test_clip_negative_off_zero_clips_all():
    w, g = mx.nd.array([1.0, 2.0]), mx.nd.array([10.0, -10.0])
    np.testing.assert_allclose(mx.nd.sgd_update(w, g, lr=0.1).asnumpy(), [0.0, 3.0])
    np.testing.assert_allclose(mx.nd.sgd_update(w, g, lr=0.1, clip_gradient=0).asnumpy(),
                               [1.0, 2.0])
    np.testing.assert_allclose(mx.nd.sgd_update(w, g, lr=0.1, clip_gradient=1).asnumpy(),
                               [0.9, 2.1])


def test_not_differentiable():
    w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    w.attach_grad()
    with mx.autograd.record():
        y = mx.nd.sgd_update(w, g, lr=0.5) * 2
    # The update is a constant to autograd: nothing to differentiate back to ``w``.
    with pytest.raises(mx.MXNetError, match="not in a recorded graph"):
        y.backward()
    np.testing.assert_allclose(y.asnumpy(), 1.0)


def test_multi_checks_counts():
    w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    with pytest.raises(Exception, match="lrs"):
        mx.nd.multi_sgd_update(w, g, lrs=(0.1, 0.2), wds=(0.0,), num_weights=1)


def test_symbol_forward():
    w, g, m = mx.sym.var("w"), mx.sym.var("g"), mx.sym.var("m")
    s = mx.sym.sgd_mom_update(w, g, m, lr=0.1, momentum=0.9, wd=0.0)
    # As in MXNet, the states an op updates in place are auxiliary states of the symbol.
    assert s.list_arguments() == ["w", "g"] and s.list_auxiliary_states() == ["m"]
    m0 = mx.nd.zeros((2, 3))
    ex = s.bind(mx.cpu(), {"w": mx.nd.ones((2, 3)), "g": mx.nd.ones((2, 3))},
                aux_states={"m": m0})
    y = ex.forward()[0]
    np.testing.assert_allclose(y.asnumpy(), 0.9, rtol=1e-6)
    np.testing.assert_allclose(m0.asnumpy(), -0.1, rtol=1e-6)
    s2 = mx.sym.adam_update(w, g, mx.sym.var("mean"), mx.sym.var("var"), lr=0.01)
    _, out_shapes, _ = s2.infer_shape(w=(4, 5), g=(4, 5), mean=(4, 5), var=(4, 5))
    assert out_shapes == [(4, 5)]


def test_optimizers_share_the_op_kernels():
    # An optimizer update and its op give the same bits (both run one kernel).
    rng = np.random.RandomState(1)
    w0, g0 = rng.randn(6).astype(np.float32), rng.randn(6).astype(np.float32)
    cases = [(mx.optimizer.NAG(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.3),
              lambda w, g, s: mx.nd.nag_mom_update(w, g, s, lr=0.1, momentum=0.9, wd=0.01,
                                                   rescale_grad=0.3, out=w)),
             (mx.optimizer.Adam(learning_rate=0.1, wd=0.01, clip_gradient=0.5),
              lambda w, g, s: mx.nd.adam_update(
                  w, g, *s, lr=0.1 * np.sqrt(1 - 0.999) / (1 - 0.9), wd=0.01,
                  clip_gradient=0.5, out=w)),
             (mx.optimizer.Ftrl(lamda1=0.01, learning_rate=0.1, wd=0.01),
              lambda w, g, s: mx.nd.ftrl_update(w, g, *s, lr=0.1, wd=0.01, out=w))]
    for opt, op in cases:
        w1, w2 = mx.nd.array(w0), mx.nd.array(w0)
        s1, s2 = opt.create_state(0, w1), opt.create_state(0, w2)
        opt.update(0, w1, mx.nd.array(g0), s1)
        op(w2, mx.nd.array(g0), s2)
        np.testing.assert_array_equal(w1.asnumpy(), w2.asnumpy(), err_msg=type(opt).__name__)


def test_adamw_takes_a_number_or_an_array_for_rescale_grad():
    # MXNet 1.9.1: weight 1, grad 0.5, lr 0.1, eta 1 -> 0.6837703, mean 0.05000001.
    results = []
    for rescale in (1.0, mx.nd.array([1.0])):
        w, m, v = mx.nd.ones((3,)), mx.nd.zeros((3,)), mx.nd.zeros((3,))
        mx.nd.contrib.adamw_update(w, mx.nd.ones((3,)) * 0.5, m, v, rescale, lr=0.1, eta=1.0,
                                   out=w)
        np.testing.assert_allclose(w.asnumpy(), [0.6837703] * 3, rtol=1e-7)
        np.testing.assert_allclose(m.asnumpy(), [0.05000001] * 3, rtol=1e-7)
        results.append(w.asnumpy())
    np.testing.assert_array_equal(results[0], results[1])


def _wrong_shape_rows():
    rows = []
    for c in MANIFEST:
        shapes = [Z["%s/x%d" % (c["name"], i)].shape for i in range(c["n_in"])]
        stride = c["stride"] or c["n_in"]
        for i in range(1, c["n_in"]):
            if shapes[i] == shapes[i - i % stride] and len(shapes[i]) and shapes[i][0] > 1:
                rows.append((c, i))
    return rows


@pytest.mark.parametrize("c,bad", _wrong_shape_rows(),
                         ids=["%s-x%d" % (c["name"], i) for c, i in _wrong_shape_rows()])
def test_wrong_shaped_grad_or_state_raises_before_any_write(c, bad):
    # MXNet raises; NumPy would broadcast (a wrong update) or fail after writing the
    # states before the bad one.
    xs = _inputs(c)
    xs[bad] = xs[bad][1:]
    before = [x.asnumpy().copy() for x in xs]
    with pytest.raises(mx.MXNetError, match=r"^_?%s: \w+ has shape .*expected .*the weight's"
                       % c["op"].split(".")[-1]):
        _call(c, xs)
    for x, b in zip(xs, before):
        np.testing.assert_array_equal(x.asnumpy(), b)
