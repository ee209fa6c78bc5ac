"""Where a hybridized Gluon training step (softmax cross-entropy, SGD) spends its CPU, by
phase, and what a setting changes there.

Run: python benchmarks/profile_train.py [--model resnet18] [--batch 8] [--rounds 12]
                                        [--momentum 0.9] [--set NAME=VALUE ...]
                                        [--vs NAME=VALUE ...]

For the forward (recorded), the backward and the update (``trainer.step``) it prints the
wall time (median and least over the rounds), the calling thread's CPU time, the part of
it spent inside passes handed to mxlite's workers (``engine`` jobs and overlaps), the
rest (the caller's serial CPU: what the second core cannot help with), and the CPU
time of the whole process (the workers' is the difference). With ``--vs`` the rounds
alternate between the settings of ``--set`` (A) and those of ``--vs`` (B), as in
``profile_ops.py``: module constants such as ``mxlite.optimizer.sgd.CHUNK=1000000000``.

NOTE: on a shared host the wall times vary from minute to minute; the CPU times are
steadier. Set MXLITE_NUM_THREADS / OPENBLAS_NUM_THREADS as the benchmark does.
"""
import argparse
import time

import numpy as np

from bench_cnn import _data, _gluon_model
from profile_ops import _apply, _setting

PHASES = ("forward", "backward", "update")


class _Clock:
    """Counts the calling thread's CPU time inside the engine's hand-offs to its workers
    (a hand-off inside another is counted once)."""

    def __init__(self, engine):
        self.inside = 0.0
        self.depth = 0
        for name in ("_run_stages", "overlap"):
            setattr(engine, name, self._counted(getattr(engine, name)))

    def _counted(self, fn):
        def counted(*args):
            if self.depth:
                return fn(*args)
            self.depth += 1
            c0 = time.thread_time()
            try:
                return fn(*args)
            finally:
                self.inside += time.thread_time() - c0
                self.depth -= 1
        return counted

    def phase(self, fn):
        """``fn()`` and its (wall, caller CPU, caller CPU in hand-offs, process CPU)."""
        inside = self.inside
        t0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
        out = fn()
        return out, (time.perf_counter() - t0, time.thread_time() - c0, self.inside - inside,
                     time.process_time() - p0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="resnet18", choices=("resnet18", "resnet50", "lenet"))
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--momentum", type=float, default=0.0)
    ap.add_argument("--set", type=_setting, nargs="*", default=[], dest="a")
    ap.add_argument("--vs", type=_setting, nargs="*", default=None, dest="b")
    args = ap.parse_args()
    import mxlite as mx
    from mxlite import engine
    mx.random.seed(0)
    net = _gluon_model(mx, args.model)
    net.initialize(mx.init.Xavier())
    xn, yn = _data(args.model, args.batch)
    x, y = mx.nd.array(xn), mx.nd.array(yn)
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    net.hybridize()
    loss_fn.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd",
                               {"learning_rate": 0.01, "momentum": args.momentum})
    clock = _Clock(engine)

    def forward():
        with mx.autograd.record():
            return loss_fn(net(x), y)

    def step():
        loss, f = clock.phase(forward)
        _, b = clock.phase(loss.backward)
        _, u = clock.phase(lambda: (trainer.step(args.batch), loss.wait_to_read()))
        return f, b, u

    sides = [("A", args.a)] + ([("B", args.b)] if args.b is not None else [])
    for _, settings in sides:
        _apply(settings)
        for _ in range(2):
            step()
    rows = {name: [] for name, _ in sides}
    for r in range(args.rounds):
        for name, settings in (sides if r % 2 else sides[::-1]):
            _apply(settings)
            rows[name].append(step())
    print("ms per step, medians over %d rounds (least wall in brackets)" % args.rounds)
    print("%-2s %-9s %16s %11s %9s %9s %11s" % ("", "phase", "wall", "caller CPU",
                                                "in jobs", "serial", "process CPU"))
    for name, _ in sides:
        t = np.array(rows[name]) * 1e3      # rounds x phases x 4
        for i, ph in enumerate(PHASES + ("all",)):
            v = t[:, i] if i < len(PHASES) else t.sum(axis=1)
            med, least = np.median(v, axis=0), v[:, 0].min()
            print("%-2s %-9s %7.1f (%6.1f) %11.1f %9.1f %9.1f %11.1f" % (
                name, ph, med[0], least, med[1], med[2], np.median(v[:, 1] - v[:, 2]),
                med[3]))


if __name__ == "__main__":
    main()
