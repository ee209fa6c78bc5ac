"""An unrecorded imperative call of a network of row-wise layers runs on parts of its
batch at once (gluon/batch_rows.py): a hybridized graph's numbers, and the calls that
must run whole."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, engine, gluon
from mxlite.gluon import batch_parts, batch_rows, nn
from mxlite.gluon.model_zoo.vision.mobilenet import LinearBottleneck
from mxlite.gluon.model_zoo.vision.resnet import BasicBlockV1, BottleneckV1

from conftest import random_params


@pytest.fixture
def cuts(monkeypatch):
    """Two threads, calls cut however small; the blocks whose calls were cut, in order."""
    monkeypatch.setattr(batch_rows, "MIN_VALUES", 0)
    monkeypatch.setattr(batch_parts, "MIN_STEP_VALUES", 0)
    seen = []
    real = batch_rows.run

    def spy(block, x):
        y = real(block, x)
        if y is not None:
            seen.append(block)
        return y
    monkeypatch.setattr(batch_rows, "run", spy)
    prev = engine.set_num_threads(2)
    yield seen
    engine.set_num_threads(prev)


def _net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, in_channels=4), nn.BatchNorm(), nn.Activation("relu"),
            BasicBlockV1(8, 1, in_channels=8), BottleneckV1(16, 2, downsample=True,
                                                            in_channels=8),
            LinearBottleneck(16, 16, 6, 1), nn.MaxPool2D(), nn.Dropout(0.5),
            nn.GlobalAvgPool2D(), nn.Dense(5))
    return net


def _pair(x):
    """A network and a hybridized twin with the same parameters (not 0 and 1)."""
    net, twin = _net(), _net()
    for n in (net, twin):
        n.initialize()
        n(x)
    random_params(net, twin)
    twin.hybridize()
    return net, twin


def _x(n=5):
    return mx.nd.array(np.random.RandomState(0).randn(n, 4, 12, 12))


def test_a_call_runs_on_parts_of_its_batch_with_the_graphs_numbers(cuts):
    x = _x()
    net, twin = _pair(x)
    del cuts[:]
    got = [net(x).asnumpy() for _ in range(3)]
    assert cuts == [net] * 3        # the top block's call, cut once
    for _ in range(3):
        want = twin(x).asnumpy()
    assert all(np.array_equal(g, want) for g in got[1:])


def test_the_top_blocks_hooks_see_the_joined_batch(cuts):
    x = _x()
    net, _ = _pair(x)
    seen = []
    net.register_forward_pre_hook(lambda b, ins: seen.append(ins[0].shape))
    net.register_forward_hook(lambda b, ins, out: seen.append(out.shape))
    del cuts[:]
    net(x)
    assert cuts == [net] and seen == [(5, 4, 12, 12), (5, 5)]


def _blocks_under(net):
    yield net
    for c in net._children.values():
        yield from _blocks_under(c)


@pytest.mark.parametrize("change", ["child hook", "hybridized child", "layer of its own",
                                    "batchnorm over axis 0"])
def test_a_call_runs_whole_where_any_block_might_mix_rows(cuts, change):
    x = _x()
    net, _ = _pair(x)
    want = net(x).asnumpy()
    if change == "child hook":
        net[3].body[1].register_forward_hook(lambda *a: None)
    elif change == "hybridized child":
        net[4].hybridize()
    elif change == "layer of its own":
        class Shift(nn.Activation):      # a subclass declares nothing
            def hybrid_forward(self, F, x):
                return x - F.mean(x, axis=0, keepdims=True)
        net.add(Shift("relu"))
        want = net(x).asnumpy()
    else:
        net[1]._channel_axis = 0
    del cuts[:]
    got = net(x).asnumpy()
    assert net not in cuts and (change != "child hook" or net[3] not in cuts)
    # (the row-wise children's calls are cut, the fused chains run whole)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_training_mode_recording_one_thread_or_a_small_batch_run_whole(cuts):
    x = _x()
    net, _ = _pair(x)
    del cuts[:]
    with autograd.train_mode():
        net(x)
    with autograd.record():
        net(x)
    engine.set_num_threads(1)
    net(x)
    engine.set_num_threads(2)
    net(x[:1])
    assert cuts == []


def test_an_error_in_the_parts_is_the_layers_own(cuts):
    x = _x()
    net, _ = _pair(x)
    with pytest.raises(mx.MXNetError, match="Convolution: weight has shape"):
        net(mx.nd.ones((4, 3, 12, 12)))


def test_a_network_whose_parameters_wait_for_their_shapes_runs_whole_first(cuts):
    net = _net()
    net.initialize()
    x = _x()
    want = net(x)       # (the shapes resolve in this call)
    assert cuts == []
    assert net(x).shape == want.shape == (5, 5) and cuts == [net]


def test_a_plain_hybridblock_wrapping_a_network_cuts_its_childs_call(cuts):
    class Wrap(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.net = _net()

        def hybrid_forward(self, F, x):
            return self.net(x) * 2
    x = _x()
    w = Wrap()
    w.initialize()
    w(x)
    del cuts[:]
    y = w(x)
    assert cuts == [w.net]
    # (float32 round-off: the child's own call may run other kernels, as its transforms
    # are kept from a second sighting, and the BLAS orders a product's sums by its shape)
    np.testing.assert_allclose(y.asnumpy(), 2 * w.net(x).asnumpy(), rtol=1e-5, atol=1e-6)


# every layer that declares itself row-wise, with an input: its cut call gives each row
# what a call on that row alone gives (to float32 round-off: kernels may be chosen by the
# batch size)
ROW_WISE = [
    (lambda: nn.Conv1D(4, 3, in_channels=3), (5, 3, 9)),
    (lambda: nn.Conv2D(4, 3, in_channels=3, activation="relu"), (5, 3, 9, 9)),
    (lambda: nn.Conv3D(4, 3, in_channels=3), (5, 3, 5, 5, 5)),
    (lambda: nn.Conv1DTranspose(4, 3, in_channels=3), (5, 3, 9)),
    (lambda: nn.Conv2DTranspose(4, 3, strides=2, in_channels=3), (5, 3, 6, 6)),
    (lambda: nn.Conv3DTranspose(4, 3, in_channels=3), (5, 3, 4, 4, 4)),
    (lambda: nn.MaxPool1D(), (5, 3, 8)), (lambda: nn.MaxPool2D(), (5, 3, 8, 8)),
    (lambda: nn.MaxPool3D(), (5, 3, 4, 4, 4)), (lambda: nn.AvgPool1D(), (5, 3, 8)),
    (lambda: nn.AvgPool2D(), (5, 3, 8, 8)), (lambda: nn.AvgPool3D(), (5, 3, 4, 4, 4)),
    (lambda: nn.GlobalMaxPool1D(), (5, 3, 8)), (lambda: nn.GlobalMaxPool2D(), (5, 3, 8, 8)),
    (lambda: nn.GlobalMaxPool3D(), (5, 3, 4, 4, 4)), (lambda: nn.GlobalAvgPool1D(), (5, 3, 8)),
    (lambda: nn.GlobalAvgPool2D(), (5, 3, 8, 8)),
    (lambda: nn.GlobalAvgPool3D(), (5, 3, 4, 4, 4)),
    (lambda: nn.ReflectionPad2D(2), (5, 3, 6, 6)),
    (lambda: nn.LeakyReLU(0.1), (5, 7)), (lambda: nn.PReLU(), (5, 7)),
    (lambda: nn.ELU(), (5, 7)), (lambda: nn.SELU(), (5, 7)), (lambda: nn.GELU(), (5, 7)),
    (lambda: nn.Swish(), (5, 7)), (lambda: nn.Activation("tanh"), (5, 7)),
    (lambda: nn.Dense(4, activation="relu"), (5, 3, 2)), (lambda: nn.Dense(4, flatten=False),
                                                          (5, 3, 2)),
    (lambda: nn.Dropout(0.5), (5, 7)), (lambda: nn.BatchNorm(), (5, 3, 4)),
    (lambda: nn.BatchNormReLU(), (5, 3, 4)), (lambda: nn.Flatten(), (5, 3, 2)),
    (lambda: nn.Identity(), (5, 3)), (lambda: nn.Embedding(10, 3), (5, 4)),
]


@pytest.mark.parametrize("make,shape", ROW_WISE)
def test_each_row_wise_layer_gives_each_row_its_own_result(cuts, make, shape):
    net = nn.HybridSequential()
    net.add(make())
    net.initialize(mx.init.Uniform(1.0))
    rs = np.random.RandomState(0)
    x = mx.nd.array(rs.randint(0, 10, shape) if "Embedding" in repr(net) else rs.randn(*shape))
    net(x)
    del cuts[:]
    got = net(x).asnumpy()
    assert cuts == [net]
    for i in range(shape[0]):
        np.testing.assert_allclose(got[i:i + 1], net(x[i:i + 1]).asnumpy(), rtol=1e-5,
                                   atol=1e-6)


def test_the_model_zoos_row_wise_networks(cuts):
    from mxlite.gluon.model_zoo import vision
    for make in (lambda: vision.vgg11(classes=3), lambda: vision.alexnet(classes=3),
                 lambda: vision.mobilenet0_25(classes=3),
                 lambda: vision.resnet18_v2(classes=3)):
        net = make()
        net.initialize(mx.init.Xavier())
        x = mx.nd.array(np.random.RandomState(0).randn(2, 3, 64, 64))
        net(x)
        del cuts[:]
        got = net(x).asnumpy()
        assert cuts == [net]
        for i in range(2):
            np.testing.assert_allclose(got[i:i + 1], net(x[i:i + 1]).asnumpy(), rtol=1e-4,
                                       atol=1e-5)


def test_a_plain_sequential_of_layers_is_cut_and_fuses_its_chains(cuts, monkeypatch):
    from mxlite.gluon.nn import sequential_chains
    from mxlite.operator import registry
    names = []
    invoke = registry.invoke
    monkeypatch.setattr(sequential_chains, "invoke",
                        lambda op, *a, **k: names.append(op.name) or invoke(op, *a, **k))
    nets = []
    for cls in (nn.Sequential, nn.HybridSequential):
        net = cls()
        net.add(nn.Conv2D(8, 3, padding=1, in_channels=4), nn.BatchNorm(in_channels=8),
                nn.Activation("relu"), nn.GlobalAvgPool2D(), nn.Dense(3, in_units=8))
        net.initialize(mx.init.Xavier())
        nets.append(net)
    for a, b in zip(*[n.collect_params().values() for n in nets]):
        b.set_data(a.data())
    x = _x()
    for _ in range(2):
        got = [n(x).asnumpy() for n in nets]
    assert cuts == nets * 2 and names == ["_conv_batch_norm"] * 8
    assert np.array_equal(got[0], got[1])
