"""``BaseModule``: the training and evaluation loops shared by modules (``fit``,
``score``, ``predict``), written against the intermediate API (``forward``,
``backward``, ``update``, ``update_metric``) that :class:`Module` implements."""
import logging
import time

import numpy as np

from ..base import MXNetError
from ..model import BatchEndParam

__all__ = ["BaseModule"]


def _as_list(obj):
    if obj is None:
        return []
    return obj if isinstance(obj, (list, tuple)) else [obj]


def _call(callbacks, param):
    for cb in _as_list(callbacks):
        cb(param)


class BaseModule:
    """Common loops of the Module API; see :class:`mxlite.module.Module`."""

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None

    # -- high-level loops --------------------------------------------------------
    def forward_backward(self, data_batch):
        """One forward pass in training mode followed by backward."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Evaluate ``eval_metric`` over ``eval_data``; returns its name/value pairs."""
        from .. import metric as _metric
        self._check_ready("score")
        if reset:
            eval_data.reset()
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        eval_metric.reset()
        actual = 0
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(batch, is_train=False)
            self.update_metric(eval_metric, batch.label)
            _call(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
            actual = nbatch + 1
        _call(score_end_callback, BatchEndParam(epoch, actual, eval_metric, locals()))
        return eval_metric.get_name_value()

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield ``(outputs, nbatch, batch)`` with padding removed from the outputs."""
        self._check_ready("iter_predict")
        if reset:
            eval_data.reset()
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.forward(batch, is_train=False)
            pad = batch.pad or 0
            outputs = [out[0:out.shape[0] - pad] for out in self.get_outputs()]
            yield outputs, nbatch, batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """Outputs over ``eval_data``, concatenated over batches (padding removed)."""
        from .. import nd
        from ..nd.ndarray import NDArray
        if isinstance(eval_data, (NDArray, np.ndarray)):
            from ..io import NDArrayIter
            eval_data = NDArrayIter(eval_data, batch_size=eval_data.shape[0])
        outs = [[o.copy() for o in outputs]
                for outputs, _, _ in self.iter_predict(eval_data, num_batch, reset)]
        if not outs:
            return []
        if merge_batches:
            n = len(outs[0])
            merged = [nd.concat(*[o[i] for o in outs], dim=0) if len(outs) > 1 else outs[0][i]
                      for i in range(n)]
            if n == 1 and not always_output_list:
                return merged[0]
            return merged
        return outs

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", optimizer="sgd",
            optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=None, arg_params=None, aux_params=None,
            allow_missing=False, force_rebind=False, force_init=False, begin_epoch=0,
            num_epoch=None, validation_metric=None, monitor=None, sparse_row_id_fn=None):
        """Train: bind, initialise parameters and optimizer, then run ``num_epoch`` epochs."""
        from .. import metric as _metric
        from .. import initializer as _init
        if num_epoch is None:
            raise ValueError("fit: please specify num_epoch")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        self.init_params(initializer=initializer if initializer is not None else
                         _init.Uniform(0.01), arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        if monitor is not None:
            self.install_monitor(monitor)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            self._epoch_begin(epoch, train_data)
            train_data.reset()
            for nbatch, batch in enumerate(train_data):
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(batch)
                self.update()
                self.update_metric(eval_metric, batch.label)
                if monitor is not None:
                    monitor.toc_print()
                _call(batch_end_callback, BatchEndParam(epoch, nbatch, eval_metric, locals()))
            for name, val in eval_metric.get_name_value():
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, val)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            for cb in _as_list(epoch_end_callback):
                cb(epoch, self.symbol, arg_params, aux_params)
            if eval_data is not None:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, val)

    def _epoch_begin(self, epoch, train_data):
        """Called by :meth:`fit` before each epoch (``SVRGModule`` computes its full
        gradients here)."""

    def install_monitor(self, mon):
        """Have the :class:`~mxlite.monitor.Monitor` ``mon`` watch this module's
        executors."""
        raise NotImplementedError("%s does not support monitors" % type(self).__name__)

    def _check_ready(self, what):
        if not (self.binded and self.params_initialized):
            raise MXNetError("%s: call bind() and init_params() first" % what)

    # -- what a module is bound to (the attributes its subclass sets) --------------------
    @property
    def symbol(self):
        return self._symbol

    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        return self._data_shapes

    @property
    def label_shapes(self):
        return self._label_shapes


# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "DataBatch": "mxlite.io.io",
    "DataDesc": "mxlite.io.io",
    "DataIter": "mxlite.io.io",
    "Uniform": "mxlite.initializer",
    "cpu": "mxlite.context",
    "metric": "mxlite.metric:",
    "ndarray": "mxlite.nd:",
})
