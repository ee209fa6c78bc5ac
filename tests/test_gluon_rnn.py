"""gluon.rnn: cells against step-by-step NumPy, layers against their unrolled cells and
the golden RNN cases of MXNet 1.9.1, valid lengths, layouts, states, gradients, names."""
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import rnn

nd = mx.nd
REF = os.path.join(os.path.dirname(__file__), "reference", "ops")


# ----------------------------------------------------------------------------
# NumPy references

def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_step(mode, x, states, wx, wh, bx, bh):
    """One step of MXNet's cells in NumPy: gates i,f,g,o (LSTM) and r,z,n (GRU)."""
    h = states[0]
    ax, ah = x @ wx.T + bx, h @ wh.T + bh
    if mode == "lstm":
        i, f, g, o = np.split(ax + ah, 4, axis=1)
        c = _sigmoid(f) * states[1] + _sigmoid(i) * np.tanh(g)
        h = _sigmoid(o) * np.tanh(c)
        return h, [h, c]
    if mode == "gru":
        xr, xz, xn = np.split(ax, 3, axis=1)
        hr, hz, hn = np.split(ah, 3, axis=1)
        r, z = _sigmoid(xr + hr), _sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        h = (1 - z) * n + z * h
        return h, [h]
    h = np.tanh(ax + ah) if mode == "rnn_tanh" else np.maximum(ax + ah, 0)
    return h, [h]


def np_unroll(mode, xs, states, weights):
    """xs: (T, N, C). Returns outputs (T, N, H) and the final states."""
    outs = []
    for x in xs:
        y, states = np_step(mode, x, states, *weights)
        outs.append(y)
    return np.stack(outs), states


def cell_weights(cell):
    return [getattr(cell, n).data().asnumpy().astype(np.float64)
            for n in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")]


def make_cell(mode, hidden, **kwargs):
    if mode == "lstm":
        return rnn.LSTMCell(hidden, **kwargs)
    if mode == "gru":
        return rnn.GRUCell(hidden, **kwargs)
    return rnn.RNNCell(hidden, activation=mode[4:], **kwargs)


def make_layer(mode, hidden, **kwargs):
    if mode == "lstm":
        return rnn.LSTM(hidden, **kwargs)
    if mode == "gru":
        return rnn.GRU(hidden, **kwargs)
    return rnn.RNN(hidden, activation=mode[4:], **kwargs)


def rand(*shape, scale=1.0):
    return np.random.uniform(-scale, scale, shape).astype(np.float32)


MODES = ["lstm", "gru", "rnn_tanh", "rnn_relu"]


# ----------------------------------------------------------------------------
# Names, prefixes and reprs, as printed by MXNet 1.9.1

def test_cell_parameter_names_match_mxnet():
    # Observed with MXNet 1.9.1 (fresh process): rnn0_, lstm0_, gru0_, rnn1_ with
    # ['<p>i2h_weight', '<p>h2h_weight', '<p>i2h_bias', '<p>h2h_bias'] and shapes
    # (G*H, 0), (G*H, H), (G*H,), (G*H,).
    cells = [rnn.RNNCell(5), rnn.LSTMCell(5), rnn.GRUCell(5, input_size=3)]
    prefixes = [c.prefix for c in cells]
    assert [p[:-2] for p in prefixes] == ["rnn", "lstm", "gru"]
    for cell, rows in zip(cells, (5, 20, 15)):
        p = cell.prefix
        params = cell.collect_params()
        assert list(params.keys()) == [p + "i2h_weight", p + "h2h_weight", p + "i2h_bias",
                                       p + "h2h_bias"]
        assert [v.shape for v in params.values()] == [
            (rows, 3 if isinstance(cell, rnn.GRUCell) else 0), (rows, 5), (rows,), (rows,)]


def test_container_prefixes_match_mxnet():
    # MXNet 1.9.1: SequentialRNNCell children get 'sequentialrnncell0_lstm0_...';
    # BidirectionalCell has the empty prefix; ZoneoutCell over rnn2_ is 'rnn2_zoneout';
    # ResidualCell over gru2_ is 'gru2_residualcell'; DropoutCell is 'dropout0_'.
    stack = rnn.SequentialRNNCell(prefix="seq_")
    with stack.name_scope():
        stack.add(rnn.LSTMCell(5))
        stack.add(rnn.DropoutCell(0.5))
        stack.add(rnn.ResidualCell(rnn.GRUCell(5)))
    assert list(stack.collect_params().keys()) == [
        "seq_lstm0_i2h_weight", "seq_lstm0_h2h_weight", "seq_lstm0_i2h_bias",
        "seq_lstm0_h2h_bias", "seq_gru0_i2h_weight", "seq_gru0_h2h_weight",
        "seq_gru0_i2h_bias", "seq_gru0_h2h_bias"]
    assert stack[1].prefix == "seq_dropout0_"
    bi = rnn.BidirectionalCell(rnn.LSTMCell(3, prefix="f_"), rnn.LSTMCell(3, prefix="b_"))
    assert bi.prefix == ""
    assert list(bi.collect_params().keys())[::4] == ["f_i2h_weight", "b_i2h_weight"]
    zone = rnn.ZoneoutCell(rnn.RNNCell(3, prefix="rnn9_"))
    assert zone.prefix == "rnn9_zoneout"
    assert list(zone.collect_params().keys())[0] == "rnn9_i2h_weight"
    assert rnn.ResidualCell(rnn.GRUCell(3, prefix="g_")).prefix == "g_residualcell"


def test_layer_parameter_names_match_mxnet():
    # MXNet 1.9.1: LSTM(5, 2, bidirectional=True) -> lstm3_l0_i2h_weight (20, 0),
    # l0_h2h_weight (20, 5), l0_i2h_bias, l0_h2h_bias, r0_..., l1_i2h_weight (20, 10) ...
    layer = rnn.LSTM(5, 2, bidirectional=True, prefix="lstm3_")
    expect = []
    for layer_i in range(2):
        for d in "lr":
            expect += ["lstm3_%s%d_%s" % (d, layer_i, n)
                       for n in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")]
    params = layer.collect_params()
    assert list(params.keys()) == expect
    assert params["lstm3_l0_i2h_weight"].shape == (20, 0)
    assert params["lstm3_r1_i2h_weight"].shape == (20, 10)
    assert params["lstm3_l1_h2h_weight"].shape == (20, 5)
    assert rnn.GRU(4).prefix.startswith("gru") and rnn.RNN(4).prefix.startswith("rnn")


def test_reprs_match_mxnet():
    # Strings printed by MXNet 1.9.1.
    assert repr(rnn.LSTMCell(5, input_size=3)) == "LSTMCell(3 -> 20)"
    assert repr(rnn.GRUCell(5)) == "GRUCell(None -> 15)"
    assert repr(rnn.RNNCell(3)) == "RNNCell(None -> 3, tanh)"
    assert repr(rnn.ZoneoutCell(rnn.RNNCell(3))) == \
        "ZoneoutCell(p_out=0.0, p_state=0.0, RNNCell(None -> 3, tanh))"
    assert repr(rnn.BidirectionalCell(rnn.LSTMCell(3), rnn.LSTMCell(3))) == \
        "BidirectionalCell(forward=LSTMCell(None -> 12), backward=LSTMCell(None -> 12))"
    stack = rnn.SequentialRNNCell()
    with stack.name_scope():
        stack.add(rnn.LSTMCell(5))
        stack.add(rnn.DropoutCell(0.5))
        stack.add(rnn.ResidualCell(rnn.GRUCell(5)))
    assert repr(stack) == ("SequentialRNNCell(\n(0): LSTMCell(None -> 20)\n"
                           "(1): DropoutCell(rate=0.5, axes=())\n"
                           "(2): ResidualCell(GRUCell(None -> 15))\n)")
    assert repr(rnn.LSTM(5, 2, bidirectional=True)) == \
        "LSTM(None -> 5, TNC, num_layers=2, bidirectional)"
    assert repr(rnn.GRU(4, 2, bidirectional=True, input_size=3)) == \
        "GRU(3 -> 4, TNC, num_layers=2, bidirectional)"
    assert repr(rnn.RNN(3, input_size=2)) == "RNN(2 -> 3, TNC)"
    assert repr(rnn.GRU(3, 2, dropout=0.5, layout="NTC")) == \
        "GRU(None -> 3, NTC, num_layers=2, dropout=0.5)"


def test_layer_structural_names_match_mxnet(tmp_path):
    # MXNet 1.9.1 saves GRU(4, 2, bidirectional=True) as '_unfused.0.l_cell.h2h_bias' ...
    # and GRU(4, 2) as '_unfused.0.h2h_bias' ...
    bi = rnn.GRU(4, 2, bidirectional=True, input_size=3)
    keys = sorted(bi._collect_params_with_prefix())
    assert keys[:4] == ["_unfused.0.l_cell.h2h_bias", "_unfused.0.l_cell.h2h_weight",
                        "_unfused.0.l_cell.i2h_bias", "_unfused.0.l_cell.i2h_weight"]
    assert len(keys) == 16 and keys[-1] == "_unfused.1.r_cell.i2h_weight"
    uni = rnn.GRU(4, 2, input_size=3)
    assert sorted(uni._collect_params_with_prefix())[:2] == ["_unfused.0.h2h_bias",
                                                             "_unfused.0.h2h_weight"]
    bi.initialize()
    path = str(tmp_path / "gru.params")
    bi.save_parameters(path)
    other = rnn.GRU(4, 2, bidirectional=True)
    other.load_parameters(path)
    np.testing.assert_array_equal(other.r1_i2h_weight.data().asnumpy(),
                                  bi.r1_i2h_weight.data().asnumpy())


# ----------------------------------------------------------------------------
# Cells against NumPy

@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout", ["NTC", "TNC"])
def test_cell_unroll_matches_numpy(mode, layout):
    cell = make_cell(mode, 4, input_size=3)
    cell.initialize(mx.init.Uniform(0.6))
    xs = rand(5, 2, 3)                                     # (T, N, C)
    n_states = 2 if mode == "lstm" else 1
    begin = [rand(2, 4) for _ in range(n_states)]
    data = xs if layout == "TNC" else xs.transpose(1, 0, 2)
    out, states = cell.unroll(5, nd.array(data), begin_state=[nd.array(s) for s in begin],
                              layout=layout, merge_outputs=True)
    ref_out, ref_states = np_unroll(mode, xs.astype(np.float64), begin, cell_weights(cell))
    if layout == "NTC":
        ref_out = ref_out.transpose(1, 0, 2)
    np.testing.assert_allclose(out.asnumpy(), ref_out, rtol=1e-5, atol=1e-6)
    assert len(states) == n_states
    for s, r in zip(states, ref_states):
        np.testing.assert_allclose(s.asnumpy(), r, rtol=1e-5, atol=1e-6)


def test_cell_step_and_output_forms():
    cell = rnn.GRUCell(4)
    cell.initialize()
    x = rand(2, 6, 3)                                      # NTC
    y, states = cell(nd.array(x[:, 0]), cell.begin_state(batch_size=2))
    assert y.shape == (2, 4) and len(states) == 1 and states[0] is y
    listed, _ = cell.unroll(6, nd.array(x), layout="NTC")          # tensor in -> steps
    assert isinstance(listed, list) and len(listed) == 6
    merged, _ = cell.unroll(6, [nd.array(x[:, t]) for t in range(6)], layout="NTC",
                            merge_outputs=True)
    assert merged.shape == (2, 6, 4)
    tnc, _ = cell.unroll(6, [nd.array(x[:, t]) for t in range(6)], layout="TNC",
                         merge_outputs=True)
    assert tnc.shape == (6, 2, 4)
    for t in range(6):
        np.testing.assert_allclose(listed[t].asnumpy(), merged[:, t].asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(tnc[t].asnumpy(), merged[:, t].asnumpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="length=5"):
        cell.unroll(5, nd.array(x), layout="NTC")


def test_begin_state_and_state_info():
    cell = rnn.LSTMCell(6)
    assert cell.state_info(3) == [{"shape": (3, 6), "__layout__": "NC"}] * 2
    states = cell.begin_state(batch_size=3)
    assert [s.shape for s in states] == [(3, 6), (3, 6)]
    assert all(float(s.abs().sum().asscalar()) == 0 for s in states)
    ones = cell.begin_state(batch_size=2, func=nd.ones, dtype="float64")
    assert ones[0].dtype == np.float64 and float(ones[1].sum().asscalar()) == 12
    drawn = cell.begin_state(batch_size=2, func=nd.random.uniform, low=1, high=2)
    assert float(drawn[0].min().asscalar()) >= 1
    layer = rnn.LSTM(5, num_layers=3, bidirectional=True)
    assert [i["shape"] for i in layer.state_info(4)] == [(6, 4, 5), (6, 4, 5)]
    assert [s.shape for s in layer.begin_state(4)] == [(6, 4, 5), (6, 4, 5)]
    assert len(rnn.GRU(5).begin_state(2)) == 1
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.LSTMCell(3))
    stack.add(rnn.GRUCell(4))
    assert [s.shape for s in stack.begin_state(batch_size=2)] == [(2, 3), (2, 3), (2, 4)]


def test_deferred_input_size():
    cell = rnn.LSTMCell(4)
    cell.initialize()
    with pytest.raises(mx.gluon.DeferredInitializationError):
        cell.i2h_weight.data()
    cell.unroll(3, nd.ones((2, 3, 7)), layout="NTC")
    assert cell.i2h_weight.shape == (16, 7)
    layer = rnn.GRU(4, num_layers=2, bidirectional=True, layout="NTC")
    layer.initialize()
    out = layer(nd.ones((2, 3, 5)))
    assert out.shape == (2, 3, 8)
    assert layer.l0_i2h_weight.shape == (12, 5) and layer.r0_i2h_weight.shape == (12, 5)
    assert layer.l1_i2h_weight.shape == (12, 8)
    assert repr(layer) == "GRU(5 -> 4, NTC, num_layers=2, bidirectional)"


# ----------------------------------------------------------------------------
# Layers

def _copy_to_cells(layer, cells):
    """cells[(layer_index, 'l' or 'r')] get the layer's weights."""
    for (i, d), cell in cells.items():
        for n in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias"):
            getattr(cell, n).set_data(getattr(layer, "%s%d_%s" % (d, i, n)).data())


@pytest.mark.parametrize("mode", MODES)
def test_layer_equals_cells_built_by_hand(mode):
    hidden, layers = 3, 2
    layer = make_layer(mode, hidden, num_layers=layers, bidirectional=True, input_size=4)
    layer.initialize(mx.init.Uniform(0.5))
    stack = rnn.SequentialRNNCell()
    cells = {}
    for i in range(layers):
        n_in = 4 if i == 0 else 2 * hidden
        pair = [make_cell(mode, hidden, input_size=n_in) for _ in "lr"]
        cells[(i, "l")], cells[(i, "r")] = pair
        stack.add(rnn.BidirectionalCell(*pair))
    stack.initialize()
    _copy_to_cells(layer, cells)
    x = rand(5, 2, 4)
    begin = layer.begin_state(2, func=nd.random.uniform, low=-1, high=1)
    out, states = layer(nd.array(x), begin)
    cell_begin = [s[k] for k in range(layers * 2) for s in begin]
    ref, ref_states = stack.unroll(5, nd.array(x), begin_state=cell_begin, layout="TNC",
                                   merge_outputs=True)
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    for k, s in enumerate(states):
        np.testing.assert_allclose(s.asnumpy(), nd.stack(*ref_states[k::len(states)]).asnumpy(),
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_layer_matches_numpy_and_layouts(mode):
    layer = make_layer(mode, 4, input_size=3, layout="NTC")
    layer.initialize(mx.init.Uniform(0.5))
    x = rand(2, 6, 3)
    out = layer(nd.array(x))                       # states left out: the output only
    assert isinstance(out, nd.NDArray) and out.shape == (2, 6, 4)
    weights = [getattr(layer, "l0_" + n).data().asnumpy().astype(np.float64)
               for n in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")]
    zeros = [np.zeros((2, 4))] * (2 if mode == "lstm" else 1)
    ref, _ = np_unroll(mode, x.transpose(1, 0, 2).astype(np.float64), zeros, weights)
    np.testing.assert_allclose(out.asnumpy(), ref.transpose(1, 0, 2), rtol=1e-5, atol=1e-6)
    tnc = make_layer(mode, 4, input_size=3, layout="TNC", params=layer.collect_params())
    np.testing.assert_allclose(tnc(nd.array(x.transpose(1, 0, 2))).asnumpy(),
                               ref, rtol=1e-5, atol=1e-6)


def _golden(case):
    path = os.path.join(REF, case + ".npz")
    z = np.load(path, allow_pickle=False)
    return z, json.loads(str(z["meta"]))


def _split_flat(flat, mode, hidden, layers, dirs, n_in):
    """The RNN op's flat vector as {'l0_i2h_weight': ...}: written independently of
    mxlite's layer (weights per layer/direction, then biases)."""
    g = {"lstm": 4, "gru": 3}.get(mode, 1) * hidden
    out, off, names = {}, 0, []
    for i in range(layers):
        for d in "lr"[:dirs]:
            width = n_in if i == 0 else dirs * hidden
            for n, cols in (("i2h_weight", width), ("h2h_weight", hidden)):
                out["%s%d_%s" % (d, i, n)] = flat[off:off + g * cols].reshape(g, cols)
                off += g * cols
            names.append("%s%d" % (d, i))
    for name in names:
        for n in ("i2h_bias", "h2h_bias"):
            out["%s_%s" % (name, n)] = flat[off:off + g]
            off += g
    assert off == flat.size
    return out


@pytest.mark.parametrize("case", ["RNN_lstm_state_outputs", "RNN_gru_bidirectional",
                                  "RNN_tanh_2layer", "RNN_lstm"])
def test_layer_reproduces_golden_rnn_cases(case):
    z, meta = _golden(case)
    kw = meta["kwargs"]
    mode, hidden, layers = kw["mode"], kw["state_size"], kw["num_layers"]
    dirs = 2 if kw.get("bidirectional") else 1
    data = z["input/data"]
    layer = make_layer(mode, hidden, num_layers=layers, bidirectional=dirs == 2)
    layer.initialize()
    layer(nd.array(data))                                  # deferred shapes resolved
    flat = _split_flat(z["input/parameters"], mode, hidden, layers, dirs, data.shape[2])
    for name, value in flat.items():
        getattr(layer, name).set_data(nd.array(value))
    x = nd.array(data)
    x.attach_grad()
    states = [nd.array(z["input/state"])]
    if mode == "lstm":
        states.append(nd.array(z["input/state_cell"]))
    for s in states:
        s.attach_grad()
    with mx.autograd.record(train_mode=meta["train_mode"]):
        out, new_states = layer(x, states)
    got = [out] + list(new_states)
    heads = [nd.array(z["head/%d" % i]) for i in meta["head_grads"]]
    mx.autograd.backward([got[i] for i in meta["head_grads"]], heads)
    for i in meta["outputs"]:
        np.testing.assert_allclose(got[i].asnumpy(), z["output/%d" % i], rtol=meta["rtol"],
                                   atol=meta["atol"])
    tol = dict(rtol=meta["grad_rtol"], atol=meta["grad_atol"])
    np.testing.assert_allclose(x.grad.asnumpy(), z["grad/data"], **tol)
    np.testing.assert_allclose(states[0].grad.asnumpy(), z["grad/state"], **tol)
    want = _split_flat(z["grad/parameters"], mode, hidden, layers, dirs, data.shape[2])
    for name, value in want.items():
        np.testing.assert_allclose(getattr(layer, name).grad().asnumpy(), value, **tol)


def test_layer_gradients_equal_unrolled_cells():
    layer = rnn.LSTM(3, num_layers=2, bidirectional=True, input_size=2, layout="NTC")
    layer.initialize(mx.init.Uniform(0.5))
    stack = layer._unfuse()
    x = nd.array(rand(2, 4, 2))
    head = nd.array(rand(2, 4, 6))
    with mx.autograd.record():
        out = layer(x)
    out.backward(head)
    fused = {k: v.grad().asnumpy().copy() for k, v in layer.collect_params().items()}
    with mx.autograd.record():
        ref, _ = stack.unroll(4, x, layout="NTC", merge_outputs=True)
    ref.backward(head)
    for k, v in layer.collect_params().items():
        np.testing.assert_allclose(fused[k], v.grad().asnumpy(), rtol=1e-4, atol=1e-6)
    assert np.abs(fused[layer.prefix + "r0_i2h_weight"]).max() > 0


def test_state_errors():
    layer = rnn.LSTM(4, input_size=3)
    layer.initialize()
    x = nd.ones((5, 2, 3))
    with pytest.raises(ValueError, match=r"Invalid recurrent state shape. Expecting \(1, 2, 4\)"):
        layer(x, [nd.zeros((1, 3, 4)), nd.zeros((1, 2, 4))])
    with pytest.raises(ValueError, match="expects 2 state arrays, got 1"):
        layer(x, nd.zeros((1, 2, 4)))
    with pytest.raises(ValueError, match="input_size=3"):
        layer(nd.ones((5, 2, 7)))
    with pytest.raises(ValueError, match="layout"):
        rnn.GRU(3, layout="NCT")
    with pytest.raises(ValueError, match="activation"):
        rnn.RNN(3, activation="sigmoid")
    with pytest.raises(mx.MXNetError, match="projection_size"):
        rnn.LSTM(3, projection_size=2)
    with pytest.raises(ValueError, match="use_sequence_length"):
        layer(x, layer.begin_state(2), nd.array([1, 2]))


def test_single_state_passed_as_array():
    layer = rnn.GRU(4, input_size=3)
    layer.initialize()
    out, states = layer(nd.ones((5, 2, 3)), nd.zeros((1, 2, 4)))
    assert out.shape == (5, 2, 4) and [s.shape for s in states] == [(1, 2, 4)]
    np.testing.assert_allclose(states[0].asnumpy(), out[-1:].asnumpy(), rtol=1e-6)


# ----------------------------------------------------------------------------
# Variable lengths

def _per_sample(cell_fn, x, lengths):
    """Run each sample alone on its valid prefix (NTC)."""
    outs, states = [], []
    for n, length in enumerate(lengths):
        y, s = cell_fn(nd.array(x[n:n + 1, :length]), length)
        outs.append(y.asnumpy()[0])
        states.append([st.asnumpy()[0] for st in s])
    return outs, states


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_unroll_valid_length(mode):
    cell = make_cell(mode, 3, input_size=2)
    cell.initialize(mx.init.Uniform(0.5))
    x = rand(3, 5, 2)
    lengths = [5, 2, 3]
    out, states = cell.unroll(5, nd.array(x), layout="NTC", valid_length=nd.array(lengths))
    assert isinstance(out, nd.NDArray) and out.shape == (3, 5, 3)  # merged with valid_length
    refs, ref_states = _per_sample(
        lambda xs, n: cell.unroll(n, xs, layout="NTC", merge_outputs=True), x, lengths)
    for n, length in enumerate(lengths):
        np.testing.assert_allclose(out[n, :length].asnumpy(), refs[n], rtol=1e-5, atol=1e-6)
        assert np.all(out[n, length:].asnumpy() == 0)
        for s, r in zip(states, ref_states[n]):
            np.testing.assert_allclose(s[n].asnumpy(), r, rtol=1e-5, atol=1e-6)


def test_bidirectional_valid_length():
    bi = rnn.BidirectionalCell(rnn.LSTMCell(3, input_size=2), rnn.GRUCell(3, input_size=2))
    bi.initialize(mx.init.Uniform(0.5))
    x = rand(3, 5, 2)
    lengths = [4, 1, 5]
    out, states = bi.unroll(5, nd.array(x), layout="NTC", valid_length=nd.array(lengths))
    assert out.shape == (3, 5, 6) and [s.shape for s in states] == [(3, 3)] * 3
    refs, ref_states = _per_sample(
        lambda xs, n: bi.unroll(n, xs, layout="NTC", merge_outputs=True), x, lengths)
    for n, length in enumerate(lengths):
        np.testing.assert_allclose(out[n, :length].asnumpy(), refs[n], rtol=1e-5, atol=1e-6)
        assert np.all(out[n, length:].asnumpy() == 0)
        for s, r in zip(states, ref_states[n]):
            np.testing.assert_allclose(s[n].asnumpy(), r, rtol=1e-5, atol=1e-6)


def test_bidirectional_backward_half_reads_reversed_input():
    left, right = rnn.RNNCell(2, input_size=1), rnn.RNNCell(2, input_size=1)
    bi = rnn.BidirectionalCell(left, right)
    bi.initialize(mx.init.Uniform(0.5))
    x = nd.array(rand(4, 1, 1))                                  # TNC
    out, _ = bi.unroll(4, x, layout="TNC", merge_outputs=True)
    r_out, _ = right.unroll(4, nd.flip(x, axis=0), layout="TNC",
                            merge_outputs=True)
    np.testing.assert_allclose(out[:, :, 2:].asnumpy(), nd.flip(r_out, axis=0).asnumpy(),
                               rtol=1e-6)
    with pytest.raises(NotImplementedError):
        bi(x[0], bi.begin_state(batch_size=1))


@pytest.mark.parametrize("bidirectional", [False, True])
def test_layer_sequence_length(bidirectional):
    layer = rnn.LSTM(3, num_layers=2, bidirectional=bidirectional, input_size=2,
                     layout="NTC", use_sequence_length=True)
    layer.initialize(mx.init.Uniform(0.5))
    plain = rnn.LSTM(3, num_layers=2, bidirectional=bidirectional, input_size=2,
                     layout="NTC", params=layer.collect_params())
    x = rand(3, 5, 2)
    lengths = [5, 2, 3]
    out, (h, c) = layer(nd.array(x), layer.begin_state(3), nd.array(lengths))
    assert out.shape == (3, 5, 6 if bidirectional else 3)
    for n, length in enumerate(lengths):
        ref, (rh, rc) = plain(nd.array(x[n:n + 1, :length]), plain.begin_state(1))
        np.testing.assert_allclose(out[n, :length].asnumpy(), ref[0].asnumpy(), rtol=1e-5,
                                   atol=1e-6)
        assert np.all(out[n, length:].asnumpy() == 0)
        np.testing.assert_allclose(h[:, n].asnumpy(), rh[:, 0].asnumpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(c[:, n].asnumpy(), rc[:, 0].asnumpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="sequence_length"):
        layer(nd.array(x))


# ----------------------------------------------------------------------------
# Containers and modifiers

def test_sequential_step_equals_unroll():
    stack = rnn.SequentialRNNCell()
    with stack.name_scope():
        stack.add(rnn.LSTMCell(4, input_size=3))
        stack.add(rnn.GRUCell(3, input_size=4))
    stack.initialize(mx.init.Uniform(0.5))
    x = rand(2, 4, 3)
    out, states = stack.unroll(4, nd.array(x), layout="NTC", merge_outputs=True)
    s = stack.begin_state(batch_size=2)
    for t in range(4):
        y, s = stack(nd.array(x[:, t]), s)
        np.testing.assert_allclose(y.asnumpy(), out[:, t].asnumpy(), rtol=1e-5, atol=1e-6)
    assert len(states) == 3 and len(stack) == 2
    for a, b in zip(states, s):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)


def test_residual_cell():
    base = rnn.GRUCell(3, input_size=3)
    res = rnn.ResidualCell(base)
    res.initialize(mx.init.Uniform(0.5))
    x = rand(2, 4, 3)
    out, _ = res.unroll(4, nd.array(x), layout="NTC", merge_outputs=True)
    base._modified = False
    ref, _ = base.unroll(4, nd.array(x), layout="NTC", merge_outputs=True)
    base._modified = True
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy() + x, rtol=1e-6)
    y, _ = res(nd.array(x[:, 0]), res.begin_state(batch_size=2))
    np.testing.assert_allclose(y.asnumpy(), out[:, 0].asnumpy(), rtol=1e-6)
    with pytest.raises(AssertionError, match="modifier"):
        base.begin_state(batch_size=2)
    # valid_length: the residual input is masked like the output.
    masked, _ = res.unroll(4, nd.array(x), layout="NTC", valid_length=nd.array([2, 4]))
    assert np.all(masked[0, 2:].asnumpy() == 0)


def test_dropout_cell():
    cell = rnn.DropoutCell(0.5)
    x = nd.ones((4, 6, 10))
    out, states = cell.unroll(6, x, layout="NTC", merge_outputs=True)
    assert states == [] and np.all(out.asnumpy() == 1)             # predict mode
    with mx.autograd.train_mode():
        out, _ = cell.unroll(6, x, layout="NTC", merge_outputs=True)
    values = set(np.unique(out.asnumpy()))
    assert values == {0.0, 2.0}


def test_zoneout_cell():
    base = rnn.RNNCell(50, input_size=4)
    zone = rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5)
    zone.initialize(mx.init.Uniform(0.5))
    x = nd.array(rand(3, 5, 4))
    out, _ = zone.unroll(5, x, layout="NTC", merge_outputs=True)   # predict mode: no zoneout
    base._modified = False
    ref, _ = base.unroll(5, x, layout="NTC", merge_outputs=True)
    base._modified = True
    np.testing.assert_allclose(out.asnumpy(), ref.asnumpy(), rtol=1e-6)
    with mx.autograd.train_mode():
        out, _ = zone.unroll(5, x, layout="NTC", merge_outputs=False)
    # Each unit either took its new value or kept the previous output (0 at step 0).
    first = out[0].asnumpy()
    assert 0 < np.mean(first == 0) < 1
    with pytest.raises(AssertionError, match="Bidirectional"):
        rnn.ZoneoutCell(rnn.BidirectionalCell(rnn.RNNCell(2), rnn.RNNCell(2)))
    with pytest.raises(AssertionError, match="modified twice"):
        rnn.ZoneoutCell(base)


@pytest.mark.parametrize("make", [lambda: rnn.GRU(3, input_size=2),
                                  lambda: rnn.LSTM(3, 2, bidirectional=True, layout="NTC")])
def test_hybridized_layer_keeps_results(make):
    layer = make()
    layer.initialize()
    x = nd.array(rand(4, 4, 2))
    before = layer(x).asnumpy()
    out, states = layer(x, layer.begin_state(4))
    layer.hybridize()
    # Called without and with states: one traced graph serves both (states are dropped
    # outside the graph).
    np.testing.assert_allclose(layer(x).asnumpy(), before, rtol=1e-6)
    out2, states2 = layer(x, layer.begin_state(4))
    np.testing.assert_allclose(out2.asnumpy(), out.asnumpy(), rtol=1e-6)
    for a, b in zip(states, states2):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)
    with mx.autograd.record():
        y = layer(x)
    y.backward()
    assert float(layer.l0_h2h_weight.grad().abs().sum().asscalar()) > 0


def test_hybridized_cells_keep_results():
    stack = rnn.HybridSequentialRNNCell()
    with stack.name_scope():
        stack.add(rnn.LSTMCell(3))
        stack.add(rnn.DropoutCell(0.2))
        stack.add(rnn.ResidualCell(rnn.GRUCell(3)))
    stack.initialize()
    x = nd.array(rand(2, 3, 4))
    before, _ = stack.unroll(3, x, merge_outputs=True)
    stack.hybridize()
    after, _ = stack.unroll(3, x, merge_outputs=True)
    np.testing.assert_allclose(after.asnumpy(), before.asnumpy(), rtol=1e-6)


def test_cell_unroll_on_symbols():
    cell = rnn.LSTMCell(3, input_size=4, prefix="l_")
    cell.initialize()
    out, _ = cell.unroll(2, mx.sym.var("x"), layout="NTC", merge_outputs=True,
                         begin_state=[mx.sym.var("h"), mx.sym.var("c")])
    assert set(out.list_arguments()) == {"x", "h", "c", "l_i2h_weight", "l_i2h_bias",
                                         "l_h2h_weight", "l_h2h_bias"}
    x = rand(2, 2, 4)
    values = {k: v.data() for k, v in cell.collect_params().items()}
    got = out.eval(x=nd.array(x), h=nd.zeros((2, 3)), c=nd.zeros((2, 3)), **values)[0]
    ref, _ = cell.unroll(2, nd.array(x), layout="NTC", merge_outputs=True)
    np.testing.assert_allclose(got.asnumpy(), ref.asnumpy(), rtol=1e-6)


# ----------------------------------------------------------------------------
# Numeric gradients (float64)

@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_cell_numeric_gradient(mode):
    cell = make_cell(mode, 2, input_size=2)
    cell.initialize(mx.init.Uniform(0.8))
    cell.cast("float64")
    x = nd.array(np.random.uniform(-1, 1, (3, 2, 2)), dtype="float64")   # TNC
    head = nd.array(np.random.uniform(-1, 1, (3, 2, 2)), dtype="float64")
    x.attach_grad()

    def loss():
        out, states = cell.unroll(3, x, layout="TNC", merge_outputs=True)
        return (out * head).sum() + states[-1].sum()

    with mx.autograd.record():
        value = loss()
    value.backward()
    eps = 1e-6
    for arr, grad in [(x, x.grad)] + [(p.data(), p.grad()) for p in
                                      cell.collect_params().values()]:
        flat = arr.asnumpy().ravel()
        numeric = np.zeros_like(flat)
        for i in range(flat.size):
            for sign in (1, -1):
                shifted = flat.copy()
                shifted[i] += sign * eps
                arr[:] = shifted.reshape(arr.shape)
                numeric[i] += sign * float(loss().asscalar()) / (2 * eps)
            arr[:] = flat.reshape(arr.shape)
        np.testing.assert_allclose(grad.asnumpy().ravel(), numeric, rtol=1e-5, atol=1e-8)


def test_sizes_no_machine_holds_fail_at_once():
    with pytest.raises(mx.MXNetError, match=r"LSTM: num_layers=1000000000 with hidden_size=10 "
                                            r"needs .* more than this machine's memory"):
        rnn.LSTM(10, num_layers=10 ** 9)
    with pytest.raises(ValueError, match="GRU: num_layers must be a positive integer, got 0"):
        rnn.GRU(10, num_layers=0)
