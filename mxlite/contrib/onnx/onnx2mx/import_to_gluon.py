"""``import_to_gluon``: an ONNX file as a Gluon SymbolBlock."""
from ....onnx._onnx_dep import require_onnx
from .import_onnx import GraphProto

__all__ = ["import_to_gluon"]


def import_to_gluon(model_file, ctx):
    """A :class:`~mxlite.gluon.SymbolBlock` running the ONNX model in ``model_file``, its
    parameters loaded on ``ctx`` (a Context or a list of them)."""
    onnx = require_onnx("mx.contrib.onnx.import_to_gluon")
    model = onnx.load_model(model_file)
    opset = max(x.version for x in model.opset_import if x.domain in ("", "ai.onnx"))
    return GraphProto().graph_to_gluon(model.graph, ctx, opset)
