"""Imperative (not hybridized) inference of Gluon's convolution layers: an unrecorded
call keeps the transform of the layer's weight across calls while the weight is
unchanged, as a hybridized graph does, with the graph's numbers; a recorded call keeps
nothing and keeps its gradients."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import batch_parts, nn
from mxlite.operator.nn import _fast, _fast_direct
from conftest import needs_numba


def _net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, in_channels=3), nn.Activation("relu"),
            nn.Conv2D(16, 3, padding=1, in_channels=8, use_bias=False),
            nn.Conv2D(8, 1, in_channels=16, activation="relu"),
            nn.Conv2D(8, 3, strides=2, padding=1, in_channels=8))
    return net


def _counting(monkeypatch):
    """The weights whose Winograd transform (``_fast._filters``) or packed form
    (``_fast_direct.pack``) is made, as a list that grows with each."""
    made = []
    filters, pack = _fast._filters, _fast_direct.pack
    monkeypatch.setattr(_fast, "_filters", lambda jit, w, *scheme: made.append(w.shape) or
                        filters(jit, w, *scheme))
    monkeypatch.setattr(_fast_direct, "pack", lambda w: made.append(w.shape) or pack(w))
    return made


def _twin(net):
    """A network with the same parameter values, never called."""
    twin = _net()
    twin.initialize()
    for a, b in zip(twin.collect_params().values(), net.collect_params().values()):
        a.set_data(b.data())
    return twin


def _warm_net():
    """:func:`_net` initialised, and its input, after three unrecorded calls (its
    transforms kept)."""
    mx.random.seed(0)
    net = _net()
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).randn(1, 3, 10, 10))
    for _ in range(3):
        net(x)
    return net, x

def test_unrecorded_calls_keep_the_transforms_with_the_graphs_numbers(fast_kernels,
                                                                      monkeypatch):
    # the whole replay against the imperative run (a replay on parts of the batch runs
    # smaller products, which OpenBLAS may sum in another order)
    monkeypatch.setattr(batch_parts, "ENABLED", False)
    made = _counting(monkeypatch)
    mx.random.seed(0)
    net = _net()
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).randn(1, 3, 10, 10))
    first = net(x).asnumpy()        # seen once: nothing kept
    calls = [len(made)]
    got = [net(x).asnumpy() for _ in range(3)]
    calls += [len(made)]
    if fast_kernels != "numpy":     # made again on the second call to be kept, then reused
        kept = calls[1] - calls[0]  # (Winograd's; the packed 1x1 where the direct kernel runs)
        assert 0 < calls[0] <= kept
        if _fast_direct.applies(np.zeros((1, 16, 10, 10), np.float32), 8) is not None:
            assert kept > calls[0]
    net(x)
    assert len(made) == calls[1], "a kept transform is made again"
    np.testing.assert_allclose(got[0], first, rtol=1e-5, atol=1e-6)
    assert all(np.array_equal(g, got[0]) for g in got)
    hybrid = _twin(net)
    hybrid.hybridize()
    for _ in range(3):
        want = hybrid(x).asnumpy()
    assert np.array_equal(got[0], want)


def test_a_changed_weight_is_transformed_again(fast_kernels, monkeypatch, tmp_path):
    made = _counting(monkeypatch)
    net, x = _warm_net()
    w = list(net.collect_params().values())[2]     # the second 3x3 layer's weight

    def check(what):
        """The output is that of a fresh twin's calls (a transform made anew), to float32
        round-off (the call after a change makes the transform without keeping it, as a
        first call does: a BLAS product on some CPUs, summed in another order); a stale
        transform would be far off (the weight changed by 0.25 or more)."""
        del made[:]
        twin = _twin(net)
        want = [twin(x).asnumpy() for _ in range(2)][-1]
        np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6,
                                   err_msg=what)
        net(x)
        if fast_kernels != "numpy":
            assert made, what

    w.set_data(w.data() * 0.5)
    check("set_data")
    w.data()[:] = w.data() + 0.25
    check("an in-place write")
    net.save_parameters(str(tmp_path / "a.params"))
    w.set_data(w.data() * 3)
    net(x)
    net.load_parameters(str(tmp_path / "a.params"))
    check("load_parameters")
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with mx.autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(1)
    check("a trainer step")


def test_a_recorded_call_keeps_nothing_and_its_gradients(fast_kernels, monkeypatch):
    made = _counting(monkeypatch)
    net, x = _warm_net()
    conv = net[2]
    w = conv.weight.data()
    grads = []
    for _ in range(2):
        del made[:]
        x.attach_grad()
        with mx.autograd.record():
            y = conv(net[1](net[0](x)))
        y.backward(mx.nd.ones_like(y))
        grads.append((x.grad.asnumpy(), conv.weight.grad().asnumpy()))
        # the recorded forward transforms its filters itself (none kept for it)
        if fast_kernels != "numpy":
            assert made
    x.attach_grad()
    with mx.autograd.record():
        h = net[1](net[0](x))
        y = mx.nd.Convolution(h, w, kernel=(3, 3), pad=(1, 1), num_filter=16, no_bias=True)
    y.backward(mx.nd.ones_like(y))
    for gx, gw in grads:
        assert np.array_equal(gx, x.grad.asnumpy())
        assert np.array_equal(gw, conv.weight.grad().asnumpy())


@needs_numba
def test_a_batch1_1x1_layer_runs_the_direct_kernel_from_its_second_call(monkeypatch):
    made = _counting(monkeypatch)
    conv = nn.Conv2D(16, 1, in_channels=32)
    conv.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).randn(1, 32, 7, 7))
    if _fast_direct.applies(x._data, 16) is None:
        pytest.skip("the direct kernel needs AVX-512")
    want = mx.nd.Convolution(x, conv.weight.data(), conv.bias.data(), kernel=(1, 1),
                             num_filter=16).asnumpy()
    got = [conv(x).asnumpy() for _ in range(3)]
    assert made == [(16, 32)]       # packed once, on the second call
    for g in got:
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
    # the kernel adds the bias as it makes the output: the bits of its output without, + b
    bare = nn.Conv2D(16, 1, in_channels=32, use_bias=False)
    bare.initialize()
    bare.weight.set_data(conv.weight.data())
    z = [bare(x).asnumpy() for _ in range(3)][-1]
    assert np.array_equal(got[-1], z + conv.bias.data().asnumpy().reshape(1, -1, 1, 1))


@pytest.mark.parametrize("layout", ["NHWC"])
def test_channels_last_layers_run_as_before(layout):
    conv = nn.Conv2D(8, 3, padding=1, in_channels=4, layout=layout)
    conv.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).randn(1, 6, 6, 4))
    got = [conv(x).asnumpy() for _ in range(3)]
    w = mx.nd.transpose(conv.weight.data(), axes=(0, 3, 1, 2))
    want = mx.nd.Convolution(mx.nd.transpose(x, axes=(0, 3, 1, 2)), w, conv.bias.data(),
                             kernel=(3, 3), pad=(1, 1), num_filter=8)
    want = mx.nd.transpose(want, axes=(0, 2, 3, 1)).asnumpy()
    for g in got:
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
