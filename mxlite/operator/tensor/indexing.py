"""Indexing: ``x[key]`` and ``x[key] = v`` as recordable ops, and take, pick,
one_hot, where, gather_nd, scatter_nd, slice, slice_axis, slice_like.

Each gather has a scatter-add adjoint registered as its own op (``_backward_take``,
``_backward_pick``, ``_backward_gather_nd``), whose gradient is the gather again,
so gradients of any order work.
"""
import math
import numpy as np

from ... import nd
from ...base import (MXNetError, parse_int, parse_float, parse_bool, parse_shape,
                     parse_opt_shape, parse_dtype, optional)
from ..registry import register_op, Param, Params, apply, ranks
from ..util import add_at, unbroadcast, norm_axis, zeros_grad, fits_memory


def _is_advanced(key):
    if isinstance(key, tuple):
        return any(isinstance(k, np.ndarray) or (hasattr(k, "__cuda_array_interface__")) for k in key)
    return isinstance(key, np.ndarray) or hasattr(key, "__cuda_array_interface__")


def _dev_key(xp, key):
    if xp is np:
        return key
    if isinstance(key, tuple):
        return tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)
    return xp.asarray(key) if isinstance(key, np.ndarray) else key


def _getitem(p, xp, x):
    y = x[_dev_key(xp, p.key)]
    if not p.view and xp.may_share_memory(x, y):
        y = y.copy()
    if y.ndim == 0:     # MXNet 1.x has no 0-d arrays: a scalar result has shape (1,)
        y = y.reshape(1)
    return y


def _getitem_grad(p, x, y, gy, need):
    op = _GETITEM_BWD
    return [apply(op, (gy[0],), Params(op, {"key": p.key, "shape": x[0].shape}))]


def _getitem_backward(p, xp, gy):
    gx = xp.zeros(p.shape, gy.dtype)
    key = _dev_key(xp, p.key)
    target_shape = gx[key].shape
    g = gy.reshape(target_shape)
    if _is_advanced(p.key):
        add_at(xp, gx, key, g)
    else:
        gx[key] = g
    return gx


def _getitem_backward_grad(p, x, y, gy, need):
    op = _GETITEM
    return [apply(op, (gy[0],), Params(op, {"key": p.key, "view": False})).reshape(x[0].shape)]


_GETITEM = register_op("_getitem", _getitem, gradient=_getitem_grad, saves="",
                       doc="``x[key]`` (used by NDArray indexing).")
_GETITEM_BWD = register_op("_getitem_backward", _getitem_backward, gradient=_getitem_backward_grad,
                           saves="", doc="Scatter-add ``gy`` into zeros at ``key``.")


def fit_value(target_shape, v):
    """Shape value ``v`` for assignment to a slot of ``target_shape``, as MXNet does:
    leading size-1 axes beyond the slot's rank are dropped (a (1,) array fills a
    scalar slot, (1, 3) fills a row), then the value broadcasts. A value of the same
    size but another shape ((6,) into (2, 3)) is an error, as in MXNet."""
    extra = v.ndim - len(target_shape)
    if extra > 0 and all(d == 1 for d in v.shape[:extra]):
        v = v.reshape(v.shape[extra:])
    if v.shape != tuple(target_shape) and not _broadcastable(v.shape, target_shape):
        raise ValueError("cannot broadcast a value of shape %s to the indexed shape %s"
                         % (v.shape, tuple(target_shape)))
    return v


def _broadcastable(src, dst):
    if len(src) > len(dst):
        return False
    return all(s in (1, d) for s, d in zip(src[::-1], tuple(dst)[::-1]))


def _setitem(p, xp, x, v=None):
    y = x.copy()
    key = _dev_key(xp, p.key)
    y[key] = p.scalar if v is None else fit_value(y[key].shape, v)
    return y


def _setitem_grad(p, x, y, gy, need):
    op = _SETITEM
    g = gy[0]
    gx = apply(op, (g,), Params(op, {"key": p.key, "scalar": 0.0}))
    if len(x) == 1:
        return [gx]
    gv = apply(_GETITEM, (g,), Params(_GETITEM, {"key": p.key, "view": False}))
    v = x[1]
    if gv.shape != v.shape:
        if gv.size == v.size:
            gv = gv.reshape(v.shape)
        else:
            gv = unbroadcast(gv, (1,) * (gv.ndim - v.ndim) + v.shape).reshape(v.shape)
    return [gx, gv]


_SETITEM = register_op("_setitem", _setitem, gradient=_setitem_grad, saves="",
                       inputs=lambda p: ("data",) if p.scalar is not None else ("data", "value"),
                       doc="A copy of ``x`` with ``x[key] = value`` (used by NDArray "
                           "assignment under autograd).")


# -- take, pick and their scatter-add adjoints ----------------------------------

_MODES = ("clip", "wrap", "raise")
PICK_MODES = ("clip", "wrap")


def _int_index(xp, idx, n, mode, what):
    """Integer positions in ``[0, n)`` from float or int ``idx`` by ``mode``.

    MXNet truncates float indices towards zero before clipping or wrapping.
    """
    i = idx.astype(np.int64) if idx.dtype.kind != "i" or idx.dtype != np.int64 else idx
    if mode == "clip":
        return xp.minimum(xp.maximum(i, 0), n - 1)     # two ufuncs: clip's wrapper costs more
    if mode == "wrap":
        return xp.mod(i, n)
    if i.size and (int(i.min()) < -n or int(i.max()) >= n):
        raise IndexError("%s: an index is out of bounds for an axis of size %d (mode='raise')"
                         % (what, n))
    return xp.mod(i, n)


def _take(p, xp, a, idx):
    axis = norm_axis(p.axis, a.ndim)
    if a.shape[axis] == 0:
        raise MXNetError("cannot take from an empty axis %d of shape %s" % (axis, a.shape))
    i = _int_index(xp, idx, a.shape[axis], p.mode, "take")
    return xp.take(a, i, axis=axis)


def _take_grad(p, x, y, gy, need):
    a, idx = x
    op = _TAKE_BWD
    return [apply(op, (gy[0], idx), Params(op, {"axis": p.axis, "mode": p.mode,
                                                 "shape": a.shape})), None]


def _take_backward(p, xp, gy, idx):
    axis = norm_axis(p.axis, len(p.shape))
    i = _int_index(xp, idx, p.shape[axis], p.mode, "take")
    gx = xp.zeros(p.shape, gy.dtype)
    # Move the taken axis to the front so that one add.at scatters every slice.
    gxm = xp.moveaxis(gx, axis, 0)
    gym = xp.moveaxis(gy, list(range(axis, axis + i.ndim)), list(range(i.ndim)))
    add_at(xp, gxm, i, gym)
    return gx


def _take_backward_grad(p, x, y, gy, need):
    op = _TAKE
    return [apply(op, (gy[0], x[1]), Params(op, {"axis": p.axis, "mode": p.mode})), None]


_TAKE_PARAMS = [Param("axis", parse_int, 0, "The axis to take along."),
                Param("mode", None, "clip", "Out-of-range indices.", choices=_MODES)]
_TAKE = register_op("take", _take, inputs=("a", "indices"), gradient=_take_grad, saves="x",
                    params=_TAKE_PARAMS, check=ranks(a=1),
                    doc="Slices of ``a`` along ``axis`` at ``indices`` (float indices are "
                        "truncated).\n\n>>> mx.nd.take(mx.nd.array([[1, 2], [3, 4]]), "
                        "mx.nd.array([1]))  # [[3. 4.]]")
_TAKE_BWD = register_op("_backward_take", _take_backward, inputs=("ograd", "indices"),
                        check=fits_memory("shape", lambda p, g, i: math.prod(p.shape) * g.itemsize),
                        gradient=_take_backward_grad, saves="x",
                        params=_TAKE_PARAMS + [Param("shape", parse_shape, doc="Input shape.", low=0)],
                        doc="Scatter-add ``ograd`` into zeros of ``shape`` at ``indices`` along "
                            "``axis`` (the adjoint of take).")


def _pick_flat(p, xp, shape, idx):
    """The picked positions as flat indices into an array of ``shape``, shaped as the
    output without the picked axis (a gather/scatter through ``reshape(-1)`` costs a
    few small ops where ``take_along_axis`` builds index grids)."""
    axis = norm_axis(p.axis, len(shape))
    want = shape[:axis] + shape[axis + 1:]
    if idx.shape != want and idx.shape != shape[:axis] + (1,) + shape[axis + 1:]:
        raise MXNetError("index has shape %s, expected %s for data of shape %s and axis=%d"
                         % (idx.shape, want, shape, p.axis))
    n = shape[axis]
    i = _int_index(xp, idx.reshape(want), n, p.mode, "pick")
    post = math.prod(shape[axis + 1:])
    if post == 1:
        flat = i + xp.arange(0, i.size * n, n).reshape(want)
    else:
        pre = i.size // post if post else 0
        rows = xp.arange(0, pre * n * post, n * post).reshape(pre, 1)
        flat = (i.reshape(pre, post) * post + rows + xp.arange(post)).reshape(want)
    return axis, flat


def pick_with_flat(p, xp, x, idx):
    """:func:`_pick`'s output and the flat positions it read (for a scatter back)."""
    axis, flat = _pick_flat(p, xp, x.shape, idx)
    y = x.reshape(-1)[flat]
    if p.keepdims:
        return y.reshape(x.shape[:axis] + (1,) + x.shape[axis + 1:]), flat
    return (y if y.ndim else y.reshape(1)), flat


def _pick(p, xp, x, idx):
    return pick_with_flat(p, xp, x, idx)[0]


def _pick_grad(p, x, y, gy, need):
    op = _PICK_BWD
    key = (p, x[0].shape)       # (params are shared between calls: cached by identity)
    q = _PICK_BWD_PARAMS.get(key)
    if q is None:
        if len(_PICK_BWD_PARAMS) >= 64:
            _PICK_BWD_PARAMS.clear()
        q = _PICK_BWD_PARAMS[key] = Params(op, dict(p.items(), shape=key[1]))
    return [apply(op, (gy[0], x[1]), q), None]


_PICK_BWD_PARAMS = {}       # (pick's params, data shape) -> _backward_pick's params


def _pick_scatter(p, xp, shape, gy, idx):
    """Zeros of ``shape`` with ``gy`` at the picked positions."""
    _, flat = _pick_flat(p, xp, shape, idx)
    gx = xp.zeros(math.prod(shape), gy.dtype)
    gx[flat] = gy.reshape(flat.shape)
    return gx.reshape(shape)


def _pick_backward(p, xp, gy, idx):
    return _pick_scatter(p, xp, tuple(p.shape), gy, idx)


def _pick_backward_grad(p, x, y, gy, need):
    op = _PICK
    g = apply(op, (gy[0], x[1]), Params(op, {k: v for k, v in p.items() if k != "shape"}))
    return [g.reshape(x[0].shape), None]


_PICK_PARAMS = [Param("axis", parse_int, -1, "The axis to pick along."),
                Param("keepdims", parse_bool, False, "Keep the picked axis with size 1."),
                Param("mode", None, "clip", "Out-of-range indices.", choices=PICK_MODES)]
_PICK = register_op("pick", _pick, inputs=("data", "index"), gradient=_pick_grad, saves="x",
                    params=_PICK_PARAMS,
                    doc="One element per position along ``axis``: ``y[i] = x[i, index[i]]`` "
                        "for 2-D data and axis=-1.\n\n>>> mx.nd.pick(mx.nd.array([[1, 2], "
                        "[3, 4]]), mx.nd.array([1, 0]))  # [2. 3.]")
_PICK_BWD = register_op("_backward_pick", _pick_backward, inputs=("ograd", "index"),
                        gradient=_pick_backward_grad, saves="x",
                        params=_PICK_PARAMS + [Param("shape", parse_shape, doc="Input shape.", low=0)],
                        doc="Zeros of ``shape`` with ``ograd`` at the picked positions.")


# -- one_hot, where -------------------------------------------------------------

def _one_hot(p, xp, idx):
    if p.depth <= 0:
        raise MXNetError("depth must be positive, got %d" % p.depth)
    i = idx.astype(np.int64)
    # Out-of-range indices (negative included) give a row of off_value, as in MXNet.
    hit = i[..., None] == xp.arange(p.depth)
    return xp.where(hit, p.on_value, p.off_value).astype(p.dtype)


register_op("one_hot", _one_hot, inputs=("indices",), infer_type=lambda p, dtypes: p.dtype,
            check=fits_memory("depth", lambda p, i: i.size * p.depth * 8),
            params=[Param("depth", parse_int, doc="The length of each one-hot vector."),
                    Param("on_value", parse_float, 1.0, "The value at the index."),
                    Param("off_value", parse_float, 0.0, "The value elsewhere."),
                    Param("dtype", parse_dtype, np.dtype(np.float32), "The output dtype.")],
            doc="One-hot vectors of length ``depth``; out-of-range indices give all "
                "``off_value``.\n\n>>> mx.nd.one_hot(mx.nd.array([1, 0]), 2)  # [[0. 1.] [1. 0.]]")


def _cond_for(cond, x):
    if cond.shape == x.shape:
        return cond
    if cond.ndim == 1 and x.ndim >= 1 and cond.shape[0] == x.shape[0]:
        return cond.reshape(cond.shape + (1,) * (x.ndim - 1))
    raise MXNetError("condition has shape %s; expected the shape of x %s, or a 1-D array of "
                     "length %d (x.shape[0]) to select rows" % (cond.shape, x.shape,
                                                                x.shape[0] if x.ndim else 0))


def _where(p, xp, cond, x, y):
    if x.shape != y.shape:
        raise MXNetError("x and y must have the same shape, got %s and %s" % (x.shape, y.shape))
    if x.dtype != y.dtype:
        raise MXNetError("x and y must have the same dtype, got %s and %s" % (x.dtype, y.dtype))
    return xp.where(_cond_for(cond, x) != 0, x, y)


def _where_grad(p, x, y, gy, need):
    cond, a = x[0], x[1]
    c = _cond_for(cond, a)
    c = nd.broadcast_to(c, shape=a.shape) if c.shape != a.shape else c
    zero = nd.zeros_like(gy[0])
    return [None, nd.where(c, gy[0], zero), nd.where(c, zero, gy[0])]


register_op("where", _where, inputs=("condition", "x", "y"), gradient=_where_grad, saves="x",
            doc="Elements of ``x`` where ``condition`` is non-zero, else of ``y``. A 1-D "
                "``condition`` selects whole rows (``x.shape[0]`` entries).")


# -- gather_nd, scatter_nd -------------------------------------------------------

def _nd_key(xp, idx, shape, what):
    m = idx.shape[0] if idx.ndim else 0
    if idx.ndim == 0 or m > len(shape):
        raise MXNetError("indices must have shape (M, ...) with M <= data.ndim (%d), got %s"
                         % (len(shape), idx.shape))
    i = idx.astype(np.int64)
    for k in range(m):
        n = shape[k]
        if i.size and (int(i[k].min()) < -n or int(i[k].max()) >= n):
            raise IndexError("%s: index out of bounds for dimension %d of size %d"
                             % (what, k, n))
    return tuple(i[k] for k in range(m))


def _gather_nd(p, xp, x, idx):
    return x[_nd_key(xp, idx, x.shape, "gather_nd")]


def _gather_nd_grad(p, x, y, gy, need):
    op = _SCATTER_ADD
    return [apply(op, (gy[0], x[1]), Params(op, {"shape": x[0].shape})), None]


def _scatter_rule(p, v, idx):
    """Scattered ``data`` has the shape gather_nd would give: indices (M, ...) address the
    first M axes of ``shape``."""
    if idx.ndim == 0:
        return                  # _nd_key says what indices must be
    want = tuple(idx.shape[1:]) + tuple(p.shape[idx.shape[0]:])
    if v.shape != want:
        raise MXNetError("data has shape %s, expected %s for indices of shape %s into shape %s"
                         % (v.shape, want, idx.shape, tuple(p.shape)))


def _scatter_nd_add(p, xp, v, idx):
    gx = xp.zeros(p.shape, v.dtype)
    add_at(xp, gx, _nd_key(xp, idx, p.shape, "scatter_nd"), v)
    return gx


def _scatter_nd(p, xp, v, idx):
    # NOTE: with duplicate indices the last write wins here; MXNet leaves it undefined.
    y = xp.zeros(p.shape, v.dtype)
    y[_nd_key(xp, idx, p.shape, "scatter_nd")] = v
    return y


def _scatter_grad(p, x, y, gy, need):
    return [nd.gather_nd(gy[0], x[1]), None]


register_op("gather_nd", _gather_nd, inputs=("data", "indices"), gradient=_gather_nd_grad,
            saves="x",
            doc="``y[j...] = data[indices[0, j...], ..., indices[M-1, j...]]``: indices of "
                "shape (M, ...) address the first M axes of ``data``.")
_SCATTER_ADD = register_op("_backward_gather_nd", _scatter_nd_add, inputs=("data", "indices"),
                           gradient=_scatter_grad, saves="x", check=_scatter_rule,
                           params=[Param("shape", parse_shape, doc="The output shape.", low=0)],
                           doc="Scatter-add ``data`` into zeros of ``shape`` (duplicates add).")
register_op("scatter_nd", _scatter_nd, inputs=("data", "indices"), gradient=_scatter_grad,
            saves="x", check=_scatter_rule, params=[Param("shape", parse_shape, doc="The output shape.", low=0)],
            doc="Zeros of ``shape`` with ``data`` written at ``indices`` (the inverse of "
                "gather_nd).")


# -- slice, slice_axis, slice_like ------------------------------------------------

def _slice_key(p, ndim):
    begin, end = p.begin, p.end
    step = p.step or ()
    if len(begin) != len(end) or len(begin) > ndim or (step and len(step) != len(begin)):
        raise MXNetError("begin %s, end %s and step %s must have equal lengths of at most "
                         "data.ndim (%d)" % (begin, end, step or "()", ndim))
    key = []
    for k in range(len(begin)):
        s = step[k] if step and step[k] is not None else 1
        if s == 0:
            raise MXNetError("step must not be 0 (axis %d)" % k)
        key.append(slice(begin[k], end[k], s))
    return tuple(key)


def _sliced(xp, x, key):
    # A copy: MXNet's slice never aliases its input.
    return x[key].copy()


def _slice_grad_for(key_fn):
    def gradient(p, x, y, gy, need):
        op = _GETITEM_BWD
        key = key_fn(p, x[0].shape, x)
        gx = apply(op, (gy[0],), Params(op, {"key": key, "shape": x[0].shape}))
        return [gx] + [None] * (len(x) - 1)
    return gradient


register_op("slice", lambda p, xp, x: _sliced(xp, x, _slice_key(p, x.ndim)),
            gradient=_slice_grad_for(lambda p, shape, x: _slice_key(p, len(shape))), saves="",
            aliases=("crop",),
            params=[Param("begin", parse_opt_shape, doc="Start per axis (None: from the edge)."),
                    Param("end", parse_opt_shape, doc="Stop per axis (None: to the edge)."),
                    Param("step", parse_opt_shape, (), "Step per axis (None or empty: 1).")],
            doc="``x[begin0:end0:step0, begin1:end1:step1, ...]`` with Python's rules for "
                "negative and out-of-range values.")


def _axis_key(p, shape):
    """The index of ``slice_axis``; MXNet's bounds: ``0 <= begin < end <= size`` once
    negative values count from the end (no clipping as Python's slices do)."""
    axis = norm_axis(p.axis, len(shape))
    n = shape[axis]
    begin = p.begin + n if p.begin < 0 else p.begin
    end = n if p.end is None else (p.end + n if p.end < 0 else p.end)
    if not 0 <= begin < end <= n:
        raise MXNetError("slice_axis: begin=%s, end=%s out of range for axis %d of size %d "
                         "(expected 0 <= begin < end <= %d, negative counting from the end)"
                         % (p.begin, p.end, axis, n, n))
    return (slice(None),) * axis + (slice(begin, end),)


register_op("slice_axis", lambda p, xp, x: _sliced(xp, x, _axis_key(p, x.shape)),
            gradient=_slice_grad_for(lambda p, shape, x: _axis_key(p, shape)), saves="",
            params=[Param("axis", parse_int, doc="The axis to slice."),
                    Param("begin", parse_int, doc="Start (negative counts from the end)."),
                    Param("end", optional(parse_int), doc="Stop; None slices to the end.")],
            doc="``x[..., begin:end, ...]`` along one ``axis``.")


def _like_key(p, shape, like):
    """The slice of ``data`` (``shape``) that ``slice_like`` keeps. Without ``axes``
    the ranks must agree; with them, each axis (negative ones counted from data's
    rank) only has to exist in both inputs, as in MXNet."""
    if not p.axes:
        if len(like) != len(shape):
            raise MXNetError("shape_like has %d dimensions but data has %d; with different "
                             "ranks, name the axes to slice in axes="
                             % (len(like), len(shape)))
        axes = range(len(shape))
    else:
        axes = [norm_axis(a, len(shape)) for a in p.axes]
        for a, given in zip(axes, p.axes):
            if a >= len(like):
                raise MXNetError("axes: axis %d exceeds the %d dimensions of shape_like %s"
                                 % (given, len(like), like))
    key = [slice(None)] * len(shape)
    for a in axes:
        if like[a] > shape[a]:
            raise MXNetError("shape_like dimension %d (%d) exceeds data's (%d)"
                             % (a, like[a], shape[a]))
        key[a] = slice(0, like[a])
    return tuple(key)


register_op("slice_like", lambda p, xp, x, like: _sliced(xp, x, _like_key(p, x.shape, like.shape)),
            inputs=("data", "shape_like"),
            gradient=_slice_grad_for(lambda p, shape, x: _like_key(p, shape, x[1].shape)),
            saves="", params=[Param("axes", parse_shape, (), "Axes to slice; all if empty.")],
            doc="The leading corner of ``data`` with the shape of ``shape_like`` on ``axes``.")


# -- ravel_multi_index, unravel_index ---------------------------------------------

def _ravel_strides(shape):
    """Row-major strides of ``shape``; ``shape[0]`` is never read, so it may be -1."""
    strides = [1] * len(shape)
    for j in range(len(shape) - 2, -1, -1):
        strides[j] = strides[j + 1] * shape[j + 1]
    return strides


def _ravel(p, xp, data):
    if data.ndim != 2 or data.shape[0] != len(p.shape):
        raise MXNetError("data must have shape (%d, N) for shape=%s, got %s"
                         % (len(p.shape), p.shape, data.shape))
    # NOTE: each index is truncated to an integer before it is scaled, as in MXNet
    # (1.7 counts as 1), and the flat index is not range-checked.
    idx = data.astype(np.int64)
    flat = xp.zeros(data.shape[1:], np.int64)
    for j, stride in enumerate(_ravel_strides(p.shape)):
        flat += idx[j] * stride
    return flat.astype(data.dtype)


def _trunc_divmod(a, b):
    """C-style integer division: the quotient rounds towards zero, as in MXNet."""
    q = abs(a) // abs(b)
    if b < 0:
        q = -q
    q = q * ((a >= 0) * 2 - 1)
    return q, a - q * b


def _unravel(p, xp, data):
    if any(s == 0 for s in p.shape[1:]):
        raise MXNetError("shape must have no zero dimension after the first, got %s"
                         % (p.shape,))
    idx = data.astype(np.int64)
    out = xp.empty((len(p.shape),) + data.shape, np.int64)
    # The first coordinate keeps the remaining quotient (no modulo): shape[0] may be -1.
    for j in range(len(p.shape) - 1, 0, -1):
        idx, out[j] = _trunc_divmod(idx, p.shape[j])
    out[0] = idx
    return out.astype(data.dtype)


_RAVEL_DOC = ("Flat indices of the multi-indices in the columns of ``data`` (shape "
              "(len(shape), N)) for an array of ``shape``; ``shape[0]`` may be -1.\n\n"
              ">>> mx.nd.ravel_multi_index(mx.nd.array([[1, 0], [2, 1]]), shape=(2, 3))"
              "  # [5. 1.]")
_UNRAVEL_DOC = ("Multi-indices (one row per axis of ``shape``) of the flat indices in "
                "``data``; the inverse of ravel_multi_index.\n\n"
                ">>> mx.nd.unravel_index(mx.nd.array([5, 1]), shape=(2, 3))"
                "  # [[1. 0.] [2. 1.]]")
register_op("_ravel_multi_index", _ravel, inputs=("data",), gradient=zeros_grad, saves="",
            params=[Param("shape", parse_shape, doc="The shape of the array indexed.")],
            aliases=("ravel_multi_index",), doc=_RAVEL_DOC)
register_op("_unravel_index", _unravel, inputs=("data",), gradient=zeros_grad, saves="",
            params=[Param("shape", parse_shape, doc="The shape of the array indexed.")],
            aliases=("unravel_index",), doc=_UNRAVEL_DOC)
