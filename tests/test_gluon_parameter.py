"""gluon.Parameter, Constant and ParameterDict, as MXNet 1.9's documentation describes them.

Expected strings (reprs, error messages) were observed from real MXNet 1.9.1.
"""
import numpy as np
import pytest

import mxlite as mx
from mxlite import gluon


def test_parameter_repr_and_attributes():
    p = gluon.Parameter("fc_weight", shape=(64, 100), lr_mult=2.0, wd_mult=0.5)
    # MXNet 1.9.1 prints the default dtype as the numpy class.
    assert repr(p) == "Parameter fc_weight (shape=(64, 100), dtype=<class 'numpy.float32'>)"
    assert repr(gluon.Parameter("w", shape=3, dtype="float16")) == \
        "Parameter w (shape=(3,), dtype=float16)"
    assert (p.name, p.grad_req, p.lr_mult, p.wd_mult) == ("fc_weight", "write", 2.0, 0.5)
    assert gluon.Parameter("b", differentiable=False).grad_req == "null"
    with pytest.raises(AssertionError, match="grad_req must be one of 'write', 'add', or 'null'"):
        gluon.Parameter("b", grad_req="sometimes")


def test_initialize_data_and_grad():
    w = gluon.Parameter("fc_weight", shape=(2, 3), init=mx.init.Constant(0.5))
    w.initialize()
    assert np.all(w.data().asnumpy() == 0.5)
    assert w.data().context == mx.cpu(0)
    assert np.all(w.grad().asnumpy() == 0) and w.grad().shape == (2, 3)
    assert w.list_ctx() == [mx.cpu(0)]
    x = mx.nd.ones((4, 3))
    with mx.autograd.record():
        y = mx.nd.FullyConnected(x, w.data(), num_hidden=2, no_bias=True)
    y.backward()
    assert np.all(w.grad().asnumpy() == 4)
    w.zero_grad()
    assert np.all(w.grad().asnumpy() == 0)


def test_default_init_is_uniform_007():
    w = gluon.Parameter("fc_weight", shape=(50, 50))
    w.initialize()
    a = w.data().asnumpy()
    assert np.abs(a).max() <= 0.07 and a.std() > 0.03


def test_grad_req_add_accumulates():
    w = gluon.Parameter("w", shape=(3,), grad_req="add", init="ones")
    w.initialize()
    for _ in range(2):
        with mx.autograd.record():
            y = (w.data() * 3).sum()
        y.backward()
    assert np.all(w.grad().asnumpy() == 6)


def test_multiple_contexts_are_separate_copies():
    w = gluon.Parameter("w", shape=(2, 2))
    w.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    a, b = w.list_data()
    assert a.context == mx.cpu(0) and b.context == mx.cpu(1)
    assert np.array_equal(a.asnumpy(), b.asnumpy())         # initialised once, then copied
    a[:] = 5
    assert not np.any(b.asnumpy() == 5)
    assert w.data(mx.cpu(1)) is b
    assert [g.context for g in w.list_grad()] == [mx.cpu(0), mx.cpu(1)]
    with pytest.raises(RuntimeError) as e:
        w.data(mx.cpu(2))
    assert str(e.value) == ("Parameter 'w' was not initialized on context cpu(2). "
                            "It was only initialized on [cpu(0), cpu(1)].")
    with mx.cpu(1):
        assert w.data() is b                   # the current context picks the copy


def test_set_data_writes_every_context():
    w = gluon.Parameter("w", shape=(2,))
    w.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    w.set_data(mx.nd.array([1, 2]))
    for d in w.list_data():
        assert np.array_equal(d.asnumpy(), [1, 2])
    with pytest.raises(AssertionError, match="incompatible"):
        w.set_data(mx.nd.zeros((3,)))


def test_uninitialized_error():
    p = gluon.Parameter("w", shape=(2, 3))
    with pytest.raises(RuntimeError) as e:
        p.data()
    assert str(e.value) == (
        "Parameter 'w' has not been initialized. Note that you should initialize parameters "
        "and create Trainer with Block.collect_params() instead of Block.params because the "
        "later does not include Parameters of nested child Blocks")


def test_deferred_error_and_completion():
    p = gluon.Parameter("dense2_weight", shape=(2, 0), allow_deferred_init=True)
    p.initialize(init=mx.init.One())
    with pytest.raises(gluon.DeferredInitializationError) as e:
        p.data()
    assert str(e.value) == (
        "Parameter 'dense2_weight' has not been initialized yet because initialization was "
        "deferred. Actual initialization happens during the first forward pass. Please pass "
        "one batch of data through the network before accessing Parameters. You can also avoid "
        "deferred initialization by specifying in_units, num_features, etc., for network "
        "layers.")
    assert p.list_ctx() == [mx.cpu(0)]
    p.shape = (2, 5)
    p._finish_deferred_init()
    assert np.all(p.data().asnumpy() == 1) and p.data().shape == (2, 5)


def test_unknown_shape_without_deferral_is_an_error():
    p = gluon.Parameter("v", shape=(2, 0))
    with pytest.raises(ValueError) as e:
        p.initialize()
    assert str(e.value) == "Cannot initialize Parameter 'v' because it has invalid shape: (2, 0)."


def test_reinitialize_warns_unless_forced():
    p = gluon.Parameter("w", shape=(2, 3), init=mx.init.Zero())
    p.initialize()
    with pytest.warns(UserWarning, match="Parameter 'w' is already initialized, ignoring. "
                                         "Set force_reinit=True to re-initialize."):
        p.initialize(init=mx.init.One())
    assert np.all(p.data().asnumpy() == 0)
    p.initialize(init=mx.init.One(), force_reinit=True)
    assert np.all(p.data().asnumpy() == 1)


def test_grad_req_null():
    p = gluon.Parameter("u", shape=(2, 3), grad_req="null")
    p.initialize()
    with pytest.raises(RuntimeError) as e:
        p.grad()
    assert str(e.value) == "Cannot get gradient array for Parameter 'u' because grad_req='null'"
    p.grad_req = "write"
    assert p.grad().shape == (2, 3)
    p.grad_req = "null"
    with mx.autograd.record():
        y = p.data() * 2
    assert p.data()._entry is None and y._entry is None     # not a variable any more


def test_reset_ctx_keeps_value():
    p = gluon.Parameter("w", shape=(3,), init=mx.init.Constant(2))
    p.initialize(ctx=mx.cpu(0))
    p.reset_ctx([mx.cpu(1), mx.cpu(2)])
    assert p.list_ctx() == [mx.cpu(1), mx.cpu(2)]
    assert np.all(p.data(mx.cpu(2)).asnumpy() == 2)
    with pytest.raises(ValueError, match="Cannot reset context for Parameter 'q'"):
        gluon.Parameter("q", shape=(1,)).reset_ctx(mx.cpu())


def test_cast_keeps_values_and_gradients():
    p = gluon.Parameter("w", shape=(3,), init=mx.init.Constant(1.5))
    p.initialize()
    p.cast("float64")
    assert p.data().dtype == np.float64 and p.grad().dtype == np.float64
    with mx.autograd.record():
        y = (p.data() * p.data()).sum()
    y.backward()
    assert np.allclose(p.grad().asnumpy(), 3.0)
    p.dtype = "float16"
    assert p.data().dtype == np.float16 and p.dtype == "float16"


def test_constant():
    c = gluon.Constant("c", [[1, 2], [3, 4]])
    assert repr(c) == "Constant c (shape=(2, 2), dtype=<class 'numpy.float32'>)"
    assert c.grad_req == "null"
    c.initialize()
    assert np.array_equal(c.data().asnumpy(), [[1, 2], [3, 4]])
    with pytest.warns(UserWarning, match='Constant parameter "c" does not support grad_req'):
        c.grad_req = "write"
    assert c.grad_req == "null"


def test_parameter_dict_get_and_repr():
    params = gluon.ParameterDict("net_")
    w = params.get("weight", shape=(2, 0))
    assert w.name == "net_weight" and params.get("weight") is w
    assert params.get("weight", shape=(0, 3)).shape == (2, 3)      # 0 dims merge
    assert repr(params) == ("net_ (\n  Parameter net_weight (shape=(2, 3), "
                            "dtype=<class 'numpy.float32'>)\n)")
    assert repr(gluon.ParameterDict()) == "(\n\n)"
    with pytest.raises(AssertionError) as e:
        params.get("weight", shape=(3, 3))
    assert str(e.value) == ("Cannot retrieve Parameter 'net_weight' because desired attribute "
                            "does not match with stored for attribute 'shape': desired '(3, 3)' "
                            "vs stored '(2, 3)'.")
    with pytest.raises(AssertionError, match="attribute 'dtype'"):
        params.get("weight", dtype="float16")
    assert list(params.keys()) == ["net_weight"] and list(params.values()) == [w]
    assert dict(params.items()) == {"net_weight": w} and "net_weight" in params


def test_parameter_dict_shared_and_update():
    a = gluon.ParameterDict("a_")
    w = a.get("w", shape=(2,))
    b = gluon.ParameterDict("a_", shared=a)
    assert b.get("w") is w
    c = gluon.ParameterDict("c_")
    c.update(a)
    assert c["a_w"] is w
    d = gluon.ParameterDict("a_")
    d.get("w", shape=(2,))
    with pytest.raises(AssertionError, match="different Parameters with the same name 'a_w'"):
        c.update(d)


def test_get_constant():
    params = gluon.ParameterDict("a_")
    c = params.get_constant("c", [1, 2])
    assert isinstance(c, gluon.Constant) and params.get_constant("c") is c
    assert params.get_constant("c", [1, 2]) is c
    with pytest.raises(KeyError) as e:
        params.get_constant("d")
    assert "No constant named 'a_d'. Please specify value" in str(e.value)
    with pytest.raises(AssertionError, match="value doesn't match"):
        params.get_constant("c", [1, 3])


def test_parameter_dict_initialize_setattr_zero_grad_reset():
    params = gluon.ParameterDict("p_")
    params.get("weight", shape=(2, 2))
    params.get("bias", shape=(2,), init="ones")
    params.initialize(mx.init.Constant(3), ctx=[mx.cpu(0), mx.cpu(1)])
    assert np.all(params["p_weight"].data(mx.cpu(1)).asnumpy() == 3)
    assert np.all(params["p_bias"].data(mx.cpu(0)).asnumpy() == 1)
    assert sorted(params.list_ctx(), key=str) == [mx.cpu(0), mx.cpu(1)]
    params.setattr("lr_mult", 0.5)
    assert all(p.lr_mult == 0.5 for p in params.values())
    for g in params["p_weight"].list_grad():
        g[:] = 1
    params.zero_grad()
    assert all(np.all(g.asnumpy() == 0) for g in params["p_weight"].list_grad())
    params.reset_ctx(mx.cpu(3))
    assert params["p_weight"].list_ctx() == [mx.cpu(3)]
    params.setattr("grad_req", "null")
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        params["p_weight"].grad()


def test_parameter_dict_save_load(tmp_path):
    f = str(tmp_path / "p.params")
    params = gluon.ParameterDict("net_")
    params.get("weight", shape=(2, 3))
    params.get("bias", shape=(2,))
    params.initialize()
    params.save(f, strip_prefix="net_")
    assert sorted(mx.nd.load(f)) == ["bias", "weight"]
    other = gluon.ParameterDict("net_")
    other.get("weight", shape=(2, 0), allow_deferred_init=True)
    other.get("bias", shape=(2,))
    other.load(f, restore_prefix="net_")
    assert other["net_weight"].shape == (2, 3)
    assert np.array_equal(other["net_weight"].data().asnumpy(),
                          params["net_weight"].data().asnumpy())
    with pytest.raises(ValueError, match="Prefix 'x_' is to be striped before saving"):
        params.save(f, strip_prefix="x_")


def test_parameter_dict_load_errors_change_nothing(tmp_path):
    f = str(tmp_path / "p.params")
    mx.nd.save(f, {"net_weight": mx.nd.ones((2, 4)), "net_extra": mx.nd.ones((1,))})
    params = gluon.ParameterDict("net_")
    params.get("weight", shape=(2, 3), init="zeros")
    params.get("bias", shape=(2,), init="zeros")
    params.initialize()
    with pytest.raises(AssertionError) as e:
        params.load(f)
    msg = str(e.value)
    assert "missing" in msg and "'net_bias'" in msg
    assert "not present" in msg and "'net_extra'" in msg
    assert "shape mismatch: 'net_weight' expected (2, 3) vs saved (2, 4)" in msg
    assert np.all(params["net_weight"].data().asnumpy() == 0)
