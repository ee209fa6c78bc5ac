"""``mx.np.linalg``'s operators, under MXNet 1.9.1's names.

``_npi_inv``, ``_npi_det`` and ``_npi_slogdet`` are the legacy ``_linalg_inverse``,
``_linalg_det`` and ``_linalg_slogdet`` under a second name (as in MXNet, whose graphs
name the legacy op). ``_npi_cholesky`` is ``potrf``'s kernel and gradient under its own
name. The others are ops of their own, each with MXNet's gradient:

- ``_npi_svd`` (``a = ut @ diag(s) @ v`` for ``M <= N``), ``_npi_solve``,
  ``_npi_tensorinv``, ``_npi_tensorsolve`` and ``_npi_norm`` are differentiable;
- ``_npi_eig``, ``_npi_eigh``, ``_npi_eigvals``, ``_npi_eigvalsh``, ``_npi_pinv`` and
  ``_npi_pinv_scalar_rcond`` give zero gradients, as MXNet's do.

Signs: the rows of ``v`` (and the eigenvectors of ``eigh``) are flipped so that their
entry of largest magnitude is positive, as MXNet chooses them.
"""
import math

import numpy as onp

from ... import nd
from ...base import MXNetError, optional, parse_axis, parse_bool, parse_float, parse_int
from ...base import parse_shape
from ..registry import OPS, Param, register_op
from ..util import const_like, fill_missing, norm_axis, norm_axes, zeros_grad
from ..tensor.linalg import _check_matrix, _inv, _mT, _ndT
from ..tensor.linalg_extra import _check_float, _fix_signs, _sign_flips
from .reduce import expand_to

for _np_name, _legacy in (("_npi_inv", "_linalg_inverse"), ("_npi_det", "_linalg_det"),
                          ("_npi_slogdet", "_linalg_slogdet")):
    OPS[_np_name] = OPS[_legacy]

_potrf = OPS["_linalg_potrf"]
register_op("_npi_cholesky", _potrf.compute, inputs=("A",), gradient=_potrf.gradient, saves="y",
            doc="The lower Cholesky factor of a (stack of) symmetric positive-definite "
                "matrices (reads the lower triangle).")


def _square_float(a):
    _check_float("A", a)
    _check_matrix("A", a, square=True)


def _finite(xp, what, a):
    """LAPACK's SVD does not converge on NaN or inf: say so before it runs."""
    if not bool(xp.isfinite(a).all()):
        raise MXNetError("%s expected finite values (the SVD of NaN or inf does not converge), "
                         "got %s" % (what, "NaN" if bool(xp.isnan(a).any()) else "inf"))


# -- svd ---------------------------------------------------------------------------------

def _svd(p, xp, a):
    _check_float("A", a)
    _check_matrix("A", a)
    if a.shape[-2] > a.shape[-1]:
        raise MXNetError("A must have no more rows than columns (M <= N), got shape %s"
                         % (a.shape,))
    _finite(xp, "A", a)
    u, s, vt = xp.linalg.svd(a, full_matrices=False)
    flip = _sign_flips(xp, vt)
    return (u * _mT(flip)).astype(a.dtype), s.astype(a.dtype), (vt * flip).astype(a.dtype)


def _svd_grad(p, x, y, gy, need):
    # a = U S V^T with U = ut, V^T = v (M x N, M <= N); E_jk = s_k^2 - s_j^2 (1 on the
    # diagonal): ga = U [(skew(U^T gU) s_k + s_j skew(V^T gV)) / E + diag(gs)] v
    #                 + U S^-1 (gv - gv v^T v)
    ut, s, v = y
    gut, gs, gv = fill_missing(gy, y)
    j = nd.linalg_gemm2(ut, gut, transpose_a=True)
    k = nd.linalg_gemm2(v, gv, transpose_b=True)
    sk = nd.expand_dims(s, axis=-2)
    sj = nd.expand_dims(s, axis=-1)
    eye = const_like(s, onp.eye(s.shape[-1], dtype=s.dtype))
    e = sk * sk - sj * sj + eye
    inner = ((j - _ndT(j)) * sk + sj * (k - _ndT(k))) / e + nd.linalg_makediag(gs)
    ga = nd.linalg_gemm2(nd.linalg_gemm2(ut, inner), v)
    rest = gv - nd.linalg_gemm2(nd.linalg_gemm2(gv, v, transpose_b=True), v)
    return [ga + nd.linalg_gemm2(ut / sk, rest)]


register_op("_npi_svd", _svd, inputs=("A",), gradient=_svd_grad, saves="y", num_outputs=3,
            doc="Singular value decomposition ``a = ut @ diag(s) @ v`` of a (stack of) "
                "M x N matrices with M <= N: outputs ``ut`` (M x M), ``s`` (M, "
                "descending), ``v`` (M x N).")


# -- solve, tensorinv, tensorsolve ---------------------------------------------------------

def _solve(p, xp, a, b):
    _square_float(a)
    vec = b.ndim == a.ndim - 1
    if (b.shape[:-1] if vec else b.shape[:-2]) != a.shape[:-2] or \
            b.shape[-1 if vec else -2] != a.shape[-1]:
        raise MXNetError("b has shape %s, expected (..., %d) or (..., %d, K) with the batch "
                         "shape of a %s" % (b.shape, a.shape[-1], a.shape[-1], a.shape))
    try:
        y = xp.linalg.solve(a, b[..., None] if vec else b)
    except onp.linalg.LinAlgError:
        raise MXNetError("a is singular; expected invertible matrices") from None
    return (y[..., 0] if vec else y).astype(a.dtype)


def _solve_grad(p, x, y, gy, need):
    # y = a^-1 b: gb = a^-T g, ga = -gb y^T
    a, b = x
    vec = b.ndim == a.ndim - 1
    g, out = gy[0], y[0]
    if vec:
        g, out = nd.expand_dims(g, axis=-1), nd.expand_dims(out, axis=-1)
    gb = nd.linalg_gemm2(nd.linalg_inverse(a), g, transpose_a=True)
    ga = nd.linalg_gemm2(gb, out, transpose_b=True, alpha=-1.0) if need[0] else None
    if vec:
        gb = nd.reshape(gb, shape=b.shape)
    return [ga, gb if need[1] else None]


register_op("_npi_solve", _solve, inputs=("A", "B"), gradient=_solve_grad, saves="xy",
            doc="The solution x of ``a @ x = b`` (b a stack of vectors or matrices).")


def _tensor_split(shape, ind):
    if not 0 < ind <= len(shape):
        raise MXNetError("ind must be in 1..%d for a of shape %s, got %d"
                         % (len(shape), shape, ind))
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise MXNetError("a of shape %s is not invertible as a tensor: the product of its "
                         "first %d dims (%d) must equal that of the others (%d)"
                         % (shape, ind, rows, cols))
    return rows


def _tensorinv(p, xp, a):
    _check_float("a", a)
    n = _tensor_split(a.shape, p.ind)
    y = _inv(xp, a.reshape(n, n))
    return y.reshape(a.shape[p.ind:] + a.shape[:p.ind]).astype(a.dtype)


def _tensorinv_grad(p, x, y, gy, need):
    # as inverse's: ga = -Y^T G Y^T on the matrix forms
    a = x[0]
    n = _tensor_split(a.shape, p.ind)
    ym = nd.reshape(y[0], shape=(n, n))
    gm = nd.reshape(gy[0], shape=(n, n))
    ga = nd.linalg_gemm2(nd.linalg_gemm2(ym, gm, transpose_a=True), ym, transpose_b=True,
                         alpha=-1.0)
    return [nd.reshape(ga, shape=a.shape)]


register_op("_npi_tensorinv", _tensorinv, inputs=("a",), gradient=_tensorinv_grad, saves="xy",
            params=[Param("ind", parse_int, 2, "How many leading dims form the rows.", low=1)],
            doc="The inverse of a tensor under ``tensordot(..., ind)``: shape "
                "``a.shape[ind:] + a.shape[:ind]``.")


def _in_order(axes, ndim):
    """``axes`` made non-negative, in the order given (it matters here)."""
    return tuple(norm_axis(a, ndim) for a in ((axes,) if isinstance(axes, int) else axes))


def _tensorsolve_perm(p, ndim):
    axes = _in_order(p.a_axes, ndim)
    return [i for i in range(ndim) if i not in axes] + list(axes)


def _tensorsolve(p, xp, a, b):
    _check_float("a", a)
    a = xp.transpose(a, _tensorsolve_perm(p, a.ndim))
    xshape = a.shape[b.ndim:]
    if a.shape[:b.ndim] != b.shape or math.prod(xshape) != b.size:
        raise MXNetError("a of shape %s (after moving a_axes) does not fit b of shape %s: "
                         "expected a.shape[:b.ndim] == b.shape and the rest to hold as many "
                         "elements" % (a.shape, b.shape))
    y = _inv(xp, a.reshape(b.size, b.size)) @ b.reshape(b.size)
    return y.reshape(xshape).astype(a.dtype)


def _tensorsolve_grad(p, x, y, gy, need):
    # matrix form: y = A^-1 b; gb = A^-T g, gA = -gb y^T, then A's axes put back
    a, b = x
    perm = _tensorsolve_perm(p, a.ndim)
    n = b.size
    am = nd.reshape(nd.transpose(a, axes=tuple(perm)), shape=(n, n))
    gb = nd.linalg_gemm2(nd.linalg_inverse(am), nd.reshape(gy[0], shape=(n, 1)),
                         transpose_a=True)
    ga = None
    if need[0]:
        ga = nd.linalg_gemm2(gb, nd.reshape(y[0], shape=(1, n)), alpha=-1.0)
        moved = tuple(a.shape[i] for i in perm)
        ga = nd.transpose(nd.reshape(ga, shape=moved), axes=tuple(onp.argsort(perm)))
    return [ga, nd.reshape(gb, shape=b.shape) if need[1] else None]


register_op("_npi_tensorsolve", _tensorsolve, inputs=("a", "b"), gradient=_tensorsolve_grad,
            saves="xy",
            params=[Param("a_axes", parse_shape, (), "Axes of a moved to the end first.")],
            doc="The x of ``tensordot(a, x, x.ndim) == b``.")


# -- eigen-decompositions and pinv (MXNet gives them zero gradients) ------------------------

_UPLO = Param("UPLO", choices=("L", "U"), default="L",
              doc="Which triangle of the symmetric matrix to read.")


def _real(xp, what, w, *more):
    if xp.iscomplexobj(w):
        if (w.imag != 0).any():
            raise MXNetError("%s: the eigenvalues are complex; mx.np supports real "
                             "eigenvalues only" % what)
        return (w.real,) + tuple(m.real for m in more)
    return (w,) + more


def _eig(p, xp, a):
    _square_float(a)
    w, v = _real(xp, "eig", *xp.linalg.eig(a))
    return w.astype(a.dtype), v.astype(a.dtype)


def _eigvals(p, xp, a):
    _square_float(a)
    return _real(xp, "eigvals", xp.linalg.eigvals(a))[0].astype(a.dtype)


def _eigh(p, xp, a):
    _square_float(a)
    w, v = xp.linalg.eigh(a, UPLO=p.UPLO)
    return w.astype(a.dtype), _mT(_fix_signs(xp, _mT(v))).astype(a.dtype)


def _eigvalsh(p, xp, a):
    _square_float(a)
    return xp.linalg.eigvalsh(a, UPLO=p.UPLO).astype(a.dtype)


def _pinv(p, xp, a, rcond):
    _check_float("A", a)
    _check_matrix("A", a)
    if rcond.shape not in ((), a.shape[:-2]):
        raise MXNetError("rcond has shape %s, expected () or the batch shape %s"
                         % (rcond.shape, a.shape[:-2]))
    _finite(xp, "A", a)
    return _pinv_kernel(xp, a, rcond, p.hermitian)


def _pinv_scalar(p, xp, a):
    _check_float("A", a)
    _check_matrix("A", a)
    _finite(xp, "A", a)
    return _pinv_kernel(xp, a, p.rcond, p.hermitian)


def _pinv_kernel(xp, a, rcond, hermitian):
    # CuPy's pinv has no `hermitian`: its SVD gives the same pseudo-inverse of a Hermitian
    # matrix; NumPy's eigen-decomposition path is only the faster way there.
    extra = {"hermitian": True} if hermitian and xp is onp else {}
    return xp.linalg.pinv(a, rcond=rcond, **extra).astype(a.dtype)


_HERMITIAN = Param("hermitian", parse_bool, False, "Whether A is symmetric.")
for _name, _fn, _ins, _params, _n, _doc in (
        ("_npi_eig", _eig, ("A",), [], 2, "Eigenvalues and right eigenvectors (columns)."),
        ("_npi_eigvals", _eigvals, ("A",), [], 1, "Eigenvalues of a square matrix."),
        ("_npi_eigh", _eigh, ("A",), [_UPLO], 2,
         "Eigenvalues (ascending) and eigenvectors (columns) of a symmetric matrix."),
        ("_npi_eigvalsh", _eigvalsh, ("A",), [_UPLO], 1,
         "Eigenvalues (ascending) of a symmetric matrix."),
        ("_npi_pinv", _pinv, ("A", "rcond"), [_HERMITIAN], 1,
         "The Moore-Penrose pseudo-inverse, rcond an array."),
        ("_npi_pinv_scalar_rcond", _pinv_scalar, ("A",),
         [Param("rcond", parse_float, 1e-15, "Cutoff for small singular values."),
          _HERMITIAN], 1, "The Moore-Penrose pseudo-inverse.")):
    register_op(_name, _fn, inputs=_ins, params=_params, num_outputs=_n, gradient=zeros_grad,
                saves="", doc=_doc + " Its gradient is zero, as MXNet's.")


# -- norm ----------------------------------------------------------------------------------

_MATRIX = {0: lambda o: o, 2: lambda o: "nuc"}


def _norm_kind(p, ndim):
    """What ``_npi_norm`` computes: ("fro", axes), ("vector", axes) or ("matrix", axes)."""
    axes = tuple(range(ndim)) if p.axis is None else _in_order(p.axis, ndim)
    if p.flag in (-2, 1):
        return "fro", norm_axes(axes, ndim)
    if p.flag in _MATRIX or len(axes) == 2:
        return "matrix", axes
    return "vector", axes


def _norm_ord(p):
    return "nuc" if p.flag == 2 else p.ord


def _norm(p, xp, x):
    dt = x.dtype if x.dtype.kind == "f" else onp.dtype(onp.float32)
    # NOTE: NumPy's linalg has no float16: float16 data is normed in float32
    x = x.astype(onp.float32 if dt == onp.float16 else dt, copy=False)
    kind, axes = _norm_kind(p, x.ndim)
    if kind == "fro":
        y = xp.sqrt(xp.sum(x * x, axis=axes, keepdims=p.keepdims))
    else:
        try:
            y = xp.linalg.norm(x, _norm_ord(p), None if p.axis is None else axes, p.keepdims)
        except (ValueError, IndexError) as e:     # (CuPy: IndexError on empty input)
            raise MXNetError("norm: %s (ord=%s, axis=%s, x of shape %s)"
                             % (e, p.ord, p.axis, x.shape)) from None
    return xp.asarray(y).astype(dt, copy=False)


def _norm_grad(p, x, y, gy, need):
    a = x[0]
    kind, axes = _norm_kind(p, a.ndim)
    g = expand_to(gy[0], a.shape, axes)
    yk = expand_to(y[0], a.shape, axes)
    if kind == "fro" or (kind == "vector" and p.ord == 2):
        return [g * a / (yk + (yk == 0))]
    if kind == "vector":
        return [g * _vector_norm_grad(p.ord, a, yk)]
    return [g * _matrix_norm_grad(p, a, axes, yk)]


def _vector_norm_grad(o, a, yk):
    """d|a|_o / da for a vector order o (0 gives 0, as a count has no gradient)."""
    sign = nd.sign(a)
    if o == 0:
        return nd.zeros_like(a)
    if o == 1:
        return sign
    if math.isinf(o):
        return sign * (nd.abs(a) == yk)
    safe = yk + (yk == 0)
    return sign * (nd.abs(a) / safe) ** (o - 1)


def _matrix_norm_grad(p, a, axes, yk):
    """The gradient of a matrix norm over ``axes`` (rows, cols) at ``a``."""
    o = _norm_ord(p)
    r, c = axes
    if o in (1, -1, math.inf, -math.inf):
        # max/min over columns (1) or rows (inf) of the absolute sums: the winners' signs
        over = r if o in (1, -1) else c
        sums = expand_to(nd.sum(nd.abs(a), axis=over), a.shape, (over,))
        return nd.sign(a) * (sums == yk)
    rest = [i for i in range(a.ndim) if i not in axes]
    perm = tuple(rest + [r, c])
    m = nd.transpose(a, axes=perm)
    wide = m.shape[-2] <= m.shape[-1]
    ut, s, v = nd._internal._npi_svd(m if wide else _ndT(m))
    if o == "nuc":
        gm = nd.linalg_gemm2(ut, v)
    else:
        k = 0 if o == 2 else s.shape[-1] - 1
        gm = nd.linalg_gemm2(nd.slice_axis(ut, axis=-1, begin=k, end=k + 1),
                             nd.slice_axis(v, axis=-2, begin=k, end=k + 1))
    return nd.transpose(gm if wide else _ndT(gm), axes=tuple(onp.argsort(perm)))


register_op("_npi_norm", _norm, inputs=("x",), gradient=_norm_grad, saves="xy",
            params=[Param("ord", parse_float, 2.0, "The order of the norm."),
                    Param("axis", optional(parse_axis), None, "Axis or (rows, cols) axes; "
                          "None: all."),
                    Param("keepdims", parse_bool, False, "Keep reduced axes with size 1."),
                    Param("flag", parse_int, -1, "-2: 2-norm of everything, 1: Frobenius, "
                          "2: nuclear, 0: matrix 2-norms, -1: the norm of order ord.",
                          choices=(-2, -1, 0, 1, 2))],
            doc="Vector and matrix norms (``mx.np.linalg.norm``); a float result for "
                "integer input.")
