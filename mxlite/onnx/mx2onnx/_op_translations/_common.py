"""Helpers the translations share."""
import numpy as np

from ....base import MXNetError

__all__ = ["unsupported", "spatial", "channel_shaped", "scalar"]


def unsupported(n, what):
    """Raise: node ``n`` uses a feature that has no ONNX export."""
    raise MXNetError("mx.onnx.export_model: %s (node %r) with %s has no ONNX export"
                     % (n.op, n.name, what))


def spatial(values, k, default):
    """A per-spatial-axis attribute as a list of ``k`` ints (MXNet's ``()`` means the
    default on every axis)."""
    return [int(v) for v in values] if values else [default] * k


def channel_shaped(b, n, x, axis, ndim):
    """``x`` (shape ``(C,)``) reshaped to broadcast along ``axis`` of an ``ndim``-d
    tensor."""
    trailing = ndim - 1 - axis
    if trailing == 0:
        return x
    return b.add("Reshape", [x, b.int64s([-1] + [1] * trailing, n.name + "_bshape")],
                 name=n.name)


def scalar(b, n, value, dtype=None):
    """A 0-d constant in the dtype of ``n``'s first input (float32 if unknown)."""
    dtype = dtype or (n.in_dtypes[0] if n.in_dtypes and n.in_dtypes[0] is not None
                      else np.float32)
    return b.const(np.asarray(value, dtype=dtype), n.name + "_scalar")
