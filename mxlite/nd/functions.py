"""``mx.nd`` functions that are not single registered ops: array creation with MXNet's
signatures, and the NumPy-style binary functions that pick the broadcast or scalar op."""
import numbers

import numpy as np


from ..context import current_context
from ..operator.registry import OPS, invoke
from .ndarray import NDArray

__all__ = ["zeros", "ones", "full", "arange", "eye", "linspace", "add", "subtract", "multiply",
           "divide", "true_divide", "modulo", "power", "maximum", "minimum", "hypot", "equal",
           "not_equal", "greater", "greater_equal", "lesser", "lesser_equal", "logical_and",
           "logical_or", "logical_xor", "concatenate", "moveaxis", "waitall", "onehot_encode"]


def _shape(shape):
    return (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)


def _create(name, ctx, kwargs):
    op = OPS[name]
    # MXNet accepts (and ignores, for arrays) a name and __attr__ keywords.
    kwargs = {k: v for k, v in kwargs.items()
              if k != "name" and not (k.startswith("__") and k.endswith("__"))}
    return invoke(op, (), op.parse_params(kwargs), ctx=ctx or current_context())


def zeros(shape, ctx=None, dtype=None, **kwargs):
    """An array of zeros: ``mx.nd.zeros((2, 3), ctx=mx.cpu(), dtype='float32')``."""
    return _create("_zeros", ctx, dict(shape=_shape(shape), dtype=dtype or "float32", **kwargs))


def ones(shape, ctx=None, dtype=None, **kwargs):
    """An array of ones."""
    return _create("_ones", ctx, dict(shape=_shape(shape), dtype=dtype or "float32", **kwargs))


def full(shape, val, ctx=None, dtype=np.float32, out=None):
    """An array filled with ``val``."""
    y = _create("_full", ctx, dict(shape=_shape(shape), value=val, dtype=dtype or "float32"))
    if out is not None:
        out[:] = y
        return out
    return y


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=np.float32):
    """Evenly spaced values in ``[start, stop)``: ``mx.nd.arange(3)`` is ``[0. 1. 2.]``."""
    return _create("_arange", ctx, dict(start=start, stop=stop, step=step, repeat=repeat,
                                        dtype=dtype or "float32"))


def eye(N, M=0, k=0, ctx=None, dtype=np.float32, **kwargs):
    """A 2-D array with ones on the k-th diagonal."""
    return _create("_eye", ctx, dict(N=N, M=M, k=k, dtype=dtype or "float32"))


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=np.float32):
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    return _create("_linspace", ctx, dict(start=start, stop=stop, num=num, endpoint=endpoint,
                                          dtype=dtype or "float32"))


def _ufunc(lhs, rhs, op, lscalar, rscalar, pyfn):
    """Apply a binary op to NDArrays and/or scalars, as MXNet's ``nd.add`` etc. do."""
    lnd, rnd = isinstance(lhs, NDArray), isinstance(rhs, NDArray)
    if lnd and rnd:
        return invoke(OPS[op], (lhs, rhs), OPS[op].default_params)
    if lnd and isinstance(rhs, numbers.Number):
        o = OPS[lscalar]
        return invoke(o, (lhs,), o.parse_params({"scalar": rhs}))
    if rnd and isinstance(lhs, numbers.Number):
        o = OPS[rscalar]
        return invoke(o, (rhs,), o.parse_params({"scalar": lhs}))
    if isinstance(lhs, numbers.Number) and isinstance(rhs, numbers.Number):
        return pyfn(lhs, rhs)
    raise TypeError("%s: expected NDArrays or scalars, got %s and %s"
                    % (op, type(lhs).__name__, type(rhs).__name__))


def add(lhs, rhs):
    """``lhs + rhs`` with broadcasting; either may be a scalar."""
    return _ufunc(lhs, rhs, "broadcast_add", "_plus_scalar", "_plus_scalar", lambda a, b: a + b)


def subtract(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_sub", "_minus_scalar", "_rminus_scalar", lambda a, b: a - b)


def multiply(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_mul", "_mul_scalar", "_mul_scalar", lambda a, b: a * b)


def divide(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_div", "_div_scalar", "_rdiv_scalar", lambda a, b: a / b)


true_divide = divide


def modulo(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_mod", "_mod_scalar", "_rmod_scalar", lambda a, b: a % b)


def power(base, exp):
    return _ufunc(base, exp, "broadcast_power", "_power_scalar", "_rpower_scalar",
                  lambda a, b: a ** b)


def maximum(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_maximum", "_maximum_scalar", "_maximum_scalar", max)


def minimum(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_minimum", "_minimum_scalar", "_minimum_scalar", min)


def hypot(lhs, rhs):
    return _ufunc(lhs, rhs, "broadcast_hypot", "_hypot_scalar", "_hypot_scalar",
                  lambda a, b: float(np.hypot(a, b)))


def _cmp(name, flipped, pyfn):
    def fn(lhs, rhs):
        return _ufunc(lhs, rhs, "broadcast_" + name, "_%s_scalar" % name, "_%s_scalar" % flipped,
                      lambda a, b: float(pyfn(a, b)))
    fn.__name__ = name
    fn.__doc__ = "Elementwise ``%s`` with broadcasting (1 or 0); either side may be a scalar." % name
    return fn


equal = _cmp("equal", "equal", lambda a, b: a == b)
not_equal = _cmp("not_equal", "not_equal", lambda a, b: a != b)
greater = _cmp("greater", "lesser", lambda a, b: a > b)
greater_equal = _cmp("greater_equal", "lesser_equal", lambda a, b: a >= b)
lesser = _cmp("lesser", "greater", lambda a, b: a < b)
lesser_equal = _cmp("lesser_equal", "greater_equal", lambda a, b: a <= b)
logical_and = _cmp("logical_and", "logical_and", lambda a, b: bool(a) and bool(b))
logical_or = _cmp("logical_or", "logical_or", lambda a, b: bool(a) or bool(b))
logical_xor = _cmp("logical_xor", "logical_xor", lambda a, b: bool(a) != bool(b))


def concatenate(arrays, axis=0, always_copy=True):
    """Join arrays along ``axis`` (MXNet's older name for ``concat``)."""
    if not arrays:
        raise ValueError("concatenate: need at least one array")
    if not always_copy and len(arrays) == 1:
        return arrays[0]
    return invoke(OPS["Concat"], list(arrays),
                  OPS["Concat"].parse_params({"num_args": len(arrays), "dim": axis}))


def moveaxis(tensor, source, destination):
    """Move axis ``source`` to position ``destination``."""
    axes = list(range(tensor.ndim))
    src = source % tensor.ndim
    dst = destination % tensor.ndim
    axes.pop(src)
    axes.insert(dst, src)
    return invoke(OPS["transpose"], (tensor,), OPS["transpose"].parse_params({"axes": tuple(axes)}))


def onehot_encode(indices, out):
    """Write the one-hot encoding of ``indices`` into ``out`` (MXNet's legacy helper)."""
    depth = out.shape[1]
    y = invoke(OPS["one_hot"], (indices,), OPS["one_hot"].parse_params({"depth": depth,
                                                                          "dtype": out.dtype}))
    out[:] = y
    return out


def waitall():
    """Wait for all pending work (see ``mx.engine``)."""
    from ..engine import waitall as _w
    _w()



