"""Symbolic control flow: the ``_foreach``, ``_while_loop`` and ``_cond`` ops.

``mx.sym.contrib.foreach`` / ``while_loop`` / ``cond`` (``symbol/control_flow.py``)
trace the user's functions into subgraphs and make one node of these ops, whose
params hold the subgraphs beside MXNet's attributes (the ``*_locs`` lists say
where each node input goes among a subgraph's inputs). The JSON keeps the
subgraphs in the node's ``subgraphs`` list, as MXNet writes them.

A node runs its subgraphs through the same ops as ``mx.nd`` (``invoke`` on
NDArrays), looping as ``mx.nd.contrib`` does. Its gradient runs the loop again
under autograd and differentiates that.

The gradient recomputes the forward pass in the training mode the forward ran in,
which a hidden last output keeps (1 for training): a backward in another mode
(``Executor.forward(is_train=False)`` then ``backward()``) must not change it.

NOTE: a subgraph that draws random numbers in training mode (Dropout, samplers)
would be differentiated with other draws than the forward used. That raises an
error instead of a wrong gradient.
Second-order gradients through these ops are not supported (nor are they in
MXNet, whose ``_backward_foreach`` has no gradient).
"""
import numpy as np

from .. import autograd
from ..base import MXNetError, parse_int, parse_shape
from .registry import REQUIRED as _REQUIRED, Param, context_of_raw, on_ndarrays, register_op

# Ops whose results depend on the random state when training.
_RANDOM_HINTS = ("random", "sample", "Dropout", "shuffle", "RNN")


def _wrap_all(xs):
    from ..nd.ndarray import _wrap
    ctx = context_of_raw(xs[0])
    return [_wrap(a, ctx) for a in xs]


class Subgraph:
    """A subgraph run on NDArrays through ``invoke`` (recorded when autograd records).

    ``inputs`` are given in the order of ``symbol.list_inputs()``."""

    def __init__(self, symbol):
        self.symbol = symbol
        self.nodes = symbol._nodes()
        self.input_names = symbol.list_inputs()
        self.num_outputs = len(symbol._outputs)
        self.random = any(n.op is not None and (any(h in n.op.name for h in _RANDOM_HINTS)
                                                or any(Subgraph(s).random for s in n.subgraphs))
                          for n in self.nodes)

    def __call__(self, inputs):
        from ..symbol.executor import run_graph
        return run_graph(self.symbol, self.nodes, dict(zip(self.input_names, inputs)))


def _subgraphs(count):
    """The parser of the ``subgraphs`` param: ``count`` Symbols. SymNode passes them as a
    list, which the registry parses without caching (a list is unhashable)."""
    def parse(v):
        from ..symbol.symbol import Symbol
        v = tuple(v)
        if len(v) != count or not all(isinstance(s, Symbol) for s in v):
            raise ValueError("expected a list of %d subgraph Symbols" % count)
        return tuple(Subgraph(s) for s in v)
    return parse


def _locs(v):
    return parse_shape(v) or ()


def _count_check(op_name, p, xs, n_subgraphs):
    if len(xs) != p.num_args - n_subgraphs:
        raise MXNetError("%s: num_args=%d means %d inputs besides the subgraph(s), got %d"
                         % (op_name, p.num_args, p.num_args - n_subgraphs, len(xs)))


_MODE_SHAPE, _MODE_TYPE = (1,), np.dtype(np.float32)


def _run_raw(nd_fn):
    """A raw ``compute`` from an NDArray function of the inputs (not recorded: the
    graph around records the node as one op); the training mode is the last output."""
    def compute(p, xp, *xs):
        training = autograd.is_training()
        with autograd.pause(train_mode=training):
            outs = nd_fn(p, _wrap_all(xs))
        return tuple(o._data for o in outs) + (xp.full(_MODE_SHAPE, training, _MODE_TYPE),)
    return compute


def _with_mode(rule, last):
    """An ``infer_shape`` or ``infer_type`` rule of the visible outputs, completed with
    ``last``, the hidden mode output's shape or dtype."""
    def complete(p, known):
        res = rule(p, known)
        if isinstance(res, tuple):      # (input shapes, output shapes or [] if unknown)
            return res[0], res[1] + [last] if res[1] else res[1]
        return list(res) + [last]
    return complete


def _recompute_gradient(op_name, nd_fn):
    """The gradient of ``nd_fn``'s outputs by running it again under autograd."""
    def gradient(p, xs, ys, gys, want):
        if autograd.is_recording():
            raise MXNetError("%s: second-order gradients through control flow are not "
                             "supported (MXNet has none either)" % op_name)
        training = bool(ys[-1].item())
        if training and any(g.random for g in p.subgraphs):
            raise MXNetError("%s: cannot differentiate a subgraph that draws random numbers in "
                             "training mode (Dropout, samplers): its backward would draw "
                             "different numbers than the forward did" % op_name)
        from ..nd.ndarray import _wrap
        leaves = []
        for x, w in zip(xs, want):
            leaf = _wrap(x._data, x._ctx)
            if w:
                leaf.attach_grad()
            leaves.append(leaf)
        with autograd.record(train_mode=training):
            outs = nd_fn(p, leaves)
        heads, head_grads = [], []
        for o, g in zip(outs, gys):
            if autograd.in_graph(o):
                heads.append(o)
                head_grads.append(g)
        variables = [leaf for leaf, w in zip(leaves, want) if w]
        if not heads or not variables:
            return [None] * len(xs)
        grads = iter(autograd._grads_or_zeros(heads, variables, head_grads, training))
        return [next(grads) if w else None for w in want]
    return gradient


def _place(n, pairs):
    """A list of ``n`` slots filled from ``(locations, values)`` pairs."""
    slots = [None] * n
    for locs, values in pairs:
        for loc, v in zip(locs, values):
            slots[loc] = v
    return slots


def _subgraph_shapes(op_name, sub, known_by_loc):
    """Shape inference of a subgraph from ``{input location: shape}``: its inputs' shapes
    (by location; None where unknown) and its outputs' (None where unknown)."""
    names = sub.input_names
    known = {names[loc]: s for loc, s in known_by_loc.items() if s is not None}
    try:
        args, outs, aux, _ = sub.symbol._infer_shape_impl((), known)
    except MXNetError as e:
        raise MXNetError("%s: in its subgraph: %s" % (op_name, e)) from None
    by_name = dict(zip(sub.symbol.list_arguments(), args))
    by_name.update(zip(sub.symbol.list_auxiliary_states(), aux))
    full = [by_name.get(n) for n in names]
    return ([s if s is not None and 0 not in s else None for s in full],
            [s if s is not None and 0 not in s else None for s in outs])


def _subgraph_types(sub, known_by_loc):
    names = sub.input_names
    known = {names[loc]: t for loc, t in known_by_loc.items() if t is not None}
    args, outs, aux = sub.symbol.infer_type(**known)
    return outs


# -- foreach ---------------------------------------------------------------------------------
def _foreach_split(p, xs):
    nd_, ns = len(p.in_data_locs), len(p.in_state_locs)
    return xs[:nd_], xs[nd_:nd_ + ns], xs[nd_ + ns:]


def _foreach_nd(p, xs):
    from ..nd.contrib_control_flow import foreach
    _count_check("_foreach", p, xs, 1)
    data, states, remain = _foreach_split(p, xs)
    run = p.subgraphs[0]
    n_in = len(run.input_names)
    if len(data) + len(states) + len(remain) != n_in:
        raise MXNetError("_foreach: the subgraph has %d inputs but the locations name %d"
                         % (n_in, len(data) + len(states) + len(remain)))

    def body(slices, carried):
        outs = run(_place(n_in, ((p.in_data_locs, slices), (p.in_state_locs, carried),
                                 (p.remain_locs, remain))))
        return outs[:p.num_out_data], outs[p.num_out_data:]
    outs, final = foreach(body, list(data), list(states))
    result = list(outs) + list(final)
    if len(result) != p.num_outputs:
        raise MXNetError("_foreach: num_outputs=%d but the subgraph gives %d"
                         % (p.num_outputs, len(result)))
    return result


def _foreach_shape(p, shapes):
    data, states, remain = _foreach_split(p, list(shapes))
    sub = p.subgraphs[0]
    rows = next((s[0] for s in data if s is not None and s[0] != 0), None)
    known = {}
    for loc, s in zip(p.in_data_locs, data):
        known[loc] = None if s is None else tuple(s[1:])
    for locs, group in ((p.in_state_locs, states), (p.remain_locs, remain)):
        for loc, s in zip(locs, group):
            known[loc] = s
    ins, outs = _subgraph_shapes("_foreach", sub, known)
    new = list(data) + [ins[loc] or s for loc, s in zip(p.in_state_locs, states)] + \
        [ins[loc] or s for loc, s in zip(p.remain_locs, remain)]
    stacked = [None if rows is None or o is None else (rows,) + tuple(o)
               for o in outs[:p.num_out_data]]
    final = [ins[loc] for loc in p.in_state_locs]
    result = stacked + final
    return new, (result if all(r is not None for r in result) else [])


def _foreach_type(p, dtypes):
    data, states, remain = _foreach_split(p, list(dtypes))
    known = dict(zip(p.in_data_locs, data))
    known.update(zip(p.in_state_locs, states))
    known.update(zip(p.remain_locs, remain))
    outs = _subgraph_types(p.subgraphs[0], known)
    return list(outs[:p.num_out_data]) + list(states)


_FOREACH_PARAMS = [
    Param("num_args", parse_int, _REQUIRED, "Inputs plus one (the subgraph), as in MXNet."),
    Param("num_outputs", parse_int, _REQUIRED, "Stacked outputs plus final states."),
    Param("num_out_data", parse_int, _REQUIRED, "How many outputs are stacked per step."),
    Param("in_data_locs", _locs, (), "Where the data slices go among the subgraph inputs."),
    Param("in_state_locs", _locs, (), "Where the states go among the subgraph inputs."),
    Param("remain_locs", _locs, (), "Where the other inputs go among the subgraph inputs."),
    Param("subgraphs", _subgraphs(1), _REQUIRED, "The loop body (not an attribute)."),
]


_LOOP_COMMON = [
    Param("num_args", parse_int, _REQUIRED, "Inputs plus the subgraphs, as in MXNet."),
    Param("num_outputs", parse_int, _REQUIRED, "The node's outputs."),
]


# -- while_loop ------------------------------------------------------------------------------
def _while_loop_nd(p, xs):
    from ..nd.contrib_control_flow import while_loop
    _count_check("_while_loop", p, xs, 2)
    cond_g, func_g = p.subgraphs
    var_nodes = [p.func_input_locs[k] for k in p.func_var_locs]
    vals = list(xs)

    def bind(values):
        for k, v in zip(var_nodes, values):
            vals[k] = v

    def cond(*loop_vars):
        bind(loop_vars)
        return cond_g([vals[k] for k in p.cond_input_locs])[0]

    def func(*loop_vars):
        bind(loop_vars)
        outs = func_g([vals[k] for k in p.func_input_locs])
        return outs[:p.num_out_data], outs[p.num_out_data:]
    outs, final = while_loop(cond, func, [xs[k] for k in var_nodes],
                             max_iterations=p.max_iterations)
    if not outs and p.num_out_data:     # no step ran: zeros of the steps' shapes
        outs = _no_steps(p, xs)
    result = list(outs) + list(final)
    if len(result) != p.num_outputs:
        raise MXNetError("_while_loop: num_outputs=%d but the subgraph gives %d"
                         % (p.num_outputs, len(result)))
    return result


def _no_steps(p, xs):
    from ..nd import zeros
    func_g = p.subgraphs[1]
    known = {j: tuple(xs[k].shape) for j, k in enumerate(p.func_input_locs)}
    _, shapes = _subgraph_shapes("_while_loop", func_g, known)
    types = _subgraph_types(func_g, {j: xs[k].dtype for j, k in enumerate(p.func_input_locs)})
    if any(s is None for s in shapes[:p.num_out_data]):
        raise MXNetError("_while_loop: no step ran and the shapes of the step outputs cannot "
                         "be inferred from the inputs")
    return [zeros((p.max_iterations,) + tuple(s), ctx=xs[0].context, dtype=t)
            for s, t in zip(shapes[:p.num_out_data], types)]


def _while_loop_shape(p, shapes):
    func_g = p.subgraphs[1]
    ins, outs = _subgraph_shapes("_while_loop", func_g,
                                 {j: shapes[k] for j, k in enumerate(p.func_input_locs)})
    new = list(shapes)
    for j, k in enumerate(p.func_input_locs):
        new[k] = new[k] or ins[j]
    stacked = [None if o is None else (p.max_iterations,) + tuple(o)
               for o in outs[:p.num_out_data]]
    result = stacked + [new[p.func_input_locs[k]] for k in p.func_var_locs]
    return new, (result if all(r is not None for r in result) else [])


def _while_loop_type(p, dtypes):
    outs = _subgraph_types(p.subgraphs[1], {j: dtypes[k]
                                            for j, k in enumerate(p.func_input_locs)})
    return (list(outs[:p.num_out_data])
            + [dtypes[p.func_input_locs[k]] for k in p.func_var_locs])


_WHILE_PARAMS = _LOOP_COMMON + [
    Param("num_out_data", parse_int, _REQUIRED, "How many outputs each step stacks."),
    Param("max_iterations", parse_int, _REQUIRED, "The most steps; outputs have this many rows."),
    Param("cond_input_locs", _locs, (), "The node inputs cond's subgraph reads, in order."),
    Param("func_input_locs", _locs, (), "The node inputs func's subgraph reads, in order."),
    Param("func_var_locs", _locs, (), "Which of func's inputs are the loop variables."),
    Param("subgraphs", _subgraphs(2), _REQUIRED, "cond and func (not an attribute)."),
]


# -- cond ------------------------------------------------------------------------------------
def _cond_nd(p, xs):
    from ..nd.contrib_control_flow import _truth
    _count_check("_cond", p, xs, 3)
    pred_g, then_g, else_g = p.subgraphs
    pred = pred_g([xs[k] for k in p.cond_input_locs])[0]
    if _truth(pred, "_cond", "the condition"):
        outs = then_g([xs[k] for k in p.then_input_locs])
    else:
        outs = else_g([xs[k] for k in p.else_input_locs])
    if len(outs) != p.num_outputs:
        raise MXNetError("_cond: num_outputs=%d but the branch gives %d"
                         % (p.num_outputs, len(outs)))
    return outs


def _cond_shape(p, shapes):
    new = list(shapes)
    found = None
    for g, locs in ((p.subgraphs[1], p.then_input_locs), (p.subgraphs[2], p.else_input_locs)):
        ins, outs = _subgraph_shapes("_cond", g, {j: shapes[k] for j, k in enumerate(locs)})
        for j, k in enumerate(locs):
            new[k] = new[k] or ins[j]
        if found is None and all(o is not None for o in outs):
            found = outs
    return new, (found or [])


def _cond_type(p, dtypes):
    return list(_subgraph_types(p.subgraphs[1], {j: dtypes[k]
                                                 for j, k in enumerate(p.then_input_locs)}))


_COND_PARAMS = _LOOP_COMMON + [
    Param("cond_input_locs", _locs, (), "The node inputs the condition's subgraph reads."),
    Param("then_input_locs", _locs, (), "The node inputs then's subgraph reads."),
    Param("else_input_locs", _locs, (), "The node inputs else's subgraph reads."),
    Param("subgraphs", _subgraphs(3), _REQUIRED, "condition, then and else (not an attribute)."),
]


register_op(
    "_foreach", _run_raw(_foreach_nd),
    inputs=lambda p: ["data%d" % i for i in range(p.num_args - 1)],
    params=_FOREACH_PARAMS,
    gradient=on_ndarrays(_recompute_gradient("_foreach", _foreach_nd)),
    num_outputs=lambda p: p.num_outputs + 1, num_visible_outputs=lambda p: p.num_outputs,
    infer_shape=_with_mode(_foreach_shape, _MODE_SHAPE),
    infer_type=_with_mode(_foreach_type, _MODE_TYPE), saves="x",
    doc="The loop of ``mx.sym.contrib.foreach``: the subgraph runs on each slice of the "
        "data along axis 0, carrying the states; outputs stacked, then the final states.")

for _name, _nd_fn, _params, _nsub, _shape, _type, _doc in (
        ("_while_loop", _while_loop_nd, _WHILE_PARAMS, 2, _while_loop_shape, _while_loop_type,
         ("The loop of ``mx.sym.contrib.while_loop``: func's subgraph runs while cond's gives "
          "nonzero, at most max_iterations times; the step outputs stacked and padded with "
          "zeros to max_iterations rows, then the final loop variables.")),
        ("_cond", _cond_nd, _COND_PARAMS, 3, _cond_shape, _cond_type,
         ("``mx.sym.contrib.cond``: the then or else subgraph's outputs, as the condition's "
          "subgraph gives nonzero or zero."))):
    register_op(
        _name, _run_raw(_nd_fn),
        inputs=lambda p, _n=_nsub: ["data%d" % i for i in range(p.num_args - _n)],
        params=_params,
        gradient=on_ndarrays(_recompute_gradient(_name, _nd_fn)),
        num_outputs=lambda p: p.num_outputs + 1, num_visible_outputs=lambda p: p.num_outputs,
        infer_shape=_with_mode(_shape, _MODE_SHAPE), infer_type=_with_mode(_type, _MODE_TYPE),
        saves="x",
        doc=_doc)


# -- _CachedOp -------------------------------------------------------------------------------
# ``autograd.get_symbol`` shows a hybridized block's call, which autograd records as one
# node, as one node of this op, as MXNet does (its ``_CachedOp`` node, without
# attributes, outputs named ``<node>_<the graph's output>``). Here the node keeps the
# graph as its subgraph, so the Symbol also runs and its JSON loads back.
def _cached_nd(p, xs):
    sub = p.subgraphs[0]
    if len(xs) != len(sub.input_names):
        raise MXNetError("_CachedOp: the graph reads %d inputs (%s), got %d"
                         % (len(sub.input_names), ", ".join(sub.input_names), len(xs)))
    return sub(list(xs))


def _cached_shape(p, shapes):
    ins, outs = _subgraph_shapes("_CachedOp", p.subgraphs[0], dict(enumerate(shapes)))
    return ([s or k for s, k in zip(ins, shapes)],
            (outs if all(o is not None for o in outs) else []))


def _cached_type(p, dtypes):
    return list(_subgraph_types(p.subgraphs[0], dict(enumerate(dtypes))))


register_op(
    "_CachedOp", _run_raw(_cached_nd),
    inputs=lambda p: list(p.subgraphs[0].input_names),
    params=[Param("subgraphs", _subgraphs(1), _REQUIRED, "The graph (not an attribute).")],
    gradient=on_ndarrays(_recompute_gradient("_CachedOp", _cached_nd)),
    num_outputs=lambda p: p.subgraphs[0].num_outputs + 1,
    num_visible_outputs=lambda p: p.subgraphs[0].num_outputs,
    output_names=lambda p: p.subgraphs[0].symbol.list_outputs(),
    infer_shape=_with_mode(_cached_shape, _MODE_SHAPE),
    infer_type=_with_mode(_cached_type, _MODE_TYPE), saves="x",
    doc="A hybridized block's graph as one node (what ``autograd.get_symbol`` shows for "
        "its recorded call): runs the subgraph on the inputs, in its ``list_inputs`` order.")
