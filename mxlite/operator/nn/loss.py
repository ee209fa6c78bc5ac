"""Loss-head ops: SoftmaxOutput, the *RegressionOutput ops, MakeLoss,
softmax_cross_entropy and smooth_l1.

The loss heads (SoftmaxOutput, *RegressionOutput, MakeLoss) are MXNet 1.x
"output layers": the forward pass is a plain transform (softmax, identity,
sigmoid) and the backward pass **ignores the head gradient** and writes the
gradient of the implied loss instead (``out_grad=True`` multiplies it in for
SoftmaxOutput). Their backward is a registered ``_backward_*`` op; it is not
differentiable again (neither is MXNet's). The label gets a zero gradient.

Where mxlite differs from MXNet 1.9.1 on purpose:

* ``SoftmaxOutput(out_grad=True)`` multiplies by the head gradient, as documented;
  MXNet 1.9.1 multiplies by the softmax output instead (a bug, in both its
  imperative and symbolic paths).
* Without ``multi_output``/``preserve_shape``, data of more than 2 dimensions is
  softmaxed over its flattened features and takes one label per sample, shape
  ``(n,)``; MXNet demands labels of shape ``data.shape[:-1]`` and then reads only
  their first ``n`` values.
"""
import numpy as np

from ... import nd
from ...base import MXNetError, parse_bool, parse_float
from ..registry import register_op, Param, dtypes, ranks


def _softmax(xp, x, axis):
    # NOTE: subtract the max so that exp never overflows.
    e = xp.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


_NORMALIZATIONS = ("null", "batch", "valid")

def _label_zeros(x):
    return nd.zeros_like(x[1])


def _known(s):
    return s is not None and len(s) > 0 and 0 not in s


def _label_from_data(label_shape):
    """An infer_shape rule: fill an unknown label shape from the data shape."""
    def rule(p, shapes):
        shapes = list(shapes)
        if _known(shapes[0]) and not _known(shapes[1]):
            shapes[1] = label_shape(p, tuple(shapes[0]))
        return shapes
    return rule


# -- SoftmaxOutput ------------------------------------------------------------------

_SOFTMAX_OUTPUT_PARAMS = [
    Param("grad_scale", parse_float, 1.0, "Scale of the gradient."),
    Param("ignore_label", parse_float, -1.0, "The label whose rows get no gradient "
          "(with use_ignore)."),
    Param("multi_output", parse_bool, False, "Softmax over axis 1 of (n, k, ...) data with "
          "labels (n, ...)."),
    Param("use_ignore", parse_bool, False, "Give rows labelled ignore_label no gradient."),
    Param("preserve_shape", parse_bool, False, "Softmax over the last axis, keeping the shape."),
    Param("normalization", None, "null", choices=_NORMALIZATIONS, doc=
          "Divide the gradient by 1 (null), the batch size (batch) or the number of "
          "non-ignored labels (valid)."),
    Param("out_grad", parse_bool, False, "Multiply the gradient by the head gradient."),
    Param("smooth_alpha", parse_float, 0.0, "Label smoothing: the target puts "
          "smooth_alpha / (k - 1) on each wrong class."),
]


def _so_layout(p, shape):
    """(class axis, number of classes, label shape expected) of SoftmaxOutput's data."""
    if p.multi_output:
        if len(shape) < 2:
            raise MXNetError("data must have at least 2 dimensions with multi_output=True, "
                             "got shape %s" % (shape,))
        return 1, shape[1], (shape[0],) + tuple(shape[2:])
    if p.preserve_shape:
        return len(shape) - 1, shape[-1], tuple(shape[:-1])
    return 1, int(np.prod(shape[1:], dtype=np.int64)), (shape[0],)


def _so_check_label(p, data, label):
    if label.shape == data.shape:
        return          # probability labels
    _, _, want = _so_layout(p, data.shape)
    if label.size != int(np.prod(want, dtype=np.int64)):
        raise MXNetError("label has shape %s, expected %s (or %s for probability labels) "
                         "for data of shape %s" % (label.shape, want, data.shape, data.shape))


def _softmax_output(p, xp, data, label):
    _so_check_label(p, data, label)
    axis, k, _ = _so_layout(p, data.shape)
    if p.multi_output or p.preserve_shape:
        return _softmax(xp, data, axis).astype(data.dtype, copy=False)
    flat = data.reshape(data.shape[0], k)
    return _softmax(xp, flat, 1).reshape(data.shape).astype(data.dtype, copy=False)


def _softmax_output_backward(p, xp, out, label, gy):
    """(softmax - target) * grad_scale / norm, with MXNet's ignore and normalisation rules."""
    if label.shape == out.shape:
        g = (out - label) * p.grad_scale
        return (g * gy if p.out_grad else g).astype(out.dtype, copy=False)
    axis, k, want = _so_layout(p, out.shape)
    # Move the class axis last: y is (..., k), lab is (...).
    y = xp.moveaxis(out, axis, -1) if p.multi_output else out.reshape(-1, k) \
        if not p.preserve_shape else out
    lab = label.reshape(y.shape[:-1]).astype(np.int64)
    onehot = xp.arange(k) == lab[..., None]       # out-of-range labels select no class
    if p.smooth_alpha:
        target = xp.where(onehot, 1.0 - p.smooth_alpha, p.smooth_alpha / max(k - 1, 1))
    else:
        target = onehot
    g = y - target
    keep = lab != int(p.ignore_label)
    if p.use_ignore:
        g = g * keep[..., None]
    if p.normalization == "valid":
        norm = max(int(keep.sum()), 1)
    elif p.multi_output:
        # NOTE: MXNet also divides by the number of positions per sample here.
        norm = lab.size if p.normalization == "batch" else lab.size // max(out.shape[0], 1)
    else:
        norm = lab.size if p.normalization == "batch" else 1
    g = g * (p.grad_scale / max(norm, 1))
    if p.multi_output:
        g = xp.moveaxis(g, -1, axis)
    g = g.reshape(out.shape)
    if p.out_grad:
        g = g * gy
    return g.astype(out.dtype, copy=False)


def _softmax_output_grad(p, x, y, gy, need):
    gx = nd._internal._backward_SoftmaxOutput(y[0], x[1], gy[0], **dict(p.items()))
    return [gx, _label_zeros(x)]


register_op("_backward_SoftmaxOutput", _softmax_output_backward,
            inputs=("y", "label", "gy"), params=_SOFTMAX_OUTPUT_PARAMS, check=dtypes(y="f"),
            doc="Gradient of SoftmaxOutput (not differentiable).")
register_op("SoftmaxOutput", _softmax_output, check=(ranks(data=1), dtypes(data="f")),
            inputs=("data", "label"),
            params=_SOFTMAX_OUTPUT_PARAMS, gradient=_softmax_output_grad, saves="xy",
            aliases=("Softmax",), infer_shape=_label_from_data(lambda p, d: _so_layout(p, d)[2]),
            same_shape=(0,),
            doc="Softmax with a cross-entropy gradient: the forward pass is a softmax (over "
                "the flattened features, axis 1 with multi_output, the last axis with "
                "preserve_shape); the backward pass ignores the head gradient and gives "
                "``(softmax - onehot(label)) * grad_scale / norm``.")


# -- regression outputs ---------------------------------------------------------------

def _regression(name, fwd, bwd, doc):
    """Register ``name`` (forward ``fwd``) and its ``_backward_`` op (``bwd(out, label)``)."""
    bname = "_backward_" + name

    def compute(p, xp, data, label):
        if label.size != data.size or label.shape[:1] != data.shape[:1]:
            raise MXNetError("label has shape %s, expected %s (the shape of data)"
                             % (label.shape, data.shape))
        return fwd(xp, data).astype(data.dtype, copy=False)

    def backward(p, xp, out, label):
        # MXNet divides by the number of outputs per sample (1 for 1-D data).
        per_sample = out.size // out.shape[0] if out.ndim > 1 and out.shape[0] else 1
        g = bwd(xp, out, label.reshape(out.shape)) * (p.grad_scale / per_sample)
        return g.astype(out.dtype, copy=False)

    def gradient(p, x, y, gy, need):
        return [getattr(nd._internal, bname)(y[0], x[1], grad_scale=p.grad_scale),
                _label_zeros(x)]

    params = [Param("grad_scale", parse_float, 1.0, "Scale of the gradient.")]
    register_op(bname, backward, inputs=("y", "label"), params=params, check=dtypes(y="f"),
                doc="Gradient of %s (not differentiable)." % name)
    register_op(name, compute, inputs=("data", "label"), params=params, gradient=gradient,
                check=dtypes(data="f"),
                saves="xy", infer_shape=_label_from_data(lambda p, d: d), same_shape=(0,),
                doc=doc)


_regression("LinearRegressionOutput", lambda xp, x: x.copy(),
            lambda xp, y, lab: y - lab,
            "Identity forward; the backward pass ignores the head gradient and gives the "
            "squared-loss gradient ``(out - label) * grad_scale / m`` (m: outputs per sample).")
_regression("LogisticRegressionOutput", lambda xp, x: _sigmoid(xp, x),
            lambda xp, y, lab: y - lab,
            "Sigmoid forward; the backward pass ignores the head gradient and gives the "
            "logistic-loss gradient ``(out - label) * grad_scale / m``.")
_regression("MAERegressionOutput", lambda xp, x: x.copy(),
            lambda xp, y, lab: xp.sign(y - lab),
            "Identity forward; the backward pass ignores the head gradient and gives the "
            "absolute-loss gradient ``sign(out - label) * grad_scale / m``.")


def _sigmoid(xp, x):
    # NOTE: split by sign so that exp never overflows.
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))


# -- MakeLoss -------------------------------------------------------------------------

_MAKE_LOSS_PARAMS = [
    Param("grad_scale", parse_float, 1.0, "The gradient written for every element."),
    Param("valid_thresh", parse_float, 0.0, "With normalization='valid', elements above "
          "this count as valid."),
    Param("normalization", None, "null", choices=_NORMALIZATIONS, doc=
          "Divide the gradient by 1, the batch size or the number of valid elements."),
]


def _make_loss_backward(p, xp, out):
    if p.normalization == "batch":
        norm = out.shape[0] if out.ndim else 1
    elif p.normalization == "valid":
        norm = max(int((out > p.valid_thresh).sum()), 1)
    else:
        norm = 1
    return xp.full(out.shape, p.grad_scale / norm, dtype=out.dtype)


def _make_loss_grad(p, x, y, gy, need):
    return [nd._internal._backward_MakeLoss(y[0], **dict(p.items()))]


register_op("_backward_MakeLoss", _make_loss_backward, inputs=("y",),
            params=_MAKE_LOSS_PARAMS, doc="Gradient of MakeLoss (not differentiable).")
register_op("MakeLoss", lambda p, xp, x: x.copy(), inputs=("data",), params=_MAKE_LOSS_PARAMS,
            gradient=_make_loss_grad, saves="y", same_shape=(0,),
            doc="Mark an array as a loss: identity forward; the backward pass ignores the "
                "head gradient and writes ``grad_scale / norm`` for every element.")


# -- softmax_cross_entropy --------------------------------------------------------------

def _sce_check(data, label):
    if data.ndim != 2 or label.shape != data.shape[:1]:
        raise MXNetError("expected data (n, k) and label (n,), got data %s and label %s"
                         % (data.shape, label.shape))


def _softmax_cross_entropy(p, xp, data, label):
    _sce_check(data, label)
    z = data - data.max(axis=1, keepdims=True)
    logp = z - xp.log(xp.exp(z).sum(axis=1, keepdims=True))
    picked = xp.take_along_axis(logp, label.astype(np.int64)[:, None], axis=1)
    return (-picked.sum()).reshape(1).astype(data.dtype, copy=False)


def _sce_backward(p, xp, data, label, gy):
    _sce_check(data, label)
    if gy.size != 1:
        raise MXNetError("gy has shape %s, expected (1,) (the loss's)" % (gy.shape,))
    k = data.shape[1]
    onehot = xp.arange(k) == label.astype(np.int64)[:, None]
    g = (_softmax(xp, data, 1) - onehot) * gy.reshape(())
    return g.astype(data.dtype, copy=False)


def _sce_grad(p, x, y, gy, need):
    return [nd._internal._backward_softmax_cross_entropy(x[0], x[1], gy[0]), _label_zeros(x)]


register_op("_backward_softmax_cross_entropy", _sce_backward, inputs=("data", "label", "gy"),
            doc="Gradient of softmax_cross_entropy w.r.t. data (not differentiable).")
register_op("softmax_cross_entropy", _softmax_cross_entropy, inputs=("data", "label"),
            gradient=_sce_grad, saves="x", infer_shape=_label_from_data(lambda p, d: d[:1]),
            doc="Sum over the batch of the cross-entropy of ``softmax(data)`` with integer "
                "labels; returns shape (1,).")


# -- smooth_l1 --------------------------------------------------------------------------

def _smooth_l1(p, xp, x):
    s2 = p.scalar * p.scalar
    ax = xp.abs(x)
    y = xp.where(ax < 1.0 / s2, 0.5 * s2 * x * x, ax - 0.5 / s2)
    return y.astype(x.dtype, copy=False)


def _smooth_l1_grad(p, x, y, gy, need):
    s2 = p.scalar * p.scalar
    inside = nd.abs(x[0]) < (1.0 / s2)        # 0/1 in x's dtype: a constant mask
    return [gy[0] * (inside * (x[0] * s2) + (1 - inside) * nd.sign(x[0]))]


register_op("smooth_l1", _smooth_l1, params=[Param("scalar", parse_float, 1.0, "sigma.")],
            gradient=_smooth_l1_grad, saves="x", same_shape=(0,),
            doc="Smooth L1: ``0.5 (sigma x)^2`` where ``|x| < 1/sigma^2``, else "
                "``|x| - 0.5/sigma^2``.")
