"""``mx.nd.utils``: array creation and ``.params`` files with MXNet's ``stype`` argument
(only the dense ``'default'`` storage exists in mxlite)."""
from . import ndarray as _ndarray
from . import io as _io

__all__ = ["zeros", "empty", "array", "load", "load_frombuffer", "save"]

load, load_frombuffer, save = _io.load, _io.load_frombuffer, _io.save


def _dense(stype, where):
    if stype not in (None, "default"):
        raise ValueError("%s: stype %r is sparse storage, which mxlite does not have; use "
                         "stype='default'" % (where, stype))


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    """An array of zeros (``stype`` must be ``'default'``)."""
    from . import zeros as _zeros
    _dense(stype, "zeros")
    return _zeros(shape, ctx=ctx, dtype=dtype, **kwargs)


def empty(shape, ctx=None, dtype=None, stype=None):
    """An uninitialised array (``stype`` must be ``'default'``)."""
    _dense(stype, "empty")
    return _ndarray.empty(shape, ctx=ctx, dtype=dtype)


def array(source_array, ctx=None, dtype=None):
    """An NDArray copied from ``source_array``."""
    return _ndarray.array(source_array, ctx=ctx, dtype=dtype)
