"""Classification metrics: Accuracy, TopKAccuracy, F1, MCC, Perplexity."""
import math

import numpy

from .base import EvalMetric, register, alias, check_label_shapes, _numpy


@register
@alias("acc")
class Accuracy(EvalMetric):
    """Fraction of predictions equal to the labels.

    Predictions shaped unlike the labels are class scores: their argmax along
    ``axis`` is the predicted class.

    Parameters
    ----------
    axis : int, default 1
    name : str, default 'accuracy'
    """

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, axis=axis, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            pred = _numpy(pred)
            label = _numpy(label)
            if pred.shape != label.shape:
                pred = numpy.argmax(pred, axis=self.axis)
            pred = pred.astype("int32").ravel()
            label = label.astype("int32").ravel()
            check_label_shapes(label, pred)
            self._add(int((pred == label).sum()), len(pred))


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """Fraction of samples whose label is among the ``top_k`` highest scores.

    Parameters
    ----------
    top_k : int
        Must be > 1 (use :class:`Accuracy` for 1); the name becomes ``top_k_accuracy_<k>``.
    """

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        super().__init__(name, top_k=top_k, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.top_k = top_k
        if self.top_k <= 1:
            raise ValueError("Please use Accuracy if top_k is no more than 1, got top_k=%r"
                             % (top_k,))
        self.name += "_%d" % self.top_k

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            pred = _numpy(pred).astype("float32")
            if pred.ndim > 2:
                raise ValueError("TopKAccuracy: predictions should be no more than 2 dims, got "
                                 "shape %s" % (pred.shape,))
            label = _numpy(label).astype("int32")
            check_label_shapes(label, pred)
            if pred.ndim == 1:
                # NOTE: as MXNet, a 1-D prediction is compared by its argsort position.
                order = numpy.argpartition(pred, -self.top_k)
                correct = int((order.ravel() == label.ravel()).sum())
                self.sum_metric += correct
            else:
                k = min(pred.shape[1], self.top_k)
                top = numpy.argpartition(pred, -k, axis=1)[:, -k:] if k < pred.shape[1] \
                    else numpy.tile(numpy.arange(pred.shape[1]), (pred.shape[0], 1))
                correct = int((top == label.reshape(-1, 1)).any(axis=1).sum())
                self.sum_metric += correct
                self.global_sum_metric += correct
            self.num_inst += pred.shape[0]
            self.global_num_inst += pred.shape[0]


class _BinaryStats:
    """Confusion counts of a binary classifier, local and global."""

    def __init__(self):
        self.reset_stats()

    def update_binary_stats(self, label, pred):
        pred = _numpy(pred)
        label = _numpy(label).astype("int32")
        pred_label = numpy.argmax(pred, axis=1)
        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError("%s currently only supports binary classification."
                             % self.__class__.__name__)
        pred_true = pred_label == 1
        label_true = label.ravel() == 1
        counts = (int((pred_true & label_true).sum()), int((pred_true & ~label_true).sum()),
                  int((~pred_true & label_true).sum()), int((~pred_true & ~label_true).sum()))
        for k, c in zip(("true_positives", "false_positives", "false_negatives",
                         "true_negatives"), counts):
            setattr(self, k, getattr(self, k) + c)
            setattr(self, "global_" + k, getattr(self, "global_" + k) + c)

    @staticmethod
    def _fscore(tp, fp, fn):
        precision = float(tp) / (tp + fp) if tp + fp > 0 else 0.
        recall = float(tp) / (tp + fn) if tp + fn > 0 else 0.
        if precision + recall > 0:
            return 2 * precision * recall / (precision + recall)
        return 0.

    @property
    def fscore(self):
        return self._fscore(self.true_positives, self.false_positives, self.false_negatives)

    @property
    def global_fscore(self):
        return self._fscore(self.global_true_positives, self.global_false_positives,
                            self.global_false_negatives)

    def matthewscc(self, use_global=False):
        pre = "global_" if use_global else ""
        tp, fp, fn, tn = (float(getattr(self, pre + k)) for k in (
            "true_positives", "false_positives", "false_negatives", "true_negatives"))
        if tp + fp + fn + tn == 0:
            return 0.
        denom = 1.
        # Zero factors of the denominator count as 1, as in MXNet.
        for t in ((tp + fp), (tp + fn), (tn + fp), (tn + fn)):
            if t != 0.:
                denom *= t
        return ((tp * tn) - (fp * fn)) / math.sqrt(denom)

    @property
    def total_examples(self):
        return self.false_negatives + self.false_positives + self.true_negatives \
            + self.true_positives

    @property
    def global_total_examples(self):
        return self.global_false_negatives + self.global_false_positives \
            + self.global_true_negatives + self.global_true_positives

    def local_reset_stats(self):
        self.false_positives = self.false_negatives = 0
        self.true_positives = self.true_negatives = 0

    def reset_stats(self):
        self.local_reset_stats()
        self.global_false_positives = self.global_false_negatives = 0
        self.global_true_positives = self.global_true_negatives = 0


class _BinaryMetric(EvalMetric):
    """F1 and MCC: per-update average (macro) or one value over all counts (micro)."""

    def __init__(self, name, output_names, label_names, average):
        self.average = average
        self.metrics = _BinaryStats()
        EvalMetric.__init__(self, name=name, output_names=output_names,
                            label_names=label_names, has_global_stats=True)

    def _value(self, use_global):
        raise NotImplementedError()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            self.metrics.update_binary_stats(label, pred)
        m = self.metrics
        if self.average == "macro":
            self.sum_metric += self._value(False)
            self.global_sum_metric += self._value(True)
            self.num_inst += 1
            self.global_num_inst += 1
            m.reset_stats()
        else:
            self.sum_metric = self._value(False) * m.total_examples
            self.global_sum_metric = self._value(True) * m.global_total_examples
            self.num_inst = m.total_examples
            self.global_num_inst = m.global_total_examples

    def reset(self):
        self.sum_metric = 0.
        self.num_inst = 0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
        self.metrics.reset_stats()

    def reset_local(self):
        self.sum_metric = 0.
        self.num_inst = 0
        self.metrics.local_reset_stats()


@register
class F1(_BinaryMetric):
    """The F1 score of a binary classifier (predictions: scores of classes 0 and 1).

    Parameters
    ----------
    average : {'macro', 'micro'}, default 'macro'
        'macro' averages the F1 of each update; 'micro' computes one F1 from the
        counts accumulated over all updates.

    Examples
    --------
    >>> f1 = mx.metric.F1()
    >>> f1.update([mx.nd.array([0., 1., 1.])], [mx.nd.array([[0.3, 0.7], [0., 1.], [0.4, 0.6]])])
    >>> f1.get()
    ('f1', 0.8)
    """

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    def _value(self, use_global):
        return self.metrics.global_fscore if use_global else self.metrics.fscore


@register
class MCC(_BinaryMetric):
    """The Matthews correlation coefficient of a binary classifier.

    Zero factors of the denominator count as 1 (so a constant predictor gives 0).

    Parameters
    ----------
    average : {'macro', 'micro'}, default 'macro'
    """

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    def _value(self, use_global):
        return self.metrics.matthewscc(use_global)


@register
class Perplexity(EvalMetric):
    """``exp`` of the mean negative log-probability of the labels.

    Parameters
    ----------
    ignore_label : int or None
        Labels equal to this are left out (neither counted nor scored).
    axis : int, default -1
        The class axis of the predictions.
    """

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super().__init__(name, ignore_label=ignore_label, output_names=output_names,
                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        if len(labels) != len(preds):
            raise ValueError("Perplexity: %d labels for %d predictions"
                             % (len(labels), len(preds)))
        loss, num = 0., 0
        for label, pred in zip(labels, preds):
            pred = _numpy(pred)
            label = _numpy(label)
            if label.size != pred.size / pred.shape[-1]:
                raise ValueError("shape mismatch: %s vs. %s" % (label.shape, pred.shape))
            label = label.reshape((label.size,))
            scores = numpy.moveaxis(pred, self.axis, -1).reshape(-1, pred.shape[self.axis])
            prob = scores[numpy.arange(label.size), label.astype("int64")]
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(prob.dtype)
                num -= int(ignore.sum())
                prob = prob * (1 - ignore) + ignore
            loss -= float(numpy.log(numpy.maximum(prob, prob.dtype.type(1e-10))).sum())
            num += prob.size
        self._add(loss, num)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))
