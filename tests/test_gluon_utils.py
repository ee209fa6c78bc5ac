"""gluon.utils: split_data, split_and_load, clip_global_norm, check_sha1, download."""
import hashlib

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import utils


def test_split_data_even_and_uneven():
    x = mx.nd.arange(10).reshape((5, 2))
    with pytest.raises(ValueError) as e:
        utils.split_data(x, 2)
    # Message observed from MXNet 1.9.1.
    assert str(e.value) == ("data with shape (5, 2) cannot be evenly split into 2 slices along "
                            "axis 0. Use a batch size that's multiple of 2 or set "
                            "even_split=False to allow uneven partitioning of data.")
    parts = utils.split_data(x, 2, even_split=False)
    assert [p.shape for p in parts] == [(3, 2), (2, 2)]           # extras go first, as MXNet
    assert np.array_equal(np.concatenate([p.asnumpy() for p in parts]), x.asnumpy())
    cols = utils.split_data(mx.nd.arange(12).reshape((2, 6)), 3, batch_axis=1)
    assert [c.shape for c in cols] == [(2, 2)] * 3
    assert np.array_equal(cols[1].asnumpy(), [[2, 3], [8, 9]])
    assert [p.shape[0] for p in utils.split_data(mx.nd.ones((7, 1)), 3, even_split=False)] == \
        [3, 2, 2]


def test_split_and_load_contexts():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    parts = utils.split_and_load(np.arange(8).reshape(4, 2), ctxs)
    assert [p.context for p in parts] == ctxs
    assert np.array_equal(parts[1].asnumpy(), [[4, 5], [6, 7]])
    assert parts[0].dtype == np.float32
    one = utils.split_and_load(mx.nd.ones((3, 2)), [mx.cpu(2)])
    assert len(one) == 1 and one[0].context == mx.cpu(2) and one[0].shape == (3, 2)
    with pytest.raises(ValueError, match="cannot be evenly split"):
        utils.split_and_load(mx.nd.ones((3, 2)), ctxs)
    assert [p.shape[0] for p in utils.split_and_load(mx.nd.ones((3, 2)), ctxs,
                                                     even_split=False)] == [2, 1]


def test_clip_global_norm():
    a = mx.nd.array([3.0, 0.0])
    b = mx.nd.array([[4.0]], ctx=mx.cpu(1))
    norm = utils.clip_global_norm([a, b], 1.0)
    assert np.isscalar(norm) and abs(norm - 5.0) < 1e-6           # asscalar(), as MXNet
    assert np.allclose(a.asnumpy(), [0.6, 0]) and np.allclose(b.asnumpy(), [[0.8]])
    assert b.context == mx.cpu(1)
    c = mx.nd.array([0.3, 0.4])
    n = utils.clip_global_norm([c], 10.0, check_isfinite=False)
    assert isinstance(n, mx.nd.NDArray) and abs(n.asscalar() - 0.5) < 1e-6
    assert np.allclose(c.asnumpy(), [0.3, 0.4])                   # below max_norm: unchanged
    with pytest.warns(UserWarning, match="nan or inf is detected"):
        utils.clip_global_norm([mx.nd.array([np.inf])], 1.0)


def test_check_sha1(tmp_path):
    f = tmp_path / "a.bin"
    f.write_bytes(b"mxlite")
    assert utils.check_sha1(str(f), hashlib.sha1(b"mxlite").hexdigest())
    assert not utils.check_sha1(str(f), "0" * 40)


def test_download_existing_file_is_not_fetched(tmp_path):
    f = tmp_path / "data.txt"
    f.write_bytes(b"cached")
    got = utils.download("http://invalid.invalid/data.txt", path=str(tmp_path),
                         sha1_hash=hashlib.sha1(b"cached").hexdigest())
    assert got == str(f) and f.read_bytes() == b"cached"


def test_download_without_network_is_a_clear_error(tmp_path):
    with pytest.raises(OSError) as e:
        utils.download("http://invalid.invalid/model.params", path=str(tmp_path / "m.params"),
                       retries=0, timeout=2)
    msg = str(e.value)
    assert "could not fetch http://invalid.invalid/model.params" in msg
    assert "place it at" in msg and "m.params" in msg
    assert list(tmp_path.iterdir()) == []                          # no partial file left


def test_download_local_url(tmp_path):
    src = tmp_path / "src.bin"
    src.write_bytes(b"payload")
    out = utils.download(src.as_uri(), path=str(tmp_path / "dst.bin"),
                         sha1_hash=hashlib.sha1(b"payload").hexdigest())
    with open(out, "rb") as f:
        assert f.read() == b"payload"
