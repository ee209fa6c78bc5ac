"""DataLoader: mini-batches from a Dataset, in this process, in threads or in worker processes.

Between processes only plain NumPy arrays travel: a worker turns the NDArrays of its
batch into NumPy arrays, and the parent turns them back into NDArrays of the same
dtype. Worker processes live as long as their DataLoader (one pool for all epochs)
and stop when it is garbage collected; an iteration left early (``break``) leaves
them ready for the next one.
"""
import multiprocessing
import multiprocessing.connection
import multiprocessing.pool
import pickle
import random
import signal
import time
import traceback
import weakref

import numpy as np

from ... import nd
from ...nd.ndarray import _wrap
from ...util import _state as _np_state
from ...base import MXNetError
from ...context import _state as _context_state, cpu, cpu_pinned
from . import sampler as _sampler

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn"]

_PICKLE_PROTOCOL = pickle.HIGHEST_PROTOCOL


def default_batchify_fn(data):
    """Collate a list of samples into a batch, as MXNet's ``default_batchify_fn``.

    NDArray samples are stacked (``nd.stack``); tuple samples are collated element by
    element into a list of batches; anything else (NumPy arrays, Python or NumPy
    scalars) goes through ``np.asarray`` and becomes an NDArray of that dtype
    (integer labels stay integer, as in MXNet).

    Examples
    --------
    >>> default_batchify_fn([(np.zeros(2), 1), (np.ones(2), 0)])[1]
    <BLANKLINE>
    [1 0]
    <NDArray 2 @cpu(0)>
    """
    first = data[0]
    if isinstance(first, nd.NDArray):
        if first._np:
            from ...numpy import stack
            return stack(data)
        return nd.stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(list(field)) for field in zip(*data)]
    try:
        arr = np.asarray(data)
    except ValueError as err:
        raise ValueError("default_batchify_fn: the samples of a batch cannot be stacked into "
                         "one array (%s); give the DataLoader a batchify_fn that pads or "
                         "lists them" % err) from None
    if arr.dtype == object:
        raise ValueError("default_batchify_fn: samples of type %s cannot be batched into an "
                         "NDArray; give the DataLoader a batchify_fn" % type(first).__name__)
    out = nd.array(arr, dtype=arr.dtype)
    if _np_state.array:         # under npx.set_np() batches are np arrays
        out = out.as_np_ndarray()
    return out


# MXNet uses a shared-memory variant in workers; here workers ship NumPy arrays instead.
default_mp_batchify_fn = default_batchify_fn


# ---------------------------------------------------------------- transport (NumPy only)

class _Shipped:
    """An NDArray in transit between processes, as the NumPy array it holds."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __reduce__(self):
        return (_Shipped, (self.array,))


def _to_wire(obj):
    """Replace every NDArray (in lists, tuples and dicts) by a ``_Shipped`` NumPy array."""
    if isinstance(obj, nd.NDArray):
        # Host memory is pickled straight from the NDArray's buffer, without a copy.
        d = obj._data
        return _Shipped(d if isinstance(d, np.ndarray) else obj.asnumpy())
    if type(obj) is list:
        return [_to_wire(x) for x in obj]
    if type(obj) is tuple:
        return tuple(_to_wire(x) for x in obj)
    if type(obj) is dict:
        return {k: _to_wire(v) for k, v in obj.items()}
    return obj


def _from_wire(obj):
    """Inverse of ``_to_wire``: NDArrays of the shipped dtype, on cpu."""
    if isinstance(obj, _Shipped):
        # Unpickling made a new, writable array that nothing else refers to: no copy.
        y = _wrap(obj.array, cpu())
        return y.as_np_ndarray() if _np_state.array else y
    if type(obj) is list:
        return [_from_wire(x) for x in obj]
    if type(obj) is tuple:
        return tuple(_from_wire(x) for x in obj)
    if type(obj) is dict:
        return {k: _from_wire(v) for k, v in obj.items()}
    return obj


def _as_in_context(data, ctx):
    if isinstance(data, nd.NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


# ---------------------------------------------------------------- worker side

def _describe_error(err):
    """What the parent needs to re-raise a worker's exception: type name, message,
    traceback text, and the pickled exception when it pickles."""
    tb_text = traceback.format_exc()
    try:
        exc_bytes = pickle.dumps(err, protocol=_PICKLE_PROTOCOL)
    except Exception:  # noqa: BLE001 - any unpicklable exception is described by text
        exc_bytes = None
    return (type(err).__name__, str(err), tb_text, exc_bytes)


def _seed_worker(seed):
    """Give each worker its own, reproducible random streams (NumPy, Python, mx.random):
    forked workers would otherwise all repeat the parent's stream."""
    from ... import random as mx_random
    np.random.seed(seed)
    random.seed(seed)
    mx_random.seed(seed)


def _load_batch(dataset, batchify_fn, key, indices):
    """The pickled reply for one task: ``(key, True, batch)`` or ``(key, False, error)``."""
    try:
        batch = batchify_fn([dataset[i] for i in indices])
        return pickle.dumps((key, True, _to_wire(batch)), protocol=_PICKLE_PROTOCOL)
    except Exception as err:  # noqa: BLE001 - every failure is reported to the parent
        return pickle.dumps((key, False, _describe_error(err)), protocol=_PICKLE_PROTOCOL)


def _worker_loop(dataset, batchify_fn, task_conn, result_conn, seed):
    """Body of a worker process: run tasks until told to stop or orphaned."""
    # Ctrl-C is for the parent, which then shuts the workers down (as MXNet's pool does).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Batches are made in host memory (MXNet's workers use cpu_shared), whatever the
    # parent's default context: a forked child cannot use the parent's GPU anyway.
    _context_state.ctx = cpu()
    _seed_worker(seed)
    parent = multiprocessing.parent_process()
    while True:
        try:
            # Wake up now and then to notice a parent that died without telling us.
            if not task_conn.poll(0.5):
                if parent is not None and not parent.is_alive():
                    return
                continue
            task = task_conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        key, indices = task
        reply = _load_batch(dataset, batchify_fn, key, indices)
        try:
            result_conn.send_bytes(reply)
        except (BrokenPipeError, OSError):
            return


# ---------------------------------------------------------------- parent side

class _WorkerTraceback(Exception):
    """Carries the traceback text of an exception raised in a DataLoader worker."""


def _reraise(info, worker_id, pid):
    type_name, message, tb_text, exc_bytes = info
    where = "DataLoader worker %d (pid %d)" % (worker_id, pid)
    cause = _WorkerTraceback("%s raised %s; worker traceback:\n%s" % (where, type_name, tb_text))
    exc = None
    if exc_bytes is not None:
        try:
            exc = pickle.loads(exc_bytes)
        except Exception:  # noqa: BLE001 - fall back to a text-only error
            exc = None
    if not isinstance(exc, BaseException):
        raise MXNetError("%s raised %s: %s\nWorker traceback:\n%s"
                         % (where, type_name, message, tb_text)) from None
    if hasattr(exc, "add_note"):
        exc.add_note("(raised in %s; its traceback is the cause above)" % where)
    raise exc from cause


def _timeout_error(timeout, where):
    return multiprocessing.TimeoutError(
        "DataLoader: no batch from %s within timeout=%s seconds. A transform may be too "
        "slow (raise DataLoader(timeout=...)) or a worker may be stuck." % (where, timeout))


def _mp_context(name):
    if name is None or isinstance(name, str):
        return multiprocessing.get_context(name)
    return name


def _base_seed():
    """A seed derived from NumPy's global RNG state without drawing from it, so that
    creating workers leaves the shuffling order exactly as in MXNet."""
    state = np.random.get_state()
    entropy = [int(v) for v in state[1]] + [int(state[2])]
    return int(np.random.SeedSequence(entropy).generate_state(1)[0])


def _shutdown_workers(procs, task_conns, result_conns, grace):
    """Stop worker processes: ask politely for ``grace[0]`` seconds, then terminate."""
    for conn in task_conns:
        try:
            conn.send(None)
        except (OSError, ValueError):
            pass
    deadline = time.monotonic() + grace[0]
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.terminate()
            p.join(1.0)
    for conn in task_conns + result_conns:
        conn.close()


class _WorkerPool:
    """Worker processes with one task pipe and one result pipe each.

    Tasks go round robin; results are buffered by key ``(iteration id, batch number)``
    so that several iterations over one DataLoader can share the pool, and results of
    abandoned iterations are dropped.
    """

    def __init__(self, dataset, batchify_fn, num_workers, mp_context=None):
        ctx = _mp_context(mp_context)
        seed = _base_seed()
        self._procs, self._task_conns, self._result_conns = [], [], []
        self._grace = [1.0]   # seconds workers get to exit before being terminated
        try:
            for wid in range(num_workers):
                self._start_worker(ctx, dataset, batchify_fn, (seed + wid) % 2 ** 32)
        except Exception:
            _shutdown_workers(self._procs, self._task_conns, self._result_conns, [0.0])
            raise
        self._finalizer = weakref.finalize(self, _shutdown_workers, self._procs,
                                           self._task_conns, self._result_conns, self._grace)
        self._owner = {}          # key -> worker id, for tasks not yet answered
        self._results = {}        # key -> (ok, payload)
        self._live = set()        # iteration ids whose results are still wanted
        self._next_iter = 0
        self._next_worker = 0

    def _start_worker(self, ctx, dataset, batchify_fn, seed):
        task_r, task_w = ctx.Pipe(duplex=False)
        result_r, result_w = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_worker_loop, daemon=True,
                           args=(dataset, batchify_fn, task_r, result_w, seed))
        try:
            proc.start()
        except (pickle.PicklingError, AttributeError, TypeError) as err:
            for conn in (task_r, task_w, result_r, result_w):
                conn.close()
            raise TypeError(
                "DataLoader: worker processes started with %r need a picklable dataset and "
                "batchify_fn, and this one is not (%s). Use module-level functions or "
                "callable objects instead of lambdas and local functions, or pass "
                "thread_pool=True." % (ctx.get_start_method(), err)) from err
        # Our copies of the worker's ends: closed so that the pipes see EOF when it dies.
        task_r.close()
        result_w.close()
        self._procs.append(proc)
        self._task_conns.append(task_w)
        self._result_conns.append(result_r)

    @property
    def alive(self):
        return self._finalizer.alive

    @property
    def pids(self):
        return [p.pid for p in self._procs]

    def shutdown(self, grace=None):
        if grace is not None:
            self._grace[0] = grace
        self._finalizer()

    def open_iteration(self):
        it = self._next_iter
        self._next_iter += 1
        self._live.add(it)
        return it

    def close_iteration(self, it):
        self._live.discard(it)
        for key in [k for k in self._results if k[0] == it]:
            del self._results[key]

    def submit(self, key, indices):
        wid = self._next_worker
        self._next_worker = (wid + 1) % len(self._procs)
        self._owner[key] = wid
        try:
            self._task_conns[wid].send((key, indices))
        except OSError:     # the worker died: nobody reads its end of the pipe any more
            self._raise_dead_worker(key, [wid])

    def get(self, key, timeout):
        """The batch for ``key``; raises the worker's exception, or on timeout/death."""
        deadline = time.monotonic() + timeout
        while key not in self._results:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                wid = self._owner[key]
                self.shutdown(grace=0.0)   # a stuck worker would not take the next task
                raise _timeout_error(timeout, "worker %d (pid %d)" % (wid, self._procs[wid].pid))
            sentinels = [p.sentinel for p in self._procs]
            ready = multiprocessing.connection.wait(self._result_conns + sentinels, remaining)
            self._receive([r for r in ready if r in self._result_conns])
            dead = [i for i, s in enumerate(sentinels) if s in ready]
            if dead and key not in self._results:
                self._raise_dead_worker(key, dead)
        wid = self._owner.pop(key)
        ok, payload = self._results.pop(key)
        if not ok:
            _reraise(payload, wid, self._procs[wid].pid)
        return _from_wire(payload)

    def _receive(self, conns):
        for conn in conns:
            while conn.poll():
                try:
                    key, ok, payload = pickle.loads(conn.recv_bytes())
                except (EOFError, OSError):
                    break
                if key[0] in self._live:
                    self._results[key] = (ok, payload)
                else:
                    self._owner.pop(key, None)

    def _raise_dead_worker(self, key, dead):
        # A worker may have answered just before dying: read what is left first.
        self._receive(self._result_conns)
        if key in self._results:
            return
        wid = dead[0]
        proc = self._procs[wid]
        proc.join(1.0)   # its sentinel can fire a moment before it can be reaped
        self.shutdown(grace=0.0)
        raise MXNetError("DataLoader worker %d (pid %d) exited unexpectedly with exit code %s "
                         "(killed, out of memory, or a crash in native code)"
                         % (wid, proc.pid, proc.exitcode))


class _ThreadPoolFetcher:
    """The same interface as ``_WorkerPool`` over a ``ThreadPool`` (no pickling)."""

    def __init__(self, dataset, batchify_fn, num_workers):
        self._pool = multiprocessing.pool.ThreadPool(num_workers)
        self._dataset = dataset
        self._batchify_fn = batchify_fn
        self._pending = {}
        self._next_iter = 0
        self._finalizer = weakref.finalize(self, self._pool.terminate)

    @property
    def alive(self):
        return self._finalizer.alive

    def shutdown(self):
        self._finalizer()

    def open_iteration(self):
        self._next_iter += 1
        return self._next_iter - 1

    def close_iteration(self, it):
        for key in [k for k in self._pending if k[0] == it]:
            del self._pending[key]

    def submit(self, key, indices):
        self._pending[key] = self._pool.apply_async(
            _thread_batch, (self._dataset, self._batchify_fn, indices))

    def get(self, key, timeout):
        try:
            return self._pending.pop(key).get(timeout)
        except multiprocessing.TimeoutError:
            raise _timeout_error(timeout, "a worker thread") from None


def _thread_batch(dataset, batchify_fn, indices):
    return batchify_fn([dataset[i] for i in indices])


class _MultiWorkerIter:
    """One pass over the batch sampler, with ``prefetch`` batches requested ahead."""

    def __init__(self, loader, pool, prefetch):
        self._loader = loader            # keeps the loader, hence its pool, alive
        self._pool = pool
        self._id = pool.open_iteration()
        self._batches = iter(loader._batch_sampler)
        self._sent = 0
        self._rcvd = 0
        self._closed = False
        for _ in range(prefetch):
            self._push_next()

    def _push_next(self):
        indices = next(self._batches, None)
        if indices is not None:
            self._pool.submit((self._id, self._sent), indices)
            self._sent += 1

    def __iter__(self):
        return self

    def __next__(self):
        if self._closed:
            raise StopIteration
        self._push_next()
        if self._rcvd == self._sent:
            self.close()
            raise StopIteration
        try:
            batch = self._pool.get((self._id, self._rcvd), self._loader._timeout)
        except BaseException:
            self.close()
            raise
        self._rcvd += 1
        return self._loader._pin(batch)

    def close(self):
        if not self._closed:
            self._closed = True
            if self._pool.alive:
                self._pool.close_iteration(self._id)

    def __del__(self):
        self.close()


class DataLoader:
    """Loads data from a dataset and returns mini-batches, as ``mxnet.gluon.data.DataLoader``.

    Parameters
    ----------
    dataset : Dataset
        Source dataset (NumPy arrays, NDArrays and lists work directly).
    batch_size : int
        Size of a mini-batch (required unless ``batch_sampler`` is given).
    shuffle : bool
        Shuffle the samples every epoch (from NumPy's global RNG, as MXNet does).
    sampler : Sampler
        Where the sample indices come from; not together with ``shuffle``.
    last_batch : {'keep', 'discard', 'rollover'}, default 'keep'
        What to do with the last, incomplete batch (see ``BatchSampler``).
    batch_sampler : Sampler
        Yields lists of indices; excludes batch_size, shuffle, sampler and last_batch.
    batchify_fn : callable
        Merges a list of samples into a batch; ``default_batchify_fn`` by default.
    num_workers : int, default 0
        Worker processes (or threads, see ``thread_pool``); 0 loads in this process.
    pin_memory : bool, default False
        Return batches in ``cpu_pinned(pin_device_id)`` memory.
    pin_device_id : int, default 0
    prefetch : int, default ``2 * num_workers``
        Batches requested from workers ahead of the one being returned.
    thread_pool : bool, default False
        Use threads instead of processes (nothing needs to pickle).
    timeout : float, default 120
        Seconds to wait for one batch from a worker before raising
        ``multiprocessing.TimeoutError``; a stuck worker never hangs the loop.
    auto_reload : bool, default False
        Start the next epoch's prefetching as soon as an epoch ends.
    multiprocessing_context : str or context, optional
        ``'fork'``, ``'spawn'``, ``'forkserver'`` or a ``multiprocessing`` context for
        the workers (mxlite extension; default: Python's default start method).
        With ``spawn`` the dataset and ``batchify_fn`` must pickle.

    Examples
    --------
    >>> ds = ArrayDataset(np.arange(10).reshape(5, 2), np.arange(5))
    >>> [label.asnumpy().tolist() for _, label in DataLoader(ds, batch_size=2)]
    [[0, 1], [2, 3], [4]]
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None,
                 num_workers=0, pin_memory=False, pin_device_id=0,
                 prefetch=None, thread_pool=False, timeout=120, auto_reload=False,
                 multiprocessing_context=None):
        if not timeout > 0:
            raise ValueError("DataLoader: timeout must be positive, got %r" % (timeout,))
        self._dataset = dataset
        self._batch_sampler = self._make_batch_sampler(
            dataset, batch_size, shuffle, sampler, last_batch, batch_sampler)
        self._batchify_fn = default_batchify_fn if batchify_fn is None else batchify_fn
        self._num_workers = max(0, int(num_workers))
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._thread_pool = thread_pool
        self._timeout = timeout
        self._mp_context = multiprocessing_context
        self._pool = None
        self._iter = None
        self.auto_reload = auto_reload
        if auto_reload:
            self.refresh()

    @staticmethod
    def _make_batch_sampler(dataset, batch_size, shuffle, sampler, last_batch, batch_sampler):
        if batch_sampler is not None:
            if batch_size is not None or shuffle or sampler is not None or \
                    last_batch is not None:
                raise ValueError("batch_size, shuffle, sampler and last_batch must "
                                 "not be specified if batch_sampler is specified.")
            return batch_sampler
        if batch_size is None:
            raise ValueError("batch_size must be specified unless batch_sampler is specified")
        if sampler is None:
            sampler = (_sampler.RandomSampler(len(dataset)) if shuffle
                       else _sampler.SequentialSampler(len(dataset)))
        elif shuffle:
            raise ValueError("shuffle must not be specified if sampler is specified")
        return _sampler.BatchSampler(sampler, batch_size, last_batch or "keep")

    def __len__(self):
        return len(self._batch_sampler)

    def __iter__(self):
        it = self._iter if self._iter is not None else self._new_iter()
        self._iter = None   # an iterator is never used twice
        try:
            yield from it
        finally:
            if isinstance(it, _MultiWorkerIter):
                it.close()
        if self.auto_reload and self._iter is None:
            self.refresh()

    def refresh(self):
        """Start a new iteration now (its prefetching begins at once)."""
        self._iter = self._new_iter()

    def clean(self):
        """Drop a prefetched iteration; the next ``iter()`` starts afresh."""
        if isinstance(self._iter, _MultiWorkerIter):
            self._iter.close()
        self._iter = None

    def _new_iter(self):
        if self._num_workers == 0:
            return self._same_process_iter()
        if self._pool is None or not self._pool.alive:
            if self._thread_pool:
                self._pool = _ThreadPoolFetcher(self._dataset, self._batchify_fn,
                                                self._num_workers)
            else:
                self._pool = _WorkerPool(self._dataset, self._batchify_fn, self._num_workers,
                                         self._mp_context)
        return _MultiWorkerIter(self, self._pool, self._prefetch)

    def _same_process_iter(self):
        for indices in self._batch_sampler:
            yield self._pin(self._batchify_fn([self._dataset[i] for i in indices]))

    def _pin(self, batch):
        if self._pin_memory:
            return _as_in_context(batch, cpu_pinned(self._pin_device_id))
        return batch

    def _worker_pids(self):
        """Process ids of the live worker processes (empty without them); for tests."""
        pool = self._pool
        if isinstance(pool, _WorkerPool) and pool.alive:
            return pool.pids
        return []

    def close(self):
        """Stop the workers now (they also stop when the DataLoader is garbage collected)."""
        self.clean()
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is not None:
            pool.shutdown()

