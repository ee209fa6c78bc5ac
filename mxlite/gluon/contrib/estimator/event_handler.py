"""Event handlers: what the Estimator does at the begin and end of training, epochs and
batches.

A handler subclasses one or more of the mixins :class:`TrainBegin`, :class:`TrainEnd`,
:class:`EpochBegin`, :class:`EpochEnd`, :class:`BatchBegin`, :class:`BatchEnd` and
implements their methods. The Estimator calls the handlers of each event in ascending
``priority`` (default 0): :class:`GradientUpdateHandler` (-2000) first, then
:class:`MetricHandler` and :class:`ValidationHandler` (-1000), user handlers (0), and
:class:`LoggingHandler` (inf) last. ``batch_end`` and ``epoch_end`` return True to stop
training.
"""
import os
import re
import sys
import time
import warnings

import numpy as np

from ....metric import CompositeEvalMetric, EvalMetric
from ....metric import Loss as metric_loss
from .utils import _check_metrics

__all__ = ["TrainBegin", "TrainEnd", "EpochBegin", "EpochEnd", "BatchBegin", "BatchEnd",
           "StoppingHandler", "MetricHandler", "ValidationHandler", "LoggingHandler",
           "CheckpointHandler", "EarlyStoppingHandler", "GradientUpdateHandler",
           "ProgressBarHandler"]


class EventHandler:
    """Base class of every event handler (and of the six event mixins)."""


def _check_event_handlers(handlers):
    """A list of EventHandler from None, one handler or a list (a new list)."""
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = list(handlers or [])
    if not all(isinstance(handler, EventHandler) for handler in handlers):
        raise ValueError("handlers must be an EventHandler or a list of EventHandler, "
                         "got: {}".format(handlers))
    return handlers


class TrainBegin(EventHandler):
    """Mixin: ``train_begin(estimator)`` runs once, before the first epoch of ``fit``."""

    def train_begin(self, estimator, *args, **kwargs):
        pass


class TrainEnd(EventHandler):
    """Mixin: ``train_end(estimator)`` runs once, after the last epoch of ``fit``."""

    def train_end(self, estimator, *args, **kwargs):
        pass


class EpochBegin(EventHandler):
    """Mixin: ``epoch_begin(estimator)`` runs before each pass over the data."""

    def epoch_begin(self, estimator, *args, **kwargs):
        pass


class EpochEnd(EventHandler):
    """Mixin: ``epoch_end(estimator)`` runs after each pass; return True to stop."""

    def epoch_end(self, estimator, *args, **kwargs):
        return False


class BatchBegin(EventHandler):
    """Mixin: ``batch_begin(estimator, batch=...)`` runs before each batch."""

    def batch_begin(self, estimator, *args, **kwargs):
        pass


class BatchEnd(EventHandler):
    """Mixin: ``batch_end(estimator, batch=, pred=, label=, loss=)`` runs after each
    batch; return True to stop."""

    def batch_end(self, estimator, *args, **kwargs):
        return False


def _monitor_op(mode, monitor, who):
    """``np.greater`` or ``np.less``: how ``who`` decides that ``monitor`` improved.

    NOTE: MXNet's 'auto' tests ``'acc' or 'f1' in name``, which is always true, so it
    maximises every metric (a loss included) and warns each time. mxlite does what
    MXNet documents: 'auto' maximises metrics whose name contains 'acc' or 'f1' and
    minimises the others, without a warning.
    """
    if mode not in ("auto", "min", "max"):
        warnings.warn("%s mode %s is unknown, fallback to auto mode. %s will use max mode "
                      "for f1 and accuracy metric comparison and use min mode otherwise"
                      % (who, mode, who), RuntimeWarning, stacklevel=3)
        mode = "auto"
    if mode == "auto":
        name = monitor.get()[0].lower()
        mode = "max" if ("acc" in name or "f1" in name) else "min"
    return np.greater if mode == "max" else np.less


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stop training after ``max_epoch`` epochs or ``max_batch`` batches.

    The Estimator always adds one; it reads the limits from ``estimator.max_epoch``
    and ``estimator.max_batch`` at train begin.

    Parameters
    ----------
    max_epoch : int, optional
    max_batch : int, optional
    """

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Reset ``metrics`` at epoch begin and update them at batch end.

    A :class:`mx.metric.Loss` is updated with the batch's losses, every other metric
    with ``(label, pred)``.

    Parameters
    ----------
    metrics : EvalMetric or list of EvalMetric
    priority : scalar, default -1000
        Metrics are updated before the handlers that read them.
    """

    def __init__(self, metrics, priority=-1000):
        self.metrics = _check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        pred, label, loss = kwargs["pred"], kwargs["label"], kwargs["loss"]
        for metric in self.metrics:
            if isinstance(metric, metric_loss):
                metric.update(0, loss)
            else:
                metric.update(label, pred)


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Run ``eval_fn`` (usually ``estimator.evaluate``) on ``val_data`` every
    ``epoch_period`` epochs and/or every ``batch_period`` batches.

    Parameters
    ----------
    val_data : DataLoader
    eval_fn : callable
        Called as ``eval_fn(val_data=, batch_axis=, event_handlers=)``.
    epoch_period : int, default 1
    batch_period : int, optional
    priority : scalar, default -1000
        Validation metrics are ready before user handlers (early stopping) read them.
    event_handlers : EventHandler or list of EventHandler, optional
        Passed on to ``eval_fn``.
    """

    def __init__(self, val_data, eval_fn, epoch_period=1, batch_period=None, priority=-1000,
                 event_handlers=None):
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = 0
        self.current_epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._evaluate(estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._evaluate(estimator)

    def _evaluate(self, estimator):
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Log the optimizer, the learning rate, times and ``metrics`` to ``estimator.logger``.

    The lines are MXNet's: ``Training begin: using optimizer ...``, ``[Epoch 0] Begin,
    current learning rate: ...``, ``[Epoch 0] Finished in 0.123s, training accuracy:
    0.9000, ...``, ``Train finished using total 3s with 2 epochs. ...``; with metrics
    whose names hold no 'training' (validation), ``Validation Begin`` instead of the
    epoch begin line.

    Parameters
    ----------
    log_interval : int or 'epoch', default 'epoch'
        'epoch' logs at epoch ends; an integer k also logs every k batches
        (``[Epoch 0][Batch 4][Samples 160] time/interval: 0.012s ...``).
    metrics : list of EvalMetric, optional
        The metrics logged.
    priority : scalar, default inf
        Last, so that it logs the values every other handler has updated.
    """

    def __init__(self, log_interval="epoch", metrics=None, priority=np.inf):
        if isinstance(log_interval, bool) or \
                (not isinstance(log_interval, int) and log_interval != "epoch"):
            raise ValueError("log_interval must be either an integer or string 'epoch'")
        self.metrics = _check_metrics(metrics)
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.priority = priority
        self.log_interval = log_interval
        self.log_interval_time = 0
        self.train_start = self.epoch_start = self.batch_start = time.time()

    def _metric_text(self):
        return "".join("%s: %.4f, " % metric.get() for metric in self.metrics)

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning "
                              "rate %.4f ", trainer.optimizer.__class__.__name__,
                              trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        train_time = time.time() - self.train_start
        msg = "Train finished using total %ds with %d epochs. " % (train_time,
                                                                   self.current_epoch)
        estimator.logger.info((msg + self._metric_text()).rstrip(", "))

    def batch_begin(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.log_interval_time += time.time() - self.batch_start
            self.processed_samples += kwargs["batch"][0].shape[0]
            if self.batch_index % self.log_interval == 0:
                msg = "[Epoch %d][Batch %d][Samples %s] time/interval: %.3fs " % (
                    self.current_epoch, self.batch_index, self.processed_samples,
                    self.log_interval_time)
                self.log_interval_time = 0
                estimator.logger.info((msg + self._metric_text()).rstrip(", "))
        self.batch_index += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        # The Estimator names training metrics 'training ...': that tells fit from evaluate.
        if any("training" in metric.name for metric in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        msg = "[Epoch %d] Finished in %.3fs, " % (self.current_epoch,
                                                  time.time() - self.epoch_start)
        estimator.logger.info((msg + self._metric_text()).rstrip(", "))
        self.current_epoch += 1
        self.batch_index = 0


class ProgressBarHandler(TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd):
    """A tqdm progress bar per epoch, showing the running values of ``metrics``.

    mxlite's own addition to MXNet's handlers: ``fit`` adds one (with the training
    metrics) unless one is given. It writes to ``file`` (standard error by default),
    so that the log lines on standard output stay clean when redirected; the
    Estimator's logger writes through ``tqdm.write`` so that log lines and the bar do
    not overwrite each other on a terminal.

    Parameters
    ----------
    metrics : EvalMetric or list of EvalMetric, optional
        Shown after the bar as ``accuracy=0.9120, loss=0.2814`` (a metric's
        'training '/'validation ' prefix is dropped and a loss metric is called
        'loss').
    file : file object, optional
        Where the bar goes; ``sys.stderr`` (looked up when each bar starts) by default.
    disable : bool or None, default False
        True hides the bar; None hides it when ``file`` is not a terminal (tqdm's rule).
    leave : bool, default True
        Keep each finished bar on screen.
    mininterval : float, default 0.1
        Minimum seconds between redraws.
    priority : scalar, default -1001
        Before :class:`MetricHandler`, so that the epoch's bar is complete before
        validation and logging print their lines. NOTE: the values shown at a batch
        end are therefore those up to the batch before; the final values of the epoch
        are exact.

    Examples
    --------
    >>> est.fit(train_data, epochs=5, event_handlers=[ProgressBarHandler(disable=None)])
    """

    def __init__(self, metrics=None, file=None, disable=False, leave=True, mininterval=0.1,
                 priority=-1001):
        self.metrics = _check_metrics(metrics)
        self.file = file
        self.disable = disable
        self.leave = leave
        self.mininterval = mininterval
        self.priority = priority
        self.current_epoch = 0
        self.batches_done = 0
        self.bar = None

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.batches_done = 0

    def _total(self, estimator):
        """Batches this epoch will run: the loader's length, capped by a batch limit."""
        data = getattr(estimator, "_current_data", None)
        try:
            total = len(data)
        except TypeError:
            total = None
        max_batch = getattr(estimator, "max_batch", None)
        if max_batch and not getattr(estimator, "_evaluating", False):
            left = max(max_batch - self.batches_done, 0)
            total = left if total is None else min(total, left)
        return total

    def epoch_begin(self, estimator, *args, **kwargs):
        self._close()

    def batch_begin(self, estimator, *args, **kwargs):
        # Opened at the first batch, after the epoch-begin log lines have been printed.
        if self.bar is None:
            self._open(estimator)

    def _open(self, estimator):
        from tqdm import tqdm
        self.bar = tqdm(total=self._total(estimator), desc="[Epoch %d]" % self.current_epoch,
                        unit="batch", file=self.file if self.file is not None else sys.stderr,
                        disable=self.disable, leave=self.leave, mininterval=self.mininterval)

    def _postfix(self):
        values = {}
        for metric in self.metrics:
            name, value = metric.get()
            if np.isnan(value):
                continue
            if isinstance(metric, metric_loss):
                name = "loss"
            else:
                name = re.sub(r"^(training|validation) ", "", name)
            values[name] = "%.4f" % value
        return values

    def batch_end(self, estimator, *args, **kwargs):
        self.batches_done += 1
        if self.bar is not None:
            self.bar.set_postfix(self._postfix(), refresh=False)
            self.bar.update(1)

    def epoch_end(self, estimator, *args, **kwargs):
        if self.bar is not None:
            self.bar.set_postfix(self._postfix(), refresh=False)
        self._close()
        self.current_epoch += 1

    def _close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Save the parameters and trainer states every ``epoch_period`` epochs and/or every
    ``batch_period`` batches, keep the best, and resume from the last one.

    Files in ``model_dir`` (MXNet's names): ``{prefix}-epoch{E}batch{B}.params`` and
    ``.states`` for each checkpoint, ``{prefix}-best.params/.states`` with
    ``save_best``, and ``{prefix}-symbol.json`` after the first batch when the network
    is a hybridized HybridBlock.

    Parameters
    ----------
    model_dir : str
        Created when missing.
    model_prefix : str, default 'model'
    monitor : EvalMetric, optional
        The metric that decides the best model (one of the estimator's metrics).
    verbose : int, default 0
        1 logs every save.
    save_best : bool, default False
        Also keep the checkpoint with the best ``monitor`` value (needs ``monitor``).
    mode : {'auto', 'min', 'max'}, default 'auto'
        Whether a larger or smaller ``monitor`` is better; 'auto' maximises metrics
        named like 'acc' or 'f1' and minimises others.
    epoch_period : int, default 1
    batch_period : int, optional
    max_checkpoints : int, default 5
        Older epoch/batch checkpoints are deleted (the best one does not count).
    resume_from_checkpoint : bool, default False
        Load the latest checkpoint in ``model_dir`` at train begin and train only the
        remaining epochs (or batches). Save by the same unit you train by.

    Notes
    -----
    Where mxlite differs from MXNet 1.9 (bugs there): checkpoints found when resuming
    count toward ``max_checkpoints``; deleting ``model-epoch1batch8`` does not delete
    ``model-epoch1batch80``; the verbose lines report the old and the new best value
    and the right epoch.
    """

    def __init__(self, model_dir, model_prefix="model", monitor=None, verbose=0,
                 save_best=False, mode="auto", epoch_period=1, batch_period=None,
                 max_checkpoints=5, resume_from_checkpoint=False):
        self.monitor = monitor
        self.verbose = verbose
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.save_best = save_best
        if self.save_best and not isinstance(self.monitor, EvalMetric):
            raise ValueError("To save best model only, please provide one of the metric "
                             "objects from estimator.train_metrics and estimator.val_metrics "
                             "as monitor.")
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.saved_checkpoints = []
        self.trained_epoch = self.trained_batch = -1
        if self.save_best:
            self.monitor_op = _monitor_op(mode, self.monitor, "CheckpointHandler")
            self.best = self._worst()

    def _worst(self):
        return np.inf if self.monitor_op is np.less else -np.inf

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.current_batch = 0
        if self.save_best:
            self.best = self._worst()
        if self.resume_from_checkpoint:
            error_msg = ("To use resume from checkpoint, you must only specify the same type "
                         "of period you used for training. For example, if you are training "
                         "based on number of epochs, you must save only based on epochs, and "
                         "set batch_period to None.")
            if estimator.max_batch and (not self.batch_period or self.epoch_period):
                raise ValueError(error_msg)
            if estimator.max_epoch and (not self.epoch_period or self.batch_period):
                raise ValueError(error_msg)
            self._resume_from_checkpoint(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator, self.current_batch + 1)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator, self.current_batch)
        self.current_epoch += 1

    def _checkpoint_numbers(self, estimator):
        """(epoch, batch) in the file name, counted on from a resumed checkpoint."""
        if self.resume_from_checkpoint and self.trained_epoch >= 0:
            epoch = self.current_epoch + self.trained_epoch + 1
            # At epoch end current_batch already counts this epoch's last batch.
            batch = self.current_batch + self.trained_batch + (0 if estimator.max_epoch else 1)
            return epoch, batch
        return self.current_epoch, self.current_batch

    def _save_checkpoint(self, estimator, batches_trained):
        prefix = "%s-epoch%dbatch%d" % ((self.model_prefix,)
                                        + self._checkpoint_numbers(estimator))
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, "
                                  "saving model at %s with prefix: %s", self.current_epoch,
                                  batches_trained, self.model_dir, prefix)
        if self.save_best:
            self._save_if_best(estimator)

    def _save_if_best(self, estimator):
        monitor_name, monitor_value = self.monitor.get()
        if np.isnan(monitor_value):
            warnings.warn(RuntimeWarning(
                "Skipping save best because %s is not updated, make sure you pass one of the "
                "metric objects estimator.train_metrics and estimator.val_metrics as monitor"
                % monitor_name))
        elif self.monitor_op(monitor_value, self.best):
            prefix = self.model_prefix + "-best"
            self._save_params_and_trainer(estimator, prefix)
            if self.verbose > 0:
                estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f to "
                                      "%0.5f, updating best model at %s with prefix: %s",
                                      self.current_epoch, monitor_name, self.best,
                                      monitor_value, self.model_dir, prefix)
            self.best = monitor_value
        elif self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: %s did not improve from "
                                  "%0.5f, skipping updating best model", self.current_epoch,
                                  monitor_name, self.best)

    def _save_symbol(self, estimator):
        symbol_file = os.path.join(self.model_dir, self.model_prefix + "-symbol.json")
        graphs = getattr(estimator.net, "_cached_graph", None)
        if graphs:
            graphs[-1][1].symbol.save(symbol_file)
        else:
            estimator.logger.info(
                "Model architecture(symbol file) is not saved, please use HybridBlock to "
                "construct your model, and call net.hybridize() before passing to Estimator "
                "in order to save model architecture as %s.", symbol_file)

    def _save_params_and_trainer(self, estimator, file_prefix):
        path = os.path.join(self.model_dir, file_prefix)
        estimator.net.save_parameters(path + ".params")
        estimator.trainer.save_states(path + ".states")
        if file_prefix == self.model_prefix + "-best":
            return
        self.saved_checkpoints.append(file_prefix)
        while len(self.saved_checkpoints) > self.max_checkpoints:
            old = os.path.join(self.model_dir, self.saved_checkpoints.pop(0))
            for ext in (".params", ".states"):
                if os.path.exists(old + ext):
                    os.remove(old + ext)

    def _find_checkpoints(self):
        """Sorted (epoch, batch) of the ``{prefix}-epoch{E}batch{B}.params`` files."""
        pattern = re.compile(r"%s-epoch(\d+)batch(\d+)\.params$" % re.escape(self.model_prefix))
        found = []
        for fname in os.listdir(self.model_dir):
            match = pattern.match(fname)
            if match:
                found.append((int(match.group(1)), int(match.group(2))))
        return sorted(found)

    def _resume_from_checkpoint(self, estimator):
        found = self._find_checkpoints()
        self.saved_checkpoints = ["%s-epoch%dbatch%d" % ((self.model_prefix,) + eb)
                                  for eb in found]
        if not found:
            self.trained_epoch = self.trained_batch = -1
            limit = ("%d batches" % estimator.max_batch if estimator.max_batch
                     else "%d epochs" % estimator.max_epoch)
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from "
                                  "scratch for " + limit)
            return
        self.trained_epoch, self.trained_batch = found[-1]
        msg = ("CheckpointHandler: Checkpoint resumed from epoch %d batch %d, continue to "
               "train for " % (self.trained_epoch, self.trained_batch))
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ValueError("Found checkpoint with maximum number of epoch %d reached, "
                                 "please specify resume_from_checkpoint=False (default value) "
                                 "if you want to train from scratch." % estimator.max_epoch)
            estimator.max_epoch = estimator.max_epoch - self.trained_epoch - 1
            msg += "%d epochs " % estimator.max_epoch
        if estimator.max_batch:
            if self.trained_batch >= estimator.max_batch - 1:
                raise ValueError("Found checkpoint with maximum number of batch %d reached, "
                                 "please specify resume_from_checkpoint=False (default value) "
                                 "if you want to train from scratch." % self.trained_batch)
            estimator.max_batch = estimator.max_batch - self.trained_batch - 1
            msg += "%d batches " % estimator.max_batch
        path = os.path.join(self.model_dir, self.saved_checkpoints[-1])
        for ext in (".params", ".states"):
            if not os.path.exists(path + ext):
                raise OSError("CheckpointHandler: failed to load checkpoint, %s does not exist"
                              % (path + ext))
        estimator.net.load_parameters(path + ".params", ctx=estimator.context)
        estimator.trainer.load_states(path + ".states")
        estimator.logger.warning(msg)


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stop training when ``monitor`` has not improved for ``patience`` epochs.

    Parameters
    ----------
    monitor : EvalMetric
        One of the estimator's metrics (not a composite).
    min_delta : float, default 0
        The least change that counts as an improvement.
    patience : int, default 0
        Epochs without improvement tolerated; stop at the first epoch that makes it
        ``patience`` (0 and 1 both stop at the first epoch without improvement).
    mode : {'auto', 'min', 'max'}, default 'auto'
        'auto' maximises metrics named like 'acc' or 'f1' and minimises others.
    baseline : float, optional
        The value to improve on at the start (default: the worst possible).

    Notes
    -----
    MXNet 1.9 logs the early stop only when it happens after epoch 0; mxlite logs it
    whenever this handler stopped the training.
    """

    def __init__(self, monitor, min_delta=0, patience=0, mode="auto", baseline=None):
        if not isinstance(monitor, EvalMetric):
            raise ValueError("Please provide one of the metric objects from "
                             "estimator.train_metrics and estimator.val_metrics as monitor.")
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError("CompositeEvalMetric is not supported for EarlyStoppingHandler, "
                             "please specify a simple metric instead.")
        self.monitor = monitor
        self.baseline = baseline
        self.patience = patience
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.monitor_op = _monitor_op(mode, monitor, "EarlyStoppingHandler")
        # Improvement means monitor_op(value - min_delta, best): shift towards worse.
        self.min_delta = min_delta if self.monitor_op is np.greater else -min_delta
        self.best = None

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def epoch_end(self, estimator, *args, **kwargs):
        monitor_name, monitor_value = self.monitor.get()
        if np.isnan(monitor_value):
            warnings.warn(RuntimeWarning(
                "%s is not updated, make sure you pass one of the metric objects from "
                "estimator.train_metrics and estimator.val_metrics as monitor." % monitor_name))
        elif self.monitor_op(monitor_value - self.min_delta, self.best):
            self.best = monitor_value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stop_training:
            estimator.logger.info("[Epoch %d] EarlyStoppingHandler: early stopping due to %s "
                                  "not improving", self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """``estimator.trainer.step(batch_size)`` at every batch end, with the batch size
    summed over the per-context losses.

    Parameters
    ----------
    priority : scalar, default -2000
        First: the weights are updated before anything else looks at the batch.
    """

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs["loss"]
        if not isinstance(loss, list):
            loss = [loss]
        estimator.trainer.step(sum(l.shape[0] for l in loss))
