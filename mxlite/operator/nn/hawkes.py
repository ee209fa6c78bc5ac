"""``hawkesll``: the log likelihood of a marked self-exciting Hawkes process.

Its gradient is MXNet's: d loglik / d (lda, alpha, beta) for the head gradient of
``loglik``; the head gradient of the returned state is ignored and ``state`` gets 0,
as in MXNet. Its registered backward op has no gradient of its own (MXNet has none).
"""

import numpy as np

from ... import nd
from ...base import MXNetError
from .. import libm
from ..registry import register_op, ranks
from ..util import no_second_order as _no_second_order
from ..util import host


_HAWKES = "hawkesll"


def _expf(xp, v):
    """MXNet's ``expf``: the C float32 function, in every dtype (a float64 op too)."""
    return libm.expf(xp, v.astype(np.float32)).astype(v.dtype)


def _logf(xp, v):
    """MXNet's ``logf`` (float32 in every dtype, see :func:`_expf`)."""
    with np.errstate(all="ignore"):
        return libm.logf(xp, v.astype(np.float32)).astype(v.dtype)


def _hawkes_check(xp, lda, alpha, beta, state, lags, marks, valid_length, max_time):
    n, k = lda.shape
    t = lags.shape[1]
    want = {"alpha": (alpha, (k,)), "beta": (beta, (k,)), "state": (state, (n, k)),
            "lags": (lags, (n, t)), "marks": (marks, (n, t)),
            "valid_length": (valid_length, (n,)), "max_time": (max_time, (n,))}
    for name, (a, shape) in want.items():
        if tuple(a.shape) != shape:
            raise MXNetError("%s: %s has shape %s, expected %s for lda of shape %s and lags of "
                             "shape %s" % (_HAWKES, name, tuple(a.shape), shape, (n, k), (n, t)))
    active = np.arange(t)[None, :] < host(valid_length)[:, None]
    m = host(marks)
    if active.any():
        bad = active & ((m < 0) | (m >= k) | (m != np.floor(m)))
        if bad.any():
            raise MXNetError("%s: marks must be integers in [0, %d) within valid_length, got %s"
                             % (_HAWKES, k, m[bad][0]))
    return n, k, t, xp.asarray(np.where(active, m, 0).astype(np.int64)), xp.asarray(active)


def _hawkes_forward(p, xp, lda, alpha, beta, state, lags, marks, valid_length, max_time):
    n, k, t_len, marks, active = _hawkes_check(xp, lda, alpha, beta, state, lags, marks,
                                               valid_length, max_time)
    dt = lda.dtype
    one = dt.type(1)
    st, last = state.astype(dt, copy=True), xp.zeros((n, k), dtype=dt)
    t, ll = xp.zeros(n, dtype=dt), xp.zeros(n, dtype=dt)
    rows = xp.arange(n)
    for j in range(t_len):
        act = active[:, j]
        ci = marks[:, j]
        t = xp.where(act, t + lags[:, j], t)
        d = t - last[rows, ci]
        ed = _expf(xp, -beta[ci] * d)
        s, mu = st[rows, ci], lda[rows, ci]
        term = _logf(xp, mu + alpha[ci] * beta[ci] * s * ed) - (mu * d + alpha[ci] * s * (one - ed))
        ll = xp.where(act, ll + term, ll)
        r, c = rows[act], ci[act]
        st[r, c] = (one + s * ed)[act]
        last[r, c] = t[act]
    d = max_time[:, None].astype(dt) - last
    ed = _expf(xp, -beta[None] * d)
    ll = ll - (lda * d + alpha[None] * st * (one - ed)).sum(axis=1)
    return ll, ed * st


def _hawkes_backward(p, xp, gll, gstate, lda, alpha, beta, state, lags, marks, valid_length,
                     max_time):
    """MXNet's ``_contrib_backward_hawkesll``: the gradients of the eight inputs for the
    head gradients of (loglik, state). Only loglik's counts and only lda, alpha, beta get
    one (as MXNet: the state output and the input state are not differentiated; their
    gradients and those of the data inputs are zeros here)."""
    n, k, t_len, marks, active = _hawkes_check(xp, lda, alpha, beta, state, lags, marks,
                                               valid_length, max_time)
    dt = lda.dtype
    one = dt.type(1)
    phi, phig = state.astype(dt, copy=True), xp.zeros((n, k), dtype=dt)
    last, t = xp.zeros((n, k), dtype=dt), xp.zeros(n, dtype=dt)
    gmu, ga, gb = (xp.zeros((n, k), dtype=dt) for _ in range(3))
    rows = xp.arange(n)
    for j in range(t_len):
        act = active[:, j]
        ci = marks[:, j]
        t = xp.where(act, t + lags[:, j], t)
        d = t - last[rows, ci]
        a, b = alpha[ci], beta[ci]
        ed = _expf(xp, -b * d)
        s, sg = phi[rows, ci], phig[rows, ci]
        with np.errstate(all="ignore"):
            lam = lda[rows, ci] + a * b * s * ed
            dmu = one / lam - d
            da = (b * s * ed) / lam - s * (one - ed)
            db = a * ed * (s * (one - b * d) + b * sg) / lam - a * (sg * (one - ed) + s * d * ed)
        r, c = rows[act], ci[act]
        gmu[r, c] += dmu[act]
        ga[r, c] += da[act]
        gb[r, c] += db[act]
        phig[r, c] = (ed * (-d * s + sg))[act]
        phi[r, c] = (one + s * ed)[act]
        last[r, c] = t[act]
    d = max_time[:, None].astype(dt) - last
    ed = _expf(xp, -beta[None] * d)
    gmu = (gmu - d) * gll[:, None]
    ga = (ga - phi * (one - ed)) * gll[:, None]
    gb = (gb - alpha[None] * (phig * (one - ed) + phi * d * ed)) * gll[:, None]
    return (gmu, ga.sum(axis=0), gb.sum(axis=0), xp.zeros_like(state), xp.zeros_like(lags),
            xp.zeros_like(marks), xp.zeros_like(valid_length), xp.zeros_like(max_time))


def _hawkes_grad(p, x, y, gy, need):
    gll = gy[0] if gy[0] is not None else nd.zeros_like(y[0])
    gstate = gy[1] if gy[1] is not None else nd.zeros_like(x[3])
    g = nd.contrib.backward_hawkesll(gll, gstate, *x)
    return [g[0], g[1], g[2], g[3], None, None, None, None]


_HAWKES_INPUTS = ("lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time")

register_op("_contrib_hawkesll", _hawkes_forward, inputs=_HAWKES_INPUTS,
            check=ranks(lda=(2, 2), lags=(2, 2)),       # lda (N, K), lags (N, T)
            gradient=_hawkes_grad, saves="x", num_outputs=2,
            output_names=("output", "state"),
            infer_type=lambda p, dtypes: [dtypes[0], dtypes[0]],
            no_grad_inputs=(4, 5, 6, 7),
            doc="Log likelihood of a marked univariate Hawkes process with exponential decay "
                "per mark (lda (N, K) background intensities, alpha/beta (K,)), for the points "
                "given by inter-arrival times lags and marks (N, T), the first valid_length of "
                "each row, observed up to max_time; returns (loglik (N,), new state (N, K)). "
                "The gradient covers lda, alpha and beta (MXNet's); state gets 0.")
register_op("_contrib_backward_hawkesll", _hawkes_backward,
            inputs=("ograd", "state_ograd") + _HAWKES_INPUTS, check=ranks(lda=(2, 2), lags=(2, 2)),
            gradient=_no_second_order(_HAWKES), saves="", num_outputs=8,
            output_names=tuple(n + "_grad" for n in _HAWKES_INPUTS),
            doc="The backward of hawkesll (MXNet's inputs: the head gradients of loglik and "
                "state, then hawkesll's eight inputs): the gradients of the eight inputs, "
                "of which only lda, alpha and beta are not zero.")
