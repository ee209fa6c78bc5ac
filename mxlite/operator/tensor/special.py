"""Special functions on ``xp`` arrays: erf, erfinv, gamma, gammaln, digamma.

SciPy (or cupyx.scipy on GPU) is used when installed; otherwise exact
per-element ``math`` functions (erf, gamma, lgamma) and vectorised series
(digamma, Newton-refined erfinv) keep mxlite's runtime to NumPy alone.
"""
import math

import numpy as np

try:
    import scipy.special as _sp
except ImportError:     # optional
    _sp = None


def _special(xp):
    if xp is np:
        return _sp
    try:
        import cupyx.scipy.special as cps
        return cps
    except ImportError:
        return None


def _per_element(fn, x):
    out = np.frompyfunc(fn, 1, 1)(np.asarray(x, dtype=np.float64))
    return np.asarray(out, dtype=np.float64)


def _on_host(xp, fn, x):
    if xp is np:
        return fn(x).astype(x.dtype, copy=False)
    return xp.asarray(fn(x.get())).astype(x.dtype, copy=False)


def erf(xp, x):
    sp = _special(xp)
    if sp is not None:
        return sp.erf(x).astype(x.dtype, copy=False)
    return _on_host(xp, lambda a: _per_element(math.erf, a), x)


def gamma(xp, x):
    sp = _special(xp)
    if sp is not None:
        return sp.gamma(x).astype(x.dtype, copy=False)

    def g(v):
        try:
            return math.gamma(v)
        except (ValueError, OverflowError):
            return math.inf if v > 0 or float(v).is_integer() is False else math.nan
    return _on_host(xp, lambda a: _per_element(g, a), x)


def gammaln(xp, x):
    sp = _special(xp)
    if sp is not None:
        return sp.gammaln(x).astype(x.dtype, copy=False)

    def lg(v):
        try:
            return math.lgamma(v)
        except (ValueError, OverflowError):
            return math.inf
    return _on_host(xp, lambda a: _per_element(lg, a), x)


def digamma(xp, x):
    sp = _special(xp)
    if sp is not None:
        return sp.digamma(x).astype(x.dtype, copy=False)
    v = x.astype(np.float64)
    reflect = v < 0.5
    # psi(1 - v) - pi / tan(pi v) for v < 0.5
    w = xp.where(reflect, 1.0 - v, v)
    acc = xp.zeros_like(w)
    while True:
        small = w < 6.0
        if not bool(small.any()):
            break
        acc = acc - xp.where(small, 1.0 / w, 0.0)
        w = xp.where(small, w + 1.0, w)
    inv2 = 1.0 / (w * w)
    series = xp.log(w) - 0.5 / w - inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (
        1.0 / 252 - inv2 * (1.0 / 240 - inv2 * (1.0 / 132)))))
    res = acc + series
    res = xp.where(reflect, res - math.pi / xp.tan(math.pi * v), res)
    return res.astype(x.dtype, copy=False)


def erfinv(xp, x):
    sp = _special(xp)
    if sp is not None:
        return sp.erfinv(x).astype(x.dtype, copy=False)
    v = x.astype(np.float64)
    # Giles' single-precision approximation, then Newton steps on erf.
    w = -xp.log((1.0 - v) * (1.0 + v))
    ws = w - 2.5
    p1 = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p1 = c + p1 * ws
    wl = xp.sqrt(xp.maximum(w, 5.0)) - 3.0
    p2 = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        p2 = c + p2 * wl
    y = xp.where(w < 5.0, p1, p2) * v
    for _ in range(2):
        err = erf(xp, y) - v
        y = y - err / (2.0 / math.sqrt(math.pi) * xp.exp(-y * y))
    y = xp.where(xp.abs(v) == 1.0, xp.sign(v) * np.inf, y)
    return y.astype(x.dtype, copy=False)
