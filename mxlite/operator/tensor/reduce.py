"""Reductions over axes: sum, mean, prod, max, min, nansum, nanprod, norm,
argmax, argmin, argmax_channel and moments.

``axis`` is None (all), an int or a tuple; ``exclude=True`` reduces over every
axis *not* listed. Gradients broadcast ``gy`` back over the reduced axes.
"""
import math
import numpy as np

from ... import nd
from ...base import (MXNetError, parse_axis, parse_bool, parse_int, parse_shape, parse_dtype,
                     optional)
from ..registry import register_op, Param
from ..util import nonempty_axes, norm_axes, norm_axis, fill_missing

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
    return broadcast_back(gy.reshape(reduced_shape(x_shape, axes)), x_shape)


def broadcast_back(g, x_shape):
    """``g`` (``x_shape`` with the reduced axes 1) broadcast to ``x_shape``. The legacy
    ``broadcast_to`` reads a 0 in its shape as "keep this dimension", so an empty input
    is tiled to instead (zero copies along its empty axes)."""
    x_shape = tuple(x_shape)
    if g.shape == x_shape:
        return g
    if 0 in x_shape:
        return nd.tile(g, reps=tuple(xs if gs == 1 else 1 for gs, xs in zip(g.shape, x_shape)))
    return nd.broadcast_to(g, shape=x_shape)


def _reduction(name, kernel, grad, saves, aliases=(), doc="", adds=False):
    def compute(p, xp, x):
        axes = norm_axes(p.axis, x.ndim, p.exclude)
        if adds and x.dtype.kind == "f" and x.size and math.prod([x.shape[i] for i in axes]) == 1:
            # One value per output: the sum (and mean) is ``0 + value``, which is what
            # NumPy's reduction computes (-0 becomes +0), without the reduction's cost.
            y = x.reshape([d for i, d in enumerate(x.shape) if i not in axes]) + 0
            return _finish(y, x.shape, axes, p.keepdims)
        y = kernel(xp, x, axes)
        return _finish(xp.asarray(y, dtype=x.dtype) if not hasattr(y, "dtype") or y.dtype != x.dtype
                       else y, x.shape, axes, p.keepdims)

    def gradient(p, x, y, gy, need):
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
           adds=True,
           doc="Sum over the given axes.")


def _mean_grad(x, y, gy, axes):
    n = math.prod([x.shape[i] for i in axes])
    g = expand_to(gy, x.shape, axes)
    return g / n if n > 1 else g        # x / 1 is x: skip the op


def _mean(xp, x, axes):
    if x.dtype.kind == "f" and x.dtype.itemsize >= 4:
        # What np.mean does for these dtypes (a sum in the dtype, then a true divide),
        # without its Python-level wrapper.
        return xp.sum(x, axis=axes) / max(math.prod([x.shape[i] for i in axes]), 1) \
            if x.size else xp.mean(x, axis=axes)
    return xp.mean(x, axis=axes)


_reduction("mean", _mean, _mean_grad, "",
           adds=True, doc="Mean over the given axes.")
_reduction("prod", lambda xp, x, a: xp.prod(x, axis=a),
           lambda x, y, gy, a: expand_to(gy * y, x.shape, a) / x, "xy",
           doc="Product over the given axes.")
_reduction("nansum", lambda xp, x, a: xp.nansum(x, axis=a),
           lambda x, y, gy, a: expand_to(gy, x.shape, a) * (x == x), "x",
           doc="Sum over the given axes, treating NaN as 0.")
_reduction("nanprod", lambda xp, x, a: xp.nanprod(x, axis=a),
           lambda x, y, gy, a: expand_to(gy * y, x.shape, a) / nd.where(x == x, x, nd.ones_like(x)) * (x == x),
           "xy", doc="Product over the given axes, treating NaN as 1.")
def _extreme(name):
    """The kernel of ``max`` or ``min``: an empty axis has no extreme (an error, as for
    argmax; it gave 0 of the wrong shape)."""
    def kernel(xp, x, axes):
        nonempty_axes(x, axes, "take the %s of" % name)
        return getattr(xp, name)(x, axis=axes)
    return kernel


_reduction("max", _extreme("max"),
           lambda x, y, gy, a: expand_to(gy, x.shape, a) * _arg_eq(x, y, a), "xy",
           aliases=("max_axis",), doc="Maximum over the given axes.")
_reduction("min", _extreme("min"),
           lambda x, y, gy, a: expand_to(gy, x.shape, a) * _arg_eq(x, y, a), "xy",
           aliases=("min_axis",), doc="Minimum over the given axes.")


# -- norm ---------------------------------------------------------------------

def _norm_axes(p, ndim):
    return norm_axes(p.axis, ndim)


def _norm(p, xp, x):
    if p.ord not in (1, 2):
        raise MXNetError("ord must be 1 or 2, got %d" % p.ord)
    axes = _norm_axes(p, x.ndim)
    if p.ord == 1:
        y = xp.sum(xp.abs(x), axis=axes)
    else:
        # NOTE: accumulate the squares in float64 for float16/float32, so that large
        # inputs do not overflow and the result matches MXNet's accumulation type.
        acc = x.astype(np.float64) if x.dtype.kind == "f" and x.itemsize < 8 else x
        y = xp.sqrt(xp.sum(acc * acc, axis=axes))
    dt = x.dtype if p.out_dtype is None else p.out_dtype
    return _finish(y.astype(dt, copy=False), x.shape, axes, p.keepdims)


def _norm_grad(p, x, y, gy, need):
    x, y, gy = x[0], y[0], gy[0]
    if y.dtype != x.dtype:      # out_dtype: differentiate in the input's dtype
        y, gy = y.astype(x.dtype), gy.astype(x.dtype)
    axes = _norm_axes(p, x.ndim)
    g = expand_to(gy, x.shape, axes)
    if p.ord == 1:
        return [g * nd.sign(x)]
    # NOTE: the norm is not differentiable at 0; MXNet returns NaN there, mxlite
    # returns the zero subgradient.
    yb = expand_to(y, x.shape, axes)
    safe = nd.where(yb == 0, nd.ones_like(yb), yb)
    return [g * x / safe * (yb != 0)]


register_op("norm", _norm, gradient=_norm_grad, saves="xy",
            infer_type=lambda p, dtypes: dtypes[0] if p.out_dtype is None else p.out_dtype,
            params=[Param("ord", parse_int, 2, "1 (sum of absolute values) or 2 (Euclidean)."),
                    Param("axis", parse_axis, None, "Axis or axes to reduce; all if None."),
                    Param("out_dtype", parse_dtype, None, "The output dtype; the input's if None."),
                    Param("keepdims", parse_bool, False, "Keep reduced axes with size 1.")],
            doc="The L1 or L2 norm over ``axis`` (all axes when None).\n\n"
                "Unlike MXNet, the gradient of the L2 norm at 0 is 0 (MXNet gives NaN).")


# -- argmax, argmin, argmax_channel ---------------------------------------------

def _arg_reduce(kernel):
    def compute(p, xp, x):
        if p.axis is None:
            nonempty_axes(x, range(x.ndim), "take the arg-extreme of")
            y = kernel(x.reshape(-1), axis=0).reshape(1)
            if p.keepdims:
                y = y.reshape((1,) * x.ndim)
        else:
            axis = norm_axis(p.axis, x.ndim)
            nonempty_axes(x, (axis,), "take the arg-extreme of")
            y = kernel(x, axis=axis)
            y = y.reshape(reduced_shape(x.shape, (axis,))) if p.keepdims else y
            if y.ndim == 0:
                y = y.reshape(1)
        # MXNet returns the indices as floats in the input dtype.
        return y.astype(x.dtype)
    return compute


_ARG_PARAMS = [Param("axis", optional(parse_int), None, "The axis; the flattened array if None."),
               Param("keepdims", parse_bool, False, "Keep the reduced axis with size 1.")]
register_op("argmax", _arg_reduce(lambda x, axis: x.argmax(axis=axis)), params=_ARG_PARAMS,
            doc="Indices of the maxima along ``axis`` (as floats in the input dtype).\n\n"
                ">>> mx.nd.argmax(mx.nd.array([[1, 5], [7, 2]]), axis=1)  # [1. 0.]")
register_op("argmin", _arg_reduce(lambda x, axis: x.argmin(axis=axis)), params=_ARG_PARAMS,
            doc="Indices of the minima along ``axis`` (as floats in the input dtype).")
def _argmax_channel(p, xp, x):
    if x.ndim < 2:
        raise MXNetError("argmax_channel: data must have at least 2 dims (N, C, ...), got "
                         "shape %s" % (tuple(x.shape),))
    return x.argmax(axis=1).astype(x.dtype)


register_op("argmax_channel", _argmax_channel,
            doc="Indices of the maxima along axis 1, the channels (as floats in the input "
                "dtype).")


# -- moments --------------------------------------------------------------------

def _moments_axes(p, ndim):
    if not p.axes:
        raise MXNetError("axes is required: pass every axis, e.g. axes=%s, for global moments"
                         % (tuple(range(ndim)),))
    return norm_axes(p.axes, ndim)


def _moments(p, xp, x):
    axes = _moments_axes(p, x.ndim)
    mean = xp.mean(x, axis=axes, keepdims=True)
    d = x - mean
    var = xp.mean(d * d, axis=axes, keepdims=True)
    if not p.keepdims:
        shape = tuple(d for i, d in enumerate(x.shape) if i not in axes) or (1,)
        mean, var = mean.reshape(shape), var.reshape(shape)
    return mean.astype(x.dtype, copy=False), var.astype(x.dtype, copy=False)


def _moments_grad(p, x, y, gy, need):
    x, gy = x[0], fill_missing(gy, y)
    axes = _moments_axes(p, x.ndim)
    n = max(1, math.prod([x.shape[i] for i in axes]))
    mean = expand_to(y[0], x.shape, axes)
    gx = (expand_to(gy[0], x.shape, axes) + expand_to(gy[1], x.shape, axes) * 2 * (x - mean)) / n
    return [gx]


register_op("moments", _moments, gradient=_moments_grad, saves="xy", num_outputs=2,
            output_names=("mean", "var"),
            params=[Param("axes", optional(parse_shape), None, "The axes to reduce (required)."),
                    Param("keepdims", parse_bool, False, "Keep reduced axes with size 1.")],
            doc="The mean and the (population) variance over ``axes``: two outputs.")


# -- cumsum ---------------------------------------------------------------------------

def _cumsum_dtype(p, x_dtype):
    if p.dtype is not None:
        return p.dtype
    # MXNet (np_cumsum): the input's dtype, except bool which sums in int64.
    return np.dtype(np.int64) if x_dtype.kind == "b" else x_dtype


def _cumsum(p, xp, x):
    dtype = _cumsum_dtype(p, x.dtype)
    if p.axis is None:
        return xp.cumsum(x.reshape(-1), dtype=dtype)
    return xp.cumsum(x, axis=norm_axis(p.axis, x.ndim), dtype=dtype)


def _cumsum_grad(p, x, y, gy, need):
    # The adjoint of a running sum is the running sum taken from the other end.
    g = gy[0]
    axis = 0 if p.axis is None else norm_axis(p.axis, x[0].ndim)
    gx = nd.flip(nd.cumsum(nd.flip(g, axis=axis), axis=axis), axis=axis)
    return [gx.reshape(x[0].shape).astype(x[0].dtype)]


register_op("_np_cumsum", _cumsum, inputs=("a",), gradient=_cumsum_grad, saves="",
            params=[Param("axis", optional(parse_int), None,
                          "The axis to sum along; None sums the flattened array."),
                    Param("dtype", parse_dtype, None,
                          "The output and accumulator dtype; None keeps the input's.")],
            aliases=("cumsum",),
            doc="Cumulative sum along ``axis`` (of the flattened array if None).\n\n"
                ">>> mx.nd.cumsum(mx.nd.array([[1, 2], [3, 4]]))  # [ 1.  3.  6. 10.]")
