"""Custom-op throughput: the tutorial ops through ``mx.nd.Custom`` beside direct NumPy.

Run: python benchmarks/bench_custom_op.py

Prints calls/s for
- the tutorial Sigmoid (1000 elements) under ``autograd.record()`` + ``backward()``,
- a parametrised Dense CustomOp 256 -> 256, batch 128, forward + backward,
each next to the same computation written directly in NumPy, and the dispatch
time per call (mxlite time minus NumPy time). For scale: real MXNet 1.9.1 does
about 250 Sigmoid and 150 Dense calls/s on this kind of machine.

NOTE: the "dispatch" column includes the work the tutorial ops do besides the
maths (``asnumpy()`` copies, ``mx.nd.array``), and, for the Dense, glibc's
allocator: 128-256 KB buffers sit at its default mmap/trim thresholds, so each
call's copies and zero-filled buffers are returned to the OS and page-faulted
back. Single-threaded BLAS on a 2-core machine measured Dense at 2.1-2.3x direct
NumPy by default and 1.01-1.15x with
``MALLOC_MMAP_THRESHOLD_=67108864 MALLOC_TRIM_THRESHOLD_=268435456``.
"""
import timeit

import numpy as np

import mxlite as mx


class Sigmoid(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        y = 1.0 / (1.0 + np.exp(-x))
        self.assign(out_data[0], req[0], mx.nd.array(y))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0].asnumpy()
        dy = out_grad[0].asnumpy()
        self.assign(in_grad[0], req[0], mx.nd.array(dy * (1.0 - y) * y))


@mx.operator.register("bench_sigmoid")
class SigmoidProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(True)

    def infer_shape(self, in_shapes):
        return (in_shapes[0],), (in_shapes[0],), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Sigmoid()


class Dense(mx.operator.CustomOp):
    def __init__(self, bias):
        self._bias = bias

    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        w = in_data[1].asnumpy()
        self.assign(out_data[0], req[0], x.dot(w.T) + self._bias)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        x = in_data[0].asnumpy()
        w = in_data[1].asnumpy()
        dy = out_grad[0].asnumpy()
        self.assign(in_grad[0], req[0], dy.dot(w))
        self.assign(in_grad[1], req[1], dy.T.dot(x))


@mx.operator.register("bench_dense")
class DenseProp(mx.operator.CustomOpProp):
    def __init__(self, bias):
        super().__init__(True)
        self._bias = float(bias)

    def list_arguments(self):
        return ["data", "weight"]

    def infer_shape(self, in_shapes):
        d, w = in_shapes
        return (d, w), ((d[0], w[0]),), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return Dense(self._bias)


def per_call_s(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=5)) / number


def bench_sigmoid():
    a = np.random.randn(1000).astype(np.float32)
    x = mx.nd.array(a)
    x.attach_grad()

    def custom():
        with mx.autograd.record():
            y = mx.nd.Custom(x, op_type="bench_sigmoid")
        y.backward()

    def direct():
        y = 1.0 / (1.0 + np.exp(-a))
        dy = np.ones_like(y)
        return dy * (1.0 - y) * y

    return per_call_s(custom, 2000), per_call_s(direct, 2000)


def bench_dense():
    rng = np.random.RandomState(0)
    xa = rng.randn(128, 256).astype(np.float32)
    wa = rng.randn(256, 256).astype(np.float32)
    x, w = mx.nd.array(xa), mx.nd.array(wa)
    x.attach_grad()
    w.attach_grad()

    def custom():
        with mx.autograd.record():
            y = mx.nd.Custom(x, w, bias=0.1, op_type="bench_dense")
        y.backward()

    def direct():
        y = xa.dot(wa.T) + 0.1
        dy = np.ones_like(y)
        return dy.dot(wa), dy.T.dot(xa)

    return per_call_s(custom, 300), per_call_s(direct, 300)


def main():
    rows = [("Sigmoid 1000, record + backward", bench_sigmoid()),
            ("Dense 256->256 batch 128, fwd + bwd", bench_dense())]
    print("%-38s %14s %14s %16s %8s" % ("case", "mxlite calls/s", "numpy calls/s",
                                        "dispatch us/call", "ratio"))
    for name, (t_mx, t_np) in rows:
        print("%-38s %14.0f %14.0f %16.1f %8.2f"
              % (name, 1 / t_mx, 1 / t_np, (t_mx - t_np) * 1e6, t_mx / t_np))


if __name__ == "__main__":
    main()
