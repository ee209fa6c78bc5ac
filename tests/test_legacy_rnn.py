"""Tests of mx.rnn: the legacy symbolic RNN cells, encode_sentences, BucketSentenceIter and
RNN checkpoints.

Golden data: tests/reference_extra/legacy_rnn.npz, written by gen_legacy_rnn.py under real
MXNet 1.9.1. For each cell case (built by ``gen_legacy_rnn.build`` with either library):
``<case>/names`` (JSON: list_arguments, list_outputs of the unrolled graph grouped with its
final states), ``<case>/arg/<name>`` (the bound inputs, uniform(-1, 1)), ``<case>/out/<i>``
(forward outputs, is_train=False) and ``<case>/unpacked/<name>`` (``cell.unpack_weights``).
``io/*``: encode_sentences results (JSON) and the data, label and bucket_key of every batch
of two epochs of BucketSentenceIter (seeds 3 for ``random`` and ``np.random``), NT and TN.
"""
import importlib.util
import json
import os
import random

import numpy as np
import pytest

import mxlite as mx

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "gen_legacy_rnn", os.path.join(HERE, "reference_extra", "gen_legacy_rnn.py"))
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)
GOLD = np.load(os.path.join(HERE, "reference_extra", "legacy_rnn.npz"))


@pytest.fixture(autouse=True)
def _fresh_names():
    """Auto-named nodes (concat0, ...) count from 0 in every test, as in a fresh process,
    and leave the global counters to other test modules untouched."""
    with mx.name.NameManager():
        yield


def _json(key):
    return json.loads(str(GOLD[key]))


@pytest.mark.parametrize("case", sorted(gen.CASES))
def test_unrolled_cells_match_mxnet(case):
    cell, sym, shape = gen.build(mx, case)
    names = _json(case + "/names")
    assert sym.list_arguments() == names["args"]
    assert sym.list_outputs() == names["outputs"]
    args = {n: mx.nd.array(GOLD[case + "/arg/" + n]) for n in names["args"]}
    assert args["data"].shape == shape
    outs = sym.bind(mx.cpu(), args, grad_req="null").forward(is_train=False)
    assert len(outs) == len(names["outputs"])
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.asnumpy(), GOLD[case + "/out/%d" % i],
                                   rtol=1e-5, atol=1e-5, err_msg="%s output %d" % (case, i))


@pytest.mark.parametrize("case", sorted(gen.CASES))
def test_unpack_pack_weights_match_mxnet(case):
    cell, sym, _ = gen.build(mx, case)
    prefix = case + "/unpacked/"
    gold = {k[len(prefix):]: GOLD[k] for k in GOLD.files if k.startswith(prefix)}
    params = {n: mx.nd.array(GOLD[case + "/arg/" + n])
              for n in sym.list_arguments() if n != "data"}
    unpacked = cell.unpack_weights(params)
    assert sorted(unpacked) == sorted(gold)
    for n, v in unpacked.items():
        np.testing.assert_array_equal(v.asnumpy(), gold[n], err_msg=n)
    packed = cell.pack_weights(unpacked)
    assert sorted(packed) == sorted(params)
    for n, v in packed.items():
        np.testing.assert_array_equal(v.asnumpy(), params[n].asnumpy(), err_msg=n)


def test_lstm_names_and_forget_bias_init():
    cell = mx.rnn.LSTMCell(5, prefix="lstm_", forget_bias=2.5)
    outputs, states = cell.unroll(2, mx.sym.Variable("data"), merge_outputs=False)
    assert [o.name for o in outputs] == ["lstm_t0_out", "lstm_t1_out"]
    assert [s.name for s in states] == ["lstm_t1_out", "lstm_t1_state"]
    assert sorted(cell.params._params) == ["lstm_h2h_bias", "lstm_h2h_weight",
                                           "lstm_i2h_bias", "lstm_i2h_weight"]
    assert cell.state_info == [{"shape": (0, 5), "__layout__": "NC"}] * 2
    mod = mx.mod.Module(mx.sym.Group(outputs), data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (3, 2, 4))])
    mod.init_params(mx.init.Uniform(0.1))
    bias = mod.get_params()[0]["lstm_i2h_bias"].asnumpy()
    np.testing.assert_array_equal(bias, np.r_[np.zeros(5), np.full(5, 2.5), np.zeros(10)])


def test_begin_state_variables_and_counters():
    cell = mx.rnn.GRUCell(3, prefix="g_")
    states = cell.begin_state(func=mx.sym.Variable)
    assert [s.name for s in states] == ["g_begin_state_0"]
    outputs, _ = cell.unroll(2, mx.sym.Variable("x"), begin_state=states, merge_outputs=True)
    assert "g_begin_state_0" in outputs.list_arguments()
    x = np.random.uniform(-1, 1, (2, 2, 4)).astype(np.float32)
    h0 = np.random.uniform(-1, 1, (2, 3)).astype(np.float32)
    args = {"x": mx.nd.array(x), "g_begin_state_0": mx.nd.array(h0)}
    rng = np.random.RandomState(1)
    for n, s in zip(outputs.list_arguments(), outputs.infer_shape(x=x.shape,
                                                                   g_begin_state_0=h0.shape)[0]):
        if n not in args:
            args[n] = mx.nd.array(rng.uniform(-1, 1, s))
    got = outputs.bind(mx.cpu(), args).forward()[0].asnumpy()
    # the step by hand in NumPy (cuDNN-style GRU)
    w = {n: args[n].asnumpy() for n in args}
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    h = h0
    for t in range(2):
        i = x[:, t] @ w["g_i2h_weight"].T + w["g_i2h_bias"]
        g = h @ w["g_h2h_weight"].T + w["g_h2h_bias"]
        r, z = sig(i[:, :3] + g[:, :3]), sig(i[:, 3:6] + g[:, 3:6])
        n = np.tanh(i[:, 6:] + r * g[:, 6:])
        h = (1 - z) * n + z * h
        np.testing.assert_allclose(got[:, t], h, rtol=1e-5, atol=1e-6)


def test_zoneout_is_identity_in_inference():
    base = mx.rnn.RNNCell(4, prefix="z_")
    cell = mx.rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5)
    with pytest.raises(RuntimeError, match="modifier"):
        base.begin_state()
    out, _ = cell.unroll(3, mx.sym.Variable("data"), merge_outputs=True)
    ref, _ = mx.rnn.RNNCell(4, prefix="z_").unroll(3, mx.sym.Variable("data"),
                                                   merge_outputs=True)
    rng = np.random.RandomState(2)
    shapes = ref.infer_shape(data=(2, 3, 5))[0]
    args = {n: mx.nd.array(rng.uniform(-1, 1, s)) for n, s in zip(ref.list_arguments(), shapes)}
    assert out.list_arguments() == ref.list_arguments()
    a = out.bind(mx.cpu(), args).forward(is_train=False)[0].asnumpy()
    b = ref.bind(mx.cpu(), args).forward(is_train=False)[0].asnumpy()
    np.testing.assert_allclose(a, b, rtol=1e-6)
    # in training some units keep the previous output (zeros at t=0)
    mx.random.seed(1)
    c = out.bind(mx.cpu(), args).forward(is_train=True)[0].asnumpy()
    kept = ~np.isclose(c, b)
    assert kept.any() and np.all(c[:, 0][kept[:, 0]] == 0)


def test_encode_sentences_matches_mxnet():
    coded, vocab = mx.rnn.encode_sentences(gen.CORPUS, invalid_label=0, start_label=1)
    assert coded == _json("io/coded")
    assert json.loads(json.dumps(vocab, sort_keys=True)) == _json("io/vocab")
    coded2, vocab2 = mx.rnn.encode_sentences([["x", "the", "zz"]], vocab=dict(vocab),
                                             unknown_token="<unk>")
    assert [coded2, vocab2] == _json("io/coded_unk")
    with pytest.raises(KeyError, match="unknown token"):
        mx.rnn.encode_sentences([["nope"]], vocab=dict(vocab))


@pytest.mark.parametrize("layout,buckets", [("NT", [3, 6]), ("TN", None)])
def test_bucket_sentence_iter_matches_mxnet(layout, buckets, capsys):
    coded, _ = mx.rnn.encode_sentences(gen.CORPUS, invalid_label=0, start_label=1)
    random.seed(3)
    np.random.seed(3)
    it = mx.rnn.BucketSentenceIter(coded, 2, buckets=buckets, invalid_label=0, layout=layout)
    assert "discarded 1 sentences" in capsys.readouterr().out
    key = "io/iter_%s" % layout
    assert it.buckets == GOLD[key + "/buckets"].tolist()
    assert it.default_bucket_key == int(GOLD[key + "/default"])
    assert it.provide_data[0].name == "data" and it.provide_label[0].name == "softmax_label"
    for epoch in range(2):
        k = 0
        for k, batch in enumerate(it):
            pre = "%s/e%d/b%d" % (key, epoch, k)
            np.testing.assert_array_equal(batch.data[0].asnumpy(), GOLD[pre + "/data"])
            np.testing.assert_array_equal(batch.label[0].asnumpy(), GOLD[pre + "/label"])
            assert batch.bucket_key == int(GOLD[pre + "/key"])
            assert batch.provide_data[0].shape == batch.data[0].shape
        assert "%s/e%d/b%d/data" % (key, epoch, k + 1) not in GOLD.files
        it.reset()


def _lm_sym_gen(vocab_size, num_hidden, cell):
    def sym_gen(seq_len):
        data = mx.sym.Variable("data")
        label = mx.sym.Variable("softmax_label")
        embed = mx.sym.Embedding(data=data, input_dim=vocab_size, output_dim=8, name="embed")
        cell.reset()
        outputs, _ = cell.unroll(seq_len, inputs=embed, merge_outputs=True)
        pred = mx.sym.Reshape(outputs, shape=(-1, num_hidden))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=vocab_size, name="pred")
        label = mx.sym.Reshape(label, shape=(-1,))
        pred = mx.sym.SoftmaxOutput(data=pred, label=label, name="softmax",
                                    use_ignore=True, ignore_label=0)
        return pred, ("data",), ("softmax_label",)
    return sym_gen


def test_bucketing_module_fit_lstm_lm(tmp_path):
    random.seed(0)
    sentences = [[1, 2, 3, 4, 5, 6][:n] for n in (3, 4, 5, 6) for _ in range(8)]
    it = mx.rnn.BucketSentenceIter(sentences, 4, buckets=[4, 6], invalid_label=0)
    stack = mx.rnn.SequentialRNNCell()
    stack.add(mx.rnn.LSTMCell(16, prefix="lstm_l0_"))
    mod = mx.mod.BucketingModule(_lm_sym_gen(8, 16, stack),
                                 default_bucket_key=it.default_bucket_key, context=mx.cpu())
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Xavier())
    before = dict(mod.score(it, mx.metric.Perplexity(0)))["perplexity"]
    it.reset()
    mod.fit(it, eval_metric=mx.metric.Perplexity(0), optimizer="adam",
            optimizer_params={"learning_rate": 0.05}, num_epoch=6)
    assert sorted(mod._buckets) == [4, 6]          # both bucket graphs were used
    it.reset()
    after = dict(mod.score(it, mx.metric.Perplexity(0)))["perplexity"]
    # the sequence 1..6 is deterministic: training takes perplexity from about the
    # vocabulary size down to nearly 1
    assert before > 5.0 and after < 2.0, (before, after)
    # checkpoints keep the gate weights unpacked and restore them packed
    arg, aux = mod.get_params()
    prefix = str(tmp_path / "lm")
    mx.rnn.save_rnn_checkpoint(stack, prefix, 1, mod.symbol, arg, aux)
    saved = mx.nd.load(prefix + "-0001.params")
    assert "arg:lstm_l0_i2h_f_weight" in saved and "arg:lstm_l0_i2h_weight" not in saved
    _, arg2, _ = mx.rnn.load_rnn_checkpoint(stack, prefix, 1)
    assert sorted(arg2) == sorted(arg)
    for n in arg:
        np.testing.assert_array_equal(arg2[n].asnumpy(), arg[n].asnumpy())
    mx.rnn.do_rnn_checkpoint(stack, prefix, period=2)(1, mod.symbol, arg, aux)
    assert os.path.exists(prefix + "-0002.params")


def test_fused_cell_init_and_errors():
    cell = mx.rnn.FusedRNNCell(4, num_layers=1, mode="lstm", prefix="f_", forget_bias=3.0)
    out, states = cell.unroll(3, mx.sym.Variable("data"), layout="TNC", merge_outputs=True)
    assert states == [] and out.list_arguments() == ["data", "f_parameters"]
    mod = mx.mod.Module(out, data_names=["data"], label_names=None)
    mod.bind(data_shapes=[("data", (3, 2, 5))])
    mod.init_params(mx.init.Xavier())
    unpacked = cell.unpack_weights(mod.get_params()[0])
    np.testing.assert_array_equal(unpacked["f_l0_i2h_f_bias"].asnumpy(), np.full(4, 3.0))
    np.testing.assert_array_equal(unpacked["f_l0_h2h_i_bias"].asnumpy(), np.zeros(4))
    assert np.abs(unpacked["f_l0_i2h_i_weight"].asnumpy()).max() > 0
    with pytest.raises(NotImplementedError, match="unroll"):
        cell(mx.sym.Variable("x"), [])
    with pytest.raises(ValueError, match="got 2 inputs"):
        mx.rnn.RNNCell(2).unroll(3, [mx.sym.Variable("a"), mx.sym.Variable("b")])


def test_gluon_lstm_exported_by_mxnet_loads_and_runs():
    # MXNet's exported fused-RNN graph concatenates the weights with _rnn_param_concat
    # and takes the begin states as inputs data1, data2 (reference_extra/gen_rnn_export.py).
    here = os.path.join(HERE, "reference_extra")
    io = np.load(os.path.join(here, "rnn_export_io.npz"))
    net = mx.gluon.SymbolBlock.imports(os.path.join(here, "rnn_export-symbol.json"),
                                       ["data", "data1", "data2"],
                                       os.path.join(here, "rnn_export-0000.params"))
    states = mx.nd.zeros((4, 2, 5))
    out = net(mx.nd.array(io["x"]), states, states)
    out = out[0] if isinstance(out, (list, tuple)) else out
    np.testing.assert_allclose(out.asnumpy(), io["y"], rtol=1e-5, atol=1e-6)
    net.hybridize()
    again = net(mx.nd.array(io["x"]), states, states)
    again = again[0] if isinstance(again, (list, tuple)) else again
    np.testing.assert_allclose(again.asnumpy(), io["y"], rtol=1e-5, atol=1e-6)
