"""MXNet -> ONNX export (``mx.onnx.mx2onnx``)."""
from ._export_model import export_model, get_operator_support  # noqa: F401
from . import _op_translations  # noqa: F401
