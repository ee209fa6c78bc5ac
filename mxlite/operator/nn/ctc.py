"""Connectionist Temporal Classification loss: ``CTCLoss`` (``ctc_loss``,
``contrib.CTCLoss``, ``contrib.ctc_loss``).

``data`` is ``(T, N, C)`` unnormalised activations (a softmax over C is applied
inside), ``label`` is ``(N, L)``. With ``blank_label='first'`` class 0 is the blank,
real labels are ``1..C-1`` and label rows are padded with 0; with ``'last'`` class
``C-1`` is the blank, labels are ``0..C-2`` and the padding is -1. Optional inputs
``data_lengths`` and ``label_lengths`` (N,) give each sample's lengths. The
output is the per-sample negative log-likelihood (N,).

The loss and its gradient come from the forward-backward recursions in log space,
run over the extended label (blanks between and around labels), vectorised over
the batch. The gradient is a registered op; it is not differentiable again.
"""
import numpy as np

from ... import nd
from ...base import MXNetError, parse_bool
from ..registry import register_op, Param, ranks

_NEG_INF = -np.inf


def _inputs(p):
    names = ("data", "label")
    if p.use_data_lengths:
        names += ("data_lengths",)
    if p.use_label_lengths:
        names += ("label_lengths",)
    return names


_PARAMS = [Param("use_data_lengths", parse_bool, False, "Read per-sample input lengths "
                 "from ``data_lengths``."),
           Param("use_label_lengths", parse_bool, False, "Read per-sample label lengths "
                 "from ``label_lengths`` (else a label ends at the first padding value)."),
           Param("blank_label", None, "first", choices=("first", "last"),
                 doc="'first': blank is class 0, padding 0; 'last': blank is class C-1, "
                     "padding -1.")]


def _unpack(p, xp, data, label, rest):
    """Checked (data, label, data lengths, label lengths, blank) as integer arrays."""
    steps, n, c = data.shape
    if label.ndim != 2 or label.shape[0] != n:
        raise MXNetError("label has shape %s, expected (%d, L) for data of shape %s"
                         % (label.shape, n, data.shape))
    rest = list(rest)
    blank = 0 if p.blank_label == "first" else c - 1
    lab = label.astype(np.int64)
    if p.use_data_lengths:
        t_len = _length_input("data_lengths", rest.pop(0), n, steps)
    else:
        t_len = xp.full((n,), steps, dtype=np.int64)
    if p.use_label_lengths:
        l_len = _length_input("label_lengths", rest.pop(0), n, lab.shape[1])
    else:
        pad = 0 if p.blank_label == "first" else -1
        is_pad = lab == pad
        # A label ends at its first padding value.
        l_len = xp.where(is_pad.any(axis=1), is_pad.argmax(axis=1), lab.shape[1])
    pos = xp.arange(lab.shape[1])[None, :]
    used = pos < l_len[:, None]
    # NOTE: as MXNet, a label equal to the blank class is taken as it comes (a symbol
    # of the blank's index, which the transitions treat as a blank).
    if bool((used & ((lab < 0) | (lab >= c))).any()):
        raise MXNetError("label values must be classes in [0, %d) (blank_label=%r, blank %d)"
                         % (c, p.blank_label, blank))
    return t_len, xp.where(used, lab, blank), l_len, blank


def _length_input(name, v, n, limit):
    if v.shape != (n,):
        raise MXNetError("%s has shape %s, expected (%d,)" % (name, v.shape, n))
    v = v.astype(np.int64)
    if bool((v < 0).any()) or bool((v > limit).any()):
        raise MXNetError("%s must be in [0, %d], got %s" % (name, limit, v.tolist()))
    return v


def _extended(xp, lab, l_len, blank):
    """Extended labels (N, S): blank, l1, blank, l2, ..., blank; and the skip mask."""
    n, L = lab.shape
    ext = xp.full((n, 2 * L + 1), blank, dtype=np.int64)
    ext[:, 1::2] = lab
    s_len = 2 * l_len + 1
    prev2 = xp.concatenate([xp.full((n, 2), -1, dtype=np.int64), ext[:, :-2]], axis=1)
    can_skip = (ext != blank) & (ext != prev2)
    valid = xp.arange(2 * L + 1)[None, :] < s_len[:, None]
    return ext, can_skip, valid, s_len


def _shift(xp, a, k):
    """``a`` shifted right by k along the last axis, filled with -inf."""
    pad = xp.full(a.shape[:-1] + (k,), _NEG_INF)
    return xp.concatenate([pad, a[..., :-k]], axis=-1)


def _unshift(xp, a, k):
    pad = xp.full(a.shape[:-1] + (k,), _NEG_INF)
    return xp.concatenate([a[..., k:], pad], axis=-1)


def _forward_backward(p, xp, data, label, rest):
    """log-softmax, log alpha, log beta (beta excludes the current emission), log p."""
    t_len, lab, l_len, blank = _unpack(p, xp, data, label, rest)
    x = data.astype(np.float64)
    z = x - x.max(axis=2, keepdims=True)
    logy = z - xp.log(xp.exp(z).sum(axis=2, keepdims=True))       # (T, N, C)
    ext, can_skip, valid, s_len = _extended(xp, lab, l_len, blank)
    steps, n = x.shape[:2]
    batch = xp.arange(n)[:, None]
    # Emissions of the extended labels: (T, N, S); invalid positions are impossible.
    emit = xp.where(valid[None], logy[:, batch, ext], _NEG_INF)
    S = ext.shape[1]
    la = xp.full((steps, n, S), _NEG_INF)
    first = xp.full((n, S), _NEG_INF)
    first[:, :2] = 0.0
    la[0] = first + emit[0]
    for t in range(1, steps):
        a = la[t - 1]
        acc = xp.logaddexp(a, _shift(xp, a, 1))
        acc = xp.where(can_skip, xp.logaddexp(acc, _shift(xp, a, 2)), acc)
        la[t] = acc + emit[t]
    lb = xp.full((steps, n, S), _NEG_INF)
    s_idx = xp.arange(S)[None, :]
    end = xp.where((s_idx == s_len[:, None] - 1) | (s_idx == s_len[:, None] - 2), 0.0, _NEG_INF)
    skip_next = _unshift(xp, can_skip.astype(np.float64), 2) > 0
    lb[steps - 1] = end
    for t in range(steps - 2, -1, -1):
        b = lb[t + 1] + emit[t + 1]
        acc = xp.logaddexp(b, _unshift(xp, b, 1))
        acc = xp.where(skip_next, xp.logaddexp(acc, _unshift(xp, b, 2)), acc)
        lb[t] = xp.where((t == t_len - 1)[:, None], end, acc)
    last = xp.clip(t_len - 1, 0, steps - 1)
    logp = _log_total(xp, la, lb, last, n)
    logp = xp.where(t_len > 0, logp, xp.where(l_len == 0, 0.0, _NEG_INF))
    return logy, la, lb, logp, ext, t_len


def _log_total(xp, la, lb, last, n):
    """log p(label | x) = logsumexp_s alpha_t(s) beta_t(s) at the last step."""
    g = la[last, xp.arange(n)] + lb[last, xp.arange(n)]        # (N, S)
    m = g.max(axis=1, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0.0)
    return (m + xp.log(xp.exp(g - m).sum(axis=1, keepdims=True)))[:, 0]


def _ctc_loss(p, xp, data, label, *rest):
    logp = _forward_backward(p, xp, data, label, rest)[3]
    return (-logp).astype(data.dtype)


def _ctc_backward(p, xp, data, label, gy, *rest):
    logy, la, lb, logp, ext, t_len = _forward_backward(p, xp, data, label, rest)
    steps, n, c = logy.shape
    ok = xp.isfinite(logp)
    # Occupancy of each extended position, then summed into its class: (T, N, C).
    occ_s = xp.exp(la + lb - xp.where(ok, logp, 0.0)[None, :, None])
    onehot = (ext[:, :, None] == xp.arange(c)[None, None, :]).astype(np.float64)  # (N, S, C)
    occ = xp.einsum("tns,nsc->tnc", occ_s, onehot)
    g = xp.exp(logy) - occ
    live = (xp.arange(steps)[:, None] < t_len[None, :]) & ok[None, :]
    g = xp.where(live[:, :, None], g, 0.0) * gy.astype(np.float64)[None, :, None]
    return g.astype(data.dtype)


def _ctc_grad(p, x, y, gy, need):
    gx = nd._internal._backward_CTCLoss(x[0], x[1], gy[0], *x[2:], **dict(p.items()))
    return [gx] + [nd.zeros_like(v) for v in x[1:]]


def _bwd_inputs(p):
    return ("data", "label", "gy") + _inputs(p)[2:]


register_op("_backward_CTCLoss", _ctc_backward, inputs=_bwd_inputs, params=_PARAMS,
            check=ranks(data=(3, 3)),
            doc="Gradient of CTCLoss w.r.t. data (not differentiable).")
register_op("CTCLoss", _ctc_loss, inputs=_inputs, params=_PARAMS, gradient=_ctc_grad, saves="x",
            check=ranks(data=(3, 3)),
            aliases=("ctc_loss", "_contrib_CTCLoss", "_contrib_ctc_loss"),
            doc="Connectionist Temporal Classification loss of (T, N, C) activations and "
                "(N, L) labels; returns the per-sample negative log-likelihood (N,).")
