"""A HybridSequential's Conv2D -> BatchNorm [-> relu] children run as one fused step in
an unrecorded imperative call (gluon/nn/sequential_chains.py): the chain's numbers
(those of a hybridized graph), and the blocks one by one wherever anything could see
what lies between them."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import batch_parts, nn
from mxlite.gluon.model_zoo import vision
from mxlite.gluon.nn import sequential_chains
from mxlite.operator import registry

from conftest import random_params


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
    random_params(net)
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
    # the first call makes the convolutions' transforms without keeping them, the next
    # ones run the kept ones: float32 round-off between them (a product of the BLAS in
    # one and of a compiled kernel in the other, summed in another order on some CPUs)
    assert np.array_equal(got[2], got[1])
    np.testing.assert_allclose(got[0], got[1], rtol=1e-5, atol=1e-6)
    # the bias taken into BatchNorm's mean, the layers' kernels: float32 round-off
    want = _block_by_block(net, x).asnumpy()
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
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


# -- ResNet v1's blocks: relu(shortcut + body(x)) ------------------------------------------

def _twins(make, x):
    """A block from ``make()`` and a hybridized twin with the same parameters (not 0 and 1)."""
    block, twin = make(), make()
    for b in (block, twin):
        b.initialize(mx.init.Xavier())
        b(x)
    random_params(block, twin)
    twin.hybridize()
    return block, twin


@pytest.mark.parametrize("make", [
    lambda: vision.BasicBlockV1(8, 1, in_channels=8),
    lambda: vision.BasicBlockV1(16, 2, downsample=True, in_channels=8),
    lambda: vision.BottleneckV1(16, 1, downsample=True, in_channels=8),
    lambda: vision.BottleneckV1(8, 2, downsample=True, in_channels=8)])
def test_resnet_v1_blocks_add_and_rectify_in_their_last_convolution(make, monkeypatch):
    monkeypatch.setattr(batch_parts, "ENABLED", False)
    x = mx.nd.array(np.random.RandomState(0).randn(2, 8, 10, 10))
    block, twin = _twins(make, x)
    names = _steps(monkeypatch)
    got = [block(x).asnumpy() for _ in range(3)]
    fused = [n for n in names if n == "_conv_batch_norm"]
    assert len(fused) == len(names) and len(fused) % 3 == 0
    for _ in range(3):
        want = twin(x).asnumpy()
    assert all(np.array_equal(g, want) for g in got[1:])
    with mx.autograd.record(train_mode=False):      # the blocks one by one, the sum, relu
        chain = block(x).asnumpy()
    # (a recorded convolution runs the kernels whose data its weight gradient reuses)
    np.testing.assert_allclose(got[-1], chain, rtol=1e-5, atol=1e-5)


def test_a_residual_that_broadcasts_or_a_hook_on_the_body_take_the_blocks_path(monkeypatch):
    x = mx.nd.array(np.random.RandomState(0).randn(2, 8, 10, 10))
    block, _ = _twins(lambda: vision.BasicBlockV1(8, 1, in_channels=8), x)
    body = block.body
    for _ in range(2):      # the weights' transforms kept: the same kernels from now on
        block(x)
    for r in (mx.nd.ones((1, 8, 1, 1)), x):
        want = mx.nd.relu(r + _block_by_block(body, x)).asnumpy()
        got = sequential_chains.residual_relu(body, x, r).asnumpy()
        assert np.array_equal(got, want)
    seen = []
    body.register_forward_hook(lambda b, ins, out: seen.append(out.shape))
    names = _steps(monkeypatch)
    assert np.array_equal(block(x).asnumpy(), want)
    assert seen == [(2, 8, 10, 10)] and names == ["_conv_batch_norm"] * 2 + ["Activation"]


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copied_network_keeps_its_own_transforms_and_chains(how):
    import copy
    import pickle
    x = mx.nd.array(np.random.RandomState(0).randn(1, 8, 10, 10))
    net, _ = _twins(lambda: vision.BottleneckV1(16, 1, downsample=True, in_channels=8), x)
    for _ in range(3):
        want = net(x).asnumpy()
    twin = copy.deepcopy(net) if how == "deepcopy" else pickle.loads(pickle.dumps(net))
    got = [twin(x).asnumpy() for _ in range(3)]     # (the first call keeps nothing yet)
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
    assert all(np.array_equal(g, want) for g in got[1:])
    twin.body[0].weight.set_data(twin.body[0].weight.data() * 2)
    twin(x)
    assert np.array_equal(net(x).asnumpy(), want)       # (the original's transforms its own)
