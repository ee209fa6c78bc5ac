"""Downloads (mx.test_utils.download and the data getters, the model store, text
embeddings): local files are used as they are, transfers are tested against a file
server on 127.0.0.1, and without a server the error says where to put the file."""
import gzip
import hashlib
import http.server
import os
import struct
import threading
import zipfile

import numpy as np
import pytest

import mxlite as mx
from mxlite import test_utils as tu
from mxlite.gluon.model_zoo import model_store


def _read(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.fixture
def server(tmp_path):
    """An HTTP server on 127.0.0.1 serving ``tmp_path/'www'``; yields (root dir, url)."""
    root = tmp_path / "www"
    root.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(root), **kwargs)

        def log_message(self, *args):
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, "http://127.0.0.1:%d/" % httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def test_download_transfers_and_keeps_existing_files(server, tmp_path, monkeypatch):
    root, url = server
    (root / "a.txt").write_bytes(b"hello")
    monkeypatch.chdir(tmp_path)
    assert tu.download(url + "a.txt") == "a.txt"
    assert (tmp_path / "a.txt").read_bytes() == b"hello"
    (root / "a.txt").write_bytes(b"changed")
    tu.download(url + "a.txt")                               # kept: no overwrite
    assert (tmp_path / "a.txt").read_bytes() == b"hello"
    path = tu.download(url + "a.txt", fname="b.txt", dirname="sub", overwrite=True)
    assert path == os.path.join("sub", "b.txt") and _read(path) == b"changed"
    with pytest.raises(OSError, match="could not fetch .*missing.txt"):
        tu.download(url + "missing.txt", retries=0)
    with pytest.raises(ValueError, match="retries"):
        tu.download(url + "a.txt", retries=-1)


def test_download_without_network_names_the_place_for_the_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OSError, match="place it at .*mnist.zip"):
        tu.download("http://127.0.0.1:9/mnist.zip", dirname="data", retries=0)


def _idx_gz(path, magic_dims, data):
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">" + "I" * len(magic_dims), *magic_dims))
        f.write(data.tobytes())


def test_get_mnist_reads_local_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.RandomState(0)
    for prefix, n in (("train", 5), ("t10k", 3)):
        labels = rng.randint(0, 10, n).astype(np.int8)
        images = rng.randint(0, 256, (n, 28, 28)).astype(np.uint8)
        _idx_gz(prefix + "-labels-idx1-ubyte.gz", (2049, n), labels)
        _idx_gz(prefix + "-images-idx3-ubyte.gz", (2051, n, 28, 28), images)
    data = tu.get_mnist()
    assert data["train_data"].shape == (5, 1, 28, 28) and data["test_label"].shape == (3,)
    assert data["train_data"].dtype == np.float32 and data["train_data"].max() <= 1.0
    assert np.allclose(data["test_data"][:, 0] * 255, images)
    assert (data["test_label"] == labels).all()


def test_mnist_iterator_and_cifar_from_local_zips(server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    os.makedirs("data")
    n = 6
    for prefix in ("train", "t10k"):
        with open("data/%s-labels-idx1-ubyte" % prefix, "wb") as f:
            f.write(struct.pack(">II", 2049, n) + np.arange(n, dtype=np.uint8).tobytes())
        with open("data/%s-images-idx3-ubyte" % prefix, "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + bytes(n * 784))
    train, val = tu.get_mnist_iterator(batch_size=3, input_shape=(784,))
    assert train.provide_data[0].shape == (3, 784)
    assert len(list(val)) == 2
    root, url = server
    with zipfile.ZipFile(root / "cifar10.zip", "w") as zf:
        for name in ("train.rec", "test.rec", "train.lst", "test.lst"):
            zf.writestr("cifar/" + name, b"x")
    monkeypatch.setattr("mxlite._test_data._DATA_URL", url)
    os.makedirs(root / "mxnet" / "data")
    os.replace(root / "cifar10.zip", root / "mxnet" / "data" / "cifar10.zip")
    tu.get_cifar10()
    assert sorted(os.listdir("data/cifar")) == ["test.lst", "test.rec", "train.lst",
                                                 "train.rec"]


def test_zip_bz2_and_model_downloads(server, tmp_path):
    import bz2
    root, url = server
    with zipfile.ZipFile(root / "d.zip", "w") as zf:
        zf.writestr("inside.txt", b"zip")
    (root / "d.bz2").write_bytes(bz2.compress(b"bz2 content"))
    out = tmp_path / "out"
    tu.get_zip_data(str(out), url + "d.zip", "d.zip")
    assert (out / "inside.txt").read_bytes() == b"zip"
    tu.get_bz2_data(str(out), "d.txt", url + "d.bz2", "d.bz2")
    assert (out / "d.txt").read_bytes() == b"bz2 content" and not (out / "d.bz2").exists()
    (root / "m-symbol.json").write_text("{}")
    (root / "m.params").write_bytes(b"p")
    meta = {"m": {"symbol": url + "m-symbol.json", "params": url + "m.params"}}
    prefix, epoch = tu.download_model("m", str(out), meta_info=meta)
    assert epoch == 0 and _read(prefix + "-0000.params") == b"p"
    assert tu.download_model("unknown", str(out), meta_info=meta) == (None, 0)


def test_model_store_uses_local_file_then_downloads(server, tmp_path, monkeypatch):
    root, url = server
    payload = b"fake weights"
    sha1 = hashlib.sha1(payload).hexdigest()
    monkeypatch.setitem(model_store._model_sha1, "tinynet", sha1)
    store = tmp_path / "models"
    name = "tinynet-" + sha1[:8]
    os.makedirs(root / "gluon" / "models")
    with zipfile.ZipFile(root / "gluon" / "models" / (name + ".zip"), "w") as zf:
        zf.writestr(name + ".params", payload)
    monkeypatch.setenv("MXNET_GLUON_REPO", url.rstrip("/"))
    assert mx.gluon.utils._get_repo_url() == url
    assert mx.gluon.utils._get_repo_file_url("gluon/dataset", "a.zip") == \
        url + "gluon/dataset/a.zip"
    path = model_store.get_model_file("tinynet", root=str(store))
    assert path == str(store / (name + ".params")) and _read(path) == payload
    monkeypatch.setenv("MXNET_GLUON_REPO", "http://127.0.0.1:9/")
    assert model_store.get_model_file("tinynet", root=str(store)) == path   # local, no fetch
    model_store.purge(str(store))
    assert not os.listdir(store)
    with pytest.raises(OSError, match="could not be downloaded.*put MXNet's tinynet-"):
        model_store.get_model_file("tinynet", root=str(store))
    with pytest.raises(ValueError, match="not available"):
        model_store.get_model_file("no-such-net", root=str(store))
    assert model_store.short_hash("resnet18_v1") == "a0666292"


def test_environment_helpers(monkeypatch):
    monkeypatch.setenv("CD_JOB", "1")
    assert tu.is_cd_run()
    assert isinstance(tu.is_aarch64_run(), bool)
    assert tu.has_tvm_ops() is False and tu.is_op_runnable() is True
    with pytest.raises(IOError, match="im2rec"):
        tu.get_im2rec_path()
