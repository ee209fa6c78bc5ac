"""Translations of ONNX comparisons, tensor creation, broadcasting, indexing and sorting
(see ``_op_translations`` for the calling convention). ONNX's bool and int64 results come
out of MXNet's ops as floats: a following Cast gives them ONNX's dtype where it matters.
"""
import numpy as np

from .... import symbol as S
from ._op_translations import register, _fail, _const, _ints, _unary, _scalar_of

for _op, _fn in {"Sinh": "sinh", "Cosh": "cosh", "Asinh": "arcsinh", "Acosh": "arccosh",
                 "Atanh": "arctanh", "Not": "logical_not"}.items():
    register(_op)(_unary(_fn))

_COMPARE = {"Equal": "broadcast_equal", "Greater": "broadcast_greater",
            "Less": "broadcast_lesser", "GreaterOrEqual": "broadcast_greater_equal",
            "LessOrEqual": "broadcast_lesser_equal", "And": "broadcast_logical_and",
            "Or": "broadcast_logical_or", "Xor": "broadcast_logical_xor"}


@register(*_COMPARE)
def convert_compare(g, name, attrs, inputs):
    fn = getattr(S, _COMPARE[g._current_op])
    return fn(g.sym(inputs[0]), g.sym(inputs[1]), name=name)


@register("Mod")
def convert_mod(g, name, attrs, inputs):
    # MXNet's mod takes the divisor's sign (Python's %), ONNX's fmod=1 the dividend's.
    if not attrs.get("fmod", 0):
        sb = _scalar_of(g, inputs[1])
        if sb is not None and len(g.shape(inputs[1])) <= len(g.shape(inputs[0]) or ()):
            return S._internal._mod_scalar(g.sym(inputs[0]), scalar=sb, name=name)
        return S.broadcast_mod(g.sym(inputs[0]), g.sym(inputs[1]), name=name)
    a, b = g.sym(inputs[0]), g.sym(inputs[1])
    r = S.broadcast_mod(S.abs(a), S.abs(b))
    return S.broadcast_mul(r, S.sign(a), name=name)


@register("Size")
def convert_size(g, name, attrs, inputs):
    # NOTE: shape (1,), as MXNet's size_array, where ONNX's Size is 0-d.
    return S.size_array(g.sym(inputs[0]), name=name)


@register("ConstantOfShape")
def convert_constant_of_shape(g, name, attrs, inputs):
    from onnx import numpy_helper
    value = numpy_helper.to_array(attrs["value"]).reshape(-1) if "value" in attrs else \
        np.zeros(1, np.float32)
    like = g.shape_source.get(inputs[0])
    if like is not None:        # ConstantOfShape(Shape(x)): x's shape
        y = S.zeros_like(g.sym(like)) if value[0] == 0 else S.ones_like(g.sym(like))
        if value[0] not in (0, 1):
            y = S._internal._mul_scalar(y, scalar=float(value[0]))
        return S.Cast(y, dtype=value.dtype.name, name=name)
    shape = _ints(_const(g, name, "ConstantOfShape", inputs, 0))
    return S._internal._full(shape=shape, value=float(value[0]), dtype=value.dtype.name,
                             name=name)


@register("Range")
def convert_range(g, name, attrs, inputs):
    start, limit, delta = (_const(g, name, "Range", inputs, k) for k in range(3))
    return S._internal._arange(start=float(start), stop=float(limit), step=float(delta),
                               dtype=np.asarray(start).dtype.name, name=name)


@register("Expand")
def convert_expand(g, name, attrs, inputs):
    like = g.shape_source.get(inputs[1])
    if like is not None:
        return S.broadcast_like(g.sym(inputs[0]), g.sym(like), name=name)
    shape = _ints(_const(g, name, "Expand", inputs, 1))
    xshape = g.shape(inputs[0])
    if xshape is None or None in xshape:
        _fail("Expand", name, "an input of unknown shape")
    # ONNX broadcasts both ways (a 1 in ``shape`` keeps the input's dim).
    target = np.broadcast_shapes(tuple(xshape), shape)
    x = g.sym(inputs[0])
    if len(target) > len(xshape):
        x = S.reshape(x, shape=(1,) * (len(target) - len(xshape)) + tuple(xshape))
    return S.broadcast_to(x, shape=target, name=name)


@register("Tile")
def convert_tile(g, name, attrs, inputs):
    return S.tile(g.sym(inputs[0]), reps=_ints(_const(g, name, "Tile", inputs, 1)), name=name)


def _int64(y, name=None):
    return S.Cast(y, dtype="int64", name=name)


@register("TopK")
def convert_topk(g, name, attrs, inputs):
    k = int(_const(g, name, "TopK", inputs, 1).reshape(-1)[0])
    axis = attrs.get("axis", -1)
    ascend = not attrs.get("largest", 1)
    y = S.topk(g.sym(inputs[0]), k=k, axis=axis, ret_typ="both", is_ascend=ascend,
               name=name)
    return [y[0], _int64(y[1], name=g.fresh(name + "_indices"))]


@register("GatherND")
def convert_gather_nd(g, name, attrs, inputs):
    if attrs.get("batch_dims", 0):
        _fail("GatherND", name, "batch_dims=%d" % attrs["batch_dims"])
    rank = g.shape(inputs[1])
    if rank is None:
        _fail("GatherND", name, "indices of unknown rank")
    k = len(rank)
    idx = S.transpose(g.sym(inputs[1]), axes=(k - 1,) + tuple(range(k - 1)))
    return S.gather_nd(g.sym(inputs[0]), idx, name=name)


@register("DepthToSpace")
def convert_depth_to_space(g, name, attrs, inputs):
    if attrs.get("mode", "DCR") != "DCR":
        _fail("DepthToSpace", name, "mode=%s (MXNet's depth_to_space is DCR)" % attrs["mode"])
    return S.depth_to_space(g.sym(inputs[0]), block_size=attrs["blocksize"], name=name)


@register("SpaceToDepth")
def convert_space_to_depth(g, name, attrs, inputs):
    return S.space_to_depth(g.sym(inputs[0]), block_size=attrs["blocksize"], name=name)


@register("OneHot")
def convert_one_hot(g, name, attrs, inputs):
    if attrs.get("axis", -1) != -1:
        _fail("OneHot", name, "axis=%d (MXNet adds the last axis)" % attrs["axis"])
    depth = int(_const(g, name, "OneHot", inputs, 1).reshape(-1)[0])
    off, on = _const(g, name, "OneHot", inputs, 2).reshape(-1)
    return S.one_hot(g.sym(inputs[0]), depth=depth, on_value=float(on), off_value=float(off),
                     dtype=np.asarray(on).dtype.name, name=name)


@register("ReduceL1", "ReduceL2")
def convert_reduce_norm(g, name, attrs, inputs):
    order = 1 if g._current_op == "ReduceL1" else 2
    axes = tuple(attrs["axes"]) if "axes" in attrs else None
    if axes is None and len(inputs) > 1 and inputs[1]:
        axes = _ints(_const(g, name, g._current_op, inputs, 1))
    return S.norm(g.sym(inputs[0]), ord=order, axis=axes,
                  keepdims=bool(attrs.get("keepdims", 1)), name=name)


@register("ReverseSequence")
def convert_reverse_sequence(g, name, attrs, inputs):
    time_axis, batch_axis = attrs.get("time_axis", 0), attrs.get("batch_axis", 1)
    if (time_axis, batch_axis) not in ((0, 1), (1, 0)):
        _fail("ReverseSequence", name, "time_axis=%d batch_axis=%d" % (time_axis, batch_axis))
    return S.SequenceReverse(g.sym(inputs[0]), g.sym(inputs[1]), use_sequence_length=True,
                             axis=time_axis, name=name)
