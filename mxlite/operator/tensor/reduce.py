"""Reductions over axes: sum, mean, prod, max, min, nansum, nanprod.

``axis`` is None (all), an int or a tuple; ``exclude=True`` reduces over every
axis *not* listed. Gradients broadcast ``gy`` back over the reduced axes.
"""
import numpy as np

from ... import nd
from ...base import parse_axis, parse_bool
from ..registry import register_op, Param
from ..util import norm_axes

REDUCE_PARAMS = [Param("axis", parse_axis, None, "Axis or axes to reduce; all if None."),
                 Param("keepdims", parse_bool, False, "Keep reduced axes with size 1."),
                 Param("exclude", parse_bool, False, "Reduce over the axes not in ``axis``.")]


def reduced_shape(shape, axes):
    """``shape`` with the reduced ``axes`` set to 1 (the keepdims shape)."""
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _finish(y, x_shape, axes, keepdims):
    if keepdims:
        return y.reshape(reduced_shape(x_shape, axes))
    if y.ndim == 0:
        return y.reshape(1)      # MXNet 1.x returns shape (1,) for a full reduction
    return y


def expand_to(gy, x_shape, axes):
    """Broadcast a reduction's output gradient back to the input shape."""
    g = gy.reshape(reduced_shape(x_shape, axes))
    return nd.broadcast_to(g, shape=x_shape) if g.shape != x_shape else g


def _reduction(name, kernel, grad, saves, aliases=(), doc=""):
    def compute(p, xp, x):
        axes = norm_axes(p.axis, x.ndim, p.exclude)
        y = kernel(xp, x, axes)
        return _finish(xp.asarray(y, dtype=x.dtype) if not hasattr(y, "dtype") or y.dtype != x.dtype
                       else y, x.shape, axes, p.keepdims)

    def gradient(p, x, y, gy):
        axes = norm_axes(p.axis, x[0].ndim, p.exclude)
        return [grad(x[0], y[0], gy[0], axes)]

    register_op(name, compute, params=REDUCE_PARAMS, gradient=gradient, saves=saves,
                aliases=aliases, doc=doc)


def _arg_eq(x, y, axes):
    # 1 where x attains the reduced extreme y (ties share the gradient as in MXNet).
    return nd.broadcast_equal(x, nd.broadcast_to(y.reshape(reduced_shape(x.shape, axes)),
                                                 shape=x.shape))


_reduction("sum", lambda xp, x, a: xp.sum(x, axis=a),
           lambda x, y, gy, a: expand_to(gy, x.shape, a), "", aliases=("sum_axis",),
           doc="Sum over the given axes.")
_reduction("mean", lambda xp, x, a: xp.mean(x, axis=a),
           lambda x, y, gy, a: expand_to(gy, x.shape, a) / max(1, int(np.prod([x.shape[i] for i in a]))),
           "", doc="Mean over the given axes.")
_reduction("prod", lambda xp, x, a: xp.prod(x, axis=a),
           lambda x, y, gy, a: expand_to(gy * y, x.shape, a) / x, "xy",
           doc="Product over the given axes.")
_reduction("nansum", lambda xp, x, a: xp.nansum(x, axis=a),
           lambda x, y, gy, a: expand_to(gy, x.shape, a) * (x == x), "x",
           doc="Sum over the given axes, treating NaN as 0.")
_reduction("nanprod", lambda xp, x, a: xp.nanprod(x, axis=a),
           lambda x, y, gy, a: expand_to(gy * y, x.shape, a) / nd.where(x == x, x, nd.ones_like(x)) * (x == x),
           "xy", doc="Product over the given axes, treating NaN as 1.")
_reduction("max", lambda xp, x, a: xp.max(x, axis=a) if x.size else xp.zeros(()),
           lambda x, y, gy, a: expand_to(gy, x.shape, a) * _arg_eq(x, y, a), "xy",
           aliases=("max_axis",), doc="Maximum over the given axes.")
_reduction("min", lambda xp, x, a: xp.min(x, axis=a) if x.size else xp.zeros(()),
           lambda x, y, gy, a: expand_to(gy, x.shape, a) * _arg_eq(x, y, a), "xy",
           aliases=("min_axis",), doc="Minimum over the given axes.")
