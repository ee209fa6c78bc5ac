"""Elementwise ops called by their registry names: the ``_*_scalar`` ops that NDArray and
Symbol arithmetic run, the same-shape binary ops (``_equal``, ``_maximum``, ``_mod``...),
their legacy capitalised names (``_Equal``, ``_GreaterScalar``...) and the unary ops
only reached that way. Each row is one call with its NumPy reference; comparisons and
logical ops give 0/1 in the input dtype and have no gradient, as in MXNet."""
import numpy as np

import mxlite as mx
from optable import row, row_tests

R = np.random.RandomState(7)


def u(*shape):
    return R.uniform(-1, 1, shape)


def pos(*shape):
    return R.uniform(0.5, 1.5, shape)


def halves(*shape):
    """Multiples of 1/2 in [-1, 1]: comparisons meet ties."""
    return R.randint(-2, 3, shape) / 2.0


def _f(fn):
    """A comparison or logical NumPy function giving 0/1 in the input dtype."""
    return lambda *xs: fn(*xs).astype(xs[0].dtype)


def digamma(x):
    """psi(x) for x > 0: the recurrence up to x >= 6, then the asymptotic series."""
    x = np.array(x, dtype=np.float64)
    acc = np.zeros_like(x)
    while np.any(x < 6):
        small = x < 6
        acc = acc - np.where(small, 1 / x, 0)
        x = np.where(small, x + 1, x)
    x2 = 1 / (x * x)
    series = x2 * (1 / 12 - x2 * (1 / 120 - x2 * (1 / 252 - x2 * (1 / 240 - x2 / 132))))
    return acc + np.log(x) - 0.5 / x - series


def _mod(a, b):
    return np.mod(a, b)      # MXNet's mod takes the sign of the divisor, as NumPy's


S = 0.5   # the scalar of the scalar rows

SCALAR = [
    ("_plus_scalar", lambda x: x + S, u, 2), ("_minus_scalar", lambda x: x - S, u, 2),
    ("_rminus_scalar", lambda x: S - x, u, 2), ("_mul_scalar", lambda x: x * S, u, 2),
    ("_div_scalar", lambda x: x / S, u, 2), ("_rdiv_scalar", lambda x: S / x, pos, 2),
    ("_mod_scalar", lambda x: _mod(x, S), pos, 1), ("_rmod_scalar", lambda x: _mod(S, x), pos, 0),
    ("_power_scalar", lambda x: x ** S, pos, 2), ("_rpower_scalar", lambda x: S ** x, u, 2),
    ("_maximum_scalar", lambda x: np.maximum(x, S), u, 1),
    ("_minimum_scalar", lambda x: np.minimum(x, S), u, 1),
    ("_hypot_scalar", lambda x: np.hypot(x, S), u, 2),
    ("_equal_scalar", _f(lambda x: x == S), halves, 0),
    ("_not_equal_scalar", _f(lambda x: x != S), halves, 0),
    ("_greater_scalar", _f(lambda x: x > S), halves, 0),
    ("_greater_equal_scalar", _f(lambda x: x >= S), halves, 0),
    ("_lesser_scalar", _f(lambda x: x < S), halves, 0),
    ("_lesser_equal_scalar", _f(lambda x: x <= S), halves, 0),
    ("_logical_and_scalar", _f(lambda x: np.logical_and(x, S)), halves, 0),
    ("_logical_or_scalar", _f(lambda x: np.logical_or(x, S)), halves, 0),
    ("_logical_xor_scalar", _f(lambda x: np.logical_xor(x, S)), halves, 0),
]

BINARY = [
    ("_maximum", np.maximum, u, 1), ("_minimum", np.minimum, u, 1),
    ("_mod", _mod, pos, 1), ("_power", np.power, pos, 2), ("_hypot", np.hypot, u, 2),
    ("broadcast_hypot", np.hypot, u, 2),
    ("_equal", _f(np.equal), halves, 0), ("_not_equal", _f(np.not_equal), halves, 0),
    ("_greater", _f(np.greater), halves, 0), ("_greater_equal", _f(np.greater_equal), halves, 0),
    ("_lesser", _f(np.less), halves, 0), ("_lesser_equal", _f(np.less_equal), halves, 0),
    ("_logical_and", _f(np.logical_and), halves, 0), ("_logical_or", _f(np.logical_or), halves, 0),
    ("_logical_xor", _f(np.logical_xor), halves, 0),
    ("broadcast_logical_xor", _f(np.logical_xor), halves, 0),
]

# MXNet's legacy names (Symbol arithmetic in old JSON) and the ops they mean
LEGACY = {
    "_EqualScalar": "_equal_scalar", "_NotEqualScalar": "_not_equal_scalar",
    "_GreaterScalar": "_greater_scalar", "_GreaterEqualScalar": "_greater_equal_scalar",
    "_LesserScalar": "_lesser_scalar", "_LesserEqualScalar": "_lesser_equal_scalar",
    "_LogicalAndScalar": "_logical_and_scalar", "_LogicalOrScalar": "_logical_or_scalar",
    "_LogicalXorScalar": "_logical_xor_scalar", "_ModScalar": "_mod_scalar",
    "_RModScalar": "_rmod_scalar", "_HypotScalar": "_hypot_scalar",
    "_Equal": "_equal", "_Not_Equal": "_not_equal", "_Greater": "_greater",
    "_Greater_Equal": "_greater_equal", "_Lesser": "_lesser", "_Lesser_Equal": "_lesser_equal",
    "_Logical_And": "_logical_and", "_Logical_Or": "_logical_or", "_Logical_Xor": "_logical_xor",
}
SCALAR += [(alias, ref, dom, n) for name, ref, dom, n in SCALAR
           for alias in LEGACY if LEGACY[alias] == name]
BINARY += [(alias, ref, dom, n) for name, ref, dom, n in BINARY
           for alias in LEGACY if LEGACY[alias] == name]


def _order(n):
    return {"grad": (), "order": 1} if n == 0 else {"order": n}


SPECS = [row(name, ref, [dom(3, 4)], {"scalar": S}, **_order(n)) for name, ref, dom, n in SCALAR]
SPECS += [row(name, ref, [dom(3, 4), dom(3, 4)], **dict(_order(n), grad=(0, 1) if n else ()))
          for name, ref, dom, n in BINARY]
SPECS += [
    row("degrees", np.degrees, [u(3, 4)]),
    row("_digamma", lambda x: digamma(x).astype(x.dtype), [pos(3, 4)], grad=(), rtol=1e-10,
        atol=1e-10),
    # their gradients are on purpose not the derivative: test_gradients_by_contract
    row("_contrib_round_ste", np.round, [u(3, 4) * 3], grad=()),
    row("_contrib_sign_ste", np.sign, [u(3, 4)], grad=()),
    row("_contrib_gradientmultiplier", lambda x: x, [u(3, 4)], {"scalar": 2.0}, grad=()),
    row("make_loss", lambda x: x, [u(3, 4)], grad=()),
    row("_onehot_encode", lambda i, out: np.eye(out.shape[1], dtype=out.dtype)[i.astype(int)],
        [np.array([2., 0., 1.]), np.zeros((3, 4))], grad=()),
    row("fill_element_0index", lambda a, v, i: _fill0(a, v, i),
        [u(3, 4), np.array([5., 6., 7.]), np.array([1., 0., 3.])], grad=()),
    row("batch_take", lambda a, i: a[np.arange(len(i)), i.astype(int)],
        [u(3, 4), np.array([1, 3, 0], dtype=np.int32)], grad=()),
]


# MXNet's other names for ops on dense storage, and executor helpers
SPECS += [
    row("_grad_add", np.add, [u(3, 4), u(3, 4)], grad=(0, 1)),
    row("_scatter_plus_scalar", lambda x: x + S, [u(3, 4)], {"scalar": S}),
    row("_scatter_minus_scalar", lambda x: x - S, [u(3, 4)], {"scalar": S}),
    row("_scatter_elemwise_div", np.divide, [u(3, 4), pos(3, 4)], grad=(0, 1)),
    row("_rnn_param_concat", lambda a, b: np.concatenate([a, b], 0), [u(3), u(5)],
        {"num_args": 2, "dim": 0}, grad=(0, 1)),
    row("_contrib_SparseEmbedding", lambda i, w: w[i.astype(int)],
        [np.array([2., 0., 2.]), u(4, 3)], {"input_dim": 4, "output_dim": 3}, grad=(1,)),
    row("_identity_with_attr_like_rhs", lambda a, b: a, [u(3, 4), u(3, 4)], grad=(0, 1)),
    row("_log_softmax_pick", lambda x, i: _log_softmax(x)[np.arange(3), i.astype(int)],
        [u(3, 4), np.array([3., 0., 1.])], {"axis": -1}, grad=(0,)),
]


def _log_softmax(x):
    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def _fill0(a, v, i):
    y = a.copy()
    y[np.arange(len(i)), i.astype(int)] = v
    return y


globals().update(row_tests(SPECS))


def test_scalar_rows_take_mxnet_s_is_int_flag():
    # NDArray arithmetic with a Python int passes is_int; the value is unchanged
    x = mx.nd.array([1.5, 2.5])
    np.testing.assert_allclose(mx.nd._internal._plus_scalar(x, scalar=2, is_int=True).asnumpy(),
                               [3.5, 4.5])


def test_gradients_by_contract():
    """Straight-through estimators pass the head gradient through, gradientmultiplier
    scales it, make_loss ignores it (its gradient is ones), as MXNet."""
    x = mx.nd.array(u(2, 3))
    gy = mx.nd.array(u(2, 3))
    for name, params, want in [("_contrib_round_ste", {}, gy.asnumpy()),
                               ("_contrib_sign_ste", {}, gy.asnumpy()),
                               ("_contrib_gradientmultiplier", {"scalar": 2.0}, 2 * gy.asnumpy()),
                               ("make_loss", {}, np.ones((2, 3)))]:
        x.attach_grad()
        with mx.autograd.record():
            y = getattr(mx.nd._internal, name)(x, **params)
        y.backward(gy)
        np.testing.assert_allclose(x.grad.asnumpy(), want, rtol=1e-6, err_msg=name)
