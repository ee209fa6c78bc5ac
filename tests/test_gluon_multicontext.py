"""Issue #4: data-parallel training on two contexts with split_and_load and the Trainer's
kvstore: a Conv2D-BatchNorm-Dropout-Dense network learns the embedded Digits, and the
trained parameters are the same on both contexts."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, gluon
from mxlite.gluon import nn
from mxlite.gluon.data.vision import Digits, transforms

CTXS = [mx.cpu(0), mx.cpu(1)]


def _net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(16, kernel_size=3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
                nn.MaxPool2D(pool_size=2), nn.Flatten(), nn.Dropout(0.25), nn.Dense(10))
    return net


def _loader(train, batch_size):
    data = Digits(train=train).transform_first(transforms.ToTensor())
    return gluon.data.DataLoader(data, batch_size=batch_size, shuffle=train)


def _accuracy(net, ctx):
    metric = mx.metric.Accuracy()
    for x, y in _loader(False, 128):
        metric.update([y], [net(x.as_in_context(ctx))])
    return metric.get()[1]


def _train(net, trainer, epochs, batch_size=64):
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    for _ in range(epochs):
        for x, y in _loader(True, batch_size):
            xs = gluon.utils.split_and_load(x, CTXS, even_split=False)
            ys = gluon.utils.split_and_load(y, CTXS, even_split=False)
            with autograd.record():
                losses = [loss_fn(net(xi), yi) for xi, yi in zip(xs, ys)]
            autograd.backward(losses)
            trainer.step(x.shape[0])


@pytest.mark.parametrize("hybridize,update_on_kvstore", [(False, None), (True, False)])
def test_two_contexts_learn_digits_and_agree(hybridize, update_on_kvstore):
    mx.random.seed(1)
    net = _net()
    net.initialize(mx.init.Xavier(), ctx=CTXS)
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.01},
                            update_on_kvstore=update_on_kvstore)
    _train(net, trainer, epochs=4)
    assert isinstance(trainer._kvstore, mx.kv.KVStore) and trainer._kvstore.type == "device"
    assert trainer._update_on_kvstore is (update_on_kvstore is not False)

    params = net.collect_params()
    trainable = [p for p in params.values() if p.grad_req != "null"]
    for p in trainable:
        d0, d1 = (d.asnumpy() for d in p.list_data())
        np.testing.assert_array_equal(d0, d1, err_msg=p.name)
    # As in MXNet, BatchNorm's running statistics (grad_req='null') are not reduced:
    # each context averages over its own half of every batch.
    for p in params.values():
        if p.grad_req == "null":
            d0, d1 = (d.asnumpy() for d in p.list_data())
            assert np.all(np.isfinite(d0)) and not np.array_equal(d0, d1), p.name

    acc0, acc1 = _accuracy(net, CTXS[0]), _accuracy(net, CTXS[1])
    assert acc0 >= 0.95, acc0
    assert abs(acc0 - acc1) < 0.02


def test_two_contexts_match_one_context_on_the_same_batches():
    """Summing two halves' gradients on the kvstore equals one context's full-batch step."""
    x = mx.nd.array(np.random.RandomState(0).rand(8, 1, 8, 8))
    y = mx.nd.array(np.arange(8) % 10)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    weights = []
    for ctxs in ([mx.cpu(0)], CTXS):
        mx.random.seed(3)
        net = nn.HybridSequential()
        with net.name_scope():
            net.add(nn.Conv2D(4, kernel_size=3, in_channels=1), nn.Flatten(),
                    nn.Dense(10, in_units=144))
        net.initialize(mx.init.Xavier(), ctx=ctxs)
        trainer = gluon.Trainer(net.collect_params(), "sgd",
                                {"learning_rate": 0.5, "momentum": 0.9})
        for _ in range(3):
            xs = gluon.utils.split_and_load(x, ctxs)
            ys = gluon.utils.split_and_load(y, ctxs)
            with autograd.record():
                losses = [loss_fn(net(xi), yi) for xi, yi in zip(xs, ys)]
            autograd.backward(losses)
            trainer.step(8)
        weights.append([p.data(ctxs[-1]).asnumpy() for p in net.collect_params().values()])
    for w1, w2 in zip(*weights):
        np.testing.assert_allclose(w1, w2, rtol=1e-5, atol=1e-6)
