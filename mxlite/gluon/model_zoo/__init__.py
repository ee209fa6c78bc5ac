"""``mx.gluon.model_zoo``: predefined network architectures (``vision``).

``pretrained=True`` loads MXNet's published weights from the local store
(``$MXNET_HOME/models``, see ``model_store``), downloading them when they are missing; or
build the network and load a ``.params`` file with ``net.load_parameters(path)``.
"""
from . import vision
from . import model_store  # noqa: F401

__all__ = ["vision"]
