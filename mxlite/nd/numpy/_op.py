"""The functions of ``mx.nd.np`` (MXNet's ``mxnet.ndarray.numpy._op``)."""
from ...numpy.multiarray import *  # noqa: F401,F403
