"""Creation ops with no array inputs: zeros, ones, full, arange, eye, linspace."""
import math

import numpy as np

from ...base import parse_shape, parse_float, parse_int, parse_bool, optional, np_dtype, MXNetError
from ..registry import register_op, Param
from ..util import fits_memory
from .elemwise_unary import _parse_ctx


def _dtype(v):
    return np_dtype(v, "dtype")


_CTX = Param("ctx", optional(_parse_ctx), None, "The device; the current context if None.")
_DTYPE = Param("dtype", _dtype, np.dtype(np.float32), "The element type.")
_SHAPE = Param("shape", parse_shape, (), "The shape.", low=0)



def shape_fits():
    """The memory rule of an op whose output has the ``shape`` and ``dtype`` params."""
    return fits_memory("shape", lambda p: math.prod(p.shape) * np.dtype(p.dtype).itemsize)


register_op("_zeros", lambda p, xp: xp.zeros(p.shape, p.dtype), inputs=(), check=shape_fits(),
            params=[_SHAPE, _CTX, _DTYPE], doc="An array of zeros.")
register_op("_ones", lambda p, xp: xp.ones(p.shape, p.dtype), inputs=(), check=shape_fits(),
            params=[_SHAPE, _CTX, _DTYPE], doc="An array of ones.")
register_op("_full", lambda p, xp: xp.full(p.shape, p.value, p.dtype), inputs=(),
            params=[_SHAPE, _CTX, _DTYPE, Param("value", parse_float, doc="The fill value.")],
            check=shape_fits(), doc="An array filled with ``value``.")


def _arange(p, xp):
    start, stop, step = p.start, p.stop, p.step
    if stop is None:
        start, stop = 0.0, start
    if step == 0:
        raise MXNetError("step must not be 0")
    n = int(np.ceil((stop - start) / step))
    if np.dtype(p.dtype).kind in "iub":
        # MXNet counts the values with the float arguments but computes them in the
        # integer dtype: arange(0, 2, 0.5, dtype='int32') is [0 0 0 0].
        start, step = math.trunc(start), math.trunc(step)
    y = start + step * xp.arange(max(n, 0), dtype=np.float64)
    if p.repeat > 1:
        y = xp.repeat(y, p.repeat)
    return y.astype(p.dtype)


register_op("_arange", _arange, inputs=(),
            params=[Param("start", parse_float, 0.0), Param("stop", optional(parse_float), None),
                    Param("step", parse_float, 1.0), Param("repeat", parse_int, 1, low=1),
                    Param("infer_range", parse_bool, False), _CTX, _DTYPE],
            doc="Evenly spaced values in ``[start, stop)``, each repeated ``repeat`` times.")


def _eye(p, xp):
    return xp.eye(p.N, p.M if p.M > 0 else p.N, p.k, dtype=p.dtype)


register_op("_eye", _eye, inputs=(),
            check=fits_memory("N", lambda p: p.N * (p.M or p.N) * np.dtype(p.dtype).itemsize),
            params=[Param("N", parse_int, low=0), Param("M", parse_int, 0, low=0),
                    Param("k", parse_int, 0),
                    _CTX, _DTYPE],
            doc="A 2-D array with ones on the ``k``-th diagonal.")


def _linspace(p, xp):
    return xp.linspace(p.start, p.stop, p.num, endpoint=p.endpoint).astype(p.dtype)


register_op("_linspace", _linspace, inputs=(), check=fits_memory("num", lambda p: p.num * 8),
            params=[Param("start", parse_float), Param("stop", parse_float),
                    Param("num", parse_int, low=0), Param("endpoint", parse_bool, True), _CTX, _DTYPE],
            doc="``num`` evenly spaced values from ``start`` to ``stop``.")
