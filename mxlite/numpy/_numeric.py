"""``mx.np`` numeric functions that MXNet 1.9.1 runs as operators rather than through
NumPy: ``pad`` (``_npi_pad``), ``copysign``, ``ldexp``, ``nan_to_num``, ``polyval``,
``average``, ``percentile``, ``ediff1d``, ``bincount`` and ``delete``.
Recorded by autograd and hybridizable."""
import numbers

from ._ndarray import apply
from ._shape import _np, _np_like

__all__ = ["pad", "copysign", "ldexp", "nan_to_num", "polyval", "average", "percentile",
           "ediff1d", "bincount", "delete"]


def pad(x, pad_width, mode="constant", **kwargs):
    """``x`` padded by ``pad_width`` ((before, after) per axis, one pair, or one int)."""
    x = _np(x)
    if isinstance(pad_width, numbers.Integral):
        pad_width = ((pad_width, pad_width),)
    params = {"pad_width": tuple(tuple(r) if isinstance(r, (list, tuple)) else (r, r)
                                 for r in pad_width) if isinstance(pad_width[0], (list, tuple))
              else (tuple(pad_width),),
              "mode": mode}
    if "constant_values" in kwargs:
        params["constant_value"] = float(kwargs.pop("constant_values"))
    if "reflect_type" in kwargs:
        params["reflect_type"] = kwargs.pop("reflect_type")
    if kwargs:
        raise TypeError("pad() got an unexpected keyword argument %r" % next(iter(kwargs)))
    return apply("_npi_pad", (x,), params, py_name="pad")


def _binary(name, x1, x2, out):
    """np op ``name`` on two arrays, or its ``_scalar``/``_rscalar`` form on an array and a
    Python number (as MXNet's)."""
    if isinstance(x2, numbers.Number):
        op, x, s = name + "_scalar", x1, x2
    elif isinstance(x1, numbers.Number):
        op, x, s = name.replace("_npi_", "_npi_r") + "_scalar", x2, x1
    else:
        return apply(name, (_np(x1), _np(x2)), out=out, py_name=name[5:])
    return apply(op, (_np(x),), {"scalar": float(s), "is_int": isinstance(s, numbers.Integral)},
                 out=out, py_name=name[5:])


def copysign(x1, x2, out=None, **kwargs):
    """The magnitude of ``x1`` with the sign of ``x2``, elementwise (broadcasting)."""
    return _binary("_npi_copysign", x1, x2, out)


def ldexp(x1, x2, out=None, **kwargs):
    """``x1 * 2**x2``, elementwise (broadcasting)."""
    return _binary("_npi_ldexp", x1, x2, out)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None, **kwargs):
    """NaN and infinities of ``x`` replaced by ``nan``, ``posinf``, ``neginf``."""
    return apply("_npi_nan_to_num", (_np(x),), {"copy": copy, "nan": nan, "posinf": posinf,
                                                "neginf": neginf}, py_name="nan_to_num")


def polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``."""
    return apply("_npi_polyval", (_np(p), _np(x)), py_name="polyval")


def average(a, axis=None, weights=None, returned=False, out=None):
    """The weighted average over ``axis`` (and the sum of the weights if ``returned``)."""
    inputs = (_np(a),) if weights is None else (_np(a), _np(weights))
    y = apply("_npi_average", inputs, {"axis": axis, "returned": returned,
                                       "weighted": weights is not None}, out=out,
              py_name="average")
    return tuple(y) if isinstance(y, list) else y


def percentile(a, q, axis=None, out=None, overwrite_input=None, interpolation="linear",
               keepdims=False):
    """The ``q``-th percentiles (0 to 100) of ``a`` along ``axis``."""
    if overwrite_input is not None:
        raise NotImplementedError("percentile: overwrite_input is not supported (as in "
                                  "MXNet)")
    params = {"axis": axis, "interpolation": interpolation, "keepdims": keepdims}
    if isinstance(q, numbers.Number):
        params["q_scalar"] = float(q)
        return apply("_npi_percentile", (_np(a),), params, out=out, py_name="percentile")
    return apply("_npi_percentile", (_np(a), _np(q)), params, out=out, py_name="percentile")


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of consecutive elements of the flattened ``ary``, with
    ``to_begin`` prepended and ``to_end`` appended."""
    inputs, params = [_np(ary)], {}
    for name, v, key in (("begin", to_begin, "input2"), ("end", to_end, "input3")):
        if v is None:
            continue
        if isinstance(v, numbers.Number):
            params["to_%s_scalar" % name] = float(v)
        else:
            inputs.append(_np(v))
            params["to_%s_arr_given" % name] = True
    return apply("_npi_ediff1d", tuple(inputs), params, py_name="ediff1d")


def bincount(x, weights=None, minlength=0):
    """How many times each of 0, 1, ... occurs in ``x`` (or the sum of its weights)."""
    inputs = (_np(x),) if weights is None else (_np(x), _np(weights))
    return apply("_npi_bincount", inputs, {"minlength": minlength,
                                           "has_weights": weights is not None},
                 py_name="bincount")


def delete(arr, obj, axis=None):
    """A copy of ``arr`` without the entries ``obj`` (an int, a slice or an integer
    array) names along ``axis`` (None: of the flattened array)."""
    if isinstance(obj, slice):
        params = {"start": obj.start, "stop": obj.stop,
                  "step": 1 if obj.step is None else obj.step}
        return apply("_npi_delete", (_np(arr),), dict(params, axis=axis), py_name="delete")
    if isinstance(obj, numbers.Integral):
        return apply("_npi_delete", (_np(arr),), {"int_ind": int(obj), "axis": axis},
                     py_name="delete")
    return apply("_npi_delete", (_np(arr), _np_like(obj, arr)), {"axis": axis},
                 py_name="delete")
