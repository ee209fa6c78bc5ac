"""The ``mx.np`` elementwise, logical, bitwise and small reduction ops called by their
registry names (``_npi_equal``, ``_npi_add_scalar``...), each row with its NumPy
reference: comparisons and predicates give bool arrays, as NumPy."""
import numpy as np

from optable import row, row_tests

R = np.random.RandomState(11)
S = 0.5


def u(*shape):
    return R.uniform(-1, 1, shape)


def halves(*shape):
    return R.randint(-2, 3, shape) / 2.0


def ints(*shape):
    return R.randint(1, 12, shape).astype(np.int64)


def _special():
    """Values with nan and both infinities, for the predicates."""
    x = u(3, 4)
    x[0, 0], x[1, 1], x[2, 2] = np.nan, np.inf, -np.inf
    return x


def _same_dtype(fn):
    return lambda *xs: fn(*xs).astype(xs[0].dtype)


SCALAR = [
    ("_npi_add_scalar", lambda x: x + S, 2), ("_npi_subtract_scalar", lambda x: x - S, 2),
    ("_npi_true_divide_scalar", lambda x: x / S, 2),
    ("_npi_mod_scalar", lambda x: np.mod(x, S), 1), ("_npi_rmod_scalar", lambda x: np.mod(S, x), -1),
    ("_npi_maximum_scalar", lambda x: np.maximum(x, S), 1),
    ("_npi_minimum_scalar", lambda x: np.minimum(x, S), 1),
    ("_npi_hypot_scalar", lambda x: np.hypot(x, S), 2),
    ("_npi_equal_scalar", lambda x: x == S, 0), ("_npi_not_equal_scalar", lambda x: x != S, 0),
    ("_npi_greater_scalar", lambda x: x > S, 0), ("_npi_greater_equal_scalar", lambda x: x >= S, 0),
    ("_npi_less_scalar", lambda x: x < S, 0), ("_npi_less_equal_scalar", lambda x: x <= S, 0),
]
BINARY = [
    ("_npi_equal", np.equal), ("_npi_not_equal", np.not_equal), ("_npi_greater", np.greater),
    ("_npi_greater_equal", np.greater_equal), ("_npi_less", np.less),
    ("_npi_less_equal", np.less_equal), ("_npi_logical_and", np.logical_and),
    ("_npi_logical_or", np.logical_or), ("_npi_logical_xor", np.logical_xor),
]
UNARY = [
    ("_npi_ceil", np.ceil), ("_npi_floor", np.floor), ("_npi_trunc", np.trunc),
    ("_npi_fix", np.trunc), ("_npi_rint", np.rint), ("_npi_sign", np.sign),
]
PREDICATES = [
    ("_npi_isnan", np.isnan), ("_npi_isinf", np.isinf), ("_npi_isfinite", np.isfinite),
    ("_npi_isposinf", np.isposinf), ("_npi_isneginf", np.isneginf),
]
BITWISE = [
    ("_npi_bitwise_and", np.bitwise_and), ("_npi_bitwise_or", np.bitwise_or),
    ("_npi_bitwise_xor", np.bitwise_xor), ("_npi_lcm", np.lcm),
]


def _grad(n):
    return {"grad": (), "order": 1} if n <= 0 else {"order": n}


# n: the gradient order checked (0: none, on ties; -1: none, the inputs shifted by 2 so
# that no divisor is 0)
SPECS = [row(name, ref, [halves(3, 4) if n == 0 else u(3, 4) + (2 if n < 0 else 0)],
             {"scalar": S}, **_grad(n)) for name, ref, n in SCALAR]
SPECS += [row(name, ref, [halves(3, 4), halves(3, 4)], grad=()) for name, ref in BINARY]
SPECS += [row(name, _same_dtype(ref), [u(3, 4) * 3], grad=()) for name, ref in UNARY]
SPECS += [row(name, ref, [_special()], grad=()) for name, ref in PREDICATES]
SPECS += [row(name, ref, [ints(3, 4), ints(3, 4)], grad=()) for name, ref in BITWISE]
SPECS += [
    row("_npi_bitwise_not", np.invert, [ints(3, 4)], grad=()),
    row("_npi_logical_not", np.logical_not, [halves(3, 4)], grad=()),
    row("_np_all", lambda x: np.all(x, axis=1), [halves(3, 4)], {"axis": 1}, grad=()),
    row("_np_any", lambda x: np.any(x, axis=0, keepdims=True), [halves(3, 4)],
        {"axis": 0, "keepdims": True}, grad=()),
    row("_np_copy", np.copy, [u(3, 4)]),
    row("_npi_argmax", lambda x: np.argmax(x, axis=1), [u(3, 4)], {"axis": 1}, grad=()),
    row("_npi_argmin", lambda x: np.argmin(x, axis=0), [u(3, 4)], {"axis": 0}, grad=()),
    row("_npx_nonzero", lambda x: np.stack(np.nonzero(x), axis=-1), [halves(3, 4)], grad=()),
    row("_npx_constraint_check", lambda x: np.array(True), [np.ones((2, 2), bool)],
        {"msg": "all positive"}, grad=(),
        errors=[(lambda: _constraint(np.zeros((2, 2), bool)), None)]),
]


def _constraint(x):
    from optable import op_function, to_nd
    return op_function("_npx_constraint_check")(*to_nd([x]), msg="all positive")


globals().update(row_tests(SPECS))
