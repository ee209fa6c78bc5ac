"""``mx.test_utils``' comparisons: the default context and tolerances per dtype,
random test data, ``assert_almost_equal`` and its relatives.

:mod:`mxlite.test_utils` re-exports every public name here.
"""
import numbers

import numpy as np
import numpy.testing as npt

from . import context as _context
from .context import current_context, num_gpus

__all__ = ["default_context", "set_default_context", "default_dtype", "default_rtols",
           "default_atols", "default_numeric_eps", "get_tolerance", "get_tols", "get_rtol",
           "get_atol", "get_etol", "random_arrays", "random_uniform_arrays",
           "rand_shape_2d", "rand_shape_3d", "rand_shape_nd", "rand_ndarray", "same",
           "almost_equal", "locationError", "checkShapes", "assert_almost_equal",
           "assert_allclose", "assert_almost_equal_with_err",
           "assert_almost_equal_ignore_nan", "assert_exception", "retry", "list_gpus"]


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
