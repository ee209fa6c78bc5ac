"""mx.rnn's convolutional cells against MXNet 1.9.1, and rnn_unroll."""
import json
import os

import numpy as np
import pytest

import mxlite as mx

GOLD = os.path.join(os.path.dirname(__file__), "reference_extra", "conv_rnn_cells_mxnet191.npz")


@pytest.mark.parametrize("name,cls", [("rnn", mx.rnn.ConvRNNCell), ("lstm", mx.rnn.ConvLSTMCell),
                                      ("gru", mx.rnn.ConvGRUCell)])
def test_conv_cells_match_mxnet(name, cls):
    g = np.load(GOLD)
    cell = cls(input_shape=(2, 3, 5, 5), num_hidden=4, prefix=name + "_")
    # NOTE: zero begin states given as inputs: mxlite's shape inference does not run
    # backward through Convolution, which sym.zeros((0, 4, 5, 5)) states would need.
    begin = cell.begin_state(func=mx.sym.Variable)
    outs, states = cell.unroll(3, mx.sym.var("data"), begin_state=begin, layout="NTC",
                               merge_outputs=True)
    sym = mx.sym.Group([outs] + list(states))
    names = [n for n in sym.list_arguments() if "begin_state" not in n]
    assert names == json.loads(str(g["%s/names" % name]))
    args = {n: mx.nd.array(g["%s/arg/%s" % (name, n)]) for n in names}
    args.update({b.name: mx.nd.zeros((2, 4, 5, 5)) for b in begin})
    res = sym.bind(mx.cpu(), args).forward()
    for i, r in enumerate(res):
        assert np.allclose(r.asnumpy(), g["%s/out%d" % (name, i)], atol=1e-5), i
    assert cell.state_shape[0] == (0, 4, 5, 5)


def test_conv_cell_errors_and_rnn_unroll():
    with pytest.raises(ValueError, match="odd"):
        mx.rnn.ConvRNNCell((1, 3, 5, 5), 2, h2h_kernel=(2, 2))
    with pytest.raises(NotImplementedError, match="abstract"):
        mx.rnn.BaseConvRNNCell((1, 3, 5, 5), 2, (3, 3), (1, 1), (3, 3), (1, 1), (1, 1), (1, 1),
                               None, None, "zeros", "zeros", "tanh")(None, None)
    cell = mx.rnn.RNNCell(3, prefix="r_")
    with pytest.warns(UserWarning, match="deprecated"):
        outs, _ = mx.rnn.rnn_unroll(cell, 2, input_prefix="in_")
    assert "in_t0_data" in mx.sym.Group(outs).list_arguments()
