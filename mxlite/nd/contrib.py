"""``mx.nd.contrib``: filled from the operator registry (ops named contrib*)."""

import math as _math

import numpy as _np
from .contrib_control_flow import cond, foreach, while_loop  # noqa: F401


def isinf(data):
    """1 where ``data`` is +inf or -inf, else 0 (in the input dtype)."""
    return data.abs() == _np.inf


def isfinite(data):
    """1 where ``data`` is neither infinite nor NaN, else 0 (in the input dtype)."""
    return (data.abs() != _np.inf) * (data == data)


def isnan(data):
    """1 where ``data`` is NaN, else 0 (in the input dtype)."""
    return data != data


def _rescale_array(rescale_grad, weight):
    """``rescale_grad`` as the (1,) NDArray the adamw kernels read, on ``weight``'s
    context (MXNet's wrappers accept a number too)."""
    from .ndarray import NDArray
    from . import full
    if isinstance(rescale_grad, NDArray):
        return rescale_grad.as_in_context(weight.context)
    return full((1,), rescale_grad, ctx=weight.context, dtype=_np.float32)


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """AdamW update (MXNet's ``contrib.adamw_update``): ``rescale_grad`` may be a number
    or an NDArray; the update is skipped when it is 0, inf or NaN."""
    from . import _internal
    return _internal._contrib_adamw_update(
        weight, grad, mean, var, _rescale_array(rescale_grad, weight), lr=lr, eta=eta,
        beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient,
        out=out, **kwargs)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                    beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None,
                    **kwargs):
    """:func:`adamw_update` with a float32 master copy ``weight32`` of a float16 weight."""
    from . import _internal
    return _internal._contrib_mp_adamw_update(
        weight, grad, mean, var, weight32, _rescale_array(rescale_grad, weight), lr=lr,
        eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
        clip_gradient=clip_gradient, out=out, **kwargs)


def _zipfian(F, true_classes, num_sampled, range_max, uniform):
    """``rand_zipfian`` on namespace ``F`` (``mx.nd`` or ``mx.sym``); ``uniform(high)``
    draws the ``num_sampled`` float64 values in ``[0, high)``."""
    log_range = _math.log(range_max + 1)
    # exp(U(0, log(range_max + 1))) - 1 is log-uniform: class k has probability
    # log((k + 2) / (k + 1)) / log(range_max + 1)
    sampled = F.cast(F.exp(uniform(log_range)) - 1, dtype="int64") % range_max

    def expected(classes):
        c = F.cast(classes, dtype="float64")
        return F.log((c + 2.0) / (c + 1.0)) / log_range * num_sampled
    return sampled, expected(true_classes), expected(sampled)


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Draw ``num_sampled`` classes in ``[0, range_max)`` from the approximately Zipfian
    (log-uniform) distribution, with replacement, for sampled softmax.

    Returns ``(sampled_classes, expected_count_true, expected_count_sampled)``: int64
    samples and the float64 expected counts of ``true_classes`` and of the samples
    (``num_sampled * log((k + 2) / (k + 1)) / log(range_max + 1)``).

    >>> samples, exp_true, exp_sampled = mx.nd.contrib.rand_zipfian(
    ...     mx.nd.array([3]), num_sampled=4, range_max=5)
    """
    from .. import nd
    from ..context import current_context
    ctx = current_context() if ctx is None else ctx
    return _zipfian(nd, true_classes.as_in_context(ctx), num_sampled, range_max,
                    lambda high: nd.random.uniform(0, high, shape=(num_sampled,),
                                                   dtype="float64", ctx=ctx))
