"""``mx.gluon.contrib.data``: IntervalSampler and the WikiText language-model
datasets (``text``), as in MXNet 1.9.1."""
from . import text  # noqa: F401
from .sampler import *  # noqa: F401,F403
