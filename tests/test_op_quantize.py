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
