"""DataLoader with worker processes (fork and spawn) and threads: same batches as in
process, exceptions, timeouts, dead workers, break and garbage collection.

Every test runs under a SIGALRM watchdog, so a hang fails instead of blocking the run.
"""
import gc
import multiprocessing
import os
import pickle
import signal
import time

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon.data import ArrayDataset, DataLoader, Dataset
from mxlite.gluon.data.vision import transforms

WATCHDOG_S = 20


class _Hang(Exception):
    pass


@pytest.fixture(autouse=True)
def _watchdog():
    def on_alarm(signum, frame):
        raise _Hang("test took more than %d s: the DataLoader hangs" % WATCHDOG_S)
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(WATCHDOG_S)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


# Module-level datasets and functions, so that they pickle for 'spawn'.

class AddOne:
    def __call__(self, x):
        return x + 1


class FailingDataset(Dataset):
    def __init__(self, n, bad):
        self._n, self._bad = n, bad

    def __len__(self):
        return self._n

    def __getitem__(self, idx):
        if idx == self._bad:
            raise ValueError("bad sample %d" % idx)
        return np.float32(idx)


class SlowDataset(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, idx):
        if idx == 2:
            time.sleep(10)
        return np.float32(idx)


class DyingDataset(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, idx):
        if idx == 1:
            os._exit(3)
        return np.float32(idx)


class RandomDataset(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        return np.random.rand()


def _image_dataset():
    rng = np.random.RandomState(0)
    images = mx.nd.array(rng.randint(0, 256, (10, 4, 3, 3)), dtype=np.uint8)
    labels = np.arange(10, dtype=np.int32)
    return ArrayDataset(images, labels)


def _as_lists(loader):
    return [[b.asnumpy() for b in batch] for batch in loader]


def _assert_same_batches(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert len(g) == len(w)
        for a, b in zip(g, w):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_workers_give_the_in_process_batches(method):
    ds = _image_dataset().transform_first(AddOne())
    np.random.seed(3)
    want = _as_lists(DataLoader(ds, batch_size=3, shuffle=True))
    np.random.seed(3)
    loader = DataLoader(ds, batch_size=3, shuffle=True, num_workers=2,
                        multiprocessing_context=method, timeout=15)
    batches = list(loader)
    assert all(isinstance(b, mx.nd.NDArray) for batch in batches for b in batch)
    assert batches[0][0].dtype == np.uint8 and batches[0][1].dtype == np.int32
    _assert_same_batches([[b.asnumpy() for b in batch] for batch in batches], want)
    # A second epoch reuses the same workers.
    pids = loader._worker_pids()
    assert len(pids) == 2 and len(list(loader)) == 4
    assert loader._worker_pids() == pids
    loader.close()


def test_worker_exception_is_raised_in_parent_with_its_traceback():
    loader = DataLoader(FailingDataset(8, bad=5), batch_size=2, num_workers=2,
                        multiprocessing_context="fork", timeout=10)
    it = iter(loader)
    np.testing.assert_array_equal(next(it).asnumpy(), [0, 1])
    with pytest.raises(ValueError, match="bad sample 5") as info:
        list(it)
    cause = str(info.value.__cause__)
    assert "DataLoader worker" in cause and "__getitem__" in cause and "Traceback" in cause
    # The pool survives: the loader can run again (and fails again at the same sample).
    with pytest.raises(ValueError, match="bad sample 5"):
        list(loader)
    loader.close()


def test_timeout_fires_with_a_clear_error():
    loader = DataLoader(SlowDataset(), batch_size=1, num_workers=2, timeout=0.5,
                        multiprocessing_context="fork")
    start = time.monotonic()
    with pytest.raises(multiprocessing.TimeoutError, match=r"timeout=0\.5 seconds"):
        list(loader)
    assert time.monotonic() - start < 5
    assert loader._worker_pids() == []      # the stuck pool was shut down


def test_dead_worker_is_reported_not_waited_for():
    loader = DataLoader(DyingDataset(), batch_size=1, num_workers=2, timeout=30,
                        multiprocessing_context="fork")
    start = time.monotonic()
    with pytest.raises(mx.MXNetError, match="exited unexpectedly with exit code 3"):
        list(loader)
    assert time.monotonic() - start < 10


def test_task_sent_to_a_dead_worker_is_reported_not_a_broken_pipe():
    # A worker killed between two batches: handing it the next task meets a closed pipe,
    # which is the worker's death (MXNetError), not a raw BrokenPipeError
    ds = ArrayDataset(np.arange(8, dtype=np.float32))
    loader = DataLoader(ds, batch_size=1, num_workers=2, multiprocessing_context="fork",
                        timeout=10)
    next(iter(loader))
    pool = loader._pool
    victim = pool._procs[0]
    os.kill(victim.pid, signal.SIGKILL)
    victim.join(5)
    with pytest.raises(mx.MXNetError, match="exited unexpectedly with exit code -9"):
        for k in range(2 * len(pool._procs)):      # worker 0 gets one of these
            pool.submit((pool.open_iteration(), k), [0])
    assert not pool.alive


def _pid_exists(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_break_then_new_epoch_then_garbage_collection():
    ds = ArrayDataset(np.arange(20, dtype=np.float32))
    loader = DataLoader(ds, batch_size=2, num_workers=2, multiprocessing_context="fork",
                        timeout=10)
    for i, batch in enumerate(loader):
        if i == 1:
            break
    # Results of the abandoned epoch must not leak into the next one.
    got = np.concatenate([b.asnumpy() for b in loader])
    np.testing.assert_array_equal(got, np.arange(20))
    pids = loader._worker_pids()
    assert pids and all(_pid_exists(p) for p in pids)
    del loader, batch
    gc.collect()
    assert not any(_pid_exists(p) for p in pids)


def test_unpicklable_dataset_under_spawn_is_a_clear_error():
    ds = ArrayDataset(np.arange(4)).transform(lambda x: x * 2)
    loader = DataLoader(ds, batch_size=2, num_workers=1, multiprocessing_context="spawn")
    with pytest.raises(TypeError, match="picklable"):
        list(loader)


def test_workers_have_distinct_reproducible_random_streams():
    def run():
        np.random.seed(11)
        loader = DataLoader(RandomDataset(), batch_size=2, num_workers=2,
                            multiprocessing_context="fork", timeout=10)
        out = [b.asnumpy() for b in loader]
        loader.close()
        return out
    a, b = run(), run()
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    # Batches 0 and 1 come from different workers: not the same stream.
    assert not np.array_equal(a[0], a[1])


def test_worker_seeding_leaves_the_shuffle_order_as_in_process():
    ds = ArrayDataset(np.arange(10, dtype=np.int64))
    np.random.seed(5)
    loader = DataLoader(ds, batch_size=10, shuffle=True, num_workers=1,
                        multiprocessing_context="fork", timeout=10)
    got = next(iter(loader)).asnumpy()
    loader.close()
    np.random.seed(5)
    want = np.arange(10)
    np.random.shuffle(want)
    np.testing.assert_array_equal(got, want)


def test_thread_pool_matches_and_times_out():
    ds = _image_dataset()
    want = _as_lists(DataLoader(ds, batch_size=4, last_batch="discard"))
    got = _as_lists(DataLoader(ds, batch_size=4, last_batch="discard", num_workers=3,
                               thread_pool=True))
    _assert_same_batches(got, want)
    loader = DataLoader(SlowDataset(), batch_size=1, num_workers=2, thread_pool=True,
                        timeout=0.3)
    with pytest.raises(multiprocessing.TimeoutError, match="timeout=0.3"):
        list(loader)


def test_prefetch_zero_rollover_and_pin_memory_with_workers():
    ds = ArrayDataset(np.arange(7, dtype=np.float32))
    loader = DataLoader(ds, batch_size=3, last_batch="rollover", num_workers=2, prefetch=0,
                        pin_memory=True, multiprocessing_context="fork", timeout=10)
    first = [b.asnumpy().tolist() for b in loader]
    second = [b.asnumpy().tolist() for b in loader]
    assert first == [[0, 1, 2], [3, 4, 5]]
    assert second == [[6, 0, 1], [2, 3, 4]]
    assert next(iter(loader)).context == mx.cpu_pinned(0)
    loader.close()


def test_transforms_pickle_and_run_in_spawned_workers():
    t = transforms.Compose([transforms.Resize((2, 2)), transforms.ToTensor(),
                            transforms.Normalize(0.5, 0.5)])
    t2 = pickle.loads(pickle.dumps(t))
    x = mx.nd.array(np.random.RandomState(1).randint(0, 256, (3, 3, 3)), dtype=np.uint8)
    np.testing.assert_array_equal(t(x).asnumpy(), t2(x).asnumpy())
    ds = _image_dataset().transform_first(t)
    want = _as_lists(DataLoader(ds, batch_size=5))
    got = _as_lists(DataLoader(ds, batch_size=5, num_workers=2, multiprocessing_context="spawn",
                               timeout=15))
    _assert_same_batches(got, want)
    assert got[0][0].shape == (5, 3, 2, 2) and got[0][0].dtype == np.float32
