"""Tests of mx.gluon.contrib.nn, mx.gluon.contrib.rnn and mx.gluon.contrib.data.

Golden data: tests/reference_extra/gluon_contrib.npz, written by gen_gluon_contrib.py
under real MXNet 1.9.1 (MKLDNN off). For every case built by ``gen.build(mx, case)``
(the same builder runs here with mxlite): ``<case>/names`` (JSON: collect_params() keys,
prefix, repr), ``<case>/param/<name>`` (the parameter values set), ``<case>/in/<i>``
(input, then begin states, then valid_length), ``<case>/head/<i>`` (head gradients),
``<case>/out/<i>`` (output, for cells the merged unrolled output then the final states,
in predict mode), ``<case>/grad_in/<i>`` and ``<case>/grad_param/<name>`` (gradients of
``sum(out_i * head_i)``). ``text/*``: WikiText2 read from gen.TEXT with seq_len=4 (data,
label, vocabulary order, length).
"""
import importlib.util
import json
import os

import numpy as np
import pytest

import mxlite as mx
import mxlite.gluon.contrib.data as cdata
import mxlite.gluon.contrib.nn as cnn
import mxlite.gluon.contrib.rnn as crnn
from mxlite.gluon.contrib.data import text

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "gen_gluon_contrib", os.path.join(HERE, "reference_extra", "gen_gluon_contrib.py"))
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)
GOLD = np.load(os.path.join(HERE, "reference_extra", "gluon_contrib.npz"))
TOL = dict(rtol=1e-5, atol=1e-5)
HYBRID_CASES = [c for c in sorted(gen.CASES) if c not in ("concurrent", "sparse_embedding")]


def _gold(case, kind):
    prefix = "%s/%s/" % (case, kind)
    keys = [k for k in GOLD.files if k.startswith(prefix)]
    return {k[len(prefix):]: GOLD[k] for k in keys}


def _run_case(case, hybridize=False):
    """Build ``case`` with mxlite, set MXNet's parameters, run forward and backward."""
    block, spec = gen.build(mx, case)
    block.initialize()
    if spec.get("int"):
        # as when the goldens were made: row_sparse weights are read through a Trainer
        mx.gluon.Trainer(block.collect_params(), "sgd")
    if hybridize:
        block.hybridize()
    xs = [GOLD["%s/in/%d" % (case, i)] for i in range(len(_gold(case, "in")))]
    gen.run(mx, block, spec, [mx.nd.array(x) for x in xs])  # resolves deferred shapes
    gen.set_params(block, _gold(case, "param"))
    nds = [mx.nd.array(x) for x in xs]
    n_grad = len(_gold(case, "grad_in"))
    for x in nds[:n_grad]:
        x.attach_grad()
    with mx.autograd.record(train_mode=False):
        outs = gen.run(mx, block, spec, nds)
        heads = [mx.nd.array(GOLD["%s/head/%d" % (case, i)]) for i in range(len(outs))]
        loss = mx.nd.add_n(*[mx.nd.sum(y * h) for y, h in zip(outs, heads)])
    loss.backward()
    return block, outs, nds[:n_grad]


def _check_numbers(case, block, outs, grads):
    assert len(outs) == len(_gold(case, "out"))
    for i, y in enumerate(outs):
        np.testing.assert_allclose(y.asnumpy(), GOLD["%s/out/%d" % (case, i)], **TOL)
        assert y.dtype == np.float32
    for i, x in enumerate(grads):
        np.testing.assert_allclose(x.grad.asnumpy(), GOLD["%s/grad_in/%d" % (case, i)], **TOL)
    gparams = _gold(case, "grad_param")
    for name, p in block.collect_params().items():
        if p.grad_req != "null":
            np.testing.assert_allclose(p.grad().asnumpy(), gparams[name], **TOL)


@pytest.mark.parametrize("case", sorted(gen.CASES))
def test_blocks_match_mxnet(case):
    block, outs, grads = _run_case(case)
    names = json.loads(str(GOLD[case + "/names"]))
    assert list(block.collect_params().keys()) == names["params"]
    assert block.prefix == names["prefix"]
    assert repr(block) == names["repr"]
    _check_numbers(case, block, outs, grads)


@pytest.mark.parametrize("case", HYBRID_CASES)
def test_hybridized_blocks_match_mxnet(case):
    block, outs, grads = _run_case(case, hybridize=True)
    _check_numbers(case, block, outs, grads)
    assert _traced(block), "the block ran imperatively instead of through its graph"


def _traced(block):
    """Whether ``block`` or one of its children ran through a cached graph (a modifier
    cell's unroll may hand the whole sequence to its base cell)."""
    return bool(block._cached_graph) or any(_traced(c) for c in block._children.values()
                                            if isinstance(c, mx.gluon.HybridBlock))


# ----------------------------------------------------------------------------- nn

def test_pixel_shuffle_2d_against_numpy():
    x = np.arange(2 * 12 * 2 * 3, dtype=np.float32).reshape(2, 12, 2, 3)
    y = cnn.PixelShuffle2D((2, 3))(mx.nd.array(x)).asnumpy()
    f1, f2 = 2, 3
    ref = x.reshape(2, 2, f1, f2, 2, 3).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 4, 9)
    np.testing.assert_array_equal(y, ref)


def test_pixel_shuffle_3d_against_numpy():
    x = np.random.uniform(size=(1, 24, 2, 1, 3)).astype(np.float32)
    y = cnn.PixelShuffle3D((2, 3, 2))(mx.nd.array(x)).asnumpy()
    ref = (x.reshape(1, 2, 2, 3, 2, 2, 1, 3).transpose(0, 1, 5, 2, 6, 3, 7, 4)
           .reshape(1, 2, 4, 3, 6))
    np.testing.assert_array_equal(y, ref)


def test_pixel_shuffle_runs_through_symbol():
    block = cnn.PixelShuffle1D(2)
    out = block(mx.sym.var("data"))
    x = np.random.uniform(size=(2, 4, 3)).astype(np.float32)
    y = out.bind(mx.cpu(), {"data": mx.nd.array(x)}).forward()[0].asnumpy()
    np.testing.assert_array_equal(y, x.reshape(2, 2, 2, 3).transpose(0, 1, 3, 2)
                                  .reshape(2, 2, 6))


@pytest.mark.parametrize("cls, factor, message", [
    (cnn.PixelShuffle2D, (2, 2, 2), "wrong length 3"),
    (cnn.PixelShuffle3D, (2, 2), "wrong length 2"),
    (cnn.PixelShuffle1D, 0, "positive"),
    (cnn.PixelShuffle2D, "a", "factor must be"),
])
def test_pixel_shuffle_rejects_bad_factors(cls, factor, message):
    with pytest.raises((AssertionError, ValueError, TypeError), match=message):
        cls(factor)


def test_pixel_shuffle_rejects_channels_not_divisible():
    with pytest.raises(mx.MXNetError):
        cnn.PixelShuffle2D(2)(mx.nd.zeros((1, 6, 2, 2)))


def test_hybrid_concurrent_through_symbol_and_slicing():
    net = cnn.HybridConcurrent(axis=1)
    with net.name_scope():
        net.add(mx.gluon.nn.Dense(3, in_units=2), cnn.Identity())
    net.initialize()
    x = mx.nd.array([[1., 2.], [3., 4.]])
    sym = net(mx.sym.var("data"))
    args = {"data": x}
    args.update({k: p.data() for k, p in net.collect_params().items()})
    y = sym.bind(mx.cpu(), args).forward()[0]
    np.testing.assert_allclose(y.asnumpy(), net(x).asnumpy(), rtol=1e-6)
    np.testing.assert_array_equal(y.asnumpy()[:, 3:], x.asnumpy())
    assert net[1:].axis == 1 and len(net[1:]) == 1


def test_concurrent_children_get_the_same_input():
    net = cnn.Concurrent(axis=0)
    net.add(cnn.Identity(), mx.gluon.nn.HybridLambda(lambda F, x: 2 * x))
    y = net(mx.nd.array([[1., 2.]]))
    np.testing.assert_array_equal(y.asnumpy(), [[1., 2.], [2., 4.]])


def test_sparse_embedding_is_dense_with_zero_rows_and_trains():
    emb = cnn.SparseEmbedding(5, 2, weight_initializer=mx.init.Constant(1.))
    emb.initialize()
    assert emb.weight._stype == "row_sparse" and emb.weight._grad_stype == "row_sparse"
    trainer = mx.gluon.Trainer(emb.collect_params(), "sgd", {"learning_rate": 0.5})
    with mx.autograd.record():
        y = emb(mx.nd.array([1, 3, 1]))
    y.backward()
    g = emb.weight.grad().asnumpy()
    np.testing.assert_array_equal(g, [[0, 0], [2, 2], [0, 0], [1, 1], [0, 0]])
    trainer.step(1)
    assert emb.weight.grad().stype == "row_sparse"
    np.testing.assert_array_equal(emb.weight.grad().indices.asnumpy(), [1, 3])
    weight = emb.weight.row_sparse_data(mx.nd.arange(5))
    assert weight.stype == "row_sparse"
    np.testing.assert_allclose(weight.asnumpy()[:, 0], [1, 0, 1, 0.5, 1])
    with pytest.raises(RuntimeError, match="row_sparse_data"):
        emb.weight.data()


# ----------------------------------------------------------------------------- rnn

def _transposed_copy(src, dst, to_last):
    """Copy ``src``'s parameters to ``dst``, moving weight channels first -> last."""
    for (_, p), (_, q) in zip(src.collect_params().items(), dst.collect_params().items()):
        v = p.data()
        if v.ndim > 1 and to_last:
            v = mx.nd.transpose(v, axes=(0,) + tuple(range(2, v.ndim)) + (1,))
        q.set_data(v)


@pytest.mark.parametrize("cls, shape, first, last", [
    (crnn.Conv1DGRUCell, (2, 6), "NCW", "NWC"),
    (crnn.Conv2DLSTMCell, (3, 5, 4), "NCHW", "NHWC"),
    (crnn.Conv3DRNNCell, (2, 3, 4, 3), "NCDHW", "NDHWC"),
])
def test_channels_last_cells_equal_channels_first(cls, shape, first, last):
    cf = cls(shape, 2, 3, 3, i2h_pad=1, conv_layout=first)
    last_shape = shape[1:] + shape[:1]
    cl = cls(last_shape, 2, 3, 3, i2h_pad=1, conv_layout=last)
    for c in (cf, cl):
        c.initialize(mx.init.Uniform(0.5))
    _transposed_copy(cf, cl, to_last=True)
    ndim = len(shape) + 1  # one step: (N, C, spatial...)
    to_last = (0,) + tuple(range(2, ndim)) + (1,)
    seq_to_last = (0, 1) + tuple(a + 1 for a in to_last[1:])  # (N, T, C, spatial...)
    x = mx.nd.random.uniform(-1, 1, shape=(2, 3) + shape)
    y_first, s_first = cf.unroll(3, x, merge_outputs=True)
    y_last, s_last = cl.unroll(3, mx.nd.transpose(x, axes=seq_to_last), merge_outputs=True)
    assert cl.state_info(2)[0]["shape"] == s_last[0].shape
    np.testing.assert_allclose(y_last.asnumpy(),
                               mx.nd.transpose(y_first, axes=seq_to_last).asnumpy(),
                               rtol=1e-5, atol=1e-6)
    for a, b in zip(s_first, s_last):
        np.testing.assert_allclose(b.asnumpy(), mx.nd.transpose(a, axes=to_last).asnumpy(),
                                   rtol=1e-5, atol=1e-6)


def test_conv_cell_shapes_and_state_info():
    cell = crnn.Conv2DGRUCell((3, 7, 6), 4, i2h_kernel=(3, 1), h2h_kernel=3, i2h_pad=(0, 1),
                              i2h_dilate=(2, 1))
    assert cell.prefix == "conv_gru0_"
    assert cell.i2h_weight.shape == (12, 3, 3, 1)
    assert cell.h2h_weight.shape == (12, 4, 3, 3)
    assert cell.i2h_bias.shape == (12,) and cell.h2h_bias.shape == (12,)
    # 7 + 0 - 2 * 2 = 3 rows, 6 + 2 - 0 = 8 columns
    assert cell.state_info(5) == [{"shape": (5, 4, 3, 8), "__layout__": "NCHW"}]
    lstm = crnn.Conv1DLSTMCell((2, 9), 3, 3, 3)
    assert [s["shape"] for s in lstm.state_info()] == [(0, 3, 7), (0, 3, 7)]


@pytest.mark.parametrize("kwargs, message", [
    (dict(h2h_kernel=2), "odd"),
    (dict(i2h_kernel=(3, 3, 3)), "list/tuple of length 2"),
    (dict(i2h_pad=(1,)), "list/tuple of length 2"),
    (dict(conv_layout="NCW"), "conv_layout"),
    (dict(input_shape=(3, 8)), "input_shape"),
])
def test_conv_cells_reject_bad_arguments(kwargs, message):
    args = dict(input_shape=(3, 8, 8), hidden_channels=4, i2h_kernel=3, h2h_kernel=3)
    args.update(kwargs)
    with pytest.raises((AssertionError, ValueError), match=message):
        crnn.Conv2DLSTMCell(**args)


def test_conv_cell_with_activation_block_unrolls():
    cell = crnn.Conv1DRNNCell((2, 7), 3, 3, 5, activation=mx.gluon.nn.LeakyReLU(0.1))
    cell.initialize()
    x = mx.nd.random.uniform(-1, 1, shape=(2, 4, 2, 7))
    out, states = cell.unroll(4, x, merge_outputs=True)  # MXNet fails here (reset())
    h = cell.begin_state(2)
    for t in range(4):
        y, h = cell(x[:, t], h)
    np.testing.assert_allclose(out[:, 3].asnumpy(), y.asnumpy(), rtol=1e-6)


def test_lstmp_cell_against_numpy():
    cell = crnn.LSTMPCell(3, 2, input_size=4)
    cell.initialize(mx.init.Uniform(0.5))
    x = np.random.uniform(-1, 1, (5, 4)).astype(np.float32)
    r0 = np.random.uniform(-1, 1, (5, 2)).astype(np.float32)
    c0 = np.random.uniform(-1, 1, (5, 3)).astype(np.float32)
    r, (r_state, c) = cell(mx.nd.array(x), [mx.nd.array(r0), mx.nd.array(c0)])
    p = {k[len(cell.prefix):]: v.data().asnumpy() for k, v in cell.collect_params().items()}
    gates = x @ p["i2h_weight"].T + p["i2h_bias"] + r0 @ p["h2h_weight"].T + p["h2h_bias"]
    i, f, g, o = np.split(gates, 4, axis=1)
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    c_ref = sig(f) * c0 + sig(i) * np.tanh(g)
    r_ref = (sig(o) * np.tanh(c_ref)) @ p["h2r_weight"].T
    np.testing.assert_allclose(c.asnumpy(), c_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(r.asnumpy(), r_ref, rtol=1e-5, atol=1e-6)
    assert r_state is r


def _zero_pattern(y):
    return y.asnumpy() == 0


def test_variational_dropout_masks_are_shared_across_steps():
    base = crnn.LSTMPCell(6, 8, input_size=5)
    cell = crnn.VariationalDropoutCell(base, drop_inputs=0.5, drop_states=0.5,
                                       drop_outputs=0.5)
    cell.initialize(mx.init.Uniform(0.5))
    x = mx.nd.random.uniform(0.5, 1, shape=(4, 6, 5))
    with mx.autograd.train_mode():
        outputs, _ = cell.unroll(6, x, merge_outputs=True)
    zeros = _zero_pattern(outputs)
    assert zeros.any() and not zeros.all()
    for t in range(1, 6):
        np.testing.assert_array_equal(zeros[:, t], zeros[:, 0])
    kept = outputs.asnumpy()[~zeros]
    assert np.all(kept != 0)
    mask_in = cell.drop_inputs_mask.asnumpy()
    assert set(np.unique(mask_in)) <= {0., 2.}
    cell.reset()
    assert cell.drop_inputs_mask is None and cell.drop_states_mask is None


def test_variational_dropout_unroll_without_state_dropout_shares_masks_over_time():
    base = mx.gluon.rnn.GRUCell(6, input_size=5)
    cell = crnn.VariationalDropoutCell(base, drop_outputs=0.5)
    cell.initialize()
    x = mx.nd.random.uniform(0.5, 1, shape=(6, 3, 5))
    with mx.autograd.train_mode():
        outputs, states = cell.unroll(6, x, layout="TNC", merge_outputs=False)
    assert isinstance(outputs, list) and len(outputs) == 6
    zeros = [_zero_pattern(y) for y in outputs]
    assert zeros[0].any() and not zeros[0].all()
    for z in zeros[1:]:
        np.testing.assert_array_equal(z, zeros[0])


def test_variational_dropout_is_identity_in_prediction():
    base = crnn.LSTMPCell(4, 3, input_size=2)
    cell = crnn.VariationalDropoutCell(base, 0.5, 0.5, 0.5)
    cell.initialize()
    x = mx.nd.random.uniform(shape=(2, 3, 2))
    out, _ = cell.unroll(3, x, merge_outputs=True)
    base._modified = False
    ref, _ = base.unroll(3, x, merge_outputs=True)
    np.testing.assert_array_equal(out.asnumpy(), ref.asnumpy())


def test_variational_dropout_rejects_bad_arguments():
    bi = mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.GRUCell(2), mx.gluon.rnn.GRUCell(2))
    with pytest.raises(AssertionError, match="BidirectionalCell"):
        crnn.VariationalDropoutCell(bi, drop_states=0.5)
    stack = mx.gluon.rnn.SequentialRNNCell()
    stack.add(mx.gluon.rnn.BidirectionalCell(mx.gluon.rnn.GRUCell(2),
                                             mx.gluon.rnn.GRUCell(2)))
    with pytest.raises(AssertionError, match="BidirectionalCell"):
        crnn.VariationalDropoutCell(stack, drop_states=0.5)
    with pytest.raises(ValueError, match="drop_inputs"):
        crnn.VariationalDropoutCell(mx.gluon.rnn.GRUCell(2), drop_inputs=1.5)
    cell = crnn.VariationalDropoutCell(mx.gluon.rnn.GRUCell(2))
    with pytest.raises(AssertionError, match="modified"):
        crnn.VariationalDropoutCell(cell.base_cell)


def test_conv_lstm_step_runs_through_symbol():
    cell = crnn.Conv1DLSTMCell((2, 5), 3, 3, 3, i2h_pad=1, prefix="s_")
    cell.initialize()
    x = mx.nd.random.uniform(-1, 1, shape=(2, 2, 5))
    states = cell.begin_state(2)
    y_nd, _ = cell(x, states)
    cell.reset()
    y_sym, _ = cell(mx.sym.var("x"), [mx.sym.var("h"), mx.sym.var("c")])
    args = {"x": x, "h": states[0], "c": states[1]}
    args.update({k: p.data() for k, p in cell.collect_params().items()})
    y = y_sym.bind(mx.cpu(), args).forward()[0]
    np.testing.assert_allclose(y.asnumpy(), y_nd.asnumpy(), rtol=1e-6)


# ----------------------------------------------------------------------------- data

def test_interval_sampler():
    assert list(cdata.IntervalSampler(13, interval=3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10,
                                                           2, 5, 8, 11]
    assert list(cdata.IntervalSampler(13, interval=3, rollover=False)) == [0, 3, 6, 9, 12]
    assert len(cdata.IntervalSampler(13, 3)) == 13
    with pytest.raises(ValueError, match="interval"):
        cdata.IntervalSampler(3, 4)


def test_wikitext_matches_mxnet(tmp_path):
    with open(tmp_path / "wiki.train.tokens", "w", encoding="utf8") as f:
        f.write(gen.TEXT)
    ds = text.WikiText2(root=str(tmp_path), seq_len=4)
    assert len(ds) == int(GOLD["text/len"])
    assert ds.vocabulary.idx_to_token == json.loads(str(GOLD["text/idx_to_token"]))
    data, label = ds[1]
    assert data.dtype == np.int32 and data.shape == (4,)
    np.testing.assert_array_equal(ds._data.asnumpy(), GOLD["text/data"])
    np.testing.assert_array_equal(ds._label.asnumpy(), GOLD["text/label"])
    assert ds.frequencies["game"] == 3
    # a given vocabulary is used as it is
    other = text.WikiText103(root=str(tmp_path), seq_len=4, vocab=ds.vocabulary)
    assert other.vocabulary is ds.vocabulary and other.frequencies is None
    np.testing.assert_array_equal(other._data.asnumpy(), GOLD["text/data"])


def test_wikitext_reports_missing_files_and_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="wiki.valid.tokens.*wikitext-2-v1.zip"):
        text.WikiText2(root=str(tmp_path), segment="validation")
    with pytest.raises(FileNotFoundError, match="wikitext-103-v1.zip"):
        text.WikiText103(root=str(tmp_path))
    with pytest.raises(ValueError, match="segment"):
        text.WikiText2(root=str(tmp_path), segment="dev")
    with pytest.raises(ValueError, match="seq_len"):
        text.WikiText2(root=str(tmp_path), seq_len=0)


def test_sync_batch_norm_is_batch_norm_on_one_device():
    # MXNet 1.9.1's names, prefix, repr and JSON op; on one device the numbers are
    # BatchNorm's; more devices cannot be synchronised here and raise.
    from mxlite.gluon.contrib.nn import SyncBatchNorm
    net = SyncBatchNorm(num_devices=1)
    assert net.prefix.startswith("syncbatchnorm")
    assert repr(net) == ("SyncBatchNorm(eps=1e-05, momentum=0.9, fix_gamma=False, "
                         "use_global_stats=False, ndev=1, key=%r, in_channels=None)"
                         % net.prefix)
    assert sorted(net.collect_params().keys()) == [
        net.prefix + n for n in ("beta", "gamma", "running_mean", "running_var")]
    net.initialize()
    ref = mx.gluon.nn.BatchNorm()
    ref.initialize()
    x = mx.nd.array(np.random.RandomState(0).randn(4, 3, 5))
    for train in (False, True):
        with mx.autograd.record(train_mode=train):
            a, b = net(x), ref(x)
        assert np.array_equal(a.asnumpy(), b.asnumpy())
    assert np.array_equal(net.running_mean.data().asnumpy(), ref.running_mean.data().asnumpy())
    sym = net(mx.sym.var("data"))
    node = [n for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"][0]
    assert node["op"] == "_contrib_SyncBatchNorm" and node["attrs"]["ndev"] == "1"
    with pytest.warns(UserWarning, match="num_devices"):
        assert SyncBatchNorm()._kwargs["ndev"] == 1
    two = SyncBatchNorm(num_devices=2)
    two.initialize()
    with pytest.raises(mx.MXNetError, match="ndev=2"):
        two(x)
