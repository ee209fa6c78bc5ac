"""Matrix and contraction ops of the np interface, under MXNet 1.9.1's names, with
MXNet's gradients: ``_npi_tril``, ``_np_trace``, ``_np_diag``, ``_np_diagonal``,
``_np_roll``, ``_npi_rot90``, ``_npi_diff``, ``_npi_arctan2`` (and its two scalar forms), ``_npi_tensordot``,
``_npi_tensordot_int_axes`` and ``_npi_einsum``. ``mx.np.inner``/``outer``/``vdot``
compose tensordot as MXNet's do.

Each gradient is written with these same ops (tensordot's with tensordot, einsum's with
einsum), so it differentiates again.
"""
import numpy as onp

from ... import nd
from ...base import (MXNetError, optional, parse_bool, parse_float, parse_int, parse_shape,
                     parse_str)
from ..registry import OPS, Param, apply, ranks, register_op
from ..util import const_like, norm_axis, unbroadcast
from .elemwise import promote


def _op(name, *x, **params):
    """np op ``name`` as a gradient rule calls it (raw arrays or NDArrays)."""
    op = OPS[name]
    return apply(op, x, op.parse_params(params) if params else op.default_params)


# -- triangles, diagonals, trace, roll ------------------------------------------------------

def _tril_grad(p, x, y, gy, need):
    g = _op("_npi_tril", gy[0], k=p.k)
    return [nd.sum(g, axis=0) if x[0].ndim == 1 else g]


register_op("_npi_tril", lambda p, xp, x: xp.tril(x, p.k), inputs=("data",), saves="",
            check=ranks(data=1),
            params=[Param("k", parse_int, 0, "The diagonal at and below which to keep.")],
            gradient=_tril_grad, doc="The lower triangle of (a stack of) matrices.")

_DIAG_AXES = [Param("offset", parse_int, 0, "The diagonal (> 0 above the main one)."),
              Param("axis1", parse_int, 0, "The rows' axis."),
              Param("axis2", parse_int, 1, "The columns' axis.")]


def _two_axes(x, axis1, axis2, what=("axis1", "axis2")):
    """Two different axes of a >= 2-D array ``x`` (trace, diagonal, rot90's plane)."""
    if x.ndim < 2:
        raise MXNetError("data expected at least 2 dims, got shape %s" % (x.shape,))
    a1, a2 = norm_axis(axis1, x.ndim, what[0]), norm_axis(axis2, x.ndim, what[1])
    if a1 == a2:
        raise MXNetError("%s and %s expected two different axes of data of shape %s, got %d "
                         "and %d" % (what + (x.shape, axis1, axis2)))
    return a1, a2


def _diag_axes_rule(p, x):
    _two_axes(x, p.axis1, p.axis2)


def _diag_mask(p, shape, xp=onp):
    """A 0/1 array of ``shape`` marking diagonal ``offset`` of axes (axis1, axis2)."""
    a1, a2 = norm_axis(p.axis1, len(shape)), norm_axis(p.axis2, len(shape))
    eye = onp.eye(shape[a1], shape[a2], p.offset)
    keep = [1] * len(shape)
    keep[a1], keep[a2] = shape[a1], shape[a2]
    return eye.reshape(keep) if a1 < a2 else eye.T.reshape(keep)


def _trace_grad(p, x, y, gy, need):
    a = x[0]
    a1, a2 = norm_axis(p.axis1, a.ndim), norm_axis(p.axis2, a.ndim)
    g = gy[0]
    for ax in sorted((a1, a2)):
        g = nd.expand_dims(g, axis=ax)
    return [g * const_like(g, _diag_mask(p, a.shape).astype(a.dtype))]


register_op("_np_trace", lambda p, xp, x: xp.asarray(xp.trace(x, p.offset, p.axis1, p.axis2)),
            inputs=("data",), params=_DIAG_AXES, gradient=_trace_grad, saves="x",
            check=_diag_axes_rule,
            doc="The sum along a diagonal (``mx.np.trace``).")


def _diagonal_grad(p, x, y, gy, need):
    # each diagonal entry's gradient back in its place: sum_k gy[..., k] * place[k]
    a = x[0]
    a1, a2 = norm_axis(p.axis1, a.ndim), norm_axis(p.axis2, a.ndim)
    n = y[0].shape[-1]
    place = onp.zeros((n, a.shape[a1], a.shape[a2]), a.dtype)
    place[onp.arange(n), onp.arange(n) + max(-p.offset, 0), onp.arange(n) + max(p.offset, 0)] = 1
    g = nd.sum(nd.expand_dims(nd.expand_dims(gy[0], axis=-1), axis=-1)
               * const_like(gy[0], place), axis=-3)
    rest = [i for i in range(a.ndim) if i not in (a1, a2)]
    return [nd.transpose(g, axes=tuple(int(i) for i in onp.argsort(rest + [a1, a2])))]


register_op("_np_diagonal", lambda p, xp, x: xp.diagonal(x, p.offset, p.axis1, p.axis2).copy(),
            inputs=("data",), params=_DIAG_AXES, gradient=_diagonal_grad, saves="",
            check=_diag_axes_rule,
            doc="A diagonal of (a stack of) matrices, as the last axis.")


def _diag(p, xp, x):
    if x.ndim not in (1, 2):
        raise MXNetError("input must be 1-D or 2-D, got shape %s" % (x.shape,))
    return xp.diag(x, p.k).copy()


def _diag_grad(p, x, y, gy, need):
    if x[0].ndim == 2:      # the diagonal of a matrix: as diagonal(x, k)'s gradient
        return _diagonal_grad(OPS["_np_diagonal"].parse_params({"offset": p.k}), x, y, gy,
                              need)
    return [_op("_np_diag", gy[0], k=p.k)]


register_op("_np_diag", _diag, inputs=("data",), gradient=_diag_grad, saves="",
            params=[Param("k", parse_int, 0, "The diagonal.")],
            doc="The diagonal of a matrix, or a matrix with a vector on its diagonal.")


def _roll(p, xp, x):
    if p.shift is None:
        raise MXNetError("shift is required")
    if p.axis is not None:
        if len(p.shift) not in (1, len(p.axis)):
            raise MXNetError("shift has %d values, expected 1 or one per axis (%d)"
                             % (len(p.shift), len(p.axis)))
        for a in p.axis:
            norm_axis(a, x.ndim)
    if p.axis is None and len(p.shift) != 1:
        raise MXNetError("shift must be one number when axis is None, got %s" % (p.shift,))
    shift = p.shift[0] if p.axis is None else p.shift
    return xp.roll(x, shift, p.axis)


def _roll_grad(p, x, y, gy, need):
    return [_op("_np_roll", gy[0], shift=tuple(-s for s in p.shift), axis=p.axis)]


register_op("_np_roll", _roll, inputs=("data",), gradient=_roll_grad, saves="",
            params=[Param("shift", optional(parse_shape), None, "How far to roll (per axis)."),
                    Param("axis", optional(parse_shape), None, "The axes; None: the flattened array.")],
            doc="Roll elements along axes (``mx.np.roll``).")


def _rot90_axes(p):
    return (0, 1) if p.axes is None else tuple(p.axes)


def _rot90_rule(p, x):
    axes = _rot90_axes(p)
    if len(axes) != 2:
        raise MXNetError("axes expected 2 values (a plane), got %s" % (axes,))
    _two_axes(x, axes[0], axes[1], ("axes[0]", "axes[1]"))


register_op("_npi_rot90", lambda p, xp, x: xp.rot90(x, p.k, _rot90_axes(p)).copy(),
            inputs=("data",), saves="", check=_rot90_rule,
            gradient=lambda p, x, y, gy, need: [_op("_npi_rot90", gy[0], k=-p.k,
                                                    axes=_rot90_axes(p))],
            params=[Param("k", parse_int, 1, "How many quarter turns."),
                    Param("axes", optional(parse_shape), None, "The plane; None: (0, 1).")],
            doc="Rotate by 90 degrees ``k`` times in the plane of ``axes``. NOTE: the "
                "gradient turns back by -k; MXNet 1.9.1's turns it on by k (a wrong "
                "gradient for k = 1, 3); mxlite's is the derivative.")


def _diff_grad(p, x, y, gy, need):
    # the adjoint of one difference along the axis: g[i-1] - g[i] (zero beyond the ends)
    g = gy[0]
    axis = norm_axis(p.axis, x[0].ndim)
    for _ in range(p.n):
        zero = nd.slice_axis(g, axis=axis, begin=0, end=1) * 0 if g.shape[axis] else \
            nd.zeros_like(nd.slice_axis(x[0], axis=axis, begin=0, end=1))
        g = nd.concat(zero, g, dim=axis) - nd.concat(g, zero, dim=axis)
    return [g]


register_op("_npi_diff", lambda p, xp, x: xp.diff(x, p.n, norm_axis(p.axis, x.ndim)),
            inputs=("a",), gradient=_diff_grad, saves="", check=ranks(a=1),
            params=[Param("n", parse_int, 1, "How many times to difference.", low=0),
                    Param("axis", parse_int, -1, "The axis.")],
            doc="The ``n``-th discrete difference along ``axis``.")


# -- arctan2 --------------------------------------------------------------------------------

def _arctan2(p, xp, a, b):
    dt = promote(a.dtype, b.dtype)
    dt = dt if dt.kind == "f" else onp.dtype(onp.float32)
    return xp.arctan2(a.astype(dt, copy=False), b.astype(dt, copy=False))


def _arctan2_grad(p, x, y, gy, need):
    # d atan2(a, b) = (b da - a db) / (a^2 + b^2)
    a, b = x
    r = gy[0] / (a * a + b * b)
    return [unbroadcast(r * b, a.shape) if need[0] else None,
            unbroadcast(-r * a, b.shape) if need[1] else None]


register_op("_npi_arctan2", _arctan2, inputs=("x1", "x2"), gradient=_arctan2_grad, saves="x",
            infer_type=lambda p, dt: [_arctan2(p, onp, onp.zeros(0, dt[0]),
                                               onp.zeros(0, dt[1])).dtype],
            doc="Elementwise arctan(x1 / x2) in the right quadrant, with broadcasting.")

_SCALAR = [Param("scalar", parse_float, 1.0, "The scalar operand."),
           Param("is_int", parse_bool, True, "Whether the scalar is an integer.")]


def _float(xp, x):
    return x if x.dtype.kind == "f" else x.astype(onp.float32)


register_op("_npi_arctan2_scalar",
            lambda p, xp, x: xp.arctan2(_float(xp, x), _float(xp, x).dtype.type(p.scalar)),
            inputs=("data",), params=_SCALAR, saves="x",
            gradient=lambda p, x, y, gy, need: [gy[0] * p.scalar / (x[0] * x[0]
                                                                   + p.scalar ** 2)],
            doc="Elementwise arctan(x / scalar).")
register_op("_npi_rarctan2_scalar",
            lambda p, xp, x: xp.arctan2(_float(xp, x).dtype.type(p.scalar), _float(xp, x)),
            inputs=("data",), params=_SCALAR, saves="x",
            gradient=lambda p, x, y, gy, need: [-gy[0] * p.scalar / (x[0] * x[0]
                                                                    + p.scalar ** 2)],
            doc="Elementwise arctan(scalar / x). NOTE: MXNet 1.9.1's gradient here is "
                "-x / (x^2 + s^2), not the derivative -s / (x^2 + s^2); mxlite's is the "
                "derivative.")


# -- tensordot, einsum ------------------------------------------------------------------------

def _summed_axes(p, a, b):
    k = p.get("axes")           # _npi_tensordot_int_axes: the last k of a, first k of b
    if k is not None:
        if k > min(a.ndim, b.ndim):
            raise MXNetError("axes=%d expected at most the dims of a %s and b %s"
                             % (k, a.shape, b.shape))
        return list(range(a.ndim - k, a.ndim)), list(range(k))
    return ([norm_axis(i, a.ndim) for i in p.a_axes_summed],
            [norm_axis(i, b.ndim) for i in p.b_axes_summed])


def _tensordot(p, xp, a, b):
    ax_a, ax_b = _summed_axes(p, a, b)
    if [a.shape[i] for i in ax_a] != [b.shape[i] for i in ax_b]:
        raise MXNetError("shape mismatch for the summed axes: a %s over %s, b %s over %s"
                         % (a.shape, ax_a, b.shape, ax_b))
    if not ax_a:    # the outer product (CuPy's tensordot refuses a 0-d input here)
        return xp.asarray(a.reshape(a.shape + (1,) * b.ndim) * b)
    return xp.asarray(xp.tensordot(a, b, (ax_a, ax_b)))


def _tensordot_grad(p, x, y, gy, need):
    # y = sum over the paired axes; each gradient contracts gy with the other input
    # over that input's free axes, then puts the axes back in order
    a, b = x
    ax_a, ax_b = _summed_axes(p, a, b)
    free_a = [i for i in range(a.ndim) if i not in ax_a]
    free_b = [i for i in range(b.ndim) if i not in ax_b]
    na, nb = len(free_a), len(free_b)
    g = gy[0]
    ga = gb = None
    if need[0]:     # t: free_a, then a's summed axes in the order b holds their pairs
        t = _op("_npi_tensordot", g, b, a_axes_summed=tuple(range(na, na + nb)),
                b_axes_summed=tuple(free_b))
        order = free_a + [ax_a[ax_b.index(i)] for i in sorted(ax_b)]
        ga = _op("_np_transpose", t, axes=tuple(int(i) for i in onp.argsort(order)))
    if need[1]:
        t = _op("_npi_tensordot", g, a, a_axes_summed=tuple(range(na)),
                b_axes_summed=tuple(free_a))
        order = free_b + [ax_b[ax_a.index(i)] for i in sorted(ax_a)]
        gb = _op("_np_transpose", t, axes=tuple(int(i) for i in onp.argsort(order)))
    return [ga, gb]


_TD = dict(inputs=("a", "b"), gradient=_tensordot_grad, saves="x",
           infer_type=lambda p, dt: [promote(onp.dtype(dt[0]), onp.dtype(dt[1]))])
register_op("_npi_tensordot", _tensordot, **_TD,
            params=[Param("a_axes_summed", parse_shape, doc="Axes of a to sum over."),
                    Param("b_axes_summed", parse_shape, doc="Axes of b, in pairs with a's.")],
            doc="Sum of products over the paired axes (``mx.np.tensordot``).")
register_op("_npi_tensordot_int_axes", _tensordot, **_TD,
            params=[Param("axes", parse_int, doc="Sum over the last `axes` axes of a and "
                                                  "the first of b.", low=0)],
            doc="``tensordot`` with an integer ``axes``.")


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _einsum(p, xp, *x):
    try:
        return xp.asarray(xp.einsum(p.subscripts, *x, optimize=bool(p.optimize)))
    except ValueError as e:     # the subscripts are a small language: NumPy's parser says
        raise MXNetError("subscripts=%r expected to fit operands of shapes %s: %s"
                         % (p.subscripts, ", ".join(str(a.shape) for a in x), e)) from None


def _explicit_subscripts(subscripts, shapes):
    """``subscripts`` with every '...' written out as letters the expression does not use
    (right-aligned, as broadcasting aligns them), and the output made explicit (NumPy's
    implicit output: the broadcast axes, then the labels used once, sorted)."""
    subscripts = subscripts.replace(" ", "")
    lhs, arrow, out = subscripts.partition("->")
    ins = lhs.split(",")
    if not arrow:
        out = "..." + "".join(sorted(c for c in set(lhs) - {",", "."} if lhs.count(c) == 1))
    if "." not in subscripts + out:
        return ins, out
    spare = [c for c in _LETTERS if c not in subscripts]
    n_broadcast = max((len(shape) - len(sub.replace("...", "")) for sub, shape in
                       zip(ins, shapes) if "..." in sub), default=0)
    axes = "".join(spare[:n_broadcast])

    def written(sub, ndim):
        if "..." not in sub:
            return sub
        n = ndim - len(sub.replace("...", ""))
        return sub.replace("...", axes[n_broadcast - n:] if n else "")
    return [written(sub, len(shape)) for sub, shape in zip(ins, shapes)], \
        written(out, len(out.replace("...", "")) + n_broadcast)


def _einsum_grad(p, x, y, gy, need):
    # d/dx_i: einsum of gy with the other operands, into x_i's subscripts
    ins, out = _explicit_subscripts(p.subscripts, [xi.shape for xi in x])
    gx = []
    for i, (xi, sub) in enumerate(zip(x, ins)):
        if not need[i]:
            gx.append(None)
            continue
        others = [s for j, s in enumerate(ins) if j != i]
        # axes of x_i summed away in the forward (in no other operand nor the output)
        kept = _unique(c for c in sub if c in out or any(c in s for s in others))
        args = [gy[0]] + [xj for j, xj in enumerate(x) if j != i]
        g = _op("_npi_einsum", *args, subscripts="%s->%s" % (",".join([out] + others), kept),
                num_args=len(args), optimize=p.optimize)
        # an axis x_i has once where the others broadcast it sums back to one
        g = unbroadcast(g, tuple(xi.shape[sub.index(c)] for c in kept))
        gx.append(_expand_to_subscripts(g, kept, sub, xi.shape))
    return gx


def _unique(s):
    return "".join(dict.fromkeys(s))


def _expand_to_subscripts(g, have, want, shape):
    """``g`` (labelled ``have``) broadcast to x_i's labels ``want`` and ``shape``
    (repeated labels are diagonals: the gradient lives on them only)."""
    if have == want:
        return g
    full = _unique(want)
    for c in full:
        if c not in have:
            g = nd.expand_dims(g, axis=full.index(c))
    target = tuple(shape[want.index(c)] for c in full)
    g = nd.broadcast_to(g, shape=target) if g.shape != target else g
    if full == want:
        return g
    # a label repeated in x_i's subscripts (a diagonal): each repeat becomes a fresh
    # label tied to the first by an identity matrix
    fresh = (c for c in _LETTERS if c not in want)
    labels, ties, seen = [], [], set()
    for c in want:
        if c in seen:
            f = next(fresh)
            labels.append(f)
            ties.append(c + f)
        else:
            seen.add(c)
            labels.append(c)
    eyes = [const_like(g, onp.eye(shape[want.index(t[0])], dtype=g.dtype)) for t in ties]
    return _op("_npi_einsum", g, *eyes, subscripts="%s->%s" % (",".join([full] + ties),
                                                               "".join(labels)),
               num_args=1 + len(eyes))


register_op("_npi_einsum", _einsum, inputs=lambda p: ["data%d" % i for i in range(p.num_args)],
            variadic="num_args", gradient=_einsum_grad, saves="x",
            params=[Param("num_args", parse_int), Param("subscripts", parse_str, ""),
                    Param("optimize", parse_int, 0, "Search for a cheaper contraction order.",
                          low=0)],
            infer_type=lambda p, dt: [dt[0]],
            doc="Einstein summation (``mx.np.einsum``).")
