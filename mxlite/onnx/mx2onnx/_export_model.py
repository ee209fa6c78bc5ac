"""``export_model`` and ``get_operator_support``: MXNet models to ONNX files."""
import logging

import numpy as np

from ...base import string_types
from ... import symbol
from .. import _onnx_dep
from ._export_onnx import MXNetGraph, OPSET, IR_VERSION
from ._export_helper import load_module

__all__ = ["export_model", "get_operator_support"]


def get_operator_support(opset_version=None):
    """The sorted names of the MXNet operators that export to ONNX at ``opset_version``
    (default: the newest opset the installed onnx package knows).

    mxlite writes opset 13 graphs: for ``opset_version`` below 13 the list is empty.
    """
    defs = _onnx_dep.require_onnx("mx.onnx.get_operator_support", "onnx.defs")
    if opset_version is None:
        opset_version = defs.onnx_opset_version()
    from ...operator.registry import OPS
    ops = set()
    for version in range(opset_version, 11, -1):
        for name in MXNetGraph.registry_.get(version, {}):
            ops.update(alias for alias, op in OPS.items() if op.name == name)
    return sorted(ops)


def export_model(sym, params, in_shapes=None, in_types=np.float32,
                 onnx_file_path='model.onnx', verbose=False, dynamic=False,
                 dynamic_input_shapes=None, run_shape_inference=False, input_type=None,
                 input_shape=None):
    """Export an MXNet model to an ONNX file (opset 13), for inference.

    Parameters
    ----------
    sym : str or Symbol
        The model: a ``-symbol.json`` path or a Symbol.
    params : str or dict or list of two dicts
        A ``.params`` path, ``{name: NDArray}`` with the arguments and auxiliary states,
        or ``[arg_params, aux_params]``.
    in_shapes : list of tuple
        The shape of each model input, in the order of ``sym.list_inputs()``.
    in_types : dtype or list of dtypes
        The dtype of each input (one dtype: all of them).
    onnx_file_path : str
        Where to write the model.
    verbose : bool
        Log each node as it is converted.
    dynamic : bool
        Leave the input and output dims open: ``None``, or as ``dynamic_input_shapes``
        gives them (``None`` or a name per dim), e.g. ``[(None, 3, 224, 224)]``.
    run_shape_inference : bool
        Run ONNX shape inference on the result (kept as exported when it fails).
    input_type, input_shape :
        Old names of ``in_types`` and ``in_shapes``.

    Returns
    -------
    str
        ``onnx_file_path``.

    Examples
    --------
    >>> net.hybridize(); net(x); net.export('net')                # doctest: +SKIP
    >>> mx.onnx.export_model('net-symbol.json', 'net-0000.params', [(1, 3, 224, 224)],
    ...                      np.float32, 'net.onnx')                 # doctest: +SKIP
    """
    onnx = _onnx_dep.require_onnx("mx.onnx.export_model")
    if input_type is not None:
        in_types = input_type
    if input_shape is not None:
        in_shapes = input_shape
    if in_shapes is None:
        raise ValueError("mx.onnx.export_model: in_shapes is required (one shape per model "
                         "input, e.g. [(1, 3, 224, 224)])")
    if not isinstance(in_types, (list, tuple)):
        in_types = [in_types] * len(in_shapes)
    if len(in_types) != len(in_shapes):
        raise ValueError("mx.onnx.export_model: %d in_types for %d in_shapes; give one "
                         "dtype per input" % (len(in_types), len(in_shapes)))
    in_types_t = [onnx.helper.np_dtype_to_tensor_dtype(np.dtype(t)) for t in in_types]
    if isinstance(sym, string_types) and isinstance(params, string_types):
        logging.info("Converting json and weight file to sym and params")
        sym, params = load_module(sym, params)
    elif isinstance(sym, symbol.Symbol) and isinstance(params, list) and len(params) == 2:
        params = dict(params[0], **params[1])
    elif not (isinstance(sym, symbol.Symbol) and isinstance(params, dict)):
        raise ValueError("mx.onnx.export_model: sym and params must be two file paths, or a "
                         "Symbol and a dict (or [arg_params, aux_params]); got %s and %s"
                         % (type(sym).__name__, type(params).__name__))
    graph = MXNetGraph().create_onnx_graph_proto(
        sym, params, [tuple(s) for s in in_shapes], in_types_t, verbose=verbose,
        opset_version=OPSET, dynamic=dynamic, dynamic_input_shapes=dynamic_input_shapes)
    model = onnx.helper.make_model(
        graph, producer_name="mxlite", opset_imports=[onnx.helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    if run_shape_inference:
        try:
            model = onnx.shape_inference.infer_shapes(model)
        except Exception as e:      # as MXNet: the export stands without the inferred shapes
            logging.info("Shape inference failed (%s), original export is kept.", e)
    with open(onnx_file_path, "wb") as f:
        f.write(model.SerializeToString())
    logging.info("Exported ONNX file %s saved to disk", onnx_file_path)
    return onnx_file_path
