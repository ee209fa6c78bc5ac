"""``mx.gluon.contrib.rnn``: variational dropout, the projected LSTM cell and the
convolutional RNN/LSTM/GRU cells (1-D, 2-D, 3-D), as in MXNet 1.9.1."""
from .conv_rnn_cell import *  # noqa: F401,F403
from .rnn_cell import *  # noqa: F401,F403
from . import conv_rnn_cell, rnn_cell  # noqa: F401

__all__ = conv_rnn_cell.__all__ + rnn_cell.__all__
