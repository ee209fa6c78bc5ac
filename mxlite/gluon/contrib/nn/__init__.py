"""``mx.gluon.contrib.nn``: concurrent containers, Identity, SparseEmbedding and
pixel-shuffle upsampling layers, as in MXNet 1.9.1 (SyncBatchNorm is not provided)."""
from .basic_layers import *  # noqa: F401,F403
from . import basic_layers  # noqa: F401

__all__ = basic_layers.__all__
