"""``mx.nd.np``: the ``mx.np`` functions (``F.np`` of a HybridBlock run imperatively)."""
from ...numpy.multiarray import *  # noqa: F401,F403
from ...numpy import linalg, random  # noqa: F401
from . import _op  # noqa: F401
