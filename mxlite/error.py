"""``mx.error``: MXNet's structured error classes and ``register``, which maps an
error-type name (the prefix of an error message, ``"ValueError: ..."``) to a class."""
from .base import MXNetError

__all__ = ["MXNetError", "register", "InternalError", "error_class"]

_CLASSES = {}


def register(func_name=None, cls=None):
    """Register an error class under a name (default: its ``__name__``).

    Usable as ``@register``, ``@register("Name")`` or ``register("Name", cls)``;
    returns the class (or the decorator).
    """
    if callable(func_name) and cls is None:          # @register
        return register(func_name.__name__, func_name)

    def do_register(klass):
        _CLASSES[func_name or klass.__name__] = klass
        return klass
    if cls is None:
        return do_register
    return do_register(cls)


def error_class(name):
    """The class registered under ``name``, :class:`MXNetError` for an unknown name."""
    return _CLASSES.get(name, MXNetError)


@register
class InternalError(MXNetError):
    """An error inside the library; the message asks for a bug report."""

    def __init__(self, msg):
        if "MXNet hint:" not in msg:
            msg += ("\nMXNet hint: You hit an internal error. Please open an issue to "
                    "report it.")
        super().__init__(msg)


for _cls in (ValueError, TypeError, AttributeError, IndexError, NotImplementedError):
    register(_cls.__name__, _cls)
register("MXNetError", MXNetError)
