"""mxlite: the MXNet 1.x API (``mx.nd``, ``mx.autograd``, ``mx.operator``, ``mx.gluon``,
``mx.sym``, ``mx.mod``) in plain Python on NumPy, and on GPUs through CuPy.

>>> import mxlite as mx
>>> x = mx.nd.array([1, 2, 3]); x.attach_grad()
>>> with mx.autograd.record():
...     y = (x * x).sum()
>>> y.backward(); x.grad
<BLANKLINE>
[2. 4. 6.]
<NDArray 3 @cpu(0)>
"""
# The MXNet API level mxlite implements (what third-party version checks read), and
# mxlite's own release.
from .libinfo import __version__  # noqa: E402,F401
__mxlite_version__ = "0.1.0"

from . import base  # noqa: F401
from .base import MXNetError  # noqa: F401
from . import context  # noqa: F401
from .context import Context, cpu, gpu, cpu_pinned, current_context  # noqa: F401
from . import autograd  # noqa: F401
from . import operator  # noqa: F401
from . import nd  # noqa: F401
from . import name  # noqa: F401
from . import attribute  # noqa: F401
from .attribute import AttrScope  # noqa: F401
from . import symbol  # noqa: F401
from . import engine  # noqa: F401
from .engine import waitall  # noqa: F401
from . import random  # noqa: F401
from . import test_utils  # noqa: F401
from . import initializer  # noqa: F401
from . import lr_scheduler  # noqa: F401
from . import optimizer  # noqa: F401
from . import metric  # noqa: F401
from . import kvstore  # noqa: F401
from . import gluon  # noqa: F401
from . import recordio  # noqa: F401
from . import image  # noqa: F401
img = image
from . import io  # noqa: F401
from . import model  # noqa: F401
from . import callback  # noqa: F401
from . import module  # noqa: F401
from . import rnn  # noqa: F401
from . import visualization  # noqa: F401
from . import runtime  # noqa: F401
from . import profiler  # noqa: F401
from . import log  # noqa: F401
from . import registry  # noqa: F401
from . import error  # noqa: F401
from . import misc  # noqa: F401
from . import monitor  # noqa: F401
from . import executor  # noqa: F401
from . import executor_manager  # noqa: F401
from . import libinfo  # noqa: F401
from . import contrib  # noqa: F401
from . import onnx  # noqa: F401
from . import util  # noqa: F401
from .util import (is_np_shape, set_np_shape, np_shape, use_np_shape,  # noqa: F401
                   is_np_array, np_array, use_np_array, use_np)
from . import numpy  # noqa: F401
from . import numpy_extension  # noqa: F401

mod = module
viz = visualization
mon = monitor
rnd = random

init = initializer
kv = kvstore

ndarray = nd
sym = symbol
np = numpy
npx = numpy_extension

# MXNet's top-level switches of its NumPy interface (they live in mx.util).
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, dict(
    {n: "mxlite.util" for n in ("is_np_array", "is_np_shape", "np_array", "np_shape",
                                "set_np_shape", "use_np", "use_np_array", "use_np_shape")},
    np_symbol="mxlite.symbol.numpy._symbol:"))


def install_as_mxnet():
    """Make ``import mxnet`` (and every ``mxnet.*`` module, with MXNet's names such as
    ``mxnet.ndarray.random``) give mxlite. Returns the mxlite module.
    """
    import sys
    from . import _mxnet_alias
    _mxnet_alias.install()
    return sys.modules[__name__]
