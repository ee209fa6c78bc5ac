"""The functions of ``mx.sym.np`` (MXNet's ``mxnet.symbol.numpy._symbol``) and its Symbol
class ``_Symbol``."""
from ...numpy.multiarray import *  # noqa: F401,F403
from ._np_symbol import _Symbol  # noqa: F401
