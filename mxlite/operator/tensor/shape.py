"""Shape ops: reshape (with MXNet's special codes), transpose, broadcast_to,
expand_dims, swapaxes, squeeze, Flatten, concat, stack, split, split_v2, tile,
repeat, reverse, Pad, broadcast_axis/like, reshape_like, depth_to_space,
space_to_depth, shape_array, size_array and diag."""
import math

import numpy as np

from ... import nd
from ...base import (MXNetError, parse_shape, parse_bool, parse_int, parse_float,
                     parse_axis, optional)
from ..registry import register_op, Param, Params, apply, OPS, ranks
from ..batchwise import rows, together, axis_not_batch
from ..util import const_like, norm_axis, norm_axes, fill_missing, fits_memory


class ReshapeSizeError(MXNetError, ValueError):
    """A reshape to a shape with another number of elements (``NDArray.reshape`` raises
    it as a ValueError, the ``Reshape`` op as an MXNetError)."""


# What each special code of a reshape does: the legacy op's codes and npx.reshape's
# (where 0 is a size like any other).
RESHAPE_CODES = {0: "copy", -1: "infer", -2: "rest", -3: "merge", -4: "split"}
NPX_RESHAPE_CODES = {-1: "infer", -2: "copy", -3: "drop", -4: "rest", -5: "merge", -6: "split"}


def infer_reshape(src, spec, reverse=False, codes=RESHAPE_CODES, name="Reshape"):
    """The target shape of MXNet's ``reshape(shape=spec)`` for an input of shape ``src``.

    Codes (``codes``, the legacy op's by default): ``0`` copies the input dim, ``-1``
    infers it, ``-2`` copies all the remaining dims, ``-3`` merges two input dims,
    ``-4 a b`` splits one dim into ``a`` and ``b`` (one of them may be -1); npx's
    ``-3`` drops a dim of size 1. ``reverse`` matches right to left.
    """
    src = tuple(src)
    spec = tuple(spec)
    if reverse:
        src = src[::-1]
        spec = _reverse_spec(spec) if codes is RESHAPE_CODES else spec[::-1]
    out = []
    infer_at = -1
    i = j = 0
    try:
        while j < len(spec):
            s = spec[j]
            action = codes.get(s)
            if action is None and s >= 0:
                out.append(s)
                i += 1
            elif action == "copy":
                out.append(src[i])
                i += 1
            elif action == "infer":
                if infer_at >= 0:
                    raise MXNetError("%s: only one dimension can be -1 in shape=%s" % (name, spec))
                infer_at = len(out)
                out.append(1)
                i += 1
            elif action == "rest":
                out.extend(src[i:])
                i = len(src)
            elif action == "merge":
                out.append(src[i] * src[i + 1])
                i += 2
            elif action == "drop":
                if src[i] != 1:
                    raise MXNetError("%s: %d drops a dimension of size 1, but dimension %d has "
                                     "size %d" % (name, s, i, src[i]))
                i += 1
            elif action == "split":
                d1, d2 = spec[j + 1], spec[j + 2]
                j += 2
                if d1 == -1 and d2 == -1:
                    raise MXNetError("%s: %d cannot split into two -1 dims" % (name, s))
                if d1 == -1:
                    d1 = src[i] // d2
                if d2 == -1:
                    d2 = src[i] // d1
                if d1 * d2 != src[i]:
                    raise MXNetError("%s: %d splits dimension %d of size %d into %d x %d"
                                     % (name, s, i, src[i], d1, d2))
                out.extend((d1, d2))
                i += 1
            else:
                raise MXNetError("%s: invalid value %d in shape=%s" % (name, s, spec))
            j += 1
    except IndexError:
        raise MXNetError("%s: shape=%s refers to more dimensions than the input shape %s has"
                         % (name, spec, src)) from None
    total = math.prod(src)
    if infer_at >= 0:
        known = math.prod(out)
        if known == 0 or total % known:
            raise MXNetError("%s: cannot infer the -1 dimension of shape=%s for an input of "
                             "shape %s" % (name, spec, src[::-1] if reverse else src))
        out[infer_at] = total // known
    if math.prod(out) != total:
        raise ReshapeSizeError("%s: target shape %s has %d elements but the input of shape %s "
                               "has %d" % (name, tuple(out[::-1] if reverse else out),
                                           math.prod(out), src[::-1] if reverse else src, total))
    return tuple(out[::-1]) if reverse else tuple(out)


def _reverse_spec(spec):
    # Reverse the codes, keeping each "-4 a b" group in its order of (b, a).
    groups = []
    j = 0
    while j < len(spec):
        if spec[j] == -4:
            groups.append((-4, spec[j + 2], spec[j + 1]))
            j += 3
        else:
            groups.append((spec[j],))
            j += 1
    return tuple(v for g in reversed(groups) for v in g)


def _as_shape_of(p, x, y, gy, need):
    # Gradient of every op that only relabels dims (squeeze, Flatten, reshape_like).
    return [gy[0].reshape(x[0].shape)] + [None] * (len(x) - 1)


def _reshape(p, xp, x):
    if p.shape is None:
        raise MXNetError("shape is required")
    return x.reshape(infer_reshape(x.shape, p.shape, p.reverse))


register_op("Reshape", _reshape, gradient=_as_shape_of,
            saves="", is_view=True, batchwise=rows(),
            aliases=("reshape",),
            params=[Param("shape", parse_shape, None, "The target shape, with special codes."),
                    Param("reverse", parse_bool, False, "Match the special codes right to left.")],
            doc="Reshape to ``shape``. Codes: 0 copy, -1 infer, -2 copy the rest, -3 merge "
                "two dims, -4 split a dim.")


def _permutation(p, ndim):
    """The axes ``p.axes`` names in order (reversed when it names none: ``()`` for
    ``transpose``, None for ``_np_transpose``), each in range and each once."""
    if not p.axes:
        return tuple(range(ndim - 1, -1, -1))
    axes = tuple(norm_axis(a, ndim) for a in p.axes)
    if sorted(axes) != list(range(ndim)):
        raise MXNetError("axes=%s is not a permutation of the %d axes" % (p.axes, ndim))
    return axes


def _transpose(p, xp, x):
    return xp.transpose(x, _permutation(p, x.ndim))


def _transpose_grad(p, x, y, gy, need):
    inverse = np.argsort(_permutation(p, x[0].ndim))
    return [nd.transpose(gy[0], axes=tuple(inverse.tolist()))]


register_op("transpose", _transpose, gradient=_transpose_grad, saves="", is_view=True,
            params=[Param("axes", parse_shape, (), "The permutation; reversed axes if empty.")],
            doc="Permute the axes.")


def _broadcast_to(p, xp, x):
    shape = tuple(x.shape[i] if d == 0 else d for i, d in enumerate(p.shape)) \
        if len(p.shape) == x.ndim else p.shape
    for i, (a, b) in enumerate(zip(x.shape, shape)):
        if a != b and a != 1:
            raise MXNetError("cannot broadcast shape %s to %s: dimension %d is %d, not 1"
                             % (x.shape, shape, i, a))
    if len(shape) != x.ndim:
        raise MXNetError("shape %s must have as many dimensions as the input %s"
                         % (shape, x.shape))
    return xp.broadcast_to(x, shape).copy()


def _broadcast_grad(p, x, y, gy, need):
    from ..util import unbroadcast
    return [unbroadcast(gy[0], x[0].shape)]


register_op("broadcast_to", _broadcast_to, gradient=_broadcast_grad, saves="",
            params=[Param("shape", parse_shape, (), "The target shape (0 keeps a dim).")],
            doc="Broadcast to ``shape``: dims of size 1 are repeated.")


def _expand_dims(p, xp, x):
    return xp.expand_dims(x, norm_axis(p.axis, x.ndim + 1))


register_op("expand_dims", _expand_dims, gradient=_as_shape_of,
            saves="", is_view=True,
            params=[Param("axis", parse_int, doc="Where to insert the new axis of size 1.")],
            doc="Insert a new axis of size 1 at ``axis``.")


# -- swapaxes, squeeze, Flatten ---------------------------------------------------

def _swapaxes(p, xp, x):
    return xp.swapaxes(x, norm_axis(p.dim1, x.ndim, "dim1"), norm_axis(p.dim2, x.ndim, "dim2"))


register_op("SwapAxis", lambda p, xp, x: _swapaxes(p, xp, x).copy(), check=ranks(data=1),
            gradient=lambda p, x, y, gy, need: [nd.swapaxes(gy[0], dim1=p.dim1, dim2=p.dim2)],
            saves="", aliases=("swapaxes",),
            params=[Param("dim1", parse_int, 0, "The first axis."),
                    Param("dim2", parse_int, 0, "The second axis.")],
            doc="Swap two axes.")


def _squeeze(p, xp, x):
    if p.axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = tuple(norm_axis(a, x.ndim) for a in p.axis)
        for a in axes:
            if x.shape[a] != 1:
                raise MXNetError("cannot squeeze axis %d of shape %s: its size is %d, not 1"
                                 % (a, x.shape, x.shape[a]))
    shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
    return x.reshape(shape or (1,))     # MXNet keeps one dim when everything is squeezed


register_op("squeeze", _squeeze, gradient=_as_shape_of,
            saves="", is_view=True,
            params=[Param("axis", optional(parse_shape), None,
                          "Axes of size 1 to remove; every size-1 axis if None.")],
            doc="Remove axes of size 1 (a result with no axes left has shape (1,)).")


def _flatten(p, xp, x):
    if x.ndim == 0:
        return x.reshape(1, 1)
    # The product, not -1: -1 cannot be inferred when the first dim is 0.
    return x.reshape(x.shape[0], int(np.prod(x.shape[1:], dtype=np.int64)))


register_op("Flatten", _flatten, gradient=_as_shape_of,
            saves="", is_view=True, batchwise=rows(),
            aliases=("flatten",),
            doc="Collapse every axis but the first: shape (d0, d1*...*dk).")


# -- Concat, stack, SliceChannel, split_v2 -----------------------------------------

def _concat(p, xp, *xs):
    if not xs:
        raise MXNetError("needs at least one input")
    nd0 = xs[0].ndim
    dim = norm_axis(p.dim, nd0, "dim")
    for i, x in enumerate(xs[1:], 1):
        if x.ndim != nd0 or any(a != b for k, (a, b) in enumerate(zip(x.shape, xs[0].shape))
                                if k != dim):
            raise MXNetError("input %d has shape %s, incompatible with input 0 of shape %s "
                             "for dim=%d" % (i, x.shape, xs[0].shape, p.dim))
        if x.dtype != xs[0].dtype:
            raise MXNetError("input %d has dtype %s, input 0 has %s" % (i, x.dtype, xs[0].dtype))
    return xp.concatenate(xs, axis=dim)


def _concat_grad(p, x, y, gy, need):
    dim = norm_axis(p.dim, x[0].ndim)
    gx, begin = [], 0
    for xi in x:
        end = begin + xi.shape[dim]
        gx.append(nd.slice_axis(gy[0], axis=dim, begin=begin, end=end))
        begin = end
    return gx


_NUM_ARGS = Param("num_args", parse_int, 1, "The number of inputs.")


def _variadic_inputs(p):
    """Input names of a variadic op, as MXNet names them in symbols: arg0, arg1, ..."""
    return tuple("arg%d" % i for i in range(p.num_args))
register_op("Concat", _concat, gradient=_concat_grad, saves="", variadic="num_args",
            inputs=_variadic_inputs, batchwise=together(axis_not_batch("dim")),
            aliases=("concat",),
            params=[_NUM_ARGS, Param("dim", parse_int, 1, "The axis to join along.")],
            doc="Join arrays along ``dim``.\n\n>>> mx.nd.concat(mx.nd.ones((2, 1)), "
                "mx.nd.zeros((2, 2)), dim=1).shape  # (2, 3)")


def _stack(p, xp, *xs):
    if not xs:
        raise MXNetError("needs at least one input")
    for i, x in enumerate(xs[1:], 1):
        if x.shape != xs[0].shape:
            raise MXNetError("input %d has shape %s, input 0 has %s; stack needs equal shapes"
                             % (i, x.shape, xs[0].shape))
    return xp.stack(xs, axis=norm_axis(p.axis, xs[0].ndim + 1))


def _stack_grad(p, x, y, gy, need):
    axis = norm_axis(p.axis, x[0].ndim + 1)
    g = nd.split(gy[0], num_outputs=len(x), axis=axis, squeeze_axis=True)
    return list(g) if isinstance(g, list) else [g]


register_op("stack", _stack, gradient=_stack_grad, saves="", variadic="num_args",
            inputs=_variadic_inputs,
            params=[Param("axis", parse_int, 0, "Where the new axis goes."), _NUM_ARGS],
            doc="Join arrays of one shape along a new ``axis``.")


def _split_at(xp, x, axis, bounds, squeeze):
    axis_key = (slice(None),) * axis
    ys = []
    for b, e in zip(bounds[:-1], bounds[1:]):
        y = x[axis_key + (slice(b, e),)]
        if squeeze:
            if y.shape[axis] != 1:
                raise MXNetError("squeeze_axis=True needs parts of size 1 along axis %d, "
                                 "got %d" % (axis, y.shape[axis]))
            y = y.reshape(y.shape[:axis] + y.shape[axis + 1:] or (1,))
        ys.append(y.copy())
    return tuple(ys)


def _slice_channel(p, xp, x):
    axis = norm_axis(p.axis, x.ndim)
    n, d = p.num_outputs, x.shape[axis]
    if n <= 0 or d % n:
        raise MXNetError("cannot split axis %d of size %d (shape %s) into num_outputs=%d equal "
                         "parts" % (axis, d, x.shape, n))
    ys = _split_at(xp, x, axis, [k * (d // n) for k in range(n + 1)], p.squeeze_axis)
    return ys if n > 1 else ys[0]


def _split_grad_for(axis_of):
    def gradient(p, x, y, gy, need):
        axis = axis_of(p, x[0].ndim)
        gy = fill_missing(gy, y)
        parts = [nd.expand_dims(g, axis=axis) if p.squeeze_axis and g.ndim < x[0].ndim else g
                 for g in gy]
        if p.squeeze_axis and x[0].ndim == 1:
            parts = [g.reshape((1,)) for g in gy]
        return [nd.concat(*parts, dim=axis) if len(parts) > 1 else parts[0].reshape(x[0].shape)]
    return gradient


register_op("SliceChannel", _slice_channel, aliases=("split",), saves="",
            batchwise=rows(when=axis_not_batch()),
            gradient=_split_grad_for(lambda p, ndim: norm_axis(p.axis, ndim)),
            num_outputs=lambda p: p.num_outputs,
            params=[Param("num_outputs", parse_int, doc="The number of equal parts.", low=1),
                    Param("axis", parse_int, 1, "The axis to split."),
                    Param("squeeze_axis", parse_bool, False, "Drop the split axis (parts of "
                          "size 1 only).")],
            doc="Split into ``num_outputs`` equal parts along ``axis``.")


def _v2_bounds(p, d):
    if p.sections > 0:
        if d % p.sections:
            raise MXNetError("cannot split an axis of size %d into sections=%d equal parts"
                             % (d, p.sections))
        return [k * (d // p.sections) for k in range(p.sections + 1)]
    return [min(i, d) for i in p.indices] + [d]


def _split_v2(p, xp, x):
    if p.sections <= 0 and not p.indices:
        raise MXNetError("give indices (the split points) or sections > 0")
    axis = norm_axis(p.axis, x.ndim)
    ys = _split_at(xp, x, axis, _v2_bounds(p, x.shape[axis]), p.squeeze_axis)
    return ys if len(ys) > 1 else ys[0]


def _v2_count(p):
    return p.sections if p.sections > 0 else len(p.indices)


register_op("_split_v2", _split_v2, saves="", check=ranks(data=1),
            gradient=_split_grad_for(lambda p, ndim: norm_axis(p.axis, ndim)),
            num_outputs=_v2_count,
            params=[Param("indices", parse_shape, (), "Split points, starting with 0."),
                    Param("axis", parse_int, 0, "The axis to split."),
                    Param("squeeze_axis", parse_bool, False, "Drop the split axis."),
                    Param("sections", parse_int, 0, "Equal parts (when > 0).", low=0)],
            doc="The operator behind ``split_v2``: split at ``indices`` or into ``sections``.")


def _parse_sections(v):
    v = parse_axis(v)
    if v is None:
        raise ValueError("expected an int or a tuple of ints")
    return v


def _v2_params(p):
    if isinstance(p.indices_or_sections, int):
        return _SPLIT_V2.parse_params({"sections": p.indices_or_sections, "axis": p.axis,
                                       "squeeze_axis": p.squeeze_axis})
    return _SPLIT_V2.parse_params({"indices": (0,) + tuple(p.indices_or_sections),
                                   "axis": p.axis, "squeeze_axis": p.squeeze_axis})


_SPLIT_V2 = OPS["_split_v2"]
register_op("split_v2", lambda p, xp, x: _split_v2(_v2_params(p), xp, x), saves="",
            check=ranks(data=1),
            gradient=lambda p, x, y, gy, need: _SPLIT_V2.gradient(_v2_params(p), x, y, gy, need),
            num_outputs=lambda p: _v2_count(_v2_params(p)),
            params=[Param("indices_or_sections", _parse_sections,
                          doc="An int (equal parts) or a tuple of split points."),
                    Param("axis", parse_int, 0, "The axis to split."),
                    Param("squeeze_axis", parse_bool, False, "Drop the split axis.")],
            doc="Split like ``numpy.split``: ``indices_or_sections`` is a number of equal "
                "parts or the points to split at.\n\n>>> [a.shape for a in mx.nd.split_v2("
                "mx.nd.ones((6, 2)), (1, 4))]  # [(1, 2), (3, 2), (2, 2)]")


# -- tile, repeat, reverse -----------------------------------------------------------

def _tile(p, xp, x):
    return xp.tile(x, p.reps) if p.reps else x.copy()


def _tile_grad(p, x, y, gy, need):
    xs = x[0].shape
    n = max(len(xs), len(p.reps))
    shape = (1,) * (n - len(xs)) + xs
    reps = (1,) * (n - len(p.reps)) + tuple(p.reps)
    # gy has dims r_i * d_i: view each as (r_i, d_i) and sum over the r_i.
    split = tuple(v for r, d in zip(reps, shape) for v in (r, d))
    g = nd.sum(gy[0].reshape(split), axis=tuple(range(0, 2 * n, 2)))
    return [g.reshape(xs)]


register_op("tile", _tile, gradient=_tile_grad, saves="",
            check=fits_memory("reps", lambda p, x: x.nbytes * math.prod(p.reps)),
            params=[Param("reps", parse_shape, doc="Repetitions per axis (aligned right).", low=0)],
            doc="Repeat the whole array ``reps`` times along each axis, as ``numpy.tile``.")


def _repeat(p, xp, x):
    if p.axis is None:
        return xp.repeat(x.reshape(-1), p.repeats)
    return xp.repeat(x, p.repeats, axis=norm_axis(p.axis, x.ndim))


def _repeat_grad(p, x, y, gy, need):
    xs = x[0].shape
    if p.axis is None:
        return [nd.sum(gy[0].reshape((-1, p.repeats)), axis=1).reshape(xs)]
    axis = norm_axis(p.axis, len(xs))
    g = gy[0].reshape(xs[:axis + 1] + (p.repeats,) + xs[axis + 1:])
    return [nd.sum(g, axis=axis + 1)]


register_op("repeat", _repeat, gradient=_repeat_grad, saves="",
            check=fits_memory("repeats", lambda p, x: x.nbytes * p.repeats),
            params=[Param("repeats", parse_int, doc="Copies of each element.", low=0),
                    Param("axis", optional(parse_int), None,
                          "The axis; the flattened array if None.")],
            doc="Repeat each element ``repeats`` times along ``axis``.")


def _reverse(p, xp, x):
    axes = norm_axes(p.axis, x.ndim) if p.axis != () else ()
    return xp.flip(x, axis=axes).copy() if axes else x.copy()


register_op("reverse", _reverse, gradient=lambda p, x, y, gy, need: [nd.reverse(gy[0], axis=p.axis)],
            saves="", aliases=("flip",),
            params=[Param("axis", parse_axis, doc="The axis or axes to reverse.")],
            doc="Reverse the order of elements along ``axis``.")


# -- Pad --------------------------------------------------------------------------

_PAD_MODES = ("constant", "edge", "reflect")


def _pad_pairs(p, shape):
    w = p.pad_width
    if len(w) != 2 * len(shape):
        raise MXNetError("pad_width has %d values; expected 2 per axis (%d) for data of shape "
                         "%s" % (len(w), 2 * len(shape), shape))
    pairs = [(w[2 * i], w[2 * i + 1]) for i in range(len(shape))]
    for i, (b, a) in enumerate(pairs):
        if b < 0 or a < 0:
            raise MXNetError("pad_width must be non-negative, got %s" % (w,))
        if p.mode == "reflect" and (b >= shape[i] or a >= shape[i]):
            raise MXNetError("reflect padding of axis %d (size %d) needs pads smaller than the "
                             "size, got (%d, %d)" % (i, shape[i], b, a))
    return pairs


def _pad(p, xp, x):
    pairs = _pad_pairs(p, x.shape)
    if p.mode == "constant":
        return xp.pad(x, pairs, mode="constant", constant_values=p.constant_value)
    return xp.pad(x, pairs, mode=p.mode)


def _pad_source(mode, n, before, after):
    # The input position each output position copies, along one axis.
    i = np.arange(-before, n + after)
    if mode == "edge":
        return np.clip(i, 0, n - 1)
    i = np.abs(i)                                  # reflect, without repeating the edge
    return np.where(i > n - 1, 2 * (n - 1) - i, i)


def _pad_grad(p, x, y, gy, need):
    pairs = _pad_pairs(p, x[0].shape)
    g = gy[0]
    if p.mode == "constant":
        key = tuple(slice(b, b + n) for (b, a), n in zip(pairs, x[0].shape))
        return [g[key] if key else g]
    # edge/reflect: the adjoint of a gather along each padded axis is a scatter-add.
    for axis, ((b, a), n) in enumerate(zip(pairs, x[0].shape)):
        if b or a:
            src = const_like(g, _pad_source(p.mode, n, b, a).astype(np.int64))
            shape = g.shape[:axis] + (n,) + g.shape[axis + 1:]
            g = nd._internal._backward_take(g, src, axis=axis, mode="clip", shape=shape)
    return [g]


register_op("Pad", _pad, gradient=_pad_grad, saves="", aliases=("pad",),
            params=[Param("mode", None, "constant", choices=_PAD_MODES),
                    Param("pad_width", parse_shape, doc="(before, after) per axis, flattened."),
                    Param("constant_value", parse_float, 0.0, "The fill value in constant "
                          "mode.")],
            doc="Pad every axis by ``pad_width``. Unlike MXNet (4-D and 5-D inputs with no "
                "padding on the first two axes), any rank and axis may be padded.")


# -- broadcast_axis, broadcast_like, reshape_like ---------------------------------

def _broadcast_axis(p, xp, x):
    axes = p.axis if isinstance(p.axis, tuple) else (p.axis,) if p.axis is not None else ()
    size = p.size
    if len(axes) != len(size):
        raise MXNetError("axis %s and size %s must have the same length" % (p.axis, size))
    shape = list(x.shape)
    for a, s in zip(axes, size):
        a = norm_axis(a, x.ndim)
        if shape[a] != 1:
            raise MXNetError("axis %d has size %d; only axes of size 1 can be broadcast"
                             % (a, shape[a]))
        shape[a] = s
    return xp.broadcast_to(x, tuple(shape)).copy()


register_op("broadcast_axis", _broadcast_axis, gradient=_broadcast_grad, saves="",
            aliases=("broadcast_axes",),
            params=[Param("axis", parse_axis, (), "Axes of size 1 to broadcast."),
                    Param("size", parse_shape, (), "The new size of each axis.")],
            doc="Broadcast axes of size 1 to ``size``.")


def _like_shape(p, xs, ls):
    if p.lhs_axes is None or p.rhs_axes is None:
        return ls
    la, ra = p.lhs_axes, p.rhs_axes
    if len(la) != len(ra):
        raise MXNetError("lhs_axes %s and rhs_axes %s must have the same length" % (la, ra))
    if not la:
        raise MXNetError("lhs_axes and rhs_axes: an empty tuple of axes is not allowed; "
                         "leave both out to broadcast to rhs's whole shape")
    shape = list(xs)
    for a, b in zip(la, ra):
        shape[norm_axis(a, len(xs), "lhs_axes")] = ls[norm_axis(b, len(ls), "rhs_axes")]
    return tuple(shape)


def _broadcast_like(p, xp, x, like):
    shape = _like_shape(p, x.shape, like.shape)
    if len(shape) != x.ndim or any(a != b and a != 1 for a, b in zip(x.shape, shape)):
        raise MXNetError("cannot broadcast shape %s to %s" % (x.shape, shape))
    return xp.broadcast_to(x, shape).copy()


def _broadcast_like_grad(p, x, y, gy, need):
    from ..util import unbroadcast
    return [unbroadcast(gy[0], x[0].shape), None]


register_op("broadcast_like", _broadcast_like, inputs=("lhs", "rhs"),
            gradient=_broadcast_like_grad, saves="",
            params=[Param("lhs_axes", optional(parse_shape), None, "Axes of lhs to broadcast."),
                    Param("rhs_axes", optional(parse_shape), None, "The matching axes of rhs.")],
            doc="Broadcast ``lhs`` to the shape of ``rhs`` (or of the given axes).")


def _reshape_like(p, xp, x, like):
    xs, ls = x.shape, like.shape
    lb, le = _range(p.lhs_begin, p.lhs_end, len(xs))
    rb, re = _range(p.rhs_begin, p.rhs_end, len(ls))
    shape = xs[:lb] + ls[rb:re] + xs[le:]
    if int(np.prod(shape)) != x.size:
        raise MXNetError("cannot reshape lhs of shape %s to %s (from rhs shape %s): the sizes "
                         "differ" % (xs, shape, ls))
    return x.reshape(shape)


def _range(b, e, n):
    b = 0 if b is None else norm_axis(b, n, "begin")
    e = n if e is None else (e + n if e < 0 else e)
    return b, e


register_op("reshape_like", _reshape_like, inputs=("lhs", "rhs"), gradient=_as_shape_of,
            saves="", is_view=True,
            params=[Param(n, optional(parse_int), None, d) for n, d in (
                ("lhs_begin", "First lhs axis to replace."), ("lhs_end", "End of lhs axes."),
                ("rhs_begin", "First rhs axis to copy."), ("rhs_end", "End of rhs axes."))],
            doc="Reshape ``lhs`` to the shape of ``rhs`` (or replace lhs axes "
                "[lhs_begin, lhs_end) by rhs axes [rhs_begin, rhs_end)).")


# -- depth_to_space, space_to_depth ------------------------------------------------

def _check_4d(x, name):
    if x.ndim != 4:
        raise MXNetError("expected a 4-D (N, C, H, W) input, got shape %s" % (x.shape,))


def _depth_to_space(p, xp, x):
    _check_4d(x, "depth_to_space")
    n, c, h, w = x.shape
    b = p.block_size
    if b <= 0 or c % (b * b):
        raise MXNetError("the channel count %d must be a multiple of block_size^2 = %d"
                         % (c, b * b))
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


def _space_to_depth(p, xp, x):
    _check_4d(x, "space_to_depth")
    n, c, h, w = x.shape
    b = p.block_size
    if b <= 0 or h % b or w % b:
        raise MXNetError("height %d and width %d must be multiples of block_size=%d" % (h, w, b))
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


_BLOCK = [Param("block_size", parse_int, doc="The block edge.", low=1)]
register_op("depth_to_space", _depth_to_space, saves="", params=_BLOCK,
            gradient=lambda p, x, y, gy, need: [nd.space_to_depth(gy[0], block_size=p.block_size)],
            doc="Move channel blocks into spatial blocks: (N, C, H, W) -> "
                "(N, C/b^2, H*b, W*b).")
register_op("space_to_depth", _space_to_depth, saves="", params=_BLOCK,
            gradient=lambda p, x, y, gy, need: [nd.depth_to_space(gy[0], block_size=p.block_size)],
            doc="Move spatial blocks into channels: (N, C, H, W) -> (N, C*b^2, H/b, W/b).")


# -- shape_array, size_array, diag ---------------------------------------------------

register_op("shape_array", lambda p, xp, x: xp.asarray(x.shape, dtype=np.int64).reshape(-1),
            infer_type=lambda p, dtypes: np.dtype(np.int64),
            doc="The shape as a 1-D int64 array.")
register_op("size_array", lambda p, xp, x: xp.asarray([x.size], dtype=np.int64),
            infer_type=lambda p, dtypes: np.dtype(np.int64),
            doc="The number of elements as a (1,) int64 array.")


def _diag(p, xp, x):
    if x.ndim == 0:
        raise MXNetError("expected at least 1 dimension")
    if x.ndim == 1:
        return xp.diag(x, p.k)
    a1, a2 = norm_axis(p.axis1, x.ndim, "axis1"), norm_axis(p.axis2, x.ndim, "axis2")
    if a1 == a2:
        raise MXNetError("axis1 and axis2 must differ, both are %d" % a1)
    y = xp.diagonal(x, p.k, a1, a2).copy()
    return y if y.ndim else y.reshape(1)


def _diag_index(shape, k, a1, a2):
    n = min(shape[a1] - max(-k, 0), shape[a2] - max(k, 0))
    r = np.arange(max(n, 0))
    return r + max(-k, 0), r + max(k, 0)


def _diag_backward(p, xp, gy):
    # Zeros of ``shape`` with ``gy`` on the diagonal (the adjoint of extraction).
    gx = xp.zeros(p.shape, gy.dtype)
    a1, a2 = norm_axis(p.axis1, len(p.shape)), norm_axis(p.axis2, len(p.shape))
    i, j = _diag_index(p.shape, p.k, a1, a2)
    view = xp.moveaxis(gx, (a1, a2), (-2, -1))
    view[..., xp.asarray(i), xp.asarray(j)] = gy.reshape(view.shape[:-2] + (len(i),))
    return gx


def _diag_grad(p, x, y, gy, need):
    if x[0].ndim == 1:
        return [nd.diag(gy[0], k=p.k)]
    op = _DIAG_BWD
    return [apply(op, (gy[0],), Params(op, dict(p.items(), shape=x[0].shape)))]


_DIAG_PARAMS = [Param("k", parse_int, 0, "The diagonal: 0 main, > 0 above, < 0 below."),
                Param("axis1", parse_int, 0, "First axis of the 2-D sub-arrays."),
                Param("axis2", parse_int, 1, "Second axis of the 2-D sub-arrays.")]
register_op("diag", _diag, gradient=_diag_grad, saves="", params=_DIAG_PARAMS,
            doc="The ``k``-th diagonal of an N-D array (over ``axis1``/``axis2``), or a 2-D "
                "array with a 1-D input on its ``k``-th diagonal.")
_DIAG_BWD = register_op(
    "_backward_diag", _diag_backward, saves="",
    check=fits_memory("shape", lambda p, gy: math.prod(p.shape) * gy.itemsize),
    gradient=lambda p, x, y, gy, need: [nd.diag(gy[0], k=p.k, axis1=p.axis1, axis2=p.axis2)],
    params=_DIAG_PARAMS + [Param("shape", parse_shape, doc="The input shape.", low=0)],
    doc="Zeros of ``shape`` with the input on the ``k``-th diagonal.")
