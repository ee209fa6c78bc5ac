"""The functions of ``mx.sym.np`` (MXNet's ``mxnet.symbol.numpy._symbol``)."""
from ...numpy.multiarray import *  # noqa: F401,F403
