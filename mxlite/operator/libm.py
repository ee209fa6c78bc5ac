"""The platform C library's float32 ``expf``/``logf`` on arrays: what MXNet's C++
kernels call, for ops whose outputs must carry MXNet's bits (detection boxes).

NOTE: glibc's expf/logf are not correctly rounded, and NumPy's float32 exp/log differ
from both by an ulp for many inputs; such an ulp moves a box corner or flips a tie.
One scalar call per element is the price of MXNet's numbers, so callers use these
only where a result lands in an output. Without a C library (or on a GPU) the
float64 function rounded once stands in: within an ulp.
"""
import ctypes
import ctypes.util
import functools

import numpy as np

__all__ = ["expf", "logf", "c_function"]


@functools.cache
def c_function(name):
    """The C library's float32 function ``name`` (``expf``, ``logf``), or None."""
    for path in ("libm.so.6", ctypes.util.find_library("m")):
        try:
            fn = getattr(ctypes.CDLL(path), name)
        except (OSError, AttributeError, TypeError):
            continue
        fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
        return fn
    return None


def _apply(xp, v, name, wide):
    fn = c_function(name) if xp is np else None
    if fn is None:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            return wide(v.astype(np.float64)).astype(np.float32)
    flat = np.fromiter(map(fn, v.ravel().tolist()), dtype=np.float32, count=v.size)
    return flat.reshape(v.shape)


def expf(xp, v):
    """``expf`` of float32 array ``v``, elementwise."""
    return _apply(xp, v, "expf", xp.exp)


def logf(xp, v):
    """``logf`` of float32 array ``v``, elementwise."""
    return _apply(xp, v, "logf", xp.log)
