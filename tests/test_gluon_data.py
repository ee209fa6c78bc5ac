"""gluon.data in one process: datasets, samplers, batchify, DataLoader semantics."""
import pickle

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import data as gdata
from mxlite.gluon.data import (ArrayDataset, BatchSampler, DataLoader, FilterSampler,
                               IntervalSampler, RandomSampler, SequentialSampler, SimpleDataset)


def _even(x):
    return x % 2 == 0


def _double(x):
    return x * 2


def _pair(x, y):
    return x + y, y * 10


# ---------------------------------------------------------------- datasets

def test_array_dataset_zips_and_checks_lengths():
    x = np.arange(12).reshape(6, 2)
    y = mx.nd.array([5, 4, 3, 2, 1, 0])
    ds = ArrayDataset(x, y)
    assert len(ds) == 6
    a, b = ds[1]
    np.testing.assert_array_equal(a, [2, 3])
    # A 1-d NDArray is kept as NumPy, so its samples are scalars (as in MXNet).
    assert isinstance(b, np.float32) and b == 4
    single = ArrayDataset(x)
    np.testing.assert_array_equal(single[2], [4, 5])
    with pytest.raises(ValueError, match=r"array\[1\] has 5"):
        ArrayDataset(x, np.arange(5))


def test_transform_and_transform_first():
    ds = ArrayDataset(np.arange(4), np.arange(4) + 10)
    t = ds.transform(_pair)
    assert t[2] == (2 + 12, 120)
    tf = ds.transform_first(_double)
    assert tf[3] == (6, 13)
    simple = SimpleDataset([1, 2, 3]).transform_first(_double)
    assert [simple[i] for i in range(3)] == [2, 4, 6]
    eager = ds.transform_first(_double, lazy=False)
    assert isinstance(eager, SimpleDataset) and eager[1] == (2, 11)
    # transform_first pickles (a callable object, not a closure).
    assert pickle.loads(pickle.dumps(tf))[3] == (6, 13)


def test_filter_shard_take_sample():
    ds = SimpleDataset(list(range(10)))
    assert list(ds.filter(_even)) == [0, 2, 4, 6, 8]
    # 10 = 4 + 3 + 3: the first shard gets the extra sample.
    shards = [list(ds.shard(3, i)) for i in range(3)]
    assert shards == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert list(ds.take(3)) == [0, 1, 2] and len(ds.take(None)) == 10 and len(ds.take(99)) == 10
    assert list(ds.sample(IntervalSampler(10, 4))) == [0, 4, 8, 1, 5, 9, 2, 6, 3, 7]
    with pytest.raises(TypeError, match="Sampler"):
        ds.sample([1, 2])
    with pytest.raises(ValueError, match="index"):
        ds.shard(3, 3)


# ---------------------------------------------------------------- samplers

def test_sequential_random_filter_interval_samplers():
    assert list(SequentialSampler(3, start=4)) == [4, 5, 6]
    np.random.seed(1)
    got = list(RandomSampler(8))
    np.random.seed(1)
    want = np.arange(8)
    np.random.shuffle(want)
    assert got == want.tolist() and sorted(got) == list(range(8))
    assert list(FilterSampler(_even, [3, 4, 6, 7])) == [1, 2]
    assert list(IntervalSampler(13, 3)) == [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    assert list(IntervalSampler(13, 3, rollover=False)) == [0, 3, 6, 9, 12]


@pytest.mark.parametrize("last_batch, epochs", [
    ("keep", [[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]] * 2),
    ("discard", [[[0, 1, 2], [3, 4, 5], [6, 7, 8]]] * 2),
    ("rollover", [[[0, 1, 2], [3, 4, 5], [6, 7, 8]],
                  [[9, 0, 1], [2, 3, 4], [5, 6, 7]],
                  [[8, 9, 0], [1, 2, 3], [4, 5, 6], [7, 8, 9]]]),
])
def test_batch_sampler_last_batch(last_batch, epochs):
    bs = BatchSampler(SequentialSampler(10), 3, last_batch)
    for want in epochs:
        assert len(bs) == len(want)
        assert list(bs) == want


def test_batch_sampler_rejects_bad_arguments():
    with pytest.raises(ValueError, match="last_batch"):
        BatchSampler(SequentialSampler(4), 2, "drop")
    with pytest.raises(ValueError, match="batch_size"):
        BatchSampler(SequentialSampler(4), 0)


# ---------------------------------------------------------------- batchify

def test_default_batchify_dtypes_and_structure():
    f = gdata.default_batchify_fn
    ints = f([1, 2, 3])
    assert isinstance(ints, mx.nd.NDArray) and ints.dtype == np.int64
    assert f([1.5, 2.0]).dtype == np.float64          # np.asarray's dtype, as MXNet
    u8 = f([np.zeros((2, 2), np.uint8), np.ones((2, 2), np.uint8)])
    assert u8.shape == (2, 2, 2) and u8.dtype == np.uint8
    nds = f([mx.nd.array([1, 2], dtype="float16"), mx.nd.array([3, 4], dtype="float16")])
    assert nds.dtype == np.float16
    np.testing.assert_array_equal(nds.asnumpy(), [[1, 2], [3, 4]])
    nested = f([(np.float32(1), (2, np.array([1, 1]))), (np.float32(3), (4, np.array([0, 0])))])
    assert isinstance(nested, list) and len(nested) == 2 and isinstance(nested[1], list)
    np.testing.assert_array_equal(nested[0].asnumpy(), [1, 3])
    np.testing.assert_array_equal(nested[1][1].asnumpy(), [[1, 1], [0, 0]])
    with pytest.raises(ValueError, match="batchify_fn"):
        f([np.zeros(2), np.zeros(3)])


# ---------------------------------------------------------------- DataLoader

def test_dataloader_order_len_and_last_batch():
    ds = ArrayDataset(np.arange(10, dtype=np.float32), np.arange(10, dtype=np.int32))
    loader = DataLoader(ds, batch_size=4)
    assert len(loader) == 3
    batches = list(loader)
    assert [b[0].shape for b in batches] == [(4,), (4,), (2,)]
    assert batches[2][1].dtype == np.int32
    np.testing.assert_array_equal(np.concatenate([b[0].asnumpy() for b in batches]),
                                  np.arange(10))
    assert len(list(DataLoader(ds, batch_size=4, last_batch="discard"))) == 2
    roll = DataLoader(ds, batch_size=4, last_batch="rollover")
    assert [len(b[0]) for b in roll] == [4, 4]
    assert next(iter(roll))[0].asnumpy().tolist() == [8, 9, 0, 1]


def test_dataloader_shuffle_follows_numpy_seed():
    ds = np.arange(20, dtype=np.float32)           # a NumPy array is a dataset
    np.random.seed(7)
    a = np.concatenate([b.asnumpy() for b in DataLoader(ds, batch_size=6, shuffle=True)])
    np.random.seed(7)
    b = np.concatenate([b.asnumpy() for b in DataLoader(ds, batch_size=6, shuffle=True)])
    np.random.seed(7)
    want = np.arange(20)
    np.random.shuffle(want)
    np.testing.assert_array_equal(a, want)
    np.testing.assert_array_equal(a, b)


def test_dataloader_sampler_batch_sampler_batchify_and_errors():
    ds = SimpleDataset(list(range(10)))
    got = [b.asnumpy().tolist() for b in DataLoader(ds, batch_size=2,
                                                      sampler=IntervalSampler(10, 5))]
    assert got == [[0, 5], [1, 6], [2, 7], [3, 8], [4, 9]]
    bs = BatchSampler(SequentialSampler(5, start=5), 5)
    assert [b.asnumpy().tolist() for b in DataLoader(ds, batch_sampler=bs)] == [[5, 6, 7, 8, 9]]
    assert list(DataLoader(ds, batch_size=4, batchify_fn=sum)) == [6, 22, 17]
    with pytest.raises(ValueError, match="batch_size must be specified"):
        DataLoader(ds)
    with pytest.raises(ValueError, match="shuffle must not be specified"):
        DataLoader(ds, batch_size=2, shuffle=True, sampler=SequentialSampler(10))
    with pytest.raises(ValueError, match="must not be specified if batch_sampler"):
        DataLoader(ds, batch_size=2, batch_sampler=bs)
    with pytest.raises(ValueError, match="timeout"):
        DataLoader(ds, batch_size=2, timeout=0)


def test_dataloader_pin_memory_and_auto_reload():
    ds = ArrayDataset(np.arange(4, dtype=np.float32))
    pinned = next(iter(DataLoader(ds, batch_size=2, pin_memory=True, pin_device_id=0)))
    assert pinned.context == mx.cpu_pinned(0)
    loader = DataLoader(ds, batch_size=2, auto_reload=True)
    assert [len(list(loader)) for _ in range(3)] == [2, 2, 2]
