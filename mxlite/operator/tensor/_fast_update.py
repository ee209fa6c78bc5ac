"""Optional numba kernels (``operator.nn._fast`` compiles them) for SGD's update in place.

One pass over the weight and the gradient (and the momentum), where NumPy makes two to
five over each piece of the arrays (``sgd.CHUNK``), each element computed by the
operations of :func:`~.optimizer_ops.sgd_step` and :func:`~.optimizer_ops.sgd_mom_kernel`
in their order, so the same bits (no fast-math: nothing is reordered or contracted).

NOTE: measured on ResNet-18's 11.7M weights at 2 threads, NumPy's pieces against one
pass, alternated in one process: the bench's training step's ``trainer.step`` (lr
only) 15.3 -> 9.0 ms (medians of 12), with momentum 0.9 and wd 44 -> 13.6; the
update alone (least of 15) 23 -> 7.5 ms with weight decay and no momentum.
"""
import numpy as np

from .optimizer_ops import _scalars


def _sgd_plain(w, g, lr_rescale, lr_wd, decay):
    """``w -= lr * wd * w + (lr * rescale) * g`` over 1-D ``w`` and ``g`` (the decay term
    only where ``decay``), as ``w - sgd_step(...)``."""
    if decay:
        for i in range(w.shape[0]):
            w[i] = w[i] - (lr_rescale * g[i] + lr_wd * w[i])
    else:
        for i in range(w.shape[0]):
            w[i] = w[i] - lr_rescale * g[i]


def _sgd_momentum(w, g, mom, lr_rescale, lr_wd, momentum):
    """``mom = momentum * mom - lr * wd * w - (lr * rescale) * g``; ``w += mom``, over 1-D
    arrays, as ``sgd_mom_kernel``."""
    for i in range(w.shape[0]):
        m = (momentum * mom[i] - lr_wd * w[i]) - lr_rescale * g[i]
        mom[i] = m
        w[i] = w[i] + m


KERNELS = {"sgd_plain": _sgd_plain, "sgd_momentum": _sgd_momentum}

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def sgd(w, g, lr, wd, rescale, mom=None, momentum=0.0):
    """SGD's update of the raw array ``w`` in place (with momentum ``mom``, updated in
    place too, where given), without clipping: whether it ran. False (nothing written)
    where numba is off, or the arrays are not NumPy arrays of one float dtype and shape,
    each C-contiguous."""
    from ..nn import _fast
    arrays = (w, g) if mom is None else (w, g, mom)
    for a in arrays:
        if (type(a) is not np.ndarray or a.dtype != w.dtype or a.shape != w.shape
                or not a.flags.c_contiguous):
            return False
    if w.dtype not in _DTYPES or not w.flags.writeable or (
            mom is not None and not mom.flags.writeable):
        return False
    jit = _fast.kernels()
    if jit is None:
        return False
    lr, wd, rescale, momentum = _scalars(w, lr, wd, rescale, momentum)
    flat = [a.reshape(-1) for a in arrays]
    if mom is None:
        jit.sgd_plain(flat[0], flat[1], lr * rescale, lr * wd, bool(wd))
    else:
        jit.sgd_momentum(flat[0], flat[1], flat[2], lr * rescale, lr * wd, momentum)
    return True
