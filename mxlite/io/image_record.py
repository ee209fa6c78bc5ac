"""``mx.io.ImageRecordIter`` (and its ``UInt8``/``Int8`` twins) in Python.

MXNet implements these in C++ (``src/io/iter_image_recordio_2.cc`` with the default
augmenter of ``image_aug_default.cc``). Here each sample goes through mxlite's own
pieces: ``mx.recordio`` reads the records, ``mx.image`` decodes, resizes and crops, and
its colour augmenters jitter. Deterministic settings give MXNet's batches; the random
ones follow MXNet's rules with mxlite's random streams (see ``ImageRecordIter``).
"""
import os
import random
import struct

import numpy as np

from .. import nd
from ..base import MXNetError, parse_bool, parse_float, parse_int, parse_shape, parse_str
from ..image import image as _img
from ..image.augmenters import ColorJitterAug, LightingAug, _PCA_EIGVAL, _PCA_EIGVEC
from .. import recordio
from .io import DataDesc, DataIter, MXDataIter, _TupleBatch, ignore_unknown_args

__all__ = ["ImageRecordIter", "ImageRecordUInt8Iter", "ImageRecordInt8Iter"]

_RAND_MAGIC = 111          # MXNet's kRandMagic: seeds are offset by it


def _opt_int(v):
    return None if v is None or v == "None" else parse_int(v)


def _opt_float(v):
    return None if v is None or v == "None" else parse_float(v)


# name: (parser, default). MXNet's arguments, grouped as in its documentation.
_PARAMS = {
    # ImageRecParserParam, ImageRecordParam, BatchParam, PrefetcherParam
    "path_imglist": (parse_str, ""), "path_imgrec": (parse_str, ""),
    "path_imgidx": (parse_str, ""), "aug_seq": (parse_str, "aug_default"),
    "label_width": (parse_int, 1), "data_shape": (parse_shape, None),
    "preprocess_threads": (parse_int, 4), "verbose": (parse_bool, True),
    "num_parts": (parse_int, 1), "part_index": (parse_int, 0), "device_id": (parse_int, 0),
    "shuffle_chunk_size": (parse_int, 0), "shuffle_chunk_seed": (parse_int, 0),
    "seed_aug": (_opt_int, None), "shuffle": (parse_bool, False), "seed": (parse_int, 0),
    "batch_size": (parse_int, None), "round_batch": (parse_bool, True),
    "prefetch_buffer": (parse_int, 4), "ctx": (parse_str, "gpu"), "dtype": (parse_str, None),
    # the Python wrapper's names
    "data_name": (parse_str, "data"), "label_name": (parse_str, "softmax_label"),
    # DefaultImageAugmentParam
    "resize": (parse_int, -1), "rand_crop": (parse_bool, False),
    "random_resized_crop": (parse_bool, False), "max_rotate_angle": (parse_int, 0),
    "max_aspect_ratio": (parse_float, 0.0), "min_aspect_ratio": (_opt_float, None),
    "max_shear_ratio": (parse_float, 0.0), "max_crop_size": (parse_int, -1),
    "min_crop_size": (parse_int, -1), "max_random_scale": (parse_float, 1.0),
    "min_random_scale": (parse_float, 1.0), "max_random_area": (parse_float, 1.0),
    "min_random_area": (parse_float, 1.0), "max_img_size": (parse_float, 1e10),
    "min_img_size": (parse_float, 0.0), "brightness": (parse_float, 0.0),
    "contrast": (parse_float, 0.0), "saturation": (parse_float, 0.0),
    "pca_noise": (parse_float, 0.0), "random_h": (parse_int, 0), "random_s": (parse_int, 0),
    "random_l": (parse_int, 0), "rotate": (parse_int, -1), "fill_value": (parse_int, 255),
    "inter_method": (parse_int, 1), "pad": (parse_int, 0),
    # ImageNormalizeParam
    "mirror": (parse_bool, False), "rand_mirror": (parse_bool, False),
    "mean_img": (parse_str, ""), "mean_r": (parse_float, 0.0), "mean_g": (parse_float, 0.0),
    "mean_b": (parse_float, 0.0), "mean_a": (parse_float, 0.0), "std_r": (parse_float, 1.0),
    "std_g": (parse_float, 1.0), "std_b": (parse_float, 1.0), "std_a": (parse_float, 1.0),
    "scale": (parse_float, 1.0), "max_random_contrast": (parse_float, 0.0),
    "max_random_illumination": (parse_float, 0.0),
}

# Affine warps and HLS jitter: MXNet applies them with cv::warpAffine / cvtColor, which
# mxlite does not have. Refused when set (never silently skipped).
_UNSUPPORTED = ("max_rotate_angle", "rotate", "max_shear_ratio", "max_random_scale",
                "min_random_scale", "max_img_size", "min_img_size", "random_h", "random_s",
                "random_l", "rotate_list")
# Normalization arguments: the uint8 output has none, int8 only subtracts the mean.
_NORMALIZE = ("mean_img", "mean_r", "mean_g", "mean_b", "mean_a", "std_r", "std_g", "std_b",
              "std_a", "scale", "max_random_contrast", "max_random_illumination")


def _parse_args(where, kwargs):
    unknown = set(kwargs) - set(_PARAMS) - {"rotate_list"}
    ignore_unknown_args(where, unknown)
    kwargs = {k: v for k, v in kwargs.items() if k not in unknown}
    p = {k: kwargs.get(k, d) for k, (_, d) in _PARAMS.items()}
    for k in kwargs:
        if k in _PARAMS and kwargs[k] is not None:
            p[k] = _PARAMS[k][0](kwargs[k])
    for k in ("data_shape", "batch_size"):
        if p[k] is None:
            raise ValueError("%s: %s is required" % (where, k))
    bad = [k for k in _UNSUPPORTED if k in kwargs and kwargs[k] != _PARAMS.get(k, (0, None))[1]]
    if p["max_aspect_ratio"] != 0 and not p["random_resized_crop"]:
        bad.append("max_aspect_ratio")
    if bad:
        raise MXNetError("%s: %s not supported in mxlite (affine warps and HLS jitter need "
                         "OpenCV's warpAffine/cvtColor); leave them at their defaults"
                         % (where, ", ".join(sorted(bad))))
    return p


def _check_args(where, p, out_dtype, given):
    shape = tuple(p["data_shape"])
    if len(shape) != 3 or shape[0] not in (1, 3, 4):
        raise ValueError("%s: data_shape must be (C, H, W) with C in 1, 3, 4, got %s"
                         % (where, shape))
    if p["batch_size"] <= 0:
        raise ValueError("%s: batch_size must be positive, got %d" % (where, p["batch_size"]))
    if not p["path_imgrec"]:
        raise ValueError("%s: path_imgrec is required" % where)
    if not 0 <= p["part_index"] < p["num_parts"]:
        raise ValueError("%s: part_index must be in [0, num_parts=%d), got %d"
                         % (where, p["num_parts"], p["part_index"]))
    if p["aug_seq"] != "aug_default":
        raise MXNetError("%s: aug_seq=%r not supported (only 'aug_default')"
                         % (where, p["aug_seq"]))
    if p["inter_method"] not in (0, 1, 2, 3, 4, 9, 10):
        raise ValueError("%s: inter_method must be 0-4, 9 or 10, got %d"
                         % (where, p["inter_method"]))
    ignored = {np.uint8: _NORMALIZE,
               np.int8: [k for k in _NORMALIZE if not k.startswith("mean")]}.get(out_dtype, ())
    bad = sorted(k for k in ignored if k in given and given[k] != _PARAMS[k][1])
    if bad:
        raise MXNetError("%s: %s have no effect on %s output (MXNet ignores them); leave "
                         "them out" % (where, ", ".join(bad), np.dtype(out_dtype).name))


def _out_dtype(where, dtype):
    table = {None: np.float32, "None": np.float32, "float32": np.float32, "uint8": np.uint8,
             "int8": np.int8}
    if dtype not in table:
        raise MXNetError("%s: unknown dtype %r (float32, uint8 or int8)" % (where, dtype))
    return table[dtype]


def _record_offsets(path):
    """Byte offsets of the records of a .rec file (a walk over the headers only)."""
    offsets, pos, whole = [], 0, True
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        while pos + 8 <= size:
            f.seek(pos)
            magic, lrec = struct.unpack("<II", f.read(8))
            if magic != recordio._MAGIC:
                raise MXNetError("ImageRecordIter: %s is not a RecordIO file (bad magic at "
                                 "offset %d)" % (path, pos))
            cflag, length = lrec >> 29, lrec & recordio._LEN_MASK
            if whole:
                offsets.append(pos)
            whole = cflag in (0, 3)
            pos += 8 + length + recordio._pad4(length)
    return offsets, size


def _part_offsets(p):
    """The record offsets of part ``part_index``, split as dmlc's InputSplit splits them:
    by record count with an index file, else by bytes (a record belongs to the part its
    first byte falls in)."""
    rank, nparts = p["part_index"], p["num_parts"]
    if p["path_imgidx"]:
        with recordio.MXIndexedRecordIO(p["path_imgidx"], p["path_imgrec"], "r") as rec:
            offsets = sorted(rec.idx.values())
        step = -(-len(offsets) // nparts)
        return offsets[rank * step:(rank + 1) * step]
    offsets, size = _record_offsets(p["path_imgrec"])
    step = -(-size // nparts)
    step = -(-step // 4) * 4                # aligned to RecordIO's 4 bytes
    begin, end = min(step * rank, size), min(step * (rank + 1), size)
    return [o for o in offsets if begin <= o < end]


def _read_imglist(path, width):
    """Labels by image index from a .lst file (index, labels..., path; tab separated)."""
    labels = {}
    with open(path) as f:
        for line in f:
            fields = line.strip().split("\t")
            if len(fields) < 2:
                continue
            labels[int(float(fields[0]))] = np.array(fields[1:1 + width], np.float32)
    return labels


class ImageRecordIter(_TupleBatch, MXDataIter):
    """Batches of decoded, augmented images from a RecordIO (.rec) file, as
    ``mxnet.io.ImageRecordIter`` (MXNet 1.9.1).

    Keyword arguments only, with MXNet's names and defaults (``help`` of MXNet's
    iterator lists them): ``path_imgrec`` (required), ``path_imgidx``, ``path_imglist``,
    ``data_shape`` (C, H, W; required), ``batch_size`` (required), ``label_width``,
    ``round_batch``, ``shuffle``, ``seed``, ``seed_aug``, ``part_index``, ``num_parts``,
    ``dtype`` (None/'float32', 'uint8', 'int8'), ``data_name``, ``label_name``; the
    default augmenter's ``resize``, ``rand_crop``, ``random_resized_crop`` (with
    ``min/max_random_area``, ``min/max_aspect_ratio``), ``min/max_crop_size``, ``pad``,
    ``fill_value``, ``inter_method``, ``brightness``, ``contrast``, ``saturation``,
    ``pca_noise``; and the normalization ``mirror``, ``rand_mirror``, ``mean_img``,
    ``mean_r/g/b/a``, ``std_r/g/b/a``, ``scale``, ``max_random_contrast``,
    ``max_random_illumination``.

    Each sample: decode (RGB), resize the shorter edge to ``resize``, enlarge
    (rows, then columns) if smaller than ``data_shape``, crop (centre, or random with
    ``rand_crop``), jitter colours, mirror, then ``(x - mean) * scale / std`` in float32.
    A batch with too few samples left is completed from the start of the data
    (``round_batch``, ``pad`` counts them) and the next epoch goes on after them, as in
    MXNet.

    Differences from MXNet:

    - Unknown arguments are ignored with one warning (MXNet ignores them silently). The
      affine and HLS augmentations (``max_rotate_angle``, ``rotate``, ``max_shear_ratio``,
      ``min/max_random_scale``, ``min/max_img_size``, ``random_h/s/l``) raise: they need
      OpenCV's ``warpAffine``/``cvtColor``.
    - Random draws (crops, mirrors, jitter, shuffling) come from mxlite's own generators
      (seeded from ``seed``/``seed_aug``: reproducible, not MXNet's numbers). Random
      resized crops draw the aspect ratio log-uniformly (``mx.image.random_size_crop``);
      brightness/contrast/saturation run in float and are rounded back to uint8.
    - With ``round_batch=False`` the last batch's ``pad`` is the number of empty rows
      (zeros); MXNet reports 0 and leaves stale data there.
    - Bilinear resizing (``inter_method=1``, the default) can differ from OpenCV by 1
      grey level (see ``mx.image.imresize``); 2 (bicubic) matches exactly.
    - ``preprocess_threads``, ``prefetch_buffer``, ``ctx``, ``device_id``, ``verbose``
      and ``shuffle_chunk_*`` are accepted; samples are decoded in this thread.
    - A ``mean_img`` file that does not exist is computed from the augmented images
      (before mirroring) and saved, as MXNet does.

    Examples
    --------
    >>> it = mx.io.ImageRecordIter(path_imgrec='train.rec', data_shape=(3, 224, 224),
    ...                            batch_size=32, resize=256)          # doctest: +SKIP
    >>> it.next().data[0].shape                                       # doctest: +SKIP
    (32, 3, 224, 224)
    """

    _FIXED_DTYPE = None

    def __init__(self, *args, **kwargs):
        where = type(self).__name__
        if args:
            raise TypeError("%s takes keyword arguments only, got %d positional"
                            % (where, len(args)))
        p = _parse_args(where, kwargs)
        self._dtype = self._FIXED_DTYPE or _out_dtype(where, p["dtype"])
        _check_args(where, p, self._dtype, kwargs)
        DataIter.__init__(self, p["batch_size"])
        self._p = p
        self._shape = tuple(int(d) for d in p["data_shape"])
        self._offsets = _part_offsets(p)
        self._labels = _read_imglist(p["path_imglist"], p["label_width"]) \
            if p["path_imglist"] else None
        self._file = open(p["path_imgrec"], "rb")
        self._shuffle_rng = np.random.RandomState(_RAND_MAGIC + p["seed"])
        self._aug_rng = random.Random(_RAND_MAGIC)
        self._np_rng = np.random.RandomState(_RAND_MAGIC)
        self._jitter = ColorJitterAug(p["brightness"], p["contrast"], p["saturation"]) \
            if (p["brightness"] or p["contrast"] or p["saturation"]) else None
        self._lighting = LightingAug(p["pca_noise"], _PCA_EIGVAL, _PCA_EIGVEC) \
            if p["pca_noise"] > 0 else None
        self._order = self._new_order()
        self._pos = 0
        self._count = 0             # samples read so far (names the seed_aug stream)
        self._overflow = False
        self._batch = None
        self._mean_img = self._load_mean() if self._dtype != np.uint8 else None

    # ------------------------------------------------------------- descriptions
    @property
    def provide_data(self):
        return [DataDesc(self._p["data_name"], (self.batch_size,) + self._shape, self._dtype)]

    @property
    def provide_label(self):
        w = self._p["label_width"]
        shape = (self.batch_size,) if w == 1 else (self.batch_size, w)
        return [DataDesc(self._p["label_name"], shape, np.float32)]

    # ------------------------------------------------------------- epoch order
    def _new_order(self):
        order = list(range(len(self._offsets)))
        if self._p["shuffle"]:
            self._shuffle_rng.shuffle(order)
        return order

    def reset(self):
        """Start the next epoch; after a batch completed by ``round_batch`` it goes on
        after the samples that completed it (MXNet's behaviour)."""
        super().reset()
        if self._p["round_batch"] and self._overflow:
            self._overflow = False
            return
        self._order = self._new_order()
        self._pos = 0

    def _take(self, n):
        got = self._order[self._pos:self._pos + n]
        self._pos += len(got)
        return got

    def _batch_samples(self):
        """Record numbers of the next batch, and its pad; None at the end of the epoch."""
        if self._overflow:
            return None
        bs = self.batch_size
        got = self._take(bs)
        if not got:
            return None
        if len(got) == bs:
            return got, 0
        if not self._p["round_batch"]:
            return got, bs - len(got)
        need = bs - len(got)
        if need > len(self._order):
            raise MXNetError("%s: number of input images must be bigger than the batch size "
                             "(part %d has %d, batch_size %d)" % (
                                 type(self).__name__, self._p["part_index"],
                                 len(self._order), bs))
        self._overflow = True
        self._order, self._pos = self._new_order(), 0
        return got + self._take(need), need

    # ------------------------------------------------------------- one sample
    def _read(self, k):
        self._file.seek(self._offsets[k])
        header, img = recordio.unpack(recordio._read_record(self._file, self._p["path_imgrec"]))
        return header, img

    def _label(self, header):
        w = self._p["label_width"]
        if self._labels is not None:
            try:
                return self._labels[int(header.id)]
            except KeyError:
                raise MXNetError("%s: image index %d is not in path_imglist" % (
                    type(self).__name__, header.id)) from None
        label = np.atleast_1d(np.asarray(header.label, np.float32))
        if header.flag > 0 and len(label) != w:
            raise MXNetError("%s: rec file provides %d-dimensional label but label_width is "
                             "set to %d" % (type(self).__name__, len(label), w))
        if header.flag == 0 and w != 1:
            raise MXNetError("%s: label_width must be 1 unless an imglist is provided or the "
                             "rec file is packed with multi dimensional label"
                             % type(self).__name__)
        return label

    def _decode(self, buf):
        c = self._shape[0]
        if c == 4:
            img = recordio._decode_image(buf, flag=-1, to_rgb=True)
            if img.ndim != 3 or img.shape[2] != 4:
                raise MXNetError("%s: expected a 4-channel image" % type(self).__name__)
            return img
        return _img._host(_img.imdecode(buf, flag=1 if c == 3 else 0))

    def _resize(self, img, w, h):
        sizes = (img.shape[0], img.shape[1], h, w)
        interp = _img._get_interp_method(self._p["inter_method"], sizes)
        return _img._host(_img.imresize(nd.array(img, dtype=img.dtype), w, h, interp=interp))

    def _augment(self, img):
        """MXNet's default augmenter on a uint8 HWC image: resize, crop, colour."""
        p = self._p
        rows, cols = img.shape[:2]
        if p["resize"] != -1:
            r = p["resize"]
            img = self._resize(img, r, r * rows // cols) if rows > cols else \
                self._resize(img, r * cols // rows, r)
        if p["random_resized_crop"]:
            img = self._random_resized_crop(img)
        else:
            if p["pad"] > 0:
                img = _img._host(_img.copyMakeBorder(nd.array(img, dtype=img.dtype),
                                                     *([p["pad"]] * 4), value=p["fill_value"]))
            img = self._crop(img)
        return self._colour(img)

    def _crop(self, img):
        p = self._p
        H, W = self._shape[1:]
        if p["max_crop_size"] != -1 or p["min_crop_size"] != -1:
            lo, hi = p["min_crop_size"], p["max_crop_size"]
            if not (img.shape[1] >= hi and img.shape[0] >= hi >= lo):
                raise MXNetError("%s: input image size smaller than max_crop_size"
                                 % type(self).__name__)
            size = random.randint(lo, hi)
            y, x = self._crop_origin(img.shape[0] - size, img.shape[1] - size)
            return self._resize(img[y:y + size, x:x + size], W, H)
        # Smaller than data_shape: enlarged to fit, rows first (checked against MXNet).
        if img.shape[0] < H:
            img = self._resize(img, img.shape[1] * H // img.shape[0], H)
        if img.shape[1] < W:
            img = self._resize(img, W, img.shape[0] * W // img.shape[1])
        y, x = self._crop_origin(img.shape[0] - H, img.shape[1] - W)
        return img[y:y + H, x:x + W]

    def _crop_origin(self, dy, dx):
        if self._p["rand_crop"]:
            return random.randint(0, dy), random.randint(0, dx)
        return dy // 2, dx // 2

    def _random_resized_crop(self, img):
        p = self._p
        H, W = self._shape[1:]
        lo = p["min_aspect_ratio"]
        hi = p["max_aspect_ratio"]
        ratio = (1 - hi, 1 + hi) if lo is None else (lo, hi)
        if ratio[0] <= 0 or ratio[0] > ratio[1]:
            ratio = (1.0, 1.0) if hi == 0 and lo is None else ratio
        if ratio[0] <= 0 or ratio[0] > ratio[1]:
            raise ValueError("%s: aspect ratio range %s is invalid" % (type(self).__name__,
                                                                        ratio))
        src = nd.array(img, dtype=img.dtype)
        out, _ = _img.random_size_crop(src, (W, H), (p["min_random_area"],
                                                     p["max_random_area"]), ratio,
                                       interp=_img._get_interp_method(p["inter_method"]))
        return _img._host(out)

    def _colour(self, img):
        if self._jitter is None and self._lighting is None:
            return img
        x = nd.array(img, dtype=np.float32)
        if self._jitter is not None:
            x = self._jitter(x)
        if self._lighting is not None:
            x = self._lighting(x)
        # NOTE: MXNet jitters the uint8 image; the float result is rounded and saturated.
        return np.clip(np.rint(x.asnumpy()), 0, 255).astype(np.uint8)

    def _normalize(self, img):
        """HWC uint8 to CHW output dtype, mirrored and normalized as MXNet's ProcessImage."""
        p = self._p
        mirrored = p["mirror"] or (p["rand_mirror"] and random.random() < 0.5)
        x = img.transpose(2, 0, 1)
        if mirrored:
            x = x[:, :, ::-1]
        c = x.shape[0]
        keys = "rgba"[:c]
        if self._dtype == np.uint8:
            return x
        if self._dtype == np.int8:
            mean = self._mean_img if self._mean_img is not None else \
                np.array([p["mean_" + k] for k in keys]).reshape(c, 1, 1)
            mean = self._mirror_mean(np.rint(mean), mirrored)
            return np.clip(x.astype(np.int32) - mean.astype(np.int32), -128, 127).astype(np.int8)
        f32 = np.float32
        contrast = f32((f32(random.random()) * f32(p["max_random_contrast"]) * 2
                        - f32(p["max_random_contrast"]) + 1) * f32(p["scale"]))
        illum = f32((f32(random.random()) * f32(p["max_random_illumination"]) * 2
                     - f32(p["max_random_illumination"])) * f32(p["scale"]))
        std = np.array([p["std_" + k] for k in keys], f32).reshape(c, 1, 1)
        mult, bias = contrast / std, illum / std
        if self._mean_img is not None:
            mean = self._mirror_mean(self._mean_img.astype(f32), mirrored)
        else:
            mean = np.array([p["mean_" + k] for k in keys], f32).reshape(c, 1, 1)
        return ((x.astype(f32) - mean) * mult + bias).astype(f32)

    @staticmethod
    def _mirror_mean(mean, mirrored):
        # MXNet subtracts the mean at the source pixel, then writes it mirrored.
        return mean[:, :, ::-1] if mirrored and mean.ndim == 3 and mean.shape[2] > 1 else mean

    def _with_aug_rng(self, fn, *args):
        """Run ``fn`` with the iterator's random streams in Python's ``random`` and
        NumPy's global generator (mx.image draws from them), restoring them after."""
        saved_py, saved_np = random.getstate(), np.random.get_state()
        random.setstate(self._aug_rng.getstate())
        np.random.set_state(self._np_rng.get_state())
        try:
            return fn(*args)
        finally:
            self._aug_rng.setstate(random.getstate())
            self._np_rng.set_state(np.random.get_state())
            random.setstate(saved_py)
            np.random.set_state(saved_np)

    def _sample(self, k):
        header, buf = self._read(k)
        if self._p["seed_aug"] is not None:
            seed = self._count + self._p["seed_aug"] + _RAND_MAGIC
            self._aug_rng.seed(seed)
            self._np_rng.seed(seed % (1 << 32))
        self._count += 1
        img = self._decode(buf)
        out = self._with_aug_rng(lambda: self._normalize(self._augment(img)))
        if out.shape[1:] != self._shape[1:] or out.shape[0] != self._shape[0]:
            raise MXNetError("%s: image of record %d gives shape %s, expected %s (check "
                             "data_shape's channels)" % (type(self).__name__, header.id,
                                                         out.shape, self._shape))
        return self._label(header), out

    # ------------------------------------------------------------- mean image
    def _load_mean(self):
        path = self._p["mean_img"]
        if not path:
            return None
        if os.path.exists(path):
            loaded = nd.load(path)
            arrays = list(loaded.values()) if isinstance(loaded, dict) else list(loaded)
            if len(arrays) != 1:
                raise MXNetError("%s: invalid mean image file %s (expected one array)"
                                 % (type(self).__name__, path))
            return arrays[0].asnumpy().astype(np.float32)
        total, n = None, 0
        for k in range(len(self._offsets)):
            header, buf = self._read(k)
            img = self._with_aug_rng(self._augment, self._decode(buf))
            x = img.transpose(2, 0, 1).astype(np.float32)
            total = x if total is None else total + x
            n += 1
        mean = (total * np.float32(1.0 / max(n, 1))).astype(np.float32)
        nd.save(path, {"mean_img": nd.array(mean)})
        return mean

    # ------------------------------------------------------------- batches
    def iter_next(self):
        got = self._batch_samples()
        if got is None:
            return False
        samples, pad = got
        data = np.zeros((self.batch_size,) + self._shape, self._dtype)
        label = np.zeros((self.batch_size, self._p["label_width"]), np.float32)
        for i, k in enumerate(samples):
            label[i], data[i] = self._sample(k)
        if self._p["label_width"] == 1:
            label = label[:, 0]
        self._batch = (nd.array(data, dtype=self._dtype), nd.array(label), pad)
        return True

    def getindex(self):
        # NOTE: MXNet's ImageRecordIter batches carry an all-zero index.
        return np.zeros(self.batch_size, np.uint64)

    def close(self):
        """Close the .rec file."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def __del__(self):
        try:
            self.close()
        except Exception:       # interpreter shutdown
            pass


class ImageRecordUInt8Iter(ImageRecordIter):
    """``ImageRecordIter`` with uint8 output and no normalization (deprecated in MXNet
    for ``ImageRecordIter(dtype='uint8')``)."""

    _FIXED_DTYPE = np.uint8


class ImageRecordInt8Iter(ImageRecordIter):
    """``ImageRecordIter`` with int8 output: ``saturate(pixel - round(mean))``
    (deprecated in MXNet for ``ImageRecordIter(dtype='int8')``)."""

    _FIXED_DTYPE = np.int8
