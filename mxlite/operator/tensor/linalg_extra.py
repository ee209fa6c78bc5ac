"""More batched linear algebra: diagonals and triangles as vectors, LQ factorisation
(``gelqf``) and the symmetric eigendecomposition (``syevd``), as ``mx.nd.linalg.*``.

Conventions follow ``linalg.py``: every op works on the last two axes and batches over
the leading ones, and every gradient is written with mxlite ops (the extract/make
pairs are each other's gradient), so gradients can be differentiated again.

MXNet's conventions that are kept exactly:

- ``extracttrian``/``maketrian`` store a lower triangle row by row, but an upper one
  (``offset > 0``, or ``offset == 0`` with ``lower=False``) column by column: the
  upper triangle of A is handled as the lower triangle of A^T. A nonzero ``offset``
  decides the side by its sign and ignores ``lower``.
- ``gelqf`` gives ``(Q, L)`` with ``A = L @ Q`` and LAPACK's Householder signs (the
  diagonal of L can be negative), the same as the QR factorisation of A^T.
- ``syevd`` reads the lower triangle of A, gives ``(U, lam)`` with the eigenvectors in
  the *rows* of U (``U @ A = diag(lam) @ U``), ascending eigenvalues, and each row's
  sign chosen so that its entry of largest magnitude (the first one on ties) is positive.
"""
import numpy as np

from ... import nd
from ...base import MXNetError, parse_bool, parse_int
from ..registry import register_op, Param
from ..util import fill_missing
from .linalg import _check_matrix, _copy_lower_to_upper, _mT, _ndT, _tri, _tri_mask

_OFFSET = Param("offset", parse_int, 0, "Offset of the diagonal (> 0: above the main "
                                         "diagonal, < 0: below).")
_LOWER = Param("lower", parse_bool, True, "Use the lower triangle when offset is 0 "
                                          "(else the upper one).")


def _check_float(what, a):
    if a.dtype not in (np.float32, np.float64):
        raise MXNetError("%s must be float32 or float64 (this operation only supports "
                         "floating point), got %s" % (what, a.dtype))


def _check_offset(n, k):
    if n - abs(k) <= 0:
        raise MXNetError("offset %d is out of range for matrices of size %d x %d; expected "
                         "|offset| < %d" % (k, n, n, n))


# -- extractdiag, makediag ------------------------------------------------------------

def _diag_index(n, k):
    """Row and column indices of the k-th diagonal of an n x n matrix."""
    i = np.arange(n - abs(k))
    return i + max(-k, 0), i + max(k, 0)


def _extractdiag(p, xp, a):
    _check_float("A", a)
    _check_matrix("A", a, square=True)
    _check_offset(a.shape[-1], p.offset)
    r, c = _diag_index(a.shape[-1], p.offset)
    return a[..., r, c]


def _makediag(p, xp, a):
    _check_float("A", a)
    if a.ndim < 1:
        raise MXNetError("A must have at least 1 dimension (a diagonal or a batch of them), "
                         "got shape %s" % (a.shape,))
    n = a.shape[-1] + abs(p.offset)
    y = xp.zeros(a.shape[:-1] + (n, n), dtype=a.dtype)
    r, c = _diag_index(n, p.offset)
    y[..., r, c] = a
    return y


def _extractdiag_grad(p, x, y, gy, need):
    return [nd.linalg_makediag(gy[0], offset=p.offset)]


def _makediag_grad(p, x, y, gy, need):
    return [nd.linalg_extractdiag(gy[0], offset=p.offset)]


register_op("_linalg_extractdiag", _extractdiag, inputs=("A",), params=[_OFFSET],
            gradient=_extractdiag_grad, saves="", aliases=("linalg_extractdiag",),
            doc="The ``offset``-th diagonal of a square matrix (or of each in a batch) as a "
                "vector.")
register_op("_linalg_makediag", _makediag, inputs=("A",), params=[_OFFSET],
            gradient=_makediag_grad, saves="", aliases=("linalg_makediag",),
            doc="A square matrix (or a batch of them) with the input vector on its "
                "``offset``-th diagonal and zeros elsewhere.")


# -- extracttrian, maketrian -------------------------------------------------------------

def _is_upper(p):
    return p.offset > 0 or (p.offset == 0 and not p.lower)


def _trian_index(n, p):
    """Row and column indices, in MXNet's storage order, of the triangle of an n x n
    matrix that ``offset`` and ``lower`` select."""
    k = abs(p.offset)
    r, c = np.tril_indices(n - k)
    r = r + k
    # the upper triangle is the lower triangle of the transpose
    return (c, r) if _is_upper(p) else (r, c)


def _extracttrian(p, xp, a):
    _check_float("A", a)
    _check_matrix("A", a, square=True)
    _check_offset(a.shape[-1], p.offset)
    r, c = _trian_index(a.shape[-1], p)
    return a[..., r, c]


def _trian_size(p, a):
    if a.ndim < 1:
        raise MXNetError("A must have at least 1 dimension (a triangle or a batch of them), "
                         "got shape %s" % (a.shape,))
    m = a.shape[-1]
    t = int((np.sqrt(8 * m + 1) - 1) / 2)
    if t * (t + 1) // 2 != m or m == 0:
        raise MXNetError("the last axis of A has length %d, expected a triangular number "
                         "m * (m + 1) / 2 (1, 3, 6, 10, ...)" % m)
    return t + abs(p.offset)


def _maketrian(p, xp, a):
    _check_float("A", a)
    n = _trian_size(p, a)
    y = xp.zeros(a.shape[:-1] + (n, n), dtype=a.dtype)
    r, c = _trian_index(n, p)
    y[..., r, c] = a
    return y


def _extracttrian_grad(p, x, y, gy, need):
    return [nd.linalg_maketrian(gy[0], offset=p.offset, lower=p.lower)]


def _maketrian_grad(p, x, y, gy, need):
    return [nd.linalg_extracttrian(gy[0], offset=p.offset, lower=p.lower)]


register_op("_linalg_extracttrian", _extracttrian, inputs=("A",), params=[_OFFSET, _LOWER],
            gradient=_extracttrian_grad, saves="", aliases=("linalg_extracttrian",),
            doc="A triangle of a square matrix (or of each in a batch) as a vector: the lower "
                "triangle row by row, the upper one column by column (as MXNet). "
                "``offset > 0`` selects the upper triangle above the offset-th diagonal, "
                "``offset < 0`` the lower one below it.")
register_op("_linalg_maketrian", _maketrian, inputs=("A",), params=[_OFFSET, _LOWER],
            gradient=_maketrian_grad, saves="", aliases=("linalg_maketrian",),
            doc="The inverse of ``extracttrian``: a square matrix (or a batch of them) with "
                "the input vector laid out in the selected triangle and zeros elsewhere.")


# -- gelqf ---------------------------------------------------------------------------------

def _gelqf(p, xp, a):
    _check_float("A", a)
    _check_matrix("A", a)
    if a.shape[-2] > a.shape[-1]:
        raise MXNetError("A has shape %s, expected at most as many rows as columns "
                         "(shape (..., x, y) with x <= y)" % (a.shape,))
    # LQ of A is the QR of A^T: LAPACK's gelqf on a row-major A is geqrf on A^T, so the
    # Householder signs are the same.
    q, r = xp.linalg.qr(_mT(a))
    return _mT(q).astype(a.dtype), _tri(xp, _mT(r), True).astype(a.dtype)


def _gelqf_grad(p, x, y, gy, need):
    # dA = L^-T (dQ + copyLTU(M) Q),  M = L^T dL - dQ Q^T   (MXNet's formula)
    q, low = y
    gq, gl = fill_missing(gy, y)
    m = nd.linalg_gemm2(low, gl, transpose_a=True) - nd.linalg_gemm2(gq, q, transpose_b=True)
    s = gq + nd.linalg_gemm2(_copy_lower_to_upper(m), q)
    return [nd.linalg_trsm(low, s, transpose=True)]


register_op("_linalg_gelqf", _gelqf, inputs=("A",), gradient=_gelqf_grad, saves="y",
            num_outputs=2, aliases=("linalg_gelqf",),
            doc="LQ factorisation ``A = L @ Q`` of a full-rank matrix with x <= y columns "
                "(batched): outputs ``Q`` (x, y), row-orthonormal, and ``L`` (x, x), lower "
                "triangular.")


# -- syevd ---------------------------------------------------------------------------------

def _sign_flips(xp, u):
    """-1 for each row of U whose entry of largest magnitude is negative, else 1
    (shape (..., rows, 1))."""
    k = xp.argmax(xp.abs(u), axis=-1)
    lead = xp.take_along_axis(u, k[..., None], axis=-1)
    return xp.where(lead < 0, -1, 1).astype(u.dtype)


def _fix_signs(xp, u):
    """Flip each row of U so that its entry of largest magnitude is positive."""
    return u * _sign_flips(xp, u)


def _syevd(p, xp, a):
    _check_float("A", a)
    _check_matrix("A", a, square=True)
    lam, v = xp.linalg.eigh(a, UPLO="L")
    return _fix_signs(xp, _mT(v)).astype(a.dtype), lam.astype(a.dtype)


def _eps(dtype):
    # MXNet's floor for eigenvalue gaps in the gradient
    return 1e-30 if np.dtype(dtype).itemsize <= 4 else 1e-100


def _syevd_grad(p, x, y, gy, need):
    # dA = U^T (diag(dlam) + (X - X^T) * S) U,  X = dU U^T, and for i > j
    # S_ij = -S_ji = 1 / (2 max(lam_i - lam_j, eps))   (MXNet's SyevdBackHelper)
    u, lam = y
    gu, glam = fill_missing(gy, y)
    low = _tri_mask(u, True, strict=True)
    gap = nd.expand_dims(lam, axis=-1) - nd.expand_dims(lam, axis=-2)
    # NOTE: off the strict lower triangle divide by 1, so no huge 1/eps enters the
    # graph (its derivative would overflow to inf and give 0 * inf = nan).
    gap = nd.maximum(gap * low + (1 - low), _eps(lam.dtype))
    s = low / (gap * 2)
    xm = nd.linalg_gemm2(gu, u, transpose_b=True)
    mid = (xm - _ndT(xm)) * (s - _ndT(s)) + nd.linalg_makediag(glam)
    return [nd.linalg_gemm2(nd.linalg_gemm2(u, mid, transpose_a=True), u)]


register_op("_linalg_syevd", _syevd, inputs=("A",), gradient=_syevd_grad, saves="y",
            num_outputs=2,
            doc="Eigendecomposition of a symmetric matrix (batched; reads its lower "
                "triangle): outputs ``U``, the eigenvectors in its rows, and ``lam``, the "
                "eigenvalues in ascending order, with ``U @ A = diag(lam) @ U``. The "
                "gradient needs distinct eigenvalues.")
