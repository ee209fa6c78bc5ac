"""Translations of the tensor operators (opset 13): arithmetic, shapes, slicing,
reductions, padding, casts, matrix products.
"""
import numpy as np

from .._export_onnx import MXNetGraph
from ._common import unsupported, scalar

register = MXNetGraph.register

_INT64_MAX = np.iinfo(np.int64).max
_INT64_MIN = np.iinfo(np.int64).min

_BINARY = {"Add": ("elemwise_add", "broadcast_add"), "Sub": ("elemwise_sub", "broadcast_sub"),
           "Mul": ("elemwise_mul", "broadcast_mul"), "Div": ("elemwise_div", "broadcast_div"),
           "Max": ("broadcast_maximum", "_maximum"), "Min": ("broadcast_minimum", "_minimum"),
           "Pow": ("broadcast_power", "_power")}
_UNARY = {"exp": "Exp", "log": "Log", "sqrt": "Sqrt", "abs": "Abs", "negative": "Neg",
          "reciprocal": "Reciprocal", "erf": "Erf", "floor": "Floor", "ceil": "Ceil",
          "sin": "Sin", "cos": "Cos", "tan": "Tan", "arcsin": "Asin", "arccos": "Acos",
          "arctan": "Atan", "sign": "Sign", "round": "Round"}
# op -> (ONNX op, whether the scalar comes first)
_SCALAR = {"_plus_scalar": ("Add", False), "_minus_scalar": ("Sub", False),
           "_rminus_scalar": ("Sub", True), "_mul_scalar": ("Mul", False),
           "_div_scalar": ("Div", False), "_rdiv_scalar": ("Div", True),
           "_power_scalar": ("Pow", False), "_rpower_scalar": ("Pow", True),
           "_maximum_scalar": ("Max", False), "_minimum_scalar": ("Min", False)}


def _binary(onnx_op):
    return lambda b, n: b.add(onnx_op, n.ins, n.outs, name=n.name)


def _unary(onnx_op):
    return lambda b, n: b.add(onnx_op, n.ins, n.outs, name=n.name)


def _with_scalar(onnx_op, first):
    def convert(b, n):
        s = scalar(b, n, n.p.scalar)
        b.add(onnx_op, [s, n.ins[0]] if first else [n.ins[0], s], n.outs, name=n.name)
    return convert


for _onnx_op, _names in _BINARY.items():
    for _name in _names:
        register(_name)(_binary(_onnx_op))
for _name, _onnx_op in _UNARY.items():
    register(_name)(_unary(_onnx_op))
for _name, (_onnx_op, _first) in _SCALAR.items():
    register(_name)(_with_scalar(_onnx_op, _first))


@register("square")
def convert_square(b, n):
    b.add("Mul", [n.ins[0], n.ins[0]], n.outs, name=n.name)


@register("add_n")
def convert_add_n(b, n):
    b.add("Sum", n.ins, n.outs, name=n.name)


@register("clip")
def convert_clip(b, n):
    b.add("Clip", [n.ins[0], scalar(b, n, n.p.a_min), scalar(b, n, n.p.a_max)], n.outs,
          name=n.name)


@register("Cast")
def convert_cast(b, n):
    from onnx import helper
    b.add("Cast", n.ins, n.outs, name=n.name,
          to=helper.np_dtype_to_tensor_dtype(np.dtype(n.out_dtypes[0])))


@register("Flatten")
def convert_flatten(b, n):
    b.add("Flatten", n.ins, n.outs, name=n.name, axis=1)


@register("Reshape")
def convert_reshape(b, n):
    codes = tuple(n.p.shape or ())
    if not n.p.reverse and all(c >= -1 for c in codes):
        # ONNX Reshape reads 0 (copy) and -1 (infer) as MXNet does.
        target = b.int64s(codes, n.name + "_shape")
    elif not b.dynamic:
        target = b.int64s(n.out_shapes[0], n.name + "_shape")    # the inferred shape
    else:
        target = _reshape_target(b, n, list(codes))
    b.add("Reshape", [n.ins[0], target], n.outs, name=n.name)


def _reshape_target(b, n, codes):
    """The target shape of MXNet's codes (-2 copy the rest, -3 merge two, -4 split one,
    ``reverse``) computed from ``Shape(x)`` in the graph, for open dims."""
    shape = b.add("Shape", [n.ins[0]], name=n.name)
    src = list(range(len(n.in_shapes[0])))
    if n.p.reverse:         # as MXNet: read codes and dims from the right
        src, codes = src[::-1], codes[::-1]

    def dim(k):
        return b.add("Gather", [shape, b.int64s([k], n.name + "_dim")], name=n.name, axis=0)

    def const(v):
        return b.int64s([v], n.name + "_code")
    out, i, j = [], 0, 0
    while j < len(codes):
        c = codes[j]
        if c == -2:
            out += [dim(k) for k in src[i:]]
            i = len(src)
        elif c == -3:
            out.append(b.add("Mul", [dim(src[i]), dim(src[i + 1])], name=n.name))
            i += 2
        elif c == -4:
            d1, d2 = codes[j + 1], codes[j + 2]
            whole = dim(src[i])
            out += [b.add("Div", [whole, const(d2)], name=n.name) if d1 == -1 else const(d1),
                    b.add("Div", [whole, const(d1)], name=n.name) if d2 == -1 else const(d2)]
            i, j = i + 1, j + 2
        else:
            out.append(dim(src[i]) if c == 0 else const(c))
            i += 1
        j += 1
    return b.add("Concat", out[::-1] if n.p.reverse else out, name=n.name, axis=0)


@register("expand_dims")
def convert_expand_dims(b, n):
    axis = n.p.axis % (len(n.in_shapes[0]) + 1)
    b.add("Unsqueeze", [n.ins[0], b.int64s([axis], n.name + "_axes")], n.outs, name=n.name)


@register("squeeze")
def convert_squeeze(b, n):
    ins = [n.ins[0]]
    if n.p.axis is not None:
        axes = n.p.axis if isinstance(n.p.axis, tuple) else (n.p.axis,)
        ins.append(b.int64s(list(axes), n.name + "_axes"))
    b.add("Squeeze", ins, n.outs, name=n.name)


@register("transpose")
def convert_transpose(b, n):
    ndim = len(n.in_shapes[0])
    perm = list(n.p.axes) if n.p.axes else list(range(ndim))[::-1]
    b.add("Transpose", n.ins, n.outs, name=n.name, perm=perm)


@register("SwapAxis")
def convert_swap_axis(b, n):
    perm = list(range(len(n.in_shapes[0])))
    perm[n.p.dim1], perm[n.p.dim2] = perm[n.p.dim2], perm[n.p.dim1]
    b.add("Transpose", n.ins, n.outs, name=n.name, perm=perm)


@register("_rnn_param_concat")    # Gluon's RNN layers in MXNet join their weights with it
@register("Concat")
def convert_concat(b, n):
    b.add("Concat", n.ins, n.outs, name=n.name, axis=n.p.dim)


def split(b, n, axis, sizes, squeeze):
    """``n.ins[0]`` split along ``axis`` into parts of ``sizes`` (each of size 1 without
    the axis when ``squeeze``), written to ``n.outs``."""
    sizes_t = b.int64s(sizes, n.name + "_split")
    if not squeeze:
        b.add("Split", [n.ins[0], sizes_t], n.outs, name=n.name, axis=axis)
        return
    parts = b.add("Split", [n.ins[0], sizes_t], len(sizes), name=n.name, axis=axis)
    parts = [parts] if isinstance(parts, str) else parts
    axes = b.int64s([axis], n.name + "_axes")
    for part, out in zip(parts, n.outs):
        b.add("Squeeze", [part, axes], [out], name=n.name)


@register("SliceChannel")
def convert_slice_channel(b, n):
    p = n.p
    axis = p.axis % len(n.in_shapes[0])
    split(b, n, axis, [n.in_shapes[0][axis] // p.num_outputs] * p.num_outputs, p.squeeze_axis)


def _slice(b, n, starts, ends, axes, steps):
    b.add("Slice", [n.ins[0], b.int64s(starts, n.name + "_starts"),
                    b.int64s(ends, n.name + "_ends"), b.int64s(axes, n.name + "_axes"),
                    b.int64s(steps, n.name + "_steps")], n.outs, name=n.name)


@register("slice")
def convert_slice(b, n):
    p = n.p
    k = len(p.begin)
    steps = [1 if s is None else s for s in (tuple(p.step) + (None,) * k)[:k]]
    # A None bound is the whole axis in the step's direction (ONNX clamps the extremes).
    starts = [(0 if st > 0 else _INT64_MAX) if v is None else v for v, st in zip(p.begin, steps)]
    ends = [(_INT64_MAX if st > 0 else _INT64_MIN) if v is None else v
            for v, st in zip(p.end, steps)]
    _slice(b, n, starts, ends, list(range(k)), steps)


@register("slice_axis")
def convert_slice_axis(b, n):
    p = n.p
    _slice(b, n, [p.begin], [_INT64_MAX if p.end is None else p.end], [p.axis], [1])


def _reduce_axes(n):
    p, ndim = n.p, len(n.in_shapes[0])
    if p.axis is None or p.axis == ():
        axes = list(range(ndim))
        return [] if p.exclude else axes
    axes = [a % ndim for a in (p.axis if isinstance(p.axis, tuple) else (p.axis,))]
    return [a for a in range(ndim) if a not in axes] if p.exclude else axes


def _to_mxnet_scalar(b, n, y):
    """MXNet gives shape (1,) where ONNX reduces to a scalar (every axis, no keepdims)."""
    if n.out_shapes[0] == (1,) and len(n.in_shapes[0]) != 1:
        return b.add("Reshape", [y, b.int64s([1], n.name + "_shape")], n.outs, name=n.name)
    return b.add("Identity", [y], n.outs, name=n.name)


def _reduction(onnx_op, axes_as_input):
    def convert(b, n):
        axes = _reduce_axes(n)
        if not axes:
            b.add("Identity", [n.ins[0]], n.outs, name=n.name)
            return
        if axes_as_input:
            y = b.add(onnx_op, [n.ins[0], b.int64s(axes, n.name + "_axes")], name=n.name,
                      keepdims=int(n.p.keepdims))
        else:
            y = b.add(onnx_op, n.ins, name=n.name, axes=axes, keepdims=int(n.p.keepdims))
        _to_mxnet_scalar(b, n, y)
    return convert


register("sum")(_reduction("ReduceSum", True))
for _name, _onnx_op in (("mean", "ReduceMean"), ("max", "ReduceMax"), ("min", "ReduceMin"),
                        ("prod", "ReduceProd")):
    register(_name)(_reduction(_onnx_op, False))


def _arg_reduction(onnx_op):
    def convert(b, n):
        x, axis = n.ins[0], n.p.axis
        if axis is None:
            x = b.add("Reshape", [x, b.int64s([-1], n.name + "_flat")], name=n.name)
            axis = 0
        i = b.add(onnx_op, [x], name=n.name, axis=axis, keepdims=int(n.p.keepdims))
        from onnx import helper
        y = b.add("Cast", [i], name=n.name,
                  to=helper.np_dtype_to_tensor_dtype(np.dtype(n.out_dtypes[0])))
        _to_mxnet_scalar(b, n, y)
    return convert


register("argmax")(_arg_reduction("ArgMax"))
register("argmin")(_arg_reduction("ArgMin"))


@register("Pad")
def convert_pad(b, n):
    p = n.p
    w = list(p.pad_width)
    pads = w[0::2] + w[1::2]
    ins = [n.ins[0], b.int64s(pads, n.name + "_pads")]
    if p.mode == "constant":
        ins.append(scalar(b, n, p.constant_value))
    b.add("Pad", ins, n.outs, name=n.name, mode=p.mode)


@register("dot")
def convert_dot(b, n):
    p = n.p
    a, c = n.ins
    ra, rc = len(n.in_shapes[0]), len(n.in_shapes[1])
    if (p.transpose_a and ra != 2) or rc > 2 or (p.transpose_b and rc != 2):
        unsupported(n, "operands of rank %d and %d (ONNX MatMul reads dot only when the "
                    "second is a matrix or vector)" % (ra, rc))
    if p.transpose_a:
        a = b.add("Transpose", [a], name=n.name, perm=[1, 0])
    if p.transpose_b:
        c = b.add("Transpose", [c], name=n.name, perm=[1, 0])
    b.add("MatMul", [a, c], n.outs, name=n.name)


@register("batch_dot")
def convert_batch_dot(b, n):
    b.add("MatMul", batch_transposed(b, n), n.outs, name=n.name)


def batch_transposed(b, n):
    """The two operands, each with its last two axes swapped where ``transpose_a`` /
    ``transpose_b`` asks."""
    ins = list(n.ins)
    for k, t in enumerate((n.p.transpose_a, n.p.transpose_b)):
        if t:
            perm = list(range(len(n.in_shapes[k])))
            perm[-1], perm[-2] = perm[-2], perm[-1]
            ins[k] = b.add("Transpose", [ins[k]], name=n.name, perm=perm)
    return ins


@register("where")
def convert_where(b, n):
    cond = b.add("Cast", [n.ins[0]], name=n.name, to=b.onnx.TensorProto.BOOL)
    b.add("Where", [cond, n.ins[1], n.ins[2]], n.outs, name=n.name)
