"""The table of ONNX operator -> translation that import reads."""
from ._op_translations import CONVERT
from . import _op_translations_tensor  # noqa: F401  (each registers into CONVERT)
from . import _op_translations_more  # noqa: F401
from . import _op_translations_rnn  # noqa: F401

_convert_map = CONVERT
