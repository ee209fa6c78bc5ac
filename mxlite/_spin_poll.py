"""The compiled poll of :mod:`mxlite._spin` and the atomics that threads sharing work
inside compiled kernels use (``_fast_direct``'s claimed units); imported only where
numba is present.

NOTE: a module of its own, imported on first use, so that numba is not imported with
mxlite, and compiled with ``cache=True`` (0.6 s otherwise in every process)."""
import platform

import numba
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

_X86 = platform.machine().lower() in ("x86_64", "amd64", "i686", "x86")


@intrinsic
def _pause(typingctx):
    """The CPU's ``pause`` (a spin-wait hint) where it has one."""
    def codegen(context, builder, sig, args):
        if _X86:
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")
            builder.call(fn, [])
        return context.get_dummy_value()
    return types.void(), codegen


@intrinsic
def _load(typingctx, count):
    """``count[0]`` by an atomic load, which the compiler may not hoist out of the loop
    that polls it."""
    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, value=args[0]).data
        return builder.load_atomic(data, "acquire", 8)
    return types.int64(count), codegen


@intrinsic
def _fetch_add(typingctx, count, value):
    """``count[0] += value`` (int64) as one atomic step (sequentially consistent: what a
    thread wrote before it is seen by a thread that sees its result); the value before."""
    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, value=args[0]).data
        return builder.atomic_rmw("add", data, args[1], "seq_cst")
    return types.int64(count, types.int64), codegen


@intrinsic
def _swap_if(typingctx, count, expected, value):
    """``count[0] = value`` where it is ``expected`` (int64), as one atomic step
    (sequentially consistent); whether it was."""
    def codegen(context, builder, sig, args):
        data = context.make_array(sig.args[0])(context, builder, value=args[0]).data
        pair = builder.cmpxchg(data, args[1], args[2], "seq_cst", "seq_cst")
        return builder.extract_value(pair, 1)
    return types.boolean(count, types.int64, types.int64), codegen


def _poll(count, least, n, settle):
    """Poll ``count[0]`` (int64) until it is at least ``least``, at most ``n`` times,
    then pause ``settle`` times more; the polls made."""
    for i in range(n):
        if _load(count) >= least:
            for _ in range(settle):
                _pause()
            return i
        _pause()
    return n


try:
    poll = numba.njit(nogil=True, cache=True)(_poll)
except RuntimeError:    # no writable cache directory: compile in every process
    poll = numba.njit(nogil=True)(_poll)
