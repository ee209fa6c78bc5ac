"""The CPU workers (mx.engine.parallel): kernels split over threads give the serial
results bit for bit, the pool behaves (order, errors, nesting, fork), and the thread
count follows the environment."""
import os
import subprocess
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite import _blas, engine
from mxlite.operator.nn import _fast_pool

from conftest import needs_numba


@pytest.fixture
def split_everything(monkeypatch):
    """Split every pass, however small, over 3 threads (uneven parts); 1 thread after."""
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(engine, "PARALLEL_MIN_KERNEL_BYTES", 0)
    monkeypatch.setattr(_fast_pool, "MIN_SPLIT_BYTES", 0)
    prev = engine.set_num_threads(3)
    yield
    engine.set_num_threads(prev)


def _run(fn, threads):
    prev = engine.set_num_threads(threads)
    try:
        return [np.asarray(a) for a in fn()]
    finally:
        engine.set_num_threads(prev)


def _same_bits(fn):
    serial, split = _run(fn, 1), _run(fn, 3)
    assert len(serial) == len(split)
    for a, b in zip(serial, split):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def _grads(op, shapes, dtype="float32", seed=0, **kw):
    """Forward outputs and the gradients of every input of ``op`` for a random head."""
    def run():
        rng = np.random.RandomState(seed)
        xs = [mx.nd.array(rng.randn(*s), dtype=dtype) for s in shapes]
        for x in xs:
            x.attach_grad()
        with mx.autograd.record():
            y = op(*xs, **kw)
        ys = y if isinstance(y, (list, tuple)) else [y]
        head = mx.nd.array(np.random.RandomState(seed + 1).randn(*ys[0].shape), dtype=dtype)
        ys[0].backward(head)
        return [v.asnumpy() for v in ys] + [x.grad.asnumpy() for x in xs]
    return run


CONVS = [
    # data, weight, params: per-sample columns (28x28 out), the block layout (small
    # map, groups), strided, dilated, 1-D and 3-D
    ((3, 4, 30, 30), (5, 4, 3, 3), dict(kernel=(3, 3), num_filter=5, no_bias=True)),
    ((5, 6, 7, 7), (6, 3, 3, 3), dict(kernel=(3, 3), num_filter=6, num_group=2, pad=(1, 1))),
    ((4, 3, 12, 12), (8, 3, 3, 3), dict(kernel=(3, 3), num_filter=8, stride=(2, 2),
                                        pad=(1, 1), dilate=(2, 2), no_bias=True)),
    ((3, 2, 40), (4, 2, 5), dict(kernel=(5,), num_filter=4, pad=(2,), no_bias=True)),
    ((2, 2, 5, 6, 7), (3, 2, 2, 3, 2), dict(kernel=(2, 3, 2), num_filter=3, no_bias=True)),
    # 1x1: strided (a downsampling shortcut), small maps (one product over the batch)
    ((4, 6, 9, 9), (5, 6, 1, 1), dict(kernel=(1, 1), num_filter=5, stride=(2, 2))),
    ((3, 6, 8, 8), (5, 6, 1, 1), dict(kernel=(1, 1), num_filter=5, no_bias=True)),
]


@pytest.mark.parametrize("dshape,wshape,kw", CONVS)
def test_convolution_split_is_bit_identical(split_everything, dshape, wshape, kw):
    shapes = [dshape, wshape] + ([] if kw.get("no_bias") else [(kw["num_filter"],)])
    _same_bits(_grads(mx.nd.Convolution, shapes, **kw))


@pytest.mark.parametrize("kernel,stride", [((3, 3), (2, 2)), ((1, 1), (2, 2))])
def test_deconvolution_split_is_bit_identical(split_everything, kernel, stride):
    kw = dict(kernel=kernel, num_filter=4, stride=stride, adj=(1, 1))
    _same_bits(_grads(mx.nd.Deconvolution, [(3, 5, 6, 6), (5, 4) + kernel], **kw))


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("axis,shape", [(1, (4, 7, 5, 6)), (-1, (3, 5, 8)), (1, (2, 9))])
@pytest.mark.parametrize("fix_gamma", [True, False])
def test_batchnorm_split_is_bit_identical(split_everything, dtype, axis, shape, fix_gamma):
    c = shape[axis]

    def run(training):
        def go():
            rng = np.random.RandomState(0)
            x = mx.nd.array(rng.randn(*shape) * 3 + 1, dtype=dtype)
            gamma, beta = (mx.nd.array(rng.rand(c) + 0.5, dtype=dtype) for _ in range(2))
            mm, mv = mx.nd.zeros(c, dtype=dtype), mx.nd.ones(c, dtype=dtype)
            for a in (x, gamma, beta):
                a.attach_grad()
            with mx.autograd.record(train_mode=training):
                y, mean, inv = mx.nd.BatchNorm(x, gamma, beta, mm, mv, axis=axis,
                                               fix_gamma=fix_gamma, output_mean_var=True)
            heads = [mx.nd.array(rng.randn(*a.shape), dtype=dtype) for a in (y, mean, inv)]
            mx.autograd.backward([y, mean, inv], heads, train_mode=training)
            return [y, mean, inv, mm, mv, x.grad, gamma.grad, beta.grad]
        return go
    _same_bits(run(True))
    _same_bits(run(False))


@pytest.mark.parametrize("kw", [
    dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max"),     # phase planes
    dict(kernel=(2, 2), stride=(2, 2), pool_type="max"),                 # tiling windows
    dict(kernel=(3, 3), stride=(1, 1), pool_type="max"),
    dict(kernel=(3, 3), stride=(2, 2), pool_type="avg", pad=(1, 1)),
])
def test_pooling_split_is_bit_identical(split_everything, kw):
    _same_bits(_grads(mx.nd.Pooling, [(3, 4, 11, 12)], **kw))


def test_max_pooling_ties_and_nan_split_is_bit_identical(split_everything):
    def run():
        x = mx.nd.array(np.round(np.random.RandomState(0).randn(3, 4, 9, 9)))
        x[0, 1, 2, 3] = np.nan
        x.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pool_type="max")
        y.backward(mx.nd.ones_like(y))
        return [y, x.grad]
    _same_bits(run)


@needs_numba
@pytest.mark.parametrize("index", [False, True])
def test_max_pooling_of_one_sample_runs_its_channels_as_claimed_units(split_everything,
                                                                      monkeypatch, index):
    # ResNet's 3x3 stride-2 pooling at batch 1: the sample's channels cut into units
    # that the threads claim inside one compiled call; the values and places of one thread
    from mxlite.operator.nn import _fast_direct
    units = []
    parallel_units = engine.parallel_units
    monkeypatch.setattr(engine, "parallel_units", lambda kernel, cuts, *a: units.append(
        (kernel, cuts(True).shape[0])) or parallel_units(kernel, cuts, *a))
    x = np.random.RandomState(0).randn(1, 5, 13, 11).astype(np.float32)
    x[0, 2, 3, 4] = np.nan

    def run():
        got = _fast_pool.max_pool2d(x, (3, 3), (2, 2), (1, 1), (7, 6), index=index)
        return got if index else [got]
    _same_bits(run)
    assert units == [(_fast_direct._units.pool33, 5)]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "bool"])
def test_relu_split_is_bit_identical(split_everything, dtype):
    def run():
        x = mx.nd.array(np.random.RandomState(0).randn(5, 3, 4), dtype=dtype)
        if dtype[0] == "f":
            x.attach_grad()
            with mx.autograd.record():
                y = mx.nd.Activation(x, act_type="relu")
            y.backward(mx.nd.array(np.random.RandomState(1).randn(5, 3, 4), dtype=dtype))
            return [y, x.grad, mx.nd.relu(x[0, 0, 0])]
        return [mx.nd.Activation(x, act_type="relu")]
    _same_bits(run)


def _resnet_block_step():
    """A ResNet basic block (conv, BN, relu, pooling), hybridized, one SGD step."""
    mx.random.seed(3)
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(8, 3, padding=1, use_bias=False), mx.gluon.nn.BatchNorm(),
            mx.gluon.nn.Activation("relu"), mx.gluon.nn.MaxPool2D(3, 2, 1),
            mx.gluon.nn.Conv2D(4, 3, strides=2), mx.gluon.nn.GlobalAvgPool2D(),
            mx.gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = mx.nd.array(np.random.RandomState(0).randn(4, 3, 16, 16))
    with mx.autograd.record():
        loss = mx.gluon.loss.SoftmaxCrossEntropyLoss()(net(x), mx.nd.array([0, 1, 2, 0]))
    loss.backward()
    trainer.step(4)
    return [loss] + [p.data() for p in net.collect_params().values()]


def test_resnet_block_training_split_is_bit_identical(split_everything):
    _same_bits(_resnet_block_step)


# -- the pool ---------------------------------------------------------------------------

def test_parallel_covers_the_range_in_order(split_everything):
    parts = engine.parallel(lambda lo, hi: (lo, hi), 40, 1)
    assert len(parts) == 3 * engine.PARTS_PER_THREAD
    assert parts[0][0] == 0 and parts[-1][1] == 40
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(parts, parts[1:]))
    assert engine.parallel(lambda lo, hi: (lo, hi), 2, 1) == [(0, 1), (1, 2)]


def test_fixed_parts_do_not_depend_on_the_threads(split_everything):
    split = engine.parallel(lambda lo, hi: (lo, hi), 20, 1, fixed=True)
    assert len(split) == engine.FIXED_PARTS
    engine.set_num_threads(1)
    assert engine.parallel(lambda lo, hi: (lo, hi), 20, 1, fixed=True) == split


def test_parallel_runs_small_passes_and_one_thread_in_the_caller(monkeypatch):
    prev = engine.set_num_threads(2)
    try:
        assert engine.parallel(lambda lo, hi: (lo, hi), 8, 10) == [(0, 8)]
        engine.set_num_threads(1)
        assert engine.parallel(lambda lo, hi: (lo, hi), 8, 1 << 40) == [(0, 8)]
        assert engine._pool is None
    finally:
        engine.set_num_threads(prev)


def test_parallel_splits_a_pass_from_its_own_min_bytes():
    prev = engine.set_num_threads(2)
    try:
        small = engine.PARALLEL_MIN_BYTES // 4
        assert engine.parallel(lambda lo, hi: (lo, hi), 8, small) == [(0, 8)]
        parts = engine.parallel(lambda lo, hi: (lo, hi), 8, small, min_bytes=small)
        assert len(parts) == 2 * engine.PARTS_PER_THREAD and parts[-1] == (7, 8)
        assert engine.parallel(lambda lo, hi: (lo, hi), 8, small - 1, min_bytes=small) == [(0, 8)]
    finally:
        engine.set_num_threads(prev)


def test_parallel_parts_split_from_their_own_min_bytes():
    prev = engine.set_num_threads(2)
    try:
        small = engine.PARALLEL_MIN_BYTES // 4
        assert engine.parallel_parts(lambda at: at, (4, 6), small) == [(Ellipsis,)]
        parts = engine.parallel_parts(lambda at: at, (4, 6), small, min_bytes=small)
        assert parts == [(slice(i, i + 1),) for i in range(4)]
    finally:
        engine.set_num_threads(prev)


def test_parallel_raises_a_part_error_after_every_part_ends(split_everything):
    done = []

    def fn(lo, hi):
        if lo == 3:
            raise ValueError("part at %d" % lo)
        done.append(lo)
        return lo
    with pytest.raises(ValueError, match="part at 3"):
        engine.parallel(fn, 9, 1)
    assert sorted(done) == [0, 1, 2, 4, 5, 6, 7, 8]
    assert engine.parallel(lambda lo, hi: hi - lo, 9, 1) == [1] * 9      # still works


def test_parallel_stages_run_in_order_each_over_its_parts(split_everything, monkeypatch):
    """Each stage's parts see every write of the stage before (one hand-off for them all),
    however the threads take them; below PARALLEL_MIN_MACS each stage runs whole."""
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 10)
    a, b, c = np.zeros(40), np.zeros(40), np.zeros(40)
    calls = []

    def first(lo, hi):
        calls.append((0, lo, hi))
        a[lo:hi] = np.arange(lo, hi)

    def second(lo, hi):     # reads all of the first stage's output
        calls.append((1, lo, hi))
        b[lo:hi] = a.sum() + a[::-1][lo:hi]

    def third(lo, hi):
        calls.append((2, lo, hi))
        c[lo:hi] = b[::-1][lo:hi] * 2
    for macs, parts in ((10, (5, 3, 7)), (9, (1, 1, 1))):
        a[:], b[:], c[:], calls[:] = 0, 0, 0, []
        assert engine.parallel_stages([(first, 40, 5), (second, 40, 3), (third, 40, 7)],
                                      macs) is None
        want_b = 780 + np.arange(40)[::-1]
        np.testing.assert_array_equal(c, want_b[::-1] * 2)
        for s, m in enumerate(parts):
            assert sorted(x[1:] for x in calls if x[0] == s) == \
                [(40 * i // m, 40 * (i + 1) // m) for i in range(m)]


def test_parallel_stages_raise_a_part_error_and_skip_the_stages_after(split_everything,
                                                                      monkeypatch):
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 0)
    done = []

    def first(lo, hi):
        if lo == 2:
            raise ValueError("part at %d" % lo)
        done.append(lo)
    with pytest.raises(ValueError, match="part at 2"):
        engine.parallel_stages([(first, 6, 6), (lambda lo, hi: done.append("after"), 6, 2)], 1)
    assert sorted(done) == [0, 1, 3, 4, 5]           # every part of the failed stage ended


def test_parallel_inside_a_part_does_not_wait_on_itself(split_everything):
    inner = engine.parallel(lambda lo, hi: engine.parallel(lambda a, b: (a, b), 6, 1), 6, 1)
    assert len(inner) == 6
    for parts in inner:     # split where the caller ran it, whole in a worker
        assert parts[0][0] == 0 and parts[-1][1] == 6 and len(parts) in (1, 6)


def test_set_num_threads_checks_its_argument():
    with pytest.raises(ValueError, match="at least 1, got 0"):
        engine.set_num_threads(0)
    assert engine.num_threads() >= 1


@pytest.mark.parametrize("env,want", [
    ({"MXLITE_NUM_THREADS": "3", "OMP_NUM_THREADS": "1"}, 3),
    ({"OMP_NUM_THREADS": "1", "MXNET_CPU_WORKER_NTHREADS": "4"}, 1),
    ({"MXNET_CPU_WORKER_NTHREADS": "4"}, 4),
    ({"OPENBLAS_NUM_THREADS": "5"}, 5),
    ({"OMP_NUM_THREADS": "2,1", "OPENBLAS_NUM_THREADS": "5"}, 2),
])
def test_thread_count_follows_the_environment(env, want):
    keys = ("MXLITE_NUM_THREADS", "OMP_NUM_THREADS", "MXNET_CPU_WORKER_NTHREADS",
            "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
    full = {k: v for k, v in os.environ.items() if k not in keys}
    full.update(env)
    full["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(mx.__file__))]
                                         + [full.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", "import mxlite; print(mxlite.engine.num_threads())"],
                         env=full, capture_output=True, text=True, check=True)
    assert int(out.stdout) == want


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_fork_after_a_split_pass_is_safe(split_everything):
    x = mx.nd.array(np.random.RandomState(0).randn(4, 3, 8, 8))
    want = mx.nd.relu(x).asnumpy()
    assert engine._pool is not None
    pid = os.fork()
    if pid == 0:        # the child: a fresh pool, the same numbers
        ok = np.array_equal(mx.nd.relu(x).asnumpy(), want) and engine._pool is not None
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    np.testing.assert_array_equal(mx.nd.relu(x).asnumpy(), want)


# -- products as one owner of the cores ---------------------------------------------------

@pytest.fixture
def split_products(split_everything, monkeypatch):
    """Split every product too, however small, over 3 threads."""
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 0)
    monkeypatch.setattr(_blas, "SERIAL_MACS", 0)


def _operands(sa, sb, dtype=np.float32, seed=0):
    rng = np.random.RandomState(seed)
    return rng.randn(*sa).astype(dtype), rng.randn(*sb).astype(dtype)


@pytest.mark.parametrize("sa,sb", [
    ((16, 5, 7), (16, 7, 6)),       # Winograd's 16 planes
    ((5, 7), (6, 7, 9)),            # one weight, per-sample columns
    ((6, 2, 5, 7), (2, 7, 4)),      # (N, G) batch, the weight broadcast over N
])
def test_matmul_split_by_batch_is_the_serial_product(split_products, sa, sb):
    a, b = _operands(sa, sb)
    got = engine.matmul(np, a, b)
    np.testing.assert_array_equal(got, np.matmul(a, b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sa,sb", [
    ((4, 33), (33, 50)),            # columns
    ((50, 33), (33, 4)),            # rows
    ((2, 9, 20), (2, 20, 31)),      # a batch too short for 3 threads: rows
    ((2, 5, 20), (2, 20, 31)),      # ... with many more columns than rows: columns
    ((1, 9, 20), (1, 20, 31)),      # one sample (batch 1 inference)
])
def test_matmul_split_by_rows_or_columns_is_close_and_deterministic(split_products, dtype,
                                                                    sa, sb):
    a, b = _operands(sa, sb, dtype)
    got = engine.matmul(np, a, b)
    assert got.dtype == dtype and got.shape == np.matmul(a, b).shape
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, np.matmul(a.astype(np.float64), b), rtol=tol, atol=tol)
    np.testing.assert_array_equal(engine.matmul(np, a, b), got)     # the same bits again


def test_matmul_cuts_by_columns_only_where_there_are_many_more_than_rows(split_products,
                                                                         monkeypatch):
    real, parts = np.matmul, []

    def spy(a, b, **kw):
        parts.append((a.shape, b.shape))
        return real(a, b, **kw)
    monkeypatch.setattr(np, "matmul", spy)
    for n, by_columns in ((8 * _blas.COLUMNS_PER_ROW - 1, False),
                          (8 * _blas.COLUMNS_PER_ROW, True)):
        a, b = _operands((8, 5), (5, n))
        del parts[:]
        np.testing.assert_allclose(engine.matmul(np, a, b), real(a, b), rtol=1e-5, atol=1e-5)
        assert len(parts) == 3
        if by_columns:
            assert all(sa == (8, 5) and sb[1] < n for sa, sb in parts)
        else:
            assert all(sa[0] < 8 and sb == (5, n) for sa, sb in parts)


def test_matmul_writes_out_and_takes_transposed_operands(split_products):
    a, b = _operands((16, 6, 40), (16, 5, 40))
    buf = np.full((16, 6 * 5 + 3), np.nan, dtype=np.float32)
    out = buf[:, :30].reshape(16, 6, 5)            # planes apart, as Winograd's are
    got = engine.matmul(np, a, b.transpose(0, 2, 1), out=out)
    assert got is out
    np.testing.assert_array_equal(out, np.matmul(a, b.transpose(0, 2, 1)))
    assert np.isnan(buf[:, 30:]).all()
    c = engine.matmul(np, b[0], a[0].T)                                 # (5, 40) @ (40, 6)
    np.testing.assert_allclose(c, np.matmul(b[0].astype(np.float64), a[0].T), rtol=1e-5,
                               atol=1e-5)


def test_matmul_in_one_thread_or_small_is_numpys(monkeypatch):
    a, b = _operands((3, 8, 9), (3, 9, 10))
    prev = engine.set_num_threads(1)
    try:
        np.testing.assert_array_equal(engine.matmul(np, a, b), np.matmul(a, b))
        assert engine._pool is None                 # nothing started
        engine.set_num_threads(3)                   # under PARALLEL_MIN_MACS: one product
        np.testing.assert_array_equal(engine.matmul(np, a, b), np.matmul(a, b))
    finally:
        engine.set_num_threads(prev)


@pytest.mark.parametrize("sa,sb", [((16, 5, 7), (16, 6, 7)), ((4, 5, 7), (3, 7, 6))])
def test_matmul_of_mismatched_operands_raises_numpys_error(split_products, sa, sb):
    a, b = _operands(sa, sb)
    with pytest.raises(ValueError) as want:
        np.matmul(a, b)
    with pytest.raises(ValueError) as got:
        engine.matmul(np, a, b)
    assert str(got.value) == str(want.value)


blas = pytest.mark.skipif(engine.blas_threads() is None,
                          reason="NumPy's BLAS here is not an OpenBLAS that ctypes reaches")


@blas
def test_set_blas_threads_round_trips_and_checks():
    prev = engine.set_blas_threads(2)
    try:
        assert engine.blas_threads() == 2
        assert engine.set_blas_threads(1) == 2 and engine.blas_threads() == 1
        with pytest.raises(ValueError, match="at least 1, got 0"):
            engine.set_blas_threads(0)
        assert engine.blas_threads() == 1
    finally:
        engine.set_blas_threads(prev)


@blas
def test_products_run_the_blas_at_one_thread_and_restore_it(split_products, monkeypatch):
    seen = []
    real = np.matmul

    def spy(*args, **kw):
        seen.append(engine.blas_threads())
        return real(*args, **kw)
    prev = engine.set_blas_threads(2)
    try:
        monkeypatch.setattr(np, "matmul", spy)
        engine.matmul(np, *_operands((16, 5, 7), (16, 7, 6)))
        monkeypatch.setattr(np, "matmul", real)
        assert seen and set(seen) == {1}
        assert engine.blas_threads() == 2           # a user's np.dot keeps its threads
        monkeypatch.setattr(_blas, "SERIAL_MACS", 16 * 5 * 7 * 6 + 1)
        seen.clear()
        monkeypatch.setattr(np, "matmul", spy)
        engine.matmul(np, *_operands((16, 5, 7), (16, 7, 6)))   # one thread in OpenBLAS
        monkeypatch.setattr(np, "matmul", real)                  # anyway: left alone
        assert seen == [2]
        with engine._serial_blas:                   # nested users restore it once
            with engine._serial_blas:
                assert engine.blas_threads() == 1
            assert engine.blas_threads() == 1
        assert engine.blas_threads() == 2
    finally:
        engine.set_blas_threads(prev)


def _close_and_deterministic(fn):
    """Split products (by rows or columns) round differently from one product: the
    results at 3 threads are the serial ones within float32 round-off, and the same
    bits every time."""
    serial, split, again = _run(fn, 1), _run(fn, 3), _run(fn, 3)
    for a, b, c in zip(serial, split, again):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(c.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("dshape,wshape,kw", CONVS)
def test_convolution_with_split_products(split_products, dshape, wshape, kw):
    shapes = [dshape, wshape] + ([] if kw.get("no_bias") else [(kw["num_filter"],)])
    _close_and_deterministic(_grads(mx.nd.Convolution, shapes, **kw))


def test_resnet_block_training_with_split_products(split_products):
    _close_and_deterministic(_resnet_block_step)


def test_products_are_cut_into_their_own_parts_per_thread(split_products, monkeypatch):
    for per in (1, 4):
        monkeypatch.setattr(engine, "PRODUCT_PARTS_PER_THREAD", per)
        parts = engine.parallel_products(lambda lo, hi: (lo, hi), 40, 1)
        assert len(parts) == 3 * per
        assert parts[0][0] == 0 and parts[-1][1] == 40
        assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(parts, parts[1:]))
    assert engine.parallel_products(lambda lo, hi: (lo, hi), 2, 1) == [(0, 1), (1, 2)]


def test_resnet_block_training_with_more_product_parts(split_products, monkeypatch):
    monkeypatch.setattr(engine, "PRODUCT_PARTS_PER_THREAD", 4)     # parts claimed in turn
    _close_and_deterministic(_resnet_block_step)


def test_dense_with_split_products(split_products):
    _close_and_deterministic(_grads(mx.nd.FullyConnected, [(6, 40), (30, 40), (30,)],
                                    num_hidden=30))


def test_overlap_runs_both_and_waits_for_the_second(split_everything):
    import threading
    import time
    where = {}

    def second():
        time.sleep(0.02)
        where["second"] = threading.current_thread().name
        return "b"
    assert engine.overlap(lambda: "a", second) == ("a", "b")
    assert "second" in where                        # ended before overlap returned
    engine.set_num_threads(1)
    assert engine.overlap(lambda: 1, lambda: threading.current_thread().name) == (
        1, threading.current_thread().name)


def test_overlap_raises_either_error_after_both_end(split_everything):
    ended = []

    def slow_ok():
        ended.append(1)
        return 2

    def bad():
        raise KeyError("second")
    with pytest.raises(KeyError, match="second"):
        engine.overlap(lambda: 1, bad)
    with pytest.raises(ZeroDivisionError):
        engine.overlap(lambda: 1 / 0, slow_ok)
    assert ended == [1]


DECONVS = [
    ((3, 5, 6, 6), (5, 4, 3, 3), dict(kernel=(3, 3), num_filter=4, stride=(2, 2), adj=(1, 1))),
    ((2, 4, 7, 7), (4, 3, 3, 3), dict(kernel=(3, 3), num_filter=6, num_group=2, pad=(1, 1))),
]


@pytest.mark.parametrize("op,dshape,wshape,kw",
                         [("Convolution",) + c for c in CONVS[:3]]
                         + [("Deconvolution",) + c for c in DECONVS])
def test_convolution_gradients_side_by_side_are_the_ops(split_everything, monkeypatch,
                                                         op, dshape, wshape, kw):
    """The data and weight gradients that an unrecorded backward runs side by side
    (raw arrays) are those of the gradient ops (NDArrays), bit for bit."""
    from mxlite import autograd
    no_bias = kw.get("no_bias", op == "Deconvolution")
    shapes = [dshape, wshape] + ([] if no_bias else [(kw["num_filter"],)])
    fn = _grads(getattr(mx.nd, op), shapes, **kw)
    side_by_side = _run(fn, 3)
    monkeypatch.setattr(autograd, "RAW_RULES", False)
    for a, b in zip(side_by_side, _run(fn, 3)):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


# -- a worker polling for its next job (numba, without the GIL) --------------------------

@needs_numba
def test_spin_wait_returns_once_the_count_reaches_least():
    from mxlite import _spin
    wait = _spin.waiter()
    count = np.zeros(1, dtype=np.int64)
    assert wait.poll(count, 0, 10, 0) == 0              # already there: no poll
    assert wait.poll(count, 1, 100, 0) == 100           # never there: its bound
    count[0] = 3
    assert wait.poll(count, 2, 100, 5) == 0
    assert wait.rate > 0


@needs_numba
def test_spin_wait_sees_another_thread_bump_the_count():
    # the load stays in the loop: hoisted out of it, the poll would run to its bound
    # (about a minute here) instead of returning once the other thread bumped the count
    import threading
    import time
    from mxlite import _spin
    wait = _spin.waiter()
    count = np.zeros(1, dtype=np.int64)
    bound = int(wait.rate * 60)

    def bump():
        time.sleep(0.02)
        count[0] += 1
    t = threading.Thread(target=bump)
    start = time.perf_counter()
    t.start()
    polls = wait.poll(count, 1, bound, 0)       # without the GIL: bump runs meanwhile
    t.join()
    assert polls < bound and time.perf_counter() - start < 10


@needs_numba
def test_workers_poll_between_jobs_and_give_the_same_results(split_everything, monkeypatch):
    monkeypatch.setattr(engine, "SPIN", True)
    monkeypatch.setattr(engine, "_Busy", lambda: (lambda: False))     # the host never busy
    engine.set_num_threads(3)                   # a pool made with the patches
    assert engine._get_pool().wait is not None
    for n in (2, 7, 40):
        assert engine.parallel(lambda lo, hi: (lo, hi), n, 1) == \
            [(n * i // min(n, 12), n * (i + 1) // min(n, 12)) for i in range(min(n, 12))]
    _same_bits(_resnet_block_step)


def test_busy_is_a_share_of_the_time_waited_for_a_core(monkeypatch):
    clock, delays = iter([0.0, 1.0, 1.01, 2.0]), iter([0.0, 0.001, 0.5])
    monkeypatch.setattr(engine.time, "perf_counter", lambda: next(clock))
    monkeypatch.setattr(engine, "_run_delay", lambda: next(delays))
    busy = engine._Busy()
    assert busy() is False          # 1 ms waited in 1 s: not busy
    assert busy() is False          # within the window: not looked up again
    assert busy() is True           # 499 ms waited in 1 s: busy


def test_workers_block_without_numba():
    code = ("import mxlite.engine as e; e.set_num_threads(2); e.PARALLEL_MIN_BYTES = 0; "
            "print(e.parallel(lambda lo, hi: hi - lo, 8, 1), e._get_pool().wait)")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, MXLITE_NUMBA="0",
               PYTHONPATH=os.pathsep.join([root] + [os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split("]")
    assert out[0] == "[1, 1, 1, 1, 1, 1, 1, 1" and out[1].strip() == "None"
