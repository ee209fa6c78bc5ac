"""Custom operators: CustomOp/CustomOpProp and nd.Custom, the customop decorator,
native ops declared through the public registry, fork safety and dtypes.

The seed tutorials' code appears here in full (Sigmoid, the parametrised Dense
and its Gluon DenseBlock, the softmax loss head with a label, the MinPy-style
softmax).
"""
import multiprocessing
import os
import time

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd
from mxlite.base import MXNetError
from optable import numeric_gradient


def numeric_grad(f, x, eps=1e-6):
    """The gradient of the scalar function ``f`` (of a float64 array) at ``x``."""
    return numeric_gradient(lambda arrs: f(arrs[0]), [np.array(x, dtype=np.float64)], 0, eps)


# ----------------------------------------------------------------------------
# Tutorial 1: the parameter-less Sigmoid (complete code).

class Sigmoid(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        """Implements forward computation.

        is_train : bool, whether forwarding for training or testing.
        req : list of {'null', 'write', 'inplace', 'add'}, how to assign to out_data.
        in_data : list of NDArray, input data.
        out_data : list of NDArray, pre-allocated output buffers.
        aux : list of NDArray, mutable auxiliary states. Usually not used.
        """
        x = in_data[0].asnumpy()
        y = 1.0 / (1.0 + np.exp(-x))
        self.assign(out_data[0], req[0], mx.nd.array(y))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Implements backward computation

        req : list of {'null', 'write', 'inplace', 'add'}, how to assign to in_grad
        out_grad : list of NDArray, gradient w.r.t. output data.
        in_grad : list of NDArray, gradient w.r.t. input data. This is the output buffer.
        """
        y = out_data[0].asnumpy()
        dy = out_grad[0].asnumpy()
        dx = dy * (1.0 - y) * y
        self.assign(in_grad[0], req[0], mx.nd.array(dx))


@mx.operator.register("sigmoid")  # register with name "sigmoid"
class SigmoidProp(mx.operator.CustomOpProp):
    def __init__(self):
        super(SigmoidProp, self).__init__(True)

    def list_arguments(self):
        #  this can be omitted if you only have 1 input.
        return ['data']

    def list_outputs(self):
        #  this can be omitted if you only have 1 output.
        return ['output']

    def infer_shape(self, in_shapes):
        """Calculate output shapes from input shapes. This can be
        omited if all your inputs and outputs have the same shape.

        in_shapes : list of shape. Shape is described by a tuple of int.
        """
        data_shape = in_shapes[0]
        output_shape = data_shape
        # return 3 lists representing inputs shapes, outputs shapes, and aux data shapes.
        return (data_shape,), (output_shape,), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        #  create and return the CustomOp class.
        return Sigmoid()


def test_tutorial_sigmoid_with_autograd():
    x = mx.nd.array([0, 1, 2, 3])
    # attach gradient buffer to x for autograd
    x.attach_grad()
    # forward in a record() section to save computation graph for backward
    with autograd.record():
        y = mx.nd.Custom(x, op_type='sigmoid')
    ref = 1 / (1 + np.exp(-np.arange(4.0)))
    np.testing.assert_allclose(y.asnumpy(), ref, rtol=1e-6)
    assert isinstance(y, mx.nd.NDArray) and y.dtype == np.float32
    # call backward computation
    y.backward()
    # gradient is now saved to the grad buffer we attached previously
    np.testing.assert_allclose(x.grad.asnumpy(), ref * (1 - ref), rtol=1e-6)


def test_sigmoid_composes_with_builtin_ops_and_head_gradient():
    a = np.array([[-1.0, 0.5], [2.0, -0.3]], dtype=np.float32)
    x = mx.nd.array(a)
    x.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x * 2, op_type="sigmoid")    # producer before, consumer after
        z = (y * y).sum()
    z.backward()
    s = 1 / (1 + np.exp(-2 * a))
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * s * s * (1 - s) * 2, rtol=1e-5)
    with autograd.record():
        y = mx.nd.Custom(x, op_type="sigmoid")
    y.backward(mx.nd.array(np.full((2, 2), 3.0)))
    s = 1 / (1 + np.exp(-a))
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * s * (1 - s), rtol=1e-5)


# ----------------------------------------------------------------------------
# Tutorial 2: the parametrised Dense (complete code, backward filling both gradients).

class Dense(mx.operator.CustomOp):
    def __init__(self, bias):
        self._bias = bias

    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        weight = in_data[1].asnumpy()
        y = x.dot(weight.T) + self._bias
        self.assign(out_data[0], req[0], mx.nd.array(y))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        x = in_data[0].asnumpy()
        weight = in_data[1].asnumpy()
        dy = out_grad[0].asnumpy()
        dx = dy.dot(weight)
        dw = dy.T.dot(x)
        self.assign(in_grad[0], req[0], mx.nd.array(dx))
        self.assign(in_grad[1], req[1], mx.nd.array(dw))


@mx.operator.register("dense")  # register with name "dense"
class DenseProp(mx.operator.CustomOpProp):
    def __init__(self, bias):
        super(DenseProp, self).__init__(True)
        # we use constant bias here to illustrate how to pass arguments
        # to operators. All arguments are in string format so you need
        # to convert them back to the type you want.
        self._bias = float(bias)

    def list_arguments(self):
        return ['data', 'weight']

    def list_outputs(self):
        #  this can be omitted if you only have 1 output.
        return ['output']

    def infer_shape(self, in_shapes):
        data_shape = in_shapes[0]
        weight_shape = in_shapes[1]
        output_shape = (data_shape[0], weight_shape[0])
        # return 3 lists representing inputs shapes, outputs shapes, and aux data shapes.
        return (data_shape, weight_shape), (output_shape,), ()

    def create_operator(self, ctx, in_shapes, in_dtypes):
        #  create and return the CustomOp class.
        return Dense(self._bias)


def test_tutorial_dense_forward_and_both_gradients():
    rng = np.random.RandomState(1)
    xa, wa = rng.randn(4, 3).astype(np.float32), rng.randn(5, 3).astype(np.float32)
    x, w = mx.nd.array(xa), mx.nd.array(wa)
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x, w, bias="0.1", op_type="dense")
        loss = (y * y).sum()
    np.testing.assert_allclose(y.asnumpy(), xa.dot(wa.T) + 0.1, rtol=1e-5)
    loss.backward()
    dy = 2 * (xa.dot(wa.T) + 0.1)
    np.testing.assert_allclose(x.grad.asnumpy(), dy.dot(wa), rtol=1e-4)
    np.testing.assert_allclose(w.grad.asnumpy(), dy.T.dot(xa), rtol=1e-4)


class DenseBlock(mx.gluon.Block):
    def __init__(self, in_channels, channels, bias, **kwargs):
        super(DenseBlock, self).__init__(**kwargs)
        self._bias = bias
        self.weight = self.params.get('weight', shape=(channels, in_channels))

    def forward(self, x):
        ctx = x.context
        return mx.nd.Custom(x, self.weight.data(ctx), bias=self._bias, op_type='dense')


def test_tutorial_dense_block_backward_and_trainer():
    dense = DenseBlock(3, 5, 0.1)
    dense.initialize()
    x = mx.nd.uniform(shape=(4, 3))
    y = dense(x)
    wa, xa = dense.weight.data().asnumpy(), x.asnumpy()
    np.testing.assert_allclose(y.asnumpy(), xa.dot(wa.T) + 0.1, rtol=1e-5)
    x.attach_grad()
    with autograd.record():
        y = dense(x)
    y.backward()
    dy = np.ones((4, 5), dtype=np.float32)
    np.testing.assert_allclose(x.grad.asnumpy(), dy.dot(wa), rtol=1e-5)
    np.testing.assert_allclose(dense.weight.grad().asnumpy(), dy.T.dot(xa), rtol=1e-5)
    trainer = mx.gluon.Trainer(dense.collect_params(), "sgd", {"learning_rate": 0.1})
    losses = []
    for _ in range(4):
        with autograd.record():
            loss = (dense(x) ** 2).sum()
        loss.backward()
        trainer.step(4)
        losses.append(loss.asscalar())
    assert all(b < a for a, b in zip(losses, losses[1:])), losses


def test_dense_numeric_gradient_float64():
    """The same op on float64 data, against central differences of its NumPy form."""
    rng = np.random.RandomState(2)
    xa, wa = rng.randn(3, 4), rng.randn(2, 4)
    proj = rng.randn(3, 2)
    x, w = mx.nd.array(xa, dtype="float64"), mx.nd.array(wa, dtype="float64")
    x.attach_grad()
    w.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x, w, bias=0.25, op_type="dense")
    y.backward(mx.nd.array(proj, dtype="float64"))
    # NOTE: the tutorial's forward goes through mx.nd.array (float32), so the
    # output is float32 precision even for float64 inputs: compare loosely.
    f = (lambda xv: np.sum((xv.dot(wa.T) + 0.25) * proj))
    np.testing.assert_allclose(x.grad.asnumpy(), numeric_grad(f, xa), rtol=1e-4, atol=1e-5)
    g = (lambda wv: np.sum((xa.dot(wv.T) + 0.25) * proj))
    np.testing.assert_allclose(w.grad.asnumpy(), numeric_grad(g, wa), rtol=1e-4, atol=1e-5)


def test_inputs_without_gradient_get_req_null():
    seen = {}

    class Spy(Dense):
        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            seen["req"] = list(req)
            super().backward(req, out_grad, in_data, out_data, in_grad, aux)

    @mx.operator.register("dense_spy")
    class SpyProp(DenseProp):
        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Spy(self._bias)

    x, w = mx.nd.ones((2, 3)), mx.nd.ones((4, 3))
    w.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x, w, bias=0, op_type="dense_spy")
    y.backward()
    assert seen["req"] == ["null", "write"]
    np.testing.assert_allclose(w.grad.asnumpy(), np.full((4, 3), 2.0))


# ----------------------------------------------------------------------------
# Tutorial 3: softmax with a label input as a loss head (need_top_grad=False).

class Softmax(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        y = np.exp(x - x.max(axis=1).reshape((x.shape[0], 1)))
        y /= y.sum(axis=1).reshape((x.shape[0], 1))
        self.assign(out_data[0], req[0], mx.nd.array(y))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        # NOTE: the tutorial's astype(np.int) became astype(int): NumPy 2 removed np.int.
        l = in_data[1].asnumpy().ravel().astype(int)  # noqa: E741 (tutorial name)
        y = out_data[0].asnumpy()
        y[np.arange(l.shape[0]), l] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(y))


@mx.operator.register("softmax")
class SoftmaxProp(mx.operator.CustomOpProp):
    def __init__(self):
        super(SoftmaxProp, self).__init__(need_top_grad=False)

    def list_arguments(self):
        return ['data', 'label']

    def list_outputs(self):
        return ['output']

    def infer_shape(self, in_shape):
        data_shape = in_shape[0]
        label_shape = (in_shape[0][0],)
        output_shape = in_shape[0]
        return [data_shape, label_shape], [output_shape], []

    def infer_type(self, in_type):
        return in_type, [in_type[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return Softmax()


def _np_softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_tutorial_softmax_loss_head_trains_with_sgd():
    rng = np.random.RandomState(3)
    xa = rng.randn(8, 4).astype(np.float32)
    labels = rng.randint(0, 3, size=8).astype(np.float32)
    x, label = mx.nd.array(xa), mx.nd.array(labels)
    w = mx.nd.array(rng.randn(3, 4).astype(np.float32) * 0.1)
    w.attach_grad()

    def nll(wv):
        p = _np_softmax(xa.dot(wv.T))
        return -np.mean(np.log(p[np.arange(8), labels.astype(int)]))

    losses = []
    for _ in range(5):
        losses.append(nll(w.asnumpy()))
        with autograd.record():
            scores = mx.nd.dot(x, w, transpose_b=True)
            prob = mx.nd.Custom(scores, label, op_type="softmax")
        np.testing.assert_allclose(prob.asnumpy(), _np_softmax(xa.dot(w.asnumpy().T)),
                                   rtol=1e-5)
        prob.backward()             # a loss head: no head gradient needed
        # the gradient of the summed NLL: (softmax - onehot) through the dot
        p = _np_softmax(xa.dot(w.asnumpy().T))
        p[np.arange(8), labels.astype(int)] -= 1
        np.testing.assert_allclose(w.grad.asnumpy(), p.T.dot(xa), rtol=1e-4, atol=1e-5)
        w[:] = w - 0.1 * w.grad
    losses.append(nll(w.asnumpy()))
    assert all(b < a for a, b in zip(losses, losses[1:])), losses


def test_loss_head_out_grad_holds_ones_whatever_the_head_gradient():
    got = []

    class Probe(Softmax):
        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            got.append(out_grad[0].asnumpy())
            super().backward(req, out_grad, in_data, out_data, in_grad, aux)

    @mx.operator.register("softmax_probe")
    class ProbeProp(SoftmaxProp):
        def create_operator(self, ctx, shapes, dtypes):
            return Probe()

    x = mx.nd.array([[1.0, 2.0], [0.0, -1.0]])
    x.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x, mx.nd.array([0, 1]), op_type="softmax_probe")
    y.backward(mx.nd.array([[5.0, 5.0], [5.0, 5.0]]))
    np.testing.assert_array_equal(got[0], np.ones((2, 2)))
    p = _np_softmax(np.array([[1.0, 2.0], [0.0, -1.0]]))
    p[[0, 1], [0, 1]] -= 1
    np.testing.assert_allclose(x.grad.asnumpy(), p, rtol=1e-5)


# ----------------------------------------------------------------------------
# Tutorial 4: the MinPy-style @customop('numpy') softmax with def_grad.

@mx.operator.customop('numpy')
def my_softmax(x, y):
    probs = np.exp(x - np.max(x, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    N = x.shape[0]
    loss = -np.sum(np.log(probs[np.arange(N), y])) / N
    return loss


def my_softmax_grad(ans, x, y):
    def grad(g):
        N = x.shape[0]
        probs = np.exp(x - np.max(x, axis=1, keepdims=True))
        probs /= np.sum(probs, axis=1, keepdims=True)
        probs[np.arange(N), y] -= 1
        probs /= N
        return probs

    return grad


my_softmax.def_grad(my_softmax_grad)


def test_tutorial_customop_numpy_softmax():
    rng = np.random.RandomState(4)
    xa = rng.randn(5, 3)
    y = rng.randint(0, 3, size=5)          # labels pass through as NumPy ints
    ref = my_softmax(xa, y)                 # on NumPy arrays: the plain function
    x = mx.nd.array(xa, dtype="float64")
    x.attach_grad()
    with autograd.record():
        loss = my_softmax(x, y)
    assert loss.shape == (1,)
    np.testing.assert_allclose(loss.asnumpy()[0], ref, rtol=1e-12)
    loss.backward()
    num = numeric_grad(lambda v: my_softmax(v, y), xa)
    np.testing.assert_allclose(x.grad.asnumpy(), num, rtol=1e-6, atol=1e-8)


def test_customop_inside_a_block():
    dense = DenseBlock(3, 4, 0.0)
    dense.initialize()
    rng = np.random.RandomState(6)
    x, labels = mx.nd.array(rng.randn(6, 3)), rng.randint(0, 4, size=6)
    with autograd.record():
        loss = my_softmax(dense(x), labels)
    loss.backward()
    xa, wa = x.asnumpy(), dense.weight.data().asnumpy()
    p = _np_softmax(xa.dot(wa.T))
    p[np.arange(6), labels] -= 1
    np.testing.assert_allclose(dense.weight.grad().asnumpy(), (p / 6).T.dot(xa),
                               rtol=1e-4, atol=1e-6)


def test_customop_several_argnums_compose_with_builtin_ops():
    @mx.operator.customop('numpy')
    def weighted(a, b, power):
        return a * b ** power

    weighted.def_grad(lambda ans, a, b, power: lambda g: g * b ** power)
    weighted.def_grad(lambda ans, a, b, power: lambda g: g * a * power * b ** (power - 1),
                      argnum=1)
    rng = np.random.RandomState(5)
    aa, ba = rng.rand(2, 3) + 0.5, rng.rand(2, 3) + 0.5
    a, b = mx.nd.array(aa, dtype="float64"), mx.nd.array(ba, dtype="float64")
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        z = (mx.nd.exp(weighted(a * 1.0, b, 3)) * 0.5).sum()   # one node, ops around it
    z.backward()
    f = (lambda av: np.sum(np.exp(av * ba ** 3) * 0.5))
    np.testing.assert_allclose(a.grad.asnumpy(), numeric_grad(f, aa), rtol=1e-6)
    g = (lambda bv: np.sum(np.exp(aa * bv ** 3) * 0.5))
    np.testing.assert_allclose(b.grad.asnumpy(), numeric_grad(g, ba), rtol=1e-6)


def test_customop_mxnet_kind_and_several_outputs():
    @mx.operator.customop('mxnet')
    def split_scale(x, k):
        assert isinstance(x, mx.nd.NDArray)
        return x * k, x * x

    split_scale.def_grad(lambda ans, x, k: lambda g: g[0] * k + g[1] * 2 * x)
    xa = np.array([1.0, -2.0, 3.0])
    x = mx.nd.array(xa, dtype="float64")
    x.attach_grad()
    with autograd.record():
        u, v = split_scale(x, 4)
        z = (u + v * 3).sum()
    np.testing.assert_allclose(u.asnumpy(), xa * 4)
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 4 + 6 * xa)


def test_customop_missing_gradient_names_the_argument():
    @mx.operator.customop('numpy')
    def twice(a, b):
        return a * 2 + b

    twice.def_grad(lambda ans, a, b: lambda g: 2 * g)
    a, b = mx.nd.ones((2,)), mx.nd.ones((2,))
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = twice(a, b)
    with pytest.raises(MXNetError, match=r"twice.*argument 1.*def_grad"):
        y.backward()
    with pytest.raises(ValueError, match="numpy"):
        mx.operator.customop("torch")


# ----------------------------------------------------------------------------
# Native operators through the public registry (the seed's abs example).

def _abs_grad(p, x, y, gy, need):
    return [gy[0] * mx.nd.sign(x[0]) * p.scale]


mx.operator.register_op(
    "test_scaled_abs", lambda p, xp, x: xp.abs(x) * x.dtype.type(p.scale),
    inputs=("data",),
    params=[mx.operator.Param("scale", mx.base.parse_float, 1.0, "a factor")],
    gradient=_abs_grad,
    infer_shape=lambda p, shapes: (shapes, [shapes[0]]),
    infer_type=lambda p, dtypes: [dtypes[0]],
    saves="x",
    doc="scale * |x|: the seed's abs example, declared from Python.")


def _cube_grad(p, x, y, gy, need):
    return [gy[0] * 3 * x[0] * x[0]]       # in mxlite ops: differentiable again


mx.operator.register_op("test_cube", lambda p, xp, x: x * x * x, gradient=_cube_grad, saves="x")


def test_native_op_appears_in_nd_with_typed_params():
    assert callable(mx.nd.test_scaled_abs)
    assert "scale" in mx.nd.test_scaled_abs.__doc__
    x = mx.nd.array([-2.0, 0.5, 3.0])
    x.attach_grad()
    with autograd.record():
        y = mx.nd.test_scaled_abs(x, scale="2.5")   # strings parsed by the Param
    np.testing.assert_allclose(y.asnumpy(), [5.0, 1.25, 7.5])
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [-2.5, 2.5, 2.5])
    op = mx.operator.get_op("test_scaled_abs")
    assert op.infer_shape(op.parse_params({}), [(3,)])[1] == [(3,)]
    with pytest.raises(ValueError, match="scale"):
        mx.nd.test_scaled_abs(x, scale="big")


def test_native_op_higher_order_gradients():
    xa = np.array([1.0, -2.0, 0.5])
    x = mx.nd.array(xa, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = mx.nd.test_cube(x)
        dx = autograd.grad(y, [x], create_graph=True)[0]
        z = dx.sum()
    np.testing.assert_allclose(dx.asnumpy(), 3 * xa ** 2)
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 6 * xa)


# ----------------------------------------------------------------------------
# Behaviour: kwargs, is_train, aux states, several outputs, instance state.

class _Echo(mx.operator.CustomOp):
    """Copies data to every output; records how it was called; bumps its aux state."""
    log = []

    def __init__(self, prop):
        self.prop = prop

    def forward(self, is_train, req, in_data, out_data, aux):
        _Echo.log.append(("forward", is_train, list(req)))
        for i, o in enumerate(out_data):
            self.assign(o, req[i], in_data[0] * (i + 1))
        for a in aux:
            a[:] = a + 1
        if self.prop.fail == "forward":
            raise ValueError("boom in forward")

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        if self.prop.fail == "backward":
            raise KeyError("boom in backward")
        g = sum(og * (i + 1) for i, og in enumerate(out_grad))
        self.assign(in_grad[0], req[0], g)


@mx.operator.register("echo")
class EchoProp(mx.operator.CustomOpProp):
    made = []

    def __init__(self, n="1", aux="0", fail="", shape_bug=""):
        super().__init__(need_top_grad=True)
        EchoProp.made.append((n, aux, fail, shape_bug))
        self.n, self.naux, self.fail, self.shape_bug = int(n), int(aux), fail, shape_bug

    def list_outputs(self):
        return ["out%d" % i for i in range(self.n)]

    def list_auxiliary_states(self):
        return ["state%d" % i for i in range(self.naux)]

    def infer_shape(self, in_shape):
        if self.shape_bug == "two":
            return in_shape, [in_shape[0]] * self.n
        if self.shape_bug == "length":
            return in_shape, [in_shape[0]] * (self.n + 1), [(1,)] * self.naux
        if self.shape_bug == "raise":
            raise RuntimeError("no shapes today")
        return in_shape, [in_shape[0]] * self.n, [(1,)] * self.naux

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _Echo(self)


def test_kwargs_reach_the_prop_as_strings_and_the_prop_is_cached():
    EchoProp.made.clear()
    x = mx.nd.ones((2,))
    for _ in range(3):
        mx.nd.Custom(x, op_type="echo", n=1, aux=0, shape_bug="")
    assert EchoProp.made == [("1", "0", "", "")]

    got = {}

    @mx.operator.register("kwarg_probe")
    class KwargProp(mx.operator.CustomOpProp):
        def __init__(self, **kwargs):
            super().__init__()
            got.update(kwargs)

        def create_operator(self, ctx, in_shapes, in_dtypes):
            got["create"] = (in_shapes, in_dtypes, ctx)
            return _Echo(self)
        fail = ""

    mx.nd.Custom(x, op_type="kwarg_probe", bias=0.1, kernel=(7, 7), flag=True, name="ignored")
    assert got["bias"] == "0.1" and got["kernel"] == "(7, 7)" and got["flag"] == "True"
    assert got["create"][:2] == ([[2]], [0])          # MXNet's type flag 0: float32
    assert got["create"][2] == mx.cpu()


def test_is_train_follows_autograd_and_several_outputs_come_back_as_a_list():
    _Echo.log.clear()
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    outs = mx.nd.Custom(x, op_type="echo", n=3)
    assert isinstance(outs, list) and len(outs) == 3
    np.testing.assert_allclose(outs[2].asnumpy(), [3.0, 6.0])
    with autograd.record():
        a, b = mx.nd.Custom(x, op_type="echo", n=2)
        z = (a + b * 10).sum()
    with autograd.record(train_mode=False):
        mx.nd.Custom(x, op_type="echo", n=2)
    assert [e[1] for e in _Echo.log] == [False, True, False]
    assert _Echo.log[0][2] == ["write"] * 3
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [21.0, 21.0])


def test_aux_states_are_updated_in_place_and_left_alone_on_failure():
    x = mx.nd.ones((3,))
    state = mx.nd.zeros((1,))
    for _ in range(2):
        mx.nd.Custom(x, state, op_type="echo", aux=1)
    np.testing.assert_array_equal(state.asnumpy(), [2.0])
    with pytest.raises(MXNetError, match=r"'echo' \(forward\).*boom in forward"):
        mx.nd.Custom(x, state, op_type="echo", aux=1, fail="forward")
    np.testing.assert_array_equal(state.asnumpy(), [2.0])     # not half-updated
    with pytest.raises(TypeError, match=r"'echo' takes 2 input\(s\) \(data, state0\), got 1"):
        mx.nd.Custom(x, op_type="echo", aux=1)


def test_each_pending_call_keeps_its_own_operator_state():
    class Remember(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.x = in_data[0].asnumpy()            # state kept on self for backward
            self.assign(out_data[0], req[0], self.x ** 2)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], 2 * self.x * out_grad[0].asnumpy())

    @mx.operator.register("remember_square")
    class RememberProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Remember()

    a, b = mx.nd.array([1.0, 2.0]), mx.nd.array([3.0, 4.0])
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        ya = mx.nd.Custom(a, op_type="remember_square")
        yb = mx.nd.Custom(b, op_type="remember_square")     # same shapes: same cache key
        z = (ya + yb).sum()
    z.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), [2.0, 4.0])
    np.testing.assert_allclose(b.grad.asnumpy(), [6.0, 8.0])


def test_assign_reqs():
    op = mx.operator.CustomOp()
    dst = mx.nd.array([1.0, 2.0])
    op.assign(dst, "null", mx.nd.array([9.0, 9.0]))
    np.testing.assert_array_equal(dst.asnumpy(), [1.0, 2.0])
    op.assign(dst, "add", np.array([1.0, 1.0]))
    np.testing.assert_array_equal(dst.asnumpy(), [2.0, 3.0])
    op.assign(dst, "inplace", mx.nd.array([5.0, 6.0]))
    np.testing.assert_array_equal(dst.asnumpy(), [5.0, 6.0])
    op.assign(dst, "write", 0.5)
    np.testing.assert_array_equal(dst.asnumpy(), [0.5, 0.5])
    with pytest.raises(ValueError, match="req"):
        op.assign(dst, "overwrite", 1.0)
    with pytest.raises(MXNetError, match=r"\(3,\).*\(2,\)"):
        op.assign(dst, "write", np.zeros(3))


def test_named_inputs_follow_list_arguments():
    x, w = mx.nd.ones((2, 3)), mx.nd.ones((4, 3))
    y = mx.nd.Custom(weight=w, data=x, bias=1, op_type="dense")
    np.testing.assert_allclose(y.asnumpy(), np.full((2, 4), 4.0))


def test_custom_is_in_the_registry_for_graph_executors():
    from mxlite.operator.custom import make_params
    op = mx.operator.get_op("Custom")
    p = make_params("dense", bias=0.5)
    assert list(op.input_names(p)) == ["data", "weight"] and op.n_outputs(p) == 1
    assert op.infer_shape(p, [(4, 3), (5, 3)]) == ([(4, 3), (5, 3)], [(4, 5)])
    assert op.infer_type(p, [np.dtype("float64")] * 2) == [np.dtype("float64")]
    x, w = mx.nd.ones((4, 3)), mx.nd.ones((5, 3))
    x.attach_grad()
    with autograd.record():
        y = mx.operator.invoke(op, [x, w], p)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), np.full((4, 5), 3.5))
    np.testing.assert_allclose(x.grad.asnumpy(), np.full((4, 3), 5.0))
    out = mx.nd.zeros((4, 5))
    assert mx.nd.Custom(x, w, bias=1, op_type="dense", out=out) is out
    np.testing.assert_allclose(out.asnumpy(), np.full((4, 5), 4.0))


# ----------------------------------------------------------------------------
# Errors instead of silence, crashes or hangs.

class _TutorialDenseBackward(Dense):
    """The tutorial's original backward: it assigns the weight gradient to in_grad[0]."""

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        x = in_data[0].asnumpy()
        dy = out_grad[0].asnumpy()
        dx = dy.T.dot(x)
        self.assign(in_grad[0], req[0], mx.nd.array(dx))


@mx.operator.register("dense_misassign")
class _MisassignProp(DenseProp):
    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _TutorialDenseBackward(self._bias)


def test_assign_of_the_wrong_shape_names_op_slot_and_shapes():
    x, w = mx.nd.ones((4, 3)), mx.nd.ones((5, 3))
    x.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x, w, bias=0.1, op_type="dense_misassign")
    with pytest.raises(MXNetError,
                       match=r"'dense_misassign' \(backward\): assign to in_grad\[0\].*"
                             r"\(5, 3\).*\(4, 3\)"):
        y.backward()

    class BadForward(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], np.zeros((2, 2)))

    @mx.operator.register("bad_forward")
    class BadProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, in_shapes, in_dtypes):
            return BadForward()

    with pytest.raises(MXNetError, match=r"'bad_forward' \(forward\).*out_data\[0\].*"
                                         r"\(2, 2\).*\(3,\)"):
        mx.nd.Custom(mx.nd.ones((3,)), op_type="bad_forward")


def test_infer_shape_returns_two_or_three_lists_of_the_right_lengths():
    x = mx.nd.ones((2,))
    # as MXNet: two lists (inputs, outputs) are enough for an op without aux states
    np.testing.assert_array_equal(mx.nd.Custom(x, op_type="echo", shape_bug="two").asnumpy(),
                                  x.asnumpy())
    with pytest.raises(MXNetError, match=r"returned 0 auxiliary state entries, expected 1"):
        mx.nd.Custom(x, mx.nd.ones((1,)), op_type="echo", aux=1, shape_bug="two")
    with pytest.raises(MXNetError, match=r"returned 2 output entries, expected 1"):
        mx.nd.Custom(x, op_type="echo", shape_bug="length")
    with pytest.raises(MXNetError, match=r"'echo' \(infer_shape\).*no shapes today"):
        mx.nd.Custom(x, op_type="echo", shape_bug="raise")


def test_unregistered_op_type_lists_the_registered_ones():
    with pytest.raises(MXNetError, match=r"'nope' is not registered.*dense.*sigmoid"):
        mx.nd.Custom(mx.nd.ones((1,)), op_type="nope")
    with pytest.raises(TypeError, match="op_type"):
        mx.nd.Custom(mx.nd.ones((1,)))


def test_prop_constructor_rejecting_kwargs_is_a_type_error_naming_op_type():
    with pytest.raises(TypeError, match=r"'sigmoid'.*SigmoidProp.*\['bias'\]"):
        mx.nd.Custom(mx.nd.ones((1,)), op_type="sigmoid", bias=1)
    with pytest.raises(TypeError, match=r"'dense'.*DenseProp"):
        mx.nd.Custom(mx.nd.ones((1, 2)), mx.nd.ones((3, 2)), op_type="dense")


def test_exception_in_backward_propagates_with_op_type_and_method():
    x = mx.nd.ones((2,))
    x.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x, op_type="echo", fail="backward")
    with pytest.raises(MXNetError, match=r"'echo' \(backward\): KeyError.*boom in backward"):
        y.backward()
    assert not autograd.is_recording()
    # and the op still works afterwards
    with autograd.record():
        y = mx.nd.Custom(x, op_type="echo")
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [1.0, 1.0])


def test_missing_backward_raises():
    class ForwardOnly(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0])

    @mx.operator.register("forward_only")
    class FwdProp(mx.operator.CustomOpProp):
        def create_operator(self, ctx, in_shapes, in_dtypes):
            return ForwardOnly()

    x = mx.nd.ones((2,))
    x.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x, op_type="forward_only")
    with pytest.raises(MXNetError, match=r"'forward_only' \(backward\).*not implemented"):
        y.backward()


# ----------------------------------------------------------------------------
# dtypes.

class _Cast(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0].asnumpy() * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0].asnumpy() * 2)


@mx.operator.register("double_as")
class _CastProp(mx.operator.CustomOpProp):
    def __init__(self, out_dtype="same"):
        super().__init__()
        self.out_dtype = out_dtype

    def infer_type(self, in_type):
        if self.out_dtype == "same":
            return super().infer_type(in_type)
        return in_type, [np.dtype(self.out_dtype).type], []

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return _Cast()


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "uint8", "int32"])
def test_custom_ops_honour_infer_type(dtype):
    x = mx.nd.array([1, 2, 3], dtype=dtype)
    y = mx.nd.Custom(x, op_type="double_as")                     # default: input's dtype
    assert y.dtype == np.dtype(dtype).type
    np.testing.assert_array_equal(y.asnumpy(), np.array([2, 4, 6], dtype=dtype))
    z = mx.nd.Custom(x, op_type="double_as", out_dtype="float64")
    assert z.dtype == np.float64
    if dtype.startswith("float"):
        x.attach_grad()
        with autograd.record():
            y = mx.nd.Custom(x, op_type="double_as")
        y.backward()
        assert x.grad.dtype == np.dtype(dtype).type
        np.testing.assert_array_equal(x.grad.asnumpy(), [2, 2, 2])


# ----------------------------------------------------------------------------
# Fork and worker processes.

def _sigmoid_in_worker(values):
    x = mx.nd.array(values)
    x.attach_grad()
    with autograd.record():
        y = mx.nd.Custom(x, op_type="sigmoid")
    y.backward()
    return y.asnumpy().tolist(), x.grad.asnumpy().tolist()


def _check_worker_result(res, values):
    s = 1 / (1 + np.exp(-np.asarray(values)))
    np.testing.assert_allclose(res[0], s, rtol=1e-5)
    np.testing.assert_allclose(res[1], s * (1 - s), rtol=1e-5)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_after_custom_ops_never_blocks_and_child_runs_custom_ops():
    _sigmoid_in_worker([0.0, 1.0])                 # the parent has used Custom ops
    pid = os.fork()
    if pid == 0:                                   # child
        code = 1
        try:
            _check_worker_result(_sigmoid_in_worker([0.5, -1.0]), [0.5, -1.0])
            code = 0
        finally:
            os._exit(code)
    deadline = time.time() + 60
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.time() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            pytest.fail("the forked child hung running a Custom op")
        time.sleep(0.01)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_custom_ops_in_worker_processes(method):
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip("start method %s unavailable" % method)
    _sigmoid_in_worker([0.0])
    inputs = [[0.0, 1.0], [-2.0, 3.0]]
    with multiprocessing.get_context(method).Pool(2) as pool:
        results = pool.map_async(_sigmoid_in_worker, inputs).get(timeout=120)
    for res, values in zip(results, inputs):
        _check_worker_result(res, values)


def test_assign_takes_over_temporaries_but_copies_named_values():
    op = mx.operator.CustomOp()
    for make in (lambda: np.full(3, 2.0, dtype=np.float32),
                 lambda: mx.nd.array(np.full(3, 2.0))):
        out = mx.nd.zeros((3,))
        op.assign(out, "write", make())           # a temporary: no copy needed
        np.testing.assert_array_equal(out.asnumpy(), [2, 2, 2])
        named = make()
        out = mx.nd.zeros((3,))
        op.assign(out, "write", named)            # still referenced: must be copied
        named[:] = 7
        np.testing.assert_array_equal(out.asnumpy(), [2, 2, 2])
    base = np.arange(6, dtype=np.float32)
    out = mx.nd.zeros((3,))
    op.assign(out, "write", base[:3])             # a view of someone's array: copied
    base[:] = -1
    np.testing.assert_array_equal(out.asnumpy(), [0, 1, 2])


class _ForgetsGrad(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], in_data[0] * 2)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        pass                 # never writes in_grad[0]


@mx.operator.register("forgets_grad")
class _ForgetsGradProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=True)

    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _ForgetsGrad()


def test_unwritten_gradient_is_an_error_not_garbage():
    x = mx.nd.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="forgets_grad")
    with pytest.raises(MXNetError, match=r"forgets_grad.*backward.*in_grad\[0\] was never written"):
        y.backward()
