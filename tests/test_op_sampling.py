"""Resizing and sampling ops: BilinearResize2D, AdaptiveAvgPooling2D, GridGenerator,
BilinearSampler and SpatialTransformer.

Golden data: ``reference_extra/sampling.npz``, written by real MXNet 1.9.1 with
``reference_extra/gen_sampling.py``. For every case id (listed in ``cases``) it holds
the mx.nd function (``<id>/op``), its kwargs (JSON), the input names (JSON), the inputs
(``<id>/in/<name>``), the output (``<id>/out``), a head gradient (``<id>/head``) and
MXNet's input gradients for it (``<id>/grad/<name>``). Cases cover every resize mode
with align_corners True and False (float32, float64), adaptive pooling up and down,
affine and warp grids (MXNet's CPU GridGenerator is float32 only), the sampler with
out-of-range samples, and SpatialTransformer in float32 and float64.

Besides the goldens: independent NumPy references, float64 numeric gradients (first
and second order), error messages, and each op through mx.sym and a hybridized block.
"""
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from optable import case, row_tests

GOLDEN = os.path.join(os.path.dirname(__file__), "reference_extra", "sampling.npz")
with np.load(GOLDEN) as _z:
    _GOLD = {k: _z[k] for k in _z.files}
CASE_IDS = [str(c) for c in _GOLD["cases"]]


def _nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def _fn(path):
    fn = mx.nd
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


# -- golden: MXNet 1.9.1's outputs and gradients ---------------------------------------

@pytest.mark.parametrize("cid", CASE_IDS)
def test_forward_and_gradients_match_mxnet(cid):
    g = _GOLD
    names = json.loads(str(g[cid + "/inputs"]))
    kwargs = json.loads(str(g[cid + "/kwargs"]))
    xs = [_nd(g["%s/in/%s" % (cid, n)]) for n in names]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        y = _fn(str(g[cid + "/op"]))(*xs, **kwargs)
    y.backward(_nd(g[cid + "/head"]))
    ref = g[cid + "/out"]
    tol = dict(rtol=1e-5, atol=1e-5) if ref.dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    assert y.dtype == ref.dtype and y.shape == ref.shape
    np.testing.assert_allclose(y.asnumpy(), ref, err_msg=cid + " output", **tol)
    for n, x in zip(names, xs):
        np.testing.assert_allclose(x.grad.asnumpy(), g["%s/grad/%s" % (cid, n)],
                                   err_msg="%s d%s" % (cid, n), **tol)


def test_resize_forward_is_bit_exact_with_mxnet():
    # The kernel blends the same neighbours with the same float32 weights in MXNet's order.
    for cid in ("resize_up_ac", "resize_mixed_noac", "resize_down_noac", "resize_odd_scale"):
        kwargs = json.loads(str(_GOLD[cid + "/kwargs"]))
        y = mx.nd.contrib.BilinearResize2D(_nd(_GOLD[cid + "/in/data"]), **kwargs)
        np.testing.assert_array_equal(y.asnumpy(), _GOLD[cid + "/out"], err_msg=cid)


# -- independent NumPy references -------------------------------------------------------

def _interp_matrix(n_in, n_out, align_corners):
    """Linear interpolation weights of one axis (float64 positions)."""
    o = np.arange(n_out)
    if n_out == 1:
        src = np.zeros(1)
    elif align_corners:
        src = o * (n_in - 1) / (n_out - 1)
    else:
        src = np.maximum((o + 0.5) * n_in / n_out - 0.5, 0)
    a = np.zeros((n_out, n_in))
    lo = np.floor(src).astype(int)
    hi = np.minimum(lo + 1, n_in - 1)
    a[o, lo] += 1 - (src - lo)
    a[o, hi] += src - lo
    return a


def ref_resize(x, ho, wo, align_corners=True):
    ah = _interp_matrix(x.shape[2], ho, align_corners)
    aw = _interp_matrix(x.shape[3], wo, align_corners)
    return np.einsum("oh,nchw,pw->ncop", ah, x, aw)


def ref_adaptive_pool(x, ho, wo):
    n, c, h, w = x.shape
    y = np.zeros((n, c, ho, wo))
    for i in range(ho):
        for j in range(wo):
            rows = slice(int(np.floor(i * h / ho)), int(np.ceil((i + 1) * h / ho)))
            cols = slice(int(np.floor(j * w / wo)), int(np.ceil((j + 1) * w / wo)))
            y[:, :, i, j] = x[:, :, rows, cols].mean(axis=(2, 3))
    return y


def ref_affine_grid(theta, h, w):
    xs, ys = np.meshgrid(np.linspace(-1, 1, w), np.linspace(-1, 1, h))
    dst = np.stack([xs.ravel(), ys.ravel(), np.ones(h * w)])
    return (theta.reshape(-1, 2, 3) @ dst).reshape(-1, 2, h, w)


def ref_warp_grid(flow):
    h, w = flow.shape[2:]
    xs, ys = np.meshgrid(np.arange(w), np.arange(h))
    return (flow + np.stack([xs, ys])) / np.array([(w - 1) / 2, (h - 1) / 2]).reshape(2, 1, 1) - 1


def ref_sample(x, grid):
    """Bilinear sampling with zero padding: pad one ring of zeros, clip into it."""
    n, c, h, w = x.shape
    pad = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    xr = (grid[:, 0] + 1) * (w - 1) / 2
    yr = (grid[:, 1] + 1) * (h - 1) / 2
    x0, y0 = np.floor(xr), np.floor(yr)
    out = 0
    for dy in (0, 1):
        for dx in (0, 1):
            xi = np.clip(x0 + dx, -1, w).astype(int) + 1
            yi = np.clip(y0 + dy, -1, h).astype(int) + 1
            wgt = (1 - abs(xr - x0 - dx)) * (1 - abs(yr - y0 - dy))
            v = pad[np.arange(n)[:, None, None, None], np.arange(c)[None, :, None, None],
                    yi[:, None], xi[:, None]]
            out = out + v * wgt[:, None]
    return out


def _rng(seed):
    return np.random.RandomState(seed)


def _grid(seed, shape, lo=-1.25, hi=1.25):
    return _rng(seed).uniform(lo, hi, shape)


def _loc(seed, n):
    return np.array([[1.0, 0, 0, 0, 1, 0]] * n) + 0.3 * _rng(seed).randn(n, 6)


R = mx.nd.contrib.BilinearResize2D
AP = mx.nd.contrib.AdaptiveAvgPooling2D
X = _rng(0).randn(2, 3, 5, 6)

CASES = [
    case("resize_up_ac", lambda x: R(x, height=8, width=9), lambda x: ref_resize(x, 8, 9), [X]),
    case("resize_mixed_noac", lambda x: R(x, height=7, width=4, align_corners=False),
         lambda x: ref_resize(x, 7, 4, False), [X]),
    case("resize_down_noac", lambda x: R(x, height=2, width=3, align_corners=False),
         lambda x: ref_resize(x, 2, 3, False), [X]),
    case("resize_like", lambda x, like: R(x, like, mode="like"),
         lambda x, like: ref_resize(x, 3, 10), [X, _rng(1).randn(2, 1, 3, 10)], grad=(0,)),
    case("resize_to_odd_up", lambda x: R(x, mode="to_odd_up", align_corners=False),
         lambda x: ref_resize(x, 5, 7, False), [X]),
    case("pool_down", lambda x: AP(x, output_size=(2, 4)), lambda x: ref_adaptive_pool(x, 2, 4),
         [X]),
    case("pool_up", lambda x: AP(x, output_size=7), lambda x: ref_adaptive_pool(x, 7, 7), [X]),
    case("grid_affine", lambda t: mx.nd.GridGenerator(t, transform_type="affine",
                                                      target_shape=(3, 4)),
         lambda t: ref_affine_grid(t, 3, 4), [_loc(2, 2)]),
    case("grid_warp", lambda f: mx.nd.GridGenerator(f, transform_type="warp"), ref_warp_grid,
         [_rng(3).randn(2, 2, 3, 4)]),
    case("sampler", lambda x, g: mx.nd.BilinearSampler(x, g), ref_sample,
         [X, _grid(4, (2, 2, 4, 3))], grad=(0, 1)),
    case("transformer",
         lambda x, loc: mx.nd.SpatialTransformer(x, loc, target_shape=(3, 4),
                                                 transform_type="affine", sampler_type="bilinear"),
         lambda x, loc: ref_sample(x, ref_affine_grid(loc, 3, 4)), [X, _loc(5, 2)],
         grad=(0, 1)),
]


# NOTE: resize source positions are float32 for every dtype (as in MXNet), so the float64
# outputs sit ~1e-7 from a reference with float64 positions. The references are float64
# only; float32 is MXNet's golden cases above.
for _c in CASES:
    _c.dtypes = (np.float64,)
    if _c.id.startswith("resize"):
        _c.rtol = _c.atol = 1e-6
globals().update(row_tests(CASES))


def test_sampler_reads_zeros_outside_the_data():
    x = mx.nd.ones((1, 1, 3, 3))
    # x = -2 lies one pixel left of the data, x = 1.5 half a pixel right of it
    grid = mx.nd.array([[[[-2.0, 1.5, 0.0]], [[0.0, 0.0, 3.0]]]])
    np.testing.assert_allclose(mx.nd.BilinearSampler(x, grid).asnumpy().ravel(), [0, 0.5, 0])


def test_grid_generator_identity_reproduces_the_data():
    x = mx.nd.array(X)
    grid = mx.nd.GridGenerator(mx.nd.array([[1, 0, 0, 0, 1, 0]] * 2), transform_type="affine",
                               target_shape=(5, 6))
    np.testing.assert_allclose(mx.nd.BilinearSampler(x, grid).asnumpy(), X, rtol=1e-5, atol=1e-6)
    flow = mx.nd.GridGenerator(mx.nd.zeros((2, 2, 5, 6)), transform_type="warp")
    np.testing.assert_allclose(flow.asnumpy(), grid.asnumpy(), atol=1e-6)


def test_resize_like_gives_zero_gradient_to_like():
    x, like = mx.nd.array(X), mx.nd.ones((2, 1, 3, 4))
    like.attach_grad()
    x.attach_grad()
    with mx.autograd.record():
        y = R(x, like, mode="like")
    y.backward()
    assert y.shape == (2, 3, 3, 4)
    assert not like.grad.asnumpy().any()
    np.testing.assert_allclose(x.grad.asnumpy().sum(), y.size, rtol=1e-5)


# -- errors -----------------------------------------------------------------------------

X32 = mx.nd.array(X)
ERROR_ROWS = [
    (lambda: R(mx.nd.ones((2, 3, 4)), height=2, width=2),
     r"data must be 4-D .* got shape \(2, 3, 4\)"),
    (lambda: R(X32, height=0, width=3), r"height=0 must be in \[1, 10000\]"),
    (lambda: R(X32, scale_height=2.0), r"scale_height=2.0 is set but scale_width is not"),
    (lambda: R(X32, mode="odd_scale"), r"mode='odd_scale' needs scale_height and scale_width"),
    (lambda: R(X32, mode="bogus"), r"mode must be one of size, .*, to_odd_up; got 'bogus'"),
    (lambda: R(X32, mx.nd.ones((3, 4)), mode="like"), r"like must be 4-D .* got shape \(3, 4\)"),
    (lambda: R(X32.astype("int32"), height=2, width=2), r"floating-point .* got dtype int32"),
    (lambda: R(X32, scale_height=-1.0, scale_width=1.0), r"output size \(-5, 6\) .* negative"),
    (lambda: AP(X32, output_size=(1, 2, 3)), r"output_size=\(1, 2, 3\), expected an int or"),
    (lambda: AP(mx.nd.ones((2, 3, 4)), output_size=2), r"data must be 4-D"),
    (lambda: mx.nd.GridGenerator(mx.nd.ones((2, 5)), transform_type="affine",
                                 target_shape=(3, 3)),
     r"data must have shape \(batch, 6\) .* got \(2, 5\)"),
    (lambda: mx.nd.GridGenerator(mx.nd.ones((2, 6)), transform_type="affine"),
     r"target_shape=\(0, 0\), expected a positive \(height, width\)"),
    (lambda: mx.nd.GridGenerator(mx.nd.ones((2, 6)), transform_type="affine",
                                 target_shape=(1, 4)),
     r"target_shape \(1, 4\) must be at least 2"),
    (lambda: mx.nd.GridGenerator(mx.nd.ones((2, 3, 4, 4)), transform_type="warp"),
     r"\(batch, 2, H, W\) for transform_type='warp', got \(2, 3, 4, 4\)"),
    (lambda: mx.nd.GridGenerator(mx.nd.ones((2, 6)), transform_type="perspective"),
     r"GridGenerator: transform_type must be one of affine, warp; got 'perspective'"),
    (lambda: mx.nd.BilinearSampler(X32, mx.nd.ones((2, 3, 4, 4))),
     r"grid must have shape \(batch, 2, H, W\), got \(2, 3, 4, 4\)"),
    (lambda: mx.nd.BilinearSampler(X32, mx.nd.ones((1, 2, 4, 4))),
     r"grid has batch size 1, expected 2"),
    (lambda: mx.nd.BilinearSampler(X32, mx.nd.ones((2, 2, 4, 4), dtype="float64")),
     r"different dtypes"),
    (lambda: mx.nd.SpatialTransformer(X32, mx.nd.ones((2, 6)), transform_type="affine",
                                      sampler_type="bilinear"),
     r"target_shape=\(0, 0\), expected a positive"),
    (lambda: mx.nd.SpatialTransformer(X32, mx.nd.ones((1, 6)), target_shape=(3, 3),
                                      transform_type="affine", sampler_type="bilinear"),
     r"loc has batch size 1, expected 2"),
    (lambda: mx.nd.SpatialTransformer(X32, mx.nd.ones((2, 6)), target_shape=(3, 3)),
     r"missing required argument"),
]


@pytest.mark.parametrize("call,msg", ERROR_ROWS, ids=range(len(ERROR_ROWS)))
def test_errors_name_argument_expected_and_actual(call, msg):
    with pytest.raises((MXNetError, ValueError, TypeError), match=msg):
        call()


# -- symbols and hybridized blocks ------------------------------------------------------

def test_every_op_through_mx_sym_matches_nd():
    data, like, loc = mx.sym.var("data"), mx.sym.var("like"), mx.sym.var("loc")
    grid = mx.sym.GridGenerator(loc, transform_type="affine", target_shape=(4, 4))
    outs = [mx.sym.contrib.BilinearResize2D(data, height=7, width=3, align_corners=False),
            mx.sym.contrib.BilinearResize2D(data, like, mode="like"),
            mx.sym.contrib.AdaptiveAvgPooling2D(data, output_size=(2, 3)),
            mx.sym.BilinearSampler(data, grid),
            mx.sym.SpatialTransformer(data, loc, target_shape=(4, 4), transform_type="affine",
                                      sampler_type="bilinear")]
    net = mx.sym.Group(outs)
    # the JSON round trip keeps the ops' names and attributes
    net = mx.sym.load_json(net.tojson())
    args = {"data": X32, "like": mx.nd.ones((2, 1, 3, 5)), "loc": mx.nd.array(_loc(6, 2))}
    _, out_shapes, _ = net.infer_shape(data=X32.shape, like=(2, 1, 3, 5), loc=(2, 6))
    exe = net.bind(mx.cpu(), args)
    got = exe.forward()
    want = [R(X32, height=7, width=3, align_corners=False), R(X32, args["like"], mode="like"),
            AP(X32, output_size=(2, 3)),
            mx.nd.BilinearSampler(X32, mx.nd.GridGenerator(args["loc"], transform_type="affine",
                                                           target_shape=(4, 4))),
            mx.nd.SpatialTransformer(X32, args["loc"], target_shape=(4, 4),
                                     transform_type="affine", sampler_type="bilinear")]
    for g, w, s in zip(got, want, out_shapes):
        assert g.shape == w.shape == tuple(s)
        np.testing.assert_allclose(g.asnumpy(), w.asnumpy(), rtol=1e-6, atol=1e-6)


class _Net(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x, flow):
        y = F.contrib.BilinearResize2D(x, height=6, width=8)
        y = F.contrib.AdaptiveAvgPooling2D(y, output_size=(4, 5))
        return F.BilinearSampler(y, F.GridGenerator(flow, transform_type="warp"))


def test_hybridized_block_matches_imperative_values_and_gradients():
    flow = mx.nd.array(_rng(7).randn(2, 2, 4, 5))
    results = []
    for hybrid in (False, True):
        net = _Net()
        if hybrid:
            net.hybridize()
        x = X32.copy()
        x.attach_grad()
        with mx.autograd.record():
            y = net(x, flow)
        y.backward()
        results.append((y.asnumpy(), x.grad.asnumpy()))
    assert results[0][0].shape == (2, 3, 4, 5)
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-6, atol=1e-6)
