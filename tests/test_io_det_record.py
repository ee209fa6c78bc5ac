"""``mx.io.ImageDetRecordIter`` and ``mx.io.LibSVMIter`` against MXNet 1.9.1.

Golden data: tests/reference_extra/io_det_record.npz, written by
tests/reference_extra/gen_io_det_record.py under MXNet: the bytes of a detection .rec
file (5 PNG records, raw labels ``[4, 6, 99, 98, objects...]``, one empty box to drop),
an image list, three LibSVM files, and for each case ``det/<name>`` / ``svm/<name>``
the arguments (JSON) and MXNet's batches (data, label, pad, index) over two or three
epochs (LibSVM's CSR arrays stored dense). Decoding needs Pillow or OpenCV.
"""
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

NPZ = os.path.join(os.path.dirname(__file__), "reference_extra", "io_det_record.npz")
G = np.load(NPZ)


def _cases(kind):
    return sorted({k.split("/")[1] for k in G.files if k.startswith(kind + "/")})


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("det")
    paths = {"REC": d / "d.rec", "LST": d / "d.lst", "DATA": d / "data.t",
             "LABEL": d / "label.t", "BIG": d / "big.t"}
    paths["REC"].write_bytes(G["rec"].tobytes())
    for key, name in (("LST", "lst"), ("DATA", "svm_data"), ("LABEL", "svm_label"),
                      ("BIG", "svm_big")):
        paths[key].write_text(str(G[name]))
    return {k: str(v) for k, v in paths.items()}


def _kwargs(kind, name, files):
    args = json.loads(str(G["%s/%s/args" % (kind, name)]))
    kw = {k: (files[v] if isinstance(v, str) and v in files else v) for k, v in args.items()}
    if kind == "det":
        kw.setdefault("path_imgrec", files["REC"])
    else:
        kw.setdefault("data_libsvm", files["DATA"])
    return kw


def _check_batches(it, kind, name):
    pre = "%s/%s/" % (kind, name)
    epochs = 1 + max(int(k[len(pre) + 4:].split("_")[0]) for k in G.files
                     if k.startswith(pre + "data"))
    for e in range(epochs):
        got = list(it)
        want = sorted(int(k.split("_")[-1]) for k in G.files if k.startswith(pre + "data%d_" % e))
        assert len(got) == len(want), (name, e)
        for k, b in enumerate(got):
            data, label = G[pre + "data%d_%d" % (e, k)], G[pre + "label%d_%d" % (e, k)]
            n = data.shape[0]
            assert b.pad == int(G[pre + "pad%d_%d" % (e, k)])
            np.testing.assert_array_equal(np.asarray(b.index[:n], np.int64),
                                          G[pre + "index%d_%d" % (e, k)])
            assert b.data[0].dtype == np.float32 and b.label[0].dtype == np.float32
            np.testing.assert_allclose(b.data[0].asnumpy()[:n], data, rtol=1e-6, atol=1e-5)
            np.testing.assert_allclose(b.label[0].asnumpy()[:n], label, rtol=1e-6)
        it.reset()


@pytest.mark.parametrize("name", _cases("det"))
def test_det_golden(files, name):
    pytest.importorskip("PIL")
    it = mx.io.ImageDetRecordIter(**_kwargs("det", name, files))
    first = G["det/%s/label0_0" % name]
    assert it.provide_label[0].shape == (it.batch_size, first.shape[1])
    assert it.provide_data[0].shape == (it.batch_size,) + G["det/%s/data0_0" % name].shape[1:]
    _check_batches(it, "det", name)


@pytest.mark.parametrize("name", _cases("svm"))
def test_libsvm_golden(files, name):
    it = mx.io.LibSVMIter(**_kwargs("svm", name, files))
    label = G["svm/%s/label0_0" % name]
    assert it.provide_label[0].shape == label.shape
    _check_batches(it, "svm", name)


def _labels(it):
    """(label row, image) pairs of one epoch."""
    out = []
    for b in it:
        for i in range(it.batch_size - b.pad):
            out.append((b.label[0].asnumpy()[i], b.data[0].asnumpy()[i]))
    return out


def _objects(row):
    n = int(row[3])
    raw = row[4:4 + n]
    return raw[int(raw[0]):].reshape(-1, int(raw[1]))


def test_random_pad_crop_invariants(files):
    pytest.importorskip("PIL")
    kw = dict(path_imgrec=files["REC"], data_shape=(3, 16, 16), batch_size=5,
              rand_crop_prob=1.0, min_crop_scales=(0.3,), max_crop_scales=(0.9,),
              min_crop_aspect_ratios=(0.5,), max_crop_aspect_ratios=(2.0,),
              rand_pad_prob=1.0, max_pad_scale=2.0, fill_value=5, rand_mirror_prob=0.5)
    a = _labels(mx.io.ImageDetRecordIter(**kw))
    b = _labels(mx.io.ImageDetRecordIter(**kw))
    for (ra, da), (rb, db) in zip(a, b):           # seeded: the same every time
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(da, db)
    plain = _labels(mx.io.ImageDetRecordIter(path_imgrec=files["REC"], data_shape=(3, 16, 16),
                                             batch_size=5))
    changed = 0
    for (row, _), (row0, _) in zip(a, plain):
        objs = _objects(row)
        assert objs.shape[0] >= 1 and row[3] == 4 + objs.size
        np.testing.assert_array_equal(row[4:8], [4, 6, 99, 98])       # header kept
        assert np.all(objs[:, 1:5] >= 0) and np.all(objs[:, 1:5] <= 1)
        assert np.all(objs[:, 3] >= objs[:, 1]) and np.all(objs[:, 4] >= objs[:, 2])
        assert set(objs[:, 0]) <= set(_objects(row0)[:, 0])            # classes kept
        np.testing.assert_array_equal(objs[:, 5], 7)                    # extras kept
        changed += not np.array_equal(row, row0)
    assert changed >= 3


def test_mirror_flips_boxes_and_pixels(files):
    pytest.importorskip("PIL")
    kw = dict(path_imgrec=files["REC"], data_shape=(3, 8, 8), batch_size=5, inter_method=2)
    plain = _labels(mx.io.ImageDetRecordIter(**kw))
    flipped = _labels(mx.io.ImageDetRecordIter(rand_mirror_prob=1.0, **kw))
    for (r0, d0), (r1, d1) in zip(plain, flipped):
        o0, o1 = _objects(r0), _objects(r1)
        np.testing.assert_allclose(o1[:, 1], 1 - o0[:, 3], rtol=1e-6)
        np.testing.assert_allclose(o1[:, 3], 1 - o0[:, 1], rtol=1e-6)
        np.testing.assert_array_equal(d1, d0[:, :, ::-1])


def test_shuffle_is_seeded_permutation(files):
    pytest.importorskip("PIL")
    def order(seed):
        it = mx.io.ImageDetRecordIter(path_imgrec=files["REC"], data_shape=(3, 8, 8),
                                      batch_size=5, shuffle=True, seed=seed)
        return [int(i) for i in it.next().index]
    assert sorted(order(3)) == [0, 1, 2, 3, 4]
    assert order(3) == order(3)


def test_det_errors(files):
    base = dict(path_imgrec=files["REC"], data_shape=(3, 8, 8), batch_size=2)
    with pytest.raises(MXNetError, match="max_random_hue"):
        mx.io.ImageDetRecordIter(max_random_hue=10, random_hue_prob=0.5, **base)
    with pytest.raises(MXNetError, match="label_pad_width"):
        mx.io.ImageDetRecordIter(label_pad_width=5, **base)
    with pytest.raises(MXNetError, match="label_width"):
        mx.io.ImageDetRecordIter(label_width=22, **base)
    with pytest.raises(ValueError, match="unknown"):
        mx.io.ImageDetRecordIter(rand_crop=True, **base)
    with pytest.raises(ValueError, match="resize_mode"):
        mx.io.ImageDetRecordIter(resize_mode="stretch", **base)


def test_libsvm_dense_and_errors(files, tmp_path):
    it = mx.io.LibSVMIter(data_libsvm=files["DATA"], data_shape=(3,), batch_size=3)
    b = it.next()
    assert isinstance(b.data[0], mx.nd.NDArray) and b.data[0].shape == (3, 3)
    with pytest.raises(MXNetError, match="round_batch"):
        mx.io.LibSVMIter(data_libsvm=files["DATA"], data_shape=(3,), batch_size=3,
                         round_batch=False)
    with pytest.raises(MXNetError, match="out of range"):
        mx.io.LibSVMIter(data_libsvm=files["DATA"], data_shape=(2,), batch_size=3)
    d = tmp_path / "dir"
    d.mkdir()
    (d / "a").write_text("1 0:1\n2 1:2\n")
    (d / "b").write_text("3 2:3\n")
    got = mx.io.LibSVMIter(data_libsvm=str(d), data_shape=(3,), batch_size=3).next()
    np.testing.assert_array_equal(got.data[0].asnumpy(), np.diag([1, 2, 3]))
    np.testing.assert_array_equal(got.label[0].asnumpy(), [1, 2, 3])
