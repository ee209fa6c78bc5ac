"""Optional numba kernels: Winograd F(2x2, 3x3) convolutions, and (from ``_fast_bn``,
``_fast_pool``, ``_fast_conv`` and ``_fast_direct``) BatchNorm's passes, 2-D max pooling,
the im2col convolution's columns and data gradient, and 1x1 convolutions in inference.

Installed with ``pip install mxlite[fast]``; ``MXLITE_NUMBA=0`` turns them off. Each
entry point returns None where numba is absent or turned off, or where its kernel
does not apply, and the caller keeps its NumPy path (the reference, which the tests
also run).

Winograd F(2x2, 3x3) (Lavin & Gray, 2015) computes each 2x2 block of outputs from
the 4x4 input tile under it with 16 products instead of 36: the input tiles and the
filters are transformed (``V = B^T d B``, ``U = G g G^T``), multiplied channel by
channel as 16 matrix products ``U[k] (F, C) @ V[k] (C, tiles)``, and the 4x4 products
of each tile transformed back (``Y = A^T M A``). The products (2.25x fewer
multiply-adds than im2col's) run in BLAS; numba fuses each transform into one pass.
An inference on up to ``WIDE_MAX_CHANNELS`` channels runs F(2x4, 3x3) the same way:
each 2x4 block of outputs from the 4x6 tile under it with 24 products instead of 72,
F(2, 3) along the rows (the transforms above) and F(4, 3) along the columns, points 0,
-1, 1, 1/2, -2 and infinity (of the point sets measured, the least float32 error): per
output 3 products against F(2x2, 3x3)'s 4, and 0.75x the transformed tiles.

The kernels of ``_fast_bn``, ``_fast_pool``, ``_fast_conv`` and ``_fast_direct`` are
compiled with these.
"""
import functools
import os
import threading
import types
import weakref

import numpy as np

from ... import engine
from ...engine import matmul, num_threads, parallel, parallel_products, parallel_stages
from . import _fast_direct

# Tiles (N * ceil(OH/2) * ceil(OW/2)) and input channels from which Winograd runs:
# below, the transforms and 16 small products cost more than im2col saves (measured:
# 0.5x at 16 tiles of 512 channels, 1.1x at 128; 0.4x with 3 channels, 1.6x with 8).
MIN_TILES = 100
MIN_CHANNELS = 8
# Tiles from which Winograd runs where the filters' transform is kept across calls
# (``keeping``): then only the input and output transforms are to be paid for.
# Measured against im2col at batch 1: 1.6x at 49 tiles (256 channels, 14x14 maps),
# 1.2-1.4x at 25, 1.0-1.3x at 16 (512 and 256 channels: ResNet-50's 7x7 maps).
MIN_TILES_KEPT = 20

# Input channels up to which an inference (an unrecorded forward: a recorded one keeps
# F(2x2, 3x3)'s tiles for its weight gradient) runs Winograd F(2x4, 3x3).
# NOTE: its error against a float64 reference on ResNet-like layers (relu'd normal
# inputs, He-scaled weights), as a multiple of im2col's float32 error: mean 2.1-2.5x,
# largest 1.8-2.6x at 64 and 128 channels; 3.2-3.3x and 3.2-4.4x at 256 and 512
# (F(2x2, 3x3): 1.1-1.8x and 0.7-1.7x; F(4x4, 3x3) on the same points: 4.4-6.3x and
# 5.6-12.5x, too far from float32 round-off, so it is not used). Its time, measured in
# ResNet-18's hybridized inference at batch 8, one thread, CPU time (with BatchNorm's
# epilogue): 1.22x less at 64 channels (56x56 maps), 1.28x at 128 (28x28); the
# products alone at 2 threads: 1.0x at 256 channels, 0.35-1.0x at 512 on 7x7 maps
# (narrower products, reading 1.5x the transformed filters).
WIDE_MAX_CHANNELS = 128

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
# (9, 24): a flattened 3x3 filter g times this is F(2x4, 3x3)'s ``G2 g G4^T`` (4x6),
# point (i, j) at 6i + j, in float64 (G2, G4: rows per point)
_G24 = np.einsum("ir,js->rsij", [[1, 0, 0], [.5, .5, .5], [.5, -.5, .5], [0, 0, 1]],
                 [[1, 0, 0], [-1 / 3, 1 / 3, -1 / 3], [1 / 3, 1 / 3, 1 / 3],
                  [-16 / 15, -8 / 15, -4 / 15], [1 / 15, -2 / 15, 4 / 15], [0, 0, 1]]
                 ).reshape(9, 24)
# Winograd's schemes: (planes, outputs per tile along a row, the kernels' ``wide``)
_F22 = (16, 2, False)
_F24 = (24, 4, True)


@functools.cache
def kernels():
    """The compiled kernels, or None where numba is absent or ``MXLITE_NUMBA=0``.

    NOTE: numba is imported on first use, not with mxlite (it adds 0.3 s to the
    import); ``cache=True`` keeps the machine code in ``__pycache__``, so that only
    the first process after an install compiles (about 1.5 s per dtype)."""
    if os.environ.get("MXLITE_NUMBA", "1") == "0":
        return None
    try:
        import numba
    except ImportError:
        return None
    try:
        jit = numba.njit(cache=True, nogil=True)
        jit(_filter_tiles)
        cache = True
    except RuntimeError:    # no writable cache directory: compile in every process
        jit, cache = numba.njit(nogil=True), False
    # NOTE: the sums may be reordered (vectorised, in float64): no other operation is
    sum_jit = numba.njit(cache=cache, nogil=True, fastmath={"reassoc"})
    # (a division by zero gives inf, as NumPy's, instead of raising)
    divide_jit = numba.njit(cache=cache, nogil=True, error_model="numpy")
    from . import _fast_bn as bn, _fast_conv, _fast_pool
    from ..tensor import _fast_update
    affine = jit(bn._channel_affine)
    input_tiles, output_tiles = jit(_input_tiles), jit(_output_tiles)
    more = {k: jit(f) for m in (_fast_conv, _fast_pool, _fast_update)
            for k, f in m.KERNELS.items()}
    pointwise, taps = _fast_direct.compiled(jit, affine, input_tiles, output_tiles,
                                            more["max_pool33"])
    return types.SimpleNamespace(input_tiles=input_tiles,
                                 filter_tiles=jit(_filter_tiles),
                                 output_tiles=output_tiles,
                                 grad_tiles=jit(_grad_tiles), filter_grads=jit(_filter_grads),
                                 **more,
                                 channel_affine=affine,
                                 pointwise=pointwise, taps=taps,
                                 channel_moments=sum_jit(bn._channel_moments),
                                 channel_grad_sums=sum_jit(bn._channel_grad_sums),
                                 channel_grad=jit(bn._channel_grad),
                                 inverse_scale=divide_jit(bn._inverse_scale))


def _input_tiles(x, p0, p1, c0, c1, th, tw, wide, v):
    """``V = B^T d B`` of every 4x4 tile d of channels ``c0:c1`` of ``x`` (N, C, H, W)
    zero-padded by ``p0`` rows and ``p1`` columns before (negative: cropped), tile (a, b)
    of sample n starting at padded row 2a, column 2b, into ``v[:, c, (n*th+a)*tw+b]`` of
    ``v`` (16, C, N*th*tw). Where ``wide``, F(2x4, 3x3)'s ``B2^T d B4`` of every 4x6
    tile, tile (a, b) starting at padded row 2a, column 4b, into ``v`` (24, C,
    N*th*tw), point (i, j) at 6i + j.

    NOTE: ``B^T d`` runs over whole rows of 4 image rows at once (a padding row is a
    row of zeros, the padding columns of ``t`` stay zero), and the channels are the
    outer loop so that the 16 planes of ``v`` are each written in one run per
    channel: 5x faster than tile by tile. It reads ``x`` itself, not a padded copy
    made first (ResNet-18's inference at batch 4, one thread: the step 1.02x faster),
    as 1-D rows indexed from 0, which numba vectorises (indexed from an offset in 4-D,
    it did not: this transform 1.2-1.6x slower). The constants are scalars of the
    data's dtype: a float literal is float64 in a compiled loop (an integer times a
    float32 too), which made the float32 loop 1.6x slower."""
    n_, _, h, w = x.shape
    wp = (4 if wide else 2) * tw + 2
    q0, q1 = max(p1, 0), min(w + p1, wp)    # t's columns that read x
    t = np.zeros((4, wp), dtype=x.dtype)    # (its padding columns stay zero)
    s0, s1 = q0 - p1, q1 - p1               # the columns of x read
    zero = np.zeros(s1 - s0, dtype=x.dtype)
    t0, t1, t2, t3 = t[0, q0:q1], t[1, q0:q1], t[2, q0:q1], t[3, q0:q1]
    k = np.empty(3, dtype=x.dtype)
    k[0], k[1], k[2] = 0.5, 1.5, 2.5
    h1, h3, h5 = k[0], k[1], k[2]
    for c in range(c0, c1):
        for n in range(n_):
            for a in range(th):
                r = 2 * a - p0                      # t = B^T d
                x0 = x[n, c, r, s0:s1] if 0 <= r < h else zero
                x1 = x[n, c, r + 1, s0:s1] if 0 <= r + 1 < h else zero
                x2 = x[n, c, r + 2, s0:s1] if 0 <= r + 2 < h else zero
                x3 = x[n, c, r + 3, s0:s1] if 0 <= r + 3 < h else zero
                for j in range(s1 - s0):
                    t0[j] = x0[j] - x2[j]
                    t1[j] = x1[j] + x2[j]
                    t2[j] = x2[j] - x1[j]
                    t3[j] = x1[j] - x3[j]
                o = (n * th + a) * tw
                for i in range(4):                  # v = t B
                    if not wide:
                        for b in range(tw):
                            q = 2 * b
                            v[4 * i, c, o + b] = t[i, q] - t[i, q + 2]
                            v[4 * i + 1, c, o + b] = t[i, q + 1] + t[i, q + 2]
                            v[4 * i + 2, c, o + b] = t[i, q + 2] - t[i, q + 1]
                            v[4 * i + 3, c, o + b] = t[i, q + 1] - t[i, q + 3]
                        continue
                    for b in range(tw):             # (B4: points 0, -1, 1, 1/2, -2)
                        q = 4 * b
                        d0, d1, d2 = t[i, q], t[i, q + 1], t[i, q + 2]
                        d3, d4, d5 = t[i, q + 3], t[i, q + 4], t[i, q + 5]
                        e31, e42 = d3 - d1, d4 - d2
                        v[6 * i, c, o + b] = (d0 + d4) + h3 * e31 - (d2 + d2)
                        v[6 * i + 1, c, o + b] = (d1 + d4) + h1 * d3 - h5 * d2
                        v[6 * i + 2, c, o + b] = (d4 - d1) + h1 * d2 + h5 * d3
                        v[6 * i + 3, c, o + b] = e42 + (e31 + e31)
                        v[6 * i + 4, c, o + b] = e42 - h1 * e31
                        v[6 * i + 5, c, o + b] = (d1 + d5) + h3 * e42 - (d3 + d3)


def _filter_tiles(w, a0, flip, u):
    """``U = G g G^T`` of every 3x3 filter g of ``w`` (F, C, 3, 3), the filters ``a0, a0 +
    1, ...``, into ``u`` (16, F, C); where ``flip``, of ``g[::-1, ::-1]``."""
    a_, b_ = w.shape[:2]
    i0, i2 = (2, 0) if flip else (0, 2)
    for a in range(a_):
        for b in range(b_):
            f, c = a0 + a, b
            g00, g01, g02 = w[a, b, i0, i0], w[a, b, i0, 1], w[a, b, i0, i2]
            g10, g11, g12 = w[a, b, 1, i0], w[a, b, 1, 1], w[a, b, 1, i2]
            g20, g21, g22 = w[a, b, i2, i0], w[a, b, i2, 1], w[a, b, i2, i2]
            # G g: rows g0, p, q, g2; then each row r times G^T
            p0, p1, p2 = 0.5 * (g00 + g10 + g20), 0.5 * (g01 + g11 + g21), 0.5 * (g02 + g12 + g22)
            q0, q1, q2 = 0.5 * (g00 - g10 + g20), 0.5 * (g01 - g11 + g21), 0.5 * (g02 - g12 + g22)
            u[0, f, c], u[3, f, c] = g00, g02
            u[1, f, c], u[2, f, c] = 0.5 * (g00 + g01 + g02), 0.5 * (g00 - g01 + g02)
            u[4, f, c], u[7, f, c] = p0, p2
            u[5, f, c], u[6, f, c] = 0.5 * (p0 + p1 + p2), 0.5 * (p0 - p1 + p2)
            u[8, f, c], u[11, f, c] = q0, q2
            u[9, f, c], u[10, f, c] = 0.5 * (q0 + q1 + q2), 0.5 * (q0 - q1 + q2)
            u[12, f, c], u[15, f, c] = g20, g22
            u[13, f, c], u[14, f, c] = 0.5 * (g20 + g21 + g22), 0.5 * (g20 - g21 + g22)


def _output_tiles(m, f0, f1, n0, a0, th, tw, wide, mean, scale, shift, r, affine, add,
                  relu, y):
    """``Y = A^T M A`` of the 4x4 products ``m`` (16, F, n*th*tw) of every tile of the
    filters ``f0:f1`` into its 2x2 block of ``y`` (N, F, OH, OW) (where ``wide``, F(2x4,
    3x3)'s ``A2^T M A4`` of the 4x6 products (24, F, n*th*tw) into 2x4 blocks), cropped
    to ``y`` at the edges, the tiles those of samples ``n0:n0 + n`` and tile rows ``a0:a0
    + th`` of each; then, where ``affine``, BatchNorm's ``(v - mean) * scale + shift``
    with the per-filter vectors (F,), ``+ r`` (``y``'s shape) where ``add`` and ``max(.,
    0)`` where ``relu``: the operations of ``_channel_affine``, in its order, on the
    values it would read.

    NOTE: the body is an inner function called with the tile's width as a constant
    (numba inlines it): with the width a variable the loops ran 1.4x slower. ``A^T M``
    runs over all of a filter's tiles at once, on 1-D rows of ``m`` indexed from 0,
    which numba vectorises (1.05-1.15x faster than tile row by tile row); ``sa[i, j]``
    holds point (i, j) of every tile in a run. A part of the filters, samples or rows is
    given by its range or offsets, the arrays whole: a part sliced out of them is a
    strided view, whose loops numba compiles more slowly (one thread: ResNet-50's
    batch-1 layers in halves of their filters 1.2-1.33x faster by ranges; 64 channels on
    56x56 maps at batch 4 and 8 by blocks of 6 tile rows 1.46-1.58x)."""
    oh, ow = y.shape[2:]
    n_ = m.shape[2] // (th * tw)
    k = np.empty(6, dtype=y.dtype)          # (constants as in _input_tiles)
    k[0], k[1], k[2], k[3], k[4], k[5] = 0.5, 0.25, 0.125, 2, 4, 8
    h1, q1, e1, k2, k4, k8 = k[0], k[1], k[2], k[3], k[4], k[5]

    def run(kc):                            # kc: points per tile row
        tiles = m.shape[2]
        sa = np.empty((2, kc, tiles), dtype=y.dtype)
        o = np.empty((kc - 2) * tw, dtype=y.dtype)
        for f in range(f0, f1):
            for j in range(kc):                         # s = A^T M, the filter's tiles
                m0, m1, m2, m3 = m[j, f], m[kc + j, f], m[2 * kc + j, f], m[3 * kc + j, f]
                z0, z1 = sa[0, j], sa[1, j]
                for b in range(tiles):
                    x1, x2 = m1[b], m2[b]
                    z0[b] = m0[b] + x1 + x2
                    z1[b] = x1 - x2 - m3[b]
            for n in range(n_):
                for a in range(th):
                    o_ = (n * th + a) * tw
                    s = sa[:, :, o_:o_ + tw]
                    for i in range(min(2, oh - 2 * (a0 + a))):     # y = s A
                        row = 2 * (a0 + a) + i
                        for b in range(tw):
                            if kc == 4:
                                o[2 * b] = s[i, 0, b] + s[i, 1, b] + s[i, 2, b]
                                o[2 * b + 1] = s[i, 1, b] - s[i, 2, b] - s[i, 3, b]
                                continue
                            s0, s1, s2 = s[i, 0, b], s[i, 1, b], s[i, 2, b]  # (A4: B4's points)
                            s3, s4, s5 = s[i, 3, b], s[i, 4, b], s[i, 5, b]
                            p, d = s1 + s2, s2 - s1
                            o[4 * b] = s0 + p + s3 + s4
                            o[4 * b + 1] = d + h1 * s3 - k2 * s4
                            o[4 * b + 2] = p + q1 * s3 + k4 * s4
                            o[4 * b + 3] = d + e1 * s3 - k8 * s4 + s5
                        if not affine:
                            for q in range(ow):
                                y[n0 + n, f, row, q] = o[q]
                            continue
                        mf, sf, bf = mean[f], scale[f], shift[f]
                        for q in range(ow):
                            v = (o[q] - mf) * sf + bf
                            if add:
                                v = v + r[n0 + n, f, row, q]
                            if relu and not (v > 0 or v != v):
                                v = 0
                            y[n0 + n, f, row, q] = v
    if wide:
        run(6)
    else:
        run(4)


def _grad_tiles(gy, f0, f1, r0, r1, th, tw, dm):
    """``dM = A dY A^T`` of every 2x2 block dY of filters ``f0:f1`` of the output gradient
    ``gy`` (N, F, 2*th, 2*tw), in the rows of tiles ``r0:r1`` (row ``n * th + a``), into
    ``dm`` (16, F, (r1 - r0) * tw): the adjoint of ``_output_tiles``."""
    for f in range(f0, f1):
        for ra in range(r0, r1):
            n, a = ra // th, ra % th
            o = (ra - r0) * tw
            for b in range(tw):
                y00, y01 = gy[n, f, 2 * a, 2 * b], gy[n, f, 2 * a, 2 * b + 1]
                y10, y11 = gy[n, f, 2 * a + 1, 2 * b], gy[n, f, 2 * a + 1, 2 * b + 1]
                # rows of A dY: y0, y0 + y1, y0 - y1, -y1; each row [p, q] times
                # A^T: [p, p + q, p - q, -q]
                s0, s1, d0, d1 = y00 + y10, y01 + y11, y00 - y10, y01 - y11
                k = o + b
                dm[0, f, k], dm[1, f, k] = y00, y00 + y01
                dm[2, f, k], dm[3, f, k] = y00 - y01, -y01
                dm[4, f, k], dm[5, f, k], dm[6, f, k], dm[7, f, k] = s0, s0 + s1, s0 - s1, -s1
                dm[8, f, k], dm[9, f, k], dm[10, f, k], dm[11, f, k] = d0, d0 + d1, d0 - d1, -d1
                dm[12, f, k], dm[13, f, k] = -y10, -y10 - y11
                dm[14, f, k], dm[15, f, k] = y11 - y10, y11


def _filter_grads(du, gw):
    """``dg = G^T dU G`` of every (f, c) of ``du`` (16, F, C) into ``gw`` (F, C, 3, 3):
    the adjoint of ``_filter_tiles``."""
    f_, c_ = gw.shape[:2]
    r = np.empty((4, 3), dtype=np.float64)
    for f in range(f_):
        for c in range(c_):
            for i in range(4):              # r = dU G, row by row
                u1, u2 = du[4 * i + 1, f, c], du[4 * i + 2, f, c]
                r[i, 0] = du[4 * i, f, c] + 0.5 * (u1 + u2)
                r[i, 1] = 0.5 * (u1 - u2)
                r[i, 2] = 0.5 * (u1 + u2) + du[4 * i + 3, f, c]
            for j in range(3):              # gw = G^T r, column by column
                gw[f, c, 0, j] = r[0, j] + 0.5 * (r[1, j] + r[2, j])
                gw[f, c, 1, j] = 0.5 * (r[1, j] - r[2, j])
                gw[f, c, 2, j] = 0.5 * (r[1, j] + r[2, j]) + r[3, j]


def _split(fn, n, nbytes, transform=False):
    """``fn(lo, hi)`` over parts of ``range(n)`` (channels or filters) on the CPU
    workers: the kernels release the GIL. ``transform``: a tile transform, split from
    ``engine.PARALLEL_MIN_KERNEL_BYTES`` (it computes more per byte than a copy)."""
    parallel(fn, n, nbytes, np,
             min_bytes=engine.PARALLEL_MIN_KERNEL_BYTES if transform else None)


def _planes(rows, cols, dtype, k=16):
    """An empty (k, rows, cols) array whose k planes do not start 4 KiB apart.

    NOTE: the transforms write (or read) all 16 planes at one place each: planes a
    multiple of 4 KiB apart fall in one cache set, which made them 5 to 14x slower."""
    buf = np.empty((k, rows * cols + 16), dtype=dtype)
    return buf[:, :rows * cols].reshape(k, rows, cols)


def _product_planes(rows, cols, dtype, k=16):
    """An empty C-contiguous (k, rows, cols) array for Winograd's products M, which the
    output transform reads (four planes at a time) and a product writes plane by plane.

    NOTE: not :func:`_planes`' padded planes: the output transform compiled for a
    contiguous M vectorises its loops over the tiles, 1.16-1.51x faster (ResNet's
    shapes at batch 1, planes 4 KiB apart or not); the input transform, writing all of
    V's planes at one place each, keeps its padded planes (contiguous: 1.1-1.5x slower)."""
    return np.empty((k, rows, cols), dtype=dtype)


def _tiled(x, pad, th, tw):
    """``x`` (N, C, H, W) shifted by ``pad`` (negative: cropped) into th x tw whole 2x2
    tiles, (N, C, 2*th+2, 2*tw+2), zero where ``x`` has no value: a copy (4x smaller
    than the transformed tiles), after which the gradient's transform reads without
    bounds checks.

    NOTE: zeroed whole, then copied into: zeroing only the borders (a column at a time)
    was slower."""
    y = np.zeros(x.shape[:2] + (2 * th + 2, 2 * tw + 2), dtype=x.dtype)
    src, dst = [], []
    for p, m, size in zip(pad, x.shape[2:], y.shape[2:]):
        lo, hi = max(-p, 0), min(m, size - p)
        src.append(slice(lo, hi))
        dst.append(slice(lo + p, hi + p))
    y[:, :, dst[0], dst[1]] = x[:, :, src[0], src[1]]
    return y


def _winograd(x, other, kernel, stride, dilate, groups, out, min_tiles=None):
    """The kernels and (th, tw) tiles for a convolution of ``x`` with ``kernel``
    (``other``: the weight or the output gradient), or None where Winograd does not
    apply (numba off; not a one-group, stride-1, undilated 3x3 2-D convolution of
    float arrays; fewer tiles than ``min_tiles`` (default ``MIN_TILES``) or too few
    channels to pay for the transforms)."""
    if (x.ndim != 4 or tuple(kernel) != (3, 3) or groups != 1
            or tuple(stride) != (1, 1) or tuple(dilate) != (1, 1)
            or x.dtype not in _DTYPES or other.dtype != x.dtype
            or type(x) is not np.ndarray or type(other) is not np.ndarray):
        return None
    th, tw = (out[0] + 1) // 2, (out[1] + 1) // 2
    if (x.shape[0] * th * tw < (MIN_TILES if min_tiles is None else min_tiles)
            or x.shape[1] < MIN_CHANNELS):
        return None
    jit = kernels()
    return None if jit is None else (jit, th, tw)


def _input(jit, x, pad, th, tw, scheme=None):
    scheme = scheme or _F22
    v = _planes(x.shape[1], x.shape[0] * th * tw, x.dtype, scheme[0])
    _split(_input_part(jit, x, pad, th, tw, scheme, v), x.shape[1], v.nbytes, transform=True)
    return v


def _input_part(jit, x, pad, th, tw, scheme, v):
    """``fn(lo, hi)``: the input transform of channels ``lo:hi`` of ``x`` into ``v``.

    NOTE: each part reads and writes the whole arrays: a part cut out of them along
    the channels is a strided view, which numba's loops read and write more slowly
    (1.2x)."""
    x = np.ascontiguousarray(x)
    return lambda lo, hi: jit.input_tiles(x, pad[0], pad[1], lo, hi, th, tw, scheme[2], v)


def _output_part(jit, m, th, tw, wide, epi, y):
    """``fn(lo, hi)``: the output transform of filters ``lo:hi`` of the products ``m`` into
    ``y``, with the epilogue ``epi`` (the arguments of ``_output_tiles``)."""
    return lambda lo, hi: jit.output_tiles(m, lo, hi, 0, 0, th, tw, wide, *epi, y)


# Bytes of transformed input tiles (V) from which the Winograd convolution of a small
# input runs in stages (:func:`_staged`). NOTE: measured in ResNet-50's hybridized
# inference at batch 1, 2 threads, the op alternated in one process (min of 30-40): 64
# channels on 56x56 maps (V: 2.4 MB) 0.85-0.89x the time, 128 on 28x28 (1.2 MB)
# 0.94-0.98x; 256 on 14x14 (0.8 MB) 1.07-1.12x (its transforms, 0.1 ms, paid less than
# the two waits between the stages).
STAGED_MIN_BYTES = 1 << 20
# The same where the filters are kept as ``_fast_direct``'s packed planes and its units
# run the stages inside one compiled call (``_fast_direct.winograd``: no hand-off
# between the stages). NOTE: 256 channels on 14x14 maps at batch 1 (V: 0.8 MB), 2
# threads, busy host, the op alternated in one process (400 each): staged 1.17-1.22x
# faster (least, first quartile and median) than its transforms serial on the caller
# around the split products; through ``_staged``'s stages of GIL hand-offs instead,
# 0.92-0.98x.
STAGED_UNITS_MIN_BYTES = 0


def _staged(jit, x, pad, u, th, tw, epi, y, scheme):
    """The Winograd convolution of a small input (V under the transforms' split, as at
    batch 1) with the filters' ``u`` into ``y``, in three stages handed to the workers
    at once (:func:`engine.parallel_stages`): the input transform by parts of the
    channels, the products by parts of the planes (each plane's the one product the
    whole would run: the same bits at any threads), the output transform (with the
    epilogue ``epi``, the arguments of ``_output_tiles``) by parts of the filters;
    returns V.

    NOTE: otherwise the transforms run on the caller alone (under
    ``PARALLEL_MIN_KERNEL_BYTES``) and only the products on the workers."""
    if u.ndim == 2 and _fast_direct.CLAIMS:     # (the packed planes: one compiled call)
        return _fast_direct.winograd(x, pad, u, th, tw, scheme, epi, y)
    k, _, wide = scheme
    (n, c), f = x.shape[:2], y.shape[1]
    v = _planes(c, n * th * tw, x.dtype, k)
    m = _product_planes(f, n * th * tw, x.dtype, k)
    parallel_stages([(_input_part(jit, x, pad, th, tw, scheme, v), c, min(c, 8)),
                     (functools.partial(_products, u, v, m), k, 8),
                     (_output_part(jit, m, th, tw, wide, epi, y), f, min(f, 8))],
                    k * f * c * n * th * tw)
    return v


def _products(u, v, m, lo, hi):
    """The products ``m[i] = U[i] @ v[i]`` of the planes ``lo:hi``: by ``_fast_direct``'s
    kernel where ``u`` holds the packed planes of ``U`` (2-D: kept, :func:`conv3x3`),
    else by the BLAS (``u`` is ``U``)."""
    if u.ndim == 2:
        _fast_direct.plane_products(u, v, m, lo, hi)
    else:
        np.matmul(u[lo:hi], v[lo:hi], out=m[lo:hi])


def _filters(jit, w, scheme=None):
    """``U`` (16, F, C) of the filters ``w`` (F, C, 3, 3); (24, F, C) for ``_F24``.
    Where ``w`` is the flipped, transposed view of contiguous (C, F, 3, 3) weights (a
    data gradient's), ``U`` is the transposed view of the flipped filters' (16, C, F),
    made from the weights as they lie: a transposed copy of the weights cost as much as
    the transform."""
    if scheme is _F24:
        u = _planes(w.shape[0], w.shape[1], w.dtype, 24)
        t = np.matmul(_G24.T, w.reshape(-1, 9).T.astype(np.float64))      # (24, F * C)
        np.copyto(u, t.reshape(u.shape), casting="same_kind")
        return u
    src = w[:, :, ::-1, ::-1].swapaxes(0, 1)
    flip = src.flags.c_contiguous
    src = src if flip else np.ascontiguousarray(w)
    u = _planes(src.shape[0], src.shape[1], w.dtype)
    _split(lambda lo, hi: jit.filter_tiles(src[lo:hi], lo, flip, u), src.shape[0], u.nbytes)
    return u.transpose(0, 2, 1) if flip else u


# -- blocks of tiles ---------------------------------------------------------------------
# Bytes of transformed tiles (V) from which an inference runs block by block: below,
# V and M stay in the caches and the whole products (wider, fewer) are faster.
# NOTE: measured at 2 threads on a busy host: 1.2-1.3x (wall and CPU time) at batch 8
# of 64 channels on 56x56 maps (V: 26 MB); 0.6-0.9x at 128 and more channels on
# smaller maps (V: 3-13 MB) and at batch 1.
BLOCKED_MIN_BYTES = 16 << 20
# Bytes of V and M one block holds: within a core's L2 cache, where the products read
# V and the output transform reads M.
BLOCK_BYTES = 1 << 20
# Tiles per block at least, for products of a useful width.
MIN_BLOCK_TILES = 64


def _blocks(n, th, tw, c, f, itemsize, k=16):
    """Blocks (n0, n1, a0, a1), tile rows a0:a1 of samples n0:n1, covering the (n, th,
    tw) tiles in order, each of about ``BLOCK_BYTES`` of V and M (rows of one sample, or
    whole samples where a sample has fewer tiles). Cut by the shapes alone."""
    target = max(MIN_BLOCK_TILES, BLOCK_BYTES // (k * itemsize * (c + f)))
    if th * tw >= target:
        rows = max(1, target // tw)
        return [(i, i + 1, a, min(a + rows, th)) for i in range(n) for a in range(0, th, rows)]
    k = max(1, target // (th * tw))
    return [(i, min(i + k, n), 0, th) for i in range(0, n, k)]


def _blocked(jit, x, pad, u, blocks, th, tw, epi, y, scheme=None):
    """The Winograd convolution block by block (:func:`_blocks`): each block's padded
    input rows (:func:`_tiled`), input transform, 16 products and output transform
    (into ``y``, with the epilogue ``epi``, the arguments of ``_output_tiles``) one after
    the other while its V and M are in cache, the blocks split over the CPU workers.
    None: fewer blocks than threads (the caller runs the whole products, split over
    the workers).

    NOTE: each block's transform reads its own rows of the input (padding them as it
    reads), rather than the caller padding the whole input before them (a serial copy
    the other thread waited on): 64 channels on 56x56 maps at batch 8, the op
    alternated, best of 40: 1.08-1.11x at 2 threads, 1.05-1.07x at 1."""
    if len(blocks) < min(num_threads(), 2):
        return None
    mean, scale, shift, r4, affine, add, relu = epi
    c, f = x.shape[1], u.shape[1]
    k, _, wide = scheme or _F22
    x = np.ascontiguousarray(x)

    def run(lo, hi):
        for n0, n1, a0, a1 in blocks[lo:hi]:
            tiles = (n1 - n0) * (a1 - a0) * tw
            v = _planes(c, tiles, x.dtype, k)
            jit.input_tiles(x[n0:n1], pad[0] - 2 * a0, pad[1], 0, c, a1 - a0, tw, wide, v)
            m = np.matmul(u, v, out=_product_planes(f, tiles, x.dtype, k))
            jit.output_tiles(m, 0, f, n0, a0, a1 - a0, tw, wide, mean, scale, shift, r4,
                             affine, add, relu, y)
    parallel_products(run, len(blocks), k * f * c * x.shape[0] * th * tw)
    return y


# -- filters kept across calls ----------------------------------------------------------
# A hybridized graph's inference keeps each 3x3 layer's ``U`` (or its planes packed for
# ``_fast_direct``, or the weights packed for it, as a 1x1 layer does) while the layer's
# weight is unchanged (see ``fused.py``): for the duration of the layer's step it names, in
# this thread's ``_kept.entry``, the weight array, the weight's version (its NDArray's
# in-place write counter, a list ``[count]`` that every write bumps) and the holder.
_kept = threading.local()


class KeptFilters:
    """One layer's ``U`` or packed weights (or None, the weight seen once; one kind at a
    time, told apart by their shapes), with the weight array (weakly),
    the version list and the count it was made at, in one tuple (replaced at once: a
    thread reading it meanwhile sees the old or the new one)."""
    __slots__ = ("held",)

    def __init__(self):
        self.held = None


class keeping:
    """Within the block, a 3x3 convolution with ``w`` (this very array) reuses the ``U``
    held by ``kept`` where it was made from ``w`` with ``version`` (this very list) at
    its present count, and otherwise makes it and leaves it there.

    NOTE: a class, not a generator's context: entered by every kept convolution's
    inference, where a generator's frame cost 2-3 us more."""
    __slots__ = ("entry", "old")

    def __init__(self, w, version, kept):
        self.entry = (w, version, kept)

    def __enter__(self):
        self.old = getattr(_kept, "entry", None)
        _kept.entry = self.entry

    def __exit__(self, *exc):
        _kept.entry = self.old


def _keeps(w):
    """Whether the filters' transform of ``w`` is (to be) kept across calls."""
    entry = getattr(_kept, "entry", None)
    return entry is not None and entry[0] is w


def _kept_filters(w, shape):
    """(the array of ``shape`` kept for ``w`` (Winograd's ``U``, or the packed weights of
    :func:`pointwise`) or None, and where a new one is to be kept: the holder and the
    stamp to keep it with, taken before it is made).

    NOTE: ``U`` is kept from the second call with the same weight on, so that a graph
    that runs once (a child block's, while its parent traces its own) holds none."""
    entry = getattr(_kept, "entry", None)
    if entry is None or entry[0] is not w:
        return None, None
    kept, version = entry[2], entry[1]
    held = kept.held
    stamp = (weakref.ref(w), version, version[0])
    if held is None or held[0]() is not w or held[1] is not version or held[2] != version[0]:
        kept.held = stamp + (None,)        # seen once
        return None, None
    if held[3] is not None and held[3].shape == shape:
        return held[3], None
    return None, (kept, stamp)


def conv3x3(x, w, stride, dilate, pad, groups, out, keep_tiles=False, epilogue=None,
            inference=False):
    """The 3x3 cross-correlation (N, F, *out) of ``x`` (N, C, H, W), zero-padded by
    ``pad`` before (and as ``out`` needs after), with ``w`` (F, C, 3, 3), by Winograd
    F(2x2, 3x3), and (where ``keep_tiles``) the transformed input tiles, which
    :func:`weight_grad3x3` takes; on small maps, without ``keep_tiles``, with kept
    filters, by ``_fast_direct.conv3x3`` (where it applies), and with kept filters
    Winograd's products by ``_fast_direct``'s kernel (where it applies); None where
    neither applies. ``epilogue``:
    (mean, scale, shift, residual or None, relu), an inference BatchNorm's affine (then
    the residual sum and relu) applied as the output is made, as
    :func:`batch_norm_apply` would apply it after (the same bits, one pass less).
    Without ``keep_tiles``, large inputs run block by block (:func:`_blocked`).
    ``inference``: the output is all that is asked for (no gradient's pass), which then
    runs by F(2x4, 3x3) on up to ``WIDE_MAX_CHANNELS`` input channels."""
    if not keep_tiles and groups == 1 and tuple(stride) == (1, 1) and tuple(dilate) == (1, 1):
        y = _fast_direct.conv3x3(x, w, pad, out, epilogue)
        if y is not None:
            return y, None
    plan = _winograd(x, w, w.shape[2:], stride, dilate, groups, out,
                     MIN_TILES_KEPT if _keeps(w) else MIN_TILES)
    if plan is None:
        return None
    jit, th, tw = plan
    (n, c), f = x.shape[:2], w.shape[0]
    scheme = _F24 if inference and not keep_tiles and c <= WIDE_MAX_CHANNELS else _F22
    k, mw = scheme[:2]
    tw = (out[1] + mw - 1) // mw
    blocked = not keep_tiles and k * c * n * th * tw * x.itemsize >= BLOCKED_MIN_BYTES
    # the products by _fast_direct's kernel, over U's planes packed (and kept) for it
    direct = not blocked and _keeps(w) and _fast_direct.applies(x, f) is not None
    u, keep = _kept_filters(w, (k, f * c) if direct else (k,) + w.shape[:2])
    if u is None:
        u = _filters(jit, w, scheme)
        if keep is not None:
            u = _fast_direct.pack_planes(u) if direct else u
            keep[0].held = keep[1] + (u,)
    y = np.empty((n, f) + tuple(out), dtype=x.dtype)
    none = np.empty(0, dtype=x.dtype)
    mean, scale, shift, r, relu = epilogue or (none, none, none, None, False)
    epi = (mean, scale, shift, y if r is None else r,      # (r read only where added)
           epilogue is not None, r is not None, relu)
    if blocked:
        blocks = _blocks(n, th, tw, c, f, x.itemsize, k)
        if _blocked(jit, x, pad, u, blocks, th, tw, epi, y, scheme) is not None:
            return y, None
    staged = STAGED_UNITS_MIN_BYTES if u.ndim == 2 and _fast_direct.CLAIMS else STAGED_MIN_BYTES
    if staged <= k * c * n * th * tw * x.itemsize < engine.PARALLEL_MIN_KERNEL_BYTES:
        v = _staged(jit, x, pad, u, th, tw, epi, y, scheme)
        return y, (v if keep_tiles else None)
    v = _input(jit, x, pad, th, tw, scheme)
    if u.ndim == 2:
        m = _product_planes(f, v.shape[2], x.dtype, k)
        _fast_direct.planes(u, v, m)
    else:
        m = matmul(np, u, v, out=_product_planes(f, v.shape[2], x.dtype, k))    # (k, F, tiles)
    _split(_output_part(jit, m, th, tw, scheme[2], epi, y), f, m.nbytes, transform=True)
    return y, (v if keep_tiles else None)


def keeps_filters(p):
    """Whether Convolution params ``p`` keep a transform of their weight across the calls of
    an inference (:func:`keeping`): a one-group 2-D convolution, 3x3, stride-1 and
    undilated (Winograd's ``U`` or ``_fast_direct``'s packed weights), or 1x1 without
    padding, channels first, with a multiple of ``_fast_direct.FILTERS`` filters
    (``_fast_direct``'s)."""
    kernel = tuple(p.kernel)
    if p.num_group != 1:
        return False
    if kernel == (3, 3):
        return tuple(p.stride) in ((), (1, 1)) and tuple(p.dilate) in ((), (1, 1))
    return (kernel == (1, 1) and not any(p.pad) and p.layout in (None, "NCHW")
            and p.num_filter % _fast_direct.FILTERS == 0)


def weight_grad3x3(x, gy, kernel, stride, dilate, pad, groups, tiles=None):
    """The weight gradient (F, C, 3, 3) of the ``kernel`` convolution of ``x`` that gave the
    output gradient ``gy`` (N, F, *out), by Winograd: the 16 products ``dM[k] @ V[k]^T``
    of the transformed ``gy`` and input tiles (``tiles``, kept by :func:`conv3x3`, or
    made again), transformed back; from ``BLOCKED_MIN_BYTES`` of ``dM`` on, by blocks
    (:func:`_grad_products_by_blocks`). None where Winograd does not apply, or where
    ``tiles`` are another kernel's (im2col columns)."""
    f = gy.shape[1]
    out = gy.shape[2:]
    plan = _winograd(x, gy, kernel, stride, dilate, groups, out)
    if plan is None:
        return None
    jit, th, tw = plan
    n, c = x.shape[:2]
    if tiles is None:
        tiles = _input(jit, x, pad, th, tw)
    elif tiles.shape != (16, c, n * th * tw):
        return None
    if tuple(out) != (2 * th, 2 * tw):
        gy = _tiled(gy, (0, 0), th - 1, tw - 1)
    gy = np.ascontiguousarray(gy)
    if 16 * f * n * th * tw * x.itemsize >= BLOCKED_MIN_BYTES:
        du = _grad_products_by_blocks(jit, gy, tiles, th, tw)
    else:
        dm = _planes(f, n * th * tw, x.dtype)
        _split(lambda lo, hi: jit.grad_tiles(gy, lo, hi, 0, n * th, th, tw, dm), f, dm.nbytes)
        du = matmul(np, dm, tiles.transpose(0, 2, 1), out=_planes(f, c, x.dtype))  # (16, F, C)
    gw = np.empty((f, c, 3, 3), dtype=x.dtype)
    _split(lambda lo, hi: jit.filter_grads(du[:, lo:hi], gw[lo:hi]), f, du.nbytes)
    return gw


# Bytes of transformed output gradient (dM) one block of a weight gradient holds.
GRAD_BLOCK_BYTES = 4 << 20


def _grad_products_by_blocks(jit, gy, tiles, th, tw):
    """``dU = dM @ V^T`` (16, F, C) of :func:`weight_grad3x3` by blocks of tile rows:
    each block's ``dM`` (``GRAD_BLOCK_BYTES``) made and multiplied while in the cache,
    the blocks' products then summed in order (the same bits at any threads).

    NOTE: ResNet-18's 56x56 layers (64 channels, batch 8: dM 26 MB), CPU time of the
    weight gradient, alternated: 16.0 ms against 17.6 with dM made whole at 1 thread,
    17.9 against 19.0 at 2; no faster where dM stays in the caches (28x28 maps)."""
    n, f = gy.shape[:2]
    c = tiles.shape[1]
    rows = max(1, min(n * th, GRAD_BLOCK_BYTES // (16 * f * tw * gy.itemsize)))
    nblock = -(-n * th // rows)
    du = np.empty((nblock, 16, f, c), dtype=gy.dtype)

    def part(lo, hi):
        dm = _planes(f, rows * tw, gy.dtype)
        for i in range(lo, hi):
            r0, r1 = i * rows, min(n * th, (i + 1) * rows)
            d = dm[:, :, :(r1 - r0) * tw]
            jit.grad_tiles(gy, 0, f, r0, r1, th, tw, d)
            np.matmul(d, tiles[:, :, r0 * tw:r1 * tw].transpose(0, 2, 1), out=du[i])
    parallel_products(part, nblock, 16 * f * c * n * th * tw)
    return du.sum(axis=0)
