"""``mx.sym.contrib.foreach``, ``while_loop`` and ``cond``: control flow in a graph.

Each traces the user's functions once, on placeholder variables, into subgraph
Symbols, and returns the outputs of one ``_foreach`` / ``_while_loop`` / ``_cond``
node (``operator/control_flow.py`` runs it). As in MXNet:

- the nodes made while tracing carry ``__subgraph_name__`` (``foreach0``; nested
  loops ``foreach0$foreach0``), which tells them from the graph around;
- an input of the subgraph made outside it (not a variable) is cut: the subgraph
  reads a new variable named after that output instead, and the node takes the
  outer symbol as an input;
- a placeholder is named ``<symbol name>-<output index>`` (``data-0``);
- the node's inputs are the data, then the states, then the subgraph's other
  inputs in its input order, and the ``*_locs`` attributes place each among the
  subgraph's inputs.
"""
import collections

from ..attribute import AttrScope, with_hidden_keys
from ..base import MXNetError
from ..name import current as _current_names
from ..nd.contrib_control_flow import _check_callable, _describe, _flatten, _pair, _regroup
from ..operator.registry import OPS
from .symbol import Symbol, SymNode, Variable

__all__ = ["foreach", "while_loop", "cond"]

_SUBGRAPH_COUNTS = collections.Counter()
_KEY = "__subgraph_name__"


def _unique_subgraph_name(name):
    outer = AttrScope.current().get(None).get(_KEY, "")
    if outer:
        name = "%s$%s" % (outer, name)
    count = _SUBGRAPH_COUNTS[name]
    _SUBGRAPH_COUNTS[name] += 1
    return "%s%d" % (name, count)


def _symbols(x, fname, argname):
    flat, fmt = _flatten(x, fname, argname, Symbol)
    for k, s in enumerate(flat):
        if len(s._outputs) != 1:
            raise ValueError("%s: %s holds a group of %d outputs (leaf %d); pass single "
                             "outputs" % (fname, argname, len(s._outputs), k))
    return flat, fmt


def _placeholders(flat):
    node_names = ["%s-%d" % (s._outputs[0][0].name, s._outputs[0][1]) for s in flat]
    return [Variable(n) for n in node_names]


def _cut(heads, sub_name):
    """The subgraph of ``heads`` (entries) with every entry made outside it replaced by
    a variable; returns the new heads and ``{variable name: outer entry}``."""
    cut_vars, outer = {}, {}

    def inside(node):
        return node.op is None or node.attrs.get(_KEY) == sub_name

    def replace(entry):
        node, i = entry
        if inside(node):
            return entry
        key = (id(node), i)
        if key not in cut_vars:
            name = node.output_names()[i]
            cut_vars[key] = (Variable(name)._outputs[0][0], 0)
            outer[name] = entry
        return cut_vars[key]

    new_heads = [replace(e) for e in heads]
    seen, stack = set(), [n for n, _ in new_heads]
    while stack:
        node = stack.pop()
        if id(node) in seen or node.op is None:
            continue
        seen.add(id(node))
        node.inputs = [replace(e) for e in node.inputs]
        stack.extend(n for n, _ in node.inputs)
    return new_heads, outer


def _own_heads(outs, states, sub_name):
    """The heads of a subgraph as MXNet makes them (call inside its scope): an output
    or state that is not an op made in the subgraph, or a state that is also an
    output, goes through ``identity`` (a ``_copy`` node of its own)."""
    from . import identity
    out_nodes = {id(o._outputs[0][0]) for o in outs}
    heads = []
    for k, s in enumerate(list(outs) + list(states)):
        node = s._outputs[0][0]
        if (node.op is None or node.attrs.get(_KEY) != sub_name
                or (k >= len(outs) and id(node) in out_nodes)):
            s = identity(s)
        heads.append(s._outputs[0])
    return heads


def _trace(sub_name, fn):
    """``fn()``'s result, traced with ``__subgraph_name__`` set to ``sub_name``."""
    with AttrScope(**{_KEY: sub_name}):
        return fn()


class _Inputs:
    """The node's inputs, each subgraph input name once, in order of first use; a
    name resolves to a loop variable's outer symbol, a cut entry or the variable."""

    def __init__(self, outer):
        self.outer = outer
        self.entries, self.index = [], {}

    def locations(self, sub):
        locs = []
        for node in (n for n in sub._nodes() if n.op is None):
            if node.name not in self.index:
                self.index[node.name] = len(self.entries)
                self.entries.append(self.outer.get(node.name, (node, 0)))
            locs.append(self.index[node.name])
        return locs


def _loop_node(op_name, fname, subgraphs, groups, rest_sym, attrs, name_hint):
    """The control-flow node: inputs are ``groups`` (lists of outer symbols whose
    placeholders each subgraph reads) followed by every other subgraph input."""
    node_inputs = []
    for group in groups:
        node_inputs.extend(s._outputs[0] for s in group)
    node_inputs.extend(rest_sym)
    params = dict(attrs, num_args=str(len(node_inputs) + len(subgraphs)))
    node = SymNode(OPS[op_name], "", {k: str(v) for k, v in params.items()},
                   with_hidden_keys(AttrScope.current().get(None)), node_inputs, subgraphs)
    node.name = _current_names().get(None, name_hint)
    return node


def _locations(fname, sub, names, what):
    inputs = sub.list_inputs()
    if len(set(inputs)) != len(inputs):
        dup = sorted({n for n in inputs if inputs.count(n) > 1})
        raise MXNetError("%s: the subgraph has several inputs named %s; give the variables "
                         "used inside the function distinct names" % (fname, dup))
    locs = []
    for k, n in enumerate(names):
        if n not in inputs:
            raise MXNetError("%s: %s[%d] is not used by the function; every one must be (the "
                             "subgraph has no input for it)" % (fname, what, k))
        locs.append(inputs.index(n))
    return locs


def _remaining(sub, taken, outer):
    """The subgraph inputs besides ``taken`` names: ``(locations, outer entries)``."""
    locs, entries = [], []
    for k, node in enumerate(n for n in sub._nodes() if n.op is None):
        if node.name in taken:
            continue
        locs.append(k)
        entries.append(outer.get(node.name, (node, 0)))
    return locs, entries


def _outputs(node, start, count, fmt):
    return _regroup([Symbol([(node, start + k)]) for k in range(count)], fmt)


def foreach(body, data, init_states, name="foreach"):
    """Run ``body`` on each slice of ``data`` along axis 0, carrying loop states, as
    one ``_foreach`` node (see ``mx.nd.contrib.foreach`` for the semantics).

    Parameters
    ----------
    body : callable
        ``body(data_slice, states) -> (outputs, new_states)`` on Symbols.
    data : Symbol or nested list of Symbol
    init_states : Symbol or nested list of Symbol
    name : str
        The subgraph's name (``foreach0`` ...).

    Returns
    -------
    outputs : Symbol or nested list of Symbol
        Every step's outputs stacked along axis 0.
    states : Symbol or nested list of Symbol
        The final states.
    """
    _check_callable(body, "foreach", "body")
    flat_data, data_fmt = _symbols(data, "foreach", "data")
    flat_states, state_fmt = _symbols(init_states, "foreach", "init_states")
    sub_name = _unique_subgraph_name(name)

    def trace():
        data_vars = _placeholders(flat_data)
        state_vars = _placeholders(flat_states)
        outs, new_states = _pair(body(_regroup(data_vars, data_fmt),
                                      _regroup(state_vars, state_fmt)),
                                 "foreach", "body", "outputs, new_states")
        flat_outs, out_fmt = _symbols(outs, "foreach", "the outputs of body")
        flat_new, new_fmt = _symbols(new_states, "foreach", "the states returned by body")
        if new_fmt != state_fmt:
            raise ValueError("foreach: body returned states nested as %s, expected the "
                             "structure of init_states: %s"
                             % (_describe(new_fmt), _describe(state_fmt)))
        return (data_vars, state_vars, flat_outs, out_fmt, flat_new,
                _own_heads(flat_outs, flat_new, sub_name))
    data_vars, state_vars, flat_outs, out_fmt, flat_new, heads = _trace(sub_name, trace)
    heads, outer = _cut(heads, sub_name)
    sub = Symbol(heads)
    data_names = [v.name for v in data_vars]
    state_names = [v.name for v in state_vars]
    data_locs = _locations("foreach", sub, data_names, "data")
    state_locs = _locations("foreach", sub, state_names, "init_states")
    remain_locs, remain = _remaining(sub, set(data_names) | set(state_names), outer)
    node = _loop_node("_foreach", "foreach", [sub], [flat_data, flat_states], remain, dict(
        num_outputs=len(flat_outs) + len(flat_new), num_out_data=len(flat_outs),
        in_data_locs=data_locs, in_state_locs=state_locs, remain_locs=remain_locs),
        "_foreach")
    return (_outputs(node, 0, len(flat_outs), out_fmt),
            _outputs(node, len(flat_outs), len(flat_new), state_fmt))


def while_loop(cond, func, loop_vars, max_iterations=None, name="while_loop"):
    """Run ``func`` while ``cond`` holds, at most ``max_iterations`` times, as one
    ``_while_loop`` node (see ``mx.nd.contrib.while_loop`` for the semantics).

    Parameters
    ----------
    cond : callable
        ``cond(*loop_vars)`` gives a one-element Symbol.
    func : callable
        ``func(*loop_vars) -> (step_output, new_loop_vars)`` on Symbols.
    loop_vars : Symbol or list of Symbol
    max_iterations : int
        Required: the outputs have this many rows (padded with zeros).
    name : str

    Returns
    -------
    outputs : Symbol or nested list of Symbol
    loop_vars : Symbol or list of Symbol
    """
    from ..nd.contrib_control_flow import _max_iterations
    _check_callable(cond, "while_loop", "cond")
    _check_callable(func, "while_loop", "func")
    max_iterations = _max_iterations(max_iterations)
    single = isinstance(loop_vars, Symbol)
    flat_vars, var_fmt = _symbols([loop_vars] if single else loop_vars, "while_loop",
                                  "loop_vars")
    if not flat_vars:
        raise ValueError("while_loop: loop_vars should contain at least one element")
    cond_name = _unique_subgraph_name(name + "_cond")

    def trace_cond():
        cvars = _placeholders(flat_vars)
        c = cond(*_regroup(cvars, var_fmt))
        c = _symbols(c, "while_loop", "the value returned by cond")[0]
        if len(c) != 1:
            raise ValueError("while_loop: cond must return one Symbol, got %d" % len(c))
        return cvars, _own_heads(c, [], cond_name)
    cvars, cond_heads = _trace(cond_name, trace_cond)
    cond_heads, cond_outer = _cut(cond_heads, cond_name)
    func_name = _unique_subgraph_name(name + "_func")

    def trace_func():
        fvars = _placeholders(flat_vars)
        step, new_vars = _pair(func(*_regroup(fvars, var_fmt)), "while_loop", "func",
                               "step_output, new_loop_vars")
        flat_out, out_fmt = _symbols([] if step is None else step, "while_loop",
                                     "the step_output of func")
        flat_new, new_fmt = _symbols([new_vars] if isinstance(new_vars, Symbol) else new_vars,
                                     "while_loop", "the loop_vars returned by func")
        if new_fmt != var_fmt:
            raise ValueError("while_loop: func returned loop_vars nested as %s, expected %s"
                             % (_describe(new_fmt), _describe(var_fmt)))
        return fvars, flat_out, out_fmt, flat_new, _own_heads(flat_out, flat_new, func_name)
    fvars, flat_out, out_fmt, flat_new, func_heads = _trace(func_name, trace_func)
    func_heads, func_outer = _cut(func_heads, func_name)
    cond_sym, func_sym = Symbol(cond_heads), Symbol(func_heads)
    var_names = [v.name for v in fvars]
    outer = dict(cond_outer, **func_outer)
    outer.update((n, s._outputs[0]) for n, s in zip(var_names, flat_vars))
    inputs = _Inputs(outer)
    cond_locs, func_locs = inputs.locations(cond_sym), inputs.locations(func_sym)
    var_locs = _locations("while_loop", func_sym, var_names, "loop_vars")
    node = _loop_node("_while_loop", "while_loop", [cond_sym, func_sym], [], inputs.entries,
                      dict(num_outputs=len(flat_out) + len(flat_new),
                           num_out_data=len(flat_out), max_iterations=max_iterations,
                           cond_input_locs=cond_locs, func_input_locs=func_locs,
                           func_var_locs=var_locs), "_while_loop")
    outputs = _outputs(node, 0, len(flat_out), out_fmt) if flat_out else []
    final = _outputs(node, len(flat_out), len(flat_new), var_fmt)
    return outputs, (final[0] if single else final)


def cond(pred, then_func, else_func, name="cond"):
    """``then_func()`` where ``pred`` is nonzero, else ``else_func()``, as one ``_cond``
    node (see ``mx.nd.contrib.cond``).

    Parameters
    ----------
    pred : Symbol
        One element.
    then_func, else_func : callable
        Functions of no arguments returning Symbols nested the same way.
    name : str

    Returns
    -------
    Symbol or nested list of Symbol
    """
    _check_callable(then_func, "cond", "then_func")
    _check_callable(else_func, "cond", "else_func")
    pred = _symbols(pred, "cond", "pred")[0]
    if len(pred) != 1:
        raise ValueError("cond: pred must be one Symbol, got %d" % len(pred))
    graphs, fmts, outer = [], [], {}
    for part, fn in (("pred", lambda: pred), ("then", then_func), ("else", else_func)):
        sub_name = _unique_subgraph_name("%s_%s" % (name, part))

        def trace(fn=fn, part=part, sub_name=sub_name):
            flat, fmt = _symbols(fn(), "cond", "the result of %s" % (
                "pred" if part == "pred" else part + "_func"))
            return flat, fmt, _own_heads(flat, [], sub_name)
        flat, fmt, heads = _trace(sub_name, trace)
        heads, cut = _cut(heads, sub_name)
        outer.update(cut)
        graphs.append(Symbol(heads))
        fmts.append((fmt, len(flat)))
    if fmts[1] != fmts[2]:
        raise ValueError("cond: then_func and else_func must return outputs nested the same "
                         "way, got %s and %s" % (_describe(fmts[1][0]), _describe(fmts[2][0])))
    inputs = _Inputs(outer)
    locs = [inputs.locations(g) for g in graphs]
    n_out = fmts[1][1]
    node = _loop_node("_cond", "cond", graphs, [], inputs.entries, dict(
        num_outputs=n_out, cond_input_locs=locs[0], then_input_locs=locs[1],
        else_input_locs=locs[2]), "_cond")
    return _outputs(node, 0, n_out, fmts[1][0])
