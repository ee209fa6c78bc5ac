"""Per-op dispatch overhead of mxlite next to raw NumPy, and nd.dot throughput.

Run: python benchmarks/bench_dispatch.py
Prints microseconds per op for ``x + x`` and ``nd.relu(x)`` on a 16-element array,
without and with ``autograd.record()`` + ``backward()``, and GFLOP/s of a 1024x1024
``nd.dot`` next to NumPy's matmul.
"""
import timeit

import numpy as np

import mxlite as mx


def per_call_us(fn, number):
    # best of 5 repeats, to shave scheduler noise
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def main():
    n = 20000
    a = np.random.rand(16).astype(np.float32)
    x = mx.nd.array(a)
    rows = []
    rows.append(("numpy  a + a", per_call_us(lambda: a + a, n)))
    rows.append(("mxlite x + x", per_call_us(lambda: x + x, n)))
    rows.append(("numpy  maximum(a, 0)", per_call_us(lambda: np.maximum(a, 0), n)))
    rows.append(("mxlite nd.relu(x)", per_call_us(lambda: mx.nd.relu(x), n)))

    v = mx.nd.array(a)
    v.attach_grad()

    def rec_add():
        with mx.autograd.record():
            y = v + v
        y.backward()

    def rec_relu():
        with mx.autograd.record():
            y = mx.nd.relu(v)
        y.backward()

    def numpy_add_fb():
        y = a + a
        g = np.ones_like(y)
        return g + g

    def numpy_relu_fb():
        y = np.maximum(a, 0)
        g = np.ones_like(y)
        return g * (y > 0)

    rows.append(("numpy  add fwd+bwd", per_call_us(numpy_add_fb, n // 4)))
    rows.append(("mxlite record x + x, backward", per_call_us(rec_add, n // 4)))
    rows.append(("numpy  relu fwd+bwd", per_call_us(numpy_relu_fb, n // 4)))
    rows.append(("mxlite record relu, backward", per_call_us(rec_relu, n // 4)))
    for name, us in rows:
        print("%-34s %8.2f us" % (name, us))

    m = 1024
    A = np.random.rand(m, m).astype(np.float32)
    B = np.random.rand(m, m).astype(np.float32)
    XA, XB = mx.nd.array(A), mx.nd.array(B)
    flops = 2.0 * m ** 3
    t_np = min(timeit.repeat(lambda: A @ B, number=5, repeat=3)) / 5
    t_mx = min(timeit.repeat(lambda: mx.nd.dot(XA, XB), number=5, repeat=3)) / 5
    print("%-34s %8.2f GFLOP/s" % ("numpy  matmul 1024", flops / t_np / 1e9))
    print("%-34s %8.2f GFLOP/s (%.1f%% of numpy)" % ("mxlite nd.dot 1024", flops / t_mx / 1e9,
                                                     100 * t_np / t_mx))


if __name__ == "__main__":
    main()
