"""``mx.gluon.loss``: loss functions as HybridBlocks.

Every loss returns one value per sample: the element-wise loss, scaled by the
optional ``sample_weight`` (broadcast against it) and the constant ``weight``, then
averaged over every axis but ``batch_axis`` (KLDivLoss sums instead, CTCLoss,
CosineEmbeddingLoss and PoissonNLLLoss reduce as MXNet 1.9.1 does, see each class).
The computation is written with ``F.<op>`` calls only, so a loss runs on NDArrays
and traces into a symbol graph alike.

>>> loss_fn = mx.gluon.loss.L2Loss()
>>> loss_fn(mx.nd.array([[1., 2.]]), mx.nd.array([[1., 0.]]))
<BLANKLINE>
[1.]
<NDArray 1 @cpu(0)>
"""
import math
import numbers

import numpy as np

from .. import nd
from .block import HybridBlock

__all__ = ["Loss", "L2Loss", "L1Loss", "SigmoidBinaryCrossEntropyLoss", "SigmoidBCELoss",
           "SoftmaxCrossEntropyLoss", "SoftmaxCELoss", "KLDivLoss", "CTCLoss", "HuberLoss",
           "HingeLoss", "SquaredHingeLoss", "LogisticLoss", "TripletLoss", "PoissonNLLLoss",
           "CosineEmbeddingLoss", "SDMLLoss"]


def _shape(x):
    """The shape of an NDArray, or None for a Symbol (whose shape is not known yet)."""
    shape = getattr(x, "shape", None)
    return shape if isinstance(shape, tuple) else None


def _apply_weighting(F, loss, weight=None, sample_weight=None):
    """``loss * sample_weight * weight``; sample_weight broadcasts against the loss."""
    if sample_weight is not None:
        loss = F.broadcast_mul(loss, sample_weight)
    if weight is not None:
        if not isinstance(weight, numbers.Number):
            raise TypeError("loss weight must be a number, got %s" % type(weight).__name__)
        loss = loss * weight
    return loss


def _reshape_like(F, block, x, y, what="label"):
    """``x`` reshaped to ``y``'s shape, with an error that names the loss when the
    sizes differ."""
    xs, ys = _shape(x), _shape(y)
    if xs is None or ys is None:
        return F.reshape_like(x, y)
    if xs == ys:
        return x
    if math.prod(xs) != math.prod(ys):
        raise ValueError("%s: %s of shape %s cannot be reshaped to the prediction's shape %s "
                         "(sizes %d and %d differ)" % (type(block).__name__, what, xs, ys,
                                                       math.prod(xs), math.prod(ys)))
    return x.reshape(ys)


def _weighted_mean(F, block, loss, sample_weight, weight=None):
    """``loss`` weighted (by ``weight``, the block's by default, and ``sample_weight``),
    then averaged over every axis but the batch axis."""
    loss = _apply_weighting(F, loss, block._weight if weight is None else weight, sample_weight)
    return F.mean(loss, axis=block._batch_axis, exclude=True)


class Loss(HybridBlock):
    """Base class of the losses.

    Parameters
    ----------
    weight : float or None
        Global scalar weight of the loss.
    batch_axis : int
        The axis that indexes samples; the loss is reduced over the others.
    """

    def __init__(self, weight, batch_axis, **kwargs):
        super().__init__(**kwargs)
        self._weight = weight
        self._batch_axis = batch_axis

    def __repr__(self):
        return "{name}(batch_axis={axis}, w={w})".format(
            name=type(self).__name__, axis=self._batch_axis, w=self._weight)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The loss of ``x`` against the labels in ``args``; defined by subclasses."""
        raise NotImplementedError("%s must define hybrid_forward()" % type(self).__name__)


class L2Loss(Loss):
    r"""Half the squared error: :math:`L = \frac{1}{2} \sum_i |label_i - pred_i|^2`
    (weighted, averaged over the non-batch axes).

    Parameters
    ----------
    weight : float, default 1.0
    batch_axis : int, default 0

    Inputs are ``pred``, ``label`` (same size; reshaped like ``pred``) and an
    optional ``sample_weight`` broadcastable to ``pred``.
    """

    def __init__(self, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, self, label, pred)
        loss = F.square(label - pred)
        return _weighted_mean(F, self, loss, sample_weight, self._weight / 2)


class L1Loss(Loss):
    r"""Absolute error: :math:`L = \sum_i |label_i - pred_i|` (averaged over the
    non-batch axes).

    Parameters
    ----------
    weight : float, optional
    batch_axis : int, default 0
    """

    def __init__(self, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, self, label, pred)
        loss = F.abs(label - pred)
        return _weighted_mean(F, self, loss, sample_weight)


class SigmoidBinaryCrossEntropyLoss(Loss):
    r"""Binary cross-entropy of ``sigmoid(pred)`` against labels in [0, 1].

    With logits (``from_sigmoid=False``) it uses the stable form
    :math:`\max(x, 0) - x z + \log(1 + e^{-|x|})`, and with ``pos_weight``
    :math:`x - x z + (1 + z (p - 1)) (\log(1 + e^{-|x|}) + \max(-x, 0))`.

    Parameters
    ----------
    from_sigmoid : bool, default False
        ``pred`` is already a probability; then
        :math:`-(z \log(p + \epsilon) + (1 - z) \log(1 - p + \epsilon))`, eps = 1e-12.
    weight : float, optional
    batch_axis : int, default 0

    Inputs are ``pred``, ``label``, optional ``sample_weight`` and ``pos_weight``
    (the weight of positive examples, broadcast against ``pred``).
    """

    def __init__(self, from_sigmoid=False, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_sigmoid = from_sigmoid

    def hybrid_forward(self, F, pred, label, sample_weight=None, pos_weight=None):
        label = _reshape_like(F, self, label, pred)
        if not self._from_sigmoid:
            # NOTE: log(1 + exp(-|x|)) never overflows; the max terms restore the sign.
            softplus = F.Activation(-F.abs(pred), act_type="softrelu")
            if pos_weight is None:
                loss = F.relu(pred) - pred * label + softplus
            else:
                log_weight = 1 + F.broadcast_mul(pos_weight - 1, label)
                loss = pred - pred * label + log_weight * (softplus + F.relu(-pred))
        else:
            eps = 1e-12
            if pos_weight is None:
                loss = -(F.log(pred + eps) * label + F.log(1. - pred + eps) * (1. - label))
            else:
                loss = -(F.broadcast_mul(F.log(pred + eps) * label, pos_weight)
                         + F.log(1. - pred + eps) * (1. - label))
        return _weighted_mean(F, self, loss, sample_weight)


SigmoidBCELoss = SigmoidBinaryCrossEntropyLoss


class SoftmaxCrossEntropyLoss(Loss):
    r"""Cross-entropy of ``softmax(pred)`` along ``axis`` against class labels:
    :math:`-\log p_{label}` (sparse) or :math:`-\sum_j label_j \log p_j` (dense).

    Parameters
    ----------
    axis : int, default -1
        The class axis.
    sparse_label : bool, default True
        Labels are class indices (``pred``'s shape without ``axis``); else
        distributions of ``pred``'s shape.
    from_logits : bool, default False
        ``pred`` already holds log-probabilities (``log_softmax`` is skipped).
    weight : float, optional
    batch_axis : int, default 0

    Examples
    --------
    >>> loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    >>> loss_fn(mx.nd.array([[0., 0.]]), mx.nd.array([1])).asnumpy().round(4)
    array([0.6931], dtype=float32)
    """

    def __init__(self, axis=-1, sparse_label=True, from_logits=False, weight=None,
                 batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._axis = axis
        self._sparse_label = sparse_label
        self._from_logits = from_logits

    def _check_label(self, pred, label):
        ps, ls = _shape(pred), _shape(label)
        if ps is None or ls is None or not self._sparse_label:
            return
        want = ps[:self._axis % len(ps)] + ps[self._axis % len(ps) + 1:]
        if math.prod(ls) != math.prod(want):
            raise ValueError("SoftmaxCrossEntropyLoss: sparse label of shape %s does not match "
                             "pred of shape %s; expected one class index per position, shape "
                             "%s (or pass sparse_label=False for dense labels)"
                             % (ls, ps, want))

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        self._check_label(pred, label)
        if F is nd and self._sparse_label and not self._from_logits:
            # NOTE: run imperatively, pick(log_softmax) is the one op a hybridized graph
            # runs for that chain: the same numbers, one node instead of two, and a
            # backward without pick's zero-filled scatter.
            loss = -nd._internal._log_softmax_pick(pred, label, axis=self._axis, keepdims=True)
            return _weighted_mean(F, self, loss, sample_weight)
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        if self._sparse_label:
            loss = -F.pick(pred, label, axis=self._axis, keepdims=True)
        else:
            label = _reshape_like(F, self, label, pred)
            loss = -F.sum(pred * label, axis=self._axis, keepdims=True)
        return _weighted_mean(F, self, loss, sample_weight)


SoftmaxCELoss = SoftmaxCrossEntropyLoss


class KLDivLoss(Loss):
    r"""Kullback-Leibler divergence :math:`\sum_i label_i (\log(label_i) - pred_i)`
    with ``pred`` log-probabilities; **summed** over the non-batch axes, as in MXNet.

    Parameters
    ----------
    from_logits : bool, default True
        ``pred`` holds log-probabilities; False applies ``log_softmax`` along ``axis``.
    axis : int, default -1
    weight : float, optional
    batch_axis : int, default 0
    """

    def __init__(self, from_logits=True, axis=-1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._axis = axis

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        if not self._from_logits:
            pred = F.log_softmax(pred, axis=self._axis)
        # NOTE: the 1e-12 keeps log(0) finite where label is 0 (the term is then 0).
        loss = label * (F.log(label + 1e-12) - pred)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.sum(loss, axis=self._batch_axis, exclude=True)


class CTCLoss(Loss):
    """Connectionist temporal classification loss (Graves et al., 2006).

    The last class (``C - 1``) is the blank; labels are padded with -1 (or given
    lengths).

    Parameters
    ----------
    layout : {'NTC', 'TNC'}, default 'NTC'
        Layout of ``pred`` (unnormalised scores; softmax is applied inside).
    label_layout : {'NT', 'TN'}, default 'NT'
        Layout of ``label``; its ``N`` is the batch axis.
    weight : float, optional

    Inputs are ``pred``, ``label``, and optionally ``pred_lengths`` and
    ``label_lengths`` (shape ``(N,)``) and ``sample_weight``. The output has shape
    ``(N,)``: the negative log-likelihood of each sequence.
    """

    def __init__(self, layout="NTC", label_layout="NT", weight=None, **kwargs):
        if layout not in ("NTC", "TNC"):
            raise ValueError("Only 'NTC' and 'TNC' layouts for pred are supported. Got: %s"
                             % layout)
        if label_layout not in ("NT", "TN"):
            raise ValueError("Only 'NT' and 'TN' layouts for label are supported. Got: %s"
                             % label_layout)
        self._layout = layout
        self._label_layout = label_layout
        super().__init__(weight, label_layout.find("N"), **kwargs)

    def hybrid_forward(self, F, pred, label, pred_lengths=None, label_lengths=None,
                       sample_weight=None):
        if self._layout == "NTC":
            pred = F.swapaxes(pred, 0, 1)
        if self._batch_axis == 1:
            label = F.swapaxes(label, 0, 1)
        inputs = [pred, label] + [x for x in (pred_lengths, label_lengths) if x is not None]
        loss = F.CTCLoss(*inputs, use_data_lengths=pred_lengths is not None,
                         use_label_lengths=label_lengths is not None, blank_label="last")
        return _apply_weighting(F, loss, self._weight, sample_weight)


class HuberLoss(Loss):
    r"""Smoothed L1: :math:`\frac{1}{2\rho}(label - pred)^2` where
    :math:`|label - pred| \le \rho`, :math:`|label - pred| - \frac{\rho}{2}` elsewhere.

    Parameters
    ----------
    rho : float, default 1
    weight : float, optional
    batch_axis : int, default 0
    """

    def __init__(self, rho=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._rho = rho

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, self, label, pred)
        loss = F.abs(label - pred)
        loss = F.where(loss > self._rho, loss - 0.5 * self._rho,
                       (0.5 / self._rho) * F.square(loss))
        return _weighted_mean(F, self, loss, sample_weight)


class HingeLoss(Loss):
    r"""Hinge loss :math:`\max(0, margin - pred \cdot label)` for labels in {-1, 1}.

    Parameters
    ----------
    margin : float, default 1
    weight : float, optional
    batch_axis : int, default 0
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, self, label, pred)
        loss = F.relu(self._margin - pred * label)
        return _weighted_mean(F, self, loss, sample_weight)


class SquaredHingeLoss(Loss):
    r"""Squared hinge loss :math:`\max(0, margin - pred \cdot label)^2` for labels in
    {-1, 1}.

    Parameters
    ----------
    margin : float, default 1
    weight : float, optional
    batch_axis : int, default 0
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, self, label, pred)
        loss = F.square(F.relu(self._margin - pred * label))
        return _weighted_mean(F, self, loss, sample_weight)


class LogisticLoss(Loss):
    r"""Logistic loss :math:`\log(1 + e^{-pred \cdot label})` for labels in {-1, 1}
    (``'signed'``) or {0, 1} (``'binary'``), computed in a stable form.

    Parameters
    ----------
    weight : float, optional
    batch_axis : int, default 0
    label_format : {'signed', 'binary'}, default 'signed'
    """

    def __init__(self, weight=None, batch_axis=0, label_format="signed", **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._label_format = label_format
        if self._label_format not in ("signed", "binary"):
            raise ValueError("label_format can only be signed or binary, recieved %s."
                             % label_format)

    def hybrid_forward(self, F, pred, label, sample_weight=None):
        label = _reshape_like(F, self, label, pred)
        if self._label_format == "signed":
            label = (label + 1.0) / 2.0
        loss = F.relu(pred) - pred * label + F.Activation(-F.abs(pred), act_type="softrelu")
        return _weighted_mean(F, self, loss, sample_weight)


class TripletLoss(Loss):
    r"""Triplet loss :math:`\max(0, \|pred - positive\|^2 - \|pred - negative\|^2 +
    margin)`, the squared distances summed over the non-batch axes.

    Parameters
    ----------
    margin : float, default 1
    weight : float, optional
    batch_axis : int, default 0

    Inputs are ``pred``, ``positive``, ``negative`` and (an mxlite extension; MXNet's
    TripletLoss takes none) an optional ``sample_weight`` of shape ``(N,)``.
    """

    def __init__(self, margin=1, weight=None, batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, pred, positive, negative, sample_weight=None):
        positive = _reshape_like(F, self, positive, pred, "positive")
        negative = _reshape_like(F, self, negative, pred, "negative")
        loss = F.sum(F.square(positive - pred) - F.square(negative - pred),
                     axis=self._batch_axis, exclude=True)
        loss = F.relu(loss + self._margin)
        return _apply_weighting(F, loss, self._weight, sample_weight)


class PoissonNLLLoss(Loss):
    r"""Negative log-likelihood of ``target`` under a Poisson distribution of mean
    ``exp(pred)`` (``from_logits=True``: :math:`e^{pred} - target \cdot pred`) or
    ``pred`` (:math:`pred - target \log(pred + \epsilon)`).

    As in MXNet 1.9.1 the result is the mean over **all** elements, shape ``(1,)``.

    Parameters
    ----------
    weight : float, optional
    from_logits : bool, default True
    batch_axis : int, default 0
    compute_full : bool, default False
        Add Stirling's approximation :math:`t \log t - t + \frac{1}{2}\log(2\pi t)`
        for targets above 1. (MXNet returns NaN when a target is 0; mxlite
        evaluates the term only where it is used.)

    Inputs are ``pred``, ``target``, optional ``sample_weight`` and ``epsilon``
    (default 1e-08).
    """

    def __init__(self, weight=None, from_logits=True, batch_axis=0, compute_full=False,
                 **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._from_logits = from_logits
        self._compute_full = compute_full

    def hybrid_forward(self, F, pred, target, sample_weight=None, epsilon=1e-08):
        target = _reshape_like(F, self, target, pred, "target")
        if self._from_logits:
            loss = F.exp(pred) - target * pred
        else:
            loss = pred - target * F.log(pred + epsilon)
        if self._compute_full:
            # NOTE: t * log(t) is NaN at t = 0 (and its gradient infinite); the term is
            # only kept for t > 1, so it is computed on max(t, 1) and then masked.
            safe = F.broadcast_maximum(target, F.ones_like(target))
            stirling = safe * F.log(safe) - safe + 0.5 * F.log(2 * safe * np.pi)
            loss = loss + stirling * (target > 1)
        loss = _apply_weighting(F, loss, self._weight, sample_weight)
        return F.mean(loss)


class CosineEmbeddingLoss(Loss):
    r"""Cosine embedding loss: :math:`1 - \cos(x_1, x_2)` for label 1 and
    :math:`\max(0, \cos(x_1, x_2) - margin)` for label -1, cosine along the last axis.

    As in MXNet 1.9.1 the output has shape ``(N, 1)``.

    Parameters
    ----------
    weight : float, optional
    batch_axis : int, default 0
    margin : float, default 0

    Inputs are ``input1``, ``input2`` (same size), ``label`` (N values in {-1, 1})
    and an optional ``sample_weight`` broadcastable to ``(N, 1)``.
    """

    def __init__(self, weight=None, batch_axis=0, margin=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self._margin = margin

    def hybrid_forward(self, F, input1, input2, label, sample_weight=None):
        input1 = _reshape_like(F, self, input1, input2, "input1")
        label = F.reshape(label, shape=(-1, 1))
        cos_sim = self._cosine_similarity(F, input1, input2)
        cos_sim_a = (1 - cos_sim) * (label == 1)
        cos_sim_b = F.relu((label == -1) * (cos_sim - self._margin))
        loss = cos_sim_a + cos_sim_b
        return _apply_weighting(F, loss, self._weight, sample_weight)

    @staticmethod
    def _cosine_similarity(F, x, y, axis=-1):
        """Cosine of ``x`` and ``y`` along ``axis`` as a column; the norms' product is
        floored at 1e-12 so zero vectors give 0, not NaN."""
        x_norm = F.reshape(F.norm(x, axis=axis), shape=(-1, 1))
        y_norm = F.reshape(F.norm(y, axis=axis), shape=(-1, 1))
        x_dot_y = F.reshape(F.sum(x * y, axis=axis), shape=(-1, 1))
        norms = x_norm * y_norm
        return x_dot_y / F.broadcast_maximum(norms, F.ones_like(norms) * 1e-12)


class SDMLLoss(Loss):
    r"""Smoothed deep metric learning loss (Bonadiman et al., 2019) for a batch of
    aligned pairs ``(x1[i], x2[i])``.

    Each ``x1[i]`` is scored against every ``x2[j]`` by ``-||x1[i] - x2[j]||^2``; the
    loss is the KL divergence between the softmax of those scores and a smoothed
    one-hot target (``1 - smoothing_parameter`` on the pair, the rest spread
    evenly), per sample.

    Parameters
    ----------
    smoothing_parameter : float, default 0.3
    weight : float, default 1.
        Kept for MXNet's signature; as in MXNet 1.9.1 it does not scale the loss.
    batch_axis : int, default 0

    Inputs are ``x1`` and ``x2`` of shape ``(N, D)`` (N > 1).
    """

    def __init__(self, smoothing_parameter=0.3, weight=1., batch_axis=0, **kwargs):
        super().__init__(weight, batch_axis, **kwargs)
        self.kl_loss = KLDivLoss(from_logits=True)
        self.smoothing_parameter = smoothing_parameter

    @staticmethod
    def _compute_distances(F, x1, x2):
        """Squared distances between every row of ``x1`` and every row of ``x2``."""
        diffs = F.broadcast_sub(F.expand_dims(x1, axis=1), F.expand_dims(x2, axis=0))
        return F.sum(F.square(diffs), axis=2)

    def _compute_labels(self, F, x1):
        """Smoothed identity: 1 - s on the diagonal, s / (N - 1) elsewhere."""
        gold = F.diag(F.ones_like(F.sum(x1, axis=1)))
        off = 1 - gold
        s = self.smoothing_parameter
        return gold * (1 - s) + F.broadcast_div(off * s, F.sum(off, axis=1, keepdims=True))

    def hybrid_forward(self, F, x1, x2):
        s1, s2 = _shape(x1), _shape(x2)
        if s1 is not None and s2 is not None and (s1 != s2 or len(s1) != 2):
            raise ValueError("SDMLLoss: x1 and x2 must both have shape (batch_size, dim), got "
                             "%s and %s" % (s1, s2))
        labels = self._compute_labels(F, x1)
        distances = self._compute_distances(F, x1, x2)
        log_probabilities = F.log_softmax(-distances, axis=1)
        return self.kl_loss(log_probabilities, labels)
