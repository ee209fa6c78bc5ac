"""``SVRGModule``: a Module trained with stochastic variance-reduced gradients.

Every ``update_freq`` epochs the full gradient ``mu`` over the training data is computed
at a snapshot of the weights (held by an auxiliary module); each batch then steps with
``g(w) - g(w_snapshot) + mu`` instead of ``g(w)``.
"""
import logging

from ...module import Module
from ... import nd
from ..._lazy import exports as _exports
from .svrg_optimizer import _SVRGOptimizer

__all__ = ["SVRGModule"]


class SVRGModule(Module):
    """A :class:`~mxlite.module.Module` with SVRG updates; ``update_freq`` (a positive
    int) is how many epochs pass between full-gradient computations.

    >>> mod = SVRGModule(symbol=net, data_names=['data'], label_names=['lin_reg_label'],
    ...                  update_freq=2)
    >>> mod.fit(train_iter, eval_metric='mse', optimizer='sgd',
    ...         optimizer_params=(('learning_rate', 0.025),), num_epoch=10)
    """

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=None, work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None, update_freq=None):
        super().__init__(symbol, data_names=data_names, label_names=label_names, logger=logger,
                         context=context, work_load_list=work_load_list,
                         fixed_param_names=fixed_param_names, state_names=state_names,
                         group2ctxs=group2ctxs, compression_params=compression_params)
        if not isinstance(update_freq, int) or isinstance(update_freq, bool):
            raise TypeError("SVRGModule: update_freq must be an integer (epochs between full "
                            "gradient computations), got %r" % (update_freq,))
        if update_freq <= 0:
            raise ValueError("SVRGModule: update_freq must be positive, got %d" % update_freq)
        self.update_freq = update_freq
        self._mod_aux = Module(symbol, data_names, label_names, logger, context, work_load_list,
                               fixed_param_names, state_names, group2ctxs, compression_params)
        self._ctx_len = len(self._context)
        self._param_dict = None

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        super().bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
                     shared_module, grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                               force_rebind, shared_module, grad_req)

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Install an ``_SVRGOptimizer`` around ``optimizer``."""
        arg_params = self.get_params()[0]
        self._param_dict = [{k: nd.zeros(v.shape, ctx=ctx) for k, v in arg_params.items()}
                            for ctx in self._context]
        params = dict(optimizer_params)
        params.setdefault("rescale_grad", 1.0 / self._data_shapes[0].shape[0])
        idx2name = dict(enumerate(self._param_names))
        for name in self._param_names:
            idx2name[len(idx2name)] = name + "_full"
        svrg = _SVRGOptimizer(default_optimizer=optimizer, param_idx2name=idx2name, **params)
        super().init_optimizer(kvstore=kvstore, optimizer=svrg, optimizer_params=params,
                               force_init=force_init)

    def forward(self, data_batch, is_train=None):
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def update(self):
        """Step with ``g(w) - g(w_snapshot) + mu``."""
        self._update_svrg_gradients()
        super().update()

    def _update_svrg_gradients(self):
        for k, (ex, ex_aux) in enumerate(zip(self._execs, self._mod_aux._execs)):
            for name, g in ex.grad_dict.items():
                if name in self._param_dict[k]:
                    g[:] = g - ex_aux.grad_dict[name] + self._param_dict[k][name]

    def update_full_grads(self, train_data):
        """Snapshot the weights into the auxiliary module and average its gradients over
        every batch of ``train_data`` (a padded last batch counts by its real share)."""
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        for table in self._param_dict:
            for g in table.values():
                g[:] = 0
        train_data.reset()
        nbatch, padding = 0, 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for k, ex in enumerate(self._mod_aux._execs):
                for name, table in self._param_dict[k].items():
                    table += ex.grad_dict[name]
            padding = batch.pad or 0
        true_num_batch = nbatch - padding / float(train_data.batch_size)
        for table in self._param_dict:
            for g in table.values():
                g /= true_num_batch

    def _epoch_begin(self, epoch, train_data):
        if epoch % self.update_freq == 0:
            self.update_full_grads(train_data)


__getattr__, __dir__ = _exports(__name__, {"mx": "mxlite:"})
