"""Batched dense linear algebra: ``mx.nd.linalg.*`` (gemm, potrf, trsm, inverse, det ...).

Every op works on the last two axes and batches over the leading ones. Kernels use
``xp.linalg`` (NumPy or CuPy); a triangular solve is ``xp.linalg.solve`` on the
masked triangle, so there is no SciPy dependency. Gradients are written with these
same ops (gemm2, trsm, trmm, inverse), so they can be differentiated again.

As in MXNet, ``potrf``, ``potri``, ``trsm`` and ``trmm`` read only one triangle of
their matrix argument, and their gradient w.r.t. it lives in that triangle too,
except ``potrf``, whose gradient is symmetric (it assumes the caller fills both
triangles of the symmetric input from the same values).
"""
import contextlib

import numpy as np

from ... import nd
from ...base import MXNetError, parse_bool, parse_float, parse_int
from ...util import is_np_shape
from ..registry import register_op, Param
from ..util import const_like, norm_axis

_ALPHA = Param("alpha", parse_float, 1.0, "Scale factor of the result.")


# -- helpers on raw arrays ------------------------------------------------------

def _mT(a):
    return a.swapaxes(-1, -2)


def _tri(xp, a, lower):
    """One triangle of (a batch of) matrices; a mask, since not every backend's
    tril/triu takes batches."""
    keep = xp.tri(a.shape[-1], dtype=bool)
    return xp.where(keep if lower else keep.T, a, xp.zeros((), dtype=a.dtype))


def _check_matrix(what, a, square=False):
    if a.ndim < 2:
        raise MXNetError("%s must have at least 2 dimensions (a matrix or a batch of them), "
                         "got shape %s" % (what, a.shape))
    if square and a.shape[-1] != a.shape[-2]:
        raise MXNetError("%s must be a square matrix (or a batch of them): expected shape "
                         "(..., n, n), got %s" % (what, a.shape))


def _check_batch(what, a, b):
    if a.shape[:-2] != b.shape[:-2]:
        raise MXNetError("%s: batch dimensions differ: %s and %s" % (what, a.shape, b.shape))


def _as_out(y, like):
    """A matrix reduced to a scalar has shape (1,) in MXNet 1.x, () under NumPy shape
    semantics (as MXNet's det and slogdet give it)."""
    y = y.astype(like.dtype, copy=False)
    return y.reshape(1) if y.ndim == 0 and not is_np_shape() else y


# -- helpers on NDArrays (gradients) ----------------------------------------------

def _ndT(x):
    """Swap the last two axes of an NDArray."""
    perm = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return nd.transpose(x, axes=perm)


def _tri_mask(like, lower, strict=False):
    """A 0/1 matrix keeping one triangle of ``like``'s matrices, a constant beside it
    (on its device, in its dtype: a rule's raw arrays would otherwise be promoted by a
    float64 mask)."""
    k = -1 if strict else 0
    ones = np.ones((like.shape[-1],) * 2, like.dtype)
    return const_like(like, np.tril(ones, k) if lower else np.triu(ones, -k))


def _nd_tri(x, lower):
    """Keep one triangle of an NDArray (a product with a constant mask)."""
    return x * _tri_mask(x, lower)


def _batch_scalar(gy, mat_shape):
    """Per-matrix scalars (shape (1,) or batch) reshaped to broadcast over matrices."""
    return gy.reshape(tuple(mat_shape[:-2]) + (1, 1))


# -- gemm, gemm2 -------------------------------------------------------------------

def _move_rows(xp, a, axis):
    # MXNet's ``axis`` names the row axis; the columns are the last axis.
    axis = norm_axis(axis, a.ndim)
    return a if axis == a.ndim - 2 else xp.moveaxis(a, axis, -2)


def _matmul(p, xp, a, b):
    _check_matrix("A", a)
    _check_matrix("B", b)
    a = _move_rows(xp, a, p.axis)
    b = _move_rows(xp, b, p.axis)
    a = _mT(a) if p.transpose_a else a
    b = _mT(b) if p.transpose_b else b
    _check_batch("A and B", a, b)
    if a.shape[-1] != b.shape[-2]:
        raise MXNetError("A and B do not multiply: op(A) has shape %s and op(B) has shape %s "
                         "(transpose_a=%s, transpose_b=%s); expected op(B) to have %d rows"
                         % (a.shape, b.shape, p.transpose_a, p.transpose_b, a.shape[-1],))
    return xp.matmul(a, b) * p.alpha


def _rows_back(xp, y, axis):
    axis = norm_axis(axis, y.ndim)
    return y if axis == y.ndim - 2 else xp.moveaxis(y, -2, axis)


def _gemm2(p, xp, a, b):
    return _rows_back(xp, _matmul(p, xp, a, b), p.axis).astype(a.dtype, copy=False)


def _gemm(p, xp, a, b, c):
    y = _matmul(p, xp, a, b)
    c2 = _move_rows(xp, c, p.axis)
    if c2.shape != y.shape:
        raise MXNetError("C has shape %s, expected %s (the shape of op(A) * op(B))"
                         % (c.shape, _rows_back(xp, y, p.axis).shape))
    return _rows_back(xp, y + p.beta * c2, p.axis).astype(a.dtype, copy=False)


def _matmul_grads(p, a, b, gy):
    """Gradients of ``alpha * op(A) op(B)`` w.r.t. A and B, written with gemm2."""
    ta, tb, al, ax = p.transpose_a, p.transpose_b, p.alpha, p.axis
    g2 = nd.linalg_gemm2
    if ta:
        ga = g2(b, gy, transpose_a=tb, transpose_b=True, alpha=al, axis=ax)
    else:
        ga = g2(gy, b, transpose_b=not tb, alpha=al, axis=ax)
    if tb:
        gb = g2(gy, a, transpose_a=True, transpose_b=ta, alpha=al, axis=ax)
    else:
        gb = g2(a, gy, transpose_a=not ta, alpha=al, axis=ax)
    return [ga, gb]


def _gemm2_grad(p, x, y, gy, need):
    return _matmul_grads(p, x[0], x[1], gy[0])


def _gemm_grad(p, x, y, gy, need):
    return _matmul_grads(p, x[0], x[1], gy[0]) + [gy[0] * p.beta]


_GEMM_PARAMS = [Param("transpose_a", parse_bool, False, "Use the transpose of A."),
                Param("transpose_b", parse_bool, False, "Use the transpose of B."),
                _ALPHA,
                Param("axis", parse_int, -2, "The axis of the matrix rows (columns are last).")]

register_op("_linalg_gemm2", _gemm2, inputs=("A", "B"), params=_GEMM_PARAMS,
            gradient=_gemm2_grad, saves="x", aliases=("linalg_gemm2",),
            doc="Batched matrix product ``alpha * op(A) @ op(B)``.")
register_op("_linalg_gemm", _gemm, inputs=("A", "B", "C"),
            params=_GEMM_PARAMS[:3] + [Param("beta", parse_float, 1.0, "Scale factor of C.")]
            + _GEMM_PARAMS[3:],
            gradient=_gemm_grad, saves="x", aliases=("linalg_gemm",),
            doc="Batched ``alpha * op(A) @ op(B) + beta * C``.")


# -- Cholesky: potrf, potri ----------------------------------------------------------

def _failures_raise(xp):
    """A scope in which a failed factorisation raises ``LinAlgError``: NumPy always
    does; CuPy only inside ``cupyx.errstate(linalg='raise')`` (else it gives NaNs)."""
    if xp is np:
        return contextlib.nullcontext()
    import cupyx
    return cupyx.errstate(linalg="raise")


def _cholesky(xp, a):
    try:
        with _failures_raise(xp):
            return xp.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        raise MXNetError("A is not symmetric positive definite (the Cholesky factorisation "
                         "failed); expected an SPD matrix (or a batch of them)") from None


def _potrf(p, xp, a):
    _check_matrix("A", a, square=True)
    return _cholesky(xp, a).astype(a.dtype, copy=False)


def _copy_lower_to_upper(s):
    return s * _tri_mask(s, True) + _ndT(s * _tri_mask(s, True, True))


def _potrf_grad(p, x, y, gy, need):
    # dA = 0.5 * L^-T copyLTU(L^T tril(dL)) L^-1 (symmetric, as MXNet gives it).
    L = y[0]
    s = nd.linalg_gemm2(L, _nd_tri(gy[0], True), transpose_a=True)
    s = _copy_lower_to_upper(s)
    s = nd.linalg_trsm(L, s, rightside=True)
    return [nd.linalg_trsm(L, s, transpose=True, alpha=0.5)]


register_op("_linalg_potrf", _potrf, inputs=("A",), gradient=_potrf_grad, saves="y",
            aliases=("linalg_potrf",),
            doc="Cholesky factor ``L`` (lower triangular) of a symmetric positive definite "
                "``A = L @ L.T``; reads the lower triangle of A.")


def _inv(xp, a):
    # NOTE: every entry of A^-1 depends on every entry of A, so a matrix holding a NaN
    # has an all-NaN inverse (LAPACK's pivoting leaves some entries finite, as in MXNet).
    nan = xp.isnan(a).any(axis=(-2, -1))
    if nan.any():
        y = _inv(xp, xp.where(nan[..., None, None], xp.eye(a.shape[-1], dtype=a.dtype), a))
        return xp.where(nan[..., None, None], a.dtype.type(np.nan), y)
    try:
        with _failures_raise(xp):
            return xp.linalg.inv(a)
    except np.linalg.LinAlgError:
        raise MXNetError("A is singular; expected an invertible matrix "
                         "(or a batch of them)") from None


def _potri(p, xp, a):
    _check_matrix("A", a, square=True)
    low = _tri(xp, a, True)
    return _inv(xp, xp.matmul(low, _mT(low))).astype(a.dtype, copy=False)


def _potri_grad(p, x, y, gy, need):
    # y = (L L^T)^-1: dL = -tril((y (G + G^T) y) L), since only tril(L) is read.
    b, g = y[0], gy[0]
    m = nd.linalg_gemm2(nd.linalg_gemm2(b, g + _ndT(g)), b, alpha=-1.0)
    return [_nd_tri(nd.linalg_trmm(x[0], m, rightside=True), True)]


register_op("_linalg_potri", _potri, inputs=("A",), gradient=_potri_grad, saves="xy",
            aliases=("linalg_potri",),
            doc="``(L @ L.T)^-1`` from a Cholesky factor ``L`` (its lower triangle): the "
                "inverse of the matrix that potrf factorised.")


# -- triangular products and solves: trmm, trsm --------------------------------------

_TRI_PARAMS = [Param("transpose", parse_bool, False, "Use the transpose of the triangle of A."),
               Param("rightside", parse_bool, False, "Multiply from the right (B op(A))."),
               Param("lower", parse_bool, True, "Read the lower (else upper) triangle of A."),
               _ALPHA]


def _tri_operands(p, xp, a, b):
    _check_matrix("A", a, square=True)
    _check_matrix("B", b)
    _check_batch("A and B", a, b)
    n = a.shape[-1]
    k = b.shape[-1] if p.rightside else b.shape[-2]
    if k != n:
        raise MXNetError("B has shape %s, expected %s %d for A of shape %s (rightside=%s)"
                         % (b.shape, "columns" if p.rightside else "rows", n, a.shape,
                            p.rightside))
    m = _tri(xp, a, p.lower)
    return _mT(m) if p.transpose else m


def _trmm(p, xp, a, b):
    m = _tri_operands(p, xp, a, b)
    y = xp.matmul(b, m) if p.rightside else xp.matmul(m, b)
    return (y * p.alpha).astype(a.dtype, copy=False)


def _trsm(p, xp, a, b):
    m = _tri_operands(p, xp, a, b)
    if p.alpha == 0:        # BLAS returns zeros without reading A (as MXNet does)
        return xp.zeros(xp.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                        a.dtype)
    lower = p.lower != p.transpose          # M's triangle
    if p.rightside:
        # X M = B  <=>  M^T X^T = B^T, and M^T has the other triangle
        y = _mT(_substitute(xp, _mT(m), _mT(b), not lower))
    else:
        y = _substitute(xp, m, b, lower)
    return (y * p.alpha).astype(a.dtype, copy=False)


def _substitute(xp, m, b, lower):
    """``M^-1 B`` for triangular ``M`` by forward (or back) substitution, as BLAS trsm.

    NOTE: a general solver pivots, and a NaN in M can then come out as finite numbers;
    substitution carries every NaN to the rows that depend on it.
    """
    diag = xp.diagonal(m, axis1=-2, axis2=-1)
    if (diag == 0).any():
        raise MXNetError("the triangle of A is singular (a zero on its diagonal)")
    n = m.shape[-1]
    x = xp.zeros(xp.broadcast_shapes(m.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 xp.result_type(m, b))
    for i in (range(n) if lower else range(n - 1, -1, -1)):
        done = slice(0, i) if lower else slice(i + 1, n)
        s = b[..., i, :] - xp.matmul(m[..., i:i + 1, done], x[..., done, :])[..., 0, :]
        x[..., i, :] = s / diag[..., i:i + 1]
    return x


def _tri_grad_a(p, a, gm):
    """Gradient w.r.t. A from the gradient w.r.t. M = op(tri(A))."""
    return _nd_tri(_ndT(gm) if p.transpose else gm, p.lower)


def _trmm_grad(p, x, y, gy, need):
    a, b, g = x[0], x[1], gy[0]
    kw = dict(rightside=p.rightside, lower=p.lower, transpose=not p.transpose, alpha=p.alpha)
    gb = nd.linalg_trmm(a, g, **kw)
    if p.rightside:       # y = alpha B M
        gm = nd.linalg_gemm2(b, g, transpose_a=True, alpha=p.alpha)
    else:                 # y = alpha M B
        gm = nd.linalg_gemm2(g, b, transpose_b=True, alpha=p.alpha)
    return [_tri_grad_a(p, a, gm), gb]


def _trsm_grad(p, x, y, gy, need):
    a, g, out = x[0], gy[0], y[0]
    kw = dict(rightside=p.rightside, lower=p.lower, transpose=not p.transpose)
    gb = nd.linalg_trsm(a, g, alpha=p.alpha, **kw)
    h = nd.linalg_trsm(a, g, **kw)    # G solved with M^T, unscaled
    if p.rightside:       # y = alpha B M^-1: dM = -y^T G M^-T
        gm = nd.linalg_gemm2(out, h, transpose_a=True, alpha=-1.0)
    else:                 # y = alpha M^-1 B: dM = -M^-T G y^T
        gm = nd.linalg_gemm2(h, out, transpose_b=True, alpha=-1.0)
    return [_tri_grad_a(p, a, gm), gb]


register_op("_linalg_trmm", _trmm, inputs=("A", "B"), params=_TRI_PARAMS, gradient=_trmm_grad,
            saves="x", aliases=("linalg_trmm",),
            doc="Triangular product ``alpha * op(A) @ B`` (or ``alpha * B @ op(A)`` with "
                "rightside), reading one triangle of A.")
register_op("_linalg_trsm", _trsm, inputs=("A", "B"), params=_TRI_PARAMS, gradient=_trsm_grad,
            saves="xy", aliases=("linalg_trsm",),
            doc="Triangular solve ``alpha * op(A)^-1 @ B`` (or ``alpha * B @ op(A)^-1`` with "
                "rightside), reading one triangle of A.")


# -- syrk ---------------------------------------------------------------------------

def _syrk(p, xp, a):
    _check_matrix("A", a)
    y = xp.matmul(_mT(a), a) if p.transpose else xp.matmul(a, _mT(a))
    return (y * p.alpha).astype(a.dtype, copy=False)


def _syrk_grad(p, x, y, gy, need):
    g = gy[0] + _ndT(gy[0])
    if p.transpose:       # y = alpha A^T A
        return [nd.linalg_gemm2(x[0], g, alpha=p.alpha)]
    return [nd.linalg_gemm2(g, x[0], alpha=p.alpha)]


register_op("_linalg_syrk", _syrk, inputs=("A",), gradient=_syrk_grad, saves="x",
            params=[Param("transpose", parse_bool, False, "Compute A^T A instead of A A^T."),
                    _ALPHA],
            aliases=("linalg_syrk",), doc="``alpha * A @ A.T`` (or ``alpha * A.T @ A``).")


# -- inverse, det, slogdet, sumlogdiag -----------------------------------------------

def _inverse(p, xp, a):
    _check_matrix("A", a, square=True)
    return _inv(xp, a).astype(a.dtype, copy=False)


def _inverse_grad(p, x, y, gy, need):
    # d(A^-1) = -A^-1 dA A^-1  =>  gA = -Y^T G Y^T
    yt = _ndT(y[0])
    return [nd.linalg_gemm2(nd.linalg_gemm2(yt, gy[0]), yt, alpha=-1.0)]


register_op("_linalg_inverse", _inverse, inputs=("A",), gradient=_inverse_grad, saves="y",
            aliases=("linalg_inverse",), doc="The inverse of a square matrix (batched).")


def _det(p, xp, a):
    _check_matrix("A", a, square=True)
    return _as_out(xp.linalg.det(a), a)


def _det_grad(p, x, y, gy, need):
    # d det(A) = det(A) tr(A^-1 dA)  =>  gA = g det(A) A^-T
    a = x[0]
    return [_batch_scalar(gy[0] * y[0], a.shape) * _ndT(nd.linalg_inverse(a))]


register_op("_linalg_det", _det, inputs=("A",), gradient=_det_grad, saves="xy",
            aliases=("linalg_det",), doc="The determinant of a square matrix (batched).")


def _slogdet(p, xp, a):
    _check_matrix("A", a, square=True)
    sign, logabs = xp.linalg.slogdet(a)
    return _as_out(sign, a), _as_out(logabs, a)


def _slogdet_grad(p, x, y, gy, need):
    a = x[0]
    if gy[1] is None:       # only the sign was used: it has no gradient
        return [nd.zeros_like(a)]
    return [_batch_scalar(gy[1], a.shape) * _ndT(nd.linalg_inverse(a))]


register_op("_linalg_slogdet", _slogdet, inputs=("A",), gradient=_slogdet_grad, saves="x",
            num_outputs=2, aliases=("linalg_slogdet",),
            doc="Sign and log of the absolute value of the determinant (two outputs); the "
                "sign gets no gradient.")


def _sumlogdiag(p, xp, a):
    _check_matrix("A", a, square=True)
    return _as_out(xp.sum(xp.log(xp.diagonal(a, axis1=-2, axis2=-1)), axis=-1), a)


def _sumlogdiag_grad(p, x, y, gy, need):
    a = x[0]
    eye = const_like(a, np.eye(a.shape[-1], dtype=a.dtype))
    # NOTE: off the diagonal divide by 1, not by A, so that no 0/0 appears.
    return [_batch_scalar(gy[0], a.shape) / (a * eye + (1 - eye)) * eye]


register_op("_linalg_sumlogdiag", _sumlogdiag, inputs=("A",), gradient=_sumlogdiag_grad,
            saves="x", aliases=("linalg_sumlogdiag",),
            doc="Sum of the logs of the diagonal of a square matrix (batched).")
