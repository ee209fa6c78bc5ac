"""``mx.kv``: the key-value store that sums gradients over devices and keeps weights.

As MXNet 1.x's single-machine stores (``local``, ``device``, ``nccl``, ...), in one
process: values pushed from several contexts are summed, an optimizer set with
``set_optimizer`` updates the stored value on push, and ``pull`` broadcasts it to
arrays on any context. Distributed stores (``dist_*``) are not supported.

>>> kv = mx.kv.create('local')
>>> kv.init(3, mx.nd.ones((2, 3)) * 2)
>>> kv.push(3, [mx.nd.ones((2, 3), ctx=mx.cpu(i)) for i in range(4)])
>>> out = mx.nd.zeros((2, 3)); kv.pull(3, out=out); out.asnumpy()[0]
array([4., 4., 4.], dtype=float32)
"""
from .base import KVStoreBase, create  # noqa: F401
from .kvstore import KVStore  # noqa: F401

__all__ = ["KVStoreBase", "KVStore", "create"]
