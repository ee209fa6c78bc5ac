"""The GPU context (CuPy): every case runs on gpu(0) and on cpu(0) from the same data,
and the two must agree, forward and backward. These tests need a CUDA GPU with CuPy and
are skipped on machines without one; the whole suite can also be re-run on a GPU with
``MXLITE_TEST_CONTEXT=gpu(0)`` (see conftest.py)."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, gluon, nd
from mxlite.gluon import nn

if mx.context.num_gpus() == 0:
    pytest.skip("needs a CUDA GPU and CuPy", allow_module_level=True)

GPU, CPU = mx.gpu(0), mx.cpu(0)


def _rand(shape, seed, low=-1.0, high=1.0):
    return np.random.RandomState(seed).uniform(low, high, shape).astype(np.float32)


def _run(ctx, fn, arrays):
    xs = [nd.array(a, ctx=ctx) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        y = fn(*xs)
    head = nd.array(_rand(y.shape, 99), ctx=ctx)
    y.backward(head)
    assert y.context == ctx
    return y.asnumpy(), [x.grad.asnumpy() for x in xs]


# (name, function of NDArrays, input shapes); each input is drawn from U(-1, 1).
CASES = [
    ("add_broadcast", lambda a, b: a + b, [(3, 4), (1, 4)]),
    ("mul_div", lambda a, b: a * b / (nd.abs(b) + 1), [(5, 6), (5, 6)]),
    ("unary_chain", lambda a: nd.tanh(nd.exp(a) - nd.sigmoid(a)) * nd.relu(a), [(4, 7)]),
    ("sum_mean", lambda a: nd.sum(a, axis=1) + nd.mean(a, axis=1), [(6, 5)]),
    ("max_min", lambda a: nd.max(a, axis=0) - nd.min(a, axis=0), [(6, 5)]),
    ("dot", lambda a, b: nd.dot(a, b), [(8, 16), (16, 4)]),
    ("dot_transpose", lambda a, b: nd.dot(a, b, transpose_b=True), [(8, 16), (4, 16)]),
    ("batch_dot", lambda a, b: nd.batch_dot(a, b), [(3, 4, 5), (3, 5, 2)]),
    ("fully_connected", lambda x, w, b: nd.FullyConnected(x, w, b, num_hidden=6),
     [(4, 10), (6, 10), (6,)]),
    ("convolution", lambda x, w, b: nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4,
                                                   pad=(1, 1), stride=(2, 2)),
     [(2, 3, 9, 9), (4, 3, 3, 3), (4,)]),
    ("convolution_3x3_same", lambda x, w: nd.Convolution(x, w, kernel=(3, 3), num_filter=8,
                                                         pad=(1, 1), no_bias=True),
     [(2, 8, 12, 12), (8, 8, 3, 3)]),
    ("convolution_grouped", lambda x, w: nd.Convolution(x, w, kernel=(3, 3), num_filter=6,
                                                        num_group=3, no_bias=True),
     [(2, 6, 7, 7), (6, 2, 3, 3)]),
    ("convolution_1x1", lambda x, w: nd.Convolution(x, w, kernel=(1, 1), num_filter=5,
                                                    no_bias=True),
     [(2, 4, 6, 6), (5, 4, 1, 1)]),
    ("convolution_1d", lambda x, w: nd.Convolution(x, w, kernel=(3,), num_filter=4,
                                                   no_bias=True),
     [(2, 3, 10), (4, 3, 3)]),
    ("deconvolution", lambda x, w: nd.Deconvolution(x, w, kernel=(3, 3), num_filter=3,
                                                    stride=(2, 2), no_bias=True),
     [(2, 4, 5, 5), (4, 3, 3, 3)]),
    ("max_pool", lambda x: nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                      pool_type="max"), [(2, 3, 8, 8)]),
    ("avg_pool", lambda x: nd.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="avg"),
     [(2, 3, 8, 8)]),
    ("global_pool", lambda x: nd.Pooling(x, kernel=(1, 1), global_pool=True, pool_type="avg"),
     [(2, 3, 5, 5)]),
    ("softmax", lambda x: nd.softmax(x, axis=-1), [(4, 9)]),
    ("log_softmax", lambda x: nd.log_softmax(x, axis=1), [(4, 9)]),
    ("activation", lambda x: nd.Activation(x, act_type="softrelu")
     + nd.LeakyReLU(x, act_type="leaky", slope=0.1), [(3, 8)]),
    ("layer_norm", lambda x, g, b: nd.LayerNorm(x, g, b, axis=-1), [(4, 6), (6,), (6,)]),
    ("reshape_transpose", lambda x: nd.transpose(nd.reshape(x, (4, 3, 2)), axes=(2, 0, 1)),
     [(6, 4)]),
    ("concat_slice", lambda a, b: nd.slice_axis(nd.concat(a, b, dim=1), axis=1, begin=1,
                                                end=5), [(3, 3), (3, 4)]),
    ("where_clip", lambda a, b: nd.where(a > b, nd.clip(a, -0.5, 0.5), b), [(4, 5), (4, 5)]),
    ("norm_sqrt", lambda a: nd.sqrt(nd.sum(nd.square(a), axis=1) + 1), [(5, 4)]),
]


@pytest.mark.parametrize("name,fn,shapes", CASES, ids=[c[0] for c in CASES])
def test_op_agrees_with_cpu(name, fn, shapes):
    arrays = [_rand(s, i) for i, s in enumerate(shapes)]
    y_gpu, g_gpu = _run(GPU, fn, arrays)
    y_cpu, g_cpu = _run(CPU, fn, arrays)
    np.testing.assert_allclose(y_gpu, y_cpu, rtol=1e-4, atol=1e-5)
    for a, b in zip(g_gpu, g_cpu):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_batchnorm_training_and_inference_agree_with_cpu():
    x = _rand((4, 3, 5, 5), 0)
    gamma, beta = _rand((3,), 1, 0.5, 1.5), _rand((3,), 2)
    results = {}
    for ctx in (GPU, CPU):
        args = [nd.array(a, ctx=ctx) for a in (x, gamma, beta)]
        mean, var = nd.zeros((3,), ctx=ctx), nd.ones((3,), ctx=ctx)
        for a in args:
            a.attach_grad()
        with autograd.record():
            y = nd.BatchNorm(*args, mean, var, fix_gamma=False, momentum=0.8)
        y.backward(nd.array(_rand(y.shape, 5), ctx=ctx))
        infer = nd.BatchNorm(*args, mean, var, fix_gamma=False, use_global_stats=True)
        results[ctx] = [y, infer, mean, var] + [a.grad for a in args]
    for a, b in zip(results[GPU], results[CPU]):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-4, atol=1e-5)


def test_transfers_between_contexts():
    a = _rand((3, 4), 0)
    g = nd.array(a, ctx=GPU)
    assert g.context == GPU and g.dtype == np.float32
    c = g.as_in_context(CPU)
    assert c.context == CPU
    np.testing.assert_array_equal(c.asnumpy(), a)
    back = nd.zeros((3, 4), ctx=GPU)
    c.copyto(back)
    np.testing.assert_array_equal(back.asnumpy(), a)
    assert g.as_in_context(GPU) is g
    np.testing.assert_array_equal(g.copyto(CPU).asnumpy(), a)
    assert float(nd.sum(g).asscalar()) == pytest.approx(float(a.sum()), rel=1e-5)
    with pytest.raises(mx.MXNetError):
        nd.array(a, ctx=GPU) + nd.array(a, ctx=CPU)


def test_random_and_creation_on_gpu():
    mx.random.seed(1)
    u = nd.random.uniform(-2, 3, shape=(1000,), ctx=GPU)
    n = nd.random.normal(0, 1, shape=(2000,), ctx=GPU)
    assert u.context == GPU and n.context == GPU
    un = u.asnumpy()
    assert un.min() >= -2 and un.max() < 3 and abs(un.mean() - 0.5) < 0.3
    assert abs(n.asnumpy().std() - 1) < 0.1
    np.testing.assert_array_equal(nd.arange(5, ctx=GPU).asnumpy(), np.arange(5))
    np.testing.assert_array_equal(nd.ones((2, 2), ctx=GPU).asnumpy(), np.ones((2, 2)))
    np.testing.assert_array_equal(nd.one_hot(nd.array([0, 2], ctx=GPU), 3).asnumpy(),
                                  np.eye(3)[[0, 2]])


def test_indexing_and_embedding_on_gpu():
    w = _rand((10, 4), 0)
    idx = np.array([1, 3, 3, 9], np.float32)
    out = {}
    for ctx in (GPU, CPU):
        wn = nd.array(w, ctx=ctx)
        wn.attach_grad()
        with autograd.record():
            y = nd.Embedding(nd.array(idx, ctx=ctx), wn, input_dim=10, output_dim=4)
            z = nd.take(wn, nd.array([0, 0, 2], ctx=ctx)) * 2
        autograd.backward([y, z])
        x = nd.array(w, ctx=ctx)
        x[1:3] = 5
        out[ctx] = [y, z, wn.grad, x, nd.argmax(x, axis=1), nd.topk(x, k=2, axis=1),
                    nd.pick(x, nd.array([0, 1] * 5, ctx=ctx), axis=1), x[nd.array([2, 0], ctx=ctx)]]
    for a, b in zip(out[GPU], out[CPU]):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)


def _cnn():
    # No bias before BatchNorm: its gradient is zero up to round-off, which Adam would
    # scale up to different noise on each device.
    net = nn.HybridSequential()
    net.add(nn.Conv2D(8, 3, padding=1, use_bias=False), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(2), nn.Conv2D(16, 3, padding=1, use_bias=False), nn.BatchNorm(),
            nn.Activation("relu"), nn.GlobalAvgPool2D(), nn.Dense(10))
    return net


def _train(ctx, hybridize, optimizer, steps=3):
    mx.random.seed(3)
    net = _cnn()
    net.initialize(mx.init.Xavier(), ctx=ctx)
    if hybridize:
        net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), optimizer,
                            {"learning_rate": 0.05, "momentum": 0.9} if optimizer == "sgd"
                            else {"learning_rate": 0.01})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    x = nd.array(_rand((4, 3, 12, 12), 7), ctx=ctx)
    y = nd.array(np.array([1, 5, 9, 0], np.float32), ctx=ctx)
    losses = []
    for _ in range(steps):
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(4)
        losses.append(float(loss.mean().asscalar()))
    params = [v.data(ctx).asnumpy() for v in net.collect_params().values()]
    return losses, params, net


@pytest.mark.parametrize("hybridize", [False, True])
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_cnn_training_agrees_with_cpu(hybridize, optimizer):
    l_gpu, p_gpu, net = _train(GPU, hybridize, optimizer)
    l_cpu, p_cpu, _ = _train(CPU, hybridize, optimizer)
    assert all(p.list_ctx() == [GPU] for p in net.collect_params().values())
    np.testing.assert_allclose(l_gpu, l_cpu, rtol=1e-3, atol=1e-4)
    assert l_gpu[-1] < l_gpu[0]
    assert len(p_gpu) == len(p_cpu) == 12
    for i, (a, b) in enumerate(zip(p_gpu, p_cpu)):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-4, err_msg=str(i))


def test_parameters_saved_on_gpu_load_on_cpu(tmp_path):
    _, _, net = _train(GPU, True, "sgd", steps=1)
    f = str(tmp_path / "net.params")
    net.save_parameters(f)
    other = _cnn()
    other.load_parameters(f, ctx=CPU)
    for v in other.collect_params().values():
        assert v.list_ctx() == [CPU]
    x = _rand((2, 3, 12, 12), 4)
    np.testing.assert_allclose(other(nd.array(x)).asnumpy(),
                               net(nd.array(x, ctx=GPU)).asnumpy(), rtol=1e-4, atol=1e-5)
    again = _cnn()
    again.load_parameters(f, ctx=GPU)
    np.testing.assert_allclose(again(nd.array(x, ctx=GPU)).asnumpy(),
                               net(nd.array(x, ctx=GPU)).asnumpy(), rtol=1e-6, atol=1e-6)


def test_numpy_interface_on_gpu():
    npx = mx.npx
    npx.set_np()
    try:
        a = mx.np.array(_rand((3, 4), 0), ctx=GPU)
        b = mx.np.array(_rand((4, 2), 1), ctx=GPU)
        a.attach_grad()
        with autograd.record():
            c = mx.np.tanh(a @ b).sum()
        c.backward()
        an, bn = _rand((3, 4), 0), _rand((4, 2), 1)
        t = np.tanh(an @ bn)
        assert c.ctx == GPU
        np.testing.assert_allclose(float(c), t.sum(), rtol=1e-5)
        np.testing.assert_allclose(a.grad.asnumpy(), (1 - t ** 2) @ bn.T, rtol=1e-4, atol=1e-6)
        z = mx.np.zeros((2, 3), ctx=GPU) + mx.np.arange(3, ctx=GPU)
        np.testing.assert_array_equal(z.asnumpy(), np.zeros((2, 3)) + np.arange(3))
    finally:
        npx.reset_np()


def test_metric_and_loss_on_gpu_outputs():
    pred = nd.array(_rand((6, 4), 0), ctx=GPU)
    label = nd.array(np.array([0, 1, 2, 3, 0, 1], np.float32), ctx=GPU)
    acc = mx.metric.Accuracy()
    acc.update([label], [pred])
    expect = (_rand((6, 4), 0).argmax(1) == np.array([0, 1, 2, 3, 0, 1])).mean()
    assert acc.get()[1] == pytest.approx(expect)
    ce = mx.metric.CrossEntropy()
    ce.update([label], [nd.softmax(pred)])
    assert np.isfinite(ce.get()[1])
    l2 = gluon.loss.L2Loss()(pred, nd.zeros((6, 4), ctx=GPU))
    assert l2.context == GPU
    np.testing.assert_allclose(l2.asnumpy(), (_rand((6, 4), 0) ** 2).mean(1) / 2, rtol=1e-5)


def test_multi_context_split_and_load():
    x = nd.array(_rand((4, 3), 0))
    parts = gluon.utils.split_and_load(x, [GPU, CPU])
    assert [p.context for p in parts] == [GPU, CPU]
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]), x.asnumpy())
    net = nn.Dense(2)
    net.initialize(ctx=[GPU, CPU])
    outs = [net(p) for p in parts]
    np.testing.assert_allclose(outs[0].asnumpy(), net(parts[0].as_in_context(CPU)).asnumpy(),
                               rtol=1e-5, atol=1e-6)
    assert outs[0].context == GPU


class _HostDouble(mx.operator.CustomOp):
    """A CustomOp computing on the host (asnumpy) and assigning NumPy results."""

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0].asnumpy() * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0].asnumpy() * 2)


@mx.operator.register("gpu_test_host_double")
class _HostDoubleProp(mx.operator.CustomOpProp):
    def list_arguments(self):
        return ["data"]

    def infer_shape(self, in_shape):
        return in_shape, in_shape, []

    def create_operator(self, ctx, shapes, dtypes):
        return _HostDouble()


def test_custom_op_assigning_host_values_on_gpu():
    a = _rand((3, 4), 0)
    x = nd.array(a, ctx=GPU)
    x.attach_grad()
    with autograd.record():
        y = nd.Custom(x, op_type="gpu_test_host_double")
    y.backward(nd.ones((3, 4), ctx=GPU))
    assert y.context == GPU and x.grad.context == GPU
    np.testing.assert_allclose(y.asnumpy(), a * 2, rtol=1e-6)
    np.testing.assert_allclose(x.grad.asnumpy(), np.full((3, 4), 2.0), rtol=1e-6)
    # a symbol bound on the CPU while the default context is the GPU
    with GPU:
        ex = mx.sym.Custom(mx.sym.var("x"), op_type="gpu_test_host_double").simple_bind(
            CPU, x=(3, 4))
        out = ex.forward(x=nd.array(a))[0]
    assert out.context == CPU
    np.testing.assert_allclose(out.asnumpy(), a * 2, rtol=1e-6)


def test_samplers_on_gpu():
    mx.random.seed(2)
    draws = {
        "poisson": nd.random.poisson(3.0, shape=(4000,), ctx=GPU),
        "negative_binomial": nd.random.negative_binomial(4, 0.5, shape=(4000,), ctx=GPU),
        "gen_negative_binomial": nd.random.generalized_negative_binomial(
            2.0, 0.5, shape=(4000,), ctx=GPU),
        "np_normal": mx.np.random.normal(1.0, 2.0, size=(4000,), ctx=GPU),
        "np_uniform": mx.np.random.uniform(-1.0, 1.0, size=(4000,), ctx=GPU),
    }
    means = {"poisson": 3.0, "negative_binomial": 4.0, "gen_negative_binomial": 2.0,
             "np_normal": 1.0, "np_uniform": 0.0}
    for k, v in draws.items():
        assert v.context == GPU, k
        assert abs(float(v.asnumpy().mean()) - means[k]) < 0.2, k
    ints = mx.np.random.randint(0, 5, size=(500,), ctx=GPU).asnumpy()
    assert set(np.unique(ints).tolist()) == {0, 1, 2, 3, 4}
    img = nd.array(np.random.RandomState(0).uniform(0, 255, (6, 5, 3)), ctx=GPU)
    assert nd.image.random_contrast(img, 0.5, 1.5).context == GPU
    assert nd.image.random_color_jitter(img, 0.3, 0.3, 0.3, 0.1).shape == (6, 5, 3)


def test_rules_with_constant_masks_on_gpu():
    spd = _rand((3, 3), 0)
    spd = spd @ spd.T + 3 * np.eye(3, dtype=np.float32)
    cases = [(lambda a: nd.linalg.potrf(a), [spd]),
             (lambda a: nd.linalg.sumlogdiag(a), [spd]),
             (lambda a: nd.linalg.syevd(a)[1], [spd])]
    for fn, arrays in cases:
        y_gpu, g_gpu = _run(GPU, fn, arrays)
        y_cpu, g_cpu = _run(CPU, fn, arrays)
        np.testing.assert_allclose(y_gpu, y_cpu, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(g_gpu[0], g_cpu[0], rtol=1e-3, atol=1e-4)
    mx.npx.set_np()
    try:
        out = {}
        for ctx in (GPU, CPU):
            a = mx.np.array(_rand((3, 4), 1), ctx=ctx)
            b = mx.np.array(_rand((3, 4), 2), ctx=ctx)
            a.attach_grad()
            with autograd.record():
                y = (mx.np.copysign(a, b) * mx.np.trace(a)).sum()
            y.backward()
            out[ctx] = (float(y), a.grad.asnumpy(),
                        mx.np.delete(a, [0, 2], axis=1).asnumpy())
        np.testing.assert_allclose(out[GPU][0], out[CPU][0], rtol=1e-5)
        np.testing.assert_allclose(out[GPU][1], out[CPU][1], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(out[GPU][2], out[CPU][2])
    finally:
        mx.npx.reset_np()


def test_dataloader_workers_make_host_batches_under_a_gpu_default():
    data = gluon.data.ArrayDataset(np.arange(12, dtype=np.float32).reshape(6, 2))
    with GPU:
        batches = list(gluon.data.DataLoader(data, batch_size=3, num_workers=2))
    assert [b.context for b in batches] == [CPU, CPU]
    np.testing.assert_array_equal(batches[1].asnumpy(), np.arange(6, 12).reshape(3, 2))
    assert batches[0].as_in_context(GPU).context == GPU


def test_executors_take_arrays_and_head_gradients_from_another_device():
    x = mx.sym.var("x")
    y = mx.sym.BatchNorm(mx.sym.FullyConnected(x, num_hidden=3, name="fc"), name="bn") * 2
    data = _rand((4, 5), 0)
    grads = {}
    for ctx in (GPU, CPU):
        ex = y.simple_bind(ctx, x=(4, 5))
        for name, a in ex.arg_dict.items():
            a[:] = nd.array(_rand(a.shape, 1), ctx=GPU)      # copied in from the GPU
        ex.forward(is_train=True, x=nd.array(data, ctx=GPU))
        ex.backward(nd.ones((4, 3), ctx=GPU))
        grads[ctx] = {k: v.asnumpy() for k, v in ex.grad_dict.items()}
        assert ex.grad_dict["fc_weight"].context == ctx
    for k in grads[CPU]:
        np.testing.assert_allclose(grads[GPU][k], grads[CPU][k], rtol=1e-4, atol=1e-5, err_msg=k)
    # a graph whose zeros (an RNN's begin state) are made on the executor's device
    cell = mx.rnn.LSTMCell(4, prefix="c_")
    outs, _ = cell.unroll(2, inputs=mx.sym.var("data"), begin_state=cell.begin_state(),
                          merge_outputs=True)
    ex = outs.simple_bind(GPU, data=(3, 2, 5))
    for a in ex.arg_arrays:
        a[:] = 0.1
    assert ex.forward()[0].context == GPU


def test_failed_factorisations_raise_on_gpu():
    not_spd = nd.array(np.array([[1.0, 2.0], [2.0, 1.0]], np.float32), ctx=GPU)
    with pytest.raises(mx.MXNetError, match="positive definite"):
        nd.linalg.potrf(not_spd).wait_to_read()
    singular = nd.array(np.array([[1.0, 2.0], [2.0, 4.0]], np.float32), ctx=GPU)
    with pytest.raises(mx.MXNetError, match="singular"):
        nd.linalg.inverse(singular).wait_to_read()
    with GPU:
        counts = mx.np.random.multinomial(20, mx.np.array([0.5, 0.5]), size=(3,))
    assert counts.ctx == GPU and counts.shape == (3, 2)
    assert (counts.asnumpy().sum(axis=1) == 20).all()
