"""``import mxnet`` served by mxlite: a meta-path finder mapping ``mxnet.X.Y`` to
``mxlite.X.Y`` (with MXNet's module names: ``mxnet.ndarray`` is ``mxlite.nd``)."""
import importlib
import importlib.abc
import importlib.util
import sys
import types

# MXNet module names whose mxlite module has another name
_RENAMES = {"ndarray": "nd", "sym": "symbol", "mod": "module", "kv": "kvstore",
            "init": "initializer", "viz": "visualization"}


def target_name(fullname):
    """The mxlite module name for an ``mxnet`` module name."""
    parts = fullname.split(".")
    parts[0] = "mxlite"
    if len(parts) > 1:
        parts[1] = _RENAMES.get(parts[1], parts[1])
    return ".".join(parts)


def resolve(fullname):
    """The mxlite module for ``fullname``: imported, or a module-typed attribute of its
    parent (``mxlite.symbol.random`` is built at import time, not a file)."""
    name = target_name(fullname)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError:
        parent, _, attr = name.rpartition(".")
        mod = getattr(importlib.import_module(parent), attr, None) if parent else None
        if isinstance(mod, types.ModuleType):
            return mod
        raise


class MXNetFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``mxnet`` and ``mxnet.*`` and hands back the mxlite module itself."""

    def find_spec(self, fullname, path, target=None):
        if fullname != "mxnet" and not fullname.startswith("mxnet."):
            return None
        try:
            module = resolve(fullname)
        except ImportError:
            return None
        spec = importlib.util.spec_from_loader(fullname, self)
        spec.loader_state = (module, module.__spec__)
        return spec

    def create_module(self, spec):
        return spec.loader_state[0]

    def exec_module(self, module):
        # importlib sets __spec__ on the module it loads; keep mxlite's own.
        module.__spec__ = module.__spec__.loader_state[1]


def install():
    """Install the finder and alias every mxlite module imported so far."""
    if not any(isinstance(f, MXNetFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, MXNetFinder())
    for name, mod in list(sys.modules.items()):
        if name == "mxlite" or name.startswith("mxlite."):
            sys.modules["mxnet" + name[len("mxlite"):]] = mod
    for mx_name, ours in _RENAMES.items():
        mod = sys.modules.get("mxlite." + ours)
        if mod is not None:
            sys.modules["mxnet." + mx_name] = mod
