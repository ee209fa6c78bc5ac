"""``autograd.get_symbol``: the recorded graph behind an NDArray as a Symbol."""
from ..base import MXNetError


def graph_symbol(x):
    """A Symbol with one node per recorded op that ``x`` depends on. Marked variables
    become variables ``var<k>`` and arrays that were not recorded ``null<k>``, numbered
    in the order they are met. A hybridized block's call, recorded as one node, becomes
    one ``_CachedOp`` node holding the block's graph, as in MXNet."""
    from ..symbol.symbol import Symbol, SymNode
    if x._entry is None:
        raise MXNetError("get_symbol: the array is not in a recorded graph; compute it inside "
                         "autograd.record() from an array with attach_grad()")
    made = {}
    counts = {"var": 0, "null": 0}

    def leaf(kind):
        node = SymNode(None, "%s%d" % (kind, counts[kind]))
        counts[kind] += 1
        return node

    def build(rec):
        # Iterative depth-first walk: a recorded graph can be deeper than Python's stack.
        stack = [rec]
        while stack:
            cur = stack[-1]
            if id(cur) in made:
                stack.pop()
                continue
            if cur.op is None:                       # a marked variable
                made[id(cur)] = leaf("var")
                stack.pop()
                continue
            graph = getattr(cur.op, "graph", None)
            if getattr(cur, "freed", False) or (graph is None and not hasattr(cur.op, "params")):
                raise MXNetError(
                    "get_symbol: the graph through %s cannot be read back (a backward freed "
                    "it)" % getattr(cur.op, "name", type(cur.op).__name__))
            todo = [e[0] for e in cur.parents if e is not None and id(e[0]) not in made]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            inputs = [(made[id(e[0])], e[1]) if e is not None else (leaf("null"), 0)
                      for e in cur.parents]
            if graph is None:
                node = SymNode(cur.op, "%s%d" % (cur.op.name.lower(), len(made)),
                               cur.p.to_attrs(given_only=True))
            else:
                node, inputs = _cached_op_node(graph, len(made), inputs)
            node.inputs = inputs
            made[id(cur)] = node
        return made[id(rec)]

    node, index = x._entry
    return Symbol([(build(node), index)])


def _cached_op_node(graph, k, inputs):
    """A ``_CachedOp`` node of a hybridized block's ``graph`` and its inputs, put in the
    order of the graph's ``list_inputs`` from the recorded node's (its leaf order)."""
    from ..operator.registry import get_op
    from ..symbol.symbol import SymNode
    by_name = dict(zip(graph.leaf_names(), inputs))
    node = SymNode(get_op("_CachedOp"), "_cachedop%d" % k, subgraphs=(graph.symbol,))
    return node, [by_name[name] for name in graph.symbol.list_inputs()]
