"""``mx.contrib.symbol`` (``mx.contrib.sym``): MXNet's first home of the contrib
operators, the same functions as ``mx.sym.contrib`` (an op registered later appears in
both)."""
from ..symbol import contrib as _ops
from .._lazy import forward_to as _forward_to

__getattr__, __dir__ = _forward_to(_ops)
