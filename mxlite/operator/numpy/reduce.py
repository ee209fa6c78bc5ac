"""Reductions of the np interface: ``_np_sum``, ``_npi_mean``, ``_np_max``, ``_npi_argmax`` ...

Unlike the legacy reductions, a full reduction gives a 0-d array, and the dtypes
follow MXNet's np rules: ``sum``/``prod`` keep the input's dtype except bool (int64),
``mean``/``std``/``var`` of integers give float32, ``argmax``/``argmin`` give int64.
The gradients are written with ops, so they differentiate again.
"""
import math

import numpy as onp

from ... import nd
from ...base import parse_axis, parse_bool, parse_dtype, parse_int, parse_float, optional
from ..registry import register_op, Param
from ..util import norm_axes, nonempty_axes, norm_axis
from ..tensor.reduce import broadcast_back, reduced_shape
from .shape import reshape_to

F32 = onp.dtype(onp.float32)
I64 = onp.dtype(onp.int64)

_AXIS = Param("axis", parse_axis, None, "Axis or axes to reduce; all if None.")
_KEEP = Param("keepdims", parse_bool, False, "Keep reduced axes with size 1.")
_DTYPE = Param("dtype", parse_dtype, None, "The result dtype; None: MXNet's default.")


def _axes(p, ndim):
    return norm_axes(p.axis, ndim)


def expand_to(gy, x_shape, axes):
    """A reduction's output gradient broadcast back to the input shape (0-d included:
    the reshape is NumPy's, which the legacy one is not)."""
    return broadcast_back(reshape_to(gy, reduced_shape(x_shape, axes)), x_shape)


def _finish(xp, y, dtype):
    y = xp.asarray(y)
    return y if y.dtype == dtype else y.astype(dtype)


def _sum_dtype(p, dt):
    if p.dtype is not None:
        return p.dtype
    return I64 if dt.kind == "b" else dt


def _mean_dtype(p, dt):
    if p.dtype is not None:
        return p.dtype
    return dt if dt.kind == "f" else F32


def _sum(p, xp, x):
    dt = _sum_dtype(p, x.dtype)
    y = xp.sum(x, axis=_axes(p, x.ndim), keepdims=p.keepdims, dtype=dt)
    if p.initial is not None:
        y = y + dt.type(p.initial)
    return _finish(xp, y, dt)


def _sum_grad(p, x, y, gy, need):
    g = expand_to(gy[0], x[0].shape, _axes(p, x[0].ndim))
    return [g if g.dtype == x[0].dtype else g.astype(x[0].dtype)]


def _prod(p, xp, x):
    dt = _sum_dtype(p, x.dtype)
    y = xp.prod(x, axis=_axes(p, x.ndim), keepdims=p.keepdims, dtype=dt)
    if p.initial is not None:
        y = y * dt.type(p.initial)
    return _finish(xp, y, dt)


def _prod_grad(p, x, y, gy, need):
    axes = _axes(p, x[0].ndim)
    yk = expand_to(y[0], x[0].shape, axes)
    return [expand_to(gy[0], x[0].shape, axes) * yk / x[0]]


def _mean(p, xp, x):
    dt = _mean_dtype(p, x.dtype)
    return _finish(xp, xp.mean(x, axis=_axes(p, x.ndim), keepdims=p.keepdims,
                               dtype=dt if dt.kind == "f" else None), dt)


def _count(shape, axes):
    return math.prod([shape[i] for i in axes]) if axes else 1


def _mean_grad(p, x, y, gy, need):
    axes = _axes(p, x[0].ndim)
    return [expand_to(gy[0], x[0].shape, axes) / max(_count(x[0].shape, axes), 1)]


_SUM_PARAMS = [_AXIS, _DTYPE, _KEEP,
               Param("initial", optional(parse_float), None, "A start value for the sum.")]
register_op("_np_sum", _sum, inputs=("a",), params=_SUM_PARAMS, gradient=_sum_grad, saves="",
            infer_type=lambda p, dt: [_sum_dtype(p, onp.dtype(dt[0]))],
            doc="Sum over ``axis`` (``mx.np.sum``); a full reduction is 0-d.")
register_op("_np_prod", _prod, inputs=("a",), params=_SUM_PARAMS, gradient=_prod_grad,
            saves="xy", infer_type=lambda p, dt: [_sum_dtype(p, onp.dtype(dt[0]))],
            doc="Product over ``axis`` (``mx.np.prod``).")
register_op("_npi_mean", _mean, inputs=("a",), params=[_AXIS, _DTYPE, _KEEP],
            gradient=_mean_grad, saves="",
            infer_type=lambda p, dt: [_mean_dtype(p, onp.dtype(dt[0]))],
            doc="Mean over ``axis`` (``mx.np.mean``); integers give float32.")


def _extreme(fn):
    def compute(p, xp, x):
        axes = _axes(p, x.ndim)
        nonempty_axes(x, axes)
        return xp.asarray(fn(xp)(x, axis=axes, keepdims=p.keepdims))
    return compute


def _extreme_grad(p, x, y, gy, need):
    axes = _axes(p, x[0].ndim)
    mask = nd.broadcast_equal(x[0], expand_to(y[0], x[0].shape, axes))
    return [expand_to(gy[0], x[0].shape, axes) * mask]


_EXT_PARAMS = [_AXIS, _KEEP, Param("initial", optional(parse_float), None, "Unused start.")]
register_op("_np_max", _extreme(lambda xp: xp.max), inputs=("a",), params=_EXT_PARAMS,
            gradient=_extreme_grad, saves="xy", aliases=("_npi_max",),
            doc="Maximum over ``axis`` (``mx.np.max``/``amax``).")
register_op("_np_min", _extreme(lambda xp: xp.min), inputs=("a",), params=_EXT_PARAMS,
            gradient=_extreme_grad, saves="xy", aliases=("_npi_min",),
            doc="Minimum over ``axis`` (``mx.np.min``/``amin``).")


def _moment(p, xp, x, root):
    dt = _mean_dtype(p, x.dtype)
    xf = x if x.dtype.kind == "f" else x.astype(dt)
    y = xp.var(xf, axis=_axes(p, x.ndim), keepdims=p.keepdims, ddof=p.ddof)
    return _finish(xp, xp.sqrt(y) if root else y, dt)


def _var_grad(p, x, y, gy, root):
    axes = _axes(p, x[0].ndim)
    n = _count(x[0].shape, axes)
    xc = x[0] - expand_to(nd.mean(x[0], axis=axes, keepdims=True), x[0].shape, axes)
    g = expand_to(gy[0], x[0].shape, axes) * xc * (2.0 / max(n - p.ddof, 1))
    if root:
        g = g / (2 * expand_to(y[0], x[0].shape, axes))
    return [g]


_MOMENT_PARAMS = [_AXIS, _DTYPE, Param("ddof", parse_int, 0, "Delta degrees of freedom."), _KEEP]
register_op("_npi_var", lambda p, xp, x: _moment(p, xp, x, False), inputs=("a",),
            params=_MOMENT_PARAMS, gradient=lambda p, x, y, gy, need: _var_grad(p, x, y, gy, False),
            saves="x", infer_type=lambda p, dt: [_mean_dtype(p, onp.dtype(dt[0]))],
            doc="Variance over ``axis`` (``mx.np.var``).")
register_op("_npi_std", lambda p, xp, x: _moment(p, xp, x, True), inputs=("a",),
            params=_MOMENT_PARAMS, gradient=lambda p, x, y, gy, need: _var_grad(p, x, y, gy, True),
            saves="xy", infer_type=lambda p, dt: [_mean_dtype(p, onp.dtype(dt[0]))],
            doc="Standard deviation over ``axis`` (``mx.np.std``).")


def _arg(fn):
    def compute(p, xp, x):
        if p.axis is None:
            nonempty_axes(x, range(x.ndim), "take the arg-extreme of")
            y = fn(xp)(x.reshape(-1))
            return xp.asarray(y, dtype=I64).reshape((1,) * x.ndim if p.keepdims else ())
        nonempty_axes(x, (norm_axis(p.axis, x.ndim),), "take the arg-extreme of")
        y = fn(xp)(x, axis=p.axis)
        if p.keepdims:
            y = xp.expand_dims(y, p.axis)
        return xp.asarray(y, dtype=I64)
    return compute


_ARG_PARAMS = [Param("axis", optional(parse_int), None, "The axis; None: the flat array."), _KEEP]
register_op("_npi_argmax", _arg(lambda xp: xp.argmax), inputs=("data",), params=_ARG_PARAMS,
            infer_type=lambda p, dt: [I64], doc="Index of the maximum, as int64.")
register_op("_npi_argmin", _arg(lambda xp: xp.argmin), inputs=("data",), params=_ARG_PARAMS,
            infer_type=lambda p, dt: [I64], doc="Index of the minimum, as int64.")


def _logical(fn):
    def compute(p, xp, x):
        return xp.asarray(fn(xp)(x, axis=_axes(p, x.ndim), keepdims=p.keepdims))
    return compute


register_op("_np_any", _logical(lambda xp: xp.any), inputs=("data",), params=[_AXIS, _KEEP],
            infer_type=lambda p, dt: [onp.dtype(onp.bool_)], aliases=("_npi_any",),
            doc="Whether any element along ``axis`` is true (bool).")
register_op("_np_all", _logical(lambda xp: xp.all), inputs=("data",), params=[_AXIS, _KEEP],
            infer_type=lambda p, dt: [onp.dtype(onp.bool_)], aliases=("_npi_all",),
            doc="Whether all elements along ``axis`` are true (bool).")
