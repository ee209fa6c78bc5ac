"""``Symbol``: a graph of registered operators, MXNet's JSON format, shape and type
inference, and binding to an :class:`~mxlite.symbol.executor.Executor`."""
import json

import numpy as np

from ..attribute import AttrScope, with_hidden_keys
from ..base import MXNetError, format_attr, DTYPE_TO_FLAG, FLAG_TO_DTYPE, np_dtype
from ..operator.registry import OPS
from ..util import is_np_shape

__all__ = ["Symbol", "Variable", "var", "Group", "load", "load_json", "SymNode"]

MXNET_VERSION = 10901


class SymNode:
    """One node: a variable (``op is None``) or an op call with its inputs.

    ``params`` holds the op's attributes as MXNet strings (what JSON stores) and
    ``p`` the parsed, typed values; ``attrs`` holds user attributes (``__shape__``,
    ``__lr_mult__``, ...).
    """
    __slots__ = ("op", "name", "params", "p", "attrs", "inputs", "subgraphs")

    def __init__(self, op, name, params=None, attrs=None, inputs=(), subgraphs=()):
        self.op = op
        self.name = name
        self.params = dict(params or {})
        self.attrs = dict(attrs or {})
        self.inputs = list(inputs)
        # Control-flow ops (``_foreach`` ...) take their subgraph Symbols as a param,
        # which JSON keeps beside the attributes, not among them.
        self.subgraphs = tuple(subgraphs)
        if op is None:
            self.p = None
        else:
            self.p = op.parse_params(dict(self.params, subgraphs=list(self.subgraphs))
                                     if self.subgraphs else self.params)

    def num_outputs(self):
        return 1 if self.op is None else self.op.n_outputs(self.p)

    def num_visible(self):
        return 1 if self.op is None else self.op.n_visible(self.p)

    def output_names(self):
        if self.op is None:
            return [self.name]
        names = self.op.output_names
        n = self.num_visible()
        if callable(names):
            names = names(self.p)
        if names:
            return ["%s_%s" % (self.name, s) for s in names[:n]]
        if n == 1:
            return [self.name + "_output"]
        return ["%s_output%d" % (self.name, i) for i in range(n)]

    def input_names(self):
        return list(self.op.input_names(self.p))

    def aux_slots(self):
        return set(self.op.mutate) if self.op is not None else set()


# The names MXNet's Symbol operators call their ops by (``x + y`` is ``_internal._Plus``),
# which unnamed nodes are named after: ``_plus0``, ``_mulscalar0``.
_ARITH_HINTS = {
    "elemwise_add": "_plus", "_plus_scalar": "_plusscalar", "elemwise_sub": "_minus",
    "_minus_scalar": "_minusscalar", "_rminus_scalar": "_rminusscalar", "elemwise_mul": "_mul",
    "_mul_scalar": "_mulscalar", "elemwise_div": "_div", "_div_scalar": "_divscalar",
    "_rdiv_scalar": "_rdivscalar", "_mod_scalar": "_modscalar", "_rmod_scalar": "_rmodscalar",
    "_power_scalar": "_powerscalar", "_rpower_scalar": "_rpowerscalar",
}

_AMP_CASTS = ("amp_cast", "amp_multicast")


def _through_amp_casts(entry):
    """The entry an input reads once amp_cast / amp_multicast nodes are skipped."""
    node, i = entry
    while node.op is not None and node.op.name in _AMP_CASTS:
        node, i = node.inputs[0 if node.op.name == "amp_cast" else i]
    return node, i


def _without_amp_casts(heads):
    """``heads`` over copies of their nodes whose inputs skip amp casts (MXNet's
    RemoveAmpCast before saving); None when the graph has no cast to skip."""
    order = _topo(heads)
    if not any(n.op is not None and n.op.name in _AMP_CASTS for n in order):
        return None
    copies = {}
    for node in order:          # inputs come before the nodes that read them
        c = object.__new__(SymNode)
        for slot in SymNode.__slots__:
            setattr(c, slot, getattr(node, slot))
        c.inputs = [(copies[id(n)], i) for n, i in map(_through_amp_casts, node.inputs)]
        copies[id(node)] = c
    return [(copies[id(n)], i) for n, i in heads]


def _topo(heads):
    """Nodes reachable from ``heads`` in MXNet's order (depth first, inputs in order)."""
    order, seen = [], set()
    for head, _ in heads:
        if id(head) in seen:
            continue
        stack = [(head, 0)]
        seen.add(id(head))
        while stack:
            node, k = stack.pop()
            if k < len(node.inputs):
                stack.append((node, k + 1))
                child = node.inputs[k][0]
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, 0))
            else:
                order.append(node)
    return order


class Symbol:
    """A symbolic expression: one or more outputs of a graph of operators.

    Examples
    --------
    >>> data = mx.sym.var('data')
    >>> fc1 = mx.sym.FullyConnected(data, num_hidden=128, name='fc1')
    >>> fc1.list_arguments()
    ['data', 'fc1_weight', 'fc1_bias']
    """
    __slots__ = ("_outputs", "__weakref__")

    def __init__(self, outputs):
        self._outputs = list(outputs)

    # -- naming and structure ---------------------------------------------------
    @property
    def name(self):
        if len(self._outputs) != 1:
            return None
        return self._outputs[0][0].name

    def _nodes(self):
        return _topo(self._outputs)

    def _arg_aux_nodes(self):
        """Variable nodes split into arguments and auxiliary states."""
        aux_ids = set()
        for node in self._nodes():
            for slot in node.aux_slots():
                if slot < len(node.inputs) and node.inputs[slot][0].op is None:
                    aux_ids.add(id(node.inputs[slot][0]))
        args, aux = [], []
        for node in self._nodes():
            if node.op is None:
                (aux if id(node) in aux_ids else args).append(node)
        return args, aux

    def list_arguments(self):
        """Names of the arguments (inputs and weights), in graph order."""
        return [n.name for n in self._arg_aux_nodes()[0]]

    def list_auxiliary_states(self):
        """Names of the auxiliary states (e.g. BatchNorm's moving mean and variance)."""
        return [n.name for n in self._arg_aux_nodes()[1]]

    def list_inputs(self):
        """Every variable: arguments and auxiliary states, in graph order."""
        return [n.name for n in self._nodes() if n.op is None]

    def list_outputs(self):
        """Names of the outputs (``fc1_output``)."""
        return [node.output_names()[i] for node, i in self._outputs]

    def get_internals(self):
        """A group of every output of every node, in graph order."""
        outs = []
        for node in self._nodes():
            outs.extend((node, i) for i in range(node.num_visible()))
        return Symbol(outs)

    def get_children(self):
        """The inputs of this symbol's node, grouped (None for a variable)."""
        node = self._outputs[0][0]
        if not node.inputs:
            return None
        return Symbol(list(node.inputs))

    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (type(self)([o]) for o in self._outputs)

    def __getitem__(self, index):
        if isinstance(index, str):
            names = self.list_outputs()
            if index not in names:
                raise ValueError("Symbol: no output named %r; outputs are %s" % (index, names))
            if names.count(index) > 1:
                raise ValueError("Symbol: more than one output named %r" % index)
            return type(self)([self._outputs[names.index(index)]])
        if isinstance(index, slice):
            return type(self)(self._outputs[index])
        if not -len(self._outputs) <= index < len(self._outputs):
            raise IndexError("Symbol: output index %d out of range for %d outputs"
                             % (index, len(self._outputs)))
        return type(self)([self._outputs[index]])

    def __repr__(self):
        if len(self._outputs) == 1:
            return "<Symbol %s>" % self.name
        return "<Symbol group [%s]>" % ", ".join(s.name for s in self)

    def __copy__(self):
        return Symbol(self._outputs)

    def __deepcopy__(self, memo):
        from .from_json import load_json
        return load_json(self.tojson())

    def __reduce__(self):
        from .from_json import load_json
        return (load_json, (self.tojson(),))

    def _compose(self, mapping):
        """A copy of this graph with the variables named in ``mapping`` replaced by the
        given single-output Symbols (this symbol is left unchanged)."""
        new = {}
        for node in self._nodes():
            if node.op is None and node.name in mapping:
                new[id(node)] = mapping[node.name]._outputs[0]
                continue
            if node.op is None:
                new[id(node)] = (node, 0)
                continue
            clone = SymNode.__new__(SymNode)
            clone.op, clone.name, clone.params, clone.p = node.op, node.name, node.params, node.p
            clone.subgraphs = node.subgraphs
            clone.attrs = dict(node.attrs)
            clone.inputs = [_mapped(new, c, i) for c, i in node.inputs]
            new[id(node)] = (clone, 0)
        return Symbol([_mapped(new, n, i) for n, i in self._outputs])

    # -- attributes -----------------------------------------------------------------
    def attr(self, key):
        """The value of attribute ``key`` of this symbol's node (None if unset)."""
        node = self._outputs[0][0]
        if key in node.attrs:
            return node.attrs[key]
        return node.params.get(key)

    def list_attr(self, recursive=False):
        """Attributes of this node (``recursive=True`` is deprecated; use attr_dict)."""
        if recursive:
            raise DeprecationWarning("Symbol.list_attr with recursive=True has been deprecated. "
                                     "Please use attr_dict instead.")
        node = self._outputs[0][0]
        return dict(node.params, **node.attrs)

    def attr_dict(self):
        """Attributes of every node that has any: ``{node_name: {key: value}}``."""
        out = {}
        for node in self._nodes():
            d = dict(node.params, **node.attrs)
            if d:
                out[node.name] = d
        return out

    def _set_attr(self, **kwargs):
        node = self._outputs[0][0]
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise ValueError("Symbol._set_attr: attribute values must be strings, got %r"
                                 % (v,))
            node.attrs[k] = v

    # -- arithmetic ---------------------------------------------------------------------
    def _binary(self, other, op, scalar_op, reverse=False):
        from . import _op_call
        if isinstance(other, Symbol):
            return _op_call(op, [other, self] if reverse else [self, other], {},
                            _ARITH_HINTS.get(op))
        if isinstance(other, (int, float, np.number, bool)):
            return _op_call(scalar_op, [self], {"scalar": other}, _ARITH_HINTS.get(scalar_op))
        raise TypeError("Symbol: unsupported operand type %s" % type(other).__name__)

    def __add__(self, other):
        return self._binary(other, "elemwise_add", "_plus_scalar")

    __radd__ = __add__

    def __sub__(self, other):
        return self._binary(other, "elemwise_sub", "_minus_scalar")

    def __rsub__(self, other):
        return self._binary(other, "elemwise_sub", "_rminus_scalar", reverse=True)

    def __mul__(self, other):
        return self._binary(other, "elemwise_mul", "_mul_scalar")

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._binary(other, "elemwise_div", "_div_scalar")

    def __rtruediv__(self, other):
        return self._binary(other, "elemwise_div", "_rdiv_scalar", reverse=True)

    def __mod__(self, other):
        return self._binary(other, "_mod", "_mod_scalar")

    def __rmod__(self, other):
        return self._binary(other, "_mod", "_rmod_scalar", reverse=True)

    def __pow__(self, other):
        return self._binary(other, "_power", "_power_scalar")

    def __rpow__(self, other):
        return self._binary(other, "_power", "_rpower_scalar", reverse=True)

    def __neg__(self):
        return self._binary(-1.0, None, "_mul_scalar")

    def __eq__(self, other):
        return self._binary(other, "_equal", "_equal_scalar")

    def __ne__(self, other):
        return self._binary(other, "_not_equal", "_not_equal_scalar")

    def __gt__(self, other):
        return self._binary(other, "_greater", "_greater_scalar")

    def __ge__(self, other):
        return self._binary(other, "_greater_equal", "_greater_equal_scalar")

    def __lt__(self, other):
        return self._binary(other, "_lesser", "_lesser_scalar")

    def __le__(self, other):
        return self._binary(other, "_lesser_equal", "_lesser_equal_scalar")

    def __hash__(self):
        return id(self) // 16

    # -- NDArray methods: astype composes Cast; the ones that need values raise ------
    def astype(self, dtype, **kwargs):
        """``Cast`` of this symbol to ``dtype`` (the twin of ``NDArray.astype``)."""
        from .. import symbol as _sym_mod
        return _sym_mod.Cast(self, dtype=dtype, **kwargs)

    def as_nd_ndarray(self):
        """This symbol (already a legacy Symbol)."""
        return self

    def as_np_ndarray(self):
        """The same outputs as an np ``_Symbol`` (NumPy semantics)."""
        from .numpy._np_symbol import _Symbol
        return _Symbol(self._outputs)

    def _no_values(self, method):
        from ..base import NotImplementedForSymbol
        raise NotImplementedForSymbol(method, None)

    def wait_to_read(self):
        self._no_values(Symbol.wait_to_read)

    def asnumpy(self):
        self._no_values(Symbol.asnumpy)

    def asscalar(self):
        self._no_values(Symbol.asscalar)

    def copy(self):
        self._no_values(Symbol.copy)

    def as_in_context(self, *args, **kwargs):
        self._no_values(Symbol.as_in_context)

    def detach(self):
        self._no_values(Symbol.detach)

    def backward(self, *args, **kwargs):
        self._no_values(Symbol.backward)

    @property
    def handle(self):
        """MXNet's C handle of the symbol; mxlite's Symbol is its own handle."""
        return self

    def __getattr__(self, name):
        # Fluent methods: sym.reshape(...), sym.sum(...) as mx.sym.<op>(sym, ...)
        if name.startswith("_"):
            raise AttributeError(name)
        from .. import symbol as _sym_mod
        fn = getattr(_sym_mod, name, None)
        if fn is None or not callable(fn) or name not in OPS:
            raise AttributeError("'Symbol' object has no attribute %r" % name)
        return lambda *args, **kwargs: fn(self, *args, **kwargs)

    # -- inference -------------------------------------------------------------------
    def _infer(self, known, rule, backward=False):
        """Propagate ``known`` ({variable name: value}) through the graph; returns
        ``(arg values, output values, aux values, {node id: values per output})``.

        ``rule(node, ins, outs)`` gives a node's inputs and outputs with what it can
        deduce filled in. Passes go forward and backward over the nodes until nothing
        changes. With ``backward`` (shapes) any producer takes what a consumer's rule
        deduced about its output (``b`` in ``a + b`` from ``a``, then back through the
        op that made ``b``), as MXNet's inference does; otherwise only variables and
        nodes with no inputs do (a ``zeros`` of shape ``(2, 0, 5)`` takes its shape
        from its consumer).
        """
        nodes = self._nodes()
        vals = {}
        for node in nodes:
            vals[id(node)] = ([known.get(node.name)] if node.op is None
                              else [None] * node.num_outputs())
        ops = [n for n in nodes if n.op is not None]
        seen = {}       # what each rule last saw: a rule is pure, so no need to rerun it
        for sweep in range(64):     # each change adds knowledge, so this settles
            changed = False
            for node in (ops if sweep % 2 == 0 else reversed(ops)):
                ins = [vals[id(c)][i] for c, i in node.inputs]
                outs = vals[id(node)]
                key = (ins, list(outs))
                if seen.get(id(node)) == key:
                    continue
                seen[id(node)] = key
                new_ins, new_outs = rule(node, ins, list(outs))
                for (c, i), old, new in zip(node.inputs, ins, new_ins):
                    if _adds(new, old) and (backward or c.op is None or not c.inputs):
                        vals[id(c)][i] = new
                        changed = True
                for k, (old, new) in enumerate(zip(outs, new_outs or ())):
                    if _adds(new, old):
                        outs[k] = new
                        changed = True
            if not changed and sweep > 0:
                break
        args, aux = self._arg_aux_nodes()
        arg_v = [vals[id(n)][0] for n in args]
        aux_v = [vals[id(n)][0] for n in aux]
        out_v = [vals[id(n)][i] for n, i in self._outputs]
        return arg_v, out_v, aux_v, vals

    def resolved_params(self, **shapes):
        """Params of the nodes whose ``shape`` attribute has unknown (0) dims
        (``zeros((L, 0, H))`` for RNN begin states), with the dims inferred from the
        given input shapes: ``{node id: Params}``. Empty when there are none."""
        # (the np interface's ops, _npi_zeros ..., take 0 as a size: NumPy shape semantics)
        open_nodes = [n for n in self._nodes() if n.op is not None and not n.inputs
                      and 0 in (n.p.get("shape") or (1,)) and not n.op.name.startswith("_np")]
        if not open_nodes:
            return {}
        vals = self._infer_shape_impl((), shapes)[3]
        out = {}
        for node in open_nodes:
            shape = vals.get(id(node), [None])[0]
            if (shape is None or 0 in shape) and is_np_shape():
                continue        # nothing fills it: under NumPy shape semantics 0 is a size
            if shape is None or 0 in shape:
                raise MXNetError("%s (%s): cannot infer the unknown dims of shape=%s from the "
                                 "input shapes %s" % (node.name, node.op.name,
                                                      node.p.get("shape"), shapes))
            out[id(node)] = node.op.parse_params(dict(node.params, shape=format_attr(shape)))
        return out

    def _known(self, what, args, kwargs, parse):
        names = self.list_arguments()
        known = {}
        if args:
            if len(args) > len(names):
                raise ValueError("infer_%s: got %d positional values for %d arguments"
                                 % (what, len(args), len(names)))
            for n, v in zip(names, args):
                if v is not None:
                    known[n] = parse(v)
        inputs = set(self.list_inputs())
        for k, v in kwargs.items():
            if k not in inputs:
                raise ValueError("infer_%s: %r is not an input of this symbol; inputs are %s"
                                 % (what, k, sorted(inputs)))
            if v is not None:
                known[k] = parse(v)
        for node in self._nodes():
            if node.op is None and node.name not in known:
                attr = node.attrs.get("__shape__" if what == "shape" else "__dtype__")
                if attr is not None:
                    known[node.name] = parse(_parse_attr_value(attr, what))
        return known

    def infer_shape(self, *args, **kwargs):
        """``(arg_shapes, out_shapes, aux_shapes)`` from some input shapes.

        Weights are inferred from the data (FullyConnected, Convolution, ...). Returns
        ``(None, None, None)`` when the given shapes do not determine everything.
        """
        arg, out, aux, _ = self._infer_shape_impl(args, kwargs)
        if any(_open(s) for s in arg + out + aux):
            return None, None, None
        return arg, out, aux

    def infer_shape_partial(self, *args, **kwargs):
        """As :meth:`infer_shape`, with ``()`` for shapes that stay unknown."""
        arg, out, aux, _ = self._infer_shape_impl(args, kwargs)
        return _unknown_as_empty(arg), _unknown_as_empty(out), _unknown_as_empty(aux)

    def _infer_shape_impl(self, args, kwargs):
        known = self._known("shape", args, kwargs, lambda v: tuple(int(d) for d in v))

        def rule(node, ins, outs):
            op = node.op
            ins = list(ins)
            try:
                if op.same_shape:
                    _same_shapes(op.same_shape, ins, outs)
                if op.infer_shape_back is not None:
                    ins = list(op.infer_shape_back(node.p, ins, outs))
                new_ins, fwd = op.infer_shape(node.p, [None if _open(s) else s for s in ins])
            except Exception as e:
                raise MXNetError("infer_shape: error in operator %s (%s): %s"
                                 % (node.name, op.name, e)) from None
            ins = [n if not _open(n) else i for n, i in zip(new_ins, ins)]
            for k, shape in enumerate(fwd or ()):
                shape = tuple(shape)
                if 0 in shape:      # a 0 dim is unknown (to be inferred), not empty
                    if outs[k] is None:
                        outs[k] = shape
                    continue
                if not _open(outs[k]) and outs[k] != shape:
                    raise MXNetError("infer_shape: error in operator %s (%s): output %d has "
                                     "shape %s from its inputs but %s from where it is used"
                                     % (node.name, op.name, k, shape, outs[k]))
                outs[k] = shape
            return ins, outs
        return self._infer(known, rule, backward=True)

    def infer_type(self, *args, **kwargs):
        """``(arg_types, out_types, aux_types)`` as NumPy dtypes from some input types;
        unknown inputs take the type of their op's other inputs (float32 by default)."""
        known = self._known("type", args, kwargs, lambda v: np_dtype(v, "infer_type"))

        def rule(node, ins, outs):
            if node.op.input_types is not None:
                fixed = node.op.input_types(node.p)
                ins = [d if d is not None else fixed[k] for k, d in enumerate(ins)]
            filled = [d for d in ins if d is not None]
            base = filled[0] if filled else np.dtype(np.float32)
            new_ins = [d if d is not None else base for d in ins]
            return new_ins, node.op.infer_type(node.p, new_ins)
        arg, out, aux, _ = self._infer(known, rule)
        return _as_types(arg), _as_types(out), _as_types(aux)

    # -- serialisation ---------------------------------------------------------------------
    def tojson(self, remove_amp_cast=True):
        """The graph in MXNet's JSON format (as ``-symbol.json`` files hold).

        With ``remove_amp_cast`` (MXNet's default) every input that comes through
        ``amp_cast``/``amp_multicast`` nodes reads their source instead, so casts
        inserted by mixed precision are not saved (as MXNet does, casts that are
        outputs of the graph stay).
        """
        return json.dumps(self._graph_dict(remove_amp_cast, True), indent=2)

    def _graph_dict(self, remove_amp_cast, top):
        """The JSON graph as a dict; a subgraph's (``top`` False) has no ``attrs``."""
        if remove_amp_cast:
            stripped = _without_amp_casts(self._outputs)
            if stripped is not None:
                return Symbol(stripped)._graph_dict(False, top)
        nodes = self._nodes()
        index = {id(n): k for k, n in enumerate(nodes)}
        jnodes, arg_nodes, row_ptr = [], [], [0]
        for k, n in enumerate(nodes):
            entry = {"op": "null" if n.op is None else n.op.name, "name": n.name}
            attrs = dict(n.params, **n.attrs)
            if attrs:
                entry["attrs"] = dict(sorted(attrs.items()))    # MXNet writes them sorted
            entry["inputs"] = [[index[id(c)], i, 0] for c, i in n.inputs]
            if n.subgraphs:
                entry["subgraphs"] = [g._graph_dict(remove_amp_cast, False)
                                      for g in n.subgraphs]
            jnodes.append(entry)
            if n.op is None:
                arg_nodes.append(k)
            row_ptr.append(row_ptr[-1] + n.num_outputs())
        graph = {"nodes": jnodes, "arg_nodes": arg_nodes, "node_row_ptr": row_ptr,
                 "heads": [[index[id(n)], i, 0] for n, i in self._outputs]}
        if top:
            graph["attrs"] = {"mxnet_version": ["int", MXNET_VERSION]}
        return graph

    def save(self, fname, remove_amp_cast=True):
        """Write :meth:`tojson` to ``fname``."""
        with open(fname, "w") as f:
            f.write(self.tojson(remove_amp_cast))

    # -- execution ---------------------------------------------------------------------------
    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        """An :class:`Executor` over the given argument (and gradient, aux) arrays."""
        from .executor import Executor
        return Executor(self, ctx, args, args_grad, grad_req, aux_states)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        """Bind with arrays allocated from the shapes given as keywords."""
        from .. import nd
        arg_shapes, _, aux_shapes = self.infer_shape(**kwargs)
        if arg_shapes is None:
            partial = self.infer_shape_partial(**kwargs)[0]
            missing = [n for n, s in zip(self.list_arguments(), partial) if not s]
            raise MXNetError("simple_bind: cannot infer the shapes of %s from %s; pass them as "
                             "keywords" % (missing, kwargs))
        types = {}
        if type_dict:
            types.update({k: np_dtype(v) for k, v in type_dict.items()})
        arg_types, _, aux_types = self.infer_type(**{k: v for k, v in types.items()
                                                    if k in self.list_inputs()})
        args = [nd.zeros(s, ctx=ctx, dtype=t) for s, t in zip(arg_shapes, arg_types)]
        aux = [nd.zeros(s, ctx=ctx, dtype=t) for s, t in zip(aux_shapes, aux_types)]
        grads = None
        if grad_req != "null":
            grads = [nd.zeros(s, ctx=ctx, dtype=t) for s, t in zip(arg_shapes, arg_types)]
        return self.bind(ctx, args, grads, grad_req, aux)

    def eval(self, ctx=None, **kwargs):
        """Evaluate with the given input arrays; returns the list of outputs."""
        from ..context import current_context
        ex = self.bind(ctx or current_context(), kwargs)
        return ex.forward()


def _open(value):
    """Unknown: None, or a shape with 0 (unknown) dims, such as a deferred weight's."""
    return value is None or (type(value) is tuple and 0 in value)


def _adds(new, old):
    """Whether ``new`` knows more than ``old``: something for nothing, or a shape
    with fewer unknown (0) dims."""
    if new is None:
        return False
    if old is None:     # (not ``new == old``: a dtype equals None, the default dtype)
        return True
    if new == old:
        return False
    return (type(old) is tuple and type(new) is tuple and len(new) == len(old)
            and new.count(0) < old.count(0))


def _same_shapes(which, ins, outs):
    """Fill the shapes of the inputs ``which`` (indices or "all") and of output 0,
    which are one shape, from each other in place; 0 dims are unknown."""
    idx = range(len(ins)) if which == "all" else [i for i in which if i < len(ins)]
    merged = None
    for s in [ins[i] for i in idx] + [outs[0]]:
        if s is None:
            continue
        if merged is None:
            merged = tuple(s)
        elif len(s) != len(merged) or any(a and b and a != b for a, b in zip(s, merged)):
            raise MXNetError("inputs and output must have one shape, got %s and %s"
                             % (merged, tuple(s)))
        else:
            merged = tuple(a or b for a, b in zip(merged, s))
    if merged is None:
        return
    for i in idx:
        ins[i] = merged
    outs[0] = merged


def _mapped(new, node, index):
    target, base = new[id(node)]
    # a replaced variable maps to (its replacement's node, index); a clone keeps index
    return (target, base if node.op is None else index)


def _unknown_as_empty(shapes):
    return [s if s is not None else () for s in shapes]


def _as_types(dtypes):
    return [None if d is None else np.dtype(d).type for d in dtypes]


def _parse_attr_value(text, what):
    if what == "shape":
        from ..base import parse_shape
        return parse_shape(text)
    try:
        return FLAG_TO_DTYPE[int(text)]
    except ValueError:
        return np_dtype(text)


_STYPES = {"default": 0, "row_sparse": 1, "csr": 2}


def Variable(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
             stype=None, **kwargs):
    """A placeholder symbol for an input or a weight.

    Examples
    --------
    >>> x = mx.sym.Variable('x', shape=(2, 3))
    >>> x.attr('__shape__')
    '(2, 3)'
    """
    if not isinstance(name, str):
        raise TypeError("Variable: name must be a string, got %s" % type(name).__name__)
    attrs = AttrScope.current().get(attr)
    if shape is not None:
        attrs["__shape__"] = format_attr(tuple(shape))
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        attrs["__dtype__"] = str(DTYPE_TO_FLAG[np_dtype(dtype, "Variable")])
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        attrs["__storage_type__"] = str(_STYPES.get(stype, stype))
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            attrs[k] = str(v)
        else:
            raise ValueError("Variable: attribute %r must be of the form __%s__" % (k, k))
    for k, v in attrs.items():
        if hasattr(v, "dumps") and not isinstance(v, str):
            attrs[k] = v.dumps()        # an Initializer: its JSON, as init= stores it
        elif not isinstance(v, str):
            attrs[k] = str(v)
    return Symbol([(SymNode(None, name, attrs=with_hidden_keys(attrs)), 0)])


var = Variable


def Group(symbols):
    """One symbol whose outputs are the outputs of ``symbols``, in order."""
    outs = []
    for s in symbols:
        if not isinstance(s, Symbol):
            raise TypeError("Group: expected Symbols, got %s" % type(s).__name__)
        outs.extend(s._outputs)
    return Symbol(outs)


# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "load": "mxlite.symbol.from_json",
    "load_json": "mxlite.symbol.from_json",
    "arange": "mxlite.symbol",
    "eye": "mxlite.symbol",
    "full": "mxlite.symbol",
    "histogram": "mxlite.symbol",
    "hypot": "mxlite.symbol",
    "linspace": "mxlite.symbol",
    "maximum": "mxlite.symbol",
    "minimum": "mxlite.symbol",
    "ones": "mxlite.symbol",
    "pow": "mxlite.symbol",
    "power": "mxlite.symbol",
    "split_v2": "mxlite.symbol",
    "zeros": "mxlite.symbol",
})
