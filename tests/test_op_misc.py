"""The misc ops (make_loss, batch_take, Crop, amp_cast, amp_multicast, im2col, col2im and
the contrib helpers index_array, gradientmultiplier, round_ste, sign_ste, allclose,
quadratic): forward and gradients against real MXNet 1.9.1, float64 numeric
gradients, NumPy references where MXNet fails, error messages, and mx.sym /
hybridized use.

Golden data: ``reference_extra/misc.npz``, written by ``reference_extra/gen_misc.py``
under MXNet 1.9.1. For case ``c``: ``c/x<i>`` inputs, ``c/y<i>`` outputs, ``c/gy<i>``
head gradients, ``c/gx<i>`` input gradients; ``__manifest__`` (JSON) lists each case's
op (path under ``mx.nd``), kwargs and which inputs have gradients; ``__types__``
(JSON) holds MXNet's inferred output dtypes of amp_cast and amp_multicast (whose CPU
kernels fail in MXNet for float16/float64 data, so only their types are golden there).
"""
import itertools
import json
import os

import numpy as np
import pytest

import mxlite as mx
import mxlite.autograd as autograd
from mxlite.base import MXNetError
from optable import case, row_tests

nd = mx.nd
RNG = np.random.default_rng(11)
GOLDEN = np.load(os.path.join(os.path.dirname(__file__), "reference_extra", "misc.npz"))
MANIFEST = json.loads(str(GOLDEN["__manifest__"]))
TYPES = json.loads(str(GOLDEN["__types__"]))


def _nd(a):
    return nd.array(a, dtype=a.dtype)


def _op(path):
    f = nd
    for part in path.split("."):
        f = getattr(f, part)
    return f


def _assert_same(got, want, what):
    assert got.dtype == want.dtype, "%s: dtype %s, MXNet %s" % (what, got.dtype, want.dtype)
    assert got.shape == want.shape, "%s: shape %s, MXNet %s" % (what, got.shape, want.shape)
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        rtol = {2: 1e-3, 4: 1e-6, 8: 1e-13}[want.dtype.itemsize]
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=what)


# -- golden: forward and gradients as MXNet ------------------------------------------

GRAD_GOLDEN = [c for c in MANIFEST if c["grad"]]


@pytest.mark.parametrize("c", MANIFEST, ids=[c["name"] for c in MANIFEST])
def test_matches_mxnet(c):
    _check_golden(c)


@pytest.mark.parametrize("c", GRAD_GOLDEN, ids=[c["name"] for c in GRAD_GOLDEN])
def test_ndarray_gradient_rules_match_mxnet_too(c):
    """The same cases with the raw-array gradient rules off (the create_graph path)."""
    old = autograd.RAW_RULES
    autograd.RAW_RULES = False
    try:
        _check_golden(c)
    finally:
        autograd.RAW_RULES = old


def _check_golden(c):
    name = c["name"]
    xs = [_nd(GOLDEN["%s/x%d" % (name, i)]) for i in range(c["n_in"])]
    for i in c["grad"]:
        xs[i].attach_grad()
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in c["kwargs"].items()}
    with mx.autograd.record():
        ys = _op(c["op"])(*xs, **kwargs)
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    assert len(ys) == c["n_out"]
    for i, y in enumerate(ys):
        _assert_same(y.asnumpy(), GOLDEN["%s/y%d" % (name, i)], "%s output %d" % (name, i))
    if c["grad"]:
        gys = [_nd(GOLDEN["%s/gy%d" % (name, i)]) for i in range(len(ys))]
        mx.autograd.backward(ys, gys)
        for i in c["grad"]:
            _assert_same(xs[i].grad.asnumpy(), GOLDEN["%s/gx%d" % (name, i)],
                         "%s gradient of input %d" % (name, i))


@pytest.mark.parametrize("row", TYPES, ids=lambda r: "%s-%s-%s" % (
    r["op"], "-".join(r["inputs"]), "-".join("%s" % v for v in r["kwargs"].values())))
def test_amp_output_dtypes_match_mxnet(row):
    xs = [nd.ones((2,), dtype=d) for d in row["inputs"]]
    ys = getattr(nd, row["op"])(*xs, **row["kwargs"])
    ys = ys if isinstance(ys, list) else [ys]
    assert [np.dtype(y.dtype).name for y in ys] == row["outputs"]
    # the symbol's type inference agrees
    vs = [mx.sym.var("x%d" % i) for i in range(len(xs))]
    s = getattr(mx.sym, row["op"])(*vs, **row["kwargs"])
    _, outs, _ = s.infer_type(**{"x%d" % i: d for i, d in enumerate(row["inputs"])})
    assert [np.dtype(o).name for o in outs] == row["outputs"]


# -- numeric gradients (float64) -----------------------------------------------------

def u(*shape):
    return RNG.uniform(-1, 1, shape)


def np_im2col(x, kernel, stride, dilate, pad):
    """Reference im2col: one loop over output positions, written independently."""
    nsp = len(kernel)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad])
    out = [(xp.shape[2 + i] - dilate[i] * (kernel[i] - 1) - 1) // stride[i] + 1
           for i in range(nsp)]
    cols = []
    for pos in itertools.product(*[range(o) for o in out]):
        idx = [np.arange(k) * d + p * s for k, d, p, s in zip(kernel, dilate, pos, stride)]
        block = xp[np.ix_(range(x.shape[0]), range(x.shape[1]), *idx)]
        cols.append(block.reshape(x.shape[0], -1))
    return np.stack(cols, axis=-1)


GEOMETRIES = [
    dict(kernel=(3,), stride=(2,), dilate=(2,), pad=(1,)),
    dict(kernel=(2, 3), stride=(2, 1), dilate=(1, 2), pad=(1, 1)),
    dict(kernel=(2, 2, 1), stride=(1, 2, 1), pad=(0, 1, 1)),
]
SIZES = [(9,), (5, 6), (3, 4, 3)]

GRAD_CASES = [
    case("quadratic", lambda x: nd.contrib.quadratic(x, a=0.7, b=-1.3, c=0.1),
         None, [u(3, 4)]),
    case("crop", lambda x: nd.Crop(x, h_w=(2, 3), offset=(1, 2)), None, [u(2, 2, 4, 5)]),
    case("crop_like_center", lambda x, y: nd.Crop(x, y, center_crop=True), None,
         [u(1, 2, 5, 4), u(1, 1, 2, 3)]),
    case("amp_cast_float64_passes", lambda x: nd.amp_cast(x, dtype="float16"), None, [u(3)]),
    case("amp_multicast_float64", lambda x, y: nd.amp_multicast(x, y, num_outputs=2), None,
         [u(3), u(2)], grad=(0, 1)),
] + [
    case("im2col_%dd" % len(g["kernel"]), lambda x, g=g: nd.im2col(x, **g), None,
         [u(2, 2, *s)]) for g, s in zip(GEOMETRIES, SIZES)
] + [
    case("col2im_%dd" % len(g["kernel"]), lambda c, g=g, s=s: nd.col2im(c, output_size=s, **g),
         None, [np_im2col(u(1, 2, *s), g["kernel"], g.get("stride", (1,) * len(s)),
                          g.get("dilate", (1,) * len(s)), g["pad"])])
    for g, s in zip(GEOMETRIES, SIZES)
]


globals().update(row_tests(GRAD_CASES))


# -- im2col / col2im against NumPy (MXNet itself fails for 1-D and 3-D) --------------

@pytest.mark.parametrize("g,size", list(zip(GEOMETRIES, SIZES)), ids=["1d", "2d", "3d"])
def test_im2col_matches_numpy_and_col2im_is_its_adjoint(g, size):
    nsp = len(size)
    stride, dilate = g.get("stride", (1,) * nsp), g.get("dilate", (1,) * nsp)
    x = u(2, 3, *size)
    cols = nd.im2col(_nd(x), **g).asnumpy()
    np.testing.assert_allclose(cols, np_im2col(x, g["kernel"], stride, dilate, g["pad"]),
                               rtol=1e-12)
    c = RNG.standard_normal(cols.shape)
    back = nd.col2im(_nd(c), output_size=size, **g).asnumpy()
    assert back.shape == x.shape
    # <im2col(x), c> == <x, col2im(c)>
    np.testing.assert_allclose((cols * c).sum(), (x * back).sum(), rtol=1e-10)


def test_im2col_times_weights_is_a_convolution():
    x, w = u(2, 3, 6, 5), u(4, 3, 3, 2)
    kw = dict(kernel=(3, 2), stride=(2, 1), pad=(1, 0), dilate=(1, 2))
    cols = nd.im2col(_nd(x), **kw)
    y = np.einsum("fk,nkl->nfl", w.reshape(4, -1), cols.asnumpy())
    conv = nd.Convolution(_nd(x), _nd(w), num_filter=4, no_bias=True, **kw).asnumpy()
    np.testing.assert_allclose(y.reshape(conv.shape), conv, rtol=1e-12)


# -- straight-through and fixed gradients --------------------------------------------

@pytest.mark.parametrize("op,ref", [
    (nd.contrib.round_ste, lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)),
    (nd.contrib.sign_ste, np.sign),
    (lambda x: nd.contrib.gradientmultiplier(x, scalar=1.0), lambda x: x),
    (nd.make_loss, lambda x: x),
])
def test_pass_through_forward_values(op, ref):
    x = np.array([0.5, -0.5, 1.5, -2.5, 0.49, 0.0, 3.7])
    np.testing.assert_array_equal(op(_nd(x)).asnumpy(), ref(x))


@pytest.mark.parametrize("op,factor", [
    (nd.contrib.round_ste, 1.0), (nd.contrib.sign_ste, 1.0),
    (lambda x: nd.contrib.gradientmultiplier(x, scalar=-2.5), -2.5),
])
def test_straight_through_gradients_scale_the_head_gradient(op, factor):
    x, gy = _nd(u(3, 2)), u(3, 2)
    x.attach_grad()
    with mx.autograd.record():
        y = op(x * 3)
    y.backward(_nd(gy))
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * factor * gy, rtol=1e-12)


def test_make_loss_gradient_is_ones_whatever_the_head_gradient():
    x = _nd(u(2, 3))
    x.attach_grad()
    with mx.autograd.record():
        loss = nd.make_loss(nd.square(x))
    loss.backward(_nd(u(2, 3)))
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * x.asnumpy(), rtol=1e-12)
    # unlike MakeLoss, no params: as MXNet (no parser for the op), a keyword is ignored
    with pytest.warns(UserWarning, match="normalization"):
        y = nd.make_loss(x, normalization="batch")
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy())


def test_quadratic_second_derivative_is_2a():
    x = _nd(u(4))
    x.attach_grad()
    with mx.autograd.record():
        y = nd.contrib.quadratic(x, a=1.25, b=0.5)
        g = mx.autograd.grad(y, [x], create_graph=True)[0]
    np.testing.assert_allclose(g.asnumpy(), 2.5 * x.asnumpy() + 0.5, rtol=1e-12)
    g.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), np.full(4, 2.5))


def test_constant_outputs_have_no_or_zero_gradient():
    x = _nd(u(2, 3))
    x.attach_grad()
    with mx.autograd.record():
        y = (nd.contrib.index_array(x).astype("float64").sum(axis=-1) * x).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.indices((2, 3)).sum(0))
    # batch_take and allclose are constants to autograd, as in MXNet
    idx = nd.array([2, 0], dtype="int32")
    with mx.autograd.record():
        y = (nd.batch_take(x, idx).reshape((2, 1)) * x
             * nd.contrib.allclose(x, x).astype("float64")).sum()
    y.backward()
    taken = x.asnumpy()[[0, 1], [2, 0]]
    np.testing.assert_allclose(x.grad.asnumpy(), np.broadcast_to(taken[:, None], (2, 3)))


# -- forward semantics ---------------------------------------------------------------

def test_batch_take_clips_out_of_range_indices():
    a = np.arange(12.0).reshape(4, 3)
    idx = np.array([5, -1, 3, -4], np.int32)
    y = nd.batch_take(_nd(a), _nd(idx))
    np.testing.assert_array_equal(y.asnumpy(), a[np.arange(4), np.clip(idx, 0, 2)])
    # any integer index type works (MXNet insists on int32)
    y64 = nd.batch_take(_nd(a), _nd(idx.astype(np.int64)))
    np.testing.assert_array_equal(y64.asnumpy(), y.asnumpy())


def test_index_array_axes_order_and_empty():
    x = nd.zeros((2, 3, 4))
    y = nd.contrib.index_array(x, axes=(2, 0, 2)).asnumpy()
    g = np.indices((2, 3, 4))
    assert y.dtype == np.int64 and y.shape == (2, 3, 4, 3)
    np.testing.assert_array_equal(y, np.stack([g[2], g[0], g[2]], axis=-1))
    assert nd.contrib.index_array(x, axes=()).shape == (2, 3, 4, 0)


def test_allclose_shape_dtype_and_numpy_agreement():
    a = u(3, 4).astype(np.float32)
    for b in (a, a + 1e-7, a + 1e-3):
        r = nd.contrib.allclose(_nd(a), _nd(b))
        assert r.shape == () and r.dtype == np.uint8
        assert int(r.asnumpy()) == int(np.allclose(a, b, rtol=1e-5, atol=1e-8))


# -- errors --------------------------------------------------------------------------

ERRORS = [
    (lambda: nd.batch_take(nd.zeros((4, 3, 2)), nd.zeros((4,), dtype="int32")),
     r"batch_take: a expected 2 dims, got shape \(4, 3, 2\)"),
    (lambda: nd.batch_take(nd.zeros((4, 3)), nd.zeros((3,), dtype="int32")), "one per row"),
    (lambda: nd.batch_take(nd.zeros((4, 3)), nd.zeros((4,))), "integer"),
    (lambda: nd.Crop(nd.zeros((2, 3, 4))), "4-D"),
    (lambda: nd.Crop(nd.zeros((1, 1, 4, 4))), "h_w"),
    (lambda: nd.Crop(nd.zeros((1, 1, 4, 4)), h_w=(5, 2)), "larger"),
    (lambda: nd.Crop(nd.zeros((1, 1, 4, 4)), h_w=(2, 2), offset=(3, 0)), "offset"),
    (lambda: nd.Crop(nd.zeros((1, 1, 4, 4)), h_w=(2, 2), offset=(-1, 0)), "offset"),
    (lambda: nd.Crop(nd.zeros((1, 1, 4, 4)), nd.zeros((1, 1, 5, 2))), "larger"),
    (lambda: nd.Crop(nd.zeros((1, 1, 4, 4)), nd.zeros((1, 5, 2))), "crop_like"),
    (lambda: nd.Crop(*[nd.zeros((1, 1, 4, 4))] * 3), "num_args"),
    (lambda: nd.amp_cast(nd.zeros((2,)), dtype="complex64"), "dtype"),
    (lambda: nd.amp_multicast(nd.zeros((2,)), nd.zeros((2,)), num_outputs=3), "num_outputs"),
    (lambda: nd.im2col(nd.zeros((1, 1, 4, 4)), kernel=(2,)), "kernel"),
    (lambda: nd.im2col(nd.zeros((1, 1, 4, 4)), kernel=(5, 2)), "larger"),
    (lambda: nd.im2col(nd.zeros((1, 1, 4, 4)), kernel=(2, 2), stride=(1,)), "stride"),
    (lambda: nd.im2col(nd.zeros((1, 1, 4, 4, 4, 4)), kernel=(2, 2, 2, 2)), "1, 2 or 3"),
    (lambda: nd.col2im(nd.zeros((1, 8, 10)), output_size=(4, 4), kernel=(2, 2)), "expected"),
    (lambda: nd.col2im(nd.zeros((1, 7, 9)), output_size=(4, 4), kernel=(2, 2)), "expected"),
    (lambda: nd.col2im(nd.zeros((1, 8, 9)), output_size=(4,), kernel=(2, 2)), "output_size"),
    (lambda: nd.col2im(nd.zeros((8, 9)), output_size=(4, 4), kernel=(2, 2)), "3-D"),
    (lambda: nd.contrib.index_array(nd.zeros((2, 3)), axes=(2,)), "out of range"),
    (lambda: nd.contrib.allclose(nd.zeros((2,)), nd.zeros((3,))), "one shape"),
    (lambda: nd.contrib.allclose(nd.zeros((2,)), nd.zeros((2,), dtype="float64")), "dtype"),
]


@pytest.mark.parametrize("fn,match", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors_name_the_problem(fn, match):
    with pytest.raises((MXNetError, ValueError, TypeError), match=match):
        fn()


# -- symbols, JSON and hybridized blocks ---------------------------------------------

def _bind_forward(s, **arrays):
    ex = s.bind(mx.cpu(), {k: _nd(v) for k, v in arrays.items()})
    return [o.asnumpy() for o in ex.forward()]


def test_every_op_runs_through_symbol_bind():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    x4, x2 = u(2, 3, 5, 6).astype(np.float32), u(4, 3).astype(np.float32)
    idx = np.array([2, 0, 1, 7], np.int32)
    rows = [
        (mx.sym.make_loss(a), dict(a=x2), lambda: x2),
        (mx.sym.batch_take(a, b), dict(a=x2, b=idx), lambda: x2[np.arange(4), [2, 0, 1, 2]]),
        (mx.sym.Crop(a, h_w=(2, 3), offset=(1, 1)), dict(a=x4), lambda: x4[:, :, 1:3, 1:4]),
        (mx.sym.Crop(a, b, center_crop=True), dict(a=x4, b=x4[:1, :1, :3, :2]),
         lambda: x4[:, :, 1:4, 2:4]),
        (mx.sym.amp_cast(a, dtype="float16"), dict(a=x2), lambda: x2.astype(np.float16)),
        (mx.sym.amp_multicast(a, b, num_outputs=2, cast_narrow=True),
         dict(a=x2, b=x2.astype(np.float16)), lambda: x2.astype(np.float16)),
        (mx.sym.im2col(a, kernel=(2, 2)), dict(a=x4), lambda: np_im2col(
            x4, (2, 2), (1, 1), (1, 1), (0, 0))),
        (mx.sym.col2im(mx.sym.im2col(a, kernel=(1, 1)), output_size=(5, 6), kernel=(1, 1)),
         dict(a=x4), lambda: x4),
        (mx.sym.contrib.index_array(a, axes=(1,)), dict(a=x2),
         lambda: np.indices((4, 3))[1][..., None]),
        (mx.sym.contrib.gradientmultiplier(a, scalar=3), dict(a=x2), lambda: x2),
        (mx.sym.contrib.round_ste(a), dict(a=x2), lambda: np.round(x2)),
        (mx.sym.contrib.sign_ste(a), dict(a=x2), lambda: np.sign(x2)),
        (mx.sym.contrib.allclose(a, b), dict(a=x2, b=x2), lambda: np.uint8(1)),
        (mx.sym.contrib.quadratic(a, a=2, c=1), dict(a=x2), lambda: 2 * x2 * x2 + 1),
    ]
    for s, arrays, ref in rows:
        s2 = mx.sym.load_json(s.tojson())
        for sym in (s, s2):
            got = _bind_forward(sym, **arrays)[0]
            np.testing.assert_allclose(got, ref(), rtol=1e-6, err_msg=s.tojson())


def test_amp_converted_symbol_json_loads_and_differentiates():
    data, w = mx.sym.var("data"), mx.sym.var("w")
    h = mx.sym.amp_cast(data, dtype="float16")
    h16, w16 = mx.sym.amp_multicast(h, w, num_outputs=2, cast_narrow=True)
    out = mx.sym.amp_cast(mx.sym.broadcast_mul(h16, w16), dtype="float32")
    net = mx.sym.load_json(out.tojson())
    assert net.infer_type(data="float32", w="float32")[1] == [np.float32]
    x, wv = u(2, 3).astype(np.float32), u(1, 3).astype(np.float32)
    gx, gw = nd.zeros((2, 3)), nd.zeros((1, 3))
    ex = net.bind(mx.cpu(), {"data": _nd(x), "w": _nd(wv)},
                  args_grad={"data": gx, "w": gw})
    y = ex.forward(is_train=True)[0]
    assert y.dtype == np.float32
    want = (x.astype(np.float16) * wv.astype(np.float16)).astype(np.float32)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-3)
    ex.backward(nd.ones((2, 3)))
    assert gx.dtype == np.float32
    np.testing.assert_allclose(gx.asnumpy(), np.broadcast_to(wv, (2, 3)), rtol=1e-3)


class _MiscNet(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x, like):
        c = F.Crop(x, like, center_crop=True)
        cols = F.im2col(c, kernel=(2, 2))
        img = F.col2im(cols, output_size=(3, 4), kernel=(2, 2))
        q = F.contrib.quadratic(F.contrib.gradientmultiplier(img, scalar=0.5), a=1, b=1)
        r = F.contrib.round_ste(q) + F.contrib.sign_ste(q)
        k = F.amp_cast(F.amp_cast(r, dtype="float16"), dtype="float32")
        return F.make_loss(k.sum())


def test_hybridized_block_matches_imperative_forward_and_backward():
    x, like = _nd(u(2, 2, 5, 6).astype(np.float32)), nd.zeros((1, 1, 3, 4))
    results = []
    for hybrid in (False, True):
        net = _MiscNet()
        if hybrid:
            net.hybridize()
        x.attach_grad()
        with mx.autograd.record():
            y = net(x, like)
        y.backward()
        results.append((y.asnumpy(), x.grad.asnumpy()))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-6)
    # the gradient: straight-through rounds, 0.5 from the multiplier, (2q' + 1) from
    # quadratic, col2im∘im2col counts each pixel's windows, and zero outside the crop
    assert np.all(results[0][1][:, :, [0, 4], :] == 0)
    assert np.any(results[0][1][:, :, 1:4, 1:5] != 0)
