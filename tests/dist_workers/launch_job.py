"""Worker started by ``python -m mxlite.launch`` in tests/test_dist.py."""
import os

import mxlite as mx

kv = mx.kv.create("dist_sync")
kv.init(0, mx.nd.zeros((1,)))
out = mx.nd.zeros((1,))
kv.pushpull(0, mx.nd.ones((1,)), out=out)
assert out.asscalar() == kv.num_workers
print("rank %d of %d ok=%s" % (kv.rank, kv.num_workers, os.environ.get("MXLITE_TEST_FLAG")),
      flush=True)
