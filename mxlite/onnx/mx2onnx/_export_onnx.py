"""MXNet graph -> ONNX graph: :class:`MXNetGraph` walks a Symbol's nodes in order and
hands each to the translation registered for its operator (``_op_translations``).

A translation reads one node (:class:`ExportNode`: typed params, ONNX names of its
inputs, the names its outputs must take, static shapes and dtypes from inference) and
writes ONNX nodes through the :class:`OnnxBuilder`.
"""
import logging

import numpy as np

from .. import _onnx_dep
from ... import nd
from ...base import MXNetError

__all__ = ["MXNetGraph", "OnnxBuilder", "ExportNode", "OPSET", "IR_VERSION"]

# The ONNX opset every translation is written for (the newest MXNet 1.9.1 targets).
OPSET = 13
IR_VERSION = 7      # the IR of opset 13: runtimes of that time read it too

# Ops whose ``label`` input only trains the loss; export leaves it out of the graph.
_LOSS_OUTPUTS = ("SoftmaxOutput", "LinearRegressionOutput", "LogisticRegressionOutput",
                 "MAERegressionOutput", "SVMOutput")


class ExportNode:
    """What a translation sees of one MXNet node."""
    __slots__ = ("name", "op", "p", "ins", "outs", "in_shapes", "out_shapes", "in_dtypes",
                 "out_dtypes")

    def __init__(self, **fields):
        for k in self.__slots__:
            setattr(self, k, fields[k])


class OnnxBuilder:
    """Collects the ONNX nodes and initializers of one graph, with unique names."""

    def __init__(self, dynamic=False):
        self.onnx = _onnx_dep.require_onnx("mx.onnx.export_model")
        self.nodes = []
        self.initializer = []
        self.used = set()
        self.dynamic = dynamic

    def fresh(self, hint):
        """A tensor or node name not used yet, after ``hint``."""
        name, k = hint, 0
        while name in self.used:
            name, k = "%s_%d" % (hint, k), k + 1
        self.used.add(name)
        return name

    def add(self, op_type, inputs, outputs=1, name=None, **attrs):
        """One ONNX node; ``outputs`` is a count (fresh names) or a list of names.
        Returns the output names (one name when there is one)."""
        hint = name or op_type.lower()
        if isinstance(outputs, int):
            outputs = [self.fresh("%s_%s" % (hint, op_type.lower())) for _ in range(outputs)]
        self.nodes.append(self.onnx.helper.make_node(
            op_type, list(inputs), list(outputs), name=self.fresh("%s_%s_node" % (
                hint, op_type.lower())), **attrs))
        return outputs[0] if len(outputs) == 1 else outputs

    def const(self, value, hint, dtype=None):
        """An initializer holding ``value`` (a NumPy array or a list), its name."""
        arr = np.asarray(value, dtype=dtype)
        name = self.fresh(hint)
        self.initializer.append(self.onnx.numpy_helper.from_array(arr, name))
        return name

    def int64s(self, values, hint):
        """A 1-d int64 constant (axes, shapes, pads), its name."""
        return self.const(np.asarray(values, dtype=np.int64).reshape(-1), hint)


def _onnx_type(dtype):
    from onnx import helper
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


class MXNetGraph:
    """Converts a Symbol and its parameters to an ONNX ``GraphProto``.

    ``registry_`` maps an opset version to ``{mxnet op name: translation}``; a
    translation registered for an opset serves every later one.
    """
    registry_ = {}
    input_output_maps_ = {}

    def __init__(self):
        self.nodes = []
        self.input_tensors = []
        self.output_tensors = []

    @staticmethod
    def register(op_name, opset_version=OPSET):
        """Decorator: register ``func(builder, node)`` as the translation of ``op_name``."""
        def wrapper(func):
            MXNetGraph.registry_.setdefault(opset_version, {})[op_name] = func
            return func
        return wrapper

    @staticmethod
    def convert_layer(node, **kwargs):
        """Translate one :class:`ExportNode` into ``kwargs['builder']`` (its output
        names are ``node.outs``). AttributeError names an op with no translation."""
        opset_version = kwargs.get("opset_version", OPSET)
        for version in range(opset_version, 11, -1):
            func = MXNetGraph.registry_.get(version, {}).get(node.op)
            if func is not None:
                return func(kwargs["builder"], node)
        raise AttributeError(
            "mx.onnx.export_model: no conversion function registered for op type %s yet "
            "(node %r); mx.onnx.get_operator_support() lists the ops that export"
            % (node.op, node.name))

    @staticmethod
    def split_params(sym, params):
        """``(arg_params, aux_params)``: ``params`` split by the symbol's arguments and
        auxiliary states."""
        arg_params = {a: nd.array(params[a]) for a in sym.list_arguments() if a in params}
        aux_params = {a: nd.array(params[a]) for a in sym.list_auxiliary_states()
                      if a in params}
        return arg_params, aux_params

    @staticmethod
    def convert_weights_to_numpy(weights_dict):
        """``{name: NumPy array}`` with the ``arg:``/``aux:`` prefixes of a .params file
        removed."""
        out = {}
        for k, v in weights_dict.items():
            k = k[4:] if k.startswith(("arg:", "aux:")) else k
            out[k] = v.asnumpy() if hasattr(v, "asnumpy") else np.asarray(v)
        return out

    @staticmethod
    def get_outputs(sym, params, in_shapes, output_label, in_types, dynamic=False,
                    dynamic_input_shapes=None):
        """``(graph input shapes, {output name: {'shape', 'dtype'}})`` for the ONNX graph
        (``in_types`` are ONNX tensor types)."""
        names = _graph_input_names(sym, params, output_label)
        shapes = dict(zip(names, in_shapes))
        shapes.update({n: tuple(v.shape) for n, v in params.items()
                       if n in sym.list_inputs()})
        _, out_shapes, _ = sym.infer_shape(**shapes)
        if out_shapes is None:
            raise MXNetError("mx.onnx.export_model: the shapes %s do not determine every "
                             "shape of the graph (inputs %s)" % (list(in_shapes), names))
        from onnx import helper
        dtypes = {n: helper.tensor_dtype_to_np_dtype(t) for n, t in zip(names, in_types)}
        dtypes.update({n: v.dtype for n, v in params.items() if n in sym.list_inputs()})
        _, out_types, _ = sym.infer_type(**dtypes)
        if dynamic:
            out_shapes = [(None,) * len(s) for s in out_shapes]
            if dynamic_input_shapes is None:
                in_shapes = [(None,) * len(s) for s in in_shapes]
            else:
                if len(dynamic_input_shapes) != len(in_shapes) or any(
                        len(a) != len(b) for a, b in zip(in_shapes, dynamic_input_shapes)):
                    raise ValueError("mx.onnx.export_model: dynamic_input_shapes %s must give "
                                     "one shape of the same rank for each of in_shapes %s"
                                     % (dynamic_input_shapes, in_shapes))
                in_shapes = [tuple(s) for s in dynamic_input_shapes]
        elif dynamic_input_shapes is not None:
            raise ValueError("mx.onnx.export_model: dynamic_input_shapes is given; set "
                             "dynamic=True to use it")
        outputs = {n: {"shape": tuple(s), "dtype": _onnx_type(t)}
                   for n, s, t in zip(_output_names(sym), out_shapes, out_types)}
        return in_shapes, outputs

    def create_onnx_graph_proto(self, sym, params, in_shapes, in_types, verbose=False,
                                opset_version=None, dynamic=True, dynamic_input_shapes=None):
        """The ONNX ``GraphProto`` of ``sym`` with ``params`` ({name: NDArray}) as
        initializers, for graph inputs of ``in_shapes`` and ONNX types ``in_types``."""
        onnx = _onnx_dep.require_onnx("mx.onnx.export_model")
        opset_version = OPSET if opset_version is None else opset_version
        weights = MXNetGraph.convert_weights_to_numpy(params)
        internals = sym.get_internals()
        output_label = internals[len(internals) - 1].name + "_label"
        input_names = _graph_input_names(sym, weights, output_label)
        if len(in_shapes) != len(input_names):
            raise ValueError("mx.onnx.export_model: the model has %d inputs %s but in_shapes "
                             "gives %d shapes" % (len(input_names), input_names,
                                                  len(in_shapes)))
        graph_in_shapes, graph_outputs = MXNetGraph.get_outputs(
            sym, weights, in_shapes, output_label, in_types, dynamic, dynamic_input_shapes)
        shapes, dtypes = _internal_shapes_dtypes(sym, weights, input_names, in_shapes,
                                                 in_types)
        b = OnnxBuilder(dynamic)
        names = {}          # (id(node), output index) -> ONNX tensor name
        inputs = []
        used_params = set(sym.list_inputs())
        for node in sym._nodes():
            if node.op is None:
                b.used.add(node.name)
                names[(id(node), 0)] = node.name
                if node.name in input_names:
                    k = input_names.index(node.name)
                    inputs.append(onnx.helper.make_tensor_value_info(
                        node.name, in_types[k], graph_in_shapes[k]))
                elif node.name in weights and node.name in used_params:
                    b.initializer.append(onnx.numpy_helper.from_array(
                        weights[node.name], node.name))
        for node in sym._nodes():
            if node.op is None:
                continue
            n_out = node.num_visible()
            outs = [node.name] if n_out == 1 else [
                "%s%d" % (node.name, i) for i in range(n_out)]
            outs = [b.fresh(o) for o in outs]
            ins = [_read(names, c, i) for c, i in node.inputs]
            enode = ExportNode(
                name=node.name, op=node.op.name, p=node.p, ins=ins, outs=outs,
                in_shapes=[shapes.get((id(c), i)) for c, i in node.inputs],
                out_shapes=[shapes.get((id(node), i)) for i in range(n_out)],
                in_dtypes=[dtypes.get((id(c), i)) for c, i in node.inputs],
                out_dtypes=[dtypes.get((id(node), i)) for i in range(n_out)])
            if verbose:
                logging.info("Converting %s (%s)", node.name, node.op.name)
            start = len(b.nodes)
            MXNetGraph.convert_layer(enode, builder=b, opset_version=opset_version)
            written = {o for onode in b.nodes[start:] for o in onode.output}
            for i, o in enumerate(outs):
                # An output a translation leaves unwritten (rrelu's mask) has no export:
                # reading it is an error that names it.
                names[(id(node), i)] = o if o in written else _Missing(node, i)
        outputs = []
        for (node, i), (oname, info) in zip(sym._outputs, graph_outputs.items()):
            src = _read(names, node, i)
            if src != oname or node.op is None or src in [o.name for o in outputs]:
                src = b.add("Identity", [src], [b.fresh(oname)])
            outputs.append(onnx.helper.make_tensor_value_info(
                src, info["dtype"], info["shape"]))
        read = {i for node in b.nodes for i in node.input}
        initializer = [t for t in b.initializer if t.name in read]   # fix_gamma's gamma not
        graph = onnx.helper.make_graph(b.nodes, "mxnet_converted_model", inputs, outputs,
                                       initializer=initializer)
        self.nodes, self.input_tensors, self.output_tensors = list(b.nodes), inputs, outputs
        ctx = onnx.checker.C.CheckerContext()
        ctx.ir_version, ctx.opset_imports = IR_VERSION, {"": opset_version}
        onnx.checker.check_graph(graph, ctx)
        return graph


class _Missing:
    """Stands for an output that its node's translation does not produce."""
    def __init__(self, node, i):
        self.node, self.i = node, i


def _read(names, node, i):
    name = names.get((id(node), i))
    if isinstance(name, _Missing):
        raise MXNetError("mx.onnx.export_model: output %d of %s (node %r) has no ONNX export"
                         % (i, node.op.name, node.name))
    return name


def _graph_input_names(sym, params, output_label):
    """The symbol's inputs that the ONNX graph takes as inputs: not a parameter, not the
    label of a loss output."""
    labels = {output_label}
    for node in sym._nodes():
        if node.op is not None and node.op.name in _LOSS_OUTPUTS and len(node.inputs) > 1:
            labels.add(node.inputs[1][0].name)
    return [n for n in sym.list_inputs() if n not in params and n not in labels]


def _output_names(sym):
    """ONNX names of the graph outputs, after MXNet's: ``fc1_output`` -> ``fc1``,
    ``split0_output1`` -> ``split01``."""
    out = []
    for name in sym.list_outputs():
        if name.endswith("_output"):
            out.append(name[:-len("_output")])
        elif name[-1:].isdigit() and name[:-1].endswith("_output"):
            out.append(name[:-len("_output0")] + name[-1])
        else:
            out.append(name)
    return out


def _internal_shapes_dtypes(sym, weights, input_names, in_shapes, in_types):
    """Static shape and dtype of every node output: ``{(id(node), i): value}``."""
    from onnx import helper
    known = {n: tuple(s) for n, s in zip(input_names, in_shapes)}
    known.update({n: tuple(v.shape) for n, v in weights.items() if n in sym.list_inputs()})
    vals = sym._infer_shape_impl((), known)[3]
    internals = sym.get_internals()
    types = {n: helper.tensor_dtype_to_np_dtype(t) for n, t in zip(input_names, in_types)}
    types.update({n: v.dtype for n, v in weights.items() if n in sym.list_inputs()})
    _, out_types, _ = internals.infer_type(**types)
    shapes = {(k, i): tuple(s) for k, v in vals.items() for i, s in enumerate(v)
              if s is not None}
    dtypes = {(id(n), i): np.dtype(t) for (n, i), t in zip(internals._outputs, out_types)}
    return shapes, dtypes
