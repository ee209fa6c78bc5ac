"""``mx.random``: the global random state (``seed``) and the samplers.

Every sampler draws from one generator per device: one NumPy ``Generator``
shared by all CPU contexts (as in MXNet, where ``cpu(0)`` and ``cpu(1)`` draw
from the same CPU random resource) and one CuPy generator per GPU.
``seed(n)`` resets them, so runs repeat exactly.

>>> mx.random.seed(42); a = mx.random.uniform(shape=(2,))
>>> mx.random.seed(42); b = mx.random.uniform(shape=(2,))
>>> bool((a == b).min())
True
"""
import numpy as np

from .context import Context
from .nd.random import (uniform, normal, randn, randint, poisson, exponential,  # noqa: F401
                        gamma, negative_binomial, generalized_negative_binomial, multinomial,
                        shuffle)

__all__ = ["seed", "get_generator", "uniform", "normal", "randn", "randint", "poisson",
           "exponential", "gamma", "negative_binomial", "generalized_negative_binomial",
           "multinomial", "shuffle"]

_generators = {}       # device key -> generator
_seed_value = None     # the last seed(n) for all devices; None: fresh entropy


def _key(ctx):
    return ("gpu", ctx.device_id) if ctx.device_typeid == 2 else ("cpu", 0)


def _make(ctx, s):
    xp = ctx.xp or ctx.array_module()
    return np.random.default_rng(s) if xp is np else _DeviceGenerator(xp, s)


class _DeviceGenerator:
    """A GPU's generator with the methods of NumPy's ``Generator`` that mxlite's
    samplers call. CuPy's own ``Generator`` lacks most distributions (``normal``,
    ``uniform``, ``permutation``, ...), its ``RandomState`` has them all: the draws
    come from that, under the Generator's names."""
    __slots__ = ("_state", "_xp")

    def __init__(self, xp, s):
        self._state, self._xp = xp.random.RandomState(s), xp

    def random(self, size=None, dtype=np.float64):
        u = self._state.random_sample(size)
        return u if np.dtype(dtype) == np.float64 else u.astype(dtype)

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        if high is None:
            low, high = 0, low
        return self._state.randint(low, high + 1 if endpoint else high, size, dtype)

    def multinomial(self, n, pvals, size=None):
        # n categorical draws per sample, counted (CuPy's RandomState has no multinomial)
        xp = self._xp
        pvals = xp.asarray(pvals, dtype=np.float64)
        shape = () if size is None else tuple(np.atleast_1d(size).tolist())
        k = pvals.shape[-1]
        draws = self._state.choice(k, size=shape + (int(n),), p=pvals)
        return (draws[..., None] == xp.arange(k)).sum(axis=-2).astype(np.int64)

    def __getattr__(self, name):
        return getattr(self._state, name)


def _device_seed(s, key):
    """The seed of one device after ``seed(s)``: mixed with the GPU id, as MXNet
    seeds each device from the seed and its id (so gpu(0) and gpu(1) differ)."""
    if s is None or key[0] == "cpu" or key[1] == 0:
        return s
    return int(np.random.SeedSequence([s, key[1]]).generate_state(1, np.uint64)[0] >> 1)


def seed(seed_state, ctx="all"):
    """Seed the random number generators.

    Parameters
    ----------
    seed_state : int
        The seed.
    ctx : Context or 'all', optional
        ``'all'`` (default) seeds every device, each from the seed and its device
        id; a Context seeds only that device's generator, with the seed alone
        (so ``gpu(0)`` and ``gpu(1)`` seeded this way give the same numbers).

    Examples
    --------
    >>> mx.random.seed(128)
    >>> x = mx.nd.random.normal(shape=(2, 2))
    >>> mx.random.seed(128)
    >>> bool((x == mx.nd.random.normal(shape=(2, 2))).min())
    True
    """
    global _seed_value
    if isinstance(seed_state, (bool, np.bool_)) or not isinstance(seed_state, (int, np.integer)):
        raise ValueError("seed: seed_state must be an integer, got %r" % (seed_state,))
    s = int(seed_state)
    if s < 0:
        raise ValueError("seed: seed_state must be non-negative, got %d" % s)
    if isinstance(ctx, str) and ctx == "all":
        _seed_value = s
        _generators.clear()
        return
    if not isinstance(ctx, Context):
        raise TypeError("seed: ctx must be a Context or 'all', got %r" % (ctx,))
    _generators[_key(ctx)] = _make(ctx, s)


def get_generator(ctx):
    """The generator that samplers on ``ctx`` draw from.

    Created on first use from the last ``seed(n)`` (or fresh entropy before any).
    """
    key = _key(ctx)
    g = _generators.get(key)
    if g is None:
        g = _generators[key] = _make(ctx, _device_seed(_seed_value, key))
    return g


# Names MXNet's module also shows, served from where they live in mxlite.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "check_call": "mxlite.base",
    "integer_types": "mxlite.base",
})
