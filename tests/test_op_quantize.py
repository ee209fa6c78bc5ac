"""The quantization conversion ops (contrib quantize, quantize_v2, dequantize,
requantize) against MXNet 1.9.1's CPU build, in mx.nd, mx.sym and mx.contrib."""
import json
import os

import numpy as np
import pytest

import mxlite as mx
from optable import Spec, row_tests

GOLD = np.load(os.path.join(os.path.dirname(__file__), "reference_extra",
                            "quantize_mxnet191.npz"))
CASES = json.loads(str(GOLD["cases"]))
OPS = {"quantize_u8": "quantize", "quantize_i8": "quantize", "dequantize_i8": "dequantize",
       "dequantize_u8": "dequantize"}


def _op(case):
    return OPS.get(case, "quantize_v2" if case.startswith("quantize_v2") else
                   case.split("_")[0])


def _inputs(case):
    n = sum(1 for k in GOLD.files if k.startswith(case + "/in"))
    return [GOLD["%s/in%d" % (case, i)] for i in range(n)]


def _golden_rows(gold, cases, op_of, params_of):
    """One row per golden case: the op on MXNet's inputs must give MXNet's outputs."""
    rows = []
    for case in sorted(cases):
        n_in = sum(1 for k in gold.files if k.startswith(case + "/in"))
        n_out = sum(1 for k in gold.files if k.startswith(case + "/out"))
        outs = [gold["%s/out%d" % (case, i)] for i in range(n_out)]
        fn, params = getattr(mx.nd.contrib, op_of(case)), params_of(case)
        rows.append(Spec(case, lambda *xs, fn=fn, params=params: fn(*xs, **params),
                         lambda *xs, outs=outs: outs,
                         [gold["%s/in%d" % (case, i)] for i in range(n_in)], grad=(),
                         rtol=1e-6, atol=1e-8))
    return rows


def test_symbol_face_and_round_trip():
    x = mx.nd.array(np.random.uniform(-1, 1, (3, 4)))
    data = mx.sym.var("data")
    q = mx.sym.contrib.quantize_v2(data)
    assert q.list_outputs() == ["quantize_v20_output0", "quantize_v20_output1",
                                "quantize_v20_output2"]
    deq = mx.sym.contrib.dequantize(q[0], q[1], q[2])
    y = deq.eval(data=x)[0]
    real = np.abs(x.asnumpy()).max()
    assert np.allclose(y.asnumpy(), x.asnumpy(), atol=real / 127.5)   # one level
    _, out_types, _ = q.infer_type(data="float32")
    assert out_types == [np.int8, np.float32, np.float32]
    assert q.infer_shape(data=(3, 4))[1] == [(3, 4), (1,), (1,)]
    assert mx.contrib.nd.quantize is mx.nd.contrib.quantize


def test_passthrough_and_errors():
    q = mx.nd.array([[1, -2]], dtype="int8")
    out, lo, hi = mx.nd.contrib.quantize_v2(q)
    assert out.asnumpy().tolist() == [[1, -2]] and (lo.asscalar(), hi.asscalar()) == (-127.5,
                                                                                      127.5)
    with pytest.raises(mx.MXNetError, match="int8 or uint8"):
        mx.nd.contrib.dequantize(mx.nd.ones((2,)), mx.nd.array([-1]), mx.nd.array([1]))
    with pytest.raises(mx.MXNetError, match="int32"):
        mx.nd.contrib.requantize(mx.nd.ones((2,)), mx.nd.array([-1]), mx.nd.array([1]))
    with pytest.raises(ValueError, match="out_type"):
        mx.nd.contrib.quantize(mx.nd.ones((2,)), mx.nd.array([-1]), mx.nd.array([1]),
                               out_type="int4")
    with pytest.raises(mx.MXNetError, match="all zero"):
        mx.nd.contrib.quantize(mx.nd.ones((2,)), mx.nd.array([0]), mx.nd.array([0]))


OPS_GOLD = np.load(os.path.join(os.path.dirname(__file__), "reference_extra",
                                "quantized_ops_mxnet191.npz"))
OPS_CASES = json.loads(str(OPS_GOLD["cases"]))


_ENTROPY = np.load(os.path.join(os.path.dirname(__file__), "reference_extra",
                                "calibrate_entropy_mxnet191.npz"))
SPECS = ([Spec("calibrate_entropy_c%d" % k, lambda h, e, k=k: mx.nd.contrib.calibrate_entropy(
             h, e, num_quantized_bins=int(_ENTROPY["c%d/nqb" % k])),
               lambda h, e, k=k: [_ENTROPY["c%d/t" % k], _ENTROPY["c%d/d" % k]],
               [_ENTROPY["c%d/hist" % k], _ENTROPY["c%d/edges" % k]], grad=(), rtol=1e-6)
          for k in range(3)]
         + _golden_rows(GOLD, CASES, _op, lambda case: CASES[case])
         + _golden_rows(OPS_GOLD, OPS_CASES, lambda case: OPS_CASES[case]["op"],
                        lambda case: OPS_CASES[case]["params"]))
globals().update(row_tests(SPECS))


def test_quantized_fully_connected_dequantizes_to_the_float_product():
    x = mx.nd.array(np.random.uniform(-1, 1, (3, 8)))
    w = mx.nd.array(np.random.uniform(-1, 1, (4, 8)))
    qx, qw = mx.nd.contrib.quantize_v2(x), mx.nd.contrib.quantize_v2(w)
    y, lo, hi = mx.nd.contrib.quantized_fully_connected(qx[0], qw[0], qx[1], qx[2], qw[1],
                                                        qw[2], num_hidden=4, no_bias=True)
    approx = y.asnumpy() * hi.asscalar() / 2147483647.0
    assert np.allclose(approx, x.asnumpy() @ w.asnumpy().T, atol=0.05)
    sym = mx.sym.contrib.quantized_fully_connected(
        *[mx.sym.var(n) for n in ("d", "w", "dmin", "dmax", "wmin", "wmax")], num_hidden=4,
        no_bias=True)
    assert sym.infer_shape(d=(3, 8), w=(4, 8), dmin=(1,), dmax=(1,), wmin=(1,),
                           wmax=(1,))[1] == [(3, 4), (1,), (1,)]
    with pytest.raises(mx.MXNetError, match="weight has shape"):
        mx.nd.contrib.quantized_fully_connected(qx[0], qw[0], qx[1], qx[2], qw[1], qw[2],
                                                num_hidden=5, no_bias=True)
    with pytest.raises(mx.MXNetError, match="only act_type='relu'"):
        mx.nd.contrib.quantized_act(*qx, act_type="tanh")


def test_calibrate_entropy_matches_mxnet():
    g = np.load(os.path.join(os.path.dirname(__file__), "reference_extra",
                             "calibrate_entropy_mxnet191.npz"))
    for k in range(3):
        t, d = mx.nd.contrib.calibrate_entropy(mx.nd.array(g["c%d/hist" % k]),
                                               mx.nd.array(g["c%d/edges" % k]),
                                               num_quantized_bins=int(g["c%d/nqb" % k]))
        assert t.asnumpy()[0] == g["c%d/t" % k][0]
        assert np.allclose(d.asnumpy(), g["c%d/d" % k], rtol=1e-6)
    with pytest.raises(mx.MXNetError, match="hist_edges must have"):
        mx.nd.contrib.calibrate_entropy(mx.nd.ones(5), mx.nd.ones(5), num_quantized_bins=3)


# -- quantize_asym and quantized_concat (MXNet 1.9.1 values, its MKL-DNN kernels) ----------

_RAMP = np.linspace(-1.3, 2.7, 24).astype(np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize("x, kw, want, scale, shift", [
    (_RAMP, {}, [0, 11, 22, 33, 44, 55, 67, 78, 89, 100, 111, 122, 133, 144, 155, 166, 177,
                 188, 200, 211, 222, 233, 244, 255], 63.75, 82.875),
    (_RAMP, dict(min_calib_range=-1.0, max_calib_range=2.0),
     [0, 0, 4, 19, 34, 48, 63, 78, 93, 108, 122, 137, 152, 167, 181, 196, 211, 226, 241]
     + [255] * 5, 85.0, 85.0),
    # ties round half to even
    (np.array([0, 0.5, 1.5, 2.5, 3.5, 255], np.float32).reshape(1, 2, 3),
     dict(min_calib_range=0.0, max_calib_range=255.0), [0, 0, 2, 2, 4, 255], 1.0, 0.0),
    (np.array([-3, -1, 0, 1, 2, 4], np.float32).reshape(1, 2, 3), {},
     [0, 73, 109, 146, 182, 255], 36.42856979370117, 109.28572082519531),
])
def test_quantize_asym_matches_mxnet(x, kw, want, scale, shift):
    q, s, b = mx.nd.contrib.quantize_asym(mx.nd.array(x), **kw)
    assert q.dtype == np.uint8 and q.shape == x.shape
    assert q.asnumpy().ravel().tolist() == want
    assert s.dtype == np.float32 and s.asnumpy().tolist() == [np.float32(scale)]
    assert b.asnumpy().tolist() == [np.float32(shift)]
    # the same on other ranks (where MXNet's CPU build crashes) and through symbols
    q2 = mx.nd.contrib.quantize_asym(mx.nd.array(x.reshape(-1)), **kw)[0]
    assert q2.asnumpy().tolist() == want
    sym = mx.sym.contrib.quantize_asym(mx.sym.var("x"), name="qa", **kw)
    assert sym.list_outputs() == ["qa_output", "qa_scale", "qa_shift"]
    assert sym.eval(x=mx.nd.array(x))[0].asnumpy().ravel().tolist() == want


def test_quantize_asym_errors():
    with pytest.raises(mx.MXNetError, match="quantize_asym: data must be float32"):
        mx.nd.contrib.quantize_asym(mx.nd.ones((2,), dtype="float64"))
    with pytest.raises(mx.MXNetError, match="quantize_asym: the range .* is empty"):
        mx.nd.contrib.quantize_asym(mx.nd.ones((2, 2)))


def _q(values, dtype):
    return mx.nd.array(np.array(values), dtype=dtype)


def _r(v):
    return mx.nd.array([v])


I8A = ([[1, -5, 100], [7, 8, -128]], "int8", -2.0, 2.0)
I8B = ([[10, 20], [-30, 127]], "int8", -1.0, 4.0)
U8A = ([[1, 5, 200], [7, 8, 255]], "uint8", 0.0, 3.0)
U8B = ([[10, 20], [30, 127]], "uint8", 0.0, 1.0)


@pytest.mark.parametrize("a, b, want, dtype, lo, hi", [
    (I8A, I8B, [[0, -2, 50, 10, 20], [4, 4, -64, -30, 127]], np.int8, -2.0, 4.0),
    (U8A, U8B, [[1, 5, 200, 3, 7], [7, 8, 255, 10, 42]], np.uint8, 0.0, 3.0),
    (I8A, U8B, [[1, -5, 100, 2, 5], [7, 8, -128, 7, 32]], np.int8, -2.0, 2.0),
])
def test_quantized_concat_rescales_to_the_widest_range_as_mxnet(a, b, want, dtype, lo, hi):
    xa, xb = _q(a[0], a[1]), _q(b[0], b[1])
    ranges = [_r(a[2]), _r(a[3]), _r(b[2]), _r(b[3])]
    y, ylo, yhi = mx.nd.contrib.quantized_concat(xa, xb, *ranges, num_args=2, dim=1)
    assert y.dtype == dtype and y.asnumpy().tolist() == want
    assert (ylo.asnumpy().tolist(), yhi.asnumpy().tolist()) == ([lo], [hi])
    # num_args may be left out: a third of the inputs
    y2 = mx.nd.contrib.quantized_concat(xa, xb, *ranges, dim=1)[0]
    assert y2.asnumpy().tolist() == want


def test_quantized_concat_symbol_names_its_ranges_as_mxnet():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.contrib.quantized_concat(a, b, num_args=2, dim=1, name="qc")
    assert s.list_arguments() == ["a", "b", "qc_arg0_min", "qc_arg0_max", "qc_arg1_min",
                                  "qc_arg1_max"]
    assert s.list_outputs() == ["qc_output", "qc_min_output", "qc_max_output"]
    args, outs, _ = s.infer_shape(a=(2, 3), b=(2, 2))
    assert args[2:] == [(1,)] * 4 and outs == [(2, 5), (1,), (1,)]
    s = mx.sym.load_json(s.tojson())
    got = s.eval(a=_q(I8A[0], "int8"), b=_q(I8B[0], "int8"), qc_arg0_min=_r(-2.0),
                 qc_arg0_max=_r(2.0), qc_arg1_min=_r(-1.0), qc_arg1_max=_r(4.0))
    assert got[0].asnumpy().tolist() == [[0, -2, 50, 10, 20], [4, 4, -64, -30, 127]]


def test_quantized_concat_errors():
    a = _q(I8A[0], "int8")
    with pytest.raises(ValueError, match="takes 3 inputs per num_args, got 4"):
        mx.nd.contrib.quantized_concat(a, a, _r(-1.0), _r(1.0))
    with pytest.raises(ValueError, match="num_args=3 but 6 inputs"):
        mx.nd.contrib.quantized_concat(a, a, _r(-1.0), _r(1.0), _r(-1.0), _r(1.0), num_args=3)
    with pytest.raises(mx.MXNetError, match="arg1 must be int8 or uint8"):
        mx.nd.contrib.quantized_concat(a, mx.nd.ones((2, 3)), _r(-1.0), _r(1.0), _r(-1.0),
                                       _r(1.0))


# -- quantized_rnn: MXNet 1.9.1's int8 LSTM fails on this CPU ("could not create a
# primitive descriptor"), so it is checked against its documented arithmetic and the
# float LSTM

def _sigmoid(a):
    return 1 / (1 + np.exp(-a))


def _int8_lstm_reference(q, s, shift, w, h, c, hsize):
    """One layer, one direction, in integers where MKL-DNN's int8 LSTM has them."""
    steps, _, n_in = q.shape
    g = 4 * hsize
    wx = w[:g * n_in].reshape(g, n_in)
    wh = w[g * n_in:g * (n_in + hsize)].reshape(g, hsize)
    b = w[g * (n_in + hsize):g * (n_in + hsize) + g] + w[g * (n_in + hsize) + g:]
    ws = 127 / np.maximum(np.abs(wx).max(axis=1), np.abs(wh).max(axis=1))
    wxq, whq = np.rint(wx * ws[:, None]), np.rint(wh * ws[:, None])    # int8 values
    outs = []
    for t in range(steps):
        hq = np.clip(np.rint(h * s + shift), 0, 255)                   # uint8 values
        acc = (q[t] - shift) @ wxq.T + (hq - shift) @ whq.T              # exact in int32
        a = acc / (s * ws) + b
        i, f, gg, o = (a[:, k * hsize:(k + 1) * hsize] for k in range(4))
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(gg)
        h = _sigmoid(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs), h, c


def test_quantized_rnn_is_the_int8_lstm():
    rng = np.random.RandomState(3)
    steps, batch, n_in, hsize = 5, 3, 4, 6
    x = rng.uniform(-1, 1, (steps, batch, n_in)).astype(np.float32)
    w = rng.uniform(-0.5, 0.5, 4 * hsize * (n_in + hsize + 2)).astype(np.float32)
    h0 = rng.uniform(-0.5, 0.5, (1, batch, hsize)).astype(np.float32)
    c0 = rng.uniform(-0.5, 0.5, (1, batch, hsize)).astype(np.float32)
    q, s, shift = mx.nd.contrib.quantize_asym(mx.nd.array(x))
    kw = dict(state_size=hsize, num_layers=1, mode="lstm", state_outputs=True)
    out, hy, cy = mx.nd.contrib.quantized_rnn(q, mx.nd.array(w), mx.nd.array(h0),
                                              mx.nd.array(c0), s, shift, **kw)
    want = _int8_lstm_reference(q.asnumpy().astype(np.float64), float(s.asscalar()),
                                float(shift.asscalar()), w.astype(np.float64), h0[0], c0[0],
                                hsize)
    for got, ref in zip((out, hy[0], cy[0]), want):
        np.testing.assert_allclose(got.asnumpy(), ref, rtol=1e-4, atol=1e-5)
    # and within quantization error of the float LSTM
    ref = mx.nd.RNN(mx.nd.array(x), mx.nd.array(w), mx.nd.array(h0), mx.nd.array(c0), **kw)
    assert np.abs(out.asnumpy() - ref[0].asnumpy()).max() < 0.02


def test_quantized_rnn_stacks_and_directions_follow_the_float_lstm():
    rng = np.random.RandomState(4)
    kw = dict(state_size=5, num_layers=2, bidirectional=True, mode="lstm")
    x = rng.uniform(-1, 1, (4, 2, 3)).astype(np.float32)
    n = 2 * (20 * (3 + 5 + 2)) + 2 * (20 * (10 + 5 + 2))
    w, h0 = rng.uniform(-0.5, 0.5, n).astype(np.float32), np.zeros((4, 2, 5), np.float32)
    q, s, shift = mx.nd.contrib.quantize_asym(mx.nd.array(x))
    out = mx.nd.contrib.quantized_rnn(q, mx.nd.array(w), mx.nd.array(h0), mx.nd.array(h0),
                                      s, shift, **kw)
    ref = mx.nd.RNN(mx.nd.array(x), mx.nd.array(w), mx.nd.array(h0), mx.nd.array(h0), **kw)
    assert out.shape == (4, 2, 10)
    assert np.abs(out.asnumpy() - ref.asnumpy()).max() < 0.02
    sym = mx.sym.contrib.quantized_rnn(mx.sym.var("data"), state_outputs=True, name="qr", **kw)
    assert sym.list_outputs() == ["qr_output", "qr_state_output", "qr_statecell_ouput"]
    assert sym.list_arguments()[-2:] == ["qr_data_scale", "qr_data_shift"]
    assert sym.infer_shape(data=(4, 2, 3))[1] == [(4, 2, 10), (4, 2, 5), (4, 2, 5)]


def test_quantized_rnn_errors():
    q = mx.nd.zeros((2, 1, 3), dtype="uint8")
    w, h = mx.nd.zeros((4 * 2 * (3 + 2 + 2),)), mx.nd.zeros((1, 1, 2))
    with pytest.raises(mx.MXNetError, match="only mode='lstm'"):
        mx.nd.contrib.quantized_rnn(q, mx.nd.zeros((3 * 2 * 7,)), h, h, _r(1.0), _r(0.0),
                                    state_size=2, num_layers=1, mode="gru")
    with pytest.raises(mx.MXNetError, match="data must be uint8"):
        mx.nd.contrib.quantized_rnn(q.astype("float32"), w, h, h, _r(1.0), _r(0.0),
                                    state_size=2, num_layers=1, mode="lstm")


def test_symbol_range_inputs_are_float32_whatever_the_data():
    # MXNet's type inference: a quantized op's min/max inputs are float32
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.contrib.quantized_concat(a, b, num_args=2, dim=1, name="qc")
    args, _, _ = s.infer_type(a=np.int8, b=np.uint8)
    assert args == [np.int8, np.uint8] + [np.float32] * 4
    ex = mx.sym.contrib.quantized_flatten(a, name="qf").simple_bind(
        mx.cpu(), a=(2, 3), qf_min_data=(1,), qf_max_data=(1,), type_dict={"a": "int8"})
    assert ex.arg_dict["qf_min_data"].dtype == np.float32
    ex.arg_dict["qf_min_data"][:] = -0.5
    ex.arg_dict["qf_max_data"][:] = 0.5
    out = ex.forward(a=mx.nd.ones((2, 3), dtype="int8"))
    assert out[1].asnumpy().tolist() == [-0.5] and out[2].asnumpy().tolist() == [0.5]
    q = mx.sym.contrib.quantized_rnn(a, state_size=2, num_layers=1, mode="lstm", name="qr")
    assert q.infer_type(a=np.uint8)[0] == [np.uint8] + [np.float32] * 5
