"""Momentum-style optimizers: SGD, NAG, Signum, SGLD, DCASGD.

SGD, NAG and Signum run the kernels of MXNet's fused ops (``sgd_mom_update``,
``nag_mom_update``, ``signum_update`` ... in ``operator/tensor/optimizer_ops.py``) on the
raw arrays, as MXNet's optimizers call those ops. The formulas are in the docstrings.
"""
import math

import numpy as np

from ..operator.tensor.optimizer_ops import (sgd_kernel, sgd_mom_kernel, sgd_step,
                                             nag_mom_kernel, signsgd_kernel, signum_kernel)
from ..operator.tensor import _fast_update
from .optimizer import (Optimizer, register, _MasterLastMixin, aggregation_size, begin_update,
                        check_pair, float16, write, xp_of, zeros_like_weight, python_clip)

__all__ = ["SGD", "NAG", "Signum", "SGLD", "DCASGD", "ccSGD", "Test", "LARS", "LBSGD"]


# Elements of each piece a large weight's SGD update runs by in NumPy's passes (numba's
# one pass, ``_fast_update``, runs where it applies), so that its temporaries stay in
# the cache. NOTE: measured on ResNet-18's 11.7M weights, alternated in one
# process at 2 threads: with momentum 0.9 and wd, 25-29 ms a step by pieces of 16K
# elements against 40-42 ms whole (1.45x); without momentum (two passes) 9-11 ms
# either way. The pieces of the three 9.4 MB weights split over two threads
# (engine.parallel) took 2.3 ms of the caller's CPU to the worker but ran 1.03-1.05x
# slower in wall time without momentum (medians of 80, three runs; the same with it):
# the passes are bound by the memory both cores share, so they stay in the caller.
CHUNK = 1 << 14


def _clip_arg(opt):
    """``clip_gradient`` as MXNet's optimizers pass it to the fused kernels: only when
    truthy (``None`` and ``0`` mean no clipping, which the kernels spell ``-1``)."""
    return opt.clip_gradient if opt.clip_gradient else -1.0


def _momentum_state(opt, weight):
    return zeros_like_weight(weight) if opt.momentum != 0.0 else None


@register
class SGD(_MasterLastMixin, Optimizer):
    """Stochastic gradient descent with momentum and weight decay.

    Without momentum::

        weight = weight - lr * (clip(rescale_grad * grad) + wd * weight)

    With momentum (``state`` is MXNet's momentum buffer, the negative step)::

        state = momentum * state - lr * (clip(rescale_grad * grad) + wd * weight)
        weight = weight + state

    Parameters
    ----------
    momentum : float
        The momentum.
    lazy_update : bool
        Accepted for MXNet compatibility (mxlite has no sparse gradients).
    multi_precision : bool
        Update a float32 master copy of float16 weights; the state is then
        ``(momentum, master)``.
    **kwargs
        See :class:`Optimizer`.

    Examples
    --------
    >>> opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    >>> w = mx.nd.ones((2,)); state = opt.create_state(0, w)
    >>> opt.update(0, w, mx.nd.ones((2,)), state); w
    <BLANKLINE>
    [0.9 0.9]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = aggregation_size(4)

    def create_state(self, index, weight):
        return _momentum_state(self, weight)

    def update(self, index, weight, grad, state):
        lr, wd, _ = begin_update(self, "SGD", index, weight, grad)
        self._step(weight, grad, state, lr, wd)

    def update_group(self, indices, weights, grads, states):
        """Update ``weights`` as MXNet's aggregated ``multi_sgd_*update`` does: the group's
        update counts first, then every weight with the learning rate they give."""
        for w, g in zip(weights, grads):
            check_pair("SGD", w, g)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        rescale, clip = self.rescale_grad, _clip_arg(self)
        plain = not (self.momentum > 0 or self.multi_precision)
        for w, g, s, lr, wd in zip(weights, grads, states, lrs, wds):
            if plain:
                _sgd_plain(w, g, lr, wd, rescale, clip)
            elif self.multi_precision and w.dtype == float16 and isinstance(s, (tuple, list)):
                mom, master = s
                self._step(master, g.astype(master.dtype), mom, lr, wd)
                write(w, master._data.astype(w._data.dtype))
            else:
                self._step(w, g, s, lr, wd)

    def _step(self, weight, grad, state, lr, wd):
        # NOTE: MXNet 1.9.1's SGD runs multi_sgd_mom_update (sgd_mom_kernel), with a zero
        # momentum when there is none. Without momentum that kernel's new weight,
        # w + ((0 - lr*wd*w) - step), is exactly w - (lr*wd*w + step): two passes over
        # the arrays here, and MXNet's bits (checked against MXNet's optimizer).
        if state is not None and self.momentum > 0:
            _sgd_momentum(weight, grad, state, lr, self.momentum, wd, self.rescale_grad,
                          _clip_arg(self))
            return
        _sgd_plain(weight, grad, lr, wd, self.rescale_grad, _clip_arg(self))


def _sgd_plain(weight, grad, lr, wd, rescale, clip):
    """SGD without momentum, in place: ``w -= lr * wd * w + lr * clip(rescale * g)`` (in
    one pass of numba's where it applies: no clipping)."""
    if clip < 0 and _fast_update.sgd(weight._data, grad._data, lr, wd, rescale):
        weight._bump()
        return
    xp = xp_of(weight)
    kxp = xp if clip >= 0 else None

    def update(w, g):
        w -= sgd_step(kxp, w, g, lr, wd, rescale, clip)
    _in_chunks(update, xp, weight._data, grad._data)
    weight._bump()


def _sgd_momentum(weight, grad, state, lr, momentum, wd, rescale, clip):
    """SGD with momentum, in place: ``state = momentum * state - lr * wd * w -
    lr * clip(rescale * g)``, then ``w += state`` (in one pass of numba's where it
    applies: no clipping)."""
    if clip < 0 and _fast_update.sgd(weight._data, grad._data, lr, wd, rescale,
                                     state._data, momentum):
        state._bump()
        weight._bump()
        return
    xp = xp_of(weight)

    def update(w, g, m):
        w[...] = sgd_mom_kernel(xp, w, g, m, lr, momentum, wd, rescale, clip)
    _in_chunks(update, xp, weight._data, grad._data, state._data)
    state._bump()
    weight._bump()


def _in_chunks(update, xp, *arrays):
    """``update(*pieces)`` over pieces of ``CHUNK`` elements of ``arrays`` (the weight
    first; one shape), in place: an elementwise update gives the same bits whatever
    the pieces."""
    w = arrays[0]
    if w.size <= CHUNK or xp is not np or not all(a.flags.c_contiguous for a in arrays):
        update(*arrays)
        return
    flat = [a.reshape(-1) for a in arrays]
    for i in range(0, w.size, CHUNK):
        update(*[a[i:i + CHUNK] for a in flat])


def _sgd_master_step(opt, weight, grad, state, lr, wd, momentum):
    """One SGD step (momentum ``momentum``) of ``weight`` with ``state``, which is the
    momentum buffer (or None), or ``(momentum buffer, float32 master)`` for a float16
    weight under multi_precision: the master is updated and copied back."""
    master = None
    if isinstance(state, (tuple, list)):
        state, master = state
    target = weight if master is None else master
    g = grad if master is None else grad.astype(master.dtype)
    if state is not None and momentum > 0:
        _sgd_momentum(target, g, state, lr, momentum, wd, opt.rescale_grad, _clip_arg(opt))
    else:
        _sgd_plain(target, g, lr, wd, opt.rescale_grad, _clip_arg(opt))
    if master is not None:
        write(weight, master._data.astype(weight._data.dtype))


@register
class ccSGD(SGD):  # noqa: N801 (MXNet's name)
    """[DEPRECATED] The same as :class:`SGD`."""


@register
class NAG(_MasterLastMixin, Optimizer):
    """Nesterov accelerated gradient, as MXNet 1.9's ``nag_mom_update`` computes it::

        g = clip(rescale_grad * grad) + wd * weight
        new_weight = weight + momentum * (momentum * state - lr * g) - lr * g
        state = momentum * state - lr * (clip(rescale_grad * grad) + wd * new_weight)

    NOTE: MXNet's kernel writes the new weight over the old one before it
    updates the momentum, so the weight-decay term of the stored momentum uses
    the *new* weight. mxlite does the same, to give MXNet's numbers. Without
    momentum it is plain SGD.

    Parameters
    ----------
    momentum : float
    multi_precision : bool
        As in :class:`SGD`: the state is ``(momentum, master)`` for float16 weights.
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        return _momentum_state(self, weight)

    def update(self, index, weight, grad, state):
        lr, wd, xp = begin_update(self, "NAG", index, weight, grad)
        kw = dict(lr=lr, wd=wd, rescale_grad=self.rescale_grad, clip_gradient=_clip_arg(self))
        if state is not None and self.momentum > 0:
            new_w = nag_mom_kernel(xp, weight._data, grad._data, state._data,
                                   momentum=self.momentum, **kw)
            state._bump()
        else:
            new_w = sgd_kernel(xp, weight._data, grad._data, **kw)
        write(weight, new_w)


@register
class Signum(Optimizer):
    """signSGD / Signum: steps by the sign of the gradient or of its momentum::

        state = momentum * state - (1 - momentum) * (clip(rescale_grad * grad) + wd * weight)
        weight = (1 - lr * wd_lh) * weight + lr * sign(state)

    Without momentum: ``weight = (1 - lr * wd) * weight - lr * sign(grad)``.

    Parameters
    ----------
    learning_rate : float
    momentum : float
    wd_lh : float
        Decoupled weight decay.
    **kwargs
        See :class:`Optimizer`.
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        return _momentum_state(self, weight)

    def update(self, index, weight, grad, state):
        lr, wd, xp = begin_update(self, "Signum", index, weight, grad)
        if state is not None and self.momentum > 0:
            new_w = signum_kernel(xp, weight._data, grad._data, state._data, lr=lr,
                                  momentum=self.momentum, wd=wd, rescale_grad=self.rescale_grad,
                                  clip_gradient=_clip_arg(self), wd_lh=self.wd_lh)
            state._bump()
        else:
            # NOTE: MXNet's signsgd_update takes the sign of the raw gradient
            # (rescaling and clipping cannot change a sign) and ignores wd_lh.
            new_w = signsgd_kernel(xp, weight._data, grad._data, lr=lr, wd=wd)
        write(weight, new_w)


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics::

        weight = weight - lr / 2 * (clip(rescale_grad * grad) + wd * weight) + N(0, sqrt(lr))

    The noise is drawn from ``mx.random``'s generator of the weight's context.
    """

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        from .. import random as _random
        lr, wd, xp = begin_update(self, "SGLD", index, weight, grad)
        w = weight._data
        g = python_clip(xp, self.rescale_grad * grad._data, self.clip_gradient)
        w += -lr / 2 * (g + wd * w)
        noise = _random.get_generator(weight._ctx).normal(0, math.sqrt(lr), size=w.shape)
        w += noise.astype(w.dtype, copy=False)
        weight._bump()


@register
class DCASGD(Optimizer):
    """Delay-compensated asynchronous SGD::

        g = clip(rescale_grad * grad)
        mom = momentum * mom - lr * (g + wd * weight + lamda * g * g * (weight - previous))
        previous = weight;  weight = weight + mom   (without momentum: weight - lr * (...))

    The state is ``(mom or None, previous_weight)``.
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        return (_momentum_state(self, weight), weight.copy())

    def update(self, index, weight, grad, state):
        lr, wd, xp = begin_update(self, "DCASGD", index, weight, grad)
        w = weight._data
        g = python_clip(xp, self.rescale_grad * grad._data, self.clip_gradient)
        mom, previous = state
        step = -lr * (g + wd * w + self.lamda * g * g * (w - previous._data))
        if mom is not None:
            mom._data *= self.momentum
            mom._data += step
            mom._bump()
            step = mom._data
        write(previous, w)
        w += step
        weight._bump()


@register
class Test(Optimizer):
    """MXNet's optimizer for tests: ``weight += rescale_grad * grad``; the state holds a
    copy of the new weight."""

    def create_state(self, index, weight):
        from .. import nd
        return nd.zeros(weight.shape, ctx=weight.context)

    def update(self, index, weight, grad, state):
        weight[:] += grad * self.rescale_grad
        state[:] = weight


@register
class LARS(SGD):
    """Layer-wise adaptive rate scaling (You et al., 2017): SGD whose learning rate is
    scaled per parameter, except biases and BatchNorm's gamma/beta::

        lr_layer = lr * eta * |w| / (|rescale_grad * g| + wd * |w| + eps)
                   (lr itself when |w| or |g| is 0)

    With ``momentum_correction`` the momentum is scaled by ``lr / previous lr`` when the
    learning rate changes. Weight decay applies to ``*_weight`` parameters only.
    """

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        super().__init__(momentum=momentum, lazy_update=lazy_update, **kwargs)
        self.momentum_correction = momentum_correction
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def set_wd_mult(self, args_wd_mult):
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if not n.endswith("_weight")}
        self._mults_from_sym("__wd_mult__", self.wd_mult)
        self.wd_mult.update(args_wd_mult)

    def _get_lrs(self, indices):
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self.learning_rate
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return [lr * self._mult(index, self.lr_mult, "lr_mult") for index in indices]

    def _lars(self, index, weight, grad, lr, wd):
        name = self.idx2name.get(index, str(index))
        if name.endswith(("gamma", "beta", "bias")):
            return lr
        xp = xp_of(weight)
        w_norm = float(xp.sqrt((weight._data.astype("float32") ** 2).sum()))
        g_norm = float(xp.sqrt(((grad._data.astype("float32") * self.rescale_grad) ** 2).sum()))
        if w_norm > 0.0 and g_norm > 0.0:
            return lr * self.eta * w_norm / (g_norm + wd * w_norm + self.eps)
        return lr

    def update(self, index, weight, grad, state):
        self.update_group([index], [weight], [grad], [state])

    def update_multi_precision(self, index, weight, grad, state):
        self.update(index, weight, grad, state)

    def update_group(self, indices, weights, grads, states):
        for w, g in zip(weights, grads):
            check_pair("LARS", w, g)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        momentum = self.momentum
        if momentum > 0 and self.momentum_correction and self.last_lr != 0:
            momentum *= self.cur_lr / self.last_lr
        for i, w, g, s, lr, wd in zip(indices, weights, grads, states, lrs, wds):
            _sgd_master_step(self, w, g, s, self._lars(i, w, g, lr, wd), wd, momentum)


@register
class LBSGD(Optimizer):
    """Large-batch SGD: gradients are summed over ``batch_scale`` updates and applied as
    one step, at ``lr`` times a warm-up multiplier that grows from 1 to ``batch_scale``
    over ``warmup_epochs * updates_per_epoch`` updates (``warmup_strategy`` 'linear',
    'power2', 'sqrt'), or the layer-wise ``'lars'`` factor
    ``sqrt(|w|^2 / (|g|^2 + wd |w|^2))`` clipped to [0.01, 100]. Steps in between leave
    the weight unchanged.
    """

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy="linear",
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super().__init__(multi_precision=multi_precision, **kwargs)
        self.momentum = momentum
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads = {}
        self.adaptive = False
        self.admult = 1

    def create_state(self, index, weight):
        return _momentum_state(self, weight)

    def _get_lbmult(self, nup):
        """The warm-up multiplier after ``nup`` cumulated updates."""
        nwup = self.warmup_epochs * self.updates_per_epoch
        top = float(self.batch_scale)
        if nup >= nwup:
            return top
        if nwup <= 1:
            return 1.0
        frac = {"linear": nup / nwup, "power2": (nup * nup) / (nwup * nwup),
                "sqrt": math.sqrt(float(nup) / nwup)}.get(self.warmup_strategy)
        return 1.0 if frac is None else 1.0 + (top - 1) * frac

    def _get_lars(self, weight, g, wd):
        w2 = float((weight._data.astype("float64") ** 2).sum())
        g2 = float((g._data.astype("float64") ** 2).sum())
        return min(max(math.sqrt(w2 / (g2 + wd * w2 + 1e-18)), 0.01), 100)

    def _cumulate_gradient(self, grad, index):
        prev = self.cumgrads.get(index)
        if prev and prev["num_cums"] > 0:
            cum = {"cum_grad": prev["cum_grad"] + grad, "num_cums": prev["num_cums"] + 1}
        else:
            cum = {"cum_grad": grad, "num_cums": self.init_updates + 1}
        self.cumgrads[index] = cum
        return cum

    def update(self, index, weight, grad, state):
        check_pair("LBSGD", weight, grad)
        lr, wd = self._get_lr(index), self._get_wd(index)
        self._update_count(index)
        cum = self._cumulate_gradient(grad, index)
        if cum["num_cums"] % self.batch_scale != 0:
            return              # MXNet runs sgd_update with lr 0 here: no change
        grad = cum["cum_grad"] / self.batch_scale
        lr *= (self._get_lars(weight, grad, wd) if self.warmup_strategy == "lars"
               else self._get_lbmult(cum["num_cums"]))
        _sgd_master_step(self, weight, grad, state, lr, wd, self.momentum)
        self.cumgrads[index]["cum_grad"] = 0
