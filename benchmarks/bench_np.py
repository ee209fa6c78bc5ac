"""mx.np next to mx.nd: per-op overhead and an MLP training step, side by side.

Run: python benchmarks/bench_np.py
Prints microseconds per call of ``np.add``/``nd.add`` and ``x + x`` on 16 floats, and
milliseconds per training step of the same MLP (Dense 64-128-10, SGD, batch 64) written
in nd style and in np style (under ``npx.set_np()``), imperative and hybridized, with
the np/nd ratios. Goals: np op overhead within 1.2x of nd's, the np-style step within
5% of the nd-style one. The two faces run interleaved so machine noise hits both, and
the times are CPU time of this process (a loaded machine does not inflate them).
"""
import time
import timeit

import numpy as onp

import mxlite as mx
from mxlite import np, npx, autograd, gluon


def per_call_us(fn, number):
    # best of 7 repeats of this process's CPU time: on a shared machine wall time also
    # counts the time other processes hold the CPU
    return min(timeit.repeat(fn, number=number, repeat=7, timer=time.process_time)) \
        / number * 1e6


def op_overhead():
    a = onp.random.rand(16).astype(onp.float32)
    xn, xp = mx.nd.array(a), np.array(a)
    n = 20000
    rows = [("nd.add(x, x)", lambda: mx.nd.add(xn, xn)), ("np.add(x, x)", lambda: np.add(xp, xp)),
            ("nd: x + x", lambda: xn + xn), ("np: x + x", lambda: xp + xp),
            ("nd.relu(x)", lambda: mx.nd.relu(xn)), ("npx.relu(x)", lambda: npx.relu(xp))]
    times = {name: [] for name, _ in rows}
    for _ in range(3):              # interleaved rounds
        for name, fn in rows:
            times[name].append(per_call_us(fn, n))
    return {name: min(t) for name, t in times.items()}


def _mlp():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(128, activation="relu"), gluon.nn.Dense(10))
    net.initialize(mx.init.Xavier())
    return net


def _step_fn(face, hybridize):
    rng = onp.random.RandomState(0)
    data, label = rng.rand(64, 64).astype("float32"), rng.randint(0, 10, 64)
    if face == "np":
        npx.set_np()
        x, y = np.array(data), np.array(label, dtype="float32")
    else:
        x, y = mx.nd.array(data), mx.nd.array(label)
    net = _mlp()
    if hybridize:
        net.hybridize()
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    npx.reset_np()

    def step():
        if face == "np":
            npx.set_np()
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(64)
        if face == "np":
            npx.reset_np()
    step()
    return step


def mlp_steps():
    results = {}
    for hybridize in (False, True):
        fns = {face: _step_fn(face, hybridize) for face in ("nd", "np")}
        best = {face: [] for face in fns}
        for _ in range(5):          # interleaved rounds
            for face, fn in fns.items():
                best[face].append(per_call_us(fn, 50) / 1000)
        results[hybridize] = {face: min(t) for face, t in best.items()}
    return results


def main():
    ops = op_overhead()
    for name, us in ops.items():
        print("%-16s %8.2f us" % (name, us))
    print("np.add / nd.add:   %.2fx" % (ops["np.add(x, x)"] / ops["nd.add(x, x)"]))
    print("np x+x / nd x+x:   %.2fx" % (ops["np: x + x"] / ops["nd: x + x"]))
    print("npx.relu/nd.relu:  %.2fx" % (ops["npx.relu(x)"] / ops["nd.relu(x)"]))
    for hybridize, t in mlp_steps().items():
        print("MLP step %-12s nd %.3f ms  np %.3f ms  np/nd %.3f"
              % ("hybridized" if hybridize else "imperative", t["nd"], t["np"],
                 t["np"] / t["nd"]))


if __name__ == "__main__":
    main()
