"""Where a hybridized model-zoo inference spends its time, op by op, and what a setting
changes there.

Run: python benchmarks/profile_ops.py [--model resnet50_v1] [--batch 1] [--rounds 20]
                                      [--set NAME=VALUE ...] [--vs NAME=VALUE ...]
                                      [--imperative]

For each step of the graph (grouped by op and input shape) it prints the wall time
(median and least over the rounds), the calling thread's CPU time, and the wall time
spent in passes split over mxlite's workers (``engine`` jobs); then the totals. With
``--vs``, the rounds alternate between the settings of ``--set`` (A) and those of
``--vs`` (B), and it prints both and B/A per op: module constants such as
``mxlite._blas.COLUMNS_PER_ROW=1`` or ``mxlite.operator.nn._fast.STAGED_MIN_BYTES=0``.

NOTE: on a host shared with other work the wall times of two threads vary 1.5x from
minute to minute; compare A and B from one run (alternated), by their least times,
and set MXLITE_NUM_THREADS / OPENBLAS_NUM_THREADS as the benchmark does. A graph
timed op by op runs its whole batch (not by parts of it, as ``batch_parts`` would).
``--imperative`` times the model not hybridized (its fused Conv2D -> BatchNorm steps,
``gluon/nn/sequential_chains.py``, then its other layers' ops), the whole batch too
(not by parts of it, as ``gluon/batch_rows.py`` would).
"""
import argparse
import ast
import collections
import importlib
import time

import numpy as np


def _setting(text):
    """``module.NAME=value`` as (module, name, value); the value a Python literal."""
    target, sep, value = text.partition("=")
    module, _, name = target.rpartition(".")
    if not sep or not module:
        raise argparse.ArgumentTypeError("expected module.NAME=value, got %r" % text)
    return importlib.import_module(module), name, ast.literal_eval(value)


def _apply(settings):
    for module, name, value in settings:
        if not hasattr(module, name):
            raise SystemExit("%s has no %s" % (module.__name__, name))
        setattr(module, name, value)


def _label(op, p):
    if op.name == "_conv_batch_norm" and p.chain is not None:
        c = p.chain.conv_p
        return "conv%dx%d/%d+%s%s" % (c.kernel[0], c.kernel[-1], (c.stride or (1,))[0],
                                      p.chain.bn.name, "+add" if p.chain.residual else "")
    return op.name


class _Recorder:
    """Times each step through the registry's profile hook, and the engine's split jobs
    inside it."""

    def __init__(self, engine, registry):
        self.registry = registry
        self.rows = None        # {(step, label, input shape): [(wall, cpu, in jobs)]}
        self.in_jobs = 0.0
        self.step = 0
        run_stages = engine._run_stages

        def timed(stages, k):
            t0 = time.perf_counter()
            try:
                return run_stages(stages, k)
            finally:
                self.in_jobs += time.perf_counter() - t0
        engine._run_stages = timed

    def hook(self, op, p, xp, data):
        jobs = self.in_jobs
        t0, c0 = time.perf_counter(), time.thread_time()
        y = op.kernel(p, xp, *data)
        wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
        key = (self.step, _label(op, p), tuple(getattr(data[0], "shape", ())))
        self.rows[key].append((wall, cpu, self.in_jobs - jobs))
        self.step += 1
        return y

    def run(self, step):
        self.step = 0
        self.registry._profile_hook = self.hook
        t0 = time.perf_counter()
        try:
            step()
        finally:
            self.registry._profile_hook = None
        return time.perf_counter() - t0


def _table(rows):
    """{(label, shape): [steps, median wall, least wall, median CPU, median in jobs]} of
    a recorder's rows, the steps of one op and input shape summed."""
    out = collections.defaultdict(lambda: np.zeros(5))
    for (_, label, shape), v in rows.items():
        v = np.array(v)
        out[label, shape] += (1, np.median(v[:, 0]), v[:, 0].min(), np.median(v[:, 1]),
                              np.median(v[:, 2]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="resnet50_v1")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--set", type=_setting, nargs="*", default=[], dest="a")
    ap.add_argument("--vs", type=_setting, nargs="*", default=None, dest="b")
    ap.add_argument("--imperative", action="store_true", help="not hybridized")
    args = ap.parse_args()
    import mxlite as mx
    from mxlite import engine
    from mxlite.operator import registry
    mx.random.seed(0)
    net = getattr(mx.gluon.model_zoo.vision, args.model)()
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(0).uniform(
        -1, 1, (args.batch, 3, 224, 224)).astype(np.float32))
    if not args.imperative:
        net.hybridize()
    sides = [("A", args.a)] + ([("B", args.b)] if args.b is not None else [])
    for _, settings in sides:
        _apply(settings)
        for _ in range(3):
            net(x).wait_to_read()
    rec = _Recorder(engine, registry)
    rows = {name: collections.defaultdict(list) for name, _ in sides}
    steps = {name: [] for name, _ in sides}
    for r in range(args.rounds):
        for name, settings in (sides if r % 2 else sides[::-1]):
            _apply(settings)
            rec.rows = rows[name]
            steps[name].append(rec.run(lambda: net(x).wait_to_read()))
    tables = {}
    for name, _ in sides:
        t = tables[name] = _table(rows[name])
        w = np.array(steps[name]) * 1e3
        print("%s: step wall median %.2f least %.2f ms; ops' medians: wall %.2f, calling "
              "thread's CPU %.2f, in split jobs %.2f ms" % (
                  name, np.median(w), w.min(), sum(v[1] for v in t.values()) * 1e3,
                  sum(v[3] for v in t.values()) * 1e3, sum(v[4] for v in t.values()) * 1e3))
    a = tables["A"]
    keys = sorted(a, key=lambda k: -a[k][1])
    if len(sides) == 1:
        print("%-36s %-18s %5s %8s %8s %8s %8s" % ("op", "input", "steps", "median", "least",
                                                   "cpu", "in jobs"))
        for k in keys:
            v = a[k] * (1, 1e3, 1e3, 1e3, 1e3)
            print("%-36s %-18s %5d %8.2f %8.2f %8.2f %8.2f" % ((k[0], str(k[1])) + tuple(v)))
        return
    b = tables["B"]
    print("%-36s %-18s %5s %8s %8s %6s %8s %8s %6s" % (
        "op", "input", "steps", "A med", "B med", "B/A", "A least", "B least", "B/A"))
    for k in keys:
        print("%-36s %-18s %5d %8.2f %8.2f %6.2f %8.2f %8.2f %6.2f" % (
            k[0], str(k[1]), a[k][0], a[k][1] * 1e3, b[k][1] * 1e3, b[k][1] / a[k][1],
            a[k][2] * 1e3, b[k][2] * 1e3, b[k][2] / a[k][2]))


if __name__ == "__main__":
    main()
