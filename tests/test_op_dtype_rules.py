"""The dtype and shape rules ops declare (``check=``): what MXNet 1.9.1's kernels refuse is
refused before the kernel runs, in the op's words ("<op>: <argument> expected ..., got
..."), and what they accept gives MXNet's numbers."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError, ParamError


def _bool(shape=(1, 3)):
    return mx.nd.array(np.array([[True, False, True]]).reshape(shape), dtype=np.bool_)


@pytest.mark.parametrize("call", [
    lambda b: mx.nd.negative(b), lambda b: mx.nd.exp(b), lambda b: mx.nd.relu(b),
    lambda b: mx.nd.sign(b), lambda b: mx.nd.rint(b), lambda b: mx.nd.sigmoid(b),
    lambda b: mx.nd.broadcast_add(b, b), lambda b: mx.nd.elemwise_mul(b, b),
    lambda b: b - b,
])
def test_legacy_elementwise_ops_refuse_bool_as_mxnet(call):
    # MXNet: "Unknown type enum 7" / "Operator broadcast_add does not support boolean type"
    with pytest.raises(MXNetError, match=r"^\w+: (data|lhs) expected a numeric dtype \(not "
                                         r"bool\), got bool$"):
        call(_bool())


# op, MXNet 1.9.1's result for [[True, False, True]] op 2.0 (int64)
_BOOL_SCALAR = [("_plus_scalar", [[3, 2, 3]]), ("_minus_scalar", [[-1, -2, -1]]),
                ("_rminus_scalar", [[1, 2, 1]]), ("_mul_scalar", [[2, 0, 2]]),
                ("_div_scalar", [[0, 0, 0]]), ("_mod_scalar", [[1, 0, 1]]),
                ("_power_scalar", [[1, 0, 1]]), ("_maximum_scalar", [[2, 2, 2]]),
                ("_equal_scalar", [[0, 0, 0]]), ("_greater_scalar", [[0, 0, 0]])]


@pytest.mark.parametrize("name, want", _BOOL_SCALAR)
def test_bool_with_a_scalar_computes_in_int64_as_mxnet(name, want):
    y = getattr(mx.nd._internal, name)(_bool(), scalar=2.0)
    assert y.dtype == np.int64
    np.testing.assert_array_equal(y.asnumpy(), want)


@pytest.mark.parametrize("name, n", [("sgd_update", 2), ("sgd_mom_update", 3),
                                     ("adam_update", 4), ("ftrl_update", 4),
                                     ("rmsprop_update", 3), ("signsgd_update", 2)])
def test_update_ops_take_floats_only_and_change_nothing_on_int(name, n):
    fn = getattr(mx.nd, name)
    xs = [mx.nd.array(np.arange(6).reshape(2, 3), dtype="int32") for _ in range(n)]
    with pytest.raises(MXNetError, match=r"^%s: weight expected a floating-point dtype, "
                                         r"got int32$" % name):
        fn(*xs, lr=0.1)
    for x in xs:
        np.testing.assert_array_equal(x.asnumpy(), np.arange(6).reshape(2, 3))
    w = mx.nd.ones((2, 3), dtype="float16")
    fn(w, *[mx.nd.ones((2, 3), dtype="float16") for _ in range(n - 1)], lr=0.1, out=w)
    assert w.dtype == np.float16


def test_update_op_rescale_grad_array_holds_one_value():
    w, g, m, v = (mx.nd.ones((2, 3)) for _ in range(4))
    with pytest.raises(MXNetError, match=r"^_adamw_update: rescale_grad has shape \(2, 3\), "
                                         r"expected \(1,\)$"):
        mx.nd.contrib.adamw_update(w, g, m, v, mx.nd.ones((2, 3)), lr=0.1, eta=1.0)
    np.testing.assert_array_equal(m.asnumpy(), np.ones((2, 3)))


@pytest.mark.parametrize("name", ["uniform_like", "normal_like", "gamma_like",
                                  "exponential_like", "poisson_like"])
def test_random_like_ops_refuse_integer_data_as_mxnet(name):
    # MXNet: "This operation only support floating point types, not int32"
    with pytest.raises(MXNetError, match=r"data expected a floating-point dtype, got int32"):
        getattr(mx.nd.random, name)(mx.nd.ones((2, 3), dtype="int32"))
    y = getattr(mx.nd.random, name)(mx.nd.ones((2, 3), dtype="float16"))
    assert y.dtype == np.float16 and y.shape == (2, 3)


@pytest.mark.parametrize("fn", [mx.nd.softmax, mx.nd.log_softmax, mx.nd.softmin])
def test_softmax_family_takes_floats_only(fn):
    with pytest.raises(MXNetError, match=r"data expected a floating-point dtype, got int32"):
        fn(mx.nd.ones((2, 3), dtype="int32"))


@pytest.mark.parametrize("call, param", [
    (lambda: mx.nd.zeros((2, -2)), "shape"), (lambda: mx.nd.ones((-1,)), "shape"),
    (lambda: mx.nd.random.uniform(shape=(-3,)), "shape"),
    (lambda: mx.nd.eye(-2), "N"), (lambda: mx.nd.tile(mx.nd.ones(2), reps=(-1,)), "reps"),
    (lambda: mx.nd.repeat(mx.nd.ones(2), repeats=-1), "repeats"),
])
def test_negative_sizes_are_refused_at_the_edge(call, param):
    with pytest.raises(ParamError, match=r"%s must be >= 0; got" % param):
        call()


def test_np_int_only_and_bool_rules():
    f, b = mx.np.ones((2,)), mx.np.array([True, False], dtype=bool)
    with pytest.raises(MXNetError, match=r"^_npi_bitwise_and: lhs expected an integer or bool "
                                         r"dtype, got float32$"):
        mx.np.bitwise_and(f, f)
    with pytest.raises(MXNetError, match=r"^_npi_lcm: lhs expected an integer dtype"):
        mx.np.lcm(f, f)
    with pytest.raises(MXNetError, match=r"^_npi_subtract: lhs expected a numeric dtype"):
        mx.np.subtract(b, b)
    assert mx.np.bitwise_and(b, b).tolist() == [True, False]


def test_np_product_and_broadcast_shape_rules():
    a = mx.np.ones((2, 3))
    with pytest.raises(MXNetError, match=r"^_np_dot: b has shape \(2, 3\), expected 3 rows "
                                         r"\(the last dim of a\) for a of shape \(2, 3\)$"):
        mx.np.dot(a, a)
    with pytest.raises(MXNetError, match=r"^_npi_matmul: a expected at least 1 dim"):
        mx.np.matmul(mx.np.array(1.0), a)
    with pytest.raises(MXNetError, match=r"^_np_broadcast_to: array has shape \(2, 3\), "
                                         r"expected one that broadcasts to \(3,\)$"):
        mx.np.broadcast_to(a, (3,))
    assert mx.np.matmul(a, mx.np.ones((3, 4))).shape == (2, 4)


def test_empty_reductions_without_identity_are_refused():
    for call in (lambda: mx.nd.argmax(mx.nd.ones((0, 3))),
                 lambda: mx.np.max(mx.np.ones((0, 3)), axis=0),
                 lambda: mx.np.argmin(mx.np.ones((0,)))):
        with pytest.raises(MXNetError, match=r"data expected a non-empty axis 0"):
            call()
    assert mx.np.max(mx.np.ones((0, 3)), axis=1).shape == (0,)


def test_sigmoid_of_a_0d_array():
    y = mx.np.array(0.0)
    assert float(mx.npx.sigmoid(y)) == 0.5
