"""Optional numba kernels (``_fast``, which compiles them) for the im2col convolution:
:func:`gather_cols` builds a 2-D convolution's columns from its unpadded input in one
pass (``_conv_kernels.build_cols``), and :func:`add_offsets` adds the products of all
kernel offsets, made by one product, onto a channels-last output (the data gradient,
``convolution._row2im``).

The same values as NumPy's passes, bit for bit: the columns are copies of the input's
values and zeros, and each output value takes the offsets' products in the order
NumPy's one add per offset gives them.
"""
import numpy as np

from ...engine import parallel, parallel_parts
from . import _fast


def _add_offsets(p, kh, kw, sh, sw, dh, dw, y):
    """``y`` (N, H, W, F) plus, for each offset ``t = i * kw + j`` of a (kh, kw) kernel
    in turn, ``p[:, :, :, t]`` ((N, OH, OW, F) of ``p`` (N, OH, OW, kh * kw, F)) at
    rows ``oy * sh + i * dh`` and columns ``ox * sw + j * dw``.

    NOTE: NumPy's add of one offset's block (strided views with runs of F values in
    ``p``) took 46 us for LeNet's second layer at batch 64 (25 offsets of (64, 8, 8,
    20)); this loop, sample by sample (each sample's output stays in the L1 cache
    while its offsets are added), 0.56 ms for all 25 (0.79 offset by offset over the
    whole batch)."""
    n_, oh, ow = p.shape[:3]
    f_ = p.shape[4]
    for n in range(n_):
        for t in range(kh * kw):
            i, j = t // kw, t % kw
            for oy in range(oh):
                r = oy * sh + i * dh
                for ox in range(ow):
                    q = ox * sw + j * dw
                    for c in range(f_):
                        y[n, r, q, c] += p[n, oy, ox, t, c]


def add_offsets(p, kernel, stride, dilate, y):
    """:func:`_add_offsets` for a 2-D kernel on NumPy float arrays of one dtype, then True;
    False (nothing done) where numba is off or the kernel does not apply."""
    if (len(kernel) != 2 or y.dtype not in _fast._DTYPES or p.dtype != y.dtype
            or type(p) is not np.ndarray or type(y) is not np.ndarray):
        return False
    jit = _fast.kernels()
    if jit is None:
        return False
    # (by samples over the workers: each sample's sums are its own)
    parallel_parts(lambda at: jit.add_offsets(p[at], *kernel, *stride, *dilate, y[at]),
                   y.shape[:1], p.nbytes, np)
    return True


def _gather_cols(x, n0, oy0, rows, ow, kh, kw, sh, sw, ph, pw, dh, dw, pn, pr, cols):
    """The im2col columns of ``x`` (N, C, H, W, C-contiguous) zero-padded by ``ph`` rows
    and ``pw`` columns before (negative: cropped), output rows ``oy0:oy0 + rows`` of
    ``ow`` columns, into ``cols`` (flat, planes of ``rows * ow``): plane
    ``(n0 + n) * pn + r * pr`` (``r = (c*kh + i)*kw + j``) holds at ``oy * ow + ox``
    padded ``x[n, c]`` at row ``(oy0 + oy)*sh + i*dh``, column ``ox*sw + j*dw``, zero
    where that lies outside ``x``.

    NOTE: NumPy pads a copy of the input, then gathers from a strided view of it;
    here each tap's plane is written once, its padding as zeros, straight from the
    input. The indices into the flat arrays are unsigned: with signed ones numba
    checks each for a negative (wrap-around) index, which made this loop 2x slower
    than NumPy's passes (ResNet-18's stride-2 3x3 layers, one thread)."""
    n_, c_, h, w = x.shape
    xf = x.ravel()
    plane = rows * ow
    for c in range(c_):
        for i in range(kh):
            for j in range(kw):
                r = (c * kh + i) * kw + j
                q0 = j * dw - pw            # input column of output column 0
                # output columns whose input column lies in [0, w)
                a = 0 if q0 >= 0 else min(ow, (-q0 + sw - 1) // sw)
                b = 0 if q0 >= w else min(ow, (w - 1 - q0) // sw + 1)
                b = max(a, b)
                for n in range(n_):
                    at = (n * c_ + c) * h * w
                    base = ((n0 + n) * pn + r * pr) * plane
                    for oy in range(rows):
                        y = (oy0 + oy) * sh + i * dh - ph
                        e = np.uint64(base + oy * ow)
                        if y < 0 or y >= h:
                            for ox in range(ow):
                                cols[e + np.uint64(ox)] = 0
                            continue
                        for ox in range(a):
                            cols[e + np.uint64(ox)] = 0
                        src = np.uint64(at + y * w + q0 + a * sw)
                        dst = e + np.uint64(a)
                        for k in range(b - a):
                            cols[dst + np.uint64(k)] = xf[src + np.uint64(k * sw)]
                        for ox in range(b, ow):
                            cols[e + np.uint64(ox)] = 0


def cols_gatherer(x, kernel):
    """The compiled :func:`_gather_cols` where it applies to a 2-D convolution of ``x``
    (a NumPy float array), else None (numba off)."""
    if len(kernel) != 2 or type(x) is not np.ndarray or x.dtype not in _fast._DTYPES:
        return None
    jit = _fast.kernels()
    return None if jit is None else jit.gather_cols


def gather_cols(x, kernel, stride, dilate, pad, out, cols, per_sample, n0=0):
    """:func:`_gather_cols` of all output rows of ``x`` 's samples (from sample ``n0``
    of the columns) into ``cols``, the whole columns, of ``x`` 's dtype, laid out
    (N, C*K, L) if ``per_sample``, else (C*K, N, L), then True; False (nothing done)
    where :func:`cols_gatherer` is None. The samples split over the workers."""
    gather = cols_gatherer(x, kernel)
    if (gather is None or type(cols) is not np.ndarray or cols.dtype != x.dtype
            or not cols.flags.c_contiguous or not x.flags.c_contiguous):
        return False
    ck = x.shape[1] * kernel[0] * kernel[1]
    n = cols.size // (ck * out[0] * out[1])
    pn, pr = (ck, 1) if per_sample else (1, n)
    flat = cols.reshape(-1)

    def run(lo, hi):
        gather(x[lo:hi], n0 + lo, 0, *out, *kernel, *stride, *pad, *dilate, pn, pr, flat)
    parallel(run, x.shape[0], cols.nbytes * x.shape[0] // n, np)
    return True


# The kernels that ``_fast.kernels`` compiles, by the names it gives them.
KERNELS = {"add_offsets": _add_offsets, "gather_cols": _gather_cols}
