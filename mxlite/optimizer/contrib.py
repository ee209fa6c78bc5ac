"""``mx.optimizer.contrib``: ``GroupAdaGrad``, AdaGrad with one history per row
(for embedding matrices)."""
from .optimizer import Optimizer, begin_update, python_clip, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad whose history is the mean squared gradient of each row of a 2-D weight::

        g = clip(rescale_grad * grad)
        history += mean(g * g, axis=1, keepdims=True)
        weight -= lr * g / sqrt(history + eps)

    Weight decay is not supported (``wd`` must be 0).
    """

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        from .. import nd
        if weight.ndim != 2:
            raise ValueError("GroupAdaGrad: weights must be 2-D, got shape %s" % (weight.shape,))
        return nd.zeros((weight.shape[0], 1), ctx=weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        lr, wd, xp = begin_update(self, "GroupAdaGrad", index, weight, grad)
        if wd != 0:
            raise ValueError("GroupAdaGrad: weight decay is not supported (wd=%r)" % (wd,))
        g = python_clip(xp, self.rescale_grad * grad._data, self.clip_gradient)
        h = state._data
        h += (g * g).mean(axis=1, keepdims=True)
        weight._data -= lr * g / xp.sqrt(h + self.float_stable_eps)
        weight._bump()
        state._bump()
