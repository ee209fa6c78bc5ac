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
