"""Activation (relu, sigmoid, tanh, softrelu, softsign, log_sigmoid, mish) and
LeakyReLU (leaky, prelu, elu, selu, gelu, rrelu).

Each activation is one row: a kernel on raw arrays and a gradient in mxlite ops
(so it differentiates again). Comparisons give 0/1 masks, constant to autograd.
"""
import math


from ... import nd
from ...autograd import _state
from ...base import MXNetError, parse_float
from ..registry import register_op, Param, context_of_raw
from ..batchwise import rows
from ..tensor.elemwise_unary import UNARY, _softplus
from ..tensor import special

_SQRT2 = math.sqrt(2.0)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


def _mish(xp, x):
    return x * xp.tanh(_softplus(xp, x))


def _mish_grad(x, y, gy):
    t = nd.tanh(nd.Activation(x, act_type="softrelu"))
    return gy * (t + x * (1 - t * t) * nd.sigmoid(x))


# act_type: kernel(xp, x), gradient(x, y, gy): the unary ops' own rows where they exist
_ACTIVATIONS = {
    "relu": UNARY["relu"],
    "sigmoid": UNARY["sigmoid"],
    "tanh": UNARY["tanh"],
    "softrelu": (_softplus, lambda x, y, gy: gy * nd.sigmoid(x)),
    "softsign": UNARY["softsign"],
    "log_sigmoid": UNARY["log_sigmoid"],
    "mish": (_mish, _mish_grad),
}


def _act_compute(p, xp, x):
    fwd, _ = _ACTIVATIONS[p.act_type]
    return fwd(xp, x).astype(x.dtype, copy=False)


def _act_grad(p, x, y, gy, need):
    _, grad = _ACTIVATIONS[p.act_type]
    return [grad(x[0], y[0], gy[0])]


register_op("Activation", _act_compute, gradient=_act_grad,
            saves="xy",
            params=[Param("act_type", choices=_ACTIVATIONS,
                          doc="The activation; log_sigmoid and mish are mxlite's (MXNet 2's) "
                              "additions to MXNet 1.9.1's five.")],
            doc="Elementwise activation chosen by ``act_type``.", same_shape=(0,),
            unlisted="x", batchwise=rows())


# -- LeakyReLU -----------------------------------------------------------------------------

def _gelu(xp, x):
    return 0.5 * x * (1 + special.erf(xp, x / _SQRT2))


def _gelu_grad(x, gy):
    cdf = 0.5 * (1 + nd.erf(x / _SQRT2))
    return gy * (cdf + x * nd.exp(-0.5 * x * x) / _SQRT_2PI)


def _elu(xp, x, a):
    return xp.where(x > 0, x, a * xp.expm1(xp.minimum(x, 0)))


def _gamma_shape(x, gamma):
    """Broadcast shape of prelu's gamma: one slope per channel (axis 1), or one in all."""
    if gamma.size == 1:
        return (1,) * x.ndim
    if x.ndim < 2 or gamma.shape != (x.shape[1],):
        raise MXNetError("LeakyReLU: gamma has shape %s, expected (%s,) (one slope per channel "
                         "of data with shape %s) or (1,)"
                         % (tuple(gamma.shape), x.shape[1] if x.ndim > 1 else 1, tuple(x.shape)))
    return (1, -1) + (1,) * (x.ndim - 2)


def _leaky_compute(p, xp, x, gamma=None):
    if p.act_type == "rrelu":
        return _rrelu(p, xp, x)
    return _LEAKY[p.act_type](p, xp, x, gamma).astype(x.dtype, copy=False)


# act_type: kernel(p, xp, x, gamma); rrelu (two outputs) is _rrelu.
_LEAKY = {
    "leaky": lambda p, xp, x, gamma: xp.where(x > 0, x, x * p.slope),
    "prelu": lambda p, xp, x, gamma: xp.where(x > 0, x, x * gamma.reshape(_gamma_shape(x, gamma))),
    "elu": lambda p, xp, x, gamma: _elu(xp, x, p.slope),
    "selu": lambda p, xp, x, gamma: _SELU_LAMBDA * _elu(xp, x, _SELU_ALPHA),
    "gelu": lambda p, xp, x, gamma: _gelu(xp, x),
    "rrelu": None,
}


def _rrelu(p, xp, x):
    if _state.training:
        from ... import random
        gen = random.get_generator(context_of_raw(x))
        mask = gen.uniform(p.lower_bound, p.upper_bound, size=x.shape).astype(x.dtype)
    else:
        mask = xp.full(x.shape, (p.lower_bound + p.upper_bound) / 2, dtype=x.dtype)
    return xp.where(x > 0, x, x * mask).astype(x.dtype, copy=False), mask


def _leaky_grad(p, x, y, gy, need):
    data, g = x[0], gy[0]
    pos = data > 0
    neg = data <= 0
    t = p.act_type
    if t == "leaky":
        return [g * pos + g * neg * p.slope]
    if t == "prelu":
        gamma = x[1]
        gm = gamma.reshape(_gamma_shape(data, gamma))
        gx = g * pos + g * neg * gm
        gg = g * neg * data
        axes = tuple(i for i in range(data.ndim) if gamma.size == 1 or i != 1)
        return [gx, nd.sum(gg, axis=axes).reshape(gamma.shape)]
    if t == "elu":
        return [g * pos + g * neg * (y[0] + p.slope)]
    if t == "selu":
        return [g * pos * _SELU_LAMBDA + g * neg * (y[0] + _SELU_LAMBDA * _SELU_ALPHA)]
    if t == "gelu":
        return [_gelu_grad(data, g)]
    return [g * pos + g * neg * y[1]]    # rrelu: the drawn slopes


def _leaky_infer(p, shapes):
    """prelu's gamma, when unknown, is one slope per channel: shape (data.shape[1],)."""
    if p.act_type == "prelu" and len(shapes) == 2 and shapes[1] is None \
            and shapes[0] is not None and len(shapes[0]) > 1:
        shapes = [shapes[0], (shapes[0][1],)]
    return shapes


register_op("LeakyReLU", _leaky_compute, gradient=_leaky_grad, saves="xy", infer_shape=_leaky_infer,
            batchwise=rows("data", when=lambda p, shapes: p.act_type != "rrelu"),
            inputs=lambda p: ("data", "gamma") if p.act_type == "prelu" else ("data",),
            num_outputs=lambda p: 2 if p.act_type == "rrelu" else 1,
            params=[Param("act_type", None, "leaky", choices=_LEAKY),
                    Param("slope", parse_float, 0.25, "Negative slope (leaky) or alpha (elu)."),
                    Param("lower_bound", parse_float, 0.125, "rrelu: lowest random slope."),
                    Param("upper_bound", parse_float, 0.334, "rrelu: highest random slope.")],
            doc="Leaky rectifiers. ``rrelu`` draws a slope in ``[lower_bound, upper_bound]`` "
                "per element in training mode and uses their mean in predict mode; it returns "
                "the slopes as a second output.\n\n"
                "Differences from MXNet 1.9.1 (where its gradient disagrees with its own "
                "forward): the ``selu`` gradient for x <= 0 is ``y + lambda * alpha`` (MXNet "
                "gives ``lambda * (y + alpha)``), and the ``rrelu`` gradient in predict mode "
                "uses the slope ``(lower_bound + upper_bound) / 2`` (MXNet multiplies by the "
                "output instead).", same_shape=(0,))
