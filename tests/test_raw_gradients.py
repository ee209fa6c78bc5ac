"""Gradient rules run on raw arrays (an unrecorded backward) against the same rules
run on NDArrays, and the ``.grad`` buffers a backward pass adopts instead of copying into."""
import json
import os

import numpy as np
import pytest

import mxlite as mx
import mxlite.autograd as autograd
from mxlite.operator.registry import OPS, runs_on_raw
from mxlite.operator.nn import _fast
from conftest import REF
from optable import ALL, to_nd, outputs
import test_op_rows  # noqa: F401  (imports every test table: optable.ALL is complete)

with open(os.path.join(REF, "ops", "manifest.json")) as f:
    GOLDEN = [c for c in json.load(f)["cases"]
              if not c["forward_only"] and c["grads"]
              and runs_on_raw(OPS[c["op"]])]


def _gradients(run, raw):
    """The .grad arrays ``run()`` leaves, with raw rules on or off."""
    old = autograd.RAW_RULES
    autograd.RAW_RULES = raw
    try:
        return [g.asnumpy() for g in run()]
    finally:
        autograd.RAW_RULES = old


def _same(a, b, what):
    assert len(a) == len(b)
    for i, (x, y) in enumerate(zip(a, b)):
        assert x.dtype == y.dtype, "%s grad %d: dtype %s vs %s" % (what, i, x.dtype, y.dtype)
        np.testing.assert_array_equal(x, y, err_msg="%s grad %d" % (what, i))


def test_the_common_ops_have_raw_rules():
    for name in ("FullyConnected", "Convolution", "Pooling", "Activation", "relu", "sigmoid",
                 "log_softmax", "softmax", "pick", "mean", "sum", "Flatten", "Reshape",
                 "elemwise_add", "broadcast_mul", "_mul_scalar", "exp"):
        assert runs_on_raw(OPS[name]), name


@pytest.mark.parametrize("case", GOLDEN, ids=[c["id"] for c in GOLDEN])
def test_raw_rule_equals_ndarray_rule_on_golden_cases(case, monkeypatch):
    # the NumPy kernels: numba's (which sum in another order, e.g. BatchNorm's sums in
    # float64) are checked against them in test_op_fast
    monkeypatch.setattr(_fast, "kernels", lambda: None)
    with np.load(os.path.join(REF, "ops", case["file"]), allow_pickle=False) as f:
        z = dict(f)

    def run():
        xs = [mx.nd.array(z["input/" + n], dtype=z["input/" + n].dtype) for n in case["inputs"]]
        by_name = dict(zip(case["inputs"], xs))
        for n in case["grads"]:
            by_name[n].attach_grad()
        with mx.autograd.record(train_mode=case["train_mode"]):
            mx.random.seed(0)
            out = getattr(mx.nd, case["op"])(*xs, **case["kwargs"])
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        heads = [outs[i] for i in case["head_grads"]]
        hg = [mx.nd.array(z["head/%d" % i], dtype=z["head/%d" % i].dtype)
              for i in case["head_grads"]]
        mx.autograd.backward(heads, hg)
        return [by_name[n].grad for n in case["grads"]]

    _same(_gradients(run, True), _gradients(run, False), case["id"])


TABLE_GRAD_ROWS = [c for c in ALL if c.fn is not None and c.grad and c.moments is None]


@pytest.mark.parametrize("c", TABLE_GRAD_ROWS, ids=[c.id for c in TABLE_GRAD_ROWS])
def test_raw_rules_equal_ndarray_rules_on_every_table_row(c, monkeypatch):
    monkeypatch.setattr(_fast, "kernels", lambda: None)    # as the golden cases above
    rng = np.random.RandomState(0)

    def run():
        xs = to_nd(c.inputs)
        for i in c.grad:
            xs[i].attach_grad()
        mx.random.seed(0)
        with mx.autograd.record():
            ys = outputs(c.fn(*xs))
            heads = [y for y in ys if np.dtype(y.dtype).kind == "f"]
        rng.seed(0)
        hg = [mx.nd.array(rng.uniform(-1, 1, y.shape), dtype=y.dtype) for y in heads]
        mx.autograd.backward(heads, hg)
        return [xs[i].grad for i in c.grad]

    _same(_gradients(run, True), _gradients(run, False), c.id)


def _mlp():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(8, activation="relu"), mx.gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    return net


@pytest.mark.parametrize("hybrid", [False, True])
def test_raw_rules_equal_ndarray_rules_through_a_network(hybrid):
    net = _mlp()
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    if hybrid:
        net.hybridize()
        loss_fn.hybridize()
    x = mx.nd.array(np.random.RandomState(1).uniform(-1, 1, (5, 4)))
    y = mx.nd.array([0, 2, 1, 1, 0])

    def run():
        with mx.autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        return [p.grad() for p in net.collect_params().values()]

    _same(_gradients(run, True), _gradients(run, False), "mlp")


# -- gradients adopted as .grad buffers ------------------------------------------------------

def _backward(fn, *xs, head=None):
    with mx.autograd.record():
        y = fn(*xs)
    y.backward(head)
    return y


def test_a_fresh_gradient_becomes_the_grad_buffer_with_the_same_ndarray():
    x = mx.nd.ones((3, 4))
    x.attach_grad()
    g = x.grad
    _backward(lambda a: (a * 2).sum(), x)
    before = id(g._data)
    _backward(lambda a: (a * 3).sum(), x)
    assert x.grad is g and id(g._data) != before        # taken over, not copied
    np.testing.assert_array_equal(g.asnumpy(), np.full((3, 4), 3.0))


def test_a_view_of_the_grad_buffer_keeps_seeing_new_gradients():
    x = mx.nd.ones((3, 4))
    x.attach_grad()
    _backward(lambda a: (a * 2).sum(), x)
    row = x.grad[1]
    _backward(lambda a: (a * 5).sum(), x)
    np.testing.assert_array_equal(row.asnumpy(), np.full(4, 5.0))
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((3, 4), 5.0))


def test_one_gradient_reaching_two_variables_gives_two_buffers():
    a, b = mx.nd.ones((2, 2)), mx.nd.ones((2, 2))
    a.attach_grad()
    b.attach_grad()
    _backward(lambda u, v: u + v, a, b)
    a.grad[:] = 7
    np.testing.assert_array_equal(b.grad.asnumpy(), np.ones((2, 2)))
    x = mx.nd.ones((2,))
    x.attach_grad()
    _backward(lambda u: u + u, x)
    np.testing.assert_array_equal(x.grad.asnumpy(), [2.0, 2.0])


def test_the_head_gradient_is_never_aliased_by_grad():
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    head = mx.nd.ones((2, 3)) * 4
    _backward(lambda a: a.reshape((2, 3)), x, head=head)
    head[:] = 0
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((2, 3), 4.0))
    x.grad[:] = 1
    np.testing.assert_array_equal(head.asnumpy(), np.zeros((2, 3)))


def test_grad_req_add_still_accumulates():
    x = mx.nd.ones((2,))
    x.attach_grad(grad_req="add")
    for _ in range(3):
        _backward(lambda a: (a * 2).sum(), x)
    np.testing.assert_array_equal(x.grad.asnumpy(), [6.0, 6.0])
