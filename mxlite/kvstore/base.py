"""``KVStoreBase`` (the interface and registry of stores) and ``create``."""

from ..base import MXNetError, register_class

__all__ = ["KVStoreBase", "TestStore", "create", "LOCAL_TYPES", "DIST_TYPES"]

#: The single-machine store types; in one process they all behave the same.
LOCAL_TYPES = ("local", "device", "nccl", "local_update_cpu", "local_allreduce_cpu",
               "local_allreduce_device")
#: The distributed store types (on MPI): every name containing 'dist' is one, as in MXNet.
DIST_TYPES = ("dist_sync", "dist_device_sync", "dist", "dist_async", "dist_device_async")


class KVStoreBase:
    """The interface of a key-value store for data-parallel training.

    Subclasses registered with :meth:`register` are created by name with
    :func:`create` (as MXNet's registry of Python stores).
    """

    #: The capability queried by ``is_capable`` for updating with an optimizer.
    OPTIMIZER = "optimizer"

    kv_registry = {}

    def broadcast(self, key, value, out, priority=0):
        """Initialise ``key`` with ``value`` and write it to every array of ``out``."""
        raise NotImplementedError()

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value`` (summed over its arrays), then pull the result into ``out``."""
        raise NotImplementedError()

    def set_optimizer(self, optimizer):
        """Update the stored values with ``optimizer`` on every push."""
        raise NotImplementedError()

    def is_capable(self, capability):
        """Whether the store supports ``capability`` (e.g. ``KVStoreBase.OPTIMIZER``)."""
        raise NotImplementedError()

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the optimizer states (and the optimizer if ``dump_optimizer``) to ``fname``."""
        raise NotImplementedError()

    def load_optimizer_states(self, fname):
        """Load optimizer states written by :meth:`save_optimizer_states`."""
        raise NotImplementedError()

    @property
    def type(self):
        """The type of the store, e.g. ``'device'``."""
        raise NotImplementedError()

    @property
    def rank(self):
        """The rank of this worker."""
        raise NotImplementedError()

    @property
    def num_workers(self):
        """The number of workers."""
        raise NotImplementedError()

    @staticmethod
    def register(klass):
        """Register a store class under its lower-cased class name for :func:`create`.

        Examples
        --------
        >>> @mx.kv.KVStoreBase.register
        ... class MyStore(mx.kv.KVStoreBase):
        ...     pass
        >>> type(mx.kv.create('mystore')).__name__
        'MyStore'
        """
        return register_class(KVStoreBase.kv_registry, klass, "kvstore", "KVStoreBase.register")


def create(name="local"):
    """Create a key-value store.

    Parameters
    ----------
    name : str, default 'local'
        One of ``'local'``, ``'device'``, ``'nccl'``, ``'local_update_cpu'``,
        ``'local_allreduce_cpu'``, ``'local_allreduce_device'`` (all the same
        in-process store here), ``'dist_sync'``, ``'dist_device_sync'``, ``'dist'``
        (synchronous data-parallel training over MPI ranks), ``'dist_async'``,
        ``'dist_device_async'`` (asynchronous, experimental), or the name of a class
        registered with :meth:`KVStoreBase.register`.

    Returns
    -------
    KVStoreBase

    Raises
    ------
    MXNetError
        For unknown names (MXNet accepts any unknown name as a local store; mxlite
        names the valid ones), and for a distributed store when ``mpi4py`` is missing.

    Examples
    --------
    >>> kv = mx.kv.create('device')
    >>> kv.type, kv.rank, kv.num_workers
    ('device', 0, 1)
    """
    if not isinstance(name, str):
        raise TypeError("name must be a string, got %s" % type(name).__name__)
    name = name.lower()
    if name in KVStoreBase.kv_registry:
        return KVStoreBase.kv_registry[name]()
    if "dist" in name:
        from .dist import DistKVStore, is_async
        if is_async(name):
            from .dist_async import DistAsyncKVStore
            return DistAsyncKVStore(name)
        return DistKVStore(name)
    if name not in LOCAL_TYPES:
        raise MXNetError("kvstore.create: unknown kvstore type %r; expected one of %s"
                         % (name, ", ".join(LOCAL_TYPES + DIST_TYPES
                                            + tuple(KVStoreBase.kv_registry))))
    from .kvstore import KVStore
    return KVStore(name)


@KVStoreBase.register
class TestStore(KVStoreBase):
    """MXNet's store for testing the KVStoreBase interface (``kv.create('teststore')``):
    in-process sums, no optimizer on the store."""

    def broadcast(self, key, value, out, priority=0):
        """Write ``value`` into every array of ``out`` (lists of keys take lists)."""
        if isinstance(key, (list, tuple)):
            for k, v, o in zip(key, value, out):
                self.broadcast(k, v, o, priority)
            return
        for o in out if isinstance(out, list) else [out]:
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0):
        """Sum ``value`` (an array or a list, on the first one's context) into ``out``,
        or back into ``value``'s arrays when ``out`` is None (lists of keys take lists)."""
        if isinstance(key, (list, tuple)):
            for i, k in enumerate(key):
                self.pushpull(k, value[i], None if out is None else out[i], priority)
            return
        values = value if isinstance(value, (list, tuple)) else [value]
        ctx = values[0].context
        total = values[0].copy()
        for v in values[1:]:
            total += v.as_in_context(ctx)
        targets = values if out is None else (out if isinstance(out, list) else [out])
        for o in targets:
            o[:] = total

    @staticmethod
    def is_capable(capability):
        """No capability: no optimizer, compression or sparse support."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError("Unknown capability: %s" % capability)

    @property
    def type(self):
        return "teststore"

    @property
    def rank(self):
        return 0

    @property
    def num_workers(self):
        return 1
