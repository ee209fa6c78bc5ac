"""A HybridSequential's Conv2D -> BatchNorm [-> relu] children run as one fused step in
an unrecorded imperative call (gluon/nn/sequential_chains.py): the chain's numbers
(those of a hybridized graph), and the blocks one by one wherever anything could see
what lies between them."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import batch_parts, nn
from mxlite.gluon.nn import sequential_chains
from mxlite.operator import registry


def _net(bias=False):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, in_channels=4, use_bias=bias), nn.BatchNorm(),
            nn.Activation("relu"),
            nn.Conv2D(16, 1, strides=2, in_channels=8, use_bias=bias), nn.BatchNorm(),
            nn.Conv2D(8, 3, padding=1, in_channels=16, use_bias=False), nn.BatchNormReLU(),
            nn.Conv2D(8, 3, padding=1, in_channels=8, groups=2, use_bias=False),
            nn.BatchNorm(), nn.Activation("relu"))
    return net


def _init(net):
    mx.random.seed(0)
    net.initialize(mx.init.Xavier())
    x = _data()
    net(x)      # deferred shapes resolve
    rs = np.random.RandomState(1)
    for p in net.collect_params().values():
        p.set_data(mx.nd.array(rs.uniform(0.5, 1.5, p.shape) if "running_var" in p.name
                               else rs.uniform(-0.5, 0.5, p.shape)))
    return x


def _data(n=2):
    return mx.nd.array(np.random.RandomState(0).randn(n, 4, 10, 10))


def _steps(monkeypatch):
    """The names of the ops the calls invoke, as a list that grows with each."""
    names = []
    invoke = registry.invoke

    def spy(op, *args, **kwargs):
        names.append(op.name)
        return invoke(op, *args, **kwargs)
    monkeypatch.setattr(sequential_chains, "invoke", spy)
    return names


def _block_by_block(net, x):
    for block in net._children.values():
        x = block(x)
    return x


@pytest.mark.parametrize("bias", [False, True])
def test_unrecorded_calls_run_the_chains_fused_with_the_graphs_numbers(bias, monkeypatch):
    monkeypatch.setattr(batch_parts, "ENABLED", False)
    names = _steps(monkeypatch)
    net = _net(bias)
    x = _init(net)
    got = [net(x).asnumpy() for _ in range(3)]
    # the 3x3 -> BN -> relu, the strided 1x1 -> BN, 3x3 -> BatchNormReLU; the grouped
    # convolution has no fused step (no kernel applies BatchNorm to its output)
    assert names == ["_conv_batch_norm"] * 9
    assert all(np.array_equal(g, got[0]) for g in got)
    want = _block_by_block(net, x).asnumpy()
    if bias:        # the bias taken into BatchNorm's mean: float32 round-off
        np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
    else:
        assert np.array_equal(got[0], want)
    twin = _net(bias)
    twin.initialize()
    twin(x)
    for a, b in zip(twin.collect_params().values(), net.collect_params().values()):
        a.set_data(b.data())
    twin.hybridize()
    for _ in range(3):
        hybrid = twin(x).asnumpy()
    assert np.array_equal(got[-1], hybrid)


def test_a_hook_a_recorded_call_or_a_hybridized_child_run_the_blocks_one_by_one(monkeypatch):
    names = _steps(monkeypatch)
    net = _net()
    x = _init(net)
    seen = []
    handle = net[1].register_forward_hook(lambda block, ins, out: seen.append(out.shape))
    net(x)
    assert seen == [(2, 8, 10, 10)] and names.count("_conv_batch_norm") == 2
    handle.detach()
    del names[:]
    with mx.autograd.record():
        y = net(x)
    assert names == []
    y.backward()
    grads = [p.grad().asnumpy() for p in net.collect_params().values() if p.grad_req != "null"]
    net[3].hybridize()
    net(x)
    assert names == ["_conv_batch_norm"] * 2        # the strided 1x1 -> BN left to its graph
    # the recorded call's gradients are the blocks' own
    twin = _net()
    twin.initialize()
    twin(x)
    for a, b in zip(twin.collect_params().values(), net.collect_params().values()):
        a.set_data(b.data())
    with mx.autograd.record():
        z = _block_by_block(twin, x)
    z.backward()
    want = [p.grad().asnumpy() for p in twin.collect_params().values() if p.grad_req != "null"]
    assert all(np.array_equal(g, w) for g, w in zip(grads, want))


def test_training_mode_updates_the_moving_statistics_as_the_blocks_do():
    net, twin = _net(), _net()
    x = _init(net)
    twin.initialize()
    twin(x)
    for a, b in zip(twin.collect_params().values(), net.collect_params().values()):
        a.set_data(b.data())
    with mx.autograd.train_mode():
        for _ in range(2):
            got = net(x).asnumpy()
            want = _block_by_block(twin, x).asnumpy()
    assert np.array_equal(got, want)
    for a, b in zip(twin.collect_params().values(), net.collect_params().values()):
        assert np.array_equal(a.data().asnumpy(), b.data().asnumpy()), a.name


def test_wrong_input_gets_the_layers_own_error():
    net = _net()
    _init(net)
    with pytest.raises(mx.MXNetError, match="^Convolution: weight has shape"):
        net(mx.nd.ones((2, 5, 10, 10)))
    with pytest.raises(ValueError, match="Conv2D: expected 4-D input"):
        net(mx.nd.ones((2, 4, 10)))


def test_layers_that_are_not_the_plain_ones_run_as_they_are(monkeypatch):
    names = _steps(monkeypatch)

    class Scaled(nn.BatchNorm):
        def hybrid_forward(self, F, x, **params):
            return 2 * super().hybrid_forward(F, x, **params)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, in_channels=4, activation="relu"), nn.BatchNorm(),
            nn.Conv2D(8, 3, padding=1, in_channels=8), Scaled())
    net.initialize()
    x = _data()
    net(x)
    y = net(x)
    assert names == []
    want = _block_by_block(net, x)
    assert np.array_equal(y.asnumpy(), want.asnumpy())
