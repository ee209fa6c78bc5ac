"""mx.test_utils' symbolic checks and helpers: each check passes on correct data and
raises an AssertionError naming the mismatching output or argument on wrong data."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite import test_utils as tu


def _ab():
    return mx.sym.Variable("a"), mx.sym.Variable("b")


def _mul_data():
    rng = np.random.RandomState(0)
    return rng.randn(3, 4), rng.randn(3, 4), rng.randn(3, 4)


# -- check_symbolic_forward -----------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, "asnumpy"])
def test_forward_passes_on_correct_outputs(dtype):
    a, b = _ab()
    x, y, _ = _mul_data()
    sym = a * b + a
    outs = tu.check_symbolic_forward(sym, [x, y], [x * y + x], dtype=dtype)
    want = np.float64 if dtype == "asnumpy" else dtype
    assert outs[0].dtype == want
    tu.check_symbolic_forward(sym, {"b": y, "a": x}, {sym.list_outputs()[0]: x * y + x})


def test_forward_fails_naming_the_output():
    a, b = _ab()
    x, y, _ = _mul_data()
    sym = mx.sym.Group([a * b, a + b])
    wrong = x + y
    wrong[1, 2] += 0.5
    with pytest.raises(AssertionError, match="FORWARD_%s" % sym.list_outputs()[1]):
        tu.check_symbolic_forward(sym, [x, y], [x * y, wrong])


def test_forward_location_must_name_every_argument():
    a, b = _ab()
    x, y, _ = _mul_data()
    with pytest.raises(ValueError, match="do not match"):
        tu.check_symbolic_forward(a * b, {"a": x}, [x * y])


def test_forward_with_aux_states_uses_them():
    data = mx.sym.Variable("data")
    bn = mx.sym.BatchNorm(data, fix_gamma=False, name="bn")
    x = np.random.RandomState(1).randn(4, 3)
    gamma, beta = np.full(3, 2.0), np.full(3, 0.5)
    mean, var = np.array([0.1, 0.2, 0.3]), np.array([1.0, 4.0, 9.0])
    want = (x - mean) / np.sqrt(var + 1e-3) * gamma + beta
    tu.check_symbolic_forward(bn, [x, gamma, beta], [want], aux_states=[mean, var],
                              rtol=1e-5, atol=1e-5, dtype=np.float64)
    with pytest.raises(AssertionError, match="FORWARD_bn_output"):
        tu.check_symbolic_forward(bn, [x, gamma, beta], [want], aux_states=[mean, var * 2],
                                  rtol=1e-5, atol=1e-5, dtype=np.float64)


# -- check_symbolic_backward ----------------------------------------------------------

@pytest.mark.parametrize("grad_req", ["write", "add"])
def test_backward_passes_on_correct_gradients(grad_req):
    a, b = _ab()
    x, y, g = _mul_data()
    grads = tu.check_symbolic_backward(a * b, [x, y], [g], [g * y, g * x], grad_req=grad_req,
                                       rtol=1e-5, atol=1e-6, dtype=np.float64)
    assert set(grads) == {"a", "b"}


def test_backward_fails_naming_the_argument():
    a, b = _ab()
    x, y, g = _mul_data()
    with pytest.raises(AssertionError, match="BACKWARD_b"):
        tu.check_symbolic_backward(a * b, [x, y], [g], [g * y, g * y], dtype=np.float64)


def test_backward_add_is_checked_against_the_increment():
    # 'add' adds to a random start: the plain gradient passes, the total would not.
    a, b = _ab()
    x, y, g = _mul_data()
    grads = tu.check_symbolic_backward(a * b, [x, y], [g], {"a": g * y}, grad_req="add",
                                       dtype=np.float64)
    with pytest.raises(AssertionError, match="BACKWARD_a"):
        tu.check_symbolic_backward(a * b, [x, y], [g], {"a": grads["a"].asnumpy()},
                                   grad_req="add", dtype=np.float64)


def test_backward_null_leaves_the_buffer_alone():
    a, b = _ab()
    x, y, g = _mul_data()
    tu.check_symbolic_backward(a * b, [x, y], [g], {"a": g * y, "b": g * x},
                               grad_req={"a": "write", "b": "null"}, dtype=np.float64)
    # 'null' compares the buffer with its start values, whatever gradient is expected
    grads = tu.check_symbolic_backward(a * b, [x, y], [g], {"b": g * x * 7},
                                       grad_req={"a": "write", "b": "null"}, dtype=np.float64)
    assert not np.allclose(grads["b"].asnumpy(), g * x)


def test_backward_out_grads_by_output_name():
    a, b = _ab()
    x, y, g = _mul_data()
    sym = mx.sym.Group([a * b, a - b])
    n0, n1 = sym.list_outputs()
    tu.check_symbolic_backward(sym, [x, y], {n0: g, n1: 2 * g}, [g * y + 2 * g, g * x - 2 * g],
                               dtype=np.float64)


# -- check_consistency ----------------------------------------------------------------

def _ctx_list(shape, dtypes):
    return [{"ctx": mx.cpu(), "x": shape, "type_dict": {"x": t}} for t in dtypes]


def test_consistency_passes_across_dtypes_and_returns_float64_truth():
    x = mx.sym.Variable("x")
    sym = mx.sym.tanh(x) * x
    gt = tu.check_consistency(sym, _ctx_list((3, 4), (np.float32, np.float64, np.float16)))
    assert gt[sym.list_outputs()[0]].dtype == np.float64
    assert gt["x"].dtype == np.float64 and gt["x"].shape == (3, 4)


def test_consistency_uses_given_inputs():
    x = mx.sym.Variable("x")
    v = np.linspace(-1, 1, 6).reshape(2, 3)
    gt = tu.check_consistency(mx.sym.sigmoid(x, name="s"),
                              _ctx_list((2, 3), (np.float64, np.float32)), arg_params={"x": v})
    tu.assert_almost_equal(gt["s_output"], 1 / (1 + np.exp(-v)), rtol=1e-12, atol=0)


def test_consistency_fails_naming_the_output():
    x = mx.sym.Variable("x")
    good, bad = mx.sym.tanh(x, name="t"), mx.sym.tanh(x * 1.01, name="t")
    with pytest.raises(AssertionError, match="t_output"):
        tu.check_consistency([good, bad], _ctx_list((3, 4), (np.float64, np.float64)))


def test_consistency_fails_on_gradient_only_mismatch():
    # Same forward, different backward: BlockGrad stops the gradient of one branch.
    x = mx.sym.Variable("x")
    good = mx.sym.identity(x * 2, name="y")
    bad = mx.sym.identity(x + mx.sym.BlockGrad(x), name="y")
    with pytest.raises(AssertionError, match="train ctx 1 x"):
        tu.check_consistency([good, bad], _ctx_list((2, 2), (np.float64, np.float64)))
    # raise_on_err=False reports and goes on
    tu.check_consistency([good, bad], _ctx_list((2, 2), (np.float64, np.float64)),
                         raise_on_err=False)


def test_consistency_ground_truth():
    x = mx.sym.Variable("x")
    v = np.ones((2, 2))
    ctxs = _ctx_list((2, 2), (np.float64, np.float32))
    sym = mx.sym.identity(x * 3, name="y")
    tu.check_consistency(sym, ctxs, arg_params={"x": v}, grad_req="null",
                         ground_truth={"y_output": 3 * v})
    with pytest.raises(AssertionError, match="y_output"):
        tu.check_consistency(sym, ctxs, arg_params={"x": v}, grad_req="null",
                             ground_truth={"y_output": 4 * v})


# -- simple_forward, check_speed --------------------------------------------------------

def test_simple_forward():
    a, b = _ab()
    x, y, _ = _mul_data()
    out = tu.simple_forward(a * b, a=x, b=y)
    np.testing.assert_allclose(out, (x * y).astype(np.float32), rtol=1e-6)
    both = tu.simple_forward(mx.sym.Group([a + b, a - b]), a=x, b=y)
    assert isinstance(both, list) and len(both) == 2
    np.testing.assert_allclose(both[1], (x - y).astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("typ", ["whole", "forward"])
def test_check_speed(typ):
    x = mx.sym.Variable("x")
    t = tu.check_speed(mx.sym.relu(x), x=(8, 8), N=3, typ=typ)
    assert 0 < t < 1.0
    t = tu.check_speed(mx.sym.relu(x), location={"x": np.ones((4, 4))}, N=2, typ=typ)
    assert 0 < t < 1.0
    with pytest.raises(ValueError, match="typ"):
        tu.check_speed(mx.sym.relu(x), x=(2, 2), typ="backward")


# -- helpers ---------------------------------------------------------------------------

def test_same_array():
    x = mx.nd.ones((2, 3))
    assert tu.same_array(x, x.reshape((2, 3)))
    assert not tu.same_array(x, x.copy())
    assert (x.asnumpy() == 1).all()     # left as it was


def test_create_vector_and_2d_tensor():
    v = tu.create_vector(5)
    assert v.dtype == np.int64 and v.asnumpy().tolist() == [0, 1, 2, 3, 4]
    t = tu.create_2d_tensor(3, 2)
    assert t.asnumpy().tolist() == [[0, 0], [1, 1], [2, 2]]


def test_assign_each_and_collapse_sum_like():
    a = np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(tu.assign_each(a, lambda v: v * 2), a * 2)
    np.testing.assert_array_equal(tu.assign_each2(a, a, lambda u, v: u + v), a * 2)
    g = np.ones((4, 2, 3))
    np.testing.assert_array_equal(tu.collapse_sum_like(g, (2, 1)), np.full((2, 1), 12.0))


def test_compare_ndarray_tuple_and_structure():
    tu.compare_ndarray_tuple((mx.nd.ones(2), (np.ones(3),)), (np.ones(2), (np.ones(3),)))
    with pytest.raises(AssertionError):
        tu.compare_ndarray_tuple((mx.nd.ones(2),), (np.zeros(2),))
    x = mx.sym.Variable("x")
    assert tu.same_symbol_structure(mx.sym.relu(x), mx.sym.relu(mx.sym.Variable("y")))
    assert not tu.same_symbol_structure(mx.sym.relu(x), mx.sym.sigmoid(x))


def test_dummy_iter_repeats_the_first_batch():
    it = mx.io.NDArrayIter(np.arange(12.0).reshape(6, 2), np.arange(6.0), batch_size=2)
    d = tu.DummyIter(it)
    assert d.batch_size == 2 and d.provide_data == it.provide_data
    batches = [next(d) for _ in range(5)]
    assert all(b is batches[0] for b in batches)
    np.testing.assert_array_equal(batches[0].data[0].asnumpy(), [[0, 1], [2, 3]])


def test_environment_sets_and_restores():
    name, other = "MXLITE_TEST_ENV_A", "MXLITE_TEST_ENV_B"
    os.environ[other] = "keep"
    try:
        with tu.environment(name, "1"):
            assert os.environ[name] == "1"
        assert name not in os.environ
        with pytest.raises(RuntimeError):
            with tu.environment({name: "2", other: None}):
                assert os.environ[name] == "2" and other not in os.environ
                raise RuntimeError("body fails")
        assert name not in os.environ and os.environ[other] == "keep"
    finally:
        os.environ.pop(other, None)
