"""Sharing memory with NumPy (``from_numpy``) and with other frameworks through DLPack
(``to_dlpack_for_read``/``_for_write``, ``from_dlpack``)."""
import numpy as np

from ..context import Context
from .ndarray import array, _wrap

__all__ = ["from_numpy", "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write"]


def from_numpy(ndarray, zero_copy=True):
    """An NDArray backed by the NumPy array ``ndarray``, keeping its dtype.

    With ``zero_copy`` (the default) the NDArray shares the memory, which must be
    C-contiguous, and the NumPy array is made read-only (as in MXNet: write through
    the NDArray only); otherwise the data is copied.
    """
    if not zero_copy:
        return array(ndarray, dtype=ndarray.dtype)
    if not ndarray.flags["C_CONTIGUOUS"]:
        raise ValueError("Only c-contiguous arrays are supported for zero-copy")
    # NOTE: the view is taken before the source is locked, so it stays writable;
    # a source locked by an earlier from_numpy is unlocked for that moment.
    if not ndarray.flags["WRITEABLE"]:
        try:
            ndarray.flags["WRITEABLE"] = True
        except ValueError:
            pass                    # memory that is read-only at its origin stays so
    data = ndarray.view()
    if data.ndim == 0:
        data = data.reshape(1)      # MXNet 1.x has no 0-d arrays
    ndarray.flags["WRITEABLE"] = False
    return _wrap(data, Context("cpu", 0))


def to_dlpack_for_read(data):
    """A DLPack capsule sharing NDArray ``data``'s memory, for reading."""
    return data.to_dlpack_for_read()


def to_dlpack_for_write(data):
    """A DLPack capsule sharing NDArray ``data``'s memory, for writing."""
    return data.to_dlpack_for_write()


def from_dlpack(dlpack):
    """An NDArray sharing the memory of a DLPack capsule (from ``to_dlpack_for_*`` or
    another framework) or of an object with ``__dlpack__``.

    A read-only capsule (DLPack before 1.0 cannot say otherwise) is copied, so that
    the NDArray stays writable.
    """
    src = _Capsule(dlpack) if type(dlpack).__name__ == "PyCapsule" else dlpack
    try:
        data, ctx = np.from_dlpack(src), Context("cpu", 0)
    except (BufferError, RuntimeError, ValueError, TypeError):
        # Not host memory: GPU memory, read through CuPy (which raises if absent).
        data = Context("gpu", 0).array_module().from_dlpack(dlpack)
        ctx = Context("gpu", data.device.id)
    if not getattr(data.flags, "writeable", True):    # CuPy arrays are always writable
        data = data.copy()
    return _wrap(data, ctx)


def _dlpack_capsule(data):
    try:
        return data.__dlpack__(max_version=(1, 0))   # writable when the data is
    except TypeError:
        return data.__dlpack__()                      # NumPy before 2.1: legacy capsule


class _Capsule:
    """A DLPack capsule dressed as an exporter for ``numpy.from_dlpack``."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)
