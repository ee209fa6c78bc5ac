"""mx.io.MNISTIter, CSVIter and PrefetchingIter, as MXNet 1.9.1 behaves.

Every expected table below was observed with real MXNet 1.9.1 on the same small files
(idx files written by ``_write_idx``, CSV files written by the tests): batch contents,
pads, indices, shapes, dtypes, the round_batch epochs, the num_parts split, and the
PrefetchingIter batches over NDArrayIters. Deliberate differences (documented in the
docstrings of mxlite/io/extra_iters.py) are tested as mxlite's behaviour and marked
"MXNet: ..." in comments.
"""
import gzip
import logging
import os
import struct
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def _write_idx(dirname, n=10, rows=28, cols=28, seed=0, prefix="t"):
    """An idx3-ubyte image file and idx1-ubyte label file (label i = i % 10)."""
    rng = np.random.RandomState(seed)
    img = rng.randint(0, 256, size=(n, rows, cols)).astype(np.uint8)
    img[0, 0, :2] = (255, 0)
    lab = (np.arange(n) % 10).astype(np.uint8)
    image = os.path.join(str(dirname), prefix + "-images-idx3-ubyte")
    label = os.path.join(str(dirname), prefix + "-labels-idx1-ubyte")
    with open(image, "wb") as f:
        f.write(struct.pack(">iiii", 2051, n, rows, cols) + img.tobytes())
    with open(label, "wb") as f:
        f.write(struct.pack(">ii", 2049, n) + lab.tobytes())
    return image, label, img, lab


def _mnist(image, label, **kw):
    kw.setdefault("silent", True)
    return mx.io.MNISTIter(image=image, label=label, **kw)


# ----------------------------------------------------------------------------
# MNISTIter

@pytest.mark.smoke
def test_mnist_batches_scaled_by_256_and_last_batch_dropped(tmp_path):
    image, label, img, lab = _write_idx(tmp_path)
    it = _mnist(image, label, batch_size=4, shuffle=False)
    assert it.batch_size == 4
    assert it.provide_data == [mx.io.DataDesc("data", (4, 1, 28, 28))]
    assert it.provide_data[0].dtype is np.float32
    assert it.provide_label == [mx.io.DataDesc("softmax_label", (4,))]
    for _ in range(2):
        batches = list(it)
        assert len(batches) == 2          # 10 images, batch 4: MXNet drops the last 2
        for k, b in enumerate(batches):
            x, y = b.data[0].asnumpy(), b.label[0].asnumpy()
            assert x.shape == (4, 1, 28, 28) and x.dtype == np.float32
            assert y.dtype == np.float32 and b.pad == 0
            np.testing.assert_array_equal(x[:, 0], img[4 * k:4 * k + 4] / np.float32(256))
            np.testing.assert_array_equal(y, lab[4 * k:4 * k + 4])
        it.reset()
    # MXNet 1.9.1: pixel 255 -> 0.99609375 (division by 256, not 255).
    assert batches[0].data[0].asnumpy()[0, 0, 0, :2].tolist() == [0.99609375, 0.0]


def test_mnist_flat_and_other_image_sizes(tmp_path):
    image, label, img, _ = _write_idx(tmp_path, n=6, rows=5, cols=7)
    it = _mnist(image, label, batch_size=2, shuffle=False, flat=True)
    assert it.provide_data[0].shape == (2, 35)
    np.testing.assert_array_equal(it.next().data[0].asnumpy(), img[:2].reshape(2, 35) / 256)
    assert _mnist(image, label, batch_size=2).provide_data[0].shape == (2, 1, 5, 7)


def test_mnist_iter_next_getdata_and_names(tmp_path):
    image, label, _, lab = _write_idx(tmp_path)
    it = _mnist(image, label, batch_size=4, shuffle=False, data_name="x", label_name="y")
    assert [d.name for d in it.provide_data + it.provide_label] == ["x", "y"]
    assert it.iter_next() and it.getpad() == 0
    np.testing.assert_array_equal(it.getlabel().asnumpy(), lab[:4])
    assert it.iter_next() and not it.iter_next()
    # mxlite: index = the samples' positions in the file (MXNet 1.9.1 returns zeros).
    it.reset()
    assert it.next().index.tolist() == [0, 1, 2, 3]


# MXNet 1.9.1: part k of num_parts holds [count*k//num_parts, count*(k+1)//num_parts).
@pytest.mark.parametrize("n, parts, want", [
    (10, 3, [[0, 1, 2], [3, 4, 5], [6, 7, 8, 9]]),
    (10, 4, [[0, 1], [2, 3, 4], [5, 6], [7, 8, 9]]),
    (7, 5, [[0], [1], [2, 3], [4], [5, 6]]),
    (13, 5, [[0, 1], [2, 3, 4], [5, 6], [7, 8, 9], [10, 11, 12]]),
])
def test_mnist_num_parts_split(tmp_path, n, parts, want):
    image, label, _, _ = _write_idx(tmp_path, n=n, rows=2, cols=2)
    got = []
    for k in range(parts):
        it = _mnist(image, label, batch_size=1, shuffle=False, num_parts=parts, part_index=k)
        got.append([int(b.index[0]) for b in it])
    assert got == want


def test_mnist_shuffle_is_seeded_and_fixed_across_epochs(tmp_path):
    image, label, img, lab = _write_idx(tmp_path)

    def epochs(seed, n=2, **kw):
        it = _mnist(image, label, batch_size=5, seed=seed, **kw)
        out = []
        for _ in range(n):
            it.reset()
            out.append([b.index.tolist() for b in it])
        return out

    a = epochs(0)
    # As MXNet: shuffled once at construction, so every epoch has the same order.
    assert a[0] == a[1] == epochs(0)[0]
    assert sorted(sum(a[0], [])) == list(range(10))
    assert a[0] != [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert epochs(1)[0] != a[0]
    # Shuffling happens within a part (MXNet: part 1 of 2 yields only samples 5..9).
    part = epochs(0, n=1, num_parts=2, part_index=1)[0]
    assert sorted(sum(part, [])) == [5, 6, 7, 8, 9]
    b = _mnist(image, label, batch_size=5, seed=3).next()
    idx = b.index.astype(np.int64)
    np.testing.assert_array_equal(b.data[0].asnumpy()[:, 0], img[idx] / 256)
    np.testing.assert_array_equal(b.label[0].asnumpy(), lab[idx])


def test_mnist_reads_gzip(tmp_path):
    image, label, img, lab = _write_idx(tmp_path)
    for path in (image, label):
        with open(path, "rb") as f, gzip.open(path + ".gz", "wb") as g:
            g.write(f.read())
    b = _mnist(image + ".gz", label + ".gz", batch_size=3, shuffle=False).next()
    np.testing.assert_array_equal(b.data[0].asnumpy()[:, 0], img[:3] / 256)
    np.testing.assert_array_equal(b.label[0].asnumpy(), lab[:3])


def test_mnist_silent_false_logs(tmp_path, caplog):
    image, label, _, _ = _write_idx(tmp_path)
    with caplog.at_level(logging.INFO):
        mx.io.MNISTIter(image=image, label=label, batch_size=4, shuffle=False)
    assert "MNISTIter: load 10 images, shuffle=0, shape=[4, 1, 28, 28]" in caplog.text


def test_mnist_errors_name_the_file(tmp_path):
    image, label, _, _ = _write_idx(tmp_path)
    _, small_label, _, _ = _write_idx(tmp_path, n=6, prefix="s")
    with pytest.raises(MXNetError, match="cannot open .*nope"):
        _mnist(str(tmp_path / "nope"), label)
    with pytest.raises(MXNetError, match="labels-idx1-ubyte' has magic number 0x00000801, "
                                         "expected 0x00000803"):
        _mnist(label, image)
    with pytest.raises(MXNetError, match="images-idx3-ubyte' has magic number"):
        _mnist(image, image)
    truncated = str(tmp_path / "cut")
    with open(image, "rb") as f, open(truncated, "wb") as g:
        g.write(f.read()[:1000])
    with pytest.raises(MXNetError, match="cut' is truncated"):
        _mnist(truncated, label)
    with pytest.raises(MXNetError, match="holds 10 images but .* holds 6 labels"):
        _mnist(image, small_label)
    with pytest.raises(MXNetError, match="batch_size 11 is larger than the 10 images"):
        _mnist(image, label, batch_size=11)
    with pytest.raises(ValueError, match="part_index"):
        _mnist(image, label, num_parts=2, part_index=2)
    with pytest.raises(MXNetError, match="dtype"):
        _mnist(image, label, dtype="float64")


# ----------------------------------------------------------------------------
# CSVIter

def _csv(tmp_path, name, text):
    path = str(tmp_path / name)
    with open(path, "w") as f:
        f.write(text)
    return path


def _csv_epochs(it, n=3):
    out = []
    for _ in range(n):
        out.append([(b.data[0].asnumpy()[:, 0].tolist(), b.pad) for b in it])
        it.reset()
    return out


_E = [([1, 2], 0), ([3, 4], 0)]


# MXNet 1.9.1 on the rows 1,2,3 / 2,3,4 / 3,4,5 / 4,5,6 (first column shown), 3 epochs
# with reset() between them.
@pytest.mark.parametrize("batch_size, round_batch, want", [
    (2, True, [_E, _E, _E]),
    (3, True, [[([1, 2, 3], 0), ([4, 1, 2], 2)], [([3, 4, 1], 1)], [([2, 3, 4], 0)]]),
    (3, False, [[([1, 2, 3], 0), ([4, 2, 3], 2)]] * 3),   # pad rows: the previous batch's
    (4, True, [[([1, 2, 3, 4], 0)]] * 3),
    (5, True, [[([1, 2, 3, 4, 1], 1)], [([2, 3, 4, 1, 2], 2)], [([3, 4, 1, 2, 3], 3)]]),
    (8, True, [[([1, 2, 3, 4, 1, 2, 3, 4], 4)], [], [([1, 2, 3, 4, 1, 2, 3, 4], 4)]]),
])
def test_csv_round_batch_epochs(tmp_path, batch_size, round_batch, want):
    data = _csv(tmp_path, "d.csv", "1,2,3\n2,3,4\n3,4,5\n4,5,6\n")
    it = mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=batch_size,
                       round_batch=round_batch)
    assert _csv_epochs(it) == want


def test_csv_more_rows_than_twice_the_data_cycle(tmp_path):
    # MXNet 1.9.1 fails here ("number of input must be bigger than batch size");
    # mxlite cycles the rows again.
    data = _csv(tmp_path, "d.csv", "1\n2\n3\n4\n")
    it = mx.io.CSVIter(data_csv=data, data_shape=(1,), batch_size=9)
    assert _csv_epochs(it, 2) == [[([1, 2, 3, 4, 1, 2, 3, 4, 1], 5)],
                                  [([2, 3, 4, 1, 2, 3, 4, 1, 2], 6)]]


@pytest.mark.smoke
def test_csv_labels_descs_and_index(tmp_path):
    data = _csv(tmp_path, "d.csv", "1,2,3\n2,3,4\n3,4,5\n4,5,6\n")
    label = _csv(tmp_path, "l.csv", "10\n20\n30\n40\n")
    it = mx.io.CSVIter(data_csv=data, data_shape=(3,), label_csv=label, batch_size=3)
    assert it.provide_data == [mx.io.DataDesc("data", (3, 3))]
    assert it.provide_label == [mx.io.DataDesc("softmax_label", (3,))]
    assert it.provide_label[0].dtype is np.float32
    got = [(b.label[0].asnumpy().tolist(), b.pad, b.index.tolist()) for b in it]
    assert got == [([10, 20, 30], 0, [0, 1, 2]), ([40, 10, 20], 2, [3, 0, 1])]
    it.reset()
    b = it.next()
    assert (b.label[0].asnumpy().tolist(), b.pad, b.index.tolist()) == ([30, 40, 10], 1,
                                                                        [2, 3, 0])
    np.testing.assert_array_equal(b.data[0].asnumpy(), [[3, 4, 5], [4, 5, 6], [1, 2, 3]])


def test_csv_shapes_and_default_labels(tmp_path):
    data = _csv(tmp_path, "d.csv", "1,2,3\n2,3,4\n3,4,5\n4,5,6\n")
    label2 = _csv(tmp_path, "l2.csv", "10,11\n20,21\n30,31\n40,41\n")
    it = mx.io.CSVIter(data_csv=data, data_shape=(3,), label_csv=label2, label_shape=(2,),
                       batch_size=3)
    assert it.provide_label[0].shape == (3, 2)
    assert it.next().label[0].asnumpy().tolist() == [[10, 11], [20, 21], [30, 31]]
    # MXNet: data_shape (1, 3) keeps its axes; a one-value label_shape gives (batch,).
    it = mx.io.CSVIter(data_csv=data, data_shape=(1, 3), batch_size=3, label_shape=(1, 1),
                       data_name="x", label_name="y")
    assert it.provide_data == [mx.io.DataDesc("x", (3, 1, 3))]
    assert it.provide_label == [mx.io.DataDesc("y", (3,))]
    b = it.next()
    assert b.data[0].shape == (3, 1, 3)
    assert b.label[0].asnumpy().tolist() == [0, 0, 0]


def test_csv_int_dtypes_truncate(tmp_path):
    data = _csv(tmp_path, "i.csv", "1.7,-2.5,3\n")
    for dtype in ("int32", "int64"):
        it = mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=1, dtype=dtype)
        assert it.provide_data[0].dtype is np.dtype(dtype).type
        assert it.provide_label[0].dtype is np.dtype(dtype).type
        x = it.next().data[0]
        assert x.dtype is np.dtype(dtype).type
        assert x.asnumpy().tolist() == [[1, -2, 3]]       # MXNet 1.9.1's values


def test_csv_parsing_directory_and_extra_labels(tmp_path):
    spaced = _csv(tmp_path, "e.csv", "1.5, 2e-1 ,-3\r\n\n4,5,6")
    b = mx.io.CSVIter(data_csv=spaced, data_shape=(3,), batch_size=2).next()
    np.testing.assert_array_equal(b.data[0].asnumpy(), np.float32([[1.5, 0.2, -3], [4, 5, 6]]))
    os.makedirs(str(tmp_path / "dd"))
    _csv(tmp_path, "dd/b.csv", "3,3\n4,4\n")
    _csv(tmp_path, "dd/a.csv", "1,1\n2,2\n")
    it = mx.io.CSVIter(data_csv=str(tmp_path / "dd"), data_shape=(2,), batch_size=4)
    assert it.next().data[0].asnumpy()[:, 0].tolist() == [1, 2, 3, 4]   # files by name
    data = _csv(tmp_path, "d1.csv", "1\n2\n3\n4\n")
    label = _csv(tmp_path, "l5.csv", "1\n2\n3\n4\n5\n")
    it = mx.io.CSVIter(data_csv=data, data_shape=(1,), label_csv=label, batch_size=2)
    assert [b.label[0].asnumpy().tolist() for b in it] == [[1, 2], [3, 4]]


def test_csv_errors(tmp_path):
    data = _csv(tmp_path, "d.csv", "1,2,3\n2,3,4\n")
    with pytest.raises(MXNetError, match="dtype float64 is not supported"):
        mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=1, dtype="float64")
    with pytest.raises(MXNetError, match="line 1 of .*d.csv' has 3 values but data_shape "
                                         r"\(2,\) needs 2"):
        mx.io.CSVIter(data_csv=data, data_shape=(2,), batch_size=1)
    with pytest.raises(MXNetError, match="cannot open .*nope.csv"):
        mx.io.CSVIter(data_csv=str(tmp_path / "nope.csv"), data_shape=(3,), batch_size=1)
    short = _csv(tmp_path, "l.csv", "1\n")
    with pytest.raises(MXNetError, match="l.csv' has 1 rows but data_csv .* has 2"):
        mx.io.CSVIter(data_csv=data, data_shape=(3,), label_csv=short, batch_size=1)
    bad = _csv(tmp_path, "f.csv", "1,a,3\n")
    with pytest.raises(MXNetError, match="line 1 of .*f.csv' is not numeric"):
        mx.io.CSVIter(data_csv=bad, data_shape=(3,), batch_size=1)
    with pytest.raises(MXNetError, match="holds no rows"):
        mx.io.CSVIter(data_csv=_csv(tmp_path, "empty.csv", ""), data_shape=(3,), batch_size=1)
    with pytest.raises(ValueError, match="batch_size"):
        mx.io.CSVIter(data_csv=data, data_shape=(3,))
    with pytest.raises(MXNetError, match="no current batch"):
        mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=1).getdata()


# ----------------------------------------------------------------------------
# PrefetchingIter

def _summary(it):
    return [([d.asnumpy().tolist() for d in b.data], [l.asnumpy().tolist() for l in b.label],
             b.pad) for b in it]


@pytest.mark.smoke
def test_prefetching_joins_and_renames_like_mxnet():
    a = np.arange(10, dtype=np.float32).reshape(5, 2)
    it1 = mx.io.NDArrayIter(a, np.arange(5), batch_size=2)
    it2 = mx.io.NDArrayIter({"x": a * 10}, {"y": np.arange(5) + 100}, batch_size=2)
    p = mx.io.PrefetchingIter([it1, it2], rename_data=[{"data": "d1"}, {"x": "d2"}])
    try:
        assert [d.name for d in p.provide_data] == ["d1", "d2"]
        assert [d.name for d in p.provide_label] == ["softmax_label", "y"]
        assert p.batch_size == 2
        # The batches MXNet 1.9.1 yields for these iterators, in both epochs.
        want = [([[[0, 1], [2, 3]], [[0, 10], [20, 30]]], [[0, 1], [100, 101]], 0),
                ([[[4, 5], [6, 7]], [[40, 50], [60, 70]]], [[2, 3], [102, 103]], 0),
                ([[[8, 9], [0, 1]], [[80, 90], [0, 10]]], [[4, 0], [104, 100]], 1)]
        for _ in range(2):
            assert _summary(p) == want
            assert not p.iter_next() and not p.iter_next()
            p.reset()
        b = p.next()
        assert [d.name for d in b.provide_data] == ["d1", "d2"]
        assert p.getdata()[1].asnumpy().tolist() == [[0, 10], [20, 30]]
        assert p.getlabel()[1].asnumpy().tolist() == [100, 101]
        assert p.getpad() == 0
        p.reset()                       # mid-epoch reset starts over
        assert p.next().data[0].asnumpy().tolist() == [[0, 1], [2, 3]]
    finally:
        p.close()


def test_prefetching_single_iter_and_rename_label(tmp_path):
    data = _csv(tmp_path, "d.csv", "1,2,3\n2,3,4\n3,4,5\n4,5,6\n")
    direct = mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=3)
    p = mx.io.PrefetchingIter(mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=3),
                              rename_label=[{"softmax_label": "lab"}])
    assert p.provide_label == [mx.io.DataDesc("lab", (3,))]
    for _ in range(3):      # round_batch epochs go on through the wrapper
        assert _summary(p) == _summary(direct)
        p.reset()
        direct.reset()
    p.close()


class _Recorder(mx.io.DataIter):
    """Counts next() calls; raises ``fail`` at batch ``fail_at``."""

    def __init__(self, n=3, fail_at=None, fail=None):
        super().__init__(2)
        self.n, self.fail_at, self.fail = n, fail_at, fail
        self.calls = 0
        self.cursor = 0
        self.provide_data = [mx.io.DataDesc("data", (2, 1))]
        self.provide_label = []
        self.thread_names = set()

    def reset(self):
        self.cursor = 0

    def next(self):
        self.calls += 1
        self.thread_names.add(threading.current_thread().name)
        if self.cursor == self.fail_at:
            self.cursor += 1
            raise self.fail
        if self.cursor >= self.n:
            raise StopIteration
        self.cursor += 1
        return mx.io.DataBatch([mx.nd.full((2, 1), self.cursor)], [], pad=0)


def _wait_for(cond, timeout=5.0):
    end = time.time() + timeout
    while not cond() and time.time() < end:
        time.sleep(0.005)
    return cond()


def test_prefetching_fetches_ahead_in_a_thread():
    rec = _Recorder()
    p = mx.io.PrefetchingIter(rec)
    assert _wait_for(lambda: rec.calls == 1)        # fetched before anyone asked
    assert p.next().data[0].asnumpy()[0, 0] == 1
    assert _wait_for(lambda: rec.calls == 2)        # the next one is already on its way
    assert rec.thread_names == {"PrefetchingIter-0"}
    assert [b.data[0].asnumpy()[0, 0] for b in p] == [2, 3]
    p.close()


def test_prefetching_reraises_errors_in_consumer():
    rec = _Recorder(n=4, fail_at=1, fail=ValueError("bad record 1"))
    p = mx.io.PrefetchingIter(rec)
    assert p.next().data[0].asnumpy()[0, 0] == 1
    with pytest.raises(ValueError, match="bad record 1"):
        p.next()
    with pytest.raises(StopIteration):      # that epoch is over
        p.next()
    rec.fail_at = None
    p.reset()
    assert [b.data[0].asnumpy()[0, 0] for b in p] == [1, 2, 3, 4]
    p.close()


def test_prefetching_errors():
    a = np.zeros((4, 2))
    with pytest.raises(KeyError, match=r"rename_data\[0\] has no entry for 'data'"):
        mx.io.PrefetchingIter(mx.io.NDArrayIter(a, batch_size=2), rename_data=[{"x": "y"}])
    with pytest.raises(ValueError, match="one dict per iterator"):
        mx.io.PrefetchingIter(mx.io.NDArrayIter(a, batch_size=2), rename_data=[{}, {}])
    with pytest.raises(ValueError, match="at least one"):
        mx.io.PrefetchingIter([])
    p = mx.io.PrefetchingIter([mx.io.NDArrayIter(np.zeros((6, 2)), batch_size=2),
                               mx.io.NDArrayIter(a, batch_size=2)])
    with pytest.raises(MXNetError, match=r"iterators \[1\] ended while \[0\]"):
        list(p)
    p.close()


def test_prefetching_threads_stop_on_close_and_collection():
    p = mx.io.PrefetchingIter(_Recorder())
    threads = [w._thread for w in p._workers]
    p.close()
    assert _wait_for(lambda: not any(t.is_alive() for t in threads))
    p = mx.io.PrefetchingIter([_Recorder(), _Recorder()])
    threads = [w._thread for w in p._workers]
    p.next()
    del p                                   # __del__ stops the threads
    assert _wait_for(lambda: not any(t.is_alive() for t in threads))


def test_prefetching_does_not_hang_interpreter_exit():
    code = ("import numpy as np, mxlite as mx\n"
            "p = mx.io.PrefetchingIter(mx.io.NDArrayIter(np.zeros((10, 2)), batch_size=2))\n"
            "p.next()\n"
            "q = mx.io.PrefetchingIter(mx.io.NDArrayIter(np.zeros((10, 2)), batch_size=2))\n"
            "print('done')\n")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "done"
    assert "Exception" not in out.stderr


# ----------------------------------------------------------------------------
# Module.fit

def _learnable_idx(dirname, n=64):
    """8x8 images whose class (0..3) is the bright quadrant; idx files on disk."""
    rng = np.random.RandomState(1)
    lab = rng.randint(0, 4, size=n).astype(np.uint8)
    img = rng.randint(0, 60, size=(n, 8, 8)).astype(np.uint8)
    for i, c in enumerate(lab):
        r, q = divmod(int(c), 2)
        img[i, 4 * r:4 * r + 4, 4 * q:4 * q + 4] += 180
    image, label = str(dirname / "img-idx3-ubyte"), str(dirname / "lab-idx1-ubyte")
    with open(image, "wb") as f:
        f.write(struct.pack(">iiii", 2051, n, 8, 8) + img.tobytes())
    with open(label, "wb") as f:
        f.write(struct.pack(">ii", 2049, n) + lab.tobytes())
    return image, label


def _softmax_net():
    data = mx.sym.Variable("data")
    fc = mx.sym.FullyConnected(mx.sym.flatten(data), num_hidden=4, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


@pytest.mark.parametrize("wrap", [False, True])
def test_module_fit_with_mnistiter(tmp_path, wrap):
    image, label = _learnable_idx(tmp_path)
    it = mx.io.MNISTIter(image=image, label=label, batch_size=16, seed=2, silent=True)
    if wrap:
        it = mx.io.PrefetchingIter(it)
    mod = mx.mod.Module(_softmax_net(), context=mx.cpu())
    mod.fit(it, num_epoch=3, optimizer="sgd", initializer=mx.init.Xavier(),
            optimizer_params={"learning_rate": 0.5})
    acc = dict(mod.score(it, "acc"))["accuracy"]
    assert acc > 0.9, acc
    if wrap:
        it.close()


def test_module_fit_with_csviter(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.randn(30, 4).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
    data = _csv(tmp_path, "x.csv", "\n".join(",".join("%.6f" % v for v in r) for r in x))
    label = _csv(tmp_path, "y.csv", "\n".join(str(v) for v in y))
    it = mx.io.CSVIter(data_csv=data, data_shape=(4,), label_csv=label, batch_size=8)
    mod = mx.mod.Module(_softmax_net(), context=mx.cpu())
    mod.fit(it, num_epoch=4, optimizer="sgd", initializer=mx.init.Xavier(),
            optimizer_params={"learning_rate": 0.5})
    it = mx.io.CSVIter(data_csv=data, data_shape=(4,), label_csv=label, batch_size=8)
    assert dict(mod.score(it, "acc"))["accuracy"] > 0.8


def test_iterators_ignore_unknown_arguments_with_one_warning(tmp_path):
    image, label = _write_idx(str(tmp_path), n=8)[:2]
    with pytest.warns(UserWarning, match="MNISTIter: MXNet ignores the argument\\(s\\) "
                                         "data_shape, input_shape"):
        it = mx.io.MNISTIter(image=image, label=label, batch_size=4, silent=True,
                             data_shape=(1, 28, 28), input_shape=(1, 28, 28))
    assert it.provide_data[0].shape == (4, 1, 28, 28)
    data = tmp_path / "d.csv"
    data.write_text("1,2\n3,4\n")
    with pytest.warns(UserWarning, match="CSVIter: MXNet ignores the argument\\(s\\) part"):
        it = mx.io.CSVIter(data_csv=str(data), data_shape=(2,), batch_size=2, part=0)
    np.testing.assert_array_equal(next(it).data[0].asnumpy(), [[1, 2], [3, 4]])


# ----------------------------------------------------------------------------
# MXDataIter: the class of the native iterators, and a wrapper of an iterator "handle"

def test_native_iterators_are_mxdataiters(tmp_path):
    image, label, _, _ = _write_idx(tmp_path)
    data = _csv(tmp_path, "d.csv", "1,2,3\n2,3,4\n")
    for it in (_mnist(image, label, batch_size=5),
               mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=2)):
        assert isinstance(it, mx.io.MXDataIter) and isinstance(it, mx.io.DataIter)
    assert issubclass(mx.io.ImageRecordIter, mx.io.MXDataIter)
    assert issubclass(mx.io.LibSVMIter, mx.io.MXDataIter)
    assert not isinstance(mx.io.NDArrayIter(np.zeros((4, 2)), batch_size=2), mx.io.MXDataIter)


def test_debug_skip_load_repeats_the_current_batch(tmp_path):
    # MXNet 1.9.1 (CSVIter, batch_size=2): [1, 2] after debug_skip_load, on every next()
    # and again after reset().
    data = _csv(tmp_path, "d.csv", "1,2,3\n2,3,4\n3,4,5\n4,5,6\n")
    it = mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=2)
    first = lambda b: b.data[0].asnumpy()[:, 0].tolist()  # noqa: E731
    assert first(it.next()) == [1, 2]
    it.debug_skip_load()
    assert [first(it.next()) for _ in range(3)] == [[1, 2]] * 3
    it.reset()
    assert [first(it.next()) for _ in range(2)] == [[1, 2]] * 2


def test_mxdataiter_wraps_a_handle_and_reads_its_first_batch(tmp_path):
    data = _csv(tmp_path, "d.csv", "1,2,3\n2,3,4\n3,4,5\n4,5,6\n5,6,7\n6,7,8\n")
    it = mx.io.MXDataIter(mx.io.CSVIter(data_csv=data, data_shape=(3,), batch_size=2),
                          data_name="x", label_name="y")
    assert it.batch_size == 2
    assert it.provide_data == [mx.io.DataDesc("x", (2, 3))]
    assert it.provide_label == [mx.io.DataDesc("y", (2,))]
    assert it.first_batch is not None
    epoch = [b.data[0].asnumpy()[:, 0].tolist() for b in it]
    assert epoch == [[1, 2], [3, 4], [5, 6]]
    it.reset()
    assert it.first_batch is None
    assert it.iter_next() and it.getdata().asnumpy()[:, 0].tolist() == [1, 2]
    assert it.getpad() == 0 and it.getlabel().shape == (2,)


def test_mxdataiter_rejects_what_is_not_an_iterator():
    with pytest.raises(TypeError, match="MXDataIter: handle must be an iterator with iter_next"):
        mx.io.MXDataIter(object())
    with pytest.raises(MXNetError, match="yields no batch"):
        mx.io.MXDataIter(mx.io.ResizeIter(mx.io.NDArrayIter(np.zeros((2, 1)), batch_size=2), 0))
