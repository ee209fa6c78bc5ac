"""ONNX -> MXNet import (``mx.contrib.onnx.onnx2mx``)."""
from . import import_model  # noqa: F401
from . import import_onnx  # noqa: F401
from . import import_to_gluon  # noqa: F401
