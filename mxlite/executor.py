"""``mx.executor``: the ``Executor`` that ``Symbol.bind`` and ``simple_bind`` return
(it lives in ``mx.sym``'s package)."""
from .symbol.executor import Executor  # noqa: F401
from ._lazy import exports as _exports

__all__ = ["Executor"]

__getattr__, __dir__ = _exports(__name__, {
    "NDArray": "mxlite.nd.ndarray", "ndarray": "mxlite.nd:", "py_str": "mxlite.base",
    "check_call": "mxlite.base", "c_array_buf": "mxlite.base", "c_handle_array": "mxlite.base",
    "c_str_array": "mxlite.base"})
