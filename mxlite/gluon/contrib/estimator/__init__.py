"""``mx.gluon.contrib.estimator``: a fit loop for Gluon networks, driven by event handlers.

:class:`Estimator` trains and evaluates a network; what happens around each batch and
epoch (the optimizer step, metrics, validation, logging, checkpoints, early stopping,
the progress bar) is done by the handlers in :mod:`.event_handler`.
"""
from . import estimator, event_handler, batch_processor  # noqa: F401
from .estimator import *  # noqa: F401,F403
from .event_handler import *  # noqa: F401,F403
from .batch_processor import *  # noqa: F401,F403

__all__ = estimator.__all__ + event_handler.__all__ + batch_processor.__all__
