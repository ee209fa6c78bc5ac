"""Automatic names for symbols: ``NameManager`` and ``Prefix``, as ``mxnet.name``."""
import threading

__all__ = ["NameManager", "Prefix", "current"]


class NameManager:
    """Gives each unnamed symbol ``<hint><n>`` with a counter per hint (``fullyconnected0``).

    Use as a ``with`` scope to reset naming for a block of code.
    """

    def __init__(self):
        self._counter = {}
        self._old = None

    def get(self, name, hint):
        """``name`` if given, else the next automatic name for ``hint``."""
        if name:
            return name
        n = self._counter.get(hint, 0)
        self._counter[hint] = n + 1
        return "%s%d" % (hint, n)

    def __enter__(self):
        self._old = _state.current
        _state.current = self
        return self

    def __exit__(self, *exc):
        _state.current = self._old


class Prefix(NameManager):
    """A NameManager that prepends ``prefix`` to every name, given or automatic."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


class _State(threading.local):
    def __init__(self):
        self.current = NameManager()


_state = _State()


def current():
    """The NameManager in effect."""
    return _state.current


# Names MXNet's module also shows, served from where they live in mxlite.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "classproperty": "mxlite.base",
    "with_metaclass": "mxlite.base",
})
