"""Neural-network ops: forward against NumPy, float64 numeric gradients, modes
(Dropout, BatchNorm), weight shape inference, second-order gradients (gradient
penalties through FullyConnected and Convolution) and error messages."""
import itertools

import numpy as np
import pytest

import mxlite as mx
from mxlite.operator.nn import _conv_kernels
from mxlite.base import MXNetError
from optable import case as _case, central_difference, row_tests

RNG = np.random.default_rng(7)


def _nd(a):
    return mx.nd.array(a, dtype=a.dtype)


# -- helpers ------------------------------------------------------------------------

def check_grad(fn, arrays, wrt, train=True, rtol=1e-5, atol=1e-7, directions=3):
    """Autograd gradients of ``sum(fn(*x) * head)`` against float64 central differences
    along random directions, for each input index in ``wrt``."""
    arrays = [np.asarray(a, dtype=np.float64) for a in arrays]
    xs = [_nd(a) for a in arrays]
    for i in wrt:
        xs[i].attach_grad()
    with mx.autograd.record(train_mode=train):
        out = fn(*xs)
    head = RNG.standard_normal(out.shape)
    out.backward(_nd(head), train_mode=train)

    def f(arrs):
        scope = mx.autograd.train_mode() if train else mx.autograd.predict_mode()
        with scope:
            return float((fn(*[_nd(a) for a in arrs]).asnumpy() * head).sum())

    for i in wrt:
        g = xs[i].grad.asnumpy()
        for _ in range(directions):
            v = RNG.standard_normal(arrays[i].shape)
            np.testing.assert_allclose((g * v).sum(), central_difference(f, arrays, i, v),
                                       rtol=rtol, atol=atol, err_msg="input %d" % i)


def _pad(x, pad):
    return np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad])


def np_conv(x, w, b, stride, dilate, pad, groups):
    """Reference convolution: one einsum per kernel offset, written independently."""
    xpad = _pad(x, pad)
    nsp = x.ndim - 2
    kernel = w.shape[2:]
    out = [(xpad.shape[2 + i] - dilate[i] * (kernel[i] - 1) - 1) // stride[i] + 1
           for i in range(nsp)]
    f, cg = w.shape[:2]
    fg = f // groups
    y = np.zeros((x.shape[0], f) + tuple(out))
    for off in itertools.product(*[range(k) for k in kernel]):
        sl = tuple(slice(o * d, o * d + s * (m - 1) + 1, s)
                   for o, d, s, m in zip(off, dilate, stride, out))
        patch = xpad[(slice(None), slice(None)) + sl]
        for g in range(groups):
            wg = w[(slice(g * fg, (g + 1) * fg), slice(None)) + off]
            y[:, g * fg:(g + 1) * fg] += np.einsum("nc...,fc->nf...",
                                                   patch[:, g * cg:(g + 1) * cg], wg)
    if b is not None:
        y += b.reshape((1, -1) + (1,) * nsp)
    return y


def np_pool(x, kernel, stride, pad, kind):
    nsp = len(kernel)
    fill = -np.inf if kind == "max" else 0.0
    xpad = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad], constant_values=fill)
    out = [(xpad.shape[2 + i] - kernel[i]) // stride[i] + 1 for i in range(nsp)]
    y = np.full(x.shape[:2] + tuple(out), fill)
    for off in itertools.product(*[range(k) for k in kernel]):
        sl = tuple(slice(o, o + s * (m - 1) + 1, s) for o, s, m in zip(off, stride, out))
        patch = xpad[(slice(None), slice(None)) + sl]
        y = np.maximum(y, patch) if kind == "max" else y + patch
    if kind == "avg":
        y = y / np.prod(kernel)
    return y


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _rand(*shape):
    return RNG.standard_normal(shape)


# -- forward against NumPy ---------------------------------------------------------------

CONV_ROWS = [  # data shape, kernel, stride, dilate, pad, num_filter, num_group
    ((2, 3, 7), (3,), (2,), (1,), (1,), 4, 1),
    ((2, 4, 6, 5), (3, 3), (1, 2), (1, 1), (1, 0), 6, 2),
    ((1, 3, 7, 7), (3, 2), (2, 2), (2, 2), (1, 1), 3, 3),
    ((1, 2, 4, 5, 4), (2, 3, 2), (1, 2, 1), (1, 1, 1), (0, 1, 1), 2, 1),
    # many channels, few positions: one product over all rows (and row2im for deconv)
    ((2, 8, 5, 5), (3, 3), (1, 1), (1, 1), (1, 1), 5, 1),
    ((2, 9, 6, 7), (3, 2), (2, 1), (1, 2), (1, 0), 4, 1),
    ((1, 8, 5), (3,), (2,), (1,), (1,), 3, 1),
    ((1, 8, 3, 4, 3), (2, 2, 2), (1, 1, 2), (1, 1, 1), (0, 1, 1), 2, 1),
    # 1x1: plain products (strided: every other position; deconv with adj 1 and 0)
    ((2, 6, 4, 5), (1, 1), (1, 1), (1, 1), (0, 0), 3, 1),
    ((2, 5, 6, 7), (1, 1), (2, 2), (1, 1), (0, 0), 4, 1),
    # stride 1: deconv as the correlation with flipped weights (grouped and dilated;
    # a pad beyond the dilated kernel crops)
    ((2, 4, 8, 8), (3, 3), (1, 1), (2, 2), (2, 2), 6, 2),
    ((1, 3, 6, 6), (3, 3), (1, 1), (1, 1), (3, 3), 4, 1),
    # strided, few channels: per sample, by blocks of output rows from the stride's
    # phases (as ResNet's 7x7 stem; odd sizes, a stride of 3, uneven strides and pads)
    ((2, 3, 11, 13), (7, 7), (2, 2), (1, 1), (3, 3), 5, 1),
    ((1, 2, 10, 9), (3, 2), (3, 2), (1, 1), (2, 1), 3, 1),
    ((2, 3, 7, 8), (5, 3), (2, 1), (1, 1), (2, 0), 4, 1),
]


@pytest.mark.parametrize("row", CONV_ROWS, ids=lambda r: "conv%dd_g%d_c%d" % (len(r[1]), r[6],
                                                                             r[0][1]))
@pytest.mark.parametrize("cols", ["block", "block_flipped", "rows", "per_sample"])
def test_convolution_forward_and_grad(row, cols, monkeypatch, fast_kernels):
    # the columns as one block (its weight gradient flipped: (cols @ gy^T)^T, as with
    # few filters), channels-last (one row per output position), or per sample, as on
    # large maps, with 1x1 convolutions as per-sample products (see _conv_kernels)
    per_sample = cols == "per_sample"
    monkeypatch.setattr(_conv_kernels, "PER_SAMPLE_POSITIONS", 1 if per_sample else 1 << 62)
    monkeypatch.setattr(_conv_kernels, "PER_SAMPLE_MAX_INNER", 1 << 62 if per_sample else 0)
    monkeypatch.setattr(_conv_kernels, "WEIGHT_GRAD_FLIP_FILTERS",
                        1 << 62 if cols == "block_flipped" else 0)
    monkeypatch.setattr(_conv_kernels, "ROWS_MIN_CHANNELS", 1)
    monkeypatch.setattr(_conv_kernels, "ROWS_MAX_FILTERS", 1 << 62 if cols == "rows" else 0)
    monkeypatch.setattr(_conv_kernels, "POINTWISE_BLOCK_POSITIONS", 0 if per_sample else 1 << 62)
    shape, kernel, stride, dilate, pad, nf, ng = row
    x = _rand(*shape)
    w = _rand(nf, shape[1] // ng, *kernel)
    b = _rand(nf)
    kw = dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad, num_filter=nf, num_group=ng)
    y = mx.nd.Convolution(_nd(x), _nd(w), _nd(b), **kw).asnumpy()
    np.testing.assert_allclose(y, np_conv(x, w, b, stride, dilate, pad, ng), rtol=1e-10)
    check_grad(lambda *a: mx.nd.Convolution(*a, **kw), [x, w, b], [0, 1, 2])


@pytest.mark.parametrize("row", CONV_ROWS, ids=lambda r: "deconv%dd_g%d_c%d" % (len(r[1]), r[6],
                                                                               r[0][1]))
def test_deconvolution_is_the_adjoint_of_convolution(row, fast_kernels):
    shape, kernel, stride, dilate, pad, nf, ng = row
    x = _rand(*shape)
    w = _rand(nf, shape[1] // ng, *kernel)
    kw = dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad, num_group=ng, no_bias=True)
    z = mx.nd.Convolution(_nd(x), _nd(w), num_filter=nf, **kw).asnumpy()
    u = _rand(*z.shape)
    # <conv(x), u> == <x, deconv(u)> with adj chosen to give back x's shape
    out = z.shape[2:]
    adj = tuple(n + 2 * q - ((o - 1) * s + d * (k - 1) + 1)
                for n, o, k, s, d, q in zip(shape[2:], out, kernel, stride, dilate, pad))
    v = mx.nd.Deconvolution(_nd(u), _nd(w), num_filter=shape[1], adj=adj, **kw).asnumpy()
    assert v.shape == x.shape
    np.testing.assert_allclose((z * u).sum(), (x * v).sum(), rtol=1e-10)
    check_grad(lambda *a: mx.nd.Deconvolution(*a, num_filter=shape[1], adj=adj, **kw),
               [u, w], [0, 1])


def test_deconvolution_bias_target_shape_and_default_no_bias():
    x, w, b = _rand(1, 2, 3, 3), _rand(2, 3, 3, 3), _rand(3)
    y = mx.nd.Deconvolution(_nd(x), _nd(w), _nd(b), kernel=(3, 3), stride=(2, 2),
                            num_filter=3, no_bias=False, target_shape=(6, 6))
    assert y.shape == (1, 3, 6, 6)
    check_grad(lambda *a: mx.nd.Deconvolution(*a, kernel=(3, 3), stride=(2, 2), num_filter=3,
                                              no_bias=False, target_shape=(6, 6)),
               [x, w, b], [0, 1, 2])
    with pytest.raises(TypeError, match="takes 2 input"):
        mx.nd.Deconvolution(_nd(x), _nd(w), _nd(b), kernel=(3, 3), num_filter=3)


@pytest.mark.parametrize("flatten", [True, False])
def test_fully_connected(flatten):
    x, w, b = _rand(2, 3, 4), _rand(5, 12 if flatten else 4), _rand(5)
    kw = dict(num_hidden=5, flatten=flatten)
    y = mx.nd.FullyConnected(_nd(x), _nd(w), _nd(b), **kw).asnumpy()
    want = (x.reshape(2, -1) if flatten else x) @ w.T + b
    np.testing.assert_allclose(y, want, rtol=1e-12)
    check_grad(lambda *a: mx.nd.FullyConnected(*a, **kw), [x, w, b], [0, 1, 2])
    check_grad(lambda *a: mx.nd.FullyConnected(*a, no_bias=True, **kw), [x, w], [0, 1])


@pytest.mark.parametrize("rows,in_units,out_units", [(4, 300, 64), (16, 256, 8), (1, 300, 64)])
def test_fully_connected_either_gemm_orientation(rows, in_units, out_units):
    # A few rows against a wide weight run as (w @ x.T).T (faster with OpenBLAS): the
    # same numbers as x @ w.T up to float32 rounding, in a row-major array.
    from mxlite.operator.nn.fully_connected import flips
    assert flips(np, rows, in_units, out_units) == (rows == 4)
    rng = np.random.RandomState(0)
    x, w, b = (rng.randn(*s).astype(np.float32)
               for s in ((rows, in_units), (out_units, in_units), (out_units,)))
    y = mx.nd.FullyConnected(_nd(x), _nd(w), _nd(b), num_hidden=out_units)
    assert y.shape == (rows, out_units) and y._data.flags.c_contiguous
    want = x.astype(np.float64) @ w.T.astype(np.float64) + b
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-4, atol=1e-4)


POOL_ROWS = [  # shape, kernel, stride, pad, pool_type
    ((2, 2, 7), (3,), (2,), (1,), "max"),
    ((1, 2, 6, 7), (3, 3), (2, 2), (1, 1), "max"),
    ((1, 2, 6, 7), (3, 2), (2, 1), (1, 0), "avg"),
    ((1, 2, 6, 7), (2, 2), (2, 2), (0, 0), "sum"),
    ((1, 1, 4, 4, 4), (2, 2, 2), (2, 2, 2), (0, 0, 0), "avg"),
]


@pytest.mark.parametrize("row", POOL_ROWS, ids=lambda r: "%s%dd" % (r[4], len(r[1])))
def test_pooling(row, fast_kernels):
    shape, kernel, stride, pad, kind = row
    x = _rand(*shape)
    kw = dict(kernel=kernel, stride=stride, pad=pad, pool_type=kind)
    y = mx.nd.Pooling(_nd(x), **kw).asnumpy()
    want = np_pool(x, kernel, stride, pad, "sum" if kind == "sum" else kind)
    np.testing.assert_allclose(y, want, rtol=1e-12)
    check_grad(lambda a: mx.nd.Pooling(a, **kw), [x], [0])


def test_pooling_lp_global_and_full():
    x = _rand(1, 2, 5, 5)
    y = mx.nd.Pooling(_nd(x), kernel=(2, 2), stride=(2, 2), pool_type="lp", p_value=2)
    want = np.sqrt(np_pool(x * x, (2, 2), (2, 2), (0, 0), "sum"))
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-12)
    check_grad(lambda a: mx.nd.Pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="lp",
                                       p_value=2), [x], [0])
    g = mx.nd.Pooling(_nd(x), kernel=(1, 1), global_pool=True, pool_type="avg")
    np.testing.assert_allclose(g.asnumpy(), x.mean(axis=(2, 3), keepdims=True), rtol=1e-12)
    full = mx.nd.Pooling(_nd(x), kernel=(2, 2), stride=(2, 2), pooling_convention="full")
    assert full.shape == (1, 2, 3, 3)
    np.testing.assert_allclose(full.asnumpy()[..., -1, -1], x[..., -1, -1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("kind", ["avg", "sum"])
@pytest.mark.parametrize("shape", [(1, 2048, 7, 7), (3, 5, 13, 11), (2, 3, 9), (2, 2, 3, 4, 5),
                                   (2, 4, 1, 1)])
def test_global_pooling_is_the_whole_map_window_bit_for_bit(shape, kind, dtype):
    """A global pooling (each map summed as one row) gives the values of the pooling
    whose one window is the whole map, bit for bit; so does one of a transposed view."""
    rng = np.random.RandomState(3)
    for scale in (1e-3, 1.0, 1e3):
        x = (rng.randn(*shape) * scale).astype(dtype)
        want = mx.nd.Pooling(mx.nd.array(x, dtype=dtype), kernel=shape[2:],
                             pool_type=kind).asnumpy()
        got = mx.nd.Pooling(mx.nd.array(x, dtype=dtype), kernel=(1,) * (len(shape) - 2),
                            global_pool=True, pool_type=kind).asnumpy()
        assert got.dtype == want.dtype == dtype and got.shape == want.shape
        assert np.array_equal(got.view(np.uint8), want.view(np.uint8))
    op = mx.operator.get_op("Pooling")
    p = op.parse_params(dict(kernel=(1,) * (len(shape) - 2), global_pool=True, pool_type=kind))
    xt = np.ascontiguousarray(np.swapaxes(x, 0, 1)).swapaxes(0, 1)     # not C-contiguous
    assert np.array_equal(op.compute(p, np, xt)[0], want)


@pytest.mark.parametrize("shape, kernel", [((2, 3, 9, 7), (2, 2)), ((2, 3, 8), (2,)),
                                           ((1, 2, 6, 6, 6), (2, 3, 2)), ((2, 2, 6, 6), (3, 3))])
@pytest.mark.parametrize("data", ["distinct", "ties", "nan", "inf_head"])
def test_max_pooling_gradient_of_tiling_windows_goes_to_the_first_maximum(shape, kernel, data):
    # Windows that tile the input take a fast path; ties, NaNs and infinite head
    # gradients fall back to the general one. Both route each window's gradient to
    # its first maximum.
    got, want = _max_pooling_gradient(shape, kernel, kernel, (0,) * len(kernel), data, seed=0)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shape, kernel, stride, pad", [
    ((2, 3, 9, 7), (3, 3), (2, 2), (1, 1)),         # ResNet's stem pool, odd sizes
    ((2, 3, 8), (3,), (2,), (1,)),
    ((1, 2, 7, 6, 5), (2, 3, 2), (2, 2, 1), (1, 1, 0)),
    ((2, 2, 6, 6), (3, 3), (1, 1), (1, 1)),
    ((2, 2, 7, 8), (3, 2), (2, 3), (0, 1))])
@pytest.mark.parametrize("data", ["distinct", "ties", "nan", "inf_head"])
def test_max_pooling_gradient_of_overlapping_windows_goes_to_the_first_maximum(
        shape, kernel, stride, pad, data, fast_kernels):
    # Overlapping, padded, strided windows (the general path): each window's
    # gradient goes to its first maximum in row-major order, or its first NaN.
    got, want = _max_pooling_gradient(shape, kernel, stride, pad, data, seed=1)
    # (a position that is several windows' maximum sums their gradients in some order)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _max_pooling_gradient(shape, kernel, stride, pad, data, seed):
    """Max pooling's input gradient from mxlite, and the reference: each window's head
    gradient added at its first maximum in row-major order (or its first NaN)."""
    rng = np.random.RandomState(seed)
    x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float32)
    if data == "ties":
        x = (x % 3).astype(np.float32)
    elif data == "nan":
        x.reshape(-1)[::7] = np.nan
    xn = mx.nd.array(x)
    xn.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(xn, kernel=kernel, stride=stride, pad=pad)
    gy = rng.uniform(1, 2, y.shape).astype(np.float32)
    if data == "inf_head":      # 0 * inf must not leak NaN into the other positions
        gy.reshape(-1)[::5] = np.inf
    y.backward(mx.nd.array(gy))
    xp_ = np.pad(x, [(0, 0)] * 2 + [(q, q + k) for q, k in zip(pad, kernel)],
                 constant_values=-np.inf)
    want = np.zeros_like(xp_)
    for idx in np.ndindex(*y.shape):
        n, c, o = idx[0], idx[1], idx[2:]
        corner = tuple(i * s for i, s in zip(o, stride))
        flat = xp_[(n, c) + tuple(slice(a, a + k) for a, k in zip(corner, kernel))].reshape(-1)
        first = int(np.argmax(np.isnan(flat))) if np.isnan(flat).any() else int(np.argmax(flat))
        off = np.unravel_index(first, kernel)
        want[(n, c) + tuple(a + b for a, b in zip(corner, off))] += gy[idx]
    want = want[(slice(None),) * 2 + tuple(slice(q, q + m) for q, m in zip(pad, shape[2:]))]
    assert want.shape == x.shape and len(kernel) == x.ndim - 2
    return xn.grad.asnumpy(), want


def test_max_pooling_second_order():
    # gx = scatter(gy) is linear in gy: d/d(gy) of <gx, v> is v gathered at the maxima
    x = _nd(_rand(1, 1, 4, 4))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(x, kernel=(2, 2), stride=(2, 2))
        g = mx.autograd.grad((y * y).sum(), [x], create_graph=True)[0]
        pen = (g * g).sum()
    pen.backward()
    xv = x.asnumpy()
    # g = 2y at the argmax, so pen = sum 4 y^2 and d pen / dx = 8 y at the argmax
    want = (xv == np.repeat(np.repeat(y.asnumpy(), 2, 2), 2, 3)) * 8 * xv
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6)


# -- activations and softmax ------------------------------------------------------------------

def _np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


ACT_ROWS = [
    ("relu", lambda x: np.maximum(x, 0)),
    ("sigmoid", _np_sigmoid),
    ("tanh", np.tanh),
    ("softrelu", lambda x: np.log1p(np.exp(x))),
    ("softsign", lambda x: x / (1 + np.abs(x))),
    ("log_sigmoid", lambda x: np.log(_np_sigmoid(x))),
    ("mish", lambda x: x * np.tanh(np.log1p(np.exp(x)))),
]


@pytest.mark.parametrize("act,ref", ACT_ROWS, ids=[r[0] for r in ACT_ROWS])
def test_activation(act, ref):
    x = _rand(3, 4) + 0.05      # keep relu's kink away from 0
    np.testing.assert_allclose(mx.nd.Activation(_nd(x), act_type=act).asnumpy(), ref(x),
                               rtol=1e-12, atol=1e-14)
    check_grad(lambda a: mx.nd.Activation(a, act_type=act), [x], [0])


_SA, _SL = 1.6732632423543772, 1.0507009873554805
LEAKY_ROWS = [
    ({"act_type": "leaky", "slope": 0.1}, lambda x: np.where(x > 0, x, 0.1 * x)),
    ({"act_type": "elu", "slope": 0.7}, lambda x: np.where(x > 0, x, 0.7 * np.expm1(x))),
    ({"act_type": "selu"}, lambda x: _SL * np.where(x > 0, x, _SA * np.expm1(x))),
    ({"act_type": "gelu"}, lambda x: x * 0.5 * (1 + np.vectorize(__import__("math").erf)(
        x / np.sqrt(2)))),
]


@pytest.mark.parametrize("kw,ref", LEAKY_ROWS, ids=[r[0]["act_type"] for r in LEAKY_ROWS])
def test_leaky_relu(kw, ref):
    x = _rand(3, 4)
    np.testing.assert_allclose(mx.nd.LeakyReLU(_nd(x), **kw).asnumpy(), ref(x), rtol=1e-7)
    check_grad(lambda a: mx.nd.LeakyReLU(a, **kw), [x], [0])


def test_prelu_and_rrelu():
    x, gamma = _rand(2, 3, 4), np.array([0.1, 0.2, 0.3])
    y = mx.nd.LeakyReLU(_nd(x), _nd(gamma), act_type="prelu").asnumpy()
    np.testing.assert_allclose(y, np.where(x > 0, x, x * gamma.reshape(1, 3, 1)))
    check_grad(lambda a, g: mx.nd.LeakyReLU(a, g, act_type="prelu"), [x, gamma], [0, 1])
    kw = dict(act_type="rrelu", lower_bound=0.1, upper_bound=0.3)
    y, mask = mx.nd.LeakyReLU(_nd(x), **kw)
    np.testing.assert_allclose(y.asnumpy(), np.where(x > 0, x, 0.2 * x))
    # predict mode: the gradient of the mean-slope function (MXNet 1.9.1 gets this wrong)
    check_grad(lambda a: mx.nd.LeakyReLU(a, **kw)[0], [x], [0], train=False)
    with mx.autograd.train_mode():
        y, mask = mx.nd.LeakyReLU(_nd(x), **kw)
    m = mask.asnumpy()
    assert (m >= 0.1).all() and (m <= 0.3).all() and m.std() > 0
    np.testing.assert_allclose(y.asnumpy(), np.where(x > 0, x, x * m))


@pytest.mark.parametrize("op,axis,temp", [("softmax", -1, None), ("softmax", 0, 2.0),
                                          ("log_softmax", 1, 0.5), ("softmin", 1, None)])
def test_softmax_family(op, axis, temp):
    x = _rand(3, 4)
    kw = {"axis": axis} if temp is None else {"axis": axis, "temperature": temp}
    z = x / (temp or 1.0)
    want = {"softmax": np_softmax(z, axis), "softmin": np_softmax(-z, axis),
            "log_softmax": np.log(np_softmax(z, axis))}[op]
    np.testing.assert_allclose(getattr(mx.nd, op)(_nd(x), **kw).asnumpy(), want, rtol=1e-12)
    check_grad(lambda a: getattr(mx.nd, op)(a, **kw), [x], [0])


def test_softmax_is_stable_and_masks_by_length():
    big = mx.nd.array([[1000.0, 1001.0, -1e30]])
    np.testing.assert_allclose(mx.nd.softmax(big).asnumpy(), [[0.26894142, 0.73105858, 0]],
                               rtol=1e-6)
    x = _rand(2, 4)
    length = np.array([2.0, 3.0])
    y = mx.nd.softmax(_nd(x), _nd(length), use_length=True).asnumpy()
    np.testing.assert_allclose(y[0, :2], np_softmax(x[0, :2], 0), rtol=1e-12)
    assert (y[0, 2:] == 0).all() and y[1, 3] == 0
    check_grad(lambda a: mx.nd.softmax(a, _nd(length), use_length=True), [x], [0])


def test_softmax_activation_modes():
    # MXNet 1.9.1's kernel: 'instance' is the softmax over the last axis (its docs say
    # "all but the first"; the numbers say the last); a 1-D input is one instance.
    one = mx.nd.SoftmaxActivation(mx.nd.array([1.0, 2, 3])).asnumpy()
    np.testing.assert_allclose(one, [0.09003057, 0.24472848, 0.66524094], rtol=1e-6)
    x = _rand(2, 3, 2)
    inst = mx.nd.SoftmaxActivation(_nd(x)).asnumpy()
    np.testing.assert_allclose(inst, np_softmax(x, -1))
    chan = mx.nd.SoftmaxActivation(_nd(x), mode="channel").asnumpy()
    np.testing.assert_allclose(chan, np_softmax(x, 1))
    check_grad(lambda a: mx.nd.SoftmaxActivation(a), [x], [0])
    check_grad(lambda a: mx.nd.SoftmaxActivation(a, mode="channel"), [x], [0])
    with pytest.raises(mx.MXNetError, match="at least 3 dims for mode='channel'"):
        mx.nd.SoftmaxActivation(mx.nd.ones((2, 3)), mode="channel")


# -- normalisation ------------------------------------------------------------------------------

def _bn_inputs(c=3):
    return [_rand(4, c, 2, 3), _rand(c), _rand(c), _rand(c), np.abs(_rand(c)) + 0.5]


def test_batchnorm_training_updates_moving_stats_predict_does_not():
    x, gamma, beta, mm, mv = _bn_inputs()
    arrs = [_nd(a) for a in (x, gamma, beta, mm, mv)]
    kw = dict(fix_gamma=False, momentum=0.8, eps=1e-5)
    mx.nd.BatchNorm(*arrs, **kw)                              # predict mode
    np.testing.assert_array_equal(arrs[3].asnumpy(), mm)
    np.testing.assert_array_equal(arrs[4].asnumpy(), mv)
    with mx.autograd.train_mode():
        y = mx.nd.BatchNorm(*arrs, **kw).asnumpy()
    axes = (0, 2, 3)
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    np.testing.assert_allclose(arrs[3].asnumpy(), 0.8 * mm + 0.2 * mean, rtol=1e-12)
    np.testing.assert_allclose(arrs[4].asnumpy(), 0.8 * mv + 0.2 * var, rtol=1e-12)
    sh = (1, -1, 1, 1)
    want = (x - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + 1e-5) * gamma.reshape(sh) \
        + beta.reshape(sh)
    np.testing.assert_allclose(y, want, rtol=1e-10)


@pytest.mark.parametrize("kw", [dict(fix_gamma=False), dict(fix_gamma=True),
                                dict(fix_gamma=False, axis=-1)])
def test_batchnorm_gradients(kw, fast_kernels):
    x, gamma, beta, mm, mv = _bn_inputs()
    if kw.get("axis") == -1:
        gamma, beta, mm, mv = [np.resize(a, 3) for a in (gamma, beta, mm, mv)]
        x = _rand(2, 2, 3)
    check_grad(lambda *a: mx.nd.BatchNorm(*a, **kw), [x, gamma, beta, mm, mv], [0, 1, 2])
    # predict mode: statistics are constants
    check_grad(lambda *a: mx.nd.BatchNorm(*a, **kw), [x, gamma, beta, mm, mv], [0, 1, 2],
               train=False)


def test_layer_instance_group_l2_norm():
    x, g3, b3 = _rand(2, 3, 4), _rand(3), _rand(3)
    mean = x.mean(axis=1, keepdims=True)
    std = np.sqrt(x.var(axis=1, keepdims=True) + 1e-3)
    out, m, s = mx.nd.LayerNorm(_nd(x), _nd(g3), _nd(b3),
                                axis=1, eps=1e-3, output_mean_var=True)
    np.testing.assert_allclose(out.asnumpy(), (x - mean) / std * g3.reshape(1, 3, 1)
                               + b3.reshape(1, 3, 1), rtol=1e-10)
    np.testing.assert_allclose(m.asnumpy(), mean)
    np.testing.assert_allclose(s.asnumpy(), std)
    check_grad(lambda *a: mx.nd.LayerNorm(*a, axis=1), [x, g3, b3], [0, 1, 2])
    check_grad(lambda *a: mx.nd.LayerNorm(*a, output_mean_var=True, axis=1)[2],
               [x, g3, b3], [0])
    inst = mx.nd.InstanceNorm(_nd(x), _nd(g3), _nd(b3), eps=1e-3).asnumpy()
    mu, sd = x.mean(axis=2, keepdims=True), np.sqrt(x.var(axis=2, keepdims=True) + 1e-3)
    np.testing.assert_allclose(inst, (x - mu) / sd * g3.reshape(1, 3, 1) + b3.reshape(1, 3, 1),
                               rtol=1e-10)
    check_grad(lambda *a: mx.nd.InstanceNorm(*a), [x, g3, b3], [0, 1, 2])
    x4, g2, b2 = _rand(2, 4, 3), _rand(2), _rand(2)
    gn = mx.nd.GroupNorm(_nd(x4), _nd(g2), _nd(b2), num_groups=2).asnumpy()
    xg = x4.reshape(2, 2, -1)
    ref = (xg - xg.mean(2, keepdims=True)) / np.sqrt(xg.var(2, keepdims=True) + 1e-5)
    ref = (ref * g2.reshape(1, 2, 1) + b2.reshape(1, 2, 1)).reshape(x4.shape)
    np.testing.assert_allclose(gn, ref, rtol=1e-10)
    check_grad(lambda *a: mx.nd.GroupNorm(*a, num_groups=2), [x4, g2, b2], [0, 1, 2])
    for mode, axes in (("instance", (1, 2)), ("channel", (1,)), ("spatial", (2,))):
        y = mx.nd.L2Normalization(_nd(x), mode=mode).asnumpy()
        np.testing.assert_allclose(y, x / np.sqrt((x * x).sum(axis=axes, keepdims=True) + 1e-10))
        check_grad(lambda a: mx.nd.L2Normalization(a, mode=mode), [x], [0])


# -- Dropout, Embedding, UpSampling -------------------------------------------------------------

def test_dropout_predict_is_identity_training_drops_and_scales():
    x = np.ones((200, 100))
    y = mx.nd.Dropout(_nd(x), p=0.3)
    np.testing.assert_array_equal(y.asnumpy(), x)
    xa = _nd(x)
    xa.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Dropout(xa, p=0.3)
    y.backward()
    v = y.asnumpy()
    kept = v != 0
    assert abs(kept.mean() - 0.7) < 0.01
    np.testing.assert_allclose(v[kept], 1 / 0.7)
    np.testing.assert_array_equal(xa.grad.asnumpy(), v)        # the same mask
    always = mx.nd.Dropout(_nd(x), p=0.5, mode="always").asnumpy()
    assert abs((always == 0).mean() - 0.5) < 0.01
    with mx.autograd.train_mode():
        shared = mx.nd.Dropout(_nd(np.ones((4, 50, 3))), p=0.5, axes=(1,)).asnumpy()
    assert (shared == shared[:, :1]).all() and 0 < (shared == 0).mean() < 1


def test_dropout_is_reproducible_under_seed():
    x = _nd(np.ones((10, 10)))
    with mx.autograd.train_mode():
        mx.random.seed(3)
        a = mx.nd.Dropout(x).asnumpy()
        mx.random.seed(3)
        b = mx.nd.Dropout(x).asnumpy()
    np.testing.assert_array_equal(a, b)


def test_embedding_accumulates_repeated_indices():
    w = _rand(5, 3)
    idx = np.array([[0.0, 2.0], [2.0, 4.0]])
    y = mx.nd.Embedding(_nd(idx), _nd(w), input_dim=5, output_dim=3)
    np.testing.assert_array_equal(y.asnumpy(), w[idx.astype(int)])
    wa = _nd(w)
    wa.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Embedding(_nd(idx), wa, input_dim=5, output_dim=3)
    y.backward(mx.nd.ones_like(y))
    np.testing.assert_array_equal(wa.grad.asnumpy()[:, 0], [1, 0, 2, 0, 1])


def test_upsampling_nearest():
    x = _rand(1, 2, 2, 3)
    y = mx.nd.UpSampling(_nd(x), scale=2, sample_type="nearest")
    np.testing.assert_array_equal(y.asnumpy(), x.repeat(2, 2).repeat(2, 3))
    check_grad(lambda a: mx.nd.UpSampling(a, scale=2, sample_type="nearest"), [x], [0])
    z = _rand(1, 1, 4, 6)
    both = mx.nd.UpSampling(_nd(x), _nd(z), scale=2, sample_type="nearest", num_args=2)
    assert both.shape == (1, 3, 4, 6)
    np.testing.assert_array_equal(both.asnumpy()[:, 2:], z)


# -- shape inference --------------------------------------------------------------------------

def _infer(name, shapes, **kwargs):
    op = mx.operator.get_op(name)
    return op.infer_shape(op.parse_params(kwargs), shapes)


def test_infer_shape_of_weights():
    ins, outs = _infer("FullyConnected", [(4, 3), None, None], num_hidden=5)
    assert ins == [(4, 3), (5, 3), (5,)] and outs == [(4, 5)]
    ins, _ = _infer("FullyConnected", [(4, 2, 3), None], num_hidden=5, no_bias=True,
                    flatten=False)
    assert ins == [(4, 2, 3), (5, 3)]
    ins, outs = _infer("Convolution", [(2, 4, 9, 9), None, None], kernel=(3, 3),
                       num_filter=6, num_group=2)
    assert ins[1:] == [(6, 2, 3, 3), (6,)] and outs == [(2, 6, 7, 7), (0,)]  # hidden: cols
    ins, outs = _infer("Deconvolution", [(2, 4, 5, 5), None], kernel=(3, 3), stride=(2, 2),
                       num_filter=6, num_group=2)
    assert ins[1] == (4, 3, 3, 3) and outs == [(2, 6, 11, 11)]
    ins, _ = _infer("BatchNorm", [(2, 5, 3), None, None, None, None])
    assert ins[1:] == [(5,)] * 4
    ins, _ = _infer("Embedding", [(7,), None], input_dim=10, output_dim=4)
    assert ins[1] == (10, 4)


# -- second-order gradients: gradient penalties --------------------------------------------------

def _penalty_weight_grad(loss_fn, x, params):
    """d/dW of sum((dL/dx)^2) by autograd (create_graph) for every param."""
    xa = _nd(x)
    xa.attach_grad()
    ps = [_nd(p) for p in params]
    for p in ps:
        p.attach_grad()
    with mx.autograd.record():
        loss = loss_fn(xa, *ps)
        g = mx.autograd.grad(loss, [xa], create_graph=True)[0]
        pen = (g ** 2).sum()
    pen.backward()
    return [p.grad.asnumpy() for p in ps], xa.grad.asnumpy()


def _penalty_value(loss_fn, x, params):
    xa = _nd(x)
    xa.attach_grad()
    with mx.autograd.record():
        loss = loss_fn(xa, *[_nd(p) for p in params])
    loss.backward()
    return float((xa.grad.asnumpy() ** 2).sum())


def _check_penalty(loss_fn, x, params):
    grads, gx = _penalty_weight_grad(loss_fn, x, params)
    for i, (p, g) in enumerate(zip(params, grads)):
        v = RNG.standard_normal(p.shape)
        num = central_difference(lambda arrs: _penalty_value(loss_fn, x, arrs), params, i, v)
        np.testing.assert_allclose((g * v).sum(), num, rtol=1e-5, atol=1e-8,
                                   err_msg="param %d" % i)
    v = RNG.standard_normal(x.shape)
    num = central_difference(lambda arrs: _penalty_value(loss_fn, arrs[0], params), [x], 0, v)
    np.testing.assert_allclose((gx * v).sum(), num, rtol=1e-5, atol=1e-8, err_msg="data")


def test_gradient_penalty_through_fully_connected():
    def loss(x, w, b):
        return mx.nd.tanh(mx.nd.FullyConnected(x, w, b, num_hidden=3)).sum()
    _check_penalty(loss, _rand(4, 5), [_rand(3, 5), _rand(3)])


@pytest.mark.parametrize("kw", [dict(kernel=(3, 3), pad=(1, 1), num_filter=3),
                                dict(kernel=(2, 3), stride=(2, 1), dilate=(1, 2),
                                     num_filter=4, num_group=2)])
def test_gradient_penalty_through_convolution(kw):
    def loss(x, w, b):
        return mx.nd.tanh(mx.nd.Convolution(x, w, b, **kw)).sum()
    x = _rand(2, 2, 5, 6)
    w = _rand(kw["num_filter"], 2 // kw.get("num_group", 1), *kw["kernel"])
    _check_penalty(loss, x, [w, _rand(kw["num_filter"])])


def test_gradient_penalty_through_deconvolution():
    def loss(x, w):
        return mx.nd.tanh(mx.nd.Deconvolution(x, w, kernel=(3, 3), stride=(2, 2),
                                              num_filter=2)).sum()
    _check_penalty(loss, _rand(1, 3, 3, 3), [_rand(3, 2, 3, 3)])


# -- errors -------------------------------------------------------------------------------------

ERROR_ROWS = [
    (lambda: mx.nd.FullyConnected(mx.nd.ones((4, 3)), mx.nd.ones((5, 4)), mx.nd.ones((5,)),
                                  num_hidden=5),
     r"FullyConnected: weight has shape \(5, 4\), expected \(5, 3\) for data of shape \(4, 3\) "
     r"and num_hidden=5"),
    (lambda: mx.nd.FullyConnected(mx.nd.ones((4, 3)), mx.nd.ones((5, 3)), mx.nd.ones((4,)),
                                  num_hidden=5),
     r"FullyConnected: bias has shape \(4,\), expected \(5,\)"),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 2, 5, 5)), mx.nd.ones((3, 2, 3)),
                               mx.nd.ones((3,)), kernel=(3,), num_filter=3),
     r"Convolution: kernel=\(3,\) has 1 dimension\(s\), expected 2"),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 2, 5, 5)), mx.nd.ones((3, 2, 7, 7)),
                               mx.nd.ones((3,)), kernel=(7, 7), num_filter=3),
     r"Convolution: kernel=\(7, 7\) \(dilated size 7\) is larger than the padded input"),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 2, 5, 5)), mx.nd.ones((4, 2, 3, 3)),
                               mx.nd.ones((3,)), kernel=(3, 3), num_filter=3),
     r"Convolution: weight has shape \(4, 2, 3, 3\), expected \(3, 2, 3, 3\)"),
    (lambda: mx.nd.Convolution(mx.nd.ones((1, 3, 5, 5)), mx.nd.ones((4, 1, 3, 3)),
                               kernel=(3, 3), num_filter=4, num_group=2, no_bias=True),
     r"Convolution: num_group=2 must divide the input channels \(3\)"),
    (lambda: _infer("FullyConnected", [(4, 3), (5, 4), None], num_hidden=5),
     r"FullyConnected: weight has shape \(5, 4\), expected \(5, 3\) for data of shape \(4, 3\)"),
    (lambda: _infer("Convolution", [(1, 2, 5, 5), (3, 2, 3, 3), None], kernel=(3, 3),
                    num_filter=4),
     r"Convolution: weight has shape \(3, 2, 3, 3\), expected \(4, 2, 3, 3\)"),
    (lambda: mx.nd.Pooling(mx.nd.ones((1, 1, 4, 4)), kernel=(2, 2), pool_type="median"),
     r"Pooling: pool_type must be one of max, avg, sum, lp; got 'median'"),
    (lambda: mx.nd.Activation(mx.nd.ones((2,)), act_type="swish"),
     r"Activation: act_type must be one of relu, sigmoid, tanh, softrelu, softsign.*; got 'swish'"),
    (lambda: mx.nd.BatchNorm(mx.nd.ones((2, 3)), mx.nd.ones((2,)), mx.nd.ones((3,)),
                             mx.nd.ones((3,)), mx.nd.ones((3,))),
     r"BatchNorm: gamma has shape \(2,\), expected \(3,\)"),
    (lambda: mx.nd.Embedding(mx.nd.ones((2,)), mx.nd.ones((4, 3)), input_dim=5, output_dim=3),
     r"Embedding: weight has shape \(4, 3\), expected \(5, 3\)"),
]


@pytest.mark.parametrize("call,msg", ERROR_ROWS, ids=range(len(ERROR_ROWS)))
def test_errors_name_op_argument_expected_and_actual(call, msg):
    with pytest.raises(MXNetError, match=msg):
        call()


# The fused backward ops (_backward_relu, _backward_log_softmax) carry their own
# gradient rules: the second order through them against differences of gradients.
_FUSED_BACKWARD_ROWS = [
    _case("relu_then_smooth", lambda x: mx.nd.Activation(x, act_type="relu") * mx.nd.sin(x), None,
          [np.random.RandomState(1).uniform(0.2, 1.5, (3, 4)) *
           np.where(np.random.RandomState(2).rand(3, 4) > 0.5, 1, -1)], op="Activation"),
    _case("log_softmax_axis_last", lambda x: mx.nd.log_softmax(x), None,
          [np.random.RandomState(3).randn(3, 5)]),
    _case("log_softmax_axis0_temperature", lambda x: mx.nd.log_softmax(x, axis=0, temperature=1.7),
          None, [np.random.RandomState(4).randn(4, 3)]),
    _case("softmax_cross_entropy_chain", lambda x: -mx.nd.pick(mx.nd.log_softmax(x),
                                                              mx.nd.array([0, 2, 1], dtype="float64")),
          None, [np.random.RandomState(5).randn(3, 4)], op="log_softmax"),
]


def _lrn_ref(x, nsize, alpha=1e-4, beta=0.75, knorm=2.0):
    # MXNet sums the channels [c - h, c + h], h = (nsize - 1) // 2, and divides alpha
    # by nsize (observed from MXNet 1.9.1 with nsize 1..5).
    h = (nsize - 1) // 2
    sq = x * x
    s = np.zeros_like(x)
    for c in range(x.shape[1]):
        s[:, c] = sq[:, max(0, c - h):c + h + 1].sum(axis=1)
    return x * (knorm + alpha / nsize * s) ** -beta


def test_lrn_matches_mxnet_values():
    # Output of mx.nd.LRN(mx.nd.arange(8).reshape((1, 2, 2, 2)), nsize=3) in MXNet 1.9.1.
    y = mx.nd.LRN(mx.nd.arange(8).reshape((1, 2, 2, 2)), nsize=3)
    np.testing.assert_allclose(y.asnumpy().ravel(), [0, 0.59441036, 1.1886128, 1.7825185,
                                                     2.3779385, 2.9720519, 3.5658383, 4.1592097],
                               rtol=1e-6)


def _bn_inference(x, g, b, mm, mv, eps=1e-3):
    c = (slice(None),) + (None,) * (x.ndim - 2)
    return (x - mm[c]) / np.sqrt(mv[c] + eps) * g[c] + b[c]


_LRN_X = np.random.RandomState(0).rand(2, 5, 3, 2) * 3
_BN_IN = [np.random.RandomState(8).rand(*s) + a for s, a in
          [((2, 3, 2, 2), 0), ((3,), 0.5), ((3,), 0), ((3,), 0), ((3,), 0.5)]]
SPECS = _FUSED_BACKWARD_ROWS + [
    _case("lrn_nsize%d" % n, lambda x, n=n: mx.nd.LRN(x, nsize=n, alpha=0.5, beta=0.75, knorm=1.5),
          lambda x, n=n: _lrn_ref(x, n, alpha=0.5, beta=0.75, knorm=1.5), [_LRN_X])
    for n in (1, 2, 3, 4, 5)] + [
    # one device, global statistics (in training as in inference): BatchNorm's formula
    _case("sync_batchnorm", lambda *x: mx.nd.contrib.SyncBatchNorm(
        *x, fix_gamma=False, eps=1e-3, use_global_stats=True),
          _bn_inference, _BN_IN, grad=(0, 1, 2), order=1),
]
globals().update(row_tests(SPECS))


def test_convolution_columns_kept_for_the_weight_gradient_are_dropped_after_backward(
        monkeypatch):
    import weakref
    from mxlite.operator.nn import convolution, _conv_kernels
    built = []
    build_cols = _conv_kernels.build_cols

    def counting_build_cols(*args, **kwargs):
        cols = build_cols(*args, **kwargs)
        built.append(weakref.ref(cols))
        return cols

    monkeypatch.setattr(_conv_kernels, "build_cols", counting_build_cols)
    x = mx.nd.array(_rand(2, 3, 6, 6).astype(np.float32))
    w = mx.nd.array(_rand(4, 3, 3, 3).astype(np.float32))
    w.attach_grad()
    held = convolution._COLS.held

    def weight_grad():
        del built[:]
        with mx.autograd.record():
            y = mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True)
        y.backward(mx.nd.ones_like(y))
        # the columns lived on the node (a hidden output), which the backward freed
        assert all(ref() is None for ref in built)
        return len(built), w.grad.asnumpy()

    n_built, g = weight_grad()
    assert n_built == 1                 # the backward took the forward's columns
    assert convolution._COLS.held == held      # their bytes went back to the budget
    monkeypatch.setattr(convolution._COLS, "MAX_BYTES", 0)
    n_rebuilt, g_rebuilt = weight_grad()
    assert n_rebuilt == 2               # nothing kept: the columns are built again
    np.testing.assert_array_equal(g, g_rebuilt)
    # not recording: the hidden output is empty
    op = mx.operator.get_op("Convolution")
    p = op.parse_params(dict(kernel=(3, 3), num_filter=4, no_bias=True))
    y, cols = op.compute(p, np, x.asnumpy(), w.asnumpy())
    assert y.shape == (2, 4, 4, 4) and cols.shape == (0,)


@pytest.mark.parametrize("layout", ["per_sample", "block", "rows", "grouped", "transposed",
                                    "transposed_rows"])
def test_convolution_by_parts_of_the_batch_at_any_threads(layout, monkeypatch):
    # each thread builds its samples' columns, multiplies them and adds the bias: the
    # output and the kept columns (the weight gradient's) are the serial ones; per
    # sample the same bits
    rng = np.random.default_rng(11)
    x = rng.standard_normal((5, 4, 9, 8)).astype(np.float32)
    w = rng.standard_normal((6, 4, 5, 3)).astype(np.float32)
    bias = rng.standard_normal(6).astype(np.float32)
    kw = dict(kernel=(5, 3), num_filter=6, pad=(1, 0))
    if layout == "grouped":
        w, kw["num_group"] = w[:, :2], 2
    monkeypatch.setattr(_conv_kernels, "PER_SAMPLE_POSITIONS", 1 if layout == "per_sample"
                        else 1 << 62)
    monkeypatch.setattr(_conv_kernels, "PER_SAMPLE_MAX_INNER", 0)
    monkeypatch.setattr(_conv_kernels, "ROWS_MIN_CHANNELS", 1)
    monkeypatch.setattr(_conv_kernels, "ROWS_MAX_FILTERS",
                        1 << 62 if layout.endswith("rows") else 0)
    monkeypatch.setattr(mx.engine, "PARALLEL_MIN_MACS", 0)
    parts = []
    monkeypatch.setattr(_conv_kernels, "_correlate_by_samples",
                        lambda *a, run=_conv_kernels._correlate_by_samples: parts.append(1)
                        or run(*a))

    def run():
        xn, wn = mx.nd.array(x), mx.nd.array(w)
        if layout.startswith("transposed"):  # a stride-1 Deconvolution: the correlation
            return mx.nd.Deconvolution(xn, wn[:4], kernel=(5, 3), num_filter=4,
                                       pad=(2, 1)).asnumpy(), None
        xn.attach_grad()
        wn.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Convolution(xn, wn, mx.nd.array(bias), **kw)
        y.backward(mx.nd.array(np.cos(np.arange(y.size)).reshape(y.shape)))
        return y.asnumpy(), wn.grad.asnumpy()

    prev = mx.engine.set_num_threads(1)
    try:
        want = run()
        assert not parts
        for threads in (2, 3):
            mx.engine.set_num_threads(threads)
            parts.clear()
            got = run()
            assert parts
            for a, b in zip(got, want):
                if layout == "per_sample" or b is None:
                    np.testing.assert_array_equal(a, b)
                else:
                    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    finally:
        mx.engine.set_num_threads(prev)
    ref = np_conv(x.astype(np.float64), w.astype(np.float64), bias.astype(np.float64), (1, 1),
                  (1, 1), (1, 0), kw.get("num_group", 1))
    if layout.startswith("transposed"):     # against the block's, at one thread
        monkeypatch.setattr(_conv_kernels, "ROWS_MAX_FILTERS", 0)
        prev = mx.engine.set_num_threads(1)
        try:
            ref = run()[0]
        finally:
            mx.engine.set_num_threads(prev)
    np.testing.assert_allclose(want[0], ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("rows", [1, 3, 100])
def test_strided_convolution_by_row_blocks_gives_the_same_bits_at_any_threads(
        rows, monkeypatch):
    # blocks of ``rows`` output rows (the last one shorter), split over the workers
    x = _rand(3, 3, 23, 20).astype(np.float32)
    w = _rand(8, 3, 7, 7).astype(np.float32)
    kw = dict(kernel=(7, 7), stride=(2, 2), pad=(3, 3), num_filter=8, no_bias=True)
    monkeypatch.setattr(_conv_kernels, "PER_SAMPLE_POSITIONS", 1)
    assert _conv_kernels.blocked(np, 3, (7, 7), (2, 2), (1, 1), 1, (12, 10))
    monkeypatch.setattr(_conv_kernels, "BLOCK_COLS_BYTES", 3 * 49 * 10 * 4 * rows)
    monkeypatch.setattr(mx.engine, "PARALLEL_MIN_MACS", 0)
    prev = mx.engine.set_num_threads(1)
    try:
        ys = []
        for threads in (1, 2, 3):
            mx.engine.set_num_threads(threads)
            ys.append(mx.nd.Convolution(_nd(x), _nd(w), **kw).asnumpy())
    finally:
        mx.engine.set_num_threads(prev)
    ref = np_conv(x.astype(np.float64), w.astype(np.float64), np.zeros(8), (2, 2), (1, 1),
                  (3, 3), 1)
    np.testing.assert_allclose(ys[0], ref, rtol=1e-5, atol=1e-5)
    for y in ys[1:]:
        np.testing.assert_array_equal(y, ys[0])


@pytest.mark.parametrize("rows", [1, 3, 100])
def test_strided_convolution_weight_gradient_by_row_blocks(rows, monkeypatch):
    # a recorded blocked convolution keeps no columns: its weight gradient builds them
    # block by block; the same bits at any threads, the sum of gy * window of x
    x = _rand(3, 3, 23, 20).astype(np.float32)
    w = _rand(8, 3, 7, 7).astype(np.float32)
    gy = _rand(3, 8, 12, 10).astype(np.float32)
    kw = dict(kernel=(7, 7), stride=(2, 2), pad=(3, 3), num_filter=8, no_bias=True)
    monkeypatch.setattr(_conv_kernels, "PER_SAMPLE_POSITIONS", 1)
    monkeypatch.setattr(_conv_kernels, "BLOCK_COLS_BYTES", 3 * 49 * 10 * 4 * rows)
    monkeypatch.setattr(mx.engine, "PARALLEL_MIN_MACS", 0)
    built = []
    build = _conv_kernels.build_cols
    monkeypatch.setattr(_conv_kernels, "build_cols",
                        lambda *a, **k: built.append(1) or build(*a, **k))
    op = mx.operator.get_op("Convolution")
    with mx.autograd.record():
        assert op.compute(op.parse_params(kw), np, x, w)[1].shape == (0,)
    prev = mx.engine.set_num_threads(1)
    try:
        gws = []
        for threads in (1, 2, 3):
            mx.engine.set_num_threads(threads)
            wn = _nd(w)
            wn.attach_grad()
            with mx.autograd.record():
                y = mx.nd.Convolution(_nd(x), wn, **kw)
            y.backward(_nd(gy))
            gws.append(wn.grad.asnumpy())
    finally:
        mx.engine.set_num_threads(prev)
    assert not built
    xp_ = np.pad(x.astype(np.float64), [(0, 0), (0, 0), (3, 3), (3, 3)])
    want = np.zeros(w.shape)
    for i, j in itertools.product(range(7), range(7)):
        win = xp_[:, :, i:i + 23:2, j:j + 19:2]
        want[:, :, i, j] = np.einsum("nfhw,nchw->fc", gy, win)
    np.testing.assert_allclose(gws[0], want, rtol=1e-5, atol=1e-4)
    for g in gws[1:]:
        np.testing.assert_array_equal(g, gws[0])


def test_dense_gradients_at_batch_one_are_outer_products():
    x = _rand(1, 5)
    w = _rand(3, 5)
    xn, wn = _nd(x), _nd(w)
    wn.attach_grad()
    xn.attach_grad()
    with mx.autograd.record():
        y = mx.nd.FullyConnected(xn, wn, num_hidden=3, no_bias=True)
    gy = _rand(1, 3)
    y.backward(_nd(gy))
    np.testing.assert_allclose(wn.grad.asnumpy(), gy.T @ x, rtol=1e-12)
    np.testing.assert_allclose(xn.grad.asnumpy(), gy @ w, rtol=1e-12)
    np.testing.assert_allclose(mx.nd.dot(_nd(x.T), _nd(gy)).asnumpy(), x.T @ gy, rtol=1e-12)
