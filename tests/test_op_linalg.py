"""mx.nd.linalg: forward against NumPy, float64 numeric gradients (first and second
order), linear-algebra identities and error messages."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from optable import case, row_tests

nd = mx.nd
la = mx.nd.linalg
R = np.random.RandomState(7)


def u(*shape):
    return R.uniform(-1, 1, shape)


def spd(*batch, n=3):
    """Well-conditioned symmetric positive definite matrices."""
    a = R.uniform(-1, 1, batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def lower(*batch, n=3):
    """A full matrix whose lower triangle is well conditioned (the upper part is noise
    that the triangular ops must ignore)."""
    return R.uniform(-1, 1, batch + (n, n)) + 3 * np.eye(n)


def T(a):
    return np.swapaxes(a, -1, -2)


def tri(a, low=True):
    return np.tril(a) if low else np.triu(a)


def sym(x):
    """Symmetric use of potrf's input, as MXNet's gradient assumes."""
    return (x + nd.transpose(x, axes=tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2))) * 0.5


def _det(a):
    d = np.linalg.det(a)
    return d.reshape(1) if np.ndim(d) == 0 else d


def _slogdet(a):
    s, l = np.linalg.slogdet(a)
    return [s.reshape(1) if np.ndim(s) == 0 else s, l.reshape(1) if np.ndim(l) == 0 else l]


def _sumlogdiag(a):
    r = np.log(np.diagonal(a, axis1=-2, axis2=-1)).sum(-1)
    return r.reshape(1) if np.ndim(r) == 0 else r


def _trsm_ref(a, b, transpose=False, rightside=False, low=True, alpha=1.0):
    m = tri(a, low)
    m = T(m) if transpose else m
    return alpha * (b @ np.linalg.inv(m) if rightside else np.linalg.inv(m) @ b)


def _trmm_ref(a, b, transpose=False, rightside=False, low=True, alpha=1.0):
    m = tri(a, low)
    m = T(m) if transpose else m
    return alpha * (b @ m if rightside else m @ b)


CASES = [
    case("gemm2", lambda a, b: la.gemm2(a, b, alpha=0.5), lambda a, b: 0.5 * a @ b,
         [u(3, 4), u(4, 2)], grad=(0, 1)),
    case("gemm2_ta_tb_batch", lambda a, b: la.gemm2(a, b, transpose_a=True, transpose_b=True),
         lambda a, b: T(a) @ T(b), [u(2, 4, 3), u(2, 5, 4)], grad=(0, 1)),
    case("gemm2_axis0", lambda a, b: la.gemm2(a, b, axis=0),
         lambda a, b: np.moveaxis(np.moveaxis(a, 0, -2) @ np.moveaxis(b, 0, -2), -2, 0),
         [u(3, 2, 4), u(4, 2, 5)], grad=(0, 1)),
    case("gemm", lambda a, b, c: la.gemm(a, b, c, alpha=2.0, beta=0.5, transpose_b=True),
         lambda a, b, c: 2.0 * a @ T(b) + 0.5 * c, [u(3, 4), u(2, 4), u(3, 2)], grad=(0, 1, 2)),
    case("gemm_alias_ta", lambda a, b, c: nd.linalg_gemm(a, b, c, transpose_a=True),
         lambda a, b, c: T(a) @ b + c, [u(2, 4, 3), u(2, 4, 2), u(2, 3, 2)], grad=(0, 1, 2)),
    case("potrf", lambda a: la.potrf(sym(a)), lambda a: np.linalg.cholesky(a),
         [spd()], grad=(0,), op="_linalg_potrf"),
    case("potrf_batch", lambda a: la.potrf(sym(a)), lambda a: np.linalg.cholesky(a),
         [spd(2)], grad=(0,), op="_linalg_potrf"),
    case("potri", lambda a: la.potri(a), lambda a: np.linalg.inv(tri(a) @ T(tri(a))),
         [lower()], grad=(0,)),
    case("trsm", lambda a, b: la.trsm(a, b, alpha=1.5), lambda a, b: _trsm_ref(a, b, alpha=1.5),
         [lower(), u(3, 2)], grad=(0, 1)),
    case("trsm_t_upper", lambda a, b: la.trsm(a, b, transpose=True, lower=False),
         lambda a, b: _trsm_ref(a, b, transpose=True, low=False), [lower(2), u(2, 3, 4)],
         grad=(0, 1)),
    case("trsm_right", lambda a, b: la.trsm(a, b, rightside=True, alpha=-0.5),
         lambda a, b: _trsm_ref(a, b, rightside=True, alpha=-0.5), [lower(), u(2, 3)],
         grad=(0, 1)),
    case("trsm_right_t", lambda a, b: la.trsm(a, b, rightside=True, transpose=True),
         lambda a, b: _trsm_ref(a, b, rightside=True, transpose=True), [lower(), u(4, 3)],
         grad=(0, 1)),
    case("trmm", lambda a, b: la.trmm(a, b, alpha=2.0), lambda a, b: _trmm_ref(a, b, alpha=2.0),
         [lower(), u(3, 2)], grad=(0, 1)),
    case("trmm_right_t_upper", lambda a, b: la.trmm(a, b, rightside=True, transpose=True,
                                                   lower=False),
         lambda a, b: _trmm_ref(a, b, rightside=True, transpose=True, low=False),
         [lower(2), u(2, 4, 3)], grad=(0, 1)),
    case("syrk", lambda a: la.syrk(a, alpha=1.5), lambda a: 1.5 * a @ T(a), [u(3, 4)]),
    case("syrk_t_batch", lambda a: la.syrk(a, transpose=True), lambda a: T(a) @ a, [u(2, 3, 4)]),
    case("inverse", lambda a: la.inverse(a), np.linalg.inv, [lower(2)]),
    case("det", lambda a: la.det(a), _det, [lower()]),
    case("det_batch", lambda a: la.det(a), _det, [lower(3)]),
    case("slogdet", lambda a: la.slogdet(a), _slogdet,
         [u(2, 3, 3) + 2 * np.eye(3) * [[[1]], [[-1]]]]),      # one negative determinant
    case("sumlogdiag", lambda a: la.sumlogdiag(a), _sumlogdiag, [spd(2)]),
]


for _c in CASES:     # linalg's LAPACK paths: float64 to 1e-10, float32 to 2e-5
    _c.rtol = _c.atol = 1e-10
    _c.rtol32 = _c.atol32 = 2e-5
globals().update(row_tests(CASES))


# -- identities ----------------------------------------------------------------------

def test_potrf_reconstructs_and_potri_inverts():
    a = spd(2, n=4)
    L = la.potrf(nd.array(a, dtype="float64"))
    Ln = L.asnumpy()
    assert np.allclose(np.triu(Ln, 1), 0)
    np.testing.assert_allclose(Ln @ T(Ln), a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(la.potri(L).asnumpy() @ a, np.broadcast_to(np.eye(4), a.shape),
                               atol=1e-12)


def test_inverse_det_and_triangular_round_trip():
    a = nd.array(lower(3, n=4), dtype="float64")
    eye = np.broadcast_to(np.eye(4), (3, 4, 4))
    np.testing.assert_allclose(nd.linalg_gemm2(la.inverse(a), a).asnumpy(), eye, atol=1e-12)
    np.testing.assert_allclose(la.det(a).asnumpy(), np.linalg.det(a.asnumpy()), rtol=1e-12)
    sign, logabs = la.slogdet(a)
    np.testing.assert_allclose((sign * nd.exp(logabs)).asnumpy(), la.det(a).asnumpy(),
                               rtol=1e-12)
    b = nd.array(u(3, 4, 2), dtype="float64")
    back = la.trsm(a, la.trmm(a, b, alpha=2.0), alpha=0.5)
    np.testing.assert_allclose(back.asnumpy(), b.asnumpy(), rtol=1e-12, atol=1e-12)


def test_triangular_ops_ignore_the_other_triangle():
    a = lower()
    b = nd.array(u(3, 2), dtype="float64")
    noisy = a + np.triu(u(3, 3) * 10, 1)
    for fn in (la.trsm, la.trmm):
        y1 = fn(nd.array(a, dtype="float64"), b).asnumpy()
        y2 = fn(nd.array(noisy, dtype="float64"), b).asnumpy()
        np.testing.assert_allclose(y1, y2, rtol=1e-12)
    x = nd.array(a, dtype="float64")
    x.attach_grad()
    with mx.autograd.record():
        y = la.trsm(x, b)
    y.backward()
    assert np.all(np.triu(x.grad.asnumpy(), 1) == 0)


def test_det_of_matrix_is_shape_1_and_batch_is_batch():
    assert la.det(nd.ones((3, 3))).shape == (1,)
    assert la.sumlogdiag(nd.ones((2, 4, 3, 3))).shape == (2, 4)
    assert [y.shape for y in la.slogdet(nd.ones((5, 2, 2)))] == [(5,), (5,)]


# -- errors ---------------------------------------------------------------------------

def _m(*shape):
    return nd.array(u(*shape))


ERRORS = [
    ("potrf_not_square", lambda: la.potrf(_m(3, 4)), "_linalg_potrf", "square"),
    ("potrf_not_spd", lambda: la.potrf(-nd.ones((3, 3)) - nd.array(np.eye(3))),
     "_linalg_potrf", "positive definite"),
    ("inverse_not_square", lambda: la.inverse(_m(2, 3)), "_linalg_inverse", "(2, 3)"),
    ("inverse_singular", lambda: la.inverse(nd.zeros((3, 3))), "_linalg_inverse", "singular"),
    ("det_vector", lambda: la.det(_m(3)), "_linalg_det", "2 dimensions"),
    ("gemm2_inner", lambda: la.gemm2(_m(3, 4), _m(3, 2)), "_linalg_gemm2", "4 rows"),
    ("gemm2_batch", lambda: la.gemm2(_m(2, 3, 4), _m(3, 4, 2)), "_linalg_gemm2", "batch"),
    ("gemm_c_shape", lambda: la.gemm(_m(3, 4), _m(4, 2), _m(2, 3)), "_linalg_gemm", "(3, 2)"),
    ("trsm_b_rows", lambda: la.trsm(_m(3, 3), _m(4, 2)), "_linalg_trsm", "rows 3"),
    ("trmm_b_cols", lambda: la.trmm(_m(3, 3), _m(3, 2), rightside=True), "_linalg_trmm",
     "columns 3"),
]


@pytest.mark.parametrize("fn,name,words", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_name_op_and_shapes(fn, name, words):
    with pytest.raises(MXNetError) as info:
        fn()
    msg = str(info.value)
    assert msg.startswith(name), "message does not name %s: %s" % (name, msg)
    assert words in msg, "message lacks %r: %s" % (words, msg)


NAN = float("nan")


@pytest.mark.parametrize("a,b,kw,want", [
    # MXNet 1.9.1's numbers: substitution carries a NaN to the rows that depend on it
    ([[1.0, 0], [NAN, 1]], [[1.0, 1], [1, 1]], {}, [[1, 1], [NAN, NAN]]),
    ([[NAN, 0], [2, 1]], [[1.0, 1], [1, 1]], {}, [[NAN, NAN], [NAN, NAN]]),
    ([[1.0, NAN], [2, 1]], [[1.0, 1], [1, 1]], {}, [[1, 1], [-1, -1]]),     # unread triangle
    ([[1.0, 0], [NAN, 1]], [[1.0, 1], [1, 1]], {"rightside": True}, [[NAN, 1], [NAN, 1]]),
    ([[1.0, 0], [NAN, 1]], [[1.0, 1], [1, 1]], {"transpose": True}, [[NAN, NAN], [1, 1]]),
    ([[1.0, 0], [NAN, 1]], [[1.0, 1], [1, 1]], {"alpha": 0.0}, [[0, 0], [0, 0]]),
])
def test_trsm_propagates_nan_as_mxnet(a, b, kw, want):
    y = mx.nd.linalg.trsm(mx.nd.array(a), mx.nd.array(b), **kw).asnumpy()
    np.testing.assert_array_equal(y, np.array(want, dtype=np.float32))


def test_inverse_of_a_matrix_with_nan_is_all_nan():
    a = mx.nd.array([[[NAN, 0], [0, 1]], [[2, 0], [0, 4]]])
    y = mx.nd.linalg.inverse(a).asnumpy()
    assert np.isnan(y[0]).all()
    np.testing.assert_allclose(y[1], [[0.5, 0], [0, 0.25]])
