"""``mx.metric``: evaluation metrics, as in MXNet 1.9.1.

Every metric keeps a local and a global running sum (``sum_metric``/``num_inst``
and ``global_sum_metric``/``global_num_inst``); ``reset_local`` clears only the
local one. The numbers are MXNet 1.9.1's, quirks included: MAE, MSE and RMSE
average their per-update values (not per sample), and so does F1 with
``average='macro'``.

>>> acc = mx.metric.Accuracy()
>>> acc.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
>>> acc.get()
('accuracy', 0.6666666666666666)
"""
import json
import math
from collections import OrderedDict

import numpy

from .nd.ndarray import NDArray

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "Caffe", "CustomMetric", "create",
           "register", "alias", "np", "check_label_shapes"]

_REGISTRY = {}


def register(klass):
    """Register a metric class under its lower-cased name (for :func:`create`)."""
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def alias(*names):
    """Register a metric class under extra names."""
    def reg(klass):
        for n in names:
            _REGISTRY[n.lower()] = klass
        return klass
    return reg


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Check that ``labels`` and ``preds`` agree in length (or shape when ``shape``).

    With ``wrap``, single NDArrays are wrapped into lists.
    """
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError("Shape of labels {} does not match shape of "
                         "predictions {}".format(label_shape, pred_shape))
    if wrap:
        if isinstance(labels, NDArray):
            labels = [labels]
        if isinstance(preds, NDArray):
            preds = [preds]
    return labels, preds


def _numpy(x):
    return x.asnumpy() if isinstance(x, NDArray) else numpy.asarray(x)


class EvalMetric:
    """Base class of the evaluation metrics.

    Parameters
    ----------
    name : str
        The metric's name (what :meth:`get` returns with the value).
    output_names, label_names : list of str, optional
        Which predictions and labels :meth:`update_dict` uses (all by default).
    """

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return "EvalMetric: {}".format(dict(self.get_name_value()))

    def get_config(self):
        """The arguments that recreate this metric with :func:`create`."""
        config = self._kwargs.copy()
        config.update({"metric": self.__class__.__name__, "name": self.name,
                       "output_names": self.output_names, "label_names": self.label_names})
        return config

    def update_dict(self, label, pred):
        """Update from dicts of name -> NDArray (filtered by the names given at creation)."""
        pred = [pred[n] for n in self.output_names] if self.output_names is not None \
            else list(pred.values())
        label = [label[n] for n in self.label_names] if self.label_names is not None \
            else list(label.values())
        self.update(label, pred)

    def update(self, labels, preds):
        """Update the metric with lists of label and prediction NDArrays."""
        raise NotImplementedError()

    def reset(self):
        """Clear the local and the global statistics."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local statistics only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """``(name, value)`` of the local statistics (NaN before any update)."""
        if self.num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        """``(name, value)`` since the last :meth:`reset`."""
        if not self._has_global_stats:
            return self.get()
        if self.global_num_inst == 0:
            return (self.name, float("nan"))
        return (self.name, self.global_sum_metric / self.global_num_inst)

    def get_name_value(self):
        """``[(name, value), ...]`` of :meth:`get`."""
        return _pairs(*self.get())

    def get_global_name_value(self):
        """``[(name, value), ...]`` of :meth:`get_global`."""
        if not self._has_global_stats:
            return self.get_name_value()
        return _pairs(*self.get_global())

    def _add(self, value, count):
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count


def _pairs(name, value):
    if not isinstance(name, list):
        name = [name]
    if not isinstance(value, list):
        value = [value]
    return list(zip(name, value))


def create(metric, *args, **kwargs):
    """A metric from a name (``'acc'``, ``'f1'``...), a callable, an instance, a dict
    or JSON config, or a list of any of these (a :class:`CompositeEvalMetric`).

    Examples
    --------
    >>> type(mx.metric.create('acc')).__name__
    'Accuracy'
    >>> mx.metric.create(['acc', 'mse']).get()[0]
    ['accuracy', 'mse']
    """
    if callable(metric) and not isinstance(metric, type):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if isinstance(metric, EvalMetric):
        if args or kwargs:
            raise ValueError("metric is already an instance. Additional arguments are invalid")
        return metric
    if isinstance(metric, dict):
        kwargs = dict(metric)
        return create(kwargs.pop("metric"), **kwargs)
    if not isinstance(metric, str):
        raise TypeError("metric must be a name, callable, EvalMetric, dict or list, got %s"
                        % type(metric).__name__)
    if metric.startswith("["):
        name, kw = json.loads(metric)
        return create(name, **kw)
    if metric.startswith("{"):
        return create(json.loads(metric))
    klass = _REGISTRY.get(metric.lower())
    if klass is None:
        raise ValueError("Metric %s is not registered. Please register with metric.register "
                         "first (registered: %s)" % (metric, ", ".join(sorted(_REGISTRY))))
    return klass(*args, **kwargs)


@register
@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` returns lists of names and values.

    Parameters
    ----------
    metrics : list, optional
        Metrics or what :func:`create` accepts.
    name : str
    """

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.metrics = [create(i) for i in (metrics or [])]

    def add(self, metric):
        """Add a child metric."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """The child metric at ``index``."""
        try:
            return self.metrics[index]
        except IndexError:
            raise ValueError("Metric index {} is out of range 0 and {}".format(
                index, len(self.metrics))) from None

    def update_dict(self, labels, preds):
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, "metrics", ()):
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def get(self):
        return self._collect(lambda m: m.get())

    def get_global(self):
        return self._collect(lambda m: m.get_global())

    def _collect(self, fn):
        names, values = [], []
        for metric in self.metrics:
            name, value = fn(metric)
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return (names, values)

    def get_config(self):
        config = super().get_config()
        config.update({"metrics": [i.get_config() for i in self.metrics]})
        return config


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


def _as_columns(label, pred):
    label, pred = _numpy(label), _numpy(pred)
    if label.ndim == 1:
        label = label.reshape(label.shape[0], 1)
    if pred.ndim == 1:
        pred = pred.reshape(pred.shape[0], 1)
    return label, pred


class _Regression(EvalMetric):
    """MAE/MSE/RMSE: each update adds its batch value; :meth:`get` averages over updates."""

    def __init__(self, name, output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    @staticmethod
    def _batch_value(diff):
        raise NotImplementedError()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _as_columns(label, pred)
            # NOTE: MXNet 1.9.1 counts one instance per update, not per sample.
            self._add(self._batch_value(label - pred), 1)


@register
class MAE(_Regression):
    """Mean absolute error (averaged per update, as MXNet 1.9.1)."""

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _batch_value(diff):
        return numpy.abs(diff).mean()


@register
class MSE(_Regression):
    """Mean squared error (averaged per update, as MXNet 1.9.1)."""

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _batch_value(diff):
        return (diff ** 2.0).mean()


@register
class RMSE(_Regression):
    """Root mean squared error (each update's RMSE, averaged over updates)."""

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _batch_value(diff):
        return numpy.sqrt((diff ** 2.0).mean())


class _LogLoss(EvalMetric):
    def __init__(self, eps, name, output_names, label_names):
        super().__init__(name, eps=eps, output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _numpy(label).ravel()
            pred = _numpy(pred)
            n = pred.shape[0]
            if label.shape[0] != n:
                raise ValueError("%s: %d labels for %d predictions"
                                 % (type(self).__name__, label.shape[0], n))
            prob = pred[numpy.arange(n, dtype=numpy.int64), numpy.int64(label)]
            self._add((-numpy.log(prob + self.eps)).sum(), n)


@register
@alias("ce")
class CrossEntropy(_LogLoss):
    """Mean of ``-log(p[label] + eps)`` over samples.

    Parameters
    ----------
    eps : float, default 1e-12
    """

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("nll_loss")
class NegativeLogLikelihood(_LogLoss):
    """Mean of ``-log(p[label] + eps)`` over samples (named 'nll-loss')."""

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of predictions and labels.

    Parameters
    ----------
    average : {'macro', 'micro'}, default 'macro'
        'macro' averages the correlation of each update; 'micro' computes one
        over everything seen (streaming means, variances and covariance).
    """

    def __init__(self, name="pearsonr", output_names=None, label_names=None, average="macro"):
        self.average = average
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def reset_micro(self):
        self._sse_p = self._mean_p = self._sse_l = self._mean_l = 0
        self._pred_nums = self._label_nums = 0
        self._conv = 0

    def reset(self):
        super().reset()
        if self.average == "micro":
            self.reset_micro()

    @staticmethod
    def update_variance(new_values, *aggregate):
        """Welford's update of ``(count, mean, sum of squared deviations)``."""
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += numpy.sum(delta / count)
        delta_2 = new_values - mean
        m_2 += numpy.sum(delta * delta_2)
        return count, mean, m_2

    def update_cov(self, label, pred):
        # NOTE: as MXNet, uses the label mean *after* this batch and the pred mean before.
        self._conv = self._conv + numpy.sum((label - self._mean_l) * (pred - self._mean_p))

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = _numpy(label).ravel().astype(numpy.float64)
            pred = _numpy(pred).ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(numpy.corrcoef(pred, label)[0, 1], 1)
            else:
                self.num_inst += 1
                self.global_num_inst += 1
                self._label_nums, self._mean_l, self._sse_l = self.update_variance(
                    label, self._label_nums, self._mean_l, self._sse_l)
                self.update_cov(label, pred)
                self._pred_nums, self._mean_p, self._sse_p = self.update_variance(
                    pred, self._pred_nums, self._mean_p, self._sse_p)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float("nan"))
        if self.average == "macro":
            return (self.name, self.sum_metric / self.num_inst)
        n = self._label_nums
        r = self._conv / ((n - 1) * numpy.sqrt(self._sse_p / (n - 1))
                          * numpy.sqrt(self._sse_l / (n - 1)))
        return (self.name, r)


@register
class PCC(EvalMetric):
    """Multi-class Matthews correlation from a confusion matrix that grows with the classes."""

    def __init__(self, name="pcc", output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super().__init__(name=name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc):
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), "constant", constant_values=(0))
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), "constant", constant_values=(0))
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        i = cmat.diagonal()
        cov_xy = numpy.sum(i * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _numpy(label).astype("int32")
            pred = _numpy(pred)
            pred = pred.argmax(axis=1) if pred.shape != label.shape else pred.astype("int32")
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(n + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            numpy.add.at(bcm, (pred.ravel(), label.ravel()), 1)
            self.lcm += bcm
            self.gcm += bcm
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @sum_metric.setter
    def sum_metric(self, _):
        pass  # derived from the confusion matrix

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    @global_sum_metric.setter
    def global_sum_metric(self, _):
        pass

    def reset(self):
        self.global_num_inst = 0.
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.
        self.lcm = numpy.zeros((self.k, self.k))


@register
class Loss(EvalMetric):
    """The mean of the predictions themselves (losses); labels are ignored."""

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=True)

    def update(self, _, preds):
        if isinstance(preds, NDArray):
            preds = [preds]
        for pred in preds:
            p = _numpy(pred)
            self._add(float(p.sum()), p.size)


@register
class Torch(Loss):
    """Dummy metric for torch criterions (a :class:`Loss`)."""

    def __init__(self, name="torch", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class Caffe(Loss):
    """Dummy metric for caffe criterions (a :class:`Loss`)."""

    def __init__(self, name="caffe", output_names=None, label_names=None):
        super().__init__(name, output_names=output_names, label_names=label_names)


@register
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)`` on NumPy arrays.

    ``feval`` returns a value (one instance) or ``(sum_metric, num_inst)``.

    Parameters
    ----------
    feval : callable
    name : str, optional
        ``feval.__name__`` by default (``custom(<lambda>)`` for lambdas).
    allow_extra_outputs : bool
        Do not require as many predictions as labels.
    """

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None,
                 label_names=None):
        if name is None:
            name = feval.__name__
            if name.find("<") != -1:
                name = "custom(%s)" % name
        super().__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                         output_names=output_names, label_names=label_names,
                         has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            reval = self._feval(_numpy(label), _numpy(pred))
            if isinstance(reval, tuple):
                self._add(*reval)
            else:
                self._add(reval, 1)

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A :class:`CustomMetric` from a function of NumPy ``(label, pred)``.

    Examples
    --------
    >>> def mean_abs(label, pred):
    ...     return abs(label - pred).mean()
    >>> m = mx.metric.np(mean_abs)
    >>> m.update([mx.nd.array([1., 2.])], [mx.nd.array([1., 4.])])
    >>> m.name, float(m.get()[1])
    ('mean_abs', 1.0)
    """
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


from . import registry as _registry  # noqa: E402
_registry.adopt(EvalMetric, _REGISTRY)  # mx.registry.get_registry(EvalMetric) lists them

# Names MXNet's module also shows, served from where they live in mxlite.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "ndarray": "mxlite.nd:",
    "numeric_types": "mxlite.base",
    "registry": "mxlite.registry:",
    "string_types": "mxlite.base",
})
