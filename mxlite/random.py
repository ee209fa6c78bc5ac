"""``mx.random``: the global random state (``seed``) and samplers.

Every sampler draws from one NumPy ``Generator`` per device type; ``seed(n)``
resets them, so runs repeat exactly.
"""
import numpy as np

__all__ = ["seed", "get_generator"]

_generators = {}
_seed_value = None


def seed(seed_state, ctx="all"):
    """Seed the random number generators (all contexts, or one)."""
    global _seed_value
    if not isinstance(seed_state, (int, np.integer)):
        raise ValueError("seed: seed_state must be an integer, got %r" % (seed_state,))
    _seed_value = int(seed_state)
    if ctx == "all":
        _generators.clear()
    else:
        _generators.pop((ctx.device_typeid, ctx.device_id), None)
        _generators[(ctx.device_typeid, ctx.device_id)] = _make(ctx.xp or ctx.array_module(),
                                                                _seed_value)


def _make(xp, s):
    if xp is np:
        return np.random.default_rng(s)
    return xp.random.default_rng(s)


def get_generator(ctx):
    """The generator for ``ctx`` (created from the last seed, or fresh entropy)."""
    key = (ctx.device_typeid, ctx.device_id)
    g = _generators.get(key)
    if g is None:
        g = _generators[key] = _make(ctx.xp or ctx.array_module(), _seed_value)
    return g
