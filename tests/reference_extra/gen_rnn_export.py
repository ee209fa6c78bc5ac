"""A hybridized Gluon LSTM exported by MXNet 1.9.1, for tests/test_legacy_rnn.py.

Run with a Python that has MXNet 1.9.1: ``python tests/reference_extra/gen_rnn_export.py``.
MXNet's exported graph of a fused RNN layer concatenates the weights with
``_rnn_param_concat``; writes ``rnn_export-symbol.json``, ``rnn_export-0000.params`` and
``rnn_export_io.npz`` (input ``x`` and MXNet's output ``y``) next to this file.
"""
import os

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    mx.random.seed(0)
    net = mx.gluon.rnn.LSTM(5, num_layers=2, layout="NTC", bidirectional=True)
    net.initialize(mx.init.Uniform(0.3))
    net.hybridize()
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (2, 4, 3)))
    y = net(x)
    net.export(os.path.join(HERE, "rnn_export"))
    np.savez(os.path.join(HERE, "rnn_export_io.npz"), x=x.asnumpy(), y=y.asnumpy())


if __name__ == "__main__":
    main()
