"""LSTM training-step throughput: ``mx.nd.RNN(mode='lstm')`` beside raw NumPy.

Run: OPENBLAS_NUM_THREADS=1 python benchmarks/bench_rnn.py [--steps N] [--check] [--data-grad]

One step is the forward and backward pass of a 1-layer LSTM with hidden size 256
over a sequence of 35 steps, batch 32, input size 256 (the word-language-model
shape: an embedding of 256 into an LSTM of 256), in float32:

- ``numpy``: a hand-written LSTM: one (T*N, I) x (I, 4H) input projection for all
  time steps, then per step one (N, H) x (H, 4H) matmul, the gates kept for a BPTT
  backward that ends with one (4H, T*N) x (T*N, H) matmul per weight. Buffers are
  preallocated and the elementwise work is in place.
- ``mx.nd.RNN``: the fused op under ``autograd.record()``, then ``backward()``;
  the parameters and states are marked (``attach_grad``), the data is not
  (``--data-grad``: it is too, and NumPy computes its gradient as well).
- ``gluon.rnn.LSTM``: the Gluon layer (the same op behind a concat of its
  parameters), when it exists.

Both compute the same gradients (weights, biases, initial states; by default not the data):
``--check`` asserts that they agree. Target (issue #6): mxlite within 1.5x of NumPy.
Reports the best of several interleaved rounds, by wall-clock time and by the
process's CPU time; on a shared machine, ``OPENBLAS_NUM_THREADS=1`` and the CPU-time
column give the steadiest comparison of the work each one does.
"""
import argparse
import os
import time

import numpy as np

import mxlite as mx

T, N, I, H = 35, 32, 256, 256


def _sigmoid_(a):
    # sigmoid(a) = (1 + tanh(a / 2)) / 2: one transcendental and no overflow, in place.
    a *= 0.5
    np.tanh(a, out=a)
    a *= 0.5
    a += 0.5


class NumpyLSTM:
    """Forward and BPTT backward of one LSTM layer (gates i, f, g, o), buffers reused."""

    def __init__(self, wx, wh, bx, bh, data_grad=False):
        self.wx, self.wxT, self.wh, self.whT = wx, wx.T, wh, wh.T
        self.data_grad = data_grad
        self.b = bx + bh
        dt = wx.dtype
        self.gates = np.empty((T, N, 4 * H), dt)
        self.hs = np.empty((T + 1, N, H), dt)
        self.cs = np.empty((T + 1, N, H), dt)
        self.tcs = np.empty((T, N, H), dt)
        self.tmp = np.empty((N, 4 * H), dt)
        self.dgates = np.empty((T, N, 4 * H), dt)
        self.dh, self.dc, self.dh_next = (np.empty((N, H), dt) for _ in range(3))
        self.dc_next, self.t1 = np.empty((N, H), dt), np.empty((N, H), dt)

    def forward(self, x, h0, c0):
        gates, hs, cs, tcs = self.gates, self.hs, self.cs, self.tcs
        np.matmul(x.reshape(T * N, I), self.wxT, out=gates.reshape(T * N, 4 * H))
        gates += self.b
        hs[0], cs[0] = h0, c0
        for t in range(T):
            a = gates[t]
            np.matmul(hs[t], self.whT, out=self.tmp)
            a += self.tmp
            _sigmoid_(a[:, :2 * H])
            _sigmoid_(a[:, 3 * H:])
            np.tanh(a[:, 2 * H:3 * H], out=a[:, 2 * H:3 * H])
            i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
            np.multiply(f, cs[t], out=cs[t + 1])
            np.multiply(i, g, out=self.t1)
            cs[t + 1] += self.t1
            np.tanh(cs[t + 1], out=tcs[t])
            np.multiply(o, tcs[t], out=hs[t + 1])
        return hs[1:]

    def backward(self, dy):
        """Gradients of (Wx, Wh, bx, bh, h0, c0), and of x with ``data_grad``, for the
        output gradient ``dy``."""
        gates, hs, cs, tcs, dgates = self.gates, self.hs, self.cs, self.tcs, self.dgates
        dh, dc, dh_next, dc_next, t1 = self.dh, self.dc, self.dh_next, self.dc_next, self.t1
        dh_next.fill(0)
        dc_next.fill(0)
        for t in range(T - 1, -1, -1):
            a, da = gates[t], dgates[t]
            i, f, g, o = a[:, :H], a[:, H:2 * H], a[:, 2 * H:3 * H], a[:, 3 * H:]
            np.add(dy[t], dh_next, out=dh)
            # dc = dc_next + dh * o * (1 - tanh(c)^2)
            np.multiply(tcs[t], tcs[t], out=t1)
            np.subtract(1, t1, out=t1)
            t1 *= o
            t1 *= dh
            np.add(dc_next, t1, out=dc)
            # d(pre-activation) of each gate
            np.subtract(1, i, out=t1)                  # i
            t1 *= i
            t1 *= g
            np.multiply(dc, t1, out=da[:, :H])
            np.subtract(1, f, out=t1)                  # f
            t1 *= f
            t1 *= cs[t]
            np.multiply(dc, t1, out=da[:, H:2 * H])
            np.multiply(g, g, out=t1)                  # g
            np.subtract(1, t1, out=t1)
            t1 *= i
            np.multiply(dc, t1, out=da[:, 2 * H:3 * H])
            np.subtract(1, o, out=t1)                  # o
            t1 *= o
            t1 *= tcs[t]
            np.multiply(dh, t1, out=da[:, 3 * H:])
            np.multiply(dc, f, out=dc_next)
            np.matmul(da, self.wh, out=dh_next)
        flat = dgates.reshape(T * N, 4 * H)
        dwx = flat.T @ self.x2d
        dwh = flat.T @ hs[:T].reshape(T * N, H)
        db = flat.sum(axis=0)
        grads = (dwx, dwh, db, db.copy(), dh_next.copy(), dc_next.copy())
        if self.data_grad:
            grads += ((flat @ self.wx).reshape(T, N, I),)
        return grads

    def step(self, x, h0, c0, dy):
        self.x2d = x.reshape(T * N, I)
        self.forward(x, h0, c0)
        return self.backward(dy)


def best_rates(fns, steps, repeats):
    """Best steps/s of each function over ``repeats`` rounds of ``steps`` calls, by
    wall-clock time and by this process's CPU time.

    The rounds interleave the functions, so that load from other processes falls
    on all of them alike; one warm-up call each is excluded.
    """
    for fn in fns:
        fn()
    wall, cpu = [0.0] * len(fns), [0.0] * len(fns)
    for _ in range(repeats):
        for k, fn in enumerate(fns):
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(steps):
                fn()
            wall[k] = max(wall[k], steps / (time.perf_counter() - t0))
            cpu[k] = max(cpu[k], steps / (time.process_time() - c0))
    return wall, cpu


def split_params(flat):
    """(Wx, Wh, bx, bh) of a 1-layer LSTM's flat parameter vector."""
    g = 4 * H
    wx = flat[:g * I].reshape(g, I)
    wh = flat[g * I:g * (I + H)].reshape(g, H)
    bx = flat[g * (I + H):g * (I + H + 1)]
    return wx, wh, bx, flat[g * (I + H + 1):]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--check", action="store_true", help="assert the gradients agree")
    ap.add_argument("--data-grad", action="store_true",
                    help="also the gradient of the data (an LSTM over an Embedding)")
    args = ap.parse_args()
    rng = np.random.RandomState(0)
    x = rng.uniform(-1, 1, (T, N, I)).astype(np.float32)
    psize = 4 * H * (I + H) + 8 * H
    w = (rng.uniform(-1, 1, psize) / np.sqrt(H)).astype(np.float32)
    h0 = rng.uniform(-1, 1, (1, N, H)).astype(np.float32)
    c0 = rng.uniform(-1, 1, (1, N, H)).astype(np.float32)
    dy = np.ones((T, N, H), np.float32)

    ref = NumpyLSTM(*split_params(w), data_grad=args.data_grad)

    def numpy_step():
        return ref.step(x, h0[0], c0[0], dy)

    xd, wd, hd, cd = (mx.nd.array(a) for a in (x, w, h0, c0))
    for a in (wd, hd, cd) + ((xd,) if args.data_grad else ()):
        a.attach_grad()
    kw = dict(mode="lstm", state_size=H, num_layers=1)

    def mx_step():
        with mx.autograd.record():
            y = mx.nd.RNN(xd, wd, hd, cd, **kw)
        y.backward()
        mx.nd.waitall()

    if args.check:
        mx_step()
        grads = numpy_step()
        got = split_params(wd.grad.asnumpy()) + (hd.grad.asnumpy()[0], cd.grad.asnumpy()[0])
        if args.data_grad:
            got += (xd.grad.asnumpy(),)
        for name, a, b in zip(("Wx", "Wh", "bx", "bh", "h0", "c0", "x"), got, grads):
            np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3, err_msg=name)
        print("gradients agree")

    print("LSTM T=%d N=%d I=%d H=%d float32, forward + backward%s; %s, %d CPUs, "
          "OMP/OPENBLAS threads=%s" % (T, N, I, H, " (with data gradient)" if args.data_grad
                                      else "", mx.__name__, os.cpu_count(),
                                      os.environ.get("OPENBLAS_NUM_THREADS",
                                                     os.environ.get("OMP_NUM_THREADS", "default"))))
    names, fns = ["raw NumPy", "mx.nd.RNN"], [numpy_step, mx_step]
    layer_cls = getattr(getattr(mx.gluon, "rnn", None), "LSTM", None)
    if layer_cls is not None:
        layer = layer_cls(H, input_size=I)
        layer.initialize()
        states = layer.begin_state(batch_size=N)

        def gluon_step():
            with mx.autograd.record():
                out, _ = layer(xd, states)
            out.backward()
            mx.nd.waitall()

        names.append("gluon.rnn.LSTM")
        fns.append(gluon_step)
    wall, cpu = best_rates(fns, args.steps, args.repeats)
    print("%-16s %14s %10s %16s %10s" % ("", "wall steps/s", "x NumPy", "CPU-time steps/s",
                                         "x NumPy"))
    for name, w_rate, c_rate in zip(names, wall, cpu):
        print("%-16s %14.2f %9.2fx %16.2f %9.2fx"
              % (name, w_rate, wall[0] / w_rate, c_rate, cpu[0] / c_rate))

if __name__ == "__main__":
    main()
