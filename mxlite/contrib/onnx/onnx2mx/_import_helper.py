"""The table of ONNX operator -> translation that import reads."""
from ._op_translations import CONVERT
from . import _op_translations_tensor  # noqa: F401  (registers into CONVERT)

_convert_map = CONVERT
