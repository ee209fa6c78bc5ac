"""Translations of the sequence operators (opset 13): SequenceMask, SequenceLast,
SequenceReverse, with or without per-sequence lengths. ``axis`` is the time axis (0 or
1); the batch axis is the other of the two.
"""
import numpy as np

from .._export_onnx import MXNetGraph
from ._common import scalar

register = MXNetGraph.register


def _time_positions(b, n):
    """``(positions, lengths)`` shaped to broadcast over ``(time, batch)`` or ``(batch,
    time)`` as the data's first two axes are, with trailing unit axes to its rank."""
    axis, shape = n.p.axis, n.in_shapes[0]
    steps = shape[axis]
    trailing = [1] * (len(shape) - 2)
    pos_shape = ([steps, 1] if axis == 0 else [1, steps]) + trailing
    pos = b.const(np.arange(steps, dtype=n.in_dtypes[1]).reshape(pos_shape), n.name + "_pos")
    len_shape = ([1, -1] if axis == 0 else [-1, 1]) + trailing
    lengths = b.add("Reshape", [n.ins[1], b.int64s(len_shape, n.name + "_lshape")],
                    name=n.name)
    return pos, lengths


@register("SequenceMask")
def convert_sequence_mask(b, n):
    if not n.p.use_sequence_length:
        b.add("Identity", n.ins[:1], n.outs, name=n.name)
        return
    pos, lengths = _time_positions(b, n)
    keep = b.add("Less", [pos, lengths], name=n.name)
    b.add("Where", [keep, n.ins[0], scalar(b, n, n.p.value)], n.outs, name=n.name)


@register("SequenceLast")
def convert_sequence_last(b, n):
    axis = n.p.axis
    if not n.p.use_sequence_length:
        last = b.int64s([n.in_shapes[0][axis] - 1], n.name + "_last")
        b.add("Squeeze", [b.add("Gather", [n.ins[0], last], name=n.name, axis=axis),
                          b.int64s([axis], n.name + "_axes")], n.outs, name=n.name)
        return
    pos, lengths = _time_positions(b, n)
    last = b.add("Sub", [lengths, scalar(b, n, 1, n.in_dtypes[1])], name=n.name)
    pick = b.add("Equal", [pos, last], name=n.name)
    # NOTE: Where, not a product with a 0/1 mask: other steps may hold inf or NaN.
    picked = b.add("Where", [pick, n.ins[0], scalar(b, n, 0)], name=n.name)
    b.add("ReduceSum", [picked, b.int64s([axis], n.name + "_axes")], n.outs, name=n.name,
          keepdims=0)


@register("SequenceReverse")
def convert_sequence_reverse(b, n):
    axis = n.p.axis
    if not n.p.use_sequence_length:
        imax, imin = np.iinfo(np.int64).max, np.iinfo(np.int64).min
        b.add("Slice", [n.ins[0], b.int64s([imax], n.name + "_starts"),
                        b.int64s([imin], n.name + "_ends"), b.int64s([axis], n.name + "_axes"),
                        b.int64s([-1], n.name + "_steps")], n.outs, name=n.name)
        return
    lengths = b.add("Cast", [n.ins[1]], name=n.name, to=b.onnx.TensorProto.INT64)
    b.add("ReverseSequence", [n.ins[0], lengths], n.outs, name=n.name, time_axis=axis,
          batch_axis=1 - axis)
