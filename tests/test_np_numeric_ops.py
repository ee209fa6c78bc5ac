"""mx.np's pad, copysign, ldexp, nan_to_num, polyval, average, percentile, ediff1d,
bincount, delete and argsort run MXNet's ops (``_npi_pad`` ...),
not NumPy fallbacks: NumPy's values, gradients checked against central differences
(float64, second order too) and MXNet 1.9.1's, recorded by autograd, hybridizable."""
import json
import os

import numpy as onp
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite import np, npx
from optable import row_tests
from test_np_matrix_ops import grad_of_sum
from test_np_ops import as_np, case

R = onp.random.RandomState(7)


def u(*shape):
    return R.uniform(-1, 1, shape)


CASES = [
    case("pad constant", as_np(lambda x: np.pad(x, ((1, 2), (0, 3)), constant_values=0.5)),
         lambda x: onp.pad(x, ((1, 2), (0, 3)), constant_values=0.5), [u(2, 3)]),
    case("pad one pair", as_np(lambda x: np.pad(x, (2, 1))), lambda x: onp.pad(x, (2, 1)),
         [u(2, 3)]),
    case("pad edge", as_np(lambda x: np.pad(x, 2, mode="edge")),
         lambda x: onp.pad(x, 2, mode="edge"), [u(2, 3)], grad=()),
    case("pad reflect odd", as_np(lambda x: np.pad(x, 1, mode="reflect", reflect_type="odd")),
         lambda x: onp.pad(x, 1, mode="reflect", reflect_type="odd"), [u(3, 3)], grad=()),
    case("copysign", as_np(np.copysign), onp.copysign, [u(3, 1), u(4)], grad=(0, 1)),
    case("ldexp", as_np(np.ldexp), lambda a, b: a * 2.0 ** b, [u(3, 1), u(4) * 3],
         grad=(0, 1), rtol=1e-7),
    case("copysign scalar", as_np(lambda x: np.copysign(x, -1.5)),
         lambda x: onp.copysign(x, -1.5), [u(3, 4)]),
    case("rcopysign scalar", as_np(lambda x: np.copysign(2.5, x)),
         lambda x: onp.copysign(2.5, x), [u(3, 4)]),
    case("ldexp scalar", as_np(lambda x: np.ldexp(x, 3)), lambda x: x * 8.0, [u(3, 4)]),
    case("rldexp scalar", as_np(lambda x: np.ldexp(1.5, x)), lambda x: 1.5 * 2.0 ** x,
         [u(3, 4)], rtol=1e-7),
    case("nan_to_num", as_np(lambda x: np.nan_to_num(x, nan=2.0)),
         lambda x: onp.nan_to_num(x, nan=2.0), [u(3, 4)]),
    case("polyval", as_np(np.polyval), onp.polyval, [u(4), u(3, 2)], grad=(0, 1),
         rtol=1e-10),
    case("average weighted along an axis",
         as_np(lambda a, w: np.average(a, axis=1, weights=w)),
         lambda a, w: onp.average(a, axis=1, weights=w), [u(3, 4), u(4) + 2], grad=(0, 1)),
    case("average weights of a's shape",
         as_np(lambda a, w: np.average(a, axis=(0, 2), weights=w)),
         lambda a, w: onp.average(a, axis=(0, 2), weights=w), [u(2, 3, 2), u(2, 3, 2) + 2],
         grad=(0, 1)),
    case("average returned", as_np(lambda a, w: np.average(a, weights=w, returned=True)[1]),
         lambda a, w: onp.sum(w), [u(3), u(3) + 2], grad=(0, 1), op="_npi_average"),
    case("average unweighted", as_np(lambda a: np.average(a, axis=0)),
         lambda a: onp.average(a, axis=0), [u(3, 2)]),
    case("percentile", as_np(lambda a, q: np.percentile(a, q, axis=1, keepdims=True)),
         lambda a, q: onp.percentile(a, q, axis=1, keepdims=True),
         [u(3, 5), onp.array([10.0, 50, 95])], grad=()),
    case("percentile scalar nearest",
         as_np(lambda a: np.percentile(a, 30, interpolation="nearest")),
         lambda a: onp.percentile(a, 30, method="nearest"), [u(4, 5)], grad=(),
         op="_npi_percentile"),
    case("ediff1d", as_np(np.ediff1d), onp.ediff1d, [u(2, 3)]),
    case("ediff1d with ends", as_np(lambda a, b: np.ediff1d(a, to_begin=b, to_end=-1.5)),
         lambda a, b: onp.ediff1d(a, to_begin=b, to_end=-1.5), [u(4), u(2)], grad=(0, 1)),
    case("bincount", as_np(lambda x: np.bincount(x.astype("int64"), minlength=9)),
         lambda x: onp.bincount(x.astype("int64"), minlength=9), [onp.array([3.0, 0, 3, 5])],
         grad=(), op="_npi_bincount"),
    case("bincount weighted", as_np(lambda x, w: np.bincount(x.astype("int32"), w)),
         lambda x, w: onp.bincount(x.astype("int32"), w).astype(w.dtype),
         [onp.array([4.0, 1, 4]), u(3)],
         grad=(), op="_npi_bincount"),
    case("delete indices", as_np(lambda x: np.delete(x, np.array([2, 0, 2, -1]), axis=1)),
         lambda x: onp.delete(x, [2, 0, -1], axis=1), [u(3, 5)], grad=()),
    case("delete slice flat", as_np(lambda x: np.delete(x, slice(1, None, 3))),
         lambda x: onp.delete(x, slice(1, None, 3)), [u(3, 4)], grad=()),
    case("delete one", as_np(lambda x: np.delete(x, -2, axis=0)),
         lambda x: onp.delete(x, -2, axis=0), [u(3, 4)], grad=()),
    case("argsort", as_np(lambda x: np.argsort(x, axis=0)),
         lambda x: onp.argsort(x, axis=0, kind="stable"), [onp.array([[2.0, 1], [2, 0]])],
         grad=()),
    case("argsort flat", as_np(lambda x: np.argsort(x, axis=None)),
         lambda x: onp.argsort(x, axis=None, kind="stable"), [u(3, 4)], grad=(),
         op="argsort"),
]


globals().update(row_tests(CASES))


def test_nan_to_num_replaces_and_passes_no_gradient_through_them():
    x = np.array([onp.nan, onp.inf, -onp.inf, 1.5], dtype="float32")
    x.attach_grad()
    with mx.autograd.record():
        y = np.nan_to_num(x, posinf=9.0)
    y.backward()
    onp.testing.assert_array_equal(y.asnumpy(), [0, 9, onp.finfo(onp.float32).min, 1.5])
    onp.testing.assert_array_equal(x.grad.asnumpy(), [0, 0, 0, 1])
    assert np.nan_to_num(np.array([1, 2], dtype="int32")).dtype == onp.int32


# gradient of f(x).sum() at x = [[1, -2], [3, 4]] as MXNet 1.9.1 gives it
MXNET_GRADS = {
    "pad": (lambda x: np.pad(x, ((1, 1), (0, 2))), [[1, 1], [1, 1]]),
    "copysign": (lambda x: np.copysign(x, np.array([-1.0, 1])), [[-1, -1], [-1, 1]]),
    "ldexp": (lambda x: np.ldexp(x, np.array([2.0, 1])), [[4, 2], [4, 2]]),
    "nan_to_num": (lambda x: np.nan_to_num(x), [[1, 1], [1, 1]]),
    "average": (lambda x: np.average(x, axis=0, weights=np.array([1.0, 3])),
                [[0.25, 0.25], [0.75, 0.75]]),
    "percentile": (lambda x: np.percentile(x, 50, axis=0), [[0, 0], [0, 0]]),
    "ediff1d": (lambda x: np.ediff1d(x, to_end=3.0) * np.array([1.0, 2, 3, 4]),
                [[-1, -1], [-1, 3]]),
}


@pytest.mark.parametrize("name", sorted(MXNET_GRADS))
def test_gradients_agree_with_mxnet_191(name):
    f, want = MXNET_GRADS[name]
    onp.testing.assert_allclose(grad_of_sum(f, [[1.0, -2], [3, 4]]), want, rtol=1e-6)


def test_scalar_forms_of_integer_data_stay_integer_as_mxnet_191():
    a = np.array([1, 2], dtype="int32")
    for y, want in ((np.ldexp(a, 2.5), [4, 8]), (np.copysign(a, -2.5), [-1, -2]),
                    (np.ldexp(3.0, a), [6, 12])):
        assert y.dtype == onp.int32
        onp.testing.assert_array_equal(y.asnumpy(), want)


def test_two_array_copysign_and_ldexp_take_one_dtype_as_mxnet_191():
    # MXNet 1.9.1 computes them in the arrays' common dtype (integer ldexp truncates:
    # [1, -2, 3] * 2**[-1, 1, -1] is [0, -4, 1]) and refuses arrays of two dtypes
    a = np.array([1, -2, 3], dtype="int32")
    b = np.array([-1, 1, -1], dtype="int32")
    y = np.copysign(a, b)
    assert y.dtype == onp.int32
    onp.testing.assert_array_equal(y.asnumpy(), [-1, 2, -3])
    y = np.ldexp(a, b)
    assert y.dtype == onp.int32
    onp.testing.assert_array_equal(y.asnumpy(), [0, -4, 1])
    f = np.array([-1.0, 1, -1])
    for fn in (np.copysign, np.ldexp):
        for x1, x2 in ((a, b.astype("int64")), (f, a), (a, f)):
            with pytest.raises(MXNetError, match="different dtypes"):
                fn(x1, x2)
    assert np.ldexp(f, f).dtype == onp.float32


def test_average_weights_gradient_agrees_with_mxnet_191():
    w = np.array([1.0, 3])
    w.attach_grad()
    with mx.autograd.record():
        y = np.average(np.array([[1.0, -2], [3, 4]]), axis=0, weights=w).sum()
    y.backward()
    onp.testing.assert_allclose(w.grad.asnumpy(), [-1.5, 0.5], rtol=1e-6)    # MXNet 1.9.1's


class _Block(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        n = F.np
        return (n.pad(x, ((1, 1), (0, 2))).sum() + n.copysign(x, x - 2).sum()
                + n.ldexp(x, x).sum() + n.nan_to_num(x).sum() + n.polyval(x[0], x).sum()
                + n.average(x, axis=0, weights=x[0] + 3).sum() + n.percentile(x, 40).sum()
                + n.ediff1d(x, to_begin=x[1]).sum() + n.delete(x, 0, axis=1).sum()
                + n.argsort(x).sum() + n.copysign(x, -2.0).sum() + n.copysign(3, x).sum()
                + n.ldexp(x, 2).sum() + n.ldexp(3.0, x).sum())


def test_hybridized_block_gives_the_imperative_value(tmp_path):
    npx.set_np()
    try:
        x = np.array([[1.0, -2], [3, 4]])
        net = _Block()
        want = float(net(x))
        net.hybridize()
        assert float(net(x)) == pytest.approx(want, rel=1e-6)
        net.export(os.path.join(str(tmp_path), "m"))
        with open(os.path.join(str(tmp_path), "m-symbol.json")) as f:
            ops = [n["op"] for n in json.load(f)["nodes"]]
    finally:
        npx.reset_np()
    for name in ("_npi_pad", "_npi_copysign", "_npi_ldexp", "_npi_nan_to_num", "_npi_polyval",
                 "_npi_average", "_npi_percentile", "_npi_ediff1d", "_npi_delete",
                 "argsort", "_npi_copysign_scalar", "_npi_rcopysign_scalar",
                 "_npi_ldexp_scalar", "_npi_rldexp_scalar"):
        assert name in ops


def test_errors_name_the_op():
    with pytest.raises(mx.MXNetError, match="_npi_pad.*pad_width"):
        np.pad(np.ones((2, 3)), ((1, 1), (1, 1), (1, 1)))
    with pytest.raises(mx.MXNetError, match="_npi_pad.*mode"):
        np.pad(np.ones((2, 3)), 1, mode="wrap")
    with pytest.raises(mx.MXNetError, match="_npi_polyval.*p expected 1 dim"):
        np.polyval(np.ones((2, 2)), np.ones(3))
    with pytest.raises(mx.MXNetError, match="_npi_average.*weights expected shape"):
        np.average(np.ones((2, 3)), axis=1, weights=np.ones(2))
    with pytest.raises(mx.MXNetError, match="_npi_percentile.*q expected values in"):
        np.percentile(np.ones(3), 101)
    with pytest.raises(mx.MXNetError, match="_npi_bincount.*no negative"):
        np.bincount(np.array([1, -1], dtype="int32"))
    with pytest.raises(mx.MXNetError, match="_npi_bincount.*1-D integers"):
        np.bincount(np.array([1.0, 2]))
    with pytest.raises(mx.MXNetError, match=r"_npi_delete.*index expected in \[-3, 3\)"):
        np.delete(np.ones(3), 3)
