"""``mx.sym`` functions that are not single registered ops: the NumPy-style binary
functions (either side a scalar) and array creation, as MXNet's symbol module has."""
import numpy as np

from ..operator.registry import OPS
from ..operator import binary_functions as _binary
from .symbol import Symbol

__all__ = list(_binary.TABLE) + ["zeros", "ones", "full", "arange", "eye", "linspace",
                                  "histogram"]


def _call(name, inputs, params, sym_name=None):
    """Apply the registered op ``name`` to Symbols."""
    from .register import op_call
    return op_call(OPS[name], inputs, params, name=sym_name)


for _name in _binary.TABLE:
    globals()[_name] = _binary.make(_name, Symbol, _call)


def _shape(shape):
    return (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)


def zeros(shape, dtype=None, name=None, **kwargs):
    """A symbol of zeros of ``shape``."""
    return _call("_zeros", [], dict(shape=_shape(shape), dtype=dtype or "float32", **kwargs), name)


def ones(shape, dtype=None, name=None, **kwargs):
    return _call("_ones", [], dict(shape=_shape(shape), dtype=dtype or "float32", **kwargs), name)


def full(shape, val, dtype=None, name=None, **kwargs):
    return _call("_full", [], dict(shape=_shape(shape), value=val, dtype=dtype or "float32",
                                   **kwargs), name)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    return _call("_arange", [], dict(start=start, stop=stop, step=step, repeat=repeat,
                                     dtype=dtype or "float32"), name)


def eye(N, M=0, k=0, dtype=None, name=None, **kwargs):
    return _call("_eye", [], dict(N=N, M=M, k=k, dtype=dtype or "float32"), name)


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    return _call("_linspace", [], dict(start=start, stop=stop, num=num, endpoint=endpoint,
                                       dtype=dtype or "float32"), name)


def histogram(a, bins=10, range=None, **kwargs):  # noqa: A002 (MXNet's argument name)
    """The histogram of ``a`` (flattened): counts and bin edges, as ``mx.sym.histogram``.

    ``bins`` is a Symbol of edges, or a number of equal bins over ``range``, which a
    symbol needs (it cannot read the data's minimum and maximum)."""
    if isinstance(bins, Symbol):
        return _call("_histogram", [a, bins], kwargs)
    if isinstance(bins, (int, np.integer)) and not isinstance(bins, bool):
        if range is None:
            raise ValueError("histogram: range is required with a number of bins in symbol "
                             "mode (it cannot be read from the data)")
        return _call("_histogram", [a], dict(kwargs, bin_cnt=bins, range=range))
    raise ValueError("histogram: bins must be a number or a Symbol of edges, got %s"
                     % type(bins).__name__)
