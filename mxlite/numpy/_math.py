"""Math of ``mx.np``: elementwise functions, binary functions with broadcasting, and
reductions, each one registry op (``_npi_exp``, ``_npi_add``, ``_np_sum`` ...).

A function given only Python scalars answers as NumPy does (``np.exp(1.0)`` is a
NumPy float64), as MXNet's do.
"""
import numpy as onp

from ..nd.ndarray import NDArray
from ..operator.registry import OPS, invoke
from ._ndarray import ndarray, apply, np_error, _is_symbol

__all__ = []

_SCALARS = (int, float, bool, onp.number, onp.bool_)


def _export(fn, name):
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "mxlite.numpy"
    globals()[name] = fn
    __all__.append(name)
    return fn


def _as_np(x, ctx=None):
    from ._creation import array
    return array(x, ctx=ctx)


# -- unary -------------------------------------------------------------------------------

def _unary(name, op_name):
    op = OPS[op_name]
    onp_fn = getattr(onp, name)

    def fn(x, out=None, **kwargs):
        if type(x) is ndarray:
            return invoke(op, (x,), op.default_params, out)
        if isinstance(x, NDArray):
            raise np_error(op_name, name)
        if _is_symbol(x):
            return apply(op_name, (x,), py_name=name)
        if isinstance(x, _SCALARS):
            return onp_fn(x, **kwargs)
        return invoke(op, (_as_np(x),), op.default_params, out)
    fn.__doc__ = ("Elementwise ``%s`` of an array (MXNet's ``%s``).\n\n"
                  ">>> mx.np.%s(mx.np.array([0.5]))" % (name, op_name, name))
    return _export(fn, name)


_UNARY = ["negative", "exp", "expm1", "log", "log10", "log2", "log1p", "sqrt", "cbrt",
          "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
          "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "degrees", "radians", "rint",
          "fix", "floor", "ceil", "trunc", "sign", "logical_not", "isnan", "isinf",
          "isfinite", "isposinf", "isneginf", "bitwise_not", "invert", "deg2rad", "rad2deg"]
for _n in _UNARY:
    _unary(_n, "_npi_" + _n)
_unary("absolute", "_npi_absolute")
_unary("abs", "_npi_absolute")
_unary("fabs", "_npi_absolute")


def positive(x, out=None, **kwargs):
    """``+x``: a copy of ``x``."""
    return x.copy() if isinstance(x, ndarray) else onp.positive(x)


_export(positive, "positive")


def around(x, decimals=0, out=None, **kwargs):
    """Round to ``decimals`` (NumPy's rounding, half to even)."""
    from ._fallback import fallback
    return fallback(onp.around, x, decimals=decimals)


_export(around, "around")


def _round_method(self, decimals=0, out=None):
    """``mx.np.around(self, decimals)``."""
    return around(self, decimals)


ndarray.round = _round_method
_export(around, "round")
_export(around, "round_")

# -- binary ------------------------------------------------------------------------------


def _binary(name, op_name, scalar, rscalar):
    op, sop = OPS[op_name], OPS[scalar]
    rop = OPS[rscalar] if rscalar else sop
    onp_fn = getattr(onp, name)

    def fn(x1, x2, out=None, **kwargs):
        t1, t2 = type(x1) is ndarray, type(x2) is ndarray
        if t1 and t2:
            return invoke(op, (x1, x2), op.default_params, out)
        if t1 and isinstance(x2, _SCALARS):
            return invoke(sop, (x1,), sop.parse_params({"scalar": x2}), out)
        if t2 and isinstance(x1, _SCALARS):
            return invoke(rop, (x2,), rop.parse_params({"scalar": x1}), out)
        if isinstance(x1, NDArray) and not isinstance(x1, ndarray) or \
                isinstance(x2, NDArray) and not isinstance(x2, ndarray):
            raise np_error(op_name, name)
        if _is_symbol(x1) or _is_symbol(x2):
            if not _is_symbol(x2):
                return apply(scalar, (x1,), {"scalar": x2}, py_name=name)
            if not _is_symbol(x1):
                return apply(rscalar or scalar, (x2,), {"scalar": x1}, py_name=name)
            return apply(op_name, (x1, x2), py_name=name)
        if isinstance(x1, _SCALARS) and isinstance(x2, _SCALARS):
            return onp_fn(x1, x2, **kwargs)
        ctx = x1.ctx if isinstance(x1, NDArray) else (x2.ctx if isinstance(x2, NDArray) else None)
        a = x1 if isinstance(x1, (ndarray, _SCALARS)) else _as_np(x1, ctx)
        b = x2 if isinstance(x2, (ndarray, _SCALARS)) else _as_np(x2, ctx)
        return fn(a, b, out=out)
    fn.__doc__ = ("Elementwise ``%s`` with broadcasting (MXNet's ``%s``); a Python scalar "
                  "operand keeps the array's dtype." % (name, op_name))
    return _export(fn, name)


_BINARY = [("add", "_npi_add", "_npi_add_scalar", None),
           ("subtract", "_npi_subtract", "_npi_subtract_scalar", "_npi_rsubtract_scalar"),
           ("multiply", "_npi_multiply", "_npi_multiply_scalar", None),
           ("true_divide", "_npi_true_divide", "_npi_true_divide_scalar",
            "_npi_rtrue_divide_scalar"),
           ("divide", "_npi_true_divide", "_npi_true_divide_scalar", "_npi_rtrue_divide_scalar"),
           ("mod", "_npi_mod", "_npi_mod_scalar", "_npi_rmod_scalar"),
           ("remainder", "_npi_mod", "_npi_mod_scalar", "_npi_rmod_scalar"),
           ("power", "_npi_power", "_npi_power_scalar", "_npi_rpower_scalar"),
           ("maximum", "_npi_maximum", "_npi_maximum_scalar", None),
           ("minimum", "_npi_minimum", "_npi_minimum_scalar", None),
           ("hypot", "_npi_hypot", "_npi_hypot_scalar", None),
           ("equal", "_npi_equal", "_npi_equal_scalar", None),
           ("not_equal", "_npi_not_equal", "_npi_not_equal_scalar", None),
           ("greater", "_npi_greater", "_npi_greater_scalar", "_npi_less_scalar"),
           ("greater_equal", "_npi_greater_equal", "_npi_greater_equal_scalar",
            "_npi_less_equal_scalar"),
           ("less", "_npi_less", "_npi_less_scalar", "_npi_greater_scalar"),
           ("less_equal", "_npi_less_equal", "_npi_less_equal_scalar",
            "_npi_greater_equal_scalar")]
for _n, _o, _s, _r in _BINARY:
    _binary(_n, _o, _s, _r)


def _binary_no_scalar(name, op_name):
    onp_fn = getattr(onp, name)

    def fn(x1, x2, out=None, **kwargs):
        if not isinstance(x1, NDArray) and not isinstance(x2, NDArray) and not (
                _is_symbol(x1) or _is_symbol(x2)):
            return onp_fn(x1, x2, **kwargs)
        ctx = (x1 if isinstance(x1, NDArray) else x2).ctx
        a = x1 if isinstance(x1, NDArray) or _is_symbol(x1) else _as_np(
            onp.asarray(x1, dtype=x2.dtype), ctx)
        b = x2 if isinstance(x2, NDArray) or _is_symbol(x2) else _as_np(
            onp.asarray(x2, dtype=x1.dtype), ctx)
        return apply(op_name, (a, b), out=out, py_name=name)
    fn.__doc__ = "Elementwise ``%s`` with broadcasting (MXNet's ``%s``)." % (name, op_name)
    return _export(fn, name)


for _n in ("logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
           "bitwise_xor", "lcm"):
    _binary_no_scalar(_n, "_npi_" + _n)

# -- reductions ----------------------------------------------------------------------------


def _reduction(name, op_name, params):
    onp_fn = getattr(onp, name, None)

    def fn(a, axis=None, *args, **kwargs):
        out = kwargs.pop("out", None)
        for k, v in zip(params[1:], args):
            kwargs[k] = v
        kwargs["axis"] = axis
        for k in list(kwargs):
            if k not in params:
                raise TypeError("%s() got an unexpected keyword argument %r" % (name, k))
        if not isinstance(a, NDArray) and not _is_symbol(a):
            if onp_fn is not None and isinstance(a, _SCALARS):
                return onp_fn(a, **kwargs)
            a = _as_np(a)
        if kwargs.get("axis") is not None and isinstance(kwargs["axis"], list):
            kwargs["axis"] = tuple(kwargs["axis"])
        return apply(op_name, (a,), kwargs, out=out, py_name=name)
    fn.__doc__ = ("``%s`` over ``axis`` (all axes when None), as ``numpy.%s`` with MXNet's "
                  "dtype rules; a full reduction is a 0-d array." % (name, name))
    return _export(fn, name)


_REDUCTIONS = [("sum", "_np_sum", ("axis", "dtype", "keepdims", "initial")),
               ("prod", "_np_prod", ("axis", "dtype", "keepdims", "initial")),
               ("mean", "_npi_mean", ("axis", "dtype", "keepdims")),
               ("max", "_np_max", ("axis", "keepdims", "initial")),
               ("min", "_np_min", ("axis", "keepdims", "initial")),
               ("amax", "_np_max", ("axis", "keepdims", "initial")),
               ("amin", "_np_min", ("axis", "keepdims", "initial")),
               ("std", "_npi_std", ("axis", "dtype", "ddof", "keepdims")),
               ("var", "_npi_var", ("axis", "dtype", "ddof", "keepdims")),
               ("argmax", "_npi_argmax", ("axis", "keepdims")),
               ("argmin", "_npi_argmin", ("axis", "keepdims")),
               ("any", "_np_any", ("axis", "keepdims")),
               ("all", "_np_all", ("axis", "keepdims")),
               ("cumsum", "_np_cumsum", ("axis", "dtype"))]
for _n, _o, _p in _REDUCTIONS:
    _reduction(_n, _o, _p)
_export(globals()["prod"], "product")
_export(globals()["any"], "sometrue")
_export(globals()["all"], "alltrue")


# Fluent methods of ndarray for the reductions: ``x.sum(axis=1)``.
def _method(name):
    fn = globals()[name]

    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = "``mx.np.%s(self, ...)``." % name
    return method


for _n in ("sum", "prod", "mean", "max", "min", "std", "var", "argmax", "argmin", "any",
           "all", "cumsum"):
    setattr(ndarray, _n, _method(_n))
