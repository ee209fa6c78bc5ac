"""The backward ops MXNet 1.9.1 shows in ``mx.nd.contrib``/``mx.sym.contrib``:
``backward_gradientmultiplier``, ``backward_quadratic``, ``backward_index_copy`` and
``backward_hawkesll``. Each takes MXNet's inputs (the head gradient(s), then what the
forward op took) and gives the forward op's input gradients: checked against float64
central differences of the forward op, and differentiated again where MXNet can.

NOTE: MXNet's generated functions for the last three declare no inputs, so MXNet itself
cannot call them from Python ("expects 2 inputs, but got 0"); mxlite takes the inputs
positionally in MXNet's order.
"""
import numpy as np
import pytest

import mxlite as mx
from optable import case, row_tests
from test_op_contrib_more import _hawkes_inputs

nd = mx.nd
RNG = np.random.default_rng(5)


def _nd(a):
    return nd.array(a, dtype=a.dtype)


def _numeric_vjp(f, xs, gy, i, eps=1e-6):
    """d <gy, f(xs)> / d xs[i] by central differences (float64)."""
    g = np.zeros_like(xs[i])
    for k in np.ndindex(xs[i].shape):
        plus = [x.copy() for x in xs]
        minus = [x.copy() for x in xs]
        plus[i][k] += eps
        minus[i][k] -= eps
        g[k] = (np.sum(gy * f(*plus)) - np.sum(gy * f(*minus))) / (2 * eps)
    return g


def test_backward_quadratic_is_the_gradient_of_quadratic():
    x, gy = RNG.uniform(-2, 2, (3, 4)), RNG.uniform(-1, 1, (3, 4))
    kw = dict(a=1.5, b=-0.5, c=2.0)
    got = nd.contrib.backward_quadratic(_nd(gy), _nd(x), **kw).asnumpy()
    want = _numeric_vjp(lambda v: nd.contrib.quadratic(_nd(v), **kw).asnumpy(), [x], gy, 0)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9)
    # float32: MXNet's kernel works in float32
    got32 = nd.contrib.backward_quadratic(_nd(gy.astype(np.float32)), _nd(x.astype(np.float32)),
                                          **kw)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32.asnumpy(), gy * (3 * x - 0.5), rtol=1e-5)


def test_backward_gradientmultiplier_scales_its_input():
    # MXNet 1.9.1: [[1, .5], [2, 1]] with scalar=-2 -> [[-2, -1], [-4, -2]]; default 1
    g = nd.array([[1.0, 0.5], [2.0, 1.0]])
    np.testing.assert_array_equal(nd.contrib.backward_gradientmultiplier(g, scalar=-2.0)
                                  .asnumpy(), [[-2, -1], [-4, -2]])
    np.testing.assert_array_equal(nd.contrib.backward_gradientmultiplier(g).asnumpy(),
                                  g.asnumpy())


def test_backward_index_copy_gives_the_three_input_gradients():
    old, new = RNG.uniform(-1, 1, (5, 2)), RNG.uniform(-1, 1, (2, 2))
    idx, gy = np.array([3.0, 0.0]), RNG.uniform(-1, 1, (5, 2))
    g_old, g_idx, g_new = nd.contrib.backward_index_copy(_nd(gy), _nd(old), _nd(idx), _nd(new))

    def fwd(o, n):
        return nd.contrib.index_copy(_nd(o), _nd(idx), _nd(n)).asnumpy()
    np.testing.assert_allclose(g_old.asnumpy(), _numeric_vjp(fwd, [old, new], gy, 0), atol=1e-9)
    np.testing.assert_allclose(g_new.asnumpy(), _numeric_vjp(fwd, [old, new], gy, 1), atol=1e-9)
    np.testing.assert_array_equal(g_idx.asnumpy(), np.zeros(2))
    # autograd of index_copy goes through it
    xo, xn = _nd(old), _nd(new)
    xo.attach_grad()
    xn.attach_grad()
    with mx.autograd.record():
        y = nd.contrib.index_copy(xo, _nd(idx), xn)
    y.backward(_nd(gy))
    np.testing.assert_array_equal(xo.grad.asnumpy(), g_old.asnumpy())
    np.testing.assert_array_equal(xn.grad.asnumpy(), g_new.asnumpy())


def test_backward_index_copy_checks_the_head_gradient_shape():
    with pytest.raises(mx.MXNetError, match="_contrib_backward_index_copy.*ograd has shape"):
        nd.contrib.backward_index_copy(nd.ones((4, 2)), nd.zeros((5, 2)), nd.array([0]),
                                       nd.ones((1, 2)))


# the registered backward ops differentiate again (first and second order)
BACKWARD_ROWS = [
    case("backward_quadratic", lambda g, x: nd.contrib.backward_quadratic(g, x, a=0.7, b=2),
         # a is a float32 in MXNet's kernel
         lambda g, x: g * (x * (2 * float(np.float32(0.7))) + 2),
         [RNG.uniform(-1, 1, (3, 2)), RNG.uniform(-1, 1, (3, 2))],
         grad=(0, 1)),
    case("backward_index_copy",
         lambda g, o, i, n: nd.contrib.backward_index_copy(g, o, i, n),
         None, [RNG.uniform(-1, 1, (4, 3)), np.zeros((4, 3)), np.array([2.0, 1.0]),
                np.zeros((2, 3))], grad=(0,)),
]
globals().update(row_tests(BACKWARD_ROWS))


def test_backward_hawkesll_takes_mxnets_ten_inputs_and_gives_eight_gradients():
    xs = _hawkes_inputs(np.random.RandomState(3))
    gll, gstate = np.array([0.7, -1.3]), RNG.uniform(-1, 1, (2, 3))
    grads = nd.contrib.backward_hawkesll(_nd(gll), _nd(gstate), *[_nd(a) for a in xs])
    assert len(grads) == 8
    assert [g.shape for g in grads] == [a.shape for a in xs]
    # lda, alpha, beta: the derivative of <gll, loglik> (float32 exp/log inside: loose)
    loglik = lambda *v: nd.contrib.hawkesll(*[_nd(a) for a in v])[0].asnumpy()  # noqa: E731
    for i in range(3):
        want = _numeric_vjp(loglik, xs, gll, i, eps=1e-3)
        np.testing.assert_allclose(grads[i].asnumpy(), want, rtol=2e-3, atol=2e-4)
    for g in grads[3:]:
        np.testing.assert_array_equal(g.asnumpy(), 0)


def test_backward_ops_through_symbols():
    g, x = mx.sym.var("g"), mx.sym.var("x")
    s = mx.sym.contrib.backward_quadratic(g, x, a=2, b=3, c=1)
    assert s.list_arguments() == ["g", "x"]
    gv, xv = np.array([[1.0, 0.5], [2.0, 1.0]]), np.array([[1.0, 2.0], [3.0, -1.0]])
    out = s.eval(g=_nd(gv), x=_nd(xv))[0].asnumpy()
    np.testing.assert_allclose(out, gv * (4 * xv + 3))
    s = mx.sym.contrib.backward_gradientmultiplier(g, scalar=0.5)
    s = mx.sym.load_json(s.tojson())
    np.testing.assert_allclose(s.eval(g=_nd(gv))[0].asnumpy(), gv * 0.5)
    s = mx.sym.contrib.backward_index_copy(g, x, mx.sym.var("i"), mx.sym.var("n"))
    assert len(s.list_outputs()) == 3
