"""The embedded UCI digits dataset: contents, the fixed split, and use with DataLoader."""
import hashlib
import os
import pickle

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon.data.vision import transforms
from mxlite.gluon.data.vision.digits import Digits, split_indices, _FILE

# Class counts of the 1,797 UCI test-set rows (digits 0..9), from the data set's
# documentation and the scikit-learn copy.
CLASS_COUNTS = [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]


@pytest.fixture(scope="module")
def train():
    return Digits(train=True)


@pytest.fixture(scope="module")
def test():
    return Digits(train=False)


def test_file_contents():
    with np.load(_FILE) as f:
        images, labels = f["images"], f["labels"]
    assert images.shape == (1797, 8, 8) and images.dtype == np.uint8
    assert labels.shape == (1797,)
    assert images.min() == 0 and images.max() == 16
    assert np.bincount(labels).tolist() == CLASS_COUNTS
    # The licence and attribution ship beside the data.
    licence = os.path.join(os.path.dirname(_FILE), "DIGITS_LICENSE.md")
    with open(licence) as f:
        text = f.read()
    assert "10.24432/C50P49" in text and "CC BY 4.0" in text and "Alpaydin" in text


def test_split_sizes_and_balance(train, test):
    assert len(train) + len(test) == 1797
    assert len(train) == sum(n * 4 // 5 for n in CLASS_COUNTS) == 1433
    assert len(test) == 364
    train_counts = np.bincount(train._label, minlength=10)
    test_counts = np.bincount(test._label, minlength=10)
    assert (train_counts + test_counts).tolist() == CLASS_COUNTS
    ratio = train_counts / np.array(CLASS_COUNTS)
    assert np.all((ratio > 0.78) & (ratio <= 0.8))


def test_split_is_disjoint_seeded_and_stratified():
    labels = np.repeat(np.arange(3), [5, 10, 6])
    labels = np.concatenate([labels[::2], labels[1::2]])    # interleave the classes
    tr, te = split_indices(labels, True), split_indices(labels, False)
    assert set(tr).isdisjoint(te) and len(tr) + len(te) == len(labels)
    assert list(tr) == sorted(tr) and list(te) == sorted(te)
    rng = np.random.RandomState(0)          # the documented rule, step by step
    for digit in range(3):
        rows = np.flatnonzero(labels == digit)
        rows = rows[rng.permutation(len(rows))]
        n = len(rows) * 4 // 5
        assert sorted(rows[:n]) == [r for r in tr if labels[r] == digit]
        assert sorted(rows[n:]) == [r for r in te if labels[r] == digit]


def test_sample_format_like_mnist(train):
    image, label = train[5]
    assert isinstance(image, mx.nd.NDArray)
    assert image.shape == (8, 8, 1) and image.dtype == np.uint8
    assert isinstance(label, np.int32)
    assert 0 <= int(label) <= 9


def test_value_range_scaled_from_0_16(train, test):
    values = np.concatenate([train._data.ravel(), test._data.ravel()])
    assert values.min() == 0 and values.max() == 255
    with np.load(_FILE) as f:
        raw = f["images"][split_indices(f["labels"], True)]
    # 255/16 scaling rounded to nearest: 16 -> 255, 8 -> 128, 1 -> 16.
    np.testing.assert_array_equal(train._data[..., 0], np.round(raw * 255.0 / 16).astype(np.uint8))
    assert len(np.unique(values)) == 17


def test_shipped_file_is_the_uci_test_set_unchanged():
    # The UCI "optdigits" set as scikit-learn ships it: 1,797 8x8 images of values 0-16,
    # with these per-digit counts (from the dataset's documentation). The digest pins the
    # exact content checked once against scikit-learn's digits.csv.gz, so a changed or
    # truncated file fails here without needing scikit-learn.
    with np.load(_FILE) as f:
        images, labels = f["images"], f["labels"]
    assert images.shape == (1797, 8, 8) and images.min() == 0 and images.max() == 16
    assert np.bincount(labels).tolist() == [178, 182, 177, 183, 181, 182, 181, 179, 174, 180]
    digest = hashlib.sha256(images.astype(np.uint8).tobytes()
                            + labels.astype(np.uint8).tobytes()).hexdigest()
    assert digest == "87ff0c9e40dc7e2c0e34e7257799c2e3f3aec1a016363bb11cad869ec428a826"


def test_deterministic_and_picklable(train):
    again = Digits(train=True)
    np.testing.assert_array_equal(again._data, train._data)
    np.testing.assert_array_equal(again._label, train._label)
    copy = pickle.loads(pickle.dumps(train))
    np.testing.assert_array_equal(copy[17][0].asnumpy(), train[17][0].asnumpy())


def test_transform_gets_image_and_label():
    ds = Digits(train=False, transform=lambda x, y: (x.astype("float32") / 255, y + 100))
    x, y = ds[3]
    assert x.dtype == np.float32 and float(x.max().asscalar()) <= 1.0
    assert 100 <= y <= 109


def test_to_tensor_and_dataloader(train):
    tensor = transforms.ToTensor()
    x = tensor(train[0][0])
    assert x.shape == (1, 8, 8) and x.dtype == np.float32
    np.testing.assert_allclose(x.asnumpy()[0], train._data[0, :, :, 0] / 255.0, rtol=1e-6)
    loader = mx.gluon.data.DataLoader(train.transform_first(tensor), batch_size=500,
                                      last_batch="keep")
    batches = list(loader)
    assert [b[0].shape[0] for b in batches] == [500, 500, 433]
    data, label = batches[-1]
    assert data.shape == (433, 1, 8, 8) and data.dtype == np.float32
    assert label.shape == (433,) and label.dtype == np.int32
    np.testing.assert_array_equal(label.asnumpy(), train._label[1000:])
    assert 0.0 <= data.asnumpy().min() and data.asnumpy().max() <= 1.0


def test_dataloader_with_worker_threads(test):
    loader = mx.gluon.data.DataLoader(test, batch_size=100, num_workers=2, thread_pool=True)
    labels = np.concatenate([y.asnumpy() for _, y in loader])
    np.testing.assert_array_equal(labels, test._label)
