"""``mx.gluon.contrib.cnn``: the deformable convolution layer, as in MXNet 1.9.1
(``ModulatedDeformableConvolution`` is not provided: mxlite has no
``_contrib_ModulatedDeformableConvolution`` op)."""
from .conv_layers import *  # noqa: F401,F403
from . import conv_layers  # noqa: F401

__all__ = conv_layers.__all__
