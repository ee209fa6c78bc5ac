"""Two-stage detector ops: Proposal, MultiProposal, PSROIPooling and
DeformableConvolution (and the Gluon ``contrib.cnn.DeformableConvolution`` block)
against real MXNet 1.9.1, float64 numeric gradients, mx.sym and hybridized blocks,
and error messages.

Golden data: ``reference_extra/two_stage.npz``, written by ``gen_two_stage.py`` under
MXNet 1.9.1. Per op case ``<case>``: ``op`` (op name), ``params`` (JSON keyword
params), ``in<i>`` inputs, ``out<i>`` visible outputs, and for cases with gradients
``head`` (head gradient of output 0) and ``grad<i>`` (MXNet's input gradients). Cases
cover deformable sampling points outside, on and just inside the map borders and at
integer positions, groups and deformable groups with stride/dilation/padding, 1x1
kernels, float64; PSROIPooling with half-way coordinates, rois past the map, tiny and
empty rois, pooled_size above/below group_size and the default group_size; Proposal
and MultiProposal with default params, top-n limits, padded images (-1 scores), tied
scores, iou_loss, other scales/ratios/stride, and a cyclic fill. ``block/...`` is a
hybridized ``DeformableConvolution`` layer: constructor kwargs, input, parameter
values, output, head gradient and the input and parameter gradients.
"""
import json
import os

import numpy as np
import pytest

import mxlite as mx
import mxlite.autograd as autograd
import mxlite.gluon.contrib.cnn as cnn
from mxlite.base import MXNetError
from mxlite.operator.registry import OPS, runs_on_raw
from optable import central_difference

HERE = os.path.dirname(os.path.abspath(__file__))
GOLD = np.load(os.path.join(HERE, "reference_extra", "two_stage.npz"))
NAMES = sorted({k.split("/")[0] for k in GOLD.files} - {"block"})
RNG = np.random.default_rng(11)


def _nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def _gold(name):
    g = {k.split("/", 1)[1]: GOLD[k] for k in GOLD.files if k.startswith(name + "/")}
    n_in = sum(1 for k in g if k.startswith("in"))
    n_out = sum(1 for k in g if k.startswith("out"))
    return (str(g["op"]), json.loads(str(g["params"])), [g["in%d" % i] for i in range(n_in)],
            [g["out%d" % i] for i in range(n_out)], g)


def _fn(op):
    return getattr(mx.nd.contrib, op[len("_contrib_"):])


def _tol(dtype):
    return (2e-5, 2e-6) if dtype == np.float32 else (1e-12, 1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_golden_forward_and_gradient(name):
    op, params, inputs, outs, g = _gold(name)
    xs = [_nd(a) for a in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        ys = _fn(op)(*xs, **params)
    ys = ys if isinstance(ys, list) else [ys]
    assert len(ys) == len(outs)
    rtol, atol = _tol(inputs[0].dtype)
    for y, ref in zip(ys, outs):
        assert y.dtype == ref.dtype and y.shape == ref.shape
        if "Proposal" in op:    # MXNet's bits: C library expf, float32 in MXNet's order
            np.testing.assert_array_equal(y.asnumpy(), ref, err_msg=name)
        else:
            np.testing.assert_allclose(y.asnumpy(), ref, rtol=rtol, atol=atol, err_msg=name)
    if "head" in g:
        ys[0].backward(_nd(g["head"]))
        for i, x in enumerate(xs):
            np.testing.assert_allclose(x.grad.asnumpy(), g["grad%d" % i], rtol=rtol,
                                       atol=atol * 10, err_msg="%s grad %d" % (name, i))


RAW_CASES = [n for n in NAMES if "head" in _gold(n)[4] and runs_on_raw(OPS[_gold(n)[0]])]


@pytest.mark.parametrize("name", RAW_CASES)
def test_raw_rules_equal_ndarray_rules(name):
    op, params, inputs, _, g = _gold(name)

    def grads(raw):
        old = autograd.RAW_RULES
        autograd.RAW_RULES = raw
        try:
            xs = [_nd(a) for a in inputs]
            for x in xs:
                x.attach_grad()
            with mx.autograd.record():
                y = _fn(op)(*xs, **params)
            (y[0] if isinstance(y, list) else y).backward(_nd(g["head"]))
            return [x.grad.asnumpy() for x in xs]
        finally:
            autograd.RAW_RULES = old

    for a, b in zip(grads(True), grads(False)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b, err_msg=name)


# -- numeric gradients (float64) ------------------------------------------------------

def _numeric_check(fn, arrays, wrt, eps=1e-6, rtol=1e-6):
    """Autograd gradients of <w, fn(*arrays)> for the inputs in ``wrt`` against central
    differences along a random direction."""
    arrays = [a.astype(np.float64) for a in arrays]
    w = RNG.uniform(-1, 1, fn(*[_nd(a) for a in arrays]).shape)
    xs = [_nd(a) for a in arrays]
    for i in wrt:
        xs[i].attach_grad()
    with mx.autograd.record():
        loss = (fn(*xs) * _nd(w)).sum()
    loss.backward()
    for i in wrt:
        v = RNG.uniform(-1, 1, arrays[i].shape)
        numeric = central_difference(
            lambda arrs: float((fn(*[_nd(a) for a in arrs]).asnumpy() * w).sum()),
            arrays, i, v, eps)
        analytic = float((xs[i].grad.asnumpy() * v).sum())
        assert abs(numeric - analytic) <= rtol * max(1.0, abs(numeric)), (i, numeric, analytic)


@pytest.mark.parametrize("kw", [
    dict(kernel=(3, 3), pad=(1, 1), num_filter=3),
    dict(kernel=(2, 3), stride=(2, 1), dilate=(2, 1), pad=(1, 0), num_filter=4, num_group=2,
         num_deformable_group=2),
])
def test_deformable_numeric_gradient(kw):
    n, c, h, w = 2, 4, 6, 5
    kh, kwd = kw["kernel"]
    ho = (h + 2 * kw["pad"][0] - kw.get("dilate", (1, 1))[0] * (kh - 1) - 1) \
        // kw.get("stride", (1, 1))[0] + 1
    wo = (w + 2 * kw["pad"][1] - kw.get("dilate", (1, 1))[1] * (kwd - 1) - 1) \
        // kw.get("stride", (1, 1))[1] + 1
    dg = kw.get("num_deformable_group", 1)
    data = RNG.uniform(-1, 1, (n, c, h, w))
    off = RNG.uniform(-2, 2, (n, dg * 2 * kh * kwd, ho, wo))
    weight = RNG.uniform(-1, 1, (kw["num_filter"], c // kw.get("num_group", 1), kh, kwd))
    bias = RNG.uniform(-1, 1, (kw["num_filter"],))
    fn = lambda *x: mx.nd.contrib.DeformableConvolution(*x, **kw)  # noqa: E731
    _numeric_check(fn, [data, off, weight, bias], wrt=(0, 1, 2, 3))


def test_deformable_zero_offset_is_convolution():
    data = RNG.uniform(-1, 1, (2, 4, 7, 6))
    weight = RNG.uniform(-1, 1, (6, 2, 3, 3))
    kw = dict(kernel=(3, 3), stride=(2, 1), dilate=(1, 2), pad=(1, 2), num_filter=6,
              num_group=2, no_bias=True)
    ref = mx.nd.Convolution(_nd(data), _nd(weight), **kw)
    off = np.zeros((2, 18) + ref.shape[2:])
    y = mx.nd.contrib.DeformableConvolution(_nd(data), _nd(off), _nd(weight), **kw)
    np.testing.assert_allclose(y.asnumpy(), ref.asnumpy(), rtol=1e-12, atol=1e-12)


def test_psroi_numeric_gradient_and_second_order():
    _, params, inputs, _, _ = _gold("psroi_pooled_gt_group")
    inputs = [a.astype(np.float64) for a in inputs]
    fn = lambda d: mx.nd.contrib.PSROIPooling(d, _nd(inputs[1]), **params)  # noqa: E731
    _numeric_check(fn, [inputs[0]], wrt=(0,))
    # linear in data: the gradient of <gy, grad> w.r.t. the head is PSROIPooling again
    d = _nd(inputs[0])
    d.attach_grad()
    head = _nd(RNG.uniform(-1, 1, fn(d).shape))
    head.attach_grad()
    with mx.autograd.record():
        y = fn(d)
        gx = autograd.grad(y, [d], head_grads=head, create_graph=True)[0]
        loss = (gx * _nd(inputs[0])).sum()
    loss.backward()
    np.testing.assert_allclose(head.grad.asnumpy(), fn(_nd(inputs[0])).asnumpy(), rtol=1e-12)


def test_deformable_second_order_is_an_error():
    x = _nd(RNG.uniform(-1, 1, (1, 2, 4, 4)))
    off = _nd(RNG.uniform(-1, 1, (1, 8, 3, 3)))
    w = _nd(RNG.uniform(-1, 1, (2, 2, 2, 2)))
    for a in (x, off, w):
        a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.DeformableConvolution(x, off, w, kernel=(2, 2), num_filter=2,
                                                no_bias=True)
        gx = autograd.grad(y, [x], create_graph=True)[0]
        loss = (gx * gx).sum()
    with pytest.raises(MXNetError, match="second-order"):
        loss.backward()


def test_proposal_gradients_are_zero():
    _, params, inputs, _, g = _gold("multi_basic")
    for i in range(3):
        assert not g["grad%d" % i].any()


# -- symbol and hybridized block ------------------------------------------------------

def test_symbol_simple_bind():
    for name in ("deform_groups", "psroi_basic", "multi_ties"):
        op, params, inputs, outs, _ = _gold(name)
        names = ["v%d" % i for i in range(len(inputs))]
        net = getattr(mx.sym.contrib, op[len("_contrib_"):])(
            *[mx.sym.var(n) for n in names], **params)
        net = mx.sym.load_json(net.tojson())
        ex = net.simple_bind(mx.cpu(), grad_req="null",
                             **{n: a.shape for n, a in zip(names, inputs)})
        for n, a in zip(names, inputs):
            ex.arg_dict[n][:] = _nd(a)
        ys = ex.forward()
        assert len(ys) == len(outs)
        for y, ref in zip(ys, outs):
            assert y.shape == ref.shape
            np.testing.assert_allclose(y.asnumpy(), ref, rtol=2e-5, atol=2e-6, err_msg=name)


def test_symbol_infers_weight_and_offset_shapes():
    net = mx.sym.contrib.DeformableConvolution(
        mx.sym.var("data"), mx.sym.var("offset"), mx.sym.var("weight"), mx.sym.var("bias"),
        kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=8, num_group=2,
        num_deformable_group=2)
    args, outs, _ = net.infer_shape(data=(2, 4, 9, 8))
    assert args == [(2, 4, 9, 8), (2, 36, 5, 4), (8, 2, 3, 3), (8,)]
    assert outs == [(2, 8, 5, 4)]
    prop = mx.sym.contrib.MultiProposal(mx.sym.var("c"), mx.sym.var("b"), mx.sym.var("i"),
                                        rpn_post_nms_top_n=7, output_score=True)
    assert prop.infer_shape(c=(3, 24, 5, 6))[1] == [(21, 5), (21, 1)]


def _gold_block():
    g = {k.split("/", 1)[1]: GOLD[k] for k in GOLD.files if k.startswith("block/")}
    return json.loads(str(g["kwargs"])), g


def test_hybridized_block_matches_mxnet():
    kwargs, g = _gold_block()
    layer = cnn.DeformableConvolution(**kwargs)
    assert sorted(k[len(layer.prefix):] for k in layer.collect_params()) == sorted(
        k[len("param/"):] for k in g if k.startswith("param/"))
    assert layer.prefix.startswith("deformable_conv")
    assert layer.deformable_conv_weight.shape == (4, 0, 3, 3)
    layer.initialize()
    layer.hybridize()
    x = _nd(g["x"])
    layer(x)
    for name, prm in layer.collect_params().items():
        prm.set_data(_nd(g["param/" + name[len(layer.prefix):]]))
    x.attach_grad()
    with mx.autograd.record():
        y = layer(x)
    y.backward(_nd(g["head"]))
    np.testing.assert_allclose(y.asnumpy(), g["out"], rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), g["xgrad"], rtol=2e-5, atol=2e-5)
    for name, prm in layer.collect_params().items():
        np.testing.assert_allclose(prm.grad().asnumpy(), g["pgrad/" + name[len(layer.prefix):]],
                                   rtol=2e-5, atol=2e-5, err_msg=name)


def test_block_defaults_start_as_a_convolution():
    layer = cnn.DeformableConvolution(3, kernel_size=(3, 3), padding=(1, 1), use_bias=False)
    layer.initialize(mx.init.Uniform(0.5))
    x = _nd(RNG.uniform(-1, 1, (1, 2, 5, 5)).astype(np.float32))
    y = layer(x)
    assert not layer.offset_weight.data().asnumpy().any()     # zeros initialiser
    ref = mx.nd.Convolution(x, layer.deformable_conv_weight.data(), kernel=(3, 3),
                            pad=(1, 1), num_filter=3, no_bias=True)
    np.testing.assert_allclose(y.asnumpy(), ref.asnumpy(), rtol=1e-5, atol=1e-6)
    assert repr(layer) == ("DeformableConvolution(2 -> 3, kernel_size=(3, 3), stride=(1, 1), "
                           "padding=(1, 1), bias=False)")


# -- errors ---------------------------------------------------------------------------

def test_errors_name_the_argument():
    x = mx.nd.zeros((1, 4, 6, 6))
    w = mx.nd.zeros((2, 4, 3, 3))
    with pytest.raises(MXNetError, match="offset has shape"):
        mx.nd.contrib.DeformableConvolution(x, mx.nd.zeros((1, 18, 6, 6)), w, kernel=(3, 3),
                                            num_filter=2, no_bias=True)
    with pytest.raises(MXNetError, match="num_deformable_group=3"):
        mx.nd.contrib.DeformableConvolution(x, mx.nd.zeros((1, 54, 4, 4)), w, kernel=(3, 3),
                                            num_filter=2, no_bias=True, num_deformable_group=3)
    with pytest.raises(MXNetError, match="output_dim"):
        mx.nd.contrib.PSROIPooling(x, mx.nd.array([[0, 0, 0, 4, 4]]), spatial_scale=1.0,
                                   output_dim=2, pooled_size=3)
    with pytest.raises(MXNetError, match="batch index"):
        mx.nd.contrib.PSROIPooling(x, mx.nd.array([[1, 0, 0, 4, 4]]), spatial_scale=1.0,
                                   output_dim=1, pooled_size=2)
    cls, bbox, info = mx.nd.zeros((2, 6, 3, 3)), mx.nd.zeros((2, 12, 3, 3)), mx.nd.ones((2, 3))
    with pytest.raises(MXNetError, match="MultiProposal"):
        mx.nd.contrib.Proposal(cls, bbox, info, scales=(8,), ratios=(0.5, 1, 2))
    with pytest.raises(MXNetError, match="2 \\* len\\(scales\\)"):
        mx.nd.contrib.MultiProposal(cls, bbox, info)
    with pytest.raises(MXNetError, match="feature map"):
        mx.nd.contrib.MultiProposal(cls, bbox, mx.nd.array([[100, 30, 1]] * 2), scales=(8,),
                                    ratios=(0.5, 1, 2))
    with pytest.raises(MXNetError, match="float32"):
        mx.nd.contrib.MultiProposal(cls.astype("float64"), bbox.astype("float64"),
                                    info.astype("float64"), scales=(8,), ratios=(0.5, 1, 2))
