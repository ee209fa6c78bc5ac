"""Worker (2 ranks) for tests/test_dist.py: MXNet's dist_sync kvstore contract.

Every check is an assert; the test passes when both ranks print "contract ok".
argv[1] is a directory shared by the ranks.
"""
import os
import sys

import numpy as np

import mxlite as mx

out_dir = sys.argv[1]
kv = mx.kv.create("dist_sync")
r, n = kv.rank, kv.num_workers
assert (kv.type, n) == ("dist_sync", 2) and r in (0, 1), (kv.type, r, n)
assert kv.is_capable("optimizer") and kv.is_capable(mx.kv.KVStoreBase.OPTIMIZER)

# init: rank 0's value wins, for several keys, shapes and dtypes
keys = [3, 5, 7, 9, 11]
shapes = [(2, 3), (5,), (4, 1, 2), (3,), (1,)]
dtypes = ["float32", "float64", "float16", "int32", "int64"]
kv.init(keys, [mx.nd.array(np.full(s, 10 * (r + 1) + i), dtype=d)
               for i, (s, d) in enumerate(zip(shapes, dtypes))])
for i, (k, s, d) in enumerate(zip(keys, shapes, dtypes)):
    out = mx.nd.zeros(s, dtype=d)
    kv.pull(k, out=out)
    assert out.dtype == np.dtype(d) and (out.asnumpy() == 10 + i).all(), (k, out)

# push: the values of one worker (one per device) are summed, then the workers' sums
kv.push(keys, [[mx.nd.ones(s, dtype=d) * (r + 1), mx.nd.ones(s, ctx=mx.cpu(1), dtype=d) * 2]
               for s, d in zip(shapes, dtypes)])
for k, s, d in zip(keys, shapes, dtypes):
    outs = [mx.nd.zeros(s, dtype=d), mx.nd.zeros(s, ctx=mx.cpu(1), dtype=d)]
    kv.pull(k, out=outs)
    for o in outs:
        assert o.dtype == np.dtype(d) and (o.asnumpy() == (1 + 2) + (2 + 2)).all(), (k, o)

# pushpull: into out, or back into the pushed arrays; a shape mismatch changes nothing
g = [mx.nd.ones((2, 3)) * (r + 1), mx.nd.ones((2, 3), ctx=mx.cpu(1))]
kv.pushpull(3, g)
assert all((x.asnumpy() == 2 + 3).all() for x in g), g
o = mx.nd.zeros((2, 3))
kv.pushpull(3, mx.nd.ones((2, 3)) * r, out=o)
assert (o.asnumpy() == 1).all(), o
try:
    kv.pushpull(3, mx.nd.ones((3, 2)), out=o)
    raise AssertionError("a wrong shape was accepted")
except mx.MXNetError as err:
    assert "(2, 3)" in str(err) and "(3, 2)" in str(err), err

# large and small float32 arrays of random values (fused and unfused buffers):
# the sum is exact for two workers, so it must equal the local sum bit for bit
sizes = [10, 300, 5000, 17, 100000]
mine = [np.random.RandomState(100 * r + j).randn(m).astype(np.float32)
        for j, m in enumerate(sizes)]
want = [np.random.RandomState(j).randn(m).astype(np.float32)
        + np.random.RandomState(100 + j).randn(m).astype(np.float32)
        for j, m in enumerate(sizes)]
big = mx.kv.create("dist_device_sync")
bkeys = ["a%d" % j for j in range(len(sizes))]
big.init(bkeys, [mx.nd.zeros((m,)) for m in sizes])
outs = [mx.nd.zeros((m,)) for m in sizes]
big.pushpull(bkeys, [mx.nd.array(a) for a in mine], out=outs)
for o, w in zip(outs, want):
    assert np.array_equal(o.asnumpy(), w), np.abs(o.asnumpy() - w).max()

# broadcast: rank 0's value into every out
bc = [mx.nd.zeros((3,)), mx.nd.zeros((3,), ctx=mx.cpu(2))]
big.broadcast("b", mx.nd.arange(3) + 100 * r, out=bc)
assert all((x.asnumpy() == [0, 1, 2]).all() for x in bc), bc

# an optimizer on the store runs once on the sum of the workers' gradients
opt_kv = mx.kv.create("dist")
opt_kv.init("w", mx.nd.zeros((3,)))
opt_kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, rescale_grad=0.5))
w = mx.nd.zeros((3,))
opt_kv.pushpull("w", mx.nd.ones((3,)) * (r + 1), out=w)        # gradient 0.5 * 3
assert np.allclose(w.asnumpy(), -0.15), w
path = os.path.join(out_dir, "states")
opt_kv.save_optimizer_states(path)
opt_kv.pushpull("w", mx.nd.ones((3,)) * (r + 1), out=w)        # momentum 0.9
assert np.allclose(w.asnumpy(), -0.15 - 0.9 * 0.15 - 0.15), w
opt_kv.load_optimizer_states(path)
mom = opt_kv._updater.states["w"]
assert np.allclose(mom.asnumpy(), -0.15), mom

# 2-bit compression: each worker sends +-threshold or 0 and keeps the rest as residual
c_kv = mx.kv.create("dist_sync")
c_kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
c_kv.init(0, mx.nd.zeros((4,)))
grads = {0: [0.3, 0.6, -0.7, 0.1], 1: [0.3, 0.2, -0.2, 1.2]}[r]
got = mx.nd.zeros((4,))
c_kv.pushpull(0, mx.nd.array(grads), out=got)
# rank 0 sends [0, .5, -.5, 0], rank 1 [0, 0, 0, .5]
assert np.allclose(got.asnumpy(), [0, 0.5, -0.5, 0.5]), got
c_kv.pushpull(0, mx.nd.array(grads), out=got)
# residuals: rank 0 [.3, .1, -.2, .1], rank 1 [.3, .2, -.2, .7]; plus the same gradients:
# rank 0 sends [.5, .5, -.5, 0], rank 1 [.5, 0, 0, .5] (one threshold per push)
assert np.allclose(got.asnumpy(), [1, 0.5, -0.5, 0.5]), got
res = c_kv._residuals[0]
assert np.allclose(res, {0: [0.1, 0.2, -0.4, 0.2], 1: [0.1, 0.4, -0.4, 1.4]}[r]), res

# barrier: after it, both ranks' files exist
open(os.path.join(out_dir, "rank%d" % r), "w").close()
kv._barrier()
assert os.path.exists(os.path.join(out_dir, "rank%d" % (1 - r)))

# workers that disagree on init all get the same error (nobody hangs)
try:
    kv.init(20, mx.nd.zeros((2 + r,)))
    raise AssertionError("mismatched init was accepted")
except mx.MXNetError as err:
    assert "rank 1 initialises" in str(err), err

print("contract ok", r, flush=True)
