"""gluon.nn convolution, pooling, padding and activation layers: shapes and values
against NumPy and the nd ops, deferred shapes, names and reprs as MXNet 1.9.1 prints
them, channels-last layouts, and errors."""
import math

import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import nn
from mxlite.gluon.nn.activations import ELU, GELU, LeakyReLU, PReLU, SELU, Swish
from mxlite.gluon.nn.conv_layers import (
    AvgPool1D, AvgPool2D, AvgPool3D, Conv1D, Conv1DTranspose, Conv2D, Conv2DTranspose, Conv3D,
    Conv3DTranspose, GlobalAvgPool1D, GlobalAvgPool2D, GlobalAvgPool3D, GlobalMaxPool1D,
    GlobalMaxPool2D, GlobalMaxPool3D, MaxPool1D, MaxPool2D, MaxPool3D, ReflectionPad2D)


def _rand(*shape):
    return np.random.uniform(-1, 1, shape).astype(np.float32)


def _np_conv2d(x, w, b, stride, pad, dilate, groups):
    """Direct NumPy cross-correlation, NCHW data and (O, C/g, kh, kw) weight."""
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[0]), (pad[1], pad[1])))
    oh = (h + 2 * pad[0] - dilate[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + 2 * pad[1] - dilate[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, o, oh, ow))
    og = o // groups
    for oc in range(o):
        g = oc // og
        for i in range(oh):
            for j in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg,
                           i * stride[0]:i * stride[0] + dilate[0] * (kh - 1) + 1:dilate[0],
                           j * stride[1]:j * stride[1] + dilate[1] * (kw - 1) + 1:dilate[1]]
                y[:, oc, i, j] = (patch * w[oc]).sum(axis=(1, 2, 3)) + b[oc]
    return y


# ----------------------------------------------------------------------------
# Convolutions

def test_conv2d_matches_numpy_with_stride_pad_dilation_groups():
    conv = Conv2D(4, (3, 2), strides=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2,
                  in_channels=6)
    conv.initialize(mx.init.Uniform(0.5))
    conv.bias.set_data(mx.nd.array(_rand(4)))
    x = _rand(2, 6, 7, 5)
    y = conv(mx.nd.array(x))
    want = _np_conv2d(x, conv.weight.data().asnumpy(), conv.bias.data().asnumpy(),
                      (2, 1), (1, 2), (1, 2), 2)
    assert y.shape == want.shape == (2, 4, 4, 7)
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("layer, x_shape, y_shape", [
    (lambda: Conv1D(3, 3, strides=2, padding=1), (2, 4, 9), (2, 3, 5)),
    (lambda: Conv2D(5, 3, activation="relu"), (1, 2, 6, 6), (1, 5, 4, 4)),
    (lambda: Conv3D(2, (2, 3, 1), use_bias=False), (1, 3, 4, 5, 6), (1, 2, 3, 3, 6)),
])
def test_conv_equals_nd_convolution_with_the_same_weights(layer, x_shape, y_shape):
    conv = layer()
    conv.initialize()
    x = mx.nd.array(_rand(*x_shape))
    y = conv(x)
    assert y.shape == y_shape
    k = conv._kwargs
    args = [x, conv.weight.data()] + ([] if conv.bias is None else [conv.bias.data()])
    want = mx.nd.Convolution(*args, kernel=k["kernel"], stride=k["stride"], pad=k["pad"],
                             dilate=k["dilate"], num_filter=k["num_filter"],
                             no_bias=conv.bias is None)
    if conv.act is not None:
        want = mx.nd.relu(want)
    np.testing.assert_allclose(y.asnumpy(), want.asnumpy(), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("cls, nsp", [(Conv1DTranspose, 1), (Conv2DTranspose, 2),
                                      (Conv3DTranspose, 3)])
def test_transposed_conv_is_the_adjoint_of_conv(cls, nsp):
    # <deconv(x; W), y> == <x, conv(y; W)>: Deconvolution is the transpose of Convolution.
    up = cls(2, 3, strides=2, padding=1, output_padding=1, in_channels=4, use_bias=False)
    up.initialize()
    x = mx.nd.array(_rand(1, 4, *([3] * nsp)))
    y_up = up(x)
    assert y_up.shape == (1, 2) + (6,) * nsp       # (3 - 1) * 2 - 2 + 3 + 1
    y = mx.nd.array(_rand(*y_up.shape))
    down = mx.nd.Convolution(y, up.weight.data(), kernel=(3,) * nsp, stride=(2,) * nsp,
                             pad=(1,) * nsp, num_filter=4, no_bias=True)
    lhs = float((y_up * y).sum().asscalar())
    rhs = float((x * down).sum().asscalar())
    assert abs(lhs - rhs) < 1e-4 * max(1.0, abs(lhs))


def test_conv_gradients_flow_to_weight_bias_and_data():
    conv = Conv2D(3, 2, in_channels=2)
    conv.initialize()
    x = mx.nd.array(_rand(2, 2, 4, 4))
    x.attach_grad()
    with mx.autograd.record():
        y = conv(x)
    y.backward()
    # d sum(y) / d bias = number of output positions per channel
    np.testing.assert_allclose(conv.bias.grad().asnumpy(), np.full(3, 2 * 3 * 3))
    assert np.abs(conv.weight.grad().asnumpy()).sum() > 0
    assert x.grad.shape == x.shape


def test_deferred_in_channels_resolve_at_first_forward():
    conv = Conv2D(8, 3)
    assert conv.weight.shape == (8, 0, 3, 3)
    conv.initialize()
    with pytest.raises(mx.gluon.DeferredInitializationError):
        conv.weight.data()
    conv(mx.nd.ones((1, 5, 6, 6)))
    assert conv.weight.shape == (8, 5, 3, 3)
    assert conv.weight.data().shape == (8, 5, 3, 3)
    up = Conv2DTranspose(6, 3, groups=3)
    assert up.weight.shape == (0, 2, 3, 3)
    up.initialize()
    assert up(mx.nd.ones((1, 9, 4, 4))).shape == (1, 6, 6, 6)
    assert up.weight.shape == (9, 2, 3, 3)


def test_deferred_shapes_in_a_network():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(Conv2D(4, 3, activation="relu"), MaxPool2D(), Conv2D(6, 3), GlobalAvgPool2D(),
                nn.Flatten(), nn.Dense(2))
    net.initialize()
    assert net(mx.nd.ones((2, 3, 10, 10))).shape == (2, 2)
    shapes = {k: v.shape for k, v in net.collect_params().items()}
    assert shapes == {"hybridsequential0_conv0_weight": (4, 3, 3, 3),
                      "hybridsequential0_conv0_bias": (4,),
                      "hybridsequential0_conv1_weight": (6, 4, 3, 3),
                      "hybridsequential0_conv1_bias": (6,),
                      "hybridsequential0_dense0_weight": (2, 6),
                      "hybridsequential0_dense0_bias": (2,)}


@pytest.mark.parametrize("cls, layout, wshape", [
    (Conv2D, "NHWC", (4, 3, 2, 2)), (Conv2DTranspose, "NHWC", (2, 3, 2, 4)),
    (Conv3D, "NDHWC", (4, 3, 2, 2, 2)), (Conv3DTranspose, "NDHWC", (2, 3, 2, 2, 4))])
def test_channels_last_layouts_match_channels_first(cls, layout, wshape):
    nsp = len(layout) - 2
    kernel = (3,) + (2,) * (nsp - 1)
    last = cls(4, kernel, layout=layout)       # weight shapes as MXNet infers them
    last.initialize()
    x = _rand(1, *([5] * nsp), 2)
    y_last = last(mx.nd.array(x))
    assert last.weight.shape == wshape
    first = cls(4, kernel, in_channels=2)
    first.initialize()
    to_first = (0, nsp + 1) + tuple(range(1, nsp + 1))
    first.weight.set_data(last.weight.data().transpose(to_first))
    first.bias.set_data(last.bias.data())
    y_first = first(mx.nd.array(x.transpose(to_first)))
    to_last = (0,) + tuple(range(2, nsp + 2)) + (1,)
    np.testing.assert_allclose(y_last.asnumpy(), y_first.asnumpy().transpose(to_last),
                               rtol=1e-5, atol=1e-6)


# MXNet 1.9.1 output, observed with a real MXNet 1.9.1 install (`repr(layer)`, `layer.weight.shape`).
@pytest.mark.parametrize("make, text, wshape", [
    (lambda: Conv1D(4, 3), "Conv1D(None -> 4, kernel_size=(3,), stride=(1,))", (4, 0, 3)),
    (lambda: Conv2D(16, 3, in_channels=3),
     "Conv2D(3 -> 16, kernel_size=(3, 3), stride=(1, 1))", (16, 3, 3, 3)),
    (lambda: Conv2D(16, (3, 5), strides=2, padding=1, dilation=2, groups=2, use_bias=False,
                    activation="relu"),
     "Conv2D(None -> 16, kernel_size=(3, 5), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
     "groups=2, bias=False, Activation(relu))", (16, 0, 3, 5)),
    (lambda: Conv3D(8, 2), "Conv3D(None -> 8, kernel_size=(2, 2, 2), stride=(1, 1, 1))",
     (8, 0, 2, 2, 2)),
    (lambda: Conv1DTranspose(4, 3), "Conv1DTranspose(4 -> 0, kernel_size=(3,), stride=(1,))",
     (0, 4, 3)),
    (lambda: Conv2DTranspose(16, 3, in_channels=8, output_padding=1, strides=2),
     "Conv2DTranspose(16 -> 8, kernel_size=(3, 3), stride=(2, 2))", (8, 16, 3, 3)),
    (lambda: Conv2DTranspose(16, 3, groups=2, in_channels=8),
     "Conv2DTranspose(8 -> 8, kernel_size=(3, 3), stride=(1, 1), groups=2)", (8, 8, 3, 3)),
    (lambda: Conv2D(4, (3, 2), layout="NHWC", groups=2),
     "Conv2D(3 -> 4, kernel_size=(3, 2), stride=(1, 1), groups=2)", (4, 3, 2, 0)),
    (lambda: MaxPool2D(3, 2, 1, ceil_mode=True),
     "MaxPool2D(size=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=True, "
     "global_pool=False, pool_type=max, layout=NCHW)", None),
    (lambda: AvgPool1D(), "AvgPool1D(size=(2,), stride=(2,), padding=(0,), ceil_mode=False, "
     "global_pool=False, pool_type=avg, layout=NCW)", None),
    (lambda: GlobalAvgPool3D(), "GlobalAvgPool3D(size=(1, 1, 1), stride=(1, 1, 1), "
     "padding=(0, 0, 0), ceil_mode=True, global_pool=True, pool_type=avg, layout=NCDHW)", None),
    (lambda: ReflectionPad2D(2), "ReflectionPad2D(\n\n)", None),
    (lambda: LeakyReLU(0.1), "LeakyReLU(0.1)", None),
    (lambda: PReLU(in_channels=3), "PReLU(\n\n)", None),
])
def test_repr_and_weight_shape_as_mxnet(make, text, wshape):
    layer = make()
    assert repr(layer) == text
    if wshape is not None:
        assert layer.weight.shape == wshape


def test_names_and_prefixes_as_mxnet():
    # MXNet 1.9.1: conv layers count as 'conv', pooling as 'pool'; weight init None,
    # bias 'zeros', both deferred; PReLU's alpha is not deferred.
    conv, pool, prelu = Conv2D(2, 1), AvgPool2D(), PReLU()
    pad, swish = ReflectionPad2D(), Swish()
    assert conv.prefix.startswith("conv") and pool.prefix.startswith("pool")
    assert pad.prefix.startswith("reflectionpad2d") and swish.prefix.startswith("swish")
    assert sorted(conv.collect_params().keys()) == [conv.prefix + "bias", conv.prefix + "weight"]
    assert conv.weight.init is None and conv.bias.init == "zeros"
    assert conv.weight._allow_deferred_init and conv.bias._allow_deferred_init
    assert list(prelu.collect_params().keys()) == [prelu.prefix + "alpha"]
    assert prelu.alpha.shape == (1,) and not prelu.alpha._allow_deferred_init
    net = nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(Conv2D(2, 1), Conv2DTranspose(2, 1), MaxPool2D(), Conv1D(2, 1))
    assert [b.prefix for b in net._children.values()] == [
        "net_conv0_", "net_conv1_", "net_pool0_", "net_conv2_"]


# ----------------------------------------------------------------------------
# Pooling and padding

def _np_pool2d(x, k, s, op):
    n, c, h, w = x.shape
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    y = np.empty((n, c, oh, ow), x.dtype)
    for i in range(oh):
        for j in range(ow):
            y[:, :, i, j] = op(x[:, :, i * s:i * s + k, j * s:j * s + k], axis=(2, 3))
    return y


@pytest.mark.parametrize("cls, op", [(MaxPool2D, np.max), (AvgPool2D, np.mean)])
def test_pool2d_matches_numpy(cls, op):
    x = _rand(2, 3, 7, 7)
    y = cls(pool_size=3, strides=2)(mx.nd.array(x))
    np.testing.assert_allclose(y.asnumpy(), _np_pool2d(x, 3, 2, op), rtol=1e-6, atol=1e-6)


def test_pool_strides_default_to_pool_size_and_ceil_mode():
    x = mx.nd.ones((1, 1, 7, 7))
    assert MaxPool2D(pool_size=3)(x).shape == (1, 1, 2, 2)
    assert MaxPool2D(pool_size=3, ceil_mode=True)(x).shape == (1, 1, 3, 3)
    assert MaxPool1D(3)(mx.nd.ones((1, 1, 7))).shape == (1, 1, 2)
    assert MaxPool3D(2)(mx.nd.ones((1, 1, 4, 5, 6))).shape == (1, 1, 2, 2, 3)
    assert AvgPool3D(2, padding=1)(mx.nd.ones((1, 1, 4, 4, 4))).shape == (1, 1, 3, 3, 3)


def test_avg_pool_count_include_pad():
    x = mx.nd.ones((1, 1, 2, 2))
    inc = AvgPool2D(2, strides=1, padding=1)(x).asnumpy()[0, 0]
    exc = AvgPool2D(2, strides=1, padding=1, count_include_pad=False)(x).asnumpy()[0, 0]
    np.testing.assert_allclose(inc, [[0.25, 0.5, 0.25], [0.5, 1, 0.5], [0.25, 0.5, 0.25]])
    np.testing.assert_allclose(exc, np.ones((3, 3)))


@pytest.mark.parametrize("cls, op, nsp", [
    (GlobalMaxPool1D, np.max, 1), (GlobalMaxPool2D, np.max, 2), (GlobalMaxPool3D, np.max, 3),
    (GlobalAvgPool1D, np.mean, 1), (GlobalAvgPool2D, np.mean, 2), (GlobalAvgPool3D, np.mean, 3)])
def test_global_pools(cls, op, nsp):
    x = _rand(2, 3, *([4] * nsp))
    y = cls()(mx.nd.array(x))
    axes = tuple(range(2, 2 + nsp))
    np.testing.assert_allclose(y.asnumpy(), op(x, axis=axes, keepdims=True), rtol=1e-6)


@pytest.mark.parametrize("make, first", [
    (lambda: MaxPool2D(layout="NHWC"), lambda: MaxPool2D()),
    (lambda: AvgPool1D(3, 1, 1, layout="NWC"), lambda: AvgPool1D(3, 1, 1)),
    (lambda: GlobalAvgPool3D(layout="NDHWC"), lambda: GlobalAvgPool3D())])
def test_pooling_channels_last(make, first):
    layer = make()
    nsp = len(layer._layout) - 2
    x = _rand(2, *([4] * nsp), 3)
    to_first = (0, nsp + 1) + tuple(range(1, nsp + 1))
    to_last = (0,) + tuple(range(2, nsp + 2)) + (1,)
    want = first()(mx.nd.array(x.transpose(to_first))).asnumpy().transpose(to_last)
    # float32 sums of 64 values in another order: a few ulps apart
    np.testing.assert_allclose(layer(mx.nd.array(x)).asnumpy(), want, rtol=1e-5)


def test_max_pool_gradient_goes_to_the_maximum():
    x = mx.nd.array([[[1., 5., 2., 0.]]])
    x.attach_grad()
    with mx.autograd.record():
        y = MaxPool1D()(x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[[0, 1, 1, 0]]])


def test_reflection_pad2d():
    x = _rand(1, 2, 3, 4)
    y = ReflectionPad2D(2)(mx.nd.array(x))
    want = np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)), mode="reflect")
    np.testing.assert_array_equal(y.asnumpy(), want)
    y = ReflectionPad2D((0, 0, 0, 0, 1, 0, 0, 2))(mx.nd.array(x))
    np.testing.assert_array_equal(
        y.asnumpy(), np.pad(x, ((0, 0), (0, 0), (1, 0), (0, 2)), mode="reflect"))


# ----------------------------------------------------------------------------
# Activations

_SELU_ALPHA, _SELU_LAMBDA = 1.6732632423543772, 1.0507009873554805


@pytest.mark.parametrize("layer, ref", [
    (lambda: LeakyReLU(0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    (lambda: ELU(), lambda x: np.where(x > 0, x, np.expm1(x))),
    (lambda: ELU(0.5), lambda x: np.where(x > 0, x, 0.5 * np.expm1(x))),
    (lambda: SELU(), lambda x: _SELU_LAMBDA * np.where(x > 0, x, _SELU_ALPHA * np.expm1(x))),
    (lambda: GELU(), lambda x: x * 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    (lambda: Swish(), lambda x: x / (1 + np.exp(-x))),
    (lambda: Swish(2.0), lambda x: x / (1 + np.exp(-2 * x))),
])
def test_activations_match_numpy(layer, ref):
    x = np.random.uniform(-3, 3, (4, 5)).astype(np.float32)
    y = layer()(mx.nd.array(x))
    np.testing.assert_allclose(y.asnumpy(), ref(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_prelu_per_channel_and_its_gradient():
    prelu = PReLU(alpha_initializer=mx.init.Constant(0.5), in_channels=3)
    prelu.initialize()
    x = _rand(2, 3, 4)
    xn = mx.nd.array(x)
    with mx.autograd.record():
        y = prelu(xn)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), np.where(x > 0, x, 0.5 * x), rtol=1e-6)
    want = np.where(x > 0, 0, x).sum(axis=(0, 2))
    np.testing.assert_allclose(prelu.alpha.grad().asnumpy(), want, rtol=1e-5, atol=1e-6)
    shared = PReLU()
    shared.initialize()
    np.testing.assert_allclose(shared(mx.nd.array([-4., 2.])).asnumpy(), [-1., 2.])


def test_activations_are_exported_with_activation_from_basic_layers():
    # nn/__init__ collects activations.py and conv_layers.py next to basic_layers.
    assert nn.Activation.__module__.endswith("basic_layers")
    for name in ("LeakyReLU", "PReLU", "ELU", "SELU", "Swish", "GELU", "Conv2D",
                 "Conv3DTranspose", "GlobalAvgPool2D", "ReflectionPad2D"):
        assert getattr(nn, name).__name__ == name


# ----------------------------------------------------------------------------
# Errors

def test_wrong_input_rank_names_the_layer_and_layout():
    conv = Conv2D(2, 3)
    conv.initialize()
    with pytest.raises(ValueError, match=r"Conv2D: expected 4-D input with layout NCHW, "
                                         r"got input of shape \(1, 3, 5\)"):
        conv(mx.nd.ones((1, 3, 5)))
    with pytest.raises(ValueError, match="MaxPool1D: expected 3-D input"):
        MaxPool1D()(mx.nd.ones((1, 3, 4, 4)))
    with pytest.raises(ValueError, match="ReflectionPad2D: expected 4-D input"):
        ReflectionPad2D(1)(mx.nd.ones((3, 4)))


def test_wrong_in_channels_is_reported_by_the_op():
    conv = Conv2D(2, 3, in_channels=3)
    conv.initialize()
    with pytest.raises(mx.MXNetError, match=r"weight has shape \(2, 3, 3, 3\), expected "
                                            r"\(2, 4, 3, 3\)"):
        conv(mx.nd.ones((1, 4, 5, 5)))


def test_constructor_errors():
    with pytest.raises(ValueError, match="kernel_size must be a number or a list of 2 ints"):
        Conv2D(2, (3, 3, 3))
    with pytest.raises(ValueError, match="layout='NWC' is not supported"):
        Conv1D(2, 3, layout="NWC")
    with pytest.raises(ValueError, match="layout='NCW' is not supported"):
        MaxPool2D(layout="NCW")
    with pytest.raises(ValueError, match="groups=3 must divide channels"):
        Conv2D(4, 3, groups=3)
    with pytest.raises(ValueError, match="output_padding must be a number or a list of 2"):
        Conv2DTranspose(4, 3, output_padding=(1, 1, 1))
    with pytest.raises(ValueError, match="padding must be an int or 8 ints"):
        ReflectionPad2D((1, 1))
    with pytest.raises(AssertionError, match="Slope coefficient for LeakyReLU"):
        LeakyReLU(-0.1)
    conv = Conv2D(4, 3, groups=2)
    conv.initialize()
    with pytest.raises(ValueError, match="groups=2 must divide the input channels"):
        conv(mx.nd.ones((1, 3, 5, 5)))
