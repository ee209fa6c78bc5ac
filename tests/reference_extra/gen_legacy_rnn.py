"""Golden data for mx.rnn (legacy symbolic RNN cells and io) from real MXNet 1.9.1.

Run: ``python tests/reference_extra/gen_legacy_rnn.py`` from an environment with
``pip install "numpy<1.24" mxnet==1.9.1``.
Writes legacy_rnn.npz next to this file. The case builders take the ``mx`` module, so the
tests build the very same graphs with mxlite (this file imports mxnet only in main()).
"""
import json
import os
import random

import numpy as np

N, T, C, H = 2, 3, 3, 4


def _flat(states):
    out = []
    for s in states:
        out.extend(_flat(s) if isinstance(s, list) else [s])
    return out


def _group(mx, outputs, states):
    outs = outputs if isinstance(outputs, list) else [outputs]
    return mx.sym.Group(outs + _flat(states))


def _rnn_tanh(mx):
    return mx.rnn.RNNCell(H, prefix='rnn_'), 'NTC', True


def _rnn_relu_list(mx):
    return mx.rnn.RNNCell(H, activation='relu', prefix='rr_'), 'NTC', False


def _lstm(mx):
    return mx.rnn.LSTMCell(H, prefix='lstm_'), 'NTC', None


def _lstm_merged(mx):
    return mx.rnn.LSTMCell(H, prefix='lstm_'), 'NTC', True


def _gru_tnc(mx):
    return mx.rnn.GRUCell(H, prefix='gru_'), 'TNC', True


def _sequential(mx):
    cell = mx.rnn.SequentialRNNCell()
    cell.add(mx.rnn.LSTMCell(H, prefix='l0_'))
    cell.add(mx.rnn.DropoutCell(0.5, prefix='d0_'))
    cell.add(mx.rnn.GRUCell(H, prefix='l1_'))
    return cell, 'NTC', True


def _bidirectional(mx):
    cell = mx.rnn.BidirectionalCell(mx.rnn.LSTMCell(H, prefix='fwd_'),
                                    mx.rnn.GRUCell(H, prefix='bwd_'), output_prefix='bi_')
    return cell, 'NTC', True


def _bidirectional_list(mx):
    cell = mx.rnn.BidirectionalCell(mx.rnn.RNNCell(H, prefix='fwd_'),
                                    mx.rnn.RNNCell(H, prefix='bwd_'), output_prefix='bi_')
    return cell, 'NTC', False


def _residual(mx):
    return mx.rnn.ResidualCell(mx.rnn.GRUCell(C, prefix='res_')), 'NTC', False


def _fused_lstm(mx):
    return (mx.rnn.FusedRNNCell(H, num_layers=2, mode='lstm', bidirectional=True,
                                get_next_state=True, prefix='fl_'), 'TNC', True)


def _fused_gru_ntc(mx):
    return (mx.rnn.FusedRNNCell(H, num_layers=1, mode='gru', get_next_state=True,
                                prefix='fg_'), 'NTC', True)


def _fused_unfused(mx):
    return (mx.rnn.FusedRNNCell(H, num_layers=2, mode='lstm', bidirectional=True,
                                prefix='fl_').unfuse(), 'TNC', True)


CASES = {'rnn_tanh': _rnn_tanh, 'rnn_relu_list': _rnn_relu_list, 'lstm': _lstm,
         'lstm_merged': _lstm_merged, 'gru_tnc': _gru_tnc, 'sequential': _sequential,
         'bidirectional': _bidirectional, 'bidirectional_list': _bidirectional_list,
         'residual': _residual, 'fused_lstm': _fused_lstm, 'fused_gru_ntc': _fused_gru_ntc,
         'fused_unfused': _fused_unfused}


def build(mx, case):
    """``(cell, symbol, data shape)`` of one case."""
    # a fresh NameManager numbers auto-named nodes (concat0 ...) the same in both libraries
    with mx.name.NameManager():
        cell, layout, merge = CASES[case](mx)
        outputs, states = cell.unroll(T, mx.sym.Variable('data'), layout=layout,
                                      merge_outputs=merge)
    shape = (N, T, C) if layout == 'NTC' else (T, N, C)
    return cell, _group(mx, outputs, states), shape


CORPUS = [s.split() for s in [
    "the cat sat on the mat", "a dog ran", "the dog sat", "cats and dogs ran far away",
    "a cat", "on the mat the cat sat", "dogs ran", "the mat", "a dog sat on a cat",
    "far away a dog ran", "the end", "cat and dog", "a b c d e f g h i j k"]]


def main():
    import mxnet as mx
    out = {}
    rng = np.random.RandomState(0)
    for case in CASES:
        cell, sym, shape = build(mx, case)
        arg_shapes, _, _ = sym.infer_shape(data=shape)
        args = {n: mx.nd.array(rng.uniform(-1, 1, s)) for n, s in
                zip(sym.list_arguments(), arg_shapes)}
        ex = sym.bind(mx.cpu(), args, grad_req='null')
        outs = ex.forward(is_train=False)
        out[case + '/names'] = np.array(json.dumps({'args': sym.list_arguments(),
                                                    'outputs': sym.list_outputs()}))
        for n, v in args.items():
            out[case + '/arg/' + n] = v.asnumpy()
        for i, o in enumerate(outs):
            out[case + '/out/%d' % i] = o.asnumpy()
        params = {n: v for n, v in args.items() if n != 'data'}
        unpacked = cell.unpack_weights(params)
        for n, v in unpacked.items():
            out[case + '/unpacked/' + n] = v.asnumpy()
    # io
    coded, vocab = mx.rnn.encode_sentences(CORPUS, invalid_label=0, start_label=1)
    out['io/coded'] = np.array(json.dumps(coded))
    out['io/vocab'] = np.array(json.dumps(vocab, sort_keys=True))
    coded2, vocab2 = mx.rnn.encode_sentences([['x', 'the', 'zz']], vocab=dict(vocab),
                                             unknown_token='<unk>')
    out['io/coded_unk'] = np.array(json.dumps([coded2, vocab2], sort_keys=True))
    for layout, buckets in [('NT', [3, 6]), ('TN', None)]:
        random.seed(3)
        np.random.seed(3)
        it = mx.rnn.BucketSentenceIter(coded, 2, buckets=buckets, invalid_label=0,
                                       layout=layout)
        key = 'io/iter_%s' % layout
        out[key + '/buckets'] = np.array(it.buckets)
        out[key + '/default'] = np.array(it.default_bucket_key)
        for epoch in range(2):
            for k, batch in enumerate(it):
                pre = '%s/e%d/b%d' % (key, epoch, k)
                out[pre + '/data'] = batch.data[0].asnumpy()
                out[pre + '/label'] = batch.label[0].asnumpy()
                out[pre + '/key'] = np.array(batch.bucket_key)
            it.reset()
    np.savez_compressed(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                     'legacy_rnn.npz'), **out)


if __name__ == '__main__':
    main()
