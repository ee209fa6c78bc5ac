"""Units claimed inside a kernel (mx.engine.parallel_units): every unit runs once, the
caller returns only once every unit has ended (polling, then sleeping where a worker
is late within a unit), a worker's error is raised in the caller, and a worker that
comes after every unit was claimed writes nothing.

The kernel here is Python, following the kernels' protocol (``_fast_direct``'s are
compiled and claim by an atomic add; here a lock does), so that a test can hold a
worker within its unit."""
import threading

import numpy as np
import pytest

from mxlite import _spin, engine

from conftest import needs_numba


class _Kernel:
    """``kernel(count, puts, ctl, cuts, out)``: unit i writes ``out[i] = cuts[i, 0]``;
    ``hold`` (an Event) holds a worker's first unit until it is set."""

    def __init__(self, hold=None, fail_in_worker=False):
        self.lock = threading.Lock()
        self.hold, self.fail = hold, fail_in_worker
        self.ran = {}                       # unit -> thread name
        self.worker_claimed = threading.Event()

    def _claim(self, count, i):
        with self.lock:
            v = count[i]
            count[i] += 1
            return v

    def __call__(self, count, puts, ctl, cuts, out):
        worker = threading.current_thread() is not threading.main_thread()
        i = self._claim(count, 0)
        while i < len(cuts):
            self.ran[i] = threading.current_thread().name
            if worker:
                self.worker_claimed.set()
                if self.fail:
                    raise ValueError("unit %d failed" % i)
                if self.hold is not None:
                    self.hold.wait(10)
            elif self.hold is not None:
                self.worker_claimed.wait(10)    # (the worker has a unit before the caller's)
            out[i] = cuts[i, 0]
            self._claim(count, 1)
            i = self._claim(count, 0)
        return int(count[1] >= len(cuts))


@pytest.fixture
def two_threads(monkeypatch):
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 0)
    prev = engine.set_num_threads(2)
    yield
    engine.set_num_threads(prev)


def _cuts(split, n=6):
    return np.arange(n if split else 1, dtype=np.int64).reshape(-1, 1) + 10


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_units_each_run_once_and_cover_the_cuts(threads, monkeypatch):
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 0)
    prev = engine.set_num_threads(threads)
    try:
        kernel, out = _Kernel(), np.zeros(6, dtype=np.int64)
        engine.parallel_units(kernel, _cuts, (out,), 1)
    finally:
        engine.set_num_threads(prev)
    want = np.arange(6) + 10 if threads > 1 else [10, 0, 0, 0, 0, 0]
    assert list(out) == list(want)
    assert sorted(kernel.ran) == list(range(len(kernel.ran)))


def test_small_products_run_whole_in_the_caller(two_threads, monkeypatch):
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 100)
    kernel, out = _Kernel(), np.zeros(6, dtype=np.int64)
    engine.parallel_units(kernel, _cuts, (out,), 99)
    assert list(out) == [10, 0, 0, 0, 0, 0]
    assert set(kernel.ran.values()) == {threading.main_thread().name}


def test_the_caller_sleeps_until_a_late_workers_unit_ends(two_threads, monkeypatch):
    """The caller's polls run out while a worker holds a unit: it returns only once that
    unit has ended, with every output written."""
    hold = threading.Event()
    slept = []

    class Time:                 # the engine's clock, its sleep releasing the worker
        perf_counter = staticmethod(engine.time.perf_counter)

        @staticmethod
        def sleep(s):
            slept.append(s)
            hold.set()
            threading.Event().wait(s)
    monkeypatch.setattr(engine, "time", Time)
    kernel, out = _Kernel(hold=hold), np.zeros(6, dtype=np.int64)
    engine.parallel_units(kernel, _cuts, (out,), 1)
    assert slept and list(out) == list(np.arange(6) + 10)
    assert any(name != threading.main_thread().name for name in kernel.ran.values())


def test_a_workers_error_is_raised_in_the_caller(two_threads):
    kernel, out = _Kernel(hold=threading.Event(), fail_in_worker=True), np.zeros(6, np.int64)
    with pytest.raises(ValueError, match="failed"):
        engine.parallel_units(kernel, _cuts, (out,), 1)
    # the pool goes on
    kernel, out = _Kernel(), np.zeros(6, dtype=np.int64)
    engine.parallel_units(kernel, _cuts, (out,), 1)
    assert list(out) == list(np.arange(6) + 10)


def test_a_worker_after_every_unit_was_claimed_writes_nothing():
    kernel, out = _Kernel(), np.zeros(6, dtype=np.int64)
    job = engine._Units(kernel, _cuts(True), (out,), 1)
    job.count[:] = 6, 6
    assert job.run() is False
    assert not out.any() and not kernel.ran


@needs_numba
def test_a_polling_worker_is_told_the_put_after_its_jobs(monkeypatch):
    """A worker that polls between jobs gets, inside the kernel, the pool's put count to
    wait for: the one the next job's put makes (it polls for it without the GIL)."""
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 0)
    monkeypatch.setattr(engine, "SPIN", True)
    monkeypatch.setattr(engine, "_Busy", lambda: (lambda: False))     # the host never busy
    monkeypatch.setattr(_spin, "SPIN_US", 1e6)     # (it polls on however late the next put)
    prev = engine.set_num_threads(2)                # a pool made with the patches
    seen = []

    class Kernel(_Kernel):
        def __call__(self, count, puts, ctl, cuts, out):
            if threading.current_thread() is threading.main_thread():
                return super().__call__(count, puts, ctl, cuts, out)
            seen.append((puts is engine._get_pool().puts, ctl[2] - puts[0], ctl[3] > 0))
            return super().__call__(count, puts, ctl, cuts, out) | 2     # (the put came)
    try:
        for _ in range(5):
            out = np.zeros(6, dtype=np.int64)
            go = threading.Event()
            go.set()
            engine.parallel_units(Kernel(hold=go), _cuts, (out,), 1)
            assert list(out) == list(np.arange(6) + 10)
    finally:
        engine.set_num_threads(prev)
    # (the caller's units wait for the worker's first: it came to every job)
    assert len(seen) == 5 and all(s == (True, 1, True) for s in seen), seen
