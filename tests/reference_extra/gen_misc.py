"""Golden data for the misc ops (tests/test_op_misc.py), from real MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_misc.py`` from an environment with
``pip install "numpy<1.24" mxnet==1.9.1``.
Writes ``misc.npz`` next to this file: for case ``c`` the keys ``c/x<i>`` (inputs),
``c/y<i>`` (outputs), ``c/gy<i>`` (head gradients) and ``c/gx<i>`` (input gradients,
for the inputs listed in the case's ``grad``); ``__manifest__`` is a JSON list of
{name, op (path under mx.nd), kwargs, n_in, n_out, grad}; ``__types__`` a JSON list of
MXNet's infer_type results for amp_cast and amp_multicast: {op, inputs, kwargs, outputs}.
"""
import json
import os

import numpy as np
import mxnet as mx

RNG = np.random.RandomState(3)
CASES = []


def case(name, op, inputs, kwargs=None, grad=()):
    CASES.append(dict(name=name, op=op, inputs=inputs, kwargs=kwargs or {}, grad=list(grad)))


def u(*shape, dtype=np.float32):
    return RNG.uniform(-2, 2, shape).astype(dtype)


def _define():
    for dt in (np.float32, np.float64):
        tag = np.dtype(dt).name
        case("make_loss_" + tag, "make_loss", [u(2, 3, dtype=dt)], grad=[0])
        case("quadratic_" + tag, "contrib.quadratic", [u(3, 4, dtype=dt)],
             dict(a=0.7, b=-1.3, c=0.1), grad=[0])
        case("gradmult_" + tag, "contrib.gradientmultiplier", [u(3, 4, dtype=dt)],
             dict(scalar=-0.3), grad=[0])
        case("im2col_2d_" + tag, "im2col", [u(2, 3, 5, 6, dtype=dt)],
             dict(kernel=(2, 3), stride=(2, 1), dilate=(1, 2), pad=(1, 1)), grad=[0])
        case("col2im_2d_" + tag, "col2im", [u(2, 3 * 6, 3 * 4, dtype=dt)],
             dict(output_size=(5, 6), kernel=(2, 3), stride=(2, 1), dilate=(1, 2), pad=(1, 1)),
             grad=[0])
        case("batch_take_" + tag, "batch_take",
             [u(5, 3, dtype=dt), np.array([0, 2, 7, -1, 1], np.int32)])
    case("quadratic_int32", "contrib.quadratic", [np.array([1, -2, 0, 5], np.int32)],
         dict(a=1.5, b=2, c=0.25))
    case("quadratic_default", "contrib.quadratic", [u(4)])
    # NOTE: MXNet 1.9.1's im2col/col2im fail for 1-D and 3-D data (shape checks that
    # assume 2-D): those are tested against NumPy only.
    case("im2col_plain", "im2col", [u(2, 2, 4, 4)], dict(kernel=(3, 3)), grad=[0])
    case("batch_take_2d_index", "batch_take",
         [u(4, 3), np.array([[5, -3], [2, 1]], np.int32)])
    case("batch_take_int32_data", "batch_take",
         [np.arange(12, dtype=np.int32).reshape(4, 3), np.array([0, 1, 2, 1], np.int32)])
    # Crop (MXNet runs it for float32 only)
    x = u(2, 3, 5, 6)
    case("crop_offset", "Crop", [x], dict(num_args=1, h_w=(3, 4), offset=(1, 2)), grad=[0])
    case("crop_center", "Crop", [x], dict(num_args=1, h_w=(2, 3), center_crop=True), grad=[0])
    case("crop_like", "Crop", [x, u(1, 1, 3, 4)], dict(num_args=2, offset=(2, 1)), grad=[0, 1])
    case("crop_like_center", "Crop", [x, u(1, 2, 4, 3)], dict(num_args=2, center_crop=True),
         grad=[0, 1])
    # amp_cast / amp_multicast
    f = np.array([0.5, 1.5, 2.5, -0.5, -2.7, 3e9, -3e9, 127.6, 65504 * 2], np.float32)
    case("amp_cast_f32_f16", "amp_cast", [u(2, 3)], dict(dtype="float16"), grad=[0])
    case("amp_cast_f16_f32", "amp_cast", [u(2, 3, dtype=np.float16)], dict(dtype="float32"))
    case("amp_cast_f16_f64", "amp_cast", [u(2, 3, dtype=np.float16)], dict(dtype="float64"))
    case("amp_cast_overflow", "amp_cast", [f], dict(dtype="float16"))
    # NOTE: MXNet's CPU amp_cast fails on float64 data (MKL-DNN has no such type); its
    # type rule (float64 passes unchanged) is tested without golden values.
    case("amp_cast_int_passes", "amp_cast", [np.array([1, -2, 3], np.int32)],
         dict(dtype="float16"))
    for it in ("int32", "uint8", "int8"):
        case("amp_cast_f32_" + it, "amp_cast", [f], dict(dtype=it))
    case("amp_cast_f16_int32", "amp_cast", [f[:5].astype(np.float16)], dict(dtype="int32"))
    # NOTE: MXNet's CPU amp_multicast fails (MKL-DNN) for float16 and float64 data:
    # values for float32 (and pass-through ints), dtypes from infer_type (TYPE_TABLE).
    case("multicast_f32", "amp_multicast", [u(3), u(2, 2)], dict(num_outputs=2), grad=[0, 1])
    case("multicast_int", "amp_multicast", [u(3), np.array([1, 2], np.int32)],
         dict(num_outputs=2), grad=[0])
    # contrib helpers
    z = np.zeros((2, 3, 2), np.float32)
    case("index_array_all", "contrib.index_array", [z])
    case("index_array_axes", "contrib.index_array", [z], dict(axes=(2, 0)))
    case("index_array_neg", "contrib.index_array", [z], dict(axes=(-1,)))
    case("index_array_f64_1d", "contrib.index_array", [np.zeros(4)])
    r = np.array([[0.5, -1.5, 2.5], [-0.4, 1.6, 0.0], [-0.5, 3.49, -2.5]], np.float32)
    for dt in (np.float32, np.float64):
        tag = np.dtype(dt).name
        case("round_ste_" + tag, "contrib.round_ste", [r.astype(dt)], grad=[0])
        case("sign_ste_" + tag, "contrib.sign_ste", [r.astype(dt)], grad=[0])
    case("round_ste_int32", "contrib.round_ste", [np.array([1, -2], np.int32)])
    case("sign_ste_int32", "contrib.sign_ste", [np.array([3, -2, 0], np.int32)])
    nan, inf = np.nan, np.inf
    pairs = [
        ("nan_equal", [1, 2, nan], [1, 2.000001, nan], {}),
        ("nan_unequal", [1, 2, nan], [1, 2, nan], dict(equal_nan=False)),
        ("nan_one_side", [1, nan], [1, 2], {}),
        ("far", [1, 2], [1, 2.1], {}),
        ("rtol", [1, 2], [1, 2.1], dict(rtol=0.1, atol=0)),
        ("atol", [1, 2], [1, 2.1], dict(rtol=0, atol=0.11)),
        ("atol_short", [1, 2], [1, 2.1], dict(rtol=0, atol=0.099)),
        ("inf_same", [1, inf], [1, inf], {}),
        ("inf_opposite", [1, inf], [1, -inf], {}),
        ("inf_one_side", [inf, 1], [1, 1], {}),
        ("doc_false", [1e10, 1e-7], [1.00001e10, 1e-8], {}),
        ("doc_true", [1e10, 1e-8], [1.00001e10, 1e-9], {}),
    ]
    for name, a, b, kw in pairs:
        for dt in (np.float32, np.float64):
            case("allclose_%s_%s" % (name, np.dtype(dt).name), "contrib.allclose",
                 [np.array(a, dt), np.array(b, dt)], kw)
    case("allclose_int32", "contrib.allclose",
         [np.array([1, 2], np.int32), np.array([1, 3], np.int32)], dict(rtol=0.5))
    case("allclose_2d", "contrib.allclose", [u(3, 4), u(3, 4)], dict(atol=4.5))


TYPE_COMBOS = [("float16", "float32"), ("float32", "float16", "float64"), ("float16", "float16"),
               ("float32", "float32"), ("float16", "int32"), ("float64", "float32"),
               ("int8", "uint8"), ("float64",)]


def _type_table():
    """MXNet's output dtypes of amp_multicast (both cast_narrow) and amp_cast."""
    table = []
    for dts in TYPE_COMBOS:
        for narrow in (False, True):
            xs = [mx.sym.var("x%d" % i) for i in range(len(dts))]
            s = mx.sym.amp_multicast(*xs, num_outputs=len(dts), cast_narrow=narrow)
            _, outs, _ = s.infer_type(**{"x%d" % i: d for i, d in enumerate(dts)})
            table.append(dict(op="amp_multicast", inputs=list(dts),
                              kwargs=dict(num_outputs=len(dts), cast_narrow=narrow),
                              outputs=[np.dtype(o).name for o in outs]))
    for src in ("float16", "float32", "float64", "int32", "uint8"):
        for dst in ("float16", "float32", "float64", "int32"):
            s = mx.sym.amp_cast(mx.sym.var("x"), dtype=dst)
            _, outs, _ = s.infer_type(x=src)
            table.append(dict(op="amp_cast", inputs=[src], kwargs=dict(dtype=dst),
                              outputs=[np.dtype(o).name for o in outs]))
    return table


def _op(path):
    f = mx.nd
    for part in path.split("."):
        f = getattr(f, part)
    return f


def _run(c, out):
    xs = [mx.nd.array(a, dtype=a.dtype) for a in c["inputs"]]
    for i in c["grad"]:
        xs[i].attach_grad()
    with mx.autograd.record():
        ys = _op(c["op"])(*xs, **c["kwargs"])
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    name = c["name"]
    for i, a in enumerate(c["inputs"]):
        out["%s/x%d" % (name, i)] = a
    for i, y in enumerate(ys):
        out["%s/y%d" % (name, i)] = y.asnumpy()
    if c["grad"]:
        gys = [RNG.uniform(-1, 1, y.shape).astype(y.dtype) for y in ys]
        mx.autograd.backward(ys, [mx.nd.array(g, dtype=g.dtype) for g in gys])
        for i, g in enumerate(gys):
            out["%s/gy%d" % (name, i)] = g
        for i in c["grad"]:
            out["%s/gx%d" % (name, i)] = xs[i].grad.asnumpy()
    kwargs = {k: (list(v) if isinstance(v, tuple) else v) for k, v in c["kwargs"].items()}
    return dict(name=name, op=c["op"], kwargs=kwargs, n_in=len(xs), n_out=len(ys),
                grad=c["grad"])


def main():
    _define()
    out, manifest = {}, []
    for c in CASES:
        manifest.append(_run(c, out))
    out["__manifest__"] = np.array(json.dumps(manifest))
    out["__types__"] = np.array(json.dumps(_type_table()))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "misc.npz")
    np.savez_compressed(path, **out)
    print("wrote %d cases to %s" % (len(manifest), path))


if __name__ == "__main__":
    main()
