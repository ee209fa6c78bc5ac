"""NumPy's OpenBLAS and mxlite's products: the BLAS's thread count (:func:`set_blas_threads`),
held at one thread while mxlite's workers run products (``_serial_blas``), and
:func:`matmul`, a product split over those workers. ``mxlite.engine`` serves these
names too.
"""
import functools
import itertools
import os
import threading

import numpy as np

from . import engine


# OpenBLAS runs a product on its own threads, which then spin (busy-wait) for a while
# for the next one, on the cores that mxlite's workers want for the passes between
# products: at 2 threads a split pass gained 1.50x with the BLAS at 1 thread and
# 1.08x with it at 2. So while mxlite's workers are on, its products run with the
# BLAS at one thread, split over the workers themselves (:func:`matmul`): one owner
# of the cores. The BLAS keeps its own setting outside those products (a user's
# ``np.dot``).
#
# NOTE: the products on OpenBLAS's own threads instead, measured at 2 threads on
# ResNet-50 hybridized inference at batch 1 (modes alternated in one process).
# OpenBLAS 0.3's threads busy-wait 2^28 clock ticks (~0.1 s) after every call
# (OPENBLAS_THREAD_TIMEOUT=n, read at load, makes it 2^n) and cut a product into
# fixed parts by rows and columns, never its inner sums (the serial product, the
# split one and the one on 2 BLAS threads gave the same bits, every time). While the
# products were the BLAS's: 0.90x the wall time of the split, 1.15x the CPU time (the
# spinning), 1.08-1.13x the wall time with OPENBLAS_THREAD_TIMEOUT=4; with one core
# busy (a pinned `while 1: pass`) 1.6-2.3x the least and 5-27x the median step time,
# single products 2-13x (the caller spins for a part that the busy core runs late).
# A chooser that took the BLAS's threads only while the caller rarely waited for a
# core (its schedstat run delay) and each product timed faster there was neutral on
# a busy host, but since numba's kernels run the 1x1 convolutions and the Winograd
# planes (split over the workers; at b1 the BLAS keeps the stem's and the dense
# layer's products, ~2.5 of ~55 ms) it lost on a quieter one: 1.0-1.2x the least
# step time, the BLAS's threads forced there 1.0-1.24x (their spinning takes cores
# from the kernels' parts). Everything in one thread on a busy host: 0.93x the CPU
# time, 3x the median wall time (one thread gets a smaller share of the cores).

def _openblas_maps():
    """Paths of the OpenBLAS libraries mapped into the process (Linux), as threadpoolctl
    finds them: NumPy's may be bundled under a mangled name."""
    paths = []
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                fields = line.split()
                name = os.path.basename(fields[-1]).lower() if len(fields) >= 6 else ""
                if "openblas" in name and ".so" in name and fields[-1] not in paths:
                    paths.append(fields[-1])
    except OSError:
        pass
    return paths


@functools.cache
def _openblas():
    """(get, set) thread-count functions of each OpenBLAS in the process, via ctypes,
    NumPy's first (a wheel's bundled copy lies under its ``numpy.libs``)."""
    import ctypes
    found = []
    for path in sorted(_openblas_maps(), key=lambda p: "numpy" not in p):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for prefix, suffix in itertools.product(("openblas", "scipy_openblas"), ("", "64_")):
            get = getattr(lib, "%s_get_num_threads%s" % (prefix, suffix), None)
            put = getattr(lib, "%s_set_num_threads%s" % (prefix, suffix), None)
            if get is not None and put is not None:
                get.restype, put.restype, put.argtypes = ctypes.c_int, None, [ctypes.c_int]
                found.append((get, put))
                break
    return tuple(found)


def blas_threads():
    """The threads NumPy's OpenBLAS runs a product on; None where none was found."""
    libs = _openblas()
    return libs[0][0]() if libs else None


def set_blas_threads(n):
    """Let the OpenBLAS libraries of the process (NumPy's, SciPy's) run products on
    ``n`` threads (best effort: they are found among the process's mapped files on
    Linux and called through ctypes); returns NumPy's previous count, or None where
    no OpenBLAS was found (nothing changes; ``OPENBLAS_NUM_THREADS`` in the
    environment does the same at start)."""
    n = int(n)
    if n < 1:
        raise ValueError("set_blas_threads: n must be at least 1, got %d" % n)
    prev = None
    for get, put in _openblas():
        prev = get() if prev is None else prev
        put(n)
    return prev


class _SerialBlas:
    """NumPy's OpenBLAS at one thread while any thread of the process is inside
    (counted, so that nested and concurrent users restore it once, when the last one
    leaves)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.users = 0
        self.saved = None

    def __enter__(self):
        with self.lock:
            if not self.users:
                libs = _openblas()
                self.saved = libs[0][0]() if libs else 1
                if self.saved != 1:
                    libs[0][1](1)
            self.users += 1

    def __exit__(self, *exc):
        with self.lock:
            self.users -= 1
            if not self.users and self.saved != 1:
                _openblas()[0][1](self.saved)


_serial_blas = _SerialBlas()

# Multiply-adds under which :func:`matmul` leaves the BLAS alone (OpenBLAS runs a
# product under 4 * 65536 on the calling thread whatever its setting); from
# ``engine.PARALLEL_MIN_MACS`` on it splits a product over the workers.
SERIAL_MACS = 1 << 18


def _batch(a, b):
    """The broadcast batch shape of two matmul operands; None where they do not fit
    (NumPy raises the error)."""
    sa, sb = a.shape[:-2], b.shape[:-2]
    if not sa and not sb:
        return ()
    sa, sb = (1,) * (len(sb) - len(sa)) + sa, (1,) * (len(sa) - len(sb)) + sb
    if any(x != y and x != 1 and y != 1 for x, y in zip(sa, sb)):
        return None
    return tuple(max(x, y) for x, y in zip(sa, sb))


def matmul(xp, a, b, out=None):
    """``xp.matmul(a, b, out=out)`` for operands of at least 2 dimensions. Where
    mxlite's workers are on (``engine.num_threads()`` > 1, NumPy arrays, not inside a
    worker) the BLAS runs at one thread and a large product (``engine.PARALLEL_MIN_MACS``)
    is split over the workers: by the leading batch axis where it has enough entries
    for the threads (each entry's product is then the serial one, bit for bit), else
    by the rows or the columns of the product (:func:`cuts_columns`), one part per
    thread. Each part is one BLAS call that releases the GIL; the parts are cut by
    the shapes and the thread count alone, so a given thread count gives the same
    bits every time.

    NOTE: each part of a 2-D product packs the operand it shares with the others
    again (a row part the whole right operand): (256, 2304) x (2304, 196) took 1.2x
    the serial CPU time in 2 parts and 1.8x in 8."""
    k = engine._threads
    if xp is not np or k <= 1 or engine._here.inside or a.ndim < 2 or b.ndim < 2:
        return xp.matmul(a, b, out=out)
    batch = _batch(a, b)
    m, n = a.shape[-2], b.shape[-1]
    macs = m * n * a.shape[-1]
    for d in batch or ():
        macs *= d
    if batch is None or a.shape[-1] != b.shape[-2] or macs < SERIAL_MACS:
        return np.matmul(a, b, out=out)     # (a mismatch raises NumPy's own error)
    with _serial_blas:
        if macs < engine.PARALLEL_MIN_MACS:
            return np.matmul(a, b, out=out)
        lead = batch[0] if batch else 1
        if out is None:
            out = np.empty(batch + (m, n), dtype=np.result_type(a, b))
        if lead >= engine.PARTS_PER_THREAD * k or (lead >= k and lead % k == 0):
            def part(lo, hi):
                np.matmul(_lead(a, len(batch), lo, hi), _lead(b, len(batch), lo, hi),
                          out=out[lo:hi])
            size, parts = lead, engine.PARTS_PER_THREAD * k
        elif cuts_columns(m, n):
            def part(lo, hi):
                np.matmul(a, b[..., lo:hi], out=out[..., lo:hi])
            size, parts = n, k
        else:
            def part(lo, hi):
                np.matmul(a[..., lo:hi, :], b, out=out[..., lo:hi, :])
            size, parts = m, k
        engine._run(part, size, min(size, parts), min(k, size))
        return out


# A product of ``m`` rows and ``n`` columns that :func:`matmul` cuts in parts is cut by its
# columns from ``COLUMNS_PER_ROW * m`` columns on, else by its rows (each part of the
# rows packs the whole right operand, each of the columns the whole left one). NOTE:
# measured at 2 threads on ResNet-50's 1x1 convolutions at batch 1 ((F, C) @ (C, L)),
# the two cuts alternated, best and first quartile of 50: rows against columns 0.78-0.95x
# at (512, 128) @ (128, 784) and (512, 256) @ (256, 784), 0.72-0.9x where L < F; about
# 1.0x at 3 to 12 columns per row; columns 1.2-1.35x faster at 49 ((64, 256) @ (256,
# 3136)). Cutting by the columns wherever n >= m cut the first two by their columns.
COLUMNS_PER_ROW = 4


def cuts_columns(m, n):
    """Whether :func:`matmul` cuts a product of ``m`` rows and ``n`` columns that it
    splits by its columns (else by its rows)."""
    return n >= COLUMNS_PER_ROW * m


def _lead(a, nbatch, lo, hi):
    """Entries lo:hi of the leading batch axis of an operand with ``nbatch`` batch axes
    (itself where that axis is broadcast)."""
    if a.ndim - 2 < nbatch or a.shape[0] == 1:
        return a
    return a[lo:hi]
