"""Translations of the neural-network operators (opset 13): convolution, dense layers,
normalisation, activations, pooling, softmax, embedding, upsampling.

Each takes ``(b, n)``: the :class:`~.._export_onnx.OnnxBuilder` and the
:class:`~.._export_onnx.ExportNode`, and writes ``n.outs``. The graph is exported for
inference: Dropout is the identity, BatchNorm uses its running statistics.
"""
import math

import numpy as np

from .._export_onnx import MXNetGraph
from ._common import unsupported, spatial, channel_shaped, scalar

register = MXNetGraph.register


def _conv_attrs(n):
    p = n.p
    if p.layout not in (None, "NCW", "NCHW", "NCDHW"):
        unsupported(n, "layout=%s (only channel-first layouts)" % p.layout)
    k = len(p.kernel)
    return dict(kernel_shape=list(p.kernel), strides=spatial(p.stride, k, 1),
                dilations=spatial(p.dilate, k, 1),
                pads=spatial(p.pad, k, 0) * 2, group=p.num_group)


@register("Convolution")
def convert_convolution(b, n):
    b.add("Conv", n.ins, n.outs, name=n.name, **_conv_attrs(n))


@register("Deconvolution")
def convert_deconvolution(b, n):
    attrs = _conv_attrs(n)
    k = len(n.p.kernel)
    attrs["output_padding"] = spatial(n.p.adj, k, 0)
    if n.p.target_shape and any(n.p.target_shape):
        # MXNet works the padding out from target_shape: give ONNX the output size.
        attrs["output_shape"] = list(n.out_shapes[0][2:])
        del attrs["pads"]
        attrs["output_padding"] = [0] * k
    b.add("ConvTranspose", n.ins, n.outs, name=n.name, **attrs)


@register("FullyConnected")
def convert_fully_connected(b, n):
    x, w = n.ins[0], n.ins[1]
    if n.p.flatten:
        if len(n.in_shapes[0]) != 2:
            x = b.add("Flatten", [x], name=n.name, axis=1)
        b.add("Gemm", [x, w] + n.ins[2:3], n.outs, name=n.name, transB=1)
        return
    wt = b.add("Transpose", [w], name=n.name, perm=[1, 0])
    if n.p.no_bias:
        b.add("MatMul", [x, wt], n.outs, name=n.name)
    else:
        y = b.add("MatMul", [x, wt], name=n.name)
        b.add("Add", [y, n.ins[2]], n.outs, name=n.name)


@register("BatchNorm")
def convert_batch_norm(b, n):
    p = n.p
    if p.output_mean_var:
        unsupported(n, "output_mean_var=True")
    x, gamma, beta, mean, var = n.ins
    if p.fix_gamma:
        gamma = b.const(np.ones(n.in_shapes[1], n.in_dtypes[1]), n.name + "_fixed_gamma")
    axis = p.axis % len(n.in_shapes[0])
    if axis == 1:
        b.add("BatchNormalization", [x, gamma, beta, mean, var], n.outs, name=n.name,
              epsilon=p.eps)
        return
    # ONNX normalises axis 1: move the axis there and back.
    perm = list(range(len(n.in_shapes[0])))
    perm[1], perm[axis] = perm[axis], perm[1]
    xt = b.add("Transpose", [x], name=n.name, perm=perm)
    y = b.add("BatchNormalization", [xt, gamma, beta, mean, var], name=n.name, epsilon=p.eps)
    b.add("Transpose", [y], n.outs, name=n.name, perm=perm)


@register("InstanceNorm")
def convert_instance_norm(b, n):
    b.add("InstanceNormalization", n.ins, n.outs, name=n.name, epsilon=n.p.eps)


def _normalize(b, n, x, axes, eps, out=None):
    """``(x - mean) / sqrt(var + eps)`` over ``axes``, biased variance."""
    mean = b.add("ReduceMean", [x], name=n.name, axes=axes, keepdims=1)
    d = b.add("Sub", [x, mean], name=n.name)
    var = b.add("ReduceMean", [b.add("Mul", [d, d], name=n.name)], name=n.name, axes=axes,
                keepdims=1)
    std = b.add("Sqrt", [b.add("Add", [var, scalar(b, n, eps)], name=n.name)], name=n.name)
    return b.add("Div", [d, std], [out] if out else 1, name=n.name)


@register("LayerNorm")
def convert_layer_norm(b, n):
    p = n.p
    if p.output_mean_var:
        unsupported(n, "output_mean_var=True")
    ndim = len(n.in_shapes[0])
    axis = p.axis % ndim
    y = _normalize(b, n, n.ins[0], [axis], p.eps)
    gamma = channel_shaped(b, n, n.ins[1], axis, ndim)
    beta = channel_shaped(b, n, n.ins[2], axis, ndim)
    b.add("Add", [b.add("Mul", [y, gamma], name=n.name), beta], n.outs, name=n.name)


@register("GroupNorm")
def convert_group_norm(b, n):
    # MXNet 1.x: gamma and beta hold one value per group, not per channel.
    p = n.p
    if p.output_mean_var:
        unsupported(n, "output_mean_var=True")
    grouped = b.add("Reshape", [n.ins[0], b.int64s([0, p.num_groups, -1], n.name + "_groups")],
                    name=n.name)
    y = _normalize(b, n, grouped, [2], p.eps)
    gamma = channel_shaped(b, n, n.ins[1], 1, 3)
    beta = channel_shaped(b, n, n.ins[2], 1, 3)
    y = b.add("Add", [b.add("Mul", [y, gamma], name=n.name), beta], name=n.name)
    b.add("Reshape", [y, b.add("Shape", [n.ins[0]], name=n.name)], n.outs, name=n.name)


@register("L2Normalization")
def convert_l2_normalization(b, n):
    ndim = len(n.in_shapes[0])
    axes = {"instance": list(range(1, ndim)), "channel": [1],
            "spatial": list(range(2, ndim))}[n.p.mode]
    x = n.ins[0]
    ss = b.add("ReduceSum", [b.add("Mul", [x, x], name=n.name), b.int64s(axes, n.name + "_axes")],
               name=n.name, keepdims=1)
    norm = b.add("Sqrt", [b.add("Add", [ss, scalar(b, n, n.p.eps)], name=n.name)], name=n.name)
    b.add("Div", [x, norm], n.outs, name=n.name)


@register("LRN")
def convert_lrn(b, n):
    p = n.p
    b.add("LRN", n.ins, n.outs, name=n.name, alpha=p.alpha, beta=p.beta, bias=p.knorm,
          size=p.nsize)


def _softplus_neg(b, n, x):
    return b.add("Neg", [b.add("Softplus", [b.add("Neg", [x], name=n.name)], name=n.name)],
                 name=n.name)


def _activation(b, n, act, x, out):
    if act in ("relu", "sigmoid", "tanh", "softsign"):
        return b.add(act.capitalize(), [x], [out], name=n.name)
    if act == "softrelu":
        return b.add("Softplus", [x], [out], name=n.name)
    if act == "log_sigmoid":
        return b.add("Identity", [_softplus_neg(b, n, x)], [out], name=n.name)
    if act == "mish":
        t = b.add("Tanh", [b.add("Softplus", [x], name=n.name)], name=n.name)
        return b.add("Mul", [x, t], [out], name=n.name)
    unsupported(n, "act_type=%s" % act)


@register("Activation")
def convert_activation(b, n):
    _activation(b, n, n.p.act_type, n.ins[0], n.outs[0])


for _name in ("relu", "sigmoid", "tanh", "softsign"):
    register(_name)(lambda b, n: _activation(b, n, n.op, n.ins[0], n.outs[0]))


@register("LeakyReLU")
def convert_leaky_relu(b, n):
    p, x, out = n.p, n.ins[0], n.outs
    act = p.act_type
    if act == "leaky":
        b.add("LeakyRelu", [x], out, name=n.name, alpha=p.slope)
    elif act == "rrelu":        # inference: the mean of the random slopes; no mask output
        b.add("LeakyRelu", [x], out[:1], name=n.name,
              alpha=(p.lower_bound + p.upper_bound) / 2)
    elif act == "prelu":
        slope = channel_shaped(b, n, n.ins[1], 1, len(n.in_shapes[0]))
        b.add("PRelu", [x, slope], out, name=n.name)
    elif act == "elu":
        b.add("Elu", [x], out, name=n.name, alpha=p.slope)
    elif act == "selu":
        b.add("Selu", [x], out, name=n.name)
    elif act == "gelu":
        erf = b.add("Erf", [b.add("Mul", [x, scalar(b, n, 1 / math.sqrt(2))], name=n.name)],
                    name=n.name)
        half = b.add("Mul", [x, scalar(b, n, 0.5)], name=n.name)
        b.add("Mul", [half, b.add("Add", [erf, scalar(b, n, 1.0)], name=n.name)], out,
              name=n.name)


@register("hard_sigmoid")
def convert_hard_sigmoid(b, n):
    b.add("HardSigmoid", n.ins, n.outs, name=n.name, alpha=n.p.alpha, beta=n.p.beta)


@register("Pooling")
def convert_pooling(b, n):
    p, x, out = n.p, n.ins[0], n.outs
    if p.layout not in (None, "NCW", "NCHW", "NCDHW"):
        unsupported(n, "layout=%s (only channel-first layouts)" % p.layout)
    spatial_axes = list(range(2, len(n.in_shapes[0])))
    if p.global_pool:
        if p.pool_type == "max":
            b.add("GlobalMaxPool", [x], out, name=n.name)
        elif p.pool_type == "avg":
            b.add("GlobalAveragePool", [x], out, name=n.name)
        elif p.pool_type == "sum":
            b.add("ReduceSum", [x, b.int64s(spatial_axes, n.name + "_axes")], out,
                  name=n.name, keepdims=1)
        else:
            b.add("GlobalLpPool", [x], out, name=n.name, p=int(p.p_value or 2))
        return
    if p.pooling_convention == "same":
        unsupported(n, "pooling_convention=same")
    k = len(p.kernel)
    attrs = dict(kernel_shape=list(p.kernel), strides=spatial(p.stride, k, 1),
                 pads=spatial(p.pad, k, 0) * 2)
    ceil = int(p.pooling_convention == "full")
    if p.pool_type == "max":
        b.add("MaxPool", [x], out, name=n.name, ceil_mode=ceil, **attrs)
    elif p.pool_type in ("avg", "sum"):
        include = 1 if p.count_include_pad is None else int(p.count_include_pad)
        if p.pool_type == "avg":
            b.add("AveragePool", [x], out, name=n.name, ceil_mode=ceil,
                  count_include_pad=include, **attrs)
        else:
            y = b.add("AveragePool", [x], name=n.name, ceil_mode=ceil, count_include_pad=1,
                      **attrs)
            b.add("Mul", [y, scalar(b, n, float(np.prod(p.kernel)))], out, name=n.name)
    else:
        if ceil:
            unsupported(n, "pool_type=lp with pooling_convention=full")
        b.add("LpPool", [x], out, name=n.name, p=int(p.p_value or 2), **attrs)


def _softmax(b, n, x, axis, temperature, out, log=False):
    if temperature not in (None, 1.0):
        x = b.add("Div", [x, scalar(b, n, temperature)], name=n.name)
    return b.add("LogSoftmax" if log else "Softmax", [x], out, name=n.name, axis=axis)


@register("softmax")
def convert_softmax(b, n):
    if n.p.use_length:
        unsupported(n, "use_length=True")
    _softmax(b, n, n.ins[0], n.p.axis, n.p.temperature, n.outs)


@register("log_softmax")
def convert_log_softmax(b, n):
    if n.p.use_length:
        unsupported(n, "use_length=True")
    _softmax(b, n, n.ins[0], n.p.axis, n.p.temperature, n.outs, log=True)


def _softmax_rows(b, n, x):
    """Softmax over everything but the first axis (MXNet's instance mode)."""
    if len(n.in_shapes[0]) == 2:
        return b.add("Softmax", [x], n.outs, name=n.name, axis=1)
    y = b.add("Softmax", [b.add("Flatten", [x], name=n.name, axis=1)], name=n.name, axis=1)
    return b.add("Reshape", [y, b.add("Shape", [x], name=n.name)], n.outs, name=n.name)


@register("SoftmaxOutput")
def convert_softmax_output(b, n):
    p = n.p
    if p.multi_output:
        b.add("Softmax", [n.ins[0]], n.outs, name=n.name, axis=1)
    elif p.preserve_shape:
        b.add("Softmax", [n.ins[0]], n.outs, name=n.name, axis=-1)
    else:
        _softmax_rows(b, n, n.ins[0])


@register("SoftmaxActivation")
def convert_softmax_activation(b, n):
    # instance: over the last axis (MXNet flattens to 2-d keeping the last axis).
    b.add("Softmax", [n.ins[0]], n.outs, name=n.name, axis=1 if n.p.mode == "channel" else -1)


@register("LogisticRegressionOutput")
def convert_logistic_regression_output(b, n):
    b.add("Sigmoid", [n.ins[0]], n.outs, name=n.name)


for _name in ("LinearRegressionOutput", "MAERegressionOutput", "_copy", "BlockGrad",
              "MakeLoss"):
    register(_name)(lambda b, n: b.add("Identity", [n.ins[0]], n.outs, name=n.name))


@register("Dropout")
def convert_dropout(b, n):
    # Inference drops nothing, except mode='always', which has no ONNX equivalent.
    if n.p.mode != "training":
        unsupported(n, "mode=%s (only training mode, the identity at inference)" % n.p.mode)
    b.add("Identity", [n.ins[0]], n.outs, name=n.name)


@register("Embedding")
def convert_embedding(b, n):
    idx = b.add("Cast", [n.ins[0]], name=n.name, to=b.onnx.TensorProto.INT64)
    b.add("Gather", [n.ins[1], idx], n.outs, name=n.name, axis=0)


@register("UpSampling")
def convert_upsampling(b, n):
    p = n.p
    if p.sample_type != "nearest":
        unsupported(n, "sample_type=%s (only nearest)" % p.sample_type)
    out_hw = np.array(n.out_shapes[0][2:])
    scaled = []
    for x, shape in zip(n.ins, n.in_shapes):
        # MXNet's nearest: each output pixel copies input pixel floor(i / scale).
        scales = [1.0, 1.0] + list(out_hw / np.array(shape[2:]))
        scaled.append(b.add("Resize", [x, "", b.const(scales, n.name + "_scales",
                                                       np.float32)], name=n.name,
                            mode="nearest", coordinate_transformation_mode="asymmetric",
                            nearest_mode="floor"))
    if len(scaled) == 1:
        b.add("Identity", scaled, n.outs, name=n.name)
    elif p.multi_input_mode == "sum":
        b.add("Sum", scaled, n.outs, name=n.name)
    else:
        b.add("Concat", scaled, n.outs, name=n.name, axis=1)

