"""The int8/uint8 conversion ops of MXNet's quantization: ``_contrib_quantize``,
``_contrib_quantize_v2``, ``_contrib_dequantize`` and ``_contrib_requantize``.

Numbers follow MXNet 1.9.1's CPU kernels (its MKL-DNN reorders, as the pip wheel runs
them): ``q = saturate(round_half_even(x * scale))`` computed in float32, with the
ranges MXNet uses, e.g. ``127.5 / max(|min|, |max|)`` for ``quantize_v2`` to int8.
Every op also returns the float range its integers stand for, as ``(1,)`` arrays.
The ops are not differentiable (MXNet registers no gradient for them).
"""
import numpy as np

from ...base import MXNetError, optional, parse_float
from ..registry import Param, register_op
from ..util import host

_F32 = np.float32
_INT8_RANGE, _UINT8_RANGE = 127.5, 255.5        # MXNet's kInt8Range, kUint8Range
_INT32_RANGE = 2147483647.0                     # MinAbs(INT32_MIN, INT32_MAX)
_LIMITS = {np.dtype(np.int8): (-128, 127), np.dtype(np.uint8): (0, 255)}


def range_inputs(inputs):
    """``input_types`` of a quantized op: its range inputs (``min_data``, ``lhs_max``,
    ``arg0_min`` ...) are float32 (1,) arrays, whatever type its data has."""
    def types(p):
        names = inputs(p) if callable(inputs) else inputs
        return [np.dtype(_F32) if n.startswith(("min_", "max_")) or n.endswith(("_min", "_max"))
                else None for n in names]
    return types


def _max_abs(a, b):
    return max(abs(float(a)), abs(float(b)))


def _scalar(xp, v, name, op):
    if v.size != 1:
        raise MXNetError("%s: %s must hold one value, got shape %s" % (op, name, tuple(v.shape)))
    return float(v.reshape(-1)[0])


def _convert(xp, x, scale, dtype):
    """``saturate(round(x * scale))`` in float32, as ``dtype``."""
    lo, hi = _LIMITS[np.dtype(dtype)]
    y = xp.rint(x.astype(_F32) * _F32(scale))
    return xp.clip(y, lo, hi).astype(dtype)


def _range(xp, lo, hi):
    return xp.asarray([lo], dtype=_F32), xp.asarray([hi], dtype=_F32)


def _out_dtype(out_type, min_calib, max_calib):
    """MXNet's ``GetQuantizeOutputType``: 'auto' is uint8 for a calibrated range that is
    not negative, int8 otherwise."""
    if out_type == "auto":
        return np.uint8 if (min_calib is not None and max_calib is not None
                            and min_calib >= 0.0) else np.int8
    return np.uint8 if out_type == "uint8" else np.int8


def _check_real(real, op):
    if not real > 0:
        raise MXNetError("%s: the range [min, max] must not be all zero" % op)


# -- quantize -----------------------------------------------------------------------------

def _quantize(p, xp, x, min_range, max_range):
    lo = _scalar(xp, min_range, "min_range", "quantize")
    hi = _scalar(xp, max_range, "max_range", "quantize")
    real = _max_abs(lo, hi)
    _check_real(real, "quantize")
    if p.out_type == "uint8":
        return (_convert(xp, x, 255.0 / real, np.uint8),) + _range(xp, lo, hi)
    return (_convert(xp, x, 127.0 / real, np.int8),) + _range(xp, -real, real)


def _three_outputs(p, shapes):
    return shapes, [shapes[0], (1,), (1,)]


register_op("_contrib_quantize", _quantize, inputs=("data", "min_range", "max_range"),
            input_types=range_inputs(("data", "min_range", "max_range")),
            params=[Param("out_type", choices=("int8", "uint8"), default="uint8",
                          doc="Output type.")],
            num_outputs=3,
            infer_shape=_three_outputs,
            infer_type=lambda p, dtypes: [np.dtype(p.out_type), np.dtype(_F32),
                                          np.dtype(_F32)],
            doc="Quantize float data in [min_range, max_range] to int8 (scale 127 / "
                "max(|min|, |max|), range ±max(|min|, |max|)) or uint8 (scale 255 / "
                "max(|min|, |max|), range [min_range, max_range]), rounding half to even "
                "and saturating.")


# -- quantize_v2 --------------------------------------------------------------------------

def _quantize_v2(p, xp, x):
    cmin, cmax = p.min_calib_range, p.max_calib_range
    calibrated = cmin is not None and cmax is not None
    if x.dtype in (np.int8, np.uint8):          # already quantized: passed through
        if calibrated:
            return (x.copy(),) + _range(xp, cmin, cmax)
        if x.dtype == np.uint8:
            return (x.copy(),) + _range(xp, 0.0, _UINT8_RANGE)
        return (x.copy(),) + _range(xp, -_INT8_RANGE, _INT8_RANGE)
    if calibrated:
        lo, hi = cmin, cmax
    elif x.size == 0:
        raise MXNetError("data expected some values to take the range from (or give "
                         "min_calib_range and max_calib_range), got shape %s" % (x.shape,))
    else:
        lo, hi = float(x.min()), float(x.max())
    real = _max_abs(lo, hi)
    _check_real(real, "quantize_v2")
    if _out_dtype(p.out_type, cmin, cmax) == np.uint8:
        return (_convert(xp, x, _UINT8_RANGE / real, np.uint8),) + _range(xp, lo, hi)
    return (_convert(xp, x, _INT8_RANGE / real, np.int8),) + _range(xp, -real, real)


def _v2_types(p, dtypes):
    if dtypes[0] in (np.dtype(np.int8), np.dtype(np.uint8)):
        out = dtypes[0]
    else:
        out = np.dtype(_out_dtype(p.out_type, p.min_calib_range, p.max_calib_range))
    return [out, np.dtype(_F32), np.dtype(_F32)]


_CALIB = [Param("min_calib_range", optional(parse_float), None,
                "Calibrated minimum; with max_calib_range it replaces the data's range."),
          Param("max_calib_range", optional(parse_float), None, "Calibrated maximum.")]
_OUT_TYPE_AND_CALIB = [Param("out_type", choices=("auto", "int8", "uint8"), default="int8",
                             doc="Output type; 'auto': uint8 when the calibrated minimum is "
                                 ">= 0, else int8.")] + _CALIB

register_op("_contrib_quantize_v2", _quantize_v2, inputs=("data",),
            params=_OUT_TYPE_AND_CALIB,
            num_outputs=3,
            infer_shape=_three_outputs, infer_type=_v2_types,
            doc="Quantize float data to int8 (scale 127.5 / max(|min|, |max|)) or uint8 "
                "(scale 255.5 / max(|min|, |max|)) over the calibrated range, or the data's "
                "own minimum and maximum; int8/uint8 data pass through.")


# -- dequantize ---------------------------------------------------------------------------

def _dequantize(p, xp, x, min_range, max_range):
    lo = _scalar(xp, min_range, "min_range", "dequantize")
    hi = _scalar(xp, max_range, "max_range", "dequantize")
    if x.dtype == np.uint8:
        scale = _max_abs(lo, hi) / _UINT8_RANGE
    elif x.dtype == np.int8:
        scale = _max_abs(lo, hi) / _INT8_RANGE
    else:
        raise MXNetError("dequantize: data must be int8 or uint8, got %s" % x.dtype)
    return x.astype(_F32) * _F32(scale)


register_op("_contrib_dequantize", _dequantize, inputs=("data", "min_range", "max_range"),
            input_types=range_inputs(("data", "min_range", "max_range")),
            params=[Param("out_type", choices=("float32",), default="float32",
                          doc="Output type.")],
            infer_shape=lambda p, shapes: (shapes, [shapes[0]]),
            infer_type=lambda p, dtypes: [np.dtype(_F32)],
            doc="Float values of int8 (x * max(|min|, |max|) / 127.5) or uint8 "
                "(x * max(|min|, |max|) / 255.5) data.")


# -- requantize ---------------------------------------------------------------------------

def _requantize(p, xp, x, min_range, max_range):
    if x.dtype != np.int32:
        raise MXNetError("requantize: data must be int32, got %s" % x.dtype)
    lo = _scalar(xp, min_range, "min_range", "requantize")
    hi = _scalar(xp, max_range, "max_range", "requantize")
    cmin, cmax = p.min_calib_range, p.max_calib_range
    if cmin is not None and cmax is not None:
        real = _max_abs(cmin, cmax)
    else:
        data_range = max(abs(int(x.min())), abs(int(x.max()))) if x.size else 0
        real = float(_F32(data_range) * _F32(_max_abs(lo, hi)) / _F32(_INT32_RANGE))
    _check_real(real, "requantize")
    first = _F32(_max_abs(lo, hi)) / _F32(_INT32_RANGE)
    if _out_dtype(p.out_type, cmin, cmax) == np.uint8:
        return (_convert(xp, x, first * (_F32(255.0) / _F32(real)), np.uint8),) + _range(
            xp, 0.0, real)
    return (_convert(xp, x, first * (_F32(127.0) / _F32(real)), np.int8),) + _range(
        xp, -real, real)


def _requantize_types(p, dtypes):
    out = _out_dtype(p.out_type, p.min_calib_range, p.max_calib_range)
    return [np.dtype(out), np.dtype(_F32), np.dtype(_F32)]


register_op("_contrib_requantize", _requantize, inputs=("data", "min_range", "max_range"),
            input_types=range_inputs(("data", "min_range", "max_range")),
            params=_OUT_TYPE_AND_CALIB,
            num_outputs=3,
            infer_shape=_three_outputs, infer_type=_requantize_types,
            doc="Requantize int32 data (standing for [min_range, max_range]) to int8 or "
                "uint8 over the calibrated range, or over the range its values reach.")


# -- quantize_asym ------------------------------------------------------------------------

def _quantize_asym(p, xp, x):
    if x.dtype != _F32:
        raise MXNetError("quantize_asym: data must be float32 (as in MXNet), got %s" % x.dtype)
    cmin, cmax = p.min_calib_range, p.max_calib_range
    if cmin is not None and cmax is not None:
        lo, hi = _F32(cmin), _F32(cmax)
    else:
        lo, hi = (_F32(host(x.min())), _F32(host(x.max()))) if x.size else (_F32(0), _F32(0))
    if not hi > lo:
        raise MXNetError("quantize_asym: the range [%g, %g] is empty; it needs min < max"
                         % (lo, hi))
    scale = _F32(255) / (hi - lo)
    shift = _F32(255) - hi * scale
    # NOTE: rounded half to even and saturated, as MXNet's MKL-DNN kernel (the one its
    # CPU build runs, for 3-d data; other ranks crash there)
    q = xp.clip(xp.rint(x * scale + shift), 0, 255).astype(np.uint8)
    return q, xp.asarray([scale], dtype=_F32), xp.asarray([shift], dtype=_F32)


register_op("_contrib_quantize_asym", _quantize_asym, inputs=("data",), params=_CALIB,
            num_outputs=3, output_names=("output", "scale", "shift"),
            infer_shape=_three_outputs,
            infer_type=lambda p, dtypes: [np.dtype(np.uint8), np.dtype(_F32), np.dtype(_F32)],
            doc="Asymmetric uint8 quantization of float32 data over the calibrated range or "
                "the data's own [min, max]: ``out = x * scale + shift`` rounded and "
                "saturated, with ``scale = 255 / (max - min)`` and ``shift = 255 - max * "
                "scale`` also returned. Forward only.")
