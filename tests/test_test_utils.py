"""mx.test_utils: comparisons, random test data and check_numeric_gradient."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import test_utils as tu


# -- comparisons -------------------------------------------------------------------------

def test_assert_almost_equal_passes_within_default_tolerance():
    a = np.array([1.0, 2.0, 3.0], np.float32)
    tu.assert_almost_equal(mx.nd.array(a), a + 5e-4)                 # float32: atol 1e-3
    tu.assert_almost_equal(a.astype(np.float64), a + 1e-6 * a)        # float64: rtol 1e-5
    tu.assert_almost_equal(mx.nd.array(a), mx.nd.array(a))
    tu.assert_almost_equal(mx.nd.ones((2, 3)), 1.0)                   # broadcasting a scalar


def test_assert_almost_equal_reports_worst_mismatch():
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b = a.copy()
    b[1, 0] = 3.5
    b[0, 1] = 2.01
    with pytest.raises(AssertionError) as e:
        tu.assert_almost_equal(mx.nd.array(a), b, names=("x", "y"))
    msg = str(e.value)
    assert "Location of maximum error: (1, 0), x=3.00000000, y=3.50000000" in msg
    assert "rtol=1.000000e-04, atol=1.000000e-03" in msg
    assert "mismatch 50.000000%" in msg


def test_assert_almost_equal_uses_looser_dtype_and_explicit_tolerances():
    a = np.array([1.0], np.float16)
    b = np.array([1.05], np.float64)
    tu.assert_almost_equal(a, b)                                      # float16: atol 0.1
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(a, b, rtol=1e-3, atol=1e-3)
    tu.assert_almost_equal(np.float32(1), np.float32(1.01), rtol={np.dtype(np.float32): 0.1})


def test_assert_almost_equal_integers_exact_and_bools():
    tu.assert_almost_equal(np.array([1, 2], np.int32), np.array([1, 2], np.int32))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([1, 2], np.int32), np.array([1, 3], np.int32))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([True, False]), np.array([True, True]))


def test_nan_handling():
    a = np.array([1.0, np.nan], np.float32)
    with pytest.raises(AssertionError, match=r"\(1,\)"):
        tu.assert_almost_equal(a, a)
    tu.assert_almost_equal(a, a, equal_nan=True)
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(a, np.array([1.0, 2.0], np.float32), equal_nan=True)
    tu.assert_almost_equal_ignore_nan(a, np.array([1.0, 7.0], np.float32))


def test_shape_mismatch():
    with pytest.raises(AssertionError, match="do not broadcast"):
        tu.assert_almost_equal(np.zeros(3), np.zeros(4))
    with pytest.raises(AssertionError, match="shape"):
        tu.assert_almost_equal(np.zeros((1, 3)), np.zeros(3), use_broadcast=False)


def test_almost_equal_and_same():
    assert tu.almost_equal(np.ones(3), np.ones(3) + 1e-7)
    assert not tu.almost_equal(np.ones(3), np.ones(3) + 1e-3)
    assert tu.same(mx.nd.array([1, 2]), np.array([1, 2], np.float32))
    assert not tu.same(np.array([1, 2]), np.array([1, 3]))
    assert not tu.same(np.zeros((1, 2)), np.zeros(2))


def test_assert_exception():
    tu.assert_exception(int, ValueError, "x")
    with pytest.raises(AssertionError, match="did not raise"):
        tu.assert_exception(int, ValueError, "3")
    with pytest.raises(TypeError):            # another exception type propagates
        tu.assert_exception(int, ValueError, None)


def test_default_context_and_set():
    assert tu.default_context() == mx.cpu(0)
    try:
        tu.set_default_context(mx.cpu(2))
        assert tu.default_context() == mx.cpu(2)
        assert mx.nd.zeros((1,)).context == mx.cpu(2)
    finally:
        tu.set_default_context(mx.cpu(0))
    assert mx.nd.zeros((1,)).context == mx.cpu(0)


# -- random test data -----------------------------------------------------------------------

def test_random_shapes():
    for n in range(1, 5):
        s = tu.rand_shape_nd(n, dim=4)
        assert len(s) == n and all(1 <= d <= 4 for d in s)
        assert all(type(d) is int for d in s)
    assert all(1 <= d <= 3 for d in tu.rand_shape_2d(3, 3))
    assert len(tu.rand_shape_3d()) == 3
    shapes = {tu.rand_shape_nd(2, dim=3, allow_zero_size=True) for _ in range(200)}
    assert any(0 in s for s in shapes)


def test_random_arrays_and_rand_ndarray():
    a, b = tu.random_arrays((2, 3), (4,))
    assert a.shape == (2, 3) and b.shape == (4,) and a.dtype == np.float32
    assert tu.random_arrays(()).shape == ()
    x = tu.rand_ndarray((3, 4), dtype="float64")
    assert isinstance(x, mx.nd.NDArray) and x.dtype == np.float64 and x.shape == (3, 4)
    rs = tu.rand_ndarray((50, 4), stype="row_sparse", density=0.3).asnumpy()
    zero_rows = (rs == 0).all(axis=1).mean()
    assert 0.4 < zero_rows < 0.95
    with pytest.raises(ValueError, match="stype"):
        tu.rand_ndarray((2,), stype="bogus")


# -- check_numeric_gradient -----------------------------------------------------------------

def test_numeric_gradient_float64_tight():
    x = np.random.rand(3, 4) + 0.5
    tu.check_numeric_gradient(lambda a: mx.nd.tanh(a) * a, [x], numeric_eps=1e-6, rtol=1e-6,
                              atol=1e-8, dtype=np.float64)


def test_numeric_gradient_dict_location_and_grad_reqs():
    x, y = np.random.rand(2, 3), np.random.rand(2, 3)

    def f(a, b):
        return a * b + mx.nd.exp(a)
    tu.check_numeric_gradient(f, {"a": x, "b": y})
    tu.check_numeric_gradient(f, {"a": x, "b": y}, grad_nodes=["b"], dtype=np.float64,
                              numeric_eps=1e-6, rtol=1e-6)
    tu.check_numeric_gradient(f, {"a": x, "b": y}, grad_nodes={"a": "add", "b": "null"})


def test_numeric_gradient_catches_wrong_gradient():
    class BadSquare(mx.autograd.Function):
        def forward(self, x):
            self.save_for_backward(x)
            return x * x

        def backward(self, dy):
            (x,) = self.saved_tensors
            return dy * x * 3             # wrong: should be 2x

    x = np.random.rand(4) + 0.5
    with pytest.raises(AssertionError, match="NUMERICAL_0.*BACKWARD_0|BACKWARD_0"):
        tu.check_numeric_gradient(lambda a: BadSquare()(a), [x], dtype=np.float64,
                                  numeric_eps=1e-6, rtol=1e-5)


def test_numeric_gradient_integer_inputs_and_aux_states():
    data = np.random.rand(4, 3)
    idx = np.array([2, 0], np.int32)
    scale = np.array([2.0], np.float64)

    def f(x, i, s):
        return mx.nd.take(x, i.astype("float32"), axis=0) * s
    tu.check_numeric_gradient(f, [data, idx], aux_states=[scale], dtype=np.float64,
                              numeric_eps=1e-6, rtol=1e-6)


def test_numeric_gradient_rejects_bad_inputs():
    x = [np.ones(2)]
    with pytest.raises(TypeError, match="function of NDArrays or a Symbol"):
        tu.check_numeric_gradient(object(), x)
    with pytest.raises(TypeError, match="location"):
        tu.check_numeric_gradient(lambda a: a, np.ones(2))
    with pytest.raises(ValueError, match="too small"):
        tu.check_numeric_gradient(lambda a: a, x, numeric_eps=1e-7)
    with pytest.raises(ValueError, match="grad node"):
        tu.check_numeric_gradient(lambda a: a, x, grad_nodes=["nope"])
    with pytest.raises(mx.MXNetError, match="one NDArray"):
        tu.check_numeric_gradient(lambda a: [a, a], x)


def test_numeric_gradient_train_mode_forward():
    # An op that behaves differently in train mode: the numeric side must use the same mode.
    seen = []

    def f(a):
        seen.append(mx.autograd.is_training())
        return a * 2
    tu.check_numeric_gradient(f, [np.ones(2)], use_forward_train=True)
    assert all(seen)
    seen.clear()
    tu.check_numeric_gradient(f, [np.ones(2)], use_forward_train=False)
    assert seen[0] is False and seen[-1] is False


def test_numeric_gradient_of_a_symbol():
    x, w = mx.sym.Variable("x"), mx.sym.Variable("w")
    sym = mx.sym.tanh(x) * w
    loc = [np.random.rand(3, 2), np.random.rand(3, 2)]          # list_arguments() order
    tu.check_numeric_gradient(sym, loc, dtype=np.float64, numeric_eps=1e-6, rtol=1e-6)
    tu.check_numeric_gradient(sym, {"x": loc[0], "w": loc[1]}, grad_nodes={"x": "add",
                                                                            "w": "null"})
    with pytest.raises(ValueError, match="2 symbol arguments"):
        tu.check_numeric_gradient(sym, loc[:1])
