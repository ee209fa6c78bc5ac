"""``mx.kv``: the key-value store that sums gradients over devices and keeps weights.

As MXNet 1.x's single-machine stores (``local``, ``device``, ``nccl``, ...), in one
process: values pushed from several contexts are summed, an optimizer set with
``set_optimizer`` updates the stored value on push, and ``pull`` broadcasts it to
arrays on any context. The distributed stores (``dist_sync``, ``dist_async``, ...) run
on MPI ranks through ``mpi4py`` (``mxlite.kvstore.dist``), imported only when one is
created.

>>> kv = mx.kv.create('local')
>>> kv.init(3, mx.nd.ones((2, 3)) * 2)
>>> kv.push(3, [mx.nd.ones((2, 3), ctx=mx.cpu(i)) for i in range(4)])
>>> out = mx.nd.zeros((2, 3)); kv.pull(3, out=out); out.asnumpy()[0]
array([4., 4., 4.], dtype=float32)
"""
from .base import KVStoreBase, create  # noqa: F401
from .kvstore import KVStore  # noqa: F401
from .kvstore_server import KVStoreServer, _init_kvstore_server_module  # noqa: F401

_init_kvstore_server_module()

__all__ = ["KVStoreBase", "KVStore", "KVStoreServer", "create"]
