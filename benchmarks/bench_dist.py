"""Distributed training speed: the dist_sync kvstore against raw mpi4py, and an MLP
training step on 2 ranks against 1.

Run: python benchmarks/bench_dist.py [--quick]     (needs pip install ".[dist]")

It starts itself under ``python -m mxlite.launch`` (mpirun) twice: 2 ranks for the
allreduce and the 2-rank MLP, 1 rank for the 1-rank MLP. Reported:

- allreduce of one float32 array of 4 KB to 64 MB: ``comm.Allreduce`` of mpi4py in
  place, against ``kv.pushpull(key, array)`` of a ``dist_sync`` store (the allreduce
  in the array's memory, plus one copy into the store) and ``kv.push(key, array)``
  (an allreduce from the array into the store); the best of the repeats, taken in
  turns. Target (issue #18): within 10% of raw MPI from 1 MB up;
- the step (forward, backward, ``trainer.step``) of an MLP 784-512-512-10 at batch 64
  per worker with ``kvstore='dist_sync'``: on 2 ranks every step also sums 0.67M
  gradients (2.7 MB, in fused buffers of ``MXLITE_KVSTORE_FUSION_BYTES``, default
  4 MiB: one allreduce per step), against the same step on 1 rank; then the 2-rank
  step with fused buffers of 256 KiB to 64 MiB (an array at least that large goes
  alone, in place), and 2 ranks that train alone (no kvstore), which shows what two
  processes sharing this machine cost without any communication.

Each rank runs BLAS on one thread (unless ``OMP_NUM_THREADS`` etc. say otherwise).
Timings are medians over repeats; on a shared 2-core machine two ranks compete with
each other and with everything else, so read the ratios, not the absolute times.
"""
import os
import subprocess
import sys
import time

import numpy as np

SIZES = [4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]


def _median_time(fn, reps, barrier):
    times = []
    for _ in range(reps):
        barrier()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def _allreduce(kv, quick):
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    rows = []
    for nbytes in SIZES[:4] if quick else SIZES:
        n = nbytes // 4
        reps = max(5, min(200, (64 << 20) // nbytes // 4)) // (4 if quick else 1) or 3
        raw = np.ones(n, np.float32)
        import mxlite as mx
        arr = mx.nd.ones((n,))
        key = "a%d" % nbytes
        kv.init(key, arr)
        for _ in range(2):                               # warm up both paths
            comm.Allreduce(MPI.IN_PLACE, raw)
            kv.pushpull(key, arr)
        # alternate them, so that a busy machine slows all alike; the best time of each
        # (what the work itself costs, without the interruptions)
        times = [(_median_time(lambda: comm.Allreduce(MPI.IN_PLACE, raw), 1, comm.Barrier),
                  _median_time(lambda: kv.pushpull(key, arr), 1, comm.Barrier),
                  _median_time(lambda: kv.push(key, arr), 1, comm.Barrier))
                 for _ in range(reps)]
        rows.append((nbytes,) + tuple(float(np.min(t)) for t in zip(*times)))
    return rows


def _mlp_step(kv, quick):
    import mxlite as mx
    from mxlite import autograd, gluon
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(512, activation="relu", in_units=784),
            gluon.nn.Dense(512, activation="relu", in_units=512),
            gluon.nn.Dense(10, in_units=512))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01},
                            kvstore=kv if kv is not None else None)
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    from mpi4py import MPI
    rng = np.random.RandomState(MPI.COMM_WORLD.Get_rank())
    x = mx.nd.array(rng.rand(64, 784))
    y = mx.nd.array(rng.randint(0, 10, 64))

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(64)

    for _ in range(3):
        step()
    reps = 10 if quick else 40
    from mpi4py import MPI
    return _median_time(step, reps, MPI.COMM_WORLD.Barrier)


FUSION = [256 << 10, 1 << 20, 4 << 20, 64 << 20]


def worker(quick):
    import mxlite as mx
    kv = mx.kv.create("dist_sync")
    out = {"ranks": kv.num_workers, "fusion": kv._world.fusion_bytes}
    if kv.num_workers > 1:
        out["allreduce"] = _allreduce(kv, quick)
    out["mlp"] = _mlp_step(mx.kv.create("dist_sync"), quick)
    if kv.num_workers > 1:
        out["mlp_alone"] = _mlp_step(None, quick)
        default, out["mlp_fusion"] = kv._world.fusion_bytes, {}
        for size in FUSION:
            kv._world.fusion_bytes = size
            out["mlp_fusion"][size] = _mlp_step(mx.kv.create("dist_sync"), quick)
        kv._world.fusion_bytes = default
    if kv.rank == 0:
        print("RESULT %r" % (out,), flush=True)


def _run(n, quick):
    here = os.path.abspath(__file__)
    root = os.path.dirname(os.path.dirname(here))
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    # one BLAS thread per rank: two ranks of two threads each on two cores would
    # measure the oversubscription, not the communication
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.setdefault(var, "1")
    cmd = [sys.executable, "-m", "mxlite.launch", "-n", str(n), sys.executable, here,
           "--worker"] + (["--quick"] if quick else [])
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=600)
    text = proc.stdout.decode(errors="replace")
    lines = [l for l in text.splitlines() if l.startswith("RESULT ")]
    if proc.returncode != 0 or not lines:
        raise SystemExit("bench_dist: the %d-rank job failed:\n%s" % (n, text))
    return eval(lines[0][len("RESULT "):])  # noqa: S307 (our own repr of numbers)


def main():
    quick = "--quick" in sys.argv
    if "--worker" in sys.argv:
        worker(quick)
        return
    two = _run(2, quick)
    one = _run(1, quick)
    print("dist_sync on %d ranks, fused buffers of up to %d bytes"
          % (two["ranks"], two["fusion"]))
    print("%10s %12s %14s %6s %10s %6s" % ("bytes", "mpi4py (us)", "pushpull (us)", "ratio",
                                           "push (us)", "ratio"))
    for nbytes, t_raw, t_kv, t_push in two["allreduce"]:
        print("%10d %12.1f %14.1f %6.2f %10.1f %6.2f" % (nbytes, t_raw * 1e6, t_kv * 1e6,
                                                        t_kv / t_raw, t_push * 1e6,
                                                        t_push / t_raw))
    print("MLP 784-512-512-10, batch 64 per worker: step %.2f ms on 1 rank, %.2f ms on 2 "
          "ranks (%.2fx)" % (one["mlp"] * 1e3, two["mlp"] * 1e3, two["mlp"] / one["mlp"]))
    print("  2 ranks each training alone (no kvstore: what sharing the machine costs): "
          "%.2f ms" % (two["mlp_alone"] * 1e3))
    print("  2 ranks by fused-buffer size: " + ", ".join(
        "%d KiB %.2f ms" % (size >> 10, t * 1e3) for size, t in two["mlp_fusion"].items()))


if __name__ == "__main__":
    main()
