"""Rows for the asymmetric quantization ops (quantize_asym, quantized_concat, the int8
LSTM quantized_rnn): MXNet's numbers, or the integer reference of test_op_quantize.py."""
import numpy as np

import mxlite as mx
from optable import Spec, row_tests
from test_op_quantize import _RAMP, _int8_lstm_reference

F32 = np.float32


def _lstm_case():
    rng = np.random.RandomState(3)
    steps, batch, n_in, hsize = 5, 3, 4, 6
    x = rng.uniform(-1, 1, (steps, batch, n_in)).astype(F32)
    w = rng.uniform(-0.5, 0.5, 4 * hsize * (n_in + hsize + 2)).astype(F32)
    h0, c0 = (rng.uniform(-0.5, 0.5, (1, batch, hsize)).astype(F32) for _ in range(2))
    q, s, shift = (y.asnumpy() for y in mx.nd.contrib.quantize_asym(mx.nd.array(x)))
    return [q, w, h0, c0, s, shift], hsize


def _lstm_ref(q, w, h0, c0, s, shift, hsize):
    out, h, c = _int8_lstm_reference(q.astype(np.float64), float(s[0]), float(shift[0]),
                                     w.astype(np.float64), h0[0], c0[0], hsize)
    return [out.astype(F32), h[None].astype(F32), c[None].astype(F32)]


_LSTM_IN, _H = _lstm_case()
_KW = dict(state_size=_H, num_layers=1, mode="lstm", state_outputs=True)

SPECS = [
    # MXNet 1.9.1's values for a ramp (test_op_quantize.py)
    Spec("quantize_asym", lambda x: mx.nd.contrib.quantize_asym(x),
         lambda x: [np.array([0, 11, 22, 33, 44, 55, 67, 78, 89, 100, 111, 122, 133, 144, 155,
                              166, 177, 188, 200, 211, 222, 233, 244, 255],
                             np.uint8).reshape(2, 3, 4),
                    np.array([63.75], F32), np.array([82.875], F32)],
         [_RAMP], grad=(), op="_contrib_quantize_asym"),
    # two int8 arrays rescaled to the widest range, as MXNet
    Spec("quantized_concat", lambda *x: mx.nd.contrib.quantized_concat(*x, num_args=2, dim=1),
         lambda *x: [np.array([[0, -2, 50, 10, 20], [4, 4, -64, -30, 127]], np.int8),
                     np.array([-2.0], F32), np.array([4.0], F32)],
         [np.array([[1, -5, 100], [7, 8, -128]], np.int8),
          np.array([[10, 20], [-30, 127]], np.int8),
          np.array([-2.0], F32), np.array([2.0], F32), np.array([-1.0], F32),
          np.array([4.0], F32)], grad=(), op="_contrib_quantized_concat"),
    Spec("quantized_rnn_lstm", lambda *x: mx.nd.contrib.quantized_rnn(*x, **_KW),
         lambda *x: _lstm_ref(*x, _H), _LSTM_IN, grad=(), op="_contrib_quantized_rnn",
         rtol=1e-4, atol=1e-5),
]
globals().update(row_tests(SPECS))
