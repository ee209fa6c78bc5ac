"""mx.np / mx.npx / mx.util around the ops: creation, MXNet's dtype rules, random,
NumPy fallbacks, the semantics switches, save/load, the np Symbol namespaces."""
import numpy as onp
import pytest

import mxlite as mx
from mxlite import np, npx


@pytest.fixture(autouse=True)
def np_semantics():
    npx.set_np()
    yield
    npx.reset_np()


# (left dtype, right dtype, MXNet's result) for arrays
PROMOTION = [("float32", "float32", "float32"), ("int32", "float32", "float32"),
             ("int32", "int64", "int64"), ("float16", "float32", "float32"),
             ("float32", "float64", "float64"), ("bool", "int32", "float32"),
             ("uint8", "int8", "int16"), ("int8", "float16", "float16")]


@pytest.mark.parametrize("a,b,want", PROMOTION)
def test_binary_promotion(a, b, want):
    x, y = np.ones(2, dtype=a), np.ones(2, dtype=b)
    assert (x + y).dtype == want and (y * x).dtype == want
    assert (x > y).dtype == onp.bool_


def test_scalar_operands_keep_the_array_dtype():
    i = np.array([1, 2], dtype="int32")
    assert (i * 1.5).dtype == onp.int32 and (i * 1.5).tolist() == [1, 2]
    assert (i / 2).dtype == onp.float32 and (i / 2).tolist() == [0.5, 1.0]
    assert (2 / i).tolist() == [2.0, 1.0]
    assert (np.array([True, False]) + 1).dtype == onp.float32
    with pytest.raises(TypeError):
        i // 2


def test_reductions_dtypes_and_0d():
    i = np.array([[1, 2], [3, 4]], dtype="int32")
    assert i.sum().shape == () and i.sum().dtype == onp.int32
    assert i.mean().dtype == onp.float32 and float(i.mean()) == 2.5
    assert i.argmax(axis=1).dtype == onp.int64
    assert (i > 1).sum().dtype == onp.int64
    assert np.sum(i, axis=0, keepdims=True).shape == (1, 2)
    assert float(np.std(np.array([1.0, 3.0]))) == 1.0


def test_random_samplers_follow_the_seed_and_dtypes():
    mx.random.seed(5)
    a = np.random.normal(0, 1, (3, 2))
    mx.random.seed(5)
    b = np.random.normal(0, 1, (3, 2))
    onp.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert a.dtype == onp.float32 and a.shape == (3, 2)
    assert np.random.randint(0, 5, size=(4,)).dtype == onp.int64
    u = np.random.uniform(2, 3, size=1000).asnumpy()
    assert u.min() >= 2 and u.max() < 3 and abs(u.mean() - 2.5) < 0.05
    counts = np.random.multinomial(1000, [0.2, 0.8]).asnumpy()
    assert counts.sum() == 1000 and 120 < counts[0] < 280
    assert np.random.multinomial(10, [], size=(2,)).shape == (2, 0)
    x = np.arange(10)
    np.random.shuffle(x)
    assert sorted(x.asnumpy().tolist()) == list(range(10))
    assert npx.random.bernoulli(0.5, size=(100,)).asnumpy().sum() > 20
    assert npx.random.normal_n(0, 1, batch_shape=(2,)).shape == (2,)


def test_fallbacks_give_np_arrays_with_numpy_values():
    x = np.array([3.0, 1.0, 3.0, 2.0])
    cases = [("unique", (x,)), ("nonzero", (x - 1,)), ("argsort", (x,)),
             ("histogram", (x,)), ("percentile", (x, 50)), ("diff", (x,)),
             ("polyval", (x, 2.0)), ("flatnonzero", (x - 1,)), ("median", (x,))]
    for name, args in cases:
        got = getattr(np, name)(*args)
        want = getattr(onp, name)(*[a.asnumpy() if hasattr(a, "asnumpy") else a for a in args])
        gots = got if isinstance(got, tuple) else (got,)
        wants = want if isinstance(want, tuple) else (want,)
        for g, w in zip(gots, wants):
            assert type(g) is np.ndarray, name
            onp.testing.assert_allclose(g.asnumpy(), w, err_msg=name)
    onp.testing.assert_allclose(np.linalg.inv(np.array([[2.0, 0], [0, 4]])).asnumpy(),
                                [[0.5, 0], [0, 0.25]])
    assert float(np.linalg.det(np.eye(3) * 2)) == pytest.approx(8.0)


def test_semantics_switches():
    npx.reset_np()
    assert not npx.is_np_array() and not npx.is_np_shape()
    with mx.util.np_shape():
        assert mx.util.is_np_shape() and not mx.util.is_np_array()
    with mx.util.np_array():
        assert mx.util.is_np_array() and mx.util.is_np_shape()
    assert not mx.util.is_np_array()

    @mx.util.use_np
    def inside():
        return npx.is_np_array(), npx.is_np_shape()
    assert inside() == (True, True) and not npx.is_np_array()
    with pytest.raises(ValueError):
        npx.set_np(shape=False, array=True)
    with pytest.raises(TypeError):
        npx.set_np(dtype=True)
    assert mx.np_shape is mx.util.np_shape and mx.use_np is mx.util.use_np


def test_faces_convert_without_copies_and_share_gradients():
    x = np.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = (x.as_nd_ndarray() * 3).as_np_ndarray().sum()
    y.backward()
    assert type(x.grad) is np.ndarray and x.grad.tolist() == [3.0, 3.0]
    legacy = x.as_nd_ndarray()
    legacy[0] = 7
    assert x.tolist() == [7.0, 2.0]


def test_np_ndarray_refuses_legacy_fluent_methods():
    x = np.ones(3)
    with pytest.raises(AttributeError, match="mxnet.numpy.ndarray"):
        x.exp()
    with pytest.raises(AttributeError):
        x.asscalar()
    assert x.sum().item() == 3.0 and x.round().shape == (3,)


def test_repr_str_format_like_mxnet():
    assert repr(np.array([1, 2], dtype="int32")) == "array([1, 2], dtype=int32)"
    assert repr(np.array([1.0, 2.5])) == "array([1. , 2.5])"
    assert repr(np.array(2.0)) == "array(2.)"
    assert repr(np.arange(2, dtype="int64")) == "array([0, 1], dtype=int64)"
    assert "{:.2f}".format(np.array(3.14159)) == "3.14"
    with pytest.raises(TypeError):
        "{:10}".format(np.ones(2))


def test_npx_reshape_codes():
    x = np.ones((2, 3, 4))
    assert npx.reshape(x, (-2, -1)).shape == (2, 12)
    assert npx.reshape(x, (-5, -2)).shape == (6, 4)
    assert npx.reshape(x, (-4,)).shape == (2, 3, 4)
    assert npx.reshape(x, (-6, 1, 2, -2, -2)).shape == (1, 2, 3, 4)
    assert npx.reshape(np.ones((1, 3)), (-3, -2)).shape == (3,)
    with pytest.raises(mx.MXNetError):
        x.reshape(0, -1)


def test_symbol_namespaces_build_np_graphs():
    x = mx.sym.var("x")
    y = mx.sym.np.sum(mx.sym.npx.relu(x), axis=1)
    assert y.infer_shape(x=(2, 3))[1] == [(2,)]
    assert "_np_sum" in y.tojson()
    u = mx.sym.npx.random.uniform_n(0, 1, batch_shape=(4,))
    assert u.infer_shape()[1] == [(4,)]
    assert callable(mx.sym.npx.image.to_tensor) and callable(mx.nd.npx.relu)
