"""``mx.misc``: MXNet's oldest learning-rate schedulers (``mx.lr_scheduler`` replaced
them); kept for scripts that still import them."""
import logging
import math

__all__ = ["LearningRateScheduler", "FactorScheduler"]


class LearningRateScheduler:
    """Base class: ``scheduler(iteration)`` returns the learning rate; ``base_lr``
    starts at 0.01."""

    def __init__(self):
        self.base_lr = 0.01

    def __call__(self, iteration):
        raise NotImplementedError("LearningRateScheduler subclasses define __call__")


class FactorScheduler(LearningRateScheduler):
    """``base_lr * factor ** (iteration // step)``.

    >>> FactorScheduler(step=10, factor=0.5)(25)
    0.0025
    """

    def __init__(self, step, factor=0.1):
        super().__init__()
        if step < 1:
            raise ValueError("FactorScheduler: step must be >= 1, got %r" % (step,))
        if factor >= 1.0:
            raise ValueError("FactorScheduler: factor must be < 1 to reduce the rate, got %r"
                             % (factor,))
        self.step = step
        self.factor = factor
        self.old_lr = self.base_lr
        self.init = False

    def __call__(self, iteration):
        if not self.init:
            self.init = True
            self.old_lr = self.base_lr
        lr = self.base_lr * math.pow(self.factor, int(iteration / self.step))
        if lr != self.old_lr:
            self.old_lr = lr
            logging.info("At Iteration [%d]: Swith to new learning rate %.5f", iteration, lr)
        return lr
