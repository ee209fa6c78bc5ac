"""``mx.io.ImageRecordIter`` and its uint8/int8 twins against MXNet 1.9.1.

Golden data: tests/reference_extra/io_image_record.npz, written by
tests/reference_extra/gen_io_image_record.py under MXNet: the PNG bytes and labels of 7
records, the .rec/.idx bytes MXNet wrote, and for each case in ``case/<name>`` the
iterator's arguments (JSON) and its batches over two epochs (data, label, pad).
Decoding needs Pillow or OpenCV.
"""
import json
import os
import random

import numpy as np
import pytest

import mxlite as mx

pytest.importorskip("PIL")

NPZ = os.path.join(os.path.dirname(__file__), "reference_extra", "io_image_record.npz")
G = np.load(NPZ)
N = 7


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """The .rec/.idx files rebuilt with mxlite's recordio from the stored PNG bytes."""
    d = tmp_path_factory.mktemp("irec")
    rec = mx.recordio.MXIndexedRecordIO(str(d / "t.idx"), str(d / "t.rec"), "w")
    multi = mx.recordio.MXRecordIO(str(d / "m.rec"), "w")
    for i in range(N):
        png = G["png/%d" % i].tobytes()
        rec.write_idx(i, mx.recordio.pack(mx.recordio.IRHeader(0, float(i), i, 0), png))
        multi.write(mx.recordio.pack(mx.recordio.IRHeader(0, G["mlabel/%d" % i], i, 0), png))
    rec.close()
    multi.close()
    return {"REC": str(d / "t.rec"), "IDX": str(d / "t.idx"), "MULTI": str(d / "m.rec")}


def test_rebuilt_files_are_mxnets(files):
    for key, path in (("rec", "REC"), ("idx", "IDX"), ("rec_multi", "MULTI")):
        with open(files[path], "rb") as f:
            assert f.read() == G[key].tobytes()


def _kwargs(name, files):
    args = json.loads(str(G["case/%s/args" % name]))
    kw = {k: (files[v] if isinstance(v, str) and v in files else v) for k, v in args.items()}
    kw.setdefault("path_imgrec", files["REC"])
    if "data_shape" in kw:
        kw["data_shape"] = tuple(kw["data_shape"])
    return args, kw


CASES = sorted({k.split("/")[1] for k in G.files if k.startswith("case/")})


@pytest.mark.parametrize("name", CASES)
def test_batches_match_mxnet(name, files):
    args, kw = _kwargs(name, files)
    it = mx.io.ImageRecordIter(**kw)
    assert it.provide_data[0].name == kw.get("data_name", "data")
    assert it.provide_label[0].name == kw.get("label_name", "softmax_label")
    for e in range(2):
        batches = list(it)
        want = sorted(k for k in G.files if k.startswith("case/%s/data%d_" % (name, e)))
        assert len(batches) == len(want)
        for k, b in enumerate(batches):
            data = G["case/%s/data%d_%d" % (name, e, k)]
            label = G["case/%s/label%d_%d" % (name, e, k)]
            n = len(data)
            assert b.data[0].shape == it.provide_data[0].shape
            assert b.label[0].shape == it.provide_label[0].shape
            assert b.data[0].dtype == data.dtype
            np.testing.assert_allclose(b.data[0].asnumpy()[:n], data, rtol=1e-6, atol=1e-5)
            np.testing.assert_array_equal(b.label[0].asnumpy()[:n], label)
            if args.get("round_batch", True) is False:
                # MXNet reports pad 0 here (and stale rows); mxlite counts the empty rows.
                assert b.pad == it.batch_size - n
                assert not b.data[0].asnumpy()[n:].any()
            else:
                assert b.pad == int(G["case/%s/pad%d_%d" % (name, e, k)])
        it.reset()


def test_uint8_and_int8_twins(files):
    _, kw = _kwargs("uint8", files)
    kw.pop("dtype")
    b = mx.io.ImageRecordUInt8Iter(**kw).next()
    np.testing.assert_array_equal(b.data[0].asnumpy(), G["case/uint8/data0_0"])
    _, kw = _kwargs("int8_mean", files)
    kw.pop("dtype")
    b = mx.io.ImageRecordInt8Iter(**kw).next()
    np.testing.assert_array_equal(b.data[0].asnumpy(), G["case/int8_mean/data0_0"])
    with pytest.raises(mx.MXNetError, match="std_r"):
        mx.io.ImageRecordUInt8Iter(path_imgrec=files["REC"], data_shape=(3, 8, 8),
                                   batch_size=2, std_r=2)


def test_errors_name_the_argument(files):
    base = dict(path_imgrec=files["REC"], data_shape=(3, 8, 8), batch_size=2)
    with pytest.warns(UserWarning, match="fooo"):     # MXNet ignores unknown keywords
        mx.io.ImageRecordIter(fooo=1, **base)
    with pytest.raises(mx.MXNetError, match="max_rotate_angle"):
        mx.io.ImageRecordIter(max_rotate_angle=10, **base)
    with pytest.raises(mx.MXNetError, match="float16"):
        mx.io.ImageRecordIter(dtype="float16", **base)
    with pytest.raises(ValueError, match="batch_size"):
        mx.io.ImageRecordIter(path_imgrec=files["REC"], data_shape=(3, 8, 8))
    with pytest.raises(mx.MXNetError, match="bigger than the batch size"):
        mx.io.ImageRecordIter(path_imgrec=files["REC"], data_shape=(3, 8, 8), batch_size=3,
                              path_imgidx=files["IDX"], num_parts=3, part_index=2).next()


def _epoch_labels(it):
    return [x for b in it for x in b.label[0].asnumpy().tolist()]


def test_shuffle_is_a_seeded_permutation(files):
    kw = dict(path_imgrec=files["REC"], data_shape=(3, 8, 8), batch_size=7, shuffle=True)
    a = _epoch_labels(mx.io.ImageRecordIter(seed=3, **kw))
    b = _epoch_labels(mx.io.ImageRecordIter(seed=3, **kw))
    assert sorted(a) == list(range(N)) and a == b


def test_random_augmentations_invariants(files):
    """rand_crop / rand_mirror / random_resized_crop / jitter: every output is a crop
    (possibly mirrored) of the plain decode, reproducible with seed_aug."""
    kw = dict(path_imgrec=files["REC"], data_shape=(3, 8, 8), batch_size=7, dtype="uint8")
    plain = mx.io.ImageRecordIter(**kw).next().data[0].asnumpy()
    crops = mx.io.ImageRecordIter(rand_crop=True, rand_mirror=True, seed_aug=1, **kw)
    got = crops.next().data[0].asnumpy()
    again = mx.io.ImageRecordIter(rand_crop=True, rand_mirror=True, seed_aug=1, **kw)
    np.testing.assert_array_equal(got, again.next().data[0].asnumpy())
    for i in range(N):
        img = mx.image.imdecode(G["png/%d" % i].tobytes()).asnumpy().transpose(2, 0, 1)
        h, w = img.shape[1:]
        windows = [img[:, y:y + 8, x:x + 8] for y in range(h - 7) for x in range(w - 7)]
        assert any((got[i] == c).all() or (got[i] == c[:, :, ::-1]).all() for c in windows)
    # the centre crop is one of them
    assert plain.shape == got.shape
    state = random.getstate()
    rrc = mx.io.ImageRecordIter(random_resized_crop=True, min_random_area=0.3,
                                max_aspect_ratio=0.25, brightness=0.3, contrast=0.3,
                                saturation=0.3, pca_noise=0.1, **kw).next()
    assert random.getstate() == state          # the global stream is left alone
    assert rrc.data[0].shape == (7, 3, 8, 8) and rrc.data[0].dtype == np.uint8


def test_mean_img_file_is_created_and_used(files, tmp_path):
    path = str(tmp_path / "mean.nd")
    kw = dict(path_imgrec=files["REC"], data_shape=(3, 8, 8), batch_size=7)
    x = mx.io.ImageRecordUInt8Iter(**kw).next().data[0].asnumpy().astype(np.float32)
    out = mx.io.ImageRecordIter(mean_img=path, **kw).next().data[0].asnumpy()
    mean = x.mean(axis=0)
    np.testing.assert_allclose(mx.nd.load(path)["mean_img"].asnumpy(), mean, rtol=1e-5)
    np.testing.assert_allclose(out, x - mean, atol=1e-4)


def test_module_fit_reads_it(files):
    it = mx.io.ImageRecordIter(path_imgrec=files["REC"], data_shape=(3, 8, 8), batch_size=3,
                               scale=1.0 / 255)
    b = it.next()
    assert b.data[0].asnumpy().max() <= 1.0
    assert isinstance(b, mx.io.DataBatch) and it.getpad() == 0
