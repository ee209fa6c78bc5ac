"""Worker (2 ranks): Module.fit(kvstore='dist_sync') on MNISTIter parts, updating on
the store (MXNet's default) and on the worker (MXNET_UPDATE_ON_KVSTORE=0).

argv[1] holds the idx files (tests/test_dist.py writes them); each rank reads part
``rank`` of 2 (num_parts/part_index), starts from its own random initialisation
(fit must broadcast rank 0's) and saves the initial and final parameters.
"""
import os
import sys

import numpy as np

import mxlite as mx
from common import BATCH, mlp_symbol

out_dir = sys.argv[1]
for mode in ("on", "off"):
    os.environ["MXNET_UPDATE_ON_KVSTORE"] = "1" if mode == "on" else "0"
    kv = mx.kv.create("dist_sync")
    it = mx.io.MNISTIter(image=os.path.join(out_dir, "images-idx3-ubyte"),
                         label=os.path.join(out_dir, "labels-idx1-ubyte"), batch_size=BATCH,
                         shuffle=False, flat=True, silent=True, num_parts=kv.num_workers,
                         part_index=kv.rank)
    mod = mx.mod.Module(mlp_symbol(mx), context=mx.cpu())
    mod.bind(it.provide_data, it.provide_label)
    mx.random.seed(20 + kv.rank)
    mod.init_params(mx.init.Xavier())
    init = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}  # fit updates in place
    mod.fit(it, kvstore=kv, optimizer="sgd", num_epoch=2,
            optimizer_params={"learning_rate": 0.5, "momentum": 0.9})
    assert mod._update_on_kvstore is (mode == "on")
    final, _ = mod.get_params()
    np.savez(os.path.join(out_dir, "module_%s_rank%d.npz" % (mode, kv.rank)),
             **{"init/" + k: v for k, v in init.items()},
             **{"final/" + k: v.asnumpy() for k, v in final.items()})
print("module done", flush=True)
