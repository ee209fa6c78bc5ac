"""``mx.test_utils``' checks of a Symbol: its forward and backward against expected
values, its speed, and its consistency across contexts and dtypes.

:mod:`mxlite.test_utils` re-exports every public name here.
"""
import time
import traceback

import numpy as np

from ._test_compare import _as_numpy, assert_almost_equal, default_context, get_tols

__all__ = ["simple_forward", "check_symbolic_forward", "check_symbolic_backward",
           "check_speed", "check_consistency"]


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
