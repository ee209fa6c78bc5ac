"""Gradients made on a CPU worker while a backward walk goes on.

A hybridized graph's backward walk (``gluon.cached_graph``) lets the rule of a step hand
back, for an input that is a graph leaf read by that step alone (a layer's weight), a
:class:`Later` in place of the array: the gradient is computed by a CPU worker
(``engine``) while the caller walks on through the steps before, and the walk takes
the array (:func:`value`) once it has ended. Nothing else reads such a gradient in
between, so the results are those of the walk without it, bit for bit: the same
functions on the same arrays, only in another thread.

NOTE: this takes a convolution's weight gradient off the walk's path, on which the
data gradients and BatchNorm's passes of one layer after another lie: each layer's
weight gradient ran beside its own data gradient (``engine.overlap``), and the
thread done first then waited for the other one.
"""
import threading

from .. import engine
from ..base import MXNetError
from ..engine import _Job, _as_worker, _get_pool, _here as _engine_here, _serial_blas


class _Here(threading.local):
    pending = None      # the Later s of the walk running in this thread (None: no walk)
    positions = ()      # the inputs of the running rule whose gradient may come Later
    serial = False      # whether the walk has set the BLAS at one thread


_here = _Here()


class Later:
    """A gradient of ``shape`` and ``dtype`` that a CPU worker is computing for the rule of
    op ``name`` (or that the caller computes, where no worker has taken it yet, once it
    is asked for)."""
    __slots__ = ("shape", "dtype", "name", "job")

    def __init__(self, fn, shape, dtype, name):
        self.shape, self.dtype, self.name = tuple(shape), dtype, name
        self.job = _Job([(_as_worker(lambda lo, hi: fn()), [0, 1])])
        _get_pool().put(self.job)

    def value(self):
        """The gradient, once it is made (raising what its computation raised, named after
        the op as ``node_backward`` names a rule's errors)."""
        job = self.job
        job.run()               # in the caller where no worker took it
        job.finished.wait()
        e = job.error
        if e is not None:
            if isinstance(e, MXNetError) and str(e).startswith(self.name):
                raise e
            raise MXNetError("%s (backward): %s" % (self.name, e)) from e
        return job.out[0]


def value(g):
    """``g``, or the array a :class:`Later` ``g`` stands for."""
    return g.value() if type(g) is Later else g


def walk():
    """The scope (a context manager) of a backward walk whose rules may hand back
    :class:`Later` gradients (where there are CPU workers, from a thread that is not
    one, outside any other walk): from the first one on, the BLAS at one thread; every
    one of them has ended when it is left, whatever happened."""
    return _Walk()


class _Walk:
    """:func:`walk` 's scope. NOTE: a class, not a generator, and the BLAS set only once a
    Later is made: a tiny backward (two ops) took 5 us more in a generator's scope that
    set the BLAS at every walk (37.7 -> 42.4 us)."""
    __slots__ = ("opened",)

    def __enter__(self):
        self.opened = (engine.num_threads() > 1 and not _engine_here.inside
                       and _here.pending is None)
        if self.opened:
            _here.pending = []

    def __exit__(self, *exc):
        if not self.opened:
            return
        pending = _here.pending
        try:
            for g in pending:
                g.job.run()
                g.job.finished.wait()
        finally:
            _here.pending = None
            _here.positions = ()
            if _here.serial:
                _here.serial = False
                _serial_blas.__exit__(None, None, None)


def allow(positions):
    """Let the next rule the walk runs hand back a :class:`Later` for its inputs at
    ``positions`` (a tuple; empty: for none)."""
    if _here.pending is not None:
        _here.positions = positions


def may_defer(position):
    """Whether the running rule may hand back a :class:`Later` for its input at
    ``position``."""
    return position in _here.positions


def submit(fn, shape, dtype, name):
    """A :class:`Later` for ``fn()``, a gradient of ``shape`` and ``dtype`` for the rule of
    op ``name``, which a CPU worker computes (call only where :func:`may_defer` said
    yes)."""
    if not _here.serial:
        _serial_blas.__enter__()        # (left by the walk's scope)
        _here.serial = True
    g = Later(fn, shape, dtype, name)
    _here.pending.append(g)
    return g
