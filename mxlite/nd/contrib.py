"""``mx.nd.contrib``: filled from the operator registry (ops named contrib*)."""

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
