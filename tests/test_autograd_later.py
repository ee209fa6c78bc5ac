"""autograd.later: a hybridized graph's backward walk takes the weight gradients of its
convolutions off its path (made by a CPU worker while it walks on): the same
gradients, bit for bit, as the walk that makes each beside its data gradient."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import engine
from mxlite.autograd import later
from mxlite.gluon import nn
from mxlite.operator.nn import convolution


@pytest.fixture
def two_threads():
    prev = engine.set_num_threads(2)
    yield
    engine.set_num_threads(prev)


class _Twice(nn.HybridBlock):
    """The same convolution applied twice: its weight is read by two steps."""

    def __init__(self):
        super().__init__()
        with self.name_scope():
            self.conv = nn.Conv2D(6, 3, padding=1, in_channels=6)

    def hybrid_forward(self, F, x):
        return self.conv(F.relu(self.conv(x)))


def _net(kind):
    net = nn.HybridSequential()
    with net.name_scope():
        if kind == "twice":
            net.add(nn.Conv2D(6, 3, padding=1), _Twice())
        else:
            net.add(nn.Conv2D(8, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                    nn.Conv2D(8, 3, strides=2, padding=1, use_bias=False), nn.BatchNorm(),
                    nn.Activation("relu"), nn.Conv2D(4, 1))
    net.add(nn.Dense(3))
    net.initialize(mx.init.Xavier())
    return net


def _grads(net, x, hybridize=True, deferring=True, monkeypatch=None, repeat=1):
    """The parameters' gradients of a training step's loss, and how many gradients
    the walk handed to the worker."""
    submitted = []
    monkeypatch.setattr(later, "submit",
                        lambda *a, run=later.submit: submitted.append(a[3]) or run(*a))
    if not deferring:
        monkeypatch.setattr(later, "may_defer", lambda position: False)
    if hybridize:
        net.hybridize()
        net(x)      # (the first call builds the graph)
    loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    with mx.autograd.record(), mx.autograd.train_mode():
        out = loss(net(x), mx.nd.array([0, 1, 2, 1]))
    for _ in range(repeat):
        out.backward(retain_graph=repeat > 1)
    monkeypatch.undo()
    return [p.grad().asnumpy() for p in net.collect_params().values()
            if p.grad_req != "null"], submitted


@pytest.mark.parametrize("repeat", [1, 2])
def test_weight_gradients_made_later_are_the_walks_bits(two_threads, monkeypatch, repeat):
    x = mx.nd.array(np.random.RandomState(1).standard_normal((4, 3, 12, 12)))
    want, none = _grads(_net("chain"), x, deferring=False, monkeypatch=monkeypatch)
    mx.random.seed(0)
    got, submitted = _grads(_net("chain"), x, monkeypatch=monkeypatch, repeat=repeat)
    assert none == [] and submitted == ["Convolution"] * 2 * repeat
    assert len(want) == len(got) == 11
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    # and the imperative run's gradients, to float32 round-off (other kernels may run)
    mx.random.seed(0)
    imperative, _ = _grads(_net("chain"), x, hybridize=False, monkeypatch=monkeypatch)
    for a, b in zip(got, imperative):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_the_imperative_backward_makes_weight_gradients_later_too(two_threads, monkeypatch):
    x = mx.nd.array(np.random.RandomState(5).standard_normal((4, 3, 12, 12)))
    want, none = _grads(_net("chain"), x, hybridize=False, deferring=False,
                        monkeypatch=monkeypatch)
    mx.random.seed(0)
    got, submitted = _grads(_net("chain"), x, hybridize=False, monkeypatch=monkeypatch)
    assert none == [] and submitted == ["Convolution"] * 2
    assert len(want) == len(got) == 11
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_a_weight_two_steps_read_is_not_made_later(two_threads, monkeypatch):
    x = mx.nd.array(np.random.RandomState(2).standard_normal((4, 3, 8, 8)))
    x.attach_grad()
    got, submitted = _grads(_net("twice"), x, monkeypatch=monkeypatch)
    assert submitted == ["Convolution"]     # the first convolution's, not the shared one's
    mx.random.seed(0)
    imperative, _ = _grads(_net("twice"), x, hybridize=False, monkeypatch=monkeypatch)
    assert len(got) == len(imperative) == 6
    for a, b in zip(got, imperative):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_nothing_is_made_later_at_one_thread(monkeypatch):
    prev = engine.set_num_threads(1)
    try:
        x = mx.nd.array(np.random.RandomState(3).standard_normal((4, 3, 12, 12)))
        _, submitted = _grads(_net("chain"), x, monkeypatch=monkeypatch)
    finally:
        engine.set_num_threads(prev)
    assert submitted == []


def test_an_error_made_later_names_the_op_and_the_walk_ends(two_threads, monkeypatch):
    net = _net("chain")
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(4).standard_normal((4, 3, 12, 12)))
    x.attach_grad()         # (so that every convolution's weight gradient is made later)
    net(x)

    def fail(*a, **k):
        raise ValueError("no weight gradient today")
    monkeypatch.setattr(convolution, "conv_weight_grad", fail)
    with mx.autograd.record():
        y = net(x).sum()
    blas = engine.set_blas_threads(2)
    try:
        with pytest.raises(mx.MXNetError, match=r"Convolution \(backward\): no weight gradient"):
            y.backward()
        # the walk has ended: nothing left pending, the BLAS at its threads again
        assert later._here.pending is None and later._here.positions == ()
        assert not later._here.serial and engine.blas_threads() in (2, None)
    finally:
        engine.set_blas_threads(blas or 1)
