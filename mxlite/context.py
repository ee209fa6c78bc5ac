"""Devices: ``Context``, ``cpu(i)``, ``gpu(i)`` and the current-context stack.

Every context maps to an array module ``xp``: NumPy for ``cpu``, CuPy for
``gpu`` (imported on first use, with a clear error when it is missing).
"""
import threading

import numpy as np

from .base import MXNetError

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus"]

_cupy = None


def _import_cupy():
    global _cupy
    if _cupy is None:
        try:
            import cupy
        except ImportError:
            raise MXNetError("gpu context requested but CuPy is not installed; "
                             "install a CuPy wheel matching your CUDA (pip install cupy-cuda12x) "
                             "or use mx.cpu()")
        _cupy = cupy
    return _cupy


class Context:
    """A device: ``Context('cpu', 0)``, ``Context('gpu', 1)`` or ``Context(other)``.

    Contexts compare equal when type and id match; ``with ctx:`` makes ``ctx``
    the default for array creation in the block.

    Examples
    --------
    >>> with mx.Context('cpu', 1):
    ...     x = mx.nd.zeros((2,))
    >>> x.context
    cpu(1)
    """
    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}
    __slots__ = ("device_typeid", "device_id", "xp", "__weakref__")

    def __init__(self, device_type, device_id=0):
        if isinstance(device_type, Context):
            self.device_typeid = device_type.device_typeid
            self.device_id = device_type.device_id
        else:
            if device_type not in Context.devstr2type:
                raise ValueError("Context: unknown device_type %r; expected one of %s"
                                 % (device_type, sorted(Context.devstr2type)))
            self.device_typeid = Context.devstr2type[device_type]
            self.device_id = int(device_id)
        self.xp = None if self.device_typeid == 2 else np

    @property
    def device_type(self):
        return Context.devtype2str[self.device_typeid]

    def __hash__(self):
        return hash((self.device_typeid, self.device_id))

    def __eq__(self, other):
        return (isinstance(other, Context) and self.device_typeid == other.device_typeid
                and self.device_id == other.device_id)

    def __ne__(self, other):
        return not self.__eq__(other)

    def __str__(self):
        return "%s(%d)" % (self.device_type, self.device_id)

    __repr__ = __str__

    def __reduce__(self):
        return (Context, (self.device_type, self.device_id))

    def __enter__(self):
        # A stack, not a slot on self: one Context object may be entered while it is
        # already active (nested blocks share contexts).
        _state.stack.append(_state.ctx)
        _state.ctx = self
        return self

    def __exit__(self, *exc):
        _state.ctx = _state.stack.pop()

    def empty_cache(self):
        """Release cached GPU memory (a no-op on cpu)."""
        if self.device_typeid == 2:
            _import_cupy().get_default_memory_pool().free_all_blocks()

    # The array module of this context; gpu imports CuPy lazily.
    def array_module(self):
        if self.xp is None:
            cp = _import_cupy()
            if self.device_id >= cp.cuda.runtime.getDeviceCount():
                raise MXNetError("gpu(%d) requested but only %d GPU(s) are visible"
                                 % (self.device_id, cp.cuda.runtime.getDeviceCount()))
            self.xp = cp
        return self.xp


class _State(threading.local):
    def __init__(self):
        self.ctx = Context("cpu", 0)
        self.stack = []


_state = _State()


def cpu(device_id=0):
    """The CPU context ``cpu(device_id)``; ids are distinct contexts sharing host memory."""
    return Context("cpu", device_id)


def cpu_pinned(device_id=0):
    return Context("cpu_pinned", device_id)


def gpu(device_id=0):
    """The GPU context ``gpu(device_id)``, backed by CuPy."""
    return Context("gpu", device_id)


def current_context():
    """The context of the innermost ``with ctx:`` block, ``cpu(0)`` by default."""
    return _state.ctx


def num_gpus():
    """Number of GPUs CuPy can see (0 when CuPy is not installed)."""
    try:
        import cupy
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no CuPy, or no driver
        return 0


def gpu_memory_info(device_id=0):
    """(free, total) bytes on a GPU."""
    cp = _import_cupy()
    with cp.cuda.Device(device_id):
        return cp.cuda.runtime.memGetInfo()


# Names MXNet's module also shows, served from where they live in mxlite.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "check_call": "mxlite.base",
    "classproperty": "mxlite.base",
    "with_metaclass": "mxlite.base",
})
