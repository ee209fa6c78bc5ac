"""Worker (2 ranks): gluon.Trainer on 'dist_async'; rank 1 is three times slower.

Both fit y = x . w_true on their own samples, pushing and pulling at their own pace;
the shared weights must converge, and the shared update count must hold every push.
"""
import time

import numpy as np

import mxlite as mx

STEPS, BATCH = 120, 16
w_true = np.array([[2.0, -3.0, 0.5]], np.float32)
kv = mx.kv.create("dist_async")
rng = np.random.RandomState(kv.rank)
x = rng.randn(STEPS * BATCH, 3).astype(np.float32)
y = x.dot(w_true.T) + 0.01 * rng.randn(len(x), 1).astype(np.float32)
mx.random.seed(kv.rank)
net = mx.gluon.nn.Dense(1, in_units=3, use_bias=False)
net.initialize(mx.init.Normal(1.0))
try:
    mx.gluon.Trainer(net.collect_params(), "sgd", kvstore="dist_async", update_on_kvstore=False)
    raise AssertionError("update_on_kvstore=False was accepted on dist_async")
except ValueError as err:
    assert "async" in str(err), err
trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.05}, kvstore=kv)
assert trainer._update_on_kvstore
loss_fn = mx.gluon.loss.L2Loss()
start = time.monotonic()
for step in range(STEPS):
    sl = slice(step * BATCH, (step + 1) * BATCH)
    with mx.autograd.record():
        loss = loss_fn(net(mx.nd.array(x[sl])), mx.nd.array(y[sl]))
    loss.backward()
    trainer.step(BATCH)
    if kv.rank == 1:
        time.sleep(0.004)
took = time.monotonic() - start
kv._barrier()
w = mx.nd.zeros((1, 3))
kv.pull(0, out=w)
err = np.abs(w.asnumpy() - w_true).max()
assert err < 0.05, (w, err)
if kv.rank == 0:
    # a last push of a zero gradient: its count is every push of both workers plus one
    kv.push(0, mx.nd.zeros((1, 3)))
    assert kv._updater.optimizer._index_update_count[0] == 2 * STEPS + 1, \
        kv._updater.optimizer._index_update_count
print("async ok", kv.rank, "%.2f s" % took, flush=True)
