"""The optional numba kernel for 1x1 and small 3x3 convolutions (``_fast_direct``): where
it runs (a kept weight's inference in float32), its float32 round-off next to a float64
product, its epilogue as the product then BatchNorm's pass, the same bits at any
threads and from any split, and the packed weights dropped when the weight changes."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import engine
from mxlite.gluon import nn
from mxlite.operator.nn import _fast, _fast_bn, _fast_direct, _fast_pool

from conftest import NUMBA_MISSING, needs_numba


@pytest.fixture(autouse=True)
def _any_cpu(monkeypatch):
    """The kernel runs (slower, as correctly) on a CPU without AVX-512 too: test it there."""
    if not NUMBA_MISSING:
        from mxlite.operator.nn import _fast_tile
        monkeypatch.setattr(_fast_tile, "AVAILABLE", True)


def _kept_call(x, w, stride=(1, 1), epilogue=None, kept=None, version=None):
    """``_fast.pointwise`` with ``w`` kept by ``kept`` at ``version``: (the first call's
    result, the second's)."""
    kept = kept or _fast.KeptFilters()
    version = version or [0]
    with _fast.keeping(w, version, kept):
        return (_fast_direct.pointwise(x, w, stride, epilogue),
                _fast_direct.pointwise(x, w, stride, epilogue))


def _kept_3x3(x, w, pad, epilogue=None):
    """``_fast_direct.conv3x3`` with ``w`` kept: the second call's result."""
    out = tuple(m + 2 * p - 2 for m, p in zip(x.shape[2:], pad))
    with _fast.keeping(w, [0], _fast.KeptFilters()):
        assert _fast_direct.conv3x3(x, w, pad, out, epilogue) is None      # seen once
        return _fast_direct.conv3x3(x, w, pad, out, epilogue)


def _reference_3x3(x, w, pad):
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad[0],) * 2, (pad[1],) * 2))
    oh, ow = xp.shape[2] - 2, xp.shape[3] - 2
    taps = [(xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j].astype(np.float64))
            for i in range(3) for j in range(3)]
    y = sum(np.einsum("fc,nchw->nfhw", wt, xt) for xt, wt in taps)
    bound = sum(np.einsum("fc,nchw->nfhw", np.abs(wt), np.abs(xt)) for xt, wt in taps)
    return y, bound


def _reference(x, w, stride):
    xs = x[(slice(None),) * 2 + tuple(slice(None, None, s) for s in stride)].astype(np.float64)
    w2 = w.reshape(w.shape[0], -1).astype(np.float64)
    y = np.einsum("fc,nc...->nf...", w2, xs)
    bound = np.einsum("fc,nc...->nf...", np.abs(w2), np.abs(xs))
    return y, bound


@needs_numba
@pytest.mark.parametrize("n,c,f,size,stride", [
    (1, 64, 64, (7, 7), (1, 1)),        # 49 positions: a 3-vector and a 1-lane tile
    (1, 300, 24, (14, 14), (1, 1)),     # input channels not a multiple of the blocks
    (2, 8, 16, (5, 9), (1, 1)),         # samples; 45 positions
    (2, 130, 8, (13, 11), (2, 2)),      # strided
    (1, 16, 32, (1, 1), (1, 1)),        # one position
    (1, 32, 8, (4, 12), (1, 1)),        # 48 positions: one whole tile
    (1, 24, 16, (40,), (3,)),           # 1-D
])
def test_1x1_kernel_is_float32_round_off_of_the_float64_product(n, c, f, size, stride):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((n, c) + size).astype(np.float32)
    w = rng.standard_normal((f, c) + (1,) * len(size)).astype(np.float32)
    first, y = _kept_call(x, w, stride)
    assert first is None        # seen once: not packed yet
    want, bound = _reference(x, w, stride)
    assert y.shape == want.shape and y.dtype == np.float32
    # one fma per term, in order: within c * eps of the sum of the terms' magnitudes
    assert np.all(np.abs(y - want) <= c * np.finfo(np.float32).eps * bound + 1e-30)


@needs_numba
@pytest.mark.parametrize("residual,relu", [(False, False), (False, True), (True, True)])
def test_1x1_kernel_epilogue_is_the_product_then_batch_norms_pass(residual, relu):
    rng = np.random.default_rng(2)
    n, c, f, size = 2, 40, 24, (9, 10)
    x = rng.standard_normal((n, c) + size).astype(np.float32)
    w = rng.standard_normal((f, c, 1, 1)).astype(np.float32)
    mean, scale, shift = (rng.standard_normal(f).astype(np.float32) for _ in range(3))
    r = rng.standard_normal((n, f) + size).astype(np.float32) if residual else None
    kept = _fast.KeptFilters()
    want = _kept_call(x, w, kept=kept)[1].reshape(n, f, -1)
    _fast_bn.batch_norm_apply(want, 0, mean, scale, shift, want,
                              None if r is None else r.reshape(n, f, -1), relu)
    got = _kept_call(x, w, epilogue=(mean, scale, shift, r, relu), kept=kept)[1]
    assert np.array_equal(got.reshape(n, f, -1), want)


@needs_numba
@pytest.mark.parametrize("shape,f", [((1, 48, 7, 7), 256),     # by filters
                                     ((1, 48, 20, 20), 16),    # by positions
                                     ((4, 48, 6, 6), 32)])     # by samples
def test_1x1_kernel_gives_the_same_bits_at_any_threads(shape, f, monkeypatch):
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 0)
    monkeypatch.setattr(_fast_direct, "MAX_SAMPLES", shape[0])
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((f, shape[1], 1, 1)).astype(np.float32)
    epi = tuple(rng.standard_normal(f).astype(np.float32) for _ in range(3)) + (None, True)
    kept = _fast.KeptFilters()
    got = []
    for threads in (1, 2, 3):
        prev = engine.set_num_threads(threads)
        try:
            got.append(_kept_call(x, w, epilogue=epi, kept=kept)[1])
        finally:
            engine.set_num_threads(prev)
    assert all(np.array_equal(g, got[0]) for g in got[1:])


@needs_numba
@pytest.mark.parametrize("case", ["float64", "filters", "not kept", "epilogue", "samples"])
def test_1x1_kernel_leaves_other_calls_to_numpy(case):
    rng = np.random.default_rng(4)
    dtype = np.float64 if case == "float64" else np.float32
    f = 12 if case == "filters" else 16
    x = rng.standard_normal((_fast_direct.MAX_SAMPLES + (case == "samples"), 8, 5, 5)).astype(dtype)
    w = rng.standard_normal((f, 8, 1, 1)).astype(dtype)
    if case == "not kept":
        assert _fast_direct.pointwise(x, w, (1, 1)) is None
        return
    epi = None
    if case == "epilogue":      # a vector of another length
        epi = (np.zeros(f - 1, dtype), np.ones(f, dtype), np.zeros(f, dtype), None, False)
    assert _kept_call(x, w, epilogue=epi) == (None, None)


def test_1x1_kernel_does_not_run_without_numba(monkeypatch):
    monkeypatch.setattr(_fast, "kernels", lambda: None)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 8, 5, 5)).astype(np.float32)
    w = rng.standard_normal((16, 8, 1, 1)).astype(np.float32)
    assert _kept_call(x, w) == (None, None)


def _pointwise_net():
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, 1, in_channels=8, use_bias=False), nn.BatchNorm(in_channels=16),
            nn.Activation("relu"), nn.Conv2D(24, 1, strides=2, in_channels=16))
    return net


def test_a_graph_repacks_1x1_weights_when_they_change(fast_kernels, monkeypatch):
    """A hybridized graph's 1x1 convolutions (alone and before BatchNorm) keep their
    packed weights across inference calls: the imperative results to float32 round-off,
    and the new weights' after ``set_data``."""
    packed = []
    if fast_kernels == "numba":
        pack = _fast_direct.pack
        monkeypatch.setattr(_fast_direct, "pack", lambda w: packed.append(w.shape) or pack(w))
    net = _pointwise_net()
    net.initialize(mx.init.Xavier())
    for p in net.collect_params().values():
        if p.name.endswith(("gamma", "running_var")):
            p.set_data(mx.nd.random.uniform(0.5, 1.5, shape=p.shape))
    x = mx.nd.random.normal(shape=(1, 8, 10, 10))
    want = net(x).asnumpy()
    net.hybridize()
    del packed[:]
    names = []
    for _ in range(3):
        got = net(x).asnumpy()
        names.append([s[0].name for s in net._cached_graph[0][1].steps])
        assert np.allclose(got, want, rtol=1e-5, atol=1e-6)
    assert names[0] == ["_conv_batch_norm", "_conv_kept_filters"]
    w = net[3].weight
    w.set_data(w.data() * 2)
    for _ in range(2):
        assert np.allclose(net(x).asnumpy(), 2 * want, rtol=1e-5, atol=1e-6)
    # the two weights packed once each (from the second call on), then the changed one
    assert packed == ([(16, 8), (24, 16), (24, 16)] if fast_kernels == "numba" else [])


@needs_numba
@pytest.mark.parametrize("n,c,f,size,pad", [
    (1, 64, 64, (7, 7), (1, 1)),        # 61 positions on the padded width
    (2, 130, 24, (5, 9), (1, 1)),       # samples; channels not a multiple of the blocks
    (1, 16, 8, (3, 3), (0, 0)),         # one output position
    (1, 8, 16, (6, 4), (2, 0)),         # other paddings
    (1, 24, 16, (1, 12), (1, 1)),       # one row
])
def test_3x3_kernel_is_float32_round_off_of_the_float64_correlation(n, c, f, size, pad):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((n, c) + size).astype(np.float32)
    w = rng.standard_normal((f, c, 3, 3)).astype(np.float32)
    y = _kept_3x3(x, w, pad)
    want, bound = _reference_3x3(x, w, pad)
    assert y.shape == want.shape and y.dtype == np.float32
    assert np.all(np.abs(y - want) <= 9 * c * np.finfo(np.float32).eps * bound + 1e-30)


@needs_numba
def test_3x3_kernel_epilogue_is_the_correlation_then_batch_norms_pass():
    rng = np.random.default_rng(7)
    n, c, f, size = 2, 20, 16, (6, 7)
    x = rng.standard_normal((n, c) + size).astype(np.float32)
    w = rng.standard_normal((f, c, 3, 3)).astype(np.float32)
    mean, scale, shift = (rng.standard_normal(f).astype(np.float32) for _ in range(3))
    r = rng.standard_normal((n, f) + size).astype(np.float32)
    want = _kept_3x3(x, w, (1, 1)).reshape(n, f, -1)
    _fast_bn.batch_norm_apply(want, 0, mean, scale, shift, want, r.reshape(n, f, -1), True)
    got = _kept_3x3(x, w, (1, 1), (mean, scale, shift, r, True))
    assert np.array_equal(got.reshape(n, f, -1), want)


@needs_numba
@pytest.mark.parametrize("n,f", [(1, 64), (2, 16)])     # by filters, by samples
def test_3x3_kernel_gives_the_same_bits_at_any_threads(n, f, monkeypatch):
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 0)
    rng = np.random.default_rng(8)
    x = rng.standard_normal((n, 24, 7, 7)).astype(np.float32)
    w = rng.standard_normal((f, 24, 3, 3)).astype(np.float32)
    got = []
    for threads in (1, 2, 3):
        prev = engine.set_num_threads(threads)
        try:
            got.append(_kept_3x3(x, w, (1, 1)))
        finally:
            engine.set_num_threads(prev)
    assert all(np.array_equal(g, got[0]) for g in got[1:])


@needs_numba
def test_3x3_kernel_runs_small_maps_of_a_graph_before_winograd(monkeypatch):
    """A hybridized graph's 3x3 convolution on a small map runs the kernel (not Winograd,
    though its size thresholds are lowered to zero) once its weights are packed: the
    imperative results to float32 round-off."""
    made = []
    filters = _fast._filters
    monkeypatch.setattr(_fast, "_filters", lambda jit, w, *scheme: made.append(w.shape) or
                        filters(jit, w, *scheme))
    monkeypatch.setattr(_fast, "MIN_TILES_KEPT", 0)
    packed = []
    pack = _fast_direct.pack
    monkeypatch.setattr(_fast_direct, "pack", lambda w: packed.append(w.shape) or pack(w))
    net = nn.HybridSequential()
    net.add(nn.Conv2D(16, 3, padding=1, in_channels=8), nn.BatchNorm(in_channels=16),
            nn.Activation("relu"))
    net.initialize(mx.init.Xavier())
    x = mx.nd.random.normal(shape=(1, 8, 7, 7))
    want = net(x).asnumpy()
    del made[:], packed[:]      # (the layer's imperative call keeps its own, as a graph does)
    net.hybridize()
    for _ in range(3):
        assert np.allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    # the call that saw the weights first ran Winograd (its filters made, their planes
    # packed and kept), the next one packed the 9 taps' weights in place of them
    assert packed[-9:] == [(16, 8)] * 9 and made == [(16, 8, 3, 3)]
    done = len(packed)
    for _ in range(2):
        assert np.allclose(net(x).asnumpy(), want, rtol=1e-5, atol=1e-6)
    assert len(packed) == done and made == [(16, 8, 3, 3)]      # kept from then on


def _winograd_kept(x, w, calls=2):
    """``_fast.conv3x3`` (an inference) with ``w`` kept, ``calls`` times: the results."""
    out = x.shape[2:]
    kept = _fast.KeptFilters()
    with _fast.keeping(w, [0], kept):
        got = [_fast.conv3x3(x, w, (1, 1), (1, 1), (1, 1), 1, out, inference=True)[0]
               for _ in range(calls)]
    return got, kept.held[3]



def _winograd_paths(monkeypatch, max_3x3, staged):
    """3x3 layers by the direct kernel up to ``max_3x3`` output positions, else by
    Winograd with its filters kept from the first call, staged (its transforms split with
    the products) where ``staged``."""
    monkeypatch.setattr(_fast_direct, "MAX_POSITIONS_3X3", max_3x3)
    monkeypatch.setattr(_fast, "MIN_TILES_KEPT", 0)
    for name in ("STAGED_MIN_BYTES", "STAGED_UNITS_MIN_BYTES"):
        monkeypatch.setattr(_fast, name, 0 if staged else 1 << 40)

@needs_numba
@pytest.mark.parametrize("c,staged", [(32, False), (136, False), (32, True)])   # F(2x4), F(2x2)
def test_winograd_products_by_the_kernel_are_float32_round_off_of_the_blas(c, staged,
                                                                           monkeypatch):
    """Kept Winograd filters of an inference within the kernel's reach are kept as its
    packed planes, and its products run by it from then on: the BLAS's results (the
    first call's) to float32 round-off."""
    _winograd_paths(monkeypatch, 0, staged)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, c, 10, 12)).astype(np.float32)
    w = rng.standard_normal((16, c, 3, 3)).astype(np.float32)
    (blas, direct), held = _winograd_kept(x, w)
    assert held.shape == ((24 if c <= _fast.WIDE_MAX_CHANNELS else 16), 16 * c)
    want, bound = _reference_3x3(x, w, (1, 1))
    assert np.allclose(direct, blas, rtol=1e-4, atol=1e-4 * np.abs(blas).max())
    assert np.all(np.abs(direct - want) <= 1e-4 * bound + 1e-30)


@needs_numba
@pytest.mark.parametrize("staged", [False, True])
def test_winograd_products_by_the_kernel_give_the_same_bits_at_any_threads(staged,
                                                                           monkeypatch):
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 0)
    _winograd_paths(monkeypatch, 0, staged)
    rng = np.random.default_rng(10)
    x = rng.standard_normal((1, 48, 12, 12)).astype(np.float32)
    w = rng.standard_normal((32, 48, 3, 3)).astype(np.float32)
    got = []
    for threads in (1, 2, 3):
        prev = engine.set_num_threads(threads)
        try:
            got.append(_winograd_kept(x, w)[0][1])
        finally:
            engine.set_num_threads(prev)
    assert all(np.array_equal(g, got[0]) for g in got[1:])


@needs_numba
@pytest.mark.parametrize("n_pos,f", [(49, 64), (50, 24), (51, 40), (196, 16), (1, 8),
                                     (97, 24)])
def test_the_last_positions_by_columns_of_filters_give_the_same_bits(n_pos, f):
    """The few positions after whole blocks of 48 (``_fast_direct.COLUMNS``), summed with
    the vectors over 16 filters: the bits of the same positions summed with the vectors
    over positions, as they are where more positions follow (an odd filter block left
    runs as before)."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 200, n_pos + 15)).astype(np.float32)
    w = rng.standard_normal((f, 200, 1)).astype(np.float32)
    epi = tuple(rng.standard_normal(f).astype(np.float32) for _ in range(3)) + (None, True)
    assert 0 < n_pos % 48 <= _fast_direct.COLUMNS < (n_pos + 15) % 48 or n_pos % 48 == 0
    kept = _fast.KeptFilters()
    few = _kept_call(x[:, :, :n_pos], w, (1,), epilogue=epi, kept=kept)[1]
    more = _kept_call(x, w, (1,), epilogue=epi, kept=kept)[1]
    assert np.array_equal(few, more[:, :, :n_pos])


@needs_numba
def test_the_kernels_cache_stamp_follows_the_code_they_call():
    """numba reuses a cached kernel while its own file's text is unchanged: the stamp of
    the code it compiles in from other files must change that text with it (update
    ``CALLED_CODE_STAMP`` to the value below after changing that code)."""
    import hashlib
    import inspect
    from mxlite import _spin_poll
    from mxlite.operator.nn import _fast_tile
    text = (inspect.getsource(_fast_tile) + inspect.getsource(_fast_bn._channel_affine)
            + inspect.getsource(_spin_poll) + inspect.getsource(_fast._input_tiles)
            + inspect.getsource(_fast._output_tiles)
            + inspect.getsource(_fast_pool._max_pool33))
    assert _fast_direct.CALLED_CODE_STAMP == hashlib.sha256(text.encode()).hexdigest()[:16]


@pytest.mark.parametrize("n,f_blocks,p_blocks,axis", [(1, 256, 2, 2), (1, 7, 2, 2),
                                                      (1, 8, 66, 4), (2, 3, 5, 4),
                                                      (24, 32, 3, 2), (1, 1, 1, 2)])
@pytest.mark.parametrize("units", [1, 5, 16])
def test_units_cover_every_output_once(n, f_blocks, p_blocks, axis, units, monkeypatch):
    """The claimed units of a product (``_cuts``) cover its samples x filter blocks x
    position blocks once each, the filters cut by pairs of blocks (a pair runs its last
    few positions by columns), whatever ``UNITS``."""
    monkeypatch.setattr(_fast_direct, "UNITS", units)
    _fast_direct._cuts.cache_clear()
    cover = np.zeros((n, f_blocks, p_blocks), dtype=int)
    cuts = _fast_direct._cuts(n, f_blocks, p_blocks, axis, True)
    for need, stage, n0, n1, b0, b1, p0, p1 in cuts:
        cover[n0:n1, b0:b1, p0:p1] += 1
        assert need == stage == 0 and (axis == 4 or b0 % 2 == 0)
    assert (cover == 1).all()
    assert len(cuts) == n * min(-(-(f_blocks if axis == 2 else p_blocks)
                                  // (2 if axis == 2 else 1)), -(-units // n))
    assert _fast_direct._cuts(n, f_blocks, p_blocks, axis, False).tolist() == \
        [[0, 0, 0, n, 0, f_blocks, 0, p_blocks]]
    _fast_direct._cuts.cache_clear()


@pytest.mark.parametrize("split", [False, True])
def test_winograd_units_run_in_stages_each_needing_the_ones_before(split, monkeypatch):
    """The units of Winograd's staged convolution: the input transform's channels, the
    products' planes x filter blocks x position blocks, the output transform's filters,
    each covered once, and each stage's units needing every unit before it to end."""
    monkeypatch.setattr(_fast_direct, "UNITS", 8)
    _fast_direct._winograd_cuts.cache_clear()
    c, k, f, p_blocks = 20, 16, 48, 3
    cuts = _fast_direct._winograd_cuts(c, k, f, p_blocks, split)
    _fast_direct._winograd_cuts.cache_clear()
    stage = cuts[:, 1]
    assert list(stage) == sorted(stage) and set(stage) == {0, 1, 2}
    for s in range(3):
        assert (cuts[stage == s, 0] == np.sum(stage < s)).all()
    channels, filters = np.zeros(c, dtype=int), np.zeros(f, dtype=int)
    products = np.zeros((k, f // _fast_direct.FILTERS, p_blocks), dtype=int)
    for _, s, a0, a1, b0, b1, p0, p1 in cuts:
        if s == 1:
            products[a0:a1, b0:b1, p0:p1] += 1
        else:
            (channels, filters)[s // 2][a0:a1] += 1
    assert (channels == 1).all() and (products == 1).all() and (filters == 1).all()
    assert len(cuts) == (3 if not split else 8 + k + 8)


@needs_numba
@pytest.mark.parametrize("units", [1, 3, 64])
@pytest.mark.parametrize("staged", [False, True])
def test_claimed_units_give_the_same_bits_whatever_their_count(units, staged, monkeypatch):
    """1x1, small 3x3 and Winograd's products (with its transforms where ``staged``), at
    2 threads, cut in any number of claimed units: the bits of one thread, and of one
    part per thread."""
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 0)
    _winograd_paths(monkeypatch, 49, staged)
    rng = np.random.default_rng(12)
    x7 = rng.standard_normal((1, 40, 7, 7)).astype(np.float32)
    x12 = rng.standard_normal((1, 48, 12, 12)).astype(np.float32)
    w1 = rng.standard_normal((64, 40, 1, 1)).astype(np.float32)
    w3 = rng.standard_normal((32, 40, 3, 3)).astype(np.float32)
    w3w = rng.standard_normal((32, 48, 3, 3)).astype(np.float32)

    def run():
        return (_kept_call(x7, w1)[1], _kept_3x3(x7, w3, (1, 1)),
                _winograd_kept(x12, w3w)[0][1])
    got = {}
    for mode, threads, claims in (("serial", 1, True), ("parts", 2, False),
                                  ("claims", 2, True)):
        monkeypatch.setattr(_fast_direct, "CLAIMS", claims)
        monkeypatch.setattr(_fast_direct, "UNITS", units)
        _fast_direct._cuts.cache_clear()
        _fast_direct._winograd_cuts.cache_clear()
        prev = engine.set_num_threads(threads)
        try:
            got[mode] = run()
        finally:
            engine.set_num_threads(prev)
    _fast_direct._cuts.cache_clear()
    _fast_direct._winograd_cuts.cache_clear()
    for a, b, c in zip(*got.values()):
        assert np.array_equal(a, b) and np.array_equal(a, c)


@needs_numba
def test_a_unit_is_claimed_only_once_the_units_it_needs_have_ended():
    _fast.kernels()
    claim = _fast_direct._compiled_claim
    cuts = _fast_direct._table([[(0, 1)], [(0, 1), (1, 2)]])   # 1 unit, then 2 needing it
    count = np.zeros(2, dtype=np.int64)                       # claimed, ended
    assert claim(count, cuts, 10) == 0
    assert claim(count, cuts, 10) == -1 and count[0] == 1     # unit 0 has not ended
    count[1] = 1
    assert [claim(count, cuts, 0) for _ in range(3)] == [1, 2, 3]     # 3: none left
    assert count[0] == 3
