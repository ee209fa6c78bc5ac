"""``mx.sym``: Symbols built from the same operator registry as ``mx.nd``."""
from ..util import np_submodules as _np_submodules
from .symbol import Symbol, Variable, var, Group  # noqa: F401
from .from_json import load, load_json  # noqa: F401
from .executor import Executor  # noqa: F401
from .functions import *  # noqa: F401,F403
from . import functions as _functions
from . import register as _register_mod
from ..nd.register import namespace_of as _namespace_of
from ..nd import sparse as _nd_sparse
from ..operator import registry as _registry
import types as _types

linalg = _types.ModuleType("mxlite.symbol.linalg", "``mx.sym.linalg``")
contrib = _types.ModuleType("mxlite.symbol.contrib", "``mx.sym.contrib``")
random = _types.ModuleType("mxlite.symbol.random", "``mx.sym.random``")
image = _types.ModuleType("mxlite.symbol.image", "``mx.sym.image``")
_internal = _types.ModuleType("mxlite.symbol._internal", "raw op functions")
sparse = _types.ModuleType("mxlite.symbol.sparse", "``mx.sym.sparse``: the ops MXNet lists "
                           "for sparse inputs (the same functions as ``mx.sym.<name>``)")
op = _internal
_PYTHON_FUNCTIONS = {"Symbol", "Variable", "var", "Group", "load", "load_json"} | set(
    _functions.__all__)
_SUBMODULES = {"linalg": linalg, "contrib": contrib, "random": random, "image": image,
               "_internal": _internal}


def _op_call(op_name, inputs, params, hint=None):
    """Apply the registered op ``op_name`` to Symbols (used by Symbol arithmetic)."""
    return _register_mod.op_call(_registry.OPS[op_name], inputs, params, hint=hint)


def _add_op(op_decl):
    g = globals()
    for fname in (op_decl.name,) + op_decl.aliases:
        ns, short = _namespace_of(fname)
        # MXNet's mx.sym.random functions call _internal._random_*: nodes keep that name
        fn = _register_mod.make_function(op_decl, fname, fname if ns == "random" else short)
        setattr(_internal, fname, fn)
        if ns:
            mod = _SUBMODULES.get(ns)
            if mod is not None and not hasattr(mod, short):
                setattr(mod, short, fn)
            if ns == "linalg" and not fname.startswith("_"):
                g[fname] = fn
        elif fname not in _PYTHON_FUNCTIONS:
            g[fname] = fn
        short = _nd_sparse.listed_as(fname)
        if short is not None and not hasattr(sparse, short):
            setattr(sparse, short, fn)


for _op in list(_registry.OPS.values()):
    _add_op(_op)
_registry._listeners.append(_add_op)

from . import control_flow as _control_flow  # noqa: E402

for _name in _control_flow.__all__:
    setattr(contrib, _name, getattr(_control_flow, _name))


def _randn(*shape, loc=0.0, scale=1.0, dtype=None, **kwargs):
    """Normal samples of ``shape`` given as positional sizes (``mx.sym.random.randn(2, 3)``)."""
    return random.normal(loc=loc, scale=scale, shape=shape, dtype=dtype, **kwargs)


def _shuffle(data, **kwargs):
    """``data`` with its first axis randomly permuted."""
    return _internal._shuffle(data, **kwargs)


def _rand_zipfian(true_classes, num_sampled, range_max):
    """Symbolic ``mx.nd.contrib.rand_zipfian``: ``(sampled_classes, expected_count_true,
    expected_count_sampled)``."""
    from ..nd.contrib import _zipfian
    import sys
    return _zipfian(sys.modules[__name__], true_classes, num_sampled, range_max,
                    lambda high: random.uniform(low=0.0, high=high, shape=(num_sampled,),
                                                dtype="float64"))


_rand_zipfian.__name__ = "rand_zipfian"
contrib.rand_zipfian = _rand_zipfian
_randn.__name__, _shuffle.__name__ = "randn", "shuffle"
random.randn, random.shuffle = _randn, _shuffle
pow = power  # noqa: A001,F405 (MXNet's mx.sym.pow)

# ``mx.nd.np``/``mx.nd.npx`` (``mx.sym.np``/``mx.sym.npx``) load on first use.
__getattr__ = _np_submodules(__name__, globals())
