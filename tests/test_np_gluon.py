"""Gluon written entirely in np/npx style under ``npx.set_np()``: training loops
(linear regression, an MLP and a small CNN on the embedded digits), imperative and
hybridized; exports with np op names; parameter files; the class rules."""
import json
import os
import struct

import numpy as onp
import pytest

import mxlite as mx
from mxlite import np, npx, autograd, gluon
from mxlite.gluon import nn


@pytest.fixture(autouse=True)
def np_semantics():
    npx.set_np()
    yield
    npx.reset_np()


class NpMLP(gluon.HybridBlock):
    """An MLP written with F.np/F.npx and its own Parameters."""

    def __init__(self, hidden, classes, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.w1 = self.params.get("w1", shape=(-1, hidden), allow_deferred_init=True)
            self.b1 = self.params.get("b1", shape=(hidden,), init="zeros")
            self.w2 = self.params.get("w2", shape=(hidden, classes))
            self.b2 = self.params.get("b2", shape=(classes,), init="zeros")

    def hybrid_forward(self, F, x, w1, b1, w2, b2):
        h = F.npx.relu(F.np.dot(x, w1) + b1)
        return F.np.dot(h, w2) + b2


def _digits(train):
    ds = gluon.data.vision.Digits(train=train)
    x = np.array(ds._data.reshape(len(ds), -1) / 255.0, dtype="float32")
    y = np.array(ds._label, dtype="int32")
    return x, y


def _fit(net, x, y, epochs, lr, batch_size=64):
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": lr})
    loader = gluon.data.DataLoader(gluon.data.ArrayDataset(x, y), batch_size=batch_size,
                                   shuffle=True)
    for _ in range(epochs):
        for xb, yb in loader:
            assert type(xb) is np.ndarray and type(yb) is np.ndarray
            with autograd.record():
                loss = loss_fn(net(xb), yb)
            loss.backward()
            trainer.step(xb.shape[0])
    return loss


def _accuracy(net, x, y):
    pred = net(x).argmax(axis=1)
    assert pred.dtype == onp.int64
    return float((pred == y.astype("int64")).mean())


@pytest.mark.parametrize("hybridize", [False, True])
def test_linear_regression_np_style(hybridize):
    mx.random.seed(1)
    true_w, true_b = np.array([2.0, -3.4]), 4.2
    x = np.random.normal(0, 1, (256, 2))
    y = np.dot(x, true_w) + true_b + np.random.normal(0, 0.01, (256,))
    net = nn.HybridSequential()
    net.add(nn.Dense(1))
    net.initialize(mx.init.Normal(0.01))
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    loss_fn = gluon.loss.L2Loss()
    for _ in range(100):
        with autograd.record():
            loss = loss_fn(net(x), y.reshape(-1, 1))
        loss.backward()
        trainer.step(x.shape[0])
    assert type(loss) is np.ndarray and loss.shape == (256,)
    w = net[0].weight.data()
    assert type(w) is np.ndarray
    onp.testing.assert_allclose(w.asnumpy().ravel(), [2.0, -3.4], atol=0.05)
    onp.testing.assert_allclose(net[0].bias.data().asnumpy(), [4.2], atol=0.05)


@pytest.mark.parametrize("hybridize", [False, True])
def test_mlp_on_digits_np_style(hybridize):
    mx.random.seed(2)
    x, y = _digits(True)
    net = NpMLP(32, 10)
    assert net.w1.shape == (-1, 32)         # unknown until the first batch, as MXNet 1.9
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    _fit(net, x, y, epochs=6, lr=0.01)
    assert net.w1.shape == (64, 32) and type(net.w1.data()) is np.ndarray
    xt, yt = _digits(False)
    assert _accuracy(net, xt, yt) > 0.85


@pytest.mark.parametrize("hybridize", [False, True])
def test_cnn_on_digits_np_style(hybridize):
    mx.random.seed(3)
    x, y = _digits(True)
    x = x.reshape(-1, 1, 8, 8)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, activation="relu"), nn.MaxPool2D(2),
            nn.Flatten(), nn.Dense(10))
    net.initialize(mx.init.Xavier())
    if hybridize:
        net.hybridize()
    _fit(net, x, y, epochs=5, lr=0.01)
    xt, yt = _digits(False)
    assert _accuracy(net, xt.reshape(-1, 1, 8, 8), yt) > 0.85


def test_hybridized_np_block_matches_imperative_and_exports_np_ops(tmp_path):
    net = NpMLP(8, 3)
    net.initialize()
    x = np.random.uniform(size=(4, 5))
    want = net(x).asnumpy()
    net.hybridize()
    got = net(x)
    assert type(got) is np.ndarray
    onp.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    sym_file, params_file = net.export(str(tmp_path / "mlp"))
    with open(sym_file) as f:
        ops = {n["op"] for n in json.load(f)["nodes"]}
    assert {"_np_dot", "_npi_add", "_npx_relu"} <= ops
    loaded = gluon.SymbolBlock.imports(sym_file, ["data"], params_file)
    out = loaded(x)
    assert type(out) is np.ndarray
    onp.testing.assert_allclose(out.asnumpy(), want, rtol=1e-6)


def test_save_parameters_under_np_writes_v3_records(tmp_path):
    net = nn.Dense(2, in_units=3)
    net.initialize()
    f = str(tmp_path / "d.params")
    net.save_parameters(f)
    with open(f, "rb") as fh:
        data = fh.read()
    assert struct.unpack("<I", data[24:28])[0] == 0xF993FACA     # NDArray v3 magic
    other = nn.Dense(2, in_units=3)
    other.load_parameters(f)
    assert type(other.weight.data()) is np.ndarray
    onp.testing.assert_array_equal(other.weight.data().asnumpy(), net.weight.data().asnumpy())


def test_npx_save_load_keeps_0d_and_zero_size(tmp_path):
    f = str(tmp_path / "arrays")
    arrays = {"s": np.array(3.5), "z": np.zeros((2, 0, 3)), "i": np.arange(3, dtype="int64")}
    npx.save(f, arrays)
    back = npx.load(f)
    for k, a in arrays.items():
        assert type(back[k]) is np.ndarray and back[k].shape == a.shape
        assert back[k].dtype == a.dtype
        onp.testing.assert_array_equal(back[k].asnumpy(), a.asnumpy())


def test_symbolic_basic_slicing_matches_imperative():
    class Slice(gluon.HybridBlock):
        def hybrid_forward(self, F, x, y):
            return (x[1, ::2, -2] + y[:, None, 0])[:, ::-1, ...]

    x = np.random.normal(0, 1, (3, 4, 5))
    y = np.random.normal(0, 1, (2, 5))
    want = (x.asnumpy()[1, ::2, -2] + y.asnumpy()[:, None, 0])[:, ::-1, ...]
    for hybridize in (False, True):
        b = Slice()
        if hybridize:
            b.hybridize()
        onp.testing.assert_allclose(b(x, y).asnumpy(), want, rtol=1e-6)


def test_block_classes_and_rejections():
    net = nn.Dense(2, in_units=4)
    net.initialize()
    with pytest.raises(TypeError, match="legacy NDArray"):
        net(mx.nd.ones((1, 4)))

    class Legacy(gluon.Block):
        def forward(self, x):
            return x.as_nd_ndarray() * 2

    with pytest.raises(TypeError, match="mxnet.numpy.ndarray"):
        Legacy()(np.ones(2))
    with pytest.raises(TypeError, match="numpy operator"):
        np.exp(mx.nd.ones(2))
    with pytest.raises(TypeError, match="legacy operator"):
        mx.nd.relu(np.ones(2))


def test_use_np_decorator_scopes_a_class_and_its_inherited_methods():
    npx.reset_np()

    @mx.util.use_np
    class Net(gluon.HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.w = self.params.get("w", shape=(3, 2))

        def hybrid_forward(self, F, x, w):
            return F.np.dot(x, w)

    assert not mx.util.is_np_array()
    net = Net()
    net.initialize()                # inherited: runs under np semantics too
    assert type(net.w.data()) is np.ndarray
    assert type(net(np.ones((1, 3)))) is np.ndarray
    assert not mx.util.is_np_array()


def test_loads_an_np_model_exported_by_mxnet():
    # Written by MXNet 1.9.1 under npx.set_np(): a Conv2D/BatchNorm/Dense block with
    # F.npx.relu, F.np.mean/sum, reshape and scalar arithmetic, hybridized and exported,
    # with an input and MXNet's output saved by npx.save.
    d = os.path.join(os.path.dirname(__file__), "reference", "np_semantics", "mxnet_export")
    with open(os.path.join(d, "npnet-symbol.json")) as f:
        ops = {n["op"] for n in json.load(f)["nodes"]}
    assert {"_npx_relu", "_npi_mean", "_np_sum", "_np_reshape"} <= ops
    io = npx.load(os.path.join(d, "npnet-io.npy"))
    net = gluon.SymbolBlock.imports(os.path.join(d, "npnet-symbol.json"), ["data"],
                                    os.path.join(d, "npnet-0000.params"))
    y = net(io["x"])
    assert type(y) is np.ndarray
    onp.testing.assert_allclose(y.asnumpy(), io["y"].asnumpy(), rtol=1e-5, atol=1e-7)


def test_recurrent_and_normalisation_layers_under_np():
    for layer in (gluon.rnn.LSTM(6), gluon.rnn.GRU(6, num_layers=2, bidirectional=True)):
        layer.initialize()
        x = np.random.uniform(size=(5, 2, 3))
        states = layer.begin_state(batch_size=2)
        assert all(type(s) is np.ndarray for s in states)
        y, new_states = layer(x, states)
        assert type(y) is np.ndarray and type(new_states[0]) is np.ndarray
        with autograd.record():
            loss = layer(x).sum()
        loss.backward()
        assert type(layer.l0_i2h_weight.grad()) is np.ndarray
    cell = gluon.rnn.LSTMCell(4)
    cell.initialize()
    outs, _ = cell.unroll(3, np.ones((2, 3, 5)), merge_outputs=False)
    assert len(outs) == 3 and type(outs[0]) is np.ndarray and outs[0].shape == (2, 4)
    for block, shape in ((nn.LayerNorm(), (2, 3)), (nn.BatchNorm(), (2, 3, 4, 4)),
                         (nn.InstanceNorm(), (2, 3, 4)), (nn.Embedding(10, 4), (2,))):
        block.initialize()
        x = np.ones(shape) if not isinstance(block, nn.Embedding) else np.array([1, 2])
        assert type(block(x)) is np.ndarray


def test_hybridized_outputs_keep_the_face_they_were_traced_with():
    """A block that turns np inputs into legacy arrays (``as_nd_ndarray``) returns
    NDArrays, hybridized or not; np ops give np arrays (MXNet 1.9.1). Outside
    set_np, as under set_np a legacy output is an error."""
    npx.reset_np()
    from mxlite import np as mnp
    from mxlite.util import use_np

    @use_np
    class NpOut(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.np.add(x, x), F.np.multiply(x, x)

    class LegacyOut(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            return x.as_nd_ndarray() + x.as_nd_ndarray(), x.as_nd_ndarray() * 3

    x = mnp.ones((2, 3))
    for block, cls in [(LegacyOut, mx.nd.NDArray), (NpOut, mnp.ndarray)]:
        net = block()
        for hybridize in (False, True):
            if hybridize:
                net.hybridize()
            y1, y2 = net(x)
            assert type(y1) is cls and type(y2) is cls
            assert y1.asnumpy().tolist() == [[2.0] * 3] * 2
