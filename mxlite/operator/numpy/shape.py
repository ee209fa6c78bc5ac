"""Shape, indexing and product ops of the np interface: ``_np_reshape``, ``_np_transpose``,
``_npi_concatenate``, ``_npi_stack``, ``_np_dot``, ``_npi_matmul``, ``_npi_where`` ...

NumPy's semantics (``reshape`` knows only -1; 0-d results stay 0-d); legacy kernels and
gradient rules where the math is the same.
"""
import math

import numpy as onp

from ... import nd
from ...base import (MXNetError, parse_axis, parse_bool, parse_int, parse_shape, optional,
                     parse_float)
from ..registry import register_op, Param, Params, apply, OPS, ranks
from ..util import (fill_missing, fits_memory, identity_grad, norm_axis, norm_axes, unbroadcast,
                    zeros_grad)
from ..tensor.indexing import _dev_key, _GETITEM_BWD
from .elemwise import derive, promote

# -- reshape and axes -------------------------------------------------------------------


def np_shape(newshape, size, where="reshape"):
    """``newshape`` with its one -1 filled in (NumPy's rule; no other codes)."""
    if isinstance(newshape, int):
        newshape = (newshape,)
    newshape = tuple(int(d) for d in newshape)
    if any(d < -1 for d in newshape) or newshape.count(-1) > 1:
        raise MXNetError("%s: invalid shape %s; only one -1 is allowed and no other negative "
                         "value (npx.reshape takes MXNet's special codes)" % (where, newshape))
    known = 1
    for d in newshape:
        if d != -1:
            known *= d
    if -1 in newshape:
        if known == 0 or size % known:
            raise MXNetError("%s: cannot reshape an array of size %d into shape %s"
                             % (where, size, newshape))
        newshape = tuple(size // known if d == -1 else d for d in newshape)
    elif known != size:
        raise MXNetError("%s: cannot reshape an array of size %d into shape %s"
                         % (where, size, newshape))
    return newshape


def _reshape(p, xp, x):
    return x.reshape(np_shape(p.newshape, x.size))


def reshape_to(g, shape):
    """``g`` reshaped to ``shape`` with NumPy's rule, differentiably: gradients of np ops
    use it because the legacy ``reshape`` reads 0 as "copy this dimension"."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    op = OPS["_np_reshape"]
    return apply(op, (g,), op.parse_params({"newshape": shape}))


def _as_input_shape(p, x, y, gy, need):
    return [reshape_to(gy[0], x[0].shape)]


register_op("_np_reshape", _reshape, inputs=("a",), is_view=True, gradient=_as_input_shape,
            saves="", params=[Param("newshape", parse_shape, doc="The new shape (one -1 allowed)."),
                              Param("order", str, "C", "Only 'C' is supported.")],
            doc="NumPy's reshape: one -1 is inferred, no other codes.")


# the legacy transpose's kernel and gradient, giving a copy as MXNet's np op does
register_op("_np_transpose", lambda p, xp, x: OPS["transpose"].kernel(p, xp, x).copy(),
            inputs=("a",), gradient=OPS["transpose"].gradient, saves="",
            params=[Param("axes", parse_axis, None, "The permutation; None reverses.")],
            doc="Permute the axes (``mx.np.transpose``).")


derive("_npi_swapaxes", "SwapAxis", OPS["SwapAxis"].compute, inputs=("a",), check=ranks(a=1),
       doc="Swap two axes.")


def _squeeze(p, xp, x):
    if p.axis is None:
        return x.reshape([d for d in x.shape if d != 1])
    axes = (p.axis,) if isinstance(p.axis, int) else p.axis
    axes = [norm_axis(a, x.ndim) for a in axes]
    for a in axes:
        if x.shape[a] != 1:
            raise MXNetError("squeeze: cannot select an axis to squeeze out which has size "
                             "not equal to one (axis %d has size %d)" % (a, x.shape[a]))
    return x.reshape([d for i, d in enumerate(x.shape) if i not in axes])


register_op("_np_squeeze", _squeeze, inputs=("a",), is_view=True, gradient=_as_input_shape,
            saves="", params=[Param("axis", parse_axis, None)], doc="Remove size-1 axes.")


def _expand_dims(p, xp, x):
    return xp.expand_dims(x, norm_axis(p.axis, x.ndim + 1))


register_op("_npi_expand_dims", _expand_dims, inputs=("a",), is_view=True,
            gradient=_as_input_shape, saves="", params=[Param("axis", parse_int)],
            doc="Insert a size-1 axis at ``axis``.")

def _broadcast_rule(p, x):
    shape = tuple(p.shape)
    fits = x.ndim <= len(shape) and all(
        d in (1, s) for d, s in zip(x.shape[::-1], shape[::-1]))
    if not fits:
        raise MXNetError("array has shape %s, expected one that broadcasts to %s"
                         % (x.shape, shape))


register_op("_np_broadcast_to", lambda p, xp, x: xp.broadcast_to(x, p.shape).copy(),
            inputs=("array",), params=[Param("shape", parse_shape, low=0)], saves="",
            check=_broadcast_rule,
            gradient=lambda p, x, y, gy, need: [unbroadcast(gy[0], x[0].shape)],
            doc="Broadcast to ``shape`` with NumPy's rules.")


register_op("_np_copy", lambda p, xp, x: x.copy(), inputs=("a",), saves="",
            gradient=identity_grad, doc="A copy of the array.")

# -- joining and splitting --------------------------------------------------------------


def _variadic(p):
    return ["data%d" % i for i in range(p.num_args)]


def _concat(p, xp, *xs):
    for i, x in enumerate(xs):
        if x.ndim == 0 and p.axis is not None:
            raise MXNetError("data%d expected at least 1 dim, got shape ()" % i)
    if p.axis is not None:
        norm_axis(p.axis, xs[0].ndim)
    dt = xs[0].dtype
    for x in xs[1:]:
        dt = promote(dt, x.dtype)
    if p.axis is None:
        return xp.concatenate([x.reshape(-1).astype(dt, copy=False) for x in xs])
    return xp.concatenate([x.astype(dt, copy=False) for x in xs], axis=p.axis)


def _concat_grad(p, x, y, gy, need):
    g = gy[0]
    if p.axis is None:
        axis = 0
    else:
        axis = norm_axis(p.axis, x[0].ndim)
    out, start = [], 0
    for xi in x:
        n = xi.size if p.axis is None else xi.shape[axis]
        out.append(reshape_to(nd.slice_axis(g, axis=axis, begin=start, end=start + n), xi.shape))
        start += n
    return out


register_op("_npi_concatenate", _concat, inputs=_variadic, variadic="num_args",
            gradient=_concat_grad, saves="",
            params=[Param("num_args", parse_int), Param("axis", optional(parse_int), 0)],
            doc="Join arrays along an existing axis (None: flattened).")


def _stack_grad(p, x, y, gy, need):
    # the legacy rule's parts, reshaped back where the inputs are 0-d (split gives (1,))
    return [reshape_to(g, xi.shape) for g, xi in zip(OPS["stack"].gradient(p, x, y, gy, need), x)]


# the legacy stack's kernel and gradient under np's input names
register_op("_npi_stack", OPS["stack"].kernel, inputs=_variadic, variadic="num_args",
            gradient=_stack_grad, saves="",
            params=[Param("num_args", parse_int), Param("axis", parse_int, 0)],
            doc="Join arrays along a new axis.")


def _split_points(p, n):
    if p.sections:
        if n % p.sections:
            raise MXNetError("split: array split does not result in an equal division "
                             "(%d into %d sections)" % (n, p.sections))
        step = n // p.sections
        return list(range(step, n, step))
    # MXNet's indices lead with the 0 the first part starts at; NumPy's split takes the
    # others as they are (beyond n, or repeated: empty parts)
    return list(p.indices[1:])


def _split(p, xp, x, axis=None):
    axis = norm_axis(p.axis, x.ndim) if axis is None else axis
    parts = xp.split(x, _split_points(p, x.shape[axis]), axis=axis)
    if p.squeeze_axis:
        parts = [q.squeeze(axis) for q in parts]
    return tuple(q.copy() for q in parts)


def _split_grad(p, x, y, gy, need):
    axis = norm_axis(p.axis, x[0].ndim)
    gy = fill_missing(gy, y)
    parts = [nd.expand_dims(g, axis=axis) for g in gy] if p.squeeze_axis else gy
    return [nd.concat(*parts, dim=axis)]


def _n_split(p):
    return p.sections if p.sections else max(len(p.indices), 1)    # indices lead with 0


_SPLIT = register_op(
    "_npi_split", _split, inputs=("data",), num_outputs=_n_split, gradient=_split_grad,
    check=ranks(data=1), saves="y", params=[Param("indices", parse_shape, ()), Param("axis", parse_int, 0),
                       Param("squeeze_axis", parse_bool, False),
                       Param("sections", parse_int, 0)],
    doc="Split into equal sections or at ``indices`` along ``axis``.")


def _hsplit_axis(ndim):
    return 1 if ndim > 1 else 0


def _hsplit_grad(p, x, y, gy, need):
    gy = fill_missing(gy, y)
    return [nd.concat(*gy, dim=_hsplit_axis(x[0].ndim))]


register_op("_npi_hsplit", lambda p, xp, x: _split(p, xp, x, _hsplit_axis(x.ndim)),
            inputs=("data",), num_outputs=_n_split, gradient=_hsplit_grad, saves="",
            check=ranks(data=1),
            params=list(_SPLIT.params.values()),
            doc="``split`` along axis 1 (axis 0 for 1-D data): ``mx.np.hsplit``, which "
                "needs no rank while a graph is composed.")

derive("_npi_tile", "tile", lambda p, xp, x: xp.tile(x, p.reps),
       check=fits_memory("reps", lambda p, x: x.nbytes * math.prod(p.reps)))
derive("_npi_flip", "reverse", lambda p, xp, x: xp.flip(
    x, p.axis if p.axis is None else norm_axes(p.axis, x.ndim)).copy())


derive("_np_repeat", "repeat", OPS["repeat"].compute,
       check=fits_memory("repeats", lambda p, x: x.nbytes * p.repeats),
       doc="Repeat each element ``repeats`` times.")


def _clip(p, xp, x):
    lo = -onp.inf if p.a_min is None else p.a_min
    hi = onp.inf if p.a_max is None else p.a_max
    return xp.asarray(xp.clip(x, x.dtype.type(lo) if x.dtype.kind == "f" or
                              onp.isfinite(lo) else lo, hi)).astype(x.dtype, copy=False)


def _clip_grad(p, x, y, gy, need):
    lo = -onp.inf if p.a_min is None else p.a_min
    hi = onp.inf if p.a_max is None else p.a_max
    return [gy[0] * ((x[0] >= lo) * (x[0] <= hi))]


register_op("_npi_clip", _clip, inputs=("a",), gradient=_clip_grad, saves="x",
            params=[Param("a_min", optional(parse_float), None),
                    Param("a_max", optional(parse_float), None)],
            doc="Limit values to [a_min, a_max] (None: unbounded).")


def _where(p, xp, c, a, b):
    dt = promote(a.dtype, b.dtype)
    return xp.asarray(xp.where(c.astype(bool), a.astype(dt, copy=False),
                               b.astype(dt, copy=False)))


def _where_grad(p, x, y, gy, need):
    c = nd.broadcast_to(x[0], shape=y[0].shape) if x[0].shape != y[0].shape else x[0]
    c = (c != 0).astype(gy[0].dtype)
    ga = unbroadcast(gy[0] * c, x[1].shape)
    gb = unbroadcast(gy[0] * (1 - c), x[2].shape)
    return [nd.zeros_like(x[0]), ga, gb]


register_op("_npi_where", _where, inputs=("condition", "x", "y"), gradient=_where_grad,
            saves="xy", doc="Elements of ``x`` where ``condition``, else of ``y``.")

# -- products ---------------------------------------------------------------------------


def _dot(p, xp, a, b):
    dt = promote(a.dtype, b.dtype)
    return xp.asarray(xp.dot(a.astype(dt, copy=False), b.astype(dt, copy=False)))


def _as_matrices(a, b):
    """``a`` and ``b`` as 2-D operands of one matrix product, and the product's shape."""
    a2 = a.reshape((1, -1)) if a.ndim == 1 else a.reshape((-1, a.shape[-1]))
    b2 = b.reshape((-1, 1)) if b.ndim == 1 else b
    return a2, b2


def _dot_grad(p, x, y, gy, need):
    a, b = x
    g = gy[0]
    if a.ndim == 0 or b.ndim == 0:
        ga = unbroadcast(g * b, a.shape) if a.ndim == 0 else g * b
        gb = unbroadcast(g * a, b.shape) if b.ndim == 0 else g * a
        return [nd.sum(ga).reshape(()) if a.ndim == 0 else ga,
                nd.sum(gb).reshape(()) if b.ndim == 0 else gb]
    if b.ndim > 2:
        raise MXNetError("_np_dot: the gradient for a second operand of more than 2 "
                         "dimensions is not supported")
    a2, b2 = _as_matrices(_as(a, g.dtype), _as(b, g.dtype))
    g2 = g.reshape((a2.shape[0], b2.shape[1]))
    ga = nd.dot(g2, b2, transpose_b=True).reshape(a.shape)
    gb = nd.dot(a2, g2, transpose_a=True).reshape(b.shape)
    return [_as(ga, a.dtype), _as(gb, b.dtype)]


def _as(t, dtype):
    # operands of mixed float dtypes were promoted in the forward; their gradients are
    # computed in the result's dtype and given back in each input's own
    return t if t.dtype == dtype else t.astype(dtype)


def _contract_infer_shape(b_axis):
    """Shape rule of dot/matmul: a weight's unknown contracted dimension (0) is the
    other operand's (for Gluon's deferred initialisation)."""
    def infer(p, shapes):
        a, b = shapes
        if a is None or b is None or not a or len(b) < 2:
            return shapes
        a, b = list(a), list(b)
        if b[b_axis] == 0 and a[-1] != 0:
            b[b_axis] = a[-1]
        elif a[-1] == 0 and b[b_axis] != 0:
            a[-1] = b[b_axis]
        return [tuple(a), tuple(b)]
    return infer


def _contract_rule(p, a, b):
    """Shape rule of dot/matmul: ``a``'s last dim meets ``b``'s rows (its only dim when
    1-D); 0-d operands of dot scale."""
    if a.ndim == 0 or b.ndim == 0:
        return
    k = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if a.shape[-1] != k:
        raise MXNetError("b has shape %s, expected %d rows (the last dim of a) for a of "
                         "shape %s" % (b.shape, a.shape[-1], a.shape))


def _matmul_rule(p, a, b):
    for name, t in (("a", a), ("b", b)):
        if t.ndim == 0:
            raise MXNetError("%s expected at least 1 dim, got shape ()" % name)
    _contract_rule(p, a, b)
    try:
        onp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise MXNetError("a and b expected stacks of matrices that broadcast, got shapes %s "
                         "and %s" % (a.shape, b.shape)) from None


register_op("_np_dot", _dot, inputs=("a", "b"), gradient=_dot_grad, saves="x",
            infer_shape=_contract_infer_shape(0), check=_contract_rule,
            doc="NumPy's dot: inner product of 1-D, matrix product of 2-D arrays.")


def _matmul(p, xp, a, b):
    dt = promote(a.dtype, b.dtype)
    return xp.asarray(xp.matmul(a.astype(dt, copy=False), b.astype(dt, copy=False)))


def _matmul_grad(p, x, y, gy, need):
    a, b = x
    if a.ndim <= 2 and b.ndim <= 2:
        return _dot_grad(p, x, y, gy, need)
    g = gy[0]
    a3 = a if a.ndim > 1 else a.reshape((1, -1))
    b3 = b if b.ndim > 1 else b.reshape((-1, 1))
    g3 = g.reshape(g.shape[:-1] + (a3.shape[-2], b3.shape[-1])) if a.ndim == 1 or b.ndim == 1 \
        else g
    batch = g3.shape[:-2]

    def batched(t):     # legacy broadcast_to wants equal ranks: pad with leading 1s
        t = t.reshape((1,) * (len(batch) + 2 - t.ndim) + t.shape)
        return nd.broadcast_to(t, shape=batch + t.shape[-2:]).reshape((-1,) + t.shape[-2:])
    ab, bb = batched(a3), batched(b3)
    gg = g3.reshape((-1,) + g3.shape[-2:])
    ga = nd.batch_dot(gg, bb, transpose_b=True).reshape(batch + a3.shape[-2:])
    gb = nd.batch_dot(ab, gg, transpose_a=True).reshape(batch + b3.shape[-2:])
    return [unbroadcast(ga, a3.shape).reshape(a.shape), unbroadcast(gb, b3.shape).reshape(b.shape)]


register_op("_npi_matmul", _matmul, inputs=("a", "b"), gradient=_matmul_grad, saves="x",
            infer_shape=_contract_infer_shape(-2), check=_matmul_rule,
            doc="Matrix product with NumPy's broadcasting of stacked matrices (``@``).")

# -- indexing ---------------------------------------------------------------------------


def _getitem(p, xp, x):
    y = x[_dev_key(xp, p.key)]
    if not p.view and xp.may_share_memory(x, y):
        y = y.copy()
    return xp.asarray(y)


def _getitem_grad(p, x, y, gy, need):
    op = _NP_GETITEM_BWD
    return [apply(op, (gy[0],), Params(op, {"key": p.key, "shape": x[0].shape}))]


def _getitem_backward_grad(p, x, y, gy, need):
    op = NP_GETITEM
    return [reshape_to(apply(op, (gy[0],), Params(op, {"key": p.key, "view": False})),
                       x[0].shape)]


NP_GETITEM = register_op("_npi_getitem", _getitem, gradient=_getitem_grad, saves="",
                         doc="``x[key]`` of an ``mx.np.ndarray`` (0-d results stay 0-d).")
_NP_GETITEM_BWD = register_op("_npi_getitem_backward", _GETITEM_BWD.compute,
                              gradient=_getitem_backward_grad, saves="",
                              doc="Scatter-add ``gy`` into zeros at ``key`` (0-d aware).")


def _unique(p, xp, x):
    ys = xp.unique(x, return_index=p.return_index, return_inverse=p.return_inverse,
                   return_counts=p.return_counts, axis=p.axis)
    if not isinstance(ys, tuple):
        return ys
    extra = [y.astype(onp.int64) for y in ys[1:]]
    if p.return_inverse:        # one index per element of the flattened (or axis) input
        k = 1 if p.return_index else 0
        extra[k] = extra[k].reshape(-1)
    return (ys[0],) + tuple(extra)


def _n_unique_outputs(p):
    return 1 + p.return_index + p.return_inverse + p.return_counts


register_op("_npi_unique", _unique, inputs=("data",), num_outputs=_n_unique_outputs,
            gradient=zeros_grad, saves="", shape_from_data=True,
            infer_type=lambda p, dt: [dt[0]] + [onp.dtype(onp.int64)] * (
                _n_unique_outputs(p) - 1),
            params=[Param("return_index", parse_bool, False, "Also the first indices."),
                    Param("return_inverse", parse_bool, False, "Also the inverse indices."),
                    Param("return_counts", parse_bool, False, "Also the counts."),
                    Param("axis", optional(parse_int), None, "The axis; None: flattened.")],
            doc="The sorted unique elements (and indices, inverse, counts as int64); a "
                "zero gradient, as MXNet's.")
