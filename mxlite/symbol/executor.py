"""``Executor``: runs a bound Symbol through the same ops as ``mx.nd``.

``forward(is_train=True)`` records the graph with autograd; ``backward`` then writes
the gradients of the arguments into ``grad_arrays`` by their ``grad_req``.
"""
import contextlib

import numpy as np

from .. import autograd
from ..base import MXNetError
from ..context import Context
from ..nd.ndarray import NDArray
from ..operator.registry import invoke

__all__ = ["Executor", "run_graph", "monitor_labels"]


def _as_list(name, values, names, allow_missing=False):
    if values is None:
        return [None] * len(names)
    if isinstance(values, dict):
        unknown = [k for k in values if k not in names]
        if unknown:
            raise MXNetError("bind: %s has unknown name(s) %s; expected %s"
                             % (name, unknown, names))
        missing = [n for n in names if n not in values]
        if missing and not allow_missing:
            raise MXNetError("bind: %s is missing %s" % (name, missing))
        return [values.get(n) for n in names]
    values = list(values)
    if len(values) != len(names):
        raise MXNetError("bind: %s has %d arrays, expected %d (%s)"
                         % (name, len(values), len(names), names))
    return values


def monitor_labels(node, n_outputs):
    """What MXNet's monitors call op ``node``'s inputs and outputs: ``fc1_data``,
    ``fc1_output``; ``relu1_input0``, ``exp0_0`` for the ones MXNet has no names for."""
    unlisted = node.op.unlisted
    ins = (["input%d" % i for i in range(len(node.inputs))] if "x" in unlisted
           else node.input_names())
    outs = (["%s_%d" % (node.name, i) for i in range(n_outputs)] if "y" in unlisted
            else node.output_names())
    return ["%s_%s" % (node.name, n) for n in ins], outs


def run_graph(symbol, nodes, named, overrides=None, monitor=None):
    """``symbol``'s outputs: its ``nodes`` (topological order) run through ``invoke`` on
    the NDArrays ``named`` by variable name (recorded when autograd records);
    ``overrides`` replaces some nodes' params (``{node id: Params}``); ``monitor(node,
    inputs, outputs)`` sees every op node after it ran."""
    values = {}
    for node in nodes:
        if node.op is None:
            values[id(node)] = [named[node.name]]
            continue
        ins = [values[id(c)][i] for c, i in node.inputs]
        p = overrides.get(id(node), node.p) if overrides else node.p
        try:
            out = invoke(node.op, ins, p)
        except MXNetError as e:
            raise MXNetError("forward: node %r: %s" % (node.name, e)) from None
        values[id(node)] = out if isinstance(out, list) else [out]
        if monitor is not None:
            monitor(node, ins, values[id(node)])
    return [values[id(n)][i] for n, i in symbol._outputs]


class Executor:
    """A Symbol bound to arrays. Create with ``Symbol.bind`` or ``Symbol.simple_bind``."""

    def __init__(self, symbol, ctx, args, args_grad=None, grad_req="write", aux_states=None):
        self._symbol = symbol
        self._ctx = ctx
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.output_names = symbol.list_outputs()
        self.arg_arrays = _as_list("args", args, self.arg_names)
        for n, a in zip(self.arg_names, self.arg_arrays):
            if not isinstance(a, NDArray):
                raise MXNetError("bind: argument %r has no array (got %s)" % (n, type(a).__name__))
        self.grad_arrays = _as_list("args_grad", args_grad, self.arg_names, allow_missing=True)
        self.aux_arrays = _as_list("aux_states", aux_states, self.aux_names)
        if isinstance(grad_req, str):
            reqs = [grad_req] * len(self.arg_names)
        elif isinstance(grad_req, dict):
            reqs = [grad_req.get(n, "null") for n in self.arg_names]
        else:
            reqs = list(grad_req)
        self._grad_req = ["null" if g is None else r for r, g in zip(reqs, self.grad_arrays)]
        for r in self._grad_req:
            if r not in ("write", "add", "null"):
                raise MXNetError("bind: grad_req must be 'write', 'add' or 'null', got %r" % r)
        self.outputs = []
        self._nodes = symbol._nodes()
        self._recorded = False
        self._overrides = None
        self._monitor = None

    @property
    def arg_dict(self):
        return dict(zip(self.arg_names, self.arg_arrays))

    @property
    def grad_dict(self):
        return {n: g for n, g in zip(self.arg_names, self.grad_arrays) if g is not None}

    @property
    def aux_dict(self):
        return dict(zip(self.aux_names, self.aux_arrays))

    @property
    def output_dict(self):
        return dict(zip(self.output_names, self.outputs))

    def forward(self, is_train=False, **kwargs):
        """Run the graph; keyword arrays are first copied into the arguments."""
        arg_dict = self.arg_dict
        for k, v in kwargs.items():
            if k not in arg_dict:
                raise MXNetError("forward: unknown argument %r; arguments are %s"
                                 % (k, self.arg_names))
            if isinstance(v, NDArray):
                v.copyto(arg_dict[k])
            else:
                arg_dict[k][:] = np.asarray(v)
        # Recorded whenever there are gradients to write, in train or predict mode: as in
        # MXNet, backward may follow a forward(is_train=False) (predict-mode ops such as
        # BatchNorm then differentiate with their moving statistics).
        record = any(r != "null" for r in self._grad_req)
        if record:
            for a, g, r in zip(self.arg_arrays, self.grad_arrays, self._grad_req):
                if r != "null":
                    autograd.mark_variables([a], [g], r)
        with autograd._Scope(record, is_train):
            self.outputs = self._run()
        self._recorded = record
        return self.outputs

    def _run(self):
        named = dict(zip(self.arg_names, self.arg_arrays))
        named.update(zip(self.aux_names, self.aux_arrays))
        if self._overrides is None:      # zeros((L, 0, H))-like nodes, resolved once
            self._overrides = self._symbol.resolved_params(
                **{n: a.shape for n, a in named.items()})
        # ops without inputs (zeros of a begin state, samplers) run where the arguments
        # are (arrays bound may live elsewhere than the ctx named at bind)
        device = next((a.context for a in self.arg_arrays if a is not None), self._ctx)
        with device if isinstance(device, Context) else contextlib.nullcontext():
            return run_graph(self._symbol, self._nodes, named, self._overrides, self._monitor)

    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name, array)`` for every op output during ``forward``
        (``fc1_output``) and, with ``monitor_all``, for every op input too
        (``fc1_data``, ``fc1_weight``), as MXNet's executor monitor does."""
        if callback is None:
            self._monitor = None
            return

        def monitor(node, inputs, outputs):
            in_labels, out_labels = monitor_labels(node, len(outputs))
            for name, a in zip(in_labels if monitor_all else [], inputs):
                callback(name, a)
            for name, a in zip(out_labels, outputs):
                callback(name, a)
        self._monitor = monitor

    def backward(self, out_grads=None, is_train=True):
        """Write the arguments' gradients for head gradients ``out_grads`` (ones if None).

        As in MXNet it may run more than once after one forward (the graph is kept until
        the next forward)."""
        if not self._recorded:
            raise MXNetError("backward: call forward() first, on an executor bound with "
                             "gradient arrays (grad_req other than 'null')")
        if isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        if out_grads is not None and len(out_grads) == len(self.outputs):
            # head gradients from another device are copied to their output's, as MXNet
            # copies them into its own buffers
            out_grads = [g.as_in_context(y.context) if isinstance(g, NDArray) else g
                         for g, y in zip(out_grads, self.outputs)]
        autograd.backward(self.outputs, out_grads, retain_graph=True, train_mode=is_train)

    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy arrays by name into the bound arguments and auxiliary states."""
        for src, names, arrays in ((arg_params, self.arg_names, self.arg_arrays),
                                   (aux_params or {}, self.aux_names, self.aux_arrays)):
            index = dict(zip(names, arrays))
            for k, v in src.items():
                if k in index:
                    v.copyto(index[k]) if isinstance(v, NDArray) else index[k].__setitem__(
                        slice(None), np.asarray(v))
                elif not allow_extra_params:
                    raise ValueError("copy_params_from: %r is not an argument of the symbol" % k)

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new input shapes, sharing arrays whose shapes are unchanged."""
        from .. import nd
        arg_shapes, _, aux_shapes = self._symbol.infer_shape(**kwargs)
        if arg_shapes is None:
            raise MXNetError("reshape: cannot infer all shapes from %s" % kwargs)

        def renew(arrays, shapes):
            return [a if a is not None and a.shape == s else
                    (None if a is None else nd.zeros(s, ctx=a.context, dtype=a.dtype))
                    for a, s in zip(arrays, shapes)]
        return Executor(self._symbol, self._ctx, renew(self.arg_arrays, arg_shapes),
                        renew(self.grad_arrays, arg_shapes), self._grad_req,
                        renew(self.aux_arrays, aux_shapes))
