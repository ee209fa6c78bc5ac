"""Translations of ONNX shape, slicing and reduction operators (see
``_op_translations`` for the calling convention)."""
import numpy as np

from .... import symbol as S
from ._op_translations import register, _fail, _const, _ints

_INT64_MAX = np.iinfo(np.int64).max
_INT64_MIN = np.iinfo(np.int64).min


def _rank(g, name, op, x):
    shape = g.shape(x)
    if shape is None:
        _fail(op, name, "an input of unknown rank")
    return len(shape)


@register("Flatten")
def convert_flatten(g, name, attrs, inputs):
    axis = attrs.get("axis", 1)
    x = g.sym(inputs[0])
    if axis == 1:
        return S.Flatten(x, name=name)
    if axis == 0:
        return S.reshape(x, shape=(1, -1), name=name)
    shape = g.shape(inputs[0])
    if shape is None or None in shape:
        _fail("Flatten", name, "axis=%d on an input of unknown shape" % axis)
    axis %= len(shape)
    return S.reshape(x, shape=(int(np.prod(shape[:axis])), -1), name=name)


@register("Reshape")
def convert_reshape(g, name, attrs, inputs):
    x, shape = inputs
    if attrs.get("allowzero", 0):
        _fail("Reshape", name, "allowzero=1")
    like = g.shape_source.get(shape)
    if like is not None:        # Reshape(y, Shape(x)): the shape of another tensor
        return S.reshape_like(g.sym(x), g.sym(like), name=name)
    # ONNX reads 0 (copy) and -1 (infer) as MXNet does.
    return S.reshape(g.sym(x), shape=_ints(_const(g, name, "Reshape", inputs, 1)), name=name)


@register("Shape")
def convert_shape(g, name, attrs, inputs):
    g.shape_source[g._current_outputs[0]] = inputs[0]
    return S.shape_array(g.sym(inputs[0]), name=name)


@register("Transpose")
def convert_transpose(g, name, attrs, inputs):
    perm = attrs.get("perm")
    return S.transpose(g.sym(inputs[0]), axes=tuple(perm) if perm else (), name=name)


@register("Concat")
def convert_concat(g, name, attrs, inputs):
    return S.Concat(*[g.sym(i) for i in inputs], dim=attrs["axis"], num_args=len(inputs),
                    name=name)


def _axes(g, name, op, attrs, inputs, k=1):
    """Axes from the attribute (older opsets) or input ``k`` (newer), or None."""
    if "axes" in attrs:
        return tuple(attrs["axes"])
    v = _const(g, name, op, inputs, k)
    return None if v is None else _ints(v)


@register("Squeeze")
def convert_squeeze(g, name, attrs, inputs):
    axes = _axes(g, name, "Squeeze", attrs, inputs)
    return S.squeeze(g.sym(inputs[0]), axis=axes, name=name)


@register("Unsqueeze")
def convert_unsqueeze(g, name, attrs, inputs):
    axes = _axes(g, name, "Unsqueeze", attrs, inputs)
    rank = len(axes) + _rank(g, name, "Unsqueeze", inputs[0]) if min(axes) < 0 else 0
    y = g.sym(inputs[0])
    axes = sorted(a % rank if a < 0 else a for a in axes)
    for k, a in enumerate(axes):
        y = S.expand_dims(y, axis=a, name=name if k == len(axes) - 1 else None)
    return y


@register("Slice")
def convert_slice(g, name, attrs, inputs):
    if "starts" in attrs:       # opset < 10: attributes
        starts, ends = attrs["starts"], attrs["ends"]
        axes, steps = attrs.get("axes"), None
    else:
        starts = _ints(_const(g, name, "Slice", inputs, 1))
        ends = _ints(_const(g, name, "Slice", inputs, 2))
        axes = _const(g, name, "Slice", inputs, 3)
        steps = _const(g, name, "Slice", inputs, 4)
    axes = list(range(len(starts))) if axes is None else list(_ints(axes))
    steps = [1] * len(starts) if steps is None else list(_ints(steps))
    if any(a < 0 for a in axes):
        rank = _rank(g, name, "Slice", inputs[0])
        axes = [a % rank for a in axes]
    n = max(axes) + 1
    begin, end, step = [None] * n, [None] * n, [None] * n
    for a, b, e, s in zip(axes, starts, ends, steps):
        # ONNX clamps out-of-range bounds; MXNet reads None as the whole axis.
        begin[a] = None if b >= _INT64_MAX // 2 or b <= _INT64_MIN // 2 else b
        end[a] = None if e >= _INT64_MAX // 2 or e <= _INT64_MIN // 2 else e
        step[a] = s
    return S.slice(g.sym(inputs[0]), begin=tuple(begin), end=tuple(end), step=tuple(step),
                   name=name)


@register("Split")
def convert_split(g, name, attrs, inputs):
    axis = attrs.get("axis", 0)
    outs = [o for o in g._current_outputs]
    sizes = attrs.get("split")
    if sizes is None and len(inputs) > 1 and inputs[1]:
        sizes = _ints(_const(g, name, "Split", inputs, 1))
    x = g.sym(inputs[0])
    if sizes is None or len(set(sizes)) == 1:
        y = S.SliceChannel(x, num_outputs=len(outs), axis=axis, name=name)
        return [y[i] for i in range(len(outs))]
    bounds = np.cumsum((0,) + tuple(sizes))
    return [S.slice_axis(x, axis=axis, begin=int(b), end=int(e), name=g.fresh(o))
            for b, e, o in zip(bounds[:-1], bounds[1:], outs)]


@register("Pad")
def convert_pad(g, name, attrs, inputs):
    pads = attrs.get("pads")
    if pads is None:
        pads = _ints(_const(g, name, "Pad", inputs, 1))
    value = attrs.get("value", 0.0)
    if len(inputs) > 2 and inputs[2]:
        value = _const(g, name, "Pad", inputs, 2).item()
    k = len(pads) // 2
    width = tuple(v for pair in zip(pads[:k], pads[k:]) for v in pair)
    return S.Pad(g.sym(inputs[0]), mode=attrs.get("mode", "constant"), pad_width=width,
                 constant_value=value, name=name)


_REDUCE = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min",
           "ReduceProd": "prod"}


@register(*_REDUCE)
def convert_reduce(g, name, attrs, inputs):
    op = g._current_op
    axes = _axes(g, name, op, attrs, inputs)
    x = g.sym(inputs[0])
    if not axes and attrs.get("noop_with_empty_axes", 0):
        return S._internal._copy(x, name=name)
    return getattr(S, _REDUCE[op])(x, axis=axes or None, keepdims=bool(attrs.get("keepdims", 1)),
                                   name=name)


@register("ArgMax", "ArgMin")
def convert_arg_reduce(g, name, attrs, inputs):
    op = g._current_op
    if attrs.get("select_last_index", 0):
        _fail(op, name, "select_last_index=1")
    fn = S.argmax if op == "ArgMax" else S.argmin
    y = fn(g.sym(inputs[0]), axis=attrs.get("axis", 0), keepdims=bool(attrs.get("keepdims", 1)))
    return S.Cast(y, dtype="int64", name=name)      # ONNX gives int64 indices
