"""``mx.gluon.nn``: neural network layers."""
import importlib
import importlib.util

from .basic_layers import *  # noqa: F401,F403
from ..block import Block, HybridBlock, SymbolBlock  # noqa: F401 (MXNet shows them here too)


def _import_layers(name):
    """Export a layer module of this package when it exists (others are written separately)."""
    if importlib.util.find_spec(__name__ + "." + name) is None:
        return
    mod = importlib.import_module(__name__ + "." + name)
    names = getattr(mod, "__all__", [n for n in vars(mod) if not n.startswith("_")])
    for n in names:
        # basic_layers owns the names it defines (Activation lives there).
        if n not in globals():
            globals()[n] = getattr(mod, n)


for _name in ("activations", "conv_layers"):
    _import_layers(_name)
