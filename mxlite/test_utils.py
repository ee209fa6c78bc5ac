"""``mx.test_utils``: comparisons with MXNet's default tolerances, random test
data, and numeric gradient checking, as ``mxnet.test_utils``.

``check_numeric_gradient`` takes a Python function of NDArrays (differentiated
with autograd) or a Symbol (differentiated through its executor), and compares
the gradient of ``sum(f(x) * random_projection)`` with central differences.
"""
import contextlib
import json
import os
import sys
# The modules MXNet's test_utils imports, which its star import gives test files too.
import numbers  # noqa: F401
import time  # noqa: F401
import traceback  # noqa: F401

import numpy as np
import numpy.random as rnd  # noqa: F401 (MXNet's test_utils name)
import numpy.testing as npt  # noqa: F401

# No ``__all__``: as in MXNet, ``from mxnet.test_utils import *`` also gives ``mx``,
# ``np``, ``NDArray``, ``array``, ``Context``, ``Symbol``... that test files rely on.
import mxlite as mx  # noqa: F401
from . import autograd  # noqa: F401
from . import context as _context  # noqa: F401
from ._test_checks import *  # noqa: F401,F403
from ._test_checks import _sorted_dict, _sorted_items  # noqa: F401
from ._test_compare import *  # noqa: F401,F403
from ._test_compare import assert_almost_equal, same
from ._test_gradients import *  # noqa: F401,F403
from ._test_symbolic import *  # noqa: F401,F403
from ._test_data import *  # noqa: F401,F403
from ._np_test_utils import *  # noqa: F401,F403
from .context import Context, current_context, num_gpus  # noqa: F401
from .io import DataIter
from .nd import NDArray, array  # noqa: F401
from .runtime import Features  # noqa: F401
from .symbol import Symbol  # noqa: F401
from .util import getenv, setenv, use_np  # noqa: F401
from .base import MXNetError  # noqa: F401


# -- small helpers ------------------------------------------------------------------

def same_array(array1, array2):
    """True when two NDArrays share memory (found by writing into ``array1`` and undoing it).

    Examples
    --------
    >>> x = mx.nd.ones((2, 2))
    >>> mx.test_utils.same_array(x, x.reshape((2, 2)))
    True
    """
    array1[:] += 1
    if not same(array1.asnumpy(), array2.asnumpy()):
        array1[:] -= 1
        return False
    array1[:] -= 1
    return same(array1.asnumpy(), array2.asnumpy())


def create_vector(size, dtype=np.int64):
    """``nd.arange(0, size)`` of ``dtype`` (MXNet's large-tensor test helper)."""
    from . import nd
    return nd.arange(0, size, dtype=dtype)


def create_2d_tensor(rows, columns, dtype=np.int64):
    """A ``(rows, columns)`` NDArray whose row ``i`` is all ``i``."""
    from . import nd
    a = nd.arange(0, rows, dtype=dtype).reshape((rows, 1))
    return nd.broadcast_to(a, shape=(rows, columns))


def assign_each(the_input, function):
    """``function`` applied to every element of a NumPy array (``np.vectorize``)."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function)(np.asarray(the_input))


def assign_each2(input1, input2, function):
    """``function(a, b)`` for every pair of elements of two same-shaped NumPy arrays."""
    if np.shape(input1) != np.shape(input2):
        raise ValueError("assign_each2: shapes %s and %s differ"
                         % (np.shape(input1), np.shape(input2)))
    if function is None:
        return np.array(input1)
    return np.vectorize(function)(np.asarray(input1), np.asarray(input2))


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """:func:`assert_almost_equal` over (nested) tuples of arrays; None skips."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for a, b in zip(t1, t2):
            compare_ndarray_tuple(a, b, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def same_symbol_structure(sym1, sym2):
    """True when the two symbols' graphs have the same op at every node position."""
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return all(a["op"] == b["op"] for a, b in zip(nodes1, nodes2))


def collapse_sum_like(a, shape):
    """Sum NumPy array ``a`` down to broadcast-compatible ``shape`` (undoing broadcasting)."""
    if a.shape == tuple(shape):
        return a
    lead = a.ndim - len(shape)
    if lead < 0:
        raise ValueError("collapse_sum_like: cannot sum shape %s down to %s"
                         % (a.shape, tuple(shape)))
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and a.shape[lead + i] != 1)
    return a.sum(axis=axes).reshape(shape)


class DummyIter(DataIter):
    """An iterator that returns the first batch of ``real_iter`` forever (for speed tests).

    Parameters
    ----------
    real_iter : DataIter
    """

    def __init__(self, real_iter):
        super().__init__(real_iter.batch_size)
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        """The first batch of the real iterator; never raises StopIteration."""
        return self.the_batch


@contextlib.contextmanager
def environment(*args):
    """Set environment variables for the body of a ``with`` block, then restore them.

    Parameters
    ----------
    *args
        ``name, value`` for one variable, or one dict of name -> value. A value of
        None unsets the variable.

    Examples
    --------
    >>> with mx.test_utils.environment('MXNET_ENGINE_TYPE', 'NaiveEngine'):
    ...     os.environ['MXNET_ENGINE_TYPE']
    'NaiveEngine'
    """
    if len(args) == 1 and isinstance(args[0], dict):
        env = dict(args[0])
    elif len(args) == 2:
        env = {args[0]: args[1]}
    else:
        raise ValueError("environment: expected one dict or a name and a value, got %d "
                         "arguments" % len(args))
    snapshot = {k: os.environ.get(k) for k in env}

    def apply(values):
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
    apply(env)
    try:
        yield
    finally:
        from .engine import waitall
        waitall()
        apply(snapshot)


@contextlib.contextmanager
def discard_stderr():
    """Silence the process's stderr (file descriptor 2) for the body of a ``with`` block."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        # stderr is not a real file (pytest capture, IDE consoles): nothing to redirect.
        yield
        return
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as null:
            sys.stderr.flush()
            os.dup2(null.fileno(), fd)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, fd)
        os.close(saved)


# Names of MXNet's test_utils that come from its NumPy-interface modules.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "getenv": "mxlite.util", "setenv": "mxlite.util", "use_np": "mxlite.util",
    "get_cuda_compute_capability": "mxlite.util",
    "np_symbol": "mxlite.symbol.numpy._symbol:_Symbol"})
