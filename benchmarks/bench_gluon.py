"""Training steps per second: Gluon models on mxlite next to raw NumPy and real MXNet.

Run: python benchmarks/bench_gluon.py [--quick]

Models (one training step = forward, loss, backward, SGD update):

- MLP 784-256-256-10 (ReLU, SoftmaxCrossEntropyLoss, SGD) at batch 128 and 16;
- LeNet (conv 20@5x5, max-pool 2, conv 50@5x5, max-pool 2, dense 500 relu,
  dense 10) on 1x28x28 at batch 64;

each imperative and hybridized, beside the same model written by hand in NumPy
(forward, backward and update; the convolutions as im2col GEMMs). When MXNet 1.9.1
is available (``$MXNET_PYTHON`` names a Python with ``mxnet`` 1.9.1 installed),
the same Gluon code runs there too, in a subprocess: MXNet is never imported here.

Targets (issues #4 and #7): MLP within 1.1x of NumPy's time at batch 128 and 1.4x
at batch 16; the hybridized MLP at batch 16 1.3x faster than the imperative one;
LeNet at least as fast as MXNet. BLAS runs with its default threading.
"""
import os
import subprocess
import sys
import time

import numpy as np

LR = 0.01
CASES = (("mlp", 128), ("mlp", 16), ("lenet", 64))


def _warm(step):
    """Run a few steps (first-call costs: deferred shapes, tracing, allocator)."""
    for _ in range(3):
        step()
    t0 = time.perf_counter()
    step()
    return max(time.perf_counter() - t0, 1e-6)


def _timed(step, n):
    """Steps per second over ``n`` steps (and the wait for all their work, see gluon_step)."""
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    step.wait_all()
    return n / (time.perf_counter() - t0)


def _no_wait():
    """NumPy runs synchronously: nothing to wait for."""


def _batch(model, batch, seed=0):
    rng = np.random.RandomState(seed)
    shape = (batch, 784) if model == "mlp" else (batch, 1, 28, 28)
    x = rng.uniform(0, 1, shape).astype(np.float32)
    y = rng.randint(0, 10, batch).astype(np.float32)
    return x, y


# -- the Gluon model, for mxlite and MXNet alike ---------------------------------------

def _gluon_net(mx, model):
    nn = mx.gluon.nn
    net = nn.HybridSequential()
    with net.name_scope():
        if model == "mlp":
            net.add(nn.Dense(256, activation="relu"), nn.Dense(256, activation="relu"),
                    nn.Dense(10))
        else:
            net.add(nn.Conv2D(20, kernel_size=5), nn.MaxPool2D(2),
                    nn.Conv2D(50, kernel_size=5), nn.MaxPool2D(2),
                    nn.Dense(500, activation="relu"), nn.Dense(10))
    return net


def gluon_step(mx, model, batch, hybridize):
    """A closure running one Gluon training step of ``model``."""
    mx.random.seed(0)
    net = _gluon_net(mx, model)
    net.initialize(mx.init.Xavier())
    loss_fn = mx.gluon.loss.SoftmaxCrossEntropyLoss()
    if hybridize:
        net.hybridize()
        loss_fn.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": LR})
    xn, yn = _batch(model, batch)
    x, y = mx.nd.array(xn), mx.nd.array(yn)
    autograd = mx.autograd

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
        # MXNet runs asynchronously: wait, as a training loop reading the loss would
        # (the update may still overlap the next forward, as in training).
        loss.wait_to_read()
    step.wait_all = mx.nd.waitall
    return step


# -- raw NumPy ----------------------------------------------------------------------------

def _xavier(rng, shape):
    fan_in = int(np.prod(shape[1:]))
    fan_out = shape[0] * int(np.prod(shape[2:]))
    s = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-s, s, shape).astype(np.float32)


def _softmax_ce_grad(z, y):
    """d(mean cross-entropy)/dz for logits ``z`` and integer labels ``y``, in place."""
    z -= z.max(axis=1, keepdims=True)
    np.exp(z, out=z)
    z /= z.sum(axis=1, keepdims=True)
    z[np.arange(len(y)), y] -= 1.0
    z /= len(y)
    return z


def _sgd(params, grads):
    for w, g in zip(params, grads):
        g *= LR
        w -= g


def numpy_mlp_step(batch):
    """One MLP step by hand: weights stored (in, out) so no GEMM needs a transpose."""
    rng = np.random.RandomState(0)
    sizes = (784, 256, 256, 10)
    ws = [_xavier(rng, (o, i)).T.copy() for i, o in zip(sizes[:-1], sizes[1:])]
    bs = [np.zeros(o, np.float32) for o in sizes[1:]]
    params = [p for wb in zip(ws, bs) for p in wb]
    xn, yn = _batch("mlp", batch)
    y = yn.astype(np.int64)

    def step():
        h1 = xn @ ws[0]
        h1 += bs[0]
        np.maximum(h1, 0, out=h1)
        h2 = h1 @ ws[1]
        h2 += bs[1]
        np.maximum(h2, 0, out=h2)
        z = h2 @ ws[2]
        z += bs[2]
        g3 = _softmax_ce_grad(z, y)
        g2 = g3 @ ws[2].T
        g2 *= h2 > 0
        g1 = g2 @ ws[1].T
        g1 *= h1 > 0
        grads = [xn.T @ g1, g1.sum(0), h1.T @ g2, g2.sum(0), h2.T @ g3, g3.sum(0)]
        _sgd(params, grads)
    step.wait_all = _no_wait
    return step


def _conv_cols(x, k):
    """im2col of ``x`` (N, C, H, W) for a valid k x k convolution: (N, C*k*k, Ho*Wo),
    so that ``w @ cols`` is channels-first without a transpose."""
    n, c, h, w = x.shape
    s = x.strides
    ho, wo = h - k + 1, w - k + 1
    v = np.lib.stride_tricks.as_strided(x, (n, c, k, k, ho, wo),
                                        (s[0], s[1], s[2], s[3], s[2], s[3]))
    return v.reshape(n, c * k * k, ho * wo)


def _conv_data_grad(w, gy, k, h, w_):
    """The adjoint of the convolution for weights ``w`` (F, C*k*k): (N, C, H, W).

    col2im as shifted adds over a flat grid: with ``gy`` zero-padded to the input's
    row width, each kernel offset's columns are one contiguous run of the output.
    """
    n, f, ho, wo = gy.shape
    c = w.shape[1] // (k * k)
    gp = np.zeros((n, f, ho, w_), np.float32)
    gp[..., :wo] = gy
    cols = np.matmul(w.T, gp.reshape(n, f, -1)).reshape(n, c, k * k, ho * w_)
    gx = np.zeros((n, c, (h + 1) * w_), np.float32)
    for i in range(k):
        for j in range(k):
            start = i * w_ + j
            gx[:, :, start:start + ho * w_] += cols[:, :, i * k + j]
    return gx[:, :, :h * w_].reshape(n, c, h, w_)


def _maxpool2(x):
    """2x2 max-pool of (N, C, H, W): the maximum of four strided views."""
    y = np.maximum(x[:, :, 0::2, 0::2], x[:, :, 0::2, 1::2])
    np.maximum(y, x[:, :, 1::2, 0::2], out=y)
    np.maximum(y, x[:, :, 1::2, 1::2], out=y)
    return y


def _maxpool2_grad(x, y, gy):
    """``gy`` routed to the first maximum of every 2x2 window."""
    gx = np.zeros_like(x)
    taken = None
    for di in (0, 1):
        for dj in (0, 1):
            hit = x[:, :, di::2, dj::2] == y
            if taken is None:
                taken = hit
            else:
                hit &= ~taken
                taken |= hit
            gx[:, :, di::2, dj::2] = np.where(hit, gy, 0)
    return gx


def numpy_lenet_step(batch):
    """One LeNet step by hand: convolutions as per-sample im2col GEMMs (weights (F, C*k*k))."""
    rng = np.random.RandomState(0)
    w1 = _xavier(rng, (20, 1, 5, 5)).reshape(20, -1)
    w2 = _xavier(rng, (50, 20, 5, 5)).reshape(50, -1)
    w3 = _xavier(rng, (500, 800)).T.copy()
    w4 = _xavier(rng, (10, 500)).T.copy()
    b1, b2, b3, b4 = (np.zeros(n, np.float32) for n in (20, 50, 500, 10))
    params = [w1, b1, w2, b2, w3, b3, w4, b4]
    xn, yn = _batch("lenet", batch)
    y = yn.astype(np.int64)
    n = batch

    def step():
        c1 = _conv_cols(xn, 5)                                  # (N, 25, 576)
        a1 = np.matmul(w1, c1).reshape(n, 20, 24, 24)
        a1 += b1[:, None, None]
        p1 = _maxpool2(a1)                                      # (N, 20, 12, 12)
        c2 = _conv_cols(p1, 5)                                  # (N, 500, 64)
        a2 = np.matmul(w2, c2).reshape(n, 50, 8, 8)
        a2 += b2[:, None, None]
        p2 = _maxpool2(a2)                                      # (N, 50, 4, 4)
        h3 = p2.reshape(n, -1) @ w3
        h3 += b3
        np.maximum(h3, 0, out=h3)
        z = h3 @ w4
        z += b4
        g4 = _softmax_ce_grad(z, y)
        g3 = g4 @ w4.T
        g3 *= h3 > 0
        gp2 = (g3 @ w3.T).reshape(n, 50, 4, 4)
        ga2 = _maxpool2_grad(a2, p2, gp2).reshape(n, 50, 64)
        gw2 = np.matmul(ga2, c2.transpose(0, 2, 1)).sum(0)
        gp1 = _conv_data_grad(w2, ga2.reshape(n, 50, 8, 8), 5, 12, 12)
        ga1 = _maxpool2_grad(a1, p1, gp1).reshape(n, 20, 576)
        gw1 = np.matmul(ga1, c1.transpose(0, 2, 1)).sum(0)
        grads = [gw1, ga1.sum((0, 2)), gw2, ga2.sum((0, 2)), p2.reshape(n, -1).T @ g3,
                 g3.sum(0), h3.T @ g4, g4.sum(0)]
        _sgd(params, grads)
    step.wait_all = _no_wait
    return step


def numpy_step(model, batch):
    return (numpy_mlp_step if model == "mlp" else numpy_lenet_step)(batch)


# -- MXNet in a subprocess ----------------------------------------------------------------

class MXNetWorker:
    """Real MXNet running this file with ``--mxnet-worker``: told a contender and a step
    count on stdin, it answers steps/s, so its rounds interleave with ours."""

    def __init__(self):
        python = os.environ.get("MXNET_PYTHON")
        self.proc = None
        if python and os.path.exists(python):
            self.proc = subprocess.Popen([python, os.path.abspath(__file__), "--mxnet-worker"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True)

    def ask(self, *words):
        if self.proc is None:
            return None
        self.proc.stdin.write(" ".join(str(w) for w in words) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            print("(MXNet worker stopped; its column is left empty)", file=sys.stderr)
            self.proc = None
            return None
        return float(line)

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()


def _mxnet_worker():
    import mxnet as mx
    steps = {}
    for line in sys.stdin:
        what, model, batch, mode, n = line.split()
        key = (model, int(batch), mode)
        if what == "warm":
            steps[key] = gluon_step(mx, model, int(batch), mode == "hybrid")
            rate = 1.0 / _warm(steps[key])
        else:
            rate = _timed(steps[key], int(n))
        print(rate, flush=True)


# -- the interleaved measurement ------------------------------------------------------------

class Contender:
    """One way of running one model: a local step function, or a contender in MXNet."""

    def __init__(self, name, step=None, worker=None, key=None):
        self.name, self.step, self.worker, self.key = name, step, worker, key
        self.best = float("nan")
        if step is not None:
            self.step_time = _warm(step)
        else:
            self.step_time = 1.0 / (worker.ask("warm", *key, 0) or 1.0)

    def round(self, seconds):
        n = max(2, int(seconds / self.step_time))
        if self.step is not None:
            rate = _timed(self.step, n)
        else:
            rate = self.worker.ask("time", *self.key, n)
            if rate is None:
                return
        # The fastest round estimates the step time best: on a shared machine the
        # slower rounds measure the neighbours.
        self.best = rate if self.best != self.best else max(self.best, rate)
        self.step_time = 1.0 / self.best


def measure(mx, model, batch, worker, rounds, seconds):
    """Best steps/s of every contender for one model, measured in interleaved rounds."""
    cs = [Contender("imperative", gluon_step(mx, model, batch, False)),
          Contender("hybrid", gluon_step(mx, model, batch, True)),
          Contender("numpy", numpy_step(model, batch))]
    if worker.proc is not None:
        cs += [Contender("mxnet " + mode, worker=worker, key=(model, batch, mode))
               for mode in ("imperative", "hybrid")]
    for _ in range(rounds):
        for c in cs:
            c.round(seconds)
    return {c.name: c.best for c in cs}


# -- the table ------------------------------------------------------------------------------

def main(argv):
    quick = "--quick" in argv
    rounds, seconds = (3, 0.15) if quick else (7, 0.3)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import mxlite as mx
    worker = MXNetWorker()
    try:
        rates = {(m, b): measure(mx, m, b, worker, rounds, seconds) for m, b in CASES}
    finally:
        worker.close()
    print("steps/s, best of %d interleaved rounds (higher is better); x numpy = our step time "
          "over NumPy's (1.0: as fast as NumPy)" % rounds)
    print("%-10s %-11s %8s %8s %8s %8s" % ("model", "mode", "mxlite", "numpy", "mxnet",
                                          "x numpy"))
    for (model, batch), r in rates.items():
        for mode in ("imperative", "hybrid"):
            print("%-10s %-11s %8.1f %8.1f %8.1f %8.2f"
                  % ("%s b%d" % (model, batch), mode, r[mode], r["numpy"],
                     r.get("mxnet " + mode, float("nan")), r["numpy"] / r[mode]))
    mlp16 = rates[("mlp", 16)]
    print("hybridized over imperative, MLP b16: %.2fx" % (mlp16["hybrid"] / mlp16["imperative"]))


if __name__ == "__main__":
    if sys.argv[1:] == ["--mxnet-worker"]:
        _mxnet_worker()
    else:
        main(sys.argv[1:])
