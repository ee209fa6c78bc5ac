"""``mx.np.linalg``: MXNet 1.9.1's linalg operators (``_npi_svd``, ``_npi_solve`` ...,
recorded by autograd, traced by hybridize), and for ``cond``, ``lstsq``,
``matrix_power``, ``matrix_rank``, ``multi_dot`` and ``qr`` NumPy itself, as MXNet's
``fallback_linalg`` (not recorded by autograd).

``eig``, ``eigh``, ``eigvals``, ``eigvalsh`` and ``pinv`` are recorded with a zero
gradient, as in MXNet.
"""
import numpy as onp

from ._ndarray import apply
from ._fallback import make_fallback

__all__ = ["norm", "svd", "cholesky", "inv", "det", "slogdet", "solve", "tensorinv",
           "tensorsolve", "pinv", "eigvals", "eig", "eigvalsh", "eigh", "cond", "lstsq",
           "matrix_power", "matrix_rank", "multi_dot", "qr"]

for _n in __all__[__all__.index("cond"):]:
    globals()[_n] = make_fallback(_n, getattr(onp.linalg, _n))
    globals()[_n].__module__ = "mxlite.numpy.linalg"


def _op(name, *x, **params):
    return apply(name, x, params, py_name=name.replace("_npi_", ""))


def norm(x, ord=None, axis=None, keepdims=False):
    """Matrix or vector norm, as MXNet's: ``ord`` None/'fro'/'nuc'/an order; the string
    ``'inf'`` (not ``numpy.inf``) takes the largest absolute value (or row sum, for a
    pair of axes), and matrix orders 1/-1/'inf'/'-inf' compose sum and max.

    >>> mx.np.linalg.norm(mx.np.array([3., 4.]))
    array(5.)
    """
    from . import _math
    if axis is not None and not isinstance(axis, (int, tuple)):
        raise TypeError("'axis' must be None, an integer or a tuple of integers.")
    if ord is None and axis is None:
        return _op("_npi_norm", x, ord=2, axis=None, keepdims=keepdims, flag=-2)
    if isinstance(axis, int):
        axis = (axis,)
    if axis is not None and len(axis) == 2:
        rows, cols = axis
        if ord in ("inf", "-inf", 1, -1):
            inner, outer = (cols, rows) if ord in ("inf", "-inf") else (rows, cols)
            if not keepdims and inner < outer:
                outer -= 1
            best = _math.max if ord in ("inf", 1) else _math.min
            return best(_math.sum(_math.abs(x), axis=inner, keepdims=keepdims), axis=outer,
                        keepdims=keepdims)
        if ord in (2, -2):
            return _op("_npi_norm", x, ord=ord, axis=axis, keepdims=keepdims, flag=0)
    if ord in ("inf", "-inf"):
        best = _math.max if ord == "inf" else _math.min
        return best(_math.abs(x), axis=axis, keepdims=keepdims)
    flag = {None: 1, "fro": 1, "f": 1, "nuc": 2}.get(ord, -1) if isinstance(ord, (
        str, type(None))) else -1
    return _op("_npi_norm", x, ord=2 if flag != -1 else ord, axis=axis, keepdims=keepdims,
               flag=flag)


def svd(a):
    """``ut, s, v`` with ``a = ut @ diag(s) @ v`` (a: M x N, M <= N; s descending).

    >>> ut, s, v = mx.np.linalg.svd(mx.np.array([[3., 0.], [0., 4.]]))
    >>> s
    array([4., 3.])
    """
    return tuple(_op("_npi_svd", a))


def cholesky(a):
    """The lower-triangular Cholesky factor of (a stack of) symmetric positive-definite
    matrices."""
    return _op("_npi_cholesky", a)


def inv(a):
    """The inverse of (a stack of) square matrices."""
    return _op("_npi_inv", a)


def det(a):
    """The determinant of (a stack of) square matrices (0-d for one matrix)."""
    return _op("_npi_det", a)


def slogdet(a):
    """``(sign, log|det|)`` of (a stack of) square matrices (0-d for one matrix)."""
    return tuple(_op("_npi_slogdet", a))


def solve(a, b):
    """The solution x of ``a @ x = b`` (b: vectors or matrices)."""
    return _op("_npi_solve", a, b)


def tensorinv(a, ind=2):
    """The inverse of ``a`` under ``tensordot(., ., ind)``."""
    return _op("_npi_tensorinv", a, ind=ind)


def tensorsolve(a, b, axes=None):
    """The x of ``tensordot(a, x, x.ndim) == b`` (``axes`` of a moved to the end)."""
    return _op("_npi_tensorsolve", a, b, a_axes=() if axes is None else tuple(axes))


def pinv(a, rcond=1e-15, hermitian=False):
    """The Moore-Penrose pseudo-inverse; ``rcond`` a number or an array of the batch
    shape. Recorded with a zero gradient, as MXNet's."""
    if hasattr(rcond, "shape"):
        return _op("_npi_pinv", a, rcond, hermitian=hermitian)
    return _op("_npi_pinv_scalar_rcond", a, rcond=rcond, hermitian=hermitian)


def eigvals(a):
    """The (real) eigenvalues of square matrices (zero gradient)."""
    return _op("_npi_eigvals", a)


def eig(a):
    """``(w, v)``: real eigenvalues and right eigenvectors (columns; zero gradient)."""
    return tuple(_op("_npi_eig", a))


def eigvalsh(a, UPLO="L"):
    """The eigenvalues (ascending) of symmetric matrices (zero gradient)."""
    return _op("_npi_eigvalsh", a, UPLO=UPLO)


def eigh(a, UPLO="L"):
    """``(w, v)`` of symmetric matrices: ascending eigenvalues, eigenvectors in the
    columns (zero gradient)."""
    return tuple(_op("_npi_eigh", a, UPLO=UPLO))
