"""Image transforms, as ``mxnet.gluon.data.vision.transforms``, on NumPy (no OpenCV needed).

Each transform is a small picklable callable object (so that worker processes under
``spawn`` can receive it): ``t(x)`` takes an NDArray (or a NumPy array) and returns an
NDArray on the same context. Images are HWC (or NHWC for a batch) until ``ToTensor``
turns them into CHW float32.

Random transforms draw from ``mx.random`` (``mx.random.seed``), except
``RandomResizedCrop`` which uses Python's ``random`` as MXNet's ``image.random_size_crop``.
"""
import numbers
import random as _pyrandom

import numpy as np

from .... import nd
from ....context import cpu
from ....nd.ndarray import _wrap
from ....operator.image_ops import _resize_linear, _resize_nearest
from ...utils import _same_class

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Resize", "CenterCrop",
           "RandomResizedCrop", "RandomFlipLeftRight", "RandomFlipTopBottom",
           "RandomBrightness", "RandomContrast"]


def _to_numpy(x):
    """The image as a NumPy array, to read only: no copy for an NDArray in host memory
    (every transform makes its result in a new array)."""
    if isinstance(x, nd.NDArray):
        d = x._data
        return d if isinstance(d, np.ndarray) else x.asnumpy()
    return np.asarray(x)


def _like(y, x):
    """``y`` (NumPy) as an NDArray of its own dtype, on the context of input ``x`` (a copy,
    for results that may be views of the input)."""
    ctx = x.context if isinstance(x, nd.NDArray) else cpu()
    return _same_class(nd.array(y, dtype=y.dtype, ctx=ctx), x)


def _new(y, x):
    """Like ``_like`` for a ``y`` made by the transform itself: wrapped without a copy
    when it stays in host memory."""
    ctx = x.context if isinstance(x, nd.NDArray) else cpu()
    if ctx.device_typeid == 2:
        return _same_class(nd.array(y, dtype=y.dtype, ctx=ctx), x)
    return _same_class(_wrap(y, ctx), x)


def _uniform(low, high):
    from .... import random as mx_random
    return float(mx_random.get_generator(cpu()).uniform(low, high))


def _cast_like(y, dtype):
    """Float result ``y`` back to image dtype ``dtype``: integers saturate and truncate
    (as MXNet's image ops do), floats keep their type."""
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.clip(y, info.min, info.max).astype(dtype)
    return y.astype(dtype, copy=False)


class _Transform:
    """Base of the transforms: ``t(x)`` calls ``forward(x)``; ``hybridize`` is a no-op
    kept so that code written for MXNet's HybridBlock transforms runs unchanged."""

    def __call__(self, x):
        return self.forward(x)

    def forward(self, x):
        raise NotImplementedError

    def hybridize(self, *args, **kwargs):
        """Does nothing (these transforms are not graphs)."""

    def __repr__(self):
        args = ", ".join("%s=%r" % (k.lstrip("_"), v) for k, v in vars(self).items())
        return "%s(%s)" % (type(self).__name__, args)


class Compose(_Transform):
    """Apply several transforms (or any callables) in sequence.

    Examples
    --------
    >>> t = Compose([Resize(300), CenterCrop(256), ToTensor()])
    >>> t(mx.nd.zeros((224, 224, 3), dtype='uint8')).shape
    (3, 256, 256)
    """

    def __init__(self, transforms):
        self._transforms = list(transforms)

    def forward(self, x):
        for t in self._transforms:
            x = t(x)
        return x

    def __len__(self):
        return len(self._transforms)

    def __getitem__(self, i):
        return self._transforms[i]


class Cast(_Transform):
    """Cast to ``dtype`` (default float32)."""

    def __init__(self, dtype="float32"):
        self._dtype = dtype

    def forward(self, x):
        return _new(_to_numpy(x).astype(self._dtype), x)


class ToTensor(_Transform):
    """HWC (or NHWC) in [0, 255] to CHW (or NCHW) float32 in [0, 1].

    Examples
    --------
    >>> ToTensor()(mx.nd.ones((4, 2, 3), dtype='uint8') * 255).shape
    (3, 4, 2)
    """

    def forward(self, x):
        y = _to_numpy(x)
        if y.ndim not in (3, 4):
            raise ValueError("ToTensor: expected an HWC or NHWC image, got shape %s" % (y.shape,))
        axes = (2, 0, 1) if y.ndim == 3 else (0, 3, 1, 2)
        yt = y.transpose(axes)
        # One pass: the cast to float32, the division and the CHW copy together.
        out = np.empty(yt.shape, dtype=np.float32)
        np.divide(yt, np.float32(255), out=out, dtype=np.float32, casting="unsafe")
        return _new(out, x)


class Normalize(_Transform):
    """``(x[c] - mean[c]) / std[c]`` for each channel of a CHW (or NCHW) tensor.

    ``mean`` and ``std`` are scalars or one value per channel.
    """

    def __init__(self, mean=0.0, std=1.0):
        self._mean = mean
        self._std = std
        # Parsed once: the per-sample call only checks them against the channels.
        self._values = (np.asarray(mean, dtype=np.float32).reshape(-1, 1, 1),
                        np.asarray(std, dtype=np.float32).reshape(-1, 1, 1))

    def forward(self, x):
        y = _to_numpy(x)
        if y.ndim not in (3, 4):
            raise ValueError("Normalize: expected a CHW or NCHW tensor, got shape %s"
                             % (y.shape,))
        channels = y.shape[-3]
        mean, std = self._values
        for name, v in (("mean", mean), ("std", std)):
            if v.shape[0] not in (1, channels):
                raise ValueError("Normalize: %s has %d values but the tensor has %d channels "
                                 "(shape CHW expected; call ToTensor first)"
                                 % (name, v.shape[0], channels))
        dtype = y.dtype if y.dtype.kind == "f" else np.dtype(np.float32)
        out = np.subtract(y, mean, dtype=np.float32)       # a new array, in float32
        out /= std
        return _new(out.astype(dtype, copy=False), x)

    def __repr__(self):
        return "Normalize(mean=%r, std=%r)" % (self._mean, self._std)


# ---------------------------------------------------------------- resizing

def _check_interp(interp, who):
    if interp not in (0, 1):
        raise ValueError("%s: interpolation=%r is not supported by mxlite (it resizes without "
                         "OpenCV); use 1 (bilinear) or 0 (nearest)" % (who, interp))


def _resize_hwc(img, w, h, interp=1):
    """Resize an HWC or NHWC NumPy image to width ``w``, height ``h`` with the kernels of
    ``mx.nd.image.resize`` (OpenCV's numbers); other dtypes than uint8, float32 and
    float64 are resized in float64, integers rounded and saturated."""
    kernel = _resize_linear if interp == 1 else _resize_nearest
    if img.dtype in (np.uint8, np.float32, np.float64):
        return kernel(np, img, h, w)
    y = kernel(np, img.astype(np.float64), h, w)
    return _cast_like(np.rint(y) if np.issubdtype(img.dtype, np.integer) else y, img.dtype)


def _pair(size, who):
    if isinstance(size, numbers.Integral):
        return int(size), int(size)
    if len(size) != 2:
        raise ValueError("%s: size must be an int or a (width, height) pair, got %r" % (who, size))
    return int(size[0]), int(size[1])


class Resize(_Transform):
    """Resize an HWC image (or NHWC batch) to ``size``.

    Parameters
    ----------
    size : int or (width, height)
    keep_ratio : bool, default False
        With an int ``size``, resize the short edge to ``size`` and scale the other
        edge by the same factor (rounded down).
    interpolation : {1, 0}, default 1
        Bilinear (1) or nearest (0), with OpenCV's pixel conventions.

    Examples
    --------
    >>> Resize((1000, 500))(mx.nd.zeros((224, 224, 3))).shape
    (500, 1000, 3)
    """

    def __init__(self, size, keep_ratio=False, interpolation=1):
        _check_interp(interpolation, "Resize")
        self._size = size
        self._keep = keep_ratio
        self._interpolation = interpolation

    def _target(self, h, w):
        if isinstance(self._size, numbers.Integral) and self._keep:
            s = int(self._size)
            if h <= w:
                return int(w * s / h), s
            return s, int(h * s / w)
        return _pair(self._size, "Resize")

    def forward(self, x):
        y = _to_numpy(x)
        if y.ndim not in (3, 4):
            raise ValueError("Resize: expected an HWC or NHWC image, got shape %s" % (y.shape,))
        w, h = self._target(y.shape[-3], y.shape[-2])
        return _new(_resize_hwc(y, w, h, self._interpolation), x)


def random_crop_box(w, h, area, ratio):
    """(x0, y0, w, h) of a crop of a ``w`` x ``h`` image covering a random fraction of it
    (``area``: a minimum, or a (min, max) range) with a log-uniform aspect ratio in
    ``ratio``, drawn with Python's ``random`` as MXNet draws it; None after 10 misses."""
    if isinstance(area, numbers.Number):
        area = (area, 1.0)
    src_area = h * w
    log_ratio = (np.log(ratio[0]), np.log(ratio[1]))
    for _ in range(10):
        target_area = _pyrandom.uniform(area[0], area[1]) * src_area
        new_ratio = np.exp(_pyrandom.uniform(*log_ratio))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            return (_pyrandom.randint(0, w - new_w), _pyrandom.randint(0, h - new_h),
                    new_w, new_h)
    return None


def _scale_down(src_size, size):
    """Shrink crop ``size`` (w, h) to fit ``src_size`` (w, h), keeping its aspect ratio."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def _fixed_crop(img, x0, y0, w, h, size, interp):
    out = img[y0:y0 + h, x0:x0 + w]
    if size is not None and (w, h) != tuple(size):
        out = _resize_hwc(out, size[0], size[1], interp)
    return out


def _center_crop(img, size, interp):
    h, w = img.shape[:2]
    new_w, new_h = _scale_down((w, h), size)
    x0, y0 = int((w - new_w) / 2), int((h - new_h) / 2)
    return _fixed_crop(img, x0, y0, new_w, new_h, size, interp)


class CenterCrop(_Transform):
    """Crop the centre of an HWC image to ``size`` (width, height).

    When the image is smaller than ``size``, the largest centred crop of the same aspect
    ratio is taken and resized up to ``size``, as in MXNet.

    Examples
    --------
    >>> CenterCrop((1000, 500))(mx.nd.zeros((2321, 3482, 3))).shape
    (500, 1000, 3)
    """

    def __init__(self, size, interpolation=1):
        _check_interp(interpolation, "CenterCrop")
        self._size = _pair(size, "CenterCrop")
        self._interpolation = interpolation

    def forward(self, x):
        y = _to_numpy(x)
        if y.ndim != 3:
            raise ValueError("CenterCrop: expected an HWC image, got shape %s" % (y.shape,))
        return _like(_center_crop(y, self._size, self._interpolation), x)


class RandomResizedCrop(_Transform):
    """Crop a random area (``scale`` of the image) with a random aspect ratio (``ratio``),
    then resize to ``size``; as MXNet's ``image.random_size_crop`` (10 tries, then a
    centre crop).

    Parameters
    ----------
    size : int or (width, height)
    scale : (float, float), default (0.08, 1.0)
        Range of the crop's area as a fraction of the image's.
    ratio : (float, float), default (3/4, 4/3)
        Range of the crop's aspect ratio (width / height), sampled log-uniformly.
    interpolation : {1, 0}, default 1
    """

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0), interpolation=1):
        _check_interp(interpolation, "RandomResizedCrop")
        self._size = _pair(size, "RandomResizedCrop")
        self._scale = scale
        self._ratio = ratio
        self._interpolation = interpolation

    def forward(self, x):
        y = _to_numpy(x)
        if y.ndim != 3:
            raise ValueError("RandomResizedCrop: expected an HWC image, got shape %s"
                             % (y.shape,))
        return _like(self._crop(y), x)

    def _crop(self, img):
        h, w = img.shape[:2]
        box = random_crop_box(w, h, self._scale, self._ratio)
        if box is None:
            return _center_crop(img, self._size, self._interpolation)
        return _fixed_crop(img, *box, self._size, self._interpolation)


class _RandomFlip(_Transform):
    _axis_from_end = None   # -2: width of HWC/NHWC, -3: height

    def forward(self, x):
        y = _to_numpy(x)
        if y.ndim not in (3, 4):
            raise ValueError("%s: expected an HWC or NHWC image, got shape %s"
                             % (type(self).__name__, y.shape))
        if _uniform(0.0, 1.0) < 0.5:
            y = np.ascontiguousarray(np.flip(y, axis=y.ndim + self._axis_from_end))
            return _new(y, x)
        return x if isinstance(x, nd.NDArray) else _like(y, x)


class RandomFlipLeftRight(_RandomFlip):
    """Flip an HWC image left to right with probability 0.5."""

    _axis_from_end = -2


class RandomFlipTopBottom(_RandomFlip):
    """Flip an HWC image top to bottom with probability 0.5."""

    _axis_from_end = -3


def _factor_range(amount, who):
    if amount < 0:
        raise ValueError("%s: the jitter amount must be non-negative, got %r" % (who, amount))
    return max(0.0, 1.0 - amount), 1.0 + amount


class RandomBrightness(_Transform):
    """Multiply an image by a factor drawn from ``[max(0, 1 - brightness), 1 + brightness]``.

    uint8 images saturate at 255 and truncate, as in MXNet.
    """

    def __init__(self, brightness):
        self._args = _factor_range(brightness, "RandomBrightness")

    def forward(self, x):
        y = _to_numpy(x)
        alpha = _uniform(*self._args)
        return _new(_cast_like(y.astype(np.float32) * np.float32(alpha), y.dtype), x)


# ITU-R BT.601 luma weights, the ones MXNet's image ops use for the grey level.
_GRAY_COEF = np.array([0.299, 0.587, 0.114], dtype=np.float32)


class RandomContrast(_Transform):
    """Blend an HWC RGB image with its mean grey level: ``x * a + mean_gray * (1 - a)``,
    ``a`` drawn from ``[max(0, 1 - contrast), 1 + contrast]``.
    """

    def __init__(self, contrast):
        self._args = _factor_range(contrast, "RandomContrast")

    def forward(self, x):
        y = _to_numpy(x)
        alpha = np.float32(_uniform(*self._args))
        yf = y.astype(np.float32)
        if y.shape[-1] == 3:
            gray = float((yf * _GRAY_COEF).sum(axis=-1).mean())
        else:
            gray = float(yf.mean())
        out = yf * alpha + np.float32(gray * (1.0 - alpha))
        return _new(_cast_like(out, y.dtype), x)


# Names MXNet's module also shows, served from where they live in mxlite.
from ...._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "Block": "mxlite.gluon.block",
    "CropResize": "mxlite.gluon.data.vision._transforms_more",
    "HybridBlock": "mxlite.gluon.block",
    "HybridSequential": "mxlite.gluon.nn",
    "RandomApply": "mxlite.gluon.data.vision._transforms_more",
    "RandomColorJitter": "mxlite.gluon.data.vision._transforms_more",
    "RandomHue": "mxlite.gluon.data.vision._transforms_more",
    "RandomLighting": "mxlite.gluon.data.vision._transforms_more",
    "RandomRotation": "mxlite.gluon.data.vision._transforms_more",
    "RandomSaturation": "mxlite.gluon.data.vision._transforms_more",
    "Rotate": "mxlite.gluon.data.vision._transforms_more",
    "Sequential": "mxlite.gluon.nn",
    "image": "mxlite.image:",
    "is_np_array": "mxlite.util",
    "numeric_types": "mxlite.base",
})
