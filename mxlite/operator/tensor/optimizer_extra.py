"""More of MXNet 1.9.1's fused optimizer ops: ``_multi_adamw_update``,
``_multi_mp_adamw_update``, ``_multi_lamb_update``, ``_multi_mp_lamb_update``,
``_contrib_group_adagrad_update`` and the ``preloaded_multi_[mp_]sgd[_mom]_update`` family
(learning rates and weight decays given as arrays, as LARS passes them).

They run the kernels of :mod:`mxlite.operator.tensor.optimizer_ops` per weight, so their
rounding is MXNet's (float params cast to the weight's dtype, every product rounded in
it, in the kernel's order). States are updated in place; the ops return the new weights
(MXNet's optimizers pass ``out=`` the weights).

NOTE: as for ``multi_sgd_update``, the inputs updated in place sit at positions that
depend on ``num_weights``, so their version counters are not bumped.
"""
import math

import numpy as np

from ...base import MXNetError, parse_bool, parse_float, parse_float_tuple, parse_int, \
    parse_shape
from ..registry import register_op, Param, ranks
from ..util import per_item_names
from .optimizer_ops import (MULTI_SGD_INPUTS, check_count, check_lengths, multi_sgd, per_weight,
                            update_rules, _betas, _scalars, _rescaled)


# ----------------------------------------------------------------------------------------
# _multi_[mp_]adamw_update

def multi_adamw_kernel(xp, w, g, mean, var, scale, lr, eta, beta1, beta2, epsilon, wd,
                       clip_gradient):
    """One weight of MXNet's ``MultiAdamWKernel`` (moments in place, new weight returned).

    NOTE: unlike ``_adamw_update`` (``beta1 * mean + (1 - beta1) * g``), the multi kernel
    writes the moments as ``beta1 * (mean - g) + g`` and ``beta2 * (var - g*g) + g*g``,
    which round differently; it also leaves the gradient alone.
    """
    lr, eta, beta1, beta2, eps, wd, rescale, clip = _scalars(
        w, lr, eta, beta1, beta2, epsilon, wd, scale, clip_gradient)
    gr = _rescaled(xp, g.astype(w.dtype, copy=False), rescale, clip)
    sq = gr * gr
    mean[...] = beta1 * (mean - gr) + gr
    var[...] = beta2 * (var - sq) + sq
    return w - eta * (lr * mean / (xp.sqrt(var) + eps) + wd * w)


def _adamw_names(mp):
    return ("weight", "grad", "mean", "var") + (("weight32",) if mp else ())


def _multi_adamw(mp):
    names = _adamw_names(mp)
    stride = len(names)

    def compute(p, xp, *x):
        n = p.num_weights
        check_count(x, names, n, extra=1)
        check_lengths(n, lrs=p.lrs, wds=p.wds, etas=p.etas)
        scale = float(x[-1].reshape(-1)[0])
        if scale == 0 or not math.isfinite(scale):
            # MXNet skips the whole update (the moments too) for a bad scale
            return tuple(x[i * stride].copy() for i in range(n))
        return per_weight(x, names, n, mp, lambda i, w, master, g, mean, var: multi_adamw_kernel(
            xp, master, g, mean, var, scale, p.lrs[i], p.etas[i], p.beta1, p.beta2, p.epsilon,
            p.wds[i], p.clip_gradient))

    return compute, per_item_names(names, "num_weights", ("rescale_grad",))


def _register_adamw(mp):
    compute, inputs = _multi_adamw(mp)
    params = [Param("lrs", parse_float_tuple, doc="Learning rates, one per weight."),
              *_betas(),
              Param("wds", parse_float_tuple, doc="Decoupled weight decays, one per weight."),
              Param("etas", parse_float_tuple, doc="Schedule multipliers, one per weight."),
              Param("clip_gradient", parse_float, -1.0, "Gradient clipping; < 0: off."),
              Param("num_weights", parse_int, 1, "How many weights are updated.", low=1)]
    name = "_multi_%sadamw_update" % ("mp_" if mp else "")
    register_op(name, compute, inputs=inputs, params=params,
                num_outputs=lambda p: p.num_weights,
                check=update_rules(_adamw_names(mp), count="num_weights"),
                infer_type=lambda p, dtypes: [dtypes[0]] * p.num_weights,
                doc="``%s`` on ``num_weights`` weights at once: inputs (%s) per weight, then "
                    "the 1-element ``rescale_grad`` array (0, inf or NaN skips the update)."
                    % ("_mp_adamw_update" if mp else "_adamw_update",
                       "weight, grad, mean, var" + (", weight32" if mp else "")))


_register_adamw(False)
_register_adamw(True)


# ----------------------------------------------------------------------------------------
# _multi_[mp_]lamb_update

def _sum_sq(xp, a):
    """Sum of squares, accumulated in float64 and rounded to float32 (MXNet's
    ``multi_sum_sq`` gives these bits on the golden cases; a float32 pairwise sum
    does not)."""
    return np.float32(float(xp.sum(xp.square(a.astype(np.float64)))))


def lamb_direction(xp, w, g, mean, var, t, beta1, beta2, epsilon, wd, rescale_grad,
                   clip_gradient, bias_correction):
    """Step 1 of MXNet's ``MultiLAMBKernelStep1`` for one tensor: moments in place,
    returns ``mean_hat / (sqrt(var_hat) + epsilon) + wd * w`` in the moments' dtype."""
    dt = mean.dtype
    one = dt.type(1)
    beta1, beta2, eps, wd, rescale, clip = _scalars(mean, beta1, beta2, epsilon, wd,
                                                    rescale_grad, clip_gradient)
    gr = _rescaled(xp, g.astype(dt), rescale, clip)
    mean[...] = beta1 * mean + (one - beta1) * gr
    var[...] = beta2 * var + (one - beta2) * gr * gr
    if bias_correction:
        # NOTE: beta ** t in the moments' dtype (powf for float32), as the kernel does.
        m = mean / (one - beta1 ** dt.type(t))
        v = var / (one - beta2 ** dt.type(t))
        return m / (xp.sqrt(v) + eps) + wd * w
    return mean / (xp.sqrt(var) + eps) + wd * w


def lamb_apply(xp, w, d, r1, r2, lr, lower_bound, upper_bound):
    """Step 2: ``w - lr * (r1 / r2) * d`` with ``r1`` clamped to the bounds (``>= 0``)
    and a ratio of 1 when a norm is 0."""
    t = d.dtype.type
    lr, lower, upper = _scalars(d, lr, lower_bound, upper_bound)
    r1, r2 = t(np.sqrt(t(r1))), t(np.sqrt(t(r2)))
    if lower >= 0:
        r1 = max(r1, lower)
    if upper >= 0:
        r1 = min(r1, upper)
    ratio = t(1) if r1 == 0 or r2 == 0 else r1 / r2
    return w - lr * (ratio * d)


def _multi_lamb(mp):
    names = _adamw_names(mp)

    def compute(p, xp, *x):
        n = p.num_tensors
        check_count(x, names, n)
        check_lengths(n, learning_rates=p.learning_rates, wds=p.wds, step_count=p.step_count)

        def step(i, w, master, g, mean, var):
            d = lamb_direction(xp, master, g, mean, var, p.step_count[i], p.beta1, p.beta2,
                               p.epsilon, p.wds[i], p.rescale_grad, p.clip_gradient,
                               p.bias_correction)
            # NOTE: the weight norm of the mp op is taken on the float16 weights (the
            # closest match to MXNet's numbers; they still differ by float32 ulps).
            return lamb_apply(xp, master, d, _sum_sq(xp, w), _sum_sq(xp, d),
                              p.learning_rates[i], p.lower_bound, p.upper_bound)
        return per_weight(x, names, n, mp, step)
    return compute, per_item_names(names, "num_tensors")


def _register_lamb(mp):
    compute, inputs = _multi_lamb(mp)
    params = [Param("learning_rates", parse_float_tuple, doc="Learning rates, one per tensor."),
              *_betas(epsilon=1e-6),
              Param("wds", parse_float_tuple, doc="Weight decays, one per tensor."),
              Param("rescale_grad", parse_float, 1.0, "Rescale the gradients first."),
              Param("lower_bound", parse_float, -1.0, "Lower bound of the weight norm; < 0: "
                                                      "none."),
              Param("upper_bound", parse_float, -1.0, "Upper bound of the weight norm; < 0: "
                                                      "none."),
              Param("clip_gradient", parse_float, -1.0, "Gradient clipping; < 0: off."),
              Param("bias_correction", parse_bool, True, "Whether to bias-correct."),
              Param("step_count", parse_shape, doc="Update count of each tensor.", low=1),
              Param("num_tensors", parse_int, 1, "How many tensors are updated.", low=1)]
    register_op("_multi_%slamb_update" % ("mp_" if mp else ""), compute, inputs=inputs,
                params=params, check=update_rules(_adamw_names(mp), count="num_tensors"),
                num_outputs=lambda p: p.num_tensors,
                infer_type=lambda p, dtypes: [dtypes[0]] * p.num_tensors,
                doc="LAMB on ``num_tensors`` tensors at once: inputs (%s) per tensor; the "
                    "moments%s are updated in place, the new weights returned (trust ratio "
                    "``||w|| / ||direction||`` per tensor)."
                    % ("weight, grad, mean, var" + (", weight32" if mp else ""),
                       " and weight32" if mp else ""))


_register_lamb(False)
_register_lamb(True)


# ----------------------------------------------------------------------------------------
# _contrib_group_adagrad_update

def group_adagrad_kernel(xp, w, g, history, lr, epsilon, rescale_grad, clip_gradient):
    """Per row: ``history += mean_j(clip(rescale * g)**2)``;
    ``w - lr * clip(rescale * g) / sqrt(history + epsilon)``.

    NOTE: epsilon goes under the square root (MXNet's kernel; its docs write
    ``sqrt(history) + epsilon``).

    NOTE: MXNet sums the squares column by column in the weight's dtype; the loop over
    columns keeps that order (vectorised over rows).
    """
    lr, eps, rescale, clip = _scalars(w, lr, epsilon, rescale_grad, clip_gradient)
    rows = w.shape[0]
    gr = _rescaled(xp, g.reshape(rows, int(np.prod(w.shape[1:]))), rescale, clip)
    ssq = xp.zeros((rows,), w.dtype)
    for j in range(gr.shape[1]):
        ssq += gr[:, j] * gr[:, j]
    # MXNet's kernel only visits the rows present in its row_sparse gradient; a dense
    # all-zero row adds 0 and moves nothing, so it gives the same numbers.
    h = history.reshape(rows)
    h += ssq / w.dtype.type(gr.shape[1])
    denom = xp.sqrt(h + eps).reshape((rows,) + (1,) * (w.ndim - 1))
    return w - lr * gr.reshape(w.shape) / denom


def _history_rule(p, w, g, history):
    if history.size != w.shape[0]:
        raise MXNetError("history must hold one value per row of the weight (%d), got shape "
                         "%s" % (w.shape[0], tuple(history.shape)))


def _group_adagrad(p, xp, w, g, history):
    return group_adagrad_kernel(xp, w, g, history, p.lr, p.epsilon, p.rescale_grad,
                                p.clip_gradient)


register_op("_contrib_group_adagrad_update", _group_adagrad,
            inputs=("weight", "grad", "history"),
            check=(ranks(weight=1), _history_rule,
                   update_rules(("weight", "grad", "history"), skip=("history",))),
            params=[Param("lr", parse_float, doc="Learning rate."),
                    Param("rescale_grad", parse_float, 1.0, "Rescale the gradient first."),
                    Param("clip_gradient", parse_float, -1.0, "Gradient clipping; < 0: off."),
                    Param("epsilon", parse_float, 1e-5, "Added to the denominator.")],
            mutate=(2,),
            doc="Group AdaGrad: one accumulated squared-gradient mean per row (``history`` "
                "(rows, 1), in place). MXNet 1.9.1 runs it only for row_sparse gradients; "
                "mxlite takes dense ones (all-zero rows are left alone, as absent rows are).")


# ----------------------------------------------------------------------------------------
# preloaded_multi_[mp_]sgd[_mom]_update: lrs and wds come as the last two arrays.

def _preloaded(has_mom, mp):
    names = MULTI_SGD_INPUTS[has_mom, mp]

    def compute(p, xp, *x):
        n = p.num_weights
        check_count(x, names, n, extra=2)
        lrs, wds = (a.reshape(-1) for a in x[-2:])
        check_lengths(n, lrs=lrs, wds=wds)
        return multi_sgd(p, xp, x, has_mom, mp, lrs, wds)

    return compute, per_item_names(names, "num_weights", ("lrs", "wds"))


def _register_preloaded(has_mom, mp):
    compute, inputs = _preloaded(has_mom, mp)
    params = [Param("rescale_grad", parse_float, 1.0, "Rescale the gradients first."),
              Param("clip_gradient", parse_float, -1.0, "Gradient clipping; < 0: off."),
              Param("num_weights", parse_int, 1, "How many weights are updated.", low=1)]
    if has_mom:
        params.insert(0, Param("momentum", parse_float, 0.0, "Momentum."))
    name = "preloaded_multi_%ssgd_%supdate" % ("mp_" if mp else "", "mom_" if has_mom else "")
    register_op(name, compute, inputs=inputs, params=params,
                num_outputs=lambda p: p.num_weights,
                check=update_rules(MULTI_SGD_INPUTS[has_mom, mp], count="num_weights"),
                infer_type=lambda p, dtypes: [dtypes[0]] * p.num_weights,
                doc="``multi_%ssgd_%supdate`` with the learning rates and weight decays "
                    "given as the last two arrays (num_weights,) instead of params: inputs "
                    "(%s) per weight, then lrs, wds."
                    % ("mp_" if mp else "", "mom_" if has_mom else "",
                       ", ".join(MULTI_SGD_INPUTS[has_mom, mp])))


for _mom in (False, True):
    for _mp in (False, True):
        _register_preloaded(_mom, _mp)
