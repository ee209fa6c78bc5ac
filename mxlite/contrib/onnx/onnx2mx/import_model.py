"""``import_model`` and ``get_model_metadata``: ONNX files to Symbols."""
from ....onnx._onnx_dep import require_onnx
from .import_onnx import GraphProto

__all__ = ["import_model", "get_model_metadata"]


def import_model(model_file):
    """``(sym, arg_params, aux_params)`` of an ONNX model file: the graph as a Symbol and
    its initializers as NDArrays (BatchNorm running statistics among the aux params).

    Examples
    --------
    >>> sym, arg_params, aux_params = mx.contrib.onnx.import_model('net.onnx')  # doctest: +SKIP
    """
    onnx = require_onnx("mx.contrib.onnx.import_model")
    model = onnx.load_model(model_file)
    opset = max(x.version for x in model.opset_import if x.domain in ("", "ai.onnx"))
    return GraphProto().from_onnx(model.graph, opset_version=opset)


def get_model_metadata(model_file):
    """The inputs and outputs of an ONNX model file: ``{'input_tensor_data': [(name,
    shape, onnx dtype), ...], 'output_tensor_data': [(name, shape), ...]}``."""
    onnx = require_onnx("mx.contrib.onnx.get_model_metadata")
    return GraphProto().get_graph_metadata(onnx.load_model(model_file).graph)
