"""mx.model.FeedForward: MXNet's first training API trains, predicts, scores and
checkpoints."""
import numpy as np
import pytest

import mxlite as mx


def _data(n=300):
    x = np.random.randn(n, 6).astype("float32")
    y = (x @ np.random.randn(6, 3)).argmax(1).astype("float32")
    return x, y


def _net():
    h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=16, name="fc1"),
                          act_type="relu")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=3, name="fc2"),
                                name="softmax")


def test_feedforward_trains_on_arrays_and_predicts(tmp_path):
    x, y = _data()
    model = mx.model.FeedForward(_net(), num_epoch=8, numpy_batch_size=30, learning_rate=0.1,
                                 momentum=0.9)
    model.fit(x, y)
    prob = model.predict(x)
    assert prob.shape == (300, 3) and np.allclose(prob.sum(1), 1, atol=1e-5)
    assert (prob.argmax(1) == y).mean() > 0.9
    assert model.score(mx.io.NDArrayIter(x, y, 50)) > 0.9
    assert set(model.arg_params) == {"fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias"}
    prefix = str(tmp_path / "ff")
    model.save(prefix)
    again = mx.model.FeedForward.load(prefix, 8)
    assert again.begin_epoch == 8
    assert np.allclose(again.predict(x), prob, atol=1e-6)


def test_feedforward_create_with_iterators_and_return_data():
    x, y = _data(120)
    train = mx.io.NDArrayIter(x, y, 20, shuffle=True)
    val = mx.io.NDArrayIter(x[:50], y[:50], 20)
    model = mx.model.FeedForward.create(_net(), train, num_epoch=3, eval_data=val,
                                        learning_rate=0.05)
    out, data, label = model.predict(val, return_data=True)
    assert out.shape == (50, 3)             # padding of the last batch removed
    assert np.allclose(data, x[:50]) and np.allclose(label, y[:50])
    assert model.predict(val, num_batch=1).shape == (20, 3)


def test_feedforward_epoch_size_and_starting_params():
    x, y = _data(100)
    seen = []
    model = mx.model.FeedForward(_net(), num_epoch=2, epoch_size=3, numpy_batch_size=10)
    model.fit(x, y, batch_end_callback=lambda p: seen.append((p.epoch, p.nbatch)))
    assert seen == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    start = {k: v.copy() for k, v in model.arg_params.items()}
    frozen = mx.model.FeedForward(_net(), num_epoch=1, arg_params=start, learning_rate=0.0)
    frozen.fit(x, y)
    assert np.allclose(frozen.arg_params["fc1_weight"].asnumpy(), start["fc1_weight"].asnumpy())


def test_feedforward_bad_input():
    x, y = _data(20)
    model = mx.model.FeedForward(_net(), num_epoch=1)
    with pytest.raises(ValueError, match="y must be given"):
        model.fit(x)
    with pytest.raises(ValueError, match="20 samples but y has 19"):
        model.fit(x, y[:19])
    with pytest.raises(TypeError, match="DataIter"):
        model.fit([1, 2, 3], y)
    with pytest.raises(ValueError, match="num_epoch"):
        mx.model.FeedForward(_net()).fit(x, y)
    with pytest.raises(mx.MXNetError, match="no parameters"):
        mx.model.FeedForward(_net()).predict(x)
    extra = mx.model.FeedForward(_net(), num_epoch=1, arg_params={"zz": mx.nd.ones(1)})
    with pytest.raises(mx.MXNetError, match="allow_extra_params"):
        extra.fit(x, y)
