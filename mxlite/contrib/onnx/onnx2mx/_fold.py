"""Constant folding: ONNX nodes whose inputs are all constants are evaluated with NumPy
at import, so weights an exporter reshapes, transposes or slices in the graph (MXNet's
flat RNN vector, a PReLU slope) reach the translations as constants."""
import numpy as np

__all__ = ["FOLD", "foldable"]


def _axes(attrs, axes):
    return tuple(int(a) for a in (attrs["axes"] if "axes" in attrs else axes.reshape(-1)))


def _reshape(attrs, x, shape):
    shape = [x.shape[k] if s == 0 and not attrs.get("allowzero", 0) else int(s)
             for k, s in enumerate(shape.reshape(-1))]
    return x.reshape(shape)


def _slice(attrs, x, starts, ends, axes=None, steps=None):
    index = [slice(None)] * x.ndim
    axes = range(len(starts)) if axes is None else axes.reshape(-1)
    steps = [1] * len(starts) if steps is None else steps.reshape(-1)
    for a, b, e, s in zip(axes, starts.reshape(-1), ends.reshape(-1), steps):
        index[int(a)] = slice(int(b), int(e), int(s))
    return x[tuple(index)]


def _unsqueeze(attrs, x, axes=None):
    axes = _axes(attrs, axes)
    rank = x.ndim + len(axes)
    for a in sorted(a % rank for a in axes):
        x = np.expand_dims(x, a)
    return x


def _squeeze(attrs, x, axes=None):
    if "axes" not in attrs and axes is None:
        return np.squeeze(x)
    return np.squeeze(x, axis=tuple(a % x.ndim for a in _axes(attrs, axes)))


def _cast(attrs, x):
    from onnx import helper
    return x.astype(helper.tensor_dtype_to_np_dtype(attrs["to"]))


FOLD = {
    "Identity": lambda attrs, x: x,
    "Cast": _cast,
    "Reshape": _reshape,
    "Transpose": lambda attrs, x: np.transpose(x, attrs.get("perm")),
    "Concat": lambda attrs, *xs: np.concatenate(xs, axis=attrs["axis"]),
    "Slice": _slice,
    "Gather": lambda attrs, x, idx: np.take(x, idx.astype(np.int64), axis=attrs.get("axis", 0)),
    "Unsqueeze": _unsqueeze,
    "Squeeze": _squeeze,
}


def foldable(node, constants):
    """Whether ``node`` can be evaluated now: a folded op whose inputs are all known."""
    return (node.op_type in FOLD and len(node.output) == 1 and node.input
            and all(not i or i in constants for i in node.input))
