"""``mx.np.random``: NumPy's samplers on mxlite's random state.

Draws come from the generator ``mx.random.seed`` resets, so np and nd samplers share
one seed. Float samplers give float32 unless ``dtype``; integer ones int64 (as MXNet).
"""
import numpy as onp

from ..context import current_context
from ..nd.ndarray import NDArray
from .. import random as _random
from ..operator.util import host

__all__ = ["normal", "uniform", "randint", "randn", "rand", "multinomial", "choice",
           "shuffle", "gamma", "beta", "chisquare", "exponential", "gumbel", "logistic",
           "lognormal", "laplace", "multivariate_normal", "pareto", "power", "rayleigh",
           "weibull", "seed"]

F32 = onp.dtype(onp.float32)


def seed(seed_state, ctx="all"):
    """Seed the generators (``mx.random.seed``)."""
    _random.seed(seed_state, ctx)


def _val(x):
    return x._data if isinstance(x, NDArray) else x


def _ctx(ctx, *args):
    if ctx is not None:
        return ctx
    for a in args:
        if isinstance(a, NDArray):
            return a.ctx
    return current_context()


def _out(y, dtype, ctx, out=None):
    from ._creation import array
    res = array(y if hasattr(y, "__cuda_array_interface__") else onp.asarray(y), dtype=dtype,
                ctx=ctx)     # (a NumPy sampler gives a Python scalar for size None)
    if out is not None:
        out[...] = res
        return out
    return res


def _size(size):
    if size is None or isinstance(size, tuple):
        return size
    if isinstance(size, list):
        return tuple(size)
    return (int(size),)


def _sampler(name, params, float_out=True):
    names = params + ("size", "dtype", "ctx", "out")

    def fn(*args, **kwargs):
        if len(args) > len(names):
            raise TypeError("%s() takes at most %d arguments (%d given)"
                            % (name, len(names), len(args)))
        vals = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names or k in vals:
                raise TypeError("%s() got an unexpected or repeated argument %r" % (name, k))
            vals[k] = v
        size, dtype, ctx, out = (vals.pop(k, None) for k in names[-4:])
        c = _ctx(ctx, *vals.values())
        gen = _random.get_generator(c)
        y = getattr(gen, name)(**{k: _val(v) for k, v in vals.items()}, size=_size(size))
        dt = dtype if dtype is not None else (F32 if float_out else onp.int64)
        return _out(y, dt, c, out)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = ("Samples of NumPy's ``random.%s(%s, size)``, as %s arrays."
                  % (name, ", ".join(params), "float32" if float_out else "int64"))
    return fn


normal = _sampler("normal", ("loc", "scale"))
uniform = _sampler("uniform", ("low", "high"))
gamma = _sampler("gamma", ("shape", "scale"))
beta = _sampler("beta", ("a", "b"))
chisquare = _sampler("chisquare", ("df",))
exponential = _sampler("exponential", ("scale",))
gumbel = _sampler("gumbel", ("loc", "scale"))
logistic = _sampler("logistic", ("loc", "scale"))
lognormal = _sampler("lognormal", ("mean", "sigma"))
laplace = _sampler("laplace", ("loc", "scale"))
pareto = _sampler("pareto", ("a",))
power = _sampler("power", ("a",))
rayleigh = _sampler("rayleigh", ("scale",))
weibull = _sampler("weibull", ("a",))


def randint(low, high=None, size=None, dtype=None, ctx=None, out=None):
    """Integers from [low, high) (int64 unless ``dtype``)."""
    if high is None:
        low, high = 0, low
    c = _ctx(ctx)
    y = _random.get_generator(c).integers(low, high, size=_size(size))
    return _out(y, onp.int64 if dtype is None else dtype, c, out)


def randn(*size, **kwargs):
    """Standard normal samples of shape ``size`` (float32)."""
    return normal(0.0, 1.0, size=size or None, **kwargs)


def rand(*size, **kwargs):
    """Uniform samples from [0, 1) of shape ``size`` (float32)."""
    return uniform(0.0, 1.0, size=size or None, **kwargs)


def multinomial(n, pvals, size=None):
    """Counts of ``n`` draws over categories with probabilities ``pvals`` (int64)."""
    c = current_context()
    p = host(_val(pvals)).astype(onp.float64)
    if p.size == 0:         # no categories: an empty sample of the requested batch shape
        shape = (() if size is None else _size(size)) + (0,)
        return _out(onp.zeros(shape, onp.int64), onp.int64, c)
    total = p.sum()
    if total > 1.0 and total - 1.0 < 1e-5:      # float32 rounding of probabilities
        p = p / total
    y = _random.get_generator(c).multinomial(n, p, size=_size(size))
    return _out(y, onp.int64, c)


def multivariate_normal(mean, cov, size=None, check_valid=None, tol=None):
    """Samples of a multivariate normal distribution (float32)."""
    c = _ctx(None, mean, cov)
    y = _random.get_generator(c).multivariate_normal(_val(mean), _val(cov), size=_size(size))
    return _out(y, F32, c)


def choice(a, size=None, replace=True, p=None, ctx=None, out=None):
    """Samples from ``a`` (an array, or ``arange(a)`` for an int)."""
    c = _ctx(ctx, a, p)
    src = _val(a)
    y = _random.get_generator(c).choice(src, size=_size(size), replace=replace, p=_val(p))
    dt = onp.int64 if isinstance(src, (int, onp.integer)) else onp.asarray(src).dtype
    return _out(y, dt, c, out)


def shuffle(x):
    """Shuffle ``x`` in place along its first axis."""
    data = x.asnumpy()
    _random.get_generator(x.ctx).shuffle(data)
    x[...] = data
