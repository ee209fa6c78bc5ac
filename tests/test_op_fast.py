"""The optional numba kernels (extra ``fast``): Winograd F(2x2, 3x3) convolutions and
2-D max pooling.

The NumPy convolution and pooling tests run with and without them (the
``fast_kernels`` fixture); here: where they run, Winograd's float32 round-off next
to the direct path's, pooling's values bit for bit, and the switch that turns them
off."""
import os
import subprocess
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite.operator.nn import _fast
from mxlite.operator.nn.convolution import conv_nd

NUMBA_MISSING = _fast.kernels() is None
if NUMBA_MISSING and os.environ.get("MXLITE_REQUIRE_NUMBA") == "1":
    raise RuntimeError("MXLITE_REQUIRE_NUMBA=1 but numba (the extra 'fast') is not installed "
                       "or MXLITE_NUMBA=0 turned it off")
needs_numba = pytest.mark.skipif(NUMBA_MISSING, reason="numba (the extra 'fast') is not installed")


def _direct(x, w, pad):
    return conv_nd(np, x, w, (3, 3), (1, 1), (1, 1), pad, 1, need_cols=True)[0]


@needs_numba
@pytest.mark.parametrize("n,c,f,size,pad", [
    (2, 32, 32, 20, (1, 1)), (1, 64, 48, 14, (1, 1)), (8, 128, 128, 7, (1, 1)),
    (4, 16, 24, 9, (0, 2)), (3, 8, 8, 11, (2, 0))])
def test_winograd_float32_round_off_is_the_direct_paths(n, c, f, size, pad, monkeypatch):
    # against float64: no larger than im2col's own float32 error (measured 0.4 to 1.2x)
    monkeypatch.setattr(_fast, "MIN_TILES", 0)
    rng = np.random.default_rng(size)
    x = np.maximum(rng.standard_normal((n, c, size, size)), 0).astype(np.float32)
    w = (rng.standard_normal((f, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    out = tuple(size + 2 * q - 2 for q in pad)
    y = _fast.conv3x3(x, w, (1, 1), (1, 1), pad, 1, out)
    ref = _direct(x.astype(np.float64), w.astype(np.float64), pad)
    direct = _direct(x, w, pad)
    assert y.dtype == np.float32 and y.shape == ref.shape
    assert np.abs(y - ref).max() <= 2 * np.abs(direct - ref).max()


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_inference_convolution_runs_winograd_and_recorded_one_keeps_columns(dtype):
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.standard_normal((2, 16, 24, 24)), dtype=dtype)
    w = mx.nd.array(rng.standard_normal((8, 16, 3, 3)), dtype=dtype)
    kw = dict(kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)
    assert _fast.conv3x3(x.asnumpy(), w.asnumpy(), (1, 1), (1, 1), (1, 1), 1, (24, 24)) \
        is not None
    y = mx.nd.Convolution(x, w, **kw)
    with mx.autograd.record():
        yr = mx.nd.Convolution(x, w, **kw)      # the direct path, keeping its columns
    np.testing.assert_allclose(y.asnumpy(), yr.asnumpy(),
                               rtol=1e-4 if dtype == np.float32 else 1e-12, atol=1e-4)
    assert y.dtype == dtype


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
@pytest.mark.parametrize("shape, kernel, stride, pad", [
    ((2, 8, 15, 16), (3, 3), (2, 2), (1, 1)), ((1, 3, 9, 7), (3, 2), (1, 2), (0, 1))])
def test_max_pool_kernels_give_numpys_values_bit_for_bit(shape, kernel, stride, pad, dtype,
                                                          monkeypatch):
    rng = np.random.default_rng(3)
    x = (rng.integers(0, 5, shape) + rng.standard_normal(shape) * (rng.random(shape) < 0.5))
    x.reshape(-1)[::37] = np.nan
    gy = rng.standard_normal(mx.nd.Pooling(mx.nd.array(x), kernel=kernel, stride=stride,
                                           pad=pad).shape)

    def run():
        xn = mx.nd.array(x, dtype=dtype)
        xn.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Pooling(xn, kernel=kernel, stride=stride, pad=pad, pool_type="max")
        y.backward(mx.nd.array(gy, dtype=dtype))
        return y.asnumpy(), xn.grad.asnumpy()

    fast = run()
    assert _fast.max_pool2d(x.astype(dtype), kernel, stride, pad, fast[0].shape[2:]) is not None
    monkeypatch.setattr(_fast, "kernels", lambda: None)
    for got, want in zip(fast, run()):
        np.testing.assert_array_equal(got, want)


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
