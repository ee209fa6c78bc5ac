"""Densities of samples: ``random_pdf_<dist>(sample, *params, is_log=False)``.

As in MXNet, the parameter arrays (all of one shape) match the leading axes of
``sample``: each distribution gets the samples along the remaining trailing axes,
and the output has the shape of ``sample``. Dirichlet samples are vectors (the last
axis, of the length of ``alpha``'s last axis), so its output drops that axis (a
single vector sample gives shape (1,)). The formulas are MXNet's, term by term
(``gamma`` takes a rate ``beta``, ``negative_binomial`` the *failure* probability
``p``), with no check that a sample lies in the support (the uniform density is
``1 / (high - low)`` everywhere).

Gradients w.r.t. the samples and the parameters are MXNet's formulas written with
mxlite ops (a parameter's gradient is summed over its samples), so they can be
differentiated again, except through the digamma terms (``_digamma`` has no
gradient). MXNet gives discrete samples (poisson, negative binomials) and uniform
samples a zero gradient; so does mxlite.
"""
import math

import numpy as np

from ... import nd
from ...base import MXNetError, parse_bool
from ..registry import register_op, Param
from . import special

_IS_LOG = Param("is_log", parse_bool, False,
                "If set, compute the log of the density instead of the density.")


# -- shapes -----------------------------------------------------------------------------

def _param_shape(x_shape, ndim, vector):
    """The parameter shape that a sample shape asks for (``ndim``: the parameters')."""
    if vector:
        return tuple(x_shape[:ndim - 1]) + (x_shape[-1],)
    return tuple(x_shape[:ndim])


def _check_shapes(names, shapes, vector):
    x_shape, p_shapes = tuple(shapes[0]), [tuple(s) for s in shapes[1:]]
    for name, s in zip(names[2:], p_shapes[1:]):
        if s != p_shapes[0]:
            raise MXNetError("%s has shape %s, expected %s (the shape of %s): the parameters "
                             "must all have one shape" % (name, s, p_shapes[0], names[1]))
    ndim = len(p_shapes[0])
    if ndim > len(x_shape) or (vector and ndim == 0):
        raise MXNetError("sample has %d dimensions, expected at least %d (those of %s, shape "
                         "%s)" % (len(x_shape), ndim, names[1], p_shapes[0]))
    want = _param_shape(x_shape, ndim, vector)
    if p_shapes[0] != want:
        raise MXNetError("%s has shape %s, expected %s: the parameters must match the leading "
                         "axes of sample (shape %s)%s"
                         % (names[1], p_shapes[0], want, x_shape,
                            ", and the last one, the length of a vector sample" if vector
                            else ""))
    if vector:
        return x_shape[:-1] if len(x_shape) > 1 else (1,)
    return x_shape


def _expand(shape, x_ndim, vector):
    """The shape that broadcasts parameters of ``shape`` against the samples."""
    if vector:
        return tuple(shape[:-1]) + (1,) * (x_ndim - len(shape)) + tuple(shape[-1:])
    return tuple(shape) + (1,) * (x_ndim - len(shape))


# -- densities on raw arrays (MXNet's formulas) -------------------------------------------

def _lgamma(xp, v):
    return special.gammaln(xp, v)


def _uniform(xp, is_log, x, low, high):
    d = high - low
    out = -xp.log(d) if is_log else 1 / d
    return xp.broadcast_to(out, x.shape)


def _normal(xp, is_log, x, mu, sigma):
    e = -0.5 * (x - mu) * (x - mu) / (sigma * sigma)
    norm = math.sqrt(2 * math.pi) * sigma
    return e - xp.log(norm) if is_log else xp.exp(e) / norm


def _gamma(xp, is_log, x, alpha, beta):
    lp = alpha * xp.log(beta) + (alpha - 1) * xp.log(x) - beta * x - _lgamma(xp, alpha)
    return lp if is_log else xp.exp(lp)


def _exponential(xp, is_log, x, lam):
    return xp.log(lam) - lam * x if is_log else lam * xp.exp(-lam * x)


def _poisson(xp, is_log, x, lam):
    lp = x * xp.log(lam) - _lgamma(xp, x + 1) - lam
    return lp if is_log else xp.exp(lp)


def _nb_logpdf(xp, x, k, p):
    return (_lgamma(xp, x + k) - _lgamma(xp, x + 1) - _lgamma(xp, k)
            + k * xp.log(p) + x * xp.log(1 - p))


def _negative_binomial(xp, is_log, x, k, p):
    lp = _nb_logpdf(xp, x, k, p)
    return lp if is_log else xp.exp(lp)


def _generalized_negative_binomial(xp, is_log, x, mu, alpha):
    lp = _nb_logpdf(xp, x, 1 / alpha, 1 / (mu * alpha + 1))
    return lp if is_log else xp.exp(lp)


def _dirichlet(xp, is_log, x, alpha):
    lp = (xp.sum((alpha - 1) * xp.log(x), axis=-1)
          + _lgamma(xp, xp.sum(alpha, axis=-1)) - xp.sum(_lgamma(xp, alpha), axis=-1))
    return lp if is_log else xp.exp(lp)


# -- gradients with mxlite ops (MXNet's formulas) -----------------------------------------

def _psi(v):
    return nd._internal._digamma(v)


def _g_uniform(x, low, high, s):
    return [nd.zeros_like(x), s / (high - low), s / (low - high)]


def _g_normal(x, mu, sigma, s):
    d = x - mu
    s2 = sigma * sigma
    return [-s * d / s2, s * d / s2, s * (d * d - s2) / (s2 * sigma)]


def _g_gamma(x, alpha, beta, s):
    return [s * ((alpha - 1) / x - beta), s * (nd.log(beta) + nd.log(x) - _psi(alpha)),
            s * (alpha / beta - x)]


def _g_exponential(x, lam, s):
    return [-s * lam, s * (1 / lam - x)]


def _g_poisson(x, lam, s):
    return [nd.zeros_like(x), s * (x / lam - 1)]


def _nb_grads(x, k, p, s):
    return s * (_psi(x + k) - _psi(k) + nd.log(p)), s * (k / p - x / (1 - p))


def _g_negative_binomial(x, k, p, s):
    return [nd.zeros_like(x)] + list(_nb_grads(x, k, p, s))


def _g_generalized_negative_binomial(x, mu, alpha, s):
    den = mu * alpha + 1
    gk, gp = _nb_grads(x, 1 / alpha, 1 / den, s)
    return [nd.zeros_like(x), -gp * alpha / (den * den),
            -gk / (alpha * alpha) - gp * mu / (den * den)]


def _g_dirichlet(x, alpha, s):
    total = nd.sum(alpha, axis=-1, keepdims=True)
    return [s * (alpha - 1) / x, s * (nd.log(x) + _psi(total) - _psi(alpha))]


# -- registration ----------------------------------------------------------------------------

def _make(dist, params, density, grads, vector, doc):
    names = ("sample",) + params

    def compute(p, xp, x, *ps):
        for name, v in zip(names, (x,) + ps):
            if v.dtype.kind != "f":
                raise MXNetError("%s must be floating point, got %s" % (name, v.dtype))
            if v.dtype != x.dtype:
                raise MXNetError("%s has dtype %s, expected %s (the dtype of sample)"
                                 % (name, v.dtype, x.dtype))
        out_shape = _check_shapes(names, [x.shape] + [v.shape for v in ps], vector)
        ps = [v.reshape(_expand(v.shape, x.ndim, vector)) for v in ps]
        # NOTE: no support checks, as MXNet: log(0) and the like give inf/nan quietly.
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            y = density(xp, p.is_log, x, *ps)
        return xp.ascontiguousarray(y, dtype=x.dtype).reshape(out_shape)

    def infer_shape(p, shapes):
        if any(s is None or 0 in s for s in shapes):
            return shapes
        return shapes, [_check_shapes(names, shapes, vector)]

    def gradient(p, x, y, gy, need):
        xs, ps = x[0], x[1:]
        s = gy[0] if p.is_log else gy[0] * y[0]
        if vector:      # one scaling per vector sample, broadcast over its entries
            s = s.reshape(xs.shape[:-1] + (1,))
        ex = [v.reshape(_expand(v.shape, xs.ndim, vector)) for v in ps]
        gs = grads(xs, *ex, s)
        return [gs[0]] + [_sum_to(g, v.shape, xs.ndim, vector) for g, v in zip(gs[1:], ps)]

    register_op("_random_pdf_" + dist, compute, inputs=names, params=[_IS_LOG],
                gradient=gradient, saves="xy", infer_shape=infer_shape,
                aliases=("random_pdf_" + dist,), doc=doc)


def _sum_to(g, shape, x_ndim, vector):
    """Sum a gradient over the samples of each distribution (the broadcast axes)."""
    nd_ = len(shape)
    axes = tuple(range(nd_ - 1, x_ndim - 1)) if vector else tuple(range(nd_, x_ndim))
    if axes:
        g = nd.sum(g, axis=axes)
    return g.reshape(shape)


_TABLE = [
    ("uniform", ("low", "high"), _uniform, _g_uniform, False,
     "Density of uniform distributions on ``[low, high)``: ``1 / (high - low)``."),
    ("normal", ("mu", "sigma"), _normal, _g_normal, False,
     "Density of normal distributions with means ``mu`` and standard deviations ``sigma``."),
    ("gamma", ("alpha", "beta"), _gamma, _g_gamma, False,
     "Density of gamma distributions with shapes ``alpha`` and *rates* ``beta``."),
    ("exponential", ("lam",), _exponential, _g_exponential, False,
     "Density of exponential distributions with rates ``lam``."),
    ("poisson", ("lam",), _poisson, _g_poisson, False,
     "Probability of Poisson distributions with rates ``lam`` (samples are counts)."),
    ("negative_binomial", ("k", "p"), _negative_binomial, _g_negative_binomial, False,
     ("Probability of negative binomial distributions with failure limits ``k`` and "
      "failure probabilities ``p``.")),
    ("generalized_negative_binomial", ("mu", "alpha"), _generalized_negative_binomial,
     _g_generalized_negative_binomial, False,
     ("Probability of generalized negative binomial distributions with means ``mu`` and "
      "dispersions ``alpha`` (``k = 1 / alpha``, ``p = 1 / (mu * alpha + 1)``).")),
    ("dirichlet", ("alpha",), _dirichlet, _g_dirichlet, True,
     ("Density of Dirichlet distributions with concentrations ``alpha`` (last axis); "
      "the samples are vectors along the last axis.")),
]

for _dist, _params, _density, _grads, _vector, _doc in _TABLE:
    _make(_dist, _params, _density, _grads, _vector, _doc)
