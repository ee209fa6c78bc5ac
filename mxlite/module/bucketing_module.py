"""``BucketingModule``: one :class:`Module` per bucket key (sequence length, say), all
bound over the same parameter arrays, as ``mxnet.module.BucketingModule``.

The default bucket's module owns the parameters, their gradients, the auxiliary states
and the optimizer. Every other bucket's executors are re-pointed at those very arrays,
so an update made while one bucket is active is what the next bucket computes with.
"""
import logging

import numpy as np

from ..base import MXNetError
from ..context import cpu
from ..io import DataDesc
from ..name import NameManager
from ..symbol.symbol import Symbol
from .base_module import BaseModule
from .module import Module

__all__ = ["BucketingModule"]


def _names(names):
    return list(names) if names is not None else []


class _SharedUpdater:
    """The default bucket's updater, addressed by the default bucket's parameter indices.

    NOTE: ``Module.update`` numbers parameters by their position in its own symbol; a
    bucket whose symbol lists them in another order would otherwise read and write the
    optimizer state (momentum, ...) of a different parameter, as MXNet 1.9.1 does.
    """

    def __init__(self, updater, index_map):
        self.updater = updater
        self.index_map = index_map

    def __call__(self, index, grad, weight):
        self.updater(self.index_map[index], grad, weight)

    def get_states(self, dump_optimizer=False):
        return self.updater.get_states(dump_optimizer)

    def set_states(self, states):
        self.updater.set_states(states)


class BucketingModule(BaseModule):
    """Train and run a network whose symbol depends on a bucket key (a sequence length).

    Parameters
    ----------
    sym_gen : callable
        ``sym_gen(bucket_key) -> (symbol, data_names, label_names)``. Every bucket must use
        parameters of the same names and shapes as the default bucket (a subset of them).
    default_bucket_key : hashable
        The bucket bound by :meth:`bind`; it owns the parameters, so make it the largest.
    logger : Logger
    context : Context or list of Context
    work_load_list : list of float
    fixed_param_names : list of str
        Parameters that are not updated.
    state_names : list of str
        Inputs that are neither data nor labels (kept at zero unless set).
    group2ctxs, compression_params
        Accepted for compatibility and passed to each :class:`Module`.

    Examples
    --------
    >>> def sym_gen(seq_len):
    ...     data = mx.sym.var('data')
    ...     emb = mx.sym.sum(mx.sym.Embedding(data, input_dim=10, output_dim=4,
    ...                                       name='embed'), axis=1)
    ...     out = mx.sym.FullyConnected(emb, num_hidden=2, name='fc')
    ...     return mx.sym.SoftmaxOutput(out, name='softmax'), ('data',), ('softmax_label',)
    >>> mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=8)
    >>> mod.fit(bucket_iter, num_epoch=3)   # batches carry bucket_key and provide_data

    Notes
    -----
    Two departures from MXNet 1.9.1, both where it goes wrong: optimizer states follow
    parameter names (not positions) across buckets, and ``save_checkpoint`` writes each
    bucket's symbol with fresh automatic names, so checkpoints of networks with unnamed
    layers load back.
    """

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=None,
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise ValueError("BucketingModule: default_bucket_key is required (the key of the "
                             "bucket that bind() sets up; usually the largest one)")
        if not callable(sym_gen):
            raise TypeError("BucketingModule: sym_gen must be callable as "
                            "sym_gen(bucket_key) -> (symbol, data_names, label_names), got %s"
                            % type(sym_gen).__name__)
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        self._context = cpu() if context is None else context
        self._work_load_list = work_load_list
        self._fixed_param_names = _names(fixed_param_names)
        self._state_names = _names(state_names)
        self._group2ctxs = group2ctxs
        self._compression_params = compression_params
        symbol, data_names, _ = self._call_sym_gen(default_bucket_key)
        args = symbol.list_arguments()
        for kind, names in (("data", data_names), ("state", self._state_names),
                            ("fixed_param", self._fixed_param_names)):
            unknown = [n for n in names if n not in args]
            if unknown:
                raise ValueError("BucketingModule: %s name(s) %s are not arguments of the "
                                 "default bucket's symbol; its arguments are %s"
                                 % (kind, unknown, args))
        self._grad_req = "write"
        self._reset_bind()

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    def _call_sym_gen(self, bucket_key):
        # a fresh NameManager: automatic names (fullyconnected0, ...) agree across buckets
        with NameManager():
            out = self._sym_gen(bucket_key)
        if not isinstance(out, (tuple, list)) or len(out) != 3:
            got = ("a %s of %d items" % (type(out).__name__, len(out))
                   if isinstance(out, (tuple, list)) else "a %s" % type(out).__name__)
            raise ValueError("BucketingModule: sym_gen(%r) must return (symbol, data_names, "
                             "label_names), got %s" % (bucket_key, got))
        symbol, data_names, label_names = out
        if not isinstance(symbol, Symbol):
            raise TypeError("BucketingModule: sym_gen(%r) returned a %s as its symbol, "
                            "expected a Symbol" % (bucket_key, type(symbol).__name__))
        return symbol, _names(data_names), _names(label_names)

    def _new_module(self, bucket_key, symbol=None):
        gen_symbol, data_names, label_names = self._call_sym_gen(bucket_key)
        return Module(symbol if symbol is not None else gen_symbol, data_names, label_names,
                      logger=self.logger, context=self._context,
                      work_load_list=self._work_load_list,
                      fixed_param_names=self._fixed_param_names,
                      state_names=self._state_names, group2ctxs=self._group2ctxs,
                      compression_params=self._compression_params)

    @property
    def _default_module(self):
        return self._buckets.get(self._default_bucket_key)

    def _need(self, what, bound=True, params=False, optimizer=False):
        if bound and not self.binded:
            raise MXNetError("BucketingModule.%s: call bind() first" % what)
        if params and not self.params_initialized:
            raise MXNetError("BucketingModule.%s: call init_params() first" % what)
        if optimizer and not self.optimizer_initialized:
            raise MXNetError("BucketingModule.%s: call init_optimizer() first" % what)

    # -- properties ------------------------------------------------------------------------
    @property
    def default_bucket_key(self):
        """The key of the bucket that owns the parameters."""
        return self._default_bucket_key

    @property
    def data_names(self):
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def label_names(self):
        if self.binded:
            return self._curr_module.label_names
        return self._call_sym_gen(self._default_bucket_key)[2]

    @property
    def output_names(self):
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        self._need("data_shapes")
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        self._need("label_shapes")
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        self._need("output_shapes")
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        """The symbol of the current bucket."""
        self._need("symbol")
        return self._curr_module.symbol

    # -- binding and buckets -------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        """Bind the default bucket (the others are bound by :meth:`switch_bucket`).

        ``data_shapes``/``label_shapes`` are those of the default bucket. Parameters that
        are already initialised survive a ``force_rebind``.
        """
        if shared_module is not None:
            raise MXNetError("BucketingModule.bind: shared_module is not supported")
        saved = self.get_params() if self.params_initialized else None
        previous = self._default_module
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
            return
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        module = self._default_module
        if module is None:
            module = self._new_module(self._default_bucket_key)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, grad_req=grad_req)
        if previous is not None and previous is not module and previous.optimizer_initialized:
            # a rebind (training -> prediction, say) keeps the optimizer and its states
            module._optimizer, module._updater = previous._optimizer, previous._updater
            module.optimizer_initialized = True
        self._buckets[self._default_bucket_key] = module
        self._curr_module = module
        self._curr_bucket_key = self._default_bucket_key
        self.binded = True
        if saved is not None:
            self.set_params(*saved)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key`` the current bucket, creating and binding it the first time.

        Parameters
        ----------
        bucket_key : hashable
        data_shapes, label_shapes : list of DataDesc or (name, shape)
            Typically ``data_batch.provide_data`` and ``data_batch.provide_label``.
        """
        self._need("switch_bucket")
        module = self._buckets.get(bucket_key)
        if module is None:
            module = self._new_module(bucket_key)
            self._buckets[bucket_key] = module
        if not module.binded:
            if data_shapes is None:
                raise MXNetError("BucketingModule.switch_bucket: bucket %r is not bound yet and "
                                 "no data_shapes were given (does the batch set provide_data?)"
                                 % (bucket_key,))
            try:
                self._bind_shared(bucket_key, module, data_shapes, label_shapes)
            except Exception:
                del self._buckets[bucket_key]
                raise
        self._curr_module = module
        self._curr_bucket_key = bucket_key

    def _bind_shared(self, bucket_key, module, data_shapes, label_shapes):
        """Bind ``module`` over the default bucket's parameter, gradient and aux arrays."""
        owner = self._default_module
        module.bind(data_shapes, label_shapes, owner.for_training, owner.inputs_need_grad,
                    force_rebind=False, grad_req=self._grad_req)
        for ex, src in zip(module._execs, owner._execs):
            self._share_arrays(bucket_key, module, ex, src)
        module._exec_group._collect_arrays()
        if owner.params_initialized:
            self._adopt_params(module)
        if owner.optimizer_initialized:
            self._borrow_optimizer(module)

    def _share_arrays(self, bucket_key, module, ex, src):
        params = set(module._param_names)
        shared = [(ex.arg_names, ex.arg_arrays, src.arg_dict, params.__contains__),
                  (ex.aux_names, ex.aux_arrays, src.aux_dict, lambda name: True)]
        for names, arrays, owned, is_shared in shared:
            for i, name in enumerate(names):
                if not is_shared(name):
                    continue
                if name not in owned:
                    raise MXNetError(
                        "BucketingModule.switch_bucket: parameter %r of bucket %r is not in the "
                        "default bucket %r; the default bucket must hold every parameter "
                        "(make it the largest bucket)" % (name, bucket_key,
                                                          self._default_bucket_key))
                if owned[name].shape != arrays[i].shape:
                    raise MXNetError(
                        "BucketingModule.switch_bucket: parameter %r has shape %s in bucket %r "
                        "but %s in the default bucket %r; shared parameters must have the same "
                        "shape in every bucket" % (name, arrays[i].shape, bucket_key,
                                                   owned[name].shape, self._default_bucket_key))
                arrays[i] = owned[name]
        grads = src.grad_dict
        for i, name in enumerate(ex.arg_names):
            if name in params and ex.grad_arrays[i] is not None and name in grads:
                ex.grad_arrays[i] = grads[name]

    def _adopt_params(self, module):
        # the bucket's own arrays are the owner's, so these dicts only name a subset of them
        owner = self._default_module
        module._arg_params = {n: owner._arg_params[n] for n in module._param_names
                              if n in owner._arg_params}
        module._aux_params = {n: owner._aux_params[n] for n in module._aux_names
                              if n in owner._aux_params}
        module.params_initialized = True

    def _borrow_optimizer(self, module):
        owner = self._default_module
        index = {n: i for i, n in enumerate(owner._param_names)}
        module._optimizer = owner._optimizer
        module._updater = _SharedUpdater(owner._updater,
                                         [index[n] for n in module._param_names])
        module._kvstore, module._update_on_kvstore = owner._kvstore, owner._update_on_kvstore
        module.optimizer_initialized = True

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Bind the batch's bucket ahead of time; the current bucket stays current."""
        self._need("prepare", params=True)
        current = self._curr_bucket_key
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self.switch_bucket(current, None, None)

    # -- parameters --------------------------------------------------------------------------
    def init_params(self, initializer=None, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise the shared parameters (through the default bucket)."""
        if self.params_initialized and not force_init:
            return
        self._need("init_params")
        owner = self._default_module
        owner.init_params(initializer=initializer, arg_params=arg_params,
                          aux_params=aux_params, allow_missing=allow_missing,
                          force_init=force_init, allow_extra=allow_extra)
        for module in self._buckets.values():
            if module is not owner and module.binded:
                self._adopt_params(module)
        self.params_initialized = True

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign the shared parameters (see :meth:`Module.set_params`)."""
        if self.params_initialized and not force_init:
            self.logger.warning("Parameters already initialized and force_init=False. "
                                "set_params call ignored.")
            return
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=True, allow_extra=allow_extra)

    def get_params(self):
        """``(arg_params, aux_params)`` of the default bucket: copies on cpu."""
        if not self.params_initialized:
            raise MXNetError("BucketingModule.get_params: parameters are not initialised; "
                             "call init_params()")
        return self._default_module.get_params()

    # -- optimizer ---------------------------------------------------------------------------
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """One optimizer, created by the default bucket and borrowed by every other one."""
        self._need("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning("optimizer already initialized, ignoring.")
            return
        owner = self._default_module
        owner.init_optimizer(kvstore, optimizer, optimizer_params, force_init=force_init)
        for module in self._buckets.values():
            if module is not owner and module.binded:
                self._borrow_optimizer(module)
        self.optimizer_initialized = True

    # -- computation ---------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Switch to ``data_batch.bucket_key`` and run that bucket's module.

        A batch without ``provide_data`` is described by its own arrays' shapes.
        """
        self._need("forward", params=True)
        key = data_batch.bucket_key
        if key is None:
            key = self._curr_bucket_key
        data_shapes, label_shapes = data_batch.provide_data, data_batch.provide_label
        if data_shapes is None and key not in self._buckets:
            _, data_names, label_names = self._call_sym_gen(key)
            data_shapes = [DataDesc(n, a.shape, np.dtype(a.dtype).type)
                           for n, a in zip(data_names, data_batch.data)]
            label_shapes = [DataDesc(n, a.shape, np.dtype(a.dtype).type)
                            for n, a in zip(label_names, data_batch.label or [])]
        self.switch_bucket(key, data_shapes, label_shapes)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        """Backward through the current bucket."""
        self._need("backward", params=True)
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        """One optimizer step on the shared parameters with the current bucket's gradients."""
        self._need("update", params=True, optimizer=True)
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        """The current bucket's outputs of the last forward."""
        self._need("get_outputs", params=True)
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """The current bucket's input gradients (bind with ``inputs_need_grad=True``)."""
        self._need("get_input_grads", params=True)
        if not self.inputs_need_grad:
            raise MXNetError("BucketingModule.get_input_grads: bind with inputs_need_grad=True")
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the current bucket's outputs."""
        self._need("update_metric", params=True)
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    # -- files -------------------------------------------------------------------------------
    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Write ``prefix-%04d.params``, ``prefix-<key>-symbol.json`` per bucket and
        ``prefix.buckets`` (the keys, which must be integers, as in MXNet)."""
        from .. import nd
        from ..model import save_checkpoint
        if not self._buckets:
            raise MXNetError("BucketingModule.save_checkpoint: nothing is bound yet")
        keys = list(self._buckets)
        if not all(isinstance(k, (int, np.integer)) for k in keys):
            raise MXNetError("BucketingModule.save_checkpoint: bucket keys must be integers "
                             "to be saved, got %s" % keys)
        arg_params, aux_params = self.get_params()
        save_checkpoint(prefix, epoch, None, arg_params, aux_params)
        for key in keys:
            self._call_sym_gen(key)[0].save("%s-%s-symbol.json" % (prefix, key),
                                            remove_amp_cast=remove_amp_cast)
        nd.save("%s.buckets" % prefix, nd.array(keys, dtype=np.int32))

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule with the buckets and parameters of a checkpoint (then bind)."""
        from .. import nd, symbol as sym
        from ..model import load_params
        if sym_gen is None or default_bucket_key is None:
            raise ValueError("BucketingModule.load: sym_gen and default_bucket_key are required")
        keys = [int(k) for k in nd.load("%s.buckets" % prefix)[0].asnumpy()]
        symbols = {k: sym.load("%s-%s-symbol.json" % (prefix, k)) for k in keys}
        arg_params, aux_params = load_params(prefix, epoch)
        return BucketingModule.load_dict(symbols, sym_gen, default_bucket_key, arg_params,
                                         aux_params, **kwargs)

    @staticmethod
    def load_dict(sym_dict=None, sym_gen=None, default_bucket_key=None, arg_params=None,
                  aux_params=None, **kwargs):
        """A BucketingModule from ``{bucket_key: symbol}`` and shared parameters."""
        if sym_dict is None or arg_params is None or aux_params is None:
            raise ValueError("BucketingModule.load_dict: sym_dict, arg_params and aux_params "
                             "are required")
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        if default_bucket_key not in sym_dict:
            raise ValueError("BucketingModule.load_dict: default_bucket_key %r is not among "
                             "the buckets %s" % (default_bucket_key, list(sym_dict)))
        for key, symbol in sym_dict.items():
            mod._buckets[key] = mod._new_module(key, symbol)
        owner = mod._default_module
        owner._arg_params, owner._aux_params = dict(arg_params), dict(aux_params)
        owner.params_initialized = True
        mod._curr_module = owner
        mod._curr_bucket_key = default_bucket_key
        mod.params_initialized = True
        return mod


# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "Uniform": "mxlite.initializer",
    "ctx": "mxlite.context:",
    "load_params": "mxlite.model",
    "nd": "mxlite.nd:",
    "sym": "mxlite.symbol:",
})
