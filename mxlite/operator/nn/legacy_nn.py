"""MXNet 1.x's legacy neural-network ops: the ``_v1`` ops, SVMOutput and
IdentityAttachKLSparseReg.

``Convolution_v1`` is ``Convolution`` for 2-D NCHW data (what the v1 kernel runs).
``Pooling_v1`` pads with zeros (so a max over a window reaching into the padding is
at least 0) and its ``avg`` always divides by the kernel area: it is ``Pooling`` with
``sum``/``max`` on explicitly zero-padded data. ``BatchNorm_v1`` returns the batch
*variance* as its third output (``BatchNorm`` returns 1/sqrt(var + eps)) and its
backward in training mode uses the batch formula with whatever statistics the forward
used, the moving ones too after a predict-mode forward, as MXNet's does.
"""

from ... import nd
from ...autograd import _state
from ...base import MXNetError, parse_bool, parse_float, parse_shape
from ..registry import register_op, Param, get_op
from ..util import detached, raw_data
from .normalization import bn_params

_CONV = get_op("Convolution")
_POOL = get_op("Pooling")


# -- Convolution_v1 ---------------------------------------------------------------------------

def _conv_params(p):
    if len(p.kernel) != 2:
        raise MXNetError("Convolution_v1: kernel %s: only 2-D convolution is supported "
                         "(use Convolution for 1-D and 3-D)" % (p.kernel,))
    if p.layout not in (None, "NCHW"):
        raise MXNetError("Convolution_v1: layout %r: only NCHW is supported" % p.layout)
    return _CONV.parse_params(dict(p.items()))


register_op("Convolution_v1",
            lambda p, xp, *x: _CONV.compute(_conv_params(p), xp, *x),
            inputs=lambda p: _CONV.input_names(_conv_params(p)),
            gradient=lambda p, x, y, gy, need: _CONV.gradient(_conv_params(p), x, y, gy, need),
            infer_shape=lambda p, shapes: _CONV.infer_shape_rule(_conv_params(p), shapes),
            params=list(_CONV.params.values()), saves=_CONV.saves,
            num_outputs=_CONV.num_outputs, num_visible_outputs=_CONV.num_visible_outputs,
            output_names=_CONV.output_names,
            doc="MXNet's first Convolution: ``Convolution`` for 2-D NCHW data only.")


# -- Pooling_v1 -------------------------------------------------------------------------------

def _pool_setup(p, shape):
    """(pad, Pooling params, divisor) of a Pooling_v1 call on data of ``shape``."""
    if len(shape) != 4:
        raise MXNetError("Pooling_v1: data must be 4-D (N, C, H, W), got shape %s"
                         % (tuple(shape),))
    if not p.global_pool and len(p.kernel) != 2:
        raise MXNetError("Pooling_v1: kernel %s must be 2-D" % (p.kernel,))
    pad = (0, 0) if p.global_pool or not p.pad else tuple(p.pad)
    pp = _POOL.parse_params({"kernel": p.kernel, "global_pool": p.global_pool,
                             "pool_type": "max" if p.pool_type == "max" else "sum",
                             "pooling_convention": p.pooling_convention,
                             "stride": p.stride, "pad": (0, 0)})
    area = 1
    if p.pool_type == "avg":
        area = shape[2] * shape[3] if p.global_pool else p.kernel[0] * p.kernel[1]
    return pad, pp, area


def _pool_v1(p, xp, x):
    (ph, pw), pp, area = _pool_setup(p, x.shape)
    xpad = xp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw))) if ph or pw else x
    y = _POOL.compute(pp, xp, xpad)[0]
    return y if area == 1 else (y / x.dtype.type(area)).astype(x.dtype)


def _pool_v1_grad(p, x, y, gy, need):
    data = x[0]
    (ph, pw), pp, area = _pool_setup(p, data.shape)
    xpad = data
    if ph or pw:
        xpad = nd.pad(data, mode="constant", pad_width=(0, 0, 0, 0, ph, ph, pw, pw))
    ypool = y[0] if area == 1 else y[0] * area
    g = gy[0] if area == 1 else gy[0] / area
    gx = _POOL.gradient(pp, [xpad], [ypool], [g], [True])[0]
    if ph or pw:
        h, w = data.shape[2:]
        gx = nd.slice(gx, begin=(None, None, ph, pw), end=(None, None, ph + h, pw + w))
    return [gx]


register_op("Pooling_v1", _pool_v1, gradient=_pool_v1_grad, saves="xy",
            params=[Param("kernel", parse_shape, (), "The window (kh, kw).", low=1),
                    Param("pool_type", None, "max", choices=("max", "avg", "sum")),
                    Param("global_pool", parse_bool, False, "Pool over all of H and W."),
                    Param("pooling_convention", None, "valid",
                          "'valid' (floor) or 'full' (ceil) output size.",
                          choices=("valid", "full")),
                    Param("stride", parse_shape, (), "The step (1, 1 if empty).", low=1),
                    Param("pad", parse_shape, (), "Zero padding on both sides.", low=0)],
            doc="MXNet's first Pooling (4-D data): the padding is zeros (a max reaching into "
                "it is at least 0) and ``avg`` divides by the whole kernel area.")


# -- BatchNorm_v1 -----------------------------------------------------------------------------

def _bn_axes(ndim):
    if ndim < 2:
        raise MXNetError("BatchNorm_v1: data must have a channel axis 1; got %d-D data" % ndim)
    return (0,) + tuple(range(2, ndim)), (1, -1) + (1,) * (ndim - 2)


def _bn_v1(p, xp, x, gamma, beta, moving_mean, moving_var):
    axes, bc = _bn_axes(x.ndim)
    for arg, a in (("gamma", gamma), ("beta", beta), ("moving_mean", moving_mean),
                   ("moving_var", moving_var)):
        if a.shape != (x.shape[1],):
            raise MXNetError("BatchNorm_v1: %s has shape %s, expected (%d,) for data of shape "
                             "%s" % (arg, a.shape, x.shape[1], x.shape))
    if _state.training and not p.use_global_stats:
        mean = x.mean(axis=axes)
        var = xp.square(x - mean.reshape(bc)).mean(axis=axes)
        m = p.momentum
        moving_mean[...] = moving_mean * m + mean * (1 - m)
        moving_var[...] = moving_var * m + var * (1 - m)
    else:
        mean, var = moving_mean.copy(), moving_var.copy()
    scale = 1 / xp.sqrt(var + x.dtype.type(p.eps))
    if not p.fix_gamma:
        scale = scale * gamma
    y = (x - mean.reshape(bc)) * scale.reshape(bc) + beta.reshape(bc)
    return y.astype(x.dtype), mean.astype(x.dtype), var.astype(x.dtype)


def _bn_v1_grad(p, x, y, gy, need):
    data, gamma = x[0], x[1]
    axes, bc = _bn_axes(data.ndim)
    mean, var = y[1].reshape(bc), y[2].reshape(bc)
    inv = (var + p.eps) ** -0.5
    xc = data - mean
    g = gy[0]
    gbeta = nd.sum(g, axis=axes)
    ggamma = nd.zeros_like(gamma) if p.fix_gamma else nd.sum(g * xc * inv, axis=axes)
    gh = g if p.fix_gamma else g * gamma.reshape(bc)
    if _state.training and not p.use_global_stats:
        # NOTE: MXNet's v1 batch formula keeps the sum(xc) term, which is not zero when
        # the statistics are the moving ones (a predict-mode forward).
        m = data.size // data.shape[1]
        gvar = nd.sum(gh * xc, axis=axes, keepdims=True) * (-0.5) * inv ** 3
        gmean = (nd.sum(gh, axis=axes, keepdims=True) * -inv
                 + gvar * nd.sum(xc, axis=axes, keepdims=True) * (-2.0 / m))
        gx = gh * inv + gvar * xc * (2.0 / m) + gmean / m
    else:
        gx = gh * inv
    return [gx, ggamma, gbeta, None, None]


def _bn_v1_shape(p, shapes):
    shapes = list(shapes)
    d = shapes[0]
    if d is not None and len(d) >= 2 and d[1]:
        shapes[1:] = [(d[1],) if s is None or 0 in s or not s else s for s in shapes[1:]]
    return shapes


register_op("BatchNorm_v1", _bn_v1, gradient=_bn_v1_grad, saves="xy",
            inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
            num_outputs=3, num_visible_outputs=lambda p: 3 if p.output_mean_var else 1,
            output_names=("output", "mean", "var"),
            mutate=(3, 4), no_grad_inputs=(3, 4), infer_shape=_bn_v1_shape,
            params=bn_params("the variance used"),
            doc="MXNet's first BatchNorm (channel axis 1): as ``BatchNorm`` but its extra "
                "outputs are the mean and the *variance*.")


# -- SVMOutput ----------------------------------------------------------------------------------

def _svm_check(x, label):
    if x.ndim != 2 or label.shape != (x.shape[0],):
        raise MXNetError("SVMOutput: expected data (n, classes) and label (n,); got %s and %s"
                         % (x.shape, label.shape))


def _svm_forward(p, xp, x, label):
    _svm_check(x, label)
    return x.copy()


def _svm_grad(p, x, y, gy, need):
    data, label = x
    onehot = nd.one_hot(label, depth=data.shape[1], dtype=data.dtype)
    c = p.regularization_coefficient
    if p.use_linear:        # L1-SVM: the hinge's slope
        g_true = (data < p.margin).astype(data.dtype) * -c
        g_other = (-data < p.margin).astype(data.dtype) * c
    else:                   # L2-SVM: twice the squared hinge's slope
        g_true = nd.relu(p.margin - data) * (-2 * c)
        g_other = nd.relu(data + p.margin) * (2 * c)
    return [nd.where(onehot, g_true, g_other), None]


register_op("SVMOutput", _svm_forward, gradient=_svm_grad, saves="x", inputs=("data", "label"),
            no_grad_inputs=(1,),
            params=[Param("margin", parse_float, 1.0, "The hinge margin."),
                    Param("regularization_coefficient", parse_float, 1.0,
                          "Scales the gradient."),
                    Param("use_linear", parse_bool, False, "L1-SVM if True, L2-SVM if False.")],
            doc="Identity forward; backward gives the one-vs-all hinge-loss gradient for "
                "``label`` (the head gradient is ignored, as in SoftmaxOutput).")


# -- IdentityAttachKLSparseReg ------------------------------------------------------------------

def _kl_forward(p, xp, x, moving_avg):
    if x.ndim < 2 or moving_avg.shape != (x.shape[1],):
        raise MXNetError("IdentityAttachKLSparseReg: moving_avg has shape %s, expected (%s,) "
                         "for data of shape %s" % (moving_avg.shape,
                                                   x.shape[1] if x.ndim > 1 else "?", x.shape))
    return x.copy()


def _kl_grad(p, x, y, gy, need):
    data, avg = x
    axes = (0,) + tuple(range(2, data.ndim))
    bc = (1, -1) + (1,) * (data.ndim - 2)
    # As MXNet: the backward pass updates the moving average of the mean activation,
    # then penalises its KL divergence from the target.
    batch = nd.mean(detached(data), axis=axes)
    new = detached(avg) * p.momentum + batch * (1 - p.momentum)
    raw_data(avg)[...] = raw_data(new)
    t = p.sparseness_target
    reg = (-t / new + (1 - t) / (1 - new)) * p.penalty
    return [gy[0] + reg.reshape(bc), None]


def _kl_shape(p, shapes):
    shapes = list(shapes)
    d = shapes[0]
    if d is not None and len(d) >= 2 and d[1] and (shapes[1] is None or 0 in shapes[1]):
        shapes[1] = (d[1],)
    return shapes


register_op("IdentityAttachKLSparseReg", _kl_forward, gradient=_kl_grad, saves="",
            inputs=("data", "moving_avg"), mutate=(1,), no_grad_inputs=(1,),
            infer_shape=_kl_shape,
            params=[Param("sparseness_target", parse_float, 0.1, "The target mean activation."),
                    Param("penalty", parse_float, 0.001, "The regularisation weight."),
                    Param("momentum", parse_float, 0.9, "Decay of the moving average.")],
            doc="Identity forward; backward adds ``penalty * (-t / a + (1 - t) / (1 - a))`` "
                "per channel, ``a`` the moving average of the channel's mean activation "
                "(updated by the backward pass, as MXNet's).")

