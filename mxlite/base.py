"""Errors, dtype tables and typed attribute parsing shared by every part of mxlite,
and the helpers of ``mxnet.base`` that code written for MXNet imports (``py_str``,
``numeric_types``, ``integer_types``, ``string_types``, ``_as_list``, ...)."""
import ast
import ctypes
import os

import numpy as np

__all__ = ["MXNetError", "ParamError", "DTYPE_TO_FLAG", "FLAG_TO_DTYPE", "np_dtype", "dtype_name"]

# The Python types MXNet's APIs take as an integer, a number or a string.
integer_types = (int, np.int32, np.int64)
numeric_types = (float, int, np.generic)
string_types = (str,)
mx_real_t = np.float32

# Error classes by name (MXNet maps the error names of its C++ messages to them).
error_types = {}


def py_str(x):
    """``bytes`` decoded as UTF-8 into ``str`` (MXNet's helper for C strings)."""
    return x.decode("utf-8")


def data_dir_default():
    """Where MXNet keeps downloaded data when ``MXNET_HOME`` is unset: ``~/.mxnet``
    (``%APPDATA%\\mxnet`` on Windows)."""
    if os.name == "nt" and os.environ.get("APPDATA"):
        return os.path.join(os.environ["APPDATA"], "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir():
    """``$MXNET_HOME``, or :func:`data_dir_default`: the root of datasets and models."""
    return os.getenv("MXNET_HOME", data_dir_default())


# ctypes helpers of MXNet's base module, for code that builds C arguments itself (there is
# no C library behind mxlite; these are the plain ctypes conversions).

def check_call(ret):
    """Raise :class:`MXNetError` when a C-style return code ``ret`` is not 0."""
    if ret != 0:
        raise MXNetError("a C API call returned %r (expected 0)" % (ret,))


def c_str(string):
    """``string`` as a ``ctypes.c_char_p`` (UTF-8)."""
    return ctypes.c_char_p(string.encode("utf-8"))


def c_str_array(strings):
    """A ctypes array of ``c_char_p`` holding ``strings`` (UTF-8)."""
    arr = (ctypes.c_char_p * len(strings))()
    arr[:] = [s.encode("utf-8") for s in strings]
    return arr


def c_array(ctype, values):
    """A ctypes array of ``ctype`` holding ``values``."""
    out = (ctype * len(values))()
    out[:] = values
    return out


def c_array_buf(ctype, buf):
    """A ctypes array of ``ctype`` sharing the memory of the buffer ``buf``
    (``array.array``, bytearray)."""
    return (ctype * len(buf)).from_buffer(buf)


def ctypes2numpy_shared(cptr, shape):
    """A float32 NumPy array of ``shape`` viewing the memory at the ctypes pointer
    ``cptr`` (no copy)."""
    if not isinstance(cptr, ctypes.POINTER(ctypes.c_float)):
        raise RuntimeError("ctypes2numpy_shared: expected a float pointer, got %s"
                           % type(cptr).__name__)
    size = int(np.prod(shape)) if len(shape) else 1
    buf = (ctypes.c_float * size).from_address(ctypes.addressof(cptr.contents))
    return np.frombuffer(buf, dtype=np.float32).reshape(shape)


class MXCallbackList(ctypes.Structure):
    """MXNet's C structure of callbacks (count, function pointers, contexts)."""
    _fields_ = [("num_callbacks", ctypes.c_int),
                ("callbacks", ctypes.POINTER(ctypes.CFUNCTYPE(ctypes.c_int))),
                ("contexts", ctypes.POINTER(ctypes.c_void_p))]


class _NullType:
    """Placeholder for an argument that was not given (MXNet's ``_Null``)."""

    def __repr__(self):
        return "_Null"


_Null = _NullType()


def _as_list(obj):
    """``obj`` itself when it is a list or tuple, else ``[obj]``."""
    if isinstance(obj, (list, tuple)):
        return obj
    return [obj]


def register_error(func_name=None, cls=None):
    """Register an error class under its name (or ``func_name``) in ``error_types``;
    usable as a decorator, with or without a name."""
    if callable(func_name):
        cls, func_name = func_name, None

    def register(klass):
        error_types[func_name if isinstance(func_name, str) else klass.__name__] = klass
        return klass
    return register if cls is None else register(cls)


@register_error
class MXNetError(RuntimeError):
    """Error raised by operators and the engine, as ``mxnet.base.MXNetError``."""


class ParamError(MXNetError, ValueError):
    """An operator param that its schema rejects (a value not among its choices, out of
    its range, or not parseable): an MXNetError, as MXNet raises, and a ValueError."""


# An index out of range inside an op: an MXNetError, and the IndexError that MXNet's
# error registry raises for it (named so, as MXNet's is).
OpIndexError = type("IndexError", (MXNetError, IndexError), {
    "__module__": __name__,
    "__doc__": "An index out of range in an operator: an MXNetError and an IndexError."})


class _NotForThisKind(MXNetError):
    """A function called on the kind of array (or Symbol) it is not available for."""
    _kind = ""

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = "Function %s" % self.function
        if self.alias:
            msg += ' (namely operator "%s")' % self.alias
        if self.args:
            msg += " with arguments (%s)" % ", ".join(self.args)
        return msg + self._kind


@register_error
class NotImplementedForSymbol(_NotForThisKind):
    """A function of NDArray that Symbol does not have (``function``, its operator
    ``alias`` and the argument types are named in the message)."""
    _kind = " is not implemented for Symbol and only available in NDArray."


class NotSupportedForSparseNDArray(_NotForThisKind):
    """A function of dense NDArray that sparse arrays do not support."""
    _kind = " is not supported for SparseNDArray and only available in NDArray."


class _ClassPropertyDescriptor:
    """A property of a class (read through the class or an instance)."""

    def __init__(self, fget, fset=None):
        self.fget, self.fset = fget, fset

    def __get__(self, obj, klass=None):
        return self.fget.__get__(obj, type(obj) if klass is None else klass)()

    def __set__(self, obj, value):
        if not self.fset:
            raise MXNetError("cannot use the setter: %s to set attribute" % obj.__name__)
        klass, obj = (obj, None) if isinstance(obj, type) else (type(obj), obj)
        return self.fset.__get__(obj, klass)(value)

    def setter(self, func):
        self.fset = func if isinstance(func, (classmethod, staticmethod)) else classmethod(func)
        return self


def classproperty(func):
    """Decorator: a read-only property of the class itself."""
    return _ClassPropertyDescriptor(
        func if isinstance(func, (classmethod, staticmethod)) else classmethod(func))


def with_metaclass(meta, *bases):
    """A base class that gives its subclasses the metaclass ``meta`` (six's helper)."""
    class metaclass(type):
        def __new__(cls, name, this_bases, d):
            return meta(name, bases, d)

        @classmethod
        def __prepare__(cls, name, this_bases):
            return meta.__prepare__(name, bases)
    return type.__new__(metaclass, "temporary_class", (), {})


# MXNet's type flags, as stored in .params files and used by the C API.
FLAG_TO_DTYPE = {
    0: np.dtype(np.float32), 1: np.dtype(np.float64), 2: np.dtype(np.float16),
    3: np.dtype(np.uint8), 4: np.dtype(np.int32), 5: np.dtype(np.int8),
    6: np.dtype(np.int64), 7: np.dtype(np.bool_),
}
DTYPE_TO_FLAG = {v: k for k, v in FLAG_TO_DTYPE.items()}

_DTYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16",
                  "bool": "bool", "int": "int32", "long": "int64"}


def np_dtype(dtype, where="dtype"):
    """Return the NumPy dtype for a dtype given as a name, NumPy type or dtype.

    Raises a TypeError naming ``where`` for anything MXNet does not support.
    """
    if dtype is None:
        return np.dtype(np.float32)
    if isinstance(dtype, str):
        dtype = _DTYPE_ALIASES.get(dtype, dtype)
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError("%s: unsupported dtype %r; expected one of %s"
                        % (where, dtype, ", ".join(sorted(str(d) for d in DTYPE_TO_FLAG))))
    if dt not in DTYPE_TO_FLAG:
        raise TypeError("%s: unsupported dtype %r; expected one of %s"
                        % (where, str(dt), ", ".join(sorted(str(d) for d in DTYPE_TO_FLAG))))
    return dt


def memory_bytes():
    """This machine's physical memory in bytes: more than any one allocation can get."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):      # not POSIX: assume 1 TiB
        return 1 << 40


def _human(n):
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return ("%d %s" if unit == "bytes" else "%.1f %s") % (n, unit)
        n /= 1024.0


def check_nbytes(where, what, nbytes):
    """Raise an MXNetError naming ``where`` and ``what`` (the param or the declared shape
    responsible) when ``nbytes`` exceeds this machine's memory: fail at once, not after
    minutes of swapping or with a bare MemoryError."""
    limit = memory_bytes()
    if nbytes > limit:
        raise MXNetError("%s: %s needs %s, more than this machine's memory (%s)"
                         % (where, what, _human(nbytes), _human(limit)))


def dtype_name(dtype):
    """The MXNet attribute spelling of a dtype (``'float32'``)."""
    return np.dtype(dtype).name


# ----------------------------------------------------------------------------
# Attribute parsing. Symbol JSON and CustomOp kwargs carry every attribute as a
# string ("(3, 3)", "True", "None"); these parsers turn Python values *and*
# such strings into typed values, once, at the edge.

def _literal(s):
    s = s.strip()
    if s in ("None", "none", ""):
        return None
    if s in ("True", "true"):
        return True
    if s in ("False", "false"):
        return False
    try:
        return ast.literal_eval(s)
    except (ValueError, SyntaxError):
        raise ValueError("cannot parse %r" % s)


def parse_bool(v):
    if isinstance(v, str):
        v = _literal(v)
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)) and v in (0, 1):
        return bool(v)
    raise ValueError("expected a boolean, got %r" % (v,))


def parse_int(v):
    if isinstance(v, str):
        v = _literal(v)
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return int(v)
    raise ValueError("expected an integer, got %r" % (v,))


def parse_float(v):
    if isinstance(v, str):
        v = _literal(v)
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, (bool, np.bool_)):
        return float(v)
    raise ValueError("expected a number, got %r" % (v,))


def parse_str(v):
    if isinstance(v, str):
        return v
    raise ValueError("expected a string, got %r" % (v,))


def _parse_seq(v, item):
    if isinstance(v, str):
        s = v.strip()
        if s in ("None", ""):
            return None
        if s in ("()", "[]"):
            return ()
        v = _literal(s)
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return tuple(item(e) for e in v)
    if hasattr(v, "tolist") and getattr(v, "ndim", 1) == 1:
        return tuple(item(e) for e in v.tolist())
    return (item(v),)


def parse_shape(v):
    """A tuple of ints (MXNet ``Shape``); a single int becomes a 1-tuple."""
    return _parse_seq(v, parse_int)


def _opt_int(e):
    return None if e is None else parse_int(e)


def parse_opt_shape(v):
    """A tuple of ints or None (``slice``'s begin/end/step)."""
    return _parse_seq(v, _opt_int)


def parse_float_tuple(v):
    return _parse_seq(v, parse_float)


def parse_axis(v):
    """An axis attribute: None, an int, or a tuple of ints (returned as int or tuple)."""
    if isinstance(v, str):
        v = _literal(v)
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return tuple(parse_int(e) for e in v)
    return parse_int(v)


def parse_dtype(v):
    if v is None or (isinstance(v, str) and v.strip() in ("None", "")):
        return None
    return np_dtype(v)


def optional(parser):
    """Wrap a parser so that None and the string 'None' pass through."""
    def parse(v):
        if v is None or (isinstance(v, str) and v.strip() in ("None", "")):
            return None
        return parser(v)
    parse.__name__ = "optional_" + parser.__name__
    return parse


def register_class(registry, klass, kind, where):
    """Register ``klass`` in ``registry`` under its lower-cased class name (the rule of
    MXNet's optimizer, initializer and kvstore registries); warns when it replaces one."""
    if not isinstance(klass, type):
        raise TypeError("%s: expected a class, got %r" % (where, klass))
    name = klass.__name__.lower()
    old = registry.get(name)
    if old is not None:
        import warnings
        warnings.warn("WARNING: New %s %s.%s is overriding existing %s %s.%s"
                      % (kind, klass.__module__, klass.__name__, kind, old.__module__,
                         old.__name__))
    registry[name] = klass
    return klass


def format_attr(v):
    """Format a typed attribute value the way MXNet writes attribute strings."""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, tuple):
        return "(" + ", ".join(format_attr(e) for e in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, np.dtype):
        return v.name
    return str(v)
