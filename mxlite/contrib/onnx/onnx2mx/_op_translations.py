"""Translations of ONNX operators to mxlite Symbols.

Each is ``convert(g, name, attrs, inputs) -> Symbol (or list of Symbols)``: ``g`` the
:class:`~.import_onnx.GraphProto`, ``name`` the node name to give the result, ``attrs``
the ONNX attributes, ``inputs`` the input tensor names ('' for an absent optional one).
"""
import numpy as np

from .... import symbol as S

CONVERT = {}


def register(*onnx_ops):
    def wrapper(func):
        for op in onnx_ops:
            CONVERT[op] = func
        return func
    return wrapper


def _fail(op, name, what):
    raise NotImplementedError("onnx import: %s (node %r) with %s is not supported"
                              % (op, name, what))


def _const(g, name, op, inputs, k, default=None):
    """Input ``k`` as a constant NumPy array (shapes, axes, pads), or ``default`` when
    the input is absent."""
    if k >= len(inputs) or not inputs[k]:
        return default
    v = g.value(inputs[k])
    if v is None:
        _fail(op, name, "a computed input %r where a constant is needed" % inputs[k])
    return v


def _ints(v):
    return tuple(int(x) for x in np.asarray(v).reshape(-1))


def _scalar_of(g, x):
    """The Python number of a constant one-element tensor, or None."""
    v = g.value(x)
    if v is not None and v.size == 1:
        return v.reshape(()).item()
    return None


# -- elementwise ------------------------------------------------------------------------
_UNARY = {"Exp": "exp", "Log": "log", "Sqrt": "sqrt", "Abs": "abs", "Neg": "negative",
          "Reciprocal": "reciprocal", "Erf": "erf", "Floor": "floor", "Ceil": "ceil",
          "Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "arcsin", "Acos": "arccos",
          "Atan": "arctan", "Sign": "sign", "Round": "round", "Relu": "relu",
          "Sigmoid": "sigmoid", "Tanh": "tanh", "Softsign": "softsign", "Identity": "identity"}


def _unary(fn):
    return lambda g, name, attrs, inputs: getattr(S, fn)(g.sym(inputs[0]), name=name)


for _op, _fn in _UNARY.items():
    register(_op)(_unary(_fn))

# ONNX op -> (broadcast op, scalar op with the scalar on the right, on the left)
_BINARY = {"Add": ("broadcast_add", "_plus_scalar", "_plus_scalar"),
           "Sub": ("broadcast_sub", "_minus_scalar", "_rminus_scalar"),
           "Mul": ("broadcast_mul", "_mul_scalar", "_mul_scalar"),
           "Div": ("broadcast_div", "_div_scalar", "_rdiv_scalar"),
           "Pow": ("broadcast_power", "_power_scalar", "_rpower_scalar")}


def _binary(op):
    full, right, left = _BINARY[op]

    def convert(g, name, attrs, inputs):
        a, b = inputs
        sb, sa = _scalar_of(g, b), _scalar_of(g, a)
        if sb is not None and g.shape(a) is not None and len(g.shape(b)) <= len(g.shape(a)):
            return getattr(S._internal, right)(g.sym(a), scalar=sb, name=name)
        if sa is not None and g.shape(b) is not None and len(g.shape(a)) <= len(g.shape(b)):
            return getattr(S._internal, left)(g.sym(b), scalar=sa, name=name)
        return getattr(S, full)(g.sym(a), g.sym(b), name=name)
    return convert


for _op in _BINARY:
    register(_op)(_binary(_op))


@register("Max", "Min", "Sum", "Mean")
def convert_variadic(g, name, attrs, inputs):
    op = g._current_op
    syms = [g.sym(i) for i in inputs]
    if op == "Sum" or op == "Mean":
        y = S.add_n(*syms, name=name if op == "Sum" else None) if len(syms) > 1 else syms[0]
        return y if op == "Sum" else S._internal._div_scalar(y, scalar=float(len(syms)), name=name)
    fn = S.broadcast_maximum if op == "Max" else S.broadcast_minimum
    y = syms[0]
    for k, s in enumerate(syms[1:]):
        y = fn(y, s, name=name if k == len(syms) - 2 else None)
    return y


@register("Clip")
def convert_clip(g, name, attrs, inputs):
    lo = attrs.get("min", -np.inf)
    hi = attrs.get("max", np.inf)
    if len(inputs) > 1 and inputs[1]:
        lo = _const(g, name, "Clip", inputs, 1).item()
    if len(inputs) > 2 and inputs[2]:
        hi = _const(g, name, "Clip", inputs, 2).item()
    big = float(np.finfo(np.float32).max)
    return S.clip(g.sym(inputs[0]), a_min=max(lo, -big), a_max=min(hi, big), name=name)


@register("Cast")
def convert_cast(g, name, attrs, inputs):
    from onnx import helper
    return S.Cast(g.sym(inputs[0]), dtype=np.dtype(helper.tensor_dtype_to_np_dtype(
        attrs["to"])).name, name=name)


@register("Where")
def convert_where(g, name, attrs, inputs):
    # MXNet's where takes operands of one shape; ONNX's broadcasts them.
    shapes = [g.shape(i) for i in inputs]
    syms = [g.sym(i) for i in inputs]
    if all(s is not None and None not in s for s in shapes) and len(set(shapes)) > 1:
        target = np.broadcast_shapes(*shapes)
        syms = [x if s == target else S.broadcast_to(
            S.reshape(x, shape=(1,) * (len(target) - len(s)) + tuple(s)) if len(s) < len(
                target) else x, shape=target) for x, s in zip(syms, shapes)]
    return S.where(*syms, name=name)


# -- activations ----------------------------------------------------------------------
@register("Softplus")
def convert_softplus(g, name, attrs, inputs):
    return S.Activation(g.sym(inputs[0]), act_type="softrelu", name=name)


@register("LeakyRelu")
def convert_leaky_relu(g, name, attrs, inputs):
    return S.LeakyReLU(g.sym(inputs[0]), act_type="leaky", slope=attrs.get("alpha", 0.01),
                       name=name)


@register("Elu")
def convert_elu(g, name, attrs, inputs):
    return S.LeakyReLU(g.sym(inputs[0]), act_type="elu", slope=attrs.get("alpha", 1.0),
                       name=name)


@register("Selu")
def convert_selu(g, name, attrs, inputs):
    alpha, gamma = attrs.get("alpha", 1.67326319217681884765625), attrs.get(
        "gamma", 1.05070102214813232421875)
    if not (np.isclose(alpha, 1.6732632423543772) and np.isclose(gamma, 1.0507009873554805)):
        _fail("Selu", name, "alpha=%s gamma=%s (MXNet's selu has the standard ones)"
              % (alpha, gamma))
    return S.LeakyReLU(g.sym(inputs[0]), act_type="selu", name=name)


@register("PRelu")
def convert_prelu(g, name, attrs, inputs):
    x, slope = inputs
    v = g.value(slope)
    if v is not None:           # MXNet's prelu takes one slope per channel: shape (C,)
        if v.size != max(v.shape or (1,)):
            _fail("PRelu", name, "a slope of shape %s (one per channel is needed)" % (v.shape,))
        g.set_param(slope, v.reshape(-1))
        gamma = g.sym(slope)
    else:
        gamma = S.reshape(g.sym(slope), shape=(-1,))
    return S.LeakyReLU(g.sym(x), gamma, act_type="prelu", name=name)


@register("HardSigmoid")
def convert_hard_sigmoid(g, name, attrs, inputs):
    return S.hard_sigmoid(g.sym(inputs[0]), alpha=attrs.get("alpha", 0.2),
                          beta=attrs.get("beta", 0.5), name=name)


def _softmax(g, name, attrs, inputs, fn):
    x = g.sym(inputs[0])
    if g.opset_version >= 13:
        return fn(x, axis=attrs.get("axis", -1), name=name)
    # Before opset 13 Softmax flattens to 2-d at ``axis`` (default 1).
    axis, shape = attrs.get("axis", 1), g.shape(inputs[0])
    if shape is not None and axis % len(shape) == len(shape) - 1:
        return fn(x, axis=-1, name=name)
    if axis != 1:
        _fail(g._current_op, name, "axis=%d before opset 13" % axis)
    return S.reshape_like(fn(S.Flatten(x), axis=-1), x, name=name)


@register("Softmax")
def convert_softmax(g, name, attrs, inputs):
    return _softmax(g, name, attrs, inputs, S.softmax)


@register("LogSoftmax")
def convert_log_softmax(g, name, attrs, inputs):
    return _softmax(g, name, attrs, inputs, S.log_softmax)


# -- layers ---------------------------------------------------------------------------
def _pads(op, name, attrs, k):
    if attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        _fail(op, name, "auto_pad=%s" % attrs["auto_pad"])
    pads = tuple(attrs.get("pads", (0,) * 2 * k))
    if pads[:k] != pads[k:]:
        _fail(op, name, "asymmetric pads %s" % (pads,))
    return pads[:k]


def _conv_common(g, name, attrs, inputs, op):
    w = g.value(inputs[1])
    wshape = w.shape if w is not None else g.shape(inputs[1])
    if wshape is None or None in wshape:
        _fail(op, name, "a weight of unknown shape")
    kernel = tuple(attrs.get("kernel_shape", wshape[2:]))
    k = len(kernel)
    return wshape, dict(kernel=kernel, stride=tuple(attrs.get("strides", (1,) * k)),
                        dilate=tuple(attrs.get("dilations", (1,) * k)),
                        pad=_pads(op, name, attrs, k), num_group=attrs.get("group", 1),
                        no_bias=len(inputs) < 3 or not inputs[2])


@register("Conv")
def convert_conv(g, name, attrs, inputs):
    wshape, kw = _conv_common(g, name, attrs, inputs, "Conv")
    syms = [g.sym(i) for i in inputs if i]
    return S.Convolution(*syms, num_filter=wshape[0], name=name, **kw)


@register("ConvTranspose")
def convert_conv_transpose(g, name, attrs, inputs):
    wshape, kw = _conv_common(g, name, attrs, inputs, "ConvTranspose")
    k = len(kw["kernel"])
    kw["adj"] = tuple(attrs.get("output_padding", (0,) * k))
    if "output_shape" in attrs:
        kw["target_shape"] = tuple(attrs["output_shape"])[-k:]
    syms = [g.sym(i) for i in inputs if i]
    return S.Deconvolution(*syms, num_filter=wshape[1] * kw["num_group"], name=name, **kw)


@register("Gemm")
def convert_gemm(g, name, attrs, inputs):
    alpha, beta = attrs.get("alpha", 1.0), attrs.get("beta", 1.0)
    ta, tb = attrs.get("transA", 0), attrs.get("transB", 0)
    bshape = g.shape(inputs[1])
    c = inputs[2] if len(inputs) > 2 and inputs[2] else None
    cshape = g.shape(c) if c else None
    if (alpha == 1.0 and beta == 1.0 and not ta and tb and bshape is not None
            and (c is None or (cshape is not None and len(cshape) == 1))):
        syms = [g.sym(inputs[0]), g.sym(inputs[1])] + ([g.sym(c)] if c else [])
        return S.FullyConnected(*syms, num_hidden=bshape[0], no_bias=c is None,
                                flatten=True, name=name)
    y = S.dot(g.sym(inputs[0]), g.sym(inputs[1]), transpose_a=bool(ta), transpose_b=bool(tb))
    if alpha != 1.0:
        y = S._internal._mul_scalar(y, scalar=alpha)
    if c is None:
        return S._internal._copy(y, name=name)
    cs = g.sym(c) if beta == 1.0 else S._internal._mul_scalar(g.sym(c), scalar=beta)
    return S.broadcast_add(y, cs, name=name)


@register("MatMul")
def convert_matmul(g, name, attrs, inputs):
    sa, sb = g.shape(inputs[0]), g.shape(inputs[1])
    a, b = g.sym(inputs[0]), g.sym(inputs[1])
    if sb is not None and len(sb) <= 2:
        return S.dot(a, b, name=name)
    if sa is not None and len(sa) == len(sb) >= 3 and sa[:-2] == sb[:-2]:
        return S.batch_dot(a, b, name=name)     # leading axes are the batch
    _fail("MatMul", name, "operands of shapes %s and %s" % (sa, sb))


@register("BatchNormalization")
def convert_batch_norm(g, name, attrs, inputs):
    return S.BatchNorm(*[g.sym(i) for i in inputs[:5]], eps=attrs.get("epsilon", 1e-5),
                       momentum=attrs.get("momentum", 0.9), fix_gamma=False,
                       use_global_stats=True, name=name)


@register("InstanceNormalization")
def convert_instance_norm(g, name, attrs, inputs):
    return S.InstanceNorm(*[g.sym(i) for i in inputs], eps=attrs.get("epsilon", 1e-5),
                          name=name)


@register("LayerNormalization")
def convert_layer_norm(g, name, attrs, inputs):
    shape = g.shape(inputs[0])
    axis = attrs.get("axis", -1)
    if shape is None or axis % len(shape) != len(shape) - 1 or len(inputs) < 3:
        _fail("LayerNormalization", name, "axis=%s (the last axis, with scale and bias, "
              "is supported)" % axis)
    return S.LayerNorm(*[g.sym(i) for i in inputs[:3]], axis=-1,
                       eps=attrs.get("epsilon", 1e-5), name=name)


@register("LRN")
def convert_lrn(g, name, attrs, inputs):
    return S.LRN(g.sym(inputs[0]), alpha=attrs.get("alpha", 1e-4), beta=attrs.get("beta", 0.75),
                 knorm=attrs.get("bias", 1.0), nsize=attrs["size"], name=name)


@register("MaxPool", "AveragePool", "LpPool")
def convert_pool(g, name, attrs, inputs):
    op = g._current_op
    if len(g._current_outputs) > 1 and g._current_outputs[1]:
        _fail(op, name, "the Indices output")
    kernel = tuple(attrs["kernel_shape"])
    k = len(kernel)
    if any(d != 1 for d in attrs.get("dilations", ())):
        _fail(op, name, "dilations %s" % (attrs["dilations"],))
    kw = dict(kernel=kernel, stride=tuple(attrs.get("strides", (1,) * k)),
              pad=_pads(op, name, attrs, k),
              pooling_convention="full" if attrs.get("ceil_mode", 0) else "valid")
    if op == "MaxPool":
        kw["pool_type"] = "max"
    elif op == "AveragePool":
        kw.update(pool_type="avg", count_include_pad=bool(attrs.get("count_include_pad", 0)))
    else:
        kw.update(pool_type="lp", p_value=attrs.get("p", 2))
    return S.Pooling(g.sym(inputs[0]), name=name, **kw)


@register("GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool")
def convert_global_pool(g, name, attrs, inputs):
    op = g._current_op
    kind = {"GlobalMaxPool": "max", "GlobalAveragePool": "avg", "GlobalLpPool": "lp"}[op]
    kw = {"p_value": attrs.get("p", 2)} if kind == "lp" else {}
    return S.Pooling(g.sym(inputs[0]), global_pool=True, kernel=(1, 1), pool_type=kind,
                     name=name, **kw)


@register("Dropout")
def convert_dropout(g, name, attrs, inputs):
    if len(g._current_outputs) > 1 and g._current_outputs[1]:
        _fail("Dropout", name, "the mask output")
    return S._internal._copy(g.sym(inputs[0]), name=name)     # inference: the identity


@register("Gather")
def convert_gather(g, name, attrs, inputs):
    data, idx = inputs
    axis = attrs.get("axis", 0)
    w = g.value(data)
    if axis == 0 and w is not None and w.ndim == 2:
        return S.Embedding(g.sym(idx), g.sym(data), input_dim=w.shape[0],
                           output_dim=w.shape[1], dtype=w.dtype.name, name=name)
    return S.take(g.sym(data), g.sym(idx), axis=axis, mode="wrap", name=name)


@register("Resize", "Upsample")
def convert_resize(g, name, attrs, inputs):
    op = g._current_op
    if attrs.get("mode", "nearest") == "linear" and op == "Resize":
        return _bilinear(g, name, attrs, inputs)
    if attrs.get("mode", "nearest") != "nearest":
        _fail(op, name, "mode=%s (nearest or linear)" % attrs["mode"])
    if op == "Resize" and attrs.get("coordinate_transformation_mode", "half_pixel") not in (
            "asymmetric",):
        _fail(op, name, "coordinate_transformation_mode=%s (MXNet's nearest UpSampling is "
              "asymmetric)" % attrs.get("coordinate_transformation_mode", "half_pixel"))
    scales = attrs.get("scales")
    if scales is None:
        scales = _const(g, name, op, inputs, 2 if op == "Resize" else 1)
    if scales is None or len(scales) == 0:
        sizes = _const(g, name, op, inputs, 3)
        shape = g.shape(inputs[0])
        if sizes is None or shape is None or None in shape:
            _fail(op, name, "sizes of an input of unknown shape")
        scales = np.asarray(sizes, dtype=np.float64) / np.asarray(shape)
    scales = [float(s) for s in np.asarray(scales).reshape(-1)]
    if scales[:2] != [1.0, 1.0] or len(set(scales[2:])) != 1 or scales[2] != int(scales[2]):
        _fail(op, name, "scales %s (MXNet's UpSampling takes one integer scale for H and W)"
              % scales)
    return S.UpSampling(g.sym(inputs[0]), scale=int(scales[2]), sample_type="nearest",
                        num_args=1, name=name)


def _bilinear(g, name, attrs, inputs):
    """Resize(mode=linear) -> contrib.BilinearResize2D to the output's static size."""
    ctm = attrs.get("coordinate_transformation_mode", "half_pixel")
    if ctm not in ("align_corners", "half_pixel", "pytorch_half_pixel"):
        _fail("Resize", name, "mode=linear with coordinate_transformation_mode=%s" % ctm)
    shape = g.shape(inputs[0])
    sizes = _const(g, name, "Resize", inputs, 3)
    if sizes is None:
        scales = _const(g, name, "Resize", inputs, 2)
        if shape is None or None in shape or scales is None:
            _fail("Resize", name, "mode=linear on an input of unknown shape")
        sizes = np.floor(np.asarray(shape) * scales.reshape(-1)).astype(np.int64)
    sizes = _ints(sizes)
    if shape is not None and tuple(sizes[:2]) != tuple(shape[:2]):
        _fail("Resize", name, "sizes %s that resize the batch or channel axes" % (sizes,))
    return S.contrib.BilinearResize2D(g.sym(inputs[0]), height=sizes[2], width=sizes[3],
                                      align_corners=ctm == "align_corners", name=name)
