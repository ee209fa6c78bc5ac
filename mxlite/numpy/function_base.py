"""``mx.np.meshgrid`` (MXNet's ``mxnet.numpy.function_base``)."""
from ._shape import meshgrid  # noqa: F401

__all__ = ["meshgrid"]
