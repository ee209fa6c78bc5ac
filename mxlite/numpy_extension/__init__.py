"""``mx.npx``: MXNet's extensions to the np interface: the semantics switches
(``set_np``, ``use_np`` ...), neural-network ops on ``mx.np.ndarray`` (``relu``,
``softmax``, ``fully_connected``, ``convolution`` ...), ``npx.reshape`` with MXNet's
codes, devices, and ``save``/``load``.

The ops are the registry's (``_npx_relu`` is ``relu``): the same kernels and
gradients as ``mx.nd``'s, taking and giving np arrays.
"""
from ..util import (set_np, reset_np, is_np_array, is_np_shape, set_np_shape, np_shape,  # noqa: F401
                    np_array, use_np, use_np_shape, use_np_array)
from ..context import Context, cpu, gpu, cpu_pinned, current_context, num_gpus, gpu_memory_info  # noqa: F401,E501
from ..engine import waitall  # noqa: F401
from ._op import *  # noqa: F401,F403
from .utils import save, load, savez  # noqa: F401
from . import random, image, _op  # noqa: F401
from ..random import seed  # noqa: F401
