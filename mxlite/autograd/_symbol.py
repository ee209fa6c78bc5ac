"""``autograd.get_symbol``: the recorded graph behind an NDArray as a Symbol."""
from ..base import MXNetError


def graph_symbol(x):
    """A Symbol with one node per recorded op that ``x`` depends on. Marked variables
    become variables ``var<k>`` and arrays that were not recorded ``null<k>``, numbered
    in the order they are met."""
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
            if getattr(cur, "freed", False) or not hasattr(cur.op, "params"):
                raise MXNetError(
                    "get_symbol: the graph through %s cannot be read back (%s)"
                    % (getattr(cur.op, "name", type(cur.op).__name__),
                       "a backward freed it" if cur.freed else "a hybridized block records "
                       "one node; call its export() for its symbol"))
            todo = [e[0] for e in cur.parents if e is not None and id(e[0]) not in made]
            if todo:
                stack.extend(todo)
                continue
            stack.pop()
            node = SymNode(cur.op, "%s%d" % (cur.op.name.lower(), len(made)), cur.p.to_attrs(given_only=True))
            node.inputs = [(made[id(e[0])], e[1]) if e is not None else (leaf("null"), 0)
                           for e in cur.parents]
            made[id(cur)] = node
        return made[id(rec)]

    node, index = x._entry
    return Symbol([(build(node), index)])
