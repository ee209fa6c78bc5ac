"""The tile of ``_fast_direct``'s kernel, written in LLVM IR as a numba intrinsic: sums
of ``filters`` rows by ``nv`` vectors of 16 positions, held in ``<16 x float>``
registers while the input channels run, one ``llvm.fma`` per term.

NOTE: numba's loops over a local array of sums keep the sums in memory (measured: 9
GFLOP/s against OpenBLAS's 150 on the same product), hence the IR. It needs AVX-512
(``AVAILABLE``) to run fast: its 24 vectors of sums do not fit in 16 AVX2 registers.

This module imports numba and llvmlite: ``_fast_direct`` imports it where numba is
present. numba's cache of ``_fast_direct``'s kernels does not see this file: change
``_fast_direct.CALLED_CODE_STAMP`` with it (a test gives the value).
"""
import llvmlite.binding as llvm
from llvmlite import ir
from numba import types
from numba.core import cgutils, config
from numba.extending import intrinsic

# Whether numba compiles for a CPU with AVX-512 (the host's, unless NUMBA_CPU_NAME or
# NUMBA_CPU_FEATURES say otherwise).
AVAILABLE = "+avx512f" in (config.CPU_FEATURES or "" if config.CPU_NAME
                           else llvm.get_host_cpu_features().flatten()).split(",")

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


def tile(nv, filters, prefetch_bytes):
    """An intrinsic ``tile(w, x, ldx, y, ldy, c, mask, add)`` (addresses of float32 data,
    strides in floats): ``y[f, j] = (y[f, j] if add else 0) + sum_k w[k, f] x[k, j]`` for
    ``f < filters``, ``j < 16 * nv``, ``k < c`` (``c >= 1``) in that order (one fma per
    term), the last vector's positions those of the 16-bit ``mask``; each step over
    ``k`` asks the caches for the weights ``prefetch_bytes`` ahead."""
    @intrinsic
    def tile(typingctx, w, x, ldx, y, ldy, c, mask, add):
        sig = types.void(types.uintp, types.uintp, types.intp, types.uintp, types.intp,
                         types.intp, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            _build_tile(builder, nv, filters, prefetch_bytes, *args)
            return context.get_dummy_value()
        return sig, codegen
    return tile


def _sum_loop(builder, name, add, c, loaded, step):
    """The loop ``for k in range(c)`` (``c >= 1``) carrying ``<16 x float>`` sums: they
    start as ``loaded()`` (emitted in a block of their own) where ``add``, else as zeros;
    ``step(k, sums)`` gives the next ones. The final sums (the builder after the loop)."""
    fn = builder.function
    b_entry = builder.block
    b_load, b_pre, b_loop, b_exit = (fn.append_basic_block(name + "_" + s)
                                     for s in ("load", "pre", "loop", "exit"))
    builder.cbranch(builder.icmp_signed("!=", add, ir.Constant(_I64, 0)), b_load, b_pre)
    builder.position_at_end(b_load)
    first = loaded()
    b_loaded = builder.block
    builder.branch(b_pre)
    builder.position_at_end(b_pre)
    start = []
    for v in first:
        phi = builder.phi(_V16)
        phi.add_incoming(v, b_loaded)
        phi.add_incoming(ir.Constant(_V16, [0.0] * 16), b_entry)
        start.append(phi)
    builder.branch(b_loop)
    builder.position_at_end(b_loop)
    k = builder.phi(_I64)
    k.add_incoming(ir.Constant(_I64, 0), b_pre)
    sums = []
    for v in start:
        phi = builder.phi(_V16)
        phi.add_incoming(v, b_pre)
        sums.append(phi)
    new = step(k, sums)
    k1 = builder.add(k, ir.Constant(_I64, 1))
    k.add_incoming(k1, b_loop)
    for phi, v in zip(sums, new):
        phi.add_incoming(v, b_loop)
    builder.cbranch(builder.icmp_signed("<", k1, c), b_loop, b_exit)
    builder.position_at_end(b_exit)
    return new


def _splat(builder, s):
    """``s`` (a float) in all 16 lanes."""
    undef = ir.Constant(_V16, ir.Undefined)
    return builder.shuffle_vector(builder.insert_element(undef, s, ir.Constant(_I32, 0)),
                                  undef, ir.Constant(ir.VectorType(_I32, 16), [0] * 16))


def _build_tile(builder, nv, filters, prefetch_bytes, w, x, ldx, y, ldy, c, mask, add):
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

    def step(k, sums):
        """One input channel: one fma per filter and vector, the weights broadcast."""
        xs = vectors(at(xp, builder.mul(k, ldx)))
        wrow = at(wp, builder.mul(k, ir.Constant(_I64, filters)))
        # (read, keep in all levels, data)
        builder.call(prefetch, [builder.bitcast(at(wrow, prefetch_bytes // 4), bptr)]
                     + [ir.Constant(_I32, v) for v in (0, 3, 1)])
        new = []
        for f in range(filters):
            b = _splat(builder, builder.load(at(wrow, f), align=4))
            new.extend(builder.call(fma, [b, xs[v], sums[f * nv + v]]) for v in range(nv))
        return new
    new = _sum_loop(builder, "tile", add, c,
                    lambda: [v for f in range(filters) for v in vectors(y_row(f))], step)
    for f in range(filters):
        row = y_row(f)
        for v in range(nv):
            p = builder.bitcast(at(row, 16 * v), vptr)
            if v < nv - 1:
                builder.store(new[f * nv + v], p, align=4)
            else:
                builder.call(mstore, [new[f * nv + v], p, align, lanes])


def columns(positions, prefetch_bytes):
    """An intrinsic ``columns(w, x, ldx, y, ldy, c, add)``: the tile's sums (:func:`tile`)
    for ``positions`` (1 to 15) positions and two blocks of 8 filters, the vectors over
    the 16 filters: ``w`` the first block's packed weights (c, 8), the second's right
    after them. For the few positions left after whole vectors of them (49 = 3 * 16 +
    1): a vector of positions would hold one position's sums in 16 lanes.

    Each sum takes the same terms in the same order (one fma each) as in :func:`tile`:
    the same bits."""
    @intrinsic
    def cols(typingctx, w, x, ldx, y, ldy, c, add):
        sig = types.void(types.uintp, types.uintp, types.intp, types.uintp, types.intp,
                         types.intp, types.intp)

        def codegen(context, builder, signature, args):
            _build_columns(builder, positions, prefetch_bytes, *args)
            return context.get_dummy_value()
        return sig, codegen
    return cols


def _build_columns(builder, positions, prefetch_bytes, w, x, ldx, y, ldy, c, add):
    mod = builder.module
    v8 = ir.VectorType(_F32, 8)
    bptr = ir.IntType(8).as_pointer()
    fma = cgutils.get_or_insert_function(mod, ir.FunctionType(_V16, [_V16] * 3),
                                         "llvm.fma.v16f32")
    prefetch = cgutils.get_or_insert_function(
        mod, ir.FunctionType(ir.VoidType(), [bptr] + [_I32] * 3),
        "llvm.prefetch" + _pointer_suffix("i8"))
    wp, xp, yp = (builder.inttoptr(a, _F32.as_pointer()) for a in (w, x, y))
    wq = builder.gep(wp, [builder.mul(c, ir.Constant(_I64, 8))])     # the second block
    undef = ir.Constant(_V16, ir.Undefined)

    def at(p, i):
        return builder.gep(p, [i if isinstance(i, ir.Value) else ir.Constant(_I64, i)])

    def y_at(i, r):
        return at(yp, builder.add(builder.mul(ldy, ir.Constant(_I64, i)), ir.Constant(_I64, r)))

    def loaded():
        sums = []
        for r in range(positions):
            v = undef
            for i in range(16):
                v = builder.insert_element(v, builder.load(y_at(i, r), align=4),
                                           ir.Constant(_I32, i))
            sums.append(v)
        return sums

    def step(k, sums):
        """One input channel: the 16 filters' weights, one fma per position."""
        k8 = builder.mul(k, ir.Constant(_I64, 8))
        halves = [builder.load(builder.bitcast(at(p, k8), v8.as_pointer()), align=4)
                  for p in (wp, wq)]
        wv = builder.shuffle_vector(halves[0], halves[1],
                                    ir.Constant(ir.VectorType(_I32, 16), list(range(16))))
        for p in (wp, wq):          # (read, keep in all levels, data)
            builder.call(prefetch, [builder.bitcast(at(at(p, k8), prefetch_bytes // 4), bptr)]
                         + [ir.Constant(_I32, v) for v in (0, 3, 1)])
        xrow = at(xp, builder.mul(k, ldx))
        return [builder.call(fma, [_splat(builder, builder.load(at(xrow, r), align=4)), wv,
                                   sums[r]]) for r in range(positions)]
    new = _sum_loop(builder, "cols", add, c, loaded, step)
    for r in range(positions):
        for i in range(16):
            builder.store(builder.extract_element(new[r], ir.Constant(_I32, i)), y_at(i, r),
                          align=4)
