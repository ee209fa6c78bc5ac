"""Dropout: zero elements with probability ``p`` and scale the rest by ``1 / (1 - p)``.

Active in training mode (``autograd.is_training()``) or always with
``mode='always'``; the identity otherwise. The scaled keep-mask is a second,
hidden output, so the gradient (``gy * mask``) reuses exactly the mask drawn in
the forward pass.
"""
from ...autograd import _state
from ...base import MXNetError, parse_float, parse_shape, parse_bool
from ..registry import register_op, Param
from ..batchwise import rows
from ..util import generator_of


def _mask_shape(p, x):
    """The mask's shape: size 1 along ``axes`` (one draw shared along them)."""
    if not p.axes:
        return x.shape
    axes = set()
    for a in p.axes:
        if not -x.ndim <= a < x.ndim:
            raise MXNetError("Dropout: axes=%s is out of range for data of shape %s"
                             % (p.axes, x.shape))
        axes.add(a % x.ndim)
    return tuple(1 if i in axes else d for i, d in enumerate(x.shape))


def _active(p):
    """Whether Dropout ``p`` drops (else it is the identity)."""
    return (_state.training or p.mode == "always") and p.p > 0


def _compute(p, xp, x):
    if not 0 <= p.p <= 1:
        raise MXNetError("Dropout: p=%g must be in [0, 1]" % p.p)
    shape = _mask_shape(p, x)
    if not _active(p):
        return x.copy(), xp.ones(shape, dtype=x.dtype)
    mask = keep_mask(x, shape, p.p)
    return (x * mask).astype(x.dtype, copy=False), mask


def keep_mask(like, shape, p):
    """A mask of ``shape`` and ``like``'s dtype: ``1 / (1 - p)`` with probability ``1 - p``,
    else 0, drawn from the generator of ``like``'s device."""
    keep = 1.0 - p
    # NOTE: p = 1 drops everything; a zero scale avoids dividing by zero.
    scale = 1.0 / keep if keep > 0 else 0.0
    return ((generator_of(like).random(shape) < keep) * scale).astype(like.dtype)


def _gradient(p, x, y, gy, need):
    return [gy[0] * y[1]]


register_op("Dropout", _compute, gradient=_gradient, saves="y",
            batchwise=rows(when=lambda p, shapes: not _active(p)),
            num_outputs=2, num_visible_outputs=1,
            params=[Param("p", parse_float, 0.5, "Fraction of the input dropped.", low=0.0,
                          high=1.0),
                    Param("mode", None, "training", choices=("training", "always"), doc=
                          "'training': drop only in training mode; 'always': also in predict."),
                    Param("axes", parse_shape, (), "Axes along which one draw is shared."),
                    Param("cudnn_off", parse_bool, False, "Ignored.")],
            doc="Dropout: in training mode each element is zeroed with probability ``p`` and "
                "the rest scaled by ``1 / (1 - p)``; the identity in predict mode.", same_shape=(0,))
