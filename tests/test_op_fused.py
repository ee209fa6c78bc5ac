"""Fused ops a hybridized graph runs in place of chains (operator/nn/fused.py): the
chain's numbers bit for bit, forward and backward, and the graph rewrite's rules."""
import json

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import nn
from mxlite.autograd import node_backward
from mxlite.operator import get_op

CPU = mx.cpu()
FUSED = get_op("_log_softmax_pick")
LOG_SOFTMAX, PICK = get_op("log_softmax"), get_op("pick")


def _chain(x, idx, gy, axis, keepdims, mode):
    """Forward and input gradient of pick(log_softmax(x)) through the two ops' rules on raw arrays."""
    lp_params = LOG_SOFTMAX.parse_params(dict(axis=axis))
    pk_params = PICK.parse_params(dict(axis=axis, keepdims=keepdims, mode=mode))
    logp = LOG_SOFTMAX.compute(lp_params, np, x)
    picked = PICK.compute(pk_params, np, logp, idx)
    gs = node_backward(PICK, pk_params, [logp, idx], [picked], [gy], [True, False], CPU)[0]
    gx = node_backward(LOG_SOFTMAX, lp_params, [x], [logp], [gs], [True], CPU)[0]
    return picked, gx


def _fused(x, idx, gy, axis, keepdims, mode):
    p = FUSED.parse_params(dict(axis=axis, keepdims=keepdims, mode=mode))
    ys = FUSED.compute(p, np, x, idx)
    gx = node_backward(FUSED, p, [x, idx], list(ys), [gy, None, None], [True, False], CPU)[0]
    return ys[0], gx


CASES = [  # shape, axis, keepdims, mode, dtype
    ((16, 10), -1, True, "clip", np.float32),
    ((16, 10), 1, False, "clip", np.float32),
    ((3, 5, 4), 1, False, "wrap", np.float32),
    ((3, 5, 4), 0, True, "clip", np.float64),
    ((4, 7), -1, False, "clip", np.float16),
    ((6,), 0, True, "wrap", np.float32),
]


@pytest.mark.parametrize("shape,axis,keepdims,mode,dtype", CASES)
def test_log_softmax_pick_is_the_chain_bit_for_bit(shape, axis, keepdims, mode, dtype):
    rng = np.random.RandomState(0)
    x = (rng.randn(*shape) * 4).astype(dtype)
    ax = axis % len(shape)
    rows = shape[:ax] + shape[ax + 1:]
    # indices out of range and fractional, to exercise clip/wrap and truncation
    idx = rng.uniform(-3, shape[ax] + 3, rows).astype(np.float32)
    gshape = shape[:ax] + (1,) + shape[ax + 1:] if keepdims else (rows or (1,))
    gy = rng.randn(*gshape).astype(dtype)
    gy.reshape(-1)[:3] = [-0.0, 0.0, np.inf][:gy.size]   # signed zeros and inf too
    with np.errstate(invalid="ignore"):     # inf - inf where gy is inf
        want = _chain(x, idx, gy, axis, keepdims, mode)
        got = _fused(x, idx, gy, axis, keepdims, mode)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g.view(np.uint8), w.view(np.uint8)), (g, w)


def test_log_softmax_pick_with_infinite_and_nan_logits():
    x = np.array([[1, np.inf, 2], [-np.inf] * 3, [np.nan, 1, 2], [1, 2, 3]], np.float32)
    idx = np.array([0, 1, 2, 2], np.float32)
    gy = np.array([[1.0], [2.0], [-1.0], [0.5]], np.float32)
    with np.errstate(all="ignore"):
        want = _chain(x, idx, gy, -1, True, "clip")
        got = _fused(x, idx, gy, -1, True, "clip")
    for g, w in zip(got, want):
        assert np.array_equal(g, w, equal_nan=True)


def test_log_softmax_pick_ndarray_rule_gives_second_order():
    # The NDArray rule (used when the backward is recorded) is the chain's rules.
    x = mx.nd.array(np.random.RandomState(1).randn(4, 5))
    idx = mx.nd.array([0, 4, 2, 1])
    grads = []
    for fused in (False, True):
        xx = x.copy()
        xx.attach_grad()
        with mx.autograd.record():
            if fused:
                y = mx.nd._internal._log_softmax_pick(xx, idx, axis=-1)
            else:
                y = mx.nd.pick(mx.nd.log_softmax(xx, axis=-1), idx, axis=-1)
            g = mx.autograd.grad(y.sum(), [xx], create_graph=True)[0]
            z = (g * g).sum()
        z.backward()
        grads.append((y.asnumpy(), g.asnumpy(), xx.grad.asnumpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def _loss_graph(loss):
    loss.hybridize()
    pred = mx.nd.array(np.random.RandomState(2).randn(8, 5))
    label = mx.nd.array(np.arange(8) % 5)
    loss(pred, label)
    return loss._cached_graph[0][1], pred, label


def test_softmax_ce_loss_graph_runs_the_fused_step_with_the_same_results():
    graph, pred, label = _loss_graph(mx.gluon.loss.SoftmaxCrossEntropyLoss())
    assert [s[0].name for s in graph.steps] == ["_log_softmax_pick", "_mul_scalar", "mean"]
    results = []
    for hybrid in (False, True):
        block = mx.gluon.loss.SoftmaxCrossEntropyLoss()
        block.hybridize(hybrid)
        x = pred.copy()
        x.attach_grad()
        for _ in range(2):
            with mx.autograd.record():
                out = block(x, label)
            out.backward()
        results.append((out.asnumpy(), x.grad.asnumpy()))
    assert np.array_equal(results[0][0], results[1][0])
    assert np.array_equal(results[0][1], results[1][1])
    # the export still holds MXNet's ops
    ops = [n["op"] for n in json.loads(graph.symbol.tojson())["nodes"]]
    assert "log_softmax" in ops and "pick" in ops and "_log_softmax_pick" not in ops


def test_no_fusion_when_the_log_probabilities_are_used_elsewhere():
    class Both(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, label):
            logp = F.log_softmax(x)
            return F.pick(logp, label), logp

    graph, _, _ = _loss_graph(Both())
    assert [s[0].name for s in graph.steps] == ["log_softmax", "pick"]

    class Tempered(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x, label):
            return F.pick(F.log_softmax(x, temperature=2.0), label)

    graph, _, _ = _loss_graph(Tempered())
    assert [s[0].name for s in graph.steps] == ["log_softmax", "pick"]


def test_fused_graph_in_a_trained_network_matches_imperative():
    def train(hybrid):
        mx.random.seed(0)
        net = nn.HybridSequential()
        net.add(nn.Dense(8, activation="relu"), nn.Dense(3))
        net.initialize(mx.init.Xavier())
        loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
        if hybrid:
            net.hybridize()
            loss.hybridize()
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.5})
        rng = np.random.RandomState(0)
        x = mx.nd.array(rng.randn(12, 4))
        y = mx.nd.array(rng.randint(0, 3, 12))
        for _ in range(5):
            with mx.autograd.record():
                out = loss(net(x), y)
            out.backward()
            trainer.step(12)
        return [p.data().asnumpy() for p in net.collect_params().values()]

    for a, b in zip(train(False), train(True)):
        assert np.array_equal(a, b)
