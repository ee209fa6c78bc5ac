"""Worker (4 ranks, oversubscribed): mxlite.contrib.horovod, SplitSampler, and
dist_sync giving bit-identical sums on every rank."""
import numpy as np

import mxlite as mx
import mxlite.contrib.horovod

mxlite.contrib.horovod.install_as_horovod()
import horovod.mxnet as hvd  # noqa: E402  (Horovod's name for mxlite.contrib.horovod)

assert hvd is mxlite.contrib.horovod

hvd.init()
r, n = hvd.rank(), hvd.size()
assert n == 4 and (hvd.local_rank(), hvd.local_size(), hvd.cross_size()) == (r, 4, 1)

x = mx.nd.ones((2, 3)) * (r + 1)
assert (hvd.allreduce(x).asnumpy() == 2.5).all() and (x.asnumpy() == r + 1).all()
assert (hvd.allreduce(x, average=False).asnumpy() == 10).all()
assert (hvd.allreduce(x, op=hvd.Max).asnumpy() == 4).all()
assert (hvd.allreduce(x, prescale_factor=2.0, postscale_factor=0.5).asnumpy() == 2.5).all()
hvd.allreduce_(x, average=False)
assert (x.asnumpy() == 10).all()
assert (hvd.broadcast(mx.nd.ones((2,)) * r, root_rank=2).asnumpy() == 2).all()
y = mx.nd.ones((2,)) * r
hvd.broadcast_(y, root_rank=3)
assert (y.asnumpy() == 3).all()
g = hvd.allgather(mx.nd.ones((r + 1, 2)) * r)
assert g.shape == (10, 2) and g.asnumpy()[:, 0].tolist() == [0, 1, 1, 2, 2, 2, 3, 3, 3, 3]
assert hvd.broadcast_object({"r": r}, root_rank=1) == {"r": 1}
assert hvd.allgather_object(r * r) == [0, 1, 4, 9]

# broadcast_parameters: known shapes now, deferred ones at the first forward
mx.random.seed(r)
net = mx.gluon.nn.HybridSequential()
net.add(mx.gluon.nn.Dense(5, in_units=3), mx.gluon.nn.Dense(2))
net.initialize(mx.init.Normal(1.0))
hvd.broadcast_parameters(net.collect_params(), root_rank=0)
net(mx.nd.ones((1, 3)))
flat = np.concatenate([p.data().asnumpy().ravel() for p in net.collect_params().values()])
assert all(np.array_equal(flat, other) for other in hvd.allgather_object(flat))

# DistributedTrainer / DistributedOptimizer: the mean over workers of grad / batch_size
data = [np.random.RandomState(k).randn(4, 3).astype(np.float32) for k in range(n)]
mean_grad = np.mean([d.sum(axis=0) for d in data], axis=0) / 4
for make in (lambda p: hvd.DistributedTrainer(p, "sgd", {"learning_rate": 0.1}),
             lambda p: mx.gluon.Trainer(p, hvd.DistributedOptimizer(
                 mx.optimizer.SGD(learning_rate=0.1)), kvstore=None)):
    lin = mx.gluon.nn.Dense(1, in_units=3, use_bias=False)
    lin.initialize(mx.init.Zero())
    trainer = make(lin.collect_params())
    with mx.autograd.record():
        loss = lin(mx.nd.array(data[r])).sum()
    loss.backward()
    trainer.step(4)
    np.testing.assert_allclose(lin.weight.data().asnumpy()[0], -0.1 * mean_grad, rtol=1e-5)

# dist_sync on 4 ranks: every rank ends with the same bits
kv = mx.kv.create("dist_sync")
sizes = [7, 3000, 70000]
kv.init(list(range(3)), [mx.nd.zeros((m,)) for m in sizes])
outs = [mx.nd.zeros((m,)) for m in sizes]
kv.pushpull(list(range(3)), [mx.nd.array(np.random.RandomState(10 * r + j).randn(m))
                             for j, m in enumerate(sizes)], out=outs)
got = np.concatenate([o.asnumpy() for o in outs])
want = sum(np.concatenate([np.random.RandomState(10 * k + j).randn(m).astype(np.float32)
                           for j, m in enumerate(sizes)]) for k in range(n))
np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
assert all(np.array_equal(got, other) for other in hvd.allgather_object(got))

# SplitSampler: disjoint equal shards
mine = list(mx.gluon.data.SplitSampler(10, num_parts=n, part_index=r))
assert sorted(sum(hvd.allgather_object(mine), [])) == list(range(8))
print("horovod ok", r, flush=True)
