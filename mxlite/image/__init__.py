"""Image decoding, resizing, augmentation and ``ImageIter``, as ``mxnet.image`` (MXNet 1.x).

Decoding needs OpenCV or Pillow (``pip install pillow``); everything else runs on NumPy.
Interpolation codes follow OpenCV: 0 nearest, 1 bilinear, 2 bicubic, 3 area,
4 Lanczos-4; 9 (auto) and 10 (random) are accepted where MXNet accepts them.
Detection (``ImageDetIter``, ``CreateDetAugmenter``, ...) is in ``mx.image.detection``
(alias ``mx.image.det``).
"""
from . import image  # noqa: F401
from .image import *  # noqa: F401,F403
from .image import __all__ as _image_all
from .augmenters import *  # noqa: F401,F403
from .augmenters import __all__ as _aug_all
from .iterator import ImageIter  # noqa: F401
from .rotate import imrotate, random_rotate  # noqa: F401
from . import detection  # noqa: F401
from . import detection as det  # noqa: F401
from .detection import *  # noqa: F401,F403
from .detection import __all__ as _det_all

__all__ = (list(_image_all) + list(_aug_all) + ["ImageIter", "imrotate", "random_rotate"]
           + list(_det_all))


# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "cv2": "mxlite.recordio:_import_cv2()",
    "io": "mxlite.io:",
    "is_np_array": "mxlite.util",
    "nd": "mxlite.nd:",
    "numeric_types": "mxlite.base",
    "recordio": "mxlite.recordio:",
})
