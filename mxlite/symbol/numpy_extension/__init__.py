"""``mx.sym.npx``: the ``mx.npx`` ops as Symbol functions (``F.npx`` while tracing)."""
from ...operator.registry import OPS
from ...numpy_extension._op import NPX_OPS
from ..register import make_function

__all__ = []
for _name, (_op, _legacy) in NPX_OPS.items():
    if _op in OPS:
        globals()[_name] = make_function(OPS[_op], _name, hint=_name)
        __all__.append(_name)

from . import image, random  # noqa: E402,F401
