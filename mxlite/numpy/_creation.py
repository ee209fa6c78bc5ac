"""Array creation of ``mx.np``: ``array``, ``zeros``, ``arange``, ``linspace``, ``eye`` ...

MXNet's defaults: float32 for arrays made from Python data and for every creation
function without ``dtype`` (``arange(5)`` and ``full((2,), 3)`` included), while NumPy
arrays and NDArrays keep their dtype.
"""
import functools

import numpy as onp

from ..base import np_dtype
from ..context import current_context
from ..nd.ndarray import NDArray, _wrap
from ..operator.registry import OPS, invoke
from ._ndarray import ndarray, apply, _is_symbol, _retype

__all__ = ["array", "asarray", "empty", "empty_like", "zeros", "zeros_like", "ones",
           "ones_like", "full", "full_like", "arange", "linspace", "logspace", "eye",
           "identity", "indices", "tri", "from_numpy"]

F32 = onp.dtype(onp.float32)


def _dtype(dtype, where):
    if dtype is None:
        return F32
    if isinstance(dtype, str) and dtype == "bool":
        return onp.dtype(onp.bool_)
    return np_dtype(dtype, where)


def _make(data, ctx):
    if ctx is None:
        ctx = current_context()
    if ctx.device_typeid == 2:
        data = ctx.array_module().asarray(data)
    elif hasattr(data, "__cuda_array_interface__"):
        data = data.get()
    a = _wrap(data, ctx)
    a.__class__ = ndarray
    return a


def array(object, dtype=None, ctx=None):
    """An ``mx.np.ndarray`` copy of ``object``.

    Python data (lists, scalars, bools) give float32; NumPy arrays and NDArrays keep
    their dtype, unless ``dtype`` is given.

    Examples
    --------
    >>> mx.np.array([1, 2, 3]).dtype
    dtype('float32')
    """
    if isinstance(object, NDArray):
        src = object.asnumpy()
        dt = src.dtype if dtype is None else _dtype(dtype, "array")
        if ctx is None:
            ctx = object.ctx
    elif isinstance(object, onp.ndarray) or hasattr(object, "__cuda_array_interface__"):
        src = object
        dt = src.dtype if dtype is None else _dtype(dtype, "array")
        if dt not in _SUPPORTED:
            dt = _nearest(dt)
        if not isinstance(object, onp.ndarray):     # a GPU array: copied on its device
            return _make(src.astype(dt, copy=True), ctx)
    else:
        src = object
        if isinstance(object, (list, tuple)) and any(isinstance(e, NDArray) for e in object):
            src = [e.asnumpy() if isinstance(e, NDArray) else e for e in object]
        dt = F32 if dtype is None else _dtype(dtype, "array")
    try:
        data = onp.array(src, dtype=dt)
    except (ValueError, TypeError) as e:
        raise TypeError("array: cannot make an ndarray from %s: %s"
                        % (type(object).__name__, e)) from None
    return _make(data, ctx)


_SUPPORTED = {onp.dtype(t) for t in (onp.float16, onp.float32, onp.float64, onp.uint8,
                                     onp.int8, onp.int32, onp.int64, onp.bool_)}


def _nearest(dt):
    if dt.kind == "f":
        return onp.dtype(onp.float64)
    if dt.kind in "iu":
        return onp.dtype(onp.int64)
    raise TypeError("array: dtype %s is not supported by mx.np" % dt)


def asarray(a, dtype=None, ctx=None):
    """``a`` itself when it is an np array of ``dtype``, else :func:`array`."""
    if isinstance(a, ndarray) and (dtype is None or a.dtype == onp.dtype(dtype)):
        return a
    return array(a, dtype=dtype, ctx=ctx)


def from_numpy(ndarray_, zero_copy=True):
    """An np array with the data (and dtype) of NumPy array ``ndarray_``."""
    return _make(onp.array(ndarray_, copy=not zero_copy or None), None)


def _check_order(order, where):
    if order != "C":
        raise NotImplementedError("%s: only order='C' is supported, got %r" % (where, order))


def _shape(shape):
    if isinstance(shape, (int, onp.integer)):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def creator(build):
    """An ``mx.np`` creation function from ``build(*args, **kwargs) -> (op, params)``:
    it runs the creation op. ``build`` stays reachable as ``fn.build``, from which
    ``mx.sym.np`` makes the twin that adds the op to a graph instead."""
    @functools.wraps(build)
    def fn(*args, **kwargs):
        name, params = build(*args, **kwargs)
        op = OPS[name]
        return _retype(invoke(op, (), op.parse_params(params)))
    fn.build = build
    return fn


@creator
def empty(shape, dtype=None, order="C", ctx=None):
    """A new array of ``shape`` (zero-filled: mxlite never hands out stale memory)."""
    _check_order(order, "empty")
    return zeros.build(shape, dtype, order, ctx)


@creator
def zeros(shape, dtype=None, order="C", ctx=None):
    """An array of zeros; float32 unless ``dtype``."""
    _check_order(order, "zeros")
    return "_npi_zeros", {"shape": _shape(shape), "dtype": _dtype(dtype, "zeros"), "ctx": ctx}


@creator
def ones(shape, dtype=None, order="C", ctx=None):
    """An array of ones; float32 unless ``dtype``."""
    _check_order(order, "ones")
    return "_npi_ones", {"shape": _shape(shape), "dtype": _dtype(dtype, "ones"), "ctx": ctx}


def full(shape, fill_value, dtype=None, order="C", ctx=None, out=None):
    """An array filled with ``fill_value``; float32 unless ``dtype`` (an int fill too)."""
    if isinstance(fill_value, NDArray):
        fill_value = fill_value.asnumpy()
        if dtype is None:
            dtype = fill_value.dtype
        y = _make(onp.full(_shape(shape), fill_value, _dtype(dtype, "full")), ctx)
    else:
        y = _full(shape, fill_value, dtype, order, ctx)
    if out is not None:
        out[...] = y
        return out
    return y


@creator
def _full(shape, fill_value, dtype=None, order="C", ctx=None):
    _check_order(order, "full")
    return "_full", {"shape": _shape(shape), "value": fill_value,
                     "dtype": _dtype(dtype, "full"), "ctx": ctx}


full.build = _full.build


def _like(a, fill_value, dtype, shape, ctx, where):
    if _is_symbol(a) or (shape is None and (ctx is None or ctx == a.ctx)):
        params = {"fill_value": fill_value}
        if dtype is not None:
            params["dtype"] = _dtype(dtype, where)
        return apply("_npi_full_like", (a,), params, py_name=where)
    dt = a.dtype if dtype is None else _dtype(dtype, where)
    return _make(onp.full(a.shape if shape is None else _shape(shape), fill_value, dt),
                 ctx or a.ctx)


def empty_like(prototype, dtype=None, order="C", subok=False, shape=None):
    """An array of ``prototype``'s shape and dtype (zero-filled)."""
    return _like(prototype, 0, dtype, shape, None, "empty_like")


def zeros_like(a, dtype=None, order="C", subok=False, shape=None, ctx=None):
    """Zeros of ``a``'s shape and dtype."""
    return _like(a, 0, dtype, shape, ctx, "zeros_like")


def ones_like(a, dtype=None, order="C", subok=False, shape=None, ctx=None):
    """Ones of ``a``'s shape and dtype."""
    return _like(a, 1, dtype, shape, ctx, "ones_like")


def full_like(a, fill_value, dtype=None, order="C", subok=False, shape=None, ctx=None):
    """``fill_value`` in ``a``'s shape and dtype."""
    return _like(a, fill_value, dtype, shape, ctx, "full_like")


@creator
def arange(start, stop=None, step=1, dtype=None, ctx=None):
    """Evenly spaced values in [start, stop); float32 unless ``dtype`` (as MXNet)."""
    if stop is None:
        start, stop = 0, start
    return "_npi_arange", {"start": start, "stop": stop, "step": step,
                           "dtype": _dtype(dtype, "arange"), "ctx": ctx}


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, ctx=None):
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    if isinstance(start, NDArray) or isinstance(stop, NDArray) or not onp.isscalar(start) \
            or not onp.isscalar(stop):
        y, step = onp.linspace(_value(start), _value(stop), num, endpoint=endpoint,
                               retstep=True, axis=axis)
        y = _make(y.astype(_dtype(dtype, "linspace")), ctx)
    else:
        y = _linspace(start, stop, num, endpoint, dtype=dtype, ctx=ctx)
        step = (stop - start) / max(num - 1 if endpoint else num, 1)
    return (y, step) if retstep else y


@creator
def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
              ctx=None):
    if retstep:
        raise ValueError("linspace: retstep=True needs the values; it is not available "
                         "while composing a graph")
    return "_linspace", {"start": start, "stop": stop, "num": num, "endpoint": endpoint,
                         "dtype": _dtype(dtype, "linspace"), "ctx": ctx}


linspace.build = _linspace.build


def _value(x):
    return x.asnumpy() if isinstance(x, NDArray) else x


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0, ctx=None):
    """``num`` values evenly spaced on a log scale."""
    y = onp.logspace(start, stop, num, endpoint=endpoint, base=base, axis=axis)
    return _make(y.astype(_dtype(dtype, "logspace")), ctx)


@creator
def eye(N, M=None, k=0, dtype=None, ctx=None, **kwargs):
    """A 2-D array with ones on diagonal ``k``."""
    return "_npi_eye", {"N": N, "M": M, "k": k, "dtype": _dtype(dtype, "eye"), "ctx": ctx}


@creator
def identity(n, dtype=None, ctx=None):
    """The ``n`` x ``n`` identity matrix."""
    return "_npi_identity", {"shape": (n, n), "dtype": _dtype(dtype, "identity"), "ctx": ctx}


def tri(N, M=None, k=0, dtype=None, ctx=None):
    """Ones at and below diagonal ``k``."""
    return _make(onp.tri(N, M, k, dtype=_dtype(dtype, "tri")), ctx)


@creator
def indices(dimensions, dtype=None, ctx=None):
    """An array of grid indices (int32 unless ``dtype``, as MXNet)."""
    dt = onp.dtype(onp.int32) if dtype is None else _dtype(dtype, "indices")
    return "_npi_indices", {"dimensions": tuple(dimensions), "dtype": dt, "ctx": ctx}
