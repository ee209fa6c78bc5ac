"""A hybridized graph's inference on parts of its batch at once (gluon/batch_parts.py):
the same outputs as the whole replay, and the graphs that must run whole."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, engine, gluon
from mxlite.base import MXNetError
from mxlite.gluon import batch_parts, nn
from mxlite.gluon.model_zoo.vision.mobilenet import LinearBottleneck
from mxlite.gluon.model_zoo.vision.resnet import BasicBlockV1, BottleneckV1
from mxlite.operator import batchwise
from mxlite.operator.registry import register_op


@pytest.fixture
def threads(monkeypatch):
    """Two threads (the parts run at once), the count restored after the test; graphs
    cut however small their steps."""
    monkeypatch.setattr(batch_parts, "MIN_STEP_VALUES", 0)
    prev = engine.set_num_threads(2)
    yield
    engine.set_num_threads(prev)


@pytest.fixture
def cuts(monkeypatch):
    """The batch sizes each replay on parts was given, in order."""
    seen = []
    real = engine.batch_parts

    def spy(fn, n):
        seen.append(n)
        return real(fn, n)
    monkeypatch.setattr(engine, "batch_parts", spy)
    return seen


class Fn(gluon.HybridBlock):
    """``fn(F, x, *params)``, with parameters of the given shapes (random values)."""

    def __init__(self, fn, *shapes):
        super().__init__()
        self.fn = fn
        self.ws = [self.params.get("w%d" % i, shape=s, init=mx.init.Uniform(1.0))
                   for i, s in enumerate(shapes)]
        for i, w in enumerate(self.ws):
            setattr(self, "w%d" % i, w)

    def hybrid_forward(self, F, *xs, **ws):
        return self.fn(F, *xs, *[ws["w%d" % i] for i in range(len(self.ws))])


def _data(*shape):
    return mx.nd.array(np.random.uniform(-2, 2, shape).astype(np.float32))


def _whole_and_parts(monkeypatch, net, *xs, cuts=None):
    """(outputs of the whole replay, outputs of the replay on parts), as NumPy arrays;
    ``cuts`` (the fixture) then holds what the second replay cut."""
    net.hybridize()
    monkeypatch.setattr(batch_parts, "ENABLED", False)
    whole = net(*xs)
    monkeypatch.setattr(batch_parts, "ENABLED", True)
    net(*xs)                # (a graph's first run with given shapes runs whole)
    if cuts is not None:
        cuts.clear()
    parts = net(*xs)
    flat = (lambda o: [a.asnumpy() for a in o]) if isinstance(whole, (list, tuple)) else (
        lambda o: [o.asnumpy()])
    return flat(whole), flat(parts)


def _same(monkeypatch, net, *xs, cut=True, cuts=None):
    whole, parts = _whole_and_parts(monkeypatch, net, *xs, cuts=cuts)
    for w, p in zip(whole, parts):
        assert w.shape == p.shape
        # the kernels' own numbers row by row; OpenBLAS may order a product's sums by
        # its shape, hence round-off and not bits
        np.testing.assert_allclose(p, w, rtol=2e-6, atol=1e-6)
    if cuts is not None:
        assert cuts == ([xs[0].shape[0]] if cut else [])
    return parts


def _conv_bn_relu(channels=3):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(6, 3, padding=1, in_channels=channels), nn.BatchNorm(in_channels=6),
            nn.Activation("relu"))
    return net


FAMILIES = [
    ("conv_bn_relu", _conv_bn_relu, (4, 3, 6, 6)),
    ("conv_bias_strided", lambda: nn.Conv2D(5, 3, strides=2, in_channels=3), (5, 3, 7, 7)),
    ("deconv", lambda: nn.Conv2DTranspose(3, 3, strides=2, in_channels=2), (4, 2, 4, 4)),
    ("activations", lambda: Fn(lambda F, x: F.Activation(F.sigmoid(x), act_type="tanh")
                               + F.relu(x) + F.clip(x, -1, 1)
                               + F.Activation(x, act_type="softrelu")), (4, 3, 5)),
    ("leaky", lambda: Fn(lambda F, x: F.LeakyReLU(x, act_type="elu")
                         + F.LeakyReLU(x, slope=0.1)), (3, 4, 2)),
    ("prelu", lambda: nn.PReLU(in_channels=3), (4, 3, 5)),
    ("pooling", lambda: Fn(lambda F, x: F.concat(
        F.Pooling(x, kernel=(2, 2), pool_type="max", stride=(2, 2)),
        F.Pooling(x, kernel=(2, 2), pool_type="avg", stride=(2, 2)), dim=1)), (4, 3, 6, 6)),
    ("global_pool", lambda: nn.GlobalAvgPool2D(), (4, 3, 5, 5)),
    ("dense_flatten", lambda: Fn(lambda F, x, w: F.FullyConnected(F.flatten(x), w, num_hidden=5,
                                                                   no_bias=True), (5, 12)),
     (6, 3, 4)),
    ("dense_3d", lambda: nn.Dense(4, flatten=False, in_units=5), (4, 3, 5)),
    ("broadcast", lambda: Fn(lambda F, x, a, b: F.broadcast_add(F.broadcast_mul(x, a), b) - x * 2
                             + (x > 0), (1, 3, 1), (3, 1)), (4, 3, 2)),
    ("add_n", lambda: Fn(lambda F, x: F.add_n(x, F.relu(x), x * x)), (4, 5)),
    ("dropout_predict", lambda: nn.Dropout(0.5), (4, 6)),
    ("softmax", lambda: Fn(lambda F, x: F.softmax(x, axis=-1) + F.log_softmax(x, axis=1)),
     (4, 3, 3)),
    ("concat_split", lambda: Fn(lambda F, x: F.concat(*F.split(x, num_outputs=2, axis=1)[::-1],
                                                      dim=2)), (4, 4, 3)),
    ("reshape_keeps_batch", lambda: Fn(lambda F, x: F.reshape(x, shape=(0, -1)) + 1), (4, 3, 2)),
    ("norms", lambda: Fn(lambda F, x, g, b, g2, b2: F.LayerNorm(x, g, b, axis=-1)
                         + F.InstanceNorm(x, g2, b2), (2,), (2,), (3,), (3,)), (4, 3, 2)),
]


@pytest.mark.parametrize("name,factory,shape", FAMILIES, ids=[f[0] for f in FAMILIES])
def test_each_op_family_runs_on_parts_as_whole(monkeypatch, threads, cuts, name, factory, shape):
    net = factory()
    net.initialize()
    _same(monkeypatch, net, _data(*shape), cuts=cuts)


@pytest.mark.parametrize("batch", [2, 5])
def _blocks():
    net = nn.HybridSequential()
    net.add(BasicBlockV1(8, 1, downsample=True, in_channels=4),
            BottleneckV1(16, 2, downsample=True, in_channels=8),
            LinearBottleneck(16, 16, 6, 1), nn.GlobalAvgPool2D(), nn.Dense(3))
    net.initialize(mx.init.Xavier())
    return net


@pytest.mark.parametrize("batch", [2, 5])
def test_resnet_and_mobilenet_blocks(monkeypatch, threads, cuts, batch):
    net, twin = _blocks(), _blocks()
    x = _data(batch, 4, 8, 8)
    net(x)              # (deferred initialisation)
    for p in net.collect_params().values():      # moving statistics not 0 and 1
        if p.name.endswith(("running_mean", "running_var")):
            p.set_data(mx.nd.array(np.random.uniform(0.5, 1.5, p.shape)))
    twin(x)
    for a, b in zip(net.collect_params().values(), twin.collect_params().values()):
        b.set_data(a.data())
    got = _same(monkeypatch, net, x, cuts=cuts)[0]
    # and the imperative run's numbers
    np.testing.assert_allclose(got, twin(x).asnumpy(), rtol=1e-5, atol=1e-6)


def test_graphs_of_small_steps_run_whole(monkeypatch, threads, cuts):
    monkeypatch.setattr(batch_parts, "MIN_STEP_VALUES", 1 << 17)
    net = Fn(lambda F, x: F.relu(x) * 2)        # two steps
    net.initialize()
    _same(monkeypatch, net, _data(4, 1 << 14), cut=False, cuts=cuts)     # half the values
    _same(monkeypatch, net, _data(4, 1 << 15), cuts=cuts)


def test_a_batch_of_one_and_one_thread_run_whole(monkeypatch, threads, cuts):
    net = _conv_bn_relu()
    net.initialize()
    _same(monkeypatch, net, _data(1, 3, 4, 4), cut=False, cuts=cuts)
    engine.set_num_threads(1)
    _same(monkeypatch, net, _data(3, 3, 4, 4), cut=False, cuts=cuts)


NOT_SEPARABLE = [
    ("sum_over_batch", lambda: Fn(lambda F, x: F.sum(x, axis=0) + 1), (4, 3)),
    ("softmax_over_batch", lambda: Fn(lambda F, x: F.softmax(x, axis=0)), (4, 3)),
    ("reshape_merging_batch", lambda: Fn(lambda F, x: F.reshape(x, shape=(-3, 0)) * 2), (4, 3, 2)),
    ("reshape_to_fixed_batch", lambda: Fn(lambda F, x: F.reshape(x, shape=(4, -1)) * 2), (4, 3, 2)),
    ("param_with_batch_rows", lambda: Fn(lambda F, x, w: x * w, (4, 3)), (4, 3)),
    ("concat_over_batch", lambda: Fn(lambda F, x: F.concat(x, x * 2, dim=0)), (4, 3)),
    ("concat_with_param", lambda: Fn(lambda F, x, w: F.concat(x, w, dim=1), (4, 2)), (4, 3)),
    ("undeclared_op", lambda: Fn(lambda F, x: F.sort(x, axis=1)), (4, 3)),
]


@pytest.mark.parametrize("name,factory,shape", NOT_SEPARABLE, ids=[f[0] for f in NOT_SEPARABLE])
def test_graphs_that_mix_rows_run_whole(monkeypatch, threads, cuts, name, factory, shape):
    net = factory()
    net.initialize()
    _same(monkeypatch, net, _data(*shape), cut=False, cuts=cuts)


def test_batch_norm_in_training_mode_runs_whole(monkeypatch, threads, cuts):
    net = _conv_bn_relu()
    net.initialize()
    x = _data(4, 3, 5, 5)
    with autograd.train_mode():
        got = _same(monkeypatch, net, x, cut=False, cuts=cuts)[0]
    # the batch statistics: every channel of the output has mean ~0 before relu, so
    # about half the values are zeros
    assert 0.3 < (got == 0).mean() < 0.7
    with autograd.train_mode():        # use_global_stats: the moving statistics, cut
        net = nn.HybridSequential()
        net.add(nn.Conv2D(6, 3, in_channels=3), nn.BatchNorm(use_global_stats=True,
                                                             in_channels=6))
        net.initialize()
        _same(monkeypatch, net, x, cuts=cuts[:0] or None)


def test_dropout_in_training_mode_runs_whole(monkeypatch, threads, cuts):
    net = Fn(lambda F, x: F.Dropout(x, p=0.5) * 1)
    net.initialize()
    net.hybridize()
    with autograd.train_mode():
        y = net(_data(6, 50)).asnumpy()
    assert cuts == [] and 0.3 < (y == 0).mean() < 0.7


def test_a_recorded_forward_runs_whole(monkeypatch, threads, cuts):
    net = _conv_bn_relu()
    net.initialize()
    net.hybridize()
    x = _data(4, 3, 5, 5)
    x.attach_grad()
    net(x)
    want = net(x).asnumpy()
    with autograd.record(train_mode=False):
        y = net(x)
    y.backward()
    assert cuts == [4]          # the second, unrecorded call only
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-6, atol=1e-6)
    assert np.abs(x.grad.asnumpy()).sum() > 0


def test_nested_hybridized_blocks(monkeypatch, threads, cuts):
    inner = [_conv_bn_relu(), _conv_bn_relu(6)]
    outer = nn.HybridSequential()
    outer.add(*inner)
    outer.initialize()
    _same(monkeypatch, outer, _data(4, 3, 5, 5), cuts=cuts)     # the outer graph, cut
    cuts.clear()
    plain = nn.Sequential()          # hybridized children of a plain block: each cut
    plain.add(*inner)
    for block in inner:
        block.hybridize()
    x = _data(4, 3, 5, 5)
    plain(x)
    np.testing.assert_allclose(plain(x).asnumpy(), outer(x).asnumpy(), rtol=2e-6, atol=1e-6)
    assert cuts == [4, 4, 4]


def test_two_data_inputs_and_two_outputs(monkeypatch, threads, cuts):
    net = Fn(lambda F, x, y, w: [F.broadcast_add(F.relu(F.broadcast_mul(x, w)), y), F.sigmoid(y)],
             (3,))
    net.initialize()
    _same(monkeypatch, net, _data(5, 3), _data(5, 3), cuts=cuts)
    cuts.clear()
    _same(monkeypatch, net, _data(5, 3), _data(1, 3), cut=False, cuts=cuts)


def _failing_op():
    def compute(p, xp, x):
        if (x > 100).any():
            raise ValueError("a row above 100")
        return x + 1
    return register_op("test_fails_above_100", compute, batchwise=batchwise.rows())


@pytest.mark.parametrize("row", [0, -1])
def test_an_error_in_a_part_is_raised_and_leaves_no_worker_hung(threads, cuts, row):
    op = _failing_op()
    net = Fn(lambda F, x: getattr(F, op.name)(F.relu(x)))
    net.initialize()
    net.hybridize()
    x = _data(4, 3)
    net(x), net(x)
    bad = x.asnumpy()
    bad[row] = 1000
    with pytest.raises(MXNetError, match="test_fails_above_100.*a row above 100"):
        net(mx.nd.array(bad))
    np.testing.assert_allclose(net(x).asnumpy(), np.maximum(x.asnumpy(), 0) + 1, rtol=1e-6)
    assert cuts == [4, 4, 4]


@pytest.mark.parametrize("name", ["resnet18_v1", "mobilenetv2_0.25", "vgg11"])
def test_model_zoo_networks_run_on_parts(monkeypatch, threads, cuts, name):
    net = mx.gluon.model_zoo.vision.get_model(name, classes=10)
    net.initialize(mx.init.Xavier())
    _same(monkeypatch, net, _data(2, 3, 32, 32), cuts=cuts)


def test_the_environment_turns_the_cut_off():
    import subprocess
    import sys
    code = "from mxlite.gluon import batch_parts; print(batch_parts.ENABLED)"
    env = dict(os.environ, MXLITE_BATCH_PARTS="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=os.path.dirname(os.path.dirname(__file__)))
    assert out.stdout.strip() == "False"


def test_engine_batch_parts_runs_one_part_inside_a_worker(threads):
    seen = []

    def part(lo, hi):
        seen.append((lo, hi, engine._here.inside))
        return engine.batch_parts(lambda a, b: (a, b), hi - lo)      # nested: one part
    assert engine.batch_parts(part, 5) == [[(0, 2)], [(0, 3)]]
    assert sorted(seen) == [(0, 2, True), (2, 5, True)] and not engine._here.inside
