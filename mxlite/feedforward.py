"""``mx.model.FeedForward``: MXNet's first training API (before ``mx.mod.Module``),
trained here through a Module so that old scripts run with the same numbers."""
import importlib.util

import numpy as np

from .base import MXNetError

__all__ = ["FeedForward"]

# Whether scikit-learn is installed (MXNet's FeedForward names it; nothing here uses it).
SKLEARN_INSTALLED = importlib.util.find_spec("sklearn") is not None


def _as_iter(X, y, batch_size, is_train):
    """A DataIter for ``X``: a DataIter itself, or arrays (NumPy/NDArray) with labels
    ``y`` (required for training; 1-D, or 2-D with one column)."""
    from .io import DataIter, NDArrayIter
    from .nd.ndarray import NDArray
    if isinstance(X, DataIter):
        return X
    if not isinstance(X, (np.ndarray, NDArray)):
        raise TypeError("FeedForward: X must be a DataIter, a numpy.ndarray or an NDArray, "
                        "got %s" % type(X).__name__)
    if y is None:
        if is_train:
            raise ValueError("FeedForward: y must be given when X is an array")
        y = np.zeros(X.shape[0])
    if not isinstance(y, (np.ndarray, NDArray)):
        raise TypeError("FeedForward: y must be a numpy.ndarray or an NDArray, got %s"
                        % type(y).__name__)
    if X.shape[0] != y.shape[0]:
        raise ValueError("FeedForward: X has %d samples but y has %d" % (X.shape[0], y.shape[0]))
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.reshape((-1,))
    if y.ndim != 1:
        raise ValueError("FeedForward: y must be 1-D (or 2-D with one column), got shape %s"
                         % (y.shape,))
    return NDArrayIter(X, y, min(X.shape[0], batch_size), shuffle=is_train,
                       last_batch_handle="roll_over" if is_train else "pad")


class FeedForward:
    """A Symbol with its parameters, trained by :meth:`fit` and run by :meth:`predict`.

    Parameters
    ----------
    symbol : Symbol
        The network, ending in a loss output (``SoftmaxOutput``).
    ctx : Context or list of Context
        Devices; the batch is split over a list.
    num_epoch : int
        Epochs that :meth:`fit` trains for.
    epoch_size : int, optional
        Batches per epoch (the iterator continues where it stopped); one pass by default.
    optimizer : str or Optimizer
    initializer : Initializer
    numpy_batch_size : int
        Batch size for data given as arrays.
    arg_params, aux_params : dict of str to NDArray, optional
        Starting values of the parameters.
    allow_extra_params : bool
        Ignore entries of ``arg_params``/``aux_params`` the symbol does not use.
    begin_epoch : int
    **kwargs
        Passed to the optimizer (``learning_rate``, ``momentum``, ``wd``, ...).

    >>> model = mx.model.FeedForward(net, num_epoch=10, learning_rate=0.1)
    >>> model.fit(X=train_iter, eval_data=val_iter)
    >>> probs = model.predict(val_iter)
    """

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
                 initializer=None, numpy_batch_size=128, arg_params=None, aux_params=None,
                 allow_extra_params=False, begin_epoch=0, **kwargs):
        from .context import Context, cpu
        from .initializer import Uniform
        self.symbol = symbol
        self.ctx = [cpu()] if ctx is None else ([ctx] if isinstance(ctx, Context) else list(ctx))
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.optimizer = optimizer
        self.initializer = initializer if initializer is not None else Uniform(0.01)
        self.numpy_batch_size = numpy_batch_size
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        self.begin_epoch = begin_epoch
        self.kwargs = kwargs.copy()
        self._pred_module = None

    def _module(self, data_iter, for_training):
        """A Module for ``data_iter``'s inputs (bound to its shapes for prediction)."""
        from .module import Module
        data_names = [d[0] for d in data_iter.provide_data]
        label_names = [d[0] for d in data_iter.provide_label or []]
        args = self.symbol.list_arguments()
        mod = Module(self.symbol, data_names=data_names,
                     label_names=[n for n in label_names if n in args], context=self.ctx)
        if not for_training:
            mod.bind(data_iter.provide_data, None, for_training=False)
        return mod

    def _module_params(self, mod):
        """``(arg_params, aux_params)`` restricted to what ``mod``'s symbol uses."""
        arg = {k: v for k, v in (self.arg_params or {}).items() if k in mod._param_names}
        aux = {k: v for k, v in (self.aux_params or {}).items() if k in mod._aux_names}
        extra = set(self.arg_params or {}) - set(arg) | (set(self.aux_params or {}) - set(aux))
        if extra and not self.allow_extra_params:
            raise MXNetError("FeedForward: arg_params/aux_params have names the symbol does "
                             "not use: %s (pass allow_extra_params=True)" % sorted(extra))
        return arg or None, aux or None

    def fit(self, X, y=None, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", logger=None, work_load_list=None,
            monitor=None, eval_end_callback=None, eval_batch_end_callback=None):
        """Train for ``num_epoch`` epochs on ``X`` (a DataIter, or arrays with labels
        ``y``); ``eval_data`` (a DataIter or an ``(X, y)`` pair) is scored after each
        epoch. The trained values end in ``arg_params``/``aux_params``."""
        from .callback import LogValidationMetricsCallback
        from .io import ResizeIter
        if self.num_epoch is None:
            raise ValueError("FeedForward.fit: num_epoch is not set (give it to the "
                             "constructor)")
        train = _as_iter(X, y, self.numpy_batch_size, is_train=True)
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            eval_data = _as_iter(eval_data[0], eval_data[1], self.numpy_batch_size, False)
        if self.epoch_size is not None:
            train = ResizeIter(train, self.epoch_size, reset_internal=False)
        mod = self._module(train, for_training=True)
        if logger is not None:
            mod.logger = logger
        arg_params, aux_params = self._module_params(mod)
        optimizer = self.optimizer
        if isinstance(optimizer, str):
            from . import optimizer as _opt
            params = dict(self.kwargs)
            params.setdefault("rescale_grad", 1.0 / train.batch_size)
            idx2name = dict(enumerate(mod._param_names))
            optimizer = _opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name,
                                    **params)
        mod.fit(train, eval_data=eval_data, eval_metric=eval_metric,
                epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                kvstore=kvstore, optimizer=optimizer,
                eval_end_callback=(eval_end_callback if eval_end_callback is not None
                                   else LogValidationMetricsCallback()),
                eval_batch_end_callback=eval_batch_end_callback, initializer=self.initializer,
                arg_params=arg_params, aux_params=aux_params, allow_missing=True,
                begin_epoch=self.begin_epoch, num_epoch=self.num_epoch, monitor=monitor)
        self.arg_params, self.aux_params = mod.get_params()
        self._pred_module = None
        return self

    def _predictor(self, data_iter):
        shapes = tuple(tuple(d[1]) for d in data_iter.provide_data)
        if self._pred_module is None or self._pred_module[0] != shapes:
            if self.arg_params is None:
                raise MXNetError("FeedForward: the model has no parameters; call fit() or "
                                 "give arg_params")
            mod = self._module(data_iter, for_training=False)
            arg_params, aux_params = self._module_params(mod)
            mod.init_params(self.initializer, arg_params=arg_params, aux_params=aux_params)
            self._pred_module = (shapes, mod)
        return self._pred_module[1]

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """The outputs over ``X`` as NumPy arrays (one array, or a list for several
        outputs), padding removed; with ``return_data`` also the data and labels."""
        data_iter = _as_iter(X, None, self.numpy_batch_size, is_train=False)
        if reset:
            data_iter.reset()
        mod = self._predictor(data_iter)
        outputs, datas, labels = None, [], []
        for nbatch, batch in enumerate(data_iter):
            if num_batch is not None and nbatch == num_batch:
                break
            mod.forward(batch, is_train=False)
            keep = batch.data[0].shape[0] - (batch.pad or 0)
            outs = [o[:keep].asnumpy() for o in mod.get_outputs()]
            outputs = [[o] for o in outs] if outputs is None else [
                acc + [o] for acc, o in zip(outputs, outs)]
            if return_data:
                datas.append([d[:keep].asnumpy() for d in batch.data])
                labels.append([l[:keep].asnumpy() for l in batch.label or []])
        if outputs is None:
            return []
        outputs = [np.concatenate(o) for o in outputs]
        result = outputs[0] if len(outputs) == 1 else outputs
        if not return_data:
            return result
        data = [np.concatenate(d) for d in zip(*datas)]
        label = [np.concatenate(l) for l in zip(*labels)]
        return (result, data[0] if len(data) == 1 else data,
                label[0] if len(label) == 1 else label)

    def score(self, X, eval_metric="acc", num_batch=None, batch_end_callback=None, reset=True):
        """The value of ``eval_metric`` over ``X`` (a DataIter with labels)."""
        from . import metric as _metric
        from .model import BatchEndParam
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        data_iter = _as_iter(X, None, self.numpy_batch_size, is_train=False)
        if reset:
            data_iter.reset()
        mod = self._predictor(data_iter)
        eval_metric.reset()
        for nbatch, batch in enumerate(data_iter):
            if num_batch is not None and nbatch == num_batch:
                break
            mod.forward(batch, is_train=False)
            keep = batch.data[0].shape[0] - (batch.pad or 0)
            eval_metric.update([l[:keep] for l in batch.label],
                               [o[:keep] for o in mod.get_outputs()])
            if batch_end_callback is not None:
                param = BatchEndParam(epoch=0, nbatch=nbatch, eval_metric=eval_metric,
                                      locals=locals())
                for cb in (batch_end_callback if isinstance(batch_end_callback, list)
                           else [batch_end_callback]):
                    cb(param)
        return eval_metric.get()[1]

    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """Write ``prefix-symbol.json`` and ``prefix-%04d.params`` (epoch: ``num_epoch``
        by default)."""
        from .model import save_checkpoint
        if epoch is None:
            epoch = self.num_epoch
        if epoch is None:
            raise ValueError("FeedForward.save: give epoch (num_epoch is not set)")
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params or {})

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """A FeedForward from a checkpoint, to continue training from ``epoch``."""
        from .model import load_checkpoint
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
               initializer=None, eval_data=None, eval_metric="acc", epoch_end_callback=None,
               batch_end_callback=None, kvstore="local", logger=None, work_load_list=None,
               eval_end_callback=None, eval_batch_end_callback=None, **kwargs):
        """Make a FeedForward and :meth:`fit` it; returns the trained model."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                  kvstore=kvstore, logger=logger, work_load_list=work_load_list,
                  eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model

