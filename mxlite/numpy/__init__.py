"""``mx.np``: MXNet's NumPy-compatible array interface, on mxlite's NDArray machinery.

``from mxnet import np, npx; npx.set_np()`` then NumPy-style code: ``np.array``,
``np.sum``, ``x[x > 0]``, ``x.reshape(2, -1)``. Arrays are ``mx.np.ndarray``, an NDArray
subclass: autograd, contexts and Gluon work on them unchanged. Where MXNet's semantics
differ from NumPy's (float32 defaults, ``int32 * 1.5`` stays int32) mxlite follows MXNet.

>>> from mxlite import np
>>> np.array([1, 2, 3]).sum()
array(6.)
"""
import numpy as _onp

from .multiarray import *  # noqa: F401,F403
from .multiarray import ndarray  # noqa: F401
from .fallback import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403
from .function_base import meshgrid  # noqa: F401
from .stride_tricks import broadcast_arrays  # noqa: F401
from .io import genfromtxt  # noqa: F401
from .arrayprint import set_printoptions  # noqa: F401
from . import random, linalg, fallback, utils, multiarray  # noqa: F401
from ._math import around as round, around as round_, abs  # noqa: F401
from ._math import max, min, sum, any, all  # noqa: F401,A004

# dtypes are NumPy's own objects (mx.np.float32 is numpy.float32)
float16 = _onp.float16
float32 = _onp.float32
float64 = _onp.float64
uint8 = _onp.uint8
int8 = _onp.int8
int16 = _onp.int16
int32 = _onp.int32
int64 = _onp.int64
bool_ = _onp.bool_
bool = _onp.bool_  # noqa: A001
dtype = _onp.dtype
integer = _onp.integer
floating = _onp.floating
number = _onp.number
generic = _onp.generic
finfo = _onp.finfo
iinfo = _onp.iinfo
