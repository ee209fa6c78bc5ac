"""Checks shared by the Estimator and its event handlers."""
from ...loss import SoftmaxCrossEntropyLoss
from ....metric import Accuracy, EvalMetric, CompositeEvalMetric


def _check_metrics(metrics):
    """A flat list of EvalMetric from None, one metric, a composite or a list."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for metric in metrics.metrics for m in _check_metrics(metric)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = list(metrics or [])
    if not all(isinstance(metric, EvalMetric) for metric in metrics):
        raise ValueError("metrics must be a Metric or a list of Metric, "
                         "refer to mxnet.metric.EvalMetric: {}".format(metrics))
    return metrics


def _check_handler_metric_ref(handler, known_metrics):
    """Raise if ``handler`` holds a metric (in an attribute named like ``*metric*`` or
    ``*monitor*``) that is not one of the estimator's own metric objects.

    NOTE: MXNet meant to check both words but wrote ``['metric' or 'monitor']``, which
    is ``['metric']``; an EarlyStoppingHandler monitoring a foreign metric then watched
    a value nobody updates. mxlite checks both.
    """
    for attribute in dir(handler):
        if "metric" not in attribute and "monitor" not in attribute:
            continue
        reference = getattr(handler, attribute)
        if not reference or callable(reference):
            continue
        for metric in reference if isinstance(reference, list) else [reference]:
            _check_metric_known(handler, metric, known_metrics)


def _check_metric_known(handler, metric, known_metrics):
    if metric not in known_metrics:
        raise ValueError(
            "Event handler {} refers to a metric instance {} outside of the known training "
            "and validation metrics. Please use the metrics from estimator.train_metrics and "
            "estimator.val_metrics instead.".format(type(handler).__name__, metric))


def _suggest_metric_for_loss(loss):
    """Accuracy for a softmax cross-entropy loss, else None."""
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None
