"""``mx.image`` detection: augmenters, ``CreateDetAugmenter`` and ``ImageDetIter``.

Golden data: tests/reference_extra/image_detection.npz, written by
``gen_image_detection.py`` under MXNet 1.9.1:

- ``img/<i>``, ``png/<i>`` (12x16 RGB images and their PNG bytes), ``raw/<i>`` raw
  detection labels, ``parse/<i>`` the parsed object arrays;
- ``flip/*``, ``crop_update/<k>`` / ``crop_check/<k>`` / ``pad_update/<k>`` (label
  transforms for the boxes ``crop_box/<k>``, ``check_box/<k>``, ``pad_box/<k>``);
- ``crop_seeded``, ``pad_seeded``, ``select_seeded``: random augmenters after
  ``random.seed(SEED + k)`` (MXNet draws from Python's ``random``: same seed, same box);
- ``__dumps__``: ``dumps()`` of CreateDetAugmenter configurations;
- ``iter/<case>/{data,label,pad}<k>``, ``iter/<case>/label_shape``, ``sync/*``:
  ``ImageDetIter`` batches over two epochs from a .rec, a .lst and a Python list.
"""
import importlib.util
import json
import os
import random

import numpy as np
import pytest

import mxlite as mx
from mxlite import recordio
from mxlite.image import detection as det

from conftest import REF

pytest.importorskip("PIL")      # decoding the PNG records needs Pillow (or OpenCV)

_EXTRA = os.path.join(os.path.dirname(REF), "reference_extra")
G = np.load(os.path.join(_EXTRA, "image_detection.npz"))
H, W = 12, 16


def _gen():
    """The generator module (for its shared configurations; it imports MXNet lazily)."""
    spec = importlib.util.spec_from_file_location(
        "gen_image_detection", os.path.join(_EXTRA, "gen_image_detection.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEN = _gen()


def _close(got, key, tol=0.0):
    want = G[key]
    got = got.asnumpy() if isinstance(got, mx.nd.NDArray) else np.asarray(got)
    assert got.shape == want.shape, (key, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=0, atol=tol, err_msg=key)


def _label():
    return G["label"].copy()


# ---------------------------------------------------------------- label parsing

@pytest.mark.parametrize("i", range(len(GEN.RAW) + len(GEN.RAW6)))
def test_parse_label_matches_mxnet(i):
    raw = (GEN.RAW + GEN.RAW6)[i]
    out = det.ImageDetIter._parse_label(None, mx.nd.array(raw))
    assert out.dtype == np.float32
    _close(out, "parse/%d" % i)
    _close(det.ImageDetIter._parse_label(None, np.array(raw)), "parse/%d" % i)


@pytest.mark.parametrize("raw,msg", [
    ([2, 5, 0, .1, .2], "Label shape is invalid"),
    ([2, 5, 0, .1, .2, .6, .7, 1], "inconsistent with annotation width"),
    ([2, 5, 0, .5, .2, .4, .7], "no valid label"),
    (3.0, "Label shape is invalid"),
])
def test_parse_label_errors(raw, msg):
    with pytest.raises(RuntimeError, match=msg):
        det.ImageDetIter._parse_label(None, raw)


# ---------------------------------------------------------------- deterministic augmenters

def test_flip_p1_matches_mxnet():
    data, label = det.DetHorizontalFlipAug(1)(mx.nd.array(G["src"]), _label())
    _close(data, "flip/data")
    _close(label, "flip/label")


def test_flip_p0_keeps_input():
    src, label = mx.nd.array(G["src"]), _label()
    data, out = det.DetHorizontalFlipAug(0)(src, label)
    assert data is src and np.array_equal(out, G["label"])


@pytest.mark.parametrize("k", range(len(GEN.CROP_BOXES)))
def test_crop_label_update_matches_mxnet(k):
    m, x, y, w, h = GEN.CROP_BOXES[k]
    out = det.DetRandomCropAug(min_eject_coverage=m)._update_labels(_label(), (x, y, w, h), H, W)
    key = "crop_update/%d" % k
    if key not in G.files:
        assert out is None          # every object ejected
    else:
        _close(out, key)


@pytest.mark.parametrize("k", range(len(GEN.CHECK_BOXES)))
def test_crop_constraints_match_mxnet(k):
    m, x0, y0, x1, y1 = GEN.CHECK_BOXES[k]
    aug = det.DetRandomCropAug(min_object_covered=m)
    got = aug._check_satisfy_constraints(_label(), x0, y0, x1, y1, W, H)
    assert bool(got) == bool(G["crop_check/%d" % k])


@pytest.mark.parametrize("k", range(len(GEN.PAD_BOXES)))
def test_pad_label_update_matches_mxnet(k):
    out = det.DetRandomPadAug()._update_labels(_label(), GEN.PAD_BOXES[k], H, W)
    _close(out, "pad_update/%d" % k)


# ---------------------------------------------------------------- random augmenters

@pytest.mark.parametrize("name", ["crop_seeded", "pad_seeded", "select_seeded"])
def test_seeded_random_augmenters_match_mxnet(name):
    for k, aug in enumerate(GEN.random_augmenters(det)[name]):
        random.seed(GEN.SEED + k)
        data, label = aug(mx.nd.array(G["src"]), _label())
        _close(data, "%s/%d/data" % (name, k))
        _close(label, "%s/%d/label" % (name, k))


def _random_label(rng, n):
    xy = rng.uniform(0, 0.7, (n, 2))
    wh = rng.uniform(0.05, 0.3, (n, 2))
    cls = rng.randint(0, 5, (n, 1))
    return np.hstack([cls, xy, xy + wh]).astype(np.float32)


@pytest.mark.parametrize("eject", [0.0, 0.3, 0.7])
def test_random_crop_invariants(eject):
    """Boxes stay in [0, 1]; an object is kept iff it keeps > min_eject_coverage of its
    area inside the window, and kept boxes are the originals clipped to the window."""
    rng = np.random.RandomState(0)
    aug = det.DetRandomCropAug(min_object_covered=0.0, area_range=(0.1, 1.0),
                               min_eject_coverage=eject)
    random.seed(1)
    src = mx.nd.zeros((40, 50, 3))
    cropped = 0
    for _ in range(30):
        label = _random_label(rng, 6)
        crop = aug._random_crop_proposal(label, 40, 50)
        if not crop:
            continue
        cropped += 1
        x, y, w, h, out = crop
        assert 0 <= x and x + w <= 50 and 0 <= y and y + h <= 40
        assert np.all(out[:, 1:5] >= 0) and np.all(out[:, 1:5] <= 1)
        # map every original box into the window by hand
        box = (label[:, 1:5] * [50, 40, 50, 40] - [x, y, x, y]) / [w, h, w, h]
        box = np.clip(box, 0, 1)
        inside = (box[:, 2] - box[:, 0]).clip(0) * (box[:, 3] - box[:, 1]).clip(0) * w * h
        orig = (label[:, 3] - label[:, 1]) * (label[:, 4] - label[:, 2]) * 2000
        keep = inside / orig > eject
        np.testing.assert_allclose(out[:, 1:5], box[keep], atol=1e-5)
        np.testing.assert_array_equal(out[:, 0], label[keep, 0])
        data, _ = aug(src, label)       # the image is cut to some accepted window
        assert data.shape[2] == 3 and data.shape[0] <= 40 and data.shape[1] <= 50
    assert cropped > 10


def test_random_pad_invariants():
    rng = np.random.RandomState(2)
    aug = det.DetRandomPadAug(area_range=(1.5, 4.0), pad_val=(1, 2, 3))
    random.seed(3)
    for _ in range(10):
        label = _random_label(rng, 3)
        src = mx.nd.array(rng.uniform(10, 20, (20, 30, 3)))
        data, out = aug(src, label.copy())
        h, w = data.shape[:2]
        assert h >= 22 and w >= 32
        assert np.all(out[:, 1:5] >= 0) and np.all(out[:, 1:5] <= 1)
        # find the image inside the canvas and check the boxes moved with it
        pix = data.asnumpy()
        ys, xs = np.nonzero(pix[:, :, 0] >= 10)
        y0, x0 = ys.min(), xs.min()
        np.testing.assert_array_equal(pix[y0:y0 + 20, x0:x0 + 30], src.asnumpy())
        assert np.all(pix[0, 0] == [1, 2, 3]) or (y0, x0) == (0, 0)
        want = (label[:, 1:5] * [30, 20, 30, 20] + [x0, y0, x0, y0]) / [w, h, w, h]
        np.testing.assert_allclose(out[:, 1:5], want, rtol=1e-6)


def test_random_select_skip_and_seed():
    calls = []

    class Tag(det.DetAugmenter):
        def __init__(self, name):
            super().__init__(name=name)
            self.name = name

        def __call__(self, src, label):
            calls.append(self.name)
            return src, label

    aug = det.DetRandomSelectAug([Tag("a"), Tag("b"), Tag("c")], skip_prob=0.5)
    random.seed(0)
    for _ in range(200):
        aug(None, None)
    assert 60 < len(calls) < 140 and set(calls) == {"a", "b", "c"}
    first = list(calls)
    calls.clear()
    aug = det.DetRandomSelectAug([Tag("a"), Tag("b"), Tag("c")], skip_prob=0.5)
    random.seed(0)
    for _ in range(200):
        aug(None, None)
    assert calls == first               # Python's random drives it
    calls.clear()
    det.DetRandomSelectAug([])(None, None)          # empty: always skipped
    det.DetRandomSelectAug(Tag("z"), skip_prob=0)(None, None)
    assert calls == ["z"]


def test_seeding_mx_random_does_not_drive_the_augmenters():
    """As MXNet: the boxes come from Python's random, not mx.random."""
    aug = det.DetRandomCropAug(min_object_covered=0.0)
    outs = []
    for s in (1, 2):
        random.seed(4)
        mx.random.seed(s)
        outs.append(aug._random_crop_proposal(_label(), H, W)[:4])
    assert outs[0] == outs[1]


# ---------------------------------------------------------------- dumps and construction

def test_dumps_match_mxnet():
    want = json.loads(str(G["__dumps__"]))
    got = {name: [a.dumps() for a in det.CreateDetAugmenter(**kw)]
           for name, kw in GEN.dump_configs().items()}
    got["pad_scalar"] = [det.DetRandomPadAug(pad_val=5, aspect_ratio_range=1.0,
                                             area_range=2.5).dumps()]
    got["crop_scalar"] = [det.DetRandomCropAug(aspect_ratio_range=1.5, area_range=0.5).dumps()]
    got["borrow"] = [det.DetBorrowAug(mx.image.ResizeAug(5, 1)).dumps()]
    got["select_empty"] = [det.DetRandomSelectAug([]).dumps()]
    assert json.loads(json.dumps(got)) == want


def test_api_names_and_errors():
    for name in det.__all__:
        assert getattr(mx.image, name) is getattr(det, name)
    assert mx.image.det is det
    with pytest.raises(TypeError, match="Augmenter"):
        det.DetBorrowAug(det.DetHorizontalFlipAug(0.5))
    with pytest.raises(ValueError, match="DetAugmenter"):
        det.DetRandomSelectAug([mx.image.CastAug()])
    with pytest.raises(ValueError, match="same length"):
        det.CreateMultiRandCropAugmenter(min_object_covered=[0.1, 0.2],
                                         max_attempts=[1, 2, 3])
    with pytest.raises(ValueError, match="mean"):
        det.CreateDetAugmenter((3, 8, 8), mean=[1, 2, 3])
    with pytest.raises(NotImplementedError):
        det.DetAugmenter()(None, None)


@pytest.mark.parametrize("cls,kw", [
    (det.DetRandomCropAug, dict(area_range=(0.5, 0.2))),
    (det.DetRandomCropAug, dict(aspect_ratio_range=(0.0, 1.0))),
    (det.DetRandomPadAug, dict(area_range=(1.0, 1.0))),
    (det.DetRandomPadAug, dict(aspect_ratio_range=(2.0, 1.0))),
])
def test_invalid_ranges_warn_and_disable(cls, kw):
    with pytest.warns(UserWarning, match="Skip"):
        aug = cls(**kw)
    src, label = mx.nd.zeros((12, 16, 3)), _label()
    data, out = aug(src, label)
    assert not aug.enabled and data is src and out is label


# ---------------------------------------------------------------- ImageDetIter

def _sources(tmp_path):
    """The .rec/.idx, .lst and image lists of the generator, rebuilt from the PNG bytes."""
    tmp = str(tmp_path)
    rec, idx = os.path.join(tmp, "det.rec"), os.path.join(tmp, "det.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, raw in enumerate(GEN.RAW):
        w.write_idx(i, recordio.pack(recordio.IRHeader(0, np.array(raw, np.float32), i, 0),
                                     G["png/%d" % i].tobytes()))
    w.close()
    lines, imglist, imglist5 = [], [], []
    for i in range(len(GEN.RAW)):
        with open(os.path.join(tmp, "im%d.png" % i), "wb") as f:
            f.write(G["png/%d" % i].tobytes())
    for i, raw in enumerate(GEN.RAW6):
        lines.append("\t".join([str(i)] + ["%r" % float(v) for v in raw] + ["im%d.png" % i]))
        imglist.append([float(v) for v in raw] + ["im%d.png" % i])
    for i, raw in enumerate(GEN.RAW[:3]):
        imglist5.append([float(v) for v in raw] + ["im%d.png" % i])
    with open(os.path.join(tmp, "det.lst"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return dict(rec=dict(path_imgrec=rec), rec_idx=dict(path_imgrec=rec, path_imgidx=idx),
                lst=dict(path_imglist=os.path.join(tmp, "det.lst"), path_root=tmp),
                imglist=dict(imglist=imglist, path_root=tmp),
                imglist5=dict(imglist=imglist5, path_root=tmp))


# NOTE: resizes of cropped/padded images go through bilinear interpolation, which
# OpenCV rounds in fixed point: data within 1e-3 of 255 scale is not expected there.
_DATA_TOL = {"rec_small": 1.0, "rec_idx_shuffle_crop": 1.0, "rec_roll_over_pad": 1.0}


@pytest.mark.parametrize("name", list(GEN.iter_configs()))
def test_image_det_iter_matches_mxnet(tmp_path, name):
    src, kw, seed = GEN.iter_configs()[name]
    if seed is not None:
        random.seed(seed)
    it = mx.image.ImageDetIter(**dict(kw, **_sources(tmp_path)[src]))
    assert it.label_shape == tuple(G["iter/%s/label_shape" % name])
    label_name = kw.get("label_name", "label")
    assert it.provide_label[0][0] == label_name
    assert tuple(it.provide_label[0][1]) == (kw["batch_size"],) + it.label_shape
    assert tuple(it.provide_data[0][1]) == (kw["batch_size"],) + kw["data_shape"]
    k = 0
    for _ in range(2):
        for batch in it:
            pre = "iter/%s/" % name
            _close(batch.label[0], pre + "label%d" % k, 1e-6)
            _close(batch.data[0], pre + "data%d" % k, _DATA_TOL.get(name, 1e-3))
            assert batch.pad == int(G[pre + "pad%d" % k])
            k += 1
        it.reset()
    assert "iter/%s/data%d" % (name, k) not in G.files          # no batch missing


def test_sync_label_shape_and_reshape_match_mxnet(tmp_path):
    sources = _sources(tmp_path)
    a = mx.image.ImageDetIter(batch_size=2, data_shape=(3, H, W), **sources["rec"])
    b = mx.image.ImageDetIter(batch_size=2, data_shape=(3, H, W), **sources["imglist5"])
    _close([a.label_shape, b.label_shape], "sync/before")
    assert a.sync_label_shape(b) is b
    _close([a.label_shape, b.label_shape], "sync/after")
    _close(next(b).label[0], "sync/label")
    b.reshape(data_shape=(3, H, W), label_shape=(6, 5))
    assert tuple(b.provide_label[0][1]) == (2, 6, 5)
    _close(next(b).label[0], "sync/reshaped")
    with pytest.raises(ValueError, match="reduce label count"):
        b.check_label_shape((3, 5))
    with pytest.raises(ValueError, match="object width"):
        b.check_label_shape((6, 6))
    with pytest.raises(ValueError, match="length 2"):
        b.check_label_shape((6,))
    lst = mx.image.ImageDetIter(batch_size=2, data_shape=(3, H, W), **sources["lst"])
    with pytest.raises(ValueError, match="width mismatch"):
        a.sync_label_shape(lst)
    with pytest.raises(TypeError, match="ImageDetIter"):
        a.sync_label_shape(mx.image.ImageIter(2, (3, H, W), **sources["rec"]))


def test_image_det_iter_custom_augmenters_and_bad_labels(tmp_path):
    sources = _sources(tmp_path)
    it = mx.image.ImageDetIter(batch_size=5, data_shape=(3, H, W),
                               aug_list=[det.DetHorizontalFlipAug(1),
                                         det.DetBorrowAug(mx.image.CastAug())],
                               **sources["rec"])
    batch = next(it)
    # record 4 has only class -1 objects: skipped in batches, so the batch wraps around
    assert batch.pad == 1
    label = batch.label[0].asnumpy()
    parsed = [G["parse/%d" % i] for i in range(4)]
    for row, want in zip(label, parsed + parsed[:1]):
        flipped = want.copy()
        flipped[:, 1], flipped[:, 3] = 1 - want[:, 3], 1 - want[:, 1]
        np.testing.assert_allclose(row[:len(want)], flipped, atol=1e-6)
        assert np.all(row[len(want):] == -1)
    np.testing.assert_array_equal(batch.data[0].asnumpy()[1],
                                  G["img/1"][:, ::-1].transpose(2, 0, 1))
    bad = [[2, 5, 0, .5, .2, .4, .7, "im0.png"]]        # no valid box: fails at construction
    with pytest.raises(RuntimeError, match="no valid label"):
        mx.image.ImageDetIter(batch_size=1, data_shape=(3, H, W), imglist=bad,
                              path_root=str(tmp_path))


def test_draw_next_draws_boxes(tmp_path):
    it = mx.image.ImageDetIter(batch_size=1, data_shape=(3, H * 4, W * 4),
                               mean=True, std=True, **_sources(tmp_path)["imglist"])
    images = list(it.draw_next(color=(255, 0, 0), thickness=1, mean=True, std=True,
                               id2labels={3: "c"}))
    assert len(images) == 3 and all(im.dtype == np.uint8 for im in images)
    img = images[1]                         # one box: class 2, (.2, .1) - (.8, .6)
    assert img.shape == (48, 64, 3)
    x1, y1, x2, y2 = int(.2 * 64), int(.1 * 48), int(.8 * 64), int(.6 * 48)
    red_bgr = [0, 0, 255]
    for y in (y1, y2):
        assert np.all(img[y, x1:x2 + 1] == red_bgr)
    for x in (x1, x2):
        assert np.all(img[y1:y2 + 1, x] == red_bgr)
    # the rest is the un-normalised image in BGR order
    plain = mx.image.ImageDetIter(batch_size=1, data_shape=(3, H * 4, W * 4),
                                  **_sources(tmp_path)["imglist"])
    raw = list(plain.draw_next(color=(255, 0, 0), thickness=1))
    inner = (slice(y1 + 1, y2), slice(x1 + 1, x2))
    np.testing.assert_allclose(img[inner].astype(int), raw[1][inner].astype(int), atol=1)
    want = G["img/1"].astype(float)[:, :, ::-1]            # BGR, before the 4x resize
    assert abs(raw[1].astype(float).mean() - want.mean()) < 20
    # id2labels: the name of class 3 is written in white (anti-aliased) in image 2 only,
    # just inside the box corner (.1, .5)
    diff = images[2].astype(int) - raw[2].astype(int)
    changed = np.any(np.abs(diff) > 1, axis=2)
    assert changed.any() and np.all(diff[changed] >= -1)            # only brighter
    ys, xs = np.nonzero(changed)
    assert ys.min() >= int(.5 * 48) + 5 and xs.min() >= int(.1 * 64) + 5
    assert not np.any(np.abs(images[0].astype(int) - raw[0].astype(int)) > 1)
