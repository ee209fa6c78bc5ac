"""Optional numba kernels (``_fast``, which compiles them) for 2-D max pooling over
overlapping windows (of their own for ResNet's 3x3, stride 2) and over 2x2 windows of
stride 2 (LeNet's and VGG's).

The forward reads each input row once per window row instead of making k*k passes. A
recorded forward also gives the place of each window's first maximum, which its
backward adds the gradient at; without it the gradient finds each window's first
maximum in one pass. The same values as NumPy's (no arithmetic but the gradient's
sums, which are added in NumPy's order, bit for bit).
"""
import functools

import numpy as np

from ... import engine
from ...engine import parallel_parts
from . import _fast, _fast_direct


def _max_pool(x, kh, kw, sh, sw, ph, pw, y, idx):
    """``y`` (N, C, OH, OW): the maximum of every (kh, kw) window of ``x`` (N, C, H, W)
    padded by (ph, pw) before (and as ``y`` needs after) with -inf (NaN wins, as in
    ``np.maximum``); unless ``idx`` is empty, in ``idx`` (N, C, OH, OW) the place ``r *
    W + q`` in ``x`` of each window's first maximum in row-major order (its first NaN
    where it holds one), -1 where that is a padding position (a window of -inf
    starting in the padding): where :func:`_max_pool_grad` sends the window's gradient.

    NOTE: the maximum of each column's window rows keeps the first row that holds it;
    of the columns holding the window's maximum, the one with the first such row
    (then the first column) holds the window's first maximum. The columns are then
    split by the phase of the stride (``tp``, ``rp``: -inf and row H in the padding),
    so that each window column offset is one branch-free pass over a row of windows
    with unit strides: ResNet's stem pool (batch 8) took 6.4 ms (7.6 with the places)
    against 9.2 for the maximum alone window by window, 26 for the places so (its
    branches mispredict)."""
    n_, c_, h_, w_ = x.shape
    oh, ow = y.shape[2:]
    wq = ow + (kw - 1) // sw
    t = np.empty(w_, dtype=x.dtype)
    rows = np.empty(w_, dtype=np.int32)
    tp = np.empty((sw, wq), dtype=x.dtype)
    rp = np.empty((sw, wq), dtype=np.int32)
    m = np.empty(ow, dtype=x.dtype)
    br = np.empty(ow, dtype=np.int32)
    bq = np.empty(ow, dtype=np.int32)
    for n in range(n_):
        for c in range(c_):
            for oy in range(oh):
                r0 = oy * sh - ph
                r_lo = max(r0, 0)
                t[:] = -np.inf
                rows[:] = r_lo
                for r in range(r_lo, min(r0 + kh, h_)):
                    for q in range(w_):
                        v, tq = x[n, c, r, q], t[q]
                        take = (v > tq) | ((v != v) & (tq == tq))
                        t[q] = v if take else tq
                        rows[q] = r if take else rows[q]
                for a in range(sw):
                    for i in range(wq):
                        q = i * sw + a - pw
                        inside = (q >= 0) & (q < w_)
                        tp[a, i] = t[q] if inside else -np.inf
                        rp[a, i] = rows[q] if inside else h_
                m[:] = -np.inf
                br[:] = h_ + 1
                bq[:] = -1
                for j in range(kw):
                    a, o = j % sw, j // sw
                    for ox in range(ow):
                        v, r, mo, b = tp[a, ox + o], rp[a, ox + o], m[ox], br[ox]
                        vn, mn, first = v != v, mo != mo, r < b
                        take = (mn & vn & first) | (~mn & (vn | (v > mo) | ((v == mo) & first)))
                        m[ox] = v if take else mo
                        br[ox] = r if take else b
                        bq[ox] = ox * sw + j - pw if take else bq[ox]
                y[n, c, oy] = m
                if idx.shape[0] == 0:
                    continue
                for ox in range(ow):
                    mo, q = m[ox], bq[ox]
                    # (a window wholly in the padding after the rows: -1 too)
                    drop = (q < 0) | (q >= w_) | (r0 >= h_) | (
                        (mo == -np.inf) & ((r0 < 0) | (ox * sw < pw)))
                    idx[n, c, oy, ox] = -1 if drop else br[ox] * w_ + q


def _max_pool22(x, y, idx):
    """``y`` (N, C, OH, OW): the maximum of every 2x2 window of stride 2 of ``x`` (N, C,
    H, W) (no padding; NaN wins, as in ``np.maximum``), and unless ``idx`` is empty,
    its place ``r * W + q`` in ``x`` as :func:`_max_pool` gives it.

    NOTE: each window's two rows are compared first, then the two results (the first
    maximum is kept by strict comparisons: the same maximum and place as row-major
    order). With the window size known, the loop over a row of windows vectorises:
    LeNet's first pooling (batch 64) took 0.36 ms with the places against 0.50 for
    NumPy's passes without them, 2.5 for :func:`_max_pool`."""
    n_, c_ = x.shape[:2]
    w_ = x.shape[3]
    oh, ow = y.shape[2:]
    keep = idx.shape[0] != 0
    for n in range(n_):
        for c in range(c_):
            for oy in range(oh):
                r = 2 * oy
                row = np.int32(r * w_)
                for ox in range(ow):
                    q = 2 * ox
                    p0, p1 = x[n, c, r, q], x[n, c, r, q + 1]
                    p2, p3 = x[n, c, r + 1, q], x[n, c, r + 1, q + 1]
                    # ``b`` after ``a`` is the first maximum where a is not NaN and
                    # b > a or b is NaN
                    t0 = (p0 == p0) & ~(p1 <= p0)
                    m0 = p1 if t0 else p0
                    t1 = (p2 == p2) & ~(p3 <= p2)
                    m1 = p3 if t1 else p2
                    t = (m0 == m0) & ~(m1 <= m0)
                    y[n, c, oy, ox] = m1 if t else m0
                    if keep:    # (in int32: in int64 the loop does not vectorise)
                        d = np.int32(w_) * np.int32(t) + np.int32(t1 if t else t0)
                        idx[n, c, oy, ox] = row + np.int32(q) + d


def _max_pool33(x, ph, pw, n0, n1, c0, c1, y, idx):
    """``y`` (N, C, OH, OW): the maximum of every 3x3 window of stride 2 of ``x`` (N, C,
    H, W) padded by (ph, pw) before (and as ``y`` needs after) with -inf (NaN wins), and
    unless ``idx`` is empty, its place as :func:`_max_pool` gives it (ResNet's pooling);
    of samples ``n0:n1`` and channels ``c0:c1`` (the arrays whole: a part of them sliced
    out is a strided view, slower in numba's loops).

    NOTE: as :func:`_max_pool`, the maximum of each column's window rows first (in a
    row of -inf padded as the windows need, kept with the first row holding it where
    ``idx`` is asked for), then of each window's three columns; with the window size
    known, both loops run without bounds or branches and vectorise. Without ``idx`` the
    first maximum of a column is kept, not the first in row-major order: the same
    values (a tie of 0.0 and -0.0, or of NaNs, may give the other's bits). ResNet-18's
    pooling at batch 4 (one thread, CPU time) took 1.6 ms against 3.0 for
    :func:`_max_pool`, 2.4 against 3.1 with the places."""
    h_, w_ = x.shape[2:]
    oh, ow = y.shape[2:]
    keep = idx.shape[0] != 0
    t = np.full(2 * ow + 1, -np.inf, dtype=x.dtype)
    rows = np.empty(2 * ow + 1, dtype=np.int32)
    q_hi = max(min(w_, 2 * ow + 1 - pw), 0)       # the columns of x that windows read
    tx, rx = t[pw:pw + q_hi], rows[pw:pw + q_hi]    # (the others stay -inf)
    for n in range(n0, n1):
        for c in range(c0, c1):
            for oy in range(oh):
                r0 = 2 * oy - ph
                lo, hi = max(r0, 0), min(r0 + 3, h_)
                if lo >= hi:
                    tx[:] = -np.inf
                else:
                    tx[:] = x[n, c, lo, :q_hi]
                if keep:    # a padding row before is first where the column is -inf
                    rows[:] = -1 if r0 < 0 else lo
                    if r0 < 0:
                        for q in range(q_hi):
                            rx[q] = np.int32(-1) if tx[q] == -np.inf else np.int32(lo)
                for r in range(lo + 1, hi):
                    xr, rr = x[n, c, r], np.int32(r)
                    for q in range(q_hi):
                        # ``b`` after ``a`` is the first maximum where a is not NaN and
                        # b > a or b is NaN
                        a, b = tx[q], xr[q]
                        take = (a == a) & ~(b <= a)
                        tx[q] = b if take else a
                        if keep:
                            rx[q] = rr if take else rx[q]
                yr = y[n, c, oy]
                if not keep:
                    for ox in range(ow):
                        i = 2 * ox
                        p0, p1, p2 = t[i], t[i + 1], t[i + 2]
                        m = p1 if (p0 == p0) & ~(p1 <= p0) else p0
                        yr[ox] = p2 if (m == m) & ~(p2 <= m) else m
                    continue
                ir = idx[n, c, oy]
                for ox in range(ow):
                    i = 2 * ox
                    m, rm, j = t[i], rows[i], np.int32(0)
                    for d in range(1, 3):   # a later column's on a tie where its row is first
                        v, rv = t[i + d], rows[i + d]
                        vn, mn, first = v != v, m != m, rv < rm
                        take = (mn & vn & first) | (~mn & (vn | (v > m) | ((v == m) & first)))
                        m = v if take else m
                        rm = rv if take else rm
                        j = np.int32(d) if take else j
                    yr[ox] = m
                    q = np.int32(i) + j - np.int32(pw)
                    drop = (q < 0) | (q >= w_) | (rm < 0) | (lo >= hi)
                    ir[ox] = np.int32(-1) if drop else rm * np.int32(w_) + q


def _tiled_scatter(idx, gy, gx):
    """``gx`` (N, C, H, W) made zeros but for each window's ``gy`` at its place ``idx``
    from :func:`_max_pool22` (or :func:`_max_pool`), for windows that do not overlap:
    each place takes at most one window's gradient, so it is set, not summed."""
    n_, c_, oh, ow = idx.shape
    w_ = gx.shape[3]
    for n in range(n_):
        for c in range(c_):
            gx[n, c] = 0
            for oy in range(oh):
                for ox in range(ow):
                    i = idx[n, c, oy, ox]
                    if i >= 0:
                        gx[n, c, i // w_, i % w_] = gy[n, c, oy, ox]


def _max_pool_scatter(idx, gy, gx):
    """``gx`` (zeros (N, C, H, W)) plus each window's ``gy`` at its place ``idx`` from
    :func:`_max_pool` (none where -1), the windows last to first as in
    :func:`_max_pool_grad`: the same sums, bit for bit."""
    n_, c_, oh, ow = idx.shape
    w_ = gx.shape[3]
    for n in range(n_):
        for c in range(c_):
            for oy in range(oh - 1, -1, -1):
                for ox in range(ow - 1, -1, -1):
                    i = idx[n, c, oy, ox]
                    if i >= 0:
                        gx[n, c, i // w_, i % w_] += gy[n, c, oy, ox]


def _max_pool_grad(x, gy, y, kh, kw, sh, sw, ph, pw, gx):
    """``gx`` (zeros, the shape of ``x``) plus ``gy`` of every window at the window's
    first maximum (row-major; a padding position takes it and drops it).

    NOTE: the windows run last to first, so that each input position adds the
    windows' gradients in the order NumPy's passes (one per window offset) add them.
    A window inside ``x`` is scanned whole, without bounds checks or an early exit
    (the first maximum kept by a select: no branch to mispredict)."""
    n_, c_, h_, w_ = x.shape
    oh, ow = y.shape[2:]
    for n in range(n_):
        for c in range(c_):
            for oy in range(oh - 1, -1, -1):
                r0 = oy * sh - ph
                rows_inside = r0 >= 0 and r0 + kh <= h_
                for ox in range(ow - 1, -1, -1):
                    q0 = ox * sw - pw
                    m = y[n, c, oy, ox]
                    if rows_inside and q0 >= 0 and q0 + kw <= w_:
                        br, bq = -1, 0
                        for r in range(r0 + kh - 1, r0 - 1, -1):   # the first hit stays
                            for q in range(q0 + kw - 1, q0 - 1, -1):
                                v = x[n, c, r, q]
                                hit = (v == m) | (v != v)
                                br = r if hit else br
                                bq = q if hit else bq
                        if br >= 0:
                            gx[n, c, br, bq] += gy[n, c, oy, ox]
                        continue
                    found = False
                    for r in range(r0, r0 + kh):
                        for q in range(q0, q0 + kw):
                            inside = 0 <= r < h_ and 0 <= q < w_
                            v = x[n, c, r, q] if inside else -np.inf
                            if v == m or v != v:
                                if inside:
                                    gx[n, c, r, q] += gy[n, c, oy, ox]
                                found = True
                                break
                        if found:
                            break


# Bytes (of the input, or of the gradient made) from which the kernels split over the
# workers. NOTE: they compute more per byte than a copy (``engine.PARALLEL_MIN_BYTES``):
# LeNet's first pooling at batch 64 (2.9 MB of input) split at 2 threads took 0.55-0.60
# ms of wall time forward and backward against 0.68-0.72 whole (busy host).
MIN_SPLIT_BYTES = 1 << 20


def _pairs(kernel, stride, before):
    """Whether the windows are :func:`_max_pool22` 's: 2x2, stride 2, no padding before."""
    return tuple(kernel) == (2, 2) and tuple(stride) == (2, 2) and not any(before)


# Whether 3x3 windows of stride 2 run :func:`_max_pool33` (else :func:`_max_pool`).
THREES = True


def _threes(kernel, stride):
    """Whether the windows are :func:`_max_pool33` 's: 3x3, stride 2."""
    return THREES and tuple(kernel) == (3, 3) and tuple(stride) == (2, 2)


def _kernels(x, kernel, stride, *arrays, before=None):
    """The kernels for a max pooling of ``x``, or None where they do not apply (numba
    off; not 2-D float data; windows that do not overlap, where NumPy's passes read
    each input once and are as fast, but for :func:`_pairs` given ``before``)."""
    if (x.ndim != 4 or x.dtype not in _fast._DTYPES or len(kernel) != 2
            or (all(s >= k for s, k in zip(stride, kernel))
                and not (before is not None and _pairs(kernel, stride, before)))
            or any(type(a) is not np.ndarray or a.dtype != x.dtype for a in (x,) + arrays)):
        return None
    return _fast.kernels()


def max_pool2d(x, kernel, stride, before, out, index=False):
    """Max pooling (N, C, *out) of ``x`` padded by ``before`` (and after as ``out``
    needs) with -inf, and where ``index``, the place of each window's first maximum
    (int32, as :func:`_max_pool` gives it), for :func:`max_pool2d_scatter`; None
    where the kernel does not apply."""
    jit = _kernels(x, kernel, stride, before=before)
    if jit is None:
        return None
    y = np.empty(x.shape[:2] + tuple(out), dtype=x.dtype)
    x = np.ascontiguousarray(x)
    idx = np.empty(y.shape if index else (0,) * 4, dtype=np.int32)
    if _pairs(kernel, stride, before) and all(2 * o <= m for o, m in zip(out, x.shape[2:])):
        def part(at):
            jit.max_pool22(x[at], y[at], idx[at] if index else idx)
    elif all(s >= k for s, k in zip(stride, kernel)):
        return None     # a window past the end ("full" convention): NumPy's passes
    elif _threes(kernel, stride):
        n, c = y.shape[:2]
        if x.nbytes < MIN_SPLIT_BYTES or engine.num_threads() <= 1:
            jit.max_pool33(x, *before, 0, n, 0, c, y, idx)
        else:
            engine.parallel_units(_fast_direct._units.pool33,
                                  functools.partial(_cuts, n, c), (x, *before, y, idx),
                                  x.nbytes, MIN_SPLIT_BYTES)
        return (y, idx) if index else y
    else:
        def part(at):
            jit.max_pool(x[at], *kernel, *stride, *before, y[at], idx[at] if index else idx)
    parallel_parts(part, y.shape[:2], x.nbytes, np, min_bytes=MIN_SPLIT_BYTES)
    return (y, idx) if index else y


def max_pool2d_scatter(index, gy, shape, overlap=True):
    """The gradient (zeros of ``shape``, ``gy``'s dtype, plus each window's ``gy`` at its
    first maximum) of the :func:`max_pool2d` that gave ``index``: the values of
    :func:`max_pool2d_grad`, bit for bit, without searching the windows again; None
    where the kernels are off or ``gy`` does not fit. ``overlap``: whether windows
    may share places (else each place is set, not summed)."""
    if (type(gy) is not np.ndarray or type(index) is not np.ndarray or gy.dtype not in _fast._DTYPES
            or gy.shape != index.shape or index.dtype != np.int32 or len(shape) != 4
            or tuple(gy.shape[:2]) != tuple(shape[:2])):
        return None
    jit = _fast.kernels()
    if jit is None:
        return None
    gy = np.ascontiguousarray(gy)
    if overlap:
        gx = np.zeros(shape, dtype=gy.dtype)
        scatter = jit.max_pool_scatter
    else:
        gx = np.empty(shape, dtype=gy.dtype)
        scatter = jit.tiled_scatter
    parallel_parts(lambda at: scatter(index[at], gy[at], gx[at]), gy.shape[:2], gx.nbytes, np,
                   min_bytes=MIN_SPLIT_BYTES)
    return gx


def max_pool2d_grad(x, gy, y, kernel, stride, before):
    """The gradient of :func:`max_pool2d` (``y``, its output) for output gradient ``gy``:
    each window's ``gy`` at its first maximum; None where the kernel does not apply."""
    jit = _kernels(x, kernel, stride, gy, y)
    if jit is None:
        return None
    gx = np.zeros(x.shape, dtype=x.dtype)
    x, gy, y = (np.ascontiguousarray(a) for a in (x, gy, y))
    parallel_parts(lambda at: jit.max_pool_grad(x[at], gy[at], y[at], *kernel, *stride, *before,
                                                gx[at]), y.shape[:2], x.nbytes, np)
    return gx


@functools.lru_cache(maxsize=256)
def _cuts(n, c, split):
    """The units of a pooling of ``n`` samples of ``c`` channels (``_fast_direct``'s
    table: rows ``need, stage, n0, n1, c0, c1``): where ``split``, each sample's
    channels in contiguous parts, ``_fast_direct.UNITS`` in all or one per channel;
    else one unit of the whole."""
    if not split:
        return _fast_direct._table([[(0, n, 0, c)]])
    m = min(c, max(1, -(-_fast_direct.UNITS // n)))
    return _fast_direct._table([[(a, a + 1, c * j // m, c * (j + 1) // m)
                                 for a in range(n) for j in range(m)]])


# The kernels that ``_fast.kernels`` compiles, by the names it gives them.
KERNELS = {"max_pool": _max_pool, "max_pool22": _max_pool22, "max_pool33": _max_pool33,
           "max_pool_grad": _max_pool_grad, "max_pool_scatter": _max_pool_scatter, "tiled_scatter": _tiled_scatter}
