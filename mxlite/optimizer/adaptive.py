"""Adaptive optimizers: Adam, AdaGrad, RMSProp, AdaDelta, Adamax, Nadam, Ftrl, FTML, LAMB.

Each rule is MXNet 1.9's: Adam, RMSProp, Ftrl, FTML and LAMB run the kernels of its fused
ops (``adam_update`` ... in ``operator/tensor/optimizer_ops.py``) on the raw arrays, the
others its Python code; ``t`` is the parameter's own update count.
"""
import math

import numpy as np

from ..base import MXNetError
from ..operator.tensor.optimizer_ops import (adam_kernel, rmsprop_kernel, rmspropalex_kernel,
                                             ftrl_kernel, ftml_kernel, lamb_phase1_kernel,
                                             lamb_phase2_kernel)
from .optimizer import (Optimizer, register, begin_update, write,
                        zeros_like_weight, python_clip)

def _clip_arg(opt):
    """``clip_gradient`` as MXNet's optimizers pass it to the fused kernels: only when
    truthy (``None`` and ``0`` mean no clipping, which the kernels spell ``-1``)."""
    return opt.clip_gradient if opt.clip_gradient else -1.0


__all__ = ["Adam", "AdaGrad", "RMSProp", "AdaDelta", "Adamax", "Nadam", "Ftrl", "FTRL",
           "FTML", "LAMB"]


@register
class Adam(Optimizer):
    """Adam::

        g = clip(rescale_grad * grad + wd * weight)
        mean = beta1 * mean + (1 - beta1) * g
        var = beta2 * var + (1 - beta2) * g**2
        weight -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * mean / (sqrt(var) + epsilon)

    The state is ``(mean, var)``.

    Parameters
    ----------
    learning_rate : float
    beta1, beta2 : float
        Decay rates of the first and second moments.
    epsilon : float
    lazy_update : bool
        Accepted for MXNet compatibility (no sparse gradients here).
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return (zeros_like_weight(weight), zeros_like_weight(weight))

    def update(self, index, weight, grad, state):
        lr, wd, xp = begin_update(self, "Adam", index, weight, grad)
        t = self._index_update_count[index]
        lr *= math.sqrt(1. - self.beta2 ** t) / (1. - self.beta1 ** t)
        mean, var = state
        new_w = adam_kernel(xp, weight._data, grad._data, mean._data, var._data, lr,
                            self.beta1, self.beta2, self.epsilon, wd, self.rescale_grad,
                            _clip_arg(self))
        mean._bump()
        var._bump()
        write(weight, new_w)


@register
class AdaGrad(Optimizer):
    """AdaGrad::

        g = clip(rescale_grad * grad)
        history += g**2
        weight -= lr * (g / sqrt(history + eps) + wd * weight)

    The state (``history``) is float32 whatever the weight's dtype, as in MXNet.

    Parameters
    ----------
    eps : float
        Added inside the square root (stored as ``float_stable_eps``).
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return zeros_like_weight(weight, np.float32)

    def _updates_rows(self, index):
        """Always, as MXNet's sparse AdaGrad update, which has no weight decay."""
        if self._get_wd(index) != 0:
            raise MXNetError("AdaGrad: a row_sparse gradient (parameter %r) needs wd=0: "
                             "MXNet's sparse AdaGrad update has no weight decay" % (index,))
        return True

    def update(self, index, weight, grad, state):
        lr, wd, xp = begin_update(self, "AdaGrad", index, weight, grad)
        g = python_clip(xp, self.rescale_grad * grad._data, self.clip_gradient)
        h = state._data
        h += xp.square(g)
        state._bump()
        div = g / xp.sqrt(h + self.float_stable_eps)
        w = weight._data
        write(weight, w + (div + w * wd) * -lr)


@register
class RMSProp(Optimizer):
    """RMSProp, Tieleman & Hinton's or (``centered=True``) Graves's.

    Not centered (state ``(n,)``)::

        g = clip(rescale_grad * grad + wd * weight)
        n = (1 - gamma1) * g**2 + gamma1 * n
        weight -= lr * g / sqrt(n + epsilon)

    Centered (state ``(n, mean, delta)``)::

        n = (1 - gamma1) * g**2 + gamma1 * n
        mean = (1 - gamma1) * g + gamma1 * mean
        delta = gamma2 * delta - lr * g / sqrt(n - mean**2 + epsilon)
        weight += delta

    Both then clip the weight to ``[-clip_weights, clip_weights]`` when given.
    States are float32, as in MXNet.

    Parameters
    ----------
    learning_rate : float
    gamma1 : float
        Decay of the moving averages.
    gamma2 : float
        Momentum of the centered version.
    epsilon : float
    centered : bool
    clip_weights : float, optional
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9,
                 epsilon=1e-8, centered=False, clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        k = 3 if self.centered else 1
        return tuple(zeros_like_weight(weight, np.float32) for _ in range(k))

    def update(self, index, weight, grad, state):
        lr, wd, xp = begin_update(self, "RMSProp", index, weight, grad)
        kw = dict(lr=lr, gamma1=self.gamma1, epsilon=self.epsilon, wd=wd,
                  rescale_grad=self.rescale_grad, clip_gradient=_clip_arg(self),
                  clip_weights=self.clip_weights if self.clip_weights else -1.0)
        states = [s._data for s in state]
        if not self.centered:
            new_w = rmsprop_kernel(xp, weight._data, grad._data, *states, **kw)
        else:
            new_w = rmspropalex_kernel(xp, weight._data, grad._data, *states,
                                       gamma2=self.gamma2, **kw)
        for s in state:
            s._bump()
        write(weight, new_w)


@register
class AdaDelta(Optimizer):
    """AdaDelta (as MXNet's code, which applies ``wd`` outside the adaptive step)::

        g = clip(rescale_grad * grad)
        acc_g = rho * acc_g + (1 - rho) * g**2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta**2
        weight -= delta + wd * weight

    The learning rate is not used. Unlike MXNet, the gradient buffer is left
    untouched (MXNet rescales it in place as a side effect).

    Parameters
    ----------
    rho : float
    epsilon : float
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (zeros_like_weight(weight, np.float32), zeros_like_weight(weight, np.float32))

    def update(self, index, weight, grad, state):
        _, wd, xp = begin_update(self, "AdaDelta", index, weight, grad)
        g = python_clip(xp, self.rescale_grad * grad._data, self.clip_gradient)
        acc_g, acc_delta = state[0]._data, state[1]._data
        acc_g *= self.rho
        acc_g += (1. - self.rho) * g * g
        delta = xp.sqrt(acc_delta + self.epsilon) / xp.sqrt(acc_g + self.epsilon) * g
        acc_delta *= self.rho
        acc_delta += (1. - self.rho) * delta * delta
        for s in state:
            s._bump()
        w = weight._data
        write(weight, w - (delta + wd * w))


@register
class Adamax(Optimizer):
    """AdaMax (Adam with the infinity norm)::

        g = clip(rescale_grad * grad + wd * weight)
        m = beta1 * m + (1 - beta1) * g
        u = maximum(beta2 * u, |g|)
        weight -= lr / (1 - beta1**t) * m / u

    Parameters
    ----------
    learning_rate : float
    beta1, beta2 : float
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return (zeros_like_weight(weight), zeros_like_weight(weight))

    def update(self, index, weight, grad, state):
        lr, wd, xp = begin_update(self, "Adamax", index, weight, grad)
        t = self._index_update_count[index]
        lr /= (1. - self.beta1 ** t)
        w = weight._data
        g = python_clip(xp, self.rescale_grad * grad._data + wd * w, self.clip_gradient)
        m, u = state[0]._data, state[1]._data
        m *= self.beta1
        m += (1. - self.beta1) * g
        u[...] = xp.maximum(self.beta2 * u, xp.abs(g))
        for s in state:
            s._bump()
        write(weight, w - lr * m / u)


@register
class Nadam(Optimizer):
    """Nesterov-accelerated Adam (Dozat 2016), as MXNet computes it.

    ``momentum_t = beta1 * (1 - 0.5 * 0.96 ** (t * schedule_decay))``; the running
    product ``m_schedule`` is one number on the optimizer.

    NOTE: as in MXNet, ``m_schedule`` is shared by all parameters: it is
    multiplied once per parameter update, not once per step.

    Parameters
    ----------
    learning_rate : float
    beta1, beta2 : float
    epsilon : float
    schedule_decay : float
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    def create_state(self, index, weight):
        return (zeros_like_weight(weight), zeros_like_weight(weight))

    def update(self, index, weight, grad, state):
        lr, wd, xp = begin_update(self, "Nadam", index, weight, grad)
        t = self._index_update_count[index]
        w = weight._data
        g = python_clip(xp, self.rescale_grad * grad._data + wd * w, self.clip_gradient)
        momentum_t = self.beta1 * (1. - 0.5 * (pow(0.96, t * self.schedule_decay)))
        momentum_t_1 = self.beta1 * (1. - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
        self.m_schedule = self.m_schedule * momentum_t
        m_schedule_next = self.m_schedule * momentum_t_1
        m, v = state[0]._data, state[1]._data
        m *= self.beta1
        m += (1. - self.beta1) * g
        v *= self.beta2
        v += (1. - self.beta2) * g * g
        for s in state:
            s._bump()
        g_prime = g / (1. - self.m_schedule)
        m_prime = m / (1. - m_schedule_next)
        v_prime = v / (1. - pow(self.beta2, t))
        m_bar = (1. - momentum_t) * g_prime + momentum_t_1 * m_prime
        write(weight, w - lr * m_bar / (xp.sqrt(v_prime) + self.epsilon))


@register
class Ftrl(Optimizer):
    """FTRL-proximal (McMahan et al. 2013)::

        g = clip(rescale_grad * grad)
        z += g - (sqrt(n + g**2) - sqrt(n)) * weight / lr
        n += g**2
        weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)

    The state is ``(z, n)``, float32.

    Parameters
    ----------
    lamda1 : float
        L1 regularisation.
    learning_rate : float
    beta : float
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return (zeros_like_weight(weight, np.float32), zeros_like_weight(weight, np.float32))

    def update(self, index, weight, grad, state):
        lr, wd, xp = begin_update(self, "Ftrl", index, weight, grad)
        z, n = state
        new_w = ftrl_kernel(xp, weight._data, grad._data, z._data, n._data, lr, self.lamda1,
                            self.beta, wd, self.rescale_grad, _clip_arg(self))
        for s in state:
            s._bump()
        write(weight, new_w)


FTRL = Ftrl


@register
class FTML(Optimizer):
    """FTML, Follow the Moving Leader (Zheng & Kwok 2017)::

        g = clip(rescale_grad * grad + wd * weight)
        v = beta2 * v + (1 - beta2) * g**2
        d_t = (1 - beta1**t) / lr * (sqrt(v / (1 - beta2**t)) + epsilon)
        z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight
        d = d_t;  weight = -z / d_t

    The state is ``(d, v, z)``.

    Parameters
    ----------
    beta1, beta2 : float
    epsilon : float
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return tuple(zeros_like_weight(weight) for _ in range(3))

    def update(self, index, weight, grad, state):
        lr, wd, xp = begin_update(self, "FTML", index, weight, grad)
        t = self._index_update_count[index]
        d, v, z = state
        new_w = ftml_kernel(xp, weight._data, grad._data, d._data, v._data, z._data, lr, t,
                            self.beta1, self.beta2, self.epsilon, wd, self.rescale_grad,
                            _clip_arg(self))
        for s in state:
            s._bump()
        write(weight, new_w)


@register
class LAMB(Optimizer):
    """LAMB, layer-wise adaptive moments (You et al. 2019)::

        g = clip(rescale_grad * grad)
        mean = beta1 * mean + (1 - beta1) * g
        var = beta2 * var + (1 - beta2) * g**2
        r = mean_hat / (sqrt(var_hat) + epsilon) + wd * weight     (hats: bias-corrected)
        r1 = clip(||weight||, lower_bound, upper_bound);  r2 = ||r||
        weight -= lr * (r1 / r2 if r1 > 0 and r2 > 0 else 1) * r

    With ``multi_precision`` the state is ``(master, (mean, var))`` for float16 weights.

    Parameters
    ----------
    learning_rate : float
    beta1, beta2 : float
    epsilon : float
    lower_bound, upper_bound : float, optional
        Bounds on the weight norm ``r1``.
    bias_correction : bool
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = 45

    def create_state(self, index, weight):
        return (zeros_like_weight(weight), zeros_like_weight(weight))

    def update(self, index, weight, grad, state):
        lr, wd, xp = begin_update(self, "LAMB", index, weight, grad)
        t = self._index_update_count[index]
        w = weight._data
        mean, var = state
        g = lamb_phase1_kernel(xp, w, grad._data, mean._data, var._data, t, self.beta1,
                               self.beta2, self.epsilon, self.bias_correction, wd,
                               self.rescale_grad, _clip_arg(self))
        for s in state:
            s._bump()
        r1 = xp.sqrt(xp.sum(xp.square(w, dtype=np.float32)))
        r2 = xp.sqrt(xp.sum(xp.square(g, dtype=np.float32)))
        new_w = lamb_phase2_kernel(xp, w, g, r1, r2, lr,
                                   self.lower_bound if self.lower_bound else -1.0,
                                   self.upper_bound if self.upper_bound else -1.0)
        write(weight, new_w)
