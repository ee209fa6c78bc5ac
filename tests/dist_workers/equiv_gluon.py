"""Worker (2 ranks): gluon.Trainer(kvstore='dist_sync') with update_on_kvstore on and off.

Each rank initialises its MLP with its own seed (the Trainer must broadcast rank 0's),
trains on its half of every batch, and saves the initial and final weights to
argv[1]/gluon_<mode>_rank<r>.npz for tests/test_dist.py to compare.
"""
import os
import sys

import numpy as np

import mxlite as mx
from common import BATCH, data, mlp, train_gluon, weights

out_dir = sys.argv[1]
x, y = data()
for mode, update_on_kvstore in (("on", True), ("off", False)):
    kv = mx.kv.create("dist_sync")
    net = mlp(mx, seed=10 + kv.rank)
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3},
                               kvstore=kv, update_on_kvstore=update_on_kvstore)
    assert trainer._update_on_kvstore is update_on_kvstore
    init = weights(net)            # after the Trainer: rank 0's everywhere

    def batches(step, r=kv.rank):
        start = (step * 2 + r) * BATCH
        return slice(start, start + BATCH)

    train_gluon(mx, net, trainer, x, y, batches)
    final = weights(net)
    np.savez(os.path.join(out_dir, "gluon_%s_rank%d.npz" % (mode, kv.rank)),
             **{"init/" + k: v for k, v in init.items()},
             **{"final/" + k: v for k, v in final.items()})
print("gluon done", flush=True)
