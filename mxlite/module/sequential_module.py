"""``SequentialModule``: modules chained so that each one's outputs feed the next one's
data, trained as one module."""
import copy
import logging

from ..base import MXNetError
from .base_module import BaseModule
from .._lazy import exports as _exports

__all__ = ["SequentialModule"]


class SequentialModule(BaseModule):
    """A chain of modules: ``add(module, take_labels=..., auto_wiring=...)`` each in turn.

    ``take_labels``: the module receives the batch's labels (a loss module, usually the
    last). ``auto_wiring``: the previous module's outputs are renamed to this module's
    data names.

    >>> seq = mx.mod.SequentialModule()
    >>> seq.add(mx.mod.Module(net1, label_names=None))
    >>> seq.add(mx.mod.Module(net2), take_labels=True, auto_wiring=True)
    >>> seq.fit(train_iter, num_epoch=2)
    """
    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"

    def __init__(self, logger=logging):
        super().__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self._data_shapes = None
        self._meta_keys = {self.META_TAKE_LABELS, self.META_AUTO_WIRING}

    def add(self, module, **kwargs):
        """Append ``module`` (keywords: ``take_labels``, ``auto_wiring``); returns self so
        that calls chain. Adding resets binding, parameters and optimizer."""
        unknown = set(kwargs) - self._meta_keys
        if unknown:
            raise ValueError("SequentialModule.add: unknown meta %s; expected %s"
                             % (sorted(unknown), sorted(self._meta_keys)))
        self._modules.append(module)
        self._metas.append(kwargs)
        self.binded = self.params_initialized = self.optimizer_initialized = False
        return self

    @property
    def data_names(self):
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        self._check_bound("data_shapes")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        self._check_bound("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        self._check_bound("output_shapes")
        return self._modules[-1].output_shapes

    @property
    def symbol(self):
        return self._modules[-1].symbol if self._modules else None

    def _check_bound(self, what):
        if not self.binded:
            raise MXNetError("SequentialModule.%s: call bind() first" % what)

    def get_params(self):
        """The union of every module's ``(arg_params, aux_params)``."""
        arg_params, aux_params = {}, {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return arg_params, aux_params

    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise every module's parameters (names must be unique across modules)."""
        if self.params_initialized and not force_init:
            return
        self._check_bound("init_params")
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=True)
        owner = {}
        for i, module in enumerate(self._modules):
            arg, aux = module.get_params()
            for name in list(arg) + list(aux):
                if name in owner:
                    raise MXNetError("SequentialModule: modules %d and %d both have a "
                                     "parameter named %r" % (owner[name], i, name))
                owner[name] = i
        self.params_initialized = True

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        self.init_params(None, arg_params, aux_params, allow_missing=allow_missing,
                         force_init=force_init, allow_extra=allow_extra)

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind each module to the shapes of the previous module's outputs."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise MXNetError("SequentialModule.bind: inputs_need_grad needs for_training")
        if shared_module is not None:
            raise MXNetError("SequentialModule.bind: shared_module is not supported")
        if not self._modules:
            raise MXNetError("SequentialModule.bind: no module added")
        self.binded = True
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        shapes, any_labels = data_shapes, False
        for i, (module, meta) in enumerate(zip(self._modules, self._metas)):
            takes = bool(meta.get(self.META_TAKE_LABELS))
            any_labels = any_labels or takes
            if meta.get(self.META_AUTO_WIRING):
                names = module.data_names
                if len(names) != len(shapes):
                    raise MXNetError("SequentialModule: module %d has %d data names for %d "
                                     "outputs of the previous module" % (i, len(names),
                                                                         len(shapes)))
                shapes = [(n, tuple(s[1])) for n, s in zip(names, shapes)]
            module.bind(data_shapes=shapes, label_shapes=label_shapes if takes else None,
                        for_training=for_training,
                        inputs_need_grad=bool(inputs_need_grad or (for_training and i > 0)),
                        force_rebind=force_rebind, grad_req=grad_req)
            shapes = module.output_shapes
        self._label_shapes = label_shapes if any_labels else None

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    def forward(self, data_batch, is_train=None):
        """Run the modules in turn, each on the previous one's outputs."""
        self._check_ready("forward")
        batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            batch.data = module.get_outputs()
            if getattr(batch, "provide_data", None):
                batch.provide_data = [(name, x.shape) for name, x in
                                      zip([n for n, _ in module.output_shapes], batch.data)]

    def backward(self, out_grads=None):
        """Backward through the modules in reverse, each passing its input gradients."""
        for i in range(len(self._modules) - 1, -1, -1):
            module = self._modules[i]
            module.backward(out_grads=out_grads)
            if i == 0:
                break
            out_grads = module.get_input_grads()

    def update(self):
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the outputs of every module that takes labels."""
        for module, meta in zip(self._modules, self._metas):
            if meta.get(self.META_TAKE_LABELS):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        for module in self._modules:
            module.install_monitor(mon)


__getattr__, __dir__ = _exports(__name__, {"BaseModule": "mxlite.module.base_module",
                                           "Uniform": "mxlite.initializer"})
