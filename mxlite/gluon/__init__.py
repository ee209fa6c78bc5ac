"""``mx.gluon``: Blocks, Parameters, layers, losses, the Trainer and data loading."""
from . import parameter, block, trainer, utils, loss, nn, data, rnn  # noqa: F401
