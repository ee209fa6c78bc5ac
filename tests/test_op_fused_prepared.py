"""A hybridized graph's fused convolution steps keep their inference's call per data
shape (``fused._Prepared``): made on the second call with unchanged parameters, run
from the third on with the same bits as the call worked out again, and made again
after every change of a weight, a BatchNorm parameter or moving statistic."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import nn
from mxlite.operator.nn import _fast_direct, fused
from conftest import NUMBA_MISSING, needs_numba, random_params


@pytest.fixture(autouse=True)
def _any_cpu(monkeypatch):
    """The direct kernel runs (slower, as correctly) on a CPU without AVX-512 too."""
    if not NUMBA_MISSING:
        from mxlite.operator.nn import _fast_tile
        monkeypatch.setattr(_fast_tile, "AVAILABLE", True)


@pytest.fixture(params=["direct", "winograd"])
def small_3x3(request, monkeypatch):
    """The small 3x3 convolutions by the direct kernel, or by Winograd's."""
    if request.param == "winograd":
        from mxlite.operator.nn import _fast
        monkeypatch.setattr(_fast_direct, "MAX_POSITIONS_3X3", 0)
        monkeypatch.setattr(_fast, "MIN_TILES_KEPT", 0)
    return request.param


class _Bottleneck(mx.gluon.HybridBlock):
    """ResNet's bottleneck block: 1x1, 3x3, 1x1 (BatchNorm after each), a 1x1 shortcut,
    the sum, relu; at ``stride`` its first and shortcut 1x1 convolutions read one value."""

    def __init__(self, channels, stride, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.body = nn.HybridSequential()
            self.body.add(nn.Conv2D(16, 1, strides=stride, use_bias=False), nn.BatchNorm(),
                          nn.Activation("relu"), nn.Conv2D(16, 3, padding=1, use_bias=False),
                          nn.BatchNorm(), nn.Activation("relu"),
                          nn.Conv2D(channels, 1, use_bias=False), nn.BatchNorm())
            self.short = nn.HybridSequential()
            self.short.add(nn.Conv2D(channels, 1, strides=stride, use_bias=False),
                           nn.BatchNorm())

    def hybrid_forward(self, F, x):
        return F.Activation(self.body(x) + self.short(x), act_type="relu")


def _net():
    """A strided 3x3 stem (im2col's kernel), two bottlenecks (the second downsampling), a
    1x1 convolution with a bias: every kind of fused step."""
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, 3, strides=2, padding=1, use_bias=False), nn.BatchNorm(),
            nn.Activation("relu"), _Bottleneck(32, 1), _Bottleneck(32, 2),
            nn.Conv2D(8, 1), nn.BatchNorm())
    return net


def _twins(batch, seed):
    """Two networks (:func:`_net`) with the same parameters, and their input."""
    nets = [_net(), _net()]
    x = mx.nd.array(np.random.RandomState(seed).randn(batch, 3, 16, 16))
    for net in nets:
        net.initialize(mx.init.Xavier())
        net(x)
    random_params(*nets)
    return nets[0], nets[1], x


def _fused_steps(net):
    return [s for s in net._cached_graph[0][1].steps if s[0] is fused.CONV_BATCH_NORM]


def _counting(monkeypatch):
    """The calls that work a fused step's inference out (:func:`fused._epilogue_call`)."""
    made = []
    work = fused._epilogue_call
    monkeypatch.setattr(fused, "_epilogue_call",
                        lambda *a: made.append(a[0]) or work(*a))
    return made


@needs_numba
def test_fused_steps_run_their_prepared_call_from_the_third_call_with_the_same_bits(
        small_3x3, monkeypatch):
    """Each call gives the bits of the same call of a twin graph that works every step out
    at every call (``fused.PREPARED`` off); the steps are worked out on the first two
    calls (the second keeps them), not after."""
    *nets, x = _twins(1, seed=0)
    made = _counting(monkeypatch)
    outs, counts = [], []
    for prepared, net in zip((False, True), nets):
        monkeypatch.setattr(fused, "PREPARED", prepared)
        net.hybridize()
        got = []
        for _ in range(5):
            del made[:]
            got.append(net(x).asnumpy())
            counts.append(len(made))
        outs.append(got)
    steps = len(_fused_steps(nets[1]))
    assert steps == 10 and counts == [steps] * 5 + [steps, steps, 0, 0, 0]
    for a, b in zip(*outs):
        assert np.array_equal(a.view(np.uint32), b.view(np.uint32))
    assert not np.array_equal(outs[1][0], 0 * outs[1][0])


def _change_each(net, x, tmp_path):
    """Change the parameters of ``net`` one way after another: yield after each what
    changed."""
    params = {p.name: p for p in net.collect_params().values()}
    conv = [p for name, p in params.items() if name.endswith("weight")]
    bn = [name.rsplit("_", 1)[0] for name in params if name.endswith("gamma")]
    conv[1].data()[:] *= 1.5
    yield "an in-place write to a 1x1 convolution's weight"
    conv[2].data()[0, 1, 1, 1] += 1
    yield "an in-place write to one value of a 3x3 convolution's weight"
    params[bn[1] + "_gamma"].set_data(params[bn[1] + "_gamma"].data() * 2 + 0.1)
    yield "set_data on gamma"
    params[bn[2] + "_beta"].data()[3:5] -= 1
    yield "an in-place write to part of beta"
    params[bn[3] + "_running_mean"].data()[:] += 0.25
    yield "an in-place write to a moving mean"
    params[bn[4] + "_running_var"].set_data(params[bn[4] + "_running_var"].data() + 0.5)
    yield "set_data on a moving variance"
    bias = [p for name, p in params.items() if name.endswith("bias")][0]
    bias.data()[:] = 0.75
    yield "a write to the bias"
    with mx.autograd.record(train_mode=True):   # (updates the moving statistics)
        net(x)
    yield "a training call"
    net.save_parameters(str(tmp_path / "a.params"))
    params[bn[0] + "_beta"].set_data(params[bn[0] + "_beta"].data() + 2)
    net(x)
    net.load_parameters(str(tmp_path / "a.params"))
    yield "load_parameters"
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    with mx.autograd.record():
        loss = net(x).sum()
    loss.backward()
    trainer.step(1)
    yield "a trainer step"


@needs_numba
def test_fused_steps_make_their_prepared_call_again_after_every_parameter_change(
        small_3x3, monkeypatch, tmp_path):
    """After each change, the calls give a twin graph's outputs (the same parameters,
    every step worked out at every call): to float32 round-off on the first two, which
    may run other kernels than the twin's (the twin's weights all rewritten), bit for bit
    on the third, which runs the prepared call where the twin runs the same kernel."""
    net, twin, x = _twins(2, seed=1)
    net.hybridize()
    twin.hybridize()
    made = _counting(monkeypatch)

    def run(what):
        for a, b in zip(twin.collect_params().values(), net.collect_params().values()):
            a.set_data(b.data())
        got, want = [], []
        for _ in range(3):
            del made[:]
            monkeypatch.setattr(fused, "PREPARED", True)
            got.append(net(x).asnumpy())
            counts.append(len(made))
            monkeypatch.setattr(fused, "PREPARED", False)
            want.append(twin(x).asnumpy())
        for g, w in zip(got[:2], want[:2]):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=what)
        assert np.array_equal(got[2], want[2]), what

    counts = []
    run("initial")
    assert counts == [10, 10, 0]
    for what in _change_each(net, x, tmp_path):
        counts = []
        run(what)
        assert counts == [10, 10, 0], what      # (any change: every step made again)


@needs_numba
def test_a_cast_graph_prepares_its_steps_again(monkeypatch):
    """After ``cast`` (new arrays of another dtype) the steps are worked out again, and
    their prepared calls give the float64 twin's bits."""
    net, twin, x = _twins(1, seed=2)
    net.hybridize()
    for _ in range(3):
        net(x)
    net.cast("float64")
    twin.cast("float64")
    twin.hybridize()
    x = x.astype("float64")
    made = _counting(monkeypatch)
    got = [net(x).asnumpy() for _ in range(3)]
    assert len(made) == 20 and all(g.dtype == np.float64 for g in got)
    monkeypatch.setattr(fused, "PREPARED", False)
    want = [twin(x).asnumpy() for _ in range(3)]
    assert all(np.array_equal(g, w) for g, w in zip(got, want))


def test_a_step_whose_weight_is_no_parameter_prepares_nothing(monkeypatch):
    """A convolution's weight computed in the graph (here: twice a parameter) is no
    parameter whose versions tell its changes: its step works its inference out at every
    call, and follows the parameter."""
    class Doubled(mx.gluon.HybridBlock):
        def __init__(self, **kw):
            super().__init__(**kw)
            with self.name_scope():
                self.weight = self.params.get("weight", shape=(8, 4, 1, 1))
                self.bn = nn.BatchNorm()

        def hybrid_forward(self, F, x, weight):
            return self.bn(F.Convolution(x, weight * 2, kernel=(1, 1), num_filter=8,
                                         no_bias=True))
    net = Doubled()
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(3).randn(1, 4, 5, 5))
    for _ in range(3):
        net(x)
    chains = [s[1].chain for s in _fused_steps(net)]
    assert len(chains) == 1 and chains[0].epoch is None and not chains[0].prepared
    net.weight.data()[:] *= -1
    with mx.autograd.record(train_mode=False):      # the ops one by one
        want = net.bn(mx.nd.Convolution(x, net.weight.data() * 2, kernel=(1, 1),
                                        num_filter=8, no_bias=True)).asnumpy()
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)


class _StatsRead(mx.gluon.HybridBlock):
    """BatchNorm, its output plus what a later step reads of its moving mean."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.bn = nn.BatchNorm(in_channels=3)

    def hybrid_forward(self, F, x):
        bn = self.bn
        y = F.BatchNorm(x, bn.gamma.var(), bn.beta.var(), bn.running_mean.var(),
                        bn.running_var.var(), name="bn")
        return F.broadcast_add(y, F.reshape(bn.running_mean.var() * 2, shape=(1, 3, 1, 1)))


@pytest.mark.parametrize("read_later", [False, True], ids=["alone", "read-later"])
@pytest.mark.parametrize("training", [False, True], ids=["infer", "train"])
def test_a_replay_bumps_the_moving_statistics_once_a_call(read_later, training):
    """A replay bumps the version of each moving statistic its steps update (as ``invoke``
    does, in inference too) once a call: at its end where no later step reads it (one
    loop, not a call per step), in place where one does."""
    x = mx.nd.array(np.random.RandomState(5).randn(2, 3, 4, 4))
    if read_later:
        net = _StatsRead()
        net.initialize()
        stats = [net.bn.running_mean, net.bn.running_var]
    else:
        net = nn.HybridSequential()
        net.add(nn.Conv2D(8, 1, in_channels=3), nn.BatchNorm(), nn.Activation("relu"),
                nn.Conv2D(4, 3, padding=1), nn.BatchNorm())
        net.initialize()
        stats = [p for p in net.collect_params().values() if "running" in p.name]
    net.hybridize()
    net(x)
    graph = net._cached_graph[0][1]
    slots = {id(p): s for s, p in graph.param_slots}
    late = [s for s in graph._late_bumps]
    assert sorted(late) == sorted(slots[id(p)] for p in stats[read_later:])
    versions = [p.data()._share_version() for p in stats]
    for _ in range(2):
        before = [v[0] for v in versions]
        mean = stats[0].data().asnumpy()
        with mx.autograd.train_mode() if training else mx.autograd.predict_mode():
            net(x)
        assert [v[0] for v in versions] == [b + 1 for b in before]
        assert np.array_equal(stats[0].data().asnumpy(), mean) != training
