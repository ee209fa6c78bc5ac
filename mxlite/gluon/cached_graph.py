"""The graph a hybridized block replays: a traced Symbol turned into a flat list of
op calls over numbered value slots.

Replaying runs every op through :func:`mxlite.operator.invoke`, exactly as the
imperative run does (so results and gradients are identical), but skips the Python
work of the Block tree: no ``__call__``/hooks per layer, no parameter lookups by
name, no argument binding or param parsing per op.
"""
from ..operator.registry import invoke

__all__ = ["CachedGraph", "flatten", "regroup"]


def flatten(args, what="input"):
    """Flatten nested lists/tuples of arrays (or Symbols) into a list and a format."""
    flat, fmt = [], []
    for a in args:
        if isinstance(a, (list, tuple)):
            sub, sub_fmt = flatten(a, what)
            flat.extend(sub)
            fmt.append(sub_fmt)
        else:
            flat.append(a)
            fmt.append(0)
    return flat, tuple(fmt)


def regroup(flat, fmt):
    """The inverse of :func:`flatten`: nested lists in the shape ``fmt`` describes."""
    out, k = [], 0
    for f in fmt:
        if f == 0:
            out.append(flat[k])
            k += 1
        else:
            sub, used = regroup(flat[k:], f)
            out.append(sub)
            k += used
    return out, k


class CachedGraph:
    """Replays ``symbol`` with inputs bound by position and parameters by name.

    Parameters
    ----------
    symbol : Symbol
        The traced outputs.
    input_names : list of str
        Names of the input variables, in call order.
    params : dict of str to Parameter
        The parameters (and auxiliary states) the graph reads, by variable name.
    """

    def __init__(self, symbol, input_names, params):
        self.symbol = symbol
        nodes = symbol._nodes()
        slot_of = {}
        self.input_slots = []
        self.param_slots = []
        n = 0
        index = {name: k for k, name in enumerate(input_names)}
        for node in nodes:
            if node.op is None:
                slot_of[(id(node), 0)] = n
                if node.name in index:
                    self.input_slots.append((n, index[node.name]))
                elif node.name in params:
                    self.param_slots.append((n, params[node.name]))
                else:
                    raise ValueError("the graph reads %r, which is neither an input (%s) nor a "
                                     "parameter" % (node.name, ", ".join(input_names)))
                n += 1
        self.steps = []
        for node in nodes:
            if node.op is None:
                continue
            ins = tuple(slot_of[(id(c), i)] for c, i in node.inputs)
            nvis = node.num_visible()
            for i in range(nvis):
                slot_of[(id(node), i)] = n + i
            self.steps.append((node.op, node.p, ins, n, nvis > 1, id(node)))
            n += nvis
        self.n_slots = n
        self.out_slots = [slot_of[(id(node), i)] for node, i in symbol._outputs]
        self.input_names = list(input_names)
        # nodes like zeros((L, 0, H)) whose 0 dims are inferred per input shapes
        self._open = any(node.op is not None and not node.inputs and
                         0 in (node.p.get("shape") or (1,)) for node in nodes)
        self._resolved = {}

    def __call__(self, inputs, ctx):
        vals = [None] * self.n_slots
        for slot, k in self.input_slots:
            vals[slot] = inputs[k]
        for slot, param in self.param_slots:
            vals[slot] = param.data(ctx)
        override = self._overrides(inputs) if self._open else None
        for op, p, ins, first, multi, nid in self.steps:
            if override and nid in override:
                p = override[nid]
            y = invoke(op, [vals[i] for i in ins], p)
            if multi:
                vals[first:first + len(y)] = y
            else:
                vals[first] = y
        return [vals[s] for s in self.out_slots]

    def _overrides(self, inputs):
        key = tuple(a.shape for a in inputs)
        found = self._resolved.get(key)
        if found is None:
            shapes = dict(zip(self.input_names, key))
            found = self._resolved[key] = self.symbol.resolved_params(**shapes)
        return found
