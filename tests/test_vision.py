"""gluon.data.vision: datasets read from tiny files in the standard formats; transforms
against outputs of MXNet 1.9.1 (reference_extra/vision_transforms.npz)."""
import gzip
import io
import os
import pickle
import struct
import tarfile

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon.data import DataLoader, vision
from mxlite.gluon.data.vision import transforms as T

REF = os.path.join(os.path.dirname(__file__), "reference_extra")


def _nd(x):
    return mx.nd.array(x, dtype=x.dtype)


# ---------------------------------------------------------------- MNIST

def _write_idx(path, arr, gz=True):
    header = struct.pack(">I", 0x0800 + arr.ndim) + struct.pack(">%dI" % arr.ndim, *arr.shape)
    opener = gzip.open if gz else open
    with opener(path, "wb") as f:
        f.write(header + arr.astype(np.uint8).tobytes())


def _fake_mnist(root, n, prefix, gz=True, seed=0):
    rng = np.random.RandomState(seed)
    images = rng.randint(0, 256, (n, 28, 28)).astype(np.uint8)
    labels = rng.randint(0, 10, n).astype(np.uint8)
    ext = ".gz" if gz else ""
    _write_idx(os.path.join(root, "%s-images-idx3-ubyte%s" % (prefix, ext)), images, gz)
    _write_idx(os.path.join(root, "%s-labels-idx1-ubyte%s" % (prefix, ext)), labels, gz)
    return images, labels


@pytest.mark.parametrize("cls", [vision.MNIST, vision.FashionMNIST])
def test_mnist_reads_idx_files(tmp_path, cls):
    images, labels = _fake_mnist(str(tmp_path), 5, "train")
    test_images, _ = _fake_mnist(str(tmp_path), 3, "t10k", gz=False, seed=1)
    ds = cls(root=str(tmp_path))
    assert len(ds) == 5
    x, y = ds[2]
    assert isinstance(x, mx.nd.NDArray) and x.shape == (28, 28, 1) and x.dtype == np.uint8
    np.testing.assert_array_equal(x.asnumpy()[:, :, 0], images[2])
    assert y == labels[2] and y.dtype == np.int32
    test = cls(root=str(tmp_path), train=False)          # uncompressed files work too
    np.testing.assert_array_equal(test[1][0].asnumpy()[:, :, 0], test_images[1])


def test_mnist_transform_and_loader(tmp_path):
    images, labels = _fake_mnist(str(tmp_path), 6, "train")
    ds = vision.MNIST(root=str(tmp_path)).transform_first(T.ToTensor())
    data, label = next(iter(DataLoader(ds, batch_size=4)))
    assert data.shape == (4, 1, 28, 28) and data.dtype == np.float32 and label.dtype == np.int32
    np.testing.assert_allclose(data.asnumpy()[:, 0], images[:4] / 255.0, rtol=1e-6)
    np.testing.assert_array_equal(label.asnumpy(), labels[:4])


def test_missing_files_name_the_files_and_the_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte.gz.*%s" % tmp_path):
        vision.MNIST(root=str(tmp_path), train=False)
    with pytest.raises(FileNotFoundError, match="data_batch_1.bin.*cifar-10-binary.tar.gz"):
        vision.CIFAR10(root=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="train.bin"):
        vision.CIFAR100(root=str(tmp_path))


def test_mnist_rejects_a_file_of_the_wrong_kind(tmp_path):
    _fake_mnist(str(tmp_path), 2, "train")
    os.replace(tmp_path / "train-labels-idx1-ubyte.gz", tmp_path / "x")
    os.replace(tmp_path / "train-images-idx3-ubyte.gz", tmp_path / "train-labels-idx1-ubyte.gz")
    os.replace(tmp_path / "x", tmp_path / "train-images-idx3-ubyte.gz")
    with pytest.raises(ValueError, match="magic number"):
        vision.MNIST(root=str(tmp_path))


# ---------------------------------------------------------------- CIFAR

def _cifar_records(n, label_cols, seed):
    rng = np.random.RandomState(seed)
    chw = rng.randint(0, 256, (n, 3, 32, 32)).astype(np.uint8)
    labels = rng.randint(0, 100, (n, label_cols)).astype(np.uint8)
    raw = np.concatenate([labels, chw.reshape(n, -1)], axis=1)
    return chw.transpose(0, 2, 3, 1), labels, raw.tobytes()


def test_cifar10_binary_batches(tmp_path):
    folder = tmp_path / "cifar-10-batches-bin"        # the folder of the Toronto archive
    folder.mkdir()
    hwc, labels = [], []
    for i in range(1, 6):
        x, y, raw = _cifar_records(2, 1, i)
        (folder / ("data_batch_%d.bin" % i)).write_bytes(raw)
        hwc.append(x)
        labels.append(y[:, 0])
    _, ty, raw = _cifar_records(3, 1, 9)
    (folder / "test_batch.bin").write_bytes(raw)
    ds = vision.CIFAR10(root=str(tmp_path))
    assert len(ds) == 10
    x, y = ds[7]
    assert x.shape == (32, 32, 3) and x.dtype == np.uint8 and y.dtype == np.int32
    np.testing.assert_array_equal(x.asnumpy(), np.concatenate(hwc)[7])
    assert y == np.concatenate(labels)[7]
    test = vision.CIFAR10(root=str(tmp_path), train=False)
    np.testing.assert_array_equal(test._label, ty[:, 0])


def test_cifar100_binary_from_archive_fine_and_coarse(tmp_path):
    x, y, raw = _cifar_records(4, 2, 3)
    archive = tmp_path / "cifar-100-binary.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name in ("train.bin", "test.bin"):
            info = tarfile.TarInfo("cifar-100-binary/" + name)
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    coarse = vision.CIFAR100(root=str(tmp_path))
    fine = vision.CIFAR100(root=str(tmp_path), fine_label=True, train=False)
    np.testing.assert_array_equal(coarse._label, y[:, 0])
    np.testing.assert_array_equal(fine._label, y[:, 1])
    np.testing.assert_array_equal(fine[3][0].asnumpy(), x[3])


def test_cifar10_python_version(tmp_path):
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    x, y, _ = _cifar_records(2, 1, 5)
    flat = x.transpose(0, 3, 1, 2).reshape(2, -1)
    for name in ["data_batch_%d" % i for i in range(1, 6)] + ["test_batch"]:
        with open(folder / name, "wb") as f:
            pickle.dump({b"data": flat, b"labels": [int(v) for v in y[:, 0]]}, f, protocol=2)
    ds = vision.CIFAR10(root=str(tmp_path), train=False)
    np.testing.assert_array_equal(ds[1][0].asnumpy(), x[1])
    assert ds[1][1] == y[1, 0]
    with open(folder / "test_batch", "wb") as f:      # a pickle that runs code is refused
        pickle.dump({b"data": os.getcwd}, f)
    with pytest.raises(pickle.UnpicklingError, match="not allowed"):
        vision.CIFAR10(root=str(tmp_path), train=False)


# ---------------------------------------------------------------- image files

def test_image_record_dataset_reads_mxnet_file():
    pytest.importorskip("PIL.Image")
    ref = np.load(os.path.join(REF, "recordio_images.npz"))
    ds = vision.ImageRecordDataset(os.path.join(REF, "recordio_images.rec"))
    assert len(ds) == 3
    for i in range(3):
        img, label = ds[i]
        assert img.dtype == np.uint8
        np.testing.assert_array_equal(img.asnumpy(), ref["img%d" % i])   # RGB, as MXNet
        assert label == ref["labels"][i]
    gray, _ = vision.ImageRecordDataset(os.path.join(REF, "recordio_images.rec"), flag=0)[0]
    assert gray.shape == (5, 4, 1)
    want = ref["img0"].astype(np.float64) @ [0.299, 0.587, 0.114]
    assert np.abs(gray.asnumpy()[:, :, 0] - want).max() <= 1


def test_image_folder_dataset(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    rng = np.random.RandomState(0)
    imgs = {}
    for cls in ("cat", "ant"):
        (tmp_path / cls).mkdir()
        for k in range(2):
            arr = rng.randint(0, 256, (3, 4, 3)).astype(np.uint8)
            Image.fromarray(arr).save(tmp_path / cls / ("%d.png" % k))
            imgs[(cls, k)] = arr
    (tmp_path / "ant" / "notes.txt").write_text("x")
    with pytest.warns(UserWarning, match="notes.txt"):
        ds = vision.ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["ant", "cat"] and len(ds) == 4
    img, label = ds[3]
    assert label == 1 and img.shape == (3, 4, 3)
    np.testing.assert_array_equal(img.asnumpy(), imgs[("cat", 1)])
    with pytest.warns(UserWarning):
        ds = vision.ImageFolderDataset(str(tmp_path), flag=0, transform=_shape_and_label)
    assert ds[0] == ((3, 4, 1), 0)


def _shape_and_label(x, y):
    return x.shape, y


# ---------------------------------------------------------------- transforms

@pytest.fixture(scope="module")
def ref():
    return np.load(os.path.join(REF, "vision_transforms.npz"))


@pytest.mark.parametrize("size", [(4, 3), (13, 11), (9, 7), (5, 14)])
def test_resize_matches_mxnet(ref, size):
    x = _nd(ref["x"])
    got = T.Resize(size)(x.astype("float32"))
    np.testing.assert_allclose(got.asnumpy(), ref["resize_f_%dx%d" % size], rtol=1e-5, atol=1e-4)
    got_u8 = T.Resize(size)(x)
    assert got_u8.dtype == np.uint8
    # NOTE: OpenCV rounds uint8 with fixed-point weights: off by at most 1.
    diff = np.abs(got_u8.asnumpy().astype(int) - ref["resize_u_%dx%d" % size])
    assert diff.max() <= 1


def test_resize_keep_ratio_batch_and_nearest(ref):
    xf = _nd(ref["x"]).astype("float32")
    np.testing.assert_allclose(T.Resize(4, keep_ratio=True)(xf).asnumpy(), ref["resize_keep_4"],
                               rtol=1e-5, atol=1e-4)
    batch = mx.nd.stack(xf, xf * 0.5)
    np.testing.assert_allclose(T.Resize((4, 3))(batch).asnumpy(), ref["resize_batch"],
                               rtol=1e-5, atol=1e-4)
    img = np.arange(16, dtype=np.float32).reshape(4, 4, 1)
    near = T.Resize((2, 2), interpolation=0)(_nd(img)).asnumpy()[:, :, 0]
    np.testing.assert_array_equal(near, [[0, 2], [8, 10]])
    with pytest.raises(ValueError, match="interpolation=2"):
        T.Resize(3, interpolation=2)


@pytest.mark.parametrize("size", [(4, 3), (5, 5), (12, 10)])
def test_center_crop_matches_mxnet(ref, size):
    got = T.CenterCrop(size)(_nd(ref["x"]).astype("float32"))
    np.testing.assert_allclose(got.asnumpy(), ref["center_f_%dx%d" % size], rtol=1e-5, atol=1e-4)


def test_to_tensor_normalize_compose_cast(ref):
    x = _nd(ref["x"])
    t = T.ToTensor()(x)
    assert t.dtype == np.float32
    np.testing.assert_allclose(t.asnumpy(), ref["totensor"], rtol=1e-6)
    n = T.Normalize((0.1, 0.2, 0.3), (0.5, 0.25, 2.0))(t)
    np.testing.assert_allclose(n.asnumpy(), ref["normalize"], rtol=1e-5, atol=1e-6)
    c = T.Compose([T.Resize((5, 4)), T.CenterCrop(3), T.ToTensor(), T.Normalize(0.5, 0.25)])
    np.testing.assert_allclose(c(x.astype("float32")).asnumpy(), ref["compose"], rtol=1e-5,
                               atol=1e-5)
    assert T.ToTensor()(mx.nd.stack(x, x)).shape == (2, 3, 7, 9)
    assert T.Cast("float16")(x).dtype == np.float16
    with pytest.raises(ValueError, match="2 values but the tensor has 7 channels"):
        T.Normalize((0, 0), 1)(x)      # HWC passed where CHW is expected


def test_random_flips_are_flips_and_both_happen():
    x = _nd(np.arange(2 * 3 * 1, dtype=np.uint8).reshape(2, 3, 1))
    lr = {tuple(T.RandomFlipLeftRight()(x).asnumpy().ravel()) for _ in range(30)}
    assert lr == {(0, 1, 2, 3, 4, 5), (2, 1, 0, 5, 4, 3)}
    tb = {tuple(T.RandomFlipTopBottom()(x).asnumpy().ravel()) for _ in range(30)}
    assert tb == {(0, 1, 2, 3, 4, 5), (3, 4, 5, 0, 1, 2)}
    mx.random.seed(4)
    a = [T.RandomFlipLeftRight()(x).asnumpy() for _ in range(5)]
    mx.random.seed(4)
    b = [T.RandomFlipLeftRight()(x).asnumpy() for _ in range(5)]
    assert all(np.array_equal(p, q) for p, q in zip(a, b))


def test_random_brightness_and_contrast_formulas():
    rng = np.random.RandomState(2)
    xf = rng.uniform(0, 255, (4, 5, 3)).astype(np.float32)
    for _ in range(5):
        y = T.RandomBrightness(0.5)(_nd(xf)).asnumpy()
        alpha = y[0, 0, 0] / xf[0, 0, 0]
        assert 0.5 <= alpha <= 1.5
        np.testing.assert_allclose(y, xf * alpha, rtol=1e-5)
        c = T.RandomContrast(0.5)(_nd(xf)).asnumpy()
        gray = (xf.astype(np.float64) @ [0.299, 0.587, 0.114]).mean()
        a = (c[0, 0, 0] - gray) / (xf[0, 0, 0] - gray)
        assert 0.5 - 1e-4 <= a <= 1.5 + 1e-4
        np.testing.assert_allclose(c, xf * a + gray * (1 - a), rtol=1e-4, atol=1e-3)
    u8 = np.full((2, 2, 3), 200, np.uint8)
    out = T.RandomBrightness(10)(_nd(u8))
    assert out.dtype == np.uint8 and out.asnumpy().max() <= 255   # saturates, no wrap-around
    assert T.RandomBrightness(0)(_nd(xf)).asnumpy().tolist() == xf.tolist()


def test_random_resized_crop_shape_and_content():
    import random
    random.seed(0)
    img = np.arange(20 * 30 * 3, dtype=np.float32).reshape(20, 30, 3)
    out = T.RandomResizedCrop((8, 6))(_nd(img))
    assert out.shape == (6, 8, 3) and out.dtype == np.float32
    # Full-area, aspect-preserving crop of the whole image is exactly a resize.
    whole = T.RandomResizedCrop((15, 10), scale=(1.0, 1.0), ratio=(1.5, 1.5))(_nd(img))
    np.testing.assert_allclose(whole.asnumpy(), T.Resize((15, 10))(_nd(img)).asnumpy())
