"""Operator tests as rows (STYLE.md: "tests as tables"; PyTorch's OpInfo, JAX's specs).

A :class:`Spec` is one row: the registry op it tests, an mxlite call, its NumPy
reference, the inputs (NumPy arrays drawn from the op's domain, float64 where the op
is differentiable), which inputs get a numeric gradient, whether the gradient can be
differentiated again, the forward tolerance, and calls that must fail naming the op.
:func:`row_tests` makes the generic tests that run a table of rows;
``tests/test_op_rows.py`` fails when a registered op has no row.

Every finite difference in the tests is :func:`central_difference`.
"""
import contextlib
import dataclasses
import sys
from typing import Callable, Optional

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.nd.register import namespace_of
from mxlite.operator import registry

# Every Spec of a table (made when its module loads, not inside a running test), in
# order: what test_op_rows.py counts.
ALL = []
# The ``op`` of a row testing a Python function composed of several ops
# (``nd.contrib.foreach``), which covers no registry op of its own.
COMPOSED = "<composed>"


@dataclasses.dataclass
class Spec:
    """One op test row.

    Attributes
    ----------
    id : str
        The row's name in test ids.
    fn : callable
        ``fn(*NDArrays)``: the call under test, returning an NDArray or a list.
    ref : callable or None
        ``ref(*numpy arrays)``: the expected output(s); None for a row checked by its
        gradient only.
    inputs : list of numpy.ndarray
        A point of the op's domain (``log`` gets positive inputs).
    grad : tuple of int
        The inputs whose gradient is checked against central differences (float64).
    order : int
        2: the gradient of the gradient is checked too.
    grad2 : tuple of int or None
        With ``order=2``, the inputs whose second order is checked; None: all of ``grad``.
    grad_eps, grad_rtol, grad_atol : float
        The first-order check's difference step and tolerance (a kernel that computes in
        float32 whatever the input needs a wide step).
    op : str or None
        The registry op the row tests; None: the one op that ``fn`` runs; COMPOSED:
        a Python function of several ops.
    rtol, atol : float
        Forward tolerance in float64.
    rtol32, atol32 : float
        Forward tolerance in float32 (at least the float64 one).
    dtypes : tuple
        The float types the forward runs in (float64 inputs cast to each).
    errors : tuple
        ``(call, match)`` pairs: ``call()`` must raise an MXNet error whose message
        starts with the op's name (or ``match`` when given).
    raises : tuple
        ``(call, pattern)`` or ``(call, pattern, error type)``: ``call()`` must raise that
        type (MXNetError when not given) with a message that the regular expression
        ``pattern`` matches somewhere.
    moments : tuple or None
        For a sampler (``ref`` None): the ``(mean, variance)`` of the distribution, which
        the mean and variance of the (many) samples ``fn`` draws must meet.
    """
    id: str
    fn: Callable
    ref: Optional[Callable]
    inputs: list
    grad: tuple = (0,)
    order: int = 2
    grad2: Optional[tuple] = None
    grad_eps: float = 1e-6
    grad_rtol: float = 1e-6
    grad_atol: float = 1e-8
    op: Optional[str] = None
    rtol: float = 1e-12
    atol: float = 1e-12
    rtol32: float = 1e-5
    atol32: float = 1e-6
    dtypes: tuple = (np.float64, np.float32)
    errors: tuple = ()
    raises: tuple = ()
    moments: Optional[tuple] = None

    def __post_init__(self):
        self.inputs = list(self.inputs)
        self.grad = tuple(self.grad)
        if not _in_a_test():
            ALL.append(self)

    def _replace(self, **changes):
        return dataclasses.replace(self, **changes)


def _in_a_test():
    """Whether a test function is running (its rows are its own, not a table's)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name.startswith("test"):
            return True
        frame = frame.f_back
    return False


def errors(id, op, *calls):
    """A row of error calls only: each ``(call, match)`` must raise an MXNet error whose
    message starts with ``match`` (None: the op's name)."""
    return Spec(id, None, None, [], grad=(), op=op, errors=calls)


def raising(id, *calls):
    """A row of error calls only: each ``(call, pattern[, type])`` must raise an error
    (an MXNetError unless ``type`` is given) whose message matches ``pattern``."""
    return Spec(id, None, None, [], grad=(), op=COMPOSED, raises=calls)


def case(id, fn, ref, inputs, grad=(0,), order=2, **kw):
    """One row: ``fn(*NDArrays)`` must equal ``ref(*numpy arrays)``.

    ``grad`` lists the inputs checked against a numeric gradient (empty: not
    differentiable); ``order=2`` also checks the gradient of the gradient. Keywords:
    the other :class:`Spec` fields (``op``, ``rtol``, ``atol``, ``errors``).
    """
    return Spec(id, fn, ref, inputs, grad, order, **kw)


def op_function(name):
    """The function of registry op ``name`` itself, with the op's own params:
    ``mx.nd._internal.<name>``, else ``mx.nd``'s (``mx.nd.random.exponential`` takes a
    scale where the op ``_random_exponential`` takes a rate)."""
    fn = getattr(mx.nd._internal, name, None)
    if fn is not None:
        return fn
    ns, short = namespace_of(name)
    return getattr(getattr(mx.nd, ns) if ns else mx.nd, short)


def row(op, ref, inputs, params=None, id=None, **kw):
    """A row calling registry op ``op`` itself: ``mx.nd.<op>(*inputs, **params)``."""
    fn = op_function(op)
    params = dict(params or {})
    return Spec(id or op, lambda *xs: fn(*xs, **params), ref, inputs, op=op, **kw)


def outputs(y):
    """The outputs of an op call as a list."""
    return list(y) if isinstance(y, (list, tuple)) else [y]


def to_nd(arrays):
    return [mx.nd.array(a, dtype=a.dtype) for a in arrays]


# -- which ops a row runs ---------------------------------------------------------------

@contextlib.contextmanager
def ops_run():
    """Collects the names of the registry ops whose kernels run inside the block."""
    ran = []
    old = registry._profile_hook

    def hook(op, p, xp, data):
        ran.append(op.name)
        return op.compute(p, xp, *data) if old is None else old(op, p, xp, data)
    registry._profile_hook = hook
    try:
        yield ran
    finally:
        registry._profile_hook = old


def ops_of(c):
    """The registry ops row ``c`` tests: its ``op``, else the one op its forward runs
    (ValueError when it runs several and does not say which it tests)."""
    if c.op == COMPOSED:
        return set()
    if c.fn is None:             # a row of error calls only
        return {registry.get_op(c.op).name}
    with ops_run() as ran, mx.autograd.pause():
        c.fn(*to_nd(c.inputs))
    if c.op is not None:
        name = registry.get_op(c.op).name
        if name not in ran:
            raise ValueError("%s: declares op %s but runs %s" % (c.id, name, sorted(set(ran))))
        return {name}
    if len(set(ran)) != 1:
        raise ValueError("%s: runs %s; say which op it tests with op=" % (c.id, sorted(set(ran))))
    return set(ran)


# -- the one finite difference ---------------------------------------------------------

def central_difference(f, arrays, i, v, eps=1e-6):
    """``(f(x + eps v) - f(x - eps v)) / (2 eps)``: the derivative of the scalar
    function ``f(list of arrays)`` along ``v`` in input ``i``."""
    plus = [np.array(a, copy=True) for a in arrays]
    minus = [np.array(a, copy=True) for a in arrays]
    plus[i] = plus[i] + eps * v
    minus[i] = minus[i] - eps * v
    return (f(plus) - f(minus)) / (2 * eps)


def numeric_gradient(f, arrays, i, eps=1e-6):
    """The full gradient of scalar ``f`` in input ``i``, one central difference per
    element (for small inputs; rows use a random direction instead)."""
    x = np.asarray(arrays[i])
    g = np.zeros(x.shape, np.float64)
    for idx in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[idx] = 1
        g[idx] = central_difference(f, arrays, i, e, eps)
    return g


# -- the generic checks ------------------------------------------------------------------

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


def _loss_value(c, ws, power):
    return lambda arrays: float(_loss(c, to_nd(arrays), ws, power).asscalar())


def check_forward(c, dtype=np.float64):
    """Outputs against the NumPy reference: shapes, dtypes and values. In float32 the
    float64 inputs are cast and the outputs must stay float32."""
    xs = [a.astype(dtype) if a.dtype == np.float64 else a for a in c.inputs]
    rtol, atol = (c.rtol, c.atol) if dtype == np.float64 else (max(c.rtol, c.rtol32),
                                                                max(c.atol, c.atol32))
    ys, refs = outputs(c.fn(*to_nd(xs))), outputs(c.ref(*xs))
    assert len(ys) == len(refs), "%s: %d outputs, expected %d" % (c.id, len(ys), len(refs))
    for k, (y, r) in enumerate(zip(ys, refs)):
        r = np.asarray(r)
        got = y.asnumpy()
        assert got.shape == r.shape, "%s output %d: shape %s, expected %s" % (
            c.id, k, got.shape, r.shape)
        assert got.dtype == r.dtype, "%s output %d: dtype %s, expected %s" % (
            c.id, k, got.dtype, r.dtype)
        np.testing.assert_allclose(got, r, rtol=rtol, atol=atol, err_msg=c.id)


def check_first_order(c, rng, eps=None, rtol=None, atol=None):
    """Autograd gradient along a random direction vs central differences (float64), with
    the row's step and tolerance unless given."""
    eps = c.grad_eps if eps is None else eps
    rtol = c.grad_rtol if rtol is None else rtol
    atol = c.grad_atol if atol is None else atol
    xs = to_nd(c.inputs)
    ws = _weights(rng, outputs(c.fn(*xs)))
    for i in c.grad:
        xs[i].attach_grad()
    with mx.autograd.record():
        loss = _loss(c, xs, ws, 1)
    loss.backward()
    for i in c.grad:
        v = rng.standard_normal(c.inputs[i].shape)
        numeric = central_difference(_loss_value(c, ws, 1), c.inputs, i, v, eps)
        analytic = float(np.sum(xs[i].grad.asnumpy() * v))
        assert np.isclose(analytic, numeric, rtol=rtol, atol=atol), \
            "%s: d/dx%d along v: autograd %.10g, numeric %.10g" % (c.id, i, analytic, numeric)


def _grad_dot(c, ws, i, u):
    """``arrays -> <d loss / d x_i, u>`` for loss = sum(w * y**2), by autograd."""
    def f(arrays):
        xs = to_nd(arrays)
        xs[i].attach_grad()
        with mx.autograd.record():
            loss = _loss(c, xs, ws, 2)
        loss.backward()
        return float(np.sum(xs[i].grad.asnumpy() * u))
    return f


def check_second_order(c, rng, eps=1e-5, rtol=1e-5, atol=1e-7):
    """Hessian-vector product by ``autograd.grad(create_graph=True)`` vs differences of
    first-order gradients. The loss squares the outputs so that even linear ops have
    a gradient that depends on the input."""
    xs = to_nd(c.inputs)
    ws = _weights(rng, outputs(c.fn(*xs)))
    for i in c.grad if c.grad2 is None else c.grad2:
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
        numeric = central_difference(_grad_dot(c, ws, i, u), c.inputs, i, v, eps)
        assert np.isclose(analytic, numeric, rtol=rtol, atol=atol), \
            "%s: second order along (u, v) for x%d: autograd %.10g, numeric %.10g" \
            % (c.id, i, analytic, numeric)


def check_moments(c, k=5.0):
    """Sample mean within ``k`` standard errors of the distribution's, and the sample
    variance within ``4 k`` of its standard error (heavier tails than a normal's)."""
    a = outputs(c.fn(*to_nd(c.inputs)))[0].asnumpy().astype(np.float64).ravel()
    mean, var = c.moments
    n = a.size
    assert abs(a.mean() - mean) <= k * np.sqrt(var / n), \
        "%s: sample mean %.6g, distribution's %.6g" % (c.id, a.mean(), mean)
    assert abs(a.var() - var) <= 4 * k * var * np.sqrt(2.0 / n), \
        "%s: sample variance %.6g, distribution's %.6g" % (c.id, a.var(), var)


def check_errors(c):
    """Each error call raises an MXNet error (or ValueError/TypeError/IndexError) whose
    message starts with the op's name."""
    for call, match in c.errors:
        with pytest.raises((MXNetError, ValueError, TypeError, IndexError)) as info:
            call()
        want = match or registry.get_op(c.op).name
        assert str(info.value).startswith(want), \
            "%s: message does not name %s: %s" % (c.id, want, info.value)


def check_raises(c):
    """Each ``(call, pattern[, type])`` of ``c.raises`` raises an error matching ``pattern``."""
    for call, pattern, *kind in c.raises:
        with pytest.raises(kind[0] if kind else MXNetError, match=pattern):
            call()


def row_tests(specs):
    """The generic tests of a table, for a test module to take in::

        globals().update(row_tests(SPECS))

    ``test_forward_float64``/``_float32`` (outputs against the reference),
    ``test_gradient`` and ``test_second_order`` (float64, along random directions),
    ``test_moments`` (samplers), ``test_errors`` (error calls name the op) and
    ``test_raises`` (error messages match), each only when some row asks for it."""
    ids = [c.id for c in specs]
    assert len(set(ids)) == len(ids), "duplicate row ids: %s" % sorted(
        i for i in set(ids) if ids.count(i) > 1)
    fwd = [c for c in specs if c.ref is not None]
    grad = [c for c in specs if c.grad]
    checks = {
        "test_forward_float64": ([c for c in fwd if np.float64 in c.dtypes],
                                 lambda c: check_forward(c, np.float64)),
        "test_forward_float32": ([c for c in fwd if np.float32 in c.dtypes],
                                 lambda c: check_forward(c, np.float32)),
        "test_gradient": (grad, lambda c: check_first_order(c, np.random.RandomState(1))),
        "test_second_order": ([c for c in grad if c.order == 2],
                              lambda c: check_second_order(c, np.random.RandomState(2))),
        "test_moments": ([c for c in specs if c.moments is not None], check_moments),
        "test_errors": ([c for c in specs if c.errors], check_errors),
        "test_raises": ([c for c in specs if c.raises], check_raises),
    }
    tests = {}
    for name, (rows, check) in checks.items():
        if rows:
            tests[name] = _each(rows, check)
    return tests


def _each(rows, check):
    @pytest.mark.parametrize("c", rows, ids=[c.id for c in rows])
    def test(c):
        check(c)
    return test
