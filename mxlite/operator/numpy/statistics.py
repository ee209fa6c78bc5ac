"""Weighted averages, percentiles and differences of the np interface as MXNet 1.9.1's
ops: ``_npi_average`` (with its gradient in the data and the weights),
``_npi_percentile`` (a zero gradient, as MXNet's), ``_npi_ediff1d`` and ``_npi_bincount`` (no gradient, as MXNet's)."""
import numpy as onp

from ...base import MXNetError, optional, parse_axis, parse_bool, parse_float, parse_int, parse_str
from ..registry import Param, register_op
from ..util import norm_axis, unbroadcast, zeros_grad
from .matrix import _op


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axis = axis if isinstance(axis, tuple) else (axis,)
    axes = tuple(sorted(norm_axis(a, ndim) for a in axis))
    if len(set(axes)) != len(axes):
        raise MXNetError("axis expected distinct axes, got %s" % (axis,))
    return axes


# -- average ----------------------------------------------------------------------------------

def _weights_shape(p, a, w):
    """The shape ``w`` broadcasts to against ``a``: its own, or a 1-D ``w`` laid along
    the one averaged axis (as NumPy's and MXNet's average)."""
    if w.shape == a.shape:
        return w.shape
    axes = _axes(p.axis, a.ndim)
    if p.axis is None or len(axes) != 1:
        raise MXNetError("weights of shape %s differ from a's %s: expected an axis (one) "
                         "to lay 1-D weights along" % (w.shape, a.shape))
    if w.ndim != 1 or w.shape[0] != a.shape[axes[0]]:
        raise MXNetError("weights expected shape (%d,) (a's axis %d) or a's shape %s, "
                         "got %s" % (a.shape[axes[0]], axes[0], a.shape, w.shape))
    return tuple(a.shape[i] if i == axes[0] else 1 for i in range(a.ndim))


def _average(p, xp, a, w=None):
    axes = _axes(p.axis, a.ndim)
    dt = a.dtype
    if not p.weighted:
        n = int(onp.prod([a.shape[i] for i in axes]))
        avg = xp.asarray(a.sum(axis=axes) / n).astype(dt, copy=False)
        count = xp.asarray(n, dt)
        return (avg, count) if p.returned else avg
    ws = w.reshape(_weights_shape(p, a, w))
    s = ws.sum(axis=axes, keepdims=True) if ws.shape == a.shape else ws.sum(keepdims=True)
    if (s == 0).any():
        raise MXNetError("weights sum to zero along the averaged axes")
    avg = xp.asarray((a * ws).sum(axis=axes) / s.reshape([n for i, n in enumerate(s.shape)
                                                          if i not in axes]))
    avg = avg.astype(dt, copy=False)
    s = s.reshape(avg.shape if ws.shape == a.shape else ()).astype(dt, copy=False)
    return (avg, s) if p.returned else avg


def _average_grad(p, x, y, gy, need):
    a = x[0]
    axes = _axes(p.axis, a.ndim)
    kept = tuple(1 if i in axes else n for i, n in enumerate(a.shape))
    g = (y[0] * 0 if gy[0] is None else gy[0]).reshape(kept)     # None: an unused output
    if not p.weighted:
        n = float(onp.prod([a.shape[i] for i in axes]))
        return [g / n + a * 0]
    w = x[1]
    ws = w.reshape(_weights_shape(p, a, w))
    s = ws.sum(axis=axes, keepdims=True) if ws.shape == a.shape else ws.sum(keepdims=True)
    ga = g * ws / s + a * 0 if need[0] else None
    gw = None
    if need[1]:
        avg = y[0].reshape(kept)
        t = g * (a - avg) / s
        if len(gy) > 1 and gy[1] is not None:      # d sum_of_weights / dw = 1
            t = t + gy[1].reshape(s.shape) + a * 0
        gw = unbroadcast(t, ws.shape).reshape(w.shape)
    return [ga, gw]


register_op("_npi_average", _average,
            inputs=lambda p: ("a", "weights") if p.weighted else ("a",),
            num_outputs=lambda p: 2 if p.returned else 1, gradient=_average_grad, saves="xy",
            params=[Param("axis", parse_axis, None, "The axes to average over (None: all)."),
                    Param("returned", parse_bool, False, "Also return the weights' sum."),
                    Param("weighted", parse_bool, True, "Whether weights are given.")],
            doc="The (weighted) average over ``axis``; an integer ``a`` stays integer, "
                "as in MXNet 1.9.1.")


# -- percentile -------------------------------------------------------------------------------

_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _percentile(p, xp, a, q=None):
    qs = onp.asarray(p.q_scalar) if q is None else q
    if q is not None and q.ndim > 1:
        raise MXNetError("q expected at most 1 dim, got shape %s" % (q.shape,))
    if qs.size and (onp.isnan(qs).any() or (qs < 0).any() or (qs > 100).any()):
        raise MXNetError("q expected values in [0, 100], got %s" % (onp.asarray(qs),))
    if a.size == 0:
        raise MXNetError("a expected a non-empty array, got shape %s" % (a.shape,))
    axis = None if p.axis is None else _axes(p.axis, a.ndim)
    dt = a.dtype if a.dtype.kind == "f" else onp.dtype(onp.float32)
    y = xp.percentile(a.astype(onp.float64, copy=False), qs, axis=axis,
                      method=p.interpolation, keepdims=p.keepdims)
    return xp.asarray(y).astype(dt, copy=False)


register_op("_npi_percentile", _percentile,
            inputs=lambda p: ("a",) if p.q_scalar is not None else ("a", "q"),
            gradient=zeros_grad, saves="",
            params=[Param("axis", parse_axis, None, "The axes (None: all)."),
                    Param("interpolation", parse_str, "linear", "Between two data points.",
                          choices=_METHODS),
                    Param("keepdims", parse_bool, False, "Keep the reduced axes as 1."),
                    Param("q_scalar", optional(parse_float), None, "A scalar q (no q input).")],
            doc="The q-th percentiles of the data along ``axis``; a zero gradient, as "
                "MXNet 1.9.1's.")


# -- ediff1d ----------------------------------------------------------------------------------

def _ediff1d_inputs(p):
    return ("input1",) + (("input2",) if p.to_begin_arr_given else ()) + \
        (("input3",) if p.to_end_arr_given else ())


def _ediff1d_ends(p, x, dt, xp=onp):
    rest = list(x[1:])
    begin = rest.pop(0).reshape(-1) if p.to_begin_arr_given else \
        xp.asarray([] if p.to_begin_scalar is None else [p.to_begin_scalar])
    end = rest.pop(0).reshape(-1) if p.to_end_arr_given else \
        xp.asarray([] if p.to_end_scalar is None else [p.to_end_scalar])
    return begin.astype(dt, copy=False), end.astype(dt, copy=False)


def _ediff1d_rule(p, *x):
    if x[0].dtype.kind == "b":
        raise MXNetError("_npi_ediff1d: input1 expected a number type, got bool")


def _ediff1d(p, xp, *x):
    a = x[0].reshape(-1)
    begin, end = _ediff1d_ends(p, x, a.dtype, xp)
    return xp.concatenate([begin, a[1:] - a[:-1], end])


def _ediff1d_grad(p, x, y, gy, need):
    begin, end = _ediff1d_ends(p, x, y[0].dtype)
    nb, n = begin.shape[0], max(x[0].size - 1, 0)
    g = gy[0]
    gd = g[nb:nb + n]
    if x[0].size:       # the adjoint of a[i+1] - a[i]
        ga = (_op("_npi_pad", gd, pad_width=((1, 0),)) -
              _op("_npi_pad", gd, pad_width=((0, 1),))).reshape(x[0].shape)
    else:
        ga = x[0] * 0
    gx = [ga]
    if p.to_begin_arr_given:
        gx.append(g[:nb].reshape(x[1].shape))
    if p.to_end_arr_given:
        gx.append(g[nb + n:].reshape(x[-1].shape))
    return gx


register_op("_npi_ediff1d", _ediff1d, inputs=_ediff1d_inputs, gradient=_ediff1d_grad,
            saves="x", check=_ediff1d_rule,
            params=[Param("to_begin_arr_given", parse_bool, False, "An input2 to prepend."),
                    Param("to_end_arr_given", parse_bool, False, "An input3 to append."),
                    Param("to_begin_scalar", optional(parse_float), None, "A number to prepend."),
                    Param("to_end_scalar", optional(parse_float), None, "A number to append.")],
            doc="The differences of consecutive elements of the flattened array, with "
                "numbers prepended and appended.")


# -- bincount ---------------------------------------------------------------------------------

def _bincount(p, xp, data, weights=None):
    if data.ndim != 1 or data.dtype.kind not in "iu":
        raise MXNetError("_npi_bincount: data expected 1-D integers, got %s of shape %s"
                         % (data.dtype, data.shape))
    if data.size and data.min() < 0:
        raise MXNetError("_npi_bincount: data expected no negative values, got %d"
                         % data.min())
    if weights is not None and weights.shape != data.shape:
        raise MXNetError("_npi_bincount: weights expected data's shape %s, got %s"
                         % (data.shape, weights.shape))
    y = xp.bincount(data, weights, p.minlength)
    return y.astype(data.dtype if weights is None else weights.dtype, copy=False)


register_op("_npi_bincount", _bincount,
            inputs=lambda p: ("data", "weights") if p.has_weights else ("data",),
            params=[Param("minlength", parse_int, 0, "The least number of bins.", low=0),
                    Param("has_weights", parse_bool, False, "Whether weights are given.")],
            infer_type=lambda p, dt: [dt[1] if p.has_weights else dt[0]],
            doc="How many times each value 0, 1, ... occurs in data (or the sum of its "
                "weights); the counts in data's dtype, the sums in the weights' (MXNet "
                "1.9.1's).")
