"""The optional numba kernels (extra ``fast``): Winograd F(2x2, 3x3) convolutions,
2-D max pooling and BatchNorm's passes.

The NumPy convolution, pooling and BatchNorm tests run with and without them (the
``fast_kernels`` fixture); here: where they run, Winograd's float32 round-off next
to the direct path's, pooling's and BatchNorm's values bit for bit, and the switch
that turns them off."""
import os
import subprocess
import sys
import types

import numpy as np
import pytest

import mxlite as mx
from mxlite import engine
from mxlite.operator.nn import (_conv_kernels, _fast, _fast_bn, _fast_conv, _fast_pool,
                                convolution)

from conftest import NUMBA_MISSING, needs_numba


def _direct(x, w, pad):
    return _conv_kernels.cols_product(np, _direct_cols(x, pad), w, x.shape[0],
                                      tuple(m + 2 * q - 2 for m, q in zip(x.shape[2:], pad)), 1)


def _direct_weight_grad(x, gy, pad):
    return convolution.conv_weight_grad(np, x, gy, (3, 3), (1, 1), (1, 1), pad, 1, cols=_direct_cols(x, pad))


def _direct_cols(x, pad):
    out = tuple(m + 2 * q - 2 for m, q in zip(x.shape[2:], pad))
    return _conv_kernels.build_cols(np, x, (3, 3), (1, 1), (1, 1), pad, 1, out)


WINOGRAD_CASES = [(2, 32, 32, 20, (1, 1)), (1, 64, 48, 14, (1, 1)), (8, 128, 128, 7, (1, 1)),
                  (4, 16, 24, 9, (0, 2)), (3, 8, 8, 11, (2, 0)), (8, 64, 64, 28, (1, 1))]


@needs_numba
@pytest.mark.parametrize("blocks", [False, True])
@pytest.mark.parametrize("n,c,f,size,pad", WINOGRAD_CASES)
def test_winograd_float32_round_off_is_the_direct_paths(n, c, f, size, pad, blocks, monkeypatch):
    # Against float64, the error is float32 round-off of the sums' magnitude: within
    # 4 eps of the largest sum of |terms| (measured: forward 0.58 to 0.94, weight
    # gradient 0.30 to 1.15; im2col's own 0.73 to 1.18 and 0.23 to 1.57). The scale
    # depends on the data only, not on how a BLAS orders its sums. ``blocks``: the
    # weight gradient by blocks of about 3 tile rows (the last one shorter).
    monkeypatch.setattr(_fast, "MIN_TILES", 0)
    if blocks:
        monkeypatch.setattr(_fast, "BLOCKED_MIN_BYTES", 0)
        monkeypatch.setattr(_fast, "GRAD_BLOCK_BYTES", 3 * 16 * f * -(-size // 2) * 4)
    rng = np.random.default_rng(size)
    x = np.maximum(rng.standard_normal((n, c, size, size)), 0).astype(np.float32)
    w = (rng.standard_normal((f, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    out = tuple(size + 2 * q - 2 for q in pad)
    gy = rng.standard_normal((n, f) + out).astype(np.float32)
    y, tiles = _fast.conv3x3(x, w, (1, 1), (1, 1), pad, 1, out, keep_tiles=True)
    gw = _fast.weight_grad3x3(x, gy, (3, 3), (1, 1), (1, 1), pad, 1, tiles)
    x64, w64, gy64 = x.astype(np.float64), w.astype(np.float64), gy.astype(np.float64)
    eps = np.finfo(np.float32).eps
    forward = (_direct(x64, w64, pad), _direct(abs(x64), abs(w64), pad))
    for got, ref, size_of_sums in ((y,) + forward, (gw, _direct_weight_grad(x64, gy64, pad),
                                                   _direct_weight_grad(abs(x64), abs(gy64), pad))):
        assert got.dtype == np.float32 and got.shape == ref.shape
        assert np.abs(got - ref).max() <= 4 * eps * size_of_sums.max()
    assert np.array_equal(_fast.weight_grad3x3(x, gy, (3, 3), (1, 1), (1, 1), pad, 1), gw)
    # an inference's F(2x4, 3x3) (up to WIDE_MAX_CHANNELS): 2x F(2x2, 3x3)'s error, within
    # the same bound (measured 1.3 to 2.6 eps); in float64, exact to float64 round-off
    wide = _fast.conv3x3(x, w, (1, 1), (1, 1), pad, 1, out, inference=True)[0]
    assert np.abs(wide - forward[0]).max() <= 4 * eps * forward[1].max()
    wide64 = _fast.conv3x3(x64, w64, (1, 1), (1, 1), pad, 1, out, inference=True)[0]
    assert np.abs(wide64 - forward[0]).max() <= 1e-14 * forward[1].max()
    assert c <= _fast.WIDE_MAX_CHANNELS and not np.array_equal(wide, y)  # (it ran)


@needs_numba
@pytest.mark.parametrize("size,pad", [((13, 11), (1, 1)), ((10, 13), (0, 2)), ((12, 9), (2, 0))])
def test_winograd_inference_by_blocks_pads_each_block_as_the_whole(size, pad, monkeypatch):
    # blocks of one or two tile rows, each padded on its own: those at the top and the
    # bottom read the padding, those inside none; the same bits at any threads and
    # float32 round-off of the direct path
    monkeypatch.setattr(_fast, "MIN_TILES", 0)
    monkeypatch.setattr(_fast, "BLOCKED_MIN_BYTES", 0)
    monkeypatch.setattr(_fast, "MIN_BLOCK_TILES", 1)
    monkeypatch.setattr(_fast, "BLOCK_BYTES", 1)
    monkeypatch.setattr(mx.engine, "PARALLEL_MIN_MACS", 0)
    rng = np.random.default_rng(sum(size))
    x = np.maximum(rng.standard_normal((2, 8) + size), 0).astype(np.float32)
    w = (rng.standard_normal((6, 8, 3, 3)) / np.sqrt(72)).astype(np.float32)
    out = tuple(m + 2 * q - 2 for m, q in zip(size, pad))
    ys = []
    prev = mx.engine.set_num_threads(1)
    try:
        for threads in (1, 3):
            mx.engine.set_num_threads(threads)
            ys.append(_fast.conv3x3(x, w, (1, 1), (1, 1), pad, 1, out, inference=True)[0])
    finally:
        mx.engine.set_num_threads(prev)
    assert np.array_equal(ys[0], ys[1])
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    eps = np.finfo(np.float32).eps
    ref, size_of_sums = _direct(x64, w64, pad), _direct(abs(x64), abs(w64), pad)
    assert ys[0].shape == ref.shape
    assert np.abs(ys[0] - ref).max() <= 4 * eps * size_of_sums.max()


@needs_numba
@pytest.mark.parametrize("c,inference", [(8, True), (8, False), (160, True)])
def test_winograd_of_a_small_input_in_stages_gives_the_same_bits_at_any_threads(
        c, inference, monkeypatch):
    # from STAGED_MIN_BYTES, under the transforms' split (batch 1): the input transform,
    # the products and the output transform (with BatchNorm's epilogue) handed to the
    # workers in one job of three stages; the same bits as one thread, and the same
    # input tiles
    monkeypatch.setattr(mx.engine, "PARALLEL_MIN_MACS", 0)
    monkeypatch.setattr(_fast, "MIN_TILES", 0)
    monkeypatch.setattr(_fast, "STAGED_MIN_BYTES", 0)
    stages = []
    run_stages = engine._run_stages
    monkeypatch.setattr(engine, "_run_stages", lambda st, k: stages.append(len(st)) or
                        run_stages(st, k))
    rng = np.random.default_rng(c)
    x = rng.standard_normal((1, c, 11, 13)).astype(np.float32)
    w = (rng.standard_normal((12, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    r = rng.standard_normal((1, 12, 11, 13)).astype(np.float32)
    epilogue = tuple(rng.standard_normal(12).astype(np.float32) for _ in range(3)) + (r, True)
    got = []
    prev = mx.engine.set_num_threads(1)
    try:
        for threads in (1, 3):
            mx.engine.set_num_threads(threads)
            got.append(_fast.conv3x3(x, w, (1, 1), (1, 1), (1, 1), 1, (11, 13),
                                     keep_tiles=not inference, epilogue=epilogue,
                                     inference=inference))
    finally:
        mx.engine.set_num_threads(prev)
    assert stages == [3]
    (y1, v1), (y3, v3) = got
    assert np.array_equal(y1.view(np.uint8), y3.view(np.uint8))
    if not inference:
        assert np.array_equal(v1, v3)
        assert np.array_equal(v1, _fast._input(_fast.kernels(), x, (1, 1), 6, 7))
    want = _direct(x.astype(np.float64), w.astype(np.float64), (1, 1))
    want = np.maximum((want - epilogue[0][:, None, None]) * epilogue[1][:, None, None]
                      + epilogue[2][:, None, None] + r, 0)
    assert np.abs(y1 - want).max() <= 1e-4 * np.abs(want).max()


@needs_numba
def test_winograd_weight_gradient_by_blocks_gives_the_same_bits_at_any_threads(monkeypatch):
    monkeypatch.setattr(_fast, "BLOCKED_MIN_BYTES", 0)
    monkeypatch.setattr(_fast, "GRAD_BLOCK_BYTES", 2 * 16 * 8 * 10 * 4)     # 2 tile rows
    monkeypatch.setattr(mx.engine, "PARALLEL_MIN_MACS", 0)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 8, 20, 20)).astype(np.float32)
    gy = rng.standard_normal((3, 8, 20, 20)).astype(np.float32)
    prev = mx.engine.set_num_threads(1)
    try:
        gws = []
        for threads in (1, 2, 3):
            mx.engine.set_num_threads(threads)
            gws.append(_fast.weight_grad3x3(x, gy, (3, 3), (1, 1), (1, 1), (1, 1), 1))
    finally:
        mx.engine.set_num_threads(prev)
    assert gws[0] is not None
    for gw in gws[1:]:
        assert np.array_equal(gw, gws[0])


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_recorded_convolution_keeps_winograd_tiles_for_its_weight_gradient(dtype, monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 16, 24, 24))
    w = rng.standard_normal((8, 16, 3, 3))
    gy = rng.standard_normal((2, 8, 24, 24))
    kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)

    def step():
        xn, wn = mx.nd.array(x, dtype=dtype), mx.nd.array(w, dtype=dtype)
        wn.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Convolution(xn, wn, **kw)
        y.backward(mx.nd.array(gy, dtype=dtype))
        return y.asnumpy(), wn.grad.asnumpy()

    kept = []
    keep = convolution._COLS.keep
    monkeypatch.setattr(convolution._COLS, "keep", lambda cols: kept.append(cols.shape)
                        or keep(cols))
    fast = step()
    assert kept == [(16, 16, 2 * 12 * 12)]              # the tiles, not im2col's columns
    monkeypatch.setattr(_fast, "kernels", lambda: None)
    tol = dict(rtol=1e-4, atol=1e-3) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-10)
    for got, want in zip(fast, step()):
        assert got.dtype == dtype
        np.testing.assert_allclose(got, want, **tol)


@pytest.mark.parametrize("kernel", [(5, 5), (3, 3)])
@pytest.mark.parametrize("kept", [False, True])
def test_weight_gradient_with_and_without_the_forwards_columns(kernel, kept, fast_kernels):
    # Without kept columns (past the columns budget) a 5x5 weight gradient is im2col's
    # and a 3x3 one Winograd's where numba runs; with the columns (or tiles) its
    # recorded forward kept, the same values.
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, 12, 11, 10))
    w = rng.standard_normal((6, 12) + kernel)
    out = (11 + 3 - kernel[0], 10 + 3 - kernel[1])
    gy = rng.standard_normal((4, 6) + out)
    xpad = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    want = np.stack([np.stack([np.einsum("nfhw,nchw->fc", gy,
                                         xpad[:, :, i:i + out[0], j:j + out[1]])
                               for j in range(kernel[1])], -1) for i in range(kernel[0])], -2)
    xn, wn = mx.nd.array(x, dtype="float64"), mx.nd.array(w, dtype="float64")
    if kept:
        wn.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Convolution(xn, wn, kernel=kernel, pad=(1, 1), num_filter=6, no_bias=True)
        y.backward(mx.nd.array(gy, dtype="float64"))
        gw = wn.grad.asnumpy()
    else:
        gw = mx.nd._internal._conv_weight_grad(xn, mx.nd.array(gy, dtype="float64"),
                                               kernel=kernel, pad=(1, 1)).asnumpy()
    assert gw.shape == w.shape
    np.testing.assert_allclose(gw, want, rtol=1e-10, atol=1e-10)


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_winograd_filters_of_a_flipped_transposed_view_are_those_of_its_copy(dtype, monkeypatch):
    # a data gradient's weights (C, F, 3, 3) flipped and transposed: read as they lie
    from mxlite import engine
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)     # in parts, as the workers run
    w = np.random.default_rng(2).standard_normal((12, 10, 3, 3)).astype(dtype)
    view = w.swapaxes(0, 1)[:, :, ::-1, ::-1]
    jit = _fast.kernels()
    got = _fast._filters(jit, view)
    assert got.shape == (16, 10, 12)
    assert np.array_equal(got, _fast._filters(jit, np.ascontiguousarray(view)))


@needs_numba
def test_only_an_unrecorded_forward_runs_winograd_f24(monkeypatch):
    """A recorded forward keeps F(2x2, 3x3)'s tiles for its weight gradient, and the
    gradients' passes keep its bits; an unrecorded Convolution (inference) of up to
    WIDE_MAX_CHANNELS input channels runs F(2x4, 3x3), and a wider one F(2x2, 3x3)."""
    monkeypatch.setattr(_fast, "MIN_TILES", 0)
    schemes = []
    filters = _fast._filters
    monkeypatch.setattr(_fast, "_filters", lambda jit, w, scheme=None: schemes.append(
        (scheme or _fast._F22)[0]) or filters(jit, w, scheme))
    rng = np.random.default_rng(3)
    for c, want in ((16, 24), (_fast.WIDE_MAX_CHANNELS + 8, 16)):
        x = mx.nd.array(rng.standard_normal((2, c, 12, 12)))
        w = mx.nd.array(rng.standard_normal((8, c, 3, 3)) / np.sqrt(9 * c))
        del schemes[:]
        y = mx.nd.Convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)
        assert schemes == [want]
        x.attach_grad(), w.attach_grad()
        del schemes[:]
        with mx.autograd.record():
            z = mx.nd.Convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)
        z.backward(mx.nd.ones_like(z))
        assert schemes and set(schemes) == {16}
        np.testing.assert_allclose(y.asnumpy(), z.asnumpy(), rtol=1e-5, atol=1e-5)


@needs_numba
@pytest.mark.parametrize("case", ["stride", "dilate", "groups", "kernel", "dtype",
                                  "channels", "tiles"])
def test_winograd_leaves_other_convolutions_to_numpy(case):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 16, 24, 24)).astype(np.float32)
    w = rng.standard_normal((8, 16, 3, 3)).astype(np.float32)
    args = dict(stride=(1, 1), dilate=(1, 1), pad=(1, 1), groups=1, out=(24, 24))
    if case in ("stride", "dilate"):
        args[case] = (2, 2)
    elif case == "groups":
        args["groups"], w = 2, w[:, :8]
    elif case == "kernel":
        w = rng.standard_normal((8, 16, 5, 5)).astype(np.float32)
    elif case == "dtype":
        x, w = x.astype(np.float16), w.astype(np.float16)
    elif case == "channels":
        x, w = x[:, :_fast.MIN_CHANNELS - 1], w[:, :_fast.MIN_CHANNELS - 1]
    else:
        x, args["out"] = x[:1, :, :8, :8], (8, 8)
    assert _fast.conv3x3(x, w, **args) is None


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, kernel, stride, pad, convention", [
    ((2, 8, 15, 16), (3, 3), (2, 2), (1, 1), "valid"),
    ((1, 3, 9, 7), (3, 2), (1, 2), (0, 1), "valid"),
    ((2, 4, 10, 11), (3, 3), (2, 2), (1, 1), "full"),        # windows past the end
    ((1, 5, 8, 9), (3, 4), (2, 1), (2, 3), "valid"),        # windows mostly padding
    ((2, 3, 9, 10), (2, 2), (2, 2), (0, 0), "valid"),       # 2x2 pairs, the last row left
    ((2, 3, 9, 10), (3, 3), (2, 2), (0, 0), "valid"),       # 3x3 of stride 2, as ResNet's
    ((1, 4, 8, 7), (3, 3), (2, 2), (1, 0), "full"),
    ((1, 3, 8, 9), (3, 3), (2, 2), (2, 2), "full")])        # the last row of windows padding
def test_max_pool_kernels_give_numpys_values_bit_for_bit(shape, kernel, stride, pad, convention,
                                                          dtype, monkeypatch):
    rng = np.random.default_rng(3)
    x = (rng.integers(0, 5, shape) + rng.standard_normal(shape) * (rng.random(shape) < 0.5))
    x.reshape(-1)[::37] = np.nan
    x.reshape(-1)[5::11] = -np.inf      # windows whose maximum is -inf, as the padding
    args = dict(kernel=kernel, stride=stride, pad=pad, pooling_convention=convention)
    gy = rng.standard_normal(mx.nd.Pooling(mx.nd.array(x), **args).shape)

    def run():
        xn = mx.nd.array(x, dtype=dtype)
        xn.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(xn, pool_type="max", **args)
        y.backward(mx.nd.array(gy, dtype=dtype))
        return y.asnumpy(), xn.grad.asnumpy()

    # the recorded forward keeps each window's first maximum: the backward searches none
    scattered = []
    search, scatter = _fast_pool.max_pool2d_grad, _fast_pool.max_pool2d_scatter
    monkeypatch.setattr(_fast_pool, "max_pool2d_grad", None)
    monkeypatch.setattr(_fast_pool, "max_pool2d_scatter",
                        lambda *a, **k: scattered.append(1) or scatter(*a, **k))
    fast = run()
    assert scattered
    monkeypatch.setattr(_fast_pool, "max_pool2d_grad", search)
    assert _fast_pool.max_pool2d(x.astype(dtype), kernel, stride, pad, fast[0].shape[2:]) is not None
    monkeypatch.setattr(_fast, "kernels", lambda: None)
    for got, want in zip(fast, run()):
        np.testing.assert_array_equal(got, want)


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("pad, convention", [((1, 1), "valid"), ((0, 1), "full"),
                                             ((2, 2), "full"), ((1, 0), "valid")])
def test_3x3_stride_2_max_pool_kernel_gives_the_general_kernels_values_and_places(
        pad, convention, dtype, monkeypatch):
    # ties of small integers and of 0.0 and -0.0, NaNs, -inf as the padding
    rng = np.random.default_rng(9)
    x = rng.integers(-1, 2, (2, 3, 11, 10)).astype(dtype)
    x[x == 0] = np.where(rng.random(int((x == 0).sum())) < 0.5, 0.0, -0.0)
    x.reshape(-1)[::17] = np.nan
    x.reshape(-1)[3::7] = -np.inf
    x[0, 0, :3] = -np.inf       # windows of -inf starting in the padding: no place
    out = mx.nd.Pooling(mx.nd.array(x), kernel=(3, 3), stride=(2, 2), pad=pad,
                        pooling_convention=convention).shape[2:]
    ran = []
    jit = _fast.kernels()
    monkeypatch.setattr(_fast, "kernels", lambda: types.SimpleNamespace(
        max_pool33=lambda *a: ran.append(a) or jit.max_pool33(*a), max_pool=jit.max_pool))
    got = [_fast_pool.max_pool2d(x, (3, 3), (2, 2), pad, out, index=i) for i in (False, True)]
    calls = len(ran)
    assert calls >= 2
    monkeypatch.setattr(_fast_pool, "THREES", False)
    want = [_fast_pool.max_pool2d(x, (3, 3), (2, 2), pad, out, index=i) for i in (False, True)]
    assert len(ran) == calls
    np.testing.assert_array_equal(got[0], want[0])      # (0.0 == -0.0)
    # with the places, the bits of the first maximum in row-major order
    assert got[1][0].tobytes() == want[1][0].tobytes()
    np.testing.assert_array_equal(got[1][1], want[1][1])
    assert (want[1][1] == -1).any() and (want[1][1] >= 0).any()


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, kernel, stride, dilate, pad, filters", [
    ((3, 12, 4, 4), (3, 3), (1, 1), (1, 1), (0, 0), 8),       # LeNet-like: stride 1
    ((2, 16, 3, 5), (3, 2), (2, 3), (1, 2), (1, 0), 9),       # strided, dilated, cropped
    ((2, 24, 2, 2), (5, 5), (1, 1), (1, 1), (1, 1), 10)])
def test_data_gradient_by_one_product_adds_in_numpys_order(shape, kernel, stride, dilate, pad,
                                                           filters, dtype, monkeypatch):
    # the transposed convolution over all input positions: one product for every
    # kernel offset, whose blocks the numba kernel adds on in the order of NumPy's
    # adds (bit for bit; the products of one offset each may round differently)
    rng = np.random.default_rng(7)
    g = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((shape[1], filters) + kernel).astype(dtype)
    assert convolution._use_rows(g, w, 1, kernel)
    added = []
    monkeypatch.setattr(_fast_conv, "add_offsets",
                        lambda *a, run=_fast_conv.add_offsets: added.append(a) or run(*a))
    args = (kernel, stride, dilate, pad, (0, 0), 1)
    fast = convolution.deconv_nd(np, g, w, *args)
    p, y = added[0][0], added[0][-1]
    want = np.zeros_like(y)
    for t, (i, j) in enumerate(np.ndindex(*kernel)):
        want[:, i * dilate[0]::stride[0], j * dilate[1]::stride[1]][:, :shape[2], :shape[3]] \
            += p[:, :, :, t]
    np.testing.assert_array_equal(y, want)
    monkeypatch.setattr(_fast, "kernels", lambda: None)
    tol = 1e-5 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(fast, convolution.deconv_nd(np, g, w, *args), rtol=tol, atol=tol)
    ref = mx.nd.Deconvolution(mx.nd.array(g, dtype=np.float64), mx.nd.array(w, dtype=np.float64),
                              kernel=kernel, stride=stride, dilate=dilate, pad=pad,
                              num_filter=filters).asnumpy()
    np.testing.assert_allclose(fast, ref, rtol=10 * tol, atol=10 * tol)


@needs_numba
@pytest.mark.parametrize("shape, kernel, stride, pad", [
    ((2, 3, 11, 9), (3, 3), (2, 2), (1, 1)), ((1, 2, 7, 8), (3, 2), (1, 2), (1, 0)),
    ((1, 2, 6, 7), (2, 3), (1, 1), (0, 1)), ((2, 3, 9, 8), (2, 2), (2, 2), (0, 0)),
    ((1, 3, 10, 7), (3, 3), (2, 2), (0, 1))])
def test_max_pool_keeps_the_place_of_each_windows_first_maximum(shape, kernel, stride, pad):
    # ties (small integers), NaNs and -inf: the place is the first maximum in row-major
    # window order (the first NaN), -1 where that is padding (-inf windows)
    rng = np.random.default_rng(5)
    x = rng.integers(0, 3, shape).astype(np.float32)
    x.reshape(-1)[::13] = np.nan
    x.reshape(-1)[2::5] = -np.inf
    x[0, 0, :2] = -np.inf
    op = mx.operator.get_op("Pooling")
    p = op.parse_params(dict(kernel=kernel, stride=stride, pad=pad))
    with mx.autograd.record():
        y, index = op.compute(p, np, x)
    assert index.dtype == np.int32 and index.shape == y.shape
    xp_ = np.pad(x, [(0, 0)] * 2 + [(q, q + k) for q, k in zip(pad, kernel)],
                 constant_values=-np.inf)
    for n, c, oy, ox in np.ndindex(*y.shape):
        r0, q0 = oy * stride[0], ox * stride[1]
        flat = xp_[n, c, r0:r0 + kernel[0], q0:q0 + kernel[1]].reshape(-1)
        first = int(np.argmax(np.isnan(flat))) if np.isnan(flat).any() else int(np.argmax(flat))
        r, q = r0 + first // kernel[1] - pad[0], q0 + first % kernel[1] - pad[1]
        inside = 0 <= r < shape[2] and 0 <= q < shape[3]
        assert index[n, c, oy, ox] == (r * shape[3] + q if inside else -1), (n, c, oy, ox)
    # unrecorded: nothing kept
    assert op.compute(p, np, x)[1].shape == (0,)


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, fix_gamma", [((3, 5, 7, 6), False), ((4, 6), True),
                                              ((2, 3, 4), False)])
def test_batch_norm_inference_pass_gives_numpys_values_bit_for_bit(shape, fix_gamma, dtype,
                                                                     monkeypatch):
    rng = np.random.default_rng(4)
    c = shape[1]
    args = [rng.standard_normal(shape), rng.standard_normal(c), rng.standard_normal(c),
            rng.standard_normal(c), rng.random(c) + 0.5]

    def run():
        return mx.nd.BatchNorm(*[mx.nd.array(a, dtype=dtype) for a in args],
                               fix_gamma=fix_gamma, eps=1e-3).asnumpy()

    assert _fast_bn.channel_views(args[0].astype(dtype)) is not None     # the kernels apply
    fast = run()
    monkeypatch.setattr(_fast, "kernels", lambda: None)
    want = run()
    assert fast.dtype == want.dtype == dtype
    np.testing.assert_array_equal(fast, want)


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fix_gamma", [False, True])
@pytest.mark.parametrize("eps", [1e-5, 1e-3, 0.1])
def test_moving_affine_kernel_gives_numpys_values_bit_for_bit(eps, fix_gamma, dtype):
    """``inv = 1 / sqrt(var + eps)`` and ``scale = inv * gamma`` in one compiled call (a
    fused inference step's) are NumPy's values, bit for bit: variances over many scales
    and zeros, eps rounded to the dtype first."""
    from mxlite.operator.nn.normalization import _affine
    rng = np.random.RandomState(5)
    p = mx.operator.get_op("BatchNorm").parse_params(dict(eps=eps, fix_gamma=fix_gamma))
    for c in (1, 7, 300, 2048):
        var = (rng.rand(c) * 10.0 ** rng.uniform(-9, 5, c)).astype(dtype)
        var[::5] = 0
        gamma = rng.randn(c).astype(dtype)
        want = _affine(p, np, var, gamma, gamma, dtype)[:2]
        got = _fast_bn.inverse_scale(var, gamma, p.eps, p.fix_gamma)
        assert (got[1] is got[0]) == fix_gamma
        for g, w in zip(got, want):
            assert g.dtype == w.dtype == dtype
            assert np.array_equal(g.view(np.uint8), w.view(np.uint8))
    assert _fast_bn.inverse_scale(var, gamma.astype(np.float16), p.eps, False) is None


def _bn_train(x, gamma, beta, gy):
    """BatchNorm's training forward (y, mean, var) and gradients (data, gamma, beta)."""
    args = [mx.nd.array(a, dtype=x.dtype) for a in (x, gamma, beta)]
    mm, mv = mx.nd.zeros(gamma.shape, dtype=x.dtype), mx.nd.zeros(gamma.shape, dtype=x.dtype)
    for a in args:
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.BatchNorm(*args, mm, mv, fix_gamma=False, momentum=0.0, eps=1e-5)
    y.backward(mx.nd.array(gy, dtype=x.dtype))
    return [a.asnumpy().astype(np.float64) for a in [y, mm, mv] + [a.grad for a in args]]


@needs_numba
@pytest.mark.parametrize("shape", [(8, 6, 28, 28), (64, 5), (4, 3, 100)])
def test_batch_norm_training_passes_are_float32_round_off_of_float64(shape, monkeypatch):
    # The statistics and the gradient's sums are summed in float64 (NumPy's in float32
    # pairwise): against the float64 computation, within float32 round-off, as NumPy's.
    rng = np.random.default_rng(7)
    c = shape[1]
    x = rng.standard_normal(shape) * 0.1 + 3.0        # an offset: cancellation in the variance
    gamma, beta = rng.standard_normal(c), rng.standard_normal(c)
    gy = rng.standard_normal(shape)
    assert _fast_bn.channel_views(x.astype(np.float32)) is not None      # the kernels apply
    exact = _bn_train(x, gamma, beta, gy)
    fast = _bn_train(*(a.astype(np.float32) for a in (x, gamma, beta, gy)))
    monkeypatch.setattr(_fast, "kernels", lambda: None)
    slow = _bn_train(*(a.astype(np.float32) for a in (x, gamma, beta, gy)))
    for f, s, e in zip(fast, slow, exact):
        scale = np.abs(e).max()
        err_fast, err_slow = np.abs(f - e).max() / scale, np.abs(s - e).max() / scale
        assert err_fast <= max(2 * err_slow, 64 * np.finfo(np.float32).eps), (err_fast, err_slow)


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_batch_norm_gradient_pass_is_numpys_formula_bit_for_bit(dtype):
    rng = np.random.default_rng(8)
    x, gy, y = (rng.standard_normal((3, 4, 5, 6)).astype(dtype) for _ in range(3))
    gy.reshape(-1)[:3] = [-0.0, np.inf, -1.0]
    y.reshape(-1)[:3] = [np.nan, 0.0, -0.0]
    mean, a, k1, k2 = (rng.standard_normal(4).astype(dtype) for _ in range(4))
    sh = (1, -1, 1, 1)
    for relu_y in (None, y):
        with np.errstate(invalid="ignore"):     # inf * 0 where relu masks inf
            g = gy if relu_y is None else np.multiply(gy, relu_y > 0)
            want = g * a.reshape(sh) - (x - mean.reshape(sh)) * k1.reshape(sh) - k2.reshape(sh)
            got, kept = np.full_like(x, 7), np.full_like(x, 7)
            x3, gy3, y3, got3, kept3 = _fast_bn.channel_views(x, gy, relu_y, got, kept)
            # in two parts of the channels, as the CPU workers run them
            sums = []
            for lo, hi in ((0, 1), (1, 4)):
                _fast_bn.batch_norm_grad(x3, lo, mean[lo:hi], gy3, a[lo:hi], k1[lo:hi],
                                      k2[lo:hi], got3, y3)
                # the sums see the same g, and write it where asked
                sums.append(_fast_bn.batch_norm_grad_sums(x3, lo, mean[lo:hi], gy3, y3,
                                                       None if relu_y is None else kept3))
            np.testing.assert_allclose(np.concatenate([s[0] for s in sums]),
                                       g.sum(axis=(0, 2, 3)), rtol=1e-5)
            np.testing.assert_allclose(np.concatenate([s[1] for s in sums]),
                                       ((x - mean.reshape(sh)) * g).sum(axis=(0, 2, 3)),
                                       rtol=1e-5)
        assert np.array_equal(got, want, equal_nan=True)
        if relu_y is not None:
            assert np.array_equal(kept.view(np.uint8), g.view(np.uint8))


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("residual,relu", [(False, False), (False, True), (True, False),
                                           (True, True)])
def test_batch_norm_epilogue_on_parts_in_place_is_the_whole_pass_bit_for_bit(dtype, residual,
                                                                            relu):
    """A convolution applies BatchNorm's pass to each part of its output in place, as
    it makes it (``affine_epilogue``): the values of one pass from the output into a
    new array, NaN, infinities and signed zeros included."""
    rng = np.random.default_rng(9)
    z = rng.standard_normal((3, 4, 37)).astype(dtype)
    z.reshape(-1)[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, -1e-30]
    r = rng.standard_normal(z.shape).astype(dtype) if residual else None
    mean, scale, shift = (rng.standard_normal(4).astype(dtype) for _ in range(3))
    want = np.full_like(z, 7)
    _fast_bn.batch_norm_apply(z, 0, mean, scale, shift, want, r, relu)
    got = z.copy()
    apply = _fast_bn.affine_epilogue(mean, scale, shift, r, relu)
    for n0, n1, i0, i1 in ((0, 1, 0, 37), (1, 3, 0, 5), (1, 3, 5, 36)):
        apply(got, n0, n1, i0, i1)
    for f0, f1 in ((0, 1), (1, 3), (3, 4)):         # parts of the channels
        apply(got, 1, 3, 36, 37, f0, f1)
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    with pytest.raises(ValueError, match="do not fit the output"):
        apply(got, 2, 4, 0, 37)             # samples past the end
    with pytest.raises(ValueError, match="do not fit the output"):
        apply(got, 0, 1, 0, 37, 3, 5)       # channels past the end
    with pytest.raises(ValueError, match="do not fit"):
        apply(got[:, :3], 0, 1, 0, 37)      # 3 channels of 4
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


@needs_numba
@pytest.mark.parametrize("shape,f", [((4, 6, 12, 12), 8),     # per sample
                                     ((1, 6, 12, 12), 8),     # columns of one sample
                                     ((1, 6, 3, 3), 16),      # more filters than positions
                                     ((1, 6, 3, 3), 15),      # (cut unevenly)
                                     ((3, 6, 4, 4), 8)])      # small maps: one product
def test_1x1_convolution_with_an_epilogue_is_the_product_then_the_pass(shape, f, monkeypatch):
    """A 1x1 convolution applying BatchNorm (sum, relu) to each part of its output as it
    makes it: the bits of the product then one pass, however it splits over threads."""
    from mxlite import engine
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 0)
    rng = np.random.default_rng(10)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((f, shape[1], 1, 1)).astype(np.float32)
    mean, scale, shift = (rng.standard_normal(f).astype(np.float32) for _ in range(3))
    r3 = rng.standard_normal((shape[0], f, shape[2] * shape[3])).astype(np.float32)
    for threads in (1, 2):
        prev = engine.set_num_threads(threads)
        try:
            want = _conv_kernels.pointwise(np, x, w, (1, 1)).reshape(r3.shape)
            _fast_bn.batch_norm_apply(want, 0, mean, scale, shift, want, r3, True)
            got = _conv_kernels.pointwise(np, x, w, (1, 1), _fast_bn.affine_epilogue(
                mean, scale, shift, r3, True))
        finally:
            engine.set_num_threads(prev)
        assert got.shape == (shape[0], f) + shape[2:]
        assert np.array_equal(got.reshape(r3.shape), want)


@needs_numba
def test_batch_norm_kernels_refuse_vectors_that_do_not_fit_the_data():
    x3 = _fast_bn.channel_views(np.ones((2, 4, 5), np.float32))[0]
    y3 = np.empty_like(x3)
    with pytest.raises(ValueError, match="do not fit data of shape"):
        _fast_bn.batch_norm_apply(x3, 2, *np.ones((3, 3), np.float32), y3)    # channels 2..4 of 4
    with pytest.raises(ValueError, match="do not fit data of shape"):
        _fast_bn.batch_norm_moments(x3, 0, *np.ones((2, 4), np.float64))      # another dtype
    assert np.array_equal(x3, np.ones((2, 4, 5), np.float32))


@needs_numba
def test_kernels_compile_without_a_cache_where_numba_has_no_cache_directory(monkeypatch):
    import numba
    njit = numba.njit

    def no_cache_dir(*args, **kw):
        if kw.get("cache"):
            raise RuntimeError("cannot cache function: no locator available")
        return njit(*args, **kw)

    monkeypatch.setattr(numba, "njit", no_cache_dir)
    monkeypatch.setattr(_fast, "kernels", _fast.kernels.__wrapped__)
    x = np.ones((2, 8, 9, 9))
    assert _fast.kernels() is not None
    y = np.empty_like(x)
    x3, y3 = _fast_bn.channel_views(x, y)
    _fast_bn.batch_norm_apply(x3, 0, *np.ones((3, 8)), y3)
    np.testing.assert_array_equal(y, x)


@needs_numba
def test_kernels_split_over_the_cpu_workers_give_the_serial_bits(monkeypatch):
    from mxlite import engine
    monkeypatch.setattr(engine, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(engine, "PARALLEL_MIN_KERNEL_BYTES", 0)
    monkeypatch.setattr(_fast, "MIN_TILES", 0)
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((3, 10, 9, 11)), rng.standard_normal((7, 10, 3, 3))
    pool = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")

    def run():
        xn, wn = mx.nd.array(x, dtype="float32"), mx.nd.array(w, dtype="float32")
        xn.attach_grad()
        wn.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Convolution(xn, wn, kernel=(3, 3), pad=(1, 1), num_filter=7, no_bias=True)
            z = mx.nd.Pooling(y, **pool)
        z.backward(mx.nd.array(rng.standard_normal(z.shape), dtype="float32"))
        y2 = mx.nd.Convolution(xn, wn, kernel=(3, 3), pad=(1, 1), num_filter=7, no_bias=True)
        stats = [mx.nd.array(rng.random(7) + 0.5) for _ in range(4)]
        bn = mx.nd.BatchNorm(y2, *stats)
        y2.attach_grad()
        for a in stats[:2]:
            a.attach_grad()
        with mx.autograd.record():      # training: batch statistics, and their gradient
            t = mx.nd.relu(mx.nd.BatchNorm(y2, *stats, fix_gamma=False))
        t.backward(mx.nd.array(rng.standard_normal(t.shape), dtype="float32"))
        return [a.asnumpy() for a in (y, z, xn.grad, wn.grad, y2, bn, t, y2.grad, stats[0].grad,
                                      stats[1].grad)]

    outs = []
    for threads in (1, 3):
        prev = engine.set_num_threads(threads)
        try:
            rng = np.random.default_rng(6)
            outs.append(run())
        finally:
            engine.set_num_threads(prev)
    for serial, split in zip(*outs):
        np.testing.assert_array_equal(serial, split)


def test_mxlite_numba_0_turns_the_kernels_off():
    code = ("from mxlite.operator.nn import _fast; import numpy as np; "
            "x = np.ones((4, 16, 24, 24), np.float32); w = np.ones((8, 16, 3, 3), np.float32); "
            "print(_fast.kernels(), _fast.conv3x3(x, w, (1, 1), (1, 1), (1, 1), 1, (24, 24)))")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, MXLITE_NUMBA="0",
               PYTHONPATH=os.pathsep.join([root] + [os.environ.get("PYTHONPATH", "")]))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["None", "None"]


def _geometries(count, seed):
    """Random 2-D convolution geometries (N, C, size, kernel, stride, dilate, pad,
    pad_after or None, out) with at least one output position."""
    rng = np.random.default_rng(seed)
    while count:
        n, c = int(rng.integers(1, 4)), int(rng.integers(1, 6))
        size, kernel, stride, dilate, pad = (tuple(int(v) for v in rng.integers(lo, hi, 2))
                                             for lo, hi in ((1, 13), (1, 6), (1, 4), (1, 3),
                                                            (0, 4)))
        after = tuple(int(v) for v in rng.integers(-1, 3, 2)) if rng.random() < 0.3 else None
        out = tuple((m + b + a - d * (k - 1) - 1) // s + 1 for m, b, a, d, k, s in zip(
            size, pad, pad if after is None else after, dilate, kernel, stride))
        if min(out) >= 1:
            count -= 1
            yield n, c, size, kernel, stride, dilate, pad, after, out


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("filters", [None, 4, 300])
def test_columns_gathered_in_one_pass_are_numpys(dtype, filters, monkeypatch):
    # per sample, as the block and channels-last (left to NumPy): padding, cropping,
    # strides and dilations; the kernel writes every place of the columns
    rng = np.random.default_rng(3)
    gathered = []
    monkeypatch.setattr(_fast_conv, "gather_cols",
                        lambda *a, run=_fast_conv.gather_cols: gathered.append(run(*a)) or
                        gathered[-1])
    for n, c, size, kernel, stride, dilate, pad, after, out in _geometries(60, filters or 1):
        x = rng.standard_normal((n, c) + size).astype(dtype)
        args = (np, x, kernel, stride, dilate, pad, 1, out, after, filters)
        with monkeypatch.context() as m:
            m.setattr(_fast, "kernels", lambda: None)
            want = _conv_kernels.build_cols(*args)
        np.testing.assert_array_equal(_conv_kernels.build_cols(*args), want)
    assert sum(gathered) >= 40


@needs_numba
@pytest.mark.parametrize("threads", [1, 2])
def test_convolution_by_samples_and_blocked_stem_gather_numpys_columns(threads, monkeypatch):
    # by parts of the batch each part gathers its samples' place of the whole columns;
    # a blocked strided convolution gathers each block of output rows straight from x
    rng = np.random.default_rng(4)
    cases = [((2, 32, 56, 56), (3, 3), (2, 2), (1, 1), (28, 28), 64),       # per sample
             ((4, 64, 9, 9), (3, 3), (2, 2), (1, 1), (5, 5), 256),          # the block
             ((3, 3, 40, 38), (7, 7), (2, 2), (3, 3), (20, 19), 8)]         # blocked
    monkeypatch.setattr(_conv_kernels, "BLOCK_COLS_BYTES", 4096)
    monkeypatch.setattr(engine, "PARALLEL_MIN_MACS", 0)
    ran = []
    for name in ("gather_cols", "cols_gatherer"):
        monkeypatch.setattr(_fast_conv, name, lambda *a, run=getattr(_fast_conv, name), name=name:
                            ran.append(name) or run(*a))
    prev = engine.set_num_threads(threads)
    try:
        for shape, kernel, stride, pad, out, f in cases:
            x = rng.standard_normal(shape).astype(np.float32)
            w = rng.standard_normal((f, shape[1]) + kernel).astype(np.float32)
            args = (np, x, w, kernel, stride, (1, 1), pad, 1, out)
            y, cols = _conv_kernels.correlate(*args, need_cols=True)
            with monkeypatch.context() as m:
                m.setattr(_fast, "kernels", lambda: None)
                y0, cols0 = _conv_kernels.correlate(*args, need_cols=True)
            np.testing.assert_array_equal(y, y0)
            assert (cols is None) == (cols0 is None)
            if cols is not None:
                np.testing.assert_array_equal(cols, cols0)
        assert ran.count("gather_cols") >= 2 and "cols_gatherer" in ran
    finally:
        engine.set_num_threads(prev)
