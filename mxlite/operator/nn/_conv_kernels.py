"""Convolution kernels on raw arrays: im2col columns, their products, and the fast
paths that need no columns (1x1 convolutions as plain products, a stride-1
transposed convolution as a correlation with the flipped weights).

Every function takes ``xp``, the array module, and channels-first data.
"""
import numpy as np

from ... import engine
from ...engine import parallel_copy, parallel_products, contiguous, matmul, num_threads
from . import _fast, _fast_bn, _fast_conv, _fast_direct


def prod(shape):
    return int(np.prod(shape, dtype=np.int64))


def pad_spatial(xp, x, before, after=None, value=0):
    """Pad the spatial axes (2:) of ``x``; no copy when there is nothing to pad.
    A negative width crops that many positions instead."""
    after = before if after is None else after
    if not any(before) and not any(after):
        return x
    if min(before) < 0 or min(after) < 0:
        crop = (slice(None), slice(None)) + tuple(
            slice(max(-b, 0), n - max(-a, 0)) for b, a, n in zip(before, after, x.shape[2:]))
        x = x[crop]
        before = [max(b, 0) for b in before]
        after = [max(a, 0) for a in after]
        if not any(before) and not any(after):
            return x
    # NOTE: a filled array and one copy of ``x`` into it: about 1.3x faster than
    # np.pad, which fills the borders side by side.
    shape = x.shape[:2] + tuple(n + b + a for n, b, a in zip(x.shape[2:], before, after))
    y = xp.zeros(shape, dtype=x.dtype) if value == 0 else xp.full(shape, value, dtype=x.dtype)
    inner = (slice(None), slice(None)) + tuple(slice(b, b + n)
                                               for b, n in zip(before, x.shape[2:]))
    parallel_copy(xp, y[inner], x)
    return y


def windows(xp, x, kernel, stride, dilate, out, groups=1):
    """A strided view (N, G, C/G, *out, *kernel) of the padded input ``x``: no copy."""
    n, c = x.shape[:2]
    st = x.strides
    nsp = len(kernel)
    shape = (n, groups, c // groups) + tuple(out) + tuple(kernel)
    strides = ((st[0], st[1] * (c // groups), st[1])
               + tuple(st[2 + i] * stride[i] for i in range(nsp))
               + tuple(st[2 + i] * dilate[i] for i in range(nsp)))
    return xp.lib.stride_tricks.as_strided(x, shape, strides)


# Per-sample output positions from which a convolution's products run per sample, and
# from which they do where its products' inner dimension (C/G * K) is at most
# ``PER_SAMPLE_MAX_INNER``.
PER_SAMPLE_POSITIONS = 784
PER_SAMPLE_NARROW_POSITIONS = 64
PER_SAMPLE_MAX_INNER = 144


def per_sample(groups, out, inner):
    """Whether the columns of a convolution with output size ``out`` and products of
    inner dimension ``inner`` (C/G * K) are laid out per sample, (N, C*K, L), rather
    than as one (G, C/G*K, N*L) block.

    NOTE: per sample, ``w @ cols[n]`` is already the channels-first output (no
    transpose after the product) and the weight gradient needs no transposed copy
    of ``gy``: faster (up to 15%) while L is large (56x56 and 28x28 maps, the
    strided 7x7 stem). On small maps N small products are slower than one over N*L,
    unless the inner dimension is short: then the block's products (and their weight
    gradient, (F, N*L) x (N*L, C*K)) run far below the GEMM rate, and its
    transposed copies cost as much as they do. Forward and weight gradient at one
    thread, per sample against the block: LeNet's first layer (25 inner, 24x24 maps,
    batch 64) 1.9x less time, 1.5x on 8x8 maps; 27 to 144 inner on 10x10 to 14x14
    maps 1.14-1.95x; 250 inner 0.95-1.04x, 500 0.87-0.93x.
    """
    return groups == 1 and (prod(out) >= PER_SAMPLE_POSITIONS or (
        inner <= PER_SAMPLE_MAX_INNER and prod(out) >= PER_SAMPLE_NARROW_POSITIONS))


# Layouts of the columns (:func:`layout`).
SAMPLE, ROWS, BLOCK = "sample", "rows", "block"
# Input channels from which, and filters up to which, a convolution's columns are
# laid out channels-last (:data:`ROWS`) where they are not per sample.
ROWS_MIN_CHANNELS = 8
ROWS_MAX_FILTERS = 128


def layout(groups, channels, filters, kernel, out):
    """How :func:`build_cols` lays out the columns of a convolution of ``channels`` input
    channels into ``filters`` (None: unknown, never :data:`ROWS`): :data:`SAMPLE` where
    :func:`per_sample`; else :data:`ROWS`, one row per output position (N*L, K*C),
    for one group of at least ``ROWS_MIN_CHANNELS`` channels into at most
    ``ROWS_MAX_FILTERS`` filters; else :data:`BLOCK`, (G, C/G*K, N*L).

    NOTE: channels-last, a row of columns is runs of kernel-width * C values of the
    channels-last input (the block's runs are output rows: 8 values in LeNet's second
    layer, whose 8 MB of columns took 1.15 ms to gather against 0.45), and the forward
    ``cols @ w^T`` and weight gradient ``gy^T @ cols`` run on the same BLAS shapes,
    transposed. Forward and weight gradient at one thread, rows against the block:
    1.2x less time with 16-50 filters, 1.1x with 64 and 128, 0.85-0.93x with 256
    and 512 (ResNet's, which keep the block)."""
    inner = channels // groups * prod(kernel)
    if per_sample(groups, out, inner):
        return SAMPLE
    if (groups == 1 and channels >= ROWS_MIN_CHANNELS and filters is not None
            and filters <= ROWS_MAX_FILTERS):
        return ROWS
    return BLOCK


def build_cols(xp, x, kernel, stride, dilate, pad, groups, out, pad_after=None, filters=None):
    """Columns of the padded input, one row per (channel, kernel offset) and one
    column per output position, laid out as :func:`layout` says for ``filters``:
    (N, C*K, L) per sample, (N*L, K*C) channels-last (one row per position), or one
    (G, C/G*K, N*L) block; L = prod(out), K = prod(kernel).

    NOTE: the (G, C/G*K, N*L) block makes the forward (``w @ cols``) and the weight
    gradient (``gy @ cols^T``) each ONE product over N*L rather than N small ones
    (faster on small maps, and better threaded); only the small output is
    transposed to channels-first after.
    """
    lay = layout(groups, x.shape[1], filters, kernel, out)
    cols = xp.empty(_cols_shape(x, kernel, groups, out, lay), dtype=x.dtype)
    if _gathered(x, kernel, stride, dilate, pad, out, lay, cols):
        return cols
    v = _cols_source(xp, x, kernel, stride, dilate, pad, groups, out, pad_after, lay)
    parallel_copy(xp, cols.reshape(v.shape), v)
    return cols


def _gathered(x, kernel, stride, dilate, pad, out, lay, cols, n0=0):
    """Whether the optional kernel (``_fast_conv.gather_cols``) built the columns of
    ``x`` (from sample ``n0`` of the whole columns ``cols``, laid out per sample or as
    the block) straight from ``x``, with no padded copy; it runs on 2-D convolutions,
    and gives NumPy's columns."""
    if lay == ROWS or len(kernel) != 2:
        return False
    return _fast_conv.gather_cols(x, kernel, stride, dilate, pad, out, cols, lay == SAMPLE, n0)


def _cols_shape(x, kernel, groups, out, lay):
    n, cgk, m = x.shape[0], x.shape[1] // groups * prod(kernel), prod(out)
    return {SAMPLE: (n, cgk, m), ROWS: (n * m, cgk), BLOCK: (groups, cgk, n * m)}[lay]


def _cols_source(xp, x, kernel, stride, dilate, pad, groups, out, pad_after, lay):
    """The windows of the padded ``x`` (a strided view) in the order of its columns
    (:func:`build_cols`): (N, C, *k, *out) per sample, (N, *out, *k, C) channels-last
    (of a channels-last copy of ``x``), else (G, C/G, *k, N, *out)."""
    nsp = len(kernel)
    xp_ = pad_spatial(xp, x, pad, pad_after)
    if lay == ROWS:
        xl = contiguous(xp, xp.moveaxis(xp_, 1, -1))
        st = xl.strides
        return xp.lib.stride_tricks.as_strided(
            xl, (x.shape[0],) + tuple(out) + tuple(kernel) + (x.shape[1],),
            (st[0],) + tuple(st[1 + i] * stride[i] for i in range(nsp))
            + tuple(st[1 + i] * dilate[i] for i in range(nsp)) + (st[-1],))
    v = windows(xp, xp_, kernel, stride, dilate, out, groups)
    ks = tuple(range(3 + nsp, 3 + 2 * nsp))
    os_ = tuple(range(3, 3 + nsp))
    if lay == SAMPLE:
        return xp.transpose(v[:, 0], (0, 1) + tuple(i - 1 for i in ks + os_))
    return xp.transpose(v, (1, 2) + ks + (0,) + os_)


def _rows_weights(xp, w):
    """The weights (F, C, *k) as the (K*C, F) right operand of a product with
    channels-last columns (made contiguous: OpenBLAS ran the transposed view slower)."""
    f = w.shape[0]
    return xp.ascontiguousarray(xp.moveaxis(w, 1, -1).reshape(f, -1).T)


def _channels_first(xp, y, n, into=None):
    """``y`` (n*L, F), a product of channels-last columns, as (n, F, L) (into ``into``)."""
    into = xp.empty((n, y.shape[1], y.shape[0] // n), dtype=y.dtype) if into is None else into
    parallel_copy(xp, into, xp.swapaxes(y.reshape(n, -1, y.shape[1]), 1, 2))
    return into


def cols_product(xp, cols, w, n, out, groups):
    """The convolution (N, F, *out) from the columns of its input (``build_cols``):
    ``w @ cols`` per sample or per group, or ``cols @ w^T`` channels-last, made
    channels-first."""
    f = w.shape[0]
    if cols.ndim == 2:
        z = _channels_first(xp, matmul(xp, cols, _rows_weights(xp, w)), n)
    elif per_sample(groups, out, w[0].size):
        z = matmul(xp, w.reshape(f, -1), cols)
    else:
        y = matmul(xp, w.reshape(groups, f // groups, -1), cols)           # (G, Fg, N*L)
        z = xp.empty((n, f, prod(out)), dtype=y.dtype)
        parallel_copy(xp, z, xp.swapaxes(y.reshape(f, n, -1), 0, 1))
    return z.reshape((n, f) + tuple(out))


def _by_samples(xp, x, w, out):
    """Whether :func:`correlate` runs by parts of the batch: NumPy arrays, a sample for
    each thread, and products large enough to split over the workers."""
    return (xp is np and 1 < num_threads() <= x.shape[0] and not engine._here.inside
            and w.size * x.shape[0] * prod(out) >= engine.PARALLEL_MIN_MACS)


def _correlate_by_samples(x, w, kernel, stride, dilate, pad, groups, out, pad_after, bias,
                          epilogue=None):
    """:func:`build_cols` then :func:`cols_product` by parts of the batch, one per
    thread (:func:`engine.batch_parts`): each part builds its samples' columns in
    their place of the whole columns (which the weight gradient reads), multiplies
    them and writes its samples' output (plus ``bias`` per channel, if given, then
    ``epilogue`` as :func:`pointwise` takes it), serially in its thread.

    NOTE: split pass by pass, the copy into the columns (below ``PARALLEL_MIN_BYTES``
    in LeNet's second layer, 8 MB at batch 64), the transposed copy of the output and
    its share of the product were the caller's, the worker idle meanwhile: at 2
    threads the calling thread ran 4.2 ms of CPU in LeNet's two forward convolutions
    and the worker 1.6, by parts 3.4 and 2.0 (busy host). Per sample, a part's product
    gives :func:`cols_product` 's bits; a product over a part's positions (the block,
    channels-last) may round as BLAS orders it."""
    n, f = x.shape[0], w.shape[0]
    lay = layout(groups, x.shape[1], f, kernel, out)
    cols = np.empty(_cols_shape(x, kernel, groups, out, lay), dtype=x.dtype)
    y3 = np.empty((n, f, prod(out)), dtype=np.result_type(x, w))
    m = prod(out)
    if lay == ROWS:
        wm = _rows_weights(np, w)
    else:
        wm = w.reshape(f, -1) if lay == SAMPLE else w.reshape(groups, f // groups, -1)
    cols4 = cols.reshape(groups, cols.shape[1], n, -1) if lay == BLOCK else None

    def part(lo, hi):
        c = (cols[lo:hi] if lay == SAMPLE else cols[lo * m:hi * m] if lay == ROWS
             else cols4[:, :, lo:hi])
        if not _gathered(x[lo:hi], kernel, stride, dilate, pad, out, lay, cols, lo):
            v = _cols_source(np, x[lo:hi], kernel, stride, dilate, pad, groups, out,
                             pad_after, lay)
            np.copyto(c.reshape(v.shape), v)
        if lay == SAMPLE:
            np.matmul(wm, c, out=y3[lo:hi])
        elif lay == ROWS:
            _channels_first(np, np.matmul(c, wm), hi - lo, into=y3[lo:hi])
        else:
            y = np.matmul(wm, c.reshape(c.shape[:2] + (-1,)))         # (G, Fg, part*L)
            np.copyto(y3[lo:hi], y.reshape(f, hi - lo, -1).swapaxes(0, 1))
        if bias is not None:
            y3[lo:hi] += bias.reshape(-1, 1)
        if epilogue is not None:
            epilogue(y3, lo, hi, 0, m)
    engine.batch_parts(part, n)
    return y3.reshape((n, f) + tuple(out)), cols


def correlate(xp, x, w, kernel, stride, dilate, pad, groups, out, pad_after=None,
              need_cols=False, inference=False, bias=None, epilogue=None):
    """The cross-correlation (N, F, *out) of ``x`` padded by ``pad`` (and ``pad_after``)
    with ``w`` (plus ``bias`` per channel, if given, then ``epilogue`` as :func:`pointwise`
    takes it), and what its weight gradient can reuse: the im2col columns, or where the
    optional Winograd kernel (``_fast``, 3x3 filters) ran instead, its input tiles if
    ``need_cols`` (else None). ``inference``: a forward whose output is all that is
    asked for (Winograd may then run its inference scheme)."""
    fast = _fast.conv3x3(x, w, stride, dilate, pad, groups, out, keep_tiles=need_cols,
                         inference=inference)
    if fast is not None:
        return _then(add_bias(fast[0], bias), epilogue), fast[1]
    # (a blocked convolution keeps no columns: its weight gradient builds them by blocks)
    if pad_after is None and blocked(xp, x.shape[1], kernel, stride, dilate, groups, out):
        if bias is None:
            return blocked_correlate(x, w, kernel, stride, pad, out, epilogue), None
        return _then(add_bias(blocked_correlate(x, w, kernel, stride, pad, out), bias),
                     epilogue), None
    if _by_samples(xp, x, w, out):
        return _correlate_by_samples(x, w, kernel, stride, dilate, pad, groups, out, pad_after,
                                     bias, epilogue)
    cols = build_cols(xp, x, kernel, stride, dilate, pad, groups, out, pad_after, w.shape[0])
    return _then(add_bias(cols_product(xp, cols, w, x.shape[0], out, groups), bias),
                 epilogue), cols


def _then(y, epilogue):
    """``y`` (N, F, *out) after ``epilogue`` (None: none) on the whole of it."""
    if epilogue is not None:
        epilogue(y.reshape(y.shape[:2] + (-1,)), 0, y.shape[0], 0, prod(y.shape[2:]))
    return y


def add_bias(y, b):
    """``y`` plus the per-channel bias ``b`` (None: none), in place: ``y`` is the fresh
    output of a convolution kernel that nothing else holds."""
    if b is not None:
        y += b.reshape((1, -1) + (1,) * (y.ndim - 2))
    return y


# The longest inner dimension (C * K) of the products that :func:`blocked_correlate` runs.
BLOCKED_MAX_INNER = 256


def blocked(xp, channels, kernel, stride, dilate, groups, out):
    """Whether :func:`blocked_correlate` computes this convolution: a strided 2-D one,
    one group, no dilation, columns per sample, NumPy arrays, and a short inner
    dimension (``BLOCKED_MAX_INNER``).

    NOTE: at 2 threads, batch 8: ResNet's 7x7 stem (inner dimension 147) took
    1.33x less time so; its stride-2 3x3 layers (576, 1152) 1.05-1.1x more."""
    return (xp is np and len(kernel) == 2 and groups == 1 and max(stride) > 1
            and max(dilate) == 1 and per_sample(groups, out, channels * prod(kernel))
            and channels * prod(kernel) <= BLOCKED_MAX_INNER)


def phases(x, kernel, stride, pad, out):
    """The zero-padded input ``x`` (N, C, H, W) split by the phases of the stride:
    (S0, S1, N, C, Hq, Wq), padded row ``s0 * q + a`` at ``[a, :, :, :, q]`` (likewise
    the columns). Every tap of a strided window then reads a unit-stride run of one
    phase: output row r's tap i reads phase ``i % s0`` at row ``r + i // s0``."""
    n, c = x.shape[:2]
    size = tuple(o + (k - 1) // s for o, k, s in zip(out, kernel, stride))
    ph = np.zeros(tuple(stride) + (n, c) + size, dtype=x.dtype)
    for a in range(stride[0]):
        for b in range(stride[1]):
            src, dst = [slice(None)] * 2, [slice(None)] * 2
            for ph_at, s, q, m, h in zip((a, b), stride, pad, size, x.shape[2:]):
                first = (ph_at - q) % s                   # first input row of this phase
                at = (first + q) // s
                count = max(0, min(len(range(first, h, s)), m - at))
                src.append(slice(first, first + s * count, s))
                dst.append(slice(at, at + count))
            np.copyto(ph[a, b][tuple(dst)], x[tuple(src)])
    return ph


# Bytes of the columns one block of output rows builds (and its product reads): they
# stay in the cache between the two.
BLOCK_COLS_BYTES = 1 << 20


def blocked_correlate(x, w, kernel, stride, pad, out, epilogue=None):
    """The strided 2-D cross-correlation (N, F, *out) of ``x`` padded by ``pad`` with
    ``w`` (one group): per sample and block of output rows, its columns, built from
    the stride's :func:`phases` with one copy per phase, then ``w @ cols`` into the
    block's place of the output, and ``epilogue`` (as :func:`pointwise` takes it) on
    that place; the blocks split over the workers.

    NOTE: the columns of a whole sample (ResNet's 7x7 stem: 147 x 12544, 7 MB) leave
    the cache before the product reads them, and a strided gather copies runs of
    one value; per block both stay in the cache and every copy runs along rows. Each
    block's product is the same serial one whatever the threads: the same bits."""
    n = x.shape[0]
    f = w.shape[0]
    wm = w.reshape(f, -1)
    y = np.empty((n, f, out[0] * out[1]), dtype=np.result_type(x, w))
    blocks = _RowBlocks(x, kernel, stride, pad, out)

    def part(lo, hi):
        buf = blocks.buffer()
        for t in range(lo, hi):
            i, r0, r1, cols = blocks.cols(t, buf)
            np.matmul(wm, cols, out=y[i, :, r0 * out[1]:r1 * out[1]])
            if epilogue is not None:
                epilogue(y, i, i + 1, r0 * out[1], r1 * out[1])
    parallel_products(part, n * blocks.count, f * wm.shape[1] * out[0] * out[1] * n)
    return y.reshape((n, f) + tuple(out))


def blocked_weight_grad(x, gy, kernel, stride, pad):
    """The weight gradient (F, C, *kernel) of a :func:`blocked` convolution of ``x`` that
    gave the output gradient ``gy`` (N, F, *out): per sample, ``gy @ cols^T`` summed
    over its blocks of output rows (columns built as :func:`blocked_correlate` builds
    them, in the cache), then over the samples; the samples split over the workers.

    NOTE: ResNet's stem (batch 8) no longer gathers its whole columns (59 MB) in the
    forward and keeps them for this: its forward and weight gradient took 58.9 ms of
    CPU time against 64.4 at 1 thread, 64.8 against 67.2 at 2. Each sample's sum is
    the same serial one whatever the threads."""
    n, f = gy.shape[:2]
    out = gy.shape[2:]
    blocks = _RowBlocks(x, kernel, stride, pad, out)
    inner = x.shape[1] * kernel[0] * kernel[1]
    gw = np.zeros((n, f, inner), dtype=np.result_type(x, gy))
    g = gy.reshape(n, f, -1)

    def part(lo, hi):
        buf = blocks.buffer()
        tmp = np.empty((f, inner), dtype=gw.dtype)
        for i in range(lo, hi):
            for t in range(i * blocks.count, (i + 1) * blocks.count):
                _, r0, r1, cols = blocks.cols(t, buf)
                np.matmul(g[i, :, r0 * out[1]:r1 * out[1]], cols.T, out=tmp)
                gw[i] += tmp
    parallel_products(part, n, f * inner * out[0] * out[1] * n)
    return gw.sum(axis=0).reshape((f, x.shape[1]) + tuple(kernel))


class _RowBlocks:
    """The im2col columns of a strided 2-D convolution by blocks of output rows of each
    sample (``count`` blocks per sample, ``BLOCK_COLS_BYTES`` of columns each), built
    by the optional kernel (``_fast_conv.cols_gatherer``) straight from the input, else
    from the stride's :func:`phases` with one copy per phase."""

    def __init__(self, x, kernel, stride, pad, out):
        self.c, self.dtype = x.shape[1], x.dtype
        self.kernel, self.stride, self.out = kernel, stride, out
        kh, kw = kernel
        oh, ow = out
        self.rows = max(1, min(oh, BLOCK_COLS_BYTES // (self.c * kh * kw * ow * x.itemsize)))
        self.count = -(-oh // self.rows)
        # the optional kernel builds a block's columns straight from x (no phases)
        self.x, self.pad = x, pad
        self.gather = _fast_conv.cols_gatherer(x, kernel) if x.flags.c_contiguous else None
        if self.gather is not None:
            return
        # per phase (a, b): the (N, C, taps, taps, OH, OW) view of its windows' taps
        # (made once: a block takes a slice of it)
        ph = phases(x, kernel, stride, pad, out)
        self.taps = {}
        for a in range(stride[0]):
            for b in range(stride[1]):
                p = ph[a, b]
                st = p.strides
                self.taps[a, b] = np.lib.stride_tricks.as_strided(
                    p, p.shape[:2] + (len(range(a, kh, stride[0])), len(range(b, kw, stride[1])),
                                      oh, ow), st[:2] + (st[2], st[3], st[2], st[3]))

    def buffer(self):
        """A buffer for one block's columns (one per worker)."""
        return np.empty(self.c * self.kernel[0] * self.kernel[1] * self.rows * self.out[1],
                        dtype=self.dtype)

    def cols(self, t, buf):
        """(sample, first row, end row, columns (C*K, rows * OW)) of block ``t``, in ``buf``."""
        (kh, kw), (s0, s1), (oh, ow) = self.kernel, self.stride, self.out
        c = self.c
        i, r0 = t // self.count, t % self.count * self.rows
        r1 = min(r0 + self.rows, oh)
        flat = buf[:c * kh * kw * (r1 - r0) * ow]
        if self.gather is not None:
            self.gather(self.x[i:i + 1], 0, r0, r1 - r0, ow, kh, kw, s0, s1, *self.pad,
                        1, 1, 0, 1, flat)
            return i, r0, r1, flat.reshape(c * kh * kw, (r1 - r0) * ow)
        cols = flat.reshape(c, kh, kw, r1 - r0, ow)
        for (a, b), v in self.taps.items():
            np.copyto(cols[:, a::s0, b::s1], v[i, :, :, :, r0:r1])
        return i, r0, r1, cols.reshape(c * kh * kw, (r1 - r0) * ow)


def cols_weight_grad(xp, cols, gy, groups, channels):
    """``gy @ cols^T``: the weight gradient (G, F/G, C/G*K) of a convolution of
    ``channels`` input channels from the columns of its input (``build_cols``) and its
    output gradient ``gy`` (N, F, *out); channels-last columns give (F, C, K)."""
    n, f = gy.shape[:2]
    if cols.ndim == 2:      # channels-last (N*L, K*C): (F, N*L) @ cols, (F, K, C)
        g = contiguous(xp, xp.swapaxes(gy.reshape(n, f, -1), 0, 1)).reshape(f, -1)
        return xp.swapaxes(matmul(xp, g, cols).reshape(f, -1, channels), 1, 2)
    if per_sample(groups, gy.shape[2:], cols.shape[1]):
        return matmul(xp, gy.reshape(n, f, -1), xp.swapaxes(cols, 1, 2)).sum(axis=0)
    g = contiguous(xp, xp.swapaxes(gy.reshape(n, f, -1), 0, 1)).reshape(groups, f // groups, -1)
    if f // groups <= WEIGHT_GRAD_FLIP_FILTERS:
        return xp.swapaxes(matmul(xp, cols, xp.swapaxes(g, 1, 2)), 1, 2)
    return matmul(xp, g, xp.swapaxes(cols, 1, 2))


# Filters (per group) up to which :func:`cols_weight_grad` runs a block's product as
# ``(cols @ gy^T)^T``. NOTE: OpenBLAS at one thread, (F, N*L) x (N*L, C*K) against its
# transpose: 1.2-1.5x faster that way with 16-64 filters (LeNet's second layer: 50
# filters, 500 inner, 4096 positions), 1.03x with 128, 0.8x with 256 and 0.4x with 512.
WEIGHT_GRAD_FLIP_FILTERS = 64


def is_pointwise(kernel, pad, dilate, groups):
    """A 1x1 convolution without padding or groups: a plain product per sample."""
    return groups == 1 and all(k == 1 for k in kernel) and not any(pad)


def _subsample(x, stride):
    if all(s == 1 for s in stride):
        return x
    return x[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in stride)]


# Output positions per sample below which a batched 1x1 convolution runs as one product.
POINTWISE_BLOCK_POSITIONS = 100


def pointwise(xp, x, w, stride, epilogue=None, direct=True):
    """1x1 convolution: ``w (F, C) @ x[n] (C, L)`` for every sample, no columns and
    no transpose (the product is already channels-first). ``epilogue``: a callable
    ``(y3, n0, n1, i0, i1)`` changing samples n0:n1, positions i0:i1 of the (N, F, L)
    output in place, run on each part right after its product. ``direct``: whether
    ``_fast_direct`` 's kernel may run it (where the caller has not tried it already).

    NOTE: on small maps (7x7: ResNet-50's last stage) N products of L columns each
    run at 95 GFLOP/s against 125 for one (F, C) @ (C, N * L) product, worth its
    two transposed copies of the (small) input and output."""
    y = _fast_direct.pointwise(x, w, stride) if direct and xp is np and epilogue is None \
        else None
    if y is not None:
        return y
    xs = _subsample(x, stride)
    n, c = xs.shape[:2]
    f = w.shape[0]
    size = xs.shape[2:]
    if n > 1 and prod(size) < POINTWISE_BLOCK_POSITIONS:
        xb = contiguous(xp, xp.swapaxes(xs, 0, 1)).reshape(c, -1)         # (C, N*L)
        y = matmul(xp, w.reshape(f, c), xb).reshape(f, n, -1)
        y = contiguous(xp, xp.swapaxes(y, 0, 1))
        if epilogue is not None:
            epilogue(y, 0, n, 0, y.shape[2])
        return y.reshape((n, f) + size)
    xs = contiguous(xp, xs)
    if epilogue is None:
        y = matmul(xp, w.reshape(f, c), xs.reshape(n, c, -1))
    else:
        y = _products_then(w.reshape(f, c), xs.reshape(n, c, -1), epilogue)
    return y.reshape((n, f) + size)


def _products_then(w, x3, epilogue):
    """``w @ x3[i]`` (N, F, L) for every sample, each part followed by its ``epilogue``
    (as :func:`pointwise` takes it) while its output is in the caches: split over the
    workers by samples, and where there are fewer samples than threads, each sample's
    columns into as many equal parts as :func:`engine.matmul` would cut.

    NOTE: measured in ResNet-50's hybridized inference at batch 8, CPU time: its 64 ->
    256 channel ones on 56x56 maps (with the residual sum and relu) 1.08x less at one
    thread, the step 1.03x (1.07x at two). Parts smaller than a sample were slower
    (their products narrower)."""
    n, _, cols = x3.shape
    threads = num_threads()
    if n < threads and not engine.cuts_columns(w.shape[0], cols):
        # not many more positions than filters: the product split by its rows, as
        # engine.matmul cuts it (each part of the columns would pack all the weights:
        # ResNet-50's 7x7 and 14x14 maps at batch 1 took 1.4x longer so), each part's
        # epilogue on its filters
        return _fast_bn.products_by_rows(w, x3, epilogue)
    y3 = np.empty((n, w.shape[0], cols), dtype=np.result_type(w, x3))
    # a sample's columns are cut only where engine.matmul would cut the whole product
    # (the chain's): a BLAS may order a product's sums by its shape, so a part is the
    # whole's bits only where the whole is cut alike
    cuts = max(1, -(-threads // n)) if w.size * n * cols >= engine.PARALLEL_MIN_MACS else 1

    def run(lo, hi):
        for t in range(lo, hi):
            i, j = divmod(t, cuts)
            a, b = cols * j // cuts, cols * (j + 1) // cuts
            np.matmul(w, x3[i, :, a:b], out=y3[i, :, a:b])
            epilogue(y3, i, i + 1, a, b)
    parallel_products(run, n * cuts, w.size * n * cols)
    return y3


def pointwise_weight_grad(xp, x, gy, stride):
    """The weight gradient (F, C, 1...) of a 1x1 convolution: ``sum_n gy[n] @ x[n]^T``."""
    xs = contiguous(xp, _subsample(x, stride))
    n, c, f = x.shape[0], x.shape[1], gy.shape[1]
    gw = matmul(xp, gy.reshape(n, f, -1), xp.swapaxes(xs.reshape(n, c, -1), 1, 2)).sum(axis=0)
    return gw.reshape((f, c) + (1,) * (x.ndim - 2))


def transposed_pointwise(xp, x, w, stride, out):
    """Transposed 1x1 convolution (no padding, one group): ``w^T @ x[n]`` per sample,
    placed at every ``stride``-th position of a zero (N, F, *out) output."""
    n, cin = x.shape[:2]
    f = w.shape[1]
    z = matmul(xp, w.reshape(cin, f).T, x.reshape(n, cin, -1)).reshape((n, f) + x.shape[2:])
    if all(s == 1 for s in stride) and tuple(out) == tuple(x.shape[2:]):
        return z
    y = xp.zeros((n, f) + tuple(out), dtype=z.dtype)
    parallel_copy(xp, y[(slice(None), slice(None)) + tuple(
        slice(0, s * (m - 1) + 1, s) for s, m in zip(stride, x.shape[2:]))], z)
    return y


def transposed_stride1(xp, x, w, kernel, dilate, pad, adj, groups):
    """Stride-1 transposed convolution of ``x`` (N, Cin, *S) with ``w`` (Cin, F/G, *k):
    the correlation of ``x``, padded by ``d * (k - 1) - pad`` (plus ``adj`` after),
    with the flipped, transposed weights: a forward convolution's columns and one
    product, instead of scattering columns back onto the output. Its products run
    over every output position (the scatter's over every input position): the
    caller picks it where the output is not much larger than the input."""
    cin, fg = w.shape[:2]
    nsp = len(kernel)
    cg = cin // groups
    wt = w.reshape((groups, cg, fg) + tuple(kernel)).swapaxes(1, 2)
    # a view with one group (Winograd's filter transform reads the weights as they lie)
    wt = wt[(Ellipsis,) + (slice(None, None, -1),) * nsp].reshape((groups * fg, cg) + tuple(kernel))
    before = tuple(d * (k - 1) - q for d, k, q in zip(dilate, kernel, pad))
    after = tuple(b + a for b, a in zip(before, adj))
    out = tuple(m + b + a - d * (k - 1)
                for m, b, a, d, k in zip(x.shape[2:], before, after, dilate, kernel))
    return correlate(xp, x, wt, kernel, (1,) * nsp, dilate, before, groups, out, after)[0]
