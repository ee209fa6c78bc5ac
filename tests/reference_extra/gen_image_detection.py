"""Golden data for ``mx.image`` detection (tests/test_image_detection.py), from MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_image_detection.py``
(``pip install "numpy<1.24" mxnet==1.9.1``; no OpenCV-Python or Pillow needed: the PNG
files are written by the small encoder below). Writes ``image_detection.npz`` next to
this file; the .rec/.lst files are rebuilt by the tests from the stored PNG bytes.

- ``png/<i>``: PNG bytes (uint8) of ``img/<i>`` (12x16x3 uint8); ``raw/<i>``: its raw
  detection label ``[header_width, object_width, header..., objects...]``.
- ``parse/<i>``: ``ImageDetIter._parse_label(raw/<i>)`` (bad boxes removed).
- ``flip/{data,label}``: ``DetHorizontalFlipAug(1)`` of ``src`` (float32) and ``label``.
- ``crop_update/<k>``: ``DetRandomCropAug(min_eject_coverage=m)._update_labels`` for the
  box ``crop_box/<k>`` (``[m, x, y, w, h]``); missing when MXNet gives None.
  ``crop_check/<k>``: ``_check_satisfy_constraints`` for ``check_box/<k>``.
- ``pad_update/<k>``: ``DetRandomPadAug._update_labels`` for ``pad_box/<k>``.
- ``crop_seeded/<k>/{data,label}``, ``pad_seeded/<k>/...``, ``select_seeded/<k>/...``:
  random augmenters applied after ``random.seed(SEED + k)`` (MXNet draws from Python's
  ``random``), so the same draws give the same boxes.
- ``__dumps__``: JSON {config: [aug.dumps() for aug in ...]}.
- ``iter/<case>/{data,label,pad}<k>``: batches of ``ImageDetIter`` (two epochs), and
  ``iter/<case>/label_shape``.
"""
import json
import os
import random
import struct
import tempfile
import zlib

import numpy as np

mx = None       # mxnet, imported by main()

SEED = 5
RNG = np.random.RandomState(3)
OUT = {}

H, W = 12, 16
RAW = [
    [2, 5, 0, .1, .2, .6, .7, 1, .5, .5, .9, .95],
    [3, 5, 7, 2, .0, .0, .5, .5, 1, .2, .3, .4, .9, 3, .6, .6, .5, .9],   # 3rd box: xmax < xmin
    [2, 5, 1, .25, .1, .75, .8],
    [2, 5, 0, .1, .1, .3, .3, 1, .2, .2, .4, .4, 2, .5, .5, .7, .7, 1, .05, .6, .95, .98],
    [2, 5, -1, .1, .1, .8, .8],                                          # no class >= 0
]
# Object width 6 with a 4-wide header (image list cases).
RAW6 = [
    [4, 6, 9, 9, 0, .1, .2, .6, .7, .5, 1, .3, .3, .9, .9, .25],
    [4, 6, 9, 9, 2, .2, .1, .8, .6, .75],
    [4, 6, 9, 9, 1, .0, .0, 1., 1., .1, 0, .4, .4, .6, .6, .2, 3, .1, .5, .3, .9, .3],
]


def png_bytes(img):
    """A PNG file (8-bit RGB, no filtering) for a uint8 HWC array."""
    img = np.asarray(img, np.uint8)
    h, w = img.shape[:2]
    raw = b"".join(b"\x00" + img[r].tobytes() for r in range(h))

    def chunk(tag, data):
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xffffffff))
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


def label_of(raw):
    return np.array(raw, np.float32)


def parse_raw(det, raw):
    return det.ImageDetIter.__new__(det.ImageDetIter)._parse_label(mx.nd.array(raw))


def parse_cases(det):
    for i, raw in enumerate(RAW + RAW6):
        if i < len(RAW):
            OUT["raw/%d" % i] = label_of(raw)
        OUT["parse/%d" % i] = parse_raw(det, raw)


def flip_cases(det, src, label):
    data, out = det.DetHorizontalFlipAug(1)(mx.nd.array(src), label.copy())
    OUT["flip/data"], OUT["flip/label"] = data.asnumpy(), out


CROP_BOXES = [(0.3, 0, 0, 8, 6), (0.3, 4, 3, 10, 8), (0.6, 4, 3, 10, 8), (0.3, 9, 0, 7, 12),
              (0.95, 2, 2, 12, 9), (0.3, 12, 10, 4, 2), (0.0, 0, 0, 16, 12)]
CHECK_BOXES = [(0.1, 0, 0, 8, 6), (0.5, 4, 3, 14, 11), (0.9, 4, 3, 14, 11), (0.1, 0, 0, 1, 1),
               (0.0, 12, 10, 16, 12), (0.3, 2, 2, 15, 11)]
PAD_BOXES = [(0, 0, 20, 16), (3, 2, 24, 15), (5, 7, 40, 30)]


def box_cases(det, label):
    for k, (m, x, y, w, h) in enumerate(CROP_BOXES):
        OUT["crop_box/%d" % k] = np.array([m, x, y, w, h])
        aug = det.DetRandomCropAug(min_eject_coverage=m)
        out = aug._update_labels(label, (x, y, w, h), H, W)
        if out is not None:
            OUT["crop_update/%d" % k] = out
    for k, (m, x0, y0, x1, y1) in enumerate(CHECK_BOXES):
        OUT["check_box/%d" % k] = np.array([m, x0, y0, x1, y1])
        aug = det.DetRandomCropAug(min_object_covered=m)
        OUT["crop_check/%d" % k] = np.array(
            bool(aug._check_satisfy_constraints(label, x0, y0, x1, y1, W, H)))
    for k, box in enumerate(PAD_BOXES):
        OUT["pad_box/%d" % k] = np.array(box)
        OUT["pad_update/%d" % k] = det.DetRandomPadAug()._update_labels(label, box, H, W)


def random_augmenters(det):
    """Random augmenters whose outputs are checked after seeding Python's ``random``."""
    return {
        "crop_seeded": [det.DetRandomCropAug(),
                        det.DetRandomCropAug(min_object_covered=0.5, aspect_ratio_range=1.0,
                                             area_range=(0.2, 0.6), min_eject_coverage=0.6),
                        det.DetRandomCropAug(min_object_covered=0.0, area_range=0.5,
                                             max_attempts=3)],
        "pad_seeded": [det.DetRandomPadAug(),
                       det.DetRandomPadAug(aspect_ratio_range=(0.5, 2.0), area_range=(1.5, 4.0),
                                           pad_val=(10, 20, 30)),
                       det.DetRandomPadAug(aspect_ratio_range=1.3, area_range=2.0,
                                           pad_val=7.0)],
        "select_seeded": [det.CreateMultiRandCropAugmenter(
            min_object_covered=[0.1, 0.5, 0.9], area_range=[(0.1, 1.0), (0.3, 1.0), (0.5, 0.9)],
            skip_prob=0.3)] * 4,
    }


def seeded_cases(det, src, label):
    for name, augs in random_augmenters(det).items():
        for k, aug in enumerate(augs):
            random.seed(SEED + k)
            data, out = aug(mx.nd.array(src), label.copy())
            OUT["%s/%d/data" % (name, k)] = data.asnumpy()
            OUT["%s/%d/label" % (name, k)] = out


def dump_configs():
    """name -> kwargs of CreateDetAugmenter; shared with the tests."""
    return {
        "default": dict(data_shape=(3, 30, 40)),
        "everything": dict(data_shape=(3, 30, 40), resize=20, rand_crop=0.5, rand_pad=0.5,
                           rand_gray=0.2, rand_mirror=True, mean=True, std=True,
                           brightness=0.1, contrast=0.2, saturation=0.3, pca_noise=0.05,
                           hue=0.1, inter_method=10, min_object_covered=[0.3, 0.5, 0.9],
                           aspect_ratio_range=(0.5, 2.0), area_range=(0.3, 3.0),
                           min_eject_coverage=0.4, max_attempts=20, pad_val=(1, 2, 3)),
        "crop_lists": dict(data_shape=(3, 8, 8), rand_crop=1, min_object_covered=[0.1, 0.7],
                           aspect_ratio_range=[(0.5, 1.0), (1.0, 2.0)],
                           area_range=[(0.1, 1.0), (0.3, 0.8)], min_eject_coverage=[0.2, 0.5],
                           max_attempts=[5, 9]),
        "mean_std_arrays": dict(data_shape=(3, 8, 8), rand_pad=1, mean=np.array([1., 2., 3.]),
                                std=np.array([4.])),
    }


def dumps_cases(det):
    out = {}
    for name, kw in dump_configs().items():
        out[name] = [a.dumps() for a in det.CreateDetAugmenter(**kw)]
    out["pad_scalar"] = [det.DetRandomPadAug(pad_val=5, aspect_ratio_range=1.0,
                                             area_range=2.5).dumps()]
    out["crop_scalar"] = [det.DetRandomCropAug(aspect_ratio_range=1.5, area_range=0.5).dumps()]
    out["borrow"] = [det.DetBorrowAug(mx.image.ResizeAug(5, 1)).dumps()]
    out["select_empty"] = [det.DetRandomSelectAug([]).dumps()]
    OUT["__dumps__"] = np.array(json.dumps(out))


def iter_configs():
    """name -> (source, kwargs, seed or None); shared with the tests."""
    shape = dict(batch_size=2, data_shape=(3, H, W))
    return {
        "rec": ("rec", dict(shape), None),
        "rec_small": ("rec", dict(batch_size=3, data_shape=(3, 6, 8), inter_method=1), None),
        "rec_idx_shuffle_crop": ("rec_idx", dict(shape, shuffle=True, rand_crop=1,
                                                 rand_mirror=True, inter_method=1), 11),
        "rec_roll_over_pad": ("rec", dict(shape, last_batch_handle="roll_over", rand_pad=1,
                                          inter_method=1), 12),
        "rec_discard": ("rec", dict(shape, last_batch_handle="discard", rand_mirror=True), 13),
        "lst": ("lst", dict(shape, mean=True, std=True), None),
        "imglist": ("imglist", dict(batch_size=2, data_shape=(3, H, W), label_name="lab"), None),
    }


def write_sources(tmp):
    """The .rec/.idx of RAW records, the .lst and image list of RAW6 (images on disk)."""
    rec_path, idx_path = os.path.join(tmp, "det.rec"), os.path.join(tmp, "det.idx")
    rec = mx.recordio.MXIndexedRecordIO(idx_path, rec_path, "w")
    for i, raw in enumerate(RAW):
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, label_of(raw), i, 0),
                                          OUT["png/%d" % i].tobytes()))
    rec.close()
    lines, imglist = [], []
    for i, raw in enumerate(RAW6):
        with open(os.path.join(tmp, "im%d.png" % i), "wb") as f:
            f.write(OUT["png/%d" % i].tobytes())
        lines.append("\t".join([str(i)] + ["%r" % float(v) for v in raw] + ["im%d.png" % i]))
        imglist.append([float(v) for v in raw] + ["im%d.png" % i])
    with open(os.path.join(tmp, "det.lst"), "w") as f:
        f.write("\n".join(lines) + "\n")
    imglist5 = [[float(v) for v in raw] + ["im%d.png" % i] for i, raw in enumerate(RAW[:3])]
    return dict(rec=dict(path_imgrec=rec_path),
                rec_idx=dict(path_imgrec=rec_path, path_imgidx=idx_path),
                lst=dict(path_imglist=os.path.join(tmp, "det.lst"), path_root=tmp),
                imglist=dict(imglist=imglist, path_root=tmp),
                imglist5=dict(imglist=imglist5, path_root=tmp))


def iter_cases(det):
    tmp = tempfile.mkdtemp()
    sources = write_sources(tmp)
    for name, (src, kw, seed) in iter_configs().items():
        if seed is not None:
            random.seed(seed)
        it = det.ImageDetIter(**dict(kw, **sources[src]))
        OUT["iter/%s/label_shape" % name] = np.array(it.label_shape)
        k = 0
        for _ in range(2):
            for batch in it:
                OUT["iter/%s/data%d" % (name, k)] = batch.data[0].asnumpy()
                OUT["iter/%s/label%d" % (name, k)] = batch.label[0].asnumpy()
                OUT["iter/%s/pad%d" % (name, k)] = np.array(batch.pad)
                k += 1
            it.reset()
    # reshape / sync_label_shape: a list iterator (2 objects) synced with the rec one (4).
    a = det.ImageDetIter(batch_size=2, data_shape=(3, H, W), **sources["rec"])
    b = det.ImageDetIter(batch_size=2, data_shape=(3, H, W), **sources["imglist5"])
    OUT["sync/before"] = np.array([a.label_shape, b.label_shape])
    a.sync_label_shape(b)
    OUT["sync/after"] = np.array([a.label_shape, b.label_shape])
    OUT["sync/label"] = next(b).label[0].asnumpy()
    b.reshape(data_shape=(3, H, W), label_shape=(6, 5))
    OUT["sync/reshaped"] = next(b).label[0].asnumpy()


def main():
    global mx
    import mxnet
    mx = mxnet
    det = mx.image.detection
    for i in range(len(RAW)):
        img = RNG.randint(0, 256, (H, W, 3)).astype(np.uint8)
        OUT["img/%d" % i] = img
        OUT["png/%d" % i] = np.frombuffer(png_bytes(img), np.uint8)
    src = OUT["img/0"].astype(np.float32)
    label = parse_raw(det, RAW[3])
    OUT["src"], OUT["label"] = src, label
    parse_cases(det)
    flip_cases(det, src, label)
    box_cases(det, label)
    seeded_cases(det, src, label)
    dumps_cases(det)
    iter_cases(det)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "image_detection.npz")
    np.savez_compressed(path, **OUT)
    print("wrote %d arrays to %s" % (len(OUT), path))


if __name__ == "__main__":
    main()
