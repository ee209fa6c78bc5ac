"""``DistAsyncKVStore``: ``dist_async`` / ``dist_device_async`` on MPI one-sided windows.

EXPERIMENTAL. MXNet's asynchronous parameter server, without a server process: the
weights, the optimizer states and the update counts of every key live in an MPI window
on rank 0. A push takes the window's exclusive lock, reads the key's weight and
states, runs this worker's optimizer on its own gradient (summed over its devices),
writes them back and unlocks: pushes from different workers are applied one at a time,
as a server would, and nobody waits for anybody else. A pull reads the current weights
under a shared lock.

As in MXNet, pushing needs an optimizer (``set_optimizer``; MXNet: "Updater needs
to be set for async mode"), and gluon's Trainer always updates on the store.

Limits (why it is experimental):

* the one-sided operations need MPI's passive-target progress: within one machine
  (shared memory) they proceed by themselves; across machines some MPI transports
  only progress when rank 0 enters MPI;
* 2-bit gradient compression and saving optimizer states are refused (use
  ``dist_sync``);
* the optimizer object itself is each worker's own (its learning rate, schedule and
  ``rescale_grad``); the update count of each key is shared through the window.
"""
import numpy as np

from ..base import MXNetError
from ..operator.util import host
from ..nd.ndarray import NDArray
from .dist import DistKVStore

__all__ = ["DistAsyncKVStore"]

_ALIGN = 8


class DistAsyncKVStore(DistKVStore):
    """An asynchronous distributed store (experimental); ``mx.kv.create('dist_async')``."""

    def __init__(self, kv_type="dist_async"):
        super().__init__(kv_type)
        self._where = {}        # key -> (window, its layout) once the key has a window
        self._windows = []

    def init(self, key, value):
        """Initialise keys with rank 0's values; their window is made once an optimizer
        is set (collective: every worker calls init and set_optimizer alike)."""
        super().init(key, value)
        if self._updater is not None:
            self._make_window([k for k in self._groups("init", key, value)])

    def set_optimizer(self, optimizer):
        """Set the optimizer; keys already initialised get their window now."""
        super().set_optimizer(optimizer)
        pending = [k for k in self._store if k not in self._where]
        if pending:
            self._make_window(pending)

    def set_gradient_compression(self, compression_params):
        raise MXNetError("set_gradient_compression: gradient compression is not supported by "
                         "the experimental %r store; use kvstore 'dist_sync'" % self._type)

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise MXNetError("save_optimizer_states: the optimizer states of %r live in rank 0's "
                         "window and are not saved; use kvstore 'dist_sync'" % self._type)

    def load_optimizer_states(self, fname):
        raise MXNetError("load_optimizer_states: not supported by %r; use kvstore "
                         "'dist_sync'" % self._type)

    def push(self, key, value, priority=0):  # noqa: ARG002
        """Update the shared weights with this worker's gradient, now (no waiting)."""
        if self._updater is None:
            raise MXNetError("DistAsyncKVStore.push: %r needs an optimizer to apply pushes "
                             "(call set_optimizer first; MXNet: Updater needs to be set for "
                             "async mode)" % self._type)
        groups = self._groups("push", key, value)
        self._check_shapes("push", groups, "value")
        merged = [(k, self._sum(vals, self._store[k])) for k, vals in groups.items()]
        by_window = {}
        for k, g in merged:
            by_window.setdefault(id(self._where[k][0]), []).append((k, g))
        for items in by_window.values():
            win = self._where[items[0][0]][0]
            self._world._run("push (async)", [k for k, _ in items], self._update_locked,
                             win, items)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):  # noqa: ARG002
        """Read the current shared weights into ``out``."""
        if out is None:
            raise ValueError("KVStore.pull: out is required (the NDArrays to write key %r into)"
                             % (key,))
        groups = self._groups("pull", key, out)
        self._check_shapes("pull", groups, "out")
        by_window = {}
        for k in groups:
            if k in self._where:
                by_window.setdefault(id(self._where[k][0]), []).append(k)
        for keys in by_window.values():
            win = self._where[keys[0]][0]
            self._world._run("pull (async)", keys, self._read_locked, win, keys)
        self._write(groups)

    # -- the window ------------------------------------------------------------------
    def _make_window(self, keys):
        """One window on rank 0 holding, per key, the update count, the weight and the
        optimizer states; filled from rank 0's store."""
        MPI = self._world.MPI
        self._updater.prepare(list(keys), [self._store[k] for k in keys])
        layout, offset = {}, 0
        for k in keys:
            arrays = [self._store[k]] + _state_arrays(self._updater.states[k])
            spans = []
            offset = _aligned(offset + 8)        # the float64 update count comes first
            start = offset - 8
            for a in arrays:
                spans.append((a, offset, a._data.nbytes))
                offset = _aligned(offset + a._data.nbytes)
            layout[k] = (start, offset - start, spans)
        size = offset if self.rank == 0 else 0
        win = self._world._run("init (async window)", list(keys), MPI.Win.Allocate, size, 1,
                               MPI.INFO_NULL, self._world.comm)
        if self.rank == 0:
            mem = np.frombuffer(win.tomemory(), np.uint8)
            for k in keys:
                start, length, _ = layout[k]
                mem[start:start + length] = self._pack(k, layout[k])
        self._world.barrier()
        self._windows.append(win)
        for k in keys:
            self._where[k] = (win, layout[k])

    def _counts(self, k):
        opt = self._updater.optimizer
        return opt._all_index_update_counts.setdefault(self._store[k]._ctx.device_id, {})

    def _pack(self, k, entry):
        start, length, spans = entry
        buf = np.zeros(length, np.uint8)
        count = self._counts(k).get(k, self._updater.optimizer.begin_num_update)
        buf[:8] = np.frombuffer(np.float64(count).tobytes(), np.uint8)
        for a, off, n in spans:
            buf[off - start:off - start + n] = np.frombuffer(
                np.ascontiguousarray(host(a._data)).tobytes(), np.uint8)
        return buf

    def _unpack(self, k, entry, buf, weights_only=False):
        start, _, spans = entry
        if not weights_only:
            count = int(np.frombuffer(buf[:8].tobytes(), np.float64)[0])
            self._counts(k)[k] = count
            opt = self._updater.optimizer
            opt.num_update = max(opt.num_update, count)
        for a, off, n in spans[:1] if weights_only else spans:
            raw = np.frombuffer(buf[off - start:off - start + n].tobytes(), a._data.dtype)
            _set(a._data, raw.reshape(a.shape))
            a._bump()

    def _update_locked(self, win, items):
        MPI = self._world.MPI
        win.Lock(0, MPI.LOCK_EXCLUSIVE)
        try:
            bufs = {}
            for k, _ in items:
                start, length, _ = self._where[k][1]
                bufs[k] = np.empty(length, np.uint8)
                win.Get([bufs[k], MPI.BYTE], 0, [start, length, MPI.BYTE])
            win.Flush(0)
            for k, _ in items:
                self._unpack(k, self._where[k][1], bufs[k])
            from ..nd.ndarray import _wrap
            self._apply([(k, _wrap(g, self._store[k]._ctx)) for k, g in items])
            for k, _ in items:
                start, length, _ = self._where[k][1]
                bufs[k] = self._pack(k, self._where[k][1])
                win.Put([bufs[k], MPI.BYTE], 0, [start, length, MPI.BYTE])
        finally:
            win.Unlock(0)

    def _read_locked(self, win, keys):
        MPI = self._world.MPI
        win.Lock(0, MPI.LOCK_SHARED)
        try:
            bufs = {}
            for k in keys:
                start, _, spans = self._where[k][1]
                _, off, n = spans[0]
                bufs[k] = np.empty(off - start + n, np.uint8)
                win.Get([bufs[k], MPI.BYTE], 0, [start, bufs[k].size, MPI.BYTE])
        finally:
            win.Unlock(0)
        for k in keys:
            self._unpack(k, self._where[k][1], bufs[k], weights_only=True)


def _state_arrays(state):
    """The NDArrays of an optimizer state (None, an NDArray or nested tuples/lists)."""
    if isinstance(state, NDArray):
        return [state]
    if isinstance(state, (tuple, list)):
        return [a for s in state for a in _state_arrays(s)]
    return []


def _aligned(n):
    return -(-n // _ALIGN) * _ALIGN


def _set(raw, value):
    if isinstance(raw, np.ndarray):
        raw[...] = value
    else:
        raw.set(value)
