"""Normalisation layers: BatchNorm, LayerNorm, InstanceNorm, GroupNorm, L2Normalization.

All of them normalise ``xhat = (x - mean) * inv`` over some axes and scale. The
gradients are written in mxlite ops from ``x`` and the saved statistics, so a
gradient penalty through a normalisation layer differentiates again.

NOTE: variances are two-pass (``mean((x - mean)^2)``), never ``E[x^2] - E[x]^2``,
which cancels catastrophically in float32; float16 data is normalised in float32.
"""
import numpy as np

from ... import nd
from ...autograd import _state
from ...engine import parallel
from ...base import MXNetError, parse_float, parse_bool, parse_int, parse_str, optional
from ...nd.ndarray import NDArray
from ..registry import register_op, Param, OPS, ranks, array_module_of, run_step
from ..batchwise import rows, inference, axis_not_batch
from ..tensor.elemwise_unary import UNARY
from ..util import fill_missing, norm_axis
from . import _fast_bn


def _work(x):
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _moments(xp, x, axes):
    mean = x.mean(axis=axes, keepdims=True)
    xc = x - mean
    return mean, (xc * xc).mean(axis=axes, keepdims=True)


def _count(shape, axes):
    return float(np.prod([shape[a] for a in axes]))


def _check_param(op, arg, got, want, dshape):
    if tuple(got) != tuple(want):
        raise MXNetError("%s: %s has shape %s, expected %s for data of shape %s"
                         % (op, arg, tuple(got), tuple(want), tuple(dshape)))


def norm_backward(x, mean, inv, g, axes, gy_mean=None, gy_inv=None, gy_std=None):
    """Data gradient of ``xhat = (x - mean) * inv`` where mean and inv are the batch
    statistics over ``axes``, for the xhat gradient ``g`` (mxlite ops throughout).

    ``gy_mean``/``gy_inv``/``gy_std`` are gradients reaching the statistics when
    they are outputs (``output_mean_var``).
    """
    n = _count(x.shape, axes)
    xhat = (x - mean) * inv
    gx = (g - nd.mean(g, axis=axes, keepdims=True)
          - xhat * nd.mean(g * xhat, axis=axes, keepdims=True)) * inv
    if gy_mean is not None:
        gx = gx + gy_mean / n
    if gy_inv is not None:      # d inv / dx = -inv^2 xhat / n
        gx = gx - gy_inv * inv * inv * xhat / n
    if gy_std is not None:      # d std / dx = xhat / n
        gx = gx + gy_std * xhat / n
    return gx


# -- BatchNorm ---------------------------------------------------------------------------------

def _bn_axes(p, ndim):
    c = norm_axis(p.axis, ndim)
    bc = [1] * ndim
    bc[c] = -1
    return c, tuple(i for i in range(ndim) if i != c), tuple(bc)


def _bn_compute(p, xp, x, gamma, beta, moving_mean, moving_var):
    return batch_norm(p, xp, x, gamma, beta, moving_mean, moving_var)


def batch_norm(p, xp, x, gamma, beta, moving_mean, moving_var, residual=None, relu=False):
    """BatchNorm's outputs (y, mean, inv), with ``y`` then ``residual + y`` (where given)
    and ``relu(...)`` (where ``relu``), as the chain BatchNorm -> elemwise_add ->
    relu gives them (a hybridized graph runs such chains as one step, see
    ``fused.py``): added and rectified in place, channel by channel, while the
    channel is in cache. A residual elemwise_add would refuse (another shape or
    dtype) goes through elemwise_add itself, for its error."""
    c, axes, _ = _bn_axes(p, x.ndim)
    for arg, a in (("gamma", gamma), ("beta", beta), ("moving_mean", moving_mean),
                   ("moving_var", moving_var)):
        _check_param("BatchNorm", arg, a.shape, (x.shape[c],), x.shape)
    xw = _work(x)
    batch = _state.training and not p.use_global_stats
    # the epilogue runs inside the passes where they are in x's dtype, else after the cast
    inside = xw is x and (residual is None or (residual.shape == x.shape
                                               and residual.dtype == x.dtype))
    y, mean, var, inv = _bn_normalize(p, xp, xw, c, axes, gamma, beta, moving_mean, moving_var,
                                      batch, *((residual, relu) if inside else (None, False)))
    if batch:
        # The moving statistics are updated in place (declared by mutate=(3, 4)).
        m = p.momentum
        moving_mean[...] = moving_mean * m + mean.astype(moving_mean.dtype) * (1 - m)
        moving_var[...] = moving_var * m + var.astype(moving_var.dtype) * (1 - m)
    dt = x.dtype
    y = y.astype(dt, copy=False)
    if not inside:
        if residual is not None:
            add = OPS["elemwise_add"]
            y = run_step(add, add.parse_params({}), xp, [residual, y])
        if relu:
            y = UNARY["relu"][0](xp, y)
    return y, mean.astype(dt), inv.astype(dt)


def _bn_normalize(p, xp, x, c, axes, gamma, beta, moving_mean, moving_var, batch, residual,
                  relu):
    """``(x - mean) * inv * gamma + beta`` with the batch (``batch``) or the moving
    statistics (then ``+ residual``, then ``max(., 0)`` where asked), and (mean, var,
    inv) per channel: the passes of each channel together, the channels split over
    the CPU workers (into a fixed number of parts with batch statistics: a
    reduction's rounding depends on the shape it runs over)."""
    nc = x.shape[c]
    y = xp.empty(x.shape, dtype=x.dtype)
    if batch:
        mean, var = xp.empty(nc, dtype=x.dtype), xp.empty(nc, dtype=x.dtype)
    else:
        mean, var = moving_mean.astype(x.dtype), moving_var.astype(x.dtype)
    inv = xp.empty(nc, dtype=x.dtype)

    def affine(lo, hi):
        """inv, then the scale and shift of channels lo:hi"""
        inv[lo:hi], scale, shift = _affine(p, xp, var[lo:hi], gamma[lo:hi], beta[lo:hi],
                                           x.dtype)
        return scale, shift
    # where numba runs (channels on axis 1): the statistics in two passes summed in
    # float64, and y in one pass, the same operations as NumPy's passes
    views = _fast_bn.channel_views(x, y, residual) if c == 1 else None
    if views is not None:
        x3, y3, r3 = views

        def part(lo, hi):
            if batch:
                _fast_bn.batch_norm_moments(x3, lo, mean[lo:hi], var[lo:hi])
            _fast_bn.batch_norm_apply(x3, lo, mean[lo:hi], *affine(lo, hi), y3, r3, relu)
    else:
        bc = (1,) * c + (-1,) + (1,) * (x.ndim - c - 1)

        def part(lo, hi):
            at = (slice(None),) * c + (slice(lo, hi),)
            xs, ys = x[at], y[at]
            if batch:
                m = xs.mean(axis=axes, keepdims=True)
                xp.subtract(xs, m, out=ys)
                mean[lo:hi] = m.reshape(-1)
                var[lo:hi] = (ys * ys).mean(axis=axes)
            else:
                xp.subtract(xs, mean[lo:hi].reshape(bc), out=ys)
            scale, shift = affine(lo, hi)
            # NOTE: ((x - mean) * scale) + beta in place, on the one fresh array; then the
            # residual sum and relu in place too (the same operations as elemwise_add, relu)
            ys *= scale.reshape(bc)
            ys += shift.reshape(bc)
            if residual is not None:
                xp.add(ys, residual[at], out=ys)
            if relu:
                xp.maximum(ys, ys.dtype.type(0), out=ys)
    # NOTE: numba's passes with batch statistics (x read three times) split from half
    # engine.PARALLEL_MIN_BYTES, as the backward's: measured in ResNet-18 b8 training at
    # 2 threads (split and serial alternated), 56x56 maps (6.4 MB) 1.4x faster split
    touched = 2 * x.nbytes if views is not None and batch else x.nbytes
    parallel(part, nc, touched, xp, fixed=batch)     # only batch statistics reduce
    return y, mean, var, inv


def _affine(p, xp, var, gamma, beta, dtype):
    """BatchNorm's per-channel ``(inv, scale, shift)`` for the variance ``var`` (of
    ``dtype``): ``y = (x - mean) * scale + shift`` (``shift`` may be ``beta`` itself:
    read only)."""
    inv = xp.sqrt(var + p.eps)
    xp.divide(1, inv, out=inv)
    return (inv, inv if p.fix_gamma else inv * gamma.astype(dtype, copy=False),
            beta.astype(dtype, copy=False))


def moving_affine(p, xp, dtype, gamma, beta, moving_mean, moving_var):
    """Inference BatchNorm (the moving statistics) on data of ``dtype`` (float32 or
    float64) as ``(mean, inv, scale, shift)`` per channel, the values
    :func:`batch_norm` computes, for a kernel that applies ``(x - mean) * scale +
    shift`` itself (``fused.py``), to read only (``mean`` and ``shift`` may be the moving
    mean and beta themselves)."""
    var = moving_var.astype(dtype, copy=False)
    found = None
    if xp is np:
        found = _fast_bn.inverse_scale(var, gamma.astype(dtype, copy=False), p.eps, p.fix_gamma)
    if found is None:
        return (moving_mean.astype(dtype, copy=False),) + _affine(p, xp, var, gamma, beta, dtype)
    return (moving_mean.astype(dtype, copy=False),) + found + (beta.astype(dtype, copy=False),)


def _bn_grad(p, x, y, gy, need, relu=False, keep_g=False):
    """BatchNorm's gradient from ``sum(g)`` and ``dotp = sum((x - mean) * g)`` per
    channel, as MXNet's CPU kernel: with ``a = gamma * inv``, the data gradient is
    ``a * g - (a * inv^2 * dotp / n) * (x - mean) - a * sum(g) / n`` (the formula of
    ``norm_backward``, regrouped), plus what reaches the mean and inv outputs.
    Unrecorded, the same formula runs on the channels split over the CPU workers
    (in numba's passes where they apply, else in NumPy's).

    ``relu``: ``y[0]`` is relu's output and ``gy[0]`` its gradient (a fused
    BatchNorm -> relu), so ``g`` is relu's gradient ``gy * (y > 0)``, applied as the
    sums read it; ``keep_g``: ``g`` is returned too (after the five gradients)."""
    data, gamma = x[0], x[1]
    if gy[0] is None:
        gy = fill_missing(gy, y)
    c, axes, bc = _bn_axes(p, data.ndim)
    inv = y[2]
    a = inv if p.fix_gamma else gamma * inv
    # As MXNet: the backward pass's mode (not the forward's) picks the batch formula.
    batch = _state.training and not p.use_global_stats
    n = _count(data.shape, axes)
    found = None
    if c == 1 and gy[1] is None and gy[2] is None:
        found = _bn_grad_fast(data, y[1], gy[0], y[0] if relu else None, a, inv, n, batch,
                              need[0], relu and keep_g)
    if found is None:
        found = _bn_grad_numpy(p, data, y, gy, a, inv, n, batch, c, axes, bc, need[0], relu,
                               keep_g)
    gbeta, dotp, gx, g_full = found
    ggamma = nd.zeros_like(gamma) if p.fix_gamma else dotp * inv
    return [gx, ggamma, gbeta, None, None] + ([g_full] if keep_g else [])


def _bn_grad_fast(data, mean, gy, relu_y, a, inv, n, batch, want_x, keep_g):
    """(sum(g), dotp, gx, g) of :func:`_bn_grad` in numba's passes over parts of the
    channels (axis 1), or None where they do not apply: the sums in one pass (in
    float64), gx in another (NumPy's ``g * a`` without batch statistics), with the
    operations of NumPy's passes."""
    views = _fast_bn.channel_views(data, gy, relu_y)
    if views is None or any(v.dtype != data.dtype for v in (mean, a, inv)):
        return None
    x3, gy3, y3 = views
    nc = x3.shape[1]
    gbeta, dotp = np.empty(nc, dtype=data.dtype), np.empty(nc, dtype=data.dtype)
    gx = np.empty(data.shape, dtype=data.dtype) if want_x else None
    g_full = np.empty(data.shape, dtype=data.dtype) if keep_g else None
    gx3, g3 = (None if v is None else v.reshape(x3.shape) for v in (gx, g_full))

    def part(lo, hi):
        gbeta[lo:hi], dotp[lo:hi] = _fast_bn.batch_norm_grad_sums(x3, lo, mean[lo:hi], gy3, y3, g3)
        al = a[lo:hi]
        if want_x and batch:
            il = inv[lo:hi]
            k1, k2 = al * (il * il) * (dotp[lo:hi] / n), al * (gbeta[lo:hi] / n)
            _fast_bn.batch_norm_grad(x3, lo, mean[lo:hi], gy3, al, k1, k2, gx3, y3)
        elif want_x:
            g = gy3[:, lo:hi] if y3 is None else gy3[:, lo:hi] * (y3[:, lo:hi] > 0)
            np.multiply(g, al[:, None], out=gx3[:, lo:hi])
    # NOTE: split from half engine.PARALLEL_MIN_BYTES (its two passes over x and gy):
    # measured in ResNet-18 b8 training at 2 threads (split and serial alternated,
    # median of 10): 56x56 maps (6.4 MB) 1.56x faster split; 28x28 (3.2 MB) 0.95x
    parallel(part, nc, 2 * data.nbytes, np, fixed=True)
    return gbeta, dotp, gx, g_full


def _bn_grad_numpy(p, data, y, gy, a, inv, n, batch, c, axes, bc, want_x, relu, keep_g):
    """(sum(g), dotp, gx, g) of :func:`_bn_grad` in NumPy's passes (or mxlite ops on
    NDArrays, recorded), over parts of the channels where the arrays are raw and of
    one dtype."""
    arrays = [data, gy[0], a] + list(y[1:]) + [v for v in gy[1:] if v is not None]
    whole = isinstance(data, NDArray) or len({v.dtype for v in arrays}) > 1
    g_full = None
    if relu and isinstance(data, NDArray):
        gy = [nd._internal._backward_relu(gy[0], y[0])] + list(gy[1:])
        relu, g_full = False, gy[0]
    elif relu and keep_g:
        g_full = array_module_of(gy[0]).empty(gy[0].shape, dtype=gy[0].dtype)

    def channels(at=None, sl=None, out=None):
        def take(v, i):
            return v if v is None or i is None else v[i]
        return _bn_grad_channels(take(data, at), take(y[1], sl), take(gy[0], at), take(a, sl),
                                 take(inv, sl), take(gy[1], sl), take(gy[2], sl), n, batch,
                                 axes, bc, want_x, out, take(y[0], at) if relu else None,
                                 take(g_full, at) if relu else None)
    if whole:
        gbeta, dotp, gx = channels()
    else:
        gbeta, dotp, gx = _split_channels(array_module_of(data), channels, data, c, want_x)
    return gbeta, dotp, gx, g_full


def _bn_grad_channels(data, mean, g, a, inv, gy_mean, gy_inv, n, batch, axes, bc, want_x,
                      out=None, relu_y=None, g_out=None):
    """(sum(g), dotp, gx) of :func:`_bn_grad` for the channels given (gx None unless
    ``want_x``); ``out``: a raw array of one dtype with the inputs for gx, which is
    then computed in it (in place: the same numbers). ``relu_y``: ``g`` is relu's
    output gradient for its output ``relu_y``, and relu's gradient is written into
    ``g_out`` (where given).

    NOTE: methods and operators only, which a CPU worker can run on raw arrays
    (``nd`` functions take raw arrays only in the thread running the rule)."""
    def minus(v, t):
        if out is None:
            return v - t
        v -= t
        return v
    xp = array_module_of(g)
    if relu_y is not None:      # relu's rule first, as _backward_relu
        g = xp.multiply(g, relu_y > 0, out=g_out)
    gbeta = g.sum(axis=axes)
    xc = data - mean.reshape(bc)
    dotp = (xc * g).sum(axis=axes)
    gx = None
    if want_x:
        if out is None:
            gx = g * a.reshape(bc)
        else:
            gx = xp.multiply(g, a.reshape(bc), out=out)
        if batch:
            k1, k2 = a * (inv * inv) * (dotp / n), a * (gbeta / n)
            gx = minus(gx, xc * k1.reshape(bc))
            gx = minus(gx, k2.reshape(bc))
            # d mean / dx = 1 / n;  d inv / dx = -inv^3 (x - mean) / n
            if gy_mean is not None:
                gx = minus(gx, -(gy_mean.reshape(bc) / n))     # x - (-t) is x + t exactly
            if gy_inv is not None:
                gx = minus(gx, xc * (gy_inv * (inv * inv * inv) / n).reshape(bc))
    return gbeta, dotp, gx


def _split_channels(xp, channels, data, c, want_x):
    """``channels(at, sl, out)`` -> (per channel, per channel, array of ``data``'s
    shape or None) over fixed parts of the channels (axis ``c``, as
    :func:`_bn_normalize`) run by the CPU workers, each part writing its share of
    the array (unless ``want_x`` is false)."""
    shape = data.shape
    gx = xp.empty(shape, dtype=data.dtype) if want_x else None

    def part(lo, hi):
        at = (slice(None),) * c + (slice(lo, hi),)
        return channels(at, slice(lo, hi), None if gx is None else gx[at])
    parts = parallel(part, shape[c], data.nbytes, xp, fixed=True)
    if len(parts) == 1:
        return parts[0]
    return xp.concatenate([r[0] for r in parts]), xp.concatenate([r[1] for r in parts]), gx


def _bn_infer_shape(p, shapes):
    shapes = list(shapes)
    d = shapes[0]
    if d is None or len(d) == 0:
        return shapes
    ch = d[norm_axis(p.axis, len(d))]
    if ch == 0:
        return shapes
    for i, arg in enumerate(("gamma", "beta", "moving_mean", "moving_var"), 1):
        got = shapes[i]
        if got is None or len(got) == 0 or 0 in got:
            shapes[i] = (ch,)
        else:
            _check_param("BatchNorm", arg, got, (ch,), d)
    if 0 in d:
        return shapes
    return shapes, [tuple(d), (ch,), (ch,)]


def bn_params(extra_output):
    """The params every BatchNorm flavour takes (BatchNorm, SyncBatchNorm, BatchNorm_v1);
    ``extra_output`` says what ``output_mean_var`` adds besides the mean."""
    return [Param("eps", parse_float, 1e-3, "Added to the variance."),
            Param("momentum", parse_float, 0.9, "Decay of the moving statistics."),
            Param("fix_gamma", parse_bool, True, "Treat gamma as 1 (zero gradient)."),
            Param("use_global_stats", parse_bool, False,
                  "Use the moving statistics in training mode too."),
            Param("output_mean_var", parse_bool, False,
                  "Also return the mean and %s." % extra_output)]


register_op("BatchNorm", _bn_compute, gradient=_bn_grad,
            saves="xy", batchwise=rows("data", when=inference),
            inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
            num_outputs=3, num_visible_outputs=lambda p: 3 if p.output_mean_var else 1,
            mutate=(3, 4), no_grad_inputs=(3, 4), infer_shape=_bn_infer_shape,
            params=bn_params("1/sqrt(var + eps)") + [
                    Param("axis", parse_int, 1, "The channel axis."),
                    Param("cudnn_off", parse_bool, False, "Ignored."),
                    Param("min_calib_range", optional(parse_float), None, "Ignored."),
                    Param("max_calib_range", optional(parse_float), None, "Ignored.")],
            doc="Batch normalisation over every axis but ``axis``. In training mode the batch "
                "statistics are used and ``moving_mean``/``moving_var`` are updated in place "
                "(``moving = momentum * moving + (1 - momentum) * batch``, biased variance); in "
                "predict mode the moving statistics are used.", same_shape=(0,))


# -- SyncBatchNorm ------------------------------------------------------------------------------

def _sync_as_bn(p):
    """BatchNorm's params for a SyncBatchNorm on one device (channels on axis 1)."""
    if p.ndev != 1:
        raise MXNetError(
            "SyncBatchNorm: ndev=%d; mxlite runs the contexts of a split batch one after "
            "another, so their statistics cannot be synchronised: use ndev=1 (one device) "
            "or BatchNorm" % p.ndev)
    return OPS["BatchNorm"].parse_params(dict(
        eps=p.eps, momentum=p.momentum, fix_gamma=p.fix_gamma,
        use_global_stats=p.use_global_stats, output_mean_var=p.output_mean_var))


register_op("_contrib_SyncBatchNorm",
            lambda p, xp, *x: _bn_compute(_sync_as_bn(p), xp, *x),
            gradient=lambda p, x, y, gy, need: _bn_grad(_sync_as_bn(p), x, y, gy, need), saves="xy",
            inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
            num_outputs=3, num_visible_outputs=lambda p: 3 if p.output_mean_var else 1,
            mutate=(3, 4), no_grad_inputs=(3, 4), infer_shape=_bn_infer_shape,
            params=bn_params("1/sqrt(var + eps)") + [
                    Param("ndev", parse_int, 1, "Number of devices sharing the statistics; "
                          "mxlite supports 1."),
                    Param("key", parse_str, "", "Name shared by the devices' ops.")],
            doc="Batch normalisation whose statistics are shared by ``ndev`` devices. mxlite "
                "runs one device at a time, so it supports ``ndev=1``: BatchNorm over axis 1 "
                "(MXNet's synchronised kernel rounds its variance differently, within about "
                "1e-6).", same_shape=(0,))


# -- LayerNorm -----------------------------------------------------------------------------------

def _ln_compute(p, xp, x, gamma, beta):
    a = norm_axis(p.axis, x.ndim)
    _check_param("LayerNorm", "gamma", gamma.shape, (x.shape[a],), x.shape)
    _check_param("LayerNorm", "beta", beta.shape, (x.shape[a],), x.shape)
    bc = [1] * x.ndim
    bc[a] = -1
    xw = _work(x)
    mean, var = _moments(xp, xw, (a,))
    std = xp.sqrt(var + p.eps)
    y = (xw - mean) / std * gamma.reshape(bc) + beta.reshape(bc)
    dt = x.dtype
    return y.astype(dt, copy=False), mean.astype(dt), std.astype(dt)


def _ln_grad(p, x, y, gy, need):
    gy = fill_missing(gy, y)
    data, gamma = x[0], x[1]
    a = norm_axis(p.axis, data.ndim)
    bc = [1] * data.ndim
    bc[a] = -1
    mean, std = y[1], y[2]
    inv = 1 / std
    g = gy[0]
    xhat = (data - mean) * inv
    others = tuple(i for i in range(data.ndim) if i != a)
    gx = norm_backward(data, mean, inv, g * gamma.reshape(tuple(bc)), (a,), gy[1], None, gy[2])
    return [gx, nd.sum(g * xhat, axis=others), nd.sum(g, axis=others)]


register_op("LayerNorm", _ln_compute, gradient=_ln_grad, saves="xy",
            batchwise=rows("data", when=axis_not_batch()),
            inputs=("data", "gamma", "beta"),
            num_outputs=3, num_visible_outputs=lambda p: 3 if p.output_mean_var else 1,
            params=[Param("axis", parse_int, -1, "The axis to normalise over."),
                    Param("eps", parse_float, 1e-5, "Added to the variance."),
                    Param("output_mean_var", parse_bool, False,
                          "Also return the mean and sqrt(var + eps) (axis kept).")],
            doc="Layer normalisation over ``axis``, scaled by ``gamma`` and shifted by ``beta`` "
                "(both of the size of that axis).", same_shape=(0,))


# -- InstanceNorm and GroupNorm ---------------------------------------------------------------

def _in_compute(p, xp, x, gamma, beta):
    if x.ndim < 3:
        raise MXNetError("InstanceNorm: data must have at least 3 dims (N, C, spatial...), "
                         "got shape %s" % (x.shape,))
    _check_param("InstanceNorm", "gamma", gamma.shape, (x.shape[1],), x.shape)
    _check_param("InstanceNorm", "beta", beta.shape, (x.shape[1],), x.shape)
    bc = (1, -1) + (1,) * (x.ndim - 2)
    xw = _work(x)
    mean, var = _moments(xp, xw, tuple(range(2, x.ndim)))
    y = (xw - mean) / xp.sqrt(var + p.eps) * gamma.reshape(bc) + beta.reshape(bc)
    return y.astype(x.dtype, copy=False)


def _stats(x, axes, eps):
    """Batch mean and 1/sqrt(var + eps) over ``axes``, in mxlite ops (differentiable)."""
    mean = nd.mean(x, axis=axes, keepdims=True)
    xc = x - mean
    return mean, nd.rsqrt(nd.mean(xc * xc, axis=axes, keepdims=True) + eps)


def _in_grad(p, x, y, gy, need):
    data, gamma = x[0], x[1]
    axes = tuple(range(2, data.ndim))
    bc = (1, -1) + (1,) * (data.ndim - 2)
    mean, inv = _stats(data, axes, p.eps)
    g = gy[0]
    xhat = (data - mean) * inv
    gx = norm_backward(data, mean, inv, g * gamma.reshape(bc), axes)
    others = (0,) + axes
    return [gx, nd.sum(g * xhat, axis=others), nd.sum(g, axis=others)]


register_op("InstanceNorm", _in_compute, gradient=_in_grad, saves="x", batchwise=rows("data"),
            inputs=("data", "gamma", "beta"),
            params=[Param("eps", parse_float, 1e-3, "Added to the variance.")],
            doc="Instance normalisation: each (sample, channel) over its spatial axes, then "
                "``gamma``/``beta`` per channel.", same_shape=(0,))


def _gn_shapes(p, x):
    g = p.num_groups
    if x.ndim < 2 or g <= 0 or x.shape[1] % g:
        raise MXNetError("GroupNorm: num_groups=%d must divide the channels (axis 1) of data "
                         "with shape %s" % (g, tuple(x.shape)))
    grouped = (x.shape[0], g, -1)
    bc = (1, g, 1)
    return grouped, bc


def _gn_compute(p, xp, x, gamma, beta):
    grouped, bc = _gn_shapes(p, x)
    _check_param("GroupNorm", "gamma", gamma.shape, (p.num_groups,), x.shape)
    _check_param("GroupNorm", "beta", beta.shape, (p.num_groups,), x.shape)
    xg = _work(x).reshape(grouped)
    mean, var = _moments(xp, xg, (2,))
    std = xp.sqrt(var + p.eps)
    y = ((xg - mean) / std * gamma.reshape(bc) + beta.reshape(bc)).reshape(x.shape)
    dt = x.dtype
    mshape = (x.shape[0], p.num_groups) + (1,) * (x.ndim - 2)
    return y.astype(dt, copy=False), mean.reshape(mshape).astype(dt), \
        std.reshape(mshape).astype(dt)


def _gn_grad(p, x, y, gy, need):
    data, gamma = x[0], x[1]
    gy = fill_missing(gy, y)
    grouped, bc = _gn_shapes(p, data)
    n, g = data.shape[0], p.num_groups
    xg = data.reshape(grouped)
    mean, std = y[1].reshape((n, g, 1)), y[2].reshape((n, g, 1))
    inv = 1 / std
    gyg = gy[0].reshape(grouped)
    xhat = (xg - mean) * inv
    gx = norm_backward(xg, mean, inv, gyg * gamma.reshape(bc), (2,),
                       gy[1].reshape((n, g, 1)), None, gy[2].reshape((n, g, 1)))
    return [gx.reshape(data.shape), nd.sum(gyg * xhat, axis=(0, 2)), nd.sum(gyg, axis=(0, 2))]


register_op("GroupNorm", _gn_compute, gradient=_gn_grad, saves="xy", batchwise=rows("data"),
            inputs=("data", "gamma", "beta"),
            num_outputs=3, num_visible_outputs=lambda p: 3 if p.output_mean_var else 1,
            params=[Param("num_groups", parse_int, 1, "Number of channel groups.", low=1),
                    Param("eps", parse_float, 1e-5, "Added to the variance."),
                    Param("output_mean_var", parse_bool, False,
                          "Also return the mean and sqrt(var + eps) per group.")],
            doc="Group normalisation: channels split into ``num_groups`` groups, each "
                "normalised per sample; ``gamma``/``beta`` have shape ``(num_groups,)`` as in "
                "MXNet 1.x.", same_shape=(0,))


# -- L2Normalization ------------------------------------------------------------------------------

# mode: the axes (of ndim) normalised together
_L2_AXES = {"instance": lambda ndim: tuple(range(1, ndim)),
            "channel": lambda ndim: (1,),
            "spatial": lambda ndim: tuple(range(2, ndim))}


def _l2_axes(p, ndim):
    return _L2_AXES[p.mode](ndim)


def _l2_compute(p, xp, x):
    axes = _l2_axes(p, x.ndim)
    xw = _work(x)
    n = xp.sqrt((xw * xw).sum(axis=axes, keepdims=True) + p.eps)
    return (xw / n).astype(x.dtype, copy=False)


def _l2_grad(p, x, y, gy, need):
    axes = _l2_axes(p, x[0].ndim)
    data, g = x[0], gy[0]
    n = nd.sqrt(nd.sum(data * data, axis=axes, keepdims=True) + p.eps)
    out = data / n
    return [(g - out * nd.sum(g * out, axis=axes, keepdims=True)) / n]


register_op("L2Normalization", _l2_compute, gradient=_l2_grad, saves="x",
            params=[Param("eps", parse_float, 1e-10, "Added to the sum of squares."),
                    Param("mode", None, "instance", "instance (all but axis 0), channel "
                          "(axis 1) or spatial (axes 2...).", choices=_L2_AXES)],
            doc="``x / sqrt(sum(x^2) + eps)`` over the axes chosen by ``mode``.", same_shape=(0,))


# -- LRN ------------------------------------------------------------------------------

def _window_sum(p, xp, x):
    """Sum over the channels [c - h, c + h], h = (nsize - 1) // 2, zero-padded.

    NOTE: as in MXNet, an even ``nsize`` sums ``nsize - 1`` channels (nsize=2 is the
    channel alone) while the scale still divides by ``nsize``.
    """
    h = (p.nsize - 1) // 2
    c = x.shape[1]
    pad = [(0, 0)] * x.ndim
    pad[1] = (h + 1, h)     # one extra leading zero: the running sum starts at 0
    csum = xp.cumsum(xp.pad(x, pad), axis=1)
    return csum[:, 2 * h + 1:2 * h + 1 + c] - csum[:, :c]


def _window_sum_grad(p, x, y, gy, need):
    # The window is symmetric, so the sum is its own adjoint.
    return [nd._internal._lrn_window_sum(gy[0], nsize=p.nsize)]


register_op("_lrn_window_sum", _window_sum, gradient=_window_sum_grad, saves="", check=ranks(data=2),
            params=[Param("nsize", parse_int, doc="The channel window size.", low=1)],
            doc="Sum of ``data`` over a window of ``nsize`` channels (LRN's neighbourhood).")


def _lrn_scale(p, xp, x):
    sq = _window_sum(p, xp, x * x)
    return p.knorm + (p.alpha / p.nsize) * sq


def _lrn_compute(p, xp, x):
    if p.nsize < 1:
        raise MXNetError("nsize must be positive, got %d" % p.nsize)
    s = _lrn_scale(p, xp, x)
    return x * s ** -p.beta


def _lrn_grad(p, x, y, gy, need):
    # y = x * s^-b with s = k + (a/n) W(x^2): gx = gy s^-b - (2ab/n) x W^T(gy x s^(-b-1)).
    data, g = x[0], gy[0]
    s = p.knorm + (p.alpha / p.nsize) * nd._internal._lrn_window_sum(data * data, nsize=p.nsize)
    wt = nd._internal._lrn_window_sum(g * data * s ** (-p.beta - 1), nsize=p.nsize)
    return [g * s ** -p.beta - (2 * p.alpha * p.beta / p.nsize) * data * wt]


register_op("LRN", _lrn_compute, check=ranks(data=3), gradient=_lrn_grad, saves="x",
            params=[Param("alpha", parse_float, 1e-4, "The variance scaling."),
                    Param("beta", parse_float, 0.75, "The power."),
                    Param("knorm", parse_float, 2.0, "The additive constant."),
                    Param("nsize", parse_int, doc="The number of channels summed over.", low=1)],
            doc="Local response normalisation across channels: "
                "``x / (knorm + alpha / nsize * sum(x^2 over nsize channels)) ^ beta``.", same_shape=(0,))


# -- BatchNorm with relu (and a residual sum) --------------------------------------------------

def _bn_relu(p, xp, *x):
    return batch_norm(p, xp, *x, relu=True)


def _bn_add_relu(p, xp, *x):
    return batch_norm(p, xp, *x[:5], residual=x[5], relu=True)


def _bn_relu_grad(p, x, y, gy, need):
    """relu's rule (its mask from the output), then BatchNorm's (which reads only the
    saved mean and inv), in the same passes; the residual, where there is one, takes
    relu's gradient as elemwise_add passes it on."""
    if len(x) == 5:
        return _bn_grad(p, x, y, gy, need, relu=True)
    gx = _bn_grad(p, x[:5], y, gy, need[:5], relu=True, keep_g=need[5])
    return gx if need[5] else gx + [None]


def _register_bn_relu():
    bn = OPS["BatchNorm"]
    common = dict(gradient=_bn_relu_grad, saves="xy", num_outputs=3,
                  num_visible_outputs=bn.num_visible_outputs, mutate=bn.mutate,
                  no_grad_inputs=bn.no_grad_inputs, params=list(bn.params.values()),
                  same_shape=(0,), batchwise=rows("data", "residual", when=inference))
    register_op("_contrib_BatchNormWithReLU", _bn_relu, inputs=bn.inputs,
                infer_shape=bn.infer_shape_rule, **common,
                doc="``relu(BatchNorm(...))`` in one op, with BatchNorm's params, outputs and "
                    "moving statistics (updated in place in training mode).")
    register_op("_batch_norm_add_relu", _bn_add_relu, inputs=bn.inputs + ("residual",),
                infer_shape=lambda p, shapes: _bn_add_infer_shape(bn, p, shapes), **common,
                doc="``relu(residual + BatchNorm(data, ...))`` in one op (what a hybridized "
                    "graph runs for ResNet's BatchNorm -> elemwise_add -> relu), with "
                    "BatchNorm's params, outputs and moving statistics.")


def _bn_add_infer_shape(bn, p, shapes):
    found = bn.infer_shape_rule(p, list(shapes[:5]))
    if isinstance(found, tuple):
        return list(found[0]) + [shapes[5] or found[1][0]], found[1]
    return list(found) + [shapes[5]]


_register_bn_relu()
