"""hybridize (trace once, replay), export, SymbolBlock and imports of MXNet models."""
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite import gluon
from mxlite.base import MXNetError
from mxlite.gluon import nn
from conftest import REF

FORMATS = os.path.join(REF, "formats")


def _layers():
    """(name, factory, input shape) for every nn layer that hybridizes."""
    return [
        ("Dense", lambda: nn.Dense(4, activation="tanh"), (3, 5)),
        ("Dense_noflatten", lambda: nn.Dense(4, flatten=False), (2, 3, 5)),
        ("Conv1D", lambda: nn.Conv1D(4, 3, padding=1), (2, 3, 7)),
        ("Conv2D", lambda: nn.Conv2D(4, (3, 3), strides=2, activation="relu"), (2, 3, 7, 7)),
        ("Conv3D", lambda: nn.Conv3D(2, 2), (1, 2, 4, 4, 4)),
        ("Conv2DTranspose", lambda: nn.Conv2DTranspose(3, 3, strides=2), (2, 2, 4, 4)),
        ("MaxPool2D", lambda: nn.MaxPool2D(), (2, 3, 6, 6)),
        ("AvgPool1D", lambda: nn.AvgPool1D(3, 2), (2, 3, 7)),
        ("GlobalAvgPool2D", lambda: nn.GlobalAvgPool2D(), (2, 3, 4, 4)),
        ("BatchNorm", lambda: nn.BatchNorm(), (4, 3, 2, 2)),
        ("LayerNorm", lambda: nn.LayerNorm(), (3, 6)),
        ("InstanceNorm", lambda: nn.InstanceNorm(), (2, 3, 5)),
        ("GroupNorm", lambda: nn.GroupNorm(num_groups=2), (2, 4, 3)),
        ("Embedding", lambda: nn.Embedding(10, 4), None),
        ("Flatten", lambda: nn.Flatten(), (2, 3, 4)),
        ("Activation", lambda: nn.Activation("softrelu"), (3, 4)),
        ("LeakyReLU", lambda: nn.LeakyReLU(0.1), (3, 4)),
        ("PReLU", lambda: nn.PReLU(), (3, 4)),
        ("ELU", lambda: nn.ELU(), (3, 4)),
        ("SELU", lambda: nn.SELU(), (3, 4)),
        ("Swish", lambda: nn.Swish(), (3, 4)),
        ("GELU", lambda: nn.GELU(), (3, 4)),
        ("ReflectionPad2D", lambda: nn.ReflectionPad2D(1), (1, 2, 3, 3)),
        ("HybridLambda", lambda: nn.HybridLambda(lambda F, x: F.sigmoid(x) * 2), (3, 4)),
        ("Identity", lambda: nn.Identity(), (3, 4)),
        ("LSTM", lambda: gluon.rnn.LSTM(5, num_layers=2), (4, 2, 3)),
        ("GRU_bidirectional", lambda: gluon.rnn.GRU(4, bidirectional=True), (4, 2, 3)),
        ("RNN_relu", lambda: gluon.rnn.RNN(3, activation="relu", layout="NTC"), (2, 4, 3)),
    ]


def _run(net, x, train):
    params = [p for p in net.collect_params().values() if p.grad_req != "null"]
    x = x.copy()
    x.attach_grad()
    with mx.autograd.record(train_mode=train):
        y = net(x)
        loss = (y * y).sum()
    loss.backward()
    grads = [p.grad().asnumpy().copy() for p in params]
    return y.asnumpy(), x.grad.asnumpy(), grads


@pytest.mark.parametrize("name, factory, shape", _layers(), ids=[r[0] for r in _layers()])
def test_hybridized_layer_matches_imperative(name, factory, shape):
    rng = np.random.RandomState(0)
    net = nn.HybridSequential()
    net.add(factory())
    net.initialize(mx.init.Xavier())
    if shape is None:
        x = mx.nd.array(rng.randint(0, 10, (3, 4)))
    else:
        x = mx.nd.array(rng.uniform(-1, 1, shape))
    for train in (False, True):
        want = _run(net, x, train)
        net.hybridize()
        got = _run(net, x, train)
        net.hybridize(False)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-7)
        if shape is not None:
            np.testing.assert_allclose(got[1], want[1], rtol=1e-6, atol=1e-7)
        for g, w in zip(got[2], want[2]):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def test_trace_once_then_replay():
    calls = []

    class Net(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.fc = nn.Dense(3)

        def hybrid_forward(self, F, x):
            calls.append(F.__name__)
            return F.relu(self.fc(x))

    net = Net()
    net.initialize()
    net.hybridize()
    x = mx.nd.ones((2, 4))
    for _ in range(3):
        net(x)
    # the first call resolves deferred shapes imperatively, the second traces
    assert calls == ["mxlite.nd", "mxlite.symbol"]
    net(mx.nd.ones((5, 4)))             # a new batch size needs no new trace
    assert len(calls) == 2


def test_hybridized_inference_drops_each_value_after_its_last_use(monkeypatch):
    # A chain of 8 ops: an unrecorded replay keeps only the values still to be read
    # (as the imperative run does), not every intermediate until the call returns;
    # a recorded one keeps what its backward reads.
    import weakref
    from mxlite.gluon import batch_parts, cached_graph

    class Chain(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            for _ in range(8):
                x = F.relu(x * 2 - 1)
            return x

    alive = []
    made = []
    real = cached_graph.run_step

    def counting(op, p, xp, args):
        alive.append(sum(r() is not None for r in made))
        ys = real(op, p, xp, args)
        for y in (ys if type(ys) is tuple else (ys,)):
            made.append(weakref.ref(y))
        return ys

    net = Chain()
    net.hybridize()
    monkeypatch.setattr(batch_parts, "ENABLED", False)     # one replay, its steps counted
    x = mx.nd.array(np.linspace(-1, 1, 24).reshape(4, 6))
    want = Chain()(x).asnumpy()
    net(x)
    monkeypatch.setattr(cached_graph, "run_step", counting)
    got = net(x).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert len(made) == 24 and max(alive) <= 2
    alive.clear()
    made.clear()
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    y.backward()
    assert max(alive) >= 20     # the tape holds the step results for the backward
    xr = mx.nd.array(x.asnumpy())
    xr.attach_grad()
    with mx.autograd.record():
        yr = Chain()(xr)
    yr.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), xr.grad.asnumpy(), rtol=1e-6)


class _ScaleChain(gluon.HybridBlock):
    """x times 8 weights of x's size, one after another: each step's backward makes a
    weight gradient, which the backward holds until it ends."""

    def __init__(self, size, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            for k in range(8):
                setattr(self, "w%d" % k, self.params.get("w%d" % k, shape=(size,),
                                                          init=mx.init.One()))

    def hybrid_forward(self, F, x, **w):
        for k in range(8):
            x = F.broadcast_mul(x, w["w%d" % k])
        return x


@pytest.mark.parametrize("hybrid", [False, True])
def test_backward_frees_the_tape_step_by_step(hybrid):
    # retain_graph=False: each step's saved values go once its rule ran, so the values
    # the forward saved make room for the weight gradients as they come. Peak memory of
    # the backward, counted in arrays of the chain's size (the 8 intermediates saved, 8
    # weight gradients made): about 5 when freeing, 11 when retaining.
    import tracemalloc
    size = 1 << 16

    def backward_peak(retain):
        net = _ScaleChain(size)
        net.initialize()
        if hybrid:
            net.hybridize()
        x = mx.nd.ones((size,))
        net(x)
        tracemalloc.start()
        try:
            with mx.autograd.record():
                y = net(x)
            tracemalloc.reset_peak()
            start = tracemalloc.get_traced_memory()[0]
            y.backward(retain_graph=retain)
            return (tracemalloc.get_traced_memory()[1] - start) / (4 * size)
        finally:
            tracemalloc.stop()

    freeing, retaining = backward_peak(False), backward_peak(True)
    assert freeing < 7, freeing
    assert retaining > freeing + 4, (retaining, freeing)


@pytest.mark.parametrize("hybrid", [False, True])
def test_second_backward_through_a_block_needs_retain_graph(hybrid):
    net = nn.Dense(3, in_units=4)
    net.initialize()
    if hybrid:
        net.hybridize()
    x = mx.nd.array(np.arange(8.0).reshape(2, 4))
    net(x)
    with mx.autograd.record():
        y = net(x)
    y.backward(retain_graph=True)
    first = net.weight.grad().asnumpy()
    y.backward()
    np.testing.assert_allclose(net.weight.grad().asnumpy(), first)
    np.testing.assert_allclose(first, np.tile(x.asnumpy().sum(axis=0), (3, 1)))
    with pytest.raises(MXNetError, match="retain_graph=True"):
        y.backward()


def test_graph_gradient_on_ndarrays_takes_raw_or_ndarray_output_gradients():
    # The recorded form of a hybridized graph's rule (its inputs NDArrays) gives the
    # same gradients whether the output gradients come as NDArrays or raw arrays
    # (it skips the steps no gradient reaches without comparing arrays to None).
    from mxlite.autograd import node_backward
    net = nn.HybridSequential()
    net.add(nn.Dense(4, in_units=3), nn.Dense(2, in_units=4))
    net.initialize()
    net.hybridize()
    x = mx.nd.array(np.linspace(-1, 1, 6).reshape(2, 3))
    net(x)
    with mx.autograd.record():
        y = net(x)
    node = y._entry[0]
    gy = np.array([[1, -2], [3, 0.5]], np.float32)
    results = []
    for g in (mx.nd.array(gy), gy):
        xs = [mx.nd.array(a) for a in node.xdata]
        for a in xs[1:]:
            a.attach_grad()
        gxs = node_backward(node.op, node.p, xs, [mx.nd.array(node.ydata[0])], [g],
                            [False] + [True] * (len(xs) - 1), x.context)
        results.append([None if a is None else getattr(a, "asnumpy", lambda: a)()
                        for a in gxs])
    for a, b in zip(*results):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    bias = [np.asarray(a) for a in results[1] if a is not None and np.shape(a) == (2,)]
    np.testing.assert_allclose(bias[0], gy.sum(axis=0), rtol=1e-6)


class _EmbedThenDense(nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 4)
        self.fc = nn.Dense(3)

    def hybrid_forward(self, F, idx, x):
        return self.fc(F.concat(self.emb(idx).reshape((0, -1)), x, dim=1))


def test_graph_with_integer_first_input_runs_its_plain_backward(monkeypatch):
    # An integer first input (Embedding indices) must not turn the graph's ordinary
    # backward into its recorded form (each step re-recorded): its steps wrap integer
    # data themselves. The gradients are the imperative ones.
    from mxlite.gluon import cached_graph
    grads = []
    for hybrid in (False, True):
        mx.random.seed(0)
        net = _EmbedThenDense()
        net.initialize()
        if hybrid:
            net.hybridize()
            monkeypatch.setattr(cached_graph.CachedGraph, "_rerecord", None)
        idx = mx.nd.array([[1, 2], [3, 1]], dtype="int32")
        x = mx.nd.array(np.linspace(-1, 1, 10).reshape(2, 5))
        x.attach_grad()
        with mx.autograd.record():
            y = net(idx, x)
            z = y * y
        z.backward()
        grads.append([net.emb.weight.grad().asnumpy(), net.fc.weight.grad().asnumpy(),
                      x.grad.asnumpy()])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7)
    assert np.abs(grads[1][0]).sum() > 0


def test_untraceable_block_warns_once_and_runs():
    class ShapeReader(gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x * x.shape[0]

    net = ShapeReader()
    net.hybridize()
    with pytest.warns(UserWarning, match="cannot be hybridized"):
        y = net(mx.nd.ones((2,)))
    assert y.asnumpy().tolist() == [2, 2]
    y = net(mx.nd.ones((3,)))               # no second warning (filterwarnings=error)
    assert y.asnumpy().tolist() == [3, 3, 3]


def test_multiple_inputs_and_outputs():
    class Two(gluon.HybridBlock):
        def hybrid_forward(self, F, a, b):
            return a + b, [a * b, F.relu(a - b)]

    net = Two()
    net.hybridize()
    a, b = mx.nd.array([1.0, -2.0]), mx.nd.array([3.0, 4.0])
    for _ in range(2):
        s, (p, r) = net(a, b)
    assert s.asnumpy().tolist() == [4, 2]
    assert p.asnumpy().tolist() == [3, -8]
    assert r.asnumpy().tolist() == [0, 0]


def _cnn():
    net = nn.HybridSequential(prefix="cnn_")
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                nn.MaxPool2D(), nn.Flatten(), nn.Dense(8, activation="relu"), nn.Dropout(0.3),
                nn.Dense(3))
    return net


def test_export_then_imports_round_trip(tmp_path):
    net = _cnn()
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(1).randn(2, 3, 8, 8))
    with pytest.raises(RuntimeError, match="hybridize"):
        net.export(str(tmp_path / "none"))
    net.hybridize()
    want = net(x).asnumpy()
    sym_file, param_file = net.export(str(tmp_path / "cnn"), epoch=7)
    assert param_file.endswith("cnn-0007.params")
    saved = mx.nd.load(param_file)
    assert "arg:cnn_conv0_weight" in saved and "aux:cnn_batchnorm0_running_mean" in saved
    with open(sym_file) as f:
        graph = json.load(f)
    assert graph["nodes"][0] == {"op": "null", "name": "data", "inputs": []}
    back = gluon.SymbolBlock.imports(sym_file, ["data"], param_file)
    np.testing.assert_allclose(back(x).asnumpy(), want, rtol=1e-6, atol=1e-7)


def test_reference_cnn_from_mxnet():
    with np.load(os.path.join(FORMATS, "cnn_io.npz")) as f:
        io = dict(f)
    for name in ("data", "data0"):
        net = gluon.SymbolBlock.imports(os.path.join(FORMATS, "cnn-symbol.json"), [name],
                                        os.path.join(FORMATS, "cnn-0000.params"))
        y = net(mx.nd.array(io["data"]))
        np.testing.assert_allclose(y.asnumpy(), io["output"], rtol=1e-4, atol=1e-5)


def test_fine_tune_imported_model_with_trainer():
    with np.load(os.path.join(FORMATS, "cnn_io.npz")) as f:
        io = dict(f)
    net = gluon.SymbolBlock.imports(os.path.join(FORMATS, "cnn-symbol.json"), ["data"],
                                    os.path.join(FORMATS, "cnn-0000.params"))
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05})
    x = mx.nd.array(io["data"])
    label = mx.nd.array([0, 2])
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    before = loss_fn(net(x), label).mean().asscalar()
    for _ in range(10):
        with mx.autograd.record(train_mode=False):     # no dropout: a deterministic descent
            loss = loss_fn(net(x), label)
        loss.backward()
        trainer.step(2)
    assert loss_fn(net(x), label).mean().asscalar() < before * 0.5


def test_symbolblock_several_outputs_and_composition():
    data = mx.sym.var("data")
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    block = gluon.SymbolBlock([fc, mx.sym.relu(fc)], data)
    block.initialize()
    outs = block(mx.nd.ones((2, 5)))
    assert len(outs) == 2 and outs[0].shape == (2, 3)
    np.testing.assert_allclose(outs[1].asnumpy(), np.maximum(outs[0].asnumpy(), 0))
    assert block.collect_params()["fc_weight"].shape == (3, 5)
    composed = block(mx.sym.var("x"))
    assert composed[0].list_arguments() == ["x", "fc_weight", "fc_bias"]
    with pytest.raises(ValueError, match="not used"):
        gluon.SymbolBlock(fc, mx.sym.var("other"))


def test_imports_unknown_op_is_an_error(tmp_path):
    graph = {"nodes": [{"op": "null", "name": "data", "inputs": []},
                       {"op": "FancyNewOp", "name": "f", "inputs": [[0, 0, 0]]}],
             "arg_nodes": [0], "heads": [[1, 0, 0]]}
    path = tmp_path / "bad-symbol.json"
    path.write_text(json.dumps(graph))
    with pytest.raises(mx.MXNetError, match="FancyNewOp"):
        gluon.SymbolBlock.imports(str(path), ["data"])


class _Sigmoid(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], 1 / (1 + mx.nd.exp(-in_data[0])))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0]
        self.assign(in_grad[0], req[0], out_grad[0] * y * (1 - y))


@mx.operator.register("hybrid_test_sigmoid")
class _SigmoidProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def list_arguments(self):
        return ["data"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _Sigmoid()


def test_custom_op_inside_hybridized_block():
    class Net(gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.fc = nn.Dense(3)

        def hybrid_forward(self, F, x):
            return F.Custom(self.fc(x), op_type="hybrid_test_sigmoid")

    net = Net()
    net.initialize()
    x = mx.nd.array(np.random.RandomState(0).randn(2, 4))
    want = _run(net, x, True)
    net.hybridize()
    for _ in range(2):
        got = _run(net, x, True)
    assert len(net._cached_graph) == 1 and "Custom" in net._cached_graph[0][1].symbol.tojson()
    for g, w in zip(got[:2] + tuple(got[2]), want[:2] + tuple(want[2])):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-7)


def _penalty_net(kind):
    net = nn.HybridSequential()
    if kind == "Dense":
        net.add(nn.Dense(5, activation="tanh"), nn.Dense(2, activation="sigmoid"))
        shape = (3, 4)
    else:
        net.add(nn.Conv2D(3, 3, padding=1, activation="tanh"), nn.Flatten(), nn.Dense(2))
        shape = (2, 2, 4, 4)
    net.initialize(mx.init.Xavier())
    return net, mx.nd.array(np.random.RandomState(1).uniform(-1, 1, shape))


def _gradient_penalty(net, x):
    """Parameter and input gradients of ``sum(y^2) + sum(dy/dx^2)`` (second order)."""
    params = list(net.collect_params().values())
    x = x.copy()
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
        gx = mx.autograd.grad(y, [x], head_grads=mx.nd.ones_like(y), create_graph=True)[0]
        loss = (y * y).sum() + (gx * gx).sum()
    loss.backward()
    return [gx.asnumpy(), x.grad.asnumpy()] + [p.grad().asnumpy().copy() for p in params]


@pytest.mark.parametrize("kind", ["Dense", "Conv"])
def test_second_order_through_hybridized_block(kind):
    net, x = _penalty_net(kind)
    want = _gradient_penalty(net, x)
    net.hybridize()
    for _ in range(2):          # the first call traces, the second replays the graph
        got = _gradient_penalty(net, x)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    assert any(np.abs(w).max() > 1e-3 for w in want[2:])


def _inplace_net():
    # NOTE: Dense reads the input itself (nd.flatten would hand it a copy, as in MXNet,
    # which an in-place change of the input no longer reaches)
    net = nn.HybridSequential()
    net.add(nn.Dense(3, activation="tanh"))
    net.initialize()
    return net


@pytest.mark.parametrize("hybrid", [False, True])
@pytest.mark.parametrize("what", ["input", "output"])
def test_inplace_change_after_forward_is_detected(hybrid, what):
    net = _inplace_net()
    if hybrid:
        net.hybridize()
    x = mx.nd.ones((2, 2, 2))
    x.attach_grad()
    net(x)                      # resolve shapes (and trace) outside the checked call
    net(x)
    with mx.autograd.record():
        y = net(x)              # FullyConnected reads the (flattened) input back
        z = y.sum()             # ... and tanh its output; sum reads neither
    if what == "input":
        x[:] = 2
    else:
        y[:] = 0
    with pytest.raises(mx.base.MXNetError, match="changed in place"):
        z.backward()


def test_hybridized_gradient_without_inplace_change_still_runs():
    net = _inplace_net()
    net.hybridize()
    x = mx.nd.ones((2, 2, 2))
    x.attach_grad()
    for _ in range(2):
        with mx.autograd.record():
            y = net(x)
        y.backward()
    w = net[0].weight.data().asnumpy()
    t = np.tanh(np.ones((2, 4)) @ w.T)
    np.testing.assert_allclose(x.grad.asnumpy().reshape(2, 4), (1 - t * t) @ w, rtol=1e-5)


# -- errors inside the replay and its backward name the op ------------------------------

def _graphs(net):
    return [g for _, g in net._cached_graph]


def test_replay_names_the_failing_op():
    net = nn.HybridLambda(lambda F, a, b: F.relu(F.dot(a, b)))
    net.hybridize()
    net(mx.nd.ones((2, 3)), mx.nd.ones((3, 4)))
    assert _graphs(net)
    with pytest.raises(mx.MXNetError, match=r"^dot: shapes \(2, 3\) and \(5, 4\)"):
        net(mx.nd.ones((2, 3)), mx.nd.ones((5, 4)))


def _recorded_through(name, rule, saves, n):
    """Register op ``name`` (2x, gradient ``rule``), then record ``n`` calls of a
    hybridized block running it on x, ones of shape (2, 3) wanting its gradient, after
    one call that builds the graph: x and the outputs."""
    mx.operator.register_op(name, lambda p, xp, x: x * 2, saves=saves, gradient=rule)
    net = nn.HybridLambda(lambda F, x: getattr(F._internal, name)(x) + 1)
    net.hybridize()
    x = mx.nd.ones((2, 3))
    x.attach_grad()
    net(x)
    with mx.autograd.record():
        ys = [net(x) for _ in range(n)]
    assert _graphs(net)
    return x, ys


def test_replay_backward_names_a_failing_rule():
    def raises(p, x, y, gy, need):
        raise mx.MXNetError("no luck")

    def wrong_shape(p, x, y, gy, need):
        return [gy[0].sum(axis=0)]

    for name, rule, match in (("_test_cg_raises", raises, "no luck"),
                              ("_test_cg_shape", wrong_shape, "gradient has shape")):
        x, (y,) = _recorded_through(name, rule, "", 1)
        with pytest.raises(mx.MXNetError, match=r"%s \(backward\): %s" % (name, match)):
            y.backward()


def _input_gradient(net, x):
    """``x``'s gradient from ``net(x).backward()``, as a NumPy array."""
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    y.backward()
    return x.grad.asnumpy()


def test_replay_backward_checks_gradient_shapes_per_input_shapes():
    # The replay checks a rule's gradient shapes once per set of input shapes: a rule
    # right for one input shape and wrong for another is caught on the other, and a
    # walk that failed is checked again next time.
    def right_for_two_rows(p, x, y, gy, need):
        return [gy[0] * 2 if x[0].shape[0] == 2 else gy[0][:1] * 2]

    mx.operator.register_op("_test_cg_rows", lambda p, xp, x: x * 2, saves="x",
                            gradient=right_for_two_rows)
    net = nn.HybridLambda(lambda F, x: F._internal._test_cg_rows(x) + 1)
    net.hybridize()

    def backward(rows):
        return _input_gradient(net, mx.nd.ones((rows, 3)))

    for _ in range(2):
        np.testing.assert_array_equal(backward(2), np.full((2, 3), 2.0))
    assert _graphs(net)
    for _ in range(2):
        with pytest.raises(mx.MXNetError, match=r"_test_cg_rows \(backward\): gradient has "
                                                r"shape \(1, 3\), expected \(4, 3\)"):
            backward(4)
    np.testing.assert_array_equal(backward(2), np.full((2, 3), 2.0))



def test_replay_backward_checks_every_tape_recorded_before_a_checked_walk():
    # Whether a backward checks its rules' shapes is settled when its forward is
    # recorded: of two forwards recorded before any backward, the second is checked
    # too, although the first one's walk has checked these shapes by then.
    calls = []

    def wrong_the_second_time(p, x, y, gy, need):
        calls.append(1)
        return [gy[0] * 2 if len(calls) == 1 else gy[0][:1] * 2]

    x, (first, second) = _recorded_through("_test_cg_early", wrong_the_second_time, "x", 2)
    first.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full((2, 3), 2.0))
    with pytest.raises(mx.MXNetError, match=r"_test_cg_early \(backward\): gradient has "
                                            r"shape \(1, 3\), expected \(2, 3\)"):
        second.backward()


def test_replay_backward_checks_every_walk_through_a_data_shaped_op():
    # An op whose output shape follows its input values (shape_from_data) gives other
    # step shapes for the same input shapes: the once-per-shape check is not trusted.
    def wrong_unless_all_positive(p, x, y, gy, need):
        return [gy[0]]      # right only while every element is kept

    mx.operator.register_op("_test_cg_positive", lambda p, xp, x: x[x > 0], saves="x",
                            gradient=wrong_unless_all_positive, shape_from_data=True)
    assert mx.operator.get_op("_contrib_boolean_mask").shape_from_data
    net = nn.HybridLambda(lambda F, x: F._internal._test_cg_positive(x) * 2)
    net.hybridize()

    def backward(values):
        return _input_gradient(net, mx.nd.array(values))

    for _ in range(2):
        np.testing.assert_array_equal(backward([1.0, 2.0, 3.0]), [2.0, 2.0, 2.0])
    assert _graphs(net)
    with pytest.raises(mx.MXNetError, match=r"_test_cg_positive \(backward\): gradient has "
                                            r"shape \(2,\), expected \(3,\)"):
        backward([1.0, -2.0, 3.0])


def test_op_hook_sees_each_op_of_the_hybridized_graph():
    # As MXNet's register_op_hook: (name, op name, array) per op output, inputs first
    # with monitor_all (names as bytes, MXNet's C strings); the results and gradients
    # are those of the replay.
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(nn.Dense(2, in_units=3), nn.Activation("relu"))
    net.initialize(mx.init.One())
    net.hybridize()
    x = mx.nd.array([[1.0, -2.0, 4.0]])
    x.attach_grad()
    ref = net(x).asnumpy()
    for monitor_all, want in ((False, [("net_dense0_fwd_output", "FullyConnected", (1, 2)),
                                       ("net_relu0_fwd_output", "Activation", (1, 2))]),
                              (True, [("net_dense0_fwd_data", "FullyConnected", (1, 3)),
                                      ("net_dense0_fwd_weight", "FullyConnected", (2, 3)),
                                      ("net_dense0_fwd_bias", "FullyConnected", (2,)),
                                      ("net_dense0_fwd_output", "FullyConnected", (1, 2)),
                                      ("net_relu0_fwd_input0", "Activation", (1, 2)),
                                      ("net_relu0_fwd_output", "Activation", (1, 2))])):
        seen = []
        net.register_op_hook(lambda name, op, a: seen.append(
            (mx.base.py_str(name), mx.base.py_str(op), a.shape)), monitor_all)
        with mx.autograd.record():
            y = net(x)
        y.backward()
        assert seen == want
        np.testing.assert_array_equal(y.asnumpy(), ref)
        np.testing.assert_array_equal(x.grad.asnumpy(), [[2.0, 2.0, 2.0]])
    # MXNet's unary ops list neither input nor output names: exp0_input0, exp0_0
    lam = nn.HybridLambda(lambda F, x: F.exp(x), prefix="lam_")
    lam.hybridize()
    lam(x)
    seen = []
    lam.register_op_hook(lambda name, op, a: seen.append(mx.base.py_str(name)), True)
    lam(x)
    assert seen == ["lam_exp0_input0", "lam_exp0_0"]



def test_op_hook_sees_the_first_call_that_creates_deferred_parameters():
    # MXNet's first hybridized call infers the parameter shapes from the graph and runs
    # it: the hook sees every op of that call too (and the values are the imperative's).
    def make():
        mx.random.seed(3)
        net = nn.HybridSequential(prefix="net_")
        with net.name_scope():
            net.add(nn.Dense(2), nn.Activation("relu"))
        net.initialize()
        net.hybridize()
        return net
    x = mx.nd.array([[1.0, -2.0, 4.0]])
    ref = make()(x).asnumpy()
    net, seen = make(), []
    net.register_op_hook(lambda name, op, a: seen.append(mx.base.py_str(name)))
    np.testing.assert_array_equal(net(x).asnumpy(), ref)
    assert seen == ["net_dense0_fwd_output", "net_relu0_fwd_output"]
    assert net[0].weight.shape == (2, 3)


def test_hybridized_block_sees_replaced_and_rewritten_parameters():
    # The replay keeps the parameters' arrays between calls: a re-initialisation,
    # set_data, a load or a new context must all reach it.
    net = nn.HybridSequential()
    net.add(nn.Dense(3, in_units=2))
    net.initialize()
    net.hybridize()
    x = mx.nd.array([[1.0, 2.0]])
    net(x)
    net.collect_params().initialize(mx.init.One(), force_reinit=True)
    assert net(x).asnumpy().tolist() == [[3.0, 3.0, 3.0]]
    net[0].bias.set_data(mx.nd.array([1.0, 2.0, 3.0]))
    assert net(x).asnumpy().tolist() == [[4.0, 5.0, 6.0]]
    net.collect_params().reset_ctx(mx.cpu(1))
    y = net(x.as_in_context(mx.cpu(1)))
    assert y.context == mx.cpu(1) and y.asnumpy().tolist() == [[4.0, 5.0, 6.0]]


def test_empty_prefix_children_share_the_enclosing_name_counter():
    """Blocks made with prefix='' (ResNet's residual units) name their ops in the
    enclosing block's counter, as MXNet does: the internals of a symbolic call have
    distinct names, so one can be picked by name for a SymbolBlock."""
    net = mx.gluon.model_zoo.vision.resnet18_v1()
    internals = net(mx.sym.var("data")).get_internals()
    names = internals.list_outputs()
    assert len(names) == len(set(names))
    assert "resnetv10_stage1_activation1_output" in names
    outs = [internals["resnetv10_stage%d_activation0_output" % i] for i in (1, 2)]
    feats = mx.gluon.SymbolBlock(outs, mx.sym.var("data"), params=net.collect_params())
    net.initialize()
    y1, y2 = feats(mx.nd.ones((1, 3, 32, 32)))
    assert y1.shape == (1, 64, 8, 8) and y2.shape == (1, 128, 4, 4)
