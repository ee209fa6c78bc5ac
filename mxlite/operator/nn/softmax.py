"""softmax, log_softmax, softmin and SoftmaxActivation.

NOTE: every kernel subtracts the maximum along the axis before ``exp``, so large
inputs never overflow; float16 inputs are computed in float32 and cast back.
Gradients use the outputs: ``gx = y * (gy - sum(gy * y)) / T`` for softmax and
``gx = (gy - exp(y) * sum(gy)) / T`` for log_softmax, written in mxlite ops.
"""
import numpy as np

from ... import nd
from ...base import MXNetError, parse_int, parse_float, parse_bool, parse_dtype, \
    optional
from ..registry import register_op, Param, bound, dtypes
from ..batchwise import together, rows, axis_not_batch
from ..util import norm_axis


def _work_dtype(x):
    return np.float32 if x.dtype == np.float16 else x.dtype


def _length_mask(xp, x, length, axis):
    """1 where the position along ``axis`` is below ``length`` (broadcast over the rest)."""
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    pos = xp.arange(x.shape[axis]).reshape(shape)
    lens = xp.expand_dims(length.astype(np.int64), axis)
    return pos < lens


def _shifted(p, xp, x, length, negate):
    axis = norm_axis(p.axis, x.ndim)
    z = x.astype(_work_dtype(x), copy=False)
    if negate:
        z = -z
    if p.temperature is not None and p.temperature != 1.0:
        z = z / p.temperature
    mask = None
    if p.use_length:
        if length is None:
            raise MXNetError("use_length=True needs the length input")
        want = x.shape[:axis] + x.shape[axis + 1:]
        if tuple(length.shape) != want:
            raise MXNetError("length has shape %s, expected %s for data of shape %s and "
                             "axis=%d" % (tuple(length.shape), want, x.shape, axis))
        mask = _length_mask(xp, x, length, axis)
        z = xp.where(mask, z, -np.inf)
    m = z.max(axis=axis, keepdims=True)
    if not xp.isfinite(m).all():    # rows of -inf (masked out) or inf/NaN: shift by 0
        m = xp.where(xp.isfinite(m), m, 0)
    return z - m, axis, mask


def _out_dtype(p, x):
    return p.dtype if p.dtype is not None else x.dtype


def _softmax_kernel(negate):
    def compute(p, xp, x, length=None):
        z, axis, mask = _shifted(p, xp, x, length, negate)
        e = xp.exp(z)
        s = e.sum(axis=axis, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            y = e / s
        if mask is not None:
            y = xp.where(mask, y, 0)
        return y.astype(_out_dtype(p, x), copy=False)
    return compute


def _log_softmax(p, xp, x):
    if p.use_length:
        raise MXNetError("use_length=True is not supported (log_softmax takes no length "
                         "input, as in MXNet); mask the data instead")
    z, axis, _ = _shifted(p, xp, x, None, False)
    y = z - xp.log(xp.exp(z).sum(axis=axis, keepdims=True))
    return y.astype(_out_dtype(p, x), copy=False)


def _scale(p):
    t = p.temperature
    return 1.0 if t is None else 1.0 / t


def _softmax_gx(p, x, out, g, sign):
    """``out * (g - sum(g * out)) * sign / T``; operators and methods only, so the one
    formula serves NDArrays (the recorded rule) and raw arrays (the raw rule)."""
    gx = out * (g - (g * out).sum(axis=norm_axis(p.axis, x.ndim), keepdims=True))
    if sign * _scale(p) != 1.0:     # x * 1.0 is x: skip the op
        gx = gx * (sign * _scale(p))
    return gx.astype(x.dtype, copy=False)


def _softmax_grad_rule(sign):
    def gradient(p, x, y, gy, need):
        return [_softmax_gx(p, x[0], y[0], gy[0], sign)] + ([None] if len(x) > 1 else [])
    return gradient


def _log_softmax_backward(p, xp, gy, y):
    norm_axis(p.axis, y.ndim)
    # The same operations, in the same order, as the rule written in four ops.
    return gy - xp.exp(y) * gy.sum(axis=p.axis, keepdims=True)


def _log_softmax_backward_grad(p, x, y, gy, need):
    g, out = x
    ggx = gy[0]
    e = nd.exp(out)
    ggy = ggx - nd.sum(e * ggx, axis=p.axis, keepdims=True)
    gout = -(ggx * e * nd.sum(g, axis=p.axis, keepdims=True)) if need[1] else None
    return [ggy, gout]


# NOTE: one op for ``gy - exp(y) * sum(gy)``, saving three ops per log_softmax in backward.
register_op("_backward_log_softmax", _log_softmax_backward, inputs=("gy", "y"),
            gradient=_log_softmax_backward_grad, saves="x",
            params=[Param("axis", parse_int, doc="The (non-negative) softmax axis.")],
            doc="Gradient of log_softmax along ``axis``: ``gy - exp(y) * sum(gy)``.")


_LOG_SOFTMAX_BACKWARD = {}      # axis -> _backward_log_softmax on that axis


def _log_softmax_grad(p, x, y, gy, need):
    axis = norm_axis(p.axis, x[0].ndim)
    backward = _LOG_SOFTMAX_BACKWARD.get(axis)
    if backward is None:
        backward = _LOG_SOFTMAX_BACKWARD[axis] = bound("_backward_log_softmax", axis=axis)
    gx = backward(gy[0], y[0])
    if _scale(p) != 1.0:                # x * 1.0 is x: skip the op
        gx = gx * _scale(p)
    return [gx.astype(x[0].dtype, copy=False)]


def _inputs(p):
    return ("data", "length") if p.use_length else ("data",)


def _dtype_rule(p, dtypes):
    return p.dtype if p.dtype is not None else dtypes[0]


_PARAMS = [Param("axis", parse_int, -1, "The axis to normalise over."),
           Param("temperature", optional(parse_float), None, "Divide the input by this first."),
           Param("dtype", parse_dtype, None, "Output dtype; the input's if None."),
           Param("use_length", optional(parse_bool), False,
                 "Only the first ``length`` entries along ``axis`` take part; the rest are 0.")]

register_op("softmax", _softmax_kernel(False), gradient=_softmax_grad_rule(1.0), saves="y",
            inputs=_inputs, params=_PARAMS, infer_type=_dtype_rule, check=dtypes(data="f"),
            batchwise=together(axis_not_batch()),
            doc="``exp(x / T) / sum(exp(x / T))`` along ``axis``.", same_shape=(0,))
register_op("softmin", _softmax_kernel(True), gradient=_softmax_grad_rule(-1.0), saves="y",
            inputs=_inputs, params=_PARAMS, infer_type=_dtype_rule, check=dtypes(data="f"),
            batchwise=together(axis_not_batch()),
            doc="``softmax(-x)`` along ``axis``.", same_shape=(0,))
register_op("log_softmax", _log_softmax, gradient=_log_softmax_grad, saves="y", params=_PARAMS,
            batchwise=together(axis_not_batch()), infer_type=_dtype_rule, check=dtypes(data="f"),
            doc="``log(softmax(x))`` along ``axis``, computed stably.", same_shape=(0,))


# -- SoftmaxActivation ----------------------------------------------------------------------

# NOTE: MXNet documents 'instance' as "over all but the first axis", but its kernel
# flattens the data to 2-D keeping the last axis: the softmax runs over the last axis
# (a 1-D input is one instance). mxlite gives MXNet's numbers.
_SA_AXIS = {"instance": -1, "channel": 1}


def _sa_compute(p, xp, x):
    axis = _SA_AXIS[p.mode]
    if x.ndim < (1 if axis == -1 else 3):
        raise MXNetError("SoftmaxActivation: data must have at least %d dims for mode=%r, "
                         "got shape %s" % (1 if axis == -1 else 3, p.mode, tuple(x.shape)))
    z = x.astype(_work_dtype(x), copy=False)
    e = xp.exp(z - z.max(axis=axis, keepdims=True))
    y = e / e.sum(axis=axis, keepdims=True)
    return y.astype(x.dtype, copy=False)


def _sa_grad(p, x, y, gy, need):
    out, g = y[0], gy[0]
    return [out * (g - nd.sum(g * out, axis=_SA_AXIS[p.mode], keepdims=True))]


register_op("SoftmaxActivation", _sa_compute, gradient=_sa_grad, saves="y", check=dtypes(data="f"),
            batchwise=rows(when=lambda p, shapes: shapes is None or len(shapes[0]) >= 2),
            params=[Param("mode", None, "instance", "'instance': over the last axis (MXNet's "
                          "kernel); 'channel': over axis 1.", choices=_SA_AXIS)],
            doc="Softmax over each instance (the last axis) or over channels (axis 1).",
            same_shape=(0,))
