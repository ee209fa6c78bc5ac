"""The execution core side by side: two mxlite trees timed in one run.

Run: python benchmarks/bench_core.py [OTHER_TREE]
Times, for this checkout and (when given) another mxlite checkout, each in its own
worker process, interleaving the rounds so that a busy host slows both alike:

- ``x + x`` on 16 floats, without recording, and recorded with ``backward()``;
- the MLP 784-256-256-10 training step at batch 16, imperative and hybridized.

Prints the best per-call time in microseconds per tree and the ratio this/other. The
time is the worker's CPU time (``time.process_time``, all its threads): on a shared host,
time spent waiting for a core is not counted.
"""
import os
import subprocess
import sys
import time
import timeit

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUNDS = 5


def _worker():
    """Answer ``case n`` lines with the best per-call time of ``case``."""
    sys.path.insert(0, os.path.join(HERE, "benchmarks"))
    import mxlite as mx
    from bench_gluon import gluon_step
    import numpy as np
    x = mx.nd.array(np.random.rand(16).astype(np.float32))
    v = mx.nd.array(np.random.rand(16).astype(np.float32))
    v.attach_grad()

    def recorded():
        with mx.autograd.record():
            y = v + v
        y.backward()

    cases = {"x + x": lambda: x + x, "x + x recorded + backward": recorded,
             "MLP b16 imperative": gluon_step(mx, "mlp", 16, False),
             "MLP b16 hybridized": gluon_step(mx, "mlp", 16, True)}
    for line in sys.stdin:
        name, n = line.rsplit(" ", 1)
        fn = cases[name]
        fn()
        t = min(timeit.repeat(fn, number=int(n), repeat=3, timer=time.process_time)) / int(n)
        print(t * 1e6, flush=True)


def main():
    trees = [("this", HERE)] + ([("other", os.path.abspath(sys.argv[1]))]
                                if len(sys.argv) > 1 else [])
    procs = {}
    for label, tree in trees:
        env = dict(os.environ, PYTHONPATH=tree)
        procs[label] = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
            cwd=tree)
    cases = [("x + x", 20000), ("x + x recorded + backward", 5000),
             ("MLP b16 imperative", 200), ("MLP b16 hybridized", 200)]
    best = {}
    for _ in range(ROUNDS):
        for name, n in cases:
            for label, proc in procs.items():
                proc.stdin.write("%s %d\n" % (name, n))
                proc.stdin.flush()
                t = float(proc.stdout.readline())
                key = (name, label)
                best[key] = min(best.get(key, t), t)
    for proc in procs.values():
        proc.stdin.close()
        proc.wait()
    head = "%-28s" % "case (us per call)" + "".join("%12s" % label for label, _ in trees)
    print(head + ("%10s" % "this/other" if len(trees) > 1 else ""))
    for name, _ in cases:
        row = "%-28s" % name + "".join("%12.1f" % best[(name, label)] for label, _ in trees)
        if len(trees) > 1:
            row += "%10.2f" % (best[(name, "this")] / best[(name, "other")])
        print(row)


if __name__ == "__main__":
    if sys.argv[1:] == ["--worker"]:
        _worker()
    else:
        main()
