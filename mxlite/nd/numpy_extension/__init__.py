"""``mx.nd.npx``: the ``mx.npx`` ops (``F.npx`` of a HybridBlock run imperatively)."""
from ...numpy_extension._op import *  # noqa: F401,F403
from ...numpy_extension import random, image  # noqa: F401
from ...numpy_extension import _op  # noqa: F401
