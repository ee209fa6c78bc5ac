"""More of ``gluon.data.vision.transforms``: crop-and-resize, random application, the
colour jitters MXNet runs through its ``image`` ops, and rotations."""
import random as _pyrandom

import numpy as np

from .... import nd
from ....image import rotate as _rotate
from .transforms import _Transform

__all__ = ["CropResize", "RandomApply", "RandomColorJitter", "RandomHue", "RandomLighting",
           "RandomSaturation", "Rotate", "RandomRotation"]


class CropResize(_Transform):
    """Crop the HWC image (or NHWC batch) to ``width x height`` at ``(x, y)``, then
    resize to ``size`` (int or ``(w, h)``) when given, with ``interpolation``."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        self._x, self._y, self._width, self._height = x, y, width, height
        self._size = size
        self._interpolation = interpolation

    def forward(self, x):
        out = nd.image.crop(x, x=self._x, y=self._y, width=self._width, height=self._height)
        if self._size:
            out = nd.image.resize(out, size=self._size, keep_ratio=False,
                                  interp=1 if self._interpolation is None
                                  else self._interpolation)
        return out


class RandomApply(_Transform):
    """Apply ``transforms`` with probability ``p`` (Python's ``random``)."""

    def __init__(self, transforms, p=0.5):
        self.transforms = transforms
        self.p = p

    def forward(self, x):
        if self.p < _pyrandom.random():
            return x
        return self.transforms(x)


class _ImageOp(_Transform):
    """A transform that is one ``mx.nd.image`` op with fixed keyword arguments."""
    _op = None

    def forward(self, x):
        return getattr(nd.image, self._op)(x, **self._args)


class RandomColorJitter(_ImageOp):
    """Jitter brightness, contrast, saturation and hue (each an amount >= 0), in random
    order, as ``mx.nd.image.random_color_jitter``."""
    _op = "random_color_jitter"

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        self._args = dict(brightness=brightness, contrast=contrast, saturation=saturation,
                          hue=hue)


class RandomHue(_ImageOp):
    """Rotate the hue by a factor from ``[max(0, 1 - hue), 1 + hue]``."""
    _op = "random_hue"

    def __init__(self, hue):
        self._args = dict(min_factor=max(0, 1 - hue), max_factor=1 + hue)


class RandomSaturation(_ImageOp):
    """Scale the saturation by a factor from ``[max(0, 1 - saturation), 1 + saturation]``."""
    _op = "random_saturation"

    def __init__(self, saturation):
        self._args = dict(min_factor=max(0, 1 - saturation), max_factor=1 + saturation)


class RandomLighting(_ImageOp):
    """AlexNet-style PCA lighting noise with standard deviation ``alpha``."""
    _op = "random_lighting"

    def __init__(self, alpha):
        self._args = dict(alpha_std=alpha)


def _check_float32(x, who):
    if x.dtype != np.float32:
        raise TypeError("%s: only float32 images are supported (got %s); apply it after "
                        "ToTensor" % (who, x.dtype))


class Rotate(_Transform):
    """Rotate a CHW (or NCHW) float32 image by ``rotation_degrees`` (see
    ``mx.image.imrotate``)."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        _check_float32(x, "Rotate")
        return _rotate.imrotate(x, *self._args)


class RandomRotation(_Transform):
    """With probability ``rotate_with_proba``, rotate by an angle drawn from
    ``angle_limits`` (degrees, ``(lower, upper)``)."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        lower, upper = angle_limits
        if lower >= upper:
            raise ValueError("RandomRotation: angle_limits must be an ordered (lower, upper) "
                             "pair, got %r" % (angle_limits,))
        if not 0 <= rotate_with_proba <= 1:
            raise ValueError("RandomRotation: rotate_with_proba must be in [0, 1], got %r"
                             % (rotate_with_proba,))
        self._args = (angle_limits, zoom_in, zoom_out)
        self._rotate_with_proba = rotate_with_proba

    def forward(self, x):
        if np.random.random() > self._rotate_with_proba:
            return x
        _check_float32(x, "RandomRotation")
        return _rotate.random_rotate(x, *self._args)
