"""``mx.test_utils``: comparisons with MXNet's default tolerances, random test
data, and numeric gradient checking, as ``mxnet.test_utils``.

``check_numeric_gradient`` takes a Python function of NDArrays (differentiated
with autograd) or a Symbol (differentiated through its executor), and compares
the gradient of ``sum(f(x) * random_projection)`` with central differences.
"""
import contextlib
import json
import numbers
import os
import sys
import time
import traceback

import numpy as np
import numpy.random as rnd  # noqa: F401 (MXNet's test_utils name)
import numpy.testing as npt

# No ``__all__``: as in MXNet, ``from mxnet.test_utils import *`` also gives ``mx``,
# ``np``, ``NDArray``, ``array``, ``Context``, ``Symbol``... that test files rely on.
import mxlite as mx  # noqa: F401
from . import autograd
from . import context as _context
from ._test_checks import *  # noqa: F401,F403
from ._test_checks import _sorted_dict, _sorted_items  # noqa: F401
from ._test_data import *  # noqa: F401,F403
from ._np_test_utils import *  # noqa: F401,F403
from .base import MXNetError
from .context import Context, current_context, num_gpus  # noqa: F401
from .io import DataIter
from .nd import NDArray, array  # noqa: F401
from .runtime import Features  # noqa: F401
from .symbol import Symbol  # noqa: F401
from .util import getenv, setenv, use_np  # noqa: F401


# -- contexts and default tolerances ------------------------------------------------

def default_context():
    """The context tests run on: the current context (``cpu(0)`` unless changed)."""
    return current_context()


def set_default_context(ctx):
    """Make ``ctx`` the default context (for this thread), as ``with ctx:`` without the block."""
    _context._state.ctx = ctx


def default_dtype():
    """The default data type of test arrays: float32."""
    return np.float32


def _table(f16, f32, f64):
    t = {np.dtype(np.float16): f16, np.dtype(np.float32): f32, np.dtype(np.float64): f64}
    for dt in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
               np.int64, np.uint64):
        t[np.dtype(dt)] = 0
    return t


def default_rtols():
    """Relative tolerance per dtype (MXNet's: 1e-2 float16, 1e-4 float32, 1e-5 float64, 0 ints)."""
    return _table(1e-2, 1e-4, 1e-5)


def default_atols():
    """Absolute tolerance per dtype (MXNet's: 1e-1 float16, 1e-3 float32, 1e-20 float64, 0 ints)."""
    return _table(1e-1, 1e-3, 1e-20)


def default_numeric_eps():
    """Finite-difference step per dtype; powers of two so that ``x + eps`` drops no bits."""
    return {np.dtype(np.float16): 1.0 / 2 ** 6, np.dtype(np.float32): 1.0 / 2 ** 9,
            np.dtype(np.float64): 1.0 / 2 ** 14}


def _dtype_of(x):
    if isinstance(x, numbers.Number) and not hasattr(x, "dtype"):
        return np.asarray(x).dtype
    return np.dtype(x.dtype)


def get_tolerance(x, tol, default_tol):
    """``tol`` if it is a number, else the entry for ``x``'s dtype in ``tol`` (a dict) or
    ``default_tol``."""
    if isinstance(tol, numbers.Number):
        return tol
    dt = _dtype_of(x)
    tol = {} if tol is None else tol
    return tol.get(dt, default_tol.get(dt, 0))


def get_tols(x, y, rtol, atol):
    """The ``(rtol, atol)`` to compare ``x`` with ``y``: the looser of the two dtypes'."""
    rtol = max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols()))
    atol = max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols()))
    return rtol, atol


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_etol(etol=None):
    return 0 if etol is None else etol


# -- random test data ----------------------------------------------------------------

def random_arrays(*shapes):
    """Standard-normal float32 NumPy arrays, one per shape (one array for one shape)."""
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """Uniform NumPy arrays on ``[low, high)``, one per shape."""
    dtype = dtype or default_dtype()
    arrays = [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def rand_shape_2d(dim0=10, dim1=10, allow_zero_size=False):
    """A random 2-D shape with dims in ``[1, dim]`` (``[0, dim]`` with ``allow_zero_size``)."""
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0=10, dim1=10, dim2=10, allow_zero_size=False):
    """A random 3-D shape."""
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim, dim=10, allow_zero_size=False):
    """A random shape of ``num_dim`` dims, each in ``[1, dim]``.

    Examples
    --------
    >>> len(mx.test_utils.rand_shape_nd(4))
    4
    """
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in np.random.randint(low, dim + 1, size=num_dim))


def rand_ndarray(shape, stype="default", density=None, dtype=None, ctx=None):
    """A random NDArray of ``shape`` (standard normal values).

    ``stype='row_sparse'`` or ``'csr'`` zeroes all but about ``density`` of the
    rows or elements; the result is still a dense NDArray, since mxlite stores
    every array dense.
    """
    from . import nd
    ctx = ctx or default_context()
    data = random_arrays(tuple(shape))
    if stype not in ("default", "row_sparse", "csr"):
        raise ValueError("rand_ndarray: unknown stype %r" % (stype,))
    if stype != "default":
        density = np.random.rand() if density is None else density
        mask_shape = (shape[0],) + (1,) * (len(shape) - 1) if stype == "row_sparse" else shape
        data = data * (np.random.rand(*mask_shape) < density)
    return nd.array(data, ctx=ctx, dtype=dtype or default_dtype())


# -- comparisons ---------------------------------------------------------------------

def _as_numpy(x):
    if hasattr(x, "asnumpy"):
        return x.asnumpy()
    return np.asarray(x)


def same(a, b):
    """True when ``a`` and ``b`` have the same shape and values."""
    return np.array_equal(_as_numpy(a), _as_numpy(b))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True):
    """True when ``|a - b| <= atol + rtol * |b|`` everywhere (tolerances by dtype if None)."""
    a, b = _as_numpy(a), _as_numpy(b)
    if not use_broadcast and a.shape != b.shape:
        return False
    rtol, atol = get_tols(a, b, rtol, atol)
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


def _violation(a, b, rtol, atol, equal_nan):
    """``|a - b| / (atol + rtol |b|)`` elementwise; 0 where equal, inf for a lone NaN."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        absdiff = np.where(np.equal(a64, b64), 0.0, np.abs(a64 - b64))
        both_nan = np.isnan(a64) & np.isnan(b64)
        absdiff = np.where(np.isnan(absdiff), 0.0 if equal_nan else np.inf, absdiff)
        if equal_nan:
            absdiff = np.where(both_nan, 0.0, absdiff)
        return absdiff / (atol + rtol * np.abs(np.nan_to_num(b64)) + 1e-20)


def _find_max_violation(a, b, rtol, atol, equal_nan=False):
    """The index of the largest tolerance violation and its size."""
    v = _violation(a, b, rtol, atol, equal_nan)
    idx = tuple(int(i) for i in np.unravel_index(int(np.argmax(v)), v.shape)) if v.size else ()
    return idx, (float(np.max(v)) if v.size else 0.0)


def locationError(a, b, index, names, maxError=False):
    """The message naming ``index`` and the values of ``a`` and ``b`` there."""
    return "Location of %serror: %s, %s=%.8f, %s=%.8f" % (
        "maximum " if maxError else "", str(index), names[0], a[index], names[1], b[index])


def checkShapes(a, b):
    """Raise AssertionError unless ``a`` and ``b`` have the same shape."""
    if a.shape != b.shape:
        raise AssertionError(npt.build_err_msg(
            [a, b], err_msg="a.shape = %s and b.shape = %s are not equal" % (a.shape, b.shape)))


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Assert that ``a`` and ``b`` (NDArrays, NumPy arrays or numbers) are close.

    Passes when ``|a - b| <= atol + rtol * |b|`` everywhere; tolerances left
    as None take MXNet's defaults for the looser of the two dtypes (float32:
    rtol 1e-4, atol 1e-3). Bool arrays must be equal.

    Parameters
    ----------
    a, b : NDArray, numpy.ndarray or number
    rtol, atol : float or dict of dtype to float, optional
    names : tuple of str, optional
        Names of ``a`` and ``b`` in the error message.
    equal_nan : bool, optional
        Whether NaNs in the same place count as equal.
    use_broadcast : bool, optional
        Compare arrays of different (broadcastable) shapes; False requires equal shapes.

    Raises
    ------
    AssertionError
        Naming the largest error, its index and both values there, the
        tolerances and the fraction of mismatched elements.

    Examples
    --------
    >>> mx.test_utils.assert_almost_equal(mx.nd.ones((2,)), np.ones(2))
    """
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _as_numpy(a), _as_numpy(b)
    if not use_broadcast and a.shape != b.shape:
        raise AssertionError(npt.build_err_msg(
            [a, b], err_msg="%s.shape = %s and %s.shape = %s are not equal"
            % (names[0], a.shape, names[1], b.shape), names=names))
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        raise AssertionError("%s of shape %s and %s of shape %s cannot be compared: shapes "
                             "differ and do not broadcast" % (names[0], a.shape, names[1],
                                                              b.shape)) from None
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        npt.assert_equal(a, b, err_msg="%s and %s differ" % names)
        return
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    idx, rel = _find_max_violation(a, b, rtol, atol, equal_nan)
    bad = np.count_nonzero(_violation(a, b, rtol, atol, equal_nan) > 1)
    msg = "Error %f exceeds tolerance rtol=%e, atol=%e (mismatch %f%%).\n%s" % (
        rel, rtol, atol, 100.0 * bad / max(a.size, 1), locationError(a, b, idx, names, maxError=True))
    with np.printoptions(threshold=4, suppress=True):
        raise AssertionError(npt.build_err_msg([a, b], err_msg=msg, names=names))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """:func:`assert_almost_equal` with NumPy's ``assert_allclose`` defaults."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan=False, mismatches=(10, 10)):
    """:func:`assert_almost_equal` that tolerates a fraction ``etol`` of mismatched
    elements: it passes while at most ``etol`` of the elements are out of tolerance
    (``etol`` None or 0: every element must be within tolerance)."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.broadcast_arrays(_as_numpy(a), _as_numpy(b))
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    err = 1 - np.count_nonzero(close) / max(close.size, 1)
    if err > etol:
        idx, rel = _find_max_violation(a, b, rtol, atol, equal_nan)
        msg = "Error %f exceeds tolerance rtol=%e, atol=%e, etol=%e (mismatch %f%%).\n%s" % (
            rel, rtol, atol, etol, 100.0 * err, locationError(a, b, idx, names, maxError=True))
        with np.printoptions(threshold=4, suppress=True):
            raise AssertionError(npt.build_err_msg([a, b], err_msg=msg, names=names))


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """:func:`assert_almost_equal` ignoring positions where either side is NaN."""
    a, b = np.copy(_as_numpy(a)), np.copy(_as_numpy(b))
    nan = np.isnan(a) | np.isnan(b)
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """Assert that ``f(*args, **kwargs)`` raises ``exception_type``.

    Examples
    --------
    >>> mx.test_utils.assert_exception(int, ValueError, "x")
    """
    try:
        f(*args, **kwargs)
    except exception_type:
        return
    raise AssertionError("%s did not raise %s" % (getattr(f, "__name__", f),
                                                   getattr(exception_type, "__name__",
                                                           exception_type)))


def retry(n):
    """Decorator: rerun a stochastic test up to ``n`` times before failing."""
    if n <= 0:
        raise ValueError("retry: n must be positive, got %r" % (n,))

    def decorate(f):
        def wrapper(*args, **kwargs):
            for i in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if i == n - 1:
                        raise
        wrapper.__name__ = f.__name__
        wrapper.__doc__ = f.__doc__
        return wrapper
    return decorate


def list_gpus():
    """The ids of the visible GPUs (empty without CuPy or a GPU)."""
    return list(range(num_gpus()))


# -- numeric gradients ---------------------------------------------------------------

class _Problem:
    """A function of named NDArray inputs, from a Python callable or a Symbol."""

    def __init__(self, fn, location, aux_states, ctx, dtype):
        self.ctx, self.dtype = ctx, np.dtype(dtype)
        self.sym = fn if _is_symbol(fn) else None
        if self.sym is not None:
            fn, location, aux_states = _symbol_problem(fn, location, aux_states, ctx)
        elif not callable(fn):
            raise TypeError("check_numeric_gradient: expected a Python function of NDArrays or "
                            "a Symbol, got %s" % type(fn).__name__)
        self.fn = fn
        self.by_name = isinstance(location, dict)
        if not self.by_name and not isinstance(location, (list, tuple)):
            raise TypeError("check_numeric_gradient: location must be a list or dict of arrays, "
                            "got %s" % type(location).__name__)
        items = location.items() if self.by_name else enumerate(location)
        self.location = {k: self._np(v) for k, v in items}
        self.aux_by_name = isinstance(aux_states, dict)
        aux_items = (aux_states.items() if self.aux_by_name
                     else enumerate(aux_states or ()))
        self.aux = {k: self._np(v) for k, v in aux_items}

    def _np(self, v):
        v = np.array(_as_numpy(v))
        # Float inputs take the checked dtype; integer inputs (indices) keep theirs.
        return v.astype(self.dtype) if v.dtype.kind == "f" or v.dtype.kind == "b" else v

    def arrays(self, values):
        from . import nd
        return {k: nd.array(v, ctx=self.ctx, dtype=v.dtype) for k, v in values.items()}

    def call(self, xs):
        """``f`` at NDArrays ``xs`` (a dict like ``location``); fresh aux states each call."""
        aux = self.arrays(self.aux)
        if self.by_name:
            kwargs = dict(xs)
            kwargs.update(aux)
            y = self.fn(**kwargs)
        else:
            args = [xs[i] for i in range(len(xs))] + [aux[i] for i in range(len(aux))]
            y = self.fn(*args)
        if isinstance(y, (list, tuple)):
            if len(y) != 1:
                raise MXNetError("check_numeric_gradient: the function must return one "
                                 "NDArray, got %d outputs" % len(y))
            y = y[0]
        if not hasattr(y, "asnumpy"):
            raise TypeError("check_numeric_gradient: the function must return an NDArray, "
                            "got %s" % type(y).__name__)
        return y


def _is_symbol(obj):
    return type(obj).__name__ == "Symbol" and hasattr(obj, "list_arguments")


def _symbol_problem(sym, location, aux_states, ctx):
    """A Symbol as a function of its arguments (evaluated imperatively with ``eval``)."""
    args = sym.list_arguments()
    aux_names = sym.list_auxiliary_states() if hasattr(sym, "list_auxiliary_states") else []
    if isinstance(location, (list, tuple)):
        if len(location) != len(args):
            raise ValueError("check_numeric_gradient: %d location arrays for %d symbol "
                             "arguments %s" % (len(location), len(args), args))
        location = dict(zip(args, location))
    if isinstance(aux_states, (list, tuple)):
        aux_states = dict(zip(aux_names, aux_states))

    def fn(**kwargs):
        args = {k: v for k, v in kwargs.items() if k not in aux_names}
        aux = {k: v for k, v in kwargs.items() if k in aux_names}
        ex = sym.bind(ctx, args, grad_req="null", aux_states=aux or None)
        return ex.forward(is_train=autograd.is_training())[0]
    return fn, location, aux_states


def _backward_autograd(problem, reqs, orig, proj):
    """Gradients of ``sum(f(x) * proj)`` by autograd, into buffers preset to ``orig``."""
    from . import nd
    xs = problem.arrays(problem.location)
    for k, req in reqs.items():
        xs[k].attach_grad(req)
        xs[k].grad[:] = orig[k]
    with autograd.record(train_mode=True):
        y = problem.call(xs)
        loss = nd.sum(y * nd.array(proj, ctx=problem.ctx, dtype=y.dtype))
    loss.backward()
    return {k: xs[k].grad.asnumpy() for k in reqs}


def _backward_symbol(problem, reqs, orig, proj):
    """The same through the Symbol's executor: forward(is_train=True), backward(proj)."""
    from . import nd
    ctx = problem.ctx
    args = problem.arrays(problem.location)
    grads = {k: nd.array(orig[k], ctx=ctx, dtype=orig[k].dtype) for k in reqs}
    grad_req = {k: reqs.get(k, "null") for k in args}
    aux = problem.arrays(problem.aux)
    ex = problem.sym.bind(ctx, args, args_grad=grads, grad_req=grad_req, aux_states=aux or None)
    y = ex.forward(is_train=True)[0]
    ex.backward([nd.array(proj, ctx=ctx, dtype=y.dtype)])
    return {k: grads[k].asnumpy() for k in reqs}


def _grad_requests(problem, grad_nodes):
    floats = [k for k, v in problem.location.items() if v.dtype.kind == "f"]
    if grad_nodes is None:
        return {k: "write" for k in floats}
    if isinstance(grad_nodes, dict):
        reqs = dict(grad_nodes)
    elif isinstance(grad_nodes, (list, tuple)):
        reqs = {k: "write" for k in grad_nodes}
    else:
        raise ValueError("check_numeric_gradient: grad_nodes must be None, a list or a dict, "
                         "got %s" % type(grad_nodes).__name__)
    for k, req in reqs.items():
        if k not in problem.location:
            raise ValueError("check_numeric_gradient: grad node %r is not in location (%s)"
                             % (k, ", ".join(map(str, problem.location))))
        if req not in ("write", "add", "null"):
            raise ValueError("check_numeric_gradient: invalid grad_req %r for %r" % (req, k))
    return reqs


def numeric_grad(problem, proj, eps, use_forward_train=True):
    """Central differences of ``sum(f(x) * proj)`` for every float input of ``problem``.

    Each input element moves by ``+-eps/2`` in ``problem.dtype``; the sum is
    taken in float64.
    """
    grads = {}
    mode = autograd.train_mode() if use_forward_train else autograd.predict_mode()
    with autograd.pause(), mode:
        for k, v in problem.location.items():
            if v.dtype.kind != "f":
                continue
            g = np.zeros(v.shape, np.float64)
            flat = v.reshape(-1)
            for i in range(flat.size):
                old = flat[i]
                vals = []
                for delta in (eps / 2.0, -eps / 2.0):
                    flat[i] = old + v.dtype.type(delta)
                    y = problem.call(problem.arrays(problem.location)).asnumpy()
                    vals.append(np.sum(y.astype(np.float64) * proj))
                flat[i] = old
                g.reshape(-1)[i] = (vals[0] - vals[1]) / eps
            grads[k] = g
    return grads


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=1e-3, rtol=1e-2,
                           atol=None, grad_nodes=None, use_forward_train=True, ctx=None,
                           grad_stype_dict=None, dtype=np.float32):
    """Check autograd gradients against central finite differences.

    The checked scalar is ``sum(f(*x) * P)`` with a fixed random projection
    ``P`` (uniform in [0.1, 1.1)), so every output element counts with its own
    weight.

    Parameters
    ----------
    sym : callable or Symbol
        ``f(*ndarrays) -> NDArray`` (``f(**ndarrays)`` when ``location`` is a
        dict), written with mxlite ops; or a Symbol, whose arguments ``location``
        gives in ``list_arguments()`` order or by name.
    location : list or dict of array
        The point (NumPy arrays or NDArrays). Float arrays are cast to
        ``dtype``; integer arrays (indices) are passed as they are and not
        differentiated.
    aux_states : list or dict of array, optional
        Extra inputs held constant (passed after ``location``; a fresh copy for
        every evaluation, so ops that update them in place cannot drift).
    numeric_eps : float, optional
        The finite-difference step (None: per dtype, as MXNet).
    rtol, atol : float, optional
        Tolerances of the comparison (atol None: the dtype's default).
    grad_nodes : list or dict, optional
        The inputs to check (names, or indices for a list ``location``), or a
        dict of input -> grad_req (``'write'``, ``'add'``, ``'null'``).
        Default: every float input.
    use_forward_train : bool, optional
        Evaluate the finite differences in training mode.
    ctx : Context, optional
        Where to compute (default: :func:`default_context`).
    grad_stype_dict : dict, optional
        Accepted for MXNet compatibility; mxlite gradients are dense.
    dtype : numpy float type, optional
        Precision of the inputs and of both gradients; use float64 for tight checks.

    Raises
    ------
    AssertionError
        When a gradient differs, naming ``NUMERICAL_<input>`` and ``BACKWARD_<input>``.

    Examples
    --------
    >>> x = np.random.rand(3, 4)
    >>> mx.test_utils.check_numeric_gradient(lambda a: mx.nd.tanh(a) * a, [x],
    ...                                      numeric_eps=1e-6, rtol=1e-5, dtype=np.float64)
    """
    dtype = np.dtype(dtype)
    if dtype not in (np.float16, np.float32, np.float64):
        raise TypeError("check_numeric_gradient: dtype must be float16, float32 or float64, "
                        "got %s" % dtype)
    ctx = ctx or default_context()
    problem = _Problem(sym, location, aux_states, ctx, dtype)
    reqs = _grad_requests(problem, grad_nodes)

    with autograd.pause(), (autograd.train_mode() if use_forward_train
                            else autograd.predict_mode()):
        out_shape = problem.call(problem.arrays(problem.location)).shape
    proj = np.random.rand(*out_shape) + 0.1
    eps = get_tolerance(np.zeros(0, dtype), numeric_eps, default_numeric_eps())
    if dtype != np.float64 and eps < 1e-5:
        raise ValueError("check_numeric_gradient: numeric_eps=%g is too small for %s; "
                         "use float64" % (eps, dtype))

    orig = {k: np.random.normal(0, 0.01, size=v.shape).astype(dtype)
            for k, v in problem.location.items() if k in reqs}
    backward = (_backward_symbol if problem.sym is not None else _backward_autograd)(
        problem, reqs, orig, proj)

    numeric = numeric_grad(problem, proj, eps, use_forward_train)
    for k, req in reqs.items():
        names = ("NUMERICAL_%s" % k, "BACKWARD_%s" % k)
        if req == "write":
            assert_almost_equal(numeric[k].astype(dtype), backward[k], rtol, atol, names)
        elif req == "add":
            assert_almost_equal(numeric[k].astype(dtype), backward[k] - orig[k], rtol, atol,
                                names)
        else:
            assert_almost_equal(orig[k], backward[k], rtol, atol, names)


# -- checks of a Symbol's forward and backward ----------------------------------------

def _check_dtype(dtype, where):
    if not (isinstance(dtype, str) and dtype == "asnumpy") and \
            np.dtype(dtype) not in (np.float16, np.float32, np.float64):
        raise TypeError("%s: dtype must be 'asnumpy', float16, float32 or float64, got %r"
                        % (where, dtype))


def _to_nd(v, ctx, dtype):
    """``v`` as an NDArray on ``ctx``; NumPy data takes ``dtype`` (its own for 'asnumpy')."""
    from . import nd
    if isinstance(v, nd.NDArray):
        return v
    v = np.asarray(v)
    return nd.array(v, ctx=ctx, dtype=v.dtype if _is_asnumpy(dtype) else dtype)


def _is_asnumpy(dtype):
    return isinstance(dtype, str) and dtype == "asnumpy"


def _named(sym, values, names, what):
    """``values`` (a list in ``names`` order, or a dict over exactly ``names``) as a dict."""
    if isinstance(values, dict):
        if set(values) != set(names):
            raise ValueError("Symbol %s and the keys of the given %s do not match: symbol "
                             "has %s, got %s" % (what, what, sorted(names), sorted(values)))
        return dict(values)
    if not isinstance(values, (list, tuple)):
        raise TypeError("%s must be a list or dict of arrays, got %s"
                        % (what, type(values).__name__))
    return dict(zip(names, values))


def _parse_location(sym, location, ctx, dtype):
    location = _named(sym, location, sym.list_arguments(), "arguments")
    return {k: _to_nd(v, ctx, dtype) for k, v in location.items()}


def _parse_aux_states(sym, aux_states, ctx, dtype):
    if aux_states is None:
        return None
    aux_states = _named(sym, aux_states, sym.list_auxiliary_states(), "aux_states")
    return {k: _to_nd(v, ctx, dtype) for k, v in aux_states.items()}


def simple_forward(sym, ctx=None, is_train=False, **inputs):
    """Run ``sym`` once on NumPy ``inputs`` (by argument name) and return NumPy output(s).

    Returns one array for a single-output symbol, else a list.

    Examples
    --------
    >>> x = mx.sym.Variable('x')
    >>> mx.test_utils.simple_forward(2 * x, x=np.ones(3))
    array([2., 2., 2.], dtype=float32)
    """
    from . import nd
    ctx = ctx or default_context()
    args = {k: nd.array(v, ctx=ctx) for k, v in inputs.items()}
    ex = sym.bind(ctx, args=args)
    outputs = [y.asnumpy() for y in ex.forward(is_train=is_train)]
    return outputs[0] if len(outputs) == 1 else outputs


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan=False, dtype=np.float32):
    """Assert that ``sym``'s forward outputs at ``location`` equal ``expected``.

    Parameters
    ----------
    sym : Symbol
    location : list or dict of array
        Argument values, in ``sym.list_arguments()`` order or by name (all of them).
    expected : list or dict of array
        Expected outputs, in ``sym.list_outputs()`` order or by output name.
    rtol, atol : float, optional
        Tolerances (None: the dtype's defaults).
    aux_states : list or dict of array, optional
        Values of ``sym.list_auxiliary_states()``.
    ctx : Context, optional
    equal_nan : bool, optional
        Whether NaN equals NaN.
    dtype : numpy float type or 'asnumpy', optional
        The dtype NumPy inputs are cast to ('asnumpy': keep each array's own).

    Returns
    -------
    list of NDArray
        The forward outputs.

    Raises
    ------
    AssertionError
        Naming ``EXPECTED_<output>`` and ``FORWARD_<output>`` of the first mismatch.

    Examples
    --------
    >>> a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    >>> mx.test_utils.check_symbolic_forward(mx.sym.dot(a, b), [np.eye(2), np.ones((2, 2))],
    ...                                      [np.ones((2, 2))])
    """
    _check_dtype(dtype, "check_symbolic_forward")
    ctx = ctx or default_context()
    args = _parse_location(sym, location, ctx, dtype)
    aux = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    ex = sym.bind(ctx, args=args, grad_req="null", aux_states=aux)
    outputs = ex.forward(is_train=False)
    for name, want, got in zip(sym.list_outputs(), expected, outputs):
        assert_almost_equal(want, got, rtol, atol, ("EXPECTED_%s" % name, "FORWARD_%s" % name),
                            equal_nan=equal_nan)
    return outputs


def _head_grads(sym, out_grads, ctx, dtype):
    """``out_grads`` as a list of NDArrays in output order (None stays None)."""
    if out_grads is None:
        return None
    if isinstance(out_grads, dict):
        out_grads = [out_grads[k] for k in sym.list_outputs()]
    elif not isinstance(out_grads, (list, tuple)):
        out_grads = [out_grads]
    return [_to_nd(g, ctx, dtype) for g in out_grads]


def _grad_req_dict(sym, grad_req):
    names = sym.list_arguments()
    if isinstance(grad_req, str):
        return {k: grad_req for k in names}
    if isinstance(grad_req, (list, tuple)):
        return dict(zip(names, grad_req))
    return dict(grad_req)


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan=False, dtype=np.float32):
    """Assert that ``sym``'s argument gradients for head gradients ``out_grads`` equal
    ``expected``.

    The gradient buffers start as random values, so ``grad_req='add'`` is checked
    as ``result - start`` and ``'null'`` as "left unchanged".

    Parameters
    ----------
    sym : Symbol
    location : list or dict of array
        Argument values (all of them), in ``list_arguments()`` order or by name.
    out_grads : list or dict of array, or None
        Head gradients, one per output (None: ones).
    expected : list or dict of array
        Expected gradients, in ``list_arguments()`` order or by argument name; only
        the arguments named are checked.
    rtol, atol : float, optional
    aux_states : list or dict of array, optional
    grad_req : str, list or dict, optional
        ``'write'``, ``'add'`` or ``'null'``, for all arguments or per argument.
    ctx : Context, optional
    grad_stypes : dict, optional
        Accepted for MXNet compatibility; mxlite gradients are dense.
    equal_nan : bool, optional
    dtype : numpy float type or 'asnumpy', optional

    Returns
    -------
    dict of str to NDArray
        The gradient buffers.

    Raises
    ------
    AssertionError
        Naming ``EXPECTED_<arg>`` and ``BACKWARD_<arg>`` of the first mismatch.

    Examples
    --------
    >>> a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    >>> x, y, g = np.ones((2, 2)), np.full((2, 2), 3.0), np.ones((2, 2))
    >>> mx.test_utils.check_symbolic_backward(a * b, [x, y], [g], [y, x])
    """
    from . import nd
    _check_dtype(dtype, "check_symbolic_backward")
    ctx = ctx or default_context()
    args = _parse_location(sym, location, ctx, dtype)
    aux = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(sym.list_arguments(), expected))
    # Dirty start values (in sorted order, for reproducibility) show 'add' and 'null'.
    start = {k: np.random.normal(size=np.shape(expected[k])) for k in sorted(expected)}
    grads = {k: nd.array(v, ctx=ctx, dtype=(np.asarray(expected[k]).dtype
                                           if _is_asnumpy(dtype) else dtype))
             for k, v in start.items()}
    reqs = _grad_req_dict(sym, grad_req)
    ex = sym.bind(ctx, args=args, args_grad=grads, grad_req=reqs, aux_states=aux)
    ex.forward(is_train=True)
    if any(reqs.get(k, "null") != "null" for k in grads):
        # (with every buffer 'null' nothing was recorded and there is nothing to run)
        ex.backward(_head_grads(sym, out_grads, ctx, dtype))
    for name in expected:
        names = ("EXPECTED_%s" % name, "BACKWARD_%s" % name)
        req = reqs.get(name, "null")
        got = grads[name].asnumpy()
        if req == "write":
            assert_almost_equal(expected[name], got, rtol, atol, names, equal_nan=equal_nan)
        elif req == "add":
            assert_almost_equal(expected[name], got - start[name].astype(got.dtype), rtol, atol,
                                names, equal_nan=equal_nan)
        elif req == "null":
            assert_almost_equal(start[name].astype(got.dtype), got, rtol, atol, names,
                                equal_nan=equal_nan)
        else:
            raise ValueError("check_symbolic_backward: invalid grad_req %r for argument %r"
                             % (req, name))
    return grads


def check_speed(sym, location=None, ctx=None, N=20, grad_req=None, typ="whole", **kwargs):
    """Seconds per run of ``sym``: forward+backward (``typ='whole'``) or forward only.

    Parameters
    ----------
    sym : Symbol
    location : dict of str to numpy.ndarray, optional
        Argument values; None: random normal values of the shapes given in ``kwargs``.
    ctx : Context, optional
    N : int, optional
        Number of timed runs (after one warm-up run).
    grad_req : str, list or dict, optional
        Default ``'write'``.
    typ : {'whole', 'forward'}
    **kwargs
        Argument shapes for ``simple_bind`` when ``location`` is None.

    Examples
    --------
    >>> x = mx.sym.Variable('x')
    >>> mx.test_utils.check_speed(mx.sym.relu(x), x=(4, 4), N=2) > 0
    True
    """
    from .engine import waitall
    ctx = ctx or default_context()
    grad_req = grad_req or "write"
    if typ not in ("whole", "forward"):
        raise ValueError('check_speed: typ can only be "whole" or "forward", got %r' % (typ,))
    if location is None:
        ex = sym.simple_bind(ctx, grad_req=grad_req, **kwargs)
        location = {k: np.random.normal(size=a.shape, scale=1.0)
                    for k, a in ex.arg_dict.items()}
    else:
        if not isinstance(location, dict):
            raise TypeError("check_speed: location must be a dict, got %s"
                            % type(location).__name__)
        ex = sym.simple_bind(ctx, grad_req=grad_req,
                             **{k: np.shape(v) for k, v in location.items()})
    for name, value in location.items():
        ex.arg_dict[name][:] = np.asarray(value).astype(ex.arg_dict[name].dtype)
    train = typ == "whole"

    def run():
        ex.forward(is_train=train)
        if train:
            ex.backward(out_grads=ex.outputs)

    run()                       # warm-up
    waitall()
    tic = time.perf_counter()
    for _ in range(N):
        run()
    waitall()
    return (time.perf_counter() - tic) / N


# -- consistency across contexts and dtypes ---------------------------------------------

def _smaller_dtype(dt1, dt2):
    """The less precise of two dtypes (``dt1`` when ``dt2`` is None)."""
    if dt2 is None or np.dtype(dt1).itemsize < np.dtype(dt2).itemsize:
        return np.dtype(dt1)
    return np.dtype(dt2)


def _random_inputs(ex, arg_params, scale, use_uniform, rand_type):
    # Sorted names: the same random draws for the same symbol, run after run.
    for name in sorted(ex.arg_dict):
        if name not in arg_params:
            shape = ex.arg_dict[name].shape
            if use_uniform:
                v = np.random.uniform(-0.92 * scale, 0.92 * scale, size=shape)
            else:
                v = np.random.normal(size=shape, scale=scale)
            arg_params[name] = v.astype(rand_type)


def _compare(arr, gtarr, rtol, atol, equal_nan, raise_on_err, what):
    try:
        assert_almost_equal(arr, gtarr, rtol=rtol, atol=atol, equal_nan=equal_nan,
                            names=(what, "ground truth"))
    except AssertionError:
        if raise_on_err:
            raise
        traceback.print_exc()


def check_consistency(sym, ctx_list, scale=1.0, grad_req="write", arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err=True,
                      ground_truth=None, equal_nan=False, use_uniform=False,
                      rand_type=np.float64, tol=None):
    """Check that ``sym`` gives the same outputs and gradients on every context/dtype.

    Each entry of ``ctx_list`` is a dict of ``simple_bind`` keywords: ``ctx``, the
    argument shapes and optionally ``type_dict``. All executors get the same random
    inputs; the one whose first output has the widest dtype is the ground truth.
    Forward is compared in predict mode, then (unless ``grad_req='null'``) outputs
    and argument gradients after a training forward and a backward whose head
    gradients are the first executor's outputs cast to the least precise dtype.

    Parameters
    ----------
    sym : Symbol or list of Symbol
        One symbol for all entries, or one per entry (same arguments and outputs).
    ctx_list : list of dict
    scale : float, optional
        Scale of the random inputs.
    grad_req : str, list or dict, optional
    arg_params, aux_params : dict, optional
        Input values to use instead of random ones (aux states default to 0).
    rtol, atol : float or dict of dtype to float, optional
        Tolerances (None: the looser dtype's defaults).
    raise_on_err : bool, optional
        Raise on the first mismatch; False prints it and goes on.
    ground_truth : dict of str to array, optional
        Outputs and gradients by name to compare against instead.
    equal_nan : bool, optional
    use_uniform : bool, optional
        Uniform inputs in ``[-0.92 scale, 0.92 scale)`` instead of normal ones.
    rand_type : numpy dtype, optional
        The dtype random inputs are drawn in.
    tol : float or dict, optional
        Older MXNet's single tolerance: used as both rtol and atol when those are None.

    Returns
    -------
    dict of str to NDArray
        The ground truth: outputs and gradients by name.

    Examples
    --------
    >>> x = mx.sym.Variable('x')
    >>> ctx_list = [{'ctx': mx.cpu(), 'x': (2, 3), 'type_dict': {'x': t}}
    ...             for t in (np.float64, np.float32)]
    >>> gt = mx.test_utils.check_consistency(mx.sym.tanh(x), ctx_list)
    """
    if len(ctx_list) < 2:
        raise ValueError("check_consistency: ctx_list needs at least two entries, got %d"
                         % len(ctx_list))
    if tol is not None:
        rtol = tol if rtol is None else rtol
        atol = tol if atol is None else atol
    syms = sym if isinstance(sym, (list, tuple)) else [sym] * len(ctx_list)
    if len(syms) != len(ctx_list):
        raise ValueError("check_consistency: %d symbols for %d contexts"
                         % (len(syms), len(ctx_list)))
    output_names, arg_names = syms[0].list_outputs(), syms[0].list_arguments()
    exes = []
    for s, kw in zip(syms, ctx_list):
        if s.list_arguments() != arg_names or s.list_outputs() != output_names:
            raise ValueError("check_consistency: every symbol must have arguments %s and "
                             "outputs %s" % (arg_names, output_names))
        exes.append(s.simple_bind(grad_req=grad_req, **kw))

    arg_params = {} if arg_params is None else arg_params
    aux_params = {} if aux_params is None else aux_params
    _random_inputs(exes[0], arg_params, scale, use_uniform, rand_type)
    for name in exes[0].aux_dict:
        aux_params.setdefault(name, 0)
    for ex in exes:
        for name, arr in ex.arg_dict.items():
            arr[:] = _as_numpy(arg_params[name]).astype(arr.dtype)
        for name, arr in ex.aux_dict.items():
            arr[:] = aux_params[name]
        for arr in ex.grad_arrays:
            if arr is not None:
                arr[:] = 0

    for ex in exes:
        ex.forward(is_train=False)
    dtypes = [np.dtype(ex.outputs[0].dtype) for ex in exes]
    gt_idx = int(np.argmax([dt.itemsize for dt in dtypes]))
    gt = ground_truth if ground_truth is not None else dict(exes[gt_idx].output_dict)
    for i, ex in enumerate(exes):
        if i != gt_idx:
            for name, arr in zip(output_names, ex.outputs):
                _compare(arr, gt[name], rtol, atol, equal_nan, raise_on_err,
                         "predict ctx %d %s" % (i, name))
    if grad_req == "null":
        return gt

    for ex in exes:
        ex.forward(is_train=True)
    least = [np.dtype(y.dtype) for y in exes[0].outputs]
    for ex in exes:
        least = [_smaller_dtype(y.dtype, dt) for y, dt in zip(ex.outputs, least)]
    heads = [y.asnumpy().astype(dt) for y, dt in zip(exes[0].outputs, least)]
    from . import nd
    for ex in exes:
        ex.backward([nd.array(h, ctx=ex._ctx, dtype=y.dtype) for h, y in zip(heads, ex.outputs)])
    if ground_truth is None:
        gt = dict(exes[gt_idx].output_dict)
        gt.update(exes[gt_idx].grad_dict)
    for i, ex in enumerate(exes):
        if i == gt_idx:
            continue
        named = list(zip(output_names, ex.outputs)) + list(ex.grad_dict.items())
        for name, arr in named:
            if gt.get(name) is None:
                continue
            rt, at = rtol, atol
            # NOTE: a float32 gradient (BatchNorm gamma) of a float16 network only has
            # float16 accuracy: compare with the tolerance of the data's dtype.
            small, small_gt = _smaller_dtype(arr.dtype, dtypes[i]), \
                _smaller_dtype(gt[name].dtype, dtypes[gt_idx])
            if small != np.dtype(arr.dtype) or small_gt != np.dtype(gt[name].dtype):
                rt, at = get_tols(np.zeros(0, small), np.zeros(0, small_gt), rtol, atol)
            _compare(arr, gt[name], rt, at, equal_nan, raise_on_err,
                     "train ctx %d %s" % (i, name))
    return gt


# -- small helpers ------------------------------------------------------------------

def same_array(array1, array2):
    """True when two NDArrays share memory (found by writing into ``array1`` and undoing it).

    Examples
    --------
    >>> x = mx.nd.ones((2, 2))
    >>> mx.test_utils.same_array(x, x.reshape((2, 2)))
    True
    """
    array1[:] += 1
    if not same(array1.asnumpy(), array2.asnumpy()):
        array1[:] -= 1
        return False
    array1[:] -= 1
    return same(array1.asnumpy(), array2.asnumpy())


def create_vector(size, dtype=np.int64):
    """``nd.arange(0, size)`` of ``dtype`` (MXNet's large-tensor test helper)."""
    from . import nd
    return nd.arange(0, size, dtype=dtype)


def create_2d_tensor(rows, columns, dtype=np.int64):
    """A ``(rows, columns)`` NDArray whose row ``i`` is all ``i``."""
    from . import nd
    a = nd.arange(0, rows, dtype=dtype).reshape((rows, 1))
    return nd.broadcast_to(a, shape=(rows, columns))


def assign_each(the_input, function):
    """``function`` applied to every element of a NumPy array (``np.vectorize``)."""
    if function is None:
        return np.array(the_input)
    return np.vectorize(function)(np.asarray(the_input))


def assign_each2(input1, input2, function):
    """``function(a, b)`` for every pair of elements of two same-shaped NumPy arrays."""
    if np.shape(input1) != np.shape(input2):
        raise ValueError("assign_each2: shapes %s and %s differ"
                         % (np.shape(input1), np.shape(input2)))
    if function is None:
        return np.array(input1)
    return np.vectorize(function)(np.asarray(input1), np.asarray(input2))


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None):
    """:func:`assert_almost_equal` over (nested) tuples of arrays; None skips."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for a, b in zip(t1, t2):
            compare_ndarray_tuple(a, b, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def same_symbol_structure(sym1, sym2):
    """True when the two symbols' graphs have the same op at every node position."""
    nodes1 = json.loads(sym1.tojson())["nodes"]
    nodes2 = json.loads(sym2.tojson())["nodes"]
    return all(a["op"] == b["op"] for a, b in zip(nodes1, nodes2))


def collapse_sum_like(a, shape):
    """Sum NumPy array ``a`` down to broadcast-compatible ``shape`` (undoing broadcasting)."""
    if a.shape == tuple(shape):
        return a
    lead = a.ndim - len(shape)
    if lead < 0:
        raise ValueError("collapse_sum_like: cannot sum shape %s down to %s"
                         % (a.shape, tuple(shape)))
    axes = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and a.shape[lead + i] != 1)
    return a.sum(axis=axes).reshape(shape)


class DummyIter(DataIter):
    """An iterator that returns the first batch of ``real_iter`` forever (for speed tests).

    Parameters
    ----------
    real_iter : DataIter
    """

    def __init__(self, real_iter):
        super().__init__(real_iter.batch_size)
        self.real_iter = real_iter
        self.provide_data = real_iter.provide_data
        self.provide_label = real_iter.provide_label
        self.the_batch = next(real_iter)

    def __iter__(self):
        return self

    def next(self):
        """The first batch of the real iterator; never raises StopIteration."""
        return self.the_batch


@contextlib.contextmanager
def environment(*args):
    """Set environment variables for the body of a ``with`` block, then restore them.

    Parameters
    ----------
    *args
        ``name, value`` for one variable, or one dict of name -> value. A value of
        None unsets the variable.

    Examples
    --------
    >>> with mx.test_utils.environment('MXNET_ENGINE_TYPE', 'NaiveEngine'):
    ...     os.environ['MXNET_ENGINE_TYPE']
    'NaiveEngine'
    """
    if len(args) == 1 and isinstance(args[0], dict):
        env = dict(args[0])
    elif len(args) == 2:
        env = {args[0]: args[1]}
    else:
        raise ValueError("environment: expected one dict or a name and a value, got %d "
                         "arguments" % len(args))
    snapshot = {k: os.environ.get(k) for k in env}

    def apply(values):
        for k, v in values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = str(v)
    apply(env)
    try:
        yield
    finally:
        from .engine import waitall
        waitall()
        apply(snapshot)


@contextlib.contextmanager
def discard_stderr():
    """Silence the process's stderr (file descriptor 2) for the body of a ``with`` block."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        # stderr is not a real file (pytest capture, IDE consoles): nothing to redirect.
        yield
        return
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as null:
            sys.stderr.flush()
            os.dup2(null.fileno(), fd)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, fd)
        os.close(saved)


# Names of MXNet's test_utils that come from its NumPy-interface modules.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "getenv": "mxlite.util", "setenv": "mxlite.util", "use_np": "mxlite.util",
    "get_cuda_compute_capability": "mxlite.util",
    "np_symbol": "mxlite.symbol.numpy._symbol:_Symbol"})
