"""Worker for tests/test_dist.py: rank 1 misbehaves in the way argv[1] names while
rank 0 keeps pushing; the job must end non-zero with a message, never hang."""
import sys
import time

import mxlite as mx

kv = mx.kv.create("dist_sync")
kv.init("w", mx.nd.zeros((4,)))
for step in range(1000):
    if kv.rank == 1 and step == 2:
        mode = sys.argv[1]
        print("MISBEHAVES AT %.3f" % time.time(), flush=True)
        if mode == "raise":
            raise RuntimeError("deliberate failure on rank 1")
        if mode == "exit0":
            sys.exit(0)
        if mode == "hang":
            time.sleep(60)
    kv.pushpull("w", mx.nd.ones((4,)))
    time.sleep(0.01)
