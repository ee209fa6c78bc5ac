"""mx.np and mx.npx ops as table rows: forward against NumPy, the gradient against
central differences along a random direction, and the second order where the
legacy op has one (``optable``)."""
import numpy as onp
import pytest

import mxlite as mx
from mxlite import np, npx
import optable
from optable import outputs, row_tests

R = onp.random.RandomState(7)


def u(*shape, lo=-1.0, hi=1.0):
    return R.uniform(lo, hi, shape)


def pos(*shape):
    return R.uniform(0.5, 2.0, shape)


def as_np(f):
    """An np-style function as a row function: legacy arrays in and out, sharing the
    autograd slots (``as_np_ndarray``/``as_nd_ndarray`` are zero-copy views)."""
    def fn(*xs):
        y = f(*[x.as_np_ndarray() for x in xs])
        if isinstance(y, (list, tuple)):
            return [_legacy(o) for o in y]
        return _legacy(y)
    return fn


def _legacy(y):
    # The row's loss runs legacy ops, which (as in MXNet) know no 0-d arrays: a 0-d
    # result goes on as shape (1,) through np's own (differentiable) reshape.
    return (y.reshape(1) if y.ndim == 0 else y).as_nd_ndarray()


def case(id, fn, ref, inputs, **kw):
    """A row of an np-style call: its NumPy reference's 0-d results are of shape (1,) as
    the row's (see ``_legacy``)."""
    def legacy_ref(*xs):
        return [onp.reshape(r, (1,)) if onp.ndim(r) == 0 else r for r in outputs(ref(*xs))]
    return optable.case(id, fn, None if ref is None else legacy_ref, inputs, **kw)


# (name, domain) of the elementwise functions; each is numpy's function of that name
UNARY = [("negative", u), ("exp", u), ("expm1", u), ("log", pos), ("log10", pos), ("log2", pos),
         ("log1p", pos), ("sqrt", pos), ("cbrt", pos), ("square", u), ("reciprocal", pos),
         ("sin", u), ("cos", u), ("tan", u), ("arcsin", lambda *s: u(*s, lo=-.8, hi=.8)),
         ("arccos", lambda *s: u(*s, lo=-.8, hi=.8)), ("arctan", u), ("sinh", u), ("cosh", u),
         ("tanh", u), ("arcsinh", u), ("arccosh", lambda *s: R.uniform(1.5, 3, s)),
         ("arctanh", lambda *s: u(*s, lo=-.8, hi=.8)), ("degrees", u), ("radians", u),
         ("absolute", lambda *s: pos(*s) * onp.sign(u(*s)))]

UNARY_CASES = [case("np.%s" % n, as_np(getattr(np, n)), getattr(onp, n), [dom(3, 4)])
               for n, dom in UNARY]

BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "hypot", "power"]
BINARY_CASES = [case("np.%s" % n, as_np(getattr(np, n)), getattr(onp, n),
                     [pos(3, 1, 4), pos(2, 4) + 0.01 * onp.arange(8).reshape(2, 4)],
                     grad=(0, 1)) for n in BINARY]
BINARY_CASES += [
    case("np.mod", as_np(np.mod), onp.mod, [R.uniform(2.1, 2.9, (3, 4)), onp.full((4,), 1.3)],
         grad=(0,), order=1),
    case("x * 2.5", as_np(lambda x: x * 2.5), lambda x: x * 2.5, [u(3, 4)]),
    case("3 - x", as_np(lambda x: 3 - x), lambda x: 3 - x, [u(3, 4)]),
    case("2 / x", as_np(lambda x: 2 / x), lambda x: 2 / x, [pos(3, 4)]),
    case("x ** 3", as_np(lambda x: x ** 3), lambda x: x ** 3, [u(3, 4)]),
    case("2 ** x", as_np(lambda x: 2 ** x), lambda x: 2 ** x, [u(3, 4)]),
    case("x @ y", as_np(lambda x, y: x @ y), lambda x, y: x @ y, [u(2, 3, 4), u(4, 5)],
         grad=(0, 1)),
]

REDUCE_CASES = [
    case("np.sum all", as_np(np.sum), onp.sum, [u(3, 4)], op="_np_sum"),
    case("np.sum axis", as_np(lambda x: np.sum(x, axis=1, keepdims=True)),
         lambda x: onp.sum(x, axis=1, keepdims=True), [u(3, 4)]),
    case("np.mean", as_np(lambda x: np.mean(x, axis=(0, 2))),
         lambda x: onp.mean(x, axis=(0, 2)), [u(2, 3, 4)]),
    case("np.prod", as_np(lambda x: np.prod(x, axis=0)), lambda x: onp.prod(x, axis=0),
         [pos(3, 4)]),
    case("np.max", as_np(lambda x: np.max(x, axis=1)), lambda x: onp.max(x, axis=1),
         [u(3, 4)]),
    case("np.min", as_np(np.min), onp.min, [u(3, 4)], op="_np_min"),
    case("np.std", as_np(lambda x: np.std(x, axis=1)), lambda x: onp.std(x, axis=1),
         [u(3, 4)]),
    case("np.var ddof", as_np(lambda x: np.var(x, ddof=1)), lambda x: onp.var(x, ddof=1),
         [u(3, 4)], op="_npi_var"),
    case("np.linalg.norm", as_np(np.linalg.norm), onp.linalg.norm, [u(3, 4)], op="_npi_norm"),
    case("np.cumsum", as_np(lambda x: np.cumsum(x, axis=1)), lambda x: onp.cumsum(x, axis=1),
         [u(3, 4)]),
    case("np.linalg.inv", as_np(np.linalg.inv), onp.linalg.inv, [u(3, 3) + 3 * onp.eye(3)],
         order=1),
    case("np.linalg.det", as_np(np.linalg.det), onp.linalg.det, [u(3, 3) + 2 * onp.eye(3)],
         order=1, op="_linalg_det"),
    # (forward only: the gradient assumes symmetric perturbations, differences do not)
    case("np.linalg.cholesky", as_np(np.linalg.cholesky), onp.linalg.cholesky,
         [onp.eye(3) * 2 + 0.1 * onp.ones((3, 3))], grad=(), order=1),
]

SHAPE_CASES = [
    case("reshape", as_np(lambda x: x.reshape(4, -1)), lambda x: x.reshape(4, -1), [u(2, 6)]),
    case("transpose", as_np(lambda x: np.transpose(x, (2, 0, 1))),
         lambda x: onp.transpose(x, (2, 0, 1)), [u(2, 3, 4)]),
    case(".T", as_np(lambda x: x.T), lambda x: x.T, [u(2, 3)]),
    case("swapaxes", as_np(lambda x: np.swapaxes(x, 0, 2)), lambda x: onp.swapaxes(x, 0, 2),
         [u(2, 3, 4)]),
    case("squeeze", as_np(np.squeeze), onp.squeeze, [u(1, 3, 1)]),
    case("expand_dims", as_np(lambda x: np.expand_dims(x, 1)),
         lambda x: onp.expand_dims(x, 1), [u(2, 3)]),
    case("concatenate", as_np(lambda x, y: np.concatenate([x, y], axis=1)),
         lambda x, y: onp.concatenate([x, y], axis=1), [u(2, 3), u(2, 2)], grad=(0, 1)),
    case("stack", as_np(lambda x, y: np.stack([x, y], axis=1)),
         lambda x, y: onp.stack([x, y], axis=1), [u(2, 3), u(2, 3)], grad=(0, 1)),
    case("split", as_np(lambda x: np.split(x, 2, axis=1)), lambda x: onp.split(x, 2, axis=1),
         [u(3, 4)]),
    case("tile", as_np(lambda x: np.tile(x, (2, 1))), lambda x: onp.tile(x, (2, 1)),
         [u(2, 3)]),
    case("repeat", as_np(lambda x: np.repeat(x, 2, axis=1)),
         lambda x: onp.repeat(x, 2, axis=1), [u(2, 3)]),
    case("flip", as_np(lambda x: np.flip(x, 1)), lambda x: onp.flip(x, 1), [u(2, 3)]),
    case("broadcast_to", as_np(lambda x: np.broadcast_to(x, (4, 2, 3))),
         lambda x: onp.broadcast_to(x, (4, 2, 3)), [u(2, 1)]),
    case("where", as_np(lambda c, x, y: np.where(c > 0, x, y)),
         lambda c, x, y: onp.where(c > 0, x, y), [u(2, 3), u(2, 3), u(3)], grad=(1, 2),
              op="_npi_where"),
    case("clip", as_np(lambda x: np.clip(x, -0.5, 0.5)), lambda x: onp.clip(x, -0.5, 0.5),
         [u(3, 4) * 0.9 + 0.03]),
    case("dot 1-d", as_np(np.dot), onp.dot, [u(4), u(4)], grad=(0, 1), op="_np_dot"),
    case("dot 2-d 1-d", as_np(np.dot), onp.dot, [u(3, 4), u(4)], grad=(0, 1)),
    case("dot 2-d", as_np(np.dot), onp.dot, [u(3, 4), u(4, 2)], grad=(0, 1)),
    case("matmul batch", as_np(np.matmul), onp.matmul, [u(2, 3, 4), u(2, 4, 2)], grad=(0, 1)),
    case("getitem basic", as_np(lambda x: x[1, ::2]), lambda x: x[1, ::2], [u(3, 4)]),
    case("getitem advanced", as_np(lambda x: x[[0, 2, 2]]), lambda x: x[[0, 2, 2]],
         [u(3, 4)]),
    case("getitem 0-d", as_np(lambda x: x[1, 2]), lambda x: x[1, 2], [u(3, 4)], op="_npi_getitem"),
]

NPX_CASES = [
    case("npx.relu", as_np(npx.relu), lambda x: onp.maximum(x, 0), [u(3, 4) + 0.05], order=1),
    case("npx.sigmoid", as_np(npx.sigmoid), lambda x: 1 / (1 + onp.exp(-x)), [u(3, 4)]),
    case("npx.softmax", as_np(npx.softmax),
         lambda x: onp.exp(x) / onp.exp(x).sum(-1, keepdims=True), [u(3, 4)]),
    case("npx.log_softmax", as_np(npx.log_softmax),
         lambda x: x - onp.log(onp.exp(x).sum(-1, keepdims=True)), [u(3, 4)]),
    case("npx.batch_dot", as_np(npx.batch_dot), onp.matmul, [u(2, 3, 4), u(2, 4, 5)],
         grad=(0, 1)),
    case("npx.batch_flatten", as_np(npx.batch_flatten), lambda x: x.reshape(2, -1),
         [u(2, 3, 4)]),
    case("npx.fully_connected", as_np(lambda x, w, b: npx.fully_connected(
        x, w, b, num_hidden=3)), lambda x, w, b: x @ w.T + b, [u(2, 4), u(3, 4), u(3)],
        grad=(0, 1, 2)),
    case("npx.pick", as_np(lambda x: npx.pick(x, np.array([0, 2, 1], dtype="float64"))),
         lambda x: x[onp.arange(3), [0, 2, 1]], [u(3, 4)]),
    case("npx.reshape", as_np(lambda x: npx.reshape(x, (-2, -1))),
         lambda x: x.reshape(2, -1), [u(2, 3, 4)]),
    case("npx.sequence_mask", as_np(lambda x: npx.sequence_mask(
        x, np.array([1, 2], dtype="float64"), use_sequence_length=True, axis=1)),
        lambda x: x * (onp.arange(3)[None, :] < onp.array([[1], [2]])), [u(2, 3)]),
    case("npx.layer_norm", as_np(lambda x, g, b: npx.layer_norm(x, g, b)),
         lambda x, g, b: (x - x.mean(-1, keepdims=True)) / onp.sqrt(
             x.var(-1, keepdims=True) + 1e-5) * g + b, [u(2, 5), pos(5), u(5)],
         grad=(0, 1, 2), order=1),
    case("npx.activation tanh", as_np(lambda x: npx.activation(x, act_type="tanh")),
         onp.tanh, [u(3, 4)]),
    case("npx.leaky_relu", as_np(lambda x: npx.leaky_relu(x, slope=0.1)),
         lambda x: onp.where(x > 0, x, 0.1 * x), [u(3, 4) + 0.05], order=1),
    case("npx.erf", as_np(npx.erf), None, [u(3, 4)], order=1),
]

ALL = UNARY_CASES + BINARY_CASES + REDUCE_CASES + SHAPE_CASES + NPX_CASES


globals().update(row_tests(ALL))


def test_np_outputs_are_np_arrays_of_the_row_dtype():
    x = np.array(u(3, 4), dtype="float64")
    for c in ALL:
        y = c.fn(*[np.array(a, dtype=a.dtype).as_nd_ndarray() for a in c.inputs])
        ys = y if isinstance(y, list) else [y]
        assert all(o.dtype == onp.float64 for o in ys), c.id
    assert type(np.exp(x)) is np.ndarray and type(npx.relu(x)) is np.ndarray


def test_gradient_of_scalar_rmod_on_a_0d_array():
    """The rule of ``s % x`` runs nd.floor on what ``s / x`` gives for a 0-d input:
    a NumPy scalar, which an unrecorded backward must take like a raw array."""
    from mxlite import np as mnp, npx
    npx.set_np()
    try:
        x = mnp.array(3.0)
        x.attach_grad()
        with mx.autograd.record():
            y = 7.0 % x
        y.backward()
        assert float(y) == 1.0 and float(x.grad) == -2.0     # -floor(7 / 3)
    finally:
        npx.reset_np()
