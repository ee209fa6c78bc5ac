"""Variable-length sequence ops: SequenceMask, SequenceLast, SequenceReverse.

Data is time-major ``(T, N, ...)`` (``axis=0``) or batch-major ``(N, T, ...)``
(``axis=1``). With ``use_sequence_length=True`` a second input
``sequence_length`` of shape ``(N,)`` (any dtype; MXNet passes float32) gives
each sequence's length; it gets a zero gradient.
"""
import numpy as np

from ... import nd
from ...base import MXNetError, parse_bool, parse_float, parse_int
from ..registry import register_op, Param, ranks


def _inputs(p):
    return ("data", "sequence_length") if p.use_sequence_length else ("data",)


def _params(axis_doc):
    return [Param("use_sequence_length", parse_bool, False,
                  "Read the lengths from the ``sequence_length`` input (else every sequence "
                  "is full length)."),
            Param("axis", parse_int, 0, axis_doc)]


def _layout(p, data, name):
    if p.axis not in (0, 1):
        raise MXNetError("axis must be 0 (time-major) or 1 (batch-major), got %d" % p.axis)
    return p.axis, 1 - p.axis      # (time axis, batch axis)


def _lengths(p, xp, data, lens, t_ax, b_ax):
    """Integer lengths (N,), or None when every sequence is full length."""
    if lens is None:
        return None
    n = data.shape[b_ax]
    if lens.shape != (n,):
        raise MXNetError("sequence_length has shape %s, expected (%d,) (the batch size of data "
                         "of shape %s, axis=%d)" % (lens.shape, n, data.shape, t_ax))
    return lens.astype(np.int64)


def _time_index(xp, data, t_ax, b_ax):
    """Time positions broadcast to data's shape over (time, batch)."""
    shape = [1] * data.ndim
    shape[t_ax] = data.shape[t_ax]
    return xp.arange(data.shape[t_ax]).reshape(shape)


def _batch_view(xp, v, data, b_ax):
    shape = [1] * data.ndim
    shape[b_ax] = data.shape[b_ax]
    return v.reshape(shape)


def _infer_shape(p, shapes):
    """Fill the lengths' shape (N,) from the data shape."""
    shapes = list(shapes)
    d = shapes[0]
    if len(shapes) > 1 and d is not None and len(d) >= 2 and p.axis in (0, 1):
        n = d[1 - p.axis]
        if n and (shapes[1] is None or 0 in shapes[1] or len(shapes[1]) == 0):
            shapes[1] = (n,)
    return shapes


def _infer_last(p, shapes):
    """Input shapes, and the output shape (data without its time axis), without running
    the op on dummy lengths (zero lengths are an error for SequenceLast)."""
    shapes = _infer_shape(p, shapes)
    d = shapes[0]
    if d is None or len(d) < 2 or 0 in d or p.axis not in (0, 1):
        return shapes
    return shapes, [tuple(d[:p.axis]) + tuple(d[p.axis + 1:])]


def _no_grad_len(x):
    return [nd.zeros_like(x[1])] if len(x) > 1 else []


# -- SequenceMask -------------------------------------------------------------------------

def _sequence_mask(p, xp, data, lens=None):
    t_ax, b_ax = _layout(p, data, "SequenceMask")
    n = _lengths(p, xp, data, lens, t_ax, b_ax)
    if n is None:
        return data.copy()
    keep = _time_index(xp, data, t_ax, b_ax) < _batch_view(xp, n, data, b_ax)
    return xp.where(keep, data, xp.asarray(p.value, dtype=data.dtype)).astype(data.dtype,
                                                                            copy=False)


def _sequence_mask_grad(p, x, y, gy, need):
    if len(x) == 1:
        return [gy[0]]
    gx = nd.SequenceMask(gy[0], x[1], use_sequence_length=True, value=0.0, axis=p.axis)
    return [gx] + _no_grad_len(x)


register_op("SequenceMask", _sequence_mask, inputs=_inputs, check=ranks(data=2),
            params=_params("The time axis: 0 for (T, N, ...), 1 for (N, T, ...).")
            + [Param("value", parse_float, 0.0, "The value written past each length.")],
            gradient=_sequence_mask_grad, saves="x", infer_shape=_infer_shape,
            doc="Set every step at or past each sequence's length to ``value``.")


# -- SequenceLast ---------------------------------------------------------------------------

def _last_index(p, xp, data, lens, t_ax, b_ax):
    n = _lengths(p, xp, data, lens, t_ax, b_ax)
    steps = data.shape[t_ax]
    if steps == 0:
        raise MXNetError("data expected at least one time step on axis %d, got shape %s"
                         % (t_ax, data.shape))
    if n is None:
        return xp.full((data.shape[b_ax],), steps - 1, dtype=np.int64)
    if bool((n < 1).any()) or bool((n > steps).any()):
        raise MXNetError("sequence_length must be in [1, %d] (the number of time steps), got "
                         "%s" % (steps, n.tolist() if hasattr(n, "tolist") else n))
    return n - 1


def _take_last(xp, data, idx, t_ax, b_ax):
    batch = xp.arange(data.shape[b_ax])
    return data[idx, batch] if t_ax == 0 else data[batch, idx]


def _sequence_last(p, xp, data, lens=None):
    t_ax, b_ax = _layout(p, data, "SequenceLast")
    idx = _last_index(p, xp, data, lens, t_ax, b_ax)
    return _take_last(xp, data, idx, t_ax, b_ax).astype(data.dtype, copy=False)


def _sequence_last_backward(p, xp, data, gy, lens=None):
    t_ax, b_ax = _layout(p, data, "SequenceLast")
    idx = _last_index(p, xp, data, lens, t_ax, b_ax)
    want = tuple(d for i, d in enumerate(data.shape) if i != t_ax)
    if gy.shape != want:
        raise MXNetError("gy has shape %s, expected %s (the output's for data of shape %s)"
                         % (gy.shape, want, data.shape))
    gx = xp.zeros(data.shape, dtype=gy.dtype)
    batch = xp.arange(data.shape[b_ax])
    if t_ax == 0:
        gx[idx, batch] = gy
    else:
        gx[batch, idx] = gy
    return gx


def _bwd_inputs(p):
    return ("data", "gy") + (("sequence_length",) if p.use_sequence_length else ())


def _sequence_last_grad(p, x, y, gy, need):
    gx = nd._internal._backward_SequenceLast(x[0], gy[0], *x[1:], **dict(p.items()))
    return [gx] + _no_grad_len(x)


def _sequence_last_backward_grad(p, x, y, gy, need):
    # The backward is linear in gy: its own gradient is SequenceLast again.
    ggy = nd.SequenceLast(gy[0], *x[2:], **dict(p.items()))
    return [nd.zeros_like(x[0]), ggy] + ([nd.zeros_like(x[2])] if len(x) > 2 else [])


_LAST_PARAMS = _params("The time axis: 0 for (T, N, ...), 1 for (N, T, ...).")

register_op("_backward_SequenceLast", _sequence_last_backward, inputs=_bwd_inputs,
            check=ranks(data=2),
            params=_LAST_PARAMS, gradient=_sequence_last_backward_grad, saves="x",
            doc="Gradient of SequenceLast: ``gy`` scattered to each sequence's last step.")
register_op("SequenceLast", _sequence_last, inputs=_inputs, params=_LAST_PARAMS,
            check=ranks(data=2),
            gradient=_sequence_last_grad, saves="x", infer_shape=_infer_last,
            doc="The last valid step of each sequence: shape (N, ...).")


# -- SequenceReverse ---------------------------------------------------------------------------

def _sequence_reverse(p, xp, data, lens=None):
    t_ax, b_ax = _layout(p, data, "SequenceReverse")
    if t_ax != 0:
        raise MXNetError("only axis=0 (time-major data) is supported, as in MXNet; got axis=%d"
                         % p.axis)
    n = _lengths(p, xp, data, lens, t_ax, b_ax)
    steps = data.shape[0]
    if n is None:
        return data[::-1].copy()
    n = xp.clip(n, 0, steps)
    t = xp.arange(steps)[:, None]                        # (T, 1)
    src = xp.where(t < n[None, :], n[None, :] - 1 - t, t)  # (T, N): where each step comes from
    return data[src, xp.arange(data.shape[1])[None, :]]


def _sequence_reverse_grad(p, x, y, gy, need):
    # A reversal is its own inverse and its own transpose.
    gx = nd.SequenceReverse(gy[0], *x[1:], **dict(p.items()))
    return [gx] + _no_grad_len(x)


register_op("SequenceReverse", _sequence_reverse, inputs=_inputs, check=ranks(data=2),
            params=_params("The time axis; only 0 is supported (as in MXNet)."),
            gradient=_sequence_reverse_grad, saves="x", infer_shape=_infer_shape,
            doc="Reverse the first ``sequence_length[n]`` steps of each sequence; steps past "
                "the length stay in place.")
