"""DataLoader throughput on the embedded Digits dataset.

Run: python benchmarks/bench_dataloader.py [--epochs N]

Images per second of ``gluon.data.DataLoader`` over ``vision.Digits(train=True)``
(1,433 8x8 images) with ``transform_first(Compose([ToTensor(), Normalize(0.5, 0.25)]))``,
batch 64, shuffled: in this process (``num_workers=0``), with 2 worker processes, and
with 2 worker threads (``thread_pool=True``). The first epoch (which starts the
workers) is a warm-up and not counted; the figure is the best of ``--rounds``
interleaved rounds of ``--epochs`` epochs each.

The second column is the CPU time of the main process per image: what loading costs
the training loop itself (with worker processes, receiving and unpickling batches),
and the steadiest figure on a machine shared with other work.

For scale, the first line is the same per-sample work written directly in NumPy
(index, transpose, scale, normalise, stack), with no Dataset, transforms or NDArrays.
The images are tiny, so these figures measure per-sample and per-batch overhead.
"""
import argparse
import os
import time

import numpy as np

import mxlite as mx
from mxlite.gluon.data import DataLoader
from mxlite.gluon.data.vision import Digits, transforms

BATCH = 64


def numpy_epoch(images, labels, order):
    """The same pipeline in plain NumPy: per-sample transform, per-batch stack."""
    n = 0
    for start in range(0, len(order), BATCH):
        xs, ys = [], []
        for i in order[start:start + BATCH]:
            x = np.ascontiguousarray(images[i].transpose(2, 0, 1), dtype=np.float32)
            x /= np.float32(255)
            xs.append((x - np.float32(0.5)) / np.float32(0.25))
            ys.append(labels[i])
        batch = np.stack(xs), np.asarray(ys)
        n += len(batch[0])
    return n


def loader_epoch(loader):
    n = 0
    for data, _ in loader:
        n += data.shape[0]
    return n


def best_rates(epoch_fns, epochs, rounds):
    """Best images/s of each epoch function over ``rounds`` rounds of ``epochs`` epochs,
    and the least CPU time this process spent per image.

    One warm-up epoch each is excluded (it starts the workers); the rounds interleave
    the functions, so that load from other processes falls on all of them alike.
    """
    for fn in epoch_fns:
        fn()
    best = [0.0] * len(epoch_fns)
    cpu_us = [float("inf")] * len(epoch_fns)
    for _ in range(rounds):
        for k, fn in enumerate(epoch_fns):
            t0, c0 = time.perf_counter(), time.process_time()
            n = sum(fn() for _ in range(epochs))
            best[k] = max(best[k], n / (time.perf_counter() - t0))
            cpu_us[k] = min(cpu_us[k], (time.process_time() - c0) / n * 1e6)
    return best, cpu_us


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    train = Digits(train=True)
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize(0.5, 0.25)])
    ds = train.transform_first(tf)

    images = np.stack([train[i][0].asnumpy() for i in range(len(train))])
    labels = np.array([train[i][1] for i in range(len(train))])
    rng = np.random.RandomState(0)
    names = ["NumPy, no DataLoader"]
    fns = [lambda: numpy_epoch(images, labels, rng.permutation(len(labels)))]
    configs = [("num_workers=0", {}),
               ("num_workers=2", {"num_workers": 2}),
               ("num_workers=2 threads", {"num_workers": 2, "thread_pool": True})]
    loaders = []
    for name, kw in configs:
        loader = DataLoader(ds, batch_size=BATCH, shuffle=True, **kw)
        loaders.append(loader)
        names.append(name)
        fns.append(lambda loader=loader: loader_epoch(loader))
    rates, cpu_us = best_rates(fns, args.epochs, args.rounds)
    for loader in loaders:
        loader.close()
    print("Digits train (%d images 8x8x1), ToTensor + Normalize, batch %d; %s, %d CPUs"
          % (len(train), BATCH, mx.__name__, os.cpu_count()))
    print("%-24s %12s %24s" % ("", "images/s", "main-process CPU us/image"))
    for name, rate, us in zip(names, rates, cpu_us):
        print("%-24s %12.0f %24.2f" % (name, rate, us))

if __name__ == "__main__":
    main()
