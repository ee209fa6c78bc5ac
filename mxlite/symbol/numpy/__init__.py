"""``mx.sym.np``: the ``mx.np`` functions composing Symbols (``F.np`` while a HybridBlock
is traced under NumPy semantics). The functions are ``mx.np``'s own: given a Symbol
they add a node of the same op (``_npi_add``, ``_np_sum`` ...) to the graph."""
from ...numpy.multiarray import *  # noqa: F401,F403
from ...numpy import linalg, random  # noqa: F401
from . import _symbol  # noqa: F401
from ._symbol import (_Symbol, empty, zeros, ones, full, arange, linspace, eye,  # noqa: F401
                      identity, indices)
