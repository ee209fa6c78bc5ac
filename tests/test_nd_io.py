"""mx.nd.save / load / load_frombuffer in MXNet's binary format, and NDArray pickling."""
import json
import os
import pickle
import struct

import numpy as np
import pytest

import mxlite as mx
from mxlite.nd import io as ndio

FORMATS = os.path.join(os.path.dirname(__file__), "reference", "formats")
def _read(fname, mode="rb"):
    with open(fname, mode) as f:
        return f.read()


MANIFEST = json.loads(_read(os.path.join(FORMATS, "manifest.json"), "r"))
ND_FILES = [f for f in MANIFEST["files"] if f["file"].endswith((".nd", ".params"))]
DTYPES = ["float32", "float64", "float16", "uint8", "int8", "int32", "int64", "bool"]


def _path(name):
    return os.path.join(FORMATS, name)


def _expected(entry):
    with np.load(_path(entry.get("npz") or entry["params_npz"]), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _assert_bit_exact(arr, ref, what):
    got = arr.asnumpy()
    assert isinstance(arr, mx.nd.NDArray), what
    assert arr.context == mx.cpu(0), what
    assert got.dtype == ref.dtype, "%s: dtype %s, expected %s" % (what, got.dtype, ref.dtype)
    assert got.shape == ref.shape, "%s: shape %s, expected %s" % (what, got.shape, ref.shape)
    assert got.tobytes() == ref.tobytes(), "%s: values differ" % what


# -- MXNet's files load bit-exact ------------------------------------------------------

@pytest.mark.parametrize("entry", ND_FILES, ids=[f["file"] for f in ND_FILES])
def test_reference_file_loads_bit_exact(entry):
    loaded = mx.nd.load(_path(entry["file"]))
    ref = _expected(entry)
    if entry["kind"] == "ndarray_list":
        names = [a["name"] for a in entry["arrays"]]
        assert isinstance(loaded, list) and len(loaded) == len(names)
        for arr, name in zip(loaded, names):
            _assert_bit_exact(arr, ref[name], "%s[%s]" % (entry["file"], name))
    else:
        assert isinstance(loaded, dict)
        assert sorted(loaded) == sorted(ref)
        for name, arr in loaded.items():
            _assert_bit_exact(arr, ref[name], "%s[%s]" % (entry["file"], name))


def test_reference_dict_keeps_file_order():
    entry = next(f for f in ND_FILES if f["file"] == "ndarray_dict.nd")
    loaded = mx.nd.load(_path("ndarray_dict.nd"))
    assert list(loaded) == [a["name"] for a in entry["arrays"]]


def test_cnn_params_keys_are_prefixed():
    loaded = mx.nd.load(_path("cnn-0000.params"))
    entry = next(f for f in MANIFEST["files"] if f["file"] == "cnn-symbol.json")
    assert list(loaded) == [k["key"] for k in entry["params_file_keys"]]


# -- mxlite writes MXNet's exact bytes ---------------------------------------------------

def _reference_arrays():
    entry = next(f for f in ND_FILES if f["file"] == "ndarray_dict.nd")
    ref = _expected(entry)
    return [(a["name"], mx.nd.array(ref[a["name"]], dtype=ref[a["name"]].dtype))
            for a in entry["arrays"]]


def test_save_list_reproduces_mxnet_bytes(tmp_path):
    fname = str(tmp_path / "list.nd")
    mx.nd.save(fname, [a for _, a in _reference_arrays()])
    assert _read(fname) == _read(_path("ndarray_list.nd"))


def test_save_dict_reproduces_mxnet_bytes(tmp_path):
    fname = str(tmp_path / "dict.nd")
    mx.nd.save(fname, dict(_reference_arrays()))
    assert _read(fname) == _read(_path("ndarray_dict.nd"))


def test_save_single_array_is_one_element_list(tmp_path):
    f32 = dict(_reference_arrays())["f32_2d"]
    fname = tmp_path / "single.nd"
    mx.nd.save(fname, f32)            # os.PathLike is accepted too
    assert _read(fname) == _read(_path("ndarray_single.nd"))
    loaded = mx.nd.load(str(fname))
    assert isinstance(loaded, list) and len(loaded) == 1


def test_save_bool_reproduces_mxnet_bytes():
    with np.load(_path("ndarray_bool_optional.npz")) as z:
        mask = z["mask"]
    buf = ndio._save_tobuffer({"mask": mx.nd.array(mask, dtype=bool)})
    assert buf == _read(_path("ndarray_bool_optional.nd"))


# -- round trips -----------------------------------------------------------------------

def _sample(dtype, shape):
    rng = np.random.default_rng(7)
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3), (0,), (0, 3), (1,), (2, 1, 3, 1, 2)])
def test_round_trip(tmp_path, dtype, shape):
    value = _sample(dtype, shape)
    fname = str(tmp_path / "x.nd")
    mx.nd.save(fname, {"x": mx.nd.array(value, dtype=dtype), "y": mx.nd.array(value, dtype=dtype)})
    loaded = mx.nd.load(fname)
    assert list(loaded) == ["x", "y"]
    _assert_bit_exact(loaded["x"], value, "x")
    mx.nd.save(fname, [mx.nd.array(value, dtype=dtype)])
    _assert_bit_exact(mx.nd.load(fname)[0], value, "list")


def test_round_trip_special_floats_and_empty_containers():
    value = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45], dtype=np.float32)
    out = mx.nd.load_frombuffer(ndio._save_tobuffer([mx.nd.array(value)]))[0]
    assert out.asnumpy().tobytes() == value.tobytes()
    assert mx.nd.load_frombuffer(ndio._save_tobuffer([])) == []
    assert mx.nd.load_frombuffer(ndio._save_tobuffer({})) == []   # no names stored: a list


def test_unicode_names_and_array_from_other_cpu_context():
    x = mx.nd.array([1, 2], ctx=mx.cpu(2))
    buf = ndio._save_tobuffer({"wéight/ü": x})
    # The writing context is recorded (dev_type 1, dev_id 2), as MXNet does ...
    dev = struct.unpack_from("<ii", buf, 24 + 12 + 8)
    assert dev == (1, 2)
    # ... and, as in MXNet, CPU arrays load on cpu(0).
    loaded = mx.nd.load_frombuffer(buf)
    assert list(loaded) == ["wéight/ü"]
    assert loaded["wéight/ü"].context == mx.cpu(0)


def test_serialize_ndarray_round_trip_and_layout():
    x = mx.nd.array([[1, 2, 3]], dtype="int64")
    raw = ndio._serialize_ndarray(x)
    assert struct.unpack_from("<IiI", raw) == (0xF993FAC9, 0, 2)
    y = ndio._deserialize_ndarray(raw)
    assert y.dtype == np.int64 and y.asnumpy().tolist() == [[1, 2, 3]]
    y = ndio._deserialize_ndarray(bytearray(raw))
    assert y.shape == (1, 3)


def test_serialized_record_written_by_mxnet():
    # NDArray.__getstate__()['handle'] of mx.nd.array([1, 2], ctx=mx.cpu(3)) in MXNet 1.9.1.
    raw = bytes.fromhex("c9fa93f9000000000100000002000000000000000100000003000000"
                        "000000000000803f00000040")
    y = ndio._deserialize_ndarray(raw)
    assert y.asnumpy().tolist() == [1.0, 2.0] and y.dtype == np.float32
    assert ndio._serialize_ndarray(mx.nd.array([1, 2], ctx=mx.cpu(3))) == raw


# -- older and sparse records ---------------------------------------------------------------

def _container(records, names=()):
    out = struct.pack("<QQQ", 0x112, 0, len(records)) + b"".join(records)
    out += struct.pack("<Q", len(names))
    for n in names:
        out += struct.pack("<Q", len(n)) + n.encode()
    return out


def test_v1_record_loads():
    # v1: magic 0xF993FAC8, no storage type, then i32 ndim + i64 dims.
    rec = (struct.pack("<Ii2q", 0xF993FAC8, 2, 2, 2) + struct.pack("<iii", 1, 0, 1)
           + np.arange(4, dtype=np.float64).tobytes())
    (x,) = mx.nd.load_frombuffer(_container([rec]))
    assert x.dtype == np.float64 and x.asnumpy().tolist() == [[0, 1], [2, 3]]


def test_pre_v1_record_loads():
    # Oldest layout: the first u32 is ndim itself, dims are u32.
    rec = struct.pack("<I3I", 3, 1, 2, 1) + struct.pack("<iii", 1, 0, 4) + \
        np.array([5, -6], np.int32).tobytes()
    x = mx.nd.load_frombuffer(_container([rec], ["a"]))["a"]
    assert x.shape == (1, 2, 1) and x.dtype == np.int32 and x.asnumpy().ravel().tolist() == [5, -6]


# mx.nd.save('sp.nd', {'rs': dense.tostype('row_sparse'), 'cs': dense.tostype('csr')}) in
# MXNet 1.9.1 with dense = [[0, 1.5, 0], [0, 0, 0], [2, 0, 3]] (float32). The csr record has a
# stale storage shape (0,), which MXNet itself tolerates.
SPARSE_FILE = bytes.fromhex(
    "120100000000000000000000000000000200000000000000c9fa93f90100000002000000020000000000"
    "00000300000000000000020000000300000000000000030000000000000001000000000000000000000006"
    "000000010000000200000000000000000000000000c03f0000000000000040000000000000404000000000"
    "000000000200000000000000c9fa93f9020000000100000000000000000000000200000003000000000000"
    "000300000000000000010000000000000000000000060000000100000004000000000000000600000001000"
    "00003000000000000000000c03f000000400000404000000000000000000100000000000000010000000000"
    "000003000000000000000100000000000000000000000000000002000000000000000200000000000000020"
    "0000000000000727302000000000000006373")


def test_sparse_records_from_mxnet_load_dense():
    loaded = mx.nd.load_frombuffer(SPARSE_FILE)
    dense = np.array([[0, 1.5, 0], [0, 0, 0], [2, 0, 3]], np.float32)
    assert list(loaded) == ["rs", "cs"]
    for k in ("rs", "cs"):
        assert loaded[k].stype == "default"
        np.testing.assert_array_equal(loaded[k].asnumpy(), dense)


# -- corrupt files raise MXNetError naming the file -------------------------------------------

def _good():
    return ndio._save_tobuffer({"a": mx.nd.array([[1, 2], [3, 4]]), "b": mx.nd.ones((3,))})


def _patch(buf, offset, fmt, value):
    b = bytearray(buf)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


FIRST = 24     # offset of the first record


@pytest.mark.parametrize("bad, message", [
    (lambda b: b"", "header"),
    (lambda b: _patch(b, 0, "<Q", 0x113), "bad header magic"),
    (lambda b: _patch(b, 16, "<Q", 3), "truncated"),                # count too large
    (lambda b: _patch(b, 16, "<Q", 1 << 60), "cannot fit"),          # absurd count: no hang
    (lambda b: _patch(b, FIRST, "<I", 0xDEADBEEF), "bad magic"),
    (lambda b: _patch(b, FIRST + 4, "<i", 5), "unsupported storage type 5"),
    (lambda b: _patch(b, FIRST + 8, "<I", 1000), "ndim 1000"),
    (lambda b: _patch(b, FIRST + 12, "<q", -3), "negative dimension"),
    (lambda b: _patch(b, FIRST + 12, "<q", 1 << 40), "truncated"),
    (lambda b: _patch(b, FIRST + 36, "<i", 99), "unknown type flag 99"),
    (lambda b: b[:-30], "truncated"),                                # short data
    (lambda b: b[:FIRST + 45], "truncated"),
    (lambda b: _patch(b, len(b) - 1 - 8 - 1 - 8 - 8, "<Q", 1), "1 names for 2 arrays"),
    (lambda b: _patch(b, len(b) - 9, "<Q", 50), "truncated"),       # name length past the end
])
def test_corrupt_buffer_raises(bad, message):
    with pytest.raises(mx.MXNetError, match=message) as e:
        mx.nd.load_frombuffer(bad(_good()))
    assert "buffer" in str(e.value)


def test_corrupt_file_error_names_the_file(tmp_path):
    fname = str(tmp_path / "broken.params")
    with open(fname, "wb") as f:
        f.write(_good()[:-5])
    with pytest.raises(mx.MXNetError, match="broken.params.*truncated"):
        mx.nd.load(fname)
    with pytest.raises(mx.MXNetError, match="missing.nd"):
        mx.nd.load(str(tmp_path / "missing.nd"))


def test_deserialize_garbage_raises():
    with pytest.raises(mx.MXNetError, match="serialized NDArray"):
        ndio._deserialize_ndarray(b"\x01\x02")


def test_bad_arguments():
    with pytest.raises(TypeError, match="NDArray"):
        ndio._save_tobuffer([mx.nd.ones((1,)), np.ones(1)])
    with pytest.raises(TypeError, match="keys must be str"):
        ndio._save_tobuffer({1: mx.nd.ones((1,))})
    with pytest.raises(ValueError, match="data needs"):
        ndio._save_tobuffer(3)
    with pytest.raises(TypeError, match="fname"):
        mx.nd.save(3, mx.nd.ones((1,)))
    with pytest.raises(TypeError, match="bytes"):
        mx.nd.load_frombuffer(3)


# -- pickling --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_pickle_round_trip(dtype):
    value = _sample(dtype, (2, 3))
    x = mx.nd.array(value, dtype=dtype, ctx=mx.cpu(1))
    y = pickle.loads(pickle.dumps(x))
    assert isinstance(y, mx.nd.NDArray)
    assert y.dtype == x.dtype and y.context == mx.cpu(1) and y.shape == (2, 3)
    assert y.asnumpy().tobytes() == value.tobytes()
    y[0, 0] = 0                       # an independent copy
    assert x.asnumpy().tobytes() == value.tobytes()


def test_pickle_nested_and_empty():
    obj = {"w": mx.nd.zeros((0, 4)), "l": [mx.nd.ones((1,), dtype="float16")]}
    back = pickle.loads(pickle.dumps(obj, protocol=4))
    assert back["w"].shape == (0, 4) and back["l"][0].dtype == np.float16


def _sparse_file(shape):
    """A row_sparse record with no rows stored: a few bytes declaring a dense ``shape``."""
    rec = struct.pack("<Ii", ndio.V2_MAGIC, 1) + struct.pack("<iq", 1, 0)
    rec += struct.pack("<i%dq" % len(shape), len(shape), *shape)
    rec += struct.pack("<iii", 1, 0, 0) + struct.pack("<iiq", 6, 1, 0)
    return struct.pack("<QQQ", ndio.LIST_MAGIC, 0, 1) + rec + struct.pack("<Q", 0)


def test_declared_sizes_are_checked_before_allocating():
    # a dense record must bring its bytes; a sparse one (stored densely by mxlite) may
    # declare no more than the machine holds
    assert mx.nd.load_frombuffer(_sparse_file((3, 4)))[0].shape == (3, 4)
    with pytest.raises(mx.MXNetError, match=r"array 0 \(sparse, dense shape \(10000000, "
                                            r"10000000\)\) needs .* more than this machine"):
        mx.nd.load_frombuffer(_sparse_file((10 ** 7, 10 ** 7)))
    dense = mx.nd.ones((2,))
    buf = bytearray(ndio._save_tobuffer([dense]))
    pos = buf.index(struct.pack("<q", 2))
    buf[pos:pos + 8] = struct.pack("<q", 16000 * 16000)
    with pytest.raises(mx.MXNetError, match="needs 1024000000 bytes .*truncated"):
        mx.nd.load_frombuffer(bytes(buf))


@pytest.mark.parametrize("saved_np, loaded_np", [(True, False), (False, True)])
def test_load_requires_the_shape_semantics_the_file_was_saved_in(tmp_path, saved_np, loaded_np):
    """As MXNet 1.9.1: mx.nd.load refuses a file saved under the other shape semantics
    (np shape writes v3 records), and the message says which scope to load it in."""
    fname = str(tmp_path / "a.nd")
    with mx.np_shape(saved_np):
        mx.nd.save(fname, [mx.nd.zeros((2, 0, 1)), mx.nd.ones((2, 1))])
    with mx.np_shape(loaded_np):
        with pytest.raises(mx.MXNetError, match="np_shape\\(%s\\)" % saved_np):
            mx.nd.load(fname)
    with mx.np_shape(saved_np):
        loaded = mx.nd.load(fname)
    assert [a.shape for a in loaded] == [(2, 0, 1), (2, 1)]
    assert loaded[1].asnumpy().tolist() == [[1.0], [1.0]]


def test_load_parameters_takes_either_semantics(tmp_path):
    """Gluon's load_parameters reads a legacy file under np shape (MXNet retries
    outside np semantics there)."""
    net = mx.gluon.nn.Dense(2, in_units=3)
    net.initialize()
    fname = str(tmp_path / "net.params")
    net.save_parameters(fname)
    other = mx.gluon.nn.Dense(2, in_units=3)
    with mx.np_shape(True):
        other.load_parameters(fname)
    assert np.array_equal(other.weight.data().asnumpy(), net.weight.data().asnumpy())
