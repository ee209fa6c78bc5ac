"""The optimizers behind ``SVRGModule``: ``_SVRGOptimizer`` runs a default optimizer on
the parameters and ``_AssignmentOptimizer`` on the ``<name>_full`` accumulators of the
full gradients (it copies the gradient into the weight)."""
from ... import optimizer as _opt
from ..._lazy import exports as _exports

__all__ = []

_BASE_PARAMS = ("rescale_grad", "param_idx2name", "wd", "clip_gradient", "learning_rate",
                "lr_scheduler", "sym", "begin_num_update", "multi_precision", "param_dict")


@_opt.register
class _AssignmentOptimizer(_opt.Optimizer):
    """``weight[:] = grad``."""

    def update(self, index, weight, grad, state):
        weight[:] = grad


@_opt.register
class _SVRGOptimizer(_opt.Optimizer):
    """``default_optimizer`` (a name or an Optimizer) for the parameters, assignment for
    the keys whose name holds ``full``."""

    def __init__(self, default_optimizer, **kwargs):
        super().__init__(**{k: v for k, v in kwargs.items() if k in _BASE_PARAMS})
        if isinstance(default_optimizer, str):
            default_optimizer = _opt.create(default_optimizer, **kwargs)
        self.default_opt = default_optimizer
        self.aux_opt = _opt.create(_AssignmentOptimizer.__name__)

    def _check_index(self, index):
        return index if index in self.idx2name.values() else self.idx2name[index]

    def _pick(self, index):
        return self.aux_opt if "full" in self._check_index(index) else self.default_opt

    def create_state(self, index, weight):
        return self._pick(index).create_state(index, weight)

    def create_state_multi_precision(self, index, weight):
        return self._pick(index).create_state_multi_precision(index, weight)

    def update(self, index, weight, grad, state):
        self._pick(index).update(index, weight, grad, state)

    def update_multi_precision(self, index, weight, grad, state):
        self._pick(index).update_multi_precision(index, weight, grad, state)


__getattr__, __dir__ = _exports(__name__, {"mx": "mxlite:"})
