"""Fused ops a hybridized graph runs in place of chains (operator/nn/fused.py): the
chain's numbers bit for bit, forward and backward (training and inference, numba on
and off), and the graph rewrite's rules."""
import json

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import batch_parts, nn
from mxlite.autograd import node_backward
from mxlite.operator import get_op
from mxlite.operator.nn import _conv_kernels, _fast, _fast_bn, _fast_direct
from conftest import needs_numba
from optable import row, row_tests

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


# -- BatchNorm -> [elemwise_add ->] relu ---------------------------------------------------

BN, ADD, ACT = get_op("BatchNorm"), get_op("elemwise_add"), get_op("Activation")
BN_RELU, BN_ADD_RELU = get_op("_contrib_BatchNormWithReLU"), get_op("_batch_norm_add_relu")


def _bn_args(shape, dtype, rng, axis=1):
    c = shape[axis]
    x = (rng.randn(*shape) * 2 + 0.3).astype(dtype)
    gamma, beta, mm = (rng.randn(c).astype(dtype) for _ in range(3))
    return [x, gamma, beta, mm, (rng.rand(c) + 0.5).astype(dtype)]


def _bn_chain(args, residual, gy, kw):
    """Outputs, updated moving statistics and input gradients of BatchNorm -> [add ->]
    relu, op by op through each op's own kernel and rule (raw arrays)."""
    args = [a.copy() for a in args]
    bp = BN.parse_params(kw)
    ap = ACT.parse_params(dict(act_type="relu"))
    ys = BN.compute(bp, np, *args)
    z = ys[0] if residual is None else ADD.compute(ADD.parse_params({}), np, residual, ys[0])
    out = ACT.compute(ap, np, z)
    gz = node_backward(ACT, ap, [z], [out], [gy], [True], CPU)[0]
    g_res = gz
    gb = gz
    if residual is not None:
        g_res, gb = node_backward(ADD, ADD.parse_params({}), [residual, ys[0]], [z], [gz],
                                  [True, True], CPU)
    grads = node_backward(BN, bp, args, list(ys), [gb, None, None], [True] * 3 + [False] * 2,
                          CPU)[:3]
    return [out, ys[1], ys[2], args[3], args[4]] + list(grads) + \
        ([] if residual is None else [g_res])


def _bn_fused(args, residual, gy, kw):
    args = [a.copy() for a in args]
    op = BN_RELU if residual is None else BN_ADD_RELU
    p = op.parse_params(kw)
    ins = args + ([] if residual is None else [residual])
    ys = op.compute(p, np, *ins)
    grads = node_backward(op, p, ins, list(ys), [gy, None, None],
                          [True] * 3 + [False] * 2 + [True] * (len(ins) - 5), CPU)
    return [ys[0], ys[1], ys[2], args[3], args[4]] + [g for g in grads if g is not None]


BN_CASES = [  # shape, dtype, params
    ((4, 6, 5, 7), np.float32, dict(fix_gamma=False, eps=1e-5)),
    ((3, 5, 9), np.float64, dict(fix_gamma=True)),
    ((8, 3), np.float32, dict(fix_gamma=False, momentum=0.7)),
    ((2, 4, 3, 3), np.float16, dict(fix_gamma=False)),
    ((2, 3, 4, 5), np.float32, dict(fix_gamma=False, axis=-1)),
]


@pytest.mark.parametrize("training", [False, True], ids=["infer", "train"])
@pytest.mark.parametrize("with_residual", [False, True], ids=["relu", "add_relu"])
@pytest.mark.parametrize("shape,dtype,kw", BN_CASES)
def test_bn_relu_ops_are_the_chain_bit_for_bit(shape, dtype, kw, with_residual, training,
                                              fast_kernels):
    rng = np.random.RandomState(3)
    args = _bn_args(shape, dtype, rng, kw.get("axis", 1))
    residual = rng.randn(*shape).astype(dtype) if with_residual else None
    gy = rng.randn(*shape).astype(dtype)
    gy.reshape(-1)[:2] = [-0.0, 0.0]
    args[0].reshape(-1)[:3] = [np.nan, -0.0, 0.0]      # relu's NaN and signed zeros
    with mx.autograd.train_mode() if training else mx.autograd.predict_mode():
        with np.errstate(invalid="ignore"):
            want = _bn_chain(args, residual, gy, kw)
            got = _bn_fused(args, residual, gy, kw)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g.view(np.uint8), w.view(np.uint8)), (g, w)


def test_bn_add_relu_residual_of_another_shape_is_elemwise_adds_error():
    args = _bn_args((2, 3, 4), np.float32, np.random.RandomState(0))
    with pytest.raises(mx.MXNetError, match="elemwise_add: inputs must have the same shape"):
        mx.nd._internal._batch_norm_add_relu(*[mx.nd.array(a) for a in args],
                                             mx.nd.ones((2, 3, 1)))


def _bn_add_relu_ref(x, gamma, beta, mm, mv, r):
    sh = (1, -1, 1)
    y = (x - mm.reshape(sh)) / np.sqrt(mv.reshape(sh) + 1e-3) * gamma.reshape(sh) + \
        beta.reshape(sh)
    return np.maximum(y + r, 0)


globals().update(row_tests([
    row("_batch_norm_add_relu", _bn_add_relu_ref,
        _bn_args((2, 3, 4), np.float64, np.random.RandomState(1)) +
        [np.random.RandomState(2).randn(2, 3, 4)], {"fix_gamma": False}, rtol32=1e-5,
        grad=()),   # its gradient: the chain's, bit for bit (above), checked numerically there
    row("_subsample", lambda x: x[:, :, ::2, ::3], [np.random.RandomState(3).randn(2, 3, 5, 7)],
        {"begin": (None,) * 4, "end": (None,) * 4, "step": (1, 1, 2, 3)}),
]))


class _Residual(mx.gluon.HybridBlock):
    """conv -> BN -> relu -> conv -> BN, + x, relu: ResNet's basic block."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.body = nn.HybridSequential()
            self.body.add(nn.Conv2D(6, 3, padding=1, use_bias=False), nn.BatchNorm(),
                          nn.Activation("relu"), nn.Conv2D(6, 3, padding=1, use_bias=False),
                          nn.BatchNorm())

    def hybrid_forward(self, F, x):
        return F.Activation(x + self.body(x), act_type="relu")


def _residual_net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, 3, padding=1), _Residual(), _Residual(), nn.GlobalAvgPool2D(),
            nn.Dense(4))
    return net


@pytest.mark.parametrize("training", [False, True], ids=["infer", "train"])
def test_residual_network_runs_fused_steps_with_the_chains_results(training, fast_kernels):
    def run(hybrid):
        mx.random.seed(0)
        net = _residual_net()
        net.initialize(mx.init.Xavier())
        if hybrid:
            net.hybridize()
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
        rng = np.random.RandomState(0)
        x = mx.nd.array(rng.randn(4, 3, 8, 8))
        y = mx.nd.array(rng.randint(0, 4, 4))
        outs = []
        for _ in range(3):
            if training:
                with mx.autograd.record():
                    out = loss(net(x), y)
                out.backward()
                trainer.step(4)
            else:
                out = net(x)
            outs.append(out.asnumpy())
        graph = net._cached_graph[0][1] if hybrid else None
        return outs + [p.data().asnumpy() for p in net.collect_params().values()], graph

    want, _ = run(False)
    got, graph = run(True)
    names = [s[0].name for s in graph.steps]
    chains = [s[1].chain.bn.name for s in graph.steps if s[0].name == "_conv_batch_norm"]
    assert chains == ["_contrib_BatchNormWithReLU", "_batch_norm_add_relu"] * 2
    assert "BatchNorm" not in names and "Activation" not in names
    for g, w in zip(got, want):
        assert np.array_equal(g, w)


@pytest.fixture
def two_threads():
    """Two threads whatever the machine's cores (a graph runs on parts of its batch
    only with more than one), the count restored after the test."""
    from mxlite import engine
    prev = engine.set_num_threads(2)
    yield
    engine.set_num_threads(prev)


class _Downsample(mx.gluon.HybridBlock):
    """ResNet-50's downsampling block, small: a strided 1x1 convolution first in the body
    and as the shortcut, both reading the block's input (and, ``also``, a strided 3x3
    one, its output added)."""

    def __init__(self, also=False, **kw):
        super().__init__(**kw)
        self.also = also
        with self.name_scope():
            self.body = nn.HybridSequential()
            self.body.add(nn.Conv2D(4, 1, strides=2, use_bias=False), nn.BatchNorm(),
                          nn.Activation("relu"), nn.Conv2D(6, 3, padding=1, use_bias=False),
                          nn.BatchNorm())
            self.short = nn.HybridSequential()
            self.short.add(nn.Conv2D(6, 1, strides=2, use_bias=False), nn.BatchNorm())
            if also:
                self.extra = nn.Conv2D(6, 3, strides=2, padding=1)

    def hybrid_forward(self, F, x):
        y = F.Activation(self.body(x) + self.short(x), act_type="relu")
        return y + self.extra(x) if self.also else y


@pytest.mark.parametrize("training", [False, True], ids=["infer", "train"])
@pytest.mark.parametrize("also", [False, True], ids=["shared", "read-elsewhere"])
def test_strided_1x1_convolutions_of_one_value_share_one_copy_of_its_strided_positions(
        training, also, fast_kernels, two_threads, monkeypatch):
    """The two strided 1x1 convolutions reading a downsampling block's input (and nothing
    else reading it) run at stride 1 on one copy of its strided positions: the outputs,
    gradients and trained weights of the graph without that copy, bit for bit, and the
    graph still runs on parts of its batch."""
    from mxlite.gluon import cached_graph
    monkeypatch.setattr(batch_parts, "MIN_STEP_VALUES", 0)

    def run(share):
        with monkeypatch.context() as patch:
            if not share:
                patch.setattr(cached_graph.CachedGraph, "_share_subsamples", lambda self: None)
            return steps()

    def steps():
        mx.random.seed(0)
        net = nn.HybridSequential()
        net.add(nn.Conv2D(5, 3, padding=1), _Downsample(also), nn.GlobalAvgPool2D(), nn.Dense(3))
        net.initialize(mx.init.Xavier())
        net.hybridize()
        trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        rng = np.random.RandomState(0)
        x = mx.nd.array(rng.randn(4, 3, 9, 9))
        outs = []
        for _ in range(3):
            x.attach_grad()
            with mx.autograd.record(train_mode=training):
                out = net(x)
            out.backward()
            trainer.step(4)
            outs += [out.asnumpy(), x.grad.asnumpy(), net(x).asnumpy(), net(x).asnumpy()]
        return outs + [p.data().asnumpy() for p in net.collect_params().values()], \
            net._cached_graph[0][1]

    want, plain = run(False)
    got, graph = run(True)
    subsamples = [s for s in graph.steps if s[0].name == "_subsample"]
    assert len(subsamples) == (0 if also else 1)
    if not also:
        assert tuple(subsamples[0][1].step) == (1, 1, 2, 2)
        readers = [s for s in graph.steps if subsamples[0][3] in s[2]]
        assert [tuple(s[1].chain.conv_p.stride) for s in readers] == [(1, 1)] * 2
        assert len(graph.steps) == len(plain.steps) + 1
    assert list(graph._batch_parts.values()) == [4]     # (its unrecorded calls ran on parts)
    for g, w in zip(got, want):
        assert np.array_equal(g.view(np.uint8), w.view(np.uint8))


def test_fused_steps_split_over_the_cpu_workers_give_the_serial_bits(fast_kernels, monkeypatch):
    from mxlite import engine
    # each op split over the workers (the graph's replay whole, not on parts of the batch)
    monkeypatch.setattr(batch_parts, "ENABLED", False)
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(engine, "PARALLEL_MIN_KERNEL_BYTES", 0)

    def run():
        mx.random.seed(0)
        net = _residual_net()
        net.initialize(mx.init.Xavier())
        net.hybridize()
        x = mx.nd.array(np.random.RandomState(0).randn(4, 3, 8, 8))
        x.attach_grad()
        with mx.autograd.record():
            y = net(x)
        y.backward()
        return [y.asnumpy(), x.grad.asnumpy(), net(x).asnumpy()] + \
            [p.data().asnumpy() for p in net.collect_params().values()]

    outs = []
    for threads in (1, 3):
        prev = engine.set_num_threads(threads)
        try:
            outs.append(run())
        finally:
            engine.set_num_threads(prev)
    for serial, split in zip(*outs):
        assert np.array_equal(serial, split)


def test_second_order_gradient_through_fused_steps_is_the_chains():
    rng = np.random.RandomState(5)
    x0 = mx.nd.array(rng.randn(3, 6, 5, 5))
    grads = []
    for hybrid in (False, True):
        mx.random.seed(1)
        net = _Residual()
        net.initialize(mx.init.Xavier())
        if hybrid:
            net.hybridize()
        x = x0.copy()
        x.attach_grad()
        with mx.autograd.record():
            g = mx.autograd.grad((net(x) ** 2).sum(), [x], create_graph=True)[0]
            z = (g * g).sum()
        z.backward()
        grads.append((g.asnumpy(), x.grad.asnumpy()))
    for a, b in zip(*grads):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_no_bn_fusion_where_a_value_is_read_elsewhere_or_not_relu():
    class Block(mx.gluon.HybridBlock):
        def __init__(self, variant, **kw):
            super().__init__(**kw)
            self.variant = variant
            with self.name_scope():
                self.bn = nn.BatchNorm()

        def hybrid_forward(self, F, x):
            y = self.bn(x)
            if self.variant == "bn_output":     # the BatchNorm output is also returned
                return F.relu(y), y
            if self.variant == "sum_twice":     # the sum feeds two steps
                s = x + y
                return F.relu(s) + s
            return F.Activation(y, act_type="tanh")

    for variant, want in [("bn_output", ["BatchNorm", "relu"]),
                          ("sum_twice", ["BatchNorm", "elemwise_add", "relu", "elemwise_add"]),
                          ("tanh", ["BatchNorm", "Activation"])]:
        block = Block(variant)
        block.initialize()
        block.hybridize()
        block(mx.nd.ones((2, 3, 4)))
        assert [s[0].name for s in block._cached_graph[0][1].steps] == want, variant


# -- 3x3 convolutions keeping their Winograd filters ------------------------------------

def _conv_ref(x, w, b):
    """3x3 cross-correlation with padding 1, plus bias."""
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    h, wd = x.shape[2:]
    win = np.stack([xp[:, :, i:i + h, j:j + wd] for i in range(3) for j in range(3)], -1)
    return np.einsum("nchwk,fck->nfhw", win, w.reshape(w.shape[0], w.shape[1], 9)) + \
        b.reshape(1, -1, 1, 1)


globals().update({"test_conv_kept_filters_" + k: v for k, v in row_tests([
    row("_conv_kept_filters", _conv_ref,
        [np.random.RandomState(3).randn(2, 3, 5, 4), np.random.RandomState(4).randn(4, 3, 3, 3),
         np.random.RandomState(5).randn(4)], {"kernel": (3, 3), "pad": (1, 1), "num_filter": 4},
        grad=(0, 1, 2)),
]).items()})


def _conv_net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, in_channels=3), nn.Activation("relu"),
            nn.Conv2D(8, 3, padding=1, in_channels=8, use_bias=False), nn.Conv2D(4, 1))
    return net


def test_a_graph_keeps_3x3_filters_while_the_weights_are_unchanged(fast_kernels, monkeypatch,
                                                                  tmp_path):
    made = []
    filters = _fast._filters
    monkeypatch.setattr(_fast, "_filters", lambda jit, w, *scheme: made.append(w.shape) or
                        filters(jit, w, *scheme))
    # the whole replay against the imperative run, bit for bit (a replay on parts of the
    # batch runs smaller products, which OpenBLAS may sum in another order)
    monkeypatch.setattr(batch_parts, "ENABLED", False)
    mx.random.seed(0)
    net = _conv_net()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).randn(2, 3, 10, 10))
    net(x)      # (the first call traces the graph)
    names = [s[0].name for s in net._cached_graph[0][1].steps]
    assert names == ["_conv_kept_filters", "Activation", "_conv_kept_filters", "Convolution"]
    winograd = fast_kernels != "numpy"
    for _ in range(2):      # seen once, then kept
        del made[:]
        net(x)
        assert len(made) == (2 if winograd else 0)
    params = list(net.collect_params().values())
    w0 = params[0]

    def fresh_result():
        """The imperative output of a network with the same parameter values."""
        twin = _conv_net()
        twin.initialize()
        for a, b in zip(twin.collect_params().values(), params):
            a.set_data(b.data())
        return twin(x).asnumpy()

    def check(what, transforms):
        del made[:]
        got = net(x).asnumpy()
        assert len(made) == (transforms if winograd else 0), what
        assert np.array_equal(got, fresh_result()), what

    check("a repeat call", 0)
    w0.set_data(w0.data() * 0.5)
    check("set_data", 1)
    w0.data()[:] = w0.data() + 0.25
    check("an in-place write", 1)
    net.save_parameters(str(tmp_path / "a.params"))
    w0.set_data(w0.data() * 3)
    net(x)
    net.load_parameters(str(tmp_path / "a.params"))
    check("load_parameters", 2)     # both weights: every array is written
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with mx.autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(2)
    check("a trainer step", 2)
    net.initialize(mx.init.Xavier(), force_reinit=True)
    check("initialize(force_reinit=True)", 2)
    net(x)
    check("a repeat call after a change", 0)


def test_a_graph_run_once_keeps_no_filters(fast_kernels):
    # a child block's graph runs while its parent traces, then never again: it holds none
    net = _conv_net()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).randn(2, 3, 10, 10))

    def kept():
        graph = net._cached_graph[0][1]
        return [s[1].kept.kept.held for s in graph.steps if s[0].name == "_conv_kept_filters"]
    net(x)      # traces
    net(x)      # the graph's first run
    assert len(kept()) == 2 and all(h is None or h[3] is None for h in kept())
    net(x)
    if fast_kernels == "numpy":     # no Winograd: nothing to keep
        assert kept() == [None, None]
    else:
        assert all(h[3] is not None for h in kept())


def test_a_recorded_call_transforms_the_filters_each_time(fast_kernels, monkeypatch):
    made = []
    filters = _fast._filters
    monkeypatch.setattr(_fast, "_filters", lambda jit, w, *scheme: made.append(w.shape) or
                        filters(jit, w, *scheme))
    net = _conv_net()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).randn(2, 3, 10, 10))
    for _ in range(2):
        with mx.autograd.record():
            net(x)
    n_convs = 2 if fast_kernels != "numpy" else 0
    assert len(made) == 2 * n_convs


@needs_numba
def test_kept_filters_run_winograd_on_smaller_maps(monkeypatch):
    """With the filters' transform kept, Winograd pays from fewer tiles (MIN_TILES_KEPT):
    a batch-1 10x10 map (25 tiles) runs it in a hybridized graph's inference, not in a
    Convolution op's call, with that call's results to float32 round-off."""
    assert _fast.MIN_TILES_KEPT <= 25 < _fast.MIN_TILES
    # (the direct kernel, which runs maps this small before Winograd, set aside)
    monkeypatch.setattr(_fast_direct, "MAX_POSITIONS_3X3", 0)
    made = []
    filters = _fast._filters
    monkeypatch.setattr(_fast, "_filters", lambda jit, w, *scheme: made.append(w.shape) or
                        filters(jit, w, *scheme))
    net = nn.Conv2D(16, 3, padding=1, in_channels=16)
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).randn(1, 16, 10, 10))
    want = mx.nd.Convolution(x, net.weight.data(), net.bias.data(), kernel=(3, 3), pad=(1, 1),
                             num_filter=16).asnumpy()
    assert made == []
    net.hybridize()
    for _ in range(4):
        got = net(x).asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert len(made) == 2      # the second call made the transform, kept from then on


# -- Convolution -> BatchNorm [-> elemwise_add] [-> relu] as one step --------------------

CONV_BN = get_op("_conv_batch_norm")
KEPT_CONV = get_op("_conv_kept_filters")


def _conv_bn_chain(fused, conv_p, bn, bn_p, ins, gy, training, recorded):
    """Outputs, updated moving statistics and (where ``recorded``: the forward under
    ``autograd.record``) input gradients of the chain, by the fused step (``fused``) or by
    the convolution's and the BatchNorm flavour's own kernels and rules."""
    ins = [a.copy() for a in ins]
    need = [True] * 4 + [False] * 2 + [True] * (len(ins) - 6)
    conv_ins = ins[:2] + ([ins[-1]] if not conv_p.no_bias else [])
    bn_rest = ins[2:len(ins) - (not conv_p.no_bias)]
    mode = mx.autograd.train_mode() if training else mx.autograd.predict_mode()
    with mx.autograd.record(train_mode=training) if recorded else mode:
        if fused:
            from mxlite.operator.nn.fused import ConvBatchNorm
            p = CONV_BN.parse_params(dict(chain=ConvBatchNorm(KEPT_CONV, conv_p, bn, bn_p)))
            ys = CONV_BN.compute(p, np, *ins)
        else:
            z = KEPT_CONV.compute(conv_p, np, *conv_ins)
            bn_ins = [z[0]] + bn_rest
            ys = bn.compute(bn_p, np, *bn_ins)
    outs = list(ys[:3]) + ins[4:6]
    if not recorded:
        return outs
    with mode:
        if fused:
            grads = node_backward(CONV_BN, p, ins, list(ys), [gy] + [None] * 4, need, CPU)
            return outs + [g for g in grads if g is not None]
        gb = node_backward(bn, bn_p, bn_ins, list(ys), [gy, None, None],
                           [True] + need[2:len(bn_ins) + 1], CPU)
        gc = node_backward(KEPT_CONV, conv_p, conv_ins, list(z), [gb[0], None],
                           [True] * len(conv_ins), CPU)
    return outs + gc[:2] + [g for g in gb[1:] if g is not None] + gc[2:]


def _conv_bn_relu_ref(x, w, gamma, beta, mm, mv):
    z = _conv_ref(x, w, np.zeros(w.shape[0], x.dtype))
    sh = (1, -1, 1, 1)
    return np.maximum((z - mm.reshape(sh)) / np.sqrt(mv.reshape(sh) + 1e-3) *
                      gamma.reshape(sh) + beta.reshape(sh), 0)


def _conv_bn_row():
    from mxlite.operator.nn.fused import ConvBatchNorm
    rng = np.random.RandomState(6)
    chain = ConvBatchNorm(KEPT_CONV, KEPT_CONV.parse_params(dict(
        kernel=(3, 3), pad=(1, 1), num_filter=4, no_bias=True)), get_op(
        "_contrib_BatchNormWithReLU"), get_op("BatchNorm").parse_params(dict(fix_gamma=False,
                                                                  use_global_stats=True)))
    return row("_conv_batch_norm", _conv_bn_relu_ref,
               [rng.randn(2, 3, 5, 4), rng.randn(4, 3, 3, 3)] + _bn_args((2, 4), np.float64, rng)[1:],
               {"chain": chain}, grad=(0, 1, 2, 3), rtol32=1e-5)


globals().update({"test_conv_batch_norm_" + k: v for k, v in row_tests([_conv_bn_row()]).items()})


CONV_GEOMETRIES = {     # Winograd's, a 1x1 convolution's, the blocked strided one's,
    "3x3": dict(kernel=(3, 3), pad=(1, 1)), "1x1": dict(kernel=(1, 1)),    # im2col's
    "1x1s2": dict(kernel=(1, 1), stride=(2, 2)),
    "3x3s2": dict(kernel=(3, 3), pad=(1, 1), stride=(2, 2)),
    "5x5": dict(kernel=(5, 5), pad=(2, 2)),
    "3x3s2-cols": dict(kernel=(3, 3), pad=(1, 1), stride=(2, 2))}


@pytest.mark.parametrize("bias", [False, True], ids=["", "bias"])
@pytest.mark.parametrize("training", [False, True], ids=["infer", "train"])
@pytest.mark.parametrize("bn_name", ["BatchNorm", "_contrib_BatchNormWithReLU",
                                     "_batch_norm_add_relu"])
@pytest.mark.parametrize("shape,dtype,kw", [
    ((2, 5, 7, 6), np.float32, dict(fix_gamma=False, eps=1e-5)),
    ((1, 8, 10, 10), np.float64, dict(fix_gamma=True)),
    ((3, 4, 5, 5), np.float32, dict(fix_gamma=False, use_global_stats=True)),
    ((2, 3, 4, 4), np.float16, dict(fix_gamma=False)),
])
@pytest.mark.parametrize("geometry", list(CONV_GEOMETRIES))
def test_conv_batch_norm_is_the_chain_bit_for_bit(geometry, shape, dtype, kw, bn_name, training,
                                                  bias, fast_kernels, monkeypatch):
    """Bit for bit, but for the output of an inference with a bias (taken into
    BatchNorm's mean): float32 round-off."""
    monkeypatch.setattr(_conv_kernels, "PER_SAMPLE_POSITIONS", 0)     # blocked on small maps
    if geometry.endswith("cols"):       # im2col columns as one block or channels-last
        monkeypatch.setattr(_conv_kernels, "BLOCKED_MAX_INNER", 0)
        monkeypatch.setattr(_conv_kernels, "PER_SAMPLE_POSITIONS", 1 << 30)
        monkeypatch.setattr(_conv_kernels, "PER_SAMPLE_NARROW_POSITIONS", 1 << 30)
    rng = np.random.RandomState(4)
    f = 6
    conv_p = KEPT_CONV.parse_params(dict(CONV_GEOMETRIES[geometry], num_filter=f,
                                         no_bias=not bias))
    bn = get_op(bn_name)
    bn_p = bn.parse_params(kw)
    x = rng.randn(*shape).astype(dtype)
    w = (rng.randn(f, shape[1], *conv_p.kernel) * 0.3).astype(dtype)
    out = tuple((m + 2 * q - k) // s + 1 for m, q, k, s in zip(
        shape[2:], conv_p.pad or (0, 0), conv_p.kernel, conv_p.stride or (1, 1)))
    stats = _bn_args((shape[0], f) + out, dtype, rng)[1:]
    ins = [x, w] + stats
    if bn.name == "_batch_norm_add_relu":
        ins.append(rng.randn(shape[0], f, *out).astype(dtype))
    if bias:
        ins.append(rng.randn(f).astype(dtype))
    gy = rng.randn(shape[0], f, *out).astype(dtype)
    for recorded in (False, True):
        want = _conv_bn_chain(False, conv_p, bn, bn_p, ins, gy, training, recorded)
        got = _conv_bn_chain(True, conv_p, bn, bn_p, ins, gy, training, recorded)
        assert len(got) == len(want) == 5 + 4 * recorded + (len(ins) - 6) * recorded
        folded = bias and not recorded and (kw.get("use_global_stats") or not training)
        for k, (g, w) in enumerate(zip(got, want)):
            assert g.dtype == w.dtype and g.shape == w.shape, k
            g, w = np.ascontiguousarray(g), np.ascontiguousarray(w)   # (a gradient may be a view)
            if k == 0 and folded and dtype != np.float16:
                tol = 1e-5 if dtype == np.float32 else 1e-12
                np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
            else:
                assert np.array_equal(g.view(np.uint8), w.view(np.uint8)), (k, g, w)


@pytest.mark.parametrize("geometry", ["1x1s2", "3x3s2"])
def test_a_conv_batch_norm_step_on_maps_of_another_size_is_the_chain(geometry, fast_kernels):
    """A step keeps its geometry per map size (``ConvBatchNorm.geometry``): the same step
    on maps of two sizes, in turn, gives the chain's outputs for each."""
    from mxlite.operator.nn.fused import ConvBatchNorm
    rng = np.random.RandomState(8)
    conv_p = KEPT_CONV.parse_params(dict(CONV_GEOMETRIES[geometry], num_filter=8, no_bias=True))
    bn = get_op("_contrib_BatchNormWithReLU")
    bn_p = bn.parse_params(dict(fix_gamma=False))
    p = CONV_BN.parse_params(dict(chain=ConvBatchNorm(KEPT_CONV, conv_p, bn, bn_p)))
    w = rng.randn(8, 3, *conv_p.kernel).astype(np.float32)
    stats = _bn_args((1, 8, 1, 1), np.float32, rng)[1:]
    for size in (9, 6, 9):
        x = rng.randn(1, 3, size, size).astype(np.float32)
        got = CONV_BN.compute(p, np, x, w, *stats)[0]
        z = KEPT_CONV.compute(conv_p, np, x, w)[0]
        want = bn.compute(bn_p, np, z, *stats)[0]
        assert got.shape == want.shape == (1, 8, (size + 1) // 2, (size + 1) // 2)
        assert np.array_equal(got, want)


@pytest.mark.parametrize("geometry", ["3x3", "1x1", "3x3s2"])
def test_a_conv_batch_norm_step_follows_new_parameter_arrays(geometry, fast_kernels):
    """A step checks its arrays once per data shape (``ConvBatchNorm.fitting``), holding
    the parameters' arrays: the same step given new arrays (new values, another dtype,
    a bias of another step's) gives the chain's outputs for each."""
    from mxlite.operator.nn.fused import ConvBatchNorm
    rng = np.random.RandomState(9)
    conv_p = KEPT_CONV.parse_params(dict(CONV_GEOMETRIES[geometry], num_filter=8, no_bias=True))
    bn = get_op("_contrib_BatchNormWithReLU")
    bn_p = bn.parse_params(dict(fix_gamma=False))
    p = CONV_BN.parse_params(dict(chain=ConvBatchNorm(KEPT_CONV, conv_p, bn, bn_p)))
    x = rng.randn(2, 8, 10, 10).astype(np.float32)
    for dtype in (np.float32, np.float32, np.float64, np.float32):
        w = rng.randn(8, 8, *conv_p.kernel).astype(dtype)
        stats = [a.astype(dtype) for a in _bn_args((1, 8, 1, 1), np.float32, rng)[1:]]
        for _ in range(2):
            got = CONV_BN.compute(p, np, x.astype(dtype), w, *stats)[0]
            z = KEPT_CONV.compute(conv_p, np, x.astype(dtype), w)[0]
            want = bn.compute(bn_p, np, z, *stats)[0]
            assert got.dtype == want.dtype == dtype
            assert np.array_equal(got, want)


@needs_numba
def test_conv_batch_norm_inference_runs_winograd_with_the_affine_inside(monkeypatch):
    """In inference the Winograd kernel applies BatchNorm itself: no BatchNorm pass runs."""
    monkeypatch.setattr(_fast, "MIN_TILES", 0)
    monkeypatch.setattr(_fast, "MIN_CHANNELS", 0)
    passes = []
    apply = _fast_bn.batch_norm_apply
    monkeypatch.setattr(_fast_bn, "batch_norm_apply", lambda *a, **k: passes.append(1) or
                        apply(*a, **k))
    net = _Residual()
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).randn(2, 6, 9, 9))
    want = net(x).asnumpy()
    assert passes
    net.hybridize()
    net(x)
    del passes[:]
    assert np.array_equal(net(x).asnumpy(), want)
    assert passes == []


@needs_numba
def test_1x1_and_strided_convolutions_apply_batch_norm_as_they_make_their_output(
        monkeypatch):
    """ResNet's stem (7x7, stride 2), its 1x1 convolutions (a downsampling one without a
    bias) and their BatchNorm run as one step each; in inference the convolution's
    kernel applies BatchNorm to each part of its output: the imperative values, no
    BatchNorm pass of its own."""
    monkeypatch.setattr(_conv_kernels, "PER_SAMPLE_POSITIONS", 0)
    passes = []
    apply = _fast_bn.batch_norm_apply
    monkeypatch.setattr(_fast_bn, "batch_norm_apply", lambda *a, **k: passes.append(1) or
                        apply(*a, **k))
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 7, strides=2, padding=3, use_bias=False), nn.BatchNorm(),
            nn.Activation("relu"), nn.Conv2D(6, 1, strides=2, use_bias=False), nn.BatchNorm(),
            nn.Conv2D(5, 1), nn.BatchNorm(), nn.Activation("relu"))
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).randn(3, 3, 20, 20))
    net(x)
    for p in net.collect_params().values():     # statistics away from 0 and 1
        p.set_data(mx.nd.array(np.random.RandomState(2).rand(*p.shape) + 0.5))
    with mx.autograd.record(train_mode=False):    # the layers one by one (unrecorded, a
        want = net(x).asnumpy()                    # HybridSequential fuses them too)
    net.hybridize()
    net(x)
    del passes[:]
    got = net(x).asnumpy()
    assert passes == []
    steps = net._cached_graph[0][1].steps
    assert [s[0].name for s in steps] == ["_conv_batch_norm"] * 3
    assert [s[1].chain.bias for s in steps] == [False, False, True]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)   # (the bias: round-off)
    with mx.autograd.record(train_mode=False):    # recorded: the chain's kernels
        got = net(x).asnumpy()
    assert passes
    assert np.array_equal(got, want)


def test_conv_batch_norm_steps_follow_every_parameter_change(fast_kernels, tmp_path,
                                                            monkeypatch):
    monkeypatch.setattr(batch_parts, "ENABLED", False)      # (bits: as the test above)
    net = _Residual()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    twin = _Residual()      # imperative, with the same values
    twin.initialize()
    x = mx.nd.array(np.random.RandomState(0).randn(2, 6, 9, 9))
    net(x), twin(x)     # (deferred initialisation)
    params = list(net.collect_params().values())
    by_name = {p.name.split("_", 2)[2]: p for p in params}

    def check(what):
        for a, b in zip(twin.collect_params().values(), params):
            a.set_data(b.data())
        for _ in range(3):      # the graph's first run, then kept filters
            got = net(x).asnumpy()
        assert np.array_equal(got, twin(x).asnumpy()), what

    check("initial")
    gamma = by_name["batchnorm0_gamma"]
    gamma.set_data(gamma.data() * 1.5 + 0.1)
    check("set_data on gamma")
    by_name["batchnorm1_running_var"].data()[:] += 0.5
    by_name["batchnorm0_running_mean"].data()[:] -= 0.25
    check("in-place writes to the moving statistics")
    net.save_parameters(str(tmp_path / "a.params"))
    by_name["batchnorm1_beta"].set_data(by_name["batchnorm1_beta"].data() + 2)
    net(x)
    net.load_parameters(str(tmp_path / "a.params"))
    check("load_parameters")
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with mx.autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(2)
    check("a trainer step (and the moving statistics it updated)")


@pytest.mark.parametrize("inference", [False, True], ids=["f22", "f24"])
@pytest.mark.parametrize("shape,block_tiles,kind", [
    ((3, 8, 13, 11), 12, "rows"),       # blocks of tile rows of one sample; odd edges
    ((5, 8, 6, 6), 20, "samples"),      # blocks of whole samples
])
@needs_numba
def test_winograd_blocks_give_the_whole_products_results(shape, block_tiles, kind, inference,
                                                         monkeypatch):
    """An inference runs the Winograd convolution block by block (``_fast._blocked``):
    the whole products' results to float32 round-off, the same bits on any thread count,
    BatchNorm's epilogue included; by F(2x2, 3x3) and by F(2x4, 3x3)."""
    from mxlite import engine
    for name, value in (("MIN_TILES", 0), ("MIN_CHANNELS", 0), ("BLOCKED_MIN_BYTES", 0),
                        ("BLOCK_BYTES", 0), ("MIN_BLOCK_TILES", block_tiles // (1 + inference))):
        monkeypatch.setattr(_fast, name, value)
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 0)
    rng = np.random.RandomState(8)
    n, c, h, wd = shape
    f = 6
    k, mw = (_fast._F24 if inference else _fast._F22)[:2]
    th, tw = (h + 1) // 2, (wd + mw - 1) // mw
    blocks = _fast._blocks(n, th, tw, c, f, 4, k)
    whole_rows = [b[2:] == (0, th) for b in blocks]
    assert len(blocks) >= 3 and (not any(whole_rows) if kind == "rows" else all(whole_rows))
    x = rng.randn(*shape).astype(np.float32)
    w = rng.randn(f, c, 3, 3).astype(np.float32)
    mean, scale, shift = (rng.randn(f).astype(np.float32) for _ in range(3))
    r = rng.randn(n, f, h, wd).astype(np.float32)
    got = []
    for threads in (1, 2):
        prev = engine.set_num_threads(threads)
        try:
            for epi in (None, (mean, scale, shift, r, True)):
                got.append(_fast.conv3x3(x, w, (1, 1), (1, 1), (1, 1), 1, (h, wd),
                                         epilogue=epi, inference=inference)[0])
            whole = _fast.conv3x3(x, w, (1, 1), (1, 1), (1, 1), 1, (h, wd), keep_tiles=True)[0]
        finally:
            engine.set_num_threads(prev)
    assert np.array_equal(got[0], got[2]) and np.array_equal(got[1], got[3])
    sh = (1, -1, 1, 1)
    want = _conv_ref(x, w, np.zeros(f, np.float32))
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(whole, want, rtol=1e-5, atol=1e-5)
    bn = (got[0] - mean.reshape(sh)) * scale.reshape(sh) + shift.reshape(sh)
    assert np.array_equal(got[1], np.maximum(bn + r, 0))


def test_a_convolution_with_bias_feeding_batch_norm_runs_as_one_step(fast_kernels):
    """ResNet-50 v1's 1x1 convolutions have a bias: in inference it is taken into
    BatchNorm's mean (float32 round-off of the chain); in training, the chain's bits."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 1, in_channels=4), nn.BatchNorm(in_channels=8), nn.Activation("relu"),
            nn.Conv2D(6, 3, padding=1, in_channels=8), nn.BatchNorm(in_channels=6))
    net.initialize(mx.init.Xavier())
    for p in net.collect_params().values():     # a bias, statistics away from 0 and 1
        p.set_data(mx.nd.array(np.random.RandomState(1).rand(*p.shape) + 0.5))
    twin = nn.HybridSequential()
    twin.add(nn.Conv2D(8, 1, in_channels=4), nn.BatchNorm(in_channels=8),
             nn.Activation("relu"), nn.Conv2D(6, 3, padding=1, in_channels=8),
             nn.BatchNorm(in_channels=6))
    twin.initialize()
    for a, b in zip(twin.collect_params().values(), net.collect_params().values()):
        a.set_data(b.data())
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).randn(2, 4, 7, 7))
    for _ in range(3):
        got = net(x).asnumpy()
    np.testing.assert_allclose(got, twin(x).asnumpy(), rtol=1e-5, atol=1e-5)
    steps = net._cached_graph[0][1].steps
    assert [s[0].name for s in steps] == ["_conv_batch_norm"] * 2
    assert [s[1].chain.bias for s in steps] == [True, True]
    with mx.autograd.record():
        got = net(x)
        want = twin(x)
    assert np.array_equal(got.asnumpy(), want.asnumpy())
