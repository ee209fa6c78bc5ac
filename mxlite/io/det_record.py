"""``mx.io.ImageDetRecordIter`` and ``mx.io.LibSVMIter`` in Python.

MXNet implements both in C++ (``src/io/iter_image_det_recordio.cc`` with the
``det_aug_default`` augmenter of ``image_det_aug_default.cc``, and
``src/io/iter_libsvm.cc``). The detection iterator reuses ``ImageRecordIter``'s record
reading, partitioning and epoch bookkeeping (``mxlite/io/image_record.py``: the class
itself, ``_part_offsets``); images are decoded and resized with ``mx.image``.
"""
import os

import numpy as np

from .. import nd
from ..base import (MXNetError, parse_bool, parse_float, parse_float_tuple, parse_int,
                    parse_shape, parse_str)
from ..image import image as _img
from .image_record import ImageRecordIter, _part_offsets
from .io import DataDesc, DataIter, MXDataIter, _TupleBatch

__all__ = ["ImageDetRecordIter", "LibSVMIter"]

_DET_RAND_MAGIC = 233      # MXNet's kRandMagic of the detection parser and iterator


def _int_tuple(v):
    return parse_shape(v)


# name: (parser, default), as MXNet 1.9.1's ImageDetRecordIter documents them.
_DET_PARAMS = {
    # ImageDetRecParserParam, ImageDetRecordParam, BatchParam, PrefetcherParam
    "path_imglist": (parse_str, ""), "path_imgrec": (parse_str, "./data/imgrec.rec"),
    "aug_seq": (parse_str, "det_aug_default"), "label_width": (parse_int, -1),
    "data_shape": (parse_shape, None), "preprocess_threads": (parse_int, 4),
    "verbose": (parse_bool, True), "num_parts": (parse_int, 1), "part_index": (parse_int, 0),
    "shuffle_chunk_size": (parse_int, 0), "shuffle_chunk_seed": (parse_int, 0),
    "label_pad_width": (parse_int, 0), "label_pad_value": (parse_float, -1.0),
    "shuffle": (parse_bool, False), "seed": (parse_int, 0), "batch_size": (parse_int, None),
    "round_batch": (parse_bool, True), "prefetch_buffer": (parse_int, 4),
    "ctx": (parse_str, "gpu"), "dtype": (parse_str, None),
    "data_name": (parse_str, "data"), "label_name": (parse_str, "softmax_label"),
    # DefaultImageDetAugmentParam
    "resize": (parse_int, -1), "rand_crop_prob": (parse_float, 0.0),
    "min_crop_scales": (parse_float_tuple, (0.0,)), "max_crop_scales": (parse_float_tuple, (1.0,)),
    "min_crop_aspect_ratios": (parse_float_tuple, (1.0,)),
    "max_crop_aspect_ratios": (parse_float_tuple, (1.0,)),
    "min_crop_overlaps": (parse_float_tuple, (0.0,)),
    "max_crop_overlaps": (parse_float_tuple, (1.0,)),
    "min_crop_sample_coverages": (parse_float_tuple, (0.0,)),
    "max_crop_sample_coverages": (parse_float_tuple, (1.0,)),
    "min_crop_object_coverages": (parse_float_tuple, (0.0,)),
    "max_crop_object_coverages": (parse_float_tuple, (1.0,)),
    "num_crop_sampler": (parse_int, 1), "crop_emit_mode": (parse_str, "center"),
    "emit_overlap_thresh": (parse_float, 0.3), "max_crop_trials": (_int_tuple, (25,)),
    "rand_pad_prob": (parse_float, 0.0), "max_pad_scale": (parse_float, 1.0),
    "max_random_hue": (parse_int, 0), "random_hue_prob": (parse_float, 0.0),
    "max_random_saturation": (parse_int, 0), "random_saturation_prob": (parse_float, 0.0),
    "max_random_illumination": (parse_int, 0), "random_illumination_prob": (parse_float, 0.0),
    "max_random_contrast": (parse_float, 0.0), "random_contrast_prob": (parse_float, 0.0),
    "rand_mirror_prob": (parse_float, 0.0), "fill_value": (parse_int, 127),
    "inter_method": (parse_int, 1), "resize_mode": (parse_str, "force"),
    # ImageDetNormalizeParam
    "mean_img": (parse_str, ""), "mean_r": (parse_float, 0.0), "mean_g": (parse_float, 0.0),
    "mean_b": (parse_float, 0.0), "mean_a": (parse_float, 0.0), "std_r": (parse_float, 0.0),
    "std_g": (parse_float, 0.0), "std_b": (parse_float, 0.0), "std_a": (parse_float, 0.0),
    "scale": (parse_float, 1.0),
}

_CROP_TUPLES = ("min_crop_scales", "max_crop_scales", "min_crop_aspect_ratios",
                "max_crop_aspect_ratios", "min_crop_overlaps", "max_crop_overlaps",
                "min_crop_sample_coverages", "max_crop_sample_coverages",
                "min_crop_object_coverages", "max_crop_object_coverages", "max_crop_trials")
# HLS jitter: MXNet converts to HLS with cv::cvtColor, which mxlite does not have.
_HLS = (("max_random_hue", "random_hue_prob"), ("max_random_saturation",
                                                "random_saturation_prob"),
        ("max_random_illumination", "random_illumination_prob"))

_F32 = np.float32


def _parse_det_args(kwargs):
    where = "ImageDetRecordIter"
    unknown = sorted(set(kwargs) - set(_DET_PARAMS))
    if unknown:
        raise ValueError("%s: unknown argument(s) %s" % (where, ", ".join(unknown)))
    p = {k: d for k, (_, d) in _DET_PARAMS.items()}
    for k, v in kwargs.items():
        if v is not None:
            p[k] = _DET_PARAMS[k][0](v)
    for k in ("data_shape", "batch_size"):
        if p[k] is None:
            raise ValueError("%s: %s is required" % (where, k))
    shape = tuple(p["data_shape"])
    if len(shape) != 3 or shape[0] not in (1, 3, 4) or min(shape) <= 0:
        raise ValueError("%s: data_shape must be (C, H, W) with C in 1, 3, 4, got %s"
                         % (where, shape))
    if p["batch_size"] <= 0:
        raise ValueError("%s: batch_size must be positive, got %d" % (where, p["batch_size"]))
    if not 0 <= p["part_index"] < p["num_parts"]:
        raise ValueError("%s: part_index must be in [0, num_parts=%d), got %d"
                         % (where, p["num_parts"], p["part_index"]))
    if p["aug_seq"] != "det_aug_default":
        raise MXNetError("%s: aug_seq=%r not supported (only 'det_aug_default')"
                         % (where, p["aug_seq"]))
    if p["dtype"] not in (None, "None", "float32"):
        raise MXNetError("%s: dtype=%r not supported (the output is float32)"
                         % (where, p["dtype"]))
    if p["inter_method"] not in (0, 1, 2, 3, 4, 9, 10):
        raise ValueError("%s: inter_method must be 0-4, 9 or 10, got %d"
                         % (where, p["inter_method"]))
    for k, choices in (("resize_mode", ("force", "shrink", "fit")),
                       ("crop_emit_mode", ("center", "overlap"))):
        if p[k] not in choices:
            raise ValueError("%s: %s must be one of %s, got %r" % (where, k, choices, p[k]))
    bad = [m for m, prob in _HLS if p[m] != 0 and p[prob] > 0]
    if bad:
        raise MXNetError("%s: %s not supported in mxlite (HLS jitter needs OpenCV's "
                         "cvtColor); leave them at 0" % (where, ", ".join(bad)))
    _check_crop_args(where, p)
    return p


def _check_crop_args(where, p):
    """Broadcast the per-sampler tuples to ``num_crop_sampler`` and check them, as
    MXNet's ValidateCropParameters."""
    n = p["num_crop_sampler"]
    for k in _CROP_TUPLES:
        t = tuple(p[k])
        if n >= 1 and len(t) == 1:
            t = t * n
        if n >= 1 and len(t) != n:
            raise ValueError("%s: %s has %d values for num_crop_sampler=%d"
                             % (where, k, len(t), n))
        p[k] = t
    for i in range(max(n, 0)):
        ok = (p["min_crop_scales"][i] >= 0 and p["max_crop_scales"][i] <= 1
              and p["max_crop_scales"][i] > p["min_crop_scales"][i]
              and p["min_crop_aspect_ratios"][i] >= 0
              and p["max_crop_aspect_ratios"][i] >= p["min_crop_aspect_ratios"][i]
              and p["max_crop_overlaps"][i] >= p["min_crop_overlaps"][i]
              and p["max_crop_sample_coverages"][i] >= p["min_crop_sample_coverages"][i]
              and p["max_crop_object_coverages"][i] >= p["min_crop_object_coverages"][i])
        if not ok:
            raise ValueError("%s: crop sampler %d has an empty range (need 0 <= min_crop_scale "
                             "< max_crop_scale <= 1 and min <= max for the ratios, overlaps "
                             "and coverages)" % (where, i))
    if p["emit_overlap_thresh"] < 0:
        raise ValueError("%s: emit_overlap_thresh must be >= 0" % where)


# ------------------------------------------------------------------ labels and boxes
class _DetLabel:
    """A raw detection label ``[header_width, object_width, header..., objects...]`` as
    its header and a (n, object_width) float32 array of the valid objects
    (xmax > xmin and ymax > ymin); MXNet's ImageDetLabel."""

    def __init__(self, raw):
        raw = np.asarray(raw, _F32).ravel()
        if raw.size < 7:
            raise MXNetError("ImageDetRecordIter: a detection label needs at least 7 values "
                             "(2 header + 5 object), got %d" % raw.size)
        hw, ow = int(raw[0]), int(raw[1])
        if hw < 2 or ow < 5 or (raw.size - hw) % ow != 0:
            raise MXNetError("ImageDetRecordIter: label of %d values does not fit "
                             "header_width=%d (>= 2), object_width=%d (>= 5)"
                             % (raw.size, hw, ow))
        self.header = raw[:hw].copy()
        objs = raw[hw:].reshape(-1, ow)
        keep = (objs[:, 3] > objs[:, 1]) & (objs[:, 4] > objs[:, 2])
        self.objects = objs[keep].copy()

    def to_array(self):
        return np.concatenate([self.header, self.objects.ravel()]).astype(_F32)

    def project(self, box):
        """Boxes in the coordinates of ``box`` (x, y, w, h), clipped to [0, 1]."""
        x, y, w, h = [_F32(v) for v in box]
        o = self.objects.copy()
        o[:, 1] = np.maximum(_F32(0), (o[:, 1] - x) / w)
        o[:, 2] = np.maximum(_F32(0), (o[:, 2] - y) / h)
        o[:, 3] = np.minimum(_F32(1), (o[:, 3] - x) / w)
        o[:, 4] = np.minimum(_F32(1), (o[:, 4] - y) / h)
        return o

    def mirror(self):
        left = self.objects[:, 1].copy()
        self.objects[:, 1] = _F32(1) - self.objects[:, 3]
        self.objects[:, 3] = _F32(1) - left


def _rect_intersection_area(a, boxes):
    """Areas of ``a`` (x, y, w, h) & each (xmin, ymin, xmax, ymax) row; 0 when apart."""
    w = np.minimum(a[0] + a[2], boxes[:, 2]) - np.maximum(a[0], boxes[:, 0])
    h = np.minimum(a[1] + a[3], boxes[:, 3]) - np.maximum(a[1], boxes[:, 1])
    return np.where((w > 0) & (h > 0), w * h, _F32(0)).astype(_F32)


def _crop_satisfied(label, box, i, p):
    """MXNet's TryCrop acceptance test for sampler ``i``.

    NOTE: MXNet only applies the overlap/coverage constraints when *all six* are active
    (min > 0 and max < 1); otherwise any window is accepted. Reproduced as is.
    """
    lo_o, hi_o = p["min_crop_overlaps"][i], p["max_crop_overlaps"][i]
    lo_s, hi_s = p["min_crop_sample_coverages"][i], p["max_crop_sample_coverages"][i]
    lo_c, hi_c = p["min_crop_object_coverages"][i], p["max_crop_object_coverages"][i]
    if not (lo_o > 0 and hi_o < 1 and lo_s > 0 and hi_s < 1 and lo_c > 0 and hi_c < 1):
        return True
    gt = label.objects[:, 1:5]
    inter = _rect_intersection_area(box, gt)
    gt_area = (gt[:, 2] - gt[:, 0]) * (gt[:, 3] - gt[:, 1])
    crop_area = _F32(box[2] * box[3])
    iou = np.where(inter > 0, inter / (crop_area + gt_area - inter), _F32(0))
    ok = ((iou >= lo_o) & (iou <= hi_o) & (inter / crop_area >= lo_s)
          & (inter / crop_area <= hi_s) & (inter / gt_area >= lo_c) & (inter / gt_area <= hi_c))
    return bool(ok.any())


def _crop_objects(label, box, p):
    """The objects kept by a crop window (emit mode), projected; None if none is left."""
    o = label.objects
    if p["crop_emit_mode"] == "center":
        cx = (o[:, 1] + o[:, 3]) * _F32(0.5)
        cy = (o[:, 2] + o[:, 4]) * _F32(0.5)
        keep = (box[0] <= cx) & (cx < box[0] + box[2]) & (box[1] <= cy) & (cy < box[1] + box[3])
    else:
        gt = o[:, 1:5]
        area = (gt[:, 2] - gt[:, 0]) * (gt[:, 3] - gt[:, 1])
        keep = _rect_intersection_area(box, gt) / area > _F32(p["emit_overlap_thresh"])
    if not keep.any():
        return None
    return label.project(box)[keep]


class ImageDetRecordIter(ImageRecordIter):
    """Batches of images and detection labels from a RecordIO (.rec) file, as
    ``mxnet.io.ImageDetRecordIter`` (MXNet 1.9.1).

    Keyword arguments only, with MXNet's names and defaults: ``path_imgrec``,
    ``path_imglist`` (labels by image index: ``index label... path``), ``data_shape``
    (C, H, W; required), ``batch_size`` (required), ``label_width`` (-1: any width),
    ``label_pad_width`` (0 or -1: the widest raw label), ``label_pad_value``,
    ``shuffle``, ``seed``, ``round_batch``, ``part_index``, ``num_parts``,
    ``data_name``, ``label_name``; the ``det_aug_default`` augmenter's ``resize``,
    ``rand_crop_prob`` with ``num_crop_sampler`` and the per-sampler tuples
    ``min/max_crop_scales``, ``min/max_crop_aspect_ratios``, ``min/max_crop_overlaps``,
    ``min/max_crop_sample_coverages``, ``min/max_crop_object_coverages``,
    ``max_crop_trials``, ``crop_emit_mode`` ('center'/'overlap'),
    ``emit_overlap_thresh``; ``rand_pad_prob``, ``max_pad_scale``, ``fill_value``;
    ``max_random_contrast``/``random_contrast_prob``; ``rand_mirror_prob``;
    ``inter_method``, ``resize_mode`` ('force', 'shrink', 'fit'); and ``mean_img``,
    ``mean_r/g/b/a``, ``std_r/g/b/a``, ``scale``.

    Each raw label is ``[header_width, object_width, header..., objects...]`` with
    objects ``[class, xmin, ymin, xmax, ymax, extra...]`` in [0, 1]; objects with an
    empty box are dropped. Each sample: decode, resize the shorter edge to ``resize``,
    contrast, mirror, pad ("zoom out"), crop (the boxes follow), then resize to
    ``data_shape`` by ``resize_mode``; the image goes to the top left of a zero
    (C, H, W) block, then ``(x - mean) / std * scale`` (a mean only when one of
    ``mean_r/g/b/a`` is > 0, a std only where > 0, as MXNet).

    A label row (width ``4 + label_pad_width``) is MXNet's:
    ``[channels, rows, cols, n, label (n values: header and kept objects)...,
    label_pad_value...]`` where rows/cols are the image size before it is placed in
    the block (smaller than ``data_shape`` for 'shrink'/'fit').

    Differences from MXNet:

    - Unknown arguments raise (MXNet ignores them), and so does HLS jitter
      (``max_random_hue/saturation/illumination`` with a probability), which needs
      OpenCV's ``cvtColor``; ``dtype`` other than float32 and other ``aug_seq`` too.
    - Random draws (crop, pad, mirror, contrast, shuffling) follow MXNet's order and
      formulas but come from NumPy generators (seeded from 233, and 233 + ``seed`` for
      shuffling): reproducible, not MXNet's numbers. Shuffling covers the whole part
      (MXNet shuffles within each 8 MB chunk, the same for small files).
    - With ``round_batch=False`` the rows past the end are zeros (data) and
      ``label_pad_value`` rows; MXNet leaves stale data there (``pad`` agrees).
    - Bilinear resizing can differ from OpenCV by 1 grey level (see
      ``mx.image.imresize``); bicubic (2) matches.
    - ``preprocess_threads``, ``prefetch_buffer``, ``ctx``, ``verbose``,
      ``shuffle_chunk_*`` are accepted and unused. A missing ``mean_img`` file raises
      (MXNet computes and saves it).

    Examples
    --------
    >>> it = mx.io.ImageDetRecordIter(path_imgrec='train.rec', data_shape=(3, 300, 300),
    ...                               batch_size=32, rand_mirror_prob=0.5)  # doctest: +SKIP
    >>> it.next().label[0].shape                                         # doctest: +SKIP
    (32, 4 + widest raw label)
    """

    def __init__(self, *args, **kwargs):  # pylint: disable=super-init-not-called
        if args:
            raise TypeError("ImageDetRecordIter takes keyword arguments only, got %d "
                            "positional" % len(args))
        p = _parse_det_args(kwargs)
        # NOTE: ImageRecordIter.__init__ parses its own argument set; only its epoch and
        # batch bookkeeping is reused, so DataIter's constructor is called directly.
        DataIter.__init__(self, p["batch_size"])
        p["path_imgidx"] = ""
        self._p = p
        self._dtype = np.float32
        self._shape = tuple(int(d) for d in p["data_shape"])
        if not os.path.isfile(p["path_imgrec"]):
            raise MXNetError("ImageDetRecordIter: path_imgrec %r is not a file"
                             % p["path_imgrec"])
        self._offsets = _part_offsets(p)
        self._file = open(p["path_imgrec"], "rb")
        self._labels = self._read_det_imglist() if p["path_imglist"] else None
        self._pad_width = self._label_pad_width()
        self._shuffle_rng = np.random.RandomState(_DET_RAND_MAGIC + p["seed"])
        self._rng = np.random.RandomState(_DET_RAND_MAGIC)
        self._mean_img = self._load_det_mean()
        self._order = self._new_order()
        self._pos = 0
        self._overflow = False
        self._batch = None

    # ------------------------------------------------------------- descriptions
    @property
    def provide_data(self):
        return [DataDesc(self._p["data_name"], (self.batch_size,) + self._shape, np.float32)]

    @property
    def provide_label(self):
        return [DataDesc(self._p["label_name"], (self.batch_size, self._pad_width + 4),
                         np.float32)]

    # ------------------------------------------------------------- labels
    def _read_det_imglist(self):
        """Raw labels by image index from the list file (whitespace separated: index,
        labels, path), ``label_width`` values each or all but the path when -1."""
        labels, w = {}, self._p["label_width"]
        with open(self._p["path_imglist"]) as f:
            for line in f:
                fields = line.split()
                if not fields:
                    continue
                values = fields[1:1 + w] if w > 0 else fields[1:-1]
                if (w > 0 and len(values) < w) or not values:
                    raise MXNetError("ImageDetRecordIter: bad image list line %r (expected "
                                     "index, %s labels, path)" % (
                                         line.strip(), w if w > 0 else "some"))
                labels[int(float(fields[0]))] = np.array([float(v) for v in values], _F32)
        return labels

    def _raw_label(self, header):
        if self._labels is not None:
            try:
                return self._labels[int(header.id)]
            except KeyError:
                raise MXNetError("ImageDetRecordIter: image index %d is not in path_imglist"
                                 % header.id) from None
        label = np.atleast_1d(np.asarray(header.label, _F32))
        if header.flag == 0:
            raise MXNetError("ImageDetRecordIter: record %d has no detection label (pack "
                             "the label array in the record or give path_imglist)"
                             % header.id)
        w = self._p["label_width"]
        if w > 0 and w != label.size:
            raise MXNetError("ImageDetRecordIter: rec file provides %d-dimensional label but "
                             "label_width is set to %d" % (label.size, w))
        return label

    def _label_pad_width(self):
        """The label block width: the widest raw label (the part's records, or every
        list entry), or ``label_pad_width`` when larger."""
        if self._labels is not None:
            widest = max((v.size for v in self._labels.values()), default=0)
        else:
            widest = 0
            for k in range(len(self._offsets)):
                widest = max(widest, self._raw_label(self._read(k)[0]).size)
        want = self._p["label_pad_width"]
        if widest > want:
            if want > 0:
                raise MXNetError("ImageDetRecordIter: label_pad_width %d smaller than the "
                                 "widest label %d" % (want, widest))
            want = widest
        return want

    # ------------------------------------------------------------- augmentation
    def _uniform(self, lo, hi):
        """std::uniform_real_distribution<float>(lo, hi): lo + (hi - lo) * u in float32."""
        u = _F32(self._rng.random_sample())
        return _F32(_F32(lo) + (_F32(hi) - _F32(lo)) * u)

    def _resize_to(self, img, w, h):
        rows, cols = img.shape[:2]
        if (rows, cols) == (h, w):
            return img          # cv::resize to the same size copies
        interp = self._p["inter_method"]
        if interp == 10:
            interp = int(self._rng.randint(0, 5))
        else:
            interp = _img._get_interp_method(interp, (rows, cols, h, w))
        return _img._host(_img.imresize(nd.array(img, dtype=img.dtype), w, h, interp=interp))

    def _contrast(self, img):
        """MXNet draws all four colour factors, then keeps each with its probability;
        only contrast is applied here (HLS jitter is refused at construction)."""
        p = self._p
        c = [self._uniform(-1, 1) for _ in range(4)][3] * _F32(p["max_random_contrast"])
        keep = [self._uniform(0, 1) < _F32(p[k]) for k in (
            "random_hue_prob", "random_saturation_prob", "random_illumination_prob",
            "random_contrast_prob")][3]
        c = _F32(c) if keep else _F32(0)
        if abs(c) <= 1e-3:
            return img
        # NOTE: cv::Mat::convertTo rounds half to even and saturates to uint8.
        out = np.rint(img.astype(_F32) * _F32(c + 1))
        return np.clip(out, 0, 255).astype(np.uint8)

    def _pad(self, img, label):
        p = self._p
        scale = self._uniform(1, p["max_pad_scale"])
        if scale < _F32(1.05):
            return img
        x0, y0 = self._uniform(0, scale - 1), self._uniform(0, scale - 1)
        box = (-x0, -y0, scale, scale)
        label.objects = label.project(box)
        rows, cols = img.shape[:2]
        left, top = int(x0 * _F32(cols)), int(y0 * _F32(rows))
        right = int(_F32(scale - x0 - 1) * _F32(cols))
        bot = int(_F32(scale - y0 - 1) * _F32(rows))
        return np.pad(img, ((top, bot), (left, right), (0, 0)), mode="constant",
                      constant_values=p["fill_value"])

    def _crop_box(self, i, img_ratio):
        """MXNet's GenerateCropBox for sampler ``i``: (x, y, w, h) in [0, 1]."""
        p = self._p
        scale = _F32(self._uniform(p["min_crop_scales"][i], p["max_crop_scales"][i])
                     + _F32(1e-12))
        lo = max(_F32(p["min_crop_aspect_ratios"][i]) / img_ratio, scale * scale)
        # NOTE: MXNet writes 1. / new_scale * new_scale, which is 1 (not 1 / scale^2).
        hi = min(_F32(p["max_crop_aspect_ratios"][i]) / img_ratio, _F32(1.0))
        ratio = _F32(np.sqrt(self._uniform(lo, hi)))
        w = min(_F32(1), _F32(scale * ratio))
        h = min(_F32(1), _F32(scale / ratio))
        x = self._uniform(0, _F32(1) - w)
        y = self._uniform(0, _F32(1) - h)
        return (x, y, w, h)

    def _det_crop(self, img, label):
        p = self._p
        n = p["num_crop_sampler"]
        order = self._rng.permutation(n)
        rows, cols = img.shape[:2]
        for i in order:
            for _ in range(p["max_crop_trials"][i]):
                box = self._crop_box(i, _F32(cols) / _F32(rows))
                if label.objects.shape[0] == 0:
                    kept = label.objects
                elif _crop_satisfied(label, box, i, p):
                    kept = _crop_objects(label, box, p)
                    if kept is None:
                        continue
                else:
                    continue
                label.objects = kept
                left, top = int(box[0] * _F32(cols)), int(box[1] * _F32(rows))
                w = max(1, int(box[2] * _F32(cols)))
                h = max(1, int(box[3] * _F32(rows)))
                return img[top:top + h, left:left + w]
        return img

    def _fit(self, img):
        """Resize to ``data_shape`` by ``resize_mode``."""
        p = self._p
        H, W = self._shape[1:]
        rows, cols = img.shape[:2]
        if p["resize_mode"] == "force":
            return self._resize_to(img, W, H)
        if p["resize_mode"] == "shrink" and rows <= H and cols <= W:
            return img
        ratio = min(_F32(H) / _F32(rows), _F32(W) / _F32(cols))
        return self._resize_to(img, int(ratio * _F32(cols)), int(ratio * _F32(rows)))

    def _det_augment(self, img, label):
        """MXNet's DefaultImageDetAugmenter::Process on a uint8 HWC image."""
        p = self._p
        if p["resize"] != -1:
            r, (rows, cols) = p["resize"], img.shape[:2]
            img = self._resize_to(img, r, r * rows // cols) if rows > cols else \
                self._resize_to(img, r * cols // rows, r)
        if any(p[k] > 0 for k in ("random_hue_prob", "random_saturation_prob",
                                  "random_illumination_prob", "random_contrast_prob")):
            img = self._contrast(img)
        if p["rand_mirror_prob"] > 0 and self._uniform(0, 1) < _F32(p["rand_mirror_prob"]):
            label.mirror()
            img = img[:, ::-1]
        # NOTE: a random number is drawn only when the augmenter is on, as in MXNet.
        if p["rand_pad_prob"] > 0 and p["max_pad_scale"] > 1 \
                and self._uniform(0, 1) < _F32(p["rand_pad_prob"]):
            img = self._pad(img, label)
        if p["rand_crop_prob"] > 0 and p["num_crop_sampler"] > 0 \
                and self._uniform(0, 1) < _F32(p["rand_crop_prob"]):
            img = self._det_crop(img, label)
        return self._fit(img)

    # ------------------------------------------------------------- normalization
    def _load_det_mean(self):
        path = self._p["mean_img"]
        if not path:
            return None
        if not os.path.exists(path):
            raise MXNetError("ImageDetRecordIter: mean_img %r does not exist (mxlite does not "
                             "compute it; save one with mx.nd.save)" % path)
        loaded = nd.load(path)
        arrays = list(loaded.values()) if isinstance(loaded, dict) else list(loaded)
        if len(arrays) != 1:
            raise MXNetError("ImageDetRecordIter: invalid mean image file %s (expected one "
                             "array)" % path)
        return arrays[0].asnumpy().astype(_F32)

    def _normalize_block(self, block):
        """MXNet's ImageDetNormalizeIter on the whole (C, H, W) block."""
        p = self._p
        c = block.shape[0]
        means = [p["mean_r"], p["mean_g"], p["mean_b"], p["mean_a"]]
        if any(m > 0 for m in means):
            chans = [0] if c == 1 else list(range(c))
            for k in chans:
                block[k] -= _F32(means[k])
        elif self._mean_img is not None:
            block -= self._mean_img
        stds = [p["std_r"], p["std_g"], p["std_b"], p["std_a"]]
        for k in range(c):
            if stds[k] > 0:
                block[k] /= _F32(stds[k])
        return block * _F32(p["scale"])

    # ------------------------------------------------------------- samples, batches
    def _det_sample(self, k):
        header, buf = self._read(k)
        label = _DetLabel(self._raw_label(header))
        img = self._decode(buf)
        img = self._det_augment(img, label)
        C, H, W = self._shape
        rows, cols = img.shape[:2]
        if rows > H or cols > W:
            raise MXNetError("ImageDetRecordIter: augmented image %dx%d exceeds data_shape %s"
                             % (rows, cols, self._shape))
        block = np.zeros(self._shape, _F32)
        block[:, :rows, :cols] = img.reshape(rows, cols, -1).transpose(2, 0, 1)
        raw = label.to_array()
        row = np.full(self._pad_width + 4, _F32(self._p["label_pad_value"]), _F32)
        row[:4] = (C, rows, cols, raw.size)
        row[4:4 + raw.size] = raw
        return self._normalize_block(block), row, int(header.id)

    def iter_next(self):
        got = self._batch_samples()
        if got is None:
            return False
        samples, pad = got
        data = np.zeros((self.batch_size,) + self._shape, _F32)
        label = np.full((self.batch_size, self._pad_width + 4),
                        _F32(self._p["label_pad_value"]), _F32)
        index = np.zeros(self.batch_size, np.uint64)
        for i, k in enumerate(samples):
            data[i], label[i], index[i] = self._det_sample(k)
        self._batch = (nd.array(data), nd.array(label), pad, index)
        return True

    def getindex(self):
        """The image indices (record header ids) of the batch's samples."""
        return self._current()[3]


# ===================================================================== LibSVMIter
def _libsvm_bytes(path, where):
    """The bytes of a LibSVM file, or of every file of a directory (sorted by name)."""
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if os.path.isfile(os.path.join(path, n)))
        parts = []
        for n in names:
            with open(os.path.join(path, n), "rb") as f:
                data = f.read()
            parts.append(data if data.endswith(b"\n") or not data else data + b"\n")
        return b"".join(parts)
    if not os.path.isfile(path):
        raise MXNetError("%s: %r is not a file or directory" % (where, path))
    with open(path, "rb") as f:
        return f.read()


def _part_lines(data, part_index, num_parts):
    """The lines of part ``part_index``, split as dmlc's text InputSplit: by bytes, a
    line belonging to the part its first byte falls in."""
    step = -(-len(data) // num_parts)
    begin, end = step * part_index, step * (part_index + 1)
    lines, pos = [], 0
    for line in data.split(b"\n"):
        if begin <= pos < end and line.strip():
            lines.append(line.decode())
        pos += len(line) + 1
    return lines


def _parse_libsvm(lines, width, where, path):
    """(labels float32 (n,), dense rows float32 (n, width)) of LibSVM lines with
    zero-based column indices."""
    labels = np.zeros(len(lines), _F32)
    rows = np.zeros((len(lines), width), _F32)
    for r, line in enumerate(lines):
        fields = line.split()
        labels[r] = _F32(float(fields[0]))
        for item in fields[1:]:
            col, sep, val = item.partition(":")
            if not sep:
                raise MXNetError("%s: bad LibSVM entry %r in %s (expected index:value)"
                                 % (where, item, path))
            col = int(col)
            if not 0 <= col < width:
                raise MXNetError("%s: column index %d out of range for shape (%d,) in %s"
                                 % (where, col, width, path))
            rows[r, col] = _F32(float(val))
    return labels, rows


class LibSVMIter(_TupleBatch, MXDataIter):
    """Batches from a LibSVM file (zero-based column indices), as
    ``mxnet.io.LibSVMIter`` (MXNet 1.9.1).

    Parameters (keyword only)
    -------------------------
    data_libsvm : str
        A file, or a directory whose files are read in name order.
    data_shape : (int,)
        The number of columns.
    label_libsvm : str, optional
        A LibSVM file of labels (its first column is ignored); without it the label is
        the first column of ``data_libsvm``.
    label_shape : (int,), default (1,)
    batch_size : int
    round_batch : bool, default True
        Only True is supported (as in MXNet): the last batch is completed from the
        start of the data (``pad`` counts those rows) and the next epoch goes on after
        them.
    num_parts, part_index : int
        Read one of ``num_parts`` byte ranges of the file(s), as MXNet.
    data_name, label_name : str

    NOTE: MXNet returns the data (and a ``label_libsvm`` label) as ``CSRNDArray``;
    mxlite has no sparse storage, so these are dense NDArrays with the same values
    (what MXNet's ``.tostype('default')`` gives). ``prefetch_buffer``, ``ctx`` and
    ``dtype`` are accepted and unused (the output is float32).
    """

    def __init__(self, *args, data_libsvm=None, data_shape=None, label_libsvm="NULL",
                 label_shape=(1,), batch_size=None, round_batch=True, num_parts=1,
                 part_index=0, prefetch_buffer=4, ctx="gpu", dtype=None,
                 data_name="data", label_name="softmax_label"):
        where = "LibSVMIter"
        if args:
            raise TypeError("%s takes keyword arguments only" % where)
        for name, v in (("data_libsvm", data_libsvm), ("data_shape", data_shape),
                        ("batch_size", batch_size)):
            if v is None:
                raise ValueError("%s: %s is required" % (where, name))
        data_shape, label_shape = parse_shape(data_shape), parse_shape(label_shape)
        batch_size, num_parts = parse_int(batch_size), parse_int(num_parts)
        part_index = parse_int(part_index)
        if len(data_shape) != 1 or len(label_shape) != 1:
            raise ValueError("%s: data_shape and label_shape must be 1-d, got %s and %s"
                             % (where, data_shape, label_shape))
        if not parse_bool(round_batch):
            raise MXNetError("%s: round_batch=False is not supported (nor in MXNet)" % where)
        if batch_size <= 0:
            raise ValueError("%s: batch_size must be positive, got %d" % (where, batch_size))
        if not 0 <= part_index < num_parts:
            raise ValueError("%s: part_index must be in [0, num_parts=%d), got %d"
                             % (where, num_parts, part_index))
        if dtype not in (None, "None", "float32"):
            raise MXNetError("%s: dtype=%r not supported (the output is float32)"
                             % (where, dtype))
        DataIter.__init__(self, batch_size)
        lines = _part_lines(_libsvm_bytes(data_libsvm, where), part_index, num_parts)
        labels, self._data = _parse_libsvm(lines, data_shape[0], where, data_libsvm)
        self._label_csr = label_libsvm not in (None, "NULL")
        if self._label_csr:
            lines = _part_lines(_libsvm_bytes(label_libsvm, where), part_index, num_parts)
            _, self._label = _parse_libsvm(lines, label_shape[0], where, label_libsvm)
            if self._label.shape[0] != self._data.shape[0]:
                raise MXNetError("%s: %s has %d rows in this part, %s has %d" % (
                    where, data_libsvm, self._data.shape[0], label_libsvm,
                    self._label.shape[0]))
        else:
            if label_shape != (1,):
                raise ValueError("%s: label_shape must be (1,) without label_libsvm, got %s"
                                 % (where, label_shape))
            self._label = labels
        if self._data.shape[0] == 0:
            raise MXNetError("%s: part %d of %s holds no rows" % (where, part_index,
                                                                  data_libsvm))
        self._names = (data_name, label_name)
        self._label_shape = label_shape
        self._width = data_shape[0]
        self._pos = 0
        self._overflow = False
        self._batch = None

    @property
    def provide_data(self):
        return [DataDesc(self._names[0], (self.batch_size, self._width), np.float32)]

    @property
    def provide_label(self):
        shape = (self.batch_size,) + (self._label_shape if self._label_csr else ())
        return [DataDesc(self._names[1], shape, np.float32)]

    def reset(self):
        """Start the next epoch; after a batch completed from the start it goes on after
        the rows that completed it (MXNet's behaviour)."""
        super().reset()
        if self._overflow:
            self._overflow = False
            return
        self._pos = 0

    def iter_next(self):
        n, bs = self._data.shape[0], self.batch_size
        if self._overflow or self._pos >= n:
            return False
        rows = list(range(self._pos, min(self._pos + bs, n)))
        pad = bs - len(rows)
        self._pos += len(rows)
        if pad:
            # Round robin: complete the batch from the start, wrapping as often as needed.
            rows += [k % n for k in range(pad)]
            self._pos = pad % n if pad % n else n
            self._overflow = True
        idx = np.array(rows)
        self._batch = (nd.array(self._data[idx]), nd.array(self._label[idx]), pad,
                       idx.astype(np.uint64))
        return True

