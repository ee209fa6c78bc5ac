"""The execution engine. mxlite runs every op synchronously: an op has finished
when it returns, so errors surface where they happen. ``waitall`` is a real
synchronisation point on GPUs (it syncs the CuPy stream).

Fork safety: ``os.fork()`` is always safe. mxlite has no engine threads (custom
operators run in the caller's thread, unlike MXNet, whose documented fork
deadlock came from them), and an at-fork handler drains pending GPU work
(:func:`waitall`) before the process forks. The only threads are the CPU workers
that split one large pass or product of a kernel (:func:`parallel`,
:func:`matmul`); they are idle between passes and joined before a fork.
"""
import itertools
import os
import queue
import sys
import threading
import time

import numpy as np

from . import _spin

__all__ = ["waitall", "set_bulk_size", "bulk", "num_threads", "set_num_threads"]


def waitall():
    """Wait until all pending work has finished (GPU streams are synchronised)."""
    cp = sys.modules.get("cupy")
    if cp is not None:
        try:
            cp.cuda.get_current_stream().synchronize()
        except Exception:   # no device: nothing is pending
            pass


def set_bulk_size(size):
    """Accepted for compatibility (mxlite does not bulk ops); returns the previous size."""
    global _bulk
    prev, _bulk = _bulk, int(size)
    return prev


_bulk = 15


class bulk:
    """Compatibility scope for ``mx.engine.bulk(size)``."""

    def __init__(self, size):
        self._size = size

    def __enter__(self):
        self._prev = set_bulk_size(self._size)

    def __exit__(self, *exc):
        set_bulk_size(self._prev)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=waitall)


# -- CPU memory pool -----------------------------------------------------------------
# MXNet keeps freed NDArray memory in a pool for reuse. mxlite's arrays come from
# NumPy and so from malloc, where glibc hands buffers above 128 KB back to the OS at
# every free; a training step then pays page faults on each new activation (the
# CustomOp Dense benchmark ran 2.5x slower than NumPy because of it, 1.1x without).
# Asking glibc to keep such blocks (up to 1 GB unused) gives pool-like reuse: a
# ResNet-18 training step at batch 8 frees ~600 MB between its backward and the next
# forward, and with 256 MB kept it spent 0.4 s of its 1.6 s CPU in page faults.
# MXLITE_CPU_MEM_POOL=0, or the user's own MALLOC_* settings, leave malloc alone.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def _tune_malloc():
    if os.environ.get("MXLITE_CPU_MEM_POOL", "1") == "0" or not sys.platform.startswith("linux"):
        return False
    if any(k.startswith("MALLOC_") for k in os.environ):
        return False
    import ctypes
    try:
        libc = ctypes.CDLL("libc.so.6")
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, 64 << 20)
                    and libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30))
    except (OSError, AttributeError):    # not glibc (musl, ...): nothing to tune
        return False


MEM_POOL_ACTIVE = _tune_malloc()


# Names MXNet's module also shows, served from where they live in mxlite.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "check_call": "mxlite.base",
})


# -- CPU worker threads -------------------------------------------------------------
# NumPy's BLAS runs its products on several threads, but every other pass (im2col
# copies, padding, BatchNorm, ReLU, pooling) runs on one. NumPy's ufuncs and copies
# release the GIL, so a large pass split along an axis that no reduction crosses
# (the batch, the channels) runs on a few threads with the same result, bit for bit.
# mxlite's kernels do that through :func:`parallel`, and run their products on the
# same threads (:func:`matmul`, the BLAS at one thread meanwhile).

# Bytes a pass must touch before it is split. NOTE: measured at 2 threads on a 2-core
# machine (wall clock, split/serial alternated, best of 8x5), at ResNet-18 batch-8
# and ResNet-50 batch-1 activation sizes: a transposing copy gained 1.6x at 6 MB,
# 1.15-1.4x at 3 MB, lost at 1.5 MB (0.8-0.9x); a ReLU or scale pass on preallocated
# output gained 1.05-1.5x at 6 MB, 0.8-1.0x at 3 MB, 0.3-0.8x below; BatchNorm
# inference (numba, one pass) lost at every size, 0.55-0.75x up to 24 MB; the passes
# are bound by the memory both cores share. Whole networks, the two thresholds
# alternated in one process: 8 MB against 4 MB ran ResNet-18 b8 training 1.03-1.06x,
# ResNet-50 b1 inference 1.0-1.03x, ResNet-18 b8 inference 0.99-1.04x; 2 MB and
# below ran slower (ResNet-50 b1 0.96-0.98x), 16 MB no better than 8 MB.
PARALLEL_MIN_BYTES = 1 << 23
# Bytes from which a pass that computes more per byte than a copy (Winograd's tile
# transforms) is split, given to :func:`parallel` as ``min_bytes``. NOTE: measured at
# 2 threads on a busy 2-core host, the thresholds alternated in one process: ResNet-18
# b8 hybridized inference (its 256- and 512-channel layers' transforms, 4-6 MB, split)
# 1.03-1.04x wall (min of 16 rounds; median 1.02-1.03x), the same process CPU time, the
# main thread's CPU outside parallel parts 30-32 -> 21 ms a step. At 1-2.4 MB (ResNet-50
# batch 1's transforms) the split lost, 0.8-1.0x per op, the worker woken too late to
# take a fair share.
PARALLEL_MIN_KERNEL_BYTES = 1 << 22
# Multiply-adds from which a product is split over the workers (:func:`matmul`,
# :func:`parallel_products`, :func:`parallel_units`). NOTE: measured at 2 threads as for
# PARALLEL_MIN_BYTES, at ResNet's convolution and dense shapes: a split gained
# 1.55-1.75x from 49M multiply-adds, 0.8-1.4x at 12-16M, 0.35-0.8x at 3-7M (a busy
# machine moves the break-even up); ResNet-50 b1's products under 2^25 are 2.5% of
# its step, so this stays.
PARALLEL_MIN_MACS = 1 << 23
# Parts per thread a pass is cut into (claimed by whichever thread is free).
PARTS_PER_THREAD = 4
# Parts per thread of :func:`parallel_products`' products. NOTE: each part is a hand-off
# of the GIL between the threads (a part's Python runs between its compiled kernels),
# and a thread that waits for the GIL sleeps: measured on ResNet-50 b1 hybridized
# inference at 2 threads (54 split products a step), from the put to the worker's
# first part 55-65 us, from the last part's end to the caller going on 50-60 us, both
# nearly as long with either thread kept awake polling without the GIL (so the cost
# is the GIL's hand-over, not the core's wake-up). One part per thread against 4,
# alternated in one process: that step 1.05x the least wall time, 1.03-1.07x the
# median, 1.06-1.08x less CPU time (with a CPU hog alongside 1.02x, 1.01x, 1.06x); the
# same bits. ResNet-18 b8 inference and training, MobileNet-v2 b8: 1.0-1.03x.
PRODUCT_PARTS_PER_THREAD = 1
# Parts of a pass whose parts reduce (see :func:`parallel`), whatever the threads.
FIXED_PARTS = 8
# Whether a worker polls for its next job a while (``_spin``: without the GIL, bounded)
# before it blocks on the queue, where numba is present (the ``fast`` extra) and the
# worker waited for a core less than ``SPIN_BUSY`` of the time over its last
# ``SPIN_WINDOW`` seconds (on a busy host, a polling thread takes a core other work
# wants) and the job before came within the polling time. NOTE: measured on ResNet-50 b1
# hybridized inference at 2 threads (54 split products a step, 110-190 us apart),
# polling against blocking alternated in one process: 1.03-1.07x the least wall time,
# 1.03x the median, ~10% more CPU time; without ``_spin.SETTLE_US`` 1.0-1.02x (the
# worker, awake, then slept on the GIL); with a CPU hog alongside 0.98-1.0x and
# 0.97-1.01x (the worker polled for ~5% of the jobs); polling whatever the host,
# 0.83-0.95x there.
SPIN = True
SPIN_BUSY = 0.05
SPIN_WINDOW = 0.05


def _threads_from_env():
    """MXLITE_NUM_THREADS, else OMP_NUM_THREADS (MXNet's threads per operator), else
    MXNET_CPU_WORKER_NTHREADS, else the BLAS's own setting, else the usable cores."""
    for var in ("MXLITE_NUM_THREADS", "OMP_NUM_THREADS", "MXNET_CPU_WORKER_NTHREADS",
                "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        v = os.environ.get(var, "").strip()
        if v:
            try:
                return max(int(v.split(",")[0]), 1)
            except ValueError:
                continue
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:      # not Linux
        return os.cpu_count() or 1


class _Workers(threading.local):
    inside = False          # True in a worker thread: work it gives runs serially


def _work(pool):
    _here.inside = True
    tasks, wait, busy = pool.tasks, pool.wait, _Busy()
    poll = True         # whether the job before came within the polling time
    while True:
        if wait is not None and SPIN and poll and not busy():
            seen = pool.puts[0]
            try:
                job = tasks.get(block=False)
            except queue.Empty:
                poll = wait(pool.puts, seen + 1)    # (without the GIL) a put came
                job = tasks.get()
        else:
            start = time.perf_counter()
            job = tasks.get()
            poll = time.perf_counter() - start < _spin.SPIN_US * 1e-6
        if job is None:
            return
        if isinstance(job, _Units) and wait is not None and SPIN and poll and not busy():
            poll = job.run(pool.puts, wait)     # polls for the next put inside its kernel
        else:
            job.run()


class _Busy:
    """Whether the calling thread waited for a core more than ``SPIN_BUSY`` of the time
    over its last ``SPIN_WINDOW`` seconds or more (Linux's schedstat, read once a
    window; never where the system does not say)."""

    def __init__(self):
        self.at, self.delay, self.busy = time.perf_counter(), _run_delay(), False

    def __call__(self):
        now = time.perf_counter()
        if now - self.at >= SPIN_WINDOW:
            delay = _run_delay()
            self.busy = (delay is not None and self.delay is not None
                         and delay - self.delay > SPIN_BUSY * (now - self.at))
            self.at, self.delay = now, delay
        return self.busy


def _run_delay():
    """Seconds the calling thread has waited for a core since it started (Linux's
    schedstat); None where the system does not say."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1]) * 1e-9
    except (OSError, ValueError, IndexError):
        return None


class _Job:
    """One split pass, or several in stages: the parts are claimed one at a time, in
    order, by whichever thread comes (the caller first), so a worker that the OS does
    not schedule soon leaves its parts to the others instead of holding the caller
    up. ``stages``: (fn, bounds) each; a part of a stage starts once every part of the
    stage before it has ended (a thread claiming one early waits for them)."""

    def __init__(self, stages):
        self.parts = [(s, fn, b[i], b[i + 1])
                      for s, (fn, b) in enumerate(stages) for i in range(len(b) - 1)]
        self.out = [None] * len(self.parts)
        self.claim = itertools.count().__next__     # atomic in CPython
        self.left = [len(b) - 1 for _, b in stages]
        self.lock = threading.Lock()
        self.ended = [threading.Event() for _ in stages]
        self.finished = self.ended[-1]
        self.error = None

    def run(self):
        while True:
            i = self.claim()
            if i >= len(self.parts):
                return
            s, fn, lo, hi = self.parts[i]
            if s:
                self.ended[s - 1].wait()
            try:
                if not s or self.error is None:     # (not after a stage that failed)
                    self.out[i] = fn(lo, hi)
            except BaseException as e:      # raised in the caller once every part ended
                self.error = self.error or e
            with self.lock:
                self.left[s] -= 1
                if not self.left[s]:
                    self.ended[s].set()


class _Pool:
    """Daemon threads running the :class:`_Job` s put on one queue.

    NOTE: a bare queue, not ``concurrent.futures``: a hand-off to a sleeping thread
    measured 40 us on a busy 2-core machine against 95 us through an executor."""

    def __init__(self, n):
        self.tasks = queue.SimpleQueue()
        self.puts = np.zeros(1, dtype=np.int64)     # bumped by each put
        self.wait = _spin.waiter()          # None without numba
        self.threads = [threading.Thread(target=_work, args=(self,), daemon=True,
                                         name="mxlite-cpu-%d" % i) for i in range(n)]
        for t in self.threads:
            t.start()

    def put(self, job):
        self.tasks.put(job)
        self.puts[0] += 1

    def stop(self):
        for _ in self.threads:
            self.put(None)
        for t in self.threads:
            t.join()


_threads = _threads_from_env()
_pool = None
_pool_lock = threading.Lock()
_here = _Workers()


def num_threads():
    """How many threads mxlite's kernels split a large non-BLAS pass over (1: none)."""
    return _threads


def set_num_threads(n):
    """Set the threads of :func:`num_threads`; returns the previous count. 1 runs every
    kernel serially, with no pool, and its products on the BLAS's own threads
    (OPENBLAS_NUM_THREADS, :func:`set_blas_threads`); above 1, mxlite's products run
    split over its threads with the BLAS at one thread (:func:`matmul`)."""
    global _threads
    n = int(n)
    if n < 1:
        raise ValueError("set_num_threads: n must be at least 1, got %d" % n)
    prev, _threads = _threads, n
    _stop_pool()
    return prev


def _stop_pool():
    global _pool
    with _pool_lock:
        pool, _pool = _pool, None
        if pool is not None:
            pool.stop()


def _get_pool():
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = _Pool(_threads - 1)
        return _pool


def parallel(fn, n, nbytes, xp=None, fixed=False, min_bytes=None):
    """``fn(lo, hi)`` over contiguous parts of ``range(n)`` covering it, in order, on up
    to :func:`num_threads` threads (the caller among them); the parts' results in
    order. ``fn`` must write disjoint places and read only what no part writes.

    One part, ``fn(0, n)`` in the caller, where the pass is small (``nbytes`` below
    ``min_bytes``, default ``PARALLEL_MIN_BYTES``) or ``xp`` (the kernel's array
    module) is not NumPy (a GPU array's kernels run on the device, where each part
    would only add launches), or, unless ``fixed``, where there is one thread or the
    caller is itself a worker. ``fixed``: the parts depend on ``n`` and ``nbytes``
    alone (``FIXED_PARTS`` of them), never on the threads, for passes whose parts
    reduce (a part's sum is rounded as its part was cut); without threads they run
    one after another in the caller."""
    k = min(_threads, n)
    device = xp is not None and xp is not np
    serial = k <= 1 or _here.inside
    small = nbytes < (PARALLEL_MIN_BYTES if min_bytes is None else min_bytes)
    if small or device or (serial and not fixed):
        return [fn(0, n)]
    m = min(n, FIXED_PARTS if fixed else PARTS_PER_THREAD * k)
    return _run(fn, n, m, None if serial else k)


def _run(fn, n, m, k):
    """``fn`` over ``m`` parts of ``range(n)`` on ``k`` threads (None: in the caller)."""
    return _run_stages([(fn, n, m)], k)


def _run_stages(stages, k):
    """The ``(fn, n, m)`` stages (``fn`` over ``m`` parts of ``range(n)``) one after the
    other on ``k`` threads (None: in the caller); the parts' results in order."""
    job = _Job([(fn, [n * i // m for i in range(m + 1)]) for fn, n, m in stages])
    if k is not None:
        pool = _get_pool()
        for _ in range(min(k, max(m for _, _, m in stages)) - 1):
            pool.put(job)
    job.run()
    job.finished.wait()
    if job.error is not None:
        raise job.error
    return job.out


def overlap(first, second):
    """``(first(), second())`` with ``second`` on a worker while the caller runs
    ``first`` (their passes then run whole in each thread, the BLAS at one thread),
    for two independent computations (a convolution's data and weight gradients);
    one after the other where there is one thread or the caller is itself a worker.
    ``second`` has ended, whatever happened, when this returns or raises."""
    if _threads <= 1 or _here.inside:
        return first(), second()

    # in a worker or the caller alike: the same passes, the same bits
    job = _Job([(_as_worker(lambda lo, hi: second()), [0, 1])])
    with _serial_blas:
        _get_pool().put(job)
        try:
            a = first()
        finally:
            job.run()               # ``second`` in the caller if no worker took it yet
            job.finished.wait()
    if job.error is not None:
        raise job.error
    return a, job.out[0]


def batch_parts(fn, n):
    """``fn(lo, hi)`` over :func:`num_threads` contiguous parts of ``range(n)`` at once,
    one per thread (the caller among them), each whole in its thread: marked a worker,
    so nothing in it is split again, with the BLAS at one thread; the parts' results in
    order. Every part has ended, whatever happened, when this returns or raises (an
    error in a part is raised here). One part, ``fn(0, n)`` in the caller, where there
    is one thread or the caller is itself a worker. For a hybridized graph's inference
    and a convolution's columns and product, run on parts of a batch."""
    k = min(_threads, n)
    if k <= 1 or _here.inside:
        return [fn(0, n)]
    with _serial_blas:
        return _run(_as_worker(fn), n, k, k)


def _as_worker(fn):
    """``fn(lo, hi)`` run marked a worker in whichever thread runs it (the caller too), so
    that nothing in it is split again."""
    def whole(lo, hi):
        inside, _here.inside = _here.inside, True
        try:
            return fn(lo, hi)
        finally:
            _here.inside = inside
    return whole


def parallel_products(fn, n, macs):
    """``fn(lo, hi)`` over parts of ``range(n)`` (as :func:`parallel`, but
    ``PRODUCT_PARTS_PER_THREAD`` per thread) that run products of ``macs`` multiply-adds
    in all: split over the workers, with the BLAS at one thread meanwhile, from
    ``PARALLEL_MIN_MACS`` on, as :func:`matmul` splits one."""
    k = min(_threads, n)
    if k <= 1 or _here.inside or macs < PARALLEL_MIN_MACS:
        return [fn(0, n)]
    with _serial_blas:
        return _run(fn, n, min(n, PRODUCT_PARTS_PER_THREAD * k), k)


def parallel_stages(stages, macs):
    """Passes that run products of ``macs`` multiply-adds in all, one after the other,
    each ``fn(lo, hi)`` over ``m`` parts of ``range(n)`` for its ``(fn, n, m)`` in
    ``stages`` (a part of one stage may read what any part of the one before wrote):
    one hand-off to the workers for them all, the BLAS at one thread meanwhile, from
    ``PARALLEL_MIN_MACS`` on (as :func:`parallel_products`); below, or where there is
    one thread or the caller is itself a worker, each stage as ``fn(0, n)`` in the
    caller. The parts are cut by ``m``, which the caller chooses, whatever the threads."""
    if _threads <= 1 or _here.inside:
        for fn, n, _ in stages:
            fn(0, n)
        return
    with _serial_blas:
        if macs >= PARALLEL_MIN_MACS:
            _run_stages(stages, _threads)
            return
        for fn, n, _ in stages:
            fn(0, n)


def parallel_units(kernel, cuts, args, macs, least=None):
    """``kernel(count, puts, ctl, cuts(split), *args)``, a compiled kernel (nogil) that
    runs units of products of ``macs`` multiply-adds in all (or of another measure of
    work, split from ``least`` of it instead of ``PARALLEL_MIN_MACS``), one per row of
    ``cuts(split)``: it claims them one at a time (``count[0]``, atomically) once the
    units that a row needs have ended (``count[1]`` at ``cuts[i, 0]``, polled up to
    ``ctl[0]`` times: else it returns 0), counts each ended in ``count[1]``, and once
    none is left polls ``count[1]`` up to ``ctl[1]`` times for every unit to end, then
    ``puts[0]`` up to ``ctl[3]`` times for at least ``ctl[2]`` (then pauses ``ctl[4]``
    times); it returns 1 where every unit had ended, plus 2 where ``puts[0]`` came to
    ``ctl[2]``. Split (``cuts(True)``) from ``PARALLEL_MIN_MACS`` on, where there are
    threads and the caller is not a worker: the workers call the kernel too, and a
    worker that comes late takes fewer units, or none; else ``cuts(False)`` in the
    caller alone.

    NOTE: the caller returns once the units have ended, seen inside its kernel, with no
    hand-off through the GIL; a polling worker polls inside the kernel for the next
    put, so that it takes the GIL after the caller has gone into its next kernel. Where
    the caller's polls run out (a worker descheduled within a unit) it sleeps, looking
    again between sleeps (a call that polls once), until the units have ended."""
    split = (_threads > 1 and not _here.inside
             and macs >= (PARALLEL_MIN_MACS if least is None else least))
    cuts = cuts(split)
    k = min(_threads, len(cuts)) if split else 1
    if k <= 1:
        kernel(np.zeros(2, dtype=np.int64), _NO_PUTS, np.zeros(5, dtype=np.int64), cuts, *args)
        return
    pool = _get_pool()
    rate = pool.wait.rate if pool.wait is not None else 0
    job = _Units(kernel, cuts, args, max(int(rate * UNITS_WAIT_US * 1e-6), 1))
    job.next_put = pool.puts[0] + k     # (the count the next job's put makes)
    ctl = np.array([job.polls, job.polls, 0, 0, 0], dtype=np.int64)
    for _ in range(k - 1):      # (last: the caller then goes into the kernel at once)
        pool.put(job)
    try:
        while not kernel(job.count, _NO_PUTS, ctl, cuts, *args) & 1 and job.error is None:
            ctl[:2] = 1
            time.sleep(UNITS_SLEEP)
    except BaseException:
        job.stop()
        raise
    if job.error is not None:
        job.stop()
        raise job.error


# Microseconds the caller of :func:`parallel_units` (or a worker, where a unit needs
# others to end) polls for the workers' units to end (without the GIL) before it
# sleeps, and the seconds of a sleep.
UNITS_WAIT_US = 500.0
UNITS_SLEEP = 50e-6
_NO_PUTS = np.zeros(1, dtype=np.int64)


class _Units:
    """A :func:`parallel_units` kernel's call, for the workers."""

    def __init__(self, kernel, cuts, args, polls):
        self.kernel, self.cuts, self.args, self.polls = kernel, cuts, args, polls
        self.count = np.zeros(2, dtype=np.int64)        # units claimed, units ended
        self.error = None
        self.next_put = 0           # the pool's put count once the next job is put
        self.inside = 0             # workers inside the kernel
        self.lock = threading.Lock()

    def stop(self):
        """After an error: no unit is claimed from now on; returns once no worker is
        inside the kernel (none writes the outputs after)."""
        self.count[0] = 1 << 62
        while self.inside:
            time.sleep(UNITS_SLEEP)

    def run(self, puts=None, wait=None):
        """The kernel's units that are left; where ``wait`` (``_spin.waiter()``), then a
        poll for the next put on ``puts`` as ``wait`` polls: whether it came."""
        ctl = np.array([self.polls, 0, 0, 0, 0], dtype=np.int64)
        if wait is not None:
            ctl[2:] = (self.next_put, wait.rate * _spin.SPIN_US * 1e-6,
                       wait.rate * _spin.SETTLE_US * 1e-6)
        if self.count[0] >= len(self.cuts) and wait is None:
            return False
        with self.lock:
            self.inside += 1
        try:
            return bool(self.kernel(self.count, _NO_PUTS if puts is None else puts, ctl,
                                    self.cuts, *self.args) & 2)
        except BaseException as e:      # raised in the caller, whose units then miss
            self.error = e
            return False
        finally:
            with self.lock:
                self.inside -= 1


def parallel_parts(fn, shape, nbytes, xp=None, min_bytes=None):
    """``fn(at)`` for index tuples ``at`` that split an array of ``shape`` along its
    first axis of at least :func:`num_threads` entries (the batch, else the channels),
    by :func:`parallel` (``min_bytes`` as it takes it); their results in order."""
    least = PARALLEL_MIN_BYTES if min_bytes is None else min_bytes
    if not shape or _threads <= 1 or nbytes < least:
        # one part (as parallel would run it), without building the split: this is
        # the path of every small array
        return [fn((Ellipsis,))]     # x[...] of a 0-d array is a view, x[()] a scalar
    axis = next((i for i, m in enumerate(shape) if m >= _threads), 0)
    lead = (slice(None),) * axis
    return parallel(lambda lo, hi: fn(lead + (slice(lo, hi),)), shape[axis], nbytes, xp,
                    min_bytes=least)


def parallel_copy(xp, dst, src):
    """``dst[...] = src`` (the same shape) by :func:`parallel_parts`."""
    parallel_parts(lambda at: xp.copyto(dst[at], src[at]), dst.shape, dst.nbytes, xp)
    return dst


def contiguous(xp, a):
    """``a`` as a C-contiguous array: itself, or a copy by :func:`parallel_copy`."""
    if a.flags.c_contiguous:
        return a
    return parallel_copy(xp, xp.empty(a.shape, dtype=a.dtype), a)


# The BLAS's threads and mxlite's products (a module of their own), served from here too.
from ._blas import (_serial_blas, blas_threads, cuts_columns, matmul,  # noqa: E402,F401
                    set_blas_threads)


if hasattr(os, "register_at_fork"):
    # The idle workers are joined before a fork (a child never inherits a pool it
    # cannot run, and Python 3.12 has no threads to warn about); the next pass
    # starts them again.
    os.register_at_fork(before=_stop_pool)
