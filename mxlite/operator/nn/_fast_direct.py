"""Optional numba kernel (``_fast``, which compiles it) for 1x1 convolutions in float32:
``w (F, C) @ x[n] (C, L)`` by a register-blocked product over weights packed once per
weight array, with BatchNorm's inference affine, the residual sum and relu applied to
each chunk of the output while it is in the L2 cache.

A tile is ``FILTERS`` filters by ``VECTORS`` vectors of 16 positions, its ``FILTERS *
VECTORS`` sums held in AVX-512 registers while the input channels run: per channel,
``VECTORS`` loads of the input's row, then one fused multiply-add per filter and
vector, each weight broadcast from memory. The weights are packed in the order the
tiles read them (:func:`pack`). numba's loops over a local array of sums keep the sums
in memory (measured: 9 GFLOP/s), so the tile is written in LLVM IR (``<16 x float>``
values, ``llvm.fma``); where the CPU has no AVX-512 (``AVAILABLE``) the kernel does
not run (its 24 vectors of sums would not fit in 16 AVX2 registers).

Each output value is summed in the order c = 0, 1, ..., C - 1, one fused multiply-add
per term (the input channels run in blocks of ``BLOCK_CHANNELS``, each block adding
onto the sums the one before left in the output): the same bits at any threads and
from any split, float32 round-off against NumPy's product (OpenBLAS's sums run in
another order).

This module imports numba; ``_fast`` imports it where numba is present.
"""
import numpy as np
import llvmlite.binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils, config
from numba.extending import intrinsic

from ._fast import DIRECT_FILTERS as FILTERS

VECTORS = 3
# Whether numba compiles for a CPU with AVX-512 (the host's, unless NUMBA_CPU_NAME or
# NUMBA_CPU_FEATURES say otherwise).
AVAILABLE = "+avx512f" in (config.CPU_FEATURES or "" if config.CPU_NAME
                           else llvm.get_host_cpu_features().flatten()).split(",")
# Input channels per block: the block's rows of the input tile (BLOCK_CHANNELS * 48
# floats, 24 KB) stay in the L1 cache while every filter block reads them.
BLOCK_CHANNELS = 128
# Bytes ahead of the weights it reads that a tile asks the caches for: the weights are
# read once per call, from memory (a network's weights do not stay in the caches from one
# call to the next). NOTE: measured cold (cycling through 100 MB of weights), one
# thread, ResNet-50's 7x7-map products (F x C: 2048 x 512 ... 512 x 2048): 54-73
# GFLOP/s without, 77-90 at 512 bytes, 105-117 at 1024 and 2048 (OpenBLAS: 74-85).
PREFETCH_BYTES = 1024
# Bytes of output a chunk of positions holds, and the least blocks of positions in one.
CHUNK_BYTES = 512 << 10
CHUNK_BLOCKS = 4

_F32 = ir.FloatType()
_V16 = ir.VectorType(_F32, 16)
_M16 = ir.VectorType(ir.IntType(1), 16)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)


# the pointer types' part of an intrinsic's name: "p0" where llvmlite's pointers are
# opaque (LLVM 15 on), "p0" and the pointee's where they are typed
_TYPED = str(_F32.as_pointer()) != "ptr"


def _pointer_suffix(pointee):
    return ".p0" + (pointee if _TYPED else "")


def _tile(nv):
    """An intrinsic ``tile(w, x, ldx, y, ldy, c, mask, add)`` (addresses of float32 data,
    strides in floats): ``y[f, j] = (y[f, j] if add else 0) + sum_k w[k, f] x[k, j]`` for
    ``f < FILTERS``, ``j < 16 * nv``, ``k < c`` (``c >= 1``) in that order, the last
    vector's positions those of the 16-bit ``mask``."""
    @intrinsic
    def tile(typingctx, w, x, ldx, y, ldy, c, mask, add):
        sig = types.void(types.uintp, types.uintp, types.intp, types.uintp, types.intp,
                         types.intp, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            _build_tile(builder, nv, *args)
            return context.get_dummy_value()
        return sig, codegen
    return tile


def _build_tile(builder, nv, w, x, ldx, y, ldy, c, mask, add):
    mod = builder.module
    vptr = _V16.as_pointer()
    bptr = ir.IntType(8).as_pointer()

    def declared(name, ret, args):
        return cgutils.get_or_insert_function(mod, ir.FunctionType(ret, args), name)
    fma = declared("llvm.fma.v16f32", _V16, [_V16] * 3)
    mload = declared("llvm.masked.load.v16f32" + _pointer_suffix("v16f32"), _V16,
                     [vptr, _I32, _M16, _V16])
    mstore = declared("llvm.masked.store.v16f32" + _pointer_suffix("v16f32"), ir.VoidType(),
                      [_V16, vptr, _I32, _M16])
    prefetch = declared("llvm.prefetch" + _pointer_suffix("i8"), ir.VoidType(),
                        [bptr] + [_I32] * 3)
    wp, xp, yp = (builder.inttoptr(a, _F32.as_pointer()) for a in (w, x, y))
    lanes = builder.bitcast(builder.trunc(mask, ir.IntType(16)), _M16)
    zero = ir.Constant(_V16, [0.0] * 16)
    align = ir.Constant(_I32, 4)

    def at(p, i):
        return builder.gep(p, [i if isinstance(i, ir.Value) else ir.Constant(_I64, i)])

    def vectors(row):
        """The ``nv`` vectors from ``row`` (the last one masked)."""
        vs = [builder.load(builder.bitcast(at(row, 16 * v), vptr), align=4)
              for v in range(nv - 1)]
        last = builder.bitcast(at(row, 16 * (nv - 1)), vptr)
        return vs + [builder.call(mload, [last, align, lanes, zero])]

    def y_row(f):
        return at(yp, builder.mul(ldy, ir.Constant(_I64, f)))

    fn = builder.function
    b_entry = builder.block
    b_load, b_pre, b_loop, b_exit = (fn.append_basic_block("tile_" + s)
                                     for s in ("load", "pre", "loop", "exit"))
    builder.cbranch(builder.icmp_signed("!=", add, ir.Constant(_I64, 0)), b_load, b_pre)
    builder.position_at_end(b_load)
    loaded = [v for f in range(FILTERS) for v in vectors(y_row(f))]
    builder.branch(b_pre)
    builder.position_at_end(b_pre)
    start = []
    for v in loaded:
        phi = builder.phi(_V16)
        phi.add_incoming(v, b_load)
        phi.add_incoming(zero, b_entry)
        start.append(phi)
    builder.branch(b_loop)
    # the loop over the input channels: the sums in registers, one fma per term
    builder.position_at_end(b_loop)
    k = builder.phi(_I64)
    k.add_incoming(ir.Constant(_I64, 0), b_pre)
    sums = []
    for s in start:
        phi = builder.phi(_V16)
        phi.add_incoming(s, b_pre)
        sums.append(phi)
    xs = vectors(at(xp, builder.mul(k, ldx)))
    wrow = at(wp, builder.mul(k, ir.Constant(_I64, FILTERS)))
    # (read, keep in all levels, data)
    builder.call(prefetch, [builder.bitcast(at(wrow, PREFETCH_BYTES // 4), bptr)]
                 + [ir.Constant(_I32, v) for v in (0, 3, 1)])
    undef = ir.Constant(_V16, ir.Undefined)
    splat = ir.Constant(ir.VectorType(_I32, 16), [0] * 16)
    new = []
    for f in range(FILTERS):
        s = builder.load(at(wrow, f), align=4)
        b = builder.shuffle_vector(builder.insert_element(undef, s, ir.Constant(_I32, 0)),
                                   undef, splat)
        new.extend(builder.call(fma, [b, xs[v], sums[f * nv + v]]) for v in range(nv))
    k1 = builder.add(k, ir.Constant(_I64, 1))
    k.add_incoming(k1, b_loop)
    for phi, v in zip(sums, new):
        phi.add_incoming(v, b_loop)
    builder.cbranch(builder.icmp_signed("<", k1, c), b_loop, b_exit)
    builder.position_at_end(b_exit)
    for f in range(FILTERS):
        row = y_row(f)
        for v in range(nv):
            p = builder.bitcast(at(row, 16 * v), vptr)
            if v < nv - 1:
                builder.store(new[f * nv + v], p, align=4)
            else:
                builder.call(mstore, [new[f * nv + v], p, align, lanes])


_tile1, _tile2, _tile3 = (_tile(nv) for nv in (1, 2, 3))
_affine = None      # _fast_bn's channel_affine, compiled (set by :func:`compiled`)


def _direct(wp, x, y, n0, n1, b0, b1, p0, p1, mean, scale, shift, r, affine, add, relu):
    """``y[n, f] = w[f] @ x[n]`` for samples ``n0:n1``, filters ``FILTERS * (b0:b1)`` and
    positions ``16 * VECTORS * (p0:p1)`` (clipped) of ``x`` (N, C, L) and ``y`` (N, F, L),
    C-contiguous float32, ``wp`` the packed weights (:func:`pack`); then, where
    ``affine``, ``_fast_bn``'s channel_affine (``mean, scale, shift`` (F,), ``r`` (N, F, L)
    added where ``add``, relu where ``relu``). By chunks of positions whose output
    (``CHUNK_BYTES``, at least ``CHUNK_BLOCKS`` blocks of positions) stays in the L2
    cache while the blocks of input channels add onto it and the affine runs.

    NOTE: the affine run tile by tile cost 0.5 us a call, on rows of 48 values 0.1 us a
    row: ResNet-50's 1x1 layers on 56x56 maps took 1.5-2x the time."""
    _, c, n_pos = x.shape
    f = y.shape[1]
    width = 16 * VECTORS
    kc = BLOCK_CHANNELS
    f0, f1 = b0 * FILTERS, b1 * FILTERS
    step = max(CHUNK_BLOCKS, CHUNK_BYTES // (4 * width * (f1 - f0)))
    wa, xa, ya = wp.ctypes.data, x.ctypes.data, y.ctypes.data
    for n in range(n0, n1):
        for q0 in range(p0, p1, step):
            q1 = min(p1, q0 + step)
            for c0 in range(0, c, kc):
                k = min(kc, c - c0)
                for lb in range(q0, q1):
                    l0 = lb * width
                    m = min(width, n_pos - l0)
                    nv = (m + 15) // 16
                    mask = (1 << (m - 16 * (nv - 1))) - 1
                    xo = xa + 4 * ((n * c + c0) * n_pos + l0)
                    for b in range(b0, b1):
                        wo = wa + 4 * (c0 * f + b * k * FILTERS)
                        yo = ya + 4 * ((n * f + b * FILTERS) * n_pos + l0)
                        if nv == 3:
                            _tile3(wo, xo, n_pos, yo, n_pos, k, mask, c0)
                        elif nv == 2:
                            _tile2(wo, xo, n_pos, yo, n_pos, k, mask, c0)
                        else:
                            _tile1(wo, xo, n_pos, yo, n_pos, k, mask, c0)
            if affine:
                _affine(y, f0, n, n + 1, q0 * width, min(n_pos, q1 * width), mean[f0:f1],
                        scale[f0:f1], shift[f0:f1], r, add, relu, y)


def compiled(jit, affine):
    """The kernel compiled by ``jit`` (numba's, as ``_fast`` sets it), calling ``affine``
    (``_fast_bn``'s channel_affine, compiled by it)."""
    global _affine
    _affine = affine
    return jit(_direct)


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
