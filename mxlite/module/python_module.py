"""Modules written in Python: ``PythonModule`` (no parameters; subclasses compute) and
``PythonLossModule`` (a loss whose gradient is a Python function)."""
import logging

from ..base import MXNetError
from .base_module import BaseModule
from .._lazy import exports as _exports

__all__ = ["PythonModule", "PythonLossModule"]


class PythonModule(BaseModule):
    """A module without parameters, for computation written in Python.

    Subclasses define ``forward``, ``backward``, ``get_outputs``, ``get_input_grads`` and
    ``_compute_output_shapes``; parameters, optimizer and update are no-ops.
    """

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super().__init__(logger=logger)
        self._data_names = list(data_names)
        self._label_names = list(label_names) if label_names is not None else []
        self._output_names = list(output_names)
        self._data_shapes = self._label_shapes = self._output_shapes = None

    @property
    def output_shapes(self):
        return self._output_shapes

    def get_params(self):
        return {}, {}

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        self.params_initialized = True

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        self.params_initialized = True

    def update(self):
        """Nothing to update: the module has no parameters."""

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        if self._label_shapes is None:
            return       # not bound with labels: nothing to score
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Record the shapes (``[(name, shape)]``) and compute the output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if grad_req != "write":
            raise MXNetError("%s.bind: only grad_req='write' is supported, got %r"
                             % (type(self).__name__, grad_req))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        names = [d[0] for d in data_shapes]
        if names != self._data_names:
            raise MXNetError("%s.bind: data shapes are for %s, the module's data names are %s"
                             % (type(self).__name__, names, self._data_names))
        self._data_shapes = list(data_shapes)
        self._label_shapes = list(label_shapes) if label_shapes is not None else None
        if label_shapes is not None and [d[0] for d in label_shapes] != self._label_names:
            raise MXNetError("%s.bind: label shapes are for %s, the module's label names are "
                             "%s" % (type(self).__name__, [d[0] for d in label_shapes],
                                     self._label_names))
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        """``[(name, shape)]`` of the outputs, from the bound data and label shapes."""
        raise NotImplementedError("%s must define _compute_output_shapes"
                                  % type(self).__name__)

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        self.optimizer_initialized = True


class PythonLossModule(PythonModule):
    """A loss: the output is the input scores; the input gradient is
    ``grad_func(scores, labels)``.

    >>> loss = mx.mod.PythonLossModule(grad_func=lambda s, l: s - l.reshape((-1, 1)))
    """

    def __init__(self, name="pyloss", data_names=("data",), label_names=("softmax_label",),
                 logger=logging, grad_func=None):
        super().__init__(data_names, label_names, [name + "_output"], logger=logger)
        self._name = name
        if len(self._data_names) != 1 or len(self._label_names) != 1:
            raise MXNetError("PythonLossModule takes one data and one label, got %s and %s"
                             % (self._data_names, self._label_names))
        self._scores = self._labels = self._scores_grad = None
        if grad_func is not None and not callable(grad_func):
            raise TypeError("PythonLossModule: grad_func must be callable, got %r"
                            % (grad_func,))
        self._grad_func = grad_func

    def _compute_output_shapes(self):
        return [(self._name + "_output", tuple(self._data_shapes[0][1]))]

    def forward(self, data_batch, is_train=None):
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        return [self._scores]

    def backward(self, out_grads=None):
        if out_grads is not None:
            raise MXNetError("PythonLossModule.backward: a loss takes no out_grads")
        if not self.for_training:
            raise MXNetError("PythonLossModule.backward: bound with for_training=False")
        self._backward_impl()

    def _backward_impl(self):
        """``grad_func(scores, labels)`` as the input gradient; subclasses may override."""
        from .. import nd
        if self._grad_func is None:
            raise NotImplementedError("PythonLossModule: give grad_func or override "
                                      "_backward_impl")
        grad = self._grad_func(self._scores, self._labels)
        self._scores_grad = grad if isinstance(grad, nd.NDArray) else nd.array(grad)

    def get_input_grads(self, merge_multi_context=True):
        return [self._scores_grad]

    def install_monitor(self, mon):
        raise NotImplementedError("PythonLossModule has no executors to monitor")


__getattr__, __dir__ = _exports(__name__, {"BaseModule": "mxlite.module.base_module", "Uniform": "mxlite.initializer",
                                           "nd": "mxlite.nd:"})
