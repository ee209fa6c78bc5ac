"""``Module``: a Symbol bound to executors on one or more contexts, with parameters,
an optimizer and metrics, as ``mxnet.module.Module``."""
import logging

from ..base import MXNetError
from ..context import cpu, Context
from ..io import DataDesc
from ..kvstore.base import KVStoreBase
from ..kvstore.dist import is_async, is_dist
from ..model import _create_kvstore
from .base_module import BaseModule
from .executor_group import DataParallelExecutorGroup

__all__ = ["Module"]


def _descs(shapes):
    if shapes is None:
        return []
    return [s if isinstance(s, DataDesc) else DataDesc(*s) for s in shapes]


class Module(BaseModule):
    """Train and run a Symbol.

    Parameters
    ----------
    symbol : Symbol
    data_names, label_names : list of str
        The arguments fed from ``DataBatch.data`` and ``DataBatch.label``.
    context : Context or list of Context
        The batch is split evenly over several contexts.
    fixed_param_names : list of str
        Parameters that are not updated.

    Examples
    --------
    >>> mod = mx.mod.Module(net, context=mx.cpu())
    >>> mod.fit(train_iter, num_epoch=2, optimizer_params={'learning_rate': 0.1})
    """

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=None, work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        self._symbol = symbol
        self._context = [cpu()] if context is None else (
            [context] if isinstance(context, Context) else list(context))
        self._data_names = list(data_names or [])
        self._label_names = list(label_names or [])
        self._fixed_param_names = list(fixed_param_names or [])
        self._state_names = list(state_names or [])
        args = symbol.list_arguments()
        inputs = set(self._data_names) | set(self._label_names) | set(self._state_names)
        for n in self._data_names:
            if n not in args:
                raise ValueError("Module: data name %r is not an argument of the symbol; its "
                                 "arguments are %s" % (n, args))
        self._label_names = [n for n in self._label_names if n in args]
        self._param_names = [n for n in args if n not in inputs]
        self._aux_names = symbol.list_auxiliary_states()
        self._output_names = symbol.list_outputs()
        self._arg_params = None
        self._aux_params = None
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._exec_group = None
        self._optimizer = None
        self._updater = None
        self._kvstore = None
        self._update_on_kvstore = False
        self._preload_opt_states = None
        self._data_shapes = self._label_shapes = None

    # -- properties ------------------------------------------------------------------

    @property
    def output_shapes(self):
        shapes = {d.name: d.shape for d in self._data_shapes + self._label_shapes}
        _, out, _ = self._symbol.infer_shape(**shapes)
        return list(zip(self._output_names, out))

    # -- binding -------------------------------------------------------------------------
    @property
    def _execs(self):
        """The executors, one per context (empty before bind)."""
        return self._exec_group.execs if self._exec_group is not None else []

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind executors for input shapes (``provide_data``/``provide_label``) through a
        :class:`~mxlite.module.executor_group.DataParallelExecutorGroup`; with
        ``shared_module``, its parameter arrays are used."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if self.binded and self.params_initialized:
            self.get_params()       # keep the trained values over the re-bind
        shared_group = None
        if shared_module is not None:
            if not (shared_module.binded and shared_module.params_initialized):
                raise MXNetError("bind: shared_module must be bound and have its parameters "
                                 "initialised")
            shared_group = shared_module._exec_group
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = _descs(data_shapes)
        self._label_shapes = _descs(label_shapes)
        self._grad_req = grad_req
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes or None, self._param_names, for_training, inputs_need_grad,
            shared_group, logger=self.logger, fixed_param_names=self._fixed_param_names,
            grad_req=grad_req, state_names=self._state_names, group2ctxs=self._group2ctxs)
        self.binded = True
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params, self._aux_params = shared_module._arg_params, \
                shared_module._aux_params
        if self.params_initialized:
            self._push_params()

    def reshape(self, data_shapes, label_shapes=None):
        """Re-bind the executors for new input shapes (parameters are kept)."""
        if not self.binded:
            raise MXNetError("reshape: call bind() first")
        self._data_shapes = _descs(data_shapes)
        self._label_shapes = _descs(label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes or None)

    # -- parameters ------------------------------------------------------------------------
    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise parameters from ``arg_params``/``aux_params`` or ``initializer``."""
        from .. import nd, initializer as _init
        if self.params_initialized and not force_init:
            return
        if not self.binded:
            raise MXNetError("init_params: call bind() first")
        if initializer is None:
            initializer = _init.Uniform(0.01)
        ex = self._execs[0]
        attrs = self._symbol.attr_dict()

        def fill(names, src, arrays, kind):
            out = {}
            for name in names:
                arr = nd.zeros(arrays[name].shape, dtype=arrays[name].dtype)
                if src is not None and name in src:
                    if src[name].shape != arr.shape:
                        raise MXNetError("init_params: %s %r has shape %s, expected %s"
                                         % (kind, name, src[name].shape, arr.shape))
                    arr[:] = src[name].as_in_context(arr.context)
                elif src is not None and not allow_missing:
                    raise MXNetError("init_params: %s %r is missing from the given %s_params"
                                     % (kind, name, kind))
                else:
                    initializer(_init.InitDesc(name, attrs.get(name, {})), arr)
                out[name] = arr
            return out

        if not allow_extra:
            for src, names, kind in ((arg_params, self._param_names, "arg"),
                                     (aux_params, self._aux_names, "aux")):
                extra = [k for k in (src or {}) if k not in names]
                if extra:
                    raise MXNetError("init_params: %s_params has names the symbol does not use: "
                                     "%s (pass allow_extra=True)" % (kind, extra))
        self._arg_params = fill(self._param_names, arg_params, ex.arg_dict, "arg")
        self._aux_params = fill(self._aux_names, aux_params, ex.aux_dict, "aux")
        self.params_initialized = True
        self._push_params()

    def _push_params(self):
        self._exec_group.set_params(self._arg_params, self._aux_params)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter values (``init_params`` with the given arrays)."""
        if not self.binded:
            self._arg_params, self._aux_params = dict(arg_params), dict(aux_params or {})
            self.params_initialized = True
            return
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def get_params(self):
        """``(arg_params, aux_params)``: copies of the current values on cpu."""
        if not self.params_initialized:
            raise MXNetError("get_params: parameters are not initialised; call init_params()")
        if self._exec_group is not None:
            # averaged over devices (the running statistics differ), as MXNet does
            self._exec_group.get_params(self._arg_params, self._aux_params)
        return dict(self._arg_params), dict(self._aux_params)

    # -- optimizer -------------------------------------------------------------------------
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Create the optimizer; ``rescale_grad`` defaults to 1/batch_size.

        With a distributed ``kvstore`` (``'dist_sync'``, ...) the parameters are
        broadcast from rank 0 and the gradients summed over the workers; as in MXNet,
        a ``*_sync`` store makes the default ``rescale_grad`` 1/(batch_size x
        num_workers). A local store name keeps the in-process reduction over devices.
        """
        from .. import optimizer as _opt
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring...")
            return
        if not self.params_initialized:
            raise MXNetError("init_optimizer: call init_params() first")
        self._kvstore, self._update_on_kvstore = None, False
        if isinstance(kvstore, KVStoreBase) or (isinstance(kvstore, str) and is_dist(kvstore)):
            self._kvstore, self._update_on_kvstore = _create_kvstore(
                kvstore, len(self._context), self._arg_params)
            if is_dist(self._kvstore.type) and is_async(self._kvstore.type):
                self._update_on_kvstore = True
        batch_size = self._data_shapes[0].shape[0]
        if self._kvstore is not None and "dist" in self._kvstore.type \
                and "_sync" in self._kvstore.type:
            batch_size *= self._kvstore.num_workers
        idx2name = {i: n for i, n in enumerate(self._param_names)}
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault("rescale_grad", 1.0 / batch_size)
            optimizer = _opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name,
                                    **params)
        self._optimizer = optimizer
        self._updater = _opt.get_updater(optimizer)
        if self._kvstore is not None:
            self._init_kvstore()
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self._updater.set_states(self._preload_opt_states)
            self._preload_opt_states = None

    def _init_kvstore(self):
        """Rank 0's parameters on every worker and device (MXNet's ``_initialize_kvstore``,
        which broadcasts only when updating on the store; mxlite always does)."""
        kv = self._kvstore
        if self._update_on_kvstore:
            kv.set_optimizer(self._optimizer)
        for name in self._param_names:
            kv.broadcast(name, self._execs[0].arg_dict[name],
                         out=[ex.arg_dict[name] for ex in self._execs])
        for name in self._param_names:
            self._arg_params[name][:] = self._execs[0].arg_dict[name].as_in_context(cpu())

    # -- computation -----------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Run the executors on a DataBatch (re-binding them for new input shapes)."""
        self._check_ready("forward")
        new_data = tuple(a.shape for a in data_batch.data)
        if tuple(d.shape for d in self._data_shapes) != new_data:
            data_descs = getattr(data_batch, "provide_data", None) or [
                DataDesc(d.name, shape, d.dtype, d.layout)
                for d, shape in zip(self._data_shapes, new_data)]
            label_descs = getattr(data_batch, "provide_label", None) or [
                DataDesc(d.name, a.shape, d.dtype, d.layout)
                for d, a in zip(self._label_shapes, data_batch.label or [])] or None
            self.reshape(data_descs, label_descs)
        self._exec_group.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Backward through every executor (``out_grads`` are sliced per device)."""
        if not self.for_training:
            raise MXNetError("backward: the module was bound with for_training=False")
        self._exec_group.backward(out_grads)

    def update(self):
        """Apply the optimizer: gradients are summed over devices, weights copied back."""
        if not self.optimizer_initialized:
            raise MXNetError("update: call init_optimizer() first")
        if self._kvstore is not None:
            self._update_with_kvstore()
            return
        first = self._execs[0]
        for i, name in enumerate(self._param_names):
            if name not in first.grad_dict:
                continue
            weight = first.arg_dict[name]
            grad = first.grad_dict[name]
            if len(self._execs) > 1:
                grad = grad.copy()
                for ex in self._execs[1:]:
                    grad += ex.grad_dict[name].as_in_context(weight.context)
            self._updater(i, grad, weight)
            for ex in self._execs[1:]:
                weight.copyto(ex.arg_dict[name])

    def _update_with_kvstore(self):
        """Push every gradient to the store in one call; pull the updated weights, or the
        sums that this worker's optimizer then applies (as MXNet's ``_update_params``)."""
        first = self._execs[0]
        names = [n for n in self._param_names if n in first.grad_dict]
        grads = [[ex.grad_dict[n] for ex in self._execs] for n in names]
        if self._update_on_kvstore:
            self._kvstore.pushpull(names, grads, out=[[ex.arg_dict[n] for ex in self._execs]
                                                      for n in names])
            return
        self._kvstore.pushpull(names, grads)
        index = {n: i for i, n in enumerate(self._param_names)}
        for name in names:
            weight = first.arg_dict[name]
            self._updater(index[name], first.grad_dict[name], weight)
            for ex in self._execs[1:]:
                weight.copyto(ex.arg_dict[name])

    def get_outputs(self, merge_multi_context=True):
        """The outputs of the last forward (concatenated over devices, or one list per
        output with each device's part)."""
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        if not self.inputs_need_grad:
            raise MXNetError("get_input_grads: bind with inputs_need_grad=True")
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        """The state arrays (``state_names``) of every device."""
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the states from arrays or to one scalar ``value``."""
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the labels and the last outputs."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """Have the :class:`~mxlite.monitor.Monitor` ``mon`` watch every executor (also
        those made later for new input shapes)."""
        if not self.binded:
            raise MXNetError("install_monitor: call bind() first")
        self._exec_group.install_monitor(mon)

    # -- files -----------------------------------------------------------------------------------
    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` (and ``.states``)."""
        from ..model import save_checkpoint
        arg_params, aux_params = self.get_params()
        save_checkpoint(prefix, epoch, self._symbol, arg_params, aux_params)
        if save_optimizer_states:
            self.save_optimizer_states("%s-%04d.states" % (prefix, epoch))

    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module with the symbol and parameters of a checkpoint (then call bind)."""
        from ..model import load_checkpoint
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params, mod._aux_params = args, auxs
        mod.params_initialized = True
        if load_optimizer_states:
            with open("%s-%04d.states" % (prefix, epoch), "rb") as f:
                mod._preload_opt_states = f.read()
        return mod

    def save_optimizer_states(self, fname):
        if not self.optimizer_initialized:
            raise MXNetError("save_optimizer_states: no optimizer yet")
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
            return
        with open(fname, "wb") as f:
            f.write(self._updater.get_states())

    def load_optimizer_states(self, fname):
        if not self.optimizer_initialized:
            raise MXNetError("load_optimizer_states: call init_optimizer() first")
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            return
        with open(fname, "rb") as f:
            self._updater.set_states(f.read())





# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "InitDesc": "mxlite.initializer",
    "Uniform": "mxlite.initializer",
    "ctx": "mxlite.context:",
    "load_checkpoint": "mxlite.model",
    "nd": "mxlite.nd:",
    "opt": "mxlite.optimizer:",
    "zeros": "mxlite.nd",
})
