"""Symbols from MXNet's JSON graphs (``-symbol.json`` files), checked node by node: an
unknown operator, a bad entry or a cycle is an error naming the node."""
import json

from ..base import MXNetError
from ..operator.registry import OPS, get_op
from .symbol import Symbol, SymNode

__all__ = ["load", "load_json"]


def load_json(json_str):
    """A Symbol from MXNet's JSON (also the older ``attr``/``param`` spellings)."""
    try:
        graph = json.loads(json_str)
    except (ValueError, TypeError) as e:
        raise MXNetError("load_json: not a symbol JSON graph: %s" % e) from None
    return _from_graph(graph)


def _bad_graph(what):
    return MXNetError("load_json: not a valid symbol JSON graph: %s" % what)


def _entry(e, nodes, where, total):
    """The (node, output index) a JSON entry ``[node, index, version]`` names, checked:
    an index out of range, or a node not before ``where`` (a cycle), names both."""
    if not (isinstance(e, (list, tuple)) and 2 <= len(e) <= 3
            and all(isinstance(v, int) and not isinstance(v, bool) for v in e)):
        raise _bad_graph("%s has entry %r, expected [node, output, version]" % (where, e))
    k, i = e[0], e[1]
    if not 0 <= k < len(nodes):
        raise _bad_graph("%s takes input from node %d, which %s" % (
            where, k, "comes later (a cycle or a forward reference)" if 0 <= k < total
            else "does not exist (the graph has %d nodes)" % total))
    node = nodes[k]
    if not 0 <= i < node.num_outputs():
        raise _bad_graph("%s takes output %d of node %d (%s), which has %d output(s)"
                         % (where, i, k, node.name, node.num_outputs()))
    return node, i


def _from_graph(graph):
    jnodes = graph.get("nodes") if isinstance(graph, dict) else None
    heads = graph.get("heads") if isinstance(graph, dict) else None
    if not isinstance(jnodes, list) or not isinstance(heads, list):
        raise MXNetError("load_json: not a symbol JSON graph: missing %s"
                         % ("'nodes'" if not isinstance(jnodes, list) else "'heads'"))
    nodes = []
    for k, jn in enumerate(jnodes):
        if not isinstance(jn, dict) or not isinstance(jn.get("op"), str) \
                or not isinstance(jn.get("name"), str):
            raise _bad_graph("node %d is %.80r, expected an object with string 'op' and "
                             "'name'" % (k, jn))
        where = "node %d (%s)" % (k, jn["name"])
        attrs = dict(jn.get("attrs") or jn.get("attr") or {})
        attrs.update(jn.get("param") or {})
        inputs = [_entry(e, nodes, where, len(jnodes)) for e in jn.get("inputs", [])]
        if jn["op"] == "null":
            nodes.append(SymNode(None, jn["name"], attrs=attrs))
            continue
        if jn["op"] not in OPS:
            try:
                get_op(jn["op"])
            except MXNetError as e:
                raise MXNetError("load_json: node %r uses operator %r, which mxlite does not have "
                                 "(%s)" % (jn["name"], jn["op"], e)) from None
        op = OPS[jn["op"]]
        params = {k2: v for k2, v in attrs.items() if k2 in op.params}
        user = {k2: v for k2, v in attrs.items() if k2 not in op.params}
        if op.variadic and op.variadic not in params:
            params[op.variadic] = str(op.variadic_count(len(inputs)))
        subgraphs = [_from_graph(g) for g in jn.get("subgraphs") or ()]
        try:
            node = SymNode(op, jn["name"], params, user, inputs, subgraphs)
        except (TypeError, ValueError, MXNetError) as e:
            raise MXNetError("load_json: node %r (%s): %s" % (jn["name"], jn["op"], e)) from None
        nodes.append(node)
    return Symbol([_entry(h, nodes, "head %d" % j, len(nodes)) for j, h in enumerate(heads)])


def load(fname):
    """Load a Symbol from a ``-symbol.json`` file."""
    with open(fname) as f:
        return load_json(f.read())
