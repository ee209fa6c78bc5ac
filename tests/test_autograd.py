"""autograd: scopes, backward/grad, grad_req, retain_graph, higher order, Function,
in-place mutation checks."""
import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd as ag
from mxlite.base import MXNetError
from optable import central_difference


@pytest.mark.smoke
def test_scopes_and_flags():
    assert not ag.is_recording() and not ag.is_training()
    with ag.record():
        assert ag.is_recording() and ag.is_training()
        with ag.pause():
            assert not ag.is_recording() and not ag.is_training()
        with ag.predict_mode():
            assert ag.is_recording() and not ag.is_training()
    with ag.record(train_mode=False):
        assert ag.is_recording() and not ag.is_training()
        with ag.train_mode():
            assert ag.is_training()
    assert not ag.is_recording()
    assert ag.set_recording(True) is False
    assert ag.set_training(True) is False
    assert ag.is_recording() and ag.is_training()
    assert ag.set_recording(False) is True
    assert ag.set_training(False) is True


def test_scope_restores_on_exception():
    with pytest.raises(RuntimeError):
        with ag.record():
            raise RuntimeError("boom")
    assert not ag.is_recording()


@pytest.mark.smoke
def test_backward_chain_rule():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with ag.record():
        y = mx.nd.exp(x) * x + mx.nd.sin(x) / (x + 1)
    y.backward()
    a = x.asnumpy().astype(np.float64)
    want = np.exp(a) * (a + 1) + (np.cos(a) * (a + 1) - np.sin(a)) / (a + 1) ** 2
    np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-5)


def test_head_grads_and_multiple_heads():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y1 = x * 2
        y2 = x * x
    ag.backward([y1, y2], [mx.nd.array([1.0, 10.0]), mx.nd.array([100.0, 1000.0])])
    np.testing.assert_allclose(x.grad.asnumpy(), [2 + 200, 20 + 4000])
    with ag.record():
        y = x * 3
    y.backward(mx.nd.array([2.0, 0.5]))
    np.testing.assert_allclose(x.grad.asnumpy(), [6, 1.5])
    with pytest.raises(ValueError, match="head gradient has shape"):
        with ag.record():
            y = x * 3
        y.backward(mx.nd.ones((3,)))


def test_grad_req_write_add_null():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad(grad_req="add")
    for _ in range(3):
        with ag.record():
            y = x * x
        y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * 2 * x.asnumpy())
    w = mx.nd.array([1.0])
    w.attach_grad("write")
    g = w.grad
    for _ in range(2):
        with ag.record():
            y = w * 5
        y.backward()
    assert w.grad is g                      # the buffer is written in place
    np.testing.assert_allclose(g.asnumpy(), [5])
    n = mx.nd.array([1.0])
    n.attach_grad("null")
    with ag.record():
        y = n * w
    y.backward()
    np.testing.assert_allclose(n.grad.asnumpy(), [0])
    np.testing.assert_allclose(w.grad.asnumpy(), [1])
    with pytest.raises(ValueError, match="grad_req"):
        x.attach_grad("sometimes")


def test_mark_variables():
    x = mx.nd.array([1.0, 2.0])
    gx = mx.nd.zeros((2,))
    ag.mark_variables([x], [gx])
    with ag.record():
        y = (x * x).sum()
    y.backward()
    np.testing.assert_allclose(gx.asnumpy(), [2, 4])
    with pytest.raises(ValueError, match="shape"):
        ag.mark_variables([x], [mx.nd.zeros((3,))])


@pytest.mark.smoke
def test_second_backward_needs_retain_graph():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x * x
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [2, 4])
    with pytest.raises(MXNetError, match="retain_graph=True"):
        y.backward()


def test_backward_outside_graph_is_a_clear_error():
    x = mx.nd.array([1.0])
    with pytest.raises(MXNetError, match="autograd.record"):
        x.backward()
    x.attach_grad()
    y = x * 2                 # not recorded
    with pytest.raises(MXNetError, match="not in a recorded graph"):
        y.backward()


def test_unreached_variables_and_constants():
    x = mx.nd.array([1.0, 2.0])
    c = mx.nd.array([3.0, 4.0])
    x.attach_grad()
    with ag.record():
        y = x * c + c
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [3, 4])


def test_grad_returns_without_touching_grad_buffers():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = x ** 3
    g = ag.grad(y, [x])[0]
    np.testing.assert_allclose(g.asnumpy(), 3 * x.asnumpy() ** 2)
    np.testing.assert_allclose(x.grad.asnumpy(), [0, 0])


def _nth_derivative(f, x, n):
    x = mx.nd.array(x, dtype="float64")
    x.attach_grad()
    with ag.record():
        y = f(x)
        g = x
        for k in range(n):
            g = ag.grad(y.sum() if k == 0 else g.sum(), [x], create_graph=True, retain_graph=True)[0]
            y = g if k == 0 else y
    return g.asnumpy()


ELEMENTWISE_HIGHER_ORDER = [
    ("exp", mx.nd.exp, (-1, 1)), ("log", mx.nd.log, (0.5, 2)), ("sin", mx.nd.sin, (-2, 2)),
    ("cos", mx.nd.cos, (-2, 2)), ("tanh", mx.nd.tanh, (-1, 1)), ("sigmoid", mx.nd.sigmoid, (-2, 2)),
    ("sqrt", mx.nd.sqrt, (0.5, 2)), ("square", mx.nd.square, (-2, 2)),
    ("reciprocal", mx.nd.reciprocal, (0.5, 2)), ("rsqrt", mx.nd.rsqrt, (0.5, 2)),
    ("expm1", mx.nd.expm1, (-1, 1)), ("log1p", mx.nd.log1p, (0, 1)),
    ("arctan", mx.nd.arctan, (-1, 1)), ("sinh", mx.nd.sinh, (-1, 1)),
    ("softsign", mx.nd.softsign, (0.2, 1)), ("erf", mx.nd.erf, (-1, 1)),
    ("power3", lambda x: x ** 3, (-2, 2)), ("div", lambda x: 1 / (x * x + 1), (-1, 1)),
    ("mul_add", lambda x: x * x * x + 2 * x, (-1, 1)),
]


@pytest.mark.parametrize("name, f, dom", ELEMENTWISE_HIGHER_ORDER,
                         ids=[r[0] for r in ELEMENTWISE_HIGHER_ORDER])
def test_second_and_third_derivatives(name, f, dom):
    rng = np.random.RandomState(0)
    x = rng.uniform(dom[0], dom[1], size=(5,))
    h = 1e-5
    for order in (2, 3):
        got = _nth_derivative(f, x, order)
        # elementwise f: the derivative of each element along a step of all of them
        want = central_difference(lambda a: _nth_derivative(f, a[0], order - 1), [x], 0,
                                  np.ones_like(x), h)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6,
                                   err_msg="%s derivative %d" % (name, order))


def test_higher_order_grad_backward_into_grad_buffer():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        y = (x ** 3).sum()
        dx = ag.grad(y, [x], create_graph=True)[0]
        z = dx.sum()
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [6, 12])


def test_inplace_change_of_saved_input_is_detected():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        a = x * 1
        y = a * a                # mul saves its inputs
    a[:] = 10                    # outside the record scope, after recording
    with pytest.raises(MXNetError, match="broadcast_mul.*changed in place"):
        y.backward()


def test_inplace_change_of_unsaved_input_is_fine():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with ag.record():
        a = x * 1
        y = a + 5                # add saves nothing
    a[:] = 10
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [1, 1])


def test_inplace_under_record_is_differentiated():
    x = mx.nd.array([1.0, 2.0, 3.0])
    x.attach_grad()
    with ag.record():
        z = x * 2
        z += 1                   # MXNet forbids this; mxlite records it correctly
        w = z * x
    w.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 4 * x.asnumpy() + 1)


def test_setitem_under_record_is_differentiated():
    x = mx.nd.array([1.0, 2.0, 3.0])
    v = mx.nd.array([5.0])
    x.attach_grad()
    v.attach_grad()
    with ag.record():
        y = x * 1
        y[1] = v * v
        z = (y * mx.nd.array([1.0, 2.0, 3.0])).sum()
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), [1, 0, 3])
    np.testing.assert_allclose(v.grad.asnumpy(), [2 * 5 * 2])


def test_indexing_gradient():
    x = mx.nd.arange(6).reshape((2, 3))
    x.attach_grad()
    with ag.record():
        y = x[1] * 2 + x[:, 0].sum() + x[mx.nd.array([0, 0])].sum()
    y.backward()
    want = np.zeros((2, 3))
    want[1] += 2
    want[:, 0] += 3          # the (1,)-shaped sums broadcast over y's 3 elements
    want[0] += 2 * 3
    np.testing.assert_allclose(x.grad.asnumpy(), want)


def test_function():
    class Sigmoid(ag.Function):
        def forward(self, x):
            y = 1 / (1 + mx.nd.exp(-x))
            self.save_for_backward(y)
            return y

        def backward(self, dy):
            y, = self.saved_tensors
            return dy * y * (1 - y)

    x = mx.nd.array([-1.0, 0.0, 2.0])
    x.attach_grad()
    with ag.record():
        z = Sigmoid()(x) * 3
    z.backward()
    s = 1 / (1 + np.exp(-x.asnumpy()))
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * s * (1 - s), rtol=1e-6)


def test_function_with_two_inputs_and_outputs():
    class AddMul(ag.Function):
        def forward(self, a, b):
            self.save_for_backward(a, b)
            return a + b, a * b

        def backward(self, g_sum, g_prod):
            a, b = self.saved_tensors
            return g_sum + g_prod * b, g_sum + g_prod * a

    a = mx.nd.array([2.0])
    b = mx.nd.array([3.0])
    a.attach_grad()
    b.attach_grad()
    with ag.record():
        s, p = AddMul()(a, b)
        out = s + p
    out.backward()
    assert a.grad.asscalar() == 4 and b.grad.asscalar() == 3


def test_function_bad_backward_is_reported():
    class Bad(ag.Function):
        def forward(self, a, b):
            return a + b

        def backward(self, g):
            return g

    a = mx.nd.array([1.0])
    b = mx.nd.array([1.0])
    a.attach_grad()
    with ag.record():
        y = Bad()(a, b)
    with pytest.raises(MXNetError, match="Bad.backward returned 1 gradients, expected 2"):
        y.backward()


def test_a_failing_rule_leaves_every_grad_buffer_as_it_was():
    class Bad(ag.Function):
        def forward(self, a):
            return a * 1

        def backward(self, g):
            raise ValueError("Bad.backward: no gradient here")

    a = mx.nd.array([1.0, 2.0])
    b = mx.nd.array([3.0, 4.0])
    a.attach_grad()
    b.attach_grad()
    a.grad[:] = 7
    b.grad[:] = 8
    with ag.record():
        y = Bad()(a) + b * 5        # b's gradient is known before Bad's rule fails
    with pytest.raises(ValueError, match="no gradient here"):
        y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [7, 7])
    np.testing.assert_array_equal(b.grad.asnumpy(), [8, 8])


def test_backward_through_a_long_chain_and_late_branches():
    x = mx.nd.array([0.5])
    x.attach_grad()
    with ag.record():
        h = x
        for _ in range(3000):           # deeper than Python's recursion limit
            h = h * 1.0
        early = x * 2                   # recorded after the chain, used beside its end
        y = h * early + early
    y.backward()
    # d/dx (x * 2x + 2x) = 4x + 2
    np.testing.assert_allclose(x.grad.asnumpy(), [4.0], rtol=1e-6)


def test_gradients_through_broadcasting():
    a = mx.nd.ones((2, 3))
    b = mx.nd.array([1.0, 2.0, 3.0])
    a.attach_grad()
    b.attach_grad()
    with ag.record():
        y = (a * b).sum()
    y.backward()
    np.testing.assert_allclose(b.grad.asnumpy(), [2, 2, 2])
    np.testing.assert_allclose(a.grad.asnumpy(), np.tile([1, 2, 3], (2, 1)))


def test_train_mode_argument_of_backward():
    seen = []

    class Probe(ag.Function):
        def forward(self, x):
            return x * 1

        def backward(self, dy):
            seen.append(ag.is_training())
            return dy

    x = mx.nd.array([1.0])
    x.attach_grad()
    with ag.record():
        y = Probe()(x)
    y.backward(train_mode=False)
    assert seen == [False]


def test_grad_wrt_an_unreachable_variable_raises_as_mxnet():
    a, b = mx.nd.ones((2,)), mx.nd.ones((2,))
    a.attach_grad()
    b.attach_grad()
    with ag.record():
        z = (a * 2).sum()
    with pytest.raises(MXNetError, match="cannot differentiate with respect to variable 1 "
                                         "because it is unreachable from the heads"):
        ag.grad(z, [a, b])
    with ag.record():
        z = (a * 2).sum()
    np.testing.assert_array_equal(ag.grad(z, [a])[0].asnumpy(), [2, 2])


def test_take_along_axis_gradient_sums_repeated_indices():
    x = mx.nd.array([[1.0, 2, 3], [4, 5, 6]])
    x.attach_grad()
    idx = mx.nd.array([[0, 0, 2, -1], [1, 1, 1, 0]])
    with ag.record():
        y = mx.nd._internal._take_along_axis(x, idx, axis=1)
    y.backward(mx.nd.array([[1.0, 10, 100, 1000], [1, 2, 3, 4]]))
    np.testing.assert_array_equal(x.grad.asnumpy(), [[11, 0, 1100], [4, 6, 0]])
