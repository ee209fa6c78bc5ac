"""``mx.viz``: a text summary of a Symbol (``print_summary``) and its graph as DOT
(``plot_network``)."""
import json

import numpy as np

__all__ = ["print_summary", "plot_network", "DotGraph"]


def _row(fields, positions):
    line = ""
    for field, pos in zip(fields, positions):
        line += str(field)
        line = line[:pos]
        line += " " * (pos - len(line))
    print(line)


def print_summary(symbol, shape=None, line_length=120, positions=(.44, .64, .74, 1.)):
    """Print each layer with its output shape (batch dim dropped), parameter count and
    input layers, then the total number of parameters (MXNet's layout).

    Parameters
    ----------
    symbol : Symbol
    shape : dict, optional
        Input shapes, e.g. ``{'data': (1, 3, 28, 28)}``; without it shapes are blank.
    """
    from .symbol import Symbol
    if not isinstance(symbol, Symbol):
        raise TypeError("print_summary: symbol must be a Symbol, got %s" % type(symbol).__name__)
    shape_dict = {}
    arg_shape = {}
    if shape is not None:
        internals = symbol.get_internals()
        _, out_shapes, _ = internals.infer_shape_partial(**shape)
        shape_dict = dict(zip(internals.list_outputs(), out_shapes))
        arg_shapes, _, _ = symbol.infer_shape_partial(**shape)
        arg_shape = dict(zip(symbol.list_arguments(), arg_shapes))
    graph = json.loads(symbol.tojson())
    nodes = graph["nodes"]
    positions = [int(line_length * p) for p in positions]
    print("_" * line_length)
    _row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"], positions)
    print("=" * line_length)
    inputs = set(shape or ())
    total = 0
    for i, node in enumerate(nodes):
        op = node["op"]
        if op == "null" and i > 0:
            continue
        key = node["name"] if op == "null" else node["name"] + "_output"
        out_shape = shape_dict.get(key, ())[1:]
        previous, params = [], 0
        for src, _, _ in node["inputs"]:
            child = nodes[src]
            if child["op"] != "null" or src == 0 or child["name"] in inputs:
                previous.append(child["name"])      # the first node is the data input
            elif not child["name"].endswith("_label") and child["name"] in arg_shape:
                s = arg_shape[child["name"]]
                params += int(np.prod(s)) if s else 0
        total += params
        _row([node["name"] + "(" + op + ")", "x".join(str(d) for d in out_shape), params,
              previous[0] if previous else ""], positions)
        for extra in previous[1:]:
            _row(["", "", "", extra], positions)
        print(("=" if i == len(nodes) - 1 else "_") * line_length)
    print("Total params: {params}".format(params=total))
    print("_" * line_length)


class DotGraph:
    """A graph in the DOT language; ``source`` holds the text. Returned by
    :func:`plot_network` when the ``graphviz`` package is not installed."""

    def __init__(self, name, source):
        self.name = name
        self.source = source

    def __str__(self):
        return self.source

    def save(self, filename):
        with open(filename, "w") as f:
            f.write(self.source)
        return filename


_COLORS = {"Convolution": "#fb8072", "Deconvolution": "#fb8072", "FullyConnected": "#fb8072",
           "BatchNorm": "#bebada", "Activation": "#ffffb3", "LeakyReLU": "#ffffb3",
           "Pooling": "#80b1d3", "Concat": "#fdb462", "Flatten": "#fdb462",
           "Reshape": "#fdb462", "SoftmaxOutput": "#b3de69", "Softmax": "#b3de69"}


def _label(node):
    op, attrs = node["op"], node.get("attrs", {})
    if op == "Convolution":
        return "Convolution\\n%s/%s, %s" % (attrs.get("kernel"), attrs.get("stride", "(1, 1)"),
                                            attrs.get("num_filter"))
    if op == "FullyConnected":
        return "FullyConnected\\n%s" % attrs.get("num_hidden")
    if op in ("Activation", "LeakyReLU"):
        return "%s\\n%s" % (op, attrs.get("act_type", ""))
    if op == "Pooling":
        return "Pooling\\n%s, %s/%s" % (attrs.get("pool_type"), attrs.get("kernel"),
                                        attrs.get("stride", "(1, 1)"))
    return "%s\\n%s" % (op, node["name"]) if op != "null" else node["name"]


def plot_network(symbol, title="plot", save_format="pdf", shape=None, dtype=None,
                 node_attrs=None, hide_weights=True):
    """The network as a graph: a ``graphviz.Digraph`` when graphviz is installed,
    else a :class:`DotGraph` with the DOT text. Edges carry shapes when ``shape`` is given."""
    from .symbol import Symbol
    if not isinstance(symbol, Symbol):
        raise TypeError("plot_network: symbol must be a Symbol, got %s" % type(symbol).__name__)
    shape_dict = {}
    if shape is not None:
        internals = symbol.get_internals()
        _, out_shapes, _ = internals.infer_shape_partial(**shape)
        shape_dict = dict(zip(internals.list_outputs(), out_shapes))
    graph = json.loads(symbol.tojson())
    nodes = graph["nodes"]
    inputs = set(shape or ()) | {"data"}
    hidden = set()
    lines = ["digraph %s {" % json.dumps(title), ("  node [shape=box, style=filled, "
             "fixedsize=false, fontsize=10];")]
    for i, node in enumerate(nodes):
        if node["op"] == "null" and hide_weights and node["name"] not in inputs and i > 0:
            hidden.add(i)
            continue
        color = _COLORS.get(node["op"], "#8dd3c7")
        lines.append("  n%d [label=%s, fillcolor=%s];" % (i, json.dumps(_label(node)),
                                                          json.dumps(color)))
    for i, node in enumerate(nodes):
        if i in hidden:
            continue
        for src, idx, _ in node["inputs"]:
            if src in hidden:
                continue
            child = nodes[src]
            key = child["name"] if child["op"] == "null" else child["name"] + "_output"
            label = ""
            if shape_dict.get(key):
                label = " [label=%s]" % json.dumps("x".join(str(d) for d in shape_dict[key][1:]))
            lines.append("  n%d -> n%d%s;" % (src, i, label))
    lines.append("}")
    source = "\n".join(lines)
    try:
        import graphviz
    except ImportError:
        return DotGraph(title, source)
    return graphviz.Source(source, filename=title, format=save_format)


# Names MXNet's module also shows, served from where they live in mxlite.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "Symbol": "mxlite.symbol.symbol",
})
