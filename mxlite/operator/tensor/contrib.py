"""``mx.nd.contrib`` tensor ops: boolean_mask, arange_like, index_copy, div_sqrt_dim."""
import math

import numpy as np

from ... import nd
from ...base import MXNetError, parse_int, parse_float, optional
from ..registry import register_op, Param, array_module_of, ranks
from ..util import const_like, norm_axis, raw_data


def _mask_positions(xp, index, n):
    if index.ndim != 1 or index.shape[0] != n:
        raise MXNetError("index must be 1-D with %d entries (data's size along axis), got "
                         "shape %s" % (n, index.shape))
    return xp.nonzero(index)[0]


def _boolean_mask(p, xp, x, index):
    axis = norm_axis(p.axis, x.ndim)
    return xp.take(x, _mask_positions(xp, index, x.shape[axis]), axis=axis)


def _boolean_mask_grad(p, x, y, gy, need):
    data, index = x
    axis = norm_axis(p.axis, data.ndim)
    index = raw_data(index)
    pos = const_like(data, array_module_of(index).nonzero(index)[0].astype(np.int64))
    return [nd._internal._backward_take(gy[0], pos, axis=axis, mode="clip", shape=data.shape),
            None]


register_op("_contrib_boolean_mask", _boolean_mask, inputs=("data", "index"),
            check=ranks(data=1, index=(1, 1)),
            gradient=_boolean_mask_grad, saves="x", shape_from_data=True,
            params=[Param("axis", parse_int, 0, "The axis to select along.")],
            doc="The slices of ``data`` along ``axis`` where ``index`` is non-zero (the output "
                "shape depends on the values of ``index``).")


def _arange_like(p, xp, x):
    n = x.size if p.axis is None else x.shape[norm_axis(p.axis, x.ndim)]
    y = p.start + p.step * (xp.arange(n, dtype=np.float64) // p.repeat)
    return y.reshape(x.shape if p.axis is None else (n,)).astype(x.dtype)


register_op("_contrib_arange_like", _arange_like,
            params=[Param("start", parse_float, 0.0, "The first value."),
                    Param("step", parse_float, 1.0, "The spacing."),
                    Param("repeat", parse_int, 1, "Times each value repeats.", low=1),
                    Param("ctx", optional(str), None, "Ignored: the input's context is used."),
                    Param("axis", optional(parse_int), None,
                          "Count along this axis (output 1-D); the whole shape if None.")],
            doc="``start + step * (i // repeat)`` with the shape of ``data`` (or the length of "
                "its ``axis``).")


def _index_rows(xp, idx, n):
    i = idx.astype(np.int64)
    if i.ndim != 1:
        raise MXNetError("index_vector must be 1-D, got shape %s" % (idx.shape,))
    if i.size and (int(i.min()) < 0 or int(i.max()) >= n):
        raise MXNetError("index_vector has values outside [0, %d)" % n)
    return i


def _index_copy(p, xp, old, idx, new):
    i = _index_rows(xp, idx, old.shape[0])
    if new.shape != (i.shape[0],) + old.shape[1:]:
        raise MXNetError("new_tensor has shape %s, expected %s"
                         % (new.shape, (i.shape[0],) + old.shape[1:]))
    y = old.copy()
    y[i] = new
    return y


def _index_copy_grad(p, x, y, gy, need):
    g = nd.contrib.backward_index_copy(gy[0], *x)
    return [g[0], None, g[2]]


def _backward_index_copy(p, xp, gy, old, idx, new):
    """(``gy`` with rows ``idx`` zeroed, zeros for the index, ``gy[idx]``)."""
    i = _index_rows(xp, idx, old.shape[0])
    if gy.shape != old.shape:
        raise MXNetError("ograd has shape %s, expected the shape of old_tensor %s"
                         % (gy.shape, old.shape))
    g_old = gy.copy()
    g_old[i] = 0
    return g_old, xp.zeros_like(idx), gy[i]


def _backward_index_copy_grad(p, x, y, gy, need):
    # linear in ograd: gy_old where a row was kept, gy_new where it was copied
    # NOTE: with a repeated index the last gy_new row wins, as index_copy's forward.
    g_old = gy[0] if gy[0] is not None else nd.zeros_like(x[0])
    g_new = gy[2] if gy[2] is not None else nd.zeros_like(x[3])
    return [nd.contrib.index_copy(g_old, x[2], g_new), None, None, None]


register_op("_contrib_index_copy", _index_copy, inputs=("old_tensor", "index_vector",
                                                        "new_tensor"),
            check=ranks(old_tensor=1, index_vector=(1, 1), new_tensor=1),
            gradient=_index_copy_grad, saves="x",
            doc="A copy of ``old_tensor`` with rows ``index_vector`` replaced by ``new_tensor``.")
register_op("_contrib_backward_index_copy", _backward_index_copy,
            inputs=("ograd", "old_tensor", "index_vector", "new_tensor"), num_outputs=3,
            check=ranks(ograd=1, old_tensor=1, index_vector=(1, 1), new_tensor=1),
            output_names=("old_tensor_grad", "index_vector_grad", "new_tensor_grad"),
            gradient=_backward_index_copy_grad, saves="x",
            doc="The backward of index_copy, as MXNet's: the gradients of old_tensor (ograd "
                "with the copied rows zeroed), index_vector (zeros) and new_tensor "
                "(the copied rows of ograd).")


def _div_sqrt_dim(p, xp, x):
    return (x / math.sqrt(x.shape[-1])).astype(x.dtype, copy=False)


register_op("_contrib_div_sqrt_dim", _div_sqrt_dim, check=ranks(data=1), saves="x",
            gradient=lambda p, x, y, gy, need: [gy[0] / math.sqrt(x[0].shape[-1])],
            doc="``data / sqrt(data.shape[-1])`` (attention scaling).")
