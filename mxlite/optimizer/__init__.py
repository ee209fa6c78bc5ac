"""``mx.optimizer``: the Optimizer base, MXNet's optimizers, and the Updater.

>>> opt = mx.optimizer.create('adam', learning_rate=0.01)
>>> updater = mx.optimizer.get_updater(opt)
>>> w, g = mx.nd.ones((3,)), mx.nd.ones((3,))
>>> updater(0, g, w)          # creates the state, then updates w in place
"""
from .optimizer import Optimizer, Updater, register, create, get_updater  # noqa: F401
from .sgd import SGD, NAG, Signum, SGLD, DCASGD, ccSGD, Test, LARS, LBSGD  # noqa: F401
from .adaptive import (Adam, AdaGrad, RMSProp, AdaDelta, Adamax, Nadam, Ftrl, FTRL,  # noqa: F401
                       FTML, LAMB)
from . import optimizer  # noqa: F401
from . import contrib  # noqa: F401

__all__ = ["Optimizer", "Updater", "register", "create", "get_updater", "SGD", "NAG", "Signum",
           "SGLD", "DCASGD", "ccSGD", "Adam", "AdaGrad", "RMSProp", "AdaDelta", "Adamax",
           "Nadam", "Ftrl", "FTRL", "FTML", "LAMB", "Test", "LARS", "LBSGD"]
