"""Random sampling ops: ``_random_*`` (scalar parameters), ``_sample_*`` (one
distribution per element of NDArray parameters), ``_random_*_like``,
``_random_randint``, ``_sample_multinomial`` and ``_shuffle``.

Every kernel draws from ``mxlite.random.get_generator(ctx)``, so
``mx.random.seed(n)`` makes runs repeat exactly. Ops without inputs know their
context from ``p.ctx`` (the current context when None, as :func:`invoke`
does); ops with inputs use the generator of the inputs' device: CPU contexts
share one generator (as in MXNet, where every ``cpu(i)`` draws from one CPU
resource), each GPU has its own.

A distribution is one row of ``_DISTRIBUTIONS``: its parameter names and
defaults for the scalar op, the input names of the ``_sample_`` op, a ``draw``
function and a parameter check. Samples are drawn in float64 and cast.
"""
import math

import numpy as np

from ...base import (MXNetError, parse_shape, parse_float, parse_int, parse_bool, optional,
                     np_dtype)
from ...context import current_context
from ..registry import register_op, Param, dtypes
from ..util import generator_of, host, zeros_grad, fits_memory
from .elemwise_unary import _parse_ctx

_FLOATS = ("float16", "float32", "float64")


def _dtype_parser(choices):
    allowed = tuple(np.dtype(c) for c in choices)

    def parse(v):
        if v is None or (isinstance(v, str) and v.strip() in ("None", "")):
            return None
        dt = np_dtype(v, "dtype")
        if dt not in allowed:
            raise ValueError("expected one of None, %s" % ", ".join(choices))
        return dt
    parse.__name__ = "parse_dtype"
    return parse


# -- generators ---------------------------------------------------------------

def _generator_for(xp, arrays=(), ctx=None):
    """The generator of ``ctx`` or, for ops with inputs, of the inputs' device."""
    if ctx is None and arrays:
        return generator_of(arrays[0])
    from ... import random as _random
    return _random.get_generator(ctx if ctx is not None else current_context())


# -- distributions ------------------------------------------------------------
# ``draw(g, xp, size, *params)``: float64 samples of ``size``; params are floats
# or arrays broadcastable to ``size``.

def _draw_uniform(g, xp, size, low, high):
    return low + (high - low) * g.random(size)


def _draw_normal(g, xp, size, loc, scale):
    return loc + scale * g.standard_normal(size)


def _draw_gamma(g, xp, size, alpha, beta):
    return g.standard_gamma(alpha, size) * beta


def _draw_exponential(g, xp, size, lam):
    return g.standard_exponential(size) / lam


def _draw_poisson(g, xp, size, lam):
    return xp.asarray(g.poisson(lam, size), np.float64)


def _draw_negative_binomial(g, xp, size, k, p):
    # NOTE: a gamma-Poisson mixture, as MXNet samples it; p == 1 gives rate 0.
    # (xp.asarray: for size () NumPy's samplers return a Python scalar)
    return xp.asarray(g.poisson(g.standard_gamma(k, size) * ((1.0 - p) / p)), np.float64)


def _draw_generalized_negative_binomial(g, xp, size, mu, alpha):
    # alpha == 0 is the Poisson limit; guard the 1/alpha of those entries.
    if np.isscalar(alpha):
        lam = (g.standard_gamma(1.0 / alpha, size) * (alpha * mu) if alpha > 0
               else xp.full(size, mu, dtype=np.float64))
    else:
        pos = alpha > 0
        safe = xp.where(pos, alpha, 1.0)
        lam = g.standard_gamma(1.0 / safe, size) * (safe * mu)
        lam = xp.where(pos, lam, xp.broadcast_to(xp.asarray(mu, dtype=np.float64), size))
    return xp.asarray(g.poisson(lam), np.float64)


def _all(xp, cond):
    return bool(cond) if np.isscalar(cond) or isinstance(cond, bool) else bool(xp.all(cond))


def _check(xp, ok, msg):
    if not _all(xp, ok):
        raise MXNetError(msg)


def _check_uniform(xp, low, high):
    _check(xp, high >= low, "low must be less or equal to high in uniform distribution")


def _check_normal(xp, loc, scale):
    _check(xp, scale > 0, "scale parameter in gaussian has to be positive")


def _check_gamma(xp, alpha, beta):
    _check(xp, (alpha > 0) & (beta > 0) if not np.isscalar(alpha) else alpha > 0 and beta > 0,
           "alpha and beta parameters in gamma distribution have to be positive")


def _check_exponential(xp, lam):
    _check(xp, lam > 0, "lambda parameter in exponential distribution has to be positive")


def _check_poisson(xp, lam):
    _check(xp, lam >= 0, "lambda parameter in poisson distribution has to be non-negative")


def _check_negative_binomial(xp, k, p):
    ok = (k > 0) & (p > 0) & (p <= 1) if not np.isscalar(p) else k > 0 and 0 < p <= 1
    _check(xp, ok, "negative binomial needs k > 0 and p in (0, 1]")


def _check_generalized_negative_binomial(xp, mu, alpha):
    ok = (mu >= 0) & (alpha >= 0) if not np.isscalar(mu) else mu >= 0 and alpha >= 0
    _check(xp, ok, "generalized negative binomial needs mu >= 0 and alpha >= 0")


# name: (scalar params [(name, parser, default)], sample-op input names, draw, check, doc)
_DISTRIBUTIONS = {
    "uniform": ([("low", parse_float, 0.0), ("high", parse_float, 1.0)], ("low", "high"),
                _draw_uniform, _check_uniform, "uniform distribution on [low, high)"),
    "normal": ([("loc", parse_float, 0.0), ("scale", parse_float, 1.0)], ("mu", "sigma"),
               _draw_normal, _check_normal, "normal distribution with mean loc and std scale"),
    "gamma": ([("alpha", parse_float, 1.0), ("beta", parse_float, 1.0)], ("alpha", "beta"),
              _draw_gamma, _check_gamma, "gamma distribution with shape alpha and scale beta"),
    "exponential": ([("lam", parse_float, 1.0)], ("lam",), _draw_exponential,
                    _check_exponential, "exponential distribution with rate lam"),
    "poisson": ([("lam", parse_float, 1.0)], ("lam",), _draw_poisson, _check_poisson,
                "Poisson distribution with rate lam"),
    "negative_binomial": ([("k", parse_int, 1), ("p", parse_float, 1.0)], ("k", "p"),
                          _draw_negative_binomial, _check_negative_binomial,
                          "negative binomial distribution (k failures, success probability p)"),
    "generalized_negative_binomial": (
        [("mu", parse_float, 1.0), ("alpha", parse_float, 1.0)], ("mu", "alpha"),
        _draw_generalized_negative_binomial, _check_generalized_negative_binomial,
        "generalized negative binomial distribution with mean mu and dispersion alpha"),
}


def _finish(xp, y, dtype, high=None):
    """Cast float64 samples to ``dtype``; keep uniform samples below ``high``."""
    y = y.astype(dtype)
    if high is not None:
        # NOTE: rounding to float32/float16 can turn a value just below high
        # into high itself; MXNet's interval is half-open.
        y = xp.minimum(y, np.nextafter(dtype.type(high), dtype.type(-np.inf)))
    return y


def _require_shape(shape):
    if not shape:
        raise MXNetError("shape is required and must not be empty (got %s)" % (shape,))
    return shape


def _make_random(name, pnames, draw, check):
    def compute(p, xp):
        vals = [getattr(p, n) for n in pnames]
        check(xp, *vals)
        g = _generator_for(xp, ctx=p.ctx or current_context())
        y = draw(g, xp, _require_shape(p.shape), *vals)
        return _finish(xp, y, p.dtype or np.dtype(np.float32),
                       high=p.high if name == "uniform" and p.high > p.low else None)
    return compute


def _make_sample(name, draw, check):
    def compute(p, xp, *params):
        shape0 = params[0].shape
        for q in params[1:]:
            if q.shape != shape0:
                raise MXNetError("all distribution parameters must have the same shape; got %s "
                                 "and %s" % (shape0, q.shape))
        check(xp, *params)
        size = shape0 + tuple(p.shape)
        expand = shape0 + (1,) * len(p.shape)
        vals = [q.astype(np.float64).reshape(expand) for q in params]
        g = _generator_for(xp, params)
        y = draw(g, xp, size, *vals)
        dtype = p.dtype or np.dtype(np.float32)
        y = _finish(xp, y, dtype)
        if name == "uniform":      # see _finish: keep samples below high
            top = xp.nextafter(vals[1].astype(dtype), xp.asarray(-np.inf, dtype=dtype))
            y = xp.where((y >= vals[1]) & (vals[1] > vals[0]), top, y).astype(dtype)
        return y
    return compute


def _make_like(name, pnames, draw, check):
    def compute(p, xp, x):
        vals = [getattr(p, n) for n in pnames]
        check(xp, *vals)
        g = _generator_for(xp, (x,))
        y = draw(g, xp, x.shape, *vals)
        return _finish(xp, y, x.dtype,
                       high=p.high if name == "uniform" and p.high > p.low else None)
    return compute


_CTX = Param("ctx", optional(_parse_ctx), None, "The device; the current context if None.")
_FLOAT_DTYPE = Param("dtype", _dtype_parser(_FLOATS), None,
                     "Output type: float16, float32 or float64 (None: float32).")


def _out_dtype(p, dtypes):
    return p.dtype or np.dtype(np.float32)


def _shape_of_params(p, shapes):
    if any(s is None for s in shapes):
        return shapes
    return shapes, [tuple(shapes[0]) + tuple(p.shape)]


_LEGACY = {"uniform": ("uniform", "random_uniform"), "normal": ("normal", "random_normal")}


def _samples_fit():
    # the draws are float64 (8 bytes) before the cast: the memory they need
    return fits_memory("shape", lambda p, *x: x[0].size * math.prod(p.shape) * 8)


def _register_distribution(name, spec):
    params, sample_inputs, draw, check, what = spec
    pnames = [n for n, _, _ in params]
    scalar = [Param(n, parse, d, "Parameter %r of the %s." % (n, what)) for n, parse, d in params]
    register_op(
        "_random_" + name, _make_random(name, pnames, draw, check), inputs=(),
        params=scalar + [Param("shape", parse_shape, (), "Shape of the output.", low=0), _CTX,
                         _FLOAT_DTYPE],
        aliases=_LEGACY.get(name, ("random_" + name,)), infer_type=_out_dtype,
        check=fits_memory("shape", lambda p: math.prod(p.shape) * 8),
        infer_shape=lambda p, shapes: ([], [tuple(p.shape)]),
        doc="Draw samples from the %s (scalar parameters)." % what)
    register_op(
        "_sample_" + name, _make_sample(name, draw, check), inputs=sample_inputs,
        params=[Param("shape", parse_shape, (), "Samples drawn per parameter element.",
                      low=0),
                _FLOAT_DTYPE],
        aliases=("sample_" + name,), gradient=zeros_grad, saves="", infer_type=_out_dtype,
        check=_samples_fit(),
        infer_shape=_shape_of_params,
        doc="Draw samples from the %s, one distribution per element of the parameter "
            "arrays; the output shape is the parameters' shape + ``shape``." % what)
    register_op(
        "_random_%s_like" % name, _make_like(name, pnames, draw, check), inputs=("data",),
        params=list(scalar), gradient=zeros_grad, saves="",
        check=dtypes(data="f"),     # as MXNet: "only support floating point types"
        infer_shape=lambda p, shapes: shapes if shapes[0] is None else (shapes, [shapes[0]]),
        doc="Draw samples from the %s with the shape and dtype of ``data``." % what)


for _name, _spec in _DISTRIBUTIONS.items():
    _register_distribution(_name, _spec)


# -- randint ------------------------------------------------------------------

def _randint(p, xp):
    if p.high <= p.low:
        raise MXNetError("low must be less than high in randint distribution (got low=%d, "
                         "high=%d)" % (p.low, p.high))
    g = _generator_for(xp, ctx=p.ctx or current_context())
    dtype = p.dtype or np.dtype(np.int32)
    info = np.iinfo(dtype)
    if p.low < info.min or p.high - 1 > info.max:
        raise MXNetError("[low, high) = [%d, %d) does not fit %s" % (p.low, p.high, dtype))
    return g.integers(p.low, p.high, size=_require_shape(p.shape), dtype=np.int64).astype(dtype)


register_op("_random_randint", _randint, inputs=(),
            check=fits_memory("shape", lambda p: math.prod(p.shape) * 8),
            params=[Param("low", parse_int, doc="Smallest value (inclusive)."),
                    Param("high", parse_int, doc="Largest value (exclusive)."),
                    Param("shape", parse_shape, (), "Shape of the output.", low=0), _CTX,
                    Param("dtype", _dtype_parser(("int32", "int64")), None,
                          "Output type: int32 or int64 (None: int32).")],
            aliases=("random_randint",), infer_type=lambda p, d: p.dtype or np.dtype(np.int32),
            infer_shape=lambda p, shapes: ([], [tuple(p.shape)]),
            doc="Draw integers uniformly from [low, high).")


# -- unique log-uniform samples (sampled softmax) -----------------------------------

def _unique_zipfian(p, xp):
    """Per row, ``num_sampled`` distinct classes from the log-uniform distribution
    ``P(c) = (log(c + 2) - log(c + 1)) / log(range_max + 1)``, and the draws it took."""
    shape = tuple(p.shape) if p.shape else ()
    if len(shape) != 2:
        raise MXNetError("shape must be 2-D (batch_size, num_sampled), got %s" % (shape,))
    batch, k = shape
    if not 0 <= k <= p.range_max:
        raise MXNetError("cannot draw %d distinct classes from range_max=%d" % (k, p.range_max))
    g = _generator_for(xp, ctx=current_context())
    log_range = math.log(p.range_max + 1)
    samples = np.empty(shape, np.int64)
    tries = np.zeros(batch, np.int64)
    for row in range(batch):
        draws = np.empty(0, np.int64)
        while True:
            # floor(e^(u log(R + 1))) - 1 for u in [0, 1) is class c with probability P(c)
            more = np.exp(host(g.random(max(2 * k, 16))) * log_range).astype(np.int64) - 1
            draws = np.concatenate([draws, np.minimum(more, p.range_max - 1)])
            first = np.sort(np.unique(draws, return_index=True)[1])
            if len(first) >= k:
                break
        samples[row] = draws[first[:k]]
        tries[row] = first[k - 1] + 1 if k else 0
    return xp.asarray(samples), xp.asarray(tries)


register_op("_sample_unique_zipfian", _unique_zipfian, inputs=(), num_outputs=2,
            params=[Param("range_max", parse_int, doc="The number of classes."),
                    Param("shape", parse_shape, (), "(batch_size, num_sampled).", low=0)],
            infer_type=lambda p, d: [np.dtype(np.int64)] * 2,
            infer_shape=lambda p, shapes: ([], [tuple(p.shape), tuple(p.shape[:1])]),
            doc="Draw ``num_sampled`` distinct classes per row from an approximately "
                "log-uniform (Zipfian) distribution over [0, range_max), and the number of "
                "draws each row took (for sampled softmax).")


# -- multinomial --------------------------------------------------------------

def _multinomial(p, xp, probs):
    if probs.ndim < 1 or probs.shape[-1] == 0:
        raise MXNetError("data must have a non-empty last axis of probabilities, got shape %s"
                         % (probs.shape,))
    k = probs.shape[-1]
    batch = probs.shape[:-1]
    n = int(np.prod(p.shape)) if p.shape else 1
    flat = probs.reshape(-1, k).astype(np.float64)
    g = _generator_for(xp, (probs,))
    u = g.random((flat.shape[0], n))
    # Inverse CDF, as MXNet: the first index whose running sum exceeds u; mass
    # missing from an unnormalised row goes to the last outcome.
    cdf = xp.cumsum(flat, axis=1)
    idx = xp.minimum((u[:, :, None] >= cdf[:, None, :]).sum(axis=2), k - 1)
    out_shape = batch + tuple(p.shape)
    if not out_shape:
        out_shape = (1,)
    y = idx.reshape(out_shape).astype(p.dtype)
    if not p.get_prob:
        return y
    logp = xp.log(xp.take_along_axis(flat, idx, axis=1)).astype(probs.dtype)
    return y, logp.reshape(out_shape)


def _multinomial_grad(p, x, y, gy, need):
    from ... import nd
    probs = x[0]
    if not p.get_prob or gy[1] is None:
        return [nd.zeros_like(probs)]
    k = probs.shape[-1]
    lead = probs.shape[:-1] if probs.ndim > 1 else ()
    idx = nd.reshape(y[0], shape=lead + (-1,))
    g = nd.reshape(gy[1], shape=lead + (-1,))
    # d log p[i] / d p[i] = 1 / p[i], summed over the samples that drew i.
    acc = nd.sum(nd.one_hot(idx, depth=k, dtype=probs.dtype) * nd.expand_dims(g, axis=-1),
                 axis=-2)
    acc = nd.reshape(acc, shape=probs.shape)
    safe = nd.where(acc == 0, nd.ones_like(probs), probs)
    return [acc / safe]


register_op("_sample_multinomial", _multinomial, inputs=("data",),
            check=fits_memory("shape", lambda p, x: math.prod(x.shape[:-1]) * math.prod(p.shape) * 8),
            params=[Param("shape", parse_shape, (), "Samples drawn per distribution.", low=0),
                    Param("get_prob", parse_bool, False,
                          "Also return the log-probability of each sample."),
                    Param("dtype", _dtype_parser(("float16", "float32", "float64", "int32",
                                                  "uint8")), np.dtype(np.int32),
                          "Type of the sampled indices.")],
            num_outputs=lambda p: 2 if p.get_prob else 1, gradient=_multinomial_grad,
            aliases=("sample_multinomial",),
            infer_type=lambda p, d: [p.dtype, d[0]] if p.get_prob else [p.dtype],
            infer_shape=lambda p, s: s if s[0] is None else (
                s, [(tuple(s[0][:-1]) + tuple(p.shape)) or (1,)] * (2 if p.get_prob else 1)),
            doc="Draw indices from the categorical distributions on the last axis of ``data``.")


# -- shuffle ------------------------------------------------------------------

def _shuffle(p, xp, x):
    if x.ndim == 0 or x.shape[0] <= 1:
        return x.copy(), xp.arange(x.shape[0] if x.ndim else 1, dtype=np.int64)
    g = _generator_for(xp, (x,))
    # argsort of uniforms: a permutation with the API NumPy and CuPy generators share.
    perm = xp.argsort(g.random(x.shape[0]))
    # The second (hidden) output is the inverse permutation, for the gradient.
    return x[perm], xp.argsort(perm).astype(np.int64)


def _shuffle_grad(p, x, y, gy, need):
    from ... import nd
    if x[0].ndim == 0:
        return [gy[0]]
    return [nd.take(gy[0], y[1], axis=0)]


register_op("_shuffle", _shuffle, inputs=("data",), num_outputs=2, num_visible_outputs=1,
            gradient=_shuffle_grad, saves="y", aliases=("shuffle",),
            infer_type=lambda p, d: [d[0], np.dtype(np.int64)],
            infer_shape=lambda p, s: s if s[0] is None else (s, [s[0], tuple(s[0][:1]) or (1,)]),
            doc="A copy of ``data`` with its first axis randomly permuted. (MXNet gives no "
                "gradient for this op; mxlite routes the gradient back through the "
                "permutation.)")
