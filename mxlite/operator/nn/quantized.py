"""int8/uint8 compute ops of MXNet's quantization (``_contrib_quantized_flatten``,
``_contrib_quantized_act``, ``_contrib_quantized_pooling``, ``_contrib_quantized_embedding``,
``_contrib_quantized_fully_connected``), with the numbers of MXNet 1.9.1's CPU build.

Each takes quantized arrays with the float ranges they stand for (``min_*``/``max_*``,
(1,) arrays) and returns its result with its range. ``quantized_fully_connected`` sums
int8 products exactly into int32; its range is MXNet's: one int32 step is one data step
times one weight step (steps of ``range / 127``, ``/ 255`` for uint8 data). Not
differentiable, as in MXNet.
"""
import numpy as np

from ...base import MXNetError, optional, parse_bool, parse_float, parse_int
from ..registry import OPS, Param, register_op
from ..util import host
from .quantize import (_F32, _INT32_RANGE, _INT8_RANGE, _UINT8_RANGE, _max_abs, _scalar,
                       range_inputs)
from . import pooling, fully_connected  # noqa: F401  (Pooling and FullyConnected declared)
from . import rnn as _rnn

_INT8_TYPES = (np.dtype(np.int8), np.dtype(np.uint8))


def _check_quantized(x, name, op):
    if x.dtype not in _INT8_TYPES:
        raise MXNetError("%s: %s must be int8 or uint8, got %s" % (op, name, x.dtype))


def _ranged(p, shapes):
    return [shapes[0], (1,), (1,)]


def _same_range_types(p, dtypes):
    return [dtypes[0], np.dtype(_F32), np.dtype(_F32)]


def _declare(name, compute, inputs, params, doc, infer_shape, infer_type=_same_range_types):
    register_op(name, compute, inputs=inputs, params=params, num_outputs=3,
                infer_shape=infer_shape, infer_type=infer_type, doc=doc,
                input_types=range_inputs(inputs))


# -- flatten, act ----------------------------------------------------------------------------

def _flatten(p, xp, x, lo, hi):
    _check_quantized(x, "data", "quantized_flatten")
    return x.reshape(x.shape[0], -1).copy(), lo.copy(), hi.copy()


_declare("_contrib_quantized_flatten", _flatten, ("data", "min_data", "max_data"), [],
         "Flatten quantized data to (N, -1); the range is unchanged.",
         lambda p, shapes: (shapes, [(shapes[0][0], int(np.prod(shapes[0][1:]))), (1,),
                                     (1,)]))


def _act(p, xp, x, lo, hi):
    _check_quantized(x, "data", "quantized_act")
    if p.act_type != "relu":
        raise MXNetError("quantized_act: only act_type='relu' is supported (as in MXNet), "
                         "got %r" % p.act_type)
    return xp.maximum(x, x.dtype.type(0)), lo.copy(), hi.copy()


_declare("_contrib_quantized_act", _act, ("data", "min_data", "max_data"),
         [Param("act_type", choices=("relu", "sigmoid", "tanh", "softrelu", "softsign"),
                doc="Activation; MXNet's quantized kernel runs 'relu' only.")],
         "ReLU of quantized data; the range is unchanged.",
         lambda p, shapes: (shapes, _ranged(p, shapes)))


# -- pooling ---------------------------------------------------------------------------------

def _pooling(p, xp, x, lo, hi):
    _check_quantized(x, "data", "quantized_pooling")
    if p.pool_type not in ("max", "avg"):
        raise MXNetError("quantized_pooling: pool_type must be 'max' or 'avg', got %r"
                         % p.pool_type)
    y = OPS["Pooling"].compute(p, xp, x.astype(_F32))[0]
    if p.pool_type == "avg":
        y = xp.rint(y)          # NOTE: MKL-DNN rounds the mean half to even
    return y.astype(x.dtype), lo.copy(), hi.copy()


def _pooling_shape(p, shapes):
    _, out = OPS["Pooling"].infer_shape(p, [shapes[0]])
    return shapes, None if out is None else [out[0], (1,), (1,)]


_declare("_contrib_quantized_pooling", _pooling, ("data", "min_data", "max_data"),
         list(OPS["Pooling"].params.values()),
         "Max or average pooling of quantized NCHW data (the params of Pooling); averages "
         "are rounded to the nearest integer; the range is unchanged.", _pooling_shape)


# -- embedding -------------------------------------------------------------------------------

def _embedding(p, xp, idx, w, lo, hi):
    _check_quantized(w, "weight", "quantized_embedding")
    rows = xp.clip(idx.astype(np.int64), 0, p.input_dim - 1)
    return w[rows], lo.copy(), hi.copy()


def _embedding_shape(p, shapes):
    return shapes, [tuple(shapes[0]) + (p.output_dim,), (1,), (1,)]


_declare("_contrib_quantized_embedding", _embedding,
         ("data", "weight", "min_weight", "max_weight"),
         [Param("input_dim", parse_int, doc="Vocabulary size.", low=1),
          Param("output_dim", parse_int, doc="Embedding size.", low=1),
          Param("dtype", choices=("float32", "float64", "float16", "uint8", "int8", "int32",
                                  "int64"), default="float32", doc="Ignored (int8 rows)."),
          Param("sparse_grad", parse_bool, False, "Ignored (no gradient).")],
         "Rows of a quantized weight for the indices in data (clipped to the vocabulary); "
         "the range is the weight's.", _embedding_shape,
         lambda p, dtypes: [dtypes[1], np.dtype(_F32), np.dtype(_F32)])


# -- fully connected -------------------------------------------------------------------------

def _fc_inputs(p):
    if p.no_bias:
        return ("data", "weight", "min_data", "max_data", "min_weight", "max_weight")
    return ("data", "weight", "bias", "min_data", "max_data", "min_weight", "max_weight",
            "min_bias", "max_bias")


def _fully_connected(p, xp, *args):
    op = "quantized_fully_connected"
    if p.no_bias:
        x, w, dlo, dhi, wlo, whi = args
    else:
        x, w, b, dlo, dhi, wlo, whi, blo, bhi = args
    _check_quantized(x, "data", op)
    if w.dtype != np.int8:
        raise MXNetError("%s: weight must be int8, got %s" % (op, w.dtype))
    d_real = _max_abs(_scalar(xp, dlo, "min_data", op), _scalar(xp, dhi, "max_data", op))
    w_real = _max_abs(_scalar(xp, wlo, "min_weight", op), _scalar(xp, whi, "max_weight", op))
    x2 = x.reshape(x.shape[0], -1) if p.flatten else x
    if x2.shape[-1] != w.shape[1] or w.shape[0] != p.num_hidden:
        raise MXNetError("%s: weight has shape %s, expected %s for data of shape %s"
                         % (op, tuple(w.shape), (p.num_hidden, x2.shape[-1]), tuple(x.shape)))
    y = x2.astype(np.int64) @ w.astype(np.int64).T
    unsigned = x.dtype == np.uint8
    if not p.no_bias:
        b_real = _max_abs(_scalar(xp, blo, "min_bias", op), _scalar(xp, bhi, "max_bias", op))
        rescale = (_F32((_UINT8_RANGE if unsigned else _INT8_RANGE) / d_real)
                   * _F32(_INT8_RANGE / w_real) * _F32(b_real) / _F32(_INT8_RANGE))
        y = y + xp.trunc(b.astype(_F32) * rescale).astype(np.int64)   # C++ float -> int
    step = (d_real / (255.0 if unsigned else 127.0)) * (w_real / 127.0)
    top = float(_F32(step) * _F32(_INT32_RANGE))
    return y.astype(np.int32), xp.asarray([-top], dtype=_F32), xp.asarray([top], dtype=_F32)


def _fc_shape(p, shapes):
    x = shapes[0]
    if x is None:
        return shapes, None
    lead = (x[0],) if p.flatten else tuple(x[:-1])
    return shapes, [lead + (p.num_hidden,), (1,), (1,)]


_declare("_contrib_quantized_fully_connected", _fully_connected, _fc_inputs,
         [Param("num_hidden", parse_int, doc="Output units.", low=1),
          Param("no_bias", parse_bool, False, "Whether there is no bias."),
          Param("flatten", parse_bool, True, "Flatten the data to (N, -1) first.")],
         "int32 ``data @ weight.T`` (+ the int8 bias rescaled to the product's step, "
         "truncated) of quantized data (int8 or uint8) and int8 weights, with the range "
         "of one int32 step times 2**31 - 1.", _fc_shape,
         lambda p, dtypes: [np.dtype(np.int32), np.dtype(_F32), np.dtype(_F32)])


# -- convolution -----------------------------------------------------------------------------

def _conv(p, xp, *args):
    op = "quantized_conv"
    if p.no_bias:
        x, w, dlo, dhi, wlo, whi = args
    else:
        x, w, b, dlo, dhi, wlo, whi = args[:7]
    _check_quantized(x, "data", op)
    if w.dtype != np.int8:
        raise MXNetError("%s: weight must be int8, got %s" % (op, w.dtype))
    if p.num_group != 1:
        raise MXNetError("%s: only num_group=1 is supported (as in MXNet), got %d"
                         % (op, p.num_group))
    # NOTE: exact integer sums, computed in float64 (exact below 2**53).
    conv = OPS["Convolution"]
    y = conv.compute(conv.parse_params(dict(p.items(), no_bias=True)), xp,
                     x.astype(np.float64), w.astype(np.float64))[0]
    if not p.no_bias:
        # MXNet's CPU kernel adds the int8 bias as it is (no rescaling to the product's step)
        y = y + b.astype(np.float64).reshape((1, -1) + (1,) * (y.ndim - 2))
    d_real = _max_abs(_scalar(xp, dlo, "min_data", op), _scalar(xp, dhi, "max_data", op))
    w_real = _max_abs(_scalar(xp, wlo, "min_weight", op), _scalar(xp, whi, "max_weight", op))
    top = float(_F32((d_real / 127.0) * (w_real / 127.0)) * _F32(_INT32_RANGE))
    return (xp.rint(y).astype(np.int32), xp.asarray([-top], dtype=_F32),
            xp.asarray([top], dtype=_F32))


def _conv_shape(p, shapes):
    conv = OPS["Convolution"]
    n = 2 if p.no_bias else 3
    ins, out = conv.infer_shape(p, list(shapes[:n]))
    if out is None:
        return list(ins) + list(shapes[n:]), None
    return list(ins) + list(shapes[n:]), [out[0], (1,), (1,)]


_declare("_contrib_quantized_conv", _conv, _fc_inputs,
         list(OPS["Convolution"].params.values()),
         "int32 convolution (the params of Convolution, one group) of quantized data "
         "(uint8 as MXNet's CPU kernel takes, or int8) with int8 weights, plus the int8 bias "
         "as it is; the range is one data step (range / 127) times one weight step times "
         "2**31 - 1, as MXNet computes it.", _conv_shape,
         lambda p, dtypes: [np.dtype(np.int32), np.dtype(_F32), np.dtype(_F32)])


# -- elementwise add -------------------------------------------------------------------------

_CALIB_PARAMS = [Param("min_calib_range", optional(parse_float), None,
                       "Calibrated minimum of the output; with max_calib_range the output is "
                       "int8/uint8 over that range."),
                 Param("max_calib_range", optional(parse_float), None, "Calibrated maximum.")]

_LIMITS_ALL = {np.dtype(np.int8): (-128, 127), np.dtype(np.uint8): (0, 255),
               np.dtype(np.int32): (-2 ** 31, 2 ** 31 - 1)}


def _steps(dtype):
    return _INT8_RANGE if dtype == np.int8 else _UINT8_RANGE


def _add_out_dtype(p, a_dtype, b_dtype):
    if p.min_calib_range is None or p.max_calib_range is None:
        return np.dtype(np.int32)
    return np.dtype(a_dtype) if a_dtype == b_dtype else np.dtype(np.int8)


def _saturate(xp, y, dtype):
    lo, hi = _LIMITS_ALL[np.dtype(dtype)]
    return xp.clip(xp.rint(y.astype(np.float64)), lo, hi).astype(dtype)


def _elemwise_add(p, xp, a, b, alo, ahi, blo, bhi):
    op = "quantized_elemwise_add"
    _check_quantized(a, "lhs", op)
    _check_quantized(b, "rhs", op)
    if a.shape != b.shape:
        raise MXNetError("%s: lhs has shape %s but rhs %s" % (op, a.shape, b.shape))
    # NOTE: every scale is computed in float32, step by step, as MXNet's kernel does: the
    # int32 sums then agree to the last unit.
    a_abs = _F32(_max_abs(_scalar(xp, alo, "lhs_min", op), _scalar(xp, ahi, "lhs_max", op)))
    b_abs = _F32(_max_abs(_scalar(xp, blo, "rhs_min", op), _scalar(xp, bhi, "rhs_max", op)))
    out_dtype = _add_out_dtype(p, a.dtype, b.dtype)
    out_steps = _F32({np.dtype(np.int8): _INT8_RANGE, np.dtype(np.uint8): _UINT8_RANGE}.get(
        out_dtype, _INT32_RANGE))
    a_steps, b_steps = _F32(_steps(a.dtype)), _F32(_steps(b.dtype))
    if p.min_calib_range is not None and p.max_calib_range is not None:
        lo, hi = p.min_calib_range, p.max_calib_range
        out_scale = out_steps / _F32(_max_abs(lo, hi))
        sa, sb = out_scale / (a_steps / a_abs), out_scale / (b_steps / b_abs)
    else:
        total = a_abs + b_abs
        hi, lo = float(total), -float(total)
        # NOTE: as MXNet, with equal dtypes both scales divide by the lhs's steps
        sa = (a_abs * out_steps) / (total * a_steps)
        sb = (b_abs * out_steps) / (total * (a_steps if a.dtype == b.dtype else b_steps))
    if a.dtype != b.dtype:
        # MXNet first requantizes the uint8 side to int8 (rounded, saturated), then adds it
        # with scale 1.
        if a.dtype == np.uint8:
            a, sa = _saturate(xp, a.astype(_F32) * sa, np.int8), _F32(1)
        else:
            b, sb = _saturate(xp, b.astype(_F32) * sb, np.int8), _F32(1)
    y = a.astype(_F32) * sa + b.astype(_F32) * sb
    return (_saturate(xp, y, out_dtype), xp.asarray([lo], dtype=_F32),
            xp.asarray([hi], dtype=_F32))


_declare("_contrib_quantized_elemwise_add", _elemwise_add,
         ("lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"),
         _CALIB_PARAMS,
         "Sum of two quantized arrays: int32 over the range ±(|lhs range| + |rhs range|), "
         "or int8/uint8 over the calibrated range.",
         lambda p, shapes: (shapes, [shapes[0], (1,), (1,)]),
         lambda p, dtypes: [_add_out_dtype(p, dtypes[0], dtypes[1]), np.dtype(_F32),
                            np.dtype(_F32)])


# -- entropy calibration ---------------------------------------------------------------------
# float32 sums in MXNet's order: np.cumsum accumulates sequentially, as std::accumulate.

def _seq_sum(v):
    return v.astype(_F32).cumsum(dtype=_F32)[-1] if v.size else _F32(0)


def _smooth(p, eps=_F32(0.0001)):
    zeros = p == 0
    n_zeros = int(zeros.sum())
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        return None
    eps1 = eps * _F32(n_zeros) / _F32(n_nonzeros)
    if eps1 >= 1.0:
        return None
    return (p + np.where(zeros, eps, -eps1).astype(_F32)).astype(_F32)


def _kl(p, q):
    p = (p / _seq_sum(p)).astype(_F32)
    q = (q / _seq_sum(q)).astype(_F32)
    return _seq_sum(p * np.log(p / q, dtype=_F32))


def _divergence(hist, start, stop, nqb):
    """KL divergence of the histogram clipped to bins [start, stop) from its quantization
    to ``nqb`` bins (MXNet's calibrate_entropy for one threshold)."""
    length = stop - start
    p = np.zeros(length, dtype=_F32)
    p[1:-1] = hist[start + 1:stop - 1]
    p[0] = _seq_sum(hist[:start + 1])
    p[-1] = _seq_sum(np.concatenate([hist[stop - 1:stop], hist[stop:]]))
    counts = np.zeros(length, dtype=np.int64)
    counts[1:] = hist[start + 1:stop].astype(np.int64)     # C++ float -> size_t
    merged = length // nqb                  # >= 1: the window has at least nqb bins
    first = np.arange(nqb) * merged         # the last group also takes the remainder
    bins = np.add.reduceat(counts, first).astype(_F32)
    norm = np.add.reduceat((counts != 0).astype(np.int64), first)
    group = np.minimum(np.arange(length) // merged, nqb - 1)
    value = np.where(norm > 0, bins / np.maximum(norm, 1).astype(_F32), 0).astype(_F32)
    q = np.where((p != 0) & (norm[group] > 0), value[group], 0).astype(_F32)
    p, q = _smooth(p), _smooth(q)
    if q is None or p is None:
        return _F32(np.inf)
    return _kl(p, q)


def _calibrate(p, xp, hist, edges):
    hist = host(hist).astype(_F32, copy=False)
    edges = host(edges).astype(_F32, copy=False)
    n = hist.size
    if edges.size != n + 1:
        raise MXNetError("calibrate_entropy: hist_edges must have %d values for %d bins, got %d"
                         % (n + 1, n, edges.size))
    nqb, zero = p.num_quantized_bins, n // 2
    best, best_t = _F32(np.finfo(_F32).max), None
    for i in range(nqb // 2, zero + 1):
        d = _divergence(hist, zero - i, zero + i + 1, nqb)
        if best_t is None:
            best_t = edges[zero + i + 1]
        if d < best:
            best, best_t = d, edges[zero + i + 1]
    if best_t is None:
        raise MXNetError("calibrate_entropy: %d bins are fewer than num_quantized_bins=%d"
                         % (n, nqb))
    return xp.asarray([best_t], dtype=_F32), xp.asarray([best], dtype=_F32)


register_op("_contrib_calibrate_entropy", _calibrate, inputs=("hist", "hist_edges"),
            params=[Param("num_quantized_bins", parse_int, 255,
                          "Bins of the quantized distribution (odd, 255 for int8).", low=1)],
            num_outputs=2, infer_shape=lambda p, shapes: (shapes, [(1,), (1,)]),
            infer_type=lambda p, dtypes: [np.dtype(_F32), np.dtype(_F32)],
            doc="The threshold (a histogram edge) that minimises the KL divergence between "
                "the histogram clipped to ±threshold and its quantization to "
                "num_quantized_bins bins, and that divergence (TensorRT's entropy "
                "calibration, as MXNet's quantization uses it).")


# -- batch norm ------------------------------------------------------------------------------

def _batch_norm(p, xp, x, gamma, beta, mean, var, lo, hi):
    op = "quantized_batch_norm"
    _check_quantized(x, "data", op)
    if p.min_calib_range is None or p.max_calib_range is None:
        raise MXNetError("%s: min_calib_range and max_calib_range are required (MXNet's kernel "
                         "has no uncalibrated mode)" % op)
    d_abs = _F32(_max_abs(_scalar(xp, lo, "min_data", op), _scalar(xp, hi, "max_data", op)))
    o_abs = _F32(_max_abs(p.min_calib_range, p.max_calib_range))
    if x.dtype == np.uint8:         # first to int8, as MXNet's kernel does
        x = _saturate(xp, x.astype(_F32) * (_F32(_INT8_RANGE) / _F32(_UINT8_RANGE)), np.int8)
    axis = p.axis % x.ndim
    shape = [1] * x.ndim
    shape[axis] = -1
    invstd = (_F32(1.0) / xp.sqrt(var.astype(_F32) + _F32(p.eps))).astype(_F32)
    g = gamma.astype(_F32)          # NOTE: as MXNet's kernel, fix_gamma is not applied
    scale = (g * invstd * d_abs / o_abs).astype(_F32)
    shift = ((beta.astype(_F32) - mean.astype(_F32) * g * invstd) * _F32(_INT8_RANGE)
             / o_abs).astype(_F32)
    # NOTE: MXNet runs its float kernel with the mean 0 and variance 1 in place of the
    # moving statistics, and that kernel still adds eps: x / sqrt(1 + eps).
    norm = x.astype(_F32) / xp.sqrt(_F32(1.0) + _F32(p.eps))
    y = norm * scale.reshape(shape) + shift.reshape(shape)
    return (_saturate(xp, y, np.int8), xp.asarray([p.min_calib_range], dtype=_F32),
            xp.asarray([p.max_calib_range], dtype=_F32))


_declare("_contrib_quantized_batch_norm", _batch_norm,
         ("data", "gamma", "beta", "moving_mean", "moving_var", "min_data", "max_data"),
         list(OPS["BatchNorm"].params.values()),
         "Inference batch normalization (moving statistics) of quantized data, requantized "
         "to int8 over the calibrated output range.",
         lambda p, shapes: (shapes, [shapes[0], (1,), (1,)]),
         lambda p, dtypes: [np.dtype(np.int8), np.dtype(_F32), np.dtype(_F32)])


# -- elementwise multiply --------------------------------------------------------------------

def _elemwise_mul(p, xp, a, b, alo, ahi, blo, bhi):
    op = "quantized_elemwise_mul"
    for x, name in ((a, "lhs"), (b, "rhs")):
        if x.dtype != np.int8:
            raise MXNetError("%s: %s must be int8, got %s" % (op, name, x.dtype))
    if a.shape != b.shape:
        raise MXNetError("%s: lhs has shape %s but rhs %s" % (op, a.shape, b.shape))
    a_abs = _F32(_max_abs(_scalar(xp, alo, "lhs_min", op), _scalar(xp, ahi, "lhs_max", op)))
    b_abs = _F32(_max_abs(_scalar(xp, blo, "rhs_min", op), _scalar(xp, bhi, "rhs_max", op)))
    a_scale, b_scale = _F32(_INT8_RANGE) / a_abs, _F32(_INT8_RANGE) / b_abs
    prod = a.astype(np.int32) * b.astype(np.int32)
    if p.enable_float_output:
        return (prod * (_F32(1.0) / a_scale / b_scale)).astype(_F32)
    if p.min_calib_range is not None and p.max_calib_range is not None:
        lo, hi = p.min_calib_range, p.max_calib_range
        out_scale = _F32(_INT8_RANGE) / _F32(_max_abs(lo, hi)) / a_scale / b_scale
        # NOTE: as MXNet's kernel (a C++ float -> int8 cast): truncated, and a value out of
        # the int8 range wraps around instead of saturating.
        y = xp.trunc(prod * out_scale).astype(np.int32).astype(np.int8)
    else:
        top = float(_F32((float(a_abs) / 127.0) * (float(b_abs) / 127.0)) * _F32(_INT32_RANGE))
        lo, hi, y = -top, top, prod
    return y, xp.asarray([lo], dtype=_F32), xp.asarray([hi], dtype=_F32)


def _mul_types(p, dtypes):
    if p.enable_float_output:
        return [np.dtype(_F32)]
    calibrated = p.min_calib_range is not None and p.max_calib_range is not None
    return [np.dtype(np.int8 if calibrated else np.int32), np.dtype(_F32), np.dtype(_F32)]


_MUL_INPUTS = ("lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max")
register_op("_contrib_quantized_elemwise_mul", _elemwise_mul, inputs=_MUL_INPUTS,
            input_types=range_inputs(_MUL_INPUTS),
            params=_CALIB_PARAMS + [Param("enable_float_output", parse_bool, False,
                                          "Return the float32 product (and no range).")],
            num_outputs=lambda p: 1 if p.enable_float_output else 3,
            output_names=lambda p: (("output",) if p.enable_float_output
                                    else ("output", "min_output", "max_output")),
            infer_shape=lambda p, shapes: (shapes, [shapes[0]] if p.enable_float_output
                                           else [shapes[0], (1,), (1,)]),
            infer_type=_mul_types,
            doc="Product of two int8 arrays: int32 over the product of their ranges, int8 "
                "over the calibrated range, or float32 with enable_float_output.")


# -- concat --------------------------------------------------------------------------------

def _quantized_concat_inputs(p):
    """MXNet's names: the num_args arrays, then a min and a max for each."""
    data = ["arg%d" % i for i in range(p.num_args)]
    return tuple(data + [n + s for n in data for s in ("_min", "_max")])


def _concat_dtype(dtypes):
    return np.dtype(np.int8) if np.dtype(np.int8) in dtypes else np.dtype(np.uint8)


def _quantized_concat(p, xp, *x):
    op = "quantized_concat"
    n = p.num_args
    data = x[:n]
    for i, d in enumerate(data):
        _check_quantized(d, "arg%d" % i, op)
    lo = [_scalar(xp, x[n + 2 * i], "arg%d_min" % i, op) for i in range(n)]
    hi = [_scalar(xp, x[n + 2 * i + 1], "arg%d_max" % i, op) for i in range(n)]
    # as MXNet's kernel: the widest range, and never one without 0
    out_lo, out_hi = _F32(min([0.0] + lo)), _F32(max([0.0] + hi))
    dtype = _concat_dtype([d.dtype for d in data])
    out_scale = _F32(_steps(dtype)) / _F32(_max_abs(out_lo, out_hi))
    parts = []
    for i, d in enumerate(data):
        scale = _F32(_steps(d.dtype)) / _F32(_max_abs(lo[i], hi[i]))
        if scale == out_scale and d.dtype == dtype:
            parts.append(d)
            continue
        # NOTE: rescaled in float32 and rounded half to even, as MKL-DNN's reorder
        bound = _LIMITS_ALL[dtype]
        parts.append(xp.clip(xp.rint(d.astype(_F32) * (out_scale / scale)), *bound)
                     .astype(dtype))
    y = OPS["Concat"].kernel(p, xp, *parts)
    return y, xp.asarray([out_lo], dtype=_F32), xp.asarray([out_hi], dtype=_F32)


def _quantized_concat_shape(p, shapes):
    data = shapes[:p.num_args]
    ins = list(data) + [(1,)] * (2 * p.num_args)
    if any(s is None or 0 in s for s in data):
        return ins, []
    dim = p.dim % len(data[0])
    out = list(data[0])
    out[dim] = sum(s[dim] for s in data)
    return ins, [tuple(out), (1,), (1,)]


register_op("_contrib_quantized_concat", _quantized_concat, inputs=_quantized_concat_inputs,
            input_types=range_inputs(_quantized_concat_inputs),
            variadic="num_args", variadic_group=3,
            params=[Param("num_args", parse_int, 1, "The number of arrays (each with a min "
                          "and a max: 3 * num_args inputs)."),
                    Param("dim", parse_int, 1, "The axis to join along.")],
            num_outputs=3, output_names=("output", "min_output", "max_output"),
            infer_shape=_quantized_concat_shape,
            infer_type=lambda p, dtypes: [_concat_dtype(dtypes[:p.num_args]),
                                          np.dtype(_F32), np.dtype(_F32)],
            doc="Concatenate quantized arrays (inputs: the arrays, then each one's min and "
                "max) along dim, over the widest range (including 0): arrays over another "
                "range are rescaled, rounding half to even; int8 if any array is int8, else "
                "uint8.")


# -- rnn (int8 LSTM) ------------------------------------------------------------------------

def _quantized_rnn_inputs(p):
    return ("data", "parameters", "state", "state_cell", "data_scale", "data_shift")


def _int8_weights(p, xp, w, input_size):
    """``w`` with every weight matrix rounded to int8 steps (the biases stay float32):
    one scale ``127 / max|w|`` per gate row, over that row of W_i2h and W_h2h of every
    layer and direction."""
    w = w.astype(_F32, copy=True)
    mats = _rnn._unpack(p, w, input_size)
    row_max = None
    for wx, wh, _, _ in mats:
        m = xp.maximum(xp.abs(wx).max(axis=1), xp.abs(wh).max(axis=1))
        row_max = m if row_max is None else xp.maximum(row_max, m)
    scale = xp.where(row_max > 0, _F32(127) / xp.where(row_max > 0, row_max, 1), 0)
    step = xp.where(scale > 0, 1 / xp.where(scale > 0, scale, 1), 0).astype(_F32)
    for wx, wh, _, _ in mats:
        for m in (wx, wh):
            m[...] = xp.rint(m * scale[:, None]) * step[:, None]
    return w


def _quantized_rnn(p, xp, data, w, state, cell, data_scale, data_shift):
    op = "quantized_rnn"
    if p.mode != "lstm":
        raise MXNetError("%s: only mode='lstm' is supported (as in MXNet), got %r"
                         % (op, p.mode))
    if data.dtype != np.uint8:
        raise MXNetError("%s: data must be uint8 (quantize_asym's output), got %s"
                         % (op, data.dtype))
    _rnn._check(p, data, w, state, cell)
    s = _F32(_scalar(xp, data_scale, "data_scale", op))
    shift = _F32(_scalar(xp, data_shift, "data_shift", op))
    if not s > 0:
        raise MXNetError("%s: data_scale must be positive, got %g" % (op, s))

    def as_uint8(h):
        """What the uint8 copy of a hidden state stands for (data's scale and shift)."""
        return (xp.clip(xp.rint(h * s + shift), 0, 255) - shift) / s

    x = (data.astype(_F32) - shift) / s
    wq = _int8_weights(p, xp, w, data.shape[2])
    _, views, xs = _rnn._reserve(p, xp, data.shape[0], data.shape[1], _F32)
    out = _rnn._stack_forward(p, xp, x, wq, state.astype(_F32), cell.astype(_F32),
                              xp.zeros((0,), dtype=_F32), views, xs, q=as_uint8)
    if not p.state_outputs:
        return out
    return (out, xp.stack([r["hs"][-1] for r in views]),
            xp.stack([r["cs"][-1] for r in views]))


def _quantized_rnn_shape(p, shapes):
    ins = _rnn._infer_shape(p, shapes[:4]) + [(1,), (1,)]
    data = shapes[0]
    if data is None or len(data) != 3 or 0 in data:
        return ins, []
    d = _rnn._dirs(p)
    states = [(p.num_layers * d, data[1], p.state_size)] * (2 if p.state_outputs else 0)
    return ins, [(data[0], data[1], d * p.state_size)] + states


register_op("_contrib_quantized_rnn", _quantized_rnn, inputs=_quantized_rnn_inputs,
            input_types=lambda p: [np.dtype(np.uint8)] + [np.dtype(_F32)] * 5,
            params=_rnn._PARAMS, num_outputs=lambda p: 3 if p.state_outputs else 1,
            # NOTE: "statecell_ouput" is MXNet's spelling
            output_names=("output", "state_output", "statecell_ouput"),
            infer_shape=_quantized_rnn_shape,
            infer_type=lambda p, dtypes: [np.dtype(_F32)] * (3 if p.state_outputs else 1),
            doc="LSTM over uint8 data (scale and shift as quantize_asym gives them) with "
                "int8 weights (one scale 127 / max|w| per gate row) and float32 biases, "
                "cell states and outputs; hidden states feed the recurrent and upper-layer "
                "matmuls as uint8 over the data's scale and shift, as MKL-DNN's int8 LSTM. "
                "Forward only.")
