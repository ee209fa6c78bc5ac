"""``mx.np``'s array module: the ``ndarray`` class and the functions on it
(MXNet's ``mxnet.numpy.multiarray``). The definitions live in ``_ndarray``,
``_creation``, ``_math`` and ``_shape``; NumPy fallbacks in ``fallback``."""
from ._ndarray import ndarray  # noqa: F401
from ._creation import *  # noqa: F401,F403
from ._math import *  # noqa: F401,F403
from ._shape import *  # noqa: F401,F403
from ._contract import *  # noqa: F401,F403
from .fallback import *  # noqa: F401,F403
from ._numeric import *  # noqa: F401,F403
from ._math import around as round, around as round_  # noqa: F401
