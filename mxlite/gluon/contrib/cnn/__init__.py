"""``mx.gluon.contrib.cnn``: the deformable convolution layers (v1 and the modulated
v2), as in MXNet 1.9.1."""
from .conv_layers import *  # noqa: F401,F403
from . import conv_layers  # noqa: F401

__all__ = conv_layers.__all__
