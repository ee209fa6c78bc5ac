"""Golden data for mxlite's int8 compute ops from real MXNet 1.9.1's CPU build (run with its
interpreter): quantized_flatten, quantized_act, quantized_pooling, quantized_embedding,
quantized_fully_connected, quantized_conv, quantized_elemwise_add, quantized_batch_norm and
quantized_elemwise_mul. Keys: <case>/in<i>, <case>/out<i>; params in `cases`."""
import json
import os

import mxnet as mx
import numpy as np

np.random.seed(0)
C = mx.nd.contrib
out, cases = {}, {}
def qv2(shape, lo=-1.0, hi=1.0, **kw):
    return [a.asnumpy() for a in C.quantize_v2(mx.nd.array(np.random.uniform(lo, hi, shape).astype('float32')), **kw)]
def run(name, op, inputs, params):
    res = getattr(C, op)(*[mx.nd.array(a, dtype=a.dtype) for a in inputs], **params)
    res = res if isinstance(res, (list, tuple)) else [res]
    for i, a in enumerate(inputs): out['%s/in%d' % (name, i)] = a
    for i, r in enumerate(res): out['%s/out%d' % (name, i)] = r.asnumpy()
    cases[name] = {'op': op, 'params': params}
d4 = qv2((2, 3, 6, 6))
run('flatten', 'quantized_flatten', d4, {})
run('act_relu', 'quantized_act', d4, dict(act_type='relu'))
run('pool_max', 'quantized_pooling', d4, dict(kernel=(2, 2), stride=(2, 2), pool_type='max'))
run('pool_max_pad', 'quantized_pooling', d4, dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type='max'))
run('pool_avg', 'quantized_pooling', d4, dict(kernel=(2, 2), stride=(2, 2), pool_type='avg'))
run('pool_avg3', 'quantized_pooling', d4, dict(kernel=(3, 3), stride=(1, 1), pool_type='avg'))
run('pool_global', 'quantized_pooling', d4, dict(kernel=(1, 1), global_pool=True, pool_type='avg'))
u4 = qv2((2, 3, 6, 6), 0.0, 1.0, out_type='uint8')
run('pool_max_u8', 'quantized_pooling', u4, dict(kernel=(2, 2), stride=(2, 2), pool_type='max'))
w = qv2((7, 5))
run('embedding', 'quantized_embedding', [np.array([[0, 6], [3, 1]], 'float32')] + w, dict(input_dim=7, output_dim=5))
x = qv2((4, 12)); wf = qv2((6, 12)); bf = qv2((6,))
run('fc', 'quantized_fully_connected', [x[0], wf[0], bf[0], x[1], x[2], wf[1], wf[2], bf[1], bf[2]], dict(num_hidden=6))
run('fc_nobias', 'quantized_fully_connected', [x[0], wf[0], x[1], x[2], wf[1], wf[2]], dict(num_hidden=6, no_bias=True))
xu = qv2((4, 12), 0.0, 2.0, out_type='uint8')
run('fc_u8', 'quantized_fully_connected', [xu[0], wf[0], bf[0], xu[1], xu[2], wf[1], wf[2], bf[1], bf[2]], dict(num_hidden=6))
x3 = qv2((2, 3, 4)); w3 = qv2((5, 12)); b3 = qv2((5,))
run('fc_flatten', 'quantized_fully_connected', [x3[0], w3[0], b3[0], x3[1], x3[2], w3[1], w3[2], b3[1], b3[2]], dict(num_hidden=5))
xu8 = qv2((2, 4, 6, 6), 0.0, 1.0, out_type='uint8'); cw = qv2((6, 4, 3, 3)); cb = qv2((6,))
run('conv', 'quantized_conv', [xu8[0], cw[0], cb[0], xu8[1], xu8[2], cw[1], cw[2], cb[1], cb[2]], dict(kernel=(3, 3), num_filter=6, pad=(1, 1)))
run('conv_nobias_stride', 'quantized_conv', [xu8[0], cw[0], xu8[1], xu8[2], cw[1], cw[2]], dict(kernel=(3, 3), num_filter=6, stride=(2, 2), no_bias=True))
run('conv_dilate', 'quantized_conv', [xu8[0], cw[0], cb[0], xu8[1], xu8[2], cw[1], cw[2], cb[1], cb[2]], dict(kernel=(3, 3), num_filter=6, dilate=(2, 2), pad=(2, 2)))
a = qv2((2, 3, 4)); b = qv2((2, 3, 4), -3, 2)
u = qv2((2, 3, 4), 0, 2, out_type='uint8'); u2 = qv2((2, 3, 4), 0, 1, out_type='uint8')
run('add_i8', 'quantized_elemwise_add', [a[0], b[0], a[1], a[2], b[1], b[2]], {})
run('add_calib', 'quantized_elemwise_add', [a[0], b[0], a[1], a[2], b[1], b[2]], dict(min_calib_range=-3.0, max_calib_range=3.0))
run('add_u8', 'quantized_elemwise_add', [u[0], u2[0], u[1], u[2], u2[1], u2[2]], {})
run('add_u8_calib', 'quantized_elemwise_add', [u[0], u2[0], u[1], u[2], u2[1], u2[2]], dict(min_calib_range=0.0, max_calib_range=3.0))
run('add_mixed', 'quantized_elemwise_add', [a[0], u[0], a[1], a[2], u[1], u[2]], {})
run('add_mixed2', 'quantized_elemwise_add', [u[0], b[0], u[1], u[2], b[1], b[2]], dict(min_calib_range=-2.0, max_calib_range=4.0))
d = qv2((2, 3, 4, 4), -2, 2); u = qv2((2, 3, 4, 4), 0, 2, out_type='uint8')
g = np.random.uniform(0.5, 1.5, 3).astype('float32'); b = np.random.uniform(-0.5, 0.5, 3).astype('float32')
mm = np.random.uniform(-0.2, 0.2, 3).astype('float32'); mv = np.random.uniform(0.5, 2, 3).astype('float32')
run('bn', 'quantized_batch_norm', [d[0], g, b, mm, mv, d[1], d[2]], dict(eps=1e-3, min_calib_range=-3.0, max_calib_range=3.0))
run('bn_u8', 'quantized_batch_norm', [u[0], g, b, mm, mv, u[1], u[2]], dict(eps=1e-5, min_calib_range=-2.5, max_calib_range=2.0, fix_gamma=False))
# quantized_elemwise_mul fails when called imperatively in MXNet 1.9.1: run it bound
a = qv2((3, 5)); b = qv2((3, 5), -2, 2)
names = ['lhs', 'rhs', 'lhs_min', 'lhs_max', 'rhs_min', 'rhs_max']
vals = [a[0], b[0], a[1], a[2], b[1], b[2]]
for name, params in (('mul', {}), ('mul_calib', dict(min_calib_range=-1.0, max_calib_range=1.5)),
                     ('mul_float', dict(enable_float_output=True))):
    s = mx.sym.contrib.quantized_elemwise_mul(*[mx.sym.var(n) for n in names], **params)
    res = s.bind(mx.cpu(), {n: mx.nd.array(v, dtype=v.dtype) for n, v in zip(names, vals)}).forward()
    for i, v in enumerate(vals): out['%s/in%d' % (name, i)] = v
    for i, r in enumerate(res): out['%s/out%d' % (name, i)] = r.asnumpy()
    cases[name] = {'op': 'quantized_elemwise_mul', 'params': params}
out['cases'] = np.array(json.dumps(cases))
np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'quantized_ops_mxnet191.npz'), **out)
