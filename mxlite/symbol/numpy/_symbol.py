"""The functions of ``mx.sym.np`` (MXNet's ``mxnet.symbol.numpy._symbol``) and its Symbol
class ``_Symbol``."""
from ...numpy.multiarray import *  # noqa: F401,F403
from ._np_symbol import _Symbol  # noqa: F401
from ._np_symbol import CREATION as _CREATION, creation_twin as _twin
from ...numpy import _creation

for _name in _CREATION:
    globals()[_name] = _twin(getattr(_creation, _name))
