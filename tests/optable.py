"""A small test-table helper for operator tests (STYLE.md: "tests as tables").

A :class:`Case` is one row: an mxlite call, its NumPy reference, the inputs (NumPy
arrays, float64 where the op is differentiable), which inputs get a gradient, and
whether the gradient can be differentiated again. Generic tests run the rows.
"""
from collections import namedtuple

import numpy as np

import mxlite as mx

Case = namedtuple("Case", "id fn ref inputs grad order")


def case(id, fn, ref, inputs, grad=(0,), order=2):
    """One row: ``fn(*NDArrays)`` must equal ``ref(*numpy arrays)``.

    ``grad`` lists the inputs checked against a numeric gradient (empty: not
    differentiable); ``order=2`` also checks the gradient of the gradient.
    """
    return Case(id, fn, ref, list(inputs), tuple(grad), order)


def outputs(y):
    """The outputs of an op call as a list."""
    return list(y) if isinstance(y, (list, tuple)) else [y]


def to_nd(arrays):
    return [mx.nd.array(a, dtype=a.dtype) for a in arrays]


def _weights(rng, ys):
    return [rng.uniform(-1, 1, y.shape) for y in ys]


def _loss(c, xs, ws, power):
    # sum_i <w_i, y_i ** power> over the outputs that carry values (not float indices)
    ys = outputs(c.fn(*xs))
    total = None
    for y, w in zip(ys, ws):
        if y.dtype != ys[0].dtype:
            continue
        t = ((y ** power if power != 1 else y) * mx.nd.array(w, dtype=y.dtype)).sum()
        total = t if total is None else total + t
    return total


def _loss_value(c, arrays, ws, power):
    return float(_loss(c, to_nd(arrays), ws, power).asscalar())


def check_first_order(c, rng, eps=1e-6, rtol=1e-6, atol=1e-8):
    """Autograd gradient along a random direction vs central differences (float64)."""
    xs = to_nd(c.inputs)
    ws = _weights(rng, outputs(c.fn(*xs)))
    for i in c.grad:
        xs[i].attach_grad()
    with mx.autograd.record():
        loss = _loss(c, xs, ws, 1)
    loss.backward()
    for i in c.grad:
        v = rng.standard_normal(c.inputs[i].shape)
        plus = [a.copy() for a in c.inputs]
        minus = [a.copy() for a in c.inputs]
        plus[i] += eps * v
        minus[i] -= eps * v
        numeric = (_loss_value(c, plus, ws, 1) - _loss_value(c, minus, ws, 1)) / (2 * eps)
        analytic = float(np.sum(xs[i].grad.asnumpy() * v))
        assert np.isclose(analytic, numeric, rtol=rtol, atol=atol), \
            "%s: d/dx%d along v: autograd %.10g, numeric %.10g" % (c.id, i, analytic, numeric)


def _grad_dot(c, arrays, ws, i, u):
    """<d loss / d x_i, u> for loss = sum(w * y**2), by autograd."""
    xs = to_nd(arrays)
    xs[i].attach_grad()
    with mx.autograd.record():
        loss = _loss(c, xs, ws, 2)
    loss.backward()
    return float(np.sum(xs[i].grad.asnumpy() * u))


def check_second_order(c, rng, eps=1e-5, rtol=1e-5, atol=1e-7):
    """Hessian-vector product by ``autograd.grad(create_graph=True)`` vs differences of
    first-order gradients. The loss squares the outputs so that even linear ops have
    a gradient that depends on the input."""
    xs = to_nd(c.inputs)
    ws = _weights(rng, outputs(c.fn(*xs)))
    for i in c.grad:
        u = rng.standard_normal(c.inputs[i].shape)
        v = rng.standard_normal(c.inputs[i].shape)
        xs = to_nd(c.inputs)
        xs[i].attach_grad()
        with mx.autograd.record():
            loss = _loss(c, xs, ws, 2)
            g = mx.autograd.grad(loss, [xs[i]], create_graph=True)[0]
            gu = (g * mx.nd.array(u, dtype=g.dtype)).sum()
        gu.backward()
        analytic = float(np.sum(xs[i].grad.asnumpy() * v))
        plus = [a.copy() for a in c.inputs]
        minus = [a.copy() for a in c.inputs]
        plus[i] += eps * v
        minus[i] -= eps * v
        numeric = (_grad_dot(c, plus, ws, i, u) - _grad_dot(c, minus, ws, i, u)) / (2 * eps)
        assert np.isclose(analytic, numeric, rtol=rtol, atol=atol), \
            "%s: second order along (u, v) for x%d: autograd %.10g, numeric %.10g" \
            % (c.id, i, analytic, numeric)
