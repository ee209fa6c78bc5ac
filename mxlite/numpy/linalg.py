"""``mx.np.linalg``: ``norm``, ``inv``, ``det``, ``slogdet`` and ``cholesky`` are ops
(differentiable); the others run through NumPy (``mxnet.numpy.fallback_linalg``'s way),
not recorded by autograd."""
import numpy as onp

from ._ndarray import apply
from ._fallback import make_fallback

__all__ = ["norm", "cholesky", "det", "eig", "eigh", "eigvals", "eigvalsh", "inv", "pinv",
           "slogdet", "solve", "svd", "tensorinv", "tensorsolve", "matrix_rank", "lstsq",
           "matrix_power", "qr", "cond", "multi_dot"]


def norm(x, ord=None, axis=None, keepdims=False):
    """The 2-norm of a vector or the Frobenius norm of a matrix (over ``axis``);
    other orders run through NumPy."""
    if ord in (None, 2, "fro") and (ord != 2 or x.ndim == 1 or isinstance(axis, int)):
        return apply("_npi_norm", (x,), {"axis": axis, "keepdims": keepdims}, py_name="norm")
    from ._fallback import fallback
    return fallback(onp.linalg.norm, x, ord=ord, axis=axis, keepdims=keepdims)


for _n in __all__[1:]:
    globals()[_n] = make_fallback(_n, getattr(onp.linalg, _n))
    globals()[_n].__module__ = "mxlite.numpy.linalg"


# Differentiable ones: the linalg operators (their gradients are mx.nd's).
def inv(a):
    """The inverse of a (stack of) square matrices."""
    return apply("_linalg_inverse", (a,), py_name="inv")


def det(a):
    """The determinant of a (stack of) square matrices (0-d for one matrix)."""
    return apply("_linalg_det", (a,), py_name="det").reshape(a.shape[:-2])


def slogdet(a):
    """``(sign, log|det|)`` of a (stack of) square matrices (0-d for one matrix)."""
    return tuple(y.reshape(a.shape[:-2]) for y in apply("_linalg_slogdet", (a,),
                                                         py_name="slogdet"))


def cholesky(a):
    """The lower-triangular Cholesky factor of a (stack of) symmetric positive-definite
    matrices."""
    return apply("_linalg_potrf", (a,), py_name="cholesky")
