"""Optional numba kernel (``_fast``, which compiles it) for the convolutions of a
float32 inference of one or two samples: 1x1 ones, 3x3 ones (stride 1) on small maps,
as sums of products ``w_t (F, C) @ x[n] (C, positions)`` over the kernel's taps ``t``,
and the products of Winograd's planes (``_fast.conv3x3``), by a register-blocked
product over weights packed once per weight array (and kept, as Winograd's filters
are: ``_fast.keeping``), with BatchNorm's inference affine, the residual sum and relu
applied to the output while it is in the L2 cache. OpenBLAS runs these narrow
products (a few dozen to a few hundred positions, weights read once, from memory) at
35-90 GFLOP/s on one core, this kernel at 95-160.

A tile (``_fast_tile``) is ``FILTERS`` filters by ``VECTORS`` vectors of 16 positions,
its sums held in AVX-512 registers while the input channels run: per channel,
``VECTORS`` loads of the input's row, then one fused multiply-add per filter and
vector, each weight broadcast from memory. The weights are packed in the order the
tiles read them (:func:`pack`), one stream, read once per sample.

A 3x3 convolution reads its input zero-padded, each tap's input the padded map shifted
by the tap's offset: the output is made on the padded map's width (two columns more
per row, dropped after) and each tap adds onto it.

Each output value is summed tap by tap, each tap's input channels in the order c = 0,
1, ..., C - 1, one fused multiply-add per term (the channels run in blocks of
``BLOCK_CHANNELS``, each block adding onto the sums the one before left): the same bits
at any threads and from any split, float32 round-off against NumPy's product
(OpenBLAS's sums run in another order).

Split over the threads, a product runs as units (:func:`_cuts`) that each thread claims
one at a time inside the same compiled call (:func:`engine.parallel_units`), and
Winograd's convolution of a small input as its transforms and products in stages of
such units (:func:`winograd`): a thread that comes late takes fewer units, and none
waits for another to take the GIL back.
"""
import functools
import math
import types

import numpy as np

from ... import engine
from ...engine import num_threads, parallel_products
from . import _fast

FILTERS = 8
VECTORS = 3
# Samples up to which a kept convolution runs this kernel: it reads the weights once per
# sample, OpenBLAS's product once per call. NOTE: ResNet-50's hybridized inference (1x1
# convolutions), one thread, CPU time, alternated: batch 1 1.06x faster, 2 1.04x, 4
# 1.0x, 8 0.95x.
MAX_SAMPLES = 2
# Output positions up to which a 3x3 convolution runs this kernel (before Winograd).
# NOTE: ResNet-50's inference at batch 1, one thread, alternated: its 512-channel 3x3
# layers on 7x7 maps (with BatchNorm and relu) 0.71x the time of im2col's (Winograd does
# not pay on 16 tiles); the 256-channel ones on 14x14 maps 1.07x the time of Winograd
# F(2x2)'s with kept filters and OpenBLAS's products (0.85x alone, cold weights, against
# im2col), which now run by this kernel, faster still.
MAX_POSITIONS_3X3 = 100
# Input channels per block: the block's rows of the input tile (BLOCK_CHANNELS * 48
# floats, 24 KB) stay in the L1 cache while every filter block reads them.
BLOCK_CHANNELS = 128
# Bytes ahead of the weights it reads that a tile asks the caches for: the weights are
# read once per call, from memory (a network's weights do not stay in the caches from one
# call to the next). NOTE: measured cold (cycling through 100 MB of weights), one
# thread, ResNet-50's 7x7-map products (F x C: 2048 x 512 ... 512 x 2048): 54-73
# GFLOP/s without, 77-90 at 512 bytes, 105-117 at 1024 and 2048 (OpenBLAS: 74-85).
PREFETCH_BYTES = 1024
# Bytes of output a chunk of a 1x1 convolution's positions holds, and the least blocks
# of positions in one.
CHUNK_BYTES = 512 << 10
CHUNK_BLOCKS = 4

# Positions (the last block's, after whole blocks of 48) up to which the sums run with
# the vectors over 16 filters (``_fast_tile.columns``) instead of over the positions.
# NOTE: one thread, cold weights, alternated: ResNet-50's batch-1 products on 7x7 maps
# (49 positions) 100-111 -> 117-135 GFLOP/s, on 14x14 maps (196) 131-140 -> 138-144,
# Winograd's 14x14 planes (49 tiles) 96-98 -> 113-116, 28x28 (98) 96 -> 106.
COLUMNS = 4
# numba keys its cache of a kernel by the text of the kernel's own file: a stamp of the
# code that the kernels here compile in from other files (``_fast_tile``, ``_fast_bn``'s
# channel_affine, ``_spin_poll``, ``_fast``'s Winograd transforms, ``_fast_pool``'s
# max_pool33), which a test checks, changes this file's text with it.
CALLED_CODE_STAMP = "dad2452ceca4f981"

# Units a product split over the threads is cut into (:func:`_cuts`), whatever the
# threads: each thread claims the next one inside the compiled kernel
# (:func:`engine.parallel_units`), so a thread that comes late takes fewer. NOTE:
# ResNet-50 b1 hybridized inference at 2 threads on a busy 2-core host, alternated
# step by step in one process against one part per thread: 8 units 1.03-1.06x the
# median step time (1.05-1.08x the least), 16 0.96-1.05x, 32 0.98-1.0x (each unit
# reads the input or the weights that the others read too), guided cuts (units
# shrinking towards the end) no better than 8.
UNITS = 8
# Bytes of a sample's input up to which a 1x1 convolution's units are cut by its filters
# even where it has fewer filter blocks than position blocks. NOTE: one op at a time,
# 2 threads, alternated, min, first quartile and median of 60-80 (busy host): 64 ->
# 256 and 64 -> 64 channels on 56x56 maps (800 KB) 1.05-1.25x faster by filters than
# by positions; 512 -> 128 on 28x28 (1.6 MB) 0.85x, 256 -> 64 on 56x56 (3.2 MB) 0.7x
# (each unit reads the input again, from the L3 cache). ResNet-50 b1: 1.0x the step.
FILTER_UNITS_MAX_BYTES = 1 << 20
# Whether the products split over the threads run as claimed units (else as one part
# per thread, :func:`engine.parallel_products`, as before: kept for measuring).
CLAIMS = True

# set by :func:`compiled`: the module ``_fast_tile``, its tiles of 1 to 3 vectors and of
# 1 to 4 columns, and, compiled, _fast_bn's channel_affine, ``_fast``'s Winograd
# transforms, :func:`_products`, :func:`_pointwise`, :func:`_taps`, :func:`_claim`,
# :func:`_ended` and :func:`_plane_unit`, which the kernels call; ``_spin_poll``'s
# atomics; the units' kernels
_tiles = _tile1 = _tile2 = _tile3 = _affine = _compiled_products = None
_cols1 = _cols2 = _cols3 = _cols4 = None
_compiled_pointwise = _compiled_taps = _compiled_claim = _compiled_ended = None
_compiled_plane_unit = _input_tiles = _output_tiles = _max_pool33 = None
_fetch_add = _load = _poll = _swap_if = None
_units = None


def _products(wp, x, offsets, y, n, b0, b1, q0, q1):
    """``y[n, f, p] = sum_t sum_k w_t[f, k] x[n, k, p + offsets[t]]`` for filters
    ``FILTERS * (b0:b1)`` and positions ``16 * VECTORS * (q0:q1)`` (clipped) of ``y``
    (N, F, P), ``x`` (N, C, S), C-contiguous float32, ``wp`` the packed weights of the
    taps (:func:`pack`, one after the other)."""
    _, c, s = x.shape
    f, n_pos = y.shape[1], y.shape[2]
    width = 16 * VECTORS
    wa, xa, ya = wp.ctypes.data, x.ctypes.data, y.ctypes.data
    for t in range(len(offsets)):
        for c0 in range(0, c, BLOCK_CHANNELS):
            k = min(BLOCK_CHANNELS, c - c0)
            add = t > 0 or c0 > 0
            for lb in range(q0, q1):
                l0 = lb * width
                m = min(width, n_pos - l0)
                nv = (m + 15) // 16
                mask = (1 << (m - 16 * (nv - 1))) - 1
                xo = xa + 4 * ((n * c + c0) * s + l0 + offsets[t])
                pairs = (b1 - b0) // 2 if m <= COLUMNS else 0
                for b in range(b0, b0 + 2 * pairs, 2):      # two filter blocks a vector
                    wo = wa + 4 * ((t * c + c0) * f + b * k * FILTERS)
                    yo = ya + 4 * ((n * f + b * FILTERS) * n_pos + l0)
                    if m == 1:
                        _cols1(wo, xo, s, yo, n_pos, k, add)
                    elif m == 2:
                        _cols2(wo, xo, s, yo, n_pos, k, add)
                    elif m == 3:
                        _cols3(wo, xo, s, yo, n_pos, k, add)
                    else:
                        _cols4(wo, xo, s, yo, n_pos, k, add)
                for b in range(b0 + 2 * pairs, b1):
                    wo = wa + 4 * ((t * c + c0) * f + b * k * FILTERS)
                    yo = ya + 4 * ((n * f + b * FILTERS) * n_pos + l0)
                    if nv == 3:
                        _tile3(wo, xo, s, yo, n_pos, k, mask, add)
                    elif nv == 2:
                        _tile2(wo, xo, s, yo, n_pos, k, mask, add)
                    else:
                        _tile1(wo, xo, s, yo, n_pos, k, mask, add)


def _pointwise(wp, x, y, n0, n1, b0, b1, p0, p1, mean, scale, shift, r, affine, add, relu):
    """The 1x1 convolution ``y`` (N, F, L) of ``x`` (N, C, L) for samples ``n0:n1``,
    filter blocks ``b0:b1`` and position blocks ``p0:p1`` (:func:`_products`); then,
    where ``affine``, ``_fast_bn``'s channel_affine (``mean, scale, shift`` (F,), ``r``
    (N, F, L) added where ``add``, relu where ``relu``). By chunks of positions whose
    output (``CHUNK_BYTES``, at least ``CHUNK_BLOCKS`` blocks) stays in the L2 cache
    while the blocks of input channels add onto it and the affine runs.

    NOTE: the affine run tile by tile cost 0.5 us a call, on rows of 48 values 0.1 us a
    row: ResNet-50's 1x1 layers on 56x56 maps took 1.5-2x the time."""
    n_pos = y.shape[2]
    width = 16 * VECTORS
    f0, f1 = b0 * FILTERS, b1 * FILTERS
    step = max(CHUNK_BLOCKS, CHUNK_BYTES // (4 * width * (f1 - f0)))
    offsets = np.zeros(1, np.int64)
    for n in range(n0, n1):
        for q0 in range(p0, p1, step):
            q1 = min(p1, q0 + step)
            _compiled_products(wp, x, offsets, y, n, b0, b1, q0, q1)
            if affine:
                _affine(y, f0, n, n + 1, q0 * width, min(n_pos, q1 * width), mean[f0:f1],
                        scale[f0:f1], shift[f0:f1], r, add, relu, y)


def _taps(wp, x, offsets, z, y, n0, n1, b0, b1, mean, scale, shift, r, affine, add, relu):
    """A convolution ``y`` (N, F, OH, OW) of the padded ``x`` (N, C, S) for samples
    ``n0:n1`` and filter blocks ``b0:b1``: the taps' sums (:func:`_products`) made on
    the padded width into ``z`` (N, F, P), row ``oy`` of ``y`` at ``oy * width`` of it;
    then the affine as :func:`_pointwise` applies it."""
    oh, ow = y.shape[2], y.shape[3]
    wide = (z.shape[2] - ow) // (oh - 1) if oh > 1 else ow
    f0, f1 = b0 * FILTERS, b1 * FILTERS
    y3 = y.reshape(y.shape[0], y.shape[1], oh * ow)
    for n in range(n0, n1):
        _compiled_products(wp, x, offsets, z, n, b0, b1, 0, -(-z.shape[2] // (16 * VECTORS)))
        for f in range(f0, f1):
            for oy in range(oh):
                y3[n, f, oy * ow:(oy + 1) * ow] = z[n, f, oy * wide:oy * wide + ow]
        if affine:
            _affine(y3, f0, n, n + 1, 0, oh * ow, mean[f0:f1], scale[f0:f1], shift[f0:f1],
                    r, add, relu, y3)


def _claim(count, cuts, polls):
    """The next unit (row of ``cuts``) this thread runs, claimed by ``count[0]``
    (atomically: other threads claim from it too) once the units it needs have ended
    (``count[1]`` at ``cuts[i, 0]``: the stages before its own), polled up to ``polls``
    times for them; ``len(cuts)`` where none is left, -1 where the polls ran out."""
    ended = count[1:]
    while True:
        i = _load(count)
        if i >= len(cuts):
            return len(cuts)
        if _load(ended) < cuts[i, 0]:
            _poll(ended, cuts[i, 0], polls, 0)
            if _load(ended) < cuts[i, 0]:
                return -1
        if _swap_if(count, i, i + 1):
            return i


def _ended(count, units, puts, ctl):
    """After a thread's last unit: ``count[1]`` (the units ended) polled up to ``ctl[1]``
    times for ``units``, then ``puts[0]`` up to ``ctl[3]`` times for ``ctl[2]`` (then
    ``ctl[4]`` pauses): 1 where every unit had ended, plus 2 where ``puts[0]`` came to
    ``ctl[2]`` (:func:`engine.parallel_units`)."""
    ended = count[1:]
    _poll(ended, units, ctl[1], 0)
    done = 1 if _load(ended) >= units else 0
    return done + (2 if _poll(puts, ctl[2], ctl[3], ctl[4]) < ctl[3] else 0)


def _pointwise_units(count, puts, ctl, cuts, wp, x, y, mean, scale, shift, r, affine, add,
                     relu):
    """:func:`_pointwise` over the units ``cuts`` (rows ``need, stage, n0, n1, b0, b1, p0,
    p1``, :func:`_cuts`), each claimed by :func:`_claim` and counted in ``count[1]`` once
    ended (atomically: other threads run the same call); then :func:`_ended`."""
    i = _compiled_claim(count, cuts, ctl[0])
    while 0 <= i < len(cuts):
        _compiled_pointwise(wp, x, y, cuts[i, 2], cuts[i, 3], cuts[i, 4], cuts[i, 5],
                            cuts[i, 6], cuts[i, 7], mean, scale, shift, r, affine, add, relu)
        _fetch_add(count[1:], 1)
        i = _compiled_claim(count, cuts, ctl[0])
    return _compiled_ended(count, len(cuts), puts, ctl) if i >= 0 else 0


def _taps_units(count, puts, ctl, cuts, wp, x, offsets, z, y, mean, scale, shift, r, affine,
                add, relu):
    """:func:`_taps` over the units ``cuts`` (samples and filter blocks), as
    :func:`_pointwise_units` runs them."""
    i = _compiled_claim(count, cuts, ctl[0])
    while 0 <= i < len(cuts):
        _compiled_taps(wp, x, offsets, z, y, cuts[i, 2], cuts[i, 3], cuts[i, 4], cuts[i, 5],
                       mean, scale, shift, r, affine, add, relu)
        _fetch_add(count[1:], 1)
        i = _compiled_claim(count, cuts, ctl[0])
    return _compiled_ended(count, len(cuts), puts, ctl) if i >= 0 else 0


def _plane_unit(u, v, m, i0, i1, b0, b1, p0, p1):
    """``m[i] = u_i @ v[i]`` (:func:`plane_products`) for the planes ``i0:i1``, filter
    blocks ``b0:b1`` and position blocks ``p0:p1``."""
    none = np.empty(0, dtype=m.dtype)
    for i in range(i0, i1):
        y = m[i:i + 1]
        _compiled_pointwise(u[i], v[i:i + 1], y, 0, 1, b0, b1, p0, p1, none, none, none, y,
                            False, False, False)


def _plane_units(count, puts, ctl, cuts, u, v, m):
    """Winograd's products (:func:`_plane_unit`) over the units ``cuts`` (planes, filter
    and position blocks), as :func:`_pointwise_units` runs them."""
    i = _compiled_claim(count, cuts, ctl[0])
    while 0 <= i < len(cuts):
        _compiled_plane_unit(u, v, m, cuts[i, 2], cuts[i, 3], cuts[i, 4], cuts[i, 5],
                             cuts[i, 6], cuts[i, 7])
        _fetch_add(count[1:], 1)
        i = _compiled_claim(count, cuts, ctl[0])
    return _compiled_ended(count, len(cuts), puts, ctl) if i >= 0 else 0


def _pool_units(count, puts, ctl, cuts, x, ph, pw, y, idx):
    """``_fast_pool``'s max pooling over 3x3 windows of stride 2 of ``x`` (padded by ``ph,
    pw``) into ``y`` (and the places into ``idx``, unless empty) over the units ``cuts``
    (samples and channels), as :func:`_pointwise_units` runs them."""
    i = _compiled_claim(count, cuts, ctl[0])
    while 0 <= i < len(cuts):
        _max_pool33(x, ph, pw, cuts[i, 2], cuts[i, 3], cuts[i, 4], cuts[i, 5], y, idx)
        _fetch_add(count[1:], 1)
        i = _compiled_claim(count, cuts, ctl[0])
    return _compiled_ended(count, len(cuts), puts, ctl) if i >= 0 else 0


def _winograd_units(count, puts, ctl, cuts, x, p0, p1, th, tw, wide, v, u, m, mean, scale,
                    shift, r, affine, add, relu, y):
    """Winograd's convolution in three stages over the units ``cuts``, as
    :func:`_pointwise_units` runs them (a unit of a stage once the stage before has
    ended): ``_fast``'s input transform of channels ``a0:a1`` of ``x`` into ``v``
    (stage 0), the products of :func:`_plane_unit` into ``m`` (stage 1), the output
    transform (with BatchNorm's affine, the residual ``r`` and relu as ``_fast``'s
    output_tiles takes them) of filters ``a0:a1`` of ``m`` into ``y`` (stage 2)."""
    i = _compiled_claim(count, cuts, ctl[0])
    while 0 <= i < len(cuts):
        a0, a1 = cuts[i, 2], cuts[i, 3]
        if cuts[i, 1] == 0:
            _input_tiles(x, p0, p1, a0, a1, th, tw, wide, v)
        elif cuts[i, 1] == 1:
            _compiled_plane_unit(u, v, m, a0, a1, cuts[i, 4], cuts[i, 5], cuts[i, 6],
                                 cuts[i, 7])
        else:
            _output_tiles(m, a0, a1, 0, 0, th, tw, wide, mean, scale, shift, r, affine, add,
                          relu, y)
        _fetch_add(count[1:], 1)
        i = _compiled_claim(count, cuts, ctl[0])
    return _compiled_ended(count, len(cuts), puts, ctl) if i >= 0 else 0


def compiled(jit, affine, input_tiles, output_tiles, max_pool33):
    """The kernels, compiled by ``jit`` (numba's, as ``_fast`` sets it), calling
    ``affine`` (``_fast_bn``'s channel_affine), ``_fast``'s Winograd transforms
    ``input_tiles`` and ``output_tiles`` and ``_fast_pool``'s ``max_pool33``, compiled by
    it."""
    from . import _fast_tile
    from ... import _spin_poll
    global _tiles, _tile1, _tile2, _tile3, _affine, _compiled_products
    global _cols1, _cols2, _cols3, _cols4, _compiled_pointwise, _compiled_taps
    global _compiled_claim, _compiled_ended, _compiled_plane_unit, _input_tiles, _output_tiles
    global _fetch_add, _load, _poll, _swap_if, _units, _max_pool33
    _tiles = _fast_tile
    _tile1, _tile2, _tile3 = (_fast_tile.tile(nv, FILTERS, PREFETCH_BYTES) for nv in (1, 2, 3))
    _cols1, _cols2, _cols3, _cols4 = (_fast_tile.columns(m, PREFETCH_BYTES) for m in range(1, 5))
    _affine, _input_tiles, _output_tiles = affine, input_tiles, output_tiles
    _max_pool33 = max_pool33
    _fetch_add, _load, _swap_if = _spin_poll._fetch_add, _spin_poll._load, _spin_poll._swap_if
    _poll = _spin_poll.poll
    _compiled_products = jit(_products)
    _compiled_pointwise, _compiled_taps = jit(_pointwise), jit(_taps)
    _compiled_claim, _compiled_ended = jit(_claim), jit(_ended)
    _compiled_plane_unit = jit(_plane_unit)
    _units = types.SimpleNamespace(pointwise=jit(_pointwise_units), taps=jit(_taps_units),
                                   planes=jit(_plane_units), winograd=jit(_winograd_units),
                                   pool33=jit(_pool_units))
    return _compiled_pointwise, _compiled_taps


def pack(w):
    """The packed weights of ``w`` (F, C) float32, flat, in the order the kernel reads
    them: by blocks of ``BLOCK_CHANNELS`` input channels, in each the filter blocks'
    (k, FILTERS) weights one after the other (one stream, ahead of which the kernel
    asks for ``PREFETCH_BYTES``)."""
    f, c = w.shape
    out = np.empty(f * c, dtype=w.dtype)
    kc = BLOCK_CHANNELS
    for c0 in range(0, c, kc):
        k = min(kc, c - c0)
        out[c0 * f:(c0 + k) * f].reshape(f // FILTERS, k, FILTERS)[...] = \
            w[:, c0:c0 + k].reshape(f // FILTERS, FILTERS, k).transpose(0, 2, 1)
    return out


def applies(x, f):
    """The compiled kernels where they may run a product of ``f`` filters for ``x``'s
    samples: numba present, AVX-512, float32 NumPy data, filters a multiple of
    ``FILTERS``, up to ``MAX_SAMPLES`` samples; else None."""
    if (x.dtype != np.float32 or type(x) is not np.ndarray or f % FILTERS
            or x.shape[0] > MAX_SAMPLES):
        return None
    jit = _fast.kernels()
    return jit if jit is not None and _tiles.AVAILABLE else None


def _plan(x, w, out, epilogue):
    """(the compiled kernels, the packed weights of ``w`` (F, C, *kernel) kept for it,
    the epilogue's arguments but the residual: ``mean, scale, shift``, then ``affine,
    add, relu``, for an output ``y`` (N, F, *out)); None where the kernel does not apply
    (:func:`applies`; the weights not kept or seen once: packing them costs more than
    the kernel saves on one call)."""
    f, c = w.shape[:2]
    n = x.shape[0]
    jit = applies(x, f)
    if jit is None or w.dtype != x.dtype or type(w) is not np.ndarray or x.shape[1] != c:
        return None
    none = np.empty(0, dtype=x.dtype)
    mean, scale, shift, r, relu = epilogue or (none, none, none, None, False)
    if epilogue is not None and (
            any(v.shape != (f,) or v.dtype != x.dtype for v in (mean, scale, shift))
            or r is not None and (r.shape != (n, f) + tuple(out) or r.dtype != x.dtype)):
        return None
    packed, keep = _fast._kept_filters(w, (w.size,))
    if packed is None:
        if keep is None:
            return None
        packed = pack_planes(w.reshape(f, c, -1).transpose(2, 0, 1)).ravel()
        keep[0].held = keep[1] + (packed,)
    return jit, packed, (mean, scale, shift), (epilogue is not None, r is not None, relu)


def _residual(r, y3):
    """The residual the kernels read: ``r`` as (N, F, positions) like the output ``y3``,
    or ``y3`` itself where none is added (not read)."""
    return y3 if r is None else np.ascontiguousarray(r).reshape(y3.shape)


def pack_planes(u):
    """The packed weights (:func:`pack`) of each plane of ``u`` (k, F, C): (k, F * C)."""
    return np.stack([pack(np.ascontiguousarray(p)) for p in u])


def plane_products(u, v, m, lo, hi):
    """``m[i] = u_i @ v[i]`` for the planes ``lo:hi`` of Winograd's products, ``u`` the
    packed planes (:func:`pack_planes`) of its filters, ``v`` (k, C, T), ``m`` (k, F, T)
    (each plane C-contiguous), serially in the caller.

    NOTE: one thread, cold filters, ResNet-50's batch-1 products (planes x F x C x
    tiles) against OpenBLAS's batched product: 16 x 256 x 256 x 49 (14x14 maps) 109
    GFLOP/s against 78; 24 x 128 x 128 x 98 (28x28, F(2x4)) 106 against 86; 24 x 64
    x 64 x 392 (56x56) 80 against 84; 16 x 512 x 512 x 16 (7x7) 95 against 34."""
    _fast.kernels()
    f, t = m.shape[1:]
    _compiled_plane_unit(u, v, m, lo, hi, 0, f // FILTERS, 0, -(-t // (16 * VECTORS)))


def _rows(n, f_blocks, p_blocks, axis, split):
    """The units (``n0, n1, b0, b1, p0, p1``: samples, filter and position blocks) of a
    product over ``n`` samples (or planes), ``f_blocks`` and ``p_blocks``: where
    ``split``, each sample's cut into contiguous parts along ``axis`` (2: the filters, 4:
    the positions), ``UNITS`` in all or as many blocks as there are; else one unit of
    the whole. Each output value is one unit's."""
    whole = [0, n, 0, f_blocks, 0, p_blocks]
    if not split:
        return [whole]
    # (filter blocks by pairs: a pair runs its last few positions by columns)
    pair = 2 if axis == 2 else 1
    blocks = whole[axis + 1]
    m = min(-(-blocks // pair), max(1, -(-UNITS // n)))
    cut = [min(blocks, pair * (-(-blocks // pair) * j // m)) for j in range(m + 1)]
    rows = []
    for a in range(n):
        for j in range(m):
            row = [a, a + 1] + whole[2:]
            row[axis:axis + 2] = cut[j], cut[j + 1]
            rows.append(row)
    return rows


def _table(stages):
    """The units of ``stages`` (lists of rows, :func:`_rows`), one after the other, as a
    kernel claims them: rows ``need, stage, ...``, ``need`` the units of the stages
    before (all ended before one of this stage starts)."""
    rows, need = [], 0
    for stage, units in enumerate(stages):
        rows += [[need, stage] + list(r) + [0] * (6 - len(r)) for r in units]
        need += len(units)
    cuts = np.array(rows, dtype=np.int64)
    cuts.flags.writeable = False
    return cuts


@functools.lru_cache(maxsize=1024)
def _cuts(n, f_blocks, p_blocks, axis, split):
    """The units of one product (:func:`_rows`) as a kernel claims them (:func:`_table`)."""
    return _table([_rows(n, f_blocks, p_blocks, axis, split)])


@functools.lru_cache(maxsize=256)
def _winograd_cuts(c, k, f, p_blocks, split):
    """The units of :func:`_winograd_units`: the input transform by parts of the ``c``
    channels, the products of the ``k`` planes (:func:`_rows`), the output transform by
    parts of the ``f`` filters; ``UNITS`` parts each (one where not ``split``)."""
    def parts(n):
        m = min(n, UNITS) if split else 1
        return [(n * j // m, n * (j + 1) // m) for j in range(m)]
    return _table([parts(c), _rows(k, f // FILTERS, p_blocks, 2, split), parts(f)])


def planes(u, v, m):
    """``m[i] = u_i @ v[i]`` for every plane of Winograd's products (as
    :func:`plane_products`), split over the threads by planes and filters as claimed
    units (:func:`engine.parallel_units`)."""
    k, f, t = m.shape
    blocks = -(-t // (16 * VECTORS))
    macs = k * f * v.shape[1] * t
    if not CLAIMS:
        return parallel_products(lambda lo, hi: plane_products(u, v, m, lo, hi), k, macs)
    _fast.kernels()
    engine.parallel_units(_units.planes, functools.partial(_cuts, k, f // FILTERS, blocks, 2),
                          (u, v, m), macs)


def winograd(x, pad, u, th, tw, scheme, epi, y):
    """Winograd's convolution of ``x`` (N, C, H, W), zero-padded by ``pad`` before, with
    ``u`` the packed planes (:func:`pack_planes`) of its filters' transform, into ``y``
    (N, F, *out), with the epilogue ``epi`` (the arguments of ``_fast``'s output_tiles):
    ``_fast``'s input transform, the products and the output transform as three stages
    of units claimed inside one compiled call (:func:`_winograd_units`), the threads
    going from one stage to the next without leaving it; returns V, the transformed
    input. ``scheme``: ``_fast``'s (planes, outputs per tile along a row, wide)."""
    k, _, wide = scheme
    (n, c), f = x.shape[:2], y.shape[1]
    v = _fast._planes(c, n * th * tw, x.dtype, k)
    m = _fast._product_planes(f, n * th * tw, x.dtype, k)     # (contiguous: see there)
    engine.parallel_units(
        _units.winograd,
        functools.partial(_winograd_cuts, c, k, f, -(-n * th * tw // (16 * VECTORS))),
        (np.ascontiguousarray(x), pad[0], pad[1], th, tw, wide, v, u, m) + tuple(epi) + (y,),
        k * f * c * n * th * tw)
    return v


def _split(run, n, f, blocks, macs):
    """``run(n0, n1, b0, b1, p0, p1)`` over parts: by samples where there are as many as
    threads, else by filters where there are more filter blocks than ``blocks`` of
    positions, else by positions; each output value is one part's."""
    whole = [0, n, 0, f // FILTERS, 0, blocks]
    axis = 0 if n >= num_threads() else 2 if whole[3] >= blocks else 4

    def part(lo, hi):
        bounds = list(whole)
        bounds[axis:axis + 2] = lo, hi
        run(*bounds)
    parallel_products(part, whole[axis + 1], macs)


def pointwise(x, w, stride, epilogue=None):
    """The 1x1 convolution (N, F, *out) of ``x`` (N, C, *in) with ``w`` (F, C, 1, ...) at
    ``stride``, with the ``epilogue`` as ``_fast.conv3x3`` takes it; None where the
    kernel does not apply (:func:`_plan`)."""
    call = pointwise_call(x, w, stride, epilogue)
    return None if call is None else call(x, None if epilogue is None else epilogue[3])


def pointwise_call(x, w, stride, epilogue=None):
    """:func:`pointwise` for data of ``x``'s shape and dtype, as a function ``call(x,
    r)`` of the data and the residual (None where the epilogue adds none), everything
    else bound once (the packed weights, BatchNorm's vectors, the units): for a step
    that runs it again while the weights are the same; None where the kernel does not
    apply (:func:`_plan`)."""
    f, c = w.shape[:2]
    if x.ndim < 3 or w.size != f * c or len(stride) != x.ndim - 2:
        return None
    n = x.shape[0]
    out = tuple(-(-s // k) for s, k in zip(x.shape[2:], stride))
    plan = _plan(x, w, out, epilogue)
    if plan is None:
        return None
    jit, packed, vectors, flags = plan
    shape, positions = (n, f) + out, math.prod(out)
    strided = (slice(None),) * 2 + tuple(slice(None, None, k) for k in stride) \
        if any(k != 1 for k in stride) else None
    blocks, macs = -(-positions // (16 * VECTORS)), f * c * n * positions
    # (by filters each unit reads the whole sample, by positions the whole weights;
    # by filters where there are blocks for half the units at least)
    filters = f // FILTERS >= blocks or (c * positions * x.itemsize <= FILTER_UNITS_MAX_BYTES
                                         and f // (2 * FILTERS) >= UNITS // 2)
    cuts = functools.partial(_cuts, n, f // FILTERS, blocks, 2 if filters else 4)

    def call(x, r):
        if strided is not None:
            x = x[strided]
        x3 = engine.contiguous(np, x).reshape(n, c, -1)
        y = np.empty(shape, dtype=x.dtype)
        y3 = y.reshape(n, f, -1)
        epi = vectors + (_residual(r, y3),) + flags
        if CLAIMS:
            engine.parallel_units(_units.pointwise, cuts, (packed, x3, y3) + epi, macs)
        else:
            _split(lambda *b: jit.pointwise(packed, x3, y3, *b, *epi), n, f, blocks, macs)
        return y
    return call


def conv3x3(x, w, pad, out, epilogue=None):
    """The stride-1 3x3 cross-correlation (N, F, *out) of ``x`` (N, C, H, W) zero-padded
    by ``pad`` before (and as ``out`` needs after) with ``w`` (F, C, 3, 3), the
    ``epilogue`` as ``_fast.conv3x3`` takes it, on maps of up to ``MAX_POSITIONS_3X3``
    output positions; None where the kernel does not apply (:func:`_plan`)."""
    call = conv3x3_call(x, w, pad, out, epilogue)
    return None if call is None else call(x, None if epilogue is None else epilogue[3])


def conv3x3_call(x, w, pad, out, epilogue=None):
    """:func:`conv3x3` for data of ``x``'s shape and dtype, as a function ``call(x, r)``
    (as :func:`pointwise_call`); None where the kernel does not apply."""
    oh, ow = out
    if x.ndim != 4 or w.shape[2:] != (3, 3) or oh * ow > MAX_POSITIONS_3X3 or min(pad) < 0:
        return None
    plan = _plan(x, w, out, epilogue)
    if plan is None:
        return None
    jit, packed, vectors, flags = plan
    (n, c, h, wd), f = x.shape, w.shape[0]
    hp, wp = oh + 2, ow + 2
    rows, cols = max(0, min(h, hp - pad[0])), max(0, min(wd, wp - pad[1]))
    inside = (slice(None), slice(None), slice(pad[0], pad[0] + rows), slice(pad[1], pad[1] + cols))
    offsets = np.array([i * wp + j for i in range(3) for j in range(3)], dtype=np.int64)
    macs = 9 * f * c * n * oh * ow
    cuts = functools.partial(_cuts, n, f // FILTERS, 1, 2)

    def call(x, r):
        xp = np.zeros((n, c, hp, wp), dtype=x.dtype)
        xp[inside] = x[:, :, :rows, :cols]
        z = np.empty((n, f, (oh - 1) * wp + ow), dtype=x.dtype)
        y = np.empty((n, f, oh, ow), dtype=x.dtype)
        epi = vectors + (z if r is None else _residual(r, y.reshape(n, f, -1)),) + flags
        x3 = xp.reshape(n, c, -1)
        if CLAIMS:
            engine.parallel_units(_units.taps, cuts, (packed, x3, offsets, z, y) + epi, macs)
        else:
            _split(lambda n0, n1, b0, b1, *_: jit.taps(packed, x3, offsets, z, y, n0, n1, b0,
                                                        b1, *epi),
                   n, f, 0, macs)
        return y
    return call
