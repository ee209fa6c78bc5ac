"""mx.recordio: round trips, MXNet-written files, the magic-word split, pack/unpack, images."""
import os
import pickle
import struct

import numpy as np
import pytest

import mxlite as mx
from mxlite import recordio

REF = os.path.join(os.path.dirname(__file__), "reference_extra")
MAGIC = struct.pack("<I", 0xced7230a)


def _records():
    """The byte strings at keys 0-9 of reference_extra/recordio_mx.rec (see its README)."""
    return [b"", b"a", b"abcd", b"hello world!!", MAGIC, b"xxxx" + MAGIC + b"yy",
            MAGIC + MAGIC + b"z", b"ab" + MAGIC + b"cd", b"1234" + MAGIC + b"5678" + MAGIC,
            bytes(range(256)) * 3]


def _write_reference_copy(tmp_path):
    idx, rec = str(tmp_path / "ml.idx"), str(tmp_path / "ml.rec")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, b in enumerate(_records()):
        w.write_idx(i, b)
    w.write_idx(100, recordio.pack(recordio.IRHeader(0, 3.5, 17, 2), b"payload"))
    w.write_idx(101, recordio.pack(recordio.IRHeader(0, [1, 2.5, 3], 2 ** 40, 5), b"p2"))
    w.close()
    return idx, rec


def test_reads_the_file_mxnet_wrote():
    r = recordio.MXIndexedRecordIO(os.path.join(REF, "recordio_mx.idx"),
                                   os.path.join(REF, "recordio_mx.rec"), "r")
    assert r.keys == list(range(10)) + [100, 101]
    for i, want in reversed(list(enumerate(_records()))):   # random access, any order
        assert r.read_idx(i) == want
    h, s = recordio.unpack(r.read_idx(100))
    assert (h.flag, h.label, h.id, h.id2, s) == (0, 3.5, 17, 2, b"payload")
    h, s = recordio.unpack(r.read_idx(101))
    assert h.flag == 3 and h.id == 2 ** 40 and h.id2 == 5 and s == b"p2"
    np.testing.assert_array_equal(h.label, np.array([1, 2.5, 3], np.float32))
    r.close()


def test_writes_the_bytes_mxnet_writes(tmp_path):
    idx, rec = _write_reference_copy(tmp_path)
    with open(rec, "rb") as f, open(os.path.join(REF, "recordio_mx.rec"), "rb") as g:
        assert f.read() == g.read()
    with open(idx) as f, open(os.path.join(REF, "recordio_mx.idx")) as g:
        assert f.read() == g.read()


def test_magic_word_splits_the_record_into_parts(tmp_path):
    path = str(tmp_path / "m.rec")
    with recordio.MXRecordIO(path, "w") as w:
        w.write(b"abcd" + MAGIC + b"ef")
    with open(path, "rb") as f:
        raw = f.read()
    lrec = struct.unpack("<4I", raw[:16])
    # part 1: cflag 1, 4 bytes "abcd"; part 2: cflag 3, 2 bytes "ef" padded to 4.
    assert lrec[1] == (1 << 29) | 4 and raw[8:12] == b"abcd"
    assert struct.unpack("<2I", raw[12:20]) == (0xced7230a, (3 << 29) | 2)
    assert raw[20:] == b"ef\0\0"
    r = recordio.MXRecordIO(path, "r")
    assert r.read() == b"abcd" + MAGIC + b"ef" and r.read() is None


def test_sequential_read_reset_and_errors(tmp_path):
    path = str(tmp_path / "s.rec")
    w = recordio.MXRecordIO(path, "w")
    for i in range(5):
        w.write(b"record_%d" % i)
    with pytest.raises(TypeError, match="bytes"):
        w.write("text")
    w.close()
    r = recordio.MXRecordIO(path, "r")
    assert [r.read() for _ in range(6)] == [b"record_%d" % i for i in range(5)] + [None]
    r.reset()
    assert r.read() == b"record_0"
    with pytest.raises(ValueError, match="flag 'r'"):
        r.write(b"x")
    r.close()
    with pytest.raises(ValueError, match="closed"):
        r.read()
    with pytest.raises(ValueError, match="Invalid flag"):
        recordio.MXRecordIO(path, "a")
    with open(path, "r+b") as f:
        f.write(b"\0\0\0\0")
    with pytest.raises(ValueError, match="bad magic"):
        recordio.MXRecordIO(path, "r").read()


def test_indexed_tell_keys_and_pickle(tmp_path):
    idx, rec = str(tmp_path / "t.idx"), str(tmp_path / "t.rec")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    positions = []
    for i in range(5):
        positions.append(w.tell())
        w.write_idx(i, b"record_%d" % i)
    w.close()
    assert positions == [0, 16, 32, 48, 64]            # as in MXNet's docstring
    r = recordio.MXIndexedRecordIO(idx, rec, "r")
    assert r.keys == [0, 1, 2, 3, 4] and r.read_idx(3) == b"record_3"
    r2 = pickle.loads(pickle.dumps(r))                  # reopens in the new owner
    assert r2.read_idx(1) == b"record_1" and r.read_idx(4) == b"record_4"
    with pytest.raises(KeyError, match="7"):
        r.read_idx(7)
    s = recordio.MXIndexedRecordIO(idx, rec, "r", key_type=str)
    assert s.keys == ["0", "1", "2", "3", "4"] and s.read_idx("2") == b"record_2"


def test_pack_unpack_header():
    s = recordio.pack(recordio.IRHeader(9, 4, 2574, 1), b"img")
    assert len(s) == 24 + 3
    h, payload = recordio.unpack(s)
    assert h == recordio.IRHeader(0, 4.0, 2574, 1) and payload == b"img"   # flag reset to 0
    h, payload = recordio.unpack(recordio.pack(recordio.IRHeader(0, np.array([7, 8]), 1, 0), b""))
    assert h.flag == 2 and payload == b""
    np.testing.assert_array_equal(h.label, [7, 8])
    with pytest.raises(ValueError, match="header"):
        recordio.unpack(b"short")


def test_pack_img_unpack_img_round_trip():
    pytest.importorskip("PIL.Image")
    rng = np.random.RandomState(0)
    img = rng.randint(0, 256, (6, 5, 3)).astype(np.uint8)
    s = recordio.pack_img(recordio.IRHeader(0, 2.0, 3, 0), img, quality=3, img_fmt=".png")
    h, back = recordio.unpack_img(s)
    assert h.label == 2.0 and h.id == 3
    np.testing.assert_array_equal(back, img)           # PNG is lossless, channels kept in order
    _, gray = recordio.unpack_img(s, iscolor=0)
    assert gray.shape == (6, 5)
    # JPEG is lossy: a smooth image comes back close, and in BGR order like the input.
    smooth = np.zeros((16, 16, 3), np.uint8)
    smooth[..., 0] = 200
    smooth[..., 2] = np.arange(16)[None, :] * 8
    s = recordio.pack_img(recordio.IRHeader(0, 1.0, 0, 0), smooth, quality=95, img_fmt=".jpg")
    _, jpg = recordio.unpack_img(s, iscolor=1)
    assert jpg.shape == (16, 16, 3) and np.abs(jpg.astype(int) - smooth).max() < 12
    with pytest.raises(ValueError, match="img_fmt"):
        recordio.pack_img(recordio.IRHeader(0, 1.0, 0, 0), img, img_fmt=".gif")


def test_mx_namespace_and_record_file_dataset():
    assert mx.recordio is recordio
    ds = mx.gluon.data.RecordFileDataset(os.path.join(REF, "recordio_mx.rec"))
    assert len(ds) == 12 and ds[3] == b"hello world!!" and ds[9] == bytes(range(256)) * 3


def test_png_with_the_default_quality_uses_the_highest_compression_level():
    # OpenCV (MXNet's encoder) clamps IMWRITE_PNG_COMPRESSION to 0-9: quality=95 is 9.
    pytest.importorskip("PIL")
    img = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
    s = recordio.pack_img(recordio.IRHeader(0, 1.0, 0, 0), img, img_fmt=".png")
    _, back = recordio.unpack_img(s)
    np.testing.assert_array_equal(back, img)


def test_declared_lengths_are_checked_against_the_file(tmp_path):
    rec = str(tmp_path / "x.rec")
    with open(rec, "wb") as f:      # a header declaring a 512 MB record, then 4 bytes
        f.write(struct.pack("<II", 0xced7230a, (1 << 29) - 1) + b"abcd")
    r = recordio.MXRecordIO(rec, "r")
    with pytest.raises(ValueError, match=r"declares 536870911 bytes but only 4 remain"):
        r.read()
    r.close()
    w = recordio.MXIndexedRecordIO(str(tmp_path / "y.idx"), str(tmp_path / "y.rec"), "w")
    w.write_idx(0, b"hello")
    w.close()
    for line, msg in (("0\t4096\n", r"line 1 gives offset 4096, outside the 16 bytes"),
                      ("0 12\n", r"line 1 is '0 12', expected 'key<TAB>offset'")):
        (tmp_path / "y.idx").write_text(line)
        with pytest.raises(ValueError, match=msg):
            recordio.MXIndexedRecordIO(str(tmp_path / "y.idx"), str(tmp_path / "y.rec"), "r")
    header = struct.pack(recordio._IR_FORMAT, 1000, 0.0, 0, 0)   # 1000 labels, 8 bytes
    with pytest.raises(ValueError, match="declares 1000 float labels .* has 8 bytes"):
        recordio.unpack(header + b"x" * 8)
