"""Elementwise binary ops: broadcast_*, elemwise_*, the *_scalar forms and comparisons.

Every binary gradient goes through :func:`unbroadcast`. Comparisons and logical
ops return 0/1 in the input dtype, as in MXNet, and are not differentiable.
"""
import numpy as np

from ... import nd
from ...base import MXNetError, parse_bool, parse_float, parse_int
from ..registry import register_op, Param, dtypes
from ..batchwise import ELEMENTWISE, broadcast_rows, together
from ..util import unbroadcast, same_dtype


def _check_same_shape(name, a, b):
    if a.shape != b.shape:
        raise MXNetError("%s: inputs must have the same shape, got %s and %s (use broadcast_%s "
                         "to broadcast)" % (name, a.shape, b.shape, name.split("_", 1)[-1]))


# name, kernel(xp, a, b), gradient(a, b, y, gy) -> (ga, gb) before unbroadcasting, saves
_ARITH = [
    ("add", lambda xp, a, b: a + b, lambda a, b, y, gy: (gy, gy), ""),
    ("sub", lambda xp, a, b: a - b, lambda a, b, y, gy: (gy, -gy), ""),
    ("mul", lambda xp, a, b: a * b, lambda a, b, y, gy: (gy * b, gy * a), "x"),
    ("div", lambda xp, a, b: _div(xp, a, b), lambda a, b, y, gy: (gy / b, -gy * a / (b * b)), "x"),
    ("mod", lambda xp, a, b: _mod(xp, a, b),
     lambda a, b, y, gy: (gy, -gy * nd.floor(a / b)), "x"),
    ("power", lambda xp, a, b: _power(xp, a, b),
     lambda a, b, y, gy: (gy * b * a ** (b - 1), gy * y * nd.log(a)), "xy"),
    ("maximum", lambda xp, a, b: xp.maximum(a, b),
     lambda a, b, y, gy: (gy * (a >= b), gy * (a < b)), "x"),
    ("minimum", lambda xp, a, b: xp.minimum(a, b),
     lambda a, b, y, gy: (gy * (a <= b), gy * (a > b)), "x"),
    ("hypot", lambda xp, a, b: xp.hypot(a, b),
     lambda a, b, y, gy: (gy * a / y, gy * b / y), "xy"),
]

_COMPARE = [
    ("equal", lambda xp, a, b: a == b),
    ("not_equal", lambda xp, a, b: a != b),
    ("greater", lambda xp, a, b: a > b),
    ("greater_equal", lambda xp, a, b: a >= b),
    ("lesser", lambda xp, a, b: a < b),
    ("lesser_equal", lambda xp, a, b: a <= b),
    ("logical_and", lambda xp, a, b: xp.logical_and(a, b)),
    ("logical_or", lambda xp, a, b: xp.logical_or(a, b)),
    ("logical_xor", lambda xp, a, b: xp.logical_xor(a, b)),
]

_ELEMWISE_ALIASES = {"add": ("_plus", "_add", "_Plus"), "sub": ("_minus", "_sub", "_Minus"),
                     "mul": ("_mul", "_Mul"), "div": ("_div", "_Div")}
_BROADCAST_ALIASES = {"add": ("broadcast_plus",), "sub": ("broadcast_minus",)}


def _div(xp, a, b):
    if a.dtype.kind in "iu":
        # MXNet divides integers with truncation (C semantics); guard division by zero.
        with np.errstate(divide="ignore", invalid="ignore"):
            return xp.trunc(a / b).astype(a.dtype)
    return a / b


def _power(xp, a, b):
    """``a ** b``; integers to negative powers truncate as C's ``pow`` does in MXNet
    (2 ** -1 is 0, 1 ** -2 is 1) where NumPy refuses them."""
    if np.result_type(a, b).kind in "iu" and bool((xp.asarray(b) < 0).any()):
        # NOTE: 0 ** -1 is inf, which has no integer value; MXNet's is as arbitrary.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return xp.power(xp.asarray(a, np.float64), b).astype(np.result_type(a, b))
    return xp.power(a, b)


def _mod(xp, a, b):
    # NOTE: MXNet's mod follows Python: the result takes the divisor's sign.
    with np.errstate(divide="ignore", invalid="ignore"):
        return xp.mod(a, b)


_ROWS = broadcast_rows()


def _binary(name, kernel, grad, saves, check_shape, aliases=()):
    def compute(p, xp, a, b):
        if a.dtype != b.dtype:
            same_dtype(name, a, b)
        if check_shape and a.shape != b.shape:
            _check_same_shape(name, a, b)
        return kernel(xp, a, b)

    def gradient(p, x, y, gy, need):
        a, b = x
        ga, gb = grad(a, b, y[0], gy[0])
        return [unbroadcast(ga, a.shape) if need[0] else None,
                unbroadcast(gb, b.shape) if need[1] else None]

    # NOTE: MXNet's binary kernels refuse bool ("does not support boolean type").
    register_op(name, compute, inputs=("lhs", "rhs"), gradient=gradient if grad else None,
                saves=saves, aliases=aliases, check=dtypes(inputs="fiu"), batchwise=_ROWS,
                same_shape=(0, 1) if check_shape else None,
                doc="Elementwise %s of two arrays%s." % (
                    name.split("_", 1)[-1], "" if check_shape else ", with broadcasting"))


def _compare(name, kernel, check_shape, aliases=()):
    def compute(p, xp, a, b):
        if a.dtype != b.dtype:
            same_dtype(name, a, b)
        if check_shape and a.shape != b.shape:
            _check_same_shape(name, a, b)
        return kernel(xp, a, b).astype(a.dtype)

    # NOTE: MXNet refuses bool here too; mxlite takes it (its ONNX import compares and
    # combines bool masks with these ops), giving 0/1 as bool.
    register_op(name, compute, inputs=("lhs", "rhs"), aliases=aliases, batchwise=_ROWS,
                same_shape=(0, 1) if check_shape else None,
                doc="Elementwise ``%s`` (1 or 0, in the input dtype)%s." % (
                    name.split("_", 1)[-1], "" if check_shape else ", with broadcasting"))


for _n, _k, _g, _s in _ARITH:
    _binary("broadcast_" + _n, _k, _g, _s, False, _BROADCAST_ALIASES.get(_n, ()))
    if _n in _ELEMWISE_ALIASES:
        _binary("elemwise_" + _n, _k, _g, _s, True, _ELEMWISE_ALIASES[_n])
    else:
        _binary("_" + _n, _k, _g, _s, True, ("_" + _n.capitalize(),))

for _n, _k in _COMPARE:
    _compare("broadcast_" + _n, _k, False)
    _compare("_" + _n, _k, True)


# -- with a scalar ------------------------------------------------------------------

def _scalar_of(x, s):
    # MXNet casts the scalar to the array's dtype first (int32 + 1.5 adds 1).
    if x.dtype.kind == "f":
        return s
    try:
        return x.dtype.type(s)
    except (OverflowError, ValueError):
        # NOTE: inf, NaN or out of range: C's double-to-int cast, as MXNet's kernels do
        # it (on x86 inf and NaN become the type's minimum: int32 > inf is all ones).
        with np.errstate(invalid="ignore", over="ignore"):
            return np.array(s, dtype=np.float64).astype(x.dtype)[()]


# name, kernel(xp, x, s), gradient(x, y, gy, s), saves
_SCALAR = [
    ("_plus_scalar", lambda xp, x, s: x + s, lambda x, y, gy, s: gy, ""),
    ("_minus_scalar", lambda xp, x, s: x - s, lambda x, y, gy, s: gy, ""),
    ("_rminus_scalar", lambda xp, x, s: s - x, lambda x, y, gy, s: -gy, ""),
    ("_mul_scalar", lambda xp, x, s: x * s, lambda x, y, gy, s: gy * s, ""),
    ("_div_scalar", lambda xp, x, s: _div(xp, x, xp.asarray(s, dtype=x.dtype)) if x.dtype.kind in "iu" else x / s,
     lambda x, y, gy, s: gy / s, ""),
    ("_rdiv_scalar", lambda xp, x, s: _div(xp, xp.asarray(s, dtype=x.dtype), x) if x.dtype.kind in "iu" else s / x,
     lambda x, y, gy, s: -gy * y / x, "xy"),
    ("_mod_scalar", lambda xp, x, s: _mod(xp, x, s), lambda x, y, gy, s: gy, ""),
    ("_rmod_scalar", lambda xp, x, s: _mod(xp, s, x),
     lambda x, y, gy, s: -gy * nd.floor(s / x), "x"),
    ("_power_scalar", lambda xp, x, s: _power(xp, x, s), lambda x, y, gy, s: gy * s * x ** (s - 1), "x"),
    ("_rpower_scalar", lambda xp, x, s: _power(xp, s, x),
     lambda x, y, gy, s: gy * y * float(np.log(s)), "y"),
    ("_maximum_scalar", lambda xp, x, s: xp.maximum(x, s), lambda x, y, gy, s: gy * (x >= s), "x"),
    ("_minimum_scalar", lambda xp, x, s: xp.minimum(x, s), lambda x, y, gy, s: gy * (x <= s), "x"),
    ("_hypot_scalar", lambda xp, x, s: xp.hypot(x, s), lambda x, y, gy, s: gy * x / y, "xy"),
]

_SCALAR_ALIASES = {"_plus_scalar": ("_PlusScalar",), "_minus_scalar": ("_MinusScalar",),
                   "_rminus_scalar": ("_RMinusScalar",), "_mul_scalar": ("_MulScalar",),
                   "_div_scalar": ("_DivScalar",), "_rdiv_scalar": ("_RDivScalar",),
                   "_power_scalar": ("_PowerScalar",), "_rpower_scalar": ("_RPowerScalar",),
                   "_maximum_scalar": ("_MaximumScalar",), "_minimum_scalar": ("_MinimumScalar",)}

_SCALAR_COMPARE = [
    ("_equal_scalar", lambda xp, x, s: x == s),
    ("_not_equal_scalar", lambda xp, x, s: x != s),
    ("_greater_scalar", lambda xp, x, s: x > s),
    ("_greater_equal_scalar", lambda xp, x, s: x >= s),
    ("_lesser_scalar", lambda xp, x, s: x < s),
    ("_lesser_equal_scalar", lambda xp, x, s: x <= s),
    ("_logical_and_scalar", lambda xp, x, s: xp.logical_and(x, s)),
    ("_logical_or_scalar", lambda xp, x, s: xp.logical_or(x, s)),
    ("_logical_xor_scalar", lambda xp, x, s: xp.logical_xor(x, s)),
]

_SCALAR_PARAMS = [Param("scalar", parse_float, 1.0, "The scalar operand."),
                  Param("is_int", parse_bool, True,
                        "For integer data: the scalar is cast to the data's type (True), or "
                        "the op runs in float64 with a float64 result (False).")]


def _as_float_operand(x):
    """``x`` as float64 when ``is_int=False`` asks an integer array to meet a float
    scalar (MXNet 1.9 then gives a float64 result); None for a float array. Callers
    test ``p.is_int`` first, so the default path makes no call."""
    return None if x.dtype.kind == "f" else x.astype(np.float64)


def _scalar_type(p, dtypes):
    kind = np.dtype(dtypes[0]).kind
    if not p.is_int and kind != "f":
        return [np.dtype(np.float64)]
    return [np.dtype(np.int64) if kind == "b" else dtypes[0]]


def _scalar_op(name, kernel, grad, saves):
    def compute(p, xp, x):
        if x.dtype.kind == "b":
            # NOTE: MXNet computes a bool array with a scalar as int64 (True - 2 is -1).
            x = x.astype(np.int64)
        xf = None if p.is_int else _as_float_operand(x)
        if xf is not None:
            return kernel(xp, xf, xf.dtype.type(p.scalar))
        y = kernel(xp, x, _scalar_of(x, p.scalar))
        return y if y.dtype == x.dtype else y.astype(x.dtype)

    def gradient(p, x, y, gy, need):
        return [grad(x[0], y[0], gy[0], p.scalar)]

    register_op(name, compute, params=_SCALAR_PARAMS, gradient=gradient, saves=saves,
                aliases=_SCALAR_ALIASES.get(name, ()), same_shape=(0,), infer_type=_scalar_type,
                batchwise=ELEMENTWISE,
                doc="Elementwise %s with a scalar." % name.strip("_").replace("_scalar", ""))


for _n, _k, _g, _s in _SCALAR:
    _scalar_op(_n, _k, _g, _s)


def _compare_scalar(kernel):
    def compute(p, xp, x):
        if x.dtype.kind == "b":
            x = x.astype(np.int64)      # as _scalar_op
        xf = None if p.is_int else _as_float_operand(x)
        if xf is not None:
            return kernel(xp, xf, p.scalar).astype(np.float64)
        return kernel(xp, x, _scalar_of(x, p.scalar)).astype(x.dtype)
    return compute


for _n, _k in _SCALAR_COMPARE:
    register_op(_n, _compare_scalar(_k), params=_SCALAR_PARAMS, same_shape=(0,),
                infer_type=_scalar_type, batchwise=ELEMENTWISE,
                doc="Elementwise comparison with a scalar (1 or 0, in the input dtype).")


# -- n-ary --------------------------------------------------------------------------

def _add_n(p, xp, *xs):
    if not xs:
        raise MXNetError("need at least one input")
    y = xs[0].copy()
    for k, x in enumerate(xs[1:], 1):
        if x.shape != y.shape:
            raise MXNetError("input %d has shape %s, expected %s (all inputs alike)"
                             % (k, x.shape, y.shape))
        y += x
    return y


def _add_n_grad(p, x, y, gy, need):
    return [gy[0]] * len(x)


register_op("add_n", _add_n, inputs=lambda p: ["arg%d" % i for i in range(p.num_args)],
            params=[Param("num_args", parse_int, doc="Number of inputs.")],
            gradient=_add_n_grad, saves="", variadic="num_args", same_shape="all",
            batchwise=together(),
            aliases=("ElementWiseSum",),
            doc="Sum of all the input arrays, elementwise.")
