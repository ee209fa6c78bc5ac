"""``check_numeric_gradient``: a Python function of NDArrays (differentiated with
autograd) or a Symbol (differentiated through its executor), checked against central
differences of ``sum(f(x) * random_projection)``.

:mod:`mxlite.test_utils` re-exports every public name here.
"""

import numpy as np

from . import autograd
from .base import MXNetError
from ._test_compare import _as_numpy, assert_almost_equal, default_context, default_numeric_eps, get_tolerance

__all__ = ["numeric_grad", "check_numeric_gradient"]


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
