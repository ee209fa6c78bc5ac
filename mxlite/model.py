"""``mx.model``: checkpoints of a Symbol and its parameters in MXNet's file layout
(``prefix-symbol.json`` and ``prefix-%04d.params`` with ``arg:``/``aux:`` keys)."""
import os
from collections import namedtuple

import numpy as np

from .base import MXNetError

__all__ = ["save_checkpoint", "load_checkpoint", "load_params", "BatchEndParam"]

BatchEndParam = namedtuple("BatchEndParams", ["epoch", "nbatch", "eval_metric", "locals"])


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write ``prefix-symbol.json`` (when ``symbol`` is given) and ``prefix-%04d.params``."""
    from . import nd
    if symbol is not None:
        symbol.save("%s-symbol.json" % prefix)
    save_dict = {("arg:%s" % k): v.as_in_context(_cpu()) for k, v in arg_params.items()}
    save_dict.update({("aux:%s" % k): v.as_in_context(_cpu()) for k, v in aux_params.items()})
    nd.save("%s-%04d.params" % (prefix, epoch), save_dict)


def _create_kvstore(kvstore, num_device, arg_params):
    """``(store or None, update_on_kvstore)`` for a ``kvstore`` argument, as MXNet.

    A store instance is always used; a local type name gives no store with one
    device; a distributed name always gives its store. ``update_on_kvstore`` is
    ``MXNET_UPDATE_ON_KVSTORE`` (default 1), off for a ``'local'`` store holding a
    parameter of more than 16M elements and for stores without optimizer support.
    ``arg_params`` maps names to arrays or Parameters (anything with ``shape``).
    """
    from . import kvstore as kvs
    update = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        return None, False
    if isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            return None, False
        kv = kvs.create(kvstore)
        largest = max((int(np.prod(p.shape)) for p in arg_params.values() if p.shape),
                      default=0)
        if kvstore == "local" and largest > 1024 * 1024 * 16:
            update = False
    else:
        raise TypeError("kvstore must be KVStore, str or None, got %s" % type(kvstore).__name__)
    return kv, update and kv.is_capable(kvs.KVStoreBase.OPTIMIZER)


def _cpu():
    from .context import cpu
    return cpu()


def load_params(prefix, epoch):
    """``(arg_params, aux_params)`` from ``prefix-%04d.params``."""
    from . import nd
    fname = "%s-%04d.params" % (prefix, epoch)
    save_dict = nd.load(fname)
    if not isinstance(save_dict, dict):
        raise MXNetError("load_params: %s holds a list of arrays, expected arg:/aux: names"
                         % fname)
    arg_params, aux_params = {}, {}
    for k, v in save_dict.items():
        tp, _, name = k.partition(":")
        if tp == "arg":
            arg_params[name] = v
        elif tp == "aux":
            aux_params[name] = v
        else:
            raise MXNetError("load_params: %s has key %r without an arg:/aux: prefix"
                             % (fname, k))
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """``(symbol, arg_params, aux_params)`` saved by :func:`save_checkpoint`."""
    from . import symbol as sym
    symbol = sym.load("%s-symbol.json" % prefix)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params


# Names MXNet's module also shows, served from where they live in mxlite.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "Context": "mxlite.context",
    "DataDesc": "mxlite.io.io",
    "DataParallelExecutorManager": "mxlite.executor_manager",
    "FeedForward": "mxlite.feedforward",
    "LogValidationMetricsCallback": "mxlite.callback",
    "SKLEARN_INSTALLED": "mxlite.feedforward",
    "Uniform": "mxlite.initializer",
    "cpu": "mxlite.context",
    "get_updater": "mxlite.optimizer",
    "io": "mxlite.io:",
    "kvs": "mxlite.kvstore:",
    "metric": "mxlite.metric:",
    "nd": "mxlite.nd:",
    "opt": "mxlite.optimizer:",
    "sym": "mxlite.symbol:",
})
