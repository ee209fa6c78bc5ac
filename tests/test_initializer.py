"""mx.init: registry, suffix defaults, and the statistics of each initializer."""
import json

import numpy as np
import pytest

import mxlite as mx
from mxlite.initializer import InitDesc


def _fill(init, name, shape, dtype="float32"):
    arr = mx.nd.zeros(shape, dtype=dtype)
    init(InitDesc(name), arr)
    return arr.asnumpy()


def test_init_is_initializer_module():
    assert mx.init is mx.initializer
    assert isinstance(mx.init.create("xavier"), mx.init.Xavier)


@pytest.mark.parametrize("name,cls", [("zeros", "Zero"), ("zero", "Zero"), ("ones", "One"),
                                      ("one", "One"), ("uniform", "Uniform"),
                                      ("normal", "Normal"), ("orthogonal", "Orthogonal"),
                                      ("xavier", "Xavier"), ("msraprelu", "MSRAPrelu"),
                                      ("bilinear", "Bilinear"), ("lstmbias", "LSTMBias"),
                                      ("Xavier", "Xavier")])
def test_create_by_name(name, cls):
    assert type(mx.init.create(name)) is getattr(mx.init, cls)


def test_create_from_dumps_instance_and_kwargs():
    # Strings observed from real MXNet 1.9.1's dumps().
    assert mx.init.Xavier().dumps() == \
        '["xavier", {"rnd_type": "uniform", "factor_type": "avg", "magnitude": 3}]'
    assert mx.init.MSRAPrelu().dumps() == '["msraprelu", {"factor_type": "avg", "slope": 0.25}]'
    assert mx.init.Constant(2).dumps() == '["constant", {"value": 2}]'
    init = mx.init.create('["normal", {"sigma": 0.5}]')
    assert isinstance(init, mx.init.Normal) and init.sigma == 0.5
    assert mx.init.create("uniform", scale=0.2).scale == 0.2
    inst = mx.init.Zero()
    assert mx.init.create(inst) is inst
    assert mx.init.Normal(0.5) == mx.init.create(mx.init.Normal(0.5).dumps())
    with pytest.raises(ValueError, match="foo is not registered"):
        mx.init.create("foo")


def test_register_custom_initializer():
    @mx.init.register
    @mx.init.alias("mytestinit")
    class CustomTestInit(mx.init.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 0.1

        def _init_bias(self, _, arr):
            arr[:] = 1

    init = mx.init.create("customtestinit")
    assert np.all(_fill(init, "fc_weight", (2, 2)) == np.float32(0.1))
    assert np.all(_fill(init, "fc_bias", (2,)) == 1)
    assert isinstance(mx.init.create("mytestinit"), CustomTestInit)
    with pytest.raises(TypeError):
        mx.init.register(object)


@pytest.mark.parametrize("name,value", [("fc_bias", 0), ("bn_beta", 0), ("bn_gamma", 1),
                                        ("bn_running_mean", 0), ("bn_running_var", 1),
                                        ("bn_moving_mean", 0), ("bn_moving_var", 1)])
def test_suffix_defaults(name, value):
    arr = _fill(mx.init.Uniform(5.0), name, (7,))
    assert np.all(arr == value)


def test_unknown_suffix_raises():
    with pytest.raises(ValueError, match="Unknown initialization pattern for fc_thing"):
        _fill(mx.init.Uniform(), "fc_thing", (3,))


def test_explicit_init_attr_overrides_suffix():
    arr = mx.nd.zeros((3,))
    mx.init.Uniform()(InitDesc("fc_bias", {"__init__": "ones"}), arr)
    assert np.all(arr.asnumpy() == 1)


def test_zero_one_constant():
    assert np.all(_fill(mx.init.Zero(), "w_weight", (3, 4)) == 0)
    assert np.all(_fill(mx.init.One(), "w_weight", (3, 4)) == 1)
    assert np.all(_fill(mx.init.Constant(2.5), "w_weight", (3, 4)) == 2.5)
    row = mx.nd.array([1, 2, 3, 4])
    assert np.array_equal(_fill(mx.init.Constant(row), "w_weight", (2, 4))[1], [1, 2, 3, 4])


def test_uniform_and_normal_statistics():
    u = _fill(mx.init.Uniform(0.5), "w_weight", (200, 300))
    assert u.min() >= -0.5 and u.max() <= 0.5
    assert abs(u.var() - 0.25 / 3) < 0.003        # var of U(-a, a) is a^2 / 3
    n = _fill(mx.init.Normal(2.0), "w_weight", (200, 300))
    assert abs(n.mean()) < 0.03 and abs(n.std() - 2.0) < 0.02


def test_seed_makes_init_repeat():
    mx.random.seed(42)
    a = _fill(mx.init.Xavier(), "w_weight", (5, 6))
    mx.random.seed(42)
    b = _fill(mx.init.Xavier(), "w_weight", (5, 6))
    assert np.array_equal(a, b)


@pytest.mark.parametrize("factor_type,rnd_type,magnitude", [
    ("avg", "uniform", 3), ("in", "uniform", 2), ("out", "gaussian", 3), ("avg", "gaussian", 1)])
def test_xavier_variance(factor_type, rnd_type, magnitude):
    shape = (64, 32, 3, 3)
    fan_in, fan_out = 32 * 9, 64 * 9
    factor = {"avg": (fan_in + fan_out) / 2, "in": fan_in, "out": fan_out}[factor_type]
    scale = np.sqrt(magnitude / factor)
    w = _fill(mx.init.Xavier(rnd_type, factor_type, magnitude), "c_weight", shape)
    want = scale ** 2 / 3 if rnd_type == "uniform" else scale ** 2
    assert abs(w.var() / want - 1) < 0.03
    if rnd_type == "uniform":
        assert np.abs(w).max() <= scale


def test_xavier_rejects_vectors():
    with pytest.raises(ValueError, match="Xavier initializer cannot be applied to vector"):
        _fill(mx.init.Xavier(), "fc_weight", (5,))


def test_msraprelu_is_gaussian_with_he_variance():
    w = _fill(mx.init.MSRAPrelu(factor_type="in", slope=0.0), "w_weight", (256, 400))
    assert abs(w.var() / (2.0 / 400) - 1) < 0.03


@pytest.mark.parametrize("shape", [(20, 50), (50, 20), (8, 3, 2, 2)])
@pytest.mark.parametrize("rand_type", ["uniform", "normal"])
def test_orthogonal(shape, rand_type):
    w = _fill(mx.init.Orthogonal(scale=1.5, rand_type=rand_type), "w_weight", shape)
    m = w.reshape(shape[0], -1).astype(np.float64) / 1.5
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    assert np.allclose(gram, np.eye(gram.shape[0]), atol=1e-5)


def test_bilinear_kernel():
    # Values observed from real MXNet 1.9.1 for a (2, 3, 4, 4) weight.
    want = np.array([[0.0625, 0.1875, 0.1875, 0.0625], [0.1875, 0.5625, 0.5625, 0.1875],
                     [0.1875, 0.5625, 0.5625, 0.1875], [0.0625, 0.1875, 0.1875, 0.0625]])
    w = _fill(mx.init.Bilinear(), "up_weight", (2, 3, 4, 4))
    assert np.allclose(w[1, 2], want)


def test_lstmbias():
    # As gluon's LSTM passes it: through the parameter's own init (suffix rules skipped).
    p = mx.gluon.Parameter("lstm0_i2h_bias", shape=(12,), init=mx.init.LSTMBias(forget_bias=2.0))
    p.initialize()
    b = p.data().asnumpy()
    want = np.zeros(12)
    want[3:6] = 2.0
    assert np.array_equal(b, want)


def test_mixed():
    init = mx.init.Mixed(["fc1_.*", ".*"], [mx.init.Constant(3), mx.init.One()])
    assert np.all(_fill(init, "fc1_weight", (2,)) == 3)
    assert np.all(_fill(init, "fc1_bias", (2,)) == 0)      # the suffix rule still applies
    assert np.all(_fill(init, "fc2_weight", (2, 2)) == 1)
    with pytest.raises(ValueError, match="did not match any pattern"):
        _fill(mx.init.Mixed(["bias"], [mx.init.Zero()]), "fc_weight", (2,))


def test_load(tmp_path):
    f = str(tmp_path / "init.params")
    mx.nd.save(f, {"arg:fc_weight": mx.nd.array([[1, 2], [3, 4]]), "fc_bias": mx.nd.ones((2,))})
    init = mx.init.Load(f, default_init=mx.init.Constant(7))
    assert np.array_equal(_fill(init, "fc_weight", (2, 2)), [[1, 2], [3, 4]])
    assert np.array_equal(_fill(init, "fc_bias", (2,)), [1, 1])
    assert np.all(_fill(init, "other_weight", (3,)) == 7)
    with pytest.raises(ValueError, match="Shape mismatch, target"):
        _fill(init, "fc_weight", (3, 2))
    with pytest.raises(ValueError, match="no default Initializer"):
        _fill(mx.init.Load(f), "other_weight", (2,))


def test_initializer_in_gluon_parameter():
    p = mx.gluon.Parameter("fc_weight", shape=(3, 4), init=mx.init.Constant(0.5))
    p.initialize(init=None, default_init=mx.init.Zero())
    assert np.all(p.data().asnumpy() == 0.5)
    assert json.loads(mx.init.Uniform(0.1).dumps()) == ["uniform", {"scale": 0.1}]


def test_create_takes_the_initializer_first_or_by_keyword():
    # MXNet's create(*args, **kwargs): a constructor argument named init passes through.
    assert isinstance(mx.init.create("normal", sigma=0.1), mx.init.Normal)
    assert isinstance(mx.init.create(initializer="uniform", scale=0.2), mx.init.Uniform)
    fused = mx.init.create("fusedrnn", init=None, num_hidden=4, num_layers=1, mode="lstm")
    assert isinstance(fused, mx.init.FusedRNN)
    with pytest.raises(TypeError, match="first argument"):
        mx.init.create()
