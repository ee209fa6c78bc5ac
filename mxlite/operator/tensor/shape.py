"""Shape ops: reshape (with MXNet's special codes), transpose, broadcast_to, expand_dims."""
import numpy as np

from ... import nd
from ...base import MXNetError, parse_shape, parse_bool, parse_int
from ..registry import register_op, Param
from ..util import norm_axis


def infer_reshape(src, spec, reverse=False):
    """The target shape of MXNet's ``reshape(shape=spec)`` for an input of shape ``src``.

    Codes: ``0`` copies the input dim, ``-1`` infers it, ``-2`` copies all the
    remaining dims, ``-3`` merges two input dims, ``-4 a b`` splits one dim into
    ``a`` and ``b`` (one of them may be -1). ``reverse`` matches right to left.
    """
    src = tuple(src)
    spec = tuple(spec)
    if reverse:
        src = src[::-1]
        spec = _reverse_spec(spec)
    out = []
    infer_at = -1
    i = j = 0
    try:
        while j < len(spec):
            s = spec[j]
            if s > 0:
                out.append(s)
                i += 1
            elif s == 0:
                out.append(src[i])
                i += 1
            elif s == -1:
                if infer_at >= 0:
                    raise MXNetError("reshape: only one dimension can be -1 in shape=%s" % (spec,))
                infer_at = len(out)
                out.append(1)
                i += 1
            elif s == -2:
                out.extend(src[i:])
                i = len(src)
            elif s == -3:
                out.append(src[i] * src[i + 1])
                i += 2
            elif s == -4:
                d1, d2 = spec[j + 1], spec[j + 2]
                j += 2
                if d1 == -1 and d2 == -1:
                    raise MXNetError("reshape: -4 cannot split into two -1 dims")
                if d1 == -1:
                    d1 = src[i] // d2
                if d2 == -1:
                    d2 = src[i] // d1
                if d1 * d2 != src[i]:
                    raise MXNetError("reshape: -4 splits dimension %d of size %d into %d x %d"
                                     % (i, src[i], d1, d2))
                out.extend((d1, d2))
                i += 1
            else:
                raise MXNetError("reshape: invalid value %d in shape=%s" % (s, spec))
            j += 1
    except IndexError:
        raise MXNetError("reshape: shape=%s refers to more dimensions than the input shape %s has"
                         % (spec, src)) from None
    total = int(np.prod(src, dtype=np.int64))
    if infer_at >= 0:
        known = int(np.prod(out, dtype=np.int64))
        if known == 0 or total % known:
            raise MXNetError("reshape: cannot infer the -1 dimension of shape=%s for an input of "
                             "shape %s" % (spec, src[::-1] if reverse else src))
        out[infer_at] = total // known
    if int(np.prod(out, dtype=np.int64)) != total:
        raise MXNetError("reshape: target shape %s has %d elements but the input of shape %s "
                         "has %d" % (tuple(out[::-1] if reverse else out), int(np.prod(out)),
                                     src[::-1] if reverse else src, total))
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


def _reshape(p, xp, x):
    if p.shape is None:
        raise MXNetError("shape is required")
    return x.reshape(infer_reshape(x.shape, p.shape, p.reverse))


def _reshape_grad(p, x, y, gy):
    return [gy[0].reshape(x[0].shape)]


register_op("Reshape", _reshape, gradient=_reshape_grad, saves="", is_view=True,
            aliases=("reshape",),
            params=[Param("shape", parse_shape, None, "The target shape, with special codes."),
                    Param("reverse", parse_bool, False, "Match the special codes right to left.")],
            doc="Reshape to ``shape``. Codes: 0 copy, -1 infer, -2 copy the rest, -3 merge "
                "two dims, -4 split a dim.")


def _transpose(p, xp, x):
    if p.axes:
        if sorted(a % x.ndim for a in p.axes) != list(range(x.ndim)):
            raise MXNetError("axes=%s is not a permutation of the %d axes"
                             % (p.axes, x.ndim))
        return xp.transpose(x, p.axes)
    return xp.transpose(x)


def _transpose_grad(p, x, y, gy):
    nd_ = x[0].ndim
    axes = tuple(a % nd_ for a in p.axes) if p.axes else tuple(reversed(range(nd_)))
    return [nd.transpose(gy[0], axes=tuple(np.argsort(axes).tolist()))]


register_op("transpose", _transpose, gradient=_transpose_grad, saves="",
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


def _broadcast_grad(p, x, y, gy):
    from ..util import unbroadcast
    return [unbroadcast(gy[0], x[0].shape)]


register_op("broadcast_to", _broadcast_to, gradient=_broadcast_grad, saves="",
            params=[Param("shape", parse_shape, (), "The target shape (0 keeps a dim).")],
            doc="Broadcast to ``shape``: dims of size 1 are repeated.")


def _expand_dims(p, xp, x):
    return xp.expand_dims(x, norm_axis(p.axis, x.ndim + 1))


register_op("expand_dims", _expand_dims, gradient=_reshape_grad, saves="", is_view=True,
            params=[Param("axis", parse_int, doc="Where to insert the new axis of size 1.")],
            doc="Insert a new axis of size 1 at ``axis``.")
