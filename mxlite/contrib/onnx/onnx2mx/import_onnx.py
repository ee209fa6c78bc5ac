"""ONNX graph -> Symbol: :class:`GraphProto` reads an ONNX ``GraphProto`` node by node
and builds the Symbol with the translation registered for each ONNX op
(``_op_translations``); initializers become parameters.
"""
import numpy as np

from .... import symbol
from .... import nd
from ....onnx._onnx_dep import require_onnx
from ._import_helper import _convert_map as convert_map
from ._fold import FOLD, foldable

__all__ = ["GraphProto"]


class GraphProto:
    """Converts one ONNX graph. A translation reads the graph through :meth:`sym`
    (an input as a Symbol), :meth:`value` (a constant input as a NumPy array, for the
    ops that take shapes and axes as inputs) and :meth:`shape` (a static shape from
    ONNX shape inference, when known)."""

    def __init__(self):
        self._nodes = {}            # ONNX tensor name -> Symbol
        self._params = {}           # initializer / Constant name -> NumPy array
        self._shapes = {}           # ONNX tensor name -> tuple (None for unknown dims)
        self._used_params = set()
        self.shape_source = {}      # output of a Shape node -> the tensor it measures
        self._current_op = None     # the ONNX node being converted: its op and outputs
        self._current_outputs = ()
        self._names = set()
        self.arg_dict = {}
        self.aux_dict = {}
        self.model_metadata = {}
        self.opset_version = 0

    # -- what translations read ---------------------------------------------------------
    def sym(self, name):
        """The Symbol of ONNX tensor ``name`` (a parameter Variable for an initializer)."""
        if name not in self._nodes and name in self._params:
            self._nodes[name] = symbol.var(name, shape=self._params[name].shape,
                                           dtype=self._params[name].dtype)
            self._used_params.add(name)
        if name not in self._nodes:
            raise ValueError("onnx import: tensor %r is read before any node writes it" % name)
        return self._nodes[name]

    def value(self, name):
        """The constant value of tensor ``name`` (NumPy array), or None if it is computed
        or absent (``''``)."""
        return self._params.get(name) if name else None

    def set_param(self, name, value):
        """Replace the value of parameter ``name`` (a translation reshaping a weight to
        MXNet's layout)."""
        self._params[name] = np.asarray(value)
        self._nodes.pop(name, None)

    def shape(self, name):
        """The static shape of tensor ``name`` (dims None where unknown), or None."""
        if name in self._params:
            return tuple(self._params[name].shape)
        return self._shapes.get(name)

    def fresh(self, hint):
        """A node name not used yet, after ``hint``."""
        base = "".join(c if c.isalnum() or c in "_-." else "_" for c in hint) or "node"
        name, k = base, 0
        while name in self._names:
            name, k = "%s_%d" % (base, k), k + 1
        self._names.add(name)
        return name

    # -- conversion ---------------------------------------------------------------------
    def _convert_operator(self, node_name, op_name, attrs, inputs):
        """The Symbol for one ONNX node (``inputs``: its input tensor names)."""
        convert = convert_map.get(op_name)
        if convert is None:
            raise NotImplementedError(
                "onnx import: operator %s (node %r) is not supported; supported: %s"
                % (op_name, node_name, ", ".join(sorted(convert_map))))
        return convert(self, node_name, attrs, inputs)

    def from_onnx(self, graph, opset_version):
        """``(sym, arg_params, aux_params)`` for an ONNX graph of ``opset_version``."""
        onnx = require_onnx("mx.contrib.onnx.import_model")
        self.opset_version = opset_version
        self.model_metadata = self.get_graph_metadata(graph)
        for t in graph.initializer:
            if not t.name.strip():
                raise ValueError("onnx import: an initializer has no name")
            self._params[t.name] = self._parse_array(t)
        self._read_shapes(onnx, graph)
        for i in graph.input:
            if i.name not in self._params:
                self._nodes[i.name] = symbol.var(i.name)
                self._names.add(i.name)
        consumers = {}
        for node in graph.node:
            for k, i in enumerate(node.input):
                consumers.setdefault(i, []).append((node.op_type, k))
        for node in graph.node:
            attrs = self._parse_attr(node.attribute)
            if node.op_type == "Constant":
                self._params[node.output[0]] = self._constant(onnx, attrs)
                continue
            if node.op_type == "Shape" and self._fold_shape(node, consumers):
                continue
            if foldable(node, self._params):
                args = [self._params[i] if i else None for i in node.input]
                self._params[node.output[0]] = np.asarray(FOLD[node.op_type](attrs, *args))
                continue
            name = self.fresh(node.output[0] if node.output else node.name or node.op_type)
            self._current_op, self._current_outputs = node.op_type, list(node.output)
            out = self._convert_operator(name, node.op_type, attrs, list(node.input))
            outs = out if isinstance(out, (list, tuple)) else [out]
            for k, o in zip(node.output, outs):
                if k:
                    self._nodes[k] = o
        heads = [self.sym(o.name) for o in graph.output]
        sym = heads[0] if len(heads) == 1 else symbol.Group(heads)
        for name in sym.list_arguments():
            if name in self._used_params:
                self.arg_dict[name] = nd.array(self._params[name], dtype=self._params[name].dtype)
        for name in sym.list_auxiliary_states():
            if name in self._used_params:
                self.aux_dict[name] = nd.array(self._params[name], dtype=self._params[name].dtype)
        return sym, self.arg_dict, self.aux_dict

    def _fold_shape(self, node, consumers):
        """Fold Shape(x) to a constant when x's shape is static, so the shape arithmetic
        exporters write (``x.view(x.size(0), -1)``: Shape, Gather, Concat, Reshape) folds
        too. A Shape read only as the target of Reshape, Expand or ConstantOfShape stays
        symbolic (reshape_like, broadcast_like, zeros_like keep the batch size open)."""
        shape = self.shape(node.input[0])
        if shape is None or None in shape or len(node.attribute):
            return False
        if all(c in (("Reshape", 1), ("Expand", 1), ("ConstantOfShape", 0))
               for c in consumers.get(node.output[0], ())):
            return False
        self._params[node.output[0]] = np.asarray(shape, dtype=np.int64)
        return True

    def _read_shapes(self, onnx, graph):
        """Static shapes of the graph's tensors from ONNX shape inference (best effort:
        a graph it cannot infer leaves shapes unknown)."""
        try:
            model = onnx.helper.make_model(graph, opset_imports=[
                onnx.helper.make_opsetid("", self.opset_version)])
            graph = onnx.shape_inference.infer_shapes(model).graph
        except Exception:       # NOTE: shapes only refine the translation of a few ops
            pass
        for v in list(graph.input) + list(graph.value_info) + list(graph.output):
            t = v.type.tensor_type
            if t.HasField("shape"):
                self._shapes[v.name] = tuple(d.dim_value if d.HasField("dim_value") else None
                                             for d in t.shape.dim)

    @staticmethod
    def _constant(onnx, attrs):
        if "value" in attrs:
            return onnx.numpy_helper.to_array(attrs["value"])
        for key, dtype in (("value_float", np.float32), ("value_int", np.int64),
                           ("value_floats", np.float32), ("value_ints", np.int64)):
            if key in attrs:
                return np.asarray(attrs[key], dtype=dtype)
        raise NotImplementedError("onnx import: Constant with attributes %s is not supported"
                                  % sorted(attrs))

    def get_graph_metadata(self, graph):
        """``{'input_tensor_data': [(name, shape, onnx dtype)], 'output_tensor_data':
        [(name, shape)]}`` for the graph's inputs (initializers left out) and outputs;
        an open dim reads 0, as in MXNet."""
        params = {t.name for t in graph.initializer}
        inputs = [(i.name, tuple(d.dim_value for d in i.type.tensor_type.shape.dim),
                   i.type.tensor_type.elem_type)
                  for i in graph.input if i.name not in params]
        outputs = [(o.name, tuple(d.dim_value for d in o.type.tensor_type.shape.dim))
                   for o in graph.output]
        return {"input_tensor_data": inputs, "output_tensor_data": outputs}

    def graph_to_gluon(self, graph, ctx, opset_version):
        """A :class:`~mxlite.gluon.SymbolBlock` running the graph, its parameters loaded
        on ``ctx`` (a Context or a list of them)."""
        sym, arg_params, aux_params = self.from_onnx(graph, opset_version)
        data_names = [i[0] for i in self.get_graph_metadata(graph)["input_tensor_data"]]
        from ....gluon import SymbolBlock
        net = SymbolBlock(outputs=sym, inputs=[symbol.var(n) for n in data_names])
        params = net.collect_params()
        for name, value in list(arg_params.items()) + list(aux_params.items()):
            if name in params:
                params[name].shape = value.shape
                params[name]._load_init(value, ctx=ctx)
        return net

    def _parse_array(self, tensor_proto):
        """A TensorProto as a NumPy array."""
        onnx = require_onnx("mx.contrib.onnx.import_model")
        return np.asarray(onnx.numpy_helper.to_array(tensor_proto))

    def _parse_attr(self, attr_proto):
        """AttributeProtos as ``{name: value}`` (strings decoded, lists as tuples)."""
        onnx = require_onnx("mx.contrib.onnx.import_model")
        attrs = {}
        for a in attr_proto:
            v = onnx.helper.get_attribute_value(a)
            if isinstance(v, bytes):
                v = v.decode("utf-8")
            elif isinstance(v, list):
                v = tuple(x.decode("utf-8") if isinstance(x, bytes) else x for x in v)
            attrs[a.name] = v
        return attrs
