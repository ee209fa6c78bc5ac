"""``mx.gluon.model_zoo``: predefined network architectures (``vision``).

Pretrained weights cannot be downloaded here; build the network and load a local
``.params`` file saved by MXNet with ``net.load_parameters(path)``.
"""
from . import vision
from . import model_store  # noqa: F401

__all__ = ["vision"]
