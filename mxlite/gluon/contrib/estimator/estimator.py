"""The Estimator: ``fit`` and ``evaluate`` loops for a Gluon network."""
import copy
import logging
import sys
import warnings

from .event_handler import (MetricHandler, ValidationHandler, LoggingHandler, StoppingHandler,
                            GradientUpdateHandler, ProgressBarHandler)
from .event_handler import TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd
from .event_handler import _check_event_handlers
from .utils import _check_metrics, _suggest_metric_for_loss, _check_handler_metric_ref
from .batch_processor import BatchProcessor
from ...data import DataLoader
from ...loss import Loss as gluon_loss
from ...trainer import Trainer
from ....context import Context, cpu, gpu, num_gpus
from ....metric import Loss as metric_loss

__all__ = ["Estimator"]


class _TqdmStdoutHandler(logging.Handler):
    """Log records to ``sys.stdout`` (looked up at each record) through ``tqdm.write``,
    which lifts an active progress bar out of the way and redraws it below the line."""

    def emit(self, record):
        try:
            from tqdm import tqdm
            tqdm.write(self.format(record), file=sys.stdout)
        except Exception:  # noqa: BLE001 (logging must never raise: logging's own rule)
            self.handleError(record)


class Estimator:
    """Train and evaluate a Gluon network with event handlers.

    Parameters
    ----------
    net : gluon.Block
        The network trained. Initialized on ``context`` (with ``initializer``) unless
        all its parameters already are.
    loss : gluon.loss.Loss
    train_metrics : EvalMetric or list of EvalMetric, optional
        Default: Accuracy for a SoftmaxCrossEntropyLoss, plus a ``metric.Loss`` of the
        loss. Their names get a 'training ' prefix.
    val_metrics : EvalMetric or list of EvalMetric, optional
        Default: copies of the training metrics. Names get a 'validation ' prefix.
    initializer : Initializer, optional
    trainer : gluon.Trainer, optional
        Default (with a warning): SGD with learning rate 0.001.
    context : Context or list of Context, optional
        Batches are split over the contexts with ``gluon.utils.split_and_load``.
        Default: ``gpu(0)`` when there is a GPU, else ``cpu()``.
    val_net : gluon.Block, optional
        The network evaluated (default ``net``); it may share ``net``'s parameters.
    val_loss : gluon.loss.Loss, optional
        The validation loss (default ``loss``).
    batch_processor : BatchProcessor, optional
        Its ``fit_batch``/``evaluate_batch`` process one batch.

    Attributes
    ----------
    logger : logging.Logger
        Where the handlers log: INFO and above to ``sys.stdout``. Add handlers (a
        ``logging.FileHandler``) or change its level with the logging module.

    Examples
    --------
    >>> est = Estimator(net, gluon.loss.SoftmaxCrossEntropyLoss(), trainer=trainer)
    >>> est.fit(train_loader, val_data=test_loader, epochs=5)
    >>> est.evaluate(test_loader)
    >>> est.val_metrics[0].get()
    ('validation accuracy', 0.97)
    """

    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None, initializer=None,
                 trainer=None, context=None, val_net=None, val_loss=None, batch_processor=None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = _check_metrics(train_metrics)
        self._val_metrics = _check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(_TqdmStdoutHandler())
        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch = self.max_batch = None
        self.batch_axis = 0
        # What the current loop iterates (a progress bar reads its length).
        self._current_data = None
        self._evaluating = False

    # -- checks ---------------------------------------------------------------------
    @staticmethod
    def _check_loss(loss):
        if not isinstance(loss, gluon_loss):
            raise ValueError("loss must be a Loss, refer to gluon.loss.Loss:{}".format(loss))
        return loss

    @staticmethod
    def _check_context(context):
        gpus = num_gpus()
        available_gpus = [gpu(i) for i in range(gpus)]
        if not context:
            if gpus > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default. To "
                              "utilize all your GPUs, specify context as a list of gpus, e.g. "
                              "context=[mx.gpu(0), mx.gpu(1)] ")
            return [gpu(0)] if gpus > 0 else [cpu()]
        if isinstance(context, Context):
            context = [context]
        elif not (isinstance(context, list) and all(isinstance(c, Context) for c in context)):
            raise ValueError("context must be a Context or a list of Context, for example "
                             "mx.cpu() or [mx.gpu(0), mx.gpu(1)], refer to mxnet.Context:{}"
                             .format(context))
        for ctx in context:
            if ctx not in available_gpus and ctx.device_type != "cpu":
                raise ValueError("%s is not available, please make sure your context is in "
                                 "one of: mx.cpu(), %s"
                                 % (ctx, ", ".join(str(c) for c in available_gpus)))
        return context

    @staticmethod
    def _check_batch_processor(batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        if not callable(getattr(batch_processor, "fit_batch", None)) or \
                not callable(getattr(batch_processor, "evaluate_batch", None)):
            raise ValueError("Customized Batch Processor must contain fit_batch() and "
                             "evaluate_batch() methods")
        return batch_processor

    def _initialize(self, initializer):
        if not self._is_initialized():
            # Parameters already initialized are left alone (no force_reinit).
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You "
                          "don't need to pass initializer if you already initialized your "
                          "net. You can use net.initialize(init=your_initializer, "
                          "force_reinit=True) to force re-initialize.")

    def _check_trainer(self, trainer):
        if not trainer:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate "
                          "0.001 is used.")
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError("Trainer must be a Gluon Trainer instance, refer to "
                             "gluon.Trainer:{}".format(trainer))
        return trainer

    def _is_initialized(self):
        params = self.net.collect_params()
        for name in params:
            try:
                params[name].list_ctx()
            except RuntimeError:
                return False
        return True

    # -- metrics --------------------------------------------------------------------
    def _add_default_training_metrics(self):
        if not self._train_metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            self._train_metrics.append(metric_loss(self.loss.name.rstrip("1234567890")))
        for metric in self._train_metrics:
            # The prefix tells handlers (LoggingHandler) training from validation metrics.
            metric.name = "training " + metric.name

    def _add_validation_metrics(self):
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(metric) for metric in self._train_metrics]
        for metric in self._val_metrics:
            if "training" in metric.name:
                metric.name = metric.name.replace("training", "validation")
            else:
                metric.name = "validation " + metric.name

    @property
    def train_metrics(self):
        """The training metrics (list of EvalMetric, names prefixed 'training ')."""
        return self._train_metrics

    @property
    def val_metrics(self):
        """The validation metrics (list of EvalMetric, names prefixed 'validation ')."""
        return self._val_metrics

    # -- loops ----------------------------------------------------------------------
    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """Run ``val_net`` over ``val_data`` and update :attr:`val_metrics`.

        Parameters
        ----------
        val_data : DataLoader
        batch_axis : int, default 0
            The axis split over the contexts.
        event_handlers : EventHandler or list of EventHandler, optional
            A MetricHandler and a LoggingHandler of the validation metrics are added
            when none is given.
        """
        if not isinstance(val_data, DataLoader):
            raise ValueError("Estimator only support input as Gluon DataLoader. "
                             "Alternatively, you can transform your DataIter or any NDArray "
                             "into Gluon DataLoader. Refer to gluon.data.DataLoader")
        for metric in self.val_metrics:
            metric.reset()
        event_handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = \
            self._categorize_handlers(event_handlers)
        # evaluate runs inside fit (ValidationHandler): restore what fit was iterating.
        outer = self._current_data, self._evaluating
        self._current_data, self._evaluating = val_data, True
        try:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            for batch in val_data:
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch,
                                                                           batch_axis)
                for handler in batch_end:
                    handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
            for handler in epoch_end:
                handler.epoch_end(self)
        finally:
            self._current_data, self._evaluating = outer

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis=0):
        """Train for ``epochs`` passes over ``train_data`` or for ``batches`` batches.

        Parameters
        ----------
        train_data : DataLoader
        val_data : DataLoader, optional
            Evaluated at every epoch end (a ValidationHandler is added) unless a
            ValidationHandler is given.
        epochs : int, optional
            Exactly one of ``epochs`` and ``batches``.
        event_handlers : EventHandler or list of EventHandler, optional
            Added when no handler of their type is given: StoppingHandler (always),
            GradientUpdateHandler, MetricHandler, ValidationHandler (with
            ``val_data``), LoggingHandler and ProgressBarHandler.
        batches : int, optional
        batch_axis : int, default 0
            The axis split over the contexts.
        """
        if not isinstance(train_data, DataLoader):
            raise ValueError("Estimator only support input as Gluon DataLoader. "
                             "Alternatively, you can transform your DataIter or any NDArray "
                             "into Gluon DataLoader. Refer to gluon.data.dataloader")
        if (not epochs) == (not batches):
            raise ValueError("Fit only support exactly one type of iteration, train by number "
                             "of epochs or number of batches. Please specify one and only one "
                             "of: epochs or batches.")
        self.max_epoch = epochs
        self.max_batch = batches
        self.batch_axis = batch_axis
        event_handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize_handlers(event_handlers)
        self._current_data = train_data
        try:
            for handler in train_begin:
                handler.train_begin(self)
            self._train_epochs(train_data, batch_axis, epoch_begin, batch_begin, batch_end,
                               epoch_end)
            for handler in train_end:
                handler.train_end(self)
        finally:
            self._current_data = None
            # A bar left open by an exception would garble what is printed next.
            for handler in event_handlers:
                if isinstance(handler, ProgressBarHandler):
                    handler._close()

    def _train_epochs(self, train_data, batch_axis, epoch_begin, batch_begin, batch_end,
                      epoch_end):
        """Epochs until an epoch_end handler (StoppingHandler at least) says stop."""
        while True:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            for batch in train_data:
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                # Every handler sees the batch end, even after one has said stop.
                stop = [handler.batch_end(self, batch=batch, pred=pred, label=label,
                                          loss=loss) for handler in batch_end]
                if any(stop):
                    break
            stop = [handler.epoch_end(self) for handler in epoch_end]
            if any(stop):
                break

    def _prepare_default_handlers(self, val_data, event_handlers):
        event_handlers = _check_event_handlers(event_handlers)
        added = [StoppingHandler(self.max_epoch, self.max_batch)]
        if not any(isinstance(h, GradientUpdateHandler) for h in event_handlers):
            added.append(GradientUpdateHandler())
        if not any(isinstance(h, MetricHandler) for h in event_handlers):
            added.append(MetricHandler(metrics=self.train_metrics))
        if not any(isinstance(h, ValidationHandler) for h in event_handlers) and val_data:
            added.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if not any(isinstance(h, LoggingHandler) for h in event_handlers):
            added.append(LoggingHandler(metrics=self.train_metrics))
        if not any(isinstance(h, ProgressBarHandler) for h in event_handlers):
            added.append(ProgressBarHandler(metrics=self.train_metrics))
        return self._merge_handlers(event_handlers, added,
                                    set(self.train_metrics + self.val_metrics))

    def _prepare_default_validation_handlers(self, event_handlers):
        event_handlers = _check_event_handlers(event_handlers)
        added = []
        if not any(isinstance(h, MetricHandler) for h in event_handlers):
            added.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in event_handlers):
            added.append(LoggingHandler(metrics=self.val_metrics))
        return self._merge_handlers(event_handlers, added, set(self.val_metrics))

    @staticmethod
    def _merge_handlers(given, added, known_metrics):
        """``given + added`` sorted by priority (stable).

        When user handlers are mixed with defaults, every handler must refer to the
        estimator's own metric objects, or the defaults would update other objects.
        """
        handlers = given + added
        if given and added:
            for handler in handlers:
                _check_handler_metric_ref(handler, known_metrics)
        handlers.sort(key=lambda handler: getattr(handler, "priority", 0))
        return handlers

    @staticmethod
    def _categorize_handlers(event_handlers):
        """The handlers of each of the six events, in order (no empty method calls)."""
        kinds = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)
        return tuple([h for h in event_handlers if isinstance(h, kind)] for kind in kinds)
