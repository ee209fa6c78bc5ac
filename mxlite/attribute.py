"""Attribute scopes for symbols: ``AttrScope``, as ``mxnet.attribute``.

Attributes set by a scope go on every symbol created inside it (variables, op nodes
and the weights an op creates), e.g. ``ctx_group`` or ``lr_mult``::

    with mx.AttrScope(lr_mult='0.1'):
        fc = mx.sym.FullyConnected(data, num_hidden=10, name='fc')
    fc.attr_dict()['fc_weight']['__lr_mult__']     # '0.1'
"""
import threading

__all__ = ["AttrScope", "with_hidden_keys"]

# Keys MXNet also stores as ``__key__`` (what the optimizer and executor read).
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
               "profiler_scope")


def with_hidden_keys(attrs):
    """``attrs`` with each hidden key present both as ``key`` and ``__key__``, as MXNet
    stores them (``lr_mult='2'`` and ``__lr_mult__='2'``)."""
    for key in HIDDEN_KEYS:
        dunder = "__%s__" % key
        if key in attrs:
            attrs[dunder] = attrs[key]
        elif dunder in attrs:
            attrs[key] = attrs[dunder]
    return attrs


class AttrScope:
    """A ``with`` scope whose attributes (string values) every symbol made inside it
    receives; nested scopes add to the outer ones.

    Parameters
    ----------
    **kwargs
        Attribute names and string values.
    """

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise ValueError("AttrScope: attribute %r must be a string, got %s"
                                 % (k, type(v).__name__))
        self._attr = kwargs
        self._old = None

    def get(self, attr):
        """The scope's attributes updated with ``attr`` (a dict or None), as a new dict."""
        if not self._attr:
            return dict(attr) if attr else {}
        ret = dict(self._attr)
        if attr:
            ret.update(attr)
        return ret

    def __enter__(self):
        self._old = _state.current
        attr = dict(self._old._attr)
        attr.update(self._attr)
        self._attr = attr
        _state.current = self
        return self

    def __exit__(self, *exc):
        _state.current = self._old

    @classmethod
    def current(cls):
        """The innermost scope (an empty one outside any ``with``)."""
        return _state.current


class _State(threading.local):
    def __init__(self):
        self.current = AttrScope()


_state = _State()


# Names MXNet's module also shows, served from where they live in mxlite.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "classproperty": "mxlite.base",
    "string_types": "mxlite.base",
    "with_metaclass": "mxlite.base",
})
