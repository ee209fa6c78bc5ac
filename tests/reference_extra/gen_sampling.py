"""Golden data for the resizing / sampling ops, written by real MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_sampling.py`` from an environment with
``pip install "numpy<1.24" mxnet==1.9.1``.
Writes ``sampling.npz`` next to this file. For every case ``<id>``:

- ``<id>/op`` the mx.nd function (``contrib.BilinearResize2D``, ``GridGenerator`` ...),
  ``<id>/kwargs`` its params as JSON, ``<id>/inputs`` the input names (JSON list),
- ``<id>/in/<name>`` the inputs, ``<id>/out`` the output,
- ``<id>/head`` the head gradient and ``<id>/grad/<name>`` MXNet's input gradients.

``cases`` lists the ids.
"""
import json
import os

import mxnet as mx
import numpy as np

RNG = np.random.default_rng(1234)
CASES = {}


def normal(*shape):
    return RNG.standard_normal(shape)


def add(cid, op, inputs, dtype="float32", grads=True, **kwargs):
    """Run ``mx.nd.<op>(*inputs, **kwargs)`` with autograd and store everything."""
    names = list(inputs)
    arrays = {k: np.asarray(v, dtype=dtype) for k, v in inputs.items()}
    xs = [mx.nd.array(arrays[k], dtype=dtype) for k in names]
    for x in xs:
        x.attach_grad()
    fn = mx.nd
    for part in op.split("."):
        fn = getattr(fn, part)
    with mx.autograd.record():
        y = fn(*xs, **kwargs)
    head = RNG.standard_normal(y.shape).astype(dtype)
    y.backward(mx.nd.array(head, dtype=dtype))
    z = CASES
    z[cid + "/op"] = np.array(op)
    z[cid + "/kwargs"] = np.array(json.dumps(kwargs))
    z[cid + "/inputs"] = np.array(json.dumps(names))
    for k, x in zip(names, xs):
        z["%s/in/%s" % (cid, k)] = arrays[k]
        z["%s/grad/%s" % (cid, k)] = x.grad.asnumpy()
    z[cid + "/out"] = y.asnumpy()
    z[cid + "/head"] = head


def resize_cases():
    op = "contrib.BilinearResize2D"
    x = normal(2, 3, 5, 6)
    for ac in (True, False):
        tag = "ac" if ac else "noac"
        add("resize_up_" + tag, op, {"data": x}, height=7, width=9, align_corners=ac)
        add("resize_mixed_" + tag, op, {"data": x}, height=7, width=4, align_corners=ac)
        add("resize_down_" + tag, op, {"data": normal(1, 2, 11, 9)}, height=3, width=5,
            align_corners=ac)
        add("resize_f64_" + tag, op, {"data": x}, dtype="float64", height=8, width=3,
            align_corners=ac)
        # NOTE: ``like`` has data's batch size: MXNet zeroes batch(data) * C(like)
        # planes of like's gradient and overflows a smaller buffer (heap corruption).
        add("resize_like_" + tag, op, {"data": x, "like": normal(2, 1, 3, 10)}, mode="like",
            align_corners=ac)
    add("resize_scale", op, {"data": x}, scale_height=1.5, scale_width=0.5)
    add("resize_scale_width_only", op, {"data": x}, scale_width=1.5, height=3, width=4)
    add("resize_odd_scale", op, {"data": x}, mode="odd_scale", scale_height=2.0,
        scale_width=0.5)
    add("resize_odd_scale_noac", op, {"data": normal(1, 2, 4, 7)}, mode="odd_scale",
        scale_height=0.5, scale_width=1.7, align_corners=False)
    for mode in ("to_even_down", "to_even_up", "to_odd_down", "to_odd_up"):
        add("resize_" + mode, op, {"data": x}, mode=mode)
    add("resize_to_1x1", op, {"data": x}, height=1, width=1)
    add("resize_to_1x1_noac", op, {"data": x}, height=1, width=1, align_corners=False)
    add("resize_same", op, {"data": x}, height=5, width=6)
    add("resize_from_1", op, {"data": normal(1, 2, 1, 3)}, height=4, width=5,
        align_corners=False)


def pool_cases():
    op = "contrib.AdaptiveAvgPooling2D"
    x = normal(2, 3, 7, 10)
    add("pool_default", op, {"data": x})
    add("pool_int", op, {"data": x}, output_size=3)
    add("pool_pair", op, {"data": x}, output_size=(4, 3))
    add("pool_up", op, {"data": normal(1, 2, 3, 4)}, output_size=(5, 7))
    add("pool_f64", op, {"data": x}, dtype="float64", output_size=(3, 4))


def grid_cases():
    theta = np.array([[1, 0, 0, 0, 1, 0]]) + 0.3 * normal(3, 6)
    add("grid_affine", "GridGenerator", {"data": theta}, transform_type="affine",
        target_shape=(4, 5))
    add("grid_affine_wide", "GridGenerator", {"data": theta}, transform_type="affine",
        target_shape=(3, 8))
    flow = 2 * normal(2, 2, 4, 5)
    add("grid_warp", "GridGenerator", {"data": flow}, transform_type="warp")
    # NOTE: MXNet's CPU GridGenerator is float32 only ("Other DTypes are not supported!").


def sampler_cases():
    x = normal(2, 3, 5, 6)
    grid = RNG.uniform(-1.3, 1.3, (2, 2, 4, 7))
    add("sampler", "BilinearSampler", {"data": x, "grid": grid})
    add("sampler_f64", "BilinearSampler", {"data": x, "grid": grid}, dtype="float64")
    add("sampler_upsample", "BilinearSampler",
        {"data": normal(1, 2, 3, 3), "grid": RNG.uniform(-0.99, 0.99, (1, 2, 6, 5))},
        cudnn_off=True)
    # MXNet's documented example: zoom out twice
    data = np.array([[[[1, 4, 3, 6], [1, 8, 8, 9], [0, 4, 1, 5], [1, 0, 1, 3]]]])
    grid = mx.nd.GridGenerator(mx.nd.array([[2, 0, 0, 0, 2, 0]]), transform_type="affine",
                               target_shape=(4, 4)).asnumpy()
    add("sampler_doc_zoom", "BilinearSampler", {"data": data, "grid": grid})
    loc = np.array([[1, 0, 0, 0, 1, 0]]) + 0.4 * normal(2, 6)
    for dt in ("float32", "float64"):
        add("transformer_" + dt, "SpatialTransformer", {"data": x, "loc": loc}, dtype=dt,
            target_shape=(4, 7), transform_type="affine", sampler_type="bilinear")


def main():
    resize_cases()
    pool_cases()
    grid_cases()
    sampler_cases()
    ids = sorted({k.split("/")[0] for k in CASES})
    CASES["cases"] = np.array(ids)
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sampling.npz")
    np.savez_compressed(out, **CASES)
    print("wrote %d cases to %s" % (len(ids), out))


if __name__ == "__main__":
    main()
