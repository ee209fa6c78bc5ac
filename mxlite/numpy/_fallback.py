"""NumPy fallbacks: ``mx.np`` functions MXNet runs through official NumPy.

The arrays go to NumPy and the results come back as ``mx.np.ndarray`` on the first
input's context. Like MXNet's fallbacks these are not recorded by autograd.
"""
import numpy as onp

from ..nd.ndarray import NDArray

__all__ = ["fallback", "make_fallback", "FALLBACK_NAMES"]


def _to_onp(x):
    if isinstance(x, NDArray):
        return x.asnumpy()
    if isinstance(x, (list, tuple)):
        conv = [_to_onp(e) for e in x]
        return type(x)(conv) if isinstance(x, tuple) else conv
    return x


def _ctx_of(args):
    for a in args:
        if isinstance(a, NDArray):
            return a.ctx
        if isinstance(a, (list, tuple)):
            c = _ctx_of(a)
            if c is not None:
                return c
    return None


def _from_onp(y, ctx):
    from ._creation import array
    if isinstance(y, (onp.ndarray, onp.generic)) and y.dtype.kind in "biuf":
        return array(y, dtype=_mx_dtype(y.dtype), ctx=ctx)
    if isinstance(y, tuple):
        return tuple(_from_onp(e, ctx) for e in y)
    if isinstance(y, list):
        return [_from_onp(e, ctx) for e in y]
    return y


def _mx_dtype(dt):
    if dt.kind == "f" and dt.itemsize not in (2, 4, 8):
        return onp.float64
    if dt.kind == "u" and dt != onp.uint8:
        return onp.int64
    if dt.kind == "i" and dt.itemsize == 2:
        return onp.int32
    return dt


def fallback(fn, *args, **kwargs):
    """``fn`` (a NumPy function) on the values of ``args``; np arrays back."""
    ctx = _ctx_of(args) or _ctx_of(list(kwargs.values()))
    y = fn(*_to_onp(list(args)), **{k: _to_onp(v) for k, v in kwargs.items()})
    return _from_onp(y, ctx)


def make_fallback(name, onp_fn=None):
    """An ``mx.np`` function for NumPy's ``name`` that runs through NumPy."""
    onp_fn = onp_fn or getattr(onp, name)

    def fn(*args, **kwargs):
        return fallback(onp_fn, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = "mxlite.numpy"
    fn.__doc__ = ("``numpy.%s`` on the array values (a NumPy fallback, as in MXNet: not "
                  "recorded by autograd)." % name)
    return fn


# Functions MXNet serves through NumPy (mxnet.numpy.fallback and the multiarray ones
# without an operator of their own).
FALLBACK_NAMES = [
    "allclose", "apply_along_axis", "apply_over_axes", "argpartition", "argwhere",
    "array_equal", "array_equiv", "choose", "compress", "corrcoef", "correlate",
    "count_nonzero", "cov", "digitize", "divmod", "extract", "flatnonzero", "float_power",
    "frexp", "heaviside", "histogram2d", "histogram_bin_edges", "histogramdd", "i0", "in1d",
    "interp", "intersect1d", "isclose", "isin", "ix_", "lexsort", "min_scalar_type", "modf",
    "msort", "nanargmax", "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmedian",
    "nanmin", "nanpercentile", "nanprod", "nanquantile", "nansum", "nanmean", "nanstd",
    "nanvar", "packbits", "partition", "piecewise", "poly", "polyadd", "polydiv", "polyfit",
    "polyint", "polymul", "polysub", "promote_types", "ptp", "real", "result_type", "roots",
    "searchsorted", "select", "setdiff1d", "setxor1d", "signbit", "spacing", "take_along_axis",
    "trapz", "tril_indices_from", "trim_zeros", "triu_indices_from", "union1d", "unpackbits",
    "unwrap", "vander", "median", "histogram", "quantile",
    "insert", "unravel_index",
    "diag_indices_from", "blackman", "hamming", "hanning", "kron", "resize",
    "cross", "triu", "diagflat", "genfromtxt",
]
for _name in ("trapz", "msort", "in1d"):     # gone from NumPy 2: their successors
    if not hasattr(onp, _name):
        pass
