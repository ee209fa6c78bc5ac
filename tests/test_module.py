"""mx.mod.Module: binding, parameters, optimizer steps, fit/score/predict, checkpoints."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def _mlp(hidden=16, classes=3):
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=hidden, name="fc1")
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=classes, name="fc2")
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


def _blobs(n=240, dim=10, classes=3, seed=0):
    rng = np.random.RandomState(seed)
    centers = rng.randn(classes, dim) * 3
    y = rng.randint(0, classes, n)
    x = centers[y] + rng.randn(n, dim)
    return x.astype(np.float32), y.astype(np.float32)


def _params(seed=1):
    rng = np.random.RandomState(seed)
    return {"fc1_weight": mx.nd.array(rng.randn(16, 10) * 0.1),
            "fc1_bias": mx.nd.zeros((16,)),
            "fc2_weight": mx.nd.array(rng.randn(3, 16) * 0.1),
            "fc2_bias": mx.nd.zeros((3,))}


@pytest.mark.smoke
def test_fit_reaches_high_accuracy():
    x, y = _blobs()
    it = mx.io.NDArrayIter(x, y, batch_size=24, shuffle=True)
    mod = mx.mod.Module(_mlp(), context=mx.cpu())
    mod.fit(it, num_epoch=6, optimizer="sgd",
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
            initializer=mx.init.Xavier())
    assert dict(mod.score(it, "acc"))["accuracy"] > 0.95


def test_one_step_equals_manual_sgd():
    x, y = _blobs(n=8)
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    mod = mx.mod.Module(_mlp())
    mod.bind(data_shapes=[("data", (8, 10))], label_shapes=[("softmax_label", (8,))])
    mod.init_params(arg_params=_params())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.5})
    mod.forward_backward(batch)
    mod.update()
    got = mod.get_params()[0]

    p = _params()
    for v in p.values():
        v.attach_grad()
    with mx.autograd.record():
        h = mx.nd.relu(mx.nd.FullyConnected(mx.nd.array(x), p["fc1_weight"], p["fc1_bias"],
                                            num_hidden=16))
        out = mx.nd.SoftmaxOutput(mx.nd.FullyConnected(h, p["fc2_weight"], p["fc2_bias"],
                                                       num_hidden=3), mx.nd.array(y))
    out.backward()
    for k, v in p.items():
        want = v.asnumpy() - 0.5 * v.grad.asnumpy() / 8      # rescale_grad = 1/batch_size
        np.testing.assert_allclose(got[k].asnumpy(), want, rtol=1e-5, atol=1e-7, err_msg=k)


def test_two_contexts_match_one():
    x, y = _blobs(n=24)
    results = []
    for ctx in ([mx.cpu(0)], [mx.cpu(0), mx.cpu(1)]):
        it = mx.io.NDArrayIter(x, y, batch_size=12)
        mod = mx.mod.Module(_mlp(), context=ctx)
        mod.fit(it, num_epoch=2, arg_params=_params(), optimizer="sgd",
                optimizer_params={"learning_rate": 0.1})
        results.append(mod.get_params()[0])
    for k in results[0]:
        np.testing.assert_allclose(results[0][k].asnumpy(), results[1][k].asnumpy(),
                                   rtol=1e-5, atol=1e-6, err_msg=k)


def test_predict_removes_padding_and_outputs():
    x, y = _blobs(n=10)
    mod = mx.mod.Module(_mlp())
    it = mx.io.NDArrayIter(x, y, batch_size=4)
    mod.bind(it.provide_data, it.provide_label, for_training=False)
    mod.init_params(arg_params=_params())
    pred = mod.predict(it)
    assert pred.shape == (10, 3)
    np.testing.assert_allclose(pred.asnumpy().sum(axis=1), 1, rtol=1e-5)
    assert mod.output_shapes == [("softmax_output", (4, 3))]
    with pytest.raises(MXNetError, match="for_training=False"):
        mod.backward()


def test_fixed_params_and_input_grads():
    x, y = _blobs(n=8)
    batch = mx.io.DataBatch([mx.nd.array(x)], [mx.nd.array(y)])
    mod = mx.mod.Module(_mlp(), fixed_param_names=["fc1_weight"])
    mod.bind([("data", (8, 10))], [("softmax_label", (8,))], inputs_need_grad=True)
    mod.init_params(arg_params=_params())
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    before = mod.get_params()[0]["fc1_weight"].asnumpy().copy()
    mod.forward_backward(batch)
    mod.update()
    after = mod.get_params()[0]
    np.testing.assert_array_equal(after["fc1_weight"].asnumpy(), before)
    assert mod.get_input_grads()[0].shape == (8, 10)
    assert np.abs(mod.get_input_grads()[0].asnumpy()).sum() > 0


def test_checkpoint_and_load(tmp_path):
    x, y = _blobs(n=12)
    it = mx.io.NDArrayIter(x, y, batch_size=6)
    mod = mx.mod.Module(_mlp())
    mod.fit(it, num_epoch=1, arg_params=_params(), optimizer="adam")
    prefix = str(tmp_path / "mlp")
    mod.save_checkpoint(prefix, 1, save_optimizer_states=True)
    loaded = mx.mod.Module.load(prefix, 1, load_optimizer_states=True)
    loaded.bind(it.provide_data, it.provide_label)
    loaded.init_optimizer(optimizer="adam")
    for k, v in mod.get_params()[0].items():
        np.testing.assert_array_equal(loaded.get_params()[0][k].asnumpy(), v.asnumpy())
    np.testing.assert_allclose(loaded.predict(it).asnumpy(), mod.predict(it).asnumpy(),
                               rtol=1e-6)


def test_init_params_errors():
    mod = mx.mod.Module(_mlp())
    with pytest.raises(MXNetError, match="bind"):
        mod.init_params()
    mod.bind([("data", (4, 10))], [("softmax_label", (4,))])
    bad = _params()
    bad["fc1_weight"] = mx.nd.zeros((3, 3))
    with pytest.raises(MXNetError, match="fc1_weight.*shape"):
        mod.init_params(arg_params=bad)
    with pytest.raises(MXNetError, match="missing"):
        mod.init_params(arg_params={"fc1_weight": _params()["fc1_weight"]})
    with pytest.raises(ValueError, match="data name"):
        mx.mod.Module(_mlp(), data_names=["input"])


def test_batch_end_callback_and_eval_data(caplog):
    import logging
    x, y = _blobs(n=24)
    seen = []
    it = mx.io.NDArrayIter(x, y, batch_size=8)
    mod = mx.mod.Module(_mlp())
    with caplog.at_level(logging.INFO):
        mod.fit(it, eval_data=it, num_epoch=2, arg_params=_params(),
                batch_end_callback=lambda p: seen.append((p.epoch, p.nbatch)),
                epoch_end_callback=lambda epoch, sym, arg, aux: seen.append(("end", epoch)))
    assert seen == [(0, 0), (0, 1), (0, 2), ("end", 0), (1, 0), (1, 1), (1, 2), ("end", 1)]
    assert any("Validation-accuracy" in r.message for r in caplog.records)
