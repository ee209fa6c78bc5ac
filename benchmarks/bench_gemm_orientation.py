"""Which orientation of ``rows @ w.T`` (FullyConnected's forward) is faster here.

Run: python benchmarks/bench_gemm_orientation.py

FullyConnected stores its weight as (num_hidden, in_units), so the forward product
is ``x @ w.T``. BLAS libraries do not run the two layouts of the same product at
the same speed: with OpenBLAS, a few rows against a wide weight are faster as
``(w @ x.T).T`` (copied back to row-major), which ``FullyConnected`` picks by
``fully_connected.flips``. This prints both
timings (best of 7 interleaved rounds, microseconds) and which one the rule picks,
to re-check the rule on another machine or BLAS.
"""
import time

import numpy as np

SHAPES = [(1, 784, 256), (4, 784, 256), (16, 784, 256), (32, 784, 256), (64, 784, 256),
          (128, 784, 256), (16, 256, 256), (16, 256, 10), (16, 1024, 1024),
          (64, 1024, 1024), (16, 128, 128)]


def _best(fns, n, rounds=7):
    best = [float("inf")] * len(fns)
    for _ in range(rounds):
        for i, f in enumerate(fns):
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            best[i] = min(best[i], (time.perf_counter() - t0) / n * 1e6)
    return best


def main():
    from mxlite.operator.nn.fully_connected import flips
    rng = np.random.RandomState(0)
    print("%-18s %10s %12s  rule picks" % ("rows x in -> out", "x @ w.T", "(w @ x.T).T"))
    for b, k, n in SHAPES:
        x = rng.rand(b, k).astype(np.float32)
        w = rng.rand(n, k).astype(np.float32)
        direct, flipped = _best([lambda: x @ w.T, lambda: (w @ x.T).T.copy()], max(20, 4000 // b))
        print("%-18s %10.1f %12.1f  %s" % ("%dx%d -> %d" % (b, k, n), direct, flipped,
                                         "flipped" if flips(np, b, k, n) else "direct"))


if __name__ == "__main__":
    main()
