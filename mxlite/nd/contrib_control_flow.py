"""Imperative control flow: ``mx.nd.contrib.foreach``, ``while_loop`` and ``cond``.

These are plain Python loops and branches over NDArrays, as in MXNet 1.9's
``mxnet.ndarray.contrib``: every iteration runs the user's function on real
arrays, so autograd records each step like any other code and gradients flow
through every iteration. Outputs are stacked with ``stack``/``concat``.

Where MXNet fails late or silently, these raise an error that names the function
and the argument: a ``data`` or state that is not an NDArray (MXNet: a bare
``AssertionError``), states or outputs whose nesting changes between iterations
(MXNet: silently truncated or passed on), zero iterations of ``foreach`` (MXNet:
``UnboundLocalError``), a ``cond``/``pred`` that is not a one-element NDArray or
a number. ``while_loop`` pads its stacked outputs to ``max_iterations`` rows with
zeros where MXNet leaves them uninitialised.
"""
import numbers

import numpy as np

from .ndarray import NDArray

__all__ = ["foreach", "while_loop", "cond"]


# -- nested lists of NDArrays ---------------------------------------------------
def _flatten(x, fname, argname, kind=NDArray):
    """The ``kind`` leaves of ``x`` (NDArrays, or Symbols for ``mx.sym.contrib``) and
    its format: ``0`` for a bare leaf, else a list with one format per element (tuples
    count as lists, as in MXNet)."""
    if isinstance(x, kind):
        return [x], 0
    if not isinstance(x, (list, tuple)):
        raise TypeError("%s: %s must be an %s or a (nested) list of %ss, got %s"
                        % (fname, argname, kind.__name__, kind.__name__, type(x).__name__))
    flat, fmt = [], []
    for i, item in enumerate(x):
        leaves, sub = _flatten(item, fname, "%s[%d]" % (argname, i), kind)
        flat.extend(leaves)
        fmt.append(sub)
    return flat, fmt


def _regroup(flat, fmt):
    """Inverse of :func:`_flatten`: ``flat`` arranged as ``fmt`` (lists, not tuples)."""
    leaves = iter(flat)

    def build(f):
        if isinstance(f, int):
            return next(leaves)
        return [build(sub) for sub in f]
    return build(fmt)


def _describe(fmt):
    """A format as text: ``NDArray``, ``[NDArray, [NDArray]]``."""
    if isinstance(fmt, int):
        return "NDArray"
    return "[%s]" % ", ".join(_describe(f) for f in fmt)


# -- argument checks ------------------------------------------------------------
def _check_callable(f, fname, argname):
    if not callable(f):
        raise TypeError("%s: %s must be a callable (a Python function), got %s"
                        % (fname, argname, type(f).__name__))


def _pair(result, fname, argname, names):
    """``result`` as the two values a body function must return."""
    if not isinstance(result, (list, tuple)) or len(result) != 2:
        got = ("a %s of length %d" % (type(result).__name__, len(result))
               if isinstance(result, (list, tuple)) else type(result).__name__)
        raise TypeError("%s: %s must return a pair (%s), got %s" % (fname, argname, names, got))
    return result


def _truth(value, fname, argname):
    """A branch/loop condition as a Python bool: a one-element NDArray (or NumPy
    array) or a number, as MXNet's ``asscalar``-then-``bool`` accepts."""
    if isinstance(value, (NDArray, np.ndarray)):
        if value.size != 1:
            raise ValueError("%s: %s must be an NDArray with one element, got shape %s"
                             % (fname, argname, value.shape))
        return bool(value.reshape((1,))[0].item() if isinstance(value, np.ndarray)
                    else value.asscalar())
    if isinstance(value, (numbers.Number, np.generic)):
        return bool(value)
    raise TypeError("%s: %s must be an NDArray with one element, got %s"
                    % (fname, argname, type(value).__name__))


def _check_same_shapes(column, fname, what):
    """All arrays of one output across the steps must agree in shape and dtype."""
    first = column[0]
    for x in column[1:]:
        if x.shape != first.shape or x.dtype != first.dtype:
            lines = ["%s: %s must have the same shape and dtype in every step, got:"
                     % (fname, what)]
            lines += ["  step %d: shape %s, dtype %s" % (i, y.shape, np.dtype(y.dtype).name)
                      for i, y in enumerate(column)]
            raise ValueError("\n".join(lines))


# -- foreach --------------------------------------------------------------------
def _num_rows(leaves):
    """The common length along axis 0 of the ``data`` arrays."""
    if not leaves:
        raise ValueError("foreach: data must hold at least one NDArray, got an empty list")
    for x in leaves:
        if x.ndim == 0:
            raise ValueError("foreach: data arrays must have at least one axis to loop over")
    rows = [x.shape[0] for x in leaves]
    if any(n != rows[0] for n in rows):
        raise ValueError("foreach: every array in data must have the same length along "
                         "axis 0, got shapes %s" % ", ".join(str(x.shape) for x in leaves))
    if rows[0] == 0:
        # NOTE: the outputs' structure is only known by running body once.
        raise ValueError("foreach: data has 0 rows along axis 0; body must run at least once")
    return rows[0]


def foreach(body, data, init_states):
    """Run ``body`` on each slice of ``data`` along axis 0, carrying loop states.

    Equivalent to::

        states = init_states
        outs = []
        for i in range(data.shape[0]):
            out, states = body(data[i], states)
            outs.append(out)
        outs = stack(*outs)

    Parameters
    ----------
    body : callable
        ``body(data_slice, states) -> (outputs, new_states)``. ``data_slice`` has the
        structure of ``data`` (a list for a list), ``outputs`` is an NDArray or a
        nested list of them, ``new_states`` must be nested like ``init_states``.
    data : NDArray or nested list of NDArray
        The arrays to loop over; all have the same length along axis 0 (at least 1).
    init_states : NDArray or nested list of NDArray
        The states passed to the first iteration.

    Returns
    -------
    outputs : NDArray or nested list of NDArray
        The outputs of every iteration stacked along a new axis 0, nested as
        ``body`` returns them (lists for tuples).
    states : NDArray or nested list of NDArray
        The states returned by the last iteration, as ``body`` returned them.

    Examples
    --------
    >>> step = lambda x, s: (x + s[0], [s[0] * 2])
    >>> outs, states = mx.nd.contrib.foreach(step, mx.nd.ones((2, 3)), [mx.nd.ones(3)])
    >>> outs.shape, states[0].asnumpy()
    ((2, 3), array([4., 4., 4.], dtype=float32))
    """
    _check_callable(body, "foreach", "body")
    leaves, data_fmt = _flatten(data, "foreach", "data")
    _, state_fmt = _flatten(init_states, "foreach", "init_states")
    n = _num_rows(leaves)
    states = init_states
    steps, out_fmt = [], None
    for i in range(n):
        outs, states = _pair(body(_regroup([x[i] for x in leaves], data_fmt), states),
                             "foreach", "body", "outputs, new_states")
        flat, fmt = _flatten(outs, "foreach", "the outputs of body")
        if out_fmt is not None and fmt != out_fmt:
            raise ValueError("foreach: body must return outputs nested the same way in every "
                             "iteration: %s in iteration 0, %s in iteration %d"
                             % (_describe(out_fmt), _describe(fmt), i))
        _, fmt_s = _flatten(states, "foreach", "the states returned by body")
        if fmt_s != state_fmt:
            raise ValueError("foreach: the states returned by body in iteration %d are %s, "
                             "expected the structure of init_states: %s"
                             % (i, _describe(fmt_s), _describe(state_fmt)))
        out_fmt = fmt
        steps.append(flat)
    from . import stack
    stacked = []
    for k, column in enumerate(zip(*steps)):
        _check_same_shapes(column, "foreach", "output %d of body" % k)
        stacked.append(stack(*column, axis=0))
    return _regroup(stacked, out_fmt), states


# -- while_loop -----------------------------------------------------------------
def _max_iterations(value):
    if value is None:
        raise ValueError("while_loop: max_iterations should be specified (an int)")
    try:
        return int(value.asscalar() if isinstance(value, NDArray) else value)
    except (TypeError, ValueError):
        raise ValueError("while_loop: cannot convert max_iterations to a Python int, got %r"
                         % (value,)) from None


def _step(func, loop_vars, var_fmt):
    """One call of ``func``: its flattened step outputs, their format, the new vars."""
    step_output, new_vars = _pair(func(*loop_vars), "while_loop", "func",
                                  "step_output, new_loop_vars")
    step_output = [] if step_output is None else step_output
    new_vars = [] if new_vars is None else new_vars
    new_vars = [new_vars] if isinstance(new_vars, NDArray) else list(new_vars)
    if len(new_vars) != len(loop_vars):
        raise ValueError("while_loop: func returned %d loop_vars, expected %d: the length of "
                         "loop_vars should be consistent during the loop"
                         % (len(new_vars), len(loop_vars)))
    _, fmt = _flatten(new_vars, "while_loop", "the loop_vars returned by func")
    if fmt != var_fmt:
        raise ValueError("while_loop: func returned loop_vars nested as %s, expected %s"
                         % (_describe(fmt), _describe(var_fmt)))
    flat, out_fmt = _flatten(step_output, "while_loop", "the step_output of func")
    return flat, out_fmt, new_vars


def _stack_padded(column, rows, k):
    """One step output stacked along axis 0 and padded with zeros to ``rows`` rows."""
    from . import concat, zeros
    _check_same_shapes(column, "while_loop", "element %d of step_output" % k)
    parts = [x.expand_dims(0) for x in column]
    if rows > len(column):
        first = column[0]
        parts.append(zeros((rows - len(column),) + first.shape, ctx=first.context,
                           dtype=first.dtype))
    return concat(*parts, dim=0)


def while_loop(cond, func, loop_vars, max_iterations=None):
    """Run ``func`` while ``cond`` holds, at most ``max_iterations`` times.

    Parameters
    ----------
    cond : callable
        ``cond(*loop_vars)`` returns a one-element NDArray (or a number); the loop
        stops when it is zero.
    func : callable
        ``func(*loop_vars) -> (step_output, new_loop_vars)``. ``step_output`` is an
        NDArray, a nested list of them or None, with the same number of arrays of
        the same shapes in every step; ``new_loop_vars`` is nested like ``loop_vars``.
    loop_vars : NDArray or list of NDArray
        The initial loop variables (at least one).
    max_iterations : int
        The most steps to run; required.

    Returns
    -------
    outputs : NDArray or nested list of NDArray
        Each element of ``step_output`` stacked along axis 0 over the steps and
        padded to ``max_iterations`` rows. MXNet leaves the padding rows
        uninitialised; mxlite fills them with zeros. ``[]`` when no step ran.
    loop_vars : NDArray or list of NDArray
        The final loop variables: an NDArray when ``loop_vars`` was one, else a
        list (``loop_vars`` itself when no step ran).

    Examples
    --------
    >>> cond = lambda i, s: i <= 5
    >>> func = lambda i, s: ([i + s], [i + 1, s + i])
    >>> loop_vars = (mx.nd.array([0]), mx.nd.array([1]))
    >>> outputs, states = mx.nd.contrib.while_loop(cond, func, loop_vars, max_iterations=10)
    >>> outputs[0].shape, states[1].asnumpy()
    ((10, 1), array([16.], dtype=float32))
    """
    _check_callable(cond, "while_loop", "cond")
    _check_callable(func, "while_loop", "func")
    max_iterations = _max_iterations(max_iterations)
    single = isinstance(loop_vars, NDArray)
    current = [loop_vars] if single else loop_vars
    _, var_fmt = _flatten(current, "while_loop", "loop_vars")
    if not var_fmt:
        raise ValueError("while_loop: loop_vars should contain at least one element")
    steps, out_fmt = [], None
    while len(steps) < max_iterations and _truth(cond(*current), "while_loop",
                                                 "the value returned by cond"):
        flat, fmt, current = _step(func, current, var_fmt)
        if out_fmt is not None and fmt != out_fmt:
            raise ValueError("while_loop: number of elements in step_output should be the "
                             "same in each step: %s in step 0, %s in step %d"
                             % (_describe(out_fmt), _describe(fmt), len(steps)))
        out_fmt = fmt
        steps.append(flat)
    stacked = [_stack_padded(column, max_iterations, k)
               for k, column in enumerate(zip(*steps))]
    outputs = [] if out_fmt is None else _regroup(stacked, out_fmt)
    return outputs, (current[0] if single else current)


# -- cond -----------------------------------------------------------------------
def cond(pred, then_func, else_func):
    """Run ``then_func()`` if ``pred`` is nonzero, else ``else_func()``.

    Parameters
    ----------
    pred : NDArray
        One element (a Python number is accepted too, as in MXNet).
    then_func, else_func : callable
        Functions of no arguments; only the chosen one runs.

    Returns
    -------
    NDArray or nested list of NDArray
        What the chosen function returned, unchanged.

    Examples
    --------
    >>> a, b = mx.nd.array([1]), mx.nd.array([2])
    >>> mx.nd.contrib.cond(a * b < 5, lambda: (a + 5) * (b + 5), lambda: a - b).asnumpy()
    array([42.], dtype=float32)
    """
    _check_callable(then_func, "cond", "then_func")
    _check_callable(else_func, "cond", "else_func")
    return then_func() if _truth(pred, "cond", "pred") else else_func()
