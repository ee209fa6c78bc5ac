"""MXNet's fused optimizer update ops: ``sgd_update``, ``sgd_mom_update``, ``nag_mom_update``,
``adam_update``, ``rmsprop_update``, ``rmspropalex_update``, ``ftrl_update``, ``ftml_update``,
``signsgd_update``, ``signum_update``, ``lamb_update_phase1/2``, ``_adamw_update``
(``mx.nd.contrib.adamw_update``), their multi-precision ``mp_*`` twins and
``multi_[mp_]sgd[_mom]_update``.

Each op takes the weight, the gradient and its states (momentum, moments ...) and returns
the new weight; the states are updated in place (declared with ``mutate``), and MXNet's
optimizers pass ``out=weight``. ``clip_gradient < 0`` turns clipping off (``0`` clips
everything to 0, as in MXNet's kernels).

The kernels below are MXNet 1.9.1's, operation for operation: the float params are cast to
the weight's dtype first and every product and sum is rounded in that dtype, in the
kernel's order, so float32 results are bit-exact. ``mx.optimizer`` calls the same kernel
functions (``sgd_mom_kernel`` ...), so an Optimizer and its op cannot drift apart.

NOTE: MXNet's ``nag_mom_update`` (like ``mp_nag_mom_update``) writes the output before it
updates the momentum and reads the weight again for the momentum's weight decay: with
``out=weight`` (what its optimizers pass) that is the *new* weight, with a separate output
the old one. mxlite always gives the in-place numbers; they differ only when ``wd != 0``
and no ``out=weight`` is passed.
"""
import math

import numpy as np

from ...base import MXNetError, parse_bool, parse_float, parse_float_tuple, parse_int
from ..registry import register_op, Param, dtype_error
from ..util import host, per_item_names

_F32 = np.dtype(np.float32)


_SCALARS = {}


def _scalars(w, *vals):
    """``vals`` as scalars of ``w``'s dtype.

    NOTE: MXNet stores the params as float32 and casts them to DType in the kernel, so a
    float64 weight sees ``lr=0.05`` as float32(0.05), not as the double 0.05.
    """
    t = w.dtype.type
    key = (t,) + vals
    try:
        return _SCALARS[key]
    except KeyError:
        pass
    except TypeError:       # an unhashable value: convert without caching
        key = None
    out = [t(v) for v in vals] if t is np.float32 else [t(np.float32(v)) for v in vals]
    if key is not None:
        if len(_SCALARS) > 1024:    # a schedule changes lr every step: keep it bounded
            _SCALARS.clear()
        _SCALARS[key] = out
    return out


def _rescaled(xp, g, rescale, clip):
    """``clip(rescale * g)``; ``clip < 0`` turns clipping off."""
    gr = g * rescale
    if clip >= 0:
        xp.clip(gr, -clip, clip, out=gr)
    return gr


def _lr_step(xp, g, lr, rescale, clip):
    """``lr * clip(rescale * g)``, or ``(lr * rescale) * g`` without clipping: the two
    roundings of MXNet's SGD kernels."""
    if clip >= 0:
        return lr * _rescaled(xp, g, rescale, clip)
    return (lr * rescale) * g


def _sign(xp, x, t):
    """``(x > 0) - (x < 0)`` in dtype ``t``: MXNet's sign (0 for NaN)."""
    return (x > 0).astype(t) - (x < 0).astype(t)


def _update_op(name, compute, inputs, **kwargs):
    """``register_op`` for an update op: its inputs but ``rescale_grad`` and LAMB's norms
    have the weight's shape (checked before the kernel writes anything)."""
    check = update_rules(inputs, skip=("rescale_grad", "r1", "r2"))
    return register_op(name, compute, inputs=inputs, check=check, **kwargs)


def update_rules(names, skip=(), count=None):
    """The rules of an update op (its ``check``), in one pass for speed: every input
    floating-point (MXNet's update kernels have no integer or bool code), ``rescale_grad``
    and LAMB's norms of one element, and the other inputs ``names`` (one group per weight
    for the multi-weight ops, ``count`` the param that counts them) of the weight's shape.

    NOTE: MXNet raises for a gradient or state of another shape. NumPy would broadcast
    it (a silently wrong update) or fail after updating the states before it.
    """
    stride = len(names)
    checked = [i for i, n in enumerate(names) if i and n not in skip]
    plans = {}          # number of inputs -> the positions of the one-element arrays

    def fail(start, i, x, groups):
        name = names[i] + ("_%d" % (start // stride) if groups > 1 else "")
        raise MXNetError("%s has shape %s, expected %s (the weight's)"
                         % (name, tuple(x[start + i].shape), tuple(x[start].shape)))

    def check(p, *x):
        for i, a in enumerate(x):
            if a.dtype.kind != "f":
                dtype_error(check.op, p, i, a, "f")
        at = plans.get(len(x))
        if at is None:      # the number of inputs fixes their names
            at = plans[len(x)] = [(i, n) for i, n in enumerate(check.op.input_names(p))
                                  if n in _SCALAR_ARRAYS]
        for i, name in at:
            if x[i].size != 1:
                raise MXNetError("%s has shape %s, expected (1,)" % (name, x[i].shape))
        groups = 1 if count is None else getattr(p, count)
        for start in range(0, min(groups * stride, len(x)), stride):
            shape = x[start].shape
            for i in checked:
                if start + i < len(x) and x[start + i].shape != shape:
                    fail(start, i, x, groups)
    check.op = None     # set by Op
    return check


_SCALAR_ARRAYS = frozenset(("rescale_grad", "r1", "r2"))


# ----------------------------------------------------------------------------------------
# Kernels on raw arrays: states updated in place, the new weight returned.

def sgd_kernel(xp, w, g, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    """``(1 - lr * wd) * w - lr * clip(rescale_grad * g)`` (MXNet's ``SGDKernel``)."""
    lr, wd, rescale, clip = _scalars(w, lr, wd, rescale_grad, clip_gradient)
    step = _lr_step(xp, g, lr, rescale, clip)
    return (w.dtype.type(1) - lr * wd) * w - step


def sgd_step(xp, w, g, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    """``lr * wd * w + lr * clip(rescale_grad * g)`` as a new array: what a zero-momentum
    ``sgd_mom_kernel`` subtracts from the weight (``(0 - a) - b`` is ``-(a + b)``)."""
    lr, wd, rescale, clip = _scalars(w, lr, wd, rescale_grad, clip_gradient)
    step = _lr_step(xp, g, lr, rescale, clip)
    if wd:
        step += (lr * wd) * w
    return step


def sgd_mom_kernel(xp, w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0):
    """``mom = momentum * mom - lr * wd * w - lr * clip(rescale_grad * g)``; ``w + mom``."""
    lr, momentum, wd, rescale, clip = _scalars(w, lr, momentum, wd, rescale_grad,
                                               clip_gradient)
    step = _lr_step(xp, g, lr, rescale, clip)
    mom[...] = momentum * mom - (lr * wd) * w - step
    return w + mom


def nag_mom_kernel(xp, w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0):
    """MXNet's ``NAGMomKernel`` run in place (``out=weight``)::

        mom = momentum * mom
        new_w = w - mom + (momentum + 1) * (mom - lr * (clip(rescale_grad * g) + wd * w))
        mom = mom - lr * (clip(rescale_grad * g) + wd * new_w)
    """
    t = w.dtype.type
    lr, momentum, wd, rescale, clip = _scalars(w, lr, momentum, wd, rescale_grad,
                                               clip_gradient)
    gr = _rescaled(xp, g, rescale, clip)
    mom *= momentum
    new_w = (w - mom) + (momentum + t(1)) * (mom - lr * (gr + wd * w))
    mom -= lr * (gr + wd * new_w)
    return new_w


def signsgd_kernel(xp, w, g, lr, wd=0.0):
    """``(1 - lr * wd) * w - lr * sign(g)`` (rescaling and clipping do not change a sign)."""
    t = w.dtype.type
    lr, wd = _scalars(w, lr, wd)
    return (t(1) - lr * wd) * w - lr * _sign(xp, g, t)


def signum_kernel(xp, w, g, mom, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, wd_lh=0.0):
    """``mom = momentum * mom - (1 - momentum) * (wd * w + clip(rescale_grad * g))``;
    ``(1 - lr * wd_lh) * w + lr * sign(mom)``."""
    t = w.dtype.type
    lr, momentum, wd, rescale, clip, wd_lh = _scalars(w, lr, momentum, wd, rescale_grad,
                                                      clip_gradient, wd_lh)
    rest = t(1) - momentum
    step = rest * _rescaled(xp, g, rescale, clip) if clip >= 0 else (rest * rescale) * g
    mom[...] = momentum * mom - (rest * wd) * w - step
    return (t(1) - lr * wd_lh) * w + lr * _sign(xp, mom, t)


def adam_kernel(xp, w, g, mean, var, lr, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
                rescale_grad=1.0, clip_gradient=-1.0):
    """``g = clip(rescale_grad * g + wd * w)``; moments; ``w - lr * mean / (sqrt(var) + eps)``
    (no bias correction: MXNet's optimizer folds it into ``lr``)."""
    t = w.dtype.type
    lr, beta1, beta2, eps, wd, rescale, clip = _scalars(w, lr, beta1, beta2, epsilon, wd,
                                                        rescale_grad, clip_gradient)
    gr = g * rescale + w * wd
    if clip >= 0:
        xp.clip(gr, -clip, clip, out=gr)
    mean[...] = beta1 * mean + (t(1) - beta1) * gr
    var[...] = beta2 * var + (t(1) - beta2) * gr * gr
    return w - lr * mean / (xp.sqrt(var) + eps)


def rmsprop_kernel(xp, w, g, n, lr, gamma1=0.95, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0, clip_weights=-1.0):
    """Tieleman & Hinton: ``n = (1 - gamma1) * g**2 + gamma1 * n``;
    ``w - lr * g / sqrt(n + epsilon)``, clipped to ``clip_weights`` when ``>= 0``."""
    t = w.dtype.type
    lr, gamma1, eps, wd, rescale, clip, clip_w = _scalars(
        w, lr, gamma1, epsilon, wd, rescale_grad, clip_gradient, clip_weights)
    gr = rescale * g + wd * w
    if clip >= 0:
        xp.clip(gr, -clip, clip, out=gr)
    n[...] = (t(1) - gamma1) * (gr * gr) + gamma1 * n
    new_w = w - lr * (gr / xp.sqrt(n + eps))
    if clip_w >= 0:
        xp.clip(new_w, -clip_w, clip_w, out=new_w)
    return new_w


def rmspropalex_kernel(xp, w, g, n, mean, delta, lr, gamma1=0.95, gamma2=0.9, epsilon=1e-8,
                       wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, clip_weights=-1.0):
    """Graves's centered RMSProp: ``n``, ``mean`` (``g`` in MXNet) and ``delta`` in place;
    ``w + delta``, clipped to ``clip_weights`` when ``>= 0``."""
    t = w.dtype.type
    lr, gamma1, gamma2, eps, wd, rescale, clip, clip_w = _scalars(
        w, lr, gamma1, gamma2, epsilon, wd, rescale_grad, clip_gradient, clip_weights)
    gr = rescale * g + wd * w
    if clip >= 0:
        xp.clip(gr, -clip, clip, out=gr)
    rest = t(1) - gamma1
    n[...] = rest * gr * gr + gamma1 * n
    mean[...] = rest * gr + gamma1 * mean
    # NOTE: states with n < mean^2 give NaN, silently as in MXNet: a warning raised as an
    # error here would leave n and mean updated and delta not.
    with np.errstate(invalid="ignore"):
        delta[...] = gamma2 * delta - lr * gr / xp.sqrt(n - mean * mean + eps)
    new_w = w + delta
    if clip_w >= 0:
        xp.clip(new_w, -clip_w, clip_w, out=new_w)
    return new_w


def ftrl_kernel(xp, w, g, z, n, lr, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0,
                clip_gradient=-1.0):
    """FTRL-proximal: ``z`` and ``n`` in place, then
    ``(sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)``."""
    t = w.dtype.type
    lr, lamda1, beta, wd, rescale, clip = _scalars(w, lr, lamda1, beta, wd, rescale_grad,
                                                   clip_gradient)
    gr = _rescaled(xp, g, rescale, clip)
    z += gr - (xp.sqrt(n + gr * gr) - xp.sqrt(n)) * w / lr
    n += gr * gr
    return (_sign(xp, z, t) * lamda1 - z) / ((beta + xp.sqrt(n)) / lr + wd) \
        * (xp.abs(z) > lamda1).astype(t)


def ftml_kernel(xp, w, g, d, v, z, lr, t, beta1=0.6, beta2=0.999, epsilon=1e-8, wd=0.0,
                rescale_grad=1.0, clip_grad=-1.0):
    """FTML at update count ``t``: ``d``, ``v``, ``z`` in place; returns ``-z / d_t``."""
    one = w.dtype.type(1)
    lr, beta1, beta2, tt, wd, rescale, clip = _scalars(
        w, lr, beta1, beta2, t, wd, rescale_grad, clip_grad)
    eps = w.dtype.type(epsilon)     # a double param in MXNet
    gr = rescale * g + wd * w
    if clip >= 0:
        xp.clip(gr, -clip, clip, out=gr)
    v[...] = beta2 * v + (one - beta2) * (gr * gr)
    d_t = (one - beta1 ** tt) / lr * (xp.sqrt(v / (one - beta2 ** tt)) + eps)
    z[...] = beta1 * z + (one - beta1) * gr - (d_t - beta1 * d) * w
    d[...] = d_t
    return -z / d_t


def lamb_phase1_kernel(xp, w, g, mean, var, t, beta1=0.9, beta2=0.999, epsilon=1e-6,
                       bias_correction=True, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    """LAMB's direction: moments in place, then
    ``mean_hat / (sqrt(var_hat) + epsilon) + wd * w`` (``w`` is the float32 master copy
    for the mp op; the moments then are float32 too)."""
    one = mean.dtype.type(1)
    # NOTE: MXNet computes beta**t in double from the float32 params (std::pow(float,
    # int)) and divides the mean by ``1. - beta1_t`` in double, the variance by
    # ``1 - beta2_t`` in DType.
    beta1_t = mean.dtype.type(math.pow(float(np.float32(beta1)), int(t)))
    beta2_t = mean.dtype.type(math.pow(float(np.float32(beta2)), int(t)))
    beta1, beta2, eps, wd, rescale, clip = _scalars(mean, beta1, beta2, epsilon, wd,
                                                    rescale_grad, clip_gradient)
    if g.dtype == mean.dtype:
        gr = _rescaled(xp, g, rescale, clip)
    else:
        # NOTE: MXNet's mp kernel rounds ``grad * rescale_grad`` to the gradient's
        # (float16) type before it goes on in float32.
        gr = _rescaled(xp, (g.astype(mean.dtype) * rescale).astype(g.dtype).astype(mean.dtype),
                       mean.dtype.type(1), clip)
    mean[...] = beta1 * mean + (one - beta1) * gr
    var[...] = beta2 * var + (one - beta2) * gr * gr
    m, v = mean, var
    if bias_correction:
        m = (mean.astype(np.float64) / (1.0 - np.float64(beta1_t))).astype(mean.dtype)
        v = var / (one - beta2_t)
    return m / (xp.sqrt(v) + eps) + wd * w.astype(mean.dtype, copy=False)


def lamb_phase2_kernel(xp, w, g, r1, r2, lr, lower_bound=-1.0, upper_bound=-1.0):
    """``w - lr * r1 / r2 * g``, with ``r1`` clamped to the bounds given (``>= 0``) and a
    ratio of 1 when ``r1`` or ``r2`` is 0. ``w`` is the float32 master for the mp op."""
    lr, lower, upper = _scalars(g, lr, lower_bound, upper_bound)
    r1 = g.dtype.type(host(r1.reshape(-1)[0]))
    r2 = g.dtype.type(host(r2.reshape(-1)[0]))
    if lower >= 0:
        r1 = max(r1, lower)
    if upper >= 0:
        r1 = min(r1, upper)
    if r1 != 0 and r2 != 0:
        lr = lr * r1 / r2
    return w.astype(g.dtype, copy=False) - lr * g


def adamw_kernel(xp, w, g, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0.0, clip_gradient=-1.0):
    """AdamW: ``w - eta * (lr * mean / (sqrt(var) + epsilon) + wd * w)``. ``rescale_grad``
    is a 1-element array; when it is 0, inf or NaN the update is skipped (``w`` is
    returned and the moments are left as they were)."""
    scale = float(rescale_grad.reshape(-1)[0])
    if scale == 0 or not math.isfinite(scale):
        return w.copy()
    # NOTE: ``1 - beta`` is rounded in float32 and then cast, as MXNet's
    # ``scalar<DType>(1.f - beta1)`` does.
    rest1, rest2 = _scalars(w, 1 - np.float32(beta1), 1 - np.float32(beta2))
    lr, eta, beta1, beta2, eps, wd, rescale, clip = _scalars(
        w, lr, eta, beta1, beta2, epsilon, wd, scale, clip_gradient)
    if g.dtype == w.dtype:
        # NOTE: MXNet's adamw_update rescales and clips the gradient *in place* (the op
        # declares it mutated); mp_adamw_update leaves it alone.
        g *= rescale
        gr = xp.clip(g, -clip, clip, out=g) if clip >= 0 else g
    else:
        gr = _rescaled(xp, g.astype(w.dtype), rescale, clip)
    mean[...] = beta1 * mean + rest1 * gr
    var[...] = beta2 * var + rest2 * (gr * gr)
    return w - eta * (lr * mean / (xp.sqrt(var) + eps) + wd * w)


def _master(kernel):
    """A multi-precision op from ``kernel``: it updates the float32 master copy (the last
    input, in place) from the gradient cast to float32, and returns the master cast
    back to the weight's dtype."""
    def compute(xp, w, g, *states_and_master, **kw):
        *states, w32 = states_and_master
        w32[...] = kernel(xp, w32, g.astype(_F32), *states, **kw)
        return w32.astype(w.dtype)
    return compute


# ----------------------------------------------------------------------------------------
# Registration

def _lr():
    return Param("lr", parse_float, doc="Learning rate.")


def _common(momentum=None, wd=0.0):
    ps = [Param("wd", parse_float, wd, "Weight decay (L2 penalty on the weight)."),
          Param("rescale_grad", parse_float, 1.0, "Rescale the gradient by this first."),
          Param("clip_gradient", parse_float, -1.0,
                "Clip the rescaled gradient to [-clip_gradient, clip_gradient]; < 0: off.")]
    if momentum is not None:
        ps.insert(0, Param("momentum", parse_float, momentum, "Momentum (decay rate)."))
    return ps


def _mom_kw(p):
    return dict(lr=p.lr, momentum=p.momentum, wd=p.wd, rescale_grad=p.rescale_grad,
                clip_gradient=p.clip_gradient)


def _sgd_kw(p):
    return dict(lr=p.lr, wd=p.wd, rescale_grad=p.rescale_grad, clip_gradient=p.clip_gradient)


def _lazy():
    return Param("lazy_update", parse_bool, True,
                 "Accepted for MXNet compatibility (no sparse gradients here).")


def _mp_type(p, dtypes):
    return [dtypes[0]]


_MP_SGD = _master(sgd_kernel)
_MP_SGD_MOM = _master(sgd_mom_kernel)
_MP_NAG = _master(nag_mom_kernel)

_update_op("sgd_update", lambda p, xp, w, g: sgd_kernel(xp, w, g, **_sgd_kw(p)),
            inputs=("weight", "grad"), params=[_lr()] + _common() + [_lazy()],
            doc="SGD step: ``(1 - lr * wd) * weight - lr * clip(rescale_grad * grad)``.")
_update_op("sgd_mom_update",
            lambda p, xp, w, g, m: sgd_mom_kernel(xp, w, g, m, **_mom_kw(p)),
            inputs=("weight", "grad", "mom"), params=[_lr()] + _common(0.0) + [_lazy()],
            mutate=(2,),
            doc="SGD with momentum: ``mom = momentum * mom - lr * (wd * weight + "
                "clip(rescale_grad * grad))`` (in place); returns ``weight + mom``.")
_update_op("mp_sgd_update", lambda p, xp, w, g, w32: _MP_SGD(xp, w, g, w32, **_sgd_kw(p)),
            inputs=("weight", "grad", "weight32"), params=[_lr()] + _common() + [_lazy()],
            mutate=(2,), infer_type=_mp_type,
            doc="``sgd_update`` on the float32 master copy ``weight32`` (updated in place); "
                "returns it in the weight's dtype.")
_update_op("mp_sgd_mom_update",
            lambda p, xp, w, g, m, w32: _MP_SGD_MOM(xp, w, g, m, w32, **_mom_kw(p)),
            inputs=("weight", "grad", "mom", "weight32"),
            params=[_lr()] + _common(0.0) + [_lazy()], mutate=(2, 3), infer_type=_mp_type,
            doc="``sgd_mom_update`` on the float32 master copy ``weight32`` (``mom`` and "
                "``weight32`` updated in place).")
_update_op("nag_mom_update",
            lambda p, xp, w, g, m: nag_mom_kernel(xp, w, g, m, **_mom_kw(p)),
            inputs=("weight", "grad", "mom"), params=[_lr()] + _common(0.0), mutate=(2,),
            doc="Nesterov momentum step, as MXNet computes it with ``out=weight`` (the "
                "momentum's weight decay reads the new weight).")
_update_op("mp_nag_mom_update",
            lambda p, xp, w, g, m, w32: _MP_NAG(xp, w, g, m, w32, **_mom_kw(p)),
            inputs=("weight", "grad", "mom", "weight32"), params=[_lr()] + _common(0.0),
            mutate=(2, 3), infer_type=_mp_type,
            doc="``nag_mom_update`` on the float32 master copy ``weight32``.")
_update_op("signsgd_update", lambda p, xp, w, g: signsgd_kernel(xp, w, g, p.lr, p.wd),
            inputs=("weight", "grad"), params=[_lr()] + _common(),
            doc="signSGD: ``(1 - lr * wd) * weight - lr * sign(grad)`` (``rescale_grad`` and "
                "``clip_gradient`` cannot change a sign and are ignored).")
_update_op("signum_update",
            lambda p, xp, w, g, m: signum_kernel(xp, w, g, m, wd_lh=p.wd_lh, **_mom_kw(p)),
            inputs=("weight", "grad", "mom"),
            params=[_lr()] + _common(0.0) + [Param("wd_lh", parse_float, 0.0,
                                                   "Decoupled weight decay.")],
            mutate=(2,),
            doc="Signum: ``mom = momentum * mom - (1 - momentum) * (wd * weight + "
                "clip(rescale_grad * grad))``; ``(1 - lr * wd_lh) * weight + lr * sign(mom)``.")


def _adam(p, xp, w, g, mean, var):
    return adam_kernel(xp, w, g, mean, var, p.lr, p.beta1, p.beta2, p.epsilon, p.wd,
                       p.rescale_grad, p.clip_gradient)


def _betas(beta1=0.9, beta2=0.999, epsilon=1e-8):
    return [Param("beta1", parse_float, beta1, "Decay of the first moment."),
            Param("beta2", parse_float, beta2, "Decay of the second moment."),
            Param("epsilon", parse_float, epsilon, "Added to the denominator.")]


_update_op("adam_update", _adam, inputs=("weight", "grad", "mean", "var"),
            params=[_lr()] + _betas() + _common() + [_lazy()], mutate=(2, 3),
            doc="Adam step (``mean``, ``var`` in place): ``weight - lr * mean / "
                "(sqrt(var) + epsilon)`` with ``g = clip(rescale_grad * grad + wd * weight)``.")


def _clip_weights():
    return Param("clip_weights", parse_float, -1.0,
                 "Clip the new weight to [-clip_weights, clip_weights]; < 0: off.")


def _rmsprop(p, xp, w, g, n):
    return rmsprop_kernel(xp, w, g, n, p.lr, p.gamma1, p.epsilon, p.wd, p.rescale_grad,
                          p.clip_gradient, p.clip_weights)


def _rmspropalex(p, xp, w, g, n, mean, delta):
    return rmspropalex_kernel(xp, w, g, n, mean, delta, p.lr, p.gamma1, p.gamma2, p.epsilon,
                              p.wd, p.rescale_grad, p.clip_gradient, p.clip_weights)


_GAMMA1 = Param("gamma1", parse_float, 0.95, "Decay of the moving averages.")
_EPS8 = Param("epsilon", parse_float, 1e-8, "Added for numerical stability.")
_update_op("rmsprop_update", _rmsprop, inputs=("weight", "grad", "n"),
            params=[_lr(), _GAMMA1, _EPS8] + _common() + [_clip_weights()], mutate=(2,),
            doc="RMSProp (Tieleman & Hinton); ``n`` updated in place.")
_update_op("rmspropalex_update", _rmspropalex,
            inputs=("weight", "grad", "n", "g", "delta"),
            params=[_lr(), _GAMMA1, Param("gamma2", parse_float, 0.9, "Momentum of delta."),
                    _EPS8] + _common() + [_clip_weights()],
            mutate=(2, 3, 4), doc="Centered RMSProp (Graves 2013); ``n``, ``g``, ``delta`` "
                                  "updated in place.")


def _ftrl(p, xp, w, g, z, n):
    return ftrl_kernel(xp, w, g, z, n, p.lr, p.lamda1, p.beta, p.wd, p.rescale_grad,
                       p.clip_gradient)


_update_op("ftrl_update", _ftrl, inputs=("weight", "grad", "z", "n"),
            params=[_lr(), Param("lamda1", parse_float, 0.01, "L1 regularisation."),
                    Param("beta", parse_float, 1.0, "Per-coordinate learning rate beta.")]
            + _common(), mutate=(2, 3), doc="FTRL-proximal; ``z`` and ``n`` updated in place.")


def _sparse_adagrad(p, xp, w, g, history):
    """MXNet's sparse AdaGrad: only the gradient's rows (its non-zero rows here, where
    the values are dense) change, the history first."""
    if p.wd != 0:
        raise MXNetError("_sparse_adagrad_update: wd must be 0 (MXNet's sparse AdaGrad "
                         "update has no weight decay), got %g" % p.wd)
    if w.ndim == 0:
        raise MXNetError("_sparse_adagrad_update: the weight needs at least 1 dim (rows), "
                         "got shape ()")
    lr, eps, rescale, clip = _scalars(w, p.lr, p.epsilon, p.rescale_grad, p.clip_gradient)
    rows = xp.nonzero(xp.any(g != 0, axis=tuple(range(1, g.ndim))))[0]
    gr = _rescaled(xp, g[rows], rescale, clip)
    history[rows] += gr * gr
    out = w.copy()
    out[rows] = w[rows] - gr / xp.sqrt(history[rows] + eps) * lr
    return out


_update_op("_sparse_adagrad_update", _sparse_adagrad, inputs=("weight", "grad", "history"),
           params=[_lr(), Param("epsilon", parse_float, 1e-7, "Added to the history.")]
           + _common(), mutate=(2,),
           doc="``mx.nd.sparse.adagrad_update``: AdaGrad on the rows of a row-sparse "
               "gradient (``history += g^2; w -= lr * g / sqrt(history + epsilon)``, g "
               "rescaled and clipped); ``history`` updated in place. No weight decay.")


def _ftml(p, xp, w, g, d, v, z):
    return ftml_kernel(xp, w, g, d, v, z, p.lr, p.t, p.beta1, p.beta2, p.epsilon, p.wd,
                       p.rescale_grad, p.clip_grad)


_update_op("ftml_update", _ftml, inputs=("weight", "grad", "d", "v", "z"),
            params=[_lr(), Param("beta1", parse_float, 0.6, "Generally close to 0.5."),
                    Param("beta2", parse_float, 0.999, "Generally close to 1."),
                    Param("epsilon", parse_float, float(np.float32(1e-8)),
                          "Prevents division by 0 (a double; its default is float32 1e-8)."),
                    Param("t", parse_int, doc="The update count.", low=1),
                    Param("wd", parse_float, 0.0, "Weight decay."),
                    Param("rescale_grad", parse_float, 1.0, "Rescale the gradient first."),
                    Param("clip_grad", parse_float, -1.0, "Gradient clipping; < 0: off.")],
            mutate=(2, 3, 4), doc="FTML (Zheng & Kwok 2017); ``d``, ``v``, ``z`` in place.")


def _lamb1_params():
    return _betas(epsilon=1e-6) + [
        Param("t", parse_int, doc="The update count.", low=1),
        Param("bias_correction", parse_bool, True, "Whether to bias-correct the moments."),
        Param("wd", parse_float, doc="Weight decay."),
        Param("rescale_grad", parse_float, 1.0, "Rescale the gradient first."),
        Param("clip_gradient", parse_float, -1.0, "Gradient clipping; < 0: off.")]


def _lamb1_kw(p):
    return dict(t=p.t, beta1=p.beta1, beta2=p.beta2, epsilon=p.epsilon,
                bias_correction=p.bias_correction, wd=p.wd, rescale_grad=p.rescale_grad,
                clip_gradient=p.clip_gradient)


def _lamb2_params():
    return [_lr(), Param("lower_bound", parse_float, -1.0, "Lower bound of r1; < 0: none."),
            Param("upper_bound", parse_float, -1.0, "Upper bound of r1; < 0: none.")]


def _lamb2_shape(p, shapes):
    return shapes, [shapes[0]] if shapes[0] is not None else None


def _f32_type(p, dtypes):
    return [_F32]


_update_op("lamb_update_phase1",
            lambda p, xp, w, g, m, v: lamb_phase1_kernel(xp, w, g, m, v, **_lamb1_kw(p)),
            inputs=("weight", "grad", "mean", "var"), params=_lamb1_params(), mutate=(2, 3),
            doc="LAMB phase 1: updates ``mean``/``var`` in place and returns the step "
                "direction ``g``; phase 2 scales it by ``||weight|| / ||g||``.")
_update_op("lamb_update_phase2",
            lambda p, xp, w, g, r1, r2: lamb_phase2_kernel(xp, w, g, r1, r2, p.lr,
                                                           p.lower_bound, p.upper_bound),
            inputs=("weight", "g", "r1", "r2"), params=_lamb2_params(),
            infer_shape=_lamb2_shape,
            doc="LAMB phase 2: ``weight - lr * r1 / r2 * g`` (``r1``, ``r2``: the norms of "
                "the weight and of ``g``, shape (1,)).")
_update_op("mp_lamb_update_phase1",
            lambda p, xp, w, g, m, v, w32: lamb_phase1_kernel(xp, w32, g, m, v,
                                                              **_lamb1_kw(p)),
            inputs=("weight", "grad", "mean", "var", "weight32"), params=_lamb1_params(),
            mutate=(2, 3), infer_type=_f32_type,
            doc="``lamb_update_phase1`` with float32 moments and master weight; the "
                "direction is float32.")
_update_op("mp_lamb_update_phase2",
            lambda p, xp, w, g, r1, r2, w32: lamb_phase2_kernel(
                xp, w32, g, r1, r2, p.lr, p.lower_bound, p.upper_bound).astype(w.dtype),
            inputs=("weight", "g", "r1", "r2", "weight32"), params=_lamb2_params(),
            infer_shape=_lamb2_shape, infer_type=_mp_type,
            doc="``lamb_update_phase2`` from the float32 master (which, as in MXNet, is "
                "not updated), in the weight's dtype.")


def _adamw_params():
    return [_lr()] + _betas() + [
        Param("wd", parse_float, 0.0, "Decoupled weight decay."),
        Param("eta", parse_float, doc="Learning rate schedule multiplier."),
        Param("clip_gradient", parse_float, -1.0, "Gradient clipping; < 0: off.")]


def _adamw_kw(p):
    return dict(lr=p.lr, eta=p.eta, beta1=p.beta1, beta2=p.beta2, epsilon=p.epsilon,
                wd=p.wd, clip_gradient=p.clip_gradient)


def _mp_adamw(p, xp, w, g, mean, var, w32, rescale):
    new = adamw_kernel(xp, w32, g, mean, var, rescale, **_adamw_kw(p))
    w32[...] = new
    return new.astype(w.dtype)


_update_op("_adamw_update",
            lambda p, xp, w, g, m, v, r: adamw_kernel(xp, w, g, m, v, r, **_adamw_kw(p)),
            inputs=("weight", "grad", "mean", "var", "rescale_grad"), params=_adamw_params(),
            mutate=(1, 2, 3), aliases=("_contrib_adamw_update",),
            doc="AdamW: ``weight - eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)``"
                " with ``grad`` scaled by the 1-element array ``rescale_grad``; skipped when "
                "that is 0, inf or NaN.")
_update_op("_mp_adamw_update", _mp_adamw,
            inputs=("weight", "grad", "mean", "var", "weight32", "rescale_grad"),
            params=_adamw_params(), mutate=(2, 3, 4), infer_type=_mp_type,
            aliases=("_contrib_mp_adamw_update",),
            doc="``adamw_update`` on the float32 master copy ``weight32`` (in place).")


# ----------------------------------------------------------------------------------------
# multi_*: several weights in one call (MXNet's aggregated SGD).

# The inputs of each weight of multi_[mp_]sgd_[mom_]update, by (momentum, multi-precision)
MULTI_SGD_INPUTS = {(False, False): ("weight", "grad"), (True, False): ("weight", "grad", "mom"),
                    (False, True): ("weight", "grad", "weight32"),
                    (True, True): ("weight", "grad", "mom", "weight32")}


def check_count(x, names, n, extra=0):
    """That a multi-weight op got ``names`` for each of ``n`` weights, then ``extra`` arrays."""
    want = len(names) * n + extra
    if len(x) != want:
        raise ValueError("expected %d inputs (%s for each of %d weights%s), got %d"
                         % (want, ", ".join(names), n,
                            " and %d more" % extra if extra else "", len(x)))


def check_lengths(n, **lists):
    """That each of a multi-weight op's ``lists`` holds one value per weight (``n``)."""
    for k, v in lists.items():
        if len(v) != n:
            raise ValueError("%s has %d value(s), expected one per weight (%d)" % (k, len(v), n))


def per_weight(x, names, n, mp, step):
    """The new weights of a multi-weight op whose inputs ``x`` are ``names`` for each of
    ``n`` weights (the float32 master copy last when ``mp``): ``step(i, weight, master,
    grad, *states)`` gives weight i's new value, written into the master when ``mp`` and
    returned in the weight's dtype."""
    stride = len(names)
    outs = []
    for i in range(n):
        w, g, *states = x[i * stride:(i + 1) * stride]
        master = states.pop() if mp else w
        new = step(i, w, master, g, *states)
        if mp:
            master[...] = new
            new = new.astype(w.dtype)
        outs.append(new)
    return tuple(outs)


def multi_sgd(p, xp, x, has_mom, mp, lrs, wds):
    """The new weights of ``multi_[mp_]sgd_[mom_]update`` for inputs ``x`` (those of
    :data:`MULTI_SGD_INPUTS` per weight) and per-weight ``lrs`` and ``wds``; momenta and
    float32 masters are updated in place."""
    def step(i, w, w32, g, *mom):
        # NOTE: without momentum MXNet still runs the momentum kernel with a zero
        # momentum (``w + (0 - lr*wd*w - step)``), which rounds unlike sgd_update.
        return sgd_mom_kernel(xp, w32, g.astype(w32.dtype, copy=False),
                              mom[0] if has_mom else xp.zeros(w32.shape, w32.dtype),
                              float(lrs[i]), p.momentum if has_mom else 0.0, float(wds[i]),
                              p.rescale_grad, p.clip_gradient)
    return per_weight(x, MULTI_SGD_INPUTS[has_mom, mp], p.num_weights, mp, step)


def _multi_compute(has_mom, mp):
    names = MULTI_SGD_INPUTS[has_mom, mp]

    def compute(p, xp, *x):
        check_count(x, names, p.num_weights)
        check_lengths(p.num_weights, lrs=p.lrs, wds=p.wds)
        return multi_sgd(p, xp, x, has_mom, mp, p.lrs, p.wds)
    return compute, names


def _register_multi(has_mom, mp):
    compute, names = _multi_compute(has_mom, mp)
    params = [Param("lrs", parse_float_tuple, doc="Learning rates, one per weight."),
              Param("wds", parse_float_tuple, doc="Weight decays, one per weight.")]
    if has_mom:
        params.append(Param("momentum", parse_float, 0.0, "Momentum."))
    params += [Param("rescale_grad", parse_float, 1.0, "Rescale the gradients first."),
               Param("clip_gradient", parse_float, -1.0, "Gradient clipping; < 0: off."),
               Param("num_weights", parse_int, 1, "How many weights are updated.", low=1)]
    name = "multi_%ssgd_%supdate" % ("mp_" if mp else "", "mom_" if has_mom else "")
    register_op(name, compute, params=params, num_outputs=lambda p: p.num_weights,
                check=update_rules(names, count="num_weights"),
                inputs=per_item_names(names, "num_weights"),
                infer_type=lambda p, dtypes: [dtypes[0]] * p.num_weights,
                doc="``%s`` on ``num_weights`` weights at once; inputs are (%s) per weight, "
                    "outputs the new weights (pass ``out=`` the weights). NOTE: the states "
                    "are updated in place but, their positions depending on num_weights, "
                    "their version counters are not bumped."
                    % ("mp_sgd_mom_update" if has_mom and mp else "sgd_mom_update"
                       if has_mom else "mp_sgd_update" if mp else "sgd_update",
                       ", ".join(names)))


for _mom in (False, True):
    for _mp in (False, True):
        _register_multi(_mom, _mp)
