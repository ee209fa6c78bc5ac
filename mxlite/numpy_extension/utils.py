"""``npx.save`` / ``npx.load``: MXNet's binary array files, holding ``mx.np.ndarray``.

Files are written as MXNet writes them under NumPy semantics (v3 records: 0-d arrays
keep their value) and load back as np arrays.
"""
from ..nd import io as _io
from ..nd.ndarray import NDArray
from ..numpy._ndarray import ndarray, check_np
from ..util import np_shape

__all__ = ["save", "load", "savez"]


def save(file, arr):
    """Save an np array, a list of them or a dict of str -> np array to ``file``."""
    if isinstance(arr, NDArray):
        arr = [arr]
    items = arr.values() if isinstance(arr, dict) else arr
    check_np("npx.save", list(items), "save")
    with np_shape(True):
        _io.save(file, arr)


def savez(file, *args, **kwds):
    """Save arrays by name (``arr_0`` ... for positional ones), as ``numpy.savez``."""
    named = {"arr_%d" % i: a for i, a in enumerate(args)}
    named.update(kwds)
    save(file, named)


def load(file):
    """Load what :func:`save` (or MXNet) wrote: a list or dict of np arrays."""
    out = _io.load(file)
    if isinstance(out, dict):
        for a in out.values():
            a.__class__ = ndarray
    else:
        for a in out:
            a.__class__ = ndarray
    return out
