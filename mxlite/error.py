"""``mx.error``: MXNet's structured error classes and ``register``, which maps an
error-type name (the prefix of an error message, ``"ValueError: ..."``) to a class."""
from .base import MXNetError, register_error, error_types

__all__ = ["MXNetError", "register", "InternalError", "error_class"]

register = register_error


def error_class(name):
    """The class registered under ``name``, :class:`MXNetError` for an unknown name."""
    return error_types.get(name, MXNetError)


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
