"""Optional numba helper (the ``fast`` extra) for the engine's workers: a short,
bounded wait for the next job that keeps the worker's core awake, without the GIL.

A worker that blocks on its queue between two jobs sleeps, and on a virtual machine
waking a sleeping core (a futex, then an interrupt through the hypervisor) costs tens
of microseconds; a hybridized graph hands ~50 jobs a step to its workers, a hundred or
two microseconds apart. So a worker first polls a counter that the caller bumps with
each job it puts (:func:`waiter`), for at most ``SPIN_US`` microseconds, then blocks
on the queue as before.
"""
import functools
import os
import time

import numpy as np

# Microseconds a worker polls for the next job before it blocks on the queue. NOTE:
# ResNet-50 b1's jobs come 110-190 us apart (median 130-140 us, 90% within 300 us).
SPIN_US = 400.0
# Microseconds it polls on after the job came, before it takes the GIL to run it: the
# caller still holds the GIL from its put until its own part's compiled kernel, and
# a thread that finds the GIL held sleeps (and is woken as slowly as from the queue).
# NOTE: ResNet-50 b1 at 2 threads, polling against blocking: 1.0-1.02x the step's
# wall time without this, 1.03-1.05x with 10-25 us.
SETTLE_US = 15.0


@functools.cache
def waiter():
    """``wait(count, least)``: ``_spin_poll.poll`` (compiled without the GIL), polling
    about ``SPIN_US`` microseconds at most and settling ``SETTLE_US``, True where
    ``count[0]`` reached ``least`` in that time; None where numba
    is absent or ``MXLITE_NUMBA=0``. ``wait.poll`` is that ``poll``, ``wait.rate`` its
    polls a second."""
    if os.environ.get("MXLITE_NUMBA", "1") == "0":
        return None
    try:
        from . import _spin_poll
    except ImportError:
        return None
    poll = _spin_poll.poll
    count = np.zeros(1, dtype=np.int64)
    n = 1 << 14
    poll(count, 1, n, 0)            # (count[0] stays 0: n polls)
    rate = n / max(min(_timed(poll, count, n) for _ in range(3)), 1e-9)

    def wait(count, least):
        n = max(int(rate * SPIN_US * 1e-6), 1)
        return poll(count, least, n, int(rate * SETTLE_US * 1e-6)) < n
    wait.rate, wait.poll = rate, poll
    return wait


def _timed(poll, count, n):
    t = time.perf_counter()
    poll(count, 1, n, 0)
    return time.perf_counter() - t
