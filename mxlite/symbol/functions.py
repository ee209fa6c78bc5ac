"""``mx.sym`` functions that are not single registered ops: the NumPy-style binary
functions (either side a scalar) and array creation, as MXNet's symbol module has."""
import numbers

import numpy as np

from ..operator.registry import OPS
from .symbol import Symbol

__all__ = ["maximum", "minimum", "power", "hypot", "add", "subtract", "multiply", "divide",
           "modulo", "equal", "not_equal", "greater", "greater_equal", "lesser",
           "lesser_equal", "zeros", "ones", "full", "arange", "eye", "linspace"]


def _call(name, inputs, params, sym_name=None):
    from .register import op_call
    return op_call(OPS[name], inputs, params, name=sym_name)


def _ufunc(lhs, rhs, op, lscalar, rscalar, pyfn):
    ls, rs = isinstance(lhs, Symbol), isinstance(rhs, Symbol)
    if ls and rs:
        return _call(op, [lhs, rhs], {})
    if ls and isinstance(rhs, numbers.Number):
        return _call(lscalar, [lhs], {"scalar": rhs})
    if rs and isinstance(lhs, numbers.Number):
        return _call(rscalar, [rhs], {"scalar": lhs})
    if isinstance(lhs, numbers.Number) and isinstance(rhs, numbers.Number):
        return pyfn(lhs, rhs)
    raise TypeError("%s: expected Symbols or scalars, got %s and %s"
                    % (op, type(lhs).__name__, type(rhs).__name__))


def maximum(left, right):
    """Elementwise maximum with broadcasting; either side may be a scalar."""
    return _ufunc(left, right, "broadcast_maximum", "_maximum_scalar", "_maximum_scalar", max)


def minimum(left, right):
    return _ufunc(left, right, "broadcast_minimum", "_minimum_scalar", "_minimum_scalar", min)


def power(base, exp):
    return _ufunc(base, exp, "broadcast_power", "_power_scalar", "_rpower_scalar",
                  lambda a, b: a ** b)


def hypot(left, right):
    return _ufunc(left, right, "broadcast_hypot", "_hypot_scalar", "_hypot_scalar",
                  lambda a, b: float(np.hypot(a, b)))


def add(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_add", "_plus_scalar", "_plus_scalar", lambda a, b: a + b)


def subtract(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_sub", "_minus_scalar", "_rminus_scalar",
                  lambda a, b: a - b)


def multiply(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_mul", "_mul_scalar", "_mul_scalar", lambda a, b: a * b)


def divide(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_div", "_div_scalar", "_rdiv_scalar", lambda a, b: a / b)


def modulo(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_mod", "_mod_scalar", "_rmod_scalar", lambda a, b: a % b)


def _cmp(name, flipped):
    def fn(lhs, rhs):
        return _ufunc(lhs, rhs, "broadcast_" + name, "_%s_scalar" % name,
                      "_%s_scalar" % flipped, lambda a, b: None)
    fn.__name__ = name
    fn.__doc__ = "Elementwise ``%s`` with broadcasting (1 or 0); either side may be a scalar." % name
    return fn


equal = _cmp("equal", "equal")
not_equal = _cmp("not_equal", "not_equal")
greater = _cmp("greater", "lesser")
greater_equal = _cmp("greater_equal", "lesser_equal")
lesser = _cmp("lesser", "greater")
lesser_equal = _cmp("lesser_equal", "greater_equal")


def _shape(shape):
    return (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)


def zeros(shape, dtype=None, name=None, **kwargs):
    """A symbol of zeros of ``shape``."""
    return _call("_zeros", [], dict(shape=_shape(shape), dtype=dtype or "float32", **kwargs), name)


def ones(shape, dtype=None, name=None, **kwargs):
    return _call("_ones", [], dict(shape=_shape(shape), dtype=dtype or "float32", **kwargs), name)


def full(shape, val, dtype=None, name=None, **kwargs):
    return _call("_full", [], dict(shape=_shape(shape), value=val, dtype=dtype or "float32",
                                   **kwargs), name)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    return _call("_arange", [], dict(start=start, stop=stop, step=step, repeat=repeat,
                                     dtype=dtype or "float32"), name)


def eye(N, M=0, k=0, dtype=None, name=None, **kwargs):
    return _call("_eye", [], dict(N=N, M=M, k=k, dtype=dtype or "float32"), name)


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    return _call("_linspace", [], dict(start=start, stop=stop, num=num, endpoint=endpoint,
                                       dtype=dtype or "float32"), name)
