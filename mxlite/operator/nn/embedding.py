"""Embedding: rows of ``weight`` looked up by (float) indices.

Indices are clipped to ``[0, input_dim - 1]`` as in MXNet. The weight gradient is
the registered op ``_embedding_backward``, which adds up rows for repeated
indices; its own gradient is an Embedding lookup, so it differentiates again.
"""
from ... import nd
from ...base import MXNetError, parse_int, parse_bool, parse_dtype
from ..registry import register_op, Param
from ..util import add_at


def _indices(xp, data, input_dim):
    return xp.clip(data.astype("int64"), 0, input_dim - 1)


def _compute(p, xp, data, weight):
    want = (p.input_dim, p.output_dim)
    if tuple(weight.shape) != want:
        raise MXNetError("Embedding: weight has shape %s, expected %s (input_dim, output_dim)"
                         % (tuple(weight.shape), want))
    return weight[_indices(xp, data, p.input_dim)]


def _gradient(p, x, y, gy, need):
    data = x[0]
    gw = nd._internal._embedding_backward(data, gy[0], input_dim=p.input_dim)
    return [nd.zeros_like(data), gw]


def _infer_shape(p, shapes):
    shapes = list(shapes)
    want = (p.input_dim, p.output_dim)
    w = shapes[1]
    if w is None or len(w) == 0 or 0 in w:
        shapes[1] = want
    elif tuple(w) != want:
        raise MXNetError("Embedding: weight has shape %s, expected %s (input_dim, output_dim)"
                         % (tuple(w), want))
    return shapes


register_op("Embedding", _compute, gradient=_gradient, saves="x",
            inputs=("data", "weight"), infer_shape=_infer_shape,
            infer_type=lambda p, dtypes: dtypes[1] if len(dtypes) > 1 else p.dtype,
            params=[Param("input_dim", parse_int, doc="Vocabulary size (rows of weight).", low=1),
                    Param("output_dim", parse_int, doc="Embedding size (columns of weight).",
                          low=1),
                    Param("dtype", parse_dtype, "float32", "The weight's dtype."),
                    Param("sparse_grad", parse_bool, False,
                          "Ignored: mxlite stores gradients dense.")],
            doc="Look up rows of ``weight`` (``(input_dim, output_dim)``) at the indices in "
                "``data``; the output has shape ``data.shape + (output_dim,)``.")


def _backward_rule(p, data, g):
    if g.shape[:-1] != data.shape or g.ndim != data.ndim + 1:
        raise MXNetError("grad has shape %s, expected %s + (output_dim,) (the output's for "
                         "data of shape %s)" % (g.shape, data.shape, data.shape))


def _backward(p, xp, data, g):
    idx = _indices(xp, data, p.input_dim).reshape(-1)
    rows = g.reshape(idx.shape[0], -1)
    gw = xp.zeros((p.input_dim, rows.shape[1]), dtype=g.dtype)
    # NOTE: add.at (not fancy +=) so that repeated indices accumulate.
    add_at(xp, gw, idx, rows)
    return gw


def _backward_grad(p, x, y, gy, need):
    data = x[0]
    return [nd.zeros_like(data), nd.Embedding(data, gy[0], input_dim=p.input_dim,
                                              output_dim=gy[0].shape[1])]


register_op("_embedding_backward", _backward, gradient=_backward_grad, saves="x",
            inputs=("data", "grad"), params=[Param("input_dim", parse_int, low=1)],
            check=_backward_rule,
            doc="Weight gradient of Embedding: rows of ``grad`` summed per index.")
