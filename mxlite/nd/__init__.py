"""``mx.nd``: the NDArray and one function per registered operator.

Functions are added by a registry listener, so an op a user registers later
appears here too (``mx.nd.<name>``; ``linalg_*``, ``_contrib_*`` and
``_random_*`` and ``_image_*`` ops also in ``mx.nd.linalg``, ``mx.nd.contrib``,
``mx.nd.random``, ``mx.nd.image``).
"""
from ..util import np_submodules as _np_submodules
from .ndarray import NDArray, array, empty  # noqa: F401
from .interop import from_numpy, from_dlpack, to_dlpack_for_read, to_dlpack_for_write  # noqa: F401
from . import ndarray, linalg, contrib, random, image, sparse, _internal, utils  # noqa: F401
from .functions import *  # noqa: F401,F403
from .io import save, load, load_frombuffer  # noqa: F401
from .extras import *  # noqa: F401,F403
from . import register as _register_mod
from ..operator import registry as _registry

op = _internal   # MXNet exposes the raw op functions as mx.nd.op as well
_internal.CachedOp = CachedOp  # noqa: F405 (mxnet.ndarray.op.CachedOp)
_SUBMODULES = {"linalg": linalg, "contrib": contrib, "random": random, "image": image,
               "_internal": _internal}


def _add_op(op_decl):
    g = globals()
    for fname in (op_decl.name,) + op_decl.aliases:
        fn = _register_mod.make_function(op_decl, fname)
        ns, short = _register_mod.namespace_of(fname)
        if ns:
            mod = _SUBMODULES.get(ns)
            if mod is not None and not hasattr(mod, short):
                setattr(mod, short, fn)
            setattr(_internal, fname, fn)
            if ns in ("linalg",) and not fname.startswith("_"):
                g[fname] = fn
        else:
            g[fname] = fn
        setattr(_internal, fname, fn)
        short = sparse.listed_as(fname)
        if short is not None and not hasattr(sparse, short):
            setattr(sparse, short, fn)


def _attach_registry():
    for op_decl in list(_registry.OPS.values()):
        _add_op(op_decl)
    _registry._listeners.append(_add_op)


# ``mx.nd.np``/``mx.nd.npx`` (``mx.sym.np``/``mx.sym.npx``) load on first use.
__getattr__ = _np_submodules(__name__, globals())
