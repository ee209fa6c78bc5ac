"""The op functions of ``mx.npx``, made from the registry like ``mx.nd``'s but taking
``mx.np.ndarray`` (a legacy NDArray is refused with MXNet's error)."""
from ..operator.registry import OPS
from ..nd.register import make_function
from ..operator.numpy.npx import NPX_OPS

__all__ = []
for _name, (_op, _legacy) in NPX_OPS.items():
    if _op in OPS:
        globals()[_name] = make_function(OPS[_op], _name, face="np")
        __all__.append(_name)
