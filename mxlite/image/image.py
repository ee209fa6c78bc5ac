"""Read individual images and transform them, as ``mxnet.image`` (MXNet 1.x).

Images are HWC NDArrays (uint8 from the decoders). Decoding uses OpenCV when it is
installed and Pillow otherwise (``pip install pillow``); resizing is done on NumPy
with OpenCV's conventions (see ``_resize``). Random functions draw from Python's
``random`` module, as MXNet's do, so ``random.seed`` reproduces MXNet's crops.
"""
import random

import numpy as np

from .. import nd
from ..base import MXNetError
from ..context import cpu
from ..recordio import _decode_image
from ..gluon.data.vision.transforms import _scale_down, random_crop_box
from ._resize import INTERP_NAMES, resize_hwc

__all__ = ["imread", "imdecode", "imresize", "scale_down", "copyMakeBorder", "resize_short",
           "fixed_crop", "random_crop", "center_crop", "color_normalize", "random_size_crop"]


def _host(x):
    """``x`` (NDArray or array-like) as a NumPy array, to read only."""
    if isinstance(x, nd.NDArray):
        d = x._data
        return d if isinstance(d, np.ndarray) else x.asnumpy()
    return np.asarray(x)


def _out(y, like):
    """NumPy ``y`` as an NDArray of its dtype on the context of ``like``."""
    ctx = like.context if isinstance(like, nd.NDArray) else cpu()
    return nd.array(np.ascontiguousarray(y), dtype=y.dtype, ctx=ctx)


def _decoded(img, flag):
    """A decoder's array as MXNet gives it: HWC, greyscale as (H, W, 1)."""
    if flag == 0 or img.ndim == 2:
        img = img.reshape(img.shape[0], img.shape[1], 1)
    return img


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """Decode an image (JPEG, PNG, ... bytes) to a uint8 HWC NDArray.

    Parameters
    ----------
    buf : bytes, bytearray, numpy.ndarray or NDArray (uint8)
        The encoded image.
    flag : {1, 0}, default 1
        1: three colour channels; 0: greyscale, shape (H, W, 1).
    to_rgb : bool, default True
        RGB channel order (MXNet's default); False gives OpenCV's BGR.
    out : NDArray, optional
        Written with the result (and returned).

    Examples
    --------
    >>> img = mx.image.imdecode(open('cat.png', 'rb').read())  # doctest: +SKIP
    >>> img.shape                                             # doctest: +SKIP
    (224, 224, 3)
    """
    if isinstance(buf, nd.NDArray):
        buf = buf.asnumpy().astype(np.uint8).tobytes()
    elif isinstance(buf, np.ndarray):
        buf = buf.astype(np.uint8, copy=False).tobytes()
    elif not isinstance(buf, (bytes, bytearray)):
        raise ValueError("imdecode: buf must be of type bytes, bytearray or numpy.ndarray, got "
                         "%s; if you would like to input type str, please convert to bytes"
                         % type(buf).__name__)
    if flag not in (0, 1):
        raise ValueError("imdecode: flag must be 1 (colour) or 0 (greyscale), got %r" % (flag,))
    try:
        img = _decode_image(bytes(buf), flag=int(flag), to_rgb=bool(to_rgb))
    except ImportError:
        raise
    except Exception as e:
        raise MXNetError("imdecode: could not decode the image (%d bytes): %s"
                         % (len(buf), e)) from None
    return _assign(out, _out(_decoded(img, flag), None))


def _assign(out, y):
    if out is None:
        return y
    out[:] = y
    return out


def imread(filename, flag=1, to_rgb=True, out=None):
    """Read and decode an image file to a uint8 HWC NDArray (see ``imdecode``).

    Examples
    --------
    >>> mx.image.imread('flower.jpg', flag=0).shape           # doctest: +SKIP
    (224, 224, 1)
    """
    try:
        with open(filename, "rb") as f:
            buf = f.read()
    except OSError as e:
        raise MXNetError("Imread: '%s' couldn't open file: %s" % (filename, e.strerror)) from None
    return imdecode(buf, flag=flag, to_rgb=to_rgb, out=out)


def _check_interp(interp, who):
    if interp not in INTERP_NAMES:
        raise ValueError("%s: interp must be one of %s (%s), got %r" % (
            who, sorted(INTERP_NAMES), ", ".join("%d %s" % kv for kv in INTERP_NAMES.items()),
            interp))


def imresize(src, w, h, interp=1, out=None):
    """Resize an HWC image to width ``w`` and height ``h`` (OpenCV's ``resize``).

    Parameters
    ----------
    src : NDArray
        HWC image (uint8 or float).
    w, h : int
        Output width and height.
    interp : {0, 1, 2, 3, 4}, default 1
        Nearest, bilinear, bicubic, area, Lanczos-4. uint8 results equal MXNet's for
        0, 2 and 4 and for 3 when shrinking; bilinear (and area when enlarging) can
        differ by 1 where OpenCV rounds differently.
    out : NDArray, optional

    Examples
    --------
    >>> mx.image.imresize(mx.nd.zeros((4, 6, 3), dtype='uint8'), 3, 2).shape
    (2, 3, 3)
    """
    _check_interp(interp, "imresize")
    x = _host(src)
    if x.ndim not in (2, 3):
        raise ValueError("imresize: expected an HWC (or HW) image, got shape %s" % (x.shape,))
    return _assign(out, _out(resize_hwc(x, int(w), int(h), interp), src))


def scale_down(src_size, size):
    """Shrink crop ``size`` (w, h) to fit in ``src_size`` (w, h), keeping its aspect ratio.

    Examples
    --------
    >>> mx.image.scale_down((640, 480), (720, 120))
    (640, 106)
    """
    return _scale_down(src_size, size)


# OpenCV's border codes. NOTE: MXNet's docstring lists another order; these are the
# codes its copyMakeBorder actually applies (checked against MXNet 1.9.1).
_BORDER_MODES = {1: "edge", 2: "symmetric", 3: "wrap", 4: "reflect"}


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=(), out=None):
    """Pad an HWC image (OpenCV's ``copyMakeBorder``).

    ``type`` is OpenCV's border code: 0 constant (``values`` per channel, else
    ``value``), 1 replicate (``aaa|abc``), 2 reflect (``cba|abc``), 3 wrap (``abc|abc``),
    4 reflect-101 (``dcb|abcd``).

    Examples
    --------
    >>> mx.image.copyMakeBorder(mx.nd.zeros((2, 2, 3)), 1, 2, 3, 4).shape
    (5, 9, 3)
    """
    x = _host(src)
    pads = [(int(top), int(bot)), (int(left), int(right))] + [(0, 0)] * (x.ndim - 2)
    if min(min(p) for p in pads) < 0:
        raise ValueError("copyMakeBorder: margins must be non-negative, got %r"
                         % ((top, bot, left, right),))
    if type == 0:
        y = np.pad(x, pads, mode="constant")
        fill = np.zeros(x.shape[2:] or (1,), np.float64)
        if len(values):
            n = min(len(values), fill.size)
            fill[:n] = values[:n]
        else:
            fill[:] = value
        mask = np.ones(y.shape[:2], bool)
        mask[top:top + x.shape[0], left:left + x.shape[1]] = False
        y[mask] = fill.astype(x.dtype) if x.ndim == 3 else fill[0]
    elif type in _BORDER_MODES:
        y = np.pad(x, pads, mode=_BORDER_MODES[type])
    else:
        raise ValueError("copyMakeBorder: type must be 0-4 (constant, replicate, reflect, "
                         "wrap, reflect-101), got %r" % (type,))
    return _assign(out, _out(y, src))


def _get_interp_method(interp, sizes=()):
    """The interpolation for a resize from (old_h, old_w) to (new_h, new_w) in ``sizes``:
    9 picks cubic to enlarge, area to shrink, else bilinear; 10 picks one at random."""
    if interp == 9:
        if sizes:
            oh, ow, nh, nw = sizes
            if nh > oh and nw > ow:
                return 2
            if nh < oh and nw < ow:
                return 3
            return 1
        return 2
    if interp == 10:
        return random.randint(0, 4)
    if interp not in INTERP_NAMES:
        raise ValueError("Unknown interp method %d" % interp)
    return interp


def resize_short(src, size, interp=2):
    """Resize the shorter edge to ``size``, the longer by the same factor (rounded down).

    Examples
    --------
    >>> mx.image.resize_short(mx.nd.zeros((20, 30, 3), dtype='uint8'), 10).shape
    (10, 15, 3)
    """
    h, w = src.shape[:2]
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """Crop ``src`` at (x0, y0) with width ``w`` and height ``h``; resize to ``size``
    (w, h) if given and different."""
    out = _out(_host(src)[y0:y0 + h, x0:x0 + w], src)
    if size is not None and (w, h) != tuple(size):
        sizes = (h, w, size[1], size[0])
        out = imresize(out, *size, interp=_get_interp_method(interp, sizes))
    return out


def random_crop(src, size, interp=2):
    """Crop a random ``size`` (w, h) window (scaled down to fit, then resized back up).

    Returns
    -------
    NDArray, (x0, y0, w, h)
        The crop and its box in ``src``.
    """
    h, w = src.shape[:2]
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
    return out, (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """Crop the centre ``size`` (w, h) window (scaled down to fit, then resized back up).

    Examples
    --------
    >>> out, box = mx.image.center_crop(mx.nd.zeros((10, 20, 3), dtype='uint8'), (8, 4))
    >>> out.shape, box
    ((4, 8, 3), (6, 3, 8, 4))
    """
    h, w = src.shape[:2]
    new_w, new_h = scale_down((w, h), size)
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    out = fixed_crop(src, x0, y0, new_w, new_h, size, interp)
    return out, (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """``(src - mean) / std`` in place (``src`` is modified, as in MXNet) and returned."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2):
    """Crop a random area (``area``: a minimum fraction, or a (min, max) range) with a
    random aspect ratio in ``ratio`` (log-uniform), resized to ``size`` (w, h); after 10
    misses, a centre crop.

    Returns
    -------
    NDArray, (x0, y0, w, h)
    """
    h, w = src.shape[:2]
    box = random_crop_box(w, h, area, ratio)
    if box is None:
        return center_crop(src, size, interp)
    return fixed_crop(src, *box, size, interp), box



# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "Augmenter": "mxlite.image.augmenters",
    "BrightnessJitterAug": "mxlite.image.augmenters",
    "CastAug": "mxlite.image.augmenters",
    "CenterCropAug": "mxlite.image.augmenters",
    "ColorJitterAug": "mxlite.image.augmenters",
    "ColorNormalizeAug": "mxlite.image.augmenters",
    "ContrastJitterAug": "mxlite.image.augmenters",
    "CreateAugmenter": "mxlite.image.augmenters",
    "ForceResizeAug": "mxlite.image.augmenters",
    "HorizontalFlipAug": "mxlite.image.augmenters",
    "HueJitterAug": "mxlite.image.augmenters",
    "ImageIter": "mxlite.image.iterator",
    "LightingAug": "mxlite.image.augmenters",
    "RandomCropAug": "mxlite.image.augmenters",
    "RandomGrayAug": "mxlite.image.augmenters",
    "RandomOrderAug": "mxlite.image.augmenters",
    "RandomSizedCropAug": "mxlite.image.augmenters",
    "ResizeAug": "mxlite.image.augmenters",
    "SaturationJitterAug": "mxlite.image.augmenters",
    "SequentialAug": "mxlite.image.augmenters",
    "cv2": "mxlite.recordio:_import_cv2()",
    "imrotate": "mxlite.image.rotate",
    "io": "mxlite.io:",
    "is_np_array": "mxlite.util",
    "numeric_types": "mxlite.base",
    "random_rotate": "mxlite.image.rotate",
    "recordio": "mxlite.recordio:",
})
