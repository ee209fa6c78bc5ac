"""Layers, optimizers and registry queries added for MXNet 1.9.1's API: BatchNormReLU,
ModulatedDeformableConvolution (against MXNet), GroupAdaGrad, the Test optimizer,
mx.operator.get_operator_arguments."""
import os

import numpy as np
import pytest

import mxlite as mx

GOLD = os.path.join(os.path.dirname(__file__), "reference_extra", "mdconv_mxnet191.npz")


def test_batchnorm_relu_is_batchnorm_then_relu():
    x = mx.nd.array(np.random.randn(4, 3, 5))
    bn, bnr = mx.gluon.nn.BatchNorm(in_channels=3), mx.gluon.nn.BatchNormReLU(in_channels=3)
    for layer in (bn, bnr):
        layer.initialize()
    with mx.autograd.record():
        y, yr = bn(x), bnr(x)
    assert np.allclose(yr.asnumpy(), np.maximum(y.asnumpy(), 0), atol=1e-6)
    assert bnr.name.startswith("batchnormrelu")
    assert np.allclose(bnr.running_mean.data().asnumpy(), bn.running_mean.data().asnumpy())
    import mxlite.gluon.nn.activations as act
    assert act.Activation is mx.gluon.nn.Activation


def test_modulated_deformable_convolution_matches_mxnet():
    from mxlite.gluon.contrib.cnn import ModulatedDeformableConvolution
    g = np.load(GOLD)
    layer = ModulatedDeformableConvolution(4, kernel_size=3, padding=1, in_channels=2)
    layer.initialize()
    x = mx.nd.array(g["x"])
    layer(x)
    assert sorted(layer.collect_params()) == sorted(k[2:] for k in g.files if k.startswith("p/"))
    assert layer.offset_weight.shape == (27, 2, 3, 3)
    for name, p in layer.collect_params().items():
        p.set_data(mx.nd.array(g["p/" + name]))
    assert np.allclose(layer(x).asnumpy(), g["y"], atol=1e-5)
    layer.hybridize()
    assert np.allclose(layer(x).asnumpy(), g["y"], atol=1e-5)


def test_group_adagrad_rows_share_a_history():
    opt = mx.optimizer.create("groupadagrad", learning_rate=0.1)
    assert isinstance(opt, mx.optimizer.contrib.GroupAdaGrad)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.ones((2, 3))
    g = np.array([[1.0, 2, 3], [0, 0, 1]])
    upd(0, mx.nd.array(g), w)
    hist = (g * g).mean(axis=1, keepdims=True)
    assert np.allclose(w.asnumpy(), 1 - 0.1 * g / np.sqrt(hist + 1e-5), atol=1e-6)
    assert np.allclose(upd.states[0].asnumpy(), hist)
    with pytest.raises(ValueError, match="weight decay"):
        mx.optimizer.get_updater(mx.optimizer.create("groupadagrad", wd=0.1))(
            0, mx.nd.array(g), mx.nd.ones((2, 3)))


def test_test_optimizer_adds_the_rescaled_gradient():
    upd = mx.optimizer.get_updater(mx.optimizer.create("test", rescale_grad=0.5))
    w = mx.nd.ones(2)
    upd(0, mx.nd.array([2.0, 4.0]), w)
    assert w.asnumpy().tolist() == [2, 3] and upd.states[0].asnumpy().tolist() == [2, 3]
    assert mx.optimizer.optimizer.Test is mx.optimizer.Test


def test_operator_arguments_from_the_registry():
    args = mx.operator.get_operator_arguments("Activation")
    assert args.narg == 2 and args.names == ["data", "act_type"]
    assert args.types[0] == "NDArray-or-Symbol" and args.types[1].endswith("required")
    fc = mx.operator.get_operator_arguments("FullyConnected")
    assert fc.names[:3] == ["data", "weight", "bias"] or "num_hidden" in fc.names
    assert "num_hidden" in fc.names
    ops = mx.operator.get_all_registered_operators()
    assert "Convolution" in ops and "elemwise_add" in ops
    with pytest.raises(mx.MXNetError, match="no operator named"):
        mx.operator.get_operator_arguments("NoSuchOp")


def test_v1_record_iterators_are_the_record_iterators():
    assert mx.io.ImageRecordIter_v1 is mx.io.ImageRecordIter
    assert mx.io.ImageRecordUInt8Iter_v1 is mx.io.ImageRecordUInt8Iter
    import mxlite.io.io as io_io
    assert io_io.ImageRecordIter_v1 is mx.io.ImageRecordIter


def test_lars_matches_mxnet():
    g = np.load(os.path.join(os.path.dirname(__file__), "reference_extra", "lars_mxnet191.npz"))
    for agg in (1, 4):
        for mom in (0.0, 0.9):
            opt = mx.optimizer.create(
                "lars", learning_rate=0.1, momentum=mom, wd=0.01, eta=0.5, rescale_grad=0.5,
                param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "conv_weight"},
                lr_scheduler=mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=0.1))
            opt.aggregate_num = agg
            upd = mx.optimizer.get_updater(opt)
            weights = [mx.nd.array(g["w%d" % i]) for i in range(3)]
            for step in range(3):
                upd([0, 1, 2], [mx.nd.array(g["g%d_%d" % (step, i)]) for i in range(3)],
                    weights)
            for i, w in enumerate(weights):
                assert np.allclose(w.asnumpy(), g["agg%d_mom%s_w%d" % (agg, mom, i)],
                                   atol=1e-6), (agg, mom, i)
    assert mx.optimizer.optimizer.LARS is mx.optimizer.LARS


def test_lbsgd_matches_mxnet():
    g = np.load(os.path.join(os.path.dirname(__file__), "reference_extra", "lbsgd_mxnet191.npz"))
    for strategy in ("linear", "sqrt", "lars"):
        for mom in (0.0, 0.9):
            opt = mx.optimizer.create("lbsgd", learning_rate=0.1, momentum=mom, wd=0.01,
                                      warmup_strategy=strategy, warmup_epochs=2, batch_scale=2,
                                      updates_per_epoch=2, rescale_grad=0.5)
            upd = mx.optimizer.get_updater(opt)
            w = mx.nd.array(g["w"])
            for k in range(6):
                before = w.asnumpy()
                upd(0, mx.nd.array(g["g%d" % k]), w)
                assert np.allclose(w.asnumpy(), g["%s_%s_%d" % (strategy, mom, k)], atol=1e-6)
                if k % 2 == 0:              # the first half of a large batch does not step
                    assert np.array_equal(w.asnumpy(), before)
