"""``mx.gluon``: Blocks, Parameters, layers, losses, the Trainer and data loading."""
from . import parameter, block, utils  # noqa: F401
from .parameter import Parameter, Constant, ParameterDict, DeferredInitializationError  # noqa: F401
from .block import Block, HybridBlock, SymbolBlock  # noqa: F401
from ..nd import NDArray as _NDArray
from ..symbol import Symbol as _Symbol
tensor_types = (_Symbol, _NDArray)     # what MXNet's gluon.tensor_types holds
from . import nn, loss, data, rnn, trainer  # noqa: F401
from . import contrib  # noqa: F401
from . import model_zoo  # noqa: F401

Trainer = getattr(trainer, "Trainer", None)
if Trainer is None:
    del Trainer
