"""Operators: the registry, every built-in op, and custom operators."""
from .registry import Op, Param, Params, register_op, get_op, list_ops, invoke, OPS  # noqa: F401
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
