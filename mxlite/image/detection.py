"""Object detection augmenters and ``ImageDetIter``, as ``mxnet.image.detection`` (MXNet 1.x).

A detection label is a (num_objects, object_width) float32 NumPy array, one row per
object: ``[class_id, xmin, ymin, xmax, ymax, extra...]`` with corners normalised to
[0, 1]. A detection augmenter maps ``(image, label)`` to a new pair. As in MXNet,
random choices come from Python's ``random`` (seed it with ``random.seed``), so the
same seed gives MXNet's boxes.

The raw label of a record or list entry is flat:
``[header_width, object_width, header..., object 0..., object 1..., ...]``.
"""
import logging
import math
import numbers
import random
import warnings

import numpy as np

from .. import io
from .. import nd
from .augmenters import (Augmenter, KwargsDumps, CastAug, ColorJitterAug, ColorNormalizeAug,
                         ForceResizeAug, HueJitterAug, LightingAug, RandomGrayAug, ResizeAug,
                         _PCA_EIGVAL, _PCA_EIGVEC)
from .image import copyMakeBorder, fixed_crop
from .iterator import ImageIter

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug",
           "DetRandomCropAug", "DetRandomPadAug", "CreateMultiRandCropAugmenter",
           "CreateDetAugmenter", "ImageDetIter"]

_MEAN = np.array([123.68, 116.28, 103.53])
_STD = np.array([58.395, 57.12, 57.375])


class DetAugmenter(KwargsDumps):
    """Base class of detection augmenters: ``aug(src, label) -> (src, label)``.

    Keeps its constructor arguments for ``dumps`` (arrays as lists).
    """

    def __call__(self, src, label):
        raise NotImplementedError("Must override implementation.")


class DetBorrowAug(DetAugmenter):
    """Apply an image ``Augmenter`` that leaves the boxes unchanged (resize, colour, ...).

    Examples
    --------
    >>> aug = mx.image.DetBorrowAug(mx.image.CastAug())
    >>> aug(mx.nd.zeros((2, 2, 3), dtype='uint8'), label)[0].dtype   # doctest: +SKIP
    <class 'numpy.float32'>
    """

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError("DetBorrowAug: expected an mx.image.Augmenter, got %s"
                            % type(augmenter).__name__)
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        # The borrowed augmenter's own dumps, not its JSON quoted again.
        return [type(self).__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """Apply one of ``aug_list`` at random, or none with probability ``skip_prob``.

    As MXNet, the list is shuffled in place and its first augmenter applied.
    """

    def __init__(self, aug_list, skip_prob=0):
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise ValueError("DetRandomSelectAug: aug_list takes DetAugmenters only, got %s"
                                 % type(aug).__name__)
        self.aug_list = aug_list
        self.skip_prob = skip_prob if aug_list else 1      # nothing to select: always skip

    def dumps(self):
        return [type(self).__name__.lower(), [x.dumps() for x in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return src, label
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """Flip image and boxes left-right with probability ``p`` (the label in place)."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
            xmin = 1.0 - label[:, 1]
            label[:, 1] = 1.0 - label[:, 3]
            label[:, 3] = xmin
        return src, label


def _as_range(value, who, name):
    """A (low, high) pair; a single number means (value, value)."""
    if isinstance(value, (tuple, list)):
        return value
    if not isinstance(value, numbers.Number):
        raise TypeError("%s: %s must be a number or a (low, high) pair, got %r"
                        % (who, name, value))
    logging.info("Using fixed %s: %s in %s", name, value, who)
    return (value, value)


def _areas(boxes):
    """Areas of (xmin, ymin, xmax, ymax) rows; empty boxes count 0."""
    heights = np.maximum(0, boxes[:, 3] - boxes[:, 1])
    widths = np.maximum(0, boxes[:, 2] - boxes[:, 0])
    return heights * widths


def _intersect(boxes, xmin, ymin, xmax, ymax):
    """The boxes clipped to a window; rows that miss it become all zero."""
    left = np.maximum(boxes[:, 0], xmin)
    right = np.minimum(boxes[:, 2], xmax)
    top = np.maximum(boxes[:, 1], ymin)
    bot = np.minimum(boxes[:, 3], ymax)
    out = boxes.copy()
    out[:, 0], out[:, 1], out[:, 2], out[:, 3] = left, top, right, bot
    out[np.logical_or(left >= right, top >= bot), :] = 0
    return out


class DetRandomCropAug(DetAugmenter):
    """Random crop that keeps the objects: a window of random aspect ratio and area
    (fractions of the image) is accepted when every object it touches keeps more than
    ``min_object_covered`` of its area; objects left with ``min_eject_coverage`` or less
    are dropped. After ``max_attempts`` rejected windows the input is returned.

    Parameters
    ----------
    min_object_covered : float, default 0.1
    aspect_ratio_range : (float, float) or float, default (0.75, 1.33)
        Width / height of the window.
    area_range : (float, float) or float, default (0.05, 1.0)
    min_eject_coverage : float, default 0.3
    max_attempts : int, default 50
    """

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        who = type(self).__name__
        aspect_ratio_range = _as_range(aspect_ratio_range, who, "aspect_ratio_range")
        area_range = _as_range(area_range, who, "area_range")
        super().__init__(min_object_covered=min_object_covered,
                         aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered = min_object_covered
        self.min_eject_coverage = min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.enabled = False
        # NOTE: MXNet means to warn here, but passes the range as the warning category
        # and so raises TypeError; we warn and disable the augmenter as intended.
        if area_range[1] <= 0 or area_range[0] > area_range[1]:
            warnings.warn("Skip DetRandomCropAug due to invalid area_range: %s" % (area_range,))
        elif aspect_ratio_range[0] > aspect_ratio_range[1] or aspect_ratio_range[0] <= 0:
            warnings.warn("Skip DetRandomCropAug due to invalid aspect_ratio_range: %s"
                          % (aspect_ratio_range,))
        else:
            self.enabled = True

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return src, label

    def _check_satisfy_constraints(self, label, xmin, ymin, xmax, ymax, width, height):
        """Whether the pixel window covers enough of every object it touches."""
        if (xmax - xmin) * (ymax - ymin) < 2:
            return False        # a single pixel
        x1, y1 = float(xmin) / width, float(ymin) / height
        x2, y2 = float(xmax) / width, float(ymax) / height
        object_areas = _areas(label[:, 1:])
        valid = np.where(object_areas * width * height > 2)[0]
        if valid.size < 1:
            return False
        intersects = _intersect(label[valid, 1:], x1, y1, x2, y2)
        coverages = _areas(intersects) / object_areas[valid]
        coverages = coverages[coverages > 0]
        return coverages.size > 0 and np.amin(coverages) > self.min_object_covered

    def _update_labels(self, label, crop_box, height, width):
        """Boxes in the coordinates of ``crop_box`` (x, y, w, h in pixels), clipped to
        it; None when no object keeps more than ``min_eject_coverage`` of its area."""
        xmin, ymin = float(crop_box[0]) / width, float(crop_box[1]) / height
        w, h = float(crop_box[2]) / width, float(crop_box[3]) / height
        out = label.copy()
        out[:, (1, 3)] -= xmin
        out[:, (2, 4)] -= ymin
        out[:, (1, 3)] /= w
        out[:, (2, 4)] /= h
        out[:, 1:5] = np.minimum(1, np.maximum(0, out[:, 1:5]))
        coverage = _areas(out[:, 1:]) * w * h / _areas(label[:, 1:])
        valid = np.logical_and(out[:, 3] > out[:, 1], out[:, 4] > out[:, 2])
        valid = np.where(np.logical_and(valid, coverage > self.min_eject_coverage))[0]
        if valid.size < 1:
            return None
        return out[valid, :]

    def _crop_size(self, ratio, height, width, min_area, max_area):
        """A random (w, h) of aspect ``ratio`` and area in [min_area, max_area], or None.

        NOTE: the draws and the rounding fixes follow MXNet step by step so that a
        given seed gives MXNet's window.
        """
        h = int(round(math.sqrt(min_area / ratio)))
        max_h = int(round(math.sqrt(max_area / ratio)))
        if round(max_h * ratio) > width:
            max_h = int((width + 0.4999999) / ratio)   # largest h with round(h*ratio) <= width
        max_h = min(max_h, height)
        h = min(h, max_h)
        if h < max_h:
            h = random.randint(h, max_h)
        w = int(round(h * ratio))
        area = w * h
        if area < min_area:
            h += 1
            w = int(round(h * ratio))
            area = w * h
        if area > max_area:
            h -= 1
            w = int(round(h * ratio))
            area = w * h
        if not (min_area <= area <= max_area and 0 <= w <= width and 0 <= h <= height):
            return None
        return w, h

    def _random_crop_proposal(self, label, height, width):
        """(x, y, w, h, new_label) of an accepted window, or () after max_attempts."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            size = self._crop_size(ratio, height, width, min_area, max_area)
            if size is None:
                continue
            w, h = size
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._check_satisfy_constraints(label, x, y, x + w, y + h, width, height):
                new_label = self._update_labels(label, (x, y, w, h), height, width)
                if new_label is not None:
                    return (x, y, w, h, new_label)
        return ()


class DetRandomPadAug(DetAugmenter):
    """Random padding ("zoom out"): the image is placed at a random position inside a
    larger canvas filled with ``pad_val``, of random aspect ratio and an area
    ``area_range`` times the image's; the boxes follow.

    Parameters
    ----------
    aspect_ratio_range : (float, float) or float, default (0.75, 1.33)
    area_range : (float, float) or float, default (1.0, 3.0)
    max_attempts : int, default 50
    pad_val : float or (float, float, float), default (128, 128, 128)
        A single number fills the first channel only (the others get 0), as in MXNet.
    """

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0),
                 max_attempts=50, pad_val=(128, 128, 128)):
        who = type(self).__name__
        if not isinstance(pad_val, (list, tuple, numbers.Number)):
            raise TypeError("%s: pad_val must be a number or a tuple, got %r" % (who, pad_val))
        aspect_ratio_range = _as_range(aspect_ratio_range, who, "aspect_ratio_range")
        area_range = _as_range(area_range, who, "area_range")
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val = pad_val
        self.aspect_ratio_range = aspect_ratio_range
        self.area_range = area_range
        self.max_attempts = max_attempts
        self.enabled = False
        # NOTE: warn-and-disable as MXNet intends (its warnings.warn call raises TypeError).
        if area_range[1] <= 1.0 or area_range[0] > area_range[1]:
            warnings.warn("Skip DetRandomPadAug due to invalid parameters: %s" % (area_range,))
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warnings.warn("Skip DetRandomPadAug due to invalid aspect_ratio_range: %s"
                          % (aspect_ratio_range,))
        else:
            self.enabled = True

    def __call__(self, src, label):
        height, width, _ = src.shape
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            values = self.pad_val if isinstance(self.pad_val, (list, tuple)) else (self.pad_val,)
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, 0, values=values)
        return src, label

    def _update_labels(self, label, pad_box, height, width):
        """Boxes in the coordinates of the canvas ``pad_box`` (x, y, w, h in pixels)."""
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + pad_box[0]) / pad_box[2]
        out[:, (2, 4)] = (out[:, (2, 4)] * height + pad_box[1]) / pad_box[3]
        return out

    def _random_pad_proposal(self, label, height, width):
        """(x, y, w, h, new_label) of a canvas, or () after max_attempts (MXNet's draws)."""
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h = int(round(math.sqrt(min_area / ratio)))
            max_h = int(round(math.sqrt(max_area / ratio)))
            if round(h * ratio) < width:
                h = int((width + 0.499999) / ratio)
            h = min(max(h, height), max_h)
            if h < max_h:
                h = random.randint(h, max_h)
            w = int(round(h * ratio))
            if (h - height) < 2 or (w - width) < 2:
                continue        # marginal padding is not worth it
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            return (x, y, w, h, self._update_labels(label, (x, y, w, h), height, width))
        return ()


def _align(params):
    """Per-augmenter parameter lists: lists are taken as is, anything else repeated."""
    out = [p if isinstance(p, list) else [p] for p in params]
    num = max([1] + [len(p) for p in out])
    for k, p in enumerate(out):
        if len(p) != num:
            if len(p) != 1:
                raise ValueError("CreateMultiRandCropAugmenter: parameter lists must have "
                                 "the same length (%d), got one of length %d" % (num, len(p)))
            out[k] = p * num
    return out


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    """A ``DetRandomSelectAug`` over several ``DetRandomCropAug``.

    Each parameter is one value for all crops or a list (one value per crop); a
    (low, high) range is given per crop as a tuple, several as a list of tuples.

    Examples
    --------
    >>> aug = mx.image.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.5, 0.9])
    >>> len(aug.aug_list)
    3
    """
    aligned = _align([min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
                      max_attempts])
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma)
            for moc, arr, ar, mec, ma in zip(*aligned)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def _check_stat(name, v):
    if not (isinstance(v, np.ndarray) and v.shape[0] in (1, 3)):
        raise ValueError("CreateDetAugmenter: %s must be True, None or a numpy array of 1 or 3 "
                         "values, got %r" % (name, v))


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2, min_object_covered=0.1,
                       aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 3.0),
                       min_eject_coverage=0.3, max_attempts=50, pad_val=(127, 127, 127)):
    """The detection augmenter list ``ImageDetIter`` builds from these options.

    Parameters
    ----------
    data_shape : (C, H, W)
        Every image is finally resized to (W, H).
    resize : int
        Resize the shorter edge to this first (when > 0).
    rand_crop, rand_pad, rand_gray : float
        Probabilities of a random crop, a random pad, grey conversion.
    rand_mirror : bool
        Flip left-right with probability 0.5.
    mean, std : True, None or numpy array
        Normalization; True gives ImageNet's RGB mean / std.
    brightness, contrast, saturation, pca_noise, hue : float
        Colour jitter amounts (0 disables).
    inter_method : int
        Interpolation of the resizes (see ``imresize``; 9 auto, 10 random).
    min_object_covered, aspect_ratio_range, area_range, min_eject_coverage, max_attempts
        Random crop options (see ``CreateMultiRandCropAugmenter``); the pad uses
        ``aspect_ratio_range``, areas (1, area_range[1]) and ``max_attempts``.
    pad_val : float or tuple
        Fill of the padding.

    Examples
    --------
    >>> [a.dumps()[0] for a in mx.image.CreateDetAugmenter((3, 300, 300))]
    ['detborrowaug', 'detborrowaug']
    """
    auglist = []
    if resize > 0:
        auglist.append(DetBorrowAug(ResizeAug(resize, inter_method)))
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(min_object_covered, aspect_ratio_range,
                                                    area_range, min_eject_coverage,
                                                    max_attempts, skip_prob=(1 - rand_crop)))
    if rand_mirror > 0:
        auglist.append(DetHorizontalFlipAug(0.5))
    # Pad as late as possible: the canvas is larger, so later steps would cost more.
    if rand_pad > 0:
        pad_aug = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts,
                                  pad_val)
        auglist.append(DetRandomSelectAug([pad_aug], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    auglist.append(DetBorrowAug(CastAug()))
    if brightness or contrast or saturation:
        auglist.append(DetBorrowAug(ColorJitterAug(brightness, contrast, saturation)))
    if hue:
        auglist.append(DetBorrowAug(HueJitterAug(hue)))
    if pca_noise > 0:
        auglist.append(DetBorrowAug(LightingAug(pca_noise, _PCA_EIGVAL, _PCA_EIGVEC)))
    if rand_gray > 0:
        auglist.append(DetBorrowAug(RandomGrayAug(rand_gray)))
    if mean is True:
        mean = _MEAN.copy()
    elif mean is not None:
        _check_stat("mean", mean)
    if std is True:
        std = _STD.copy()
    elif std is not None:
        _check_stat("std", std)
    if mean is not None or std is not None:
        auglist.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return auglist


def _parse_det_label(label):
    """Objects of a raw label ``[header_width, object_width, header..., objects...]``:
    a (num_objects, object_width) float32 array without the empty boxes."""
    if isinstance(label, nd.NDArray):
        label = label.asnumpy()
    raw = np.asarray(label, dtype=np.float32).ravel()
    if raw.size < 7:
        raise RuntimeError("Label shape is invalid: " + str(raw.shape))
    header_width, obj_width = int(raw[0]), int(raw[1])
    if obj_width < 1 or (raw.size - header_width) % obj_width != 0:
        raise RuntimeError("Label shape %s inconsistent with annotation width %d."
                           % (str(raw.shape), obj_width))
    out = np.reshape(raw[header_width:], (-1, obj_width))
    valid = np.where(np.logical_and(out[:, 3] > out[:, 1], out[:, 4] > out[:, 2]))[0]
    if valid.size < 1:
        raise RuntimeError("Encounter sample with no valid label.")
    return out[valid, :]


class ImageDetIter(ImageIter):
    """Detection data iterator with augmentation, as ``mxnet.image.ImageDetIter``.

    Labels come from a .rec file (``path_imgrec``, the record's label array), an image
    list file (``path_imglist``) or ``imglist`` (``[[label values..., path], ...]``), in
    the raw format ``[header_width, object_width, header..., objects...]``, each object
    ``[class_id, xmin, ymin, xmax, ymax, extra...]`` normalised to [0, 1]. All samples
    are read once at construction to find the largest object count; batches hold
    ``data`` (batch_size, C, H, W) and ``label`` (batch_size, max_objects, object_width),
    rows past a sample's objects filled with -1.

    Parameters
    ----------
    batch_size : int
    data_shape : (3, H, W)
    path_imgrec, path_imglist, path_root, path_imgidx : str, optional
    shuffle : bool, default False
    part_index, num_parts : int
    aug_list : list of DetAugmenter, optional
        Defaults to ``CreateDetAugmenter(data_shape, **kwargs)``.
    imglist : list, optional
    data_name, label_name : str
    last_batch_handle : {'pad', 'discard', 'roll_over'}
    **kwargs
        Options of ``CreateDetAugmenter``.

    Examples
    --------
    >>> it = mx.image.ImageDetIter(2, (3, 300, 300), path_imgrec='train.rec')  # doctest: +SKIP
    >>> next(it).label[0].shape                                             # doctest: +SKIP
    (2, 4, 6)
    """

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name="data", label_name="label",
                 last_batch_handle="pad", **kwargs):
        super().__init__(batch_size=batch_size, data_shape=data_shape, path_imgrec=path_imgrec,
                         path_imglist=path_imglist, path_root=path_root,
                         path_imgidx=path_imgidx, shuffle=shuffle, part_index=part_index,
                         num_parts=num_parts, aug_list=[], imglist=imglist,
                         data_name=data_name, label_name=label_name,
                         last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        label_shape = self._estimate_label_shape()
        self.provide_label = [io.DataDesc(label_name, (self.batch_size,) + label_shape)]
        self.label_shape = label_shape

    def _parse_label(self, label):
        """Parse a raw label (see the class docstring); RuntimeError when malformed."""
        return _parse_det_label(label)

    def _check_valid_label(self, label):
        """RuntimeError unless ``label`` is (n, 5+) with a valid box of class >= 0."""
        if len(label.shape) != 2 or label.shape[1] < 5:
            raise RuntimeError("Label with shape (1+, 5+) required, %s received." % str(label))
        valid = np.logical_and(label[:, 0] >= 0, label[:, 3] > label[:, 1])
        valid = np.logical_and(valid, label[:, 4] > label[:, 2])
        if not valid.any():
            raise RuntimeError("Invalid label occurs.")

    def _estimate_label_shape(self):
        """(largest object count, object width) over one pass of the labels."""
        max_count, width = 0, None
        self.reset()
        try:
            while True:
                label, _ = self.next_sample()
                label = self._parse_label(label)
                max_count, width = max(max_count, label.shape[0]), label.shape[1]
        except StopIteration:
            pass
        self.reset()
        if width is None:
            raise ValueError("ImageDetIter: the data source holds no samples")
        return (max_count, width)

    def reshape(self, data_shape=None, label_shape=None):
        """Change the data shape (C, H, W) and/or the label shape (max_objects, width);
        the object count may only grow."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [io.DataDesc(self.provide_data[0].name,
                                             (self.batch_size,) + tuple(data_shape))]
            self.data_shape = tuple(data_shape)
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [io.DataDesc(self.provide_label[0].name,
                                              (self.batch_size,) + tuple(label_shape))]
            self.label_shape = tuple(label_shape)

    def check_label_shape(self, label_shape):
        """ValueError unless ``label_shape`` is (count, width) with the same object
        width and no fewer objects than now."""
        if not len(label_shape) == 2:
            raise ValueError("label_shape should have length 2")
        if label_shape[0] < self.label_shape[0]:
            raise ValueError("Attempts to reduce label count from %d to %d, not allowed."
                             % (self.label_shape[0], label_shape[0]))
        if label_shape[1] != self.provide_label[0][1][2]:
            raise ValueError("label_shape object width inconsistent: %d vs %d."
                             % (self.provide_label[0][1][2], label_shape[1]))

    def _padded_label(self, label, shape):
        """``label`` in a (max_objects, width) block, the rows after it -1."""
        if label.shape[0] > shape[0] or label.shape[1] != shape[1]:
            raise ValueError("ImageDetIter: a label of shape %s does not fit the label shape "
                             "%s; call reshape(label_shape=...) first"
                             % (label.shape, tuple(shape)))
        out = np.full(shape, -1, np.float32)
        out[:label.shape[0]] = label
        return out

    def _batchify(self, batch_data, batch_label, start=0):
        """Fill the batch from position ``start``; returns the number of samples in it.
        Samples with a broken image or no usable object after augmentation are skipped."""
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image([data])
                    label = self._parse_label(label)
                    data, label = self.augmentation_transform(data, label)
                    self._check_valid_label(label)
                except RuntimeError as e:
                    logging.debug("Invalid image, skipping:  %s", str(e))
                    continue
                batch_data[i] = self.postprocess_data(data)
                batch_label[i] = nd.array(self._padded_label(label, batch_label.shape[1:]))
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _new_label_batch(self):
        """Labels (batch_size, max_objects, width), -1 where a sample has fewer objects."""
        return nd.full(self.provide_label[0][1], -1)

    def augmentation_transform(self, data, label):  # pylint: disable=arguments-differ
        """Apply the detection augmenters in order to ``(data, label)``."""
        for aug in self.auglist:
            data, label = aug(data, label)
        return data, label

    def sync_label_shape(self, it, verbose=False):
        """Give this iterator and ``it`` the larger of their object counts (e.g. train
        and validation sets padded alike); returns ``it``."""
        if not isinstance(it, ImageDetIter):
            raise TypeError("sync_label_shape: expected an ImageDetIter, got %s"
                            % type(it).__name__)
        mine, theirs = self.label_shape, it.label_shape
        if mine[1] != theirs[1]:
            raise ValueError("sync_label_shape: object width mismatch: %d vs %d"
                             % (mine[1], theirs[1]))
        max_count = max(mine[0], theirs[0])
        if max_count > mine[0]:
            self.reshape(None, (max_count, mine[1]))
        if max_count > theirs[0]:
            it.reshape(None, (max_count, theirs[1]))
        if verbose and max_count > min(mine[0], theirs[0]):
            logging.info("Resized label_shape to (%d, %d).", max_count, mine[1])
        return it

    def draw_next(self, color=None, thickness=2, mean=None, std=None, clip=True,
                  waitKey=None, window_name="draw_next", id2labels=None):
        """Yield the next images (augmented, uint8, BGR as MXNet) with their boxes drawn.

        Parameters
        ----------
        color : (r, g, b), optional
            Box colour; random per box (``numpy.random``) when None.
        thickness : int
            Border width in pixels.
        mean, std : True or numpy array, optional
            Undo ``color_normalize`` (True: ImageNet's values).
        clip : bool
            Clip to [0, 255] before the cast to uint8.
        waitKey : int, optional
            Also show each image with OpenCV for this many milliseconds.
        window_name : str
        id2labels : dict, optional
            Class id to name; names are written with Pillow (or OpenCV) when installed.
        """
        cv2 = None
        if waitKey is not None:
            import cv2      # showing needs OpenCV; its ImportError names the package
        bgr = None if not color else tuple(color)[::-1]
        while True:
            try:
                label, s = self.next_sample()
            except StopIteration:
                return
            data = self.imdecode(s)
            try:
                self.check_valid_image([data])
                label = self._parse_label(label)
            except RuntimeError as e:
                logging.debug("Invalid image, skipping:  %s", str(e))
                continue
            data, label = self.augmentation_transform(data, label)
            image = _to_bgr_uint8(data.asnumpy(), mean, std, clip)
            _draw_boxes(image, label, bgr, thickness, id2labels)
            if cv2 is not None:
                cv2.imshow(window_name, image)
                cv2.waitKey(waitKey)
            yield image


def _to_bgr_uint8(image, mean, std, clip):
    """Undo the normalization, swap RGB to BGR and cast to uint8, as MXNet's draw_next."""
    image = image.astype(np.float64 if image.dtype == np.float64 else np.float32)
    if std is True:
        std = _STD
    elif std is not None:
        _check_stat("std", std)
    if std is not None:
        image *= std
    if mean is True:
        mean = _MEAN
    elif mean is not None:
        _check_stat("mean", mean)
    if mean is not None:
        image += mean
    image = image[:, :, ::-1]
    if clip:
        image = np.maximum(0, np.minimum(255, image))
    return np.ascontiguousarray(image.astype(np.uint8))


def _draw_boxes(image, label, color, thickness, id2labels):
    """Draw each box (rows with xmin >= 0) in place as bands ``thickness`` wide centred
    on its edges; class names with Pillow when ``id2labels`` is given."""
    height, width, _ = image.shape
    lo, hi = thickness // 2, (thickness - 1) // 2 + 1
    for row in label:
        x1 = int(row[1] * width)
        if x1 < 0:
            continue
        y1, x2, y2 = int(row[2] * height), int(row[3] * width), int(row[4] * height)
        c = np.round(np.random.rand(3) * 255) if not color else np.asarray(color)
        c = np.clip(c, 0, 255).astype(np.uint8)
        ya, yb = max(min(y1, y2) - lo, 0), min(max(y1, y2) + hi, height)
        xa, xb = max(min(x1, x2) - lo, 0), min(max(x1, x2) + hi, width)
        for y in (y1, y2):
            image[max(y - lo, 0):max(min(y + hi, height), 0), xa:xb] = c
        for x in (x1, x2):
            image[ya:yb, max(x - lo, 0):max(min(x + hi, width), 0)] = c
        if id2labels is not None and int(row[0]) in id2labels:
            _draw_text(image, "%s" % id2labels[int(row[0])], (x1 + 5, y1 + 5))


def _draw_text(image, text, pos):
    """White ``text`` at ``pos`` (x, y of its top left), with Pillow; skipped without it."""
    try:
        from PIL import Image, ImageDraw
    except ImportError:
        logging.debug("Pillow is not installed: class names are not drawn")
        return
    canvas = Image.fromarray(image)
    ImageDraw.Draw(canvas).text(pos, text, fill=(255, 255, 255))
    image[...] = np.asarray(canvas)


# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "RandomOrderAug": "mxlite.image.augmenters",
    "is_np_array": "mxlite.util",
    "numeric_types": "mxlite.base",
})
