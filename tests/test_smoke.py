"""The smoke test: one pass through the core of the API in well under a second, for
``pytest -m smoke`` before every commit (STYLE.md, habit 10)."""
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, gluon, nd


class _Cube(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] ** 3)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], 3 * in_data[0] ** 2 * out_grad[0])


@mx.operator.register("smoke_cube")
class _CubeProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def create_operator(self, ctx, shapes, dtypes):
        return _Cube()


@pytest.mark.smoke
def test_smoke(tmp_path):
    # nd: creation, broadcasting arithmetic, a reduction, the repr
    x = nd.array([[1., 2.], [3., 4.]])
    np.testing.assert_allclose((x * 2 + nd.ones((1, 2))).sum(axis=0).asnumpy(), [10., 14.])
    assert repr(nd.array([[1, 2]])) == "\n[[1. 2.]]\n<NDArray 1x2 @cpu(0)>"

    # second-order autograd: d/dx (d/dx x^3) = 6x
    a = nd.array([1., 2., 3.])
    a.attach_grad()
    with autograd.record():
        g = autograd.grad((a ** 3).sum(), [a], create_graph=True)[0]
        gsum = g.sum()
    gsum.backward()
    np.testing.assert_allclose(g.asnumpy(), [3., 12., 27.], rtol=1e-6)
    np.testing.assert_allclose(a.grad.asnumpy(), [6., 12., 18.], rtol=1e-6)

    # Dense + Trainer + hybridize + export: a step lowers the loss; the export loads back
    net = gluon.nn.HybridSequential()
    with net.name_scope():
        net.add(gluon.nn.Dense(4, activation="tanh"), gluon.nn.Dense(1))
    net.initialize(mx.init.Xavier())
    net.hybridize()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    data, label = nd.random.uniform(shape=(8, 3)), nd.random.uniform(shape=(8, 1))
    loss_fn = gluon.loss.L2Loss()
    losses = []
    for _ in range(3):
        with autograd.record():
            loss = loss_fn(net(data), label)
        loss.backward()
        trainer.step(8)
        losses.append(float(loss.mean().asscalar()))
    assert losses[-1] < losses[0]
    prefix = os.path.join(str(tmp_path), "net")
    net.export(prefix)
    back = gluon.SymbolBlock.imports(prefix + "-symbol.json", ["data"], prefix + "-0000.params")
    np.testing.assert_allclose(back(data).asnumpy(), net(data).asnumpy(), rtol=1e-6)

    # a Custom op: forward and its own backward
    c = nd.array([1., -2.])
    c.attach_grad()
    with autograd.record():
        y = nd.Custom(c, op_type="smoke_cube")
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), [1., -8.])
    np.testing.assert_allclose(c.grad.asnumpy(), [3., 12.])
