"""Errors, dtype tables and typed attribute parsing shared by every part of mxlite."""
import ast

import numpy as np

__all__ = ["MXNetError", "ParamError", "DTYPE_TO_FLAG", "FLAG_TO_DTYPE", "np_dtype", "dtype_name"]


class MXNetError(RuntimeError):
    """Error raised by operators and the engine, as ``mxnet.base.MXNetError``."""


class ParamError(MXNetError, ValueError):
    """An operator param that its schema rejects (a value not among its choices, out of
    its range, or not parseable): an MXNetError, as MXNet raises, and a ValueError."""


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
