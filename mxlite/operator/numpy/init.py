"""Creation ops of the np interface under MXNet 1.9.1's names: ``_npi_zeros``,
``_npi_ones``, ``_npi_arange`` (the legacy kernels), ``_npi_eye``, ``_npi_identity``,
``_npi_indices`` and ``_npi_full_like``. ``mx.np.full`` and ``mx.np.linspace`` run the
legacy ``_full`` and ``_linspace``, as MXNet's graphs name them.

They are what ``F.np.zeros(...)`` adds to a hybridized graph, so that a block creating
arrays traces, exports and loads in MXNet. Their outputs are constants to autograd.
"""
import math

import numpy as onp

from ...base import optional, parse_float, parse_int, parse_shape
from ..registry import OPS, Param, register_op
from ..tensor.init import _CTX, _DTYPE, _SHAPE, shape_fits
from ..util import fits_memory
from ..tensor.init import _dtype as _parse_dtype
from .elemwise import derive

derive("_npi_zeros", "_zeros", OPS["_zeros"].compute)
derive("_npi_ones", "_ones", OPS["_ones"].compute)
derive("_npi_arange", "_arange", OPS["_arange"].compute)

register_op("_npi_eye", lambda p, xp: xp.eye(p.N, p.M, p.k, dtype=p.dtype), inputs=(),
            params=[Param("N", parse_int, low=0), Param("M", optional(parse_int), None, low=0),
                    Param("k", parse_int, 0), _CTX, _DTYPE],
            doc="An N x M array with ones on diagonal ``k``.")


def _identity(p, xp):
    if len(p.shape) != 2 or p.shape[0] != p.shape[1]:
        from ...base import MXNetError
        raise MXNetError("shape must be (n, n), got %s" % (p.shape,))
    return xp.eye(p.shape[0], dtype=p.dtype)


register_op("_npi_identity", _identity, inputs=(), params=[_SHAPE, _CTX, _DTYPE],
            check=shape_fits(),
            doc="The identity matrix of ``shape`` (n, n).")
register_op("_npi_indices", lambda p, xp: xp.indices(p.dimensions, dtype=p.dtype), inputs=(),
            check=fits_memory("dimensions", lambda p: len(p.dimensions) * math.prod(p.dimensions)
                              * onp.dtype(p.dtype).itemsize),
            params=[Param("dimensions", parse_shape, doc="The shape of the grid.", low=0),
                    Param("dtype", _parse_dtype, onp.dtype(onp.int32), "The element type."),
                    _CTX],
            doc="Grid indices: shape ``(len(dimensions),) + dimensions``.")


def _full_like(p, xp, a):
    return xp.full(a.shape, p.fill_value, a.dtype if p.dtype is None else p.dtype)


register_op("_npi_full_like", _full_like, inputs=("a",),
            params=[Param("fill_value", parse_float, doc="The fill value."), _CTX,
                    Param("dtype", optional(_parse_dtype), None, "None: a's dtype.")],
            doc="``fill_value`` in the shape (and dtype, unless given) of ``a``.")
