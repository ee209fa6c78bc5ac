"""``mx.np.broadcast_arrays`` (MXNet's ``mxnet.numpy.stride_tricks``)."""
from ._shape import broadcast_arrays  # noqa: F401

__all__ = ["broadcast_arrays"]
