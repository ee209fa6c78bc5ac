"""``DistKVStore``: MXNet's ``dist_sync`` / ``dist_device_sync`` / ``dist`` stores on MPI.

Every worker (MPI rank) holds the store's copy of every key, so there is no server:

* ``init`` (and ``broadcast``) takes rank 0's value everywhere;
* ``push`` sums the values given for a key over this worker's devices, then over
  all workers (one ``Allreduce`` per fused buffer); with an optimizer set, every
  worker runs the same update once on the same sum, so the weights stay
  bit-identical; without one the sum is stored;
* ``pull`` reads the local copy: it is what every other worker holds too.

Every rank must make the same calls with the same keys in the same order (as with
MXNet's dist stores, where a missing push stalls the servers); a rank that does not
ends the job with an error (see ``mxlite.kvstore._mpi``).

Differences from MXNet, on purpose:

* ``save_optimizer_states``/``load_optimizer_states`` work (MXNet refuses them on
  dist stores): every worker holds the same states and writes the same file;
* each worker's own optimizer runs the update (MXNet pickles rank 0's to the
  servers): create it with the same arguments on every rank; its ``rescale_grad``
  may change between steps (a Trainer stepping with another batch size; MXNet's
  servers keep the first and its Trainer raises);
* ``set_gradient_compression({'type': '2bit', ...})`` compresses what each worker
  sends, with MXNet's per-key residuals, after the sum over its own devices.
"""
import os

import numpy as np

from ..base import MXNetError
from ..operator.util import host
from . import _mpi
from .kvstore import KVStore

__all__ = ["DistKVStore", "is_dist", "is_async"]


def is_dist(name):
    """Whether a kvstore type names a distributed store (MXNet: it contains 'dist')."""
    return "dist" in name


def is_async(name):
    """Whether a distributed kvstore type is asynchronous (MXNet: it contains '_async')."""
    return "_async" in name


class DistKVStore(KVStore):
    """A synchronous distributed store; create it with ``mx.kv.create('dist_sync')``.

    Launch the script on several processes with ``mpirun -n 2 python train.py`` (or
    ``python -m mxlite.launch -n 2 python train.py``).

    Examples
    --------
    >>> kv = mx.kv.create('dist_sync')          # doctest: +SKIP
    >>> kv.init('w', mx.nd.ones((2,)) * kv.rank)  # rank 0's value wins  # doctest: +SKIP
    >>> kv.push('w', mx.nd.ones((2,)))           # summed over the workers  # doctest: +SKIP
    >>> out = mx.nd.zeros((2,)); kv.pull('w', out=out)  # doctest: +SKIP
    >>> out.asnumpy()                            # with 2 workers  # doctest: +SKIP
    array([2., 2.], dtype=float32)
    """

    def __init__(self, kv_type="dist_sync"):
        super().__init__(kv_type)
        self._world = _mpi.world()
        self._residuals = {}
        self._merge = {}            # key -> buffer of the workers' sum (with an optimizer)

    def __repr__(self):
        return "<DistKVStore %s, rank %d of %d, %d keys>" % (
            self._type, self.rank, self.num_workers, len(self._store))

    @property
    def rank(self):
        """The rank of this worker, ``0 .. num_workers - 1``."""
        return self._world.rank

    @property
    def num_workers(self):
        """The number of workers (MPI ranks)."""
        return self._world.size

    def _barrier(self):
        """Wait until every worker reaches this point."""
        self._world.barrier()

    def init(self, key, value):
        """Initialise keys with rank 0's values (on every worker).

        Every worker must initialise the same keys with the same shapes and dtypes;
        a difference raises the same error on every worker.
        """
        groups = self._groups("init", key, value)
        mine = [(k, tuple(v[0].shape), np.dtype(v[0].dtype).name) for k, v in groups.items()]
        everyone = self._world.allgather_obj(mine, op="init")
        for rank, theirs in enumerate(everyone):
            if theirs != everyone[0]:
                raise MXNetError("DistKVStore.init: rank %d initialises %s but rank 0 "
                                 "initialises %s; every worker must init the same keys with "
                                 "the same shapes and dtypes" % (rank, theirs, everyone[0]))
        super().init(key, value)
        keys = list(groups)
        self._collective(self._world.bcast, keys, [self._store[k] for k in keys], "init")

    def push(self, key, value, priority=0):  # noqa: ARG002 (synchronous: no priorities)
        """Sum ``value`` over this worker's arrays and over all workers, then store the sum
        or (after :meth:`set_optimizer`) update the weights with it on every worker."""
        groups = self._groups("push", key, value)
        self._check_shapes("push", groups, "value")
        if self._compression_params is not None:
            merged = [(k, self._sum(vals, self._store[k])) for k, vals in groups.items()]
            self._reduce_2bit(merged)
            self._apply_raw(merged)
            return
        keys, srcs, dsts = list(groups), [], []
        for k, vals in groups.items():
            stored = self._store[k]._data
            if not isinstance(stored, np.ndarray):          # on a GPU: through the host
                srcs.append(host(self._sum(vals, self._store[k])))
                dsts.append(srcs[-1])
                continue
            one = vals[0]._data
            single = len(vals) == 1 and isinstance(one, np.ndarray) and one.dtype == stored.dtype
            srcs.append(one if single else self._sum(vals, self._store[k]))
            # the sum goes straight into the store, or into a merge buffer for the optimizer
            dsts.append(stored if self._updater is None else self._merge_buffer(k, stored))
        self._world.allreduce(srcs, keys, op="push", out=dsts)
        if self._updater is None:
            for k, d in zip(keys, dsts):
                if d is not self._store[k]._data:
                    _from_host([self._store[k]._data], [d])
                self._store[k]._bump()
            return
        self._apply_raw(list(zip(keys, dsts)))

    def _apply_raw(self, merged):
        """:meth:`_apply` of raw sums (NumPy, or on the store's device)."""
        from ..nd.ndarray import _wrap
        out = []
        for k, g in merged:
            stored = self._store[k]
            if not isinstance(stored._data, np.ndarray) and isinstance(g, np.ndarray):
                g = stored._ctx.array_module().asarray(g)
            out.append((k, _wrap(g, stored._ctx)))
        self._apply(out)

    def _merge_buffer(self, key, stored):
        buf = self._merge.get(key)
        if buf is None or buf.shape != stored.shape or buf.dtype != stored.dtype:
            buf = self._merge[key] = np.empty(stored.shape, stored.dtype)
        return buf

    def pushpull(self, key, value, out=None, priority=0):
        """:meth:`push` then :meth:`pull`; the result goes to ``out``, or back into ``value``.

        Without ``out``, where each key has one value of the stored dtype, the sum is
        made in the value's own memory (it receives the result anyway): one allreduce
        and one copy into the store, nothing else.
        """
        if out is not None or self._compression_params is not None:
            return super().pushpull(key, value, out, priority)
        groups = self._groups("pushpull", key, value)
        self._check_shapes("pushpull", groups, "value")
        if not all(len(v) == 1 and isinstance(v[0]._data, np.ndarray)
                   and v[0]._data.dtype == self._store[k]._data.dtype
                   and v[0]._data.flags.c_contiguous for k, v in groups.items()):
            return super().pushpull(key, value, out, priority)
        arrays = [v[0] for v in groups.values()]
        self._world.allreduce([a._data for a in arrays], list(groups), op="pushpull")
        for a in arrays:
            a._bump()
        self._apply(list(zip(groups, arrays)))
        if self._updater is not None:
            self._write(groups)
        return None

    def set_gradient_compression(self, compression_params):
        """Compress what each worker sends with MXNet's 2-bit scheme.

        Each worker keeps a residual per key: the residual plus the new gradient is
        sent as ``+threshold``, ``-threshold`` or ``0`` per element (2 bits on the
        wire), and what was not sent stays in the residual for the next push.
        """
        super().set_gradient_compression(compression_params)
        self._residuals = {}

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the optimizer states to ``fname`` on every worker (they are identical).

        The file is replaced atomically, so workers sharing a file system do not
        interleave their writes.
        """
        blob = self._state_updater("save_optimizer_states").get_states(dump_optimizer)
        tmp = "%s.tmp-rank%d" % (fname, self.rank)
        with open(tmp, "wb") as fout:
            fout.write(blob)
        os.replace(tmp, fname)

    def _assign(self, key, value):
        raise RuntimeError("Cannot reset distributed KVStore: key %r is already initialised "
                           "on every worker (set the value before creating the Trainer)"
                           % (key,))

    # -- internals -------------------------------------------------------------------
    @staticmethod
    def _collective(call, keys, arrays, op):
        raws = [a._data for a in arrays]
        hosts = [host(r) for r in raws]
        call(hosts, keys, op=op)
        _from_host(raws, hosts)
        for a in arrays:
            a._bump()

    def _reduce_2bit(self, merged):
        """MXNet's 2-bit quantisation with residuals; the workers' codes are gathered
        and summed in rank order, so every worker gets the same bits."""
        t = float(self._compression_params.get("threshold", 0.5))
        raws = [g for _, g in merged]
        grads = [host(g) for g in raws]
        codes = []
        for (k, _), g in zip(merged, grads):
            res = self._residuals.get(k)
            if res is None:
                res = self._residuals[k] = np.zeros(g.shape, g.dtype)
            res += g
            pos, neg = res >= t, res <= -t
            res[pos] -= g.dtype.type(t)
            res[neg] += g.dtype.type(t)
            codes.append((pos.astype(np.uint8) | (neg.astype(np.uint8) << 1)).reshape(-1))
        flat = np.concatenate(codes)
        gathered = self._world.allgather_bytes(_pack_2bit(flat), [k for k, _ in merged],
                                               op="push (2bit)")
        decoded = [_unpack_2bit(p, flat.size) for p in gathered]
        pos = 0
        for g in grads:
            total = np.zeros(g.shape, g.dtype)
            levels = np.array([0, t, -t, 0], g.dtype)
            for c in decoded:
                total += levels[c[pos:pos + g.size]].reshape(g.shape)
            g[...] = total
            pos += g.size
        _from_host(raws, grads)


def _from_host(raws, hosts):
    for r, h in zip(raws, hosts):
        if r is not h:
            r.set(h)


def _pack_2bit(codes):
    """Four 2-bit codes per byte."""
    padded = np.zeros(-(-codes.size // 4) * 4, np.uint8)
    padded[:codes.size] = codes
    q = padded.reshape(-1, 4)
    return q[:, 0] | (q[:, 1] << 2) | (q[:, 2] << 4) | (q[:, 3] << 6)


def _unpack_2bit(packed, n):
    out = np.empty((packed.size, 4), np.uint8)
    for i in range(4):
        out[:, i] = (packed >> (2 * i)) & 3
    return out.reshape(-1)[:n]
