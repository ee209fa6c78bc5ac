"""Ordering ops: topk, sort, argsort.

``sort`` and ``topk`` keep the sorting indices as a hidden output, so that their
gradient is a scatter of ``gy`` back to where each value came from
(``_backward_take_along_axis``, whose own gradient is the gather again).
Indices are returned as floats (``dtype`` float32 by default), as in MXNet.
"""
import numpy as np

from ...base import MXNetError, parse_int, parse_bool, parse_dtype, optional
from ..registry import register_op, Param, Params, apply
from ..util import norm_axis

_RET_TYPES = ("value", "indices", "both", "mask")


def _axis_view(x, axis):
    """``x`` (flattened when ``axis`` is None) and the axis to order along."""
    if axis is None:
        return x.reshape(-1), 0
    return x, norm_axis(axis, x.ndim)


def _argsort(xp, x, axis, ascend):
    # NOTE: a stable sort of the negated keys keeps ties in index order when
    # descending, as MXNet does; unsigned and bool keys are widened before negating.
    if ascend:
        return xp.argsort(x, axis=axis, kind="stable")
    if x.dtype.kind in "ub":
        x = x.astype(np.int64)
    return xp.argsort(-x, axis=axis, kind="stable")


# -- gather/scatter along an axis (the gradient pair) ------------------------------------

def _take_along(p, xp, x, idx):
    axis = norm_axis(p.axis, x.ndim)
    if idx.ndim != x.ndim:
        raise MXNetError("indices has %d dims, expected %d (the data's)" % (idx.ndim, x.ndim))
    i = idx.astype(np.int64)
    n = x.shape[axis]
    if i.size and not bool(((i >= -n) & (i < n)).all()):
        raise MXNetError("indices expected values in [%d, %d) along axis %d, got %s"
                         % (-n, n, axis, idx.min() if i.min() < -n else idx.max()))
    return xp.take_along_axis(x, i, axis=axis)


def _put_along(p, xp, gy, idx):
    """Zeros of ``p.shape`` with ``gy`` added at ``idx`` along ``p.axis``: a repeated
    index sums its gradients (a plain put would keep only the last)."""
    shape = tuple(p.shape)
    axis = norm_axis(p.axis, len(shape))
    i = idx.astype(np.int64)
    i = xp.where(i < 0, i + shape[axis], i)
    index = [xp.arange(n).reshape([-1 if k == d else 1 for k in range(i.ndim)])
             for d, n in enumerate(i.shape)]
    index[axis] = i
    flat = xp.ravel_multi_index(tuple(xp.broadcast_arrays(*index)), shape)
    size = int(np.prod(shape))
    gx = xp.bincount(flat.reshape(-1), weights=gy.reshape(-1).astype(np.float64),
                     minlength=size)
    return gx.reshape(shape).astype(gy.dtype, copy=False)


_TAKE_ALONG = register_op(
    "_take_along_axis", _take_along, inputs=("data", "indices"), saves="x",
    gradient=lambda p, x, y, gy, need: [_scatter(gy[0], x[1], p.axis, x[0].shape), None],
    params=[Param("axis", parse_int, doc="The axis.")],
    doc="``numpy.take_along_axis``: the gradient of ``_backward_take_along_axis``.")
_PUT_ALONG = register_op(
    "_backward_take_along_axis", _put_along, inputs=("ograd", "indices"), saves="x",
    gradient=lambda p, x, y, gy, need: [_gather(gy[0], x[1], p.axis), None],
    params=[Param("axis", parse_int, doc="The axis."),
            Param("shape", optional(lambda v: tuple(int(d) for d in v)), doc="Output shape.")],
    doc="Zeros of ``shape`` with ``ograd`` added at ``indices`` along ``axis`` (repeated "
        "indices sum).")


def _gather(x, idx, axis):
    return apply(_TAKE_ALONG, (x, idx), Params(_TAKE_ALONG, {"axis": axis}))


def _scatter(gy, idx, axis, shape):
    return apply(_PUT_ALONG, (gy, idx), Params(_PUT_ALONG, {"axis": axis, "shape": shape}))


def _ordered_grad(p, x, y, gy, need):
    """Gradient of sort/topk values: scatter ``gy`` to the indices (output 1)."""
    x0 = x[0]
    flat = p.axis is None
    axis = 0 if flat else norm_axis(p.axis, x0.ndim)
    shape = (x0.size,) if flat else x0.shape
    g = _scatter(gy[0], y[1], axis, shape)
    return [g.reshape(x0.shape) if flat else g]


# -- topk --------------------------------------------------------------------------

def _topk(p, xp, x):
    v, axis = _axis_view(x, p.axis)
    n = v.shape[axis]
    k = n if p.k < 1 else p.k
    if k > n:
        raise MXNetError("k=%d exceeds the size %d of the axis" % (p.k, n))
    idx = xp.take(_argsort(xp, v, axis, p.is_ascend), xp.arange(k), axis=axis)
    if p.ret_typ == "mask":
        mask = xp.zeros(v.shape, x.dtype)
        xp.put_along_axis(mask, idx, 1, axis=axis)
        return mask.reshape(x.shape)
    if p.ret_typ == "indices":
        return idx.astype(p.dtype)
    # 'value' keeps exact int64 indices as its hidden output for the gradient.
    return xp.take_along_axis(v, idx, axis=axis), idx.astype(p.dtype) if p.ret_typ == "both" \
        else idx


def _topk_grad(p, x, y, gy, need):
    if p.ret_typ in ("indices", "mask"):
        return [None]
    return _ordered_grad(p, x, y, gy, need)


def _topk_type(p, dtypes):
    return {"value": [dtypes[0], np.dtype(np.int64)], "both": [dtypes[0], p.dtype],
            "indices": [p.dtype], "mask": [dtypes[0]]}[p.ret_typ]


register_op("topk", _topk, gradient=_topk_grad, saves="xy", infer_type=_topk_type,
            num_outputs=lambda p: 2 if p.ret_typ in ("value", "both") else 1,
            num_visible_outputs=lambda p: 2 if p.ret_typ == "both" else 1,
            params=[Param("axis", optional(parse_int), -1, "The axis; the flattened array if "
                          "None."),
                    Param("k", parse_int, 1, "How many elements; all when k < 1."),
                    Param("ret_typ", None, "indices", choices=_RET_TYPES, doc="'value', 'indices', 'both' "
                          "(values and indices) or 'mask'."),
                    Param("is_ascend", parse_bool, False, "Take the smallest instead."),
                    Param("dtype", parse_dtype, np.dtype(np.float32), "The indices' dtype.")],
            doc="The ``k`` largest (or smallest) elements along ``axis``.\n\n"
                ">>> mx.nd.topk(mx.nd.array([1, 3, 2]), k=2)  # [1. 2.]")


# -- sort, argsort -----------------------------------------------------------------

def _sort(p, xp, x):
    v, axis = _axis_view(x, p.axis)
    idx = _argsort(xp, v, axis, p.is_ascend)
    return xp.take_along_axis(v, idx, axis=axis), idx      # hidden int64 indices


_ORDER_PARAMS = [Param("axis", optional(parse_int), -1, "The axis; the flattened array if None."),
                 Param("is_ascend", parse_bool, True, "Ascending (True) or descending order.")]
register_op("sort", _sort, gradient=_ordered_grad, saves="xy", num_outputs=2,
            infer_type=lambda p, dtypes: [dtypes[0], np.dtype(np.int64)],
            num_visible_outputs=1, params=_ORDER_PARAMS,
            doc="The elements sorted along ``axis``.")


def _argsort_op(p, xp, x):
    v, axis = _axis_view(x, p.axis)
    return _argsort(xp, v, axis, p.is_ascend).astype(p.dtype)


register_op("argsort", _argsort_op, aliases=("_npi_argsort",),
            params=_ORDER_PARAMS + [Param("dtype", parse_dtype, np.dtype(np.float32),
                                          "The indices' dtype.")],
            infer_type=lambda p, dtypes: p.dtype,
            doc="The indices that sort ``data`` along ``axis``.")
