"""Golden data for tests/test_op_contrib_more.py, from real MXNet 1.9.1 (CPU build).

Run with MXNet's interpreter: ``python tests/reference_extra/gen_contrib_more.py`` from an
environment with ``pip install "numpy<1.24" mxnet==1.9.1``. Writes ``contrib_more.npz``
next to this file. ``__manifest__`` is a JSON list of cases {name, op (path under mx.nd),
kwargs, n_in, n_out, grad (input indices with a recorded gradient)}; arrays are
``<name>/x<i>`` inputs, ``<name>/y<i>`` outputs, ``<name>/gy<i>`` head gradients and
``<name>/gx<i>`` input gradients.

MXNet's CPU build has no DeformablePSROIPooling kernel and no ModulatedDeformableConvolution
backward (GPU only) and RROIAlign has no backward at all: those cases record forward only
(ModulatedDeformableConvolution, RROIAlign) or nothing (DeformablePSROIPooling).
"""
import json
import os

import numpy as np
import mxnet as mx

RNG = np.random.RandomState(5)
MANIFEST = []
DATA = {}


def u(shape, lo=-1.0, hi=1.0, dtype=np.float32):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def _op(path):
    fn = mx.nd
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


def case(name, op, inputs, kwargs, grad=(), n_out=1):
    xs = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    for i in grad:
        xs[i].attach_grad()
    with mx.autograd.record():
        ys = _op(op)(*xs, **kwargs)
    ys = (ys if isinstance(ys, list) else [ys])[:n_out]
    gys = [u(y.shape, dtype=y.dtype) for y in ys]
    if grad:
        mx.autograd.backward(ys, [mx.nd.array(g, dtype=g.dtype) for g in gys])
    for i, a in enumerate(inputs):
        DATA["%s/x%d" % (name, i)] = a
    for i, (y, g) in enumerate(zip(ys, gys)):
        DATA["%s/y%d" % (name, i)] = y.asnumpy()
        DATA["%s/gy%d" % (name, i)] = g
    for i in grad:
        DATA["%s/gx%d" % (name, i)] = xs[i].grad.asnumpy()
    MANIFEST.append({"name": name, "op": op, "kwargs": kwargs, "n_in": len(inputs),
                     "n_out": n_out, "grad": list(grad)})


def correlation():
    for dt in (np.float32, np.float64):
        tag = "f32" if dt == np.float32 else "f64"
        a, b = u((2, 3, 7, 8), dtype=dt), u((2, 3, 7, 8), dtype=dt)
        case("corr_mul_" + tag, "Correlation", [a, b],
             dict(kernel_size=3, max_displacement=2, stride1=1, stride2=1, pad_size=2),
             grad=(0, 1))
        b2 = b.copy()
        b2[:, :, :2, :2] = a[:, :, :2, :2]      # ties: MXNet's sign convention at a == b
        case("corr_sub_" + tag, "Correlation", [a, b2],
             dict(kernel_size=1, max_displacement=4, stride1=2, stride2=2, pad_size=3,
                  is_multiply=False), grad=(0, 1))
    a, b = u((1, 2, 9, 6)), u((1, 2, 9, 6))
    case("corr_default", "Correlation", [a, b], {}, grad=(0, 1))
    a, b = u((1, 2, 9, 11)), u((1, 2, 9, 11))
    case("corr_strided", "Correlation", [a, b],
         dict(kernel_size=3, max_displacement=3, stride1=3, stride2=2, pad_size=1), grad=(0, 1))


def mdcn():
    for dt in (np.float32, np.float64):
        tag = "f32" if dt == np.float32 else "f64"
        n, c, h, w, f = 2, 4, 7, 6, 6
        kw = dict(kernel=(3, 3), num_filter=f, pad=(1, 1), num_group=2,
                  num_deformable_group=2)
        ho, wo = 7, 6
        inputs = [u((n, c, h, w), dtype=dt), u((n, 2 * 2 * 9, ho, wo), -2.5, 2.5, dt),
                  u((n, 2 * 9, ho, wo), 0, 1, dt), u((f, c // 2, 3, 3), dtype=dt),
                  u((f,), dtype=dt)]
        case("mdcn_" + tag, "contrib.ModulatedDeformableConvolution", inputs, kw)
    kw = dict(kernel=(2, 3), num_filter=3, stride=(2, 1), dilate=(2, 2), pad=(0, 2),
              no_bias=True)
    ho, wo = (8 - 3) // 2 + 1, (5 + 4 - 5) + 1
    inputs = [u((1, 2, 8, 5)), u((1, 2 * 6, ho, wo), -4, 4), u((1, 6, ho, wo), -1, 1),
              u((3, 2, 2, 3))]
    case("mdcn_nobias_strided", "contrib.ModulatedDeformableConvolution", inputs, kw)


def rroi():
    for dt in (np.float32, np.float64):
        tag = "f32" if dt == np.float32 else "f64"
        data = u((2, 3, 10, 12), dtype=dt)
        rois = np.array([[0, 5.0, 4.0, 6.0, 4.0, 0.0], [1, 12.5, 9.0, 10.0, 7.0, 30.0],
                         [0, 3.0, 3.0, 4.0, 9.0, -45.0], [1, 20.0, 18.0, 12.0, 3.0, 100.0],
                         [0, 1.0, 1.0, 0.5, 0.2, 200.0], [1, 30.0, 2.0, 16.0, 8.0, 10.0]], dt)
        case("rroi_adaptive_" + tag, "contrib.RROIAlign", [data, rois],
             dict(pooled_size=(3, 2), spatial_scale=0.5))
        case("rroi_ratio2_" + tag, "contrib.RROIAlign", [data, rois],
             dict(pooled_size=(2, 4), spatial_scale=0.5, sampling_ratio=2))


def hawkes():
    n, k, t = 3, 4, 8
    for dt in (np.float32, np.float64):
        tag = "f32" if dt == np.float32 else "f64"
        lags = u((n, t), 0.05, 1.0, dt)
        marks = RNG.randint(0, k, (n, t)).astype(np.int32)
        marks[2, 6:] = 0
        inputs = [u((n, k), 0.3, 1.2, dt), u((k,), 0.1, 0.6, dt), u((k,), 0.5, 3.0, dt),
                  u((n, k), 0, 2, dt), lags, marks, np.array([8, 5, 6], dt),
                  (lags.sum(axis=1) + np.array([0.5, 0.1, 2.0])).astype(dt)]
        case("hawkes_" + tag, "contrib.hawkesll", inputs, {}, grad=(0, 1, 2, 3), n_out=2)


def main():
    correlation()
    mdcn()
    rroi()
    hawkes()
    DATA["__manifest__"] = np.array(json.dumps(MANIFEST))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "contrib_more.npz")
    np.savez_compressed(out, **DATA)
    print("wrote %s: %d cases" % (out, len(MANIFEST)))


if __name__ == "__main__":
    main()
