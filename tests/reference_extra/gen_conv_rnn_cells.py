"""Golden data for the legacy convolutional RNN cells (mx.rnn.ConvRNNCell, ConvLSTMCell,
ConvGRUCell) unrolled 3 steps, from real MXNet 1.9.1 (run with its interpreter). Keys:
<cell>/arg/<name> (inputs), <cell>/out<i> (merged outputs, then the states), <cell>/names.
"""
import os
import mxnet as mx, numpy as np, json
np.random.seed(0)
out = {}
for name, cls in (("rnn", mx.rnn.ConvRNNCell), ("lstm", mx.rnn.ConvLSTMCell), ("gru", mx.rnn.ConvGRUCell)):
    cell = cls(input_shape=(2, 3, 5, 5), num_hidden=4, prefix=name + "_")
    outs, states = cell.unroll(3, mx.sym.var("data"), layout="NTC", merge_outputs=True)
    sym = mx.sym.Group([outs] + list(states))
    shapes = dict(data=(2, 3, 3, 5, 5))
    arg_shapes, _, _ = sym.infer_shape(**shapes)
    args = {n: mx.nd.array(np.random.uniform(-0.5, 0.5, s)) for n, s in zip(sym.list_arguments(), arg_shapes)}
    ex = sym.bind(mx.cpu(), args)
    res = ex.forward()
    for n, v in args.items(): out["%s/arg/%s" % (name, n)] = v.asnumpy()
    for i, r in enumerate(res): out["%s/out%d" % (name, i)] = r.asnumpy()
    out["%s/names" % name] = np.array(json.dumps(sym.list_arguments()))
np.savez_compressed("os.path.join(os.path.dirname(os.path.abspath(__file__)), "conv_rnn_cells_mxnet191.npz")", **out)
