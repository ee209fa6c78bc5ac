"""Golden data for mx.nd.image.* (tests/test_op_image.py), from real MXNet 1.9.1.

Run with a Python that has MXNet 1.9.1: ``python tests/reference_extra/gen_image_ops.py``.
Writes ``image_ops.npz``: for each case ``<case>/x`` (input), ``<case>/y`` (output),
``<case>/op`` and ``<case>/params`` (JSON), and for differentiable cases ``<case>/gy``
(head gradient) and ``<case>/gx`` (input gradient). Random colour ops are recorded
with ``min_factor == max_factor``, which makes them deterministic.
"""
import json
import os

import numpy as np
import mxnet as mx

rng = np.random.RandomState(7)
out = {}


def img(shape, dtype):
    if dtype == "uint8":
        return rng.randint(0, 256, shape).astype(np.uint8)
    return rng.uniform(0, 255, shape).astype(dtype)


def record(case, op, data, grad=False, **params):
    x = data
    a = mx.nd.array(x, dtype=x.dtype)
    fn = getattr(mx.nd.image, op)
    if grad:
        a.attach_grad()
        with mx.autograd.record():
            y = fn(a, **params)
        gy = rng.uniform(-1, 1, y.shape).astype(x.dtype)
        y.backward(mx.nd.array(gy, dtype=x.dtype))
        out[case + "/gy"] = gy
        out[case + "/gx"] = a.grad.asnumpy()
    else:
        y = fn(a, **params)
    out[case + "/x"] = x
    out[case + "/y"] = y.asnumpy()
    out[case + "/op"] = np.array(op)
    out[case + "/params"] = np.array(json.dumps(params))


# to_tensor
record("to_tensor_hwc_u8", "to_tensor", img((5, 7, 3), "uint8"))
record("to_tensor_hwc_f32", "to_tensor", img((4, 6, 1), "float32"))
record("to_tensor_nhwc_u8", "to_tensor", img((2, 3, 4, 3), "uint8"))
record("to_tensor_hwc_f64", "to_tensor", img((3, 2, 3), "float64"))

# normalize (CHW / NCHW), with gradients
for dt in ("float32", "float64"):
    chw = rng.uniform(0, 1, (3, 4, 5)).astype(dt)
    record("normalize_chw_tuple_" + dt, "normalize", chw, grad=True,
           mean=(0.485, 0.456, 0.406), std=(0.229, 0.224, 0.225))
record("normalize_chw_scalar", "normalize", rng.uniform(0, 1, (3, 4, 5)).astype("float32"),
       grad=True, mean=0.5, std=0.25)
record("normalize_nchw", "normalize", rng.uniform(0, 1, (2, 3, 3, 4)).astype("float32"),
       grad=True, mean=(0.1, 0.2, 0.3), std=(0.5, 2.0, 3.0))
record("normalize_c1", "normalize", rng.uniform(0, 1, (1, 3, 4)).astype("float32"),
       grad=True, mean=(0.3,), std=(0.7,))

# resize: nearest and bilinear, up and down, HWC and NHWC, uint8 and float32
shapes = [((7, 9, 3), (5, 4)), ((5, 6, 3), (13, 11)), ((8, 10, 3), (5, 4)),
          ((6, 20, 3), (17, 9)), ((9, 9, 1), (4, 6)), ((4, 4, 3), (31, 3))]
for dt in ("uint8", "float32"):
    for i, (shape, size) in enumerate(shapes):
        x = img(shape, dt)
        for interp in (0, 1):
            record("resize_%s_%d_interp%d" % (dt, i, interp), "resize", x, size=size, interp=interp)
    record("resize_%s_nhwc" % dt, "resize", img((2, 6, 7, 3), dt), size=(9, 4))
    record("resize_%s_keep_tall" % dt, "resize", img((9, 5, 3), dt), size=4, keep_ratio=True)
    record("resize_%s_keep_wide" % dt, "resize", img((5, 9, 3), dt), size=7, keep_ratio=True)
    record("resize_%s_square" % dt, "resize", img((5, 9, 3), dt), size=6)
record("resize_float64", "resize", img((5, 6, 3), "float64"), size=(4, 9))
record("resize_uint8_big", "resize", img((37, 53, 3), "uint8"), size=(71, 29))
record("resize_uint8_down_big", "resize", img((64, 48, 3), "uint8"), size=(21, 30))
for interp in (2, 3):
    record("resize_uint8_interp%d" % interp, "resize", img((9, 11, 3), "uint8"), size=(6, 14),
           interp=interp)

# crop, with gradients
record("crop_hwc", "crop", img((6, 7, 3), "float32"), grad=True, x=1, y=2, width=4, height=3)
record("crop_nhwc", "crop", img((2, 5, 6, 1), "float32"), grad=True, x=0, y=1, width=6, height=2)
record("crop_u8", "crop", img((4, 4, 3), "uint8"), x=2, y=0, width=2, height=4)

# flips (MXNet's gradient is the head gradient unflipped: not recorded)
for op in ("flip_left_right", "flip_top_bottom"):
    record(op + "_f32", op, img((4, 5, 3), "float32"))
    record(op + "_u8", op, img((3, 4, 1), "uint8"))

# colour ops with a fixed factor
for dt in ("uint8", "float32"):
    x = img((5, 6, 3), dt)
    for op, f in (("random_brightness", 1.37), ("random_brightness", 0.61),
                  ("random_contrast", 1.37), ("random_contrast", 0.61),
                  ("random_saturation", 1.37), ("random_saturation", 0.61),
                  ("random_hue", 0.2), ("random_hue", 0.9), ("random_hue", 0.45)):
        record("%s_%s_%g" % (op, dt, f), op, x, min_factor=f, max_factor=f)
    for alpha in ((0.1, -0.2, 0.3), (-1.5, 0.7, 2.0)):
        record("adjust_lighting_%s_%g" % (dt, alpha[0]), "adjust_lighting", x, alpha=alpha)
    record("random_contrast_c1_%s" % dt, "random_contrast", img((4, 5, 1), dt),
           min_factor=0.7, max_factor=0.7)
    record("random_brightness_c1_%s" % dt, "random_brightness", img((4, 5, 1), dt),
           min_factor=1.2, max_factor=1.2)
gray = np.repeat(img((4, 4, 1), "uint8"), 3, axis=2)        # zero chroma: hue is a no-op
record("random_hue_gray", "random_hue", gray, min_factor=0.3, max_factor=0.3)

here = os.path.dirname(os.path.abspath(__file__))
np.savez_compressed(os.path.join(here, "image_ops.npz"), **out)
print(len({k.split("/")[0] for k in out}), "cases")
