"""Translation of MXNet's fused ``RNN`` operator (LSTM, GRU, vanilla; stacked,
bidirectional) to one ONNX LSTM/GRU/RNN node per layer.

MXNet keeps every weight in one flat vector (all weights by layer, direction, i2h then
h2h; then all biases in the same order: see ``operator/nn/rnn.py``). The translation
slices it in the graph, so it works whether the vector is an initializer or computed
(Gluon's RNN layers concatenate their Parameters), and reorders the gates: MXNet's LSTM
gates are (i, f, g, o) where ONNX's are (i, o, f, c); its GRU's (r, z, n) where ONNX's
are (z, r, h). MXNet's GRU applies the reset gate after the recurrent matmul, as ONNX's
``linear_before_reset=1``.
"""
from .._export_onnx import MXNetGraph
from ._common import unsupported

_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}
# ONNX gate k is MXNet gate _ORDER[mode][k]
_ORDER = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "rnn_tanh": [0], "rnn_relu": [0]}
_ONNX_OP = {"lstm": "LSTM", "gru": "GRU", "rnn_tanh": "RNN", "rnn_relu": "RNN"}


def _block(b, n, w, offset, g, h, cols):
    """The ``(1, g*h, cols)`` ONNX block of the flat vector at ``offset`` holding a
    ``(g*h, cols)`` MXNet matrix (``cols`` None: a ``(g*h,)`` bias -> ``(1, g*h)``)."""
    size = g * h * (cols or 1)
    flat = b.add("Slice", [w, b.int64s([offset], n.name + "_start"),
                           b.int64s([offset + size], n.name + "_end"),
                           b.int64s([0], n.name + "_axis")], name=n.name)
    shape = [g, h] + ([cols] if cols else [])
    gates = b.add("Reshape", [flat, b.int64s(shape, n.name + "_gates")], name=n.name)
    if g > 1:
        gates = b.add("Gather", [gates, b.int64s(_ORDER[n.p.mode], n.name + "_order")],
                      name=n.name, axis=0)
    return b.add("Reshape", [gates, b.int64s([1, g * h] + ([cols] if cols else []),
                                             n.name + "_block")], name=n.name)


def _layer_weights(b, n, input_size):
    """Per layer, the ONNX ``(W, R, B)`` of all its directions."""
    p = n.p
    g, h, d = _GATES[p.mode], p.state_size, 2 if p.bidirectional else 1
    w = n.ins[1]
    mats, off = [], 0
    for layer in range(p.num_layers):
        n_in = input_size if layer == 0 else d * h
        for _ in range(d):
            wx = _block(b, n, w, off, g, h, n_in)
            off += g * h * n_in
            wh = _block(b, n, w, off, g, h, h)
            off += g * h * h
            mats.append([wx, wh])
    for k in range(p.num_layers * d):
        bx = _block(b, n, w, off, g, h, None)
        bh = _block(b, n, w, off + g * h, g, h, None)
        off += 2 * g * h
        mats[k].append(b.add("Concat", [bx, bh], name=n.name, axis=1))
    layers = []
    for layer in range(p.num_layers):
        dirs = mats[layer * d:(layer + 1) * d]
        layers.append([parts[0] if d == 1 else b.add("Concat", parts, name=n.name, axis=0)
                       for parts in zip(*dirs)])
    return layers


@MXNetGraph.register("RNN")
def convert_rnn(b, n):
    p = n.p
    if p.projection_size is not None or p.use_sequence_length:
        unsupported(n, "projection_size or use_sequence_length")
    if p.lstm_state_clip_min is not None or p.lstm_state_clip_max is not None:
        unsupported(n, "lstm_state_clip_min/max")
    d = 2 if p.bidirectional else 1
    h = p.state_size
    x = n.ins[0]
    states = n.ins[2:4]
    attrs = dict(hidden_size=h, direction="bidirectional" if d == 2 else "forward")
    if p.mode == "gru":
        attrs["linear_before_reset"] = 1
    elif p.mode != "lstm":
        attrs["activations"] = ["Tanh" if p.mode == "rnn_tanh" else "Relu"] * d
    hs, cs = [], []
    for layer, (wx, wh, bias) in enumerate(_layer_weights(b, n, n.in_shapes[0][2])):
        rows = [b.int64s([layer * d], n.name + "_s0"), b.int64s([(layer + 1) * d],
                                                                n.name + "_s1"),
                b.int64s([0], n.name + "_s_axis")]
        init = [b.add("Slice", [s] + rows, name=n.name) for s in states]
        outs = b.add(_ONNX_OP[p.mode], [x, wx, wh, bias, ""] + init,
                     3 if p.mode == "lstm" else 2, name=n.name, **attrs)
        hs.append(outs[1])
        if p.mode == "lstm":
            cs.append(outs[2])
        # (T, D, N, H) -> (T, N, D*H), the next layer's input
        y = b.add("Transpose", [outs[0]], name=n.name, perm=[0, 2, 1, 3])
        x = b.add("Reshape", [y, b.int64s([0, 0, -1], n.name + "_merge")], name=n.name)
    b.add("Identity", [x], n.outs[:1], name=n.name)
    for k, parts in enumerate([hs, cs][:len(n.outs) - 1]):
        b.add("Concat", parts, [n.outs[k + 1]], name=n.name, axis=0)
