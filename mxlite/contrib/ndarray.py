"""``mx.contrib.ndarray`` (``mx.contrib.nd``): MXNet's first home of the contrib
operators, the same functions as ``mx.nd.contrib`` (an op registered later appears in
both)."""
from ..nd import contrib as _ops
from .._lazy import forward_to as _forward_to

__getattr__, __dir__ = _forward_to(_ops)
