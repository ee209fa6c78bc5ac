"""The MPI layer under the ``dist_*`` kvstores and ``mxlite.contrib.horovod``.

One :class:`World` per process (:func:`world`), created on first use: that is the
only place ``mpi4py`` is imported, so single-machine users never load MPI.

Collectives run on blocking MPI calls (Open MPI's tuned ``Allreduce`` is several
times faster than ``Iallreduce`` polled from Python), watched by a daemon thread
that makes a broken job fail instead of hang:

* an uncaught exception on any rank prints its traceback and calls ``Abort``, which
  ends every rank (``sys.excepthook``);
* a rank whose script ends (even with status 0) tells the others; a rank then waiting
  in a collective that the departed rank will never join aborts the job, naming the
  operation and the key;
* with ``MXLITE_DIST_TIMEOUT=<seconds>``, a collective that has not completed in that
  time aborts the job with a message naming the operation and the key.

Small arrays are packed into fused buffers of at most ``MXLITE_KVSTORE_FUSION_BYTES``
bytes (default 4 MiB) so that one ``Allreduce`` carries many keys.
"""
import atexit
import os
import sys
import threading
import time

import numpy as np

from ..base import MXNetError

__all__ = ["world", "ENV_TIMEOUT", "ENV_FUSION"]

ENV_TIMEOUT = "MXLITE_DIST_TIMEOUT"
ENV_FUSION = "MXLITE_KVSTORE_FUSION_BYTES"
_EXIT_TAG = 7177
#: How long a rank waits in a collective after another rank has ended before aborting:
#: the departed rank may have finished this very collective just before it left.
_DEPARTED_GRACE_S = 1.0
_TICK_S = 0.05

_WORLD = None


def world():
    """The process's :class:`World` (MPI initialised on the first call)."""
    global _WORLD
    if _WORLD is None:
        _WORLD = World()
    return _WORLD


def _import_mpi():
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise MXNetError("mxlite's distributed training runs on MPI through mpi4py, which is "
                         "not installed (%s); install it with pip install 'mxlite[dist]' and "
                         "launch with mpirun -n N python script.py" % err) from None
    return MPI


class World:
    """The MPI communicator of this job and its watched collectives."""

    def __init__(self):
        self.MPI = MPI = _import_mpi()
        self.comm = MPI.COMM_WORLD.Dup()
        self._notices = MPI.COMM_WORLD.Dup()
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        self.local = self.comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.timeout = _env_float(ENV_TIMEOUT, 0.0)
        self.fusion_bytes = int(_env_float(ENV_FUSION, 4 << 20))
        self._check_launch()
        self._current = None            # (seq, op, key, start) while in a collective
        self._seq = 0
        self._departed = None           # (rank, seq, seen at) of an ended rank
        self._exiting = False
        # Probing for departed ranks from the watchdog thread needs MPI_THREAD_MULTIPLE
        # (mpi4py's default); with less only the timeout is watched.
        self._probe = MPI.Query_thread() == MPI.THREAD_MULTIPLE
        self._lock = threading.Lock()
        self._fusion_bufs = {}
        if self.size > 1:
            self._install_hooks()

    def _check_launch(self):
        want = os.environ.get("DMLC_NUM_WORKER")
        if want and want.isdigit() and int(want) > 1 and self.size == 1:
            raise MXNetError("DMLC_NUM_WORKER=%s asks for %s workers but this process is a "
                             "single MPI rank: mxlite runs distributed jobs on MPI; launch "
                             "with mpirun -n %s python script.py or python -m mxlite.launch "
                             "-n %s python script.py" % (want, want, want, want))

    # -- loud failure ----------------------------------------------------------------
    def _install_hooks(self):
        previous = sys.excepthook

        def abort_on_exception(etype, value, tb):
            previous(etype, value, tb)
            self.abort("uncaught %s on rank %d of %d" % (etype.__name__, self.rank, self.size))

        sys.excepthook = abort_on_exception
        atexit.register(self._at_exit)
        threading.Thread(target=self._watch, name="mxlite-dist-watchdog", daemon=True).start()

    def abort(self, why):
        """Print ``why`` and end every rank of the job with status 1."""
        sys.stdout.flush()
        sys.stderr.write("mxlite dist: %s; aborting the whole job (MPI_Abort)\n" % why)
        sys.stderr.flush()
        self.MPI.COMM_WORLD.Abort(1)

    def _watch(self):
        """Abort when the current collective outlives the timeout or a departed rank."""
        while True:
            time.sleep(_TICK_S)
            with self._lock:
                current, exiting = self._current, self._exiting
            if current is None:
                continue
            seq, op, key, start = current
            now = time.monotonic()
            if not exiting and self._probe:
                self._poll_departures(seq, now)
                departed = self._departed
                if departed is not None and departed[1] == seq and \
                        now - departed[2] > _DEPARTED_GRACE_S:
                    self.abort("rank %d ended (its script returned or called exit) while rank "
                               "%d waits in %s of key %s, which it never joins"
                               % (departed[0], self.rank, op, _key_text(key)))
            if self.timeout and now - start > self.timeout:
                self.abort("rank %d waited %.1f s in %s of key %s (%s=%g): another rank "
                           "stopped calling collectives" % (self.rank, now - start, op,
                                                           _key_text(key), ENV_TIMEOUT,
                                                           self.timeout))

    def _poll_departures(self, seq, now):
        if self._departed is not None:
            if self._departed[1] != seq:
                self._departed = (self._departed[0], seq, now)
            return
        status = self.MPI.Status()
        if self._notices.Iprobe(source=self.MPI.ANY_SOURCE, tag=_EXIT_TAG, status=status):
            self._departed = (status.Get_source(), seq, now)

    def _at_exit(self):
        """Tell the other ranks this one has ended, then wait for all of them."""
        with self._lock:
            self._exiting = True
        note = np.zeros(1, np.int8)
        sends = [self._notices.Isend(note, dest=r, tag=_EXIT_TAG)
                 for r in range(self.size) if r != self.rank]
        self._run("the end-of-job barrier", None, self.comm.Barrier)
        for r in range(self.size):
            if r != self.rank:
                self._notices.Recv(np.zeros(1, np.int8), source=r, tag=_EXIT_TAG)
        self.MPI.Request.Waitall(sends)

    # -- collectives -----------------------------------------------------------------
    def _run(self, op, key, call, *args):
        with self._lock:
            self._seq += 1
            self._current = (self._seq, op, key, time.monotonic())
        try:
            return call(*args)
        finally:
            with self._lock:
                self._current = None

    def barrier(self):
        """Wait until every rank gets here."""
        self._run("barrier", None, self.comm.Barrier)

    def allreduce(self, arrays, keys, op="allreduce", reduce_op=None, out=None):
        """Reduce NumPy arrays over all ranks, fused into few calls: in place, or into
        ``out`` (one array of the same shape per array); ``reduce_op`` is an MPI op,
        by default ``MPI.SUM``."""
        reduce_op = self.MPI.SUM if reduce_op is None else reduce_op
        MPI = self.MPI

        def call(src, dst):
            self.comm.Allreduce(MPI.IN_PLACE if src is dst else src, dst, op=reduce_op)
        for bucket in self._buckets(arrays, keys, arrays if out is None else out):
            self._fused(bucket, op, call)

    def bcast(self, arrays, keys, root=0, op="broadcast"):
        """Overwrite each NumPy array in place with rank ``root``'s."""
        def call(_, buf):
            self.comm.Bcast(buf, root=root)
        for bucket in self._buckets(arrays, keys, arrays):
            self._fused(bucket, op, call)

    def allgather_bytes(self, data, key, op="allgather"):
        """Rank-ordered list of every rank's uint8 array ``data`` (all of one size)."""
        out = np.empty((self.size, data.size), np.uint8)
        self._run(op, key, self.comm.Allgather, np.ascontiguousarray(data), out)
        return list(out)

    def allgather_obj(self, obj, op="allgather"):
        """Every rank's picklable ``obj``, in rank order."""
        return self._run(op, None, self.comm.allgather, obj)

    def bcast_obj(self, obj, root=0, op="broadcast"):
        """Rank ``root``'s picklable ``obj`` on every rank."""
        return self._run(op, None, self.comm.bcast, obj, root)

    def _buckets(self, arrays, keys, outs):
        """Groups of ``(source, destination, key)`` sharing a wire dtype, each up to the
        fusion size; an array at least that large goes alone (without copies)."""
        open_, done = {}, []
        for a, o, k in zip(arrays, outs, keys):
            wire = _wire_dtype(a.dtype)
            if a.nbytes >= self.fusion_bytes:
                done.append([(a, o, k)])
                continue
            bucket = open_.setdefault(wire, [])
            if bucket and (sum(x.size for x, _, _ in bucket) + a.size) * wire.itemsize > \
                    self.fusion_bytes:
                done.append(bucket)
                bucket = open_[wire] = []
            bucket.append((a, o, k))
        return done + [b for b in open_.values() if b]

    def _fused(self, bucket, op, call):
        keys = [k for _, _, k in bucket]
        key = keys[0] if len(keys) == 1 else keys
        if len(bucket) == 1:
            a, o, _ = bucket[0]
            if a.flags.c_contiguous and o.flags.c_contiguous and a.dtype == o.dtype and \
                    _wire_dtype(a.dtype) == a.dtype:
                self._run(op, key, call, a, o)
                return
        wire = _wire_dtype(bucket[0][0].dtype)
        buf = self._fusion_buffer(wire, sum(a.size for a, _, _ in bucket))
        pos = 0
        for a, _, _ in bucket:
            buf[pos:pos + a.size] = a.reshape(-1)
            pos += a.size
        self._run(op, key, call, buf, buf)
        pos = 0
        for _, o, _ in bucket:
            o[...] = buf[pos:pos + o.size].reshape(o.shape)
            pos += o.size

    def _fusion_buffer(self, dtype, size):
        """A reused buffer of ``size`` elements (fresh pages for every call would cost
        as much as the copies)."""
        buf = self._fusion_bufs.get(dtype)
        if buf is None or buf.size < size:
            buf = self._fusion_bufs[dtype] = np.empty(size, dtype)
        return buf[:size]


def _wire_dtype(dtype):
    """The dtype an array travels in: MPI has no float16 or bool sum."""
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return np.dtype(np.float32)
    if dtype == np.bool_:
        return np.dtype(np.uint8)
    return dtype


def _key_text(key):
    if isinstance(key, list):
        shown = ", ".join(repr(k) for k in key[:8])
        return "[%s%s]" % (shown, ", ..." if len(key) > 8 else "")
    return repr(key)


def _env_float(name, default):
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        raise MXNetError("environment variable %s must be a number, got %r"
                         % (name, text)) from None
