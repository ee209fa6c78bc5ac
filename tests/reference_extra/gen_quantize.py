"""Golden data for the quantization conversion ops from real MXNet 1.9.1 (run with its
interpreter): quantize, quantize_v2, dequantize and requantize on random data.
Keys: <case>/in<i> (inputs), <case>/out<i> (outputs); cases listed in `cases`."""
import json
import os

import mxnet as mx
import numpy as np

np.random.seed(0)
C = mx.nd.contrib
out, cases = {}, {}
x = np.random.uniform(-3, 2, (4, 5, 6)).astype('float32')
xpos = np.abs(x)
i32 = np.random.randint(-2 ** 30, 2 ** 30, (3, 7)).astype('int32')
rng = (np.array([-2.5], 'float32'), np.array([1.5], 'float32'))
def run(name, fn, inputs, params):
    res = fn(*[mx.nd.array(a, dtype=a.dtype) for a in inputs], **params)
    res = res if isinstance(res, (list, tuple)) else [res]
    for i, a in enumerate(inputs): out['%s/in%d' % (name, i)] = a
    for i, r in enumerate(res): out['%s/out%d' % (name, i)] = r.asnumpy()
    cases[name] = params
run('quantize_u8', C.quantize, [x, *rng], dict(out_type='uint8'))
run('quantize_i8', C.quantize, [x, *rng], dict(out_type='int8'))
run('quantize_v2_i8', C.quantize_v2, [x], {})
run('quantize_v2_u8', C.quantize_v2, [xpos], dict(out_type='uint8'))
run('quantize_v2_calib_i8', C.quantize_v2, [x], dict(min_calib_range=-1.0, max_calib_range=0.5))
run('quantize_v2_auto_u8', C.quantize_v2, [x], dict(out_type='auto', min_calib_range=0.0, max_calib_range=1.0))
q = C.quantize_v2(mx.nd.array(x))
run('dequantize_i8', C.dequantize, [q[0].asnumpy(), q[1].asnumpy(), q[2].asnumpy()], {})
qu = C.quantize_v2(mx.nd.array(xpos), out_type='uint8')
run('dequantize_u8', C.dequantize, [qu[0].asnumpy(), qu[1].asnumpy(), qu[2].asnumpy()], {})
r32 = (np.array([-30.0], 'float32'), np.array([40.0], 'float32'))
run('requantize_i8', C.requantize, [i32, *r32], {})
run('requantize_calib', C.requantize, [i32, *r32], dict(min_calib_range=-5.0, max_calib_range=5.0))
run('requantize_auto_u8', C.requantize, [np.abs(i32), *r32], dict(out_type='auto', min_calib_range=0.0, max_calib_range=8.0))
out['cases'] = np.array(json.dumps(cases))
np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'quantize_mxnet191.npz'), **out)
