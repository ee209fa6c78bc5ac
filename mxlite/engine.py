"""The execution engine. mxlite runs every op synchronously: an op has finished
when it returns, so errors surface where they happen. ``waitall`` is a real
synchronisation point on GPUs (it syncs the CuPy stream).

Fork safety: ``os.fork()`` is always safe. mxlite has no engine threads (custom
operators run in the caller's thread, unlike MXNet, whose documented fork
deadlock came from them), and an at-fork handler drains pending GPU work
(:func:`waitall`) before the process forks.
"""
import os
import sys

__all__ = ["waitall", "set_bulk_size", "bulk"]


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
