"""NDArray behaviour, as the MXNet 1.x documentation describes it."""
import pickle

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


@pytest.mark.smoke
def test_repr_is_mxnets():
    assert repr(mx.nd.array([[1, 2]])) == "\n[[1. 2.]]\n<NDArray 1x2 @cpu(0)>"
    assert repr(mx.nd.zeros((3,), ctx=mx.cpu(1))) == "\n[0. 0. 0.]\n<NDArray 3 @cpu(1)>"
    assert str(mx.nd.array([1, 2], dtype="int32")) == "\n[1 2]\n<NDArray 2 @cpu(0)>"


@pytest.mark.smoke
def test_default_dtype_is_float32():
    assert mx.nd.array([1, 2]).dtype is np.float32
    assert mx.nd.array(np.array([1, 2], dtype=np.int64)).dtype is np.float32
    assert mx.nd.array(np.array([1.0], dtype=np.float64)).dtype is np.float32
    assert mx.nd.array([1, 2], dtype="float64").dtype is np.float64
    assert mx.nd.array(np.arange(3), dtype=np.int32).dtype is np.int32
    src = mx.nd.array([1, 2], dtype="int32")
    assert mx.nd.array(src).dtype is np.int32
    assert mx.nd.zeros((2,)).dtype is np.float32


def test_array_from_ndarray_is_a_copy_on_ctx():
    src = mx.nd.array([1, 2, 3])
    cp = mx.nd.array(src, ctx=mx.cpu(2))
    cp[0] = 10
    assert src.asnumpy()[0] == 1
    assert cp.context == mx.cpu(2)


def test_array_rejects_objects():
    with pytest.raises(TypeError, match="array"):
        mx.nd.array([object()])
    with pytest.raises(TypeError, match="dtype"):
        mx.nd.array([1], dtype="complex64")


def test_attributes():
    x = mx.nd.ones((2, 3, 4))
    assert x.shape == (2, 3, 4) and x.size == 24 and x.ndim == 3
    assert x.context == mx.cpu(0) and x.ctx == mx.cpu(0)
    assert x.stype == "default"
    assert x.T.shape == (4, 3, 2)
    assert x.grad is None
    assert len(x) == 2


def test_asnumpy_asscalar_array_interface():
    x = mx.nd.array([[1.5]])
    assert isinstance(x.asnumpy(), np.ndarray)
    assert x.asscalar() == np.float32(1.5)
    assert type(x.asscalar()) is np.float32
    assert np.asarray(x).dtype == np.float32
    np.testing.assert_array_equal(np.array(mx.nd.array([1, 2])), [1, 2])
    with pytest.raises(ValueError, match="scalar"):
        mx.nd.array([1, 2]).asscalar()


def test_bool_len_iter():
    assert bool(mx.nd.array([2])) is True
    assert bool(mx.nd.array([0])) is False
    with pytest.raises(ValueError, match="ambiguous"):
        bool(mx.nd.array([1, 2]))
    rows = list(mx.nd.array([[1, 2], [3, 4], [5, 6]]))
    assert len(rows) == 3 and rows[2].asnumpy().tolist() == [5, 6]


@pytest.mark.smoke
@pytest.mark.parametrize("shape, spec, reverse, want", [
    ((2, 3, 4), (0, -1), False, (2, 12)),
    ((2, 3, 4, 5), (-3, -2), False, (6, 4, 5)),
    ((2, 6, 4), (0, -4, 2, -1, -2), False, (2, 2, 3, 4)),
    ((6, 4), (-4, -1, 3, 0), False, (2, 3, 4)),
    ((2, 3, 4), (-2,), False, (2, 3, 4)),
    ((10, 5, 4), (-1, 0), False, (40, 5)),
    ((10, 5, 4), (-1, 0), True, (50, 4)),
    ((2, 3, 4), (4, 6), False, (4, 6)),
])
def test_reshape_special_codes(shape, spec, reverse, want):
    x = mx.nd.arange(int(np.prod(shape))).reshape(shape)
    y = x.reshape(spec, reverse=reverse)
    assert y.shape == want
    np.testing.assert_array_equal(y.asnumpy().ravel(), x.asnumpy().ravel())


def test_reshape_call_forms_and_errors():
    x = mx.nd.zeros((2, 3))
    assert x.reshape(3, 2).shape == (3, 2)
    assert x.reshape((3, 2)).shape == (3, 2)
    assert x.reshape(shape=(6,)).shape == (6,)
    with pytest.raises(MXNetError, match="Reshape.*5"):
        x.reshape((5,))
    with pytest.raises(MXNetError, match="only one dimension"):
        x.reshape((-1, -1))


def test_reshape_shares_memory_like_mxnet():
    x = mx.nd.zeros((2, 3))
    y = x.reshape((6,))
    y[0] = 5
    assert x.asnumpy()[0, 0] == 5


@pytest.mark.smoke
def test_indexing_views_and_copies():
    b = mx.nd.arange(6).reshape((2, 3))
    row = b[1]             # integer on the first axis: a view, as in MXNet
    row[:] = 9
    assert b.asnumpy()[1].tolist() == [9, 9, 9]
    col = b[:, 1]          # any other index: a copy
    col[:] = 7
    assert b.asnumpy()[0, 1] == 1
    assert mx.nd.array([1, 2, 3])[0].shape == (1,)
    assert b[1, 2].shape == (1,)
    np.testing.assert_array_equal(b[::-1].asnumpy(), b.asnumpy()[::-1])
    np.testing.assert_array_equal(b[:, ::2].asnumpy(), b.asnumpy()[:, ::2])
    idx = mx.nd.array([1, 0, 1])
    np.testing.assert_array_equal(b[idx].asnumpy(), b.asnumpy()[[1, 0, 1]])
    np.testing.assert_array_equal(b[[0, 1], [2, 0]].asnumpy(), b.asnumpy()[[0, 1], [2, 0]])


def test_setitem_forms():
    x = mx.nd.zeros((3, 4))
    x[0] = 1
    x[1, 1:3] = mx.nd.array([5, 6])
    x[2] = np.arange(4)
    x[:, 3] = mx.nd.array([7])          # broadcasting
    want = np.zeros((3, 4))
    want[0] = 1
    want[1, 1:3] = [5, 6]
    want[2] = np.arange(4)
    want[:, 3] = 7
    np.testing.assert_array_equal(x.asnumpy(), want)
    x[:] = 0
    assert x.asnumpy().sum() == 0
    x[mx.nd.array([0, 2])] = 3
    assert x.asnumpy()[:, 0].tolist() == [3, 0, 3]
    with pytest.raises(MXNetError, match="setitem"):
        x[0] = mx.nd.ones((5,))


@pytest.mark.smoke
def test_operators_broadcast_and_reflect():
    a = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    b = np.array([10.0, 20.0], dtype=np.float32)
    x, y = mx.nd.array(a), mx.nd.array(b)
    cases = [(x + y, a + b), (x - y, a - b), (x * y, a * b), (x / y, a / b),
             (x ** 2, a ** 2), (2 ** x, 2 ** a), (1 - x, 1 - a), (1 / x, 1 / a),
             (x % 3, a % 3), (7 % x, 7 % a), (-x, -a), (abs(-x), a), (x + 1, a + 1),
             (3 * x, 3 * a), (x + b, a + b), (x ** y, a ** b)]
    for got, want in cases:
        np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
        assert got.dtype is np.float32


def test_comparisons_return_input_dtype():
    x = mx.nd.array([1, 2, 3])
    for got, want in [(x > 1.5, [0, 1, 1]), (x >= 2, [0, 1, 1]), (x < 2, [1, 0, 0]),
                      (x <= 2, [1, 1, 0]), (x == 2, [0, 1, 0]), (x != 2, [1, 0, 1]),
                      (x == mx.nd.array([1, 0, 3]), [1, 0, 1])]:
        assert got.dtype is np.float32
        assert got.asnumpy().tolist() == want
    xi = mx.nd.array([1, 2], dtype="int32")
    assert (xi > 1).dtype is np.int32


def test_inplace_operators_keep_identity():
    x = mx.nd.ones((2, 2))
    ident = id(x)
    x += 1
    x *= mx.nd.array([2, 3])
    x -= 1
    x /= 2
    assert id(x) == ident
    np.testing.assert_allclose(x.asnumpy(), [[1.5, 2.5], [1.5, 2.5]])


def test_integer_arithmetic_follows_mxnet():
    xi = mx.nd.array([5, -5], dtype="int32")
    assert (xi / 2).asnumpy().tolist() == [2, -2]       # truncation, int32 result
    assert (xi + 1.5).asnumpy().tolist() == [6, -4]     # scalar cast to int first
    assert (mx.nd.array([5, -5]) % 3).asnumpy().tolist() == [2, 1]


def test_dtype_mismatch_is_an_error():
    with pytest.raises(MXNetError, match="broadcast_add.*float32.*float64"):
        mx.nd.zeros((2,)) + mx.nd.zeros((2,), dtype="float64")
    with pytest.raises(MXNetError, match="elemwise_add.*same shape"):
        mx.nd.elemwise_add(mx.nd.zeros((2,)), mx.nd.zeros((3,)))
    with pytest.raises(MXNetError, match="broadcast_mul"):
        mx.nd.zeros((2, 3)) * mx.nd.zeros((4,))


def test_contexts_must_match():
    with pytest.raises(MXNetError, match="context"):
        mx.nd.ones((2,)) + mx.nd.ones((2,), ctx=mx.cpu(1))


def test_astype_copy_copyto_as_in_context():
    x = mx.nd.array([1.7, -2.2])
    assert x.astype("int32").asnumpy().tolist() == [1, -2]
    assert x.astype(np.float32, copy=False) is x
    c = x.copy()
    c[0] = 0
    assert x.asnumpy()[0] == np.float32(1.7)
    other = mx.nd.zeros((2,))
    assert x.copyto(other) is other
    np.testing.assert_array_equal(other.asnumpy(), x.asnumpy())
    moved = x.copyto(mx.cpu(3))
    assert moved.context == mx.cpu(3)
    assert x.as_in_context(mx.cpu(0)) is x
    assert x.as_in_context(mx.cpu(1)).context == mx.cpu(1)
    assert x.tostype("default") is x
    with pytest.raises(MXNetError, match="stype"):
        x.tostype("csr")
    with pytest.raises(ValueError, match="shape"):
        x.copyto(mx.nd.zeros((3,)))


def test_detach_shares_data_but_not_graph():
    x = mx.nd.array([1, 2])
    x.attach_grad()
    with mx.autograd.record():
        y = x * 2
        d = y.detach()
        z = d * x
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [2, 4])   # d is a constant


def test_pickle_roundtrip():
    for x in (mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([1, 2], dtype="int64", ctx=mx.cpu(1))):
        y = pickle.loads(pickle.dumps(x))
        assert y.dtype is x.dtype and y.context == x.context
        np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


def test_out_keyword_writes_in_place():
    x = mx.nd.array([-1, 2])
    out = mx.nd.zeros((2,))
    r = mx.nd.relu(x, out=out)
    assert r is out
    assert out.asnumpy().tolist() == [0, 2]
    with pytest.raises(MXNetError, match="out"):
        mx.nd.relu(x, out=mx.nd.zeros((3,)))


def test_creation_functions():
    np.testing.assert_array_equal(mx.nd.arange(3).asnumpy(), [0, 1, 2])
    np.testing.assert_array_equal(mx.nd.arange(1, 2, 0.5).asnumpy(), [1, 1.5])
    np.testing.assert_array_equal(mx.nd.arange(2, repeat=2).asnumpy(), [0, 0, 1, 1])
    np.testing.assert_array_equal(mx.nd.full((2,), 7).asnumpy(), [7, 7])
    np.testing.assert_array_equal(mx.nd.eye(2, 3, 1).asnumpy(), np.eye(2, 3, 1))
    np.testing.assert_allclose(mx.nd.linspace(0, 1, 5).asnumpy(), np.linspace(0, 1, 5))
    assert mx.nd.ones((2, 3), dtype="int32").dtype is np.int32
    assert mx.nd.empty((2, 3)).shape == (2, 3)
    assert mx.nd.zeros(4).shape == (4,)
    assert mx.nd.zeros((2,), name="z", __layout__="N").shape == (2,)   # accepted, as MXNet
    assert mx.nd.zeros((0, 3)).shape == (0, 3)
    assert mx.nd.ones((1,), ctx=mx.cpu(1)).context == mx.cpu(1)
    with mx.cpu(2):
        assert mx.nd.zeros((1,)).context == mx.cpu(2)
        assert mx.nd.array([1]).context == mx.cpu(2)
    assert mx.nd.zeros_like(mx.nd.ones((2,), dtype="int32")).dtype is np.int32


def test_numpy_style_functions():
    x = mx.nd.array([1, 5])
    y = mx.nd.array([3, 2])
    assert mx.nd.maximum(x, y).asnumpy().tolist() == [3, 5]
    assert mx.nd.minimum(x, 2).asnumpy().tolist() == [1, 2]
    assert mx.nd.add(1, x).asnumpy().tolist() == [2, 6]
    assert mx.nd.subtract(10, x).asnumpy().tolist() == [9, 5]
    assert mx.nd.greater(x, 2).asnumpy().tolist() == [0, 1]
    assert mx.nd.greater(2, x).asnumpy().tolist() == [1, 0]
    assert mx.nd.power(2, x).asnumpy().tolist() == [2, 32]
    assert mx.nd.add(1, 2) == 3


def test_generated_function_signatures_and_errors():
    import inspect
    sig = inspect.signature(mx.nd.clip)
    assert list(sig.parameters) == ["data", "a_min", "a_max", "out", "name"]
    assert "Parameters" in mx.nd.clip.__doc__
    x = mx.nd.array([-2, 0.5, 2])
    assert mx.nd.clip(x, -1, 1).asnumpy().tolist() == [-1, 0.5, 1]    # params positionally
    assert mx.nd.clip(data=x, a_min=-1, a_max=1).asnumpy().tolist() == [-1, 0.5, 1]
    with pytest.raises(TypeError, match="clip.*a_mn"):
        mx.nd.clip(x, a_mn=0, a_max=1)
    with pytest.raises(TypeError, match="clip.*missing.*a_max"):
        mx.nd.clip(x, a_min=0)
    with pytest.raises(ValueError, match="clip.*a_min"):
        mx.nd.clip(x, a_min="abc", a_max=1)
    with pytest.raises(TypeError, match="relu.*NDArray.*list"):
        mx.nd.relu([1, 2])
    # MXNet attribute strings parse like Python values
    assert mx.nd.clip(x, a_min="-1", a_max="1.0").asnumpy().tolist() == [-1, 0.5, 1]


def test_fluent_methods():
    x = mx.nd.array([[1, -2], [3, -4]])
    assert x.sum().asnumpy().tolist() == [-2]
    assert x.abs().max(axis=1).asnumpy().tolist() == [2, 4]
    np.testing.assert_allclose(x.exp().asnumpy(), np.exp(x.asnumpy()), rtol=1e-6)


@pytest.mark.parametrize("shape, key, vshape, ok", [
    # Observed from real MXNet 1.9.1: values follow NumPy's assignment rule (drop
    # leading 1-axes, then broadcast); a same-size value of another shape is an error.
    ((2, 3), np.s_[:], (3, 2), False),
    ((2, 3), np.s_[:], (6,), False),
    ((2, 3), np.s_[0], (3, 1), False),
    ((2, 3), np.s_[:, 1], (2, 1), False),
    ((2, 3), np.s_[[0, 1]], (6,), False),
    ((3,), np.s_[:], (3, 1), False),
    ((2, 3), np.s_[0], (1, 3), True),
    ((4,), np.s_[1], (1,), True),
    ((2, 3), np.s_[0, :], (1, 1, 3), True),
    ((2, 3), np.s_[1, 2], (1, 1), True),
    ((2, 3), np.s_[:, 1], (1, 2), True),
    ((2, 3), np.s_[1:2], (3,), True),
])
def test_setitem_value_shapes_follow_mxnet(shape, key, vshape, ok):
    v = np.arange(1, 1 + int(np.prod(vshape)), dtype=np.float32).reshape(vshape)
    x = mx.nd.zeros(shape)
    if not ok:
        with pytest.raises(MXNetError, match="shape"):
            x[key] = mx.nd.array(v)
        np.testing.assert_array_equal(x.asnumpy(), np.zeros(shape))
        return
    x[key] = mx.nd.array(v)
    ref = np.zeros(shape, np.float32)
    ref[key] = v.reshape(np.shape(ref[key]))  # every accepted case here has the slot's size
    np.testing.assert_array_equal(x.asnumpy(), ref)


def test_broadcast_to_method_prepends_axes_like_mxnet():
    # Observed from real MXNet 1.9.1: the NDArray method (not the op) treats missing
    # leading axes as 1; fewer target axes or a mismatch is a ValueError.
    x = mx.nd.array([1.0, 2.0])
    np.testing.assert_array_equal(x.broadcast_to((3, 2)).asnumpy(), [[1, 2]] * 3)
    np.testing.assert_array_equal(x.broadcast_like(mx.nd.ones((3, 2))).asnumpy(), [[1, 2]] * 3)
    with pytest.raises(ValueError, match="could not be broadcast"):
        mx.nd.array([[1.0, 2.0]]).broadcast_to((2,))
    with pytest.raises(ValueError, match="could not be broadcast"):
        x.broadcast_to((3, 0))
    with pytest.raises(MXNetError):
        mx.nd.broadcast_to(x, shape=(3, 2))  # the op itself stays strict, as in MXNet
    x.attach_grad()
    with mx.autograd.record():
        y = x.broadcast_to((3, 2))
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [3, 3])


def test_from_numpy_shares_memory_and_locks_the_source():
    # Observed from real MXNet 1.9.1: dtype kept, writes through the NDArray reach the
    # NumPy array, which becomes read-only; non-contiguous input needs zero_copy=False.
    a = np.arange(4.0)
    x = mx.nd.from_numpy(a)
    assert x.dtype == np.float64 and not a.flags["WRITEABLE"]
    x[0] = 9
    np.testing.assert_array_equal(a, [9, 1, 2, 3])
    b = np.arange(4.0)
    y = mx.nd.from_numpy(b, zero_copy=False)
    y[0] = 9
    np.testing.assert_array_equal(b, [0, 1, 2, 3])
    assert b.flags["WRITEABLE"]
    t = np.arange(6.0).reshape(2, 3).T
    with pytest.raises(ValueError, match="c-contiguous"):
        mx.nd.from_numpy(t)
    np.testing.assert_array_equal(mx.nd.from_numpy(t, zero_copy=False).asnumpy(), t)


def test_contrib_isfinite_isinf_isnan():
    x = mx.nd.array([1, np.inf, -np.inf, np.nan, 0])
    np.testing.assert_array_equal(mx.nd.contrib.isfinite(x).asnumpy(), [1, 0, 0, 0, 1])
    np.testing.assert_array_equal(mx.nd.contrib.isinf(x).asnumpy(), [0, 1, 1, 0, 0])
    np.testing.assert_array_equal(mx.nd.contrib.isnan(x).asnumpy(), [0, 0, 0, 1, 0])
    ints = mx.nd.array([1, 2], dtype="int32")
    assert mx.nd.contrib.isfinite(ints).asnumpy().tolist() == [1, 1]


def test_integer_arrays_against_non_finite_scalars_as_mxnet():
    # MXNet 1.9.1 casts the scalar to the array's type as C does (inf and NaN become
    # INT_MIN on x86): these are its outputs.
    x = mx.nd.array([1, 2, -5], dtype="int32")
    assert (x != np.inf).asnumpy().tolist() == [1, 1, 1]
    assert (x == np.inf).asnumpy().tolist() == [0, 0, 0]
    assert (x > np.inf).asnumpy().tolist() == [1, 1, 1]
    assert (x < np.inf).asnumpy().tolist() == [0, 0, 0]
    assert (x != np.nan).asnumpy().tolist() == [1, 1, 1]
    assert (x + np.inf).asnumpy().tolist() == [-2147483647, -2147483646, 2147483643]
    assert (x > 1.5).asnumpy().tolist() == [0, 1, 0]


def test_gluon_reexports_blocks_and_tensor_types():
    assert mx.gluon.nn.HybridBlock is mx.gluon.HybridBlock
    assert mx.gluon.nn.Block is mx.gluon.Block and mx.gluon.nn.SymbolBlock is mx.gluon.SymbolBlock
    assert isinstance(mx.nd.ones(1), mx.gluon.tensor_types)
    assert isinstance(mx.sym.var("x"), mx.gluon.tensor_types)


@pytest.mark.parametrize("fn", [
    lambda x: mx.nd.flatten(x), lambda x: mx.nd.Flatten(x),
    lambda x: mx.nd.expand_dims(x, axis=0), lambda x: mx.nd.squeeze(x.reshape((2, 2, 1))),
    lambda x: mx.nd.reshape(x, shape=(-1,)), lambda x: mx.nd.Reshape(x, shape=(-1,)),
    lambda x: mx.nd.reshape_like(x, mx.nd.zeros((4,))), lambda x: mx.nd.transpose(x),
    lambda x: x.T, lambda x: x.flatten(), lambda x: x.expand_dims(0),
], ids=["flatten", "Flatten", "expand_dims", "squeeze", "reshape", "Reshape", "reshape_like",
        "transpose", "T", "method_flatten", "method_expand_dims"])
def test_shape_ops_give_copies_like_mxnet(fn):
    # MXNet 1.9.1: the ops write new memory; only NDArray.reshape and x[i] are views
    x = mx.nd.array([[1, 2], [3, 4]])
    y = fn(x)
    y[:] = 9
    assert x.asnumpy().tolist() == [[1, 2], [3, 4]]
