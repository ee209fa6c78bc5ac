"""The tile of ``_fast_direct``'s kernel, written in LLVM IR as a numba intrinsic: sums
of ``filters`` rows by ``nv`` vectors of 16 positions, held in ``<16 x float>``
registers while the input channels run, one ``llvm.fma`` per term.

NOTE: numba's loops over a local array of sums keep the sums in memory (measured: 9
GFLOP/s against OpenBLAS's 150 on the same product), hence the IR. It needs AVX-512
(``AVAILABLE``) to run fast: its 24 vectors of sums do not fit in 16 AVX2 registers.

This module imports numba and llvmlite: ``_fast_direct`` imports it where numba is
present.
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

    fn = builder.function
    b_entry = builder.block
    b_load, b_pre, b_loop, b_exit = (fn.append_basic_block("tile_" + s)
                                     for s in ("load", "pre", "loop", "exit"))
    builder.cbranch(builder.icmp_signed("!=", add, ir.Constant(_I64, 0)), b_load, b_pre)
    builder.position_at_end(b_load)
    loaded = [v for f in range(filters) for v in vectors(y_row(f))]
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
    wrow = at(wp, builder.mul(k, ir.Constant(_I64, filters)))
    # (read, keep in all levels, data)
    builder.call(prefetch, [builder.bitcast(at(wrow, prefetch_bytes // 4), bptr)]
                 + [ir.Constant(_I32, v) for v in (0, 3, 1)])
    undef = ir.Constant(_V16, ir.Undefined)
    splat = ir.Constant(ir.VectorType(_I32, 16), [0] * 16)
    new = []
    for f in range(filters):
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
    for f in range(filters):
        row = y_row(f)
        for v in range(nv):
            p = builder.bitcast(at(row, 16 * v), vptr)
            if v < nv - 1:
                builder.store(new[f * nv + v], p, align=4)
            else:
                builder.call(mstore, [new[f * nv + v], p, align, lanes])
