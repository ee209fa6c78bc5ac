"""Golden data for ``mx.image`` (tests/test_image.py), from real MXNet 1.9.1 (its OpenCV).

Run with MXNet's interpreter: ``python tests/reference_extra/gen_image.py`` from an
environment with ``pip install "numpy<1.24" mxnet==1.9.1`` (no Pillow needed: the PNG
files are written by the small encoder below).
Writes ``image.npz`` next to this file:

- ``png_rgb``, ``png_gray``: PNG bytes (uint8 arrays) of ``img_rgb`` (7x10x3) and
  ``img_gray`` (5x6); ``decode/<case>``: ``mx.image.imdecode`` of them.
- ``resize/<dtype>/<interp>/<w>x<h>``: ``imresize(src_<dtype>, w, h, interp)`` of the
  11x9x3 image ``src_uint8`` (and its float32 copy ``src_float32``).
- ``fn/<case>``: outputs of resize_short, fixed_crop, center_crop, random_crop,
  random_size_crop, color_normalize, copyMakeBorder; ``rect/<case>`` the crop boxes.
  Random cases seed Python's ``random`` with ``SEED`` first.
- ``aug/<case>``: augmenter outputs on ``src_float32`` (after ``random.seed(SEED)``).
- ``__dumps__``: JSON {config name: [aug.dumps() for aug in CreateAugmenter(...)]}.
- ``iter/<case>/data<i>``, ``iter/<case>/label<i>``, ``iter/<case>/pad<i>``: the batches
  of ``ImageIter`` over ``images.rec`` (records ``rec<i>`` of ``iter_pngs``) and over an
  image list, two epochs each.
"""
import json
import os
import random
import struct
import tempfile
import zlib

import numpy as np

mx = None       # mxnet, imported by main(): tests/test_image.py imports augmenters() only

SEED = 7
RNG = np.random.RandomState(11)
OUT = {}


def png_bytes(img):
    """A PNG file (8-bit gray or RGB, no filtering) for a uint8 HW or HWC array."""
    img = np.asarray(img, np.uint8)
    h, w = img.shape[:2]
    ctype = 0 if img.ndim == 2 else 2
    raw = b"".join(b"\x00" + img[r].tobytes() for r in range(h))

    def chunk(tag, data):
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xffffffff))
    ihdr = struct.pack(">IIBBBBB", w, h, 8, ctype, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw))
            + chunk(b"IEND", b""))


def as_np(b):
    return np.frombuffer(b, np.uint8)


def decode_cases():
    rgb = RNG.randint(0, 256, (7, 10, 3)).astype(np.uint8)
    gray = RNG.randint(0, 256, (5, 6)).astype(np.uint8)
    OUT["img_rgb"], OUT["img_gray"] = rgb, gray
    OUT["png_rgb"], OUT["png_gray"] = as_np(png_bytes(rgb)), as_np(png_bytes(gray))
    prgb, pgray = png_bytes(rgb), png_bytes(gray)
    OUT["decode/rgb"] = mx.image.imdecode(prgb).asnumpy()
    OUT["decode/bgr"] = mx.image.imdecode(prgb, to_rgb=0).asnumpy()
    OUT["decode/rgb_as_gray"] = mx.image.imdecode(prgb, flag=0).asnumpy()
    OUT["decode/gray_as_rgb"] = mx.image.imdecode(pgray).asnumpy()
    OUT["decode/gray"] = mx.image.imdecode(pgray, flag=0).asnumpy()


def resize_cases(src):
    for dt in ("uint8", "float32"):
        x = mx.nd.array(src, dtype=dt)
        for interp in (0, 1, 2, 3, 4):
            for w, h in ((17, 13), (4, 5), (6, 20), (11, 9), (3, 3), (22, 18)):
                y = mx.image.imresize(x, w, h, interp=interp)
                OUT["resize/%s/%d/%dx%d" % (dt, interp, w, h)] = y.asnumpy()


def fn_cases(src):
    x = mx.nd.array(src, dtype="uint8")
    xf = mx.nd.array(src, dtype="float32")
    OUT["fn/resize_short"] = mx.image.resize_short(x, 5).asnumpy()
    OUT["fn/resize_short_up"] = mx.image.resize_short(x, 14, interp=1).asnumpy()
    OUT["fn/fixed_crop"] = mx.image.fixed_crop(x, 2, 1, 5, 6).asnumpy()
    OUT["fn/fixed_crop_resize"] = mx.image.fixed_crop(x, 2, 1, 5, 6, size=(8, 4),
                                                      interp=1).asnumpy()
    for name, size in (("center_crop", (4, 6)), ("center_crop_up", (20, 10))):
        y, rect = mx.image.center_crop(x, size)
        OUT["fn/" + name], OUT["rect/" + name] = y.asnumpy(), np.array(rect)
    random.seed(SEED)
    y, rect = mx.image.random_crop(x, (5, 4))
    OUT["fn/random_crop"], OUT["rect/random_crop"] = y.asnumpy(), np.array(rect)
    random.seed(SEED)
    y, rect = mx.image.random_size_crop(x, (6, 6), 0.3, (0.5, 2.0), interp=1)
    OUT["fn/random_size_crop"], OUT["rect/random_size_crop"] = y.asnumpy(), np.array(rect)
    mean, std = mx.nd.array([120.0, 110.0, 100.0]), mx.nd.array([50.0, 60.0, 70.0])
    OUT["fn/color_normalize"] = mx.image.color_normalize(xf.copy(), mean, std).asnumpy()
    OUT["fn/color_normalize_mean"] = mx.image.color_normalize(xf.copy(), mean).asnumpy()
    for t in range(5):
        OUT["fn/border%d" % t] = mx.image.copyMakeBorder(x, 1, 2, 3, 0, type=t).asnumpy()
    OUT["fn/border_values"] = mx.image.copyMakeBorder(x, 2, 0, 1, 1,
                                                      values=(9, 8, 7)).asnumpy()
    OUT["fn/border_value"] = mx.image.copyMakeBorder(x, 0, 1, 2, 1, value=5).asnumpy()


def augmenters(mx):
    """The augmenters compared (``mx``: mxnet here, mxlite in the test)."""
    return {
        "brightness": mx.image.BrightnessJitterAug(0.3),
        "contrast": mx.image.ContrastJitterAug(0.3),
        "saturation": mx.image.SaturationJitterAug(0.3),
        "hue": mx.image.HueJitterAug(0.2),
        "flip": mx.image.HorizontalFlipAug(1.0),
        "gray": mx.image.RandomGrayAug(1.0),
        "color_jitter": mx.image.ColorJitterAug(0.2, 0.3, 0.4),
        "resize": mx.image.ResizeAug(6, interp=1),
        "force_resize": mx.image.ForceResizeAug((5, 7), interp=1),
        "center_crop": mx.image.CenterCropAug((6, 4)),
        "random_crop": mx.image.RandomCropAug((6, 4)),
        "random_sized_crop": mx.image.RandomSizedCropAug((5, 5), 0.2, (0.75, 1.33), interp=1),
        "cast": mx.image.CastAug("float16"),
        "normalize": mx.image.ColorNormalizeAug(mx.nd.array([1.0, 2.0, 3.0]),
                                                mx.nd.array([2.0, 3.0, 4.0])),
    }


def aug_cases(src):
    xf = mx.nd.array(src, dtype="float32")
    for name, aug in augmenters(mx).items():
        random.seed(SEED)
        OUT["aug/" + name] = aug(xf.copy()).asnumpy()
    np.random.seed(SEED)
    lighting = mx.image.LightingAug(0.1, np.array([55.46, 4.794, 1.148]),
                                    np.array([[-0.5675, 0.7192, 0.4009],
                                              [-0.5808, -0.0045, -0.8140],
                                              [-0.5836, -0.6948, 0.4203]]))
    OUT["aug/lighting"] = lighting(xf.copy()).asnumpy()


def augmenter_configs():
    """CreateAugmenter keyword sets whose ``dumps()`` are compared."""
    return {
        "plain": dict(data_shape=(3, 8, 8)),
        "all": dict(data_shape=(3, 8, 6), resize=10, rand_crop=True, rand_resize=True,
                    rand_mirror=True, mean=True, std=True, brightness=0.1, contrast=0.2,
                    saturation=0.3, hue=0.1, pca_noise=0.05, rand_gray=0.2, inter_method=1),
        "crop_mean": dict(data_shape=(3, 4, 5), rand_crop=True,
                          mean=np.array([1.0, 2.0, 3.0]), std=np.array([4.0, 5.0, 6.0])),
    }


def dumps_cases():
    dumps = {}
    for name, kw in augmenter_configs().items():
        dumps[name] = [a.dumps() for a in mx.image.CreateAugmenter(**kw)]
    OUT["__dumps__"] = np.array(json.dumps(dumps))


def iter_cases():
    pngs = [RNG.randint(0, 256, (6 + i % 3, 9 - i % 2, 3)).astype(np.uint8) for i in range(5)]
    tmp = tempfile.mkdtemp()
    rec_path, idx_path = os.path.join(tmp, "images.rec"), os.path.join(tmp, "images.idx")
    rec = mx.recordio.MXIndexedRecordIO(idx_path, rec_path, "w")
    for i, img in enumerate(pngs):
        OUT["iter_pngs/%d" % i] = img
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i % 3), i, 0),
                                          png_bytes(img)))
    rec.close()
    lst = []
    for i, img in enumerate(pngs):
        with open(os.path.join(tmp, "im%d.png" % i), "wb") as f:
            f.write(png_bytes(img))
        lst.append([float(i), 2.0 * i, "im%d.png" % i])
    kw = dict(batch_size=2, data_shape=(3, 4, 5))
    iters = {
        "rec_pad": mx.image.ImageIter(path_imgrec=rec_path, **kw),
        "rec_idx_discard": mx.image.ImageIter(path_imgrec=rec_path, path_imgidx=idx_path,
                                              last_batch_handle="discard", **kw),
        "rec_roll_over": mx.image.ImageIter(path_imgrec=rec_path, last_batch_handle="roll_over",
                                            resize=6, inter_method=1, **kw),
        "list_label2": mx.image.ImageIter(imglist=lst, path_root=tmp, label_width=2,
                                          mean=True, std=True, **kw),
    }
    for name, it in iters.items():
        k = 0
        for _ in range(2):
            for batch in it:
                OUT["iter/%s/data%d" % (name, k)] = batch.data[0].asnumpy()
                OUT["iter/%s/label%d" % (name, k)] = batch.label[0].asnumpy()
                OUT["iter/%s/pad%d" % (name, k)] = np.array(batch.pad)
                k += 1
            it.reset()


def main():
    global mx
    import mxnet
    mx = mxnet
    decode_cases()
    src = RNG.randint(0, 256, (9, 11, 3)).astype(np.uint8)
    OUT["src_uint8"], OUT["src_float32"] = src, src.astype(np.float32)
    resize_cases(src)
    fn_cases(src)
    aug_cases(src)
    dumps_cases()
    iter_cases()
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "image.npz")
    np.savez_compressed(path, **OUT)
    print("wrote %d arrays to %s" % (len(OUT), path))


if __name__ == "__main__":
    main()
