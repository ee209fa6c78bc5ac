"""Numeric np ops that MXNet 1.9.1 runs as operators (not NumPy fallbacks), under its
names, with gradients: ``_npi_pad``, ``_npi_copysign``, ``_npi_ldexp`` (and their
scalar forms),
``_npi_nan_to_num`` and ``_npi_polyval``; and ``_npi_delete``, without one (as in
MXNet).

Each gradient is written with ops (or with masks that are constant where the op is
differentiable), so it differentiates again.
"""
import ast

import numpy as onp

from ...base import MXNetError, optional, parse_bool, parse_float, parse_int, parse_str
from ..registry import REQUIRED, Param, ranks, register_op
from ..util import const_like, host, norm_axis, same_dtype, unbroadcast
from .elemwise import promote
from .matrix import _SCALAR, _op


def _raw(a):
    return a.asnumpy() if hasattr(a, "asnumpy") else host(a)


# -- pad --------------------------------------------------------------------------------------

_PAD_MODES = ("constant", "edge", "maximum", "minimum", "reflect", "symmetric")


def _parse_pad_width(v):
    if isinstance(v, str):
        v = ast.literal_eval(v)
    w = onp.asarray(v)
    if w.dtype.kind not in "iu" or w.ndim > 2 or w.size == 0:
        raise MXNetError("pad_width expected ints as ((before, after), ...), got %r" % (v,))
    return tuple(tuple(int(e) for e in r) for r in onp.atleast_2d(w))


def _pad_widths(p, x):
    try:
        w = onp.broadcast_to(onp.asarray(p.pad_width), (x.ndim, 2))
    except ValueError:
        raise MXNetError("pad_width %s expected one (before, after) pair per axis of data "
                         "of shape %s" % (p.pad_width, x.shape)) from None
    if (w < 0).any():
        raise MXNetError("pad_width expected no negative widths, got %s" % (p.pad_width,))
    return [tuple(int(e) for e in r) for r in w]


def _pad(p, xp, x):
    w = _pad_widths(p, x)
    if p.mode == "constant":
        return xp.pad(x, w, mode="constant", constant_values=p.constant_value)
    if x.size == 0 and any(a or b for a, b in w):
        raise MXNetError("mode=%r expected non-empty data, got shape %s" % (p.mode, x.shape))
    if p.mode in ("reflect", "symmetric"):
        return xp.pad(x, w, mode=p.mode, reflect_type=p.reflect_type)
    return xp.pad(x, w, mode=p.mode)


def _pad_grad(p, x, y, gy, need):
    if p.mode != "constant":    # as MXNet 1.9.1's backward
        raise MXNetError("_npi_pad: the gradient of mode=%r is not supported (only "
                         "'constant')" % p.mode)
    w = _pad_widths(p, x[0])
    key = tuple(slice(a, a + n) for (a, _), n in zip(w, x[0].shape))
    return [gy[0][key]]


register_op("_npi_pad", _pad, inputs=("data",), gradient=_pad_grad, saves="x",
            check=ranks(data=1),
            params=[Param("pad_width", _parse_pad_width, REQUIRED,
                          "(before, after) per axis, or one pair for all."),
                    Param("mode", parse_str, "constant", "How to fill the border.",
                          choices=_PAD_MODES),
                    Param("constant_value", parse_float, 0.0, "The fill of 'constant'."),
                    Param("reflect_type", parse_str, "even", "'even' or 'odd'.",
                          choices=("even", "odd"))],
            doc="Pad an array (``mx.np.pad``). The gradient (mode 'constant' only, as in "
                "MXNet) is the centre slice.")


# -- copysign, ldexp --------------------------------------------------------------------------

def _same_dtypes():
    """A ``check``: both arrays of one dtype, as MXNet 1.9.1's two-array copysign and
    ldexp require (it computes in that dtype; integer results truncate)."""
    def check(p, a, b):
        same_dtype(check.op.name, a, b)
    check.op = None     # set by Op
    return check


def _copysign(p, xp, a, b):
    return xp.copysign(a, b).astype(a.dtype, copy=False)


def _copysign_grad(p, x, y, gy, need):
    a, b = x
    flip = onp.where(onp.signbit(_raw(a)) == onp.signbit(_raw(b)), 1.0, -1.0)
    return [unbroadcast(gy[0] * const_like(gy[0], flip.astype(y[0].dtype)), a.shape)
            if need[0] else None,
            unbroadcast(gy[0] * 0, b.shape) if need[1] else None]


def _ldexp(p, xp, a, b):
    if a.dtype.kind == "f":
        return (a * xp.power(a.dtype.type(2), b)).astype(a.dtype, copy=False)
    return (a * xp.power(2.0, b)).astype(a.dtype)      # int: truncated, as MXNet's


def _ldexp_grad(p, x, y, gy, need):
    # y = a 2^b: dy/da = 2^b, dy/db = a 2^b ln 2
    a, b = x
    scale = 2.0 ** b
    return [unbroadcast(gy[0] * scale, a.shape) if need[0] else None,
            unbroadcast(gy[0] * a * scale * onp.log(2.0), b.shape) if need[1] else None]


def _scalar_of(x, p):
    """``x`` and the scalar in ``x``'s dtype (an integer ``x`` truncates it, and the
    result stays integer, as MXNet 1.9.1's)."""
    return x, x.dtype.type(p.scalar)


def _in_dtype_of(fn):
    """A scalar op's kernel ``fn(xp, a, b)`` on data and scalar in the data's dtype."""
    def compute(p, xp, x, flip=False):
        a, b = _scalar_of(x, p)
        return xp.asarray(fn(xp, *((b, a) if flip else (a, b)))).astype(x.dtype, copy=False)
    return compute


def _copysign_scalar_grad(p, x, y, gy, need):
    flip = onp.where(onp.signbit(_raw(x[0])) == onp.signbit(p.scalar), 1.0, -1.0)
    return [gy[0] * const_like(gy[0], flip.astype(y[0].dtype))]


def _ldexp_kernel(xp, a, b):
    return _ldexp(None, xp, xp.asarray(a), xp.asarray(b))


_copysign_s, _ldexp_s = _in_dtype_of(lambda xp, a, b: xp.copysign(a, b)), \
    _in_dtype_of(_ldexp_kernel)
register_op("_npi_copysign_scalar", _copysign_s, inputs=("data",), params=_SCALAR,
            gradient=_copysign_scalar_grad, saves="x",
            doc="The magnitude of data with the sign of the scalar. NOTE: MXNet 1.9.1's "
                "backward of the scalar forms fails; mxlite's is the derivative.")
register_op("_npi_rcopysign_scalar", lambda p, xp, x: _copysign_s(p, xp, x, True),
            inputs=("data",), params=_SCALAR, saves="",
            gradient=lambda p, x, y, gy, need: [gy[0] * 0],
            doc="The magnitude of the scalar with the sign of data (a zero gradient).")
register_op("_npi_ldexp_scalar", _ldexp_s, inputs=("data",), params=_SCALAR, saves="",
            gradient=lambda p, x, y, gy, need: [gy[0] * 2.0 ** p.scalar],
            doc="data * 2**scalar.")
register_op("_npi_rldexp_scalar", lambda p, xp, x: _ldexp_s(p, xp, x, True),
            inputs=("data",), params=_SCALAR, saves="x",
            gradient=lambda p, x, y, gy, need: [gy[0] * p.scalar * 2.0 ** x[0]
                                                * onp.log(2.0)],
            doc="scalar * 2**data.")
register_op("_npi_copysign", _copysign, inputs=("lhs", "rhs"), gradient=_copysign_grad,
            saves="xy", check=_same_dtypes(),
            doc="The magnitude of lhs with the sign of rhs, with broadcasting.")
register_op("_npi_ldexp", _ldexp, inputs=("lhs", "rhs"), gradient=_ldexp_grad, saves="x",
            check=_same_dtypes(), doc="lhs * 2**rhs, with broadcasting.")


# -- nan_to_num -------------------------------------------------------------------------------

def _nan_to_num(p, xp, x):
    if x.dtype.kind != "f":
        return x.copy()
    return xp.nan_to_num(x, copy=True, nan=p.nan, posinf=p.posinf, neginf=p.neginf)


def _nan_to_num_grad(p, x, y, gy, need):
    keep = onp.isfinite(_raw(x[0])) if _raw(x[0]).dtype.kind == "f" else 1.0
    return [gy[0] * const_like(gy[0], onp.asarray(keep, dtype=gy[0].dtype))]


register_op("_npi_nan_to_num", _nan_to_num, inputs=("data",), gradient=_nan_to_num_grad,
            saves="x",
            params=[Param("copy", parse_bool, True, "Accepted; a new array always."),
                    Param("nan", parse_float, 0.0, "What NaN becomes."),
                    Param("posinf", optional(parse_float), None, "What +inf becomes (None: the max)."),
                    Param("neginf", optional(parse_float), None, "What -inf becomes (None: the min).")],
            doc="NaN and infinities replaced by finite numbers; the gradient is 1 at "
                "finite entries, 0 elsewhere.")


# -- polyval ----------------------------------------------------------------------------------

def _polyval_rule(p, c, x):
    if c.ndim != 1:
        raise MXNetError("_npi_polyval: p expected 1 dim (the coefficients), got shape %s"
                         % (c.shape,))


def _polyval(p, xp, c, x):
    dt = promote(c.dtype, x.dtype)
    y = xp.zeros(x.shape, dt)
    for ci in c.astype(dt, copy=False):         # Horner's rule
        y = y * x + ci
    return y.astype(dt, copy=False)


def _polyval_grad(p, x, y, gy, need):
    c, v = x
    n = c.shape[0]
    gc = gv = None
    if need[1]:     # the derivative polynomial, at x
        if n > 1:
            der = c[:n - 1] * const_like(c, onp.arange(n - 1, 0, -1).astype(c.dtype))
            gv = gy[0] * _op("_npi_polyval", der, v)
        else:
            gv = gy[0] * 0
    if need[0]:     # dy/dc_i = x^(n-1-i), summed against gy
        gc = _op("_npi_stack", *[_op("_np_sum", gy[0] * v ** (n - 1 - i))
                                 for i in range(n)], axis=0, num_args=n)
    return [gc, gv]


register_op("_npi_polyval", _polyval, inputs=("p", "x"), gradient=_polyval_grad, saves="x",
            check=_polyval_rule,
            infer_type=lambda p, dt: [promote(onp.dtype(dt[0]), onp.dtype(dt[1]))],
            doc="The polynomial with coefficients p (highest power first) at x. NOTE: "
                "MXNet 1.9.1's gradient in x is not the derivative; mxlite's is.")


# -- delete -----------------------------------------------------------------------------------

def _delete(p, xp, arr, obj=None):
    a, axis = (arr.reshape(-1), 0) if p.axis is None else (arr, p.axis)
    if a.ndim == 0:
        raise MXNetError("_npi_delete: arr expected at least 1 dim, got shape ()")
    axis = norm_axis(axis, a.ndim)
    n = a.shape[axis]
    if obj is not None:
        if obj.ndim > 1 or (obj.dtype.kind == "f" and not onp.isfinite(obj).all()):
            raise MXNetError("_npi_delete: obj expected finite indices (at most 1-D), got "
                             "%s of shape %s" % (obj.dtype, obj.shape))
        idx = host(obj).astype(onp.int64).reshape(-1)
    elif p.int_ind is not None:
        idx = onp.asarray([p.int_ind])
    else:
        idx = onp.arange(n)[slice(p.start, p.stop, 1 if p.step is None else p.step)]
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise MXNetError("_npi_delete: index expected in [-%d, %d) for axis %d of size %d, "
                         "got %s" % (n, n, axis, n, idx))
    keep = onp.ones(n, bool)
    keep[idx % n if n else idx] = False
    return xp.compress(keep, a, axis=axis)


register_op("_npi_delete", _delete,
            inputs=lambda p: ("arr",) if p.int_ind is not None or p.start is not None or
            p.stop is not None or p.step is not None else ("arr", "obj"),
            params=[Param("start", optional(parse_int), None, "obj as a slice: its start."),
                    Param("stop", optional(parse_int), None, "obj as a slice: its stop."),
                    Param("step", optional(parse_int), None, "obj as a slice: its step."),
                    Param("int_ind", optional(parse_int), None, "obj as one index."),
                    Param("axis", optional(parse_int), None, "The axis; None: the flattened array.")],
            doc="A copy of arr without the entries obj names along axis.")
