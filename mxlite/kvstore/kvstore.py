"""``KVStore``: MXNet's single-machine key-value store, in process.

Each key holds one NDArray, a copy of the value it was initialised with, on that
value's context. ``push`` sums the values given for a key (from any contexts) and
either stores the sum or, after ``set_optimizer``, hands it to the optimizer's
Updater as the gradient of the stored weight. ``pull`` copies the stored value
into every output array, on the output's own context.

Everything runs synchronously, so ``priority`` only keeps MXNet's signatures.
Each call checks all its keys and shapes before changing anything: a failed
``push``, ``pull`` or ``init`` leaves the store and the outputs as they were, and
with an optimizer every state is created before the first weight changes.

Differences from MXNet, on purpose:

* errors name the method, the key and both shapes (MXNet: ``Check failed: !is_none()``);
* a custom updater (``_set_updater``) receives string keys as ``str``, not ``bytes``;
* ``row_sparse_pull`` writes dense arrays (mxlite has no sparse storage): the rows
  in ``row_ids`` get the stored rows and the other rows are zero, which is the
  dense view of the row-sparse array MXNet would return.
"""
from collections import OrderedDict

import numpy as np

from ..base import MXNetError
from ..nd.ndarray import NDArray, _wrap
from .base import KVStoreBase

__all__ = ["KVStore"]

_COMPRESSION_TYPES = ("2bit",)


class KVStore(KVStoreBase):
    """An in-process key-value store (``mx.kv.create('local')`` and friends).

    Parameters
    ----------
    kv_type : str, default 'local'
        The store's type, as given to :func:`mx.kv.create`.

    Examples
    --------
    >>> kv = mx.kv.create('device')
    >>> kv.init('w', mx.nd.zeros((2,)))
    >>> kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
    >>> kv.push('w', [mx.nd.ones((2,), ctx=mx.cpu(0)), mx.nd.ones((2,), ctx=mx.cpu(1))])
    >>> w = mx.nd.zeros((2,)); kv.pull('w', out=w); w.asnumpy()
    array([-0.2, -0.2], dtype=float32)
    """

    def __init__(self, kv_type="local"):
        self._type = kv_type
        self._store = {}
        self._key_type = None
        self._updater = None
        self._compression_params = None

    def __repr__(self):
        return "<KVStore %s, %d keys>" % (self._type, len(self._store))

    # -- description -----------------------------------------------------------------
    @property
    def type(self):
        """The store's type (``'local'``, ``'device'``, ...)."""
        return self._type

    @property
    def rank(self):
        """The rank of this worker: always 0 (one process)."""
        return 0

    @property
    def num_workers(self):
        """The number of workers: always 1 (one process)."""
        return 1

    def is_capable(self, capability):
        """Whether the store supports ``capability``; only ``'optimizer'`` is known.

        Raises
        ------
        ValueError
            For an unknown capability (as MXNet).
        """
        if str(capability).lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError("Unknown capability: {}".format(capability))

    def _barrier(self):
        """A barrier over all workers: nothing to wait for with one worker."""

    # -- the data path ---------------------------------------------------------------
    def init(self, key, value):
        """Initialise one key or a list of keys; each key once only.

        Parameters
        ----------
        key : int, str, or list of int or str
        value : NDArray or list of NDArray
            One value per key (the store keeps a copy, on the value's context).

        Examples
        --------
        >>> kv = mx.kv.create()
        >>> kv.init(['a', 'b'], [mx.nd.ones((2,)), mx.nd.zeros((3,))])
        """
        groups = self._groups("init", key, value)
        for k, vals in groups.items():
            if len(vals) != 1:
                raise MXNetError("KVStore.init: key %r was given %d values; init takes one value "
                                 "per key" % (k, len(vals)))
            if k in self._store:
                raise MXNetError("KVStore.init: duplicate init of key %r; a key is initialised "
                                 "once (by init or broadcast)" % (k,))
        kinds = {type(k) for k in groups}
        if len(kinds) > 1:
            raise MXNetError("KVStore.init: mixed key types are not allowed, got keys %s"
                             % list(groups))
        for k, vals in groups.items():
            self._store[k] = _wrap(vals[0]._data.copy(), vals[0]._ctx)
        self._key_type = kinds.pop()

    def push(self, key, value, priority=0):  # noqa: ARG002 (synchronous: no priorities)
        """Push values: those given for one key (e.g. one per device) are summed.

        Without an optimizer the sum replaces the stored value; with one
        (:meth:`set_optimizer`) the sum is the gradient that updates the stored weight.

        Parameters
        ----------
        key : int, str, or list of int or str
        value : NDArray, list of NDArray, or list of lists of NDArray (one list per key)
        priority : int, optional
            Ignored: every operation runs when called.

        Examples
        --------
        >>> kv = mx.kv.create()
        >>> kv.init(0, mx.nd.zeros((2,)))
        >>> kv.push(0, [mx.nd.ones((2,)), mx.nd.ones((2,)) * 2])
        >>> out = mx.nd.zeros((2,)); kv.pull(0, out=out); out.asnumpy()
        array([3., 3.], dtype=float32)
        """
        groups = self._groups("push", key, value)
        self._check_shapes("push", groups, "value")
        merged = [(k, _wrap(self._sum(vals, self._store[k]), self._store[k]._ctx,
                            _sparse_class(vals)))
                  for k, vals in groups.items()]
        self._apply(merged)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):  # noqa: ARG002
        """Copy the stored value of each key into every array of ``out``.

        Parameters
        ----------
        key : int, str, or list of int or str
        out : NDArray, list of NDArray, or list of lists of NDArray (one list per key)
            Written in place, each on its own context.
        priority : int, optional
            Ignored.
        ignore_sparse : bool, default True
            Ignored: every array is dense in mxlite.
        """
        if out is None:
            raise ValueError("KVStore.pull: out is required (the NDArrays to write key %r into)"
                             % (key,))
        groups = self._groups("pull", key, out)
        self._check_shapes("pull", groups, "out")
        self._write(groups)

    def pushpull(self, key, value, out=None, priority=0):  # noqa: ARG002
        """:meth:`push` then :meth:`pull`; the result goes to ``out``, or back into ``value``.

        Examples
        --------
        >>> kv = mx.kv.create('device')
        >>> kv.init('g', mx.nd.zeros((2,)))
        >>> g = [mx.nd.array([1, 2], ctx=mx.cpu(i)) for i in range(2)]
        >>> kv.pushpull('g', g)          # an allreduce: every g is now the sum
        >>> g[1].asnumpy()
        array([2., 4.], dtype=float32)
        """
        groups = self._groups("pushpull", key, value)
        self._check_shapes("pushpull", groups, "value")
        outs = groups if out is None else self._groups("pushpull", key, out)
        self._check_shapes("pushpull", outs, "out")
        self.push(key, value)
        self._write(outs)

    def broadcast(self, key, value, out, priority=0):  # noqa: ARG002
        """Initialise ``key`` with ``value`` and write that value into every array of ``out``.

        Examples
        --------
        >>> kv = mx.kv.create()
        >>> outs = [mx.nd.zeros((2,), ctx=mx.cpu(i)) for i in range(2)]
        >>> kv.broadcast(7, mx.nd.ones((2,)), out=outs)
        >>> outs[1].asnumpy()
        array([1., 1.], dtype=float32)
        """
        values = self._groups("broadcast", key, value)
        outs = self._groups("broadcast", key, out)
        for k, arrs in outs.items():
            want = values[k][0].shape
            for i, a in enumerate(arrs):
                if a.shape != want:
                    raise MXNetError("KVStore.broadcast: key %r has a value of shape %s but out "
                                     "%d of %d has shape %s" % (k, want, i, len(arrs), a.shape))
        self.init(key, value)
        self._write(outs)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):  # noqa: ARG002
        """Pull only the rows ``row_ids`` of each key; the other rows of ``out`` become 0.

        mxlite stores every array dense, so ``out`` is dense too: it holds what the
        row-sparse array that MXNet returns holds, written out densely.

        Parameters
        ----------
        key : int, str, or list of int or str
        out : NDArray, list of NDArray, or list of lists of NDArray
        priority : int, optional
            Ignored.
        row_ids : NDArray or list of NDArray
            The row indices: one array for all outputs, or one per output.

        Examples
        --------
        >>> kv = mx.kv.create()
        >>> kv.init(0, mx.nd.array([[1, 1], [2, 2], [3, 3]]))
        >>> out = mx.nd.ones((3, 2)) * 9
        >>> kv.row_sparse_pull(0, out=out, row_ids=mx.nd.array([0, 2]))
        >>> out.asnumpy()[:, 0]
        array([1., 0., 3.], dtype=float32)
        """
        if out is None or row_ids is None:
            raise ValueError("KVStore.row_sparse_pull: out and row_ids are required for key %r"
                             % (key,))
        groups = self._groups("row_sparse_pull", key, out)
        self._check_shapes("row_sparse_pull", groups, "out")
        flat = [(k, o) for k, outs in groups.items() for o in outs]
        ids = _row_id_list(row_ids, len(flat))
        rows = [_check_rows(k, self._store[k], r) for (k, _), r in zip(flat, ids)]
        for (k, o), r in zip(flat, rows):
            _write_rows(o, self._store[k], r)

    # -- optimizers ------------------------------------------------------------------
    def set_optimizer(self, optimizer):
        """Update the stored weights with ``optimizer`` (through an Updater) on every push.

        Examples
        --------
        >>> kv = mx.kv.create()
        >>> kv.init(3, mx.nd.zeros((2, 2)))
        >>> kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
        >>> kv.push(3, mx.nd.ones((2, 2)))
        >>> w = mx.nd.zeros((2, 2)); kv.pull(3, out=w); w.asnumpy()[0]
        array([-0.1, -0.1], dtype=float32)
        """
        from .. import optimizer as opt
        if not isinstance(optimizer, opt.Optimizer):
            raise TypeError("KVStore.set_optimizer: expected an mx.optimizer.Optimizer, got %s "
                            "(create one with mx.optimizer.create(name, ...))"
                            % type(optimizer).__name__)
        self._set_updater(opt.get_updater(optimizer))

    def _set_updater(self, updater):
        """Call ``updater(key, merged_value, stored_value)`` on push instead of storing."""
        if not callable(updater):
            raise TypeError("KVStore._set_updater: the updater must be callable, got %s"
                            % type(updater).__name__)
        self._updater = updater

    def set_gradient_compression(self, compression_params):
        """Accept MXNet's gradient-compression settings; gradients stay uncompressed.

        NOTE: mxlite sums exact gradients: there is no communication to save in
        one process, so ``{'type': '2bit', 'threshold': t}`` is checked as MXNet
        checks it and then has no effect (MXNet's quantized sums would differ).

        Parameters
        ----------
        compression_params : dict
            ``type`` ('2bit') and optionally ``threshold`` (> 0, default 0.5).
        """
        if "device" not in self._type and "dist" not in self._type:
            raise MXNetError("Gradient compression is not supported for this type of kvstore "
                             "(%r); use a 'device' kvstore" % (self._type,))
        if not isinstance(compression_params, dict):
            raise TypeError("set_gradient_compression: compression_params must be a dict, got %s"
                            % type(compression_params).__name__)
        kind = compression_params.get("type")
        if kind is None:
            raise MXNetError("set_gradient_compression: required parameter 'type' is missing")
        if kind not in _COMPRESSION_TYPES:
            raise MXNetError("set_gradient_compression: unknown type for gradient compression %r "
                             "(expected one of %s)" % (kind, ", ".join(_COMPRESSION_TYPES)))
        if float(compression_params.get("threshold", 0.5)) <= 0:
            raise MXNetError("set_gradient_compression: threshold must be greater than 0, got %s"
                             % compression_params["threshold"])
        self._compression_params = dict(compression_params)

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the Updater's states (and the optimizer with ``dump_optimizer``) to ``fname``.

        The file is MXNet's pickle: MXNet loads it, and files MXNet wrote load here.
        """
        updater = self._state_updater("save_optimizer_states")
        blob = updater.get_states(dump_optimizer)
        with open(fname, "wb") as fout:
            fout.write(blob)

    def load_optimizer_states(self, fname):
        """Load states written by :meth:`save_optimizer_states` (here or by MXNet)."""
        updater = self._state_updater("load_optimizer_states")
        with open(fname, "rb") as f:
            updater.set_states(f.read())

    def _state_updater(self, method):
        if self._updater is None:
            raise MXNetError("KVStore.%s: the store has no optimizer; call set_optimizer first"
                             % method)
        if not hasattr(self._updater, "get_states"):
            raise MXNetError("KVStore.%s: the updater set with _set_updater has no states to "
                             "save or load (use set_optimizer)" % method)
        return self._updater

    # -- for the Trainer ---------------------------------------------------------------
    def _has_key(self, key):
        return key in self._store

    def _assign(self, key, value):
        """Overwrite the stored value of an initialised ``key`` (a Trainer re-broadcast)."""
        self._check_shapes("_assign", {key: [value]}, "value")
        self._write_raw(self._store[key], value)

    # -- internals -------------------------------------------------------------------
    def _groups(self, method, key, value):
        """``{key: [NDArray, ...]}`` in first-seen order; a key given twice collects both."""
        if isinstance(key, (list, tuple)):
            if not isinstance(value, (list, tuple)) or len(value) != len(key):
                got = len(value) if isinstance(value, (list, tuple)) else type(value).__name__
                raise ValueError("KVStore.%s: %d keys need a list of %d values, got %s"
                                 % (method, len(key), len(key), got))
            pairs = list(zip(key, value))
        else:
            pairs = [(key, value)]
        groups = OrderedDict()
        for k, v in pairs:
            k = self._check_key(method, k)
            groups.setdefault(k, []).extend(_arrays(method, k, v))
        return groups

    def _check_key(self, method, key):
        if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer, str)):
            raise TypeError("KVStore.%s: keys must be int or str, got %s %r"
                            % (method, type(key).__name__, key))
        key = key if isinstance(key, str) else int(key)
        kind = type(key)
        if self._key_type is not None and self._key_type is not kind:
            raise MXNetError("KVStore.%s: mixed key types are not allowed: this store uses %s "
                             "keys, got %s key %r" % (method, self._key_type.__name__,
                                                     kind.__name__, key))
        return key

    def _check_shapes(self, method, groups, what):
        for k, arrs in groups.items():
            stored = self._store.get(k)
            if stored is None:
                raise MXNetError("KVStore.%s: key %r has not been initialised; call "
                                 "kv.init(%r, value) first" % (method, k, k))
            for i, a in enumerate(arrs):
                if a.shape != stored.shape:
                    raise MXNetError("KVStore.%s: key %r holds shape %s but %s %d of %d has "
                                     "shape %s" % (method, k, stored.shape, what, i, len(arrs),
                                                   a.shape))

    @staticmethod
    def _sum(values, stored):
        """The raw sum of ``values`` on ``stored``'s context, in its dtype."""
        total = _raw_on(values[0], stored._ctx).astype(stored._data.dtype, copy=True)
        for v in values[1:]:
            total += _raw_on(v, stored._ctx)
        return total

    def _apply(self, merged):
        """Store the merged values, or update the stored weights with them."""
        if self._updater is None:
            for k, grad in merged:
                self._write_raw(self._store[k], grad)
            return
        prepare = getattr(self._updater, "prepare", None)
        if prepare is not None:
            # States for every key first: a failure there leaves every weight unchanged.
            prepare([k for k, _ in merged], [self._store[k] for k, _ in merged])
        for k, grad in merged:
            self._updater(k, grad, self._store[k])

    def _write(self, groups):
        for k, outs in groups.items():
            for o in outs:
                self._write_raw(o, self._store[k])

    @staticmethod
    def _write_raw(dst, src):
        """Copy ``src`` into NDArray ``dst`` (casting to its dtype) and bump its version."""
        if dst is src:
            return
        dst._data[...] = _raw_on(src, dst._ctx)
        dst._bump()


def _arrays(method, key, value):
    """The NDArrays given for one key (one NDArray or a list of them)."""
    vals = [value] if isinstance(value, NDArray) else value
    if not isinstance(vals, (list, tuple)) or not vals:
        raise TypeError("KVStore.%s: key %r needs an NDArray or a non-empty list of NDArrays, "
                        "got %r" % (method, key, value))
    for v in vals:
        if not isinstance(v, NDArray):
            raise TypeError("KVStore.%s: key %r needs NDArrays, got %s"
                            % (method, key, type(v).__name__))
    return list(vals)


def _raw_on(arr, ctx):
    """The raw data of NDArray ``arr`` on ``ctx``'s array backend (no copy when it is there)."""
    if arr._ctx == ctx or (arr._ctx.xp is np and ctx.xp is np):
        return arr._data
    from .. import autograd
    with autograd.pause():
        return arr.copyto(ctx)._data


def _row_id_list(row_ids, n_out):
    ids = [row_ids] if isinstance(row_ids, NDArray) else row_ids
    if not isinstance(ids, (list, tuple)) or not all(isinstance(r, NDArray) for r in ids):
        raise TypeError("KVStore.row_sparse_pull: row_ids must be an NDArray or a list of "
                        "NDArrays, got %r" % (row_ids,))
    if len(ids) == 1:
        return list(ids) * n_out
    if len(ids) != n_out:
        raise ValueError("KVStore.row_sparse_pull: got %d row_ids for %d outputs; give one for "
                         "all or one per output" % (len(ids), n_out))
    return list(ids)


def _check_rows(key, stored, row_ids):
    rows = row_ids.asnumpy().reshape(-1)
    if rows.size and (not np.all(rows == np.floor(rows)) or rows.min() < 0
                      or rows.max() >= stored.shape[0]):
        raise MXNetError("KVStore.row_sparse_pull: row_ids of key %r must be integers in "
                         "[0, %d), got %s" % (key, stored.shape[0], rows))
    return rows.astype(np.int64)


def _write_rows(out, stored, rows):
    xp = out._ctx.xp or out._ctx.array_module()
    dense = xp.zeros(out._data.shape, out._data.dtype)
    idx = xp.asarray(rows)
    dense[idx] = _raw_on(stored, out._ctx)[idx]
    out._data[...] = dense
    out._bump()


def _sparse_class(values):
    """The sparse class of pushed ``values`` that all share one (a sum of row_sparse
    gradients is row_sparse, and an optimizer updates only its rows), else None."""
    cls = type(values[0])
    if cls._sparse and all(type(v) is cls for v in values):
        return cls
    return None
