"""ONNX LSTM, GRU and RNN -> MXNet's fused ``RNN`` operator (one layer each).

The constant W, R, B become MXNet's flat parameter vector (weights, then biases; gates
in MXNet's order: see the export side, ``mx2onnx/_op_translations/_rnn.py``).
"""
import numpy as np

from .... import symbol as S
from ._op_translations import register, _fail

_MODES = {"LSTM": ("lstm", [0, 2, 3, 1]), "GRU": ("gru", [1, 0, 2])}
# MXNet gate k is ONNX gate _MODES[op][1][k]


def _mode(op, name, attrs):
    if op in _MODES:
        return _MODES[op]
    acts = set(attrs.get("activations", ("Tanh",)))
    if acts == {"Tanh"}:
        return "rnn_tanh", [0]
    if acts == {"Relu"}:
        return "rnn_relu", [0]
    _fail(op, name, "activations %s" % sorted(acts))


@register("LSTM", "GRU", "RNN")
def convert_rnn(g, name, attrs, inputs):
    op = g._current_op
    mode, order = _mode(op, name, attrs)
    if attrs.get("layout", 0) or attrs.get("clip") or (op == "LSTM" and len(inputs) > 7
                                                         and inputs[7]):
        _fail(op, name, "layout=1, clip or peepholes")
    if op == "GRU" and not attrs.get("linear_before_reset", 0):
        _fail(op, name, "linear_before_reset=0 (MXNet's GRU resets after the matmul)")
    if len(inputs) > 4 and inputs[4]:
        _fail(op, name, "sequence_lens")
    w, r = g.value(inputs[1]), g.value(inputs[2])
    if w is None or r is None:
        _fail(op, name, "computed weights")
    d, gh, _ = w.shape
    h = attrs["hidden_size"]
    gates = gh // h
    bias = g.value(inputs[3]) if len(inputs) > 3 and inputs[3] else np.zeros((d, 2 * gh),
                                                                           w.dtype)

    def mxnet_order(m):         # (g*h, ...) in ONNX gate order -> MXNet's
        return m.reshape((gates, h) + m.shape[1:])[order].reshape(m.shape)
    flat = [mxnet_order(m[k]).reshape(-1) for k in range(d) for m in (w, r)]
    flat += [mxnet_order(bias[k][j * gh:(j + 1) * gh]) for k in range(d) for j in (0, 1)]
    pname = g.fresh(name + "_parameters")
    g.set_param(pname, np.concatenate(flat).astype(w.dtype))
    states = []
    for k in (5, 6)[:2 if op == "LSTM" else 1]:
        if len(inputs) > k and inputs[k]:
            states.append(g.sym(inputs[k]))
        else:                   # zeros; 0 is the batch size, inferred from the data
            states.append(S._internal._zeros(shape=(d, 0, h), dtype=w.dtype.name))
    y = S.RNN(g.sym(inputs[0]), g.sym(pname), *states, state_size=h, num_layers=1,
              bidirectional=d == 2, mode=mode, state_outputs=True, name=name)
    # MXNet's (T, N, D*H) -> ONNX's Y (T, D, N, H)
    out = S.transpose(S.reshape(y[0], shape=(0, 0, d, h)), axes=(0, 2, 1, 3))
    return [out] + [y[k] for k in range(1, len(states) + 1)]
