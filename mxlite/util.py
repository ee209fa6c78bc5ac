"""``mx.util``: the switches of MXNet's NumPy-compatible interface, and small helpers.

``set_np()`` turns on both NumPy shape semantics (0-d and zero-size arrays; -1 for an
unknown dimension) and NumPy array semantics (Gluon hands out ``mx.np.ndarray``);
``reset_np()`` turns both off. The state is per thread, as in MXNet.
"""
import functools
import inspect
import os
import threading

from .base import check_call, c_str, py_str

__all__ = ["set_np", "reset_np", "is_np_array", "is_np_shape", "set_np_shape", "np_shape",
           "np_array", "use_np", "use_np_shape", "use_np_array", "getenv", "setenv",
           "get_gpu_count", "get_gpu_memory", "get_cuda_compute_capability", "set_module",
           "wrap_np_unary_func", "wrap_np_binary_func", "np_ufunc_legal_option", "c_str",
           "py_str", "check_call"]


class _NpState(threading.local):
    def __init__(self):
        self.shape = False
        self.array = False


_state = _NpState()


def is_np_shape():
    """Whether NumPy shape semantics are on (0-d and zero-size arrays allowed)."""
    return _state.shape


def is_np_array():
    """Whether NumPy array semantics are on (``mx.np.ndarray`` from Gluon)."""
    return _state.array


def set_np_shape(active):
    """Turn NumPy shape semantics on or off; returns the previous state."""
    if not active and _state.array:
        raise ValueError("NumPy shape semantics cannot be turned off while NumPy array "
                         "semantics are on; call npx.reset_np() instead")
    prev, _state.shape = _state.shape, bool(active)
    return prev


def set_np(shape=True, array=True):
    """Turn on NumPy semantics: ``set_np()`` before writing ``mx.np``/``mx.npx`` code.

    Parameters
    ----------
    shape : bool
        NumPy shape semantics (0-d and zero-size arrays, -1 for unknown dimensions).
    array : bool
        NumPy array semantics (Gluon gives ``mx.np.ndarray``); needs ``shape``.
    """
    if not shape and array:
        raise ValueError("NumPy array semantics need NumPy shape semantics: "
                         "set_np(shape=False, array=True) is not allowed")
    _state.shape = bool(shape)
    _state.array = bool(array)


def reset_np():
    """Turn NumPy shape and array semantics off (MXNet 1.x's legacy behaviour)."""
    set_np(shape=False, array=False)


class _Scope:
    """A context manager (and decorator) setting one semantics switch for its body."""

    def __init__(self, shape=None, array=None):
        self._want = (shape, array)
        self._prev = []

    def __enter__(self):
        self._prev.append((_state.shape, _state.array))
        shape, array = self._want
        if shape is not None:
            _state.shape = shape
        if array is not None:
            _state.array = array
            if array:
                _state.shape = True

    def __exit__(self, *exc):
        _state.shape, _state.array = self._prev.pop()

    def __call__(self, func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with _Scope(*self._want):
                return func(*args, **kwargs)
        return wrapped


def np_shape(active=True):
    """``with np_shape():`` runs its body with NumPy shape semantics on (or off)."""
    return _Scope(shape=bool(active))


def np_array(active=True):
    """``with np_array():`` runs its body with NumPy array semantics on (or off)."""
    return _Scope(array=bool(active))


def _decorate(scope_factory, func):
    if isinstance(func, type):
        # A class (a Block): every method, inherited ones too, and every property runs
        # with the semantics on (as MXNet's decorators do).
        for name, member in inspect.getmembers(
                func, lambda f: inspect.isfunction(f) or isinstance(f, property)):
            static = inspect.getattr_static(func, name)
            if isinstance(static, (staticmethod, classmethod)):
                continue
            if isinstance(member, property):
                wrap = scope_factory()
                setattr(func, name, property(
                    wrap(member.fget) if member.fget else None,
                    wrap(member.fset) if member.fset else None,
                    wrap(member.fdel) if member.fdel else None, member.__doc__))
            else:
                setattr(func, name, scope_factory()(member))
        return func
    if callable(func):
        return scope_factory()(func)
    raise TypeError("use_np/use_np_shape/use_np_array decorate a function or a class, got %s"
                    % type(func).__name__)


def use_np_shape(func):
    """Decorator: ``func`` (or every method of a class) runs with NumPy shape semantics."""
    return _decorate(lambda: _Scope(shape=True), func)


def use_np_array(func):
    """Decorator: ``func`` (or every method of a class) runs with NumPy array semantics."""
    return _decorate(lambda: _Scope(array=True), func)


def use_np(func):
    """Decorator: NumPy shape and array semantics for ``func`` or a class's methods.

    Examples
    --------
    >>> @mx.util.use_np
    ... class Net(mx.gluon.HybridBlock):
    ...     def hybrid_forward(self, F, x):
    ...         return F.np.sum(x)
    """
    return _decorate(lambda: _Scope(shape=True, array=True), func)


def np_submodules(package, namespace):
    """A module ``__getattr__`` giving ``package.np``/``package.npx`` (``mx.nd.np``,
    ``mx.sym.np``) on first use: they import ``mx.np``, which loads after them."""
    def __getattr__(name):
        if name in ("np", "npx", "numpy", "numpy_extension"):
            import importlib
            full = "numpy" if name in ("np", "numpy") else "numpy_extension"
            mod = importlib.import_module(package + "." + full)
            namespace[name] = mod
            return mod
        raise AttributeError("module %r has no attribute %r" % (package, name))
    return __getattr__


# -- small helpers MXNet keeps in mx.util ----------------------------------------

def getenv(name):
    """The value of environment variable ``name`` (None when unset)."""
    return os.environ.get(name)


def setenv(name, value):
    """Set environment variable ``name`` (``None`` removes it)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def get_gpu_count():
    """The number of GPUs mxlite can use (through CuPy); 0 without one."""
    from .context import num_gpus
    return num_gpus()


def get_gpu_memory(gpu_dev_id):
    """``(free, total)`` bytes of GPU ``gpu_dev_id``."""
    from .context import gpu_memory_info
    return gpu_memory_info(gpu_dev_id)


def get_cuda_compute_capability(ctx):
    """The CUDA compute capability of a GPU context, as an int (``70`` for 7.0)."""
    if ctx.device_type != "gpu":
        raise ValueError("Expecting a gpu context to get cuda compute capability, "
                         "while received ctx {}".format(ctx))
    cupy = ctx.array_module()
    major, minor = cupy.cuda.Device(ctx.device_id).compute_capability
    return int(major) * 10 + int(minor) if len(str(minor)) == 1 else int(str(major) + str(minor))


def set_module(module):
    """Decorator setting ``__module__`` of a function or class (as MXNet's)."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


_UFUNC_OPTIONS = {"dtype": None, "where": True, "casting": "same_kind", "order": "K",
                  "subok": True}


def np_ufunc_legal_option(key, value):
    """Whether ufunc keyword ``key=value`` is one MXNet's np functions accept."""
    if key not in _UFUNC_OPTIONS and key not in ("out",):
        return False
    if key == "where":
        return value is True
    if key == "casting":
        return value in ("no", "equiv", "safe", "same_kind", "unsafe")
    if key == "order":
        return value in ("C", "F", "A", "K") if isinstance(value, str) else False
    if key == "subok":
        return isinstance(value, bool)
    return True


def _check_ufunc_kwargs(name, kwargs):
    for k, v in kwargs.items():
        if not np_ufunc_legal_option(k, v):
            raise TypeError("%s: %s=%r is not supported" % (name, k, v))


def wrap_np_unary_func(func):
    """Decorator for unary np functions: accept NumPy's ufunc keywords MXNet allows."""
    @functools.wraps(func)
    def wrapped(x, out=None, **kwargs):
        _check_ufunc_kwargs(func.__name__, kwargs)
        return func(x, out=out)
    return wrapped


def wrap_np_binary_func(func):
    """Decorator for binary np functions: accept NumPy's ufunc keywords MXNet allows."""
    @functools.wraps(func)
    def wrapped(x1, x2, out=None, **kwargs):
        _check_ufunc_kwargs(func.__name__, kwargs)
        return func(x1, x2, out=out)
    return wrapped
