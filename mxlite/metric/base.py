"""The metric base class, the registry behind :func:`create`, and the metrics over
the predictions alone (Loss) or a user's function (CustomMetric, :func:`np`)."""
import json
from collections import OrderedDict

import numpy

from ..nd.ndarray import NDArray


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
