"""Operators: the registry, every built-in op, and custom operators."""
from .registry import (Op, Param, Params, register_op, get_op, list_ops, invoke,  # noqa: F401
                       on_ndarrays, OPS)
from . import tensor, nn  # noqa: F401  (registers the built-in ops)
from .tensor import linalg_extra, random_pdf  # noqa: F401,E402
from . import image_ops  # noqa: F401,E402  (mx.nd.image.*)
from . import control_flow  # noqa: F401,E402  (_foreach, _while_loop, _cond)
from . import numpy  # noqa: F401,E402  (_npi_*, _np_*, _npx_*: mx.np and mx.npx)

from .. import nd as _nd  # noqa: E402
from ..nd import ndarray as _ndarray  # noqa: E402

_nd._attach_registry()
_ndarray._default_params_table()
from .custom import CustomOp, CustomOpProp, register  # noqa: F401
from .numpy_op import customop  # noqa: F401
from .python_op import PythonOp, NumpyOp, NDArrayOp  # noqa: F401
from .info import (OperatorArguments, get_all_registered_operators,  # noqa: F401
                   get_operator_arguments)


# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "MXCallbackList": "mxlite.base",
    "NDArray": "mxlite.nd.ndarray",
    "c_array": "mxlite.base",
    "c_array_buf": "mxlite.base",
    "c_str": "mxlite.base",
    "check_call": "mxlite.base",
    "context": "mxlite.context:",
    "ctypes2numpy_shared": "mxlite.base",
    "is_np_array": "mxlite.util",
    "py_str": "mxlite.base",
    "symbol": "mxlite.symbol:",
})
