"""Elementwise unary ops: math functions, rounding, casts and identity-like ops.

Each row of the table below is one op: its NumPy kernel and its gradient, one
line each, written with mxlite ops so that they can be differentiated again.
"""
import math

import numpy as np

from ... import nd
from ...base import parse_float, np_dtype
from ... import engine
from ...engine import parallel_parts
from ..registry import register_op, Param, bound, dtypes
from ..batchwise import ELEMENTWISE
from ..util import context_of, identity_grad, zeros_grad
from . import special

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_SQRT_PI = math.sqrt(math.pi)


def _unary(name, fwd, grad, saves="x", aliases=(), doc=""):
    """Register an elementwise op ``y = fwd(xp, x)`` with ``gx = grad(x, y, gy)``."""
    def compute(p, xp, x):
        if x.dtype.kind in "iu" and name not in _INT_EXACT:
            return _int_unary(xp, fwd, x)
        return fwd(xp, x)

    def gradient(p, x, y, gy, need):
        return [grad(x[0], y[0], gy[0])]

    return register_op(name, compute, gradient=gradient if grad is not None else None,
                       saves=saves, aliases=aliases, same_shape=(0,), check=dtypes(data="fiu"),
                       unlisted="xy", batchwise=ELEMENTWISE,
                       doc=doc or "Elementwise %s." % name)


# Ops whose NumPy kernel keeps an integer input's dtype with exact integer results.
_INT_EXACT = frozenset(("abs", "negative", "square", "reciprocal", "relu"))


def _int_unary(xp, fwd, x):
    """Run ``fwd`` on an integer array the way MXNet does: in float32, cast back.

    MXNet keeps the input's integer dtype (``sqrt`` of int32 [4, 9] is int32 [2, 3],
    ``exp`` of int32 [1, 2] is int32 [2, 7]): its kernels compute in float32 for
    non-double types and the C cast truncates towards zero.
    """
    # NOTE: NaN/inf (log 0, sqrt of negatives) have no integer value; C gives an
    # unspecified one, NumPy warns. Silence the warnings, the value is as arbitrary.
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        return fwd(xp, x.astype(np.float32)).astype(x.dtype)


# name, kernel, gradient(x, y, gy), which of x/y the gradient reads
_TABLE = [
    ("exp", lambda xp, x: xp.exp(x), lambda x, y, gy: gy * y, "y"),
    ("expm1", lambda xp, x: xp.expm1(x), lambda x, y, gy: gy * (y + 1), "y"),
    ("log", lambda xp, x: xp.log(x), lambda x, y, gy: gy / x, "x"),
    ("log1p", lambda xp, x: xp.log1p(x), lambda x, y, gy: gy / (x + 1), "x"),
    ("log2", lambda xp, x: xp.log2(x), lambda x, y, gy: gy / (x * _LN2), "x"),
    ("log10", lambda xp, x: xp.log10(x), lambda x, y, gy: gy / (x * _LN10), "x"),
    ("sqrt", lambda xp, x: xp.sqrt(x), lambda x, y, gy: gy * 0.5 / y, "y"),
    ("rsqrt", lambda xp, x: 1 / xp.sqrt(x), lambda x, y, gy: gy * -0.5 * y * y * y, "y"),
    ("cbrt", lambda xp, x: xp.cbrt(x), lambda x, y, gy: gy / (3 * y * y), "y"),
    ("rcbrt", lambda xp, x: 1 / xp.cbrt(x), lambda x, y, gy: gy * (-1.0 / 3) * y / x, "xy"),
    ("square", lambda xp, x: xp.square(x), lambda x, y, gy: gy * 2 * x, "x"),
    ("reciprocal", lambda xp, x: xp.reciprocal(x), lambda x, y, gy: -gy * y * y, "y"),
    ("abs", lambda xp, x: xp.abs(x), lambda x, y, gy: gy * nd.sign(x), "x"),
    ("negative", lambda xp, x: xp.negative(x), lambda x, y, gy: -gy, ""),
    ("sin", lambda xp, x: xp.sin(x), lambda x, y, gy: gy * nd.cos(x), "x"),
    ("cos", lambda xp, x: xp.cos(x), lambda x, y, gy: -gy * nd.sin(x), "x"),
    ("tan", lambda xp, x: xp.tan(x), lambda x, y, gy: gy * (y * y + 1), "y"),
    ("arcsin", lambda xp, x: xp.arcsin(x), lambda x, y, gy: gy * nd.rsqrt(1 - x * x), "x"),
    ("arccos", lambda xp, x: xp.arccos(x), lambda x, y, gy: -gy * nd.rsqrt(1 - x * x), "x"),
    ("arctan", lambda xp, x: xp.arctan(x), lambda x, y, gy: gy / (x * x + 1), "x"),
    ("sinh", lambda xp, x: xp.sinh(x), lambda x, y, gy: gy * nd.cosh(x), "x"),
    ("cosh", lambda xp, x: xp.cosh(x), lambda x, y, gy: gy * nd.sinh(x), "x"),
    ("tanh", lambda xp, x: xp.tanh(x), lambda x, y, gy: gy * (1 - y * y), "y"),
    ("arcsinh", lambda xp, x: xp.arcsinh(x), lambda x, y, gy: gy * nd.rsqrt(x * x + 1), "x"),
    ("arccosh", lambda xp, x: xp.arccosh(x), lambda x, y, gy: gy * nd.rsqrt(x * x - 1), "x"),
    ("arctanh", lambda xp, x: xp.arctanh(x), lambda x, y, gy: gy / (1 - x * x), "x"),
    ("degrees", lambda xp, x: xp.degrees(x), lambda x, y, gy: gy * (180 / math.pi), ""),
    ("radians", lambda xp, x: xp.radians(x), lambda x, y, gy: gy * (math.pi / 180), ""),
    ("sigmoid", lambda xp, x: _sigmoid(xp, x), lambda x, y, gy: gy * y * (1 - y), "y"),
    ("log_sigmoid", lambda xp, x: -_softplus(xp, -x), lambda x, y, gy: gy * nd.sigmoid(-x), "x"),
    ("softsign", lambda xp, x: x / (1 + xp.abs(x)),
     lambda x, y, gy: gy / nd.square(1 + nd.abs(x)), "x"),
    ("relu", lambda xp, x: _relu(xp, x),
     lambda x, y, gy: _BACKWARD_RELU(gy, y), "y"),
    ("erf", special.erf, lambda x, y, gy: gy * (2 / _SQRT_PI) * nd.exp(-x * x), "x"),
    ("erfinv", special.erfinv, lambda x, y, gy: gy * (_SQRT_PI / 2) * nd.exp(y * y), "y"),
    ("gamma", special.gamma, lambda x, y, gy: gy * y * nd._internal._digamma(x), "xy"),
    ("gammaln", special.gammaln, lambda x, y, gy: gy * nd._internal._digamma(x), "x"),
]

_ROUNDING = [
    ("round", lambda xp, x: xp.where(x >= 0, xp.floor(x + 0.5), xp.ceil(x - 0.5)).astype(x.dtype, copy=False),
     "Round to the nearest integer, halves away from zero."),
    ("rint", lambda xp, x: _rint(xp, x),
     "Round to the nearest integer; halves go down (MXNet: 1.5 -> 1, -1.5 -> -2)."),
    ("floor", lambda xp, x: xp.floor(x), "Round down."),
    ("ceil", lambda xp, x: xp.ceil(x), "Round up."),
    ("trunc", lambda xp, x: xp.trunc(x), "Round towards zero."),
    ("fix", lambda xp, x: xp.trunc(x), "Round towards zero."),
    ("sign", lambda xp, x: xp.sign(x), "The sign: -1, 0 or 1."),
]


def _rint(xp, x):
    f = xp.floor(x)
    return xp.where(x - f <= 0.5, f, f + 1).astype(x.dtype, copy=False)


def _sigmoid(xp, x):
    # NOTE: exp(-x) overflows to inf for very negative x, and 1 / (1 + inf) is the
    # right limit 0; computing in place keeps this at one pass over the data.
    with np.errstate(over="ignore"):
        e = xp.exp(-x)
    if x.ndim == 0:         # NumPy gives a scalar for a 0-d array: no ``out=`` on it
        e = xp.asarray(e)
    e += 1
    return xp.reciprocal(e, out=e)


def _softplus(xp, x):
    # NOTE: log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)) never overflows.
    return (xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))).astype(x.dtype, copy=False)


def _relu(xp, x):
    """``max(x, 0)`` in ``x``'s dtype, split over the CPU workers."""
    zero = x.dtype.type(0)      # keeps bool as bool (a Python 0 would make it int64)
    if x.nbytes < engine.PARALLEL_MIN_BYTES:    # one part: nothing to set up
        return xp.maximum(x, zero)
    y = xp.empty(x.shape, dtype=x.dtype)
    parallel_parts(lambda at: xp.maximum(x[at], zero, out=y[at]), x.shape, x.nbytes, xp)
    return y


def _relu_backward(p, xp, gy, x):
    # NOTE: gy times exactly 0 or 1, the same numbers as ``gy * (x > 0)`` in two ops.
    if gy.shape != x.shape or gy.nbytes < engine.PARALLEL_MIN_BYTES:
        return gy * (x > 0)
    gx = xp.empty(gy.shape, dtype=gy.dtype)
    parallel_parts(lambda at: xp.multiply(gy[at], x[at] > 0, out=gx[at]), gy.shape, gy.nbytes,
                   xp)
    return gx


def _relu_backward_grad(p, x, y, gy, need):
    ggx, data = gy[0], x[1]
    return [nd._internal._backward_relu(ggx, data), nd.zeros_like(data) if need[1] else None]


# NOTE: one op for ``gy * (x > 0)``, to save a comparison op per ReLU in backward.
register_op("_backward_relu", _relu_backward, inputs=("gy", "x"), gradient=_relu_backward_grad,
            saves="x", doc="Gradient of relu: ``gy * (x > 0)``.", same_shape=(0, 1))
_BACKWARD_RELU = bound("_backward_relu")



for _name, _fwd, _grad, _saves in _TABLE:
    _unary(_name, _fwd, _grad, _saves)

# name: (kernel(xp, x), gradient(x, y, gy)), for the ops that reuse these rows (Activation)
UNARY = {_name: (_fwd, _grad) for _name, _fwd, _grad, _saves in _TABLE}

for _name, _fwd, _doc in _ROUNDING:
    register_op(_name, (lambda f: lambda p, xp, x: f(xp, x))(_fwd), gradient=zeros_grad,
                saves="", same_shape=(0,), check=dtypes(data="fiu"), doc=_doc)

register_op("_digamma", lambda p, xp, x: special.digamma(xp, x), saves="",
            doc="The digamma function (the gradient of gammaln); not differentiable.", same_shape=(0,))

register_op("logical_not", lambda p, xp, x: (x == 0).astype(x.dtype),
            doc="Logical not: 1 where the input is 0, else 0 (in the input's dtype).", same_shape=(0,))

register_op("zeros_like", lambda p, xp, x: xp.zeros_like(x), gradient=zeros_grad, saves="",
            doc="An array of zeros with the input's shape and dtype.", same_shape=(0,))
register_op("ones_like", lambda p, xp, x: xp.ones_like(x), gradient=zeros_grad, saves="",
            doc="An array of ones with the input's shape and dtype.", same_shape=(0,))


# MXNet's op is ``_copy`` (what JSON names), called ``identity`` in the API.
register_op("_copy", lambda p, xp, x: x.copy(), gradient=identity_grad, saves="",
            aliases=("identity",), doc="A copy of the input.", same_shape=(0,))


def _block_grad(p, x, y, gy, need):
    return [nd.zeros_like(gy[0])]


register_op("BlockGrad", lambda p, xp, x: x.copy(), gradient=_block_grad, saves="",
            aliases=("stop_gradient",),
            doc="The input unchanged, with a zero gradient: stops gradients flowing back.", same_shape=(0,))


def _hard_sigmoid(p, xp, x):
    return xp.clip(x * p.alpha + p.beta, 0, 1).astype(x.dtype, copy=False)


def _hard_sigmoid_grad(p, x, y, gy, need):
    z = x[0] * p.alpha + p.beta
    return [gy[0] * p.alpha * (z > 0) * (z < 1)]


register_op("hard_sigmoid", _hard_sigmoid, gradient=_hard_sigmoid_grad, saves="x",
            params=[Param("alpha", parse_float, 0.2), Param("beta", parse_float, 0.5)],
            doc="``max(0, min(1, alpha * x + beta))``.", same_shape=(0,))


def _clip(p, xp, x):
    return xp.clip(x, p.a_min, p.a_max).astype(x.dtype, copy=False)


def _clip_grad(p, x, y, gy, need):
    return [gy[0] * (x[0] >= p.a_min) * (x[0] <= p.a_max)]


register_op("clip", _clip, gradient=_clip_grad, saves="x", batchwise=ELEMENTWISE,
            params=[Param("a_min", parse_float), Param("a_max", parse_float)],
            doc="Clip values to ``[a_min, a_max]``; the gradient is zero outside.", same_shape=(0,))


# -- casts and copies -------------------------------------------------------------

def _cast(p, xp, x):
    return x.astype(p.dtype)


def _cast_grad(p, x, y, gy, need):
    return [gy[0].astype(x[0].dtype)]


register_op("Cast", _cast, gradient=_cast_grad, saves="", aliases=("cast",),
            params=[Param("dtype", lambda v: np_dtype(v, "Cast"))],
            doc="Cast to ``dtype``.", same_shape=(0,))


def _copyto(p, xp, x):
    dst = p.ctx
    if dst.device_typeid == 2:
        if xp is np:
            return dst.array_module().asarray(x)
        with dst.array_module().cuda.Device(dst.device_id):
            return dst.array_module().array(x, copy=True)
    if xp is not np:
        return x.get()
    return x.copy()


def _copyto_grad(p, x, y, gy, need):
    # the head gradient, brought back to the input's context
    ctx = context_of(x[0])
    return [gy[0] if context_of(gy[0]) == ctx else nd._internal._copyto(gy[0], ctx=ctx)]


def _parse_ctx(v):
    from ...context import Context
    if isinstance(v, Context):
        return v
    if isinstance(v, str):
        name, _, rest = v.partition("(")
        return Context(name, int(rest.rstrip(")") or 0))
    raise ValueError("expected a Context, got %r" % (v,))


register_op("_copyto", _copyto, gradient=_copyto_grad, saves="",
            params=[Param("ctx", _parse_ctx)], output_ctx=lambda p: p.ctx,
            doc="A copy of the input on context ``ctx``.")
