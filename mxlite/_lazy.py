"""Names a module shows only because MXNet's module of the same name shows them.

MXNet's modules re-export what they import (``mxnet.io.io.CSVIter``,
``mxnet.module.module.zeros``, ``mxnet.metric.numeric_types``) and user code reaches
them there. :func:`exports` gives a module a PEP 562 ``__getattr__`` that resolves such
a name on first access, so a module lists them without importing (or cycling through)
the modules they live in::

    __getattr__, __dir__ = exports(__name__, {"CSVIter": "mxlite.io.extra_iters",
                                              "nd": "mxlite.nd:"})
"""
import importlib
import sys

__all__ = ["exports", "forward_to"]


def _resolve(target, name):
    """``"pkg.mod"`` -> ``pkg.mod.<name>``; ``"pkg.mod:attr"`` -> ``pkg.mod.attr``;
    ``"pkg.mod:"`` -> the module itself; ``"pkg.mod:func()"`` -> what ``func()`` returns
    (an optional package such as ``cv2``, None when it is not installed)."""
    modname, colon, attr = target.partition(":")
    module = importlib.import_module(modname)
    if colon and not attr:
        return module
    if attr.endswith("()"):
        return getattr(module, attr[:-2])()
    return getattr(module, attr or name)


def exports(module_name, table):
    """A ``(__getattr__, __dir__)`` pair for ``module_name`` serving ``table``
    (``{name: target}``, targets as in :func:`_resolve`). A resolved name is cached
    on the module."""
    def __getattr__(name):
        target = table.get(name)
        if target is None:
            raise AttributeError("module %r has no attribute %r" % (module_name, name))
        try:
            value = _resolve(target, name)
        except ImportError as e:
            raise AttributeError("module %r: %r needs %s (%s)"
                                 % (module_name, name, target, e)) from None
        setattr(sys.modules[module_name], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[module_name])) | set(table))
    return __getattr__, __dir__


def forward_to(module):
    """A ``(__getattr__, __dir__)`` pair serving every public name of ``module`` (also
    names added to it later), for a module that is another name of ``module``."""
    def __getattr__(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(module, name)

    def __dir__():
        return [n for n in dir(module) if not n.startswith("_")]
    return __getattr__, __dir__
