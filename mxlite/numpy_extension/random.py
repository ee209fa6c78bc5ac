"""``npx.random``: MXNet's extra samplers for np arrays."""
import numpy as onp

from .. import random as _random
from ..numpy.random import _ctx, _out, _size, _val

__all__ = ["bernoulli", "normal_n", "uniform_n", "seed"]


def seed(seed_state, ctx="all"):
    """Seed the generators (``mx.random.seed``)."""
    _random.seed(seed_state, ctx)


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """1 with probability ``prob`` (or ``sigmoid(logit)``), else 0 (float32)."""
    if (prob is None) == (logit is None):
        raise ValueError("bernoulli: give exactly one of prob and logit")
    p = _val(prob) if prob is not None else 1 / (1 + onp.exp(-onp.asarray(_val(logit))))
    c = _ctx(ctx, prob, logit)
    shape = _size(size) if size is not None else onp.shape(p)
    y = _random.get_generator(c).random(shape) < p
    return _out(y, dtype or onp.float32, c, out)


def _batch(size, *params):
    shape = onp.broadcast_shapes(*[onp.shape(_val(q)) for q in params])
    return (tuple(_size(size)) if size is not None else ()) + shape


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None):
    """Normal samples of shape ``batch_shape + broadcast(loc, scale).shape``."""
    c = _ctx(ctx, loc, scale)
    y = _random.get_generator(c).normal(_val(loc), _val(scale), _batch(batch_shape, loc, scale))
    return _out(y, dtype or onp.float32, c)


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None):
    """Uniform samples of shape ``batch_shape + broadcast(low, high).shape``."""
    c = _ctx(ctx, low, high)
    y = _random.get_generator(c).uniform(_val(low), _val(high), _batch(batch_shape, low, high))
    return _out(y, dtype or onp.float32, c)
