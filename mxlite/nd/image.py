"""``mx.nd.image``: the image ops (``_image_*``: to_tensor, normalize, resize, crop,
flips, colour and lighting jitter), as ``mxnet.ndarray.image``. The functions are added
from the registry; the ops live in ``mxlite/operator/image_ops.py``."""
