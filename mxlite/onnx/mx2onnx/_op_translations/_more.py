"""Translations of comparisons, tensor creation, broadcasting, indexing and sorting
(opset 13). MXNet's comparisons give 0/1 in the input's dtype where ONNX gives bool, and
its indices are floats where ONNX's are int64: both are cast back to MXNet's dtype.
"""
import math

import numpy as np

from .._export_onnx import MXNetGraph
from ._common import unsupported, scalar
from ._tensor import split, batch_transposed

register = MXNetGraph.register


def _onnx_dtype(dtype):
    from onnx import helper
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _cast_out(b, n, y, k=0):
    """``y`` cast to the dtype MXNet gives output ``k``, written to ``n.outs[k]``."""
    return b.add("Cast", [y], [n.outs[k]], name=n.name, to=_onnx_dtype(n.out_dtypes[k]))


def _as_bool(b, n, x):
    return b.add("Cast", [x], name=n.name, to=b.onnx.TensorProto.BOOL)


_COMPARE = {"Equal": ("_equal", "broadcast_equal", "_equal_scalar"),
            "Greater": ("_greater", "broadcast_greater", "_greater_scalar"),
            "Less": ("_lesser", "broadcast_lesser", "_lesser_scalar"),
            "GreaterOrEqual": ("_greater_equal", "broadcast_greater_equal",
                               "_greater_equal_scalar"),
            "LessOrEqual": ("_lesser_equal", "broadcast_lesser_equal", "_lesser_equal_scalar")}
_LOGICAL = {"And": ("_logical_and", "broadcast_logical_and"),
            "Or": ("_logical_or", "broadcast_logical_or"),
            "Xor": ("_logical_xor", "broadcast_logical_xor")}


def _compare(onnx_op, with_scalar):
    def convert(b, n):
        ins = [n.ins[0], scalar(b, n, n.p.scalar)] if with_scalar else n.ins
        _cast_out(b, n, b.add(onnx_op, ins, name=n.name))
    return convert


def _logical(onnx_op):
    def convert(b, n):
        _cast_out(b, n, b.add(onnx_op, [_as_bool(b, n, x) for x in n.ins], name=n.name))
    return convert


for _onnx_op, (_name, _bname, _sname) in _COMPARE.items():
    register(_name)(_compare(_onnx_op, False))
    register(_bname)(_compare(_onnx_op, False))
    register(_sname)(_compare(_onnx_op, True))
for _onnx_op, _names in _LOGICAL.items():
    for _name in _names:
        register(_name)(_logical(_onnx_op))


@register("_not_equal_scalar")
@register("broadcast_not_equal")
@register("_not_equal")
def convert_not_equal(b, n):
    ins = [n.ins[0], scalar(b, n, n.p.scalar)] if n.op == "_not_equal_scalar" else n.ins
    _cast_out(b, n, b.add("Not", [b.add("Equal", ins, name=n.name)], name=n.name))


@register("logical_not")
def convert_logical_not(b, n):
    _cast_out(b, n, b.add("Not", [_as_bool(b, n, n.ins[0])], name=n.name))


@register("broadcast_mod")
def convert_mod(b, n):
    if np.dtype(n.in_dtypes[0]).kind != "f":
        b.add("Mod", n.ins, n.outs, name=n.name, fmod=0)
        return
    # MXNet's remainder takes the divisor's sign (Python's %); ONNX's float Mod is C's
    # fmod (the dividend's): add the divisor where the signs differ.
    a, c = n.ins
    r = b.add("Mod", [a, c], name=n.name, fmod=1)
    zero = scalar(b, n, 0.0)
    differ = b.add("Xor", [b.add("Less", [r, zero], name=n.name),
                           b.add("Less", [c, zero], name=n.name)], name=n.name)
    nonzero = b.add("Not", [b.add("Equal", [r, zero], name=n.name)], name=n.name)
    fix = b.add("And", [differ, nonzero], name=n.name)
    b.add("Where", [fix, b.add("Add", [r, c], name=n.name), r], n.outs, name=n.name)


_UNARY_MORE = {"sinh": "Sinh", "cosh": "Cosh", "arcsinh": "Asinh", "arccosh": "Acosh",
               "arctanh": "Atanh"}
for _name, _onnx_op in _UNARY_MORE.items():
    register(_name)(lambda b, n, _op=_onnx_op: b.add(_op, n.ins, n.outs, name=n.name))


@register("log2")
@register("log10")
def convert_log_base(b, n):
    base = 2.0 if n.op == "log2" else 10.0
    b.add("Div", [b.add("Log", n.ins, name=n.name), scalar(b, n, math.log(base))], n.outs,
          name=n.name)


@register("log1p")
def convert_log1p(b, n):
    b.add("Log", [b.add("Add", [n.ins[0], scalar(b, n, 1.0)], name=n.name)], n.outs,
          name=n.name)


@register("expm1")
def convert_expm1(b, n):
    b.add("Sub", [b.add("Exp", n.ins, name=n.name), scalar(b, n, 1.0)], n.outs, name=n.name)


@register("rsqrt")
def convert_rsqrt(b, n):
    b.add("Reciprocal", [b.add("Sqrt", n.ins, name=n.name)], n.outs, name=n.name)


# -- creation ---------------------------------------------------------------------------
def _filled(b, n, value):
    shape = n.out_shapes[0]
    b.add("Identity", [b.const(np.full(shape, value, n.out_dtypes[0]), n.name + "_value")],
          n.outs, name=n.name)


register("_zeros")(lambda b, n: _filled(b, n, 0))
register("_ones")(lambda b, n: _filled(b, n, 1))
register("_full")(lambda b, n: _filled(b, n, n.p.value))


@register("_arange")
def convert_arange(b, n):
    p = n.p
    if p.infer_range:
        unsupported(n, "infer_range=True")
    stop = p.stop
    if stop is None:
        stop, start = p.start, 0.0
    else:
        start = p.start
    values = np.repeat(np.arange(start, stop, p.step), p.repeat).astype(n.out_dtypes[0])
    b.add("Identity", [b.const(values, n.name + "_value")], n.outs, name=n.name)


@register("zeros_like")
@register("ones_like")
def convert_like(b, n):
    from onnx import helper
    value = helper.make_tensor("value", _onnx_dtype(n.out_dtypes[0]), [1],
                               [0 if n.op == "zeros_like" else 1])
    b.add("ConstantOfShape", [b.add("Shape", n.ins, name=n.name)], n.outs, name=n.name,
          value=value)


@register("shape_array")
def convert_shape_array(b, n):
    b.add("Shape", n.ins, n.outs, name=n.name)


@register("size_array")
def convert_size_array(b, n):
    b.add("Reshape", [b.add("Size", n.ins, name=n.name), b.int64s([1], n.name + "_shape")],
          n.outs, name=n.name)


# -- broadcasting and repetition -----------------------------------------------------------
def _expand_to_out(b, n):
    b.add("Expand", [n.ins[0], b.int64s(n.out_shapes[0], n.name + "_shape")], n.outs,
          name=n.name)


register("broadcast_to")(_expand_to_out)
register("broadcast_axis")(_expand_to_out)


@register("broadcast_like")
def convert_broadcast_like(b, n):
    if n.p.lhs_axes is None and n.p.rhs_axes is None:
        b.add("Expand", [n.ins[0], b.add("Shape", [n.ins[1]], name=n.name)], n.outs,
              name=n.name)
    else:
        _expand_to_out(b, n)


@register("reshape_like")
def convert_reshape_like(b, n):
    p = n.p
    if (p.lhs_begin, p.lhs_end, p.rhs_begin, p.rhs_end) == (None,) * 4:
        shape = b.add("Shape", [n.ins[1]], name=n.name)
    else:
        shape = b.int64s(n.out_shapes[0], n.name + "_shape")
    b.add("Reshape", [n.ins[0], shape], n.outs, name=n.name)


@register("stack")
def convert_stack(b, n):
    axis = n.p.axis % (len(n.in_shapes[0]) + 1)
    axes = b.int64s([axis], n.name + "_axes")
    parts = [b.add("Unsqueeze", [x, axes], name=n.name) for x in n.ins]
    b.add("Concat", parts, n.outs, name=n.name, axis=axis)


@register("tile")
def convert_tile(b, n):
    reps = list(n.p.reps)
    x, ndim = n.ins[0], len(n.in_shapes[0])
    if len(reps) > ndim:        # MXNet prepends unit axes to the data
        x = b.add("Reshape", [x, b.int64s([1] * (len(reps) - ndim) + list(n.in_shapes[0]),
                                           n.name + "_shape")], name=n.name)
    reps = [1] * (ndim - len(reps)) + reps
    b.add("Tile", [x, b.int64s(reps, n.name + "_reps")], n.outs, name=n.name)


@register("repeat")
def convert_repeat(b, n):
    p, shape = n.p, n.in_shapes[0]
    x = n.ins[0]
    if p.axis is None:
        x, shape = b.add("Reshape", [x, b.int64s([-1], n.name + "_flat")], name=n.name), (
            int(np.prod(shape)),)
        axis = 0
    else:
        axis = p.axis % len(shape)
    # Each element once more along a new axis after ``axis``, then merged into it.
    x = b.add("Unsqueeze", [x, b.int64s([axis + 1], n.name + "_axes")], name=n.name)
    expanded = list(shape[:axis + 1]) + [p.repeats] + list(shape[axis + 1:])
    x = b.add("Expand", [x, b.int64s(expanded, n.name + "_expand")], name=n.name)
    b.add("Reshape", [x, b.int64s(n.out_shapes[0], n.name + "_shape")], n.outs, name=n.name)


@register("reverse")
def convert_reverse(b, n):
    axes = n.p.axis if isinstance(n.p.axis, tuple) else (n.p.axis,)
    k = len(axes)
    imax, imin = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    b.add("Slice", [n.ins[0], b.int64s([imax] * k, n.name + "_starts"),
                    b.int64s([imin] * k, n.name + "_ends"), b.int64s(axes, n.name + "_axes"),
                    b.int64s([-1] * k, n.name + "_steps")], n.outs, name=n.name)


# -- indexing -------------------------------------------------------------------------------
def _int64(b, n, x):
    return b.add("Cast", [x], name=n.name, to=b.onnx.TensorProto.INT64)


@register("take")
def convert_take(b, n):
    p = n.p
    axis = p.axis % len(n.in_shapes[0])
    size = n.in_shapes[0][axis]
    idx = _int64(b, n, n.ins[1])
    if p.mode == "clip":
        idx = b.add("Clip", [idx, b.const(np.int64(0), n.name + "_lo"),
                             b.const(np.int64(size - 1), n.name + "_hi")], name=n.name)
    elif p.mode == "wrap":
        idx = b.add("Mod", [idx, b.const(np.int64(size), n.name + "_size")], name=n.name)
    b.add("Gather", [n.ins[0], idx], n.outs, name=n.name, axis=axis)


@register("gather_nd")
def convert_gather_nd(b, n):
    # MXNet indexes with the first axis of ``indices``, ONNX with the last.
    k = len(n.in_shapes[1])
    idx = b.add("Transpose", [_int64(b, n, n.ins[1])], name=n.name,
                perm=list(range(1, k)) + [0])
    b.add("GatherND", [n.ins[0], idx], n.outs, name=n.name)


@register("one_hot")
def convert_one_hot(b, n):
    p = n.p
    values = b.const(np.array([p.off_value, p.on_value], n.out_dtypes[0]), n.name + "_values")
    b.add("OneHot", [_int64(b, n, n.ins[0]), b.const(np.int64(p.depth), n.name + "_depth"),
                     values], n.outs, name=n.name, axis=-1)


def _topk(b, n, k, axis, largest, outputs):
    return b.add("TopK", [n.ins[0], b.int64s([k], n.name + "_k")], outputs, name=n.name,
                 axis=axis, largest=int(largest), sorted=1)


@register("topk")
def convert_topk(b, n):
    p = n.p
    axis = -1 if p.axis is None else p.axis
    if p.axis is None:
        unsupported(n, "axis=None")
    k = p.k if p.k > 0 else n.in_shapes[0][axis]
    if p.ret_typ == "mask":
        unsupported(n, "ret_typ=mask")
    values, idx = _topk(b, n, k, axis, not p.is_ascend, 2)
    if p.ret_typ == "value":
        b.add("Identity", [values], n.outs, name=n.name)
    elif p.ret_typ == "indices":
        _cast_out(b, n, idx)
    else:
        b.add("Identity", [values], n.outs[:1], name=n.name)
        _cast_out(b, n, idx, 1)


@register("sort")
@register("argsort")
def convert_sort(b, n):
    p = n.p
    if p.axis is None:
        unsupported(n, "axis=None")
    size = n.in_shapes[0][p.axis]
    values, idx = _topk(b, n, size, p.axis, not p.is_ascend, 2)
    if n.op == "sort":
        b.add("Identity", [values], n.outs, name=n.name)
    else:
        _cast_out(b, n, idx)


@register("depth_to_space")
def convert_depth_to_space(b, n):
    b.add("DepthToSpace", n.ins, n.outs, name=n.name, blocksize=n.p.block_size, mode="DCR")


@register("space_to_depth")
def convert_space_to_depth(b, n):
    b.add("SpaceToDepth", n.ins, n.outs, name=n.name, blocksize=n.p.block_size)


@register("norm")
def convert_norm(b, n):
    p = n.p
    ndim = len(n.in_shapes[0])
    if p.ord not in (1, 2):
        unsupported(n, "ord=%s" % p.ord)
    axes = list(range(ndim)) if p.axis is None else [
        a % ndim for a in (p.axis if isinstance(p.axis, tuple) else (p.axis,))]
    y = b.add("ReduceL%d" % p.ord, n.ins, name=n.name, axes=axes, keepdims=int(p.keepdims))
    shape = b.int64s(n.out_shapes[0], n.name + "_shape")
    b.add("Reshape", [y, shape], n.outs, name=n.name)


@register("_contrib_AdaptiveAvgPooling2D")
def convert_adaptive_avg_pool(b, n):
    out_hw = n.out_shapes[0][2:]
    in_hw = n.in_shapes[0][2:]
    if tuple(out_hw) == (1, 1):
        b.add("GlobalAveragePool", n.ins, n.outs, name=n.name)
        return
    if any(i % o for i, o in zip(in_hw, out_hw)):
        unsupported(n, "output_size %s that does not divide the input %s" % (out_hw, in_hw))
    kernel = [i // o for i, o in zip(in_hw, out_hw)]
    b.add("AveragePool", n.ins, n.outs, name=n.name, kernel_shape=kernel, strides=kernel)


@register("_contrib_BilinearResize2D")
def convert_bilinear_resize(b, n):
    p = n.p
    if p.mode != "size" or len(n.ins) > 1:
        unsupported(n, "mode=%s" % p.mode)
    sizes = b.int64s(n.out_shapes[0], n.name + "_sizes")
    b.add("Resize", [n.ins[0], "", "", sizes], n.outs, name=n.name, mode="linear",
          coordinate_transformation_mode="align_corners" if p.align_corners
          else "pytorch_half_pixel")


@register("_linalg_gemm2")
def convert_linalg_gemm2(b, n):
    p = n.p
    if p.axis != -2:
        unsupported(n, "axis=%d" % p.axis)
    ins = batch_transposed(b, n)
    if p.alpha == 1.0:
        b.add("MatMul", ins, n.outs, name=n.name)
    else:
        b.add("Mul", [b.add("MatMul", ins, name=n.name), scalar(b, n, p.alpha)], n.outs,
              name=n.name)


@register("_contrib_div_sqrt_dim")
def convert_div_sqrt_dim(b, n):
    b.add("Div", [n.ins[0], scalar(b, n, math.sqrt(n.in_shapes[0][-1]))], n.outs, name=n.name)


@register("_split_v2")
@register("split_v2")
def convert_split_v2(b, n):
    p = n.p
    axis = p.axis % len(n.in_shapes[0])
    sizes = [1 if p.squeeze_axis else s[axis] for s in n.out_shapes]
    split(b, n, axis, sizes, p.squeeze_axis)


def _static_slice(b, n, begin, end):
    """``n.ins[0][begin:end]`` on every axis, bounds known from the static shapes."""
    k = len(begin)
    b.add("Slice", [n.ins[0], b.int64s(begin, n.name + "_starts"),
                    b.int64s(end, n.name + "_ends"), b.int64s(list(range(k)), n.name + "_axes")],
          n.outs, name=n.name)


@register("slice_like")
def convert_slice_like(b, n):
    _static_slice(b, n, [0] * len(n.out_shapes[0]), list(n.out_shapes[0]))


@register("Crop")
def convert_crop(b, n):
    shape, out = n.in_shapes[0], n.out_shapes[0]
    if n.p.center_crop:
        top, left = (shape[2] - out[2]) // 2, (shape[3] - out[3]) // 2
    else:
        top, left = n.p.offset
    _static_slice(b, n, [0, 0, top, left], [shape[0], shape[1], top + out[2], left + out[3]])


@register("_contrib_arange_like")
def convert_arange_like(b, n):
    p = n.p
    count = int(np.prod(n.out_shapes[0]))
    values = (p.start + p.step * (np.arange(count) // p.repeat)).astype(n.out_dtypes[0])
    b.add("Identity", [b.const(values.reshape(n.out_shapes[0]), n.name + "_value")], n.outs,
          name=n.name)
