"""mx.mod.BucketingModule: one Module per bucket over shared parameters and optimizer.

The toy network sums the embeddings of a token sequence (its length is the bucket key)
and classifies the sum with two FullyConnected layers; every bucket has the same
parameters. References are plain Modules built for one bucket and NumPy.
"""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

V, E, H, C, B = 6, 4, 8, 3, 4
KEYS = (3, 5, 8)


def _sym_gen(seq_len):
    data = mx.sym.var("data")
    emb = mx.sym.Embedding(data, input_dim=V, output_dim=E, name="embed")
    x = mx.sym.sum(emb, axis=1)
    x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=H, name="fc1"), act_type="tanh")
    x = mx.sym.FullyConnected(x, num_hidden=C)   # automatic name: fullyconnected0 per bucket
    return mx.sym.SoftmaxOutput(x, name="softmax"), ("data",), ("softmax_label",)


def _sequences(seq_len, n, rng):
    """The class token fills more than half of each sequence; the rest is noise."""
    y = rng.randint(0, C, n)
    x = rng.randint(C, V, (n, seq_len))
    for i in range(n):
        x[i, rng.permutation(seq_len)[:seq_len // 2 + 1]] = y[i]
    return x.astype(np.float32), y.astype(np.float32)


def _batch(key, x, y):
    return mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)], pad=0, bucket_key=key,
                           provide_data=[mx.io.DataDesc("data", x.shape)],
                           provide_label=[mx.io.DataDesc("softmax_label", y.shape)])


class _BucketIter(mx.io.DataIter):
    """Batches of several bucket keys; provide_data describes the default (largest) one."""

    def __init__(self, n_batches=12, seed=0):
        super().__init__(B)
        rng = np.random.RandomState(seed)
        self.batches = [(k, *_sequences(k, B, rng))
                        for k in (KEYS[i % len(KEYS)] for i in range(n_batches))]
        self.provide_data = [mx.io.DataDesc("data", (B, max(KEYS)))]
        self.provide_label = [mx.io.DataDesc("softmax_label", (B,))]
        self.cursor = 0

    def reset(self):
        self.cursor = 0

    def next(self):
        if self.cursor == len(self.batches):
            raise StopIteration
        self.cursor += 1
        return _batch(*self.batches[self.cursor - 1])


def _params(seed=1):
    rng = np.random.RandomState(seed)
    return {"embed_weight": mx.nd.array(rng.randn(V, E) * 0.3),
            "fc1_weight": mx.nd.array(rng.randn(H, E) * 0.3), "fc1_bias": mx.nd.zeros((H,)),
            "fullyconnected0_weight": mx.nd.array(rng.randn(C, H) * 0.3),
            "fullyconnected0_bias": mx.nd.zeros((C,))}


def _bound(default=8, for_training=True, **kwargs):
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=default, **kwargs)
    mod.bind([("data", (B, default))], [("softmax_label", (B,))], for_training=for_training)
    mod.init_params(arg_params=_params())
    return mod


def _plain(key, arg_params, batch_size=B):
    with mx.name.NameManager():
        sym, data_names, label_names = _sym_gen(key)
    mod = mx.mod.Module(sym, data_names, label_names)
    mod.bind([("data", (batch_size, key))], [("softmax_label", (batch_size,))])
    mod.init_params(arg_params={k: v.copy() for k, v in arg_params.items()})
    return mod


@pytest.mark.smoke
def test_fit_over_buckets_learns_and_creates_every_bucket():
    it = _BucketIter()
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=8)
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(arg_params=_params())
    before = dict(mod.score(it, "ce"))["cross-entropy"]
    mod.fit(it, num_epoch=4, optimizer="sgd",
            optimizer_params={"learning_rate": 0.2, "momentum": 0.9})
    after = dict(mod.score(it, ["ce", "acc"]))
    assert sorted(mod._buckets) == list(KEYS)
    assert after["cross-entropy"] < 0.5 * before
    assert after["accuracy"] == 1.0


def test_buckets_bind_the_default_buckets_arrays():
    mod = _bound()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    rng = np.random.RandomState(2)
    for key in KEYS:
        mod.forward_backward(_batch(key, *_sequences(key, B, rng)))
        mod.update()
    owner = mod._buckets[8]._execs[0]
    for key in (3, 5):
        ex = mod._buckets[key]._execs[0]
        for name in _params():
            assert ex.arg_dict[name] is owner.arg_dict[name]
            assert ex.grad_dict[name] is owner.grad_dict[name]
        got = mod._buckets[key].get_params()[0]
        for name, value in mod.get_params()[0].items():
            np.testing.assert_array_equal(got[name].asnumpy(), value.asnumpy())


def test_update_in_one_bucket_is_seen_by_another():
    mod = _bound()
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    rng = np.random.RandomState(3)
    x5, y5 = _sequences(5, B, rng)
    mod.forward(_batch(5, x5, y5), is_train=False)
    stale = mod.get_outputs()[0].asnumpy()
    mod.forward_backward(_batch(3, *_sequences(3, B, rng)))
    mod.update()
    mod.forward(_batch(5, x5, y5), is_train=False)
    fresh = mod.get_outputs()[0].asnumpy()
    ref = _plain(5, mod.get_params()[0])
    ref.forward(_batch(5, x5, y5), is_train=False)
    np.testing.assert_allclose(fresh, ref.get_outputs()[0].asnumpy(), rtol=1e-6, atol=1e-7)
    assert np.abs(fresh - stale).max() > 1e-4


@pytest.mark.parametrize("key", KEYS)
def test_outputs_match_a_plain_module_for_that_bucket(key):
    mod = _bound()
    x, y = _sequences(key, B, np.random.RandomState(key))
    mod.forward(_batch(key, x, y), is_train=False)
    ref = _plain(key, _params())
    ref.forward(_batch(key, x, y), is_train=False)
    assert mod.symbol.list_arguments() == ref.symbol.list_arguments()
    assert mod.data_shapes[0].shape == (B, key)
    assert mod.output_shapes == [("softmax_output", (B, C))]
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), ref.get_outputs()[0].asnumpy(),
                               rtol=1e-6, atol=1e-7)


def test_training_equals_plain_modules_handing_over_params_and_optimizer():
    """Momentum SGD across buckets = plain Modules that pass on weights and one updater."""
    it = _BucketIter(n_batches=9, seed=4)
    opt = {"learning_rate": 0.1, "momentum": 0.9}
    mod = _bound()
    mod.init_optimizer(optimizer="sgd", optimizer_params=opt)
    refs = {k: _plain(k, _params()) for k in KEYS}
    refs[8].init_optimizer(optimizer="sgd", optimizer_params=opt)
    updater, params = refs[8]._updater, _params()
    for batch in it:
        mod.forward_backward(batch)
        mod.update()
        ref = refs[batch.bucket_key]
        ref.set_params(params, {})
        ref._updater, ref._optimizer, ref.optimizer_initialized = updater, refs[8]._optimizer, True
        ref.forward_backward(batch)
        ref.update()
        params = ref.get_params()[0]
    got = mod.get_params()[0]
    for name, value in params.items():
        np.testing.assert_allclose(got[name].asnumpy(), value.asnumpy(), rtol=1e-5, atol=1e-6)


def _two_branch_gen(flip):
    """Same function for every key, but odd keys list the parameters in another order."""
    def sym_gen(seq_len):
        data = mx.sym.var("data")
        x = mx.sym.sum(mx.sym.Embedding(data, input_dim=V, output_dim=E, name="embed"), axis=1)
        p = mx.sym.FullyConnected(x, num_hidden=C, name="p")
        q = mx.sym.tanh(mx.sym.FullyConnected(x, num_hidden=C, name="q"))
        out = q + p * 0.5 if flip and seq_len % 2 else p * 0.5 + q
        return mx.sym.SoftmaxOutput(out, name="softmax"), ("data",), ("softmax_label",)
    return sym_gen


def test_optimizer_state_follows_parameter_names_not_positions():
    rng = np.random.RandomState(5)
    init = {"embed_weight": rng.randn(V, E), "p_weight": rng.randn(C, E),
            "p_bias": rng.randn(C), "q_weight": rng.randn(C, E), "q_bias": rng.randn(C)}
    results = []
    for flip in (False, True):
        mod = mx.mod.BucketingModule(_two_branch_gen(flip), default_bucket_key=8)
        mod.bind([("data", (B, 8))], [("softmax_label", (B,))])
        mod.init_params(arg_params={k: mx.nd.array(v) for k, v in init.items()})
        mod.init_optimizer(optimizer="sgd",
                           optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
        for batch in _BucketIter(n_batches=8, seed=6):
            mod.forward_backward(batch)
            mod.update()
        results.append(mod)
    assert (results[1]._buckets[5].symbol.list_arguments()[2]
            != results[1]._buckets[8].symbol.list_arguments()[2])
    want, got = results[0].get_params()[0], results[1].get_params()[0]
    for name in init:
        np.testing.assert_allclose(got[name].asnumpy(), want[name].asnumpy(),
                                   rtol=1e-5, atol=1e-6)


def _linear_gen(seq_len):
    data = mx.sym.var("data")
    out = mx.sym.FullyConnected(mx.sym.sum(data, axis=1, keepdims=True), num_hidden=2,
                                name="fc")
    return out, ("data",), None


def test_input_and_parameter_gradients_against_numpy():
    mod = mx.mod.BucketingModule(_linear_gen, default_bucket_key=6)
    mod.bind([("data", (3, 6))], None, inputs_need_grad=True)
    w, b = np.array([[0.5], [-2.0]]), np.array([0.1, 0.2])
    mod.init_params(arg_params={"fc_weight": mx.nd.array(w), "fc_bias": mx.nd.array(b)})
    rng = np.random.RandomState(7)
    x, gy = rng.randn(3, 4), rng.randn(3, 2)
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], [], bucket_key=4), is_train=True)
    mod.backward([mx.nd.array(gy)])
    s = x.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), s @ w.T + b, rtol=1e-5)
    np.testing.assert_allclose(mod.get_input_grads()[0].asnumpy(),
                               np.repeat(gy @ w, 4, axis=1), rtol=1e-5)
    grad = mod._buckets[6]._execs[0].grad_dict["fc_weight"].asnumpy()
    np.testing.assert_allclose(grad, gy.T @ s, rtol=1e-5)
    assert mod.data_shapes[0].shape == (3, 4)


def test_multi_context_training_matches_one_context():
    results = []
    for ctx in (mx.cpu(), [mx.cpu(0), mx.cpu(1)]):
        mod = _bound(context=ctx)
        mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.3})
        for batch in _BucketIter(n_batches=6, seed=8):
            mod.forward_backward(batch)
            mod.update()
        results.append(mod.get_params()[0])
    for name, value in results[0].items():
        np.testing.assert_allclose(results[1][name].asnumpy(), value.asnumpy(),
                                   rtol=1e-5, atol=1e-6)


def test_checkpoint_round_trip_and_rebind_for_prediction(tmp_path):
    it = _BucketIter(n_batches=6, seed=9)
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=8)
    mod.fit(it, num_epoch=1, arg_params=_params(), optimizer_params={"learning_rate": 0.1})
    want = mod.predict(it).asnumpy()
    prefix = str(tmp_path / "bucket")
    mod.save_checkpoint(prefix, 1)
    for key in KEYS:
        assert os.path.exists("%s-%d-symbol.json" % (prefix, key))
    assert os.path.exists(prefix + "-0001.params") and os.path.exists(prefix + ".buckets")
    loaded = mx.mod.BucketingModule.load(prefix, 1, sym_gen=_sym_gen, default_bucket_key=8)
    assert sorted(loaded._buckets) == list(KEYS)
    loaded.bind(it.provide_data, it.provide_label, for_training=False)
    np.testing.assert_allclose(loaded.predict(it).asnumpy(), want, rtol=1e-6, atol=1e-7)
    mod.bind(it.provide_data, it.provide_label, for_training=False, force_rebind=True)
    assert not mod.for_training and list(mod._buckets) == [8]
    np.testing.assert_allclose(mod.predict(it).asnumpy(), want, rtol=1e-6, atol=1e-7)


def test_batch_without_provide_data_is_described_by_its_arrays():
    mod = _bound()
    x, y = _sequences(5, 2, np.random.RandomState(10))
    mod.forward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)], bucket_key=5),
                is_train=False)
    ref = _plain(5, _params(), batch_size=2)
    ref.forward(mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)]), is_train=False)
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), ref.get_outputs()[0].asnumpy(),
                               rtol=1e-6)


def test_names_before_binding_and_current_bucket_after():
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=8)
    assert mod.data_names == ["data"] and mod.output_names == ["softmax_output"]
    with pytest.raises(MXNetError, match="bind"):
        mod.symbol
    mod.bind([("data", (B, 8))], [("softmax_label", (B,))])
    mod.switch_bucket(3, [("data", (B, 3))], [("softmax_label", (B,))])
    assert mod.data_shapes[0].shape == (B, 3) and mod.label_shapes[0].shape == (B,)


def test_wrong_sym_gen_arity_is_reported():
    with pytest.raises(ValueError, match=r"sym_gen\(8\) must return \(symbol, data_names, "
                                         r"label_names\), got a tuple of 2"):
        mx.mod.BucketingModule(lambda k: _sym_gen(k)[:2], default_bucket_key=8)
    with pytest.raises(TypeError, match="expected a Symbol"):
        mx.mod.BucketingModule(lambda k: (None, ["data"], []), default_bucket_key=8)
    with pytest.raises(ValueError, match="default_bucket_key is required"):
        mx.mod.BucketingModule(_sym_gen)
    with pytest.raises(ValueError, match=r"data name\(s\) \['x'\]"):
        mx.mod.BucketingModule(lambda k: (_sym_gen(k)[0], ["x"], []), default_bucket_key=8)


def _shape_gen(seq_len):
    data = mx.sym.var("data")
    out = mx.sym.FullyConnected(data, num_hidden=3, name="fc")   # weight (3, seq_len)
    if seq_len == 7:
        out = mx.sym.FullyConnected(out, num_hidden=2, name="extra")
    return mx.sym.SoftmaxOutput(out, name="softmax"), ("data",), ("softmax_label",)


def test_parameter_shape_or_name_mismatch_across_buckets_is_reported():
    mod = mx.mod.BucketingModule(_shape_gen, default_bucket_key=4)
    mod.bind([("data", (2, 4))], [("softmax_label", (2,))])
    mod.init_params()
    with pytest.raises(MXNetError, match=r"'fc_weight' has shape \(3, 5\) in bucket 5 but "
                                         r"\(3, 4\) in the default bucket 4"):
        mod.switch_bucket(5, [("data", (2, 5))], [("softmax_label", (2,))])
    with pytest.raises(MXNetError, match="'extra_weight' of bucket 7 is not in the default"):
        mod.switch_bucket(7, [("data", (2, 4))], [("softmax_label", (2,))])
    assert sorted(mod._buckets) == [4]


def test_misuse_before_bind_or_init():
    mod = mx.mod.BucketingModule(_sym_gen, default_bucket_key=8)
    batch = _batch(3, *_sequences(3, B, np.random.RandomState(0)))
    with pytest.raises(MXNetError, match="call bind"):
        mod.forward(batch)
    mod.bind([("data", (B, 8))], [("softmax_label", (B,))])
    with pytest.raises(MXNetError, match="call init_params"):
        mod.forward(batch)
    mod.init_params()
    mod.forward_backward(batch)
    with pytest.raises(MXNetError, match="call init_optimizer"):
        mod.update()
    with pytest.raises(MXNetError, match="not bound yet and no data_shapes"):
        mod.switch_bucket(11, None)
