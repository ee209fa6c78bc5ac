"""``mx.onnx``: export MXNet models (a Symbol and its parameters, or the files
:meth:`HybridBlock.export` writes) to ONNX, for inference in other runtimes.

Needs the ``onnx`` package (``pip install 'mxlite[onnx]'``); without it the functions
raise ImportError saying so. Import of ONNX models lives in ``mx.contrib.onnx``, as in
MXNet 1.9.1.
"""
from .mx2onnx import export_model, get_operator_support  # noqa: F401
from . import mx2onnx  # noqa: F401
