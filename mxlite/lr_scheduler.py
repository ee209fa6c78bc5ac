"""``mx.lr_scheduler``: learning-rate schedules, as in MXNet 1.x.

A scheduler is called with ``num_update``, the largest number of updates any
weight has received, and returns the learning rate. The attribute names are
MXNet's, so a scheduler pickled inside a Trainer states file loads in MXNet.

>>> sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
>>> [sched(n) for n in (1, 2, 3, 5)]
[1.0, 1.0, 0.5, 0.25]
"""
import logging
from math import cos, pi

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler"]


class LRScheduler:
    """Base class of a learning-rate scheduler, with optional warm-up.

    Parameters
    ----------
    base_lr : float
        The learning rate after warm-up.
    warmup_steps : int
        Number of warm-up updates before the schedule starts.
    warmup_begin_lr : float
        The learning rate at update 0 of the warm-up.
    warmup_mode : {'linear', 'constant'}
        'linear' rises in equal increments from ``warmup_begin_lr`` to ``base_lr``;
        'constant' stays at ``warmup_begin_lr`` during the warm-up.
    """

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        if not isinstance(warmup_steps, int):
            raise TypeError("LRScheduler: warmup_steps must be an int, got %r" % (warmup_steps,))
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        if self.warmup_begin_lr > self.warmup_final_lr:
            raise ValueError("Base lr has to be higher than warmup_begin_lr (base_lr=%g, "
                             "warmup_begin_lr=%g)" % (base_lr, warmup_begin_lr))
        if self.warmup_steps < 0:
            raise ValueError("Warmup steps has to be positive or 0, got %d" % warmup_steps)
        if warmup_mode not in ("linear", "constant"):
            raise ValueError("Supports only linear and constant modes of warmup, got %r"
                             % (warmup_mode,))
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        """The learning rate at update ``num_update`` (< ``warmup_steps``) of the warm-up."""
        if num_update >= self.warmup_steps:
            raise ValueError("get_warmup_lr: num_update %d is past the %d warm-up steps"
                             % (num_update, self.warmup_steps))
        if self.warmup_mode == "linear":
            increase = (self.warmup_final_lr - self.warmup_begin_lr) \
                * float(num_update) / float(self.warmup_steps)
            return self.warmup_begin_lr + increase
        return self.warmup_begin_lr

    def __call__(self, num_update):
        """The learning rate for ``num_update`` (the most updates any weight has had)."""
        raise NotImplementedError("must override this")


def _check_factor(factor):
    if factor > 1.0:
        raise ValueError("Factor must be no more than 1 to make lr reduce, got %g" % factor)


class FactorScheduler(LRScheduler):
    """``base_lr * factor ** floor((num_update - 1) / step)``, never below ``stop_factor_lr``.

    Parameters
    ----------
    step : int
        Change the learning rate every ``step`` updates.
    factor : float
        The factor (<= 1) to multiply the learning rate by.
    stop_factor_lr : float
        The learning rate never goes below this value.
    base_lr, warmup_steps, warmup_begin_lr, warmup_mode
        See :class:`LRScheduler`.

    Examples
    --------
    >>> s = mx.lr_scheduler.FactorScheduler(step=10, factor=0.9, base_lr=0.1)
    >>> s(11)
    0.09000000000000001
    """

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01,
                 warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round, got %r"
                             % (step,))
        _check_factor(factor)
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # NOTE: stateful like MXNet's: the decayed rate is kept in base_lr, so
        # calls must come with non-decreasing num_update.
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                logging.info("Update[%d]: now learning rate arrived at %0.5e, will not "
                             "change in the future", num_update, self.base_lr)
            else:
                logging.info("Update[%d]: Change learning rate to %0.5e",
                             num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiply the learning rate by ``factor`` once ``num_update`` passes each of ``step``.

    Parameters
    ----------
    step : list of int
        Increasing update counts after which the rate changes.
    factor : float
        The factor (<= 1) to multiply the learning rate by.
    base_lr, warmup_steps, warmup_begin_lr, warmup_mode
        See :class:`LRScheduler`.

    Examples
    --------
    >>> s = mx.lr_scheduler.MultiFactorScheduler(step=[2, 4], factor=0.1, base_lr=1.0)
    >>> [round(s(n), 6) for n in (1, 3, 5)]
    [1.0, 0.1, 0.01]
    """

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or len(step) < 1:
            raise ValueError("MultiFactorScheduler: step must be a non-empty list of ints, got %r"
                             % (step,))
        for i, s in enumerate(step):
            if i != 0 and s <= step[i - 1]:
                raise ValueError("Schedule step must be an increasing integer list, got %r"
                                 % (step,))
            if s < 1:
                raise ValueError("Schedule step must be greater or equal than 1 round, got %r"
                                 % (step,))
        _check_factor(factor)
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind <= len(self.step) - 1:
            if num_update > self.step[self.cur_step_ind]:
                self.count = self.step[self.cur_step_ind]
                self.cur_step_ind += 1
                self.base_lr *= self.factor
                logging.info("Update[%d]: Change learning rate to %0.5e",
                             num_update, self.base_lr)
            else:
                return self.base_lr
        return self.base_lr


def _check_max_update(max_update):
    if not isinstance(max_update, int):
        raise TypeError("max_update must be an int, got %r" % (max_update,))
    if max_update < 1:
        raise ValueError("maximum number of updates must be strictly positive, got %d"
                         % max_update)


class _AnnealScheduler(LRScheduler):
    """After warm-up, anneal from ``base_lr`` to ``final_lr`` over the updates up to
    ``max_update`` along ``self._decay(frac)`` (1 at the start, 0 at the end)."""

    def __init__(self, max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                 warmup_mode):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        _check_max_update(max_update)
        self.base_lr_orig = self.base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = self.max_update - self.warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            frac = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) \
                * self._decay(frac)
        return self.base_lr


class PolyScheduler(_AnnealScheduler):
    """``final_lr + (base_lr - final_lr) * (1 - n / max_steps) ** pwr`` after warm-up.

    ``n`` counts updates after the warm-up and ``max_steps = max_update - warmup_steps``;
    past ``max_update`` the rate stays at ``final_lr``.

    Parameters
    ----------
    max_update : int
        Updates until the rate reaches ``final_lr``.
    base_lr : float
    pwr : float
        The power of the decay.
    final_lr : float
    warmup_steps, warmup_begin_lr, warmup_mode
        See :class:`LRScheduler`.

    Examples
    --------
    >>> s = mx.lr_scheduler.PolyScheduler(max_update=10, base_lr=1.0, pwr=2)
    >>> s(5)
    0.25
    """

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0,
                 warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)
        self.power = pwr

    def _decay(self, frac):
        return pow(1 - frac, self.power)


class CosineScheduler(_AnnealScheduler):
    """``final_lr + (base_lr - final_lr) * (1 + cos(pi * n / max_steps)) / 2`` after warm-up.

    Parameters
    ----------
    max_update : int
        Updates until the rate reaches ``final_lr``.
    base_lr : float
    final_lr : float
    warmup_steps, warmup_begin_lr, warmup_mode
        See :class:`LRScheduler`.

    Examples
    --------
    >>> s = mx.lr_scheduler.CosineScheduler(max_update=10, base_lr=1.0)
    >>> round(s(5), 6)
    0.5
    """

    def __init__(self, max_update, base_lr=0.01, final_lr=0,
                 warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)

    def _decay(self, frac):
        return (1 + cos(pi * frac)) / 2
