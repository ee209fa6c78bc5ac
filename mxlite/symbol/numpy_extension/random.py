"""``mx.sym.npx.random``: MXNet's extra samplers as graph nodes (scalar parameters)."""
from ...operator.registry import OPS
from ..register import op_call

__all__ = ["bernoulli", "normal_n", "uniform_n"]


def _sample(op, params, name):
    return op_call(OPS[op], [], {k: v for k, v in params.items() if v is not None}, name=name)


def normal_n(loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None, name=None):
    """Normal samples of shape ``batch_shape`` (``_random_normal``)."""
    return _sample("_random_normal", {"loc": loc, "scale": scale, "shape": batch_shape or (),
                                      "dtype": dtype}, name)


def uniform_n(low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None, name=None):
    """Uniform samples in [low, high) of shape ``batch_shape`` (``_random_uniform``)."""
    return _sample("_random_uniform", {"low": low, "high": high, "shape": batch_shape or (),
                                       "dtype": dtype}, name)


def bernoulli(prob=None, logit=None, size=None, dtype=None, ctx=None, name=None):
    """1 with probability ``prob`` (or ``sigmoid(logit)``), else 0."""
    import math
    if (prob is None) == (logit is None):
        raise ValueError("bernoulli: give exactly one of prob and logit")
    p = prob if prob is not None else 1.0 / (1.0 + math.exp(-logit))
    u = _sample("_random_uniform", {"shape": size or (), "dtype": dtype}, name)
    return op_call(OPS["_lesser_scalar"], [u], {"scalar": p})
