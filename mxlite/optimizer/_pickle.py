"""Pickles of optimizer states in MXNet's own format, both ways.

MXNet's ``Trainer.save_states`` writes ``pickle.dumps((states, optimizer))``:
NDArrays reduce to ``(mxnet.ndarray.ndarray.NDArray, (None,), {'handle':
bytearray(record)})`` where ``record`` is one serialized array (the record of
``mx.nd.save`` files), and the optimizer pickles as an instance of
``mxnet.optimizer.optimizer.<Class>`` with its ``__dict__``. :func:`dumps`
writes exactly that (so real MXNet loads our files) and :func:`loads` maps
those globals to mxlite's classes (so we load MXNet's files), without MXNet.

NOTE: MXNet unpickles the file as it is, so a ``.states`` file can run any command.
:func:`loads` admits only the types such files hold (NDArrays, bytearrays, sets,
NumPy scalars and arrays, optimizers and learning-rate schedulers) and names anything
else in an error: loading states never runs code from the file.
"""
import io
import pickle
import sys

from ..base import MXNetError
from ..nd.ndarray import NDArray
from ..nd.io import _serialize_ndarray, _deserialize_ndarray

__all__ = ["dumps", "loads"]

PROTOCOL = 4            # what MXNet 1.9 on Python 3.8+ writes
_MX_NDARRAY = ("mxnet.ndarray.ndarray", "NDArray")
_MX_OPTIMIZER_MODULES = ("mxnet.optimizer.optimizer", "mxnet.optimizer")
_MX_SCHEDULER_MODULE = "mxnet.lr_scheduler"


class _PickledNDArray(NDArray):
    """An NDArray being unpickled from MXNet's ``(None,)`` + ``{'handle': ...}`` form.

    It turns itself into a plain NDArray once its state is set.
    """
    __slots__ = ()

    def __setstate__(self, state):
        handle = state.get("handle") if isinstance(state, dict) else None
        if handle is None:
            raise MXNetError("load_states: a pickled NDArray has no 'handle' bytes")
        arr = _deserialize_ndarray(bytes(handle))
        self._data, self._ctx = arr._data, arr._ctx
        self._entry = self._version = self._grad = None
        self.__class__ = NDArray


def _new_pickled_ndarray(handle=None):
    """``NDArray(None)`` as the pickle calls it; the data arrives in ``__setstate__``."""
    a = object.__new__(_PickledNDArray)
    a._data = a._ctx = a._entry = a._version = a._grad = None
    if handle is not None:
        a.__setstate__({"handle": handle})
    return a


class _NDArrayGlobal:
    """Stands for ``mxnet.ndarray.ndarray.NDArray`` in a pickle being written."""


def _export_name(obj):
    """The (module, name) MXNet knows ``obj`` by, or None to pickle it as usual."""
    if obj is _NDArrayGlobal:
        return _MX_NDARRAY
    module = getattr(obj, "__module__", "") or ""
    name = getattr(obj, "__qualname__", None)
    if not isinstance(obj, type) or name is None:
        return None
    if module.startswith("mxlite.optimizer"):
        from .optimizer import Optimizer
        if issubclass(obj, Optimizer):
            return ("mxnet.optimizer.optimizer", name)
    if module == "mxlite.lr_scheduler":
        return (_MX_SCHEDULER_MODULE, name)
    return None


class _MXNetPickler(pickle._Pickler):
    """The pure-Python pickler, so that globals can be written under MXNet's names.

    NOTE: the C pickler checks that a global is importable under the name it
    writes; ``mxnet`` is not importable here, hence the Python pickler.
    """

    def reducer_override(self, obj):
        if type(obj) is NDArray or isinstance(obj, NDArray):
            return (_NDArrayGlobal, (None,), {"handle": bytearray(_serialize_ndarray(obj))})
        return NotImplemented

    def save_global(self, obj, name=None):
        mapped = _export_name(obj)
        if mapped is None:
            return super().save_global(obj, name)
        module, qualname = mapped
        self.save(module)
        self.save(qualname)
        self.write(pickle.STACK_GLOBAL)
        self.memoize(obj)
        return None

    # ``type`` objects dispatch to save_type -> save_global in the Python pickler.


def dumps(obj):
    """``obj`` (states, optimizer, or both) pickled as MXNet would pickle it."""
    buf = io.BytesIO()
    _MXNetPickler(buf, protocol=PROTOCOL).dump(obj)
    return buf.getvalue()


# Plain data that states pickles hold besides NDArrays: builtins and NumPy's own
# reconstructors (a NumPy scalar or array in an optimizer's attributes).
_SAFE_GLOBALS = {("builtins", n) for n in ("bytearray", "set", "frozenset", "complex")}
_SAFE_GLOBALS |= {(m, n) for m in ("numpy.core.multiarray", "numpy._core.multiarray")
                  for n in ("scalar", "_reconstruct")}
_SAFE_GLOBALS |= {("numpy", "dtype"), ("numpy", "ndarray")}


class _MXNetUnpickler(pickle.Unpickler):
    """Maps MXNet's globals (NDArray, optimizers, schedulers) to mxlite's and refuses
    every other global: nothing in the file can name a function to call."""

    def find_class(self, module, name):
        if (module, name) == _MX_NDARRAY:
            return _new_pickled_ndarray
        if module in _MX_OPTIMIZER_MODULES:
            return _optimizer_class(name)
        if (module, name) in _SAFE_GLOBALS:
            return super().find_class(module, name)
        if module == "mxnet" or module.startswith("mxnet."):
            klass = _loaded_attr("mxlite" + module[len("mxnet"):], name)
        else:
            klass = _loaded_attr(module, name)
        if not _is_state_class(klass):
            raise MXNetError(
                "load_states: the file refers to %s.%s, which is not a type that optimizer "
                "states hold (NDArrays, optimizers, learning-rate schedulers, plain data); "
                "refusing to load it" % (module, name))
        return klass


def _loaded_attr(module, name):
    """``module.name`` if ``module`` is imported already (importing one could run code)."""
    if module == "mxlite.lr_scheduler":
        from .. import lr_scheduler   # noqa: F401  (MXNet's scheduler pickles name it)
    mod = sys.modules.get(module)
    return getattr(mod, name, None) if mod is not None and "." not in name else None


def _is_state_class(klass):
    from .optimizer import Optimizer
    from ..lr_scheduler import LRScheduler
    return isinstance(klass, type) and issubclass(klass, (Optimizer, LRScheduler))


def _optimizer_class(name):
    from .optimizer import Optimizer
    from .. import optimizer as pkg
    klass = getattr(pkg, name, None)
    if not (isinstance(klass, type) and issubclass(klass, Optimizer)):
        klass = Optimizer.opt_registry.get(name.lower())
    if klass is None:
        raise MXNetError("load_states: the states file holds optimizer %s, which is not "
                         "registered in mxlite (registered: %s)"
                         % (name, ", ".join(sorted(Optimizer.opt_registry))))
    return klass


def loads(data):
    """Unpickle states written by :func:`dumps` or by MXNet's Trainer/Updater."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("load_states: expected bytes, got %s" % type(data).__name__)
    try:
        return _MXNetUnpickler(io.BytesIO(data)).load()
    except MXNetError:
        raise
    except Exception as e:      # a truncated or garbled pickle fails in many ways
        raise MXNetError("load_states: not a valid optimizer states pickle: %s: %s"
                         % (type(e).__name__, e)) from None
