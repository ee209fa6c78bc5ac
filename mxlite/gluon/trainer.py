"""``gluon.Trainer``: applies an Optimizer to a set of Parameters.

As in MXNet 1.x: gradients of a parameter that lives on several contexts are
summed, the sum updates the weight, and the new weight is on every context.
The sum goes through an ``mx.kv`` store: the one given as ``kvstore`` (an
instance is always used), or one created by name when the parameters live on
several contexts (with one context and a name there is no store). The store
either keeps its own copy of each weight and updates it with the optimizer on
push (``update_on_kvstore=True``, MXNet's default) and every context pulls the
new weight, or it sums the gradients and writes the sum back to every context,
whose updaters then update their own copies (``update_on_kvstore=False``).

Differences from MXNet, on purpose:

* a step checks every gradient for staleness *before* touching anything, and
  its error names all stale parameters; a failed step leaves the weights, the
  optimizer states and the freshness of the gradients as they were;
* ``ignore_stale_grad`` also skips stale parameters when updating on the kvstore;
* all gradients go to the kvstore in one ``pushpull``, which checks every key and
  creates every optimizer state before changing any weight;
* a ``set_data`` on a parameter updated on a store that the caller passed in puts
  the new value in that store (MXNet fails on the duplicate key);
* with a distributed store (``kvstore='dist_sync'``, ...) the parameters are
  broadcast from rank 0 when the Trainer is created (MXNet: at the first step), and
  every step pushes every trainable parameter, stale or not, so that all workers make
  the same collective calls.

A gradient is *fresh* when ``backward`` has written it since the Trainer last
used it: MXNet's ``_fresh_grad`` flag of the parameter's data array, set by
``backward`` and cleared by the update. ``zero_grad`` or a write into ``.grad``
does not make it fresh; reducing it over contexts does not either.
"""
import numbers

from .. import optimizer as opt
from ..autograd import is_fresh
from ..base import MXNetError
from ..kvstore.base import KVStoreBase, create
from ..kvstore.kvstore import KVStore
from ..kvstore.dist import is_async, is_dist
from ..model import _create_kvstore
from .parameter import Parameter

__all__ = ["Trainer"]


class Trainer:
    """Applies an Optimizer on a set of Parameters; use it with ``autograd``.

    Parameters
    ----------
    params : ParameterDict, dict or list of Parameter
        The parameters to optimise (a dict is taken in sorted key order, as in MXNet).
    optimizer : str or Optimizer
        An optimizer name for :func:`mx.optimizer.create`, or an instance.
    optimizer_params : dict, optional
        Keyword arguments of the optimizer (only with a name), e.g.
        ``{'learning_rate': 0.1}``.
    kvstore : str, KVStore or None, default 'device'
        How gradients are reduced over contexts: a store type for :func:`mx.kv.create`
        (a local type is used only with several contexts; ``'dist_sync'`` and the
        other distributed types sum over the workers of an MPI job), a store
        instance (always used), or None.
    compression_params : dict, optional
        Passed to the store's ``set_gradient_compression`` (a local store checks
        them and does not compress; ``'dist_sync'`` compresses).
    update_on_kvstore : bool, optional
        Update on the kvstore's copy of the weights (MXNet's default with several
        contexts) or on every context. Environment variable ``MXNET_UPDATE_ON_KVSTORE``
        as in MXNet.

    Examples
    --------
    >>> net = mx.gluon.nn.Dense(1, in_units=2); net.initialize()
    >>> trainer = mx.gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    >>> x = mx.nd.ones((4, 2))
    >>> with mx.autograd.record():
    ...     loss = net(x).sum()
    >>> loss.backward()
    >>> trainer.step(4)
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        params = self._param_list(params)
        self._params = []
        self._param2idx = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError("First argument must be a list or dict of Parameters, "
                                 "got list of %s." % (type(param)))
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params or {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kvstore = None
        self._reset_kvstore()
        if _is_dist(kvstore):
            # Every worker starts from rank 0's parameters, before any forward pass.
            self._ensure_kv()

    @staticmethod
    def _param_list(params):
        if hasattr(params, "keys") and hasattr(params, "__getitem__"):
            return [params[key] for key in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise ValueError("First argument must be a list or dict of Parameters, got %s."
                             % (type(params)))
        return list(params)

    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise MXNetError(
                    "All Parameters must be initialized on the same set of contexts, "
                    "but Parameter %s is initialized on %s while previous Parameters "
                    "are initialized on %s." % (param.name, str(ctx), str(contexts)))
            contexts = ctx
        return contexts

    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = {i: param for i, param in enumerate(self._params)}
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise ValueError("optimizer_params must be None if optimizer is an instance of "
                                 "Optimizer instead of str")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in (self._contexts or [None])]

    # -- the kvstore ------------------------------------------------------------------
    def _reset_kvstore(self):
        if self._kvstore is not None and _is_dist(self._kvstore):
            raise RuntimeError("Cannot reset distributed KVStore: set the parameters' data "
                               "before creating the Trainer")
        if self._kvstore is not None:
            # A row_sparse weight's contexts hold only the rows last pulled: take its whole
            # value back from the store, which the next one starts from. (MXNet starts
            # from those rows and loses the others.)
            for param in self._params:
                if param._stype != "default" and param._data is not None \
                        and param not in self._params_to_init:
                    self._kvstore.pull(self._param2idx[param.name], out=list(param._data))
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = False
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_kvstore(self):
        """Create (or take) the kvstore and decide ``update_on_kvstore``, as MXNet does:
        row_sparse weights live in a store that updates them (even on one context);
        sparse gradients of dense weights are summed there and applied on every
        context, unless the store is distributed."""
        config = self._kvstore_params
        if any(p._stype != "default" for p in self._params):
            kvstore = _sparse_kvstore(config["kvstore"])
            if config["update_on_kvstore"] is False:
                raise ValueError("Cannot set update_on_kvstore=False when sparse weights are "
                                 "present.")
            update = True
        else:
            kvstore, update = _create_kvstore(config["kvstore"], len(self._contexts),
                                              {p.name: p for p in self._params})
            if any(p._grad_stype != "default" for p in self._params):
                update = _is_dist(kvstore)
                if config["update_on_kvstore"] is False and update:
                    raise ValueError("Cannot set update_on_kvstore=False on dist kvstore "
                                     "when sparse gradients are present.")
                if kvstore is not None and not isinstance(kvstore, KVStore):
                    raise ValueError("Cannot use %s for multi-device training with sparse "
                                     "gradients" % type(kvstore).__name__)
        if config["update_on_kvstore"] is not None:
            update = bool(config["update_on_kvstore"])
        if _is_dist(kvstore) and is_async(kvstore.type):
            if config["update_on_kvstore"] is False:
                raise ValueError("Please set update_on_kvstore=True when training in async "
                                 "mode (kvstore %r)" % kvstore.type)
            update = True
        if kvstore is None:
            if update:
                raise ValueError("Cannot set update_on_kvstore=True without a kvstore: the "
                                 "parameters live on one context (%s) and kvstore=%r"
                                 % (self._contexts[0], config["kvstore"]))
            self._kvstore = self._update_on_kvstore = None
        else:
            if update and not kvstore.is_capable(KVStoreBase.OPTIMIZER):
                if config["update_on_kvstore"]:
                    raise ValueError("Please set update_on_kvstore=False when training with %s"
                                     % type(kvstore).__name__)
                update = False
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore = kvstore
            self._update_on_kvstore = update
        self._kv_initialized = True

    def _init_params(self, only=None):
        """Put context 0's value in the kvstore and on every context (kvstore.broadcast);
        ``only``: of that parameter alone (the others wait)."""
        waiting, new = [], []
        for param in self._params_to_init:
            if param._deferred_init or (only is not None and param is not only):
                waiting.append(param)
                continue
            if self._kvstore:
                idx = self._param2idx[param.name]
                arrays = param._check_and_get(param._data, list)
                has_key = getattr(self._kvstore, "_has_key", None)
                if has_key is not None and has_key(idx):
                    # The same store again after _reset_kvstore (a set_data on a
                    # parameter updated on the kvstore): MXNet would fail on the
                    # duplicate init; the store takes the new value instead.
                    self._kvstore._assign(idx, arrays[0])
                    self._kvstore.pull(idx, out=arrays)
                else:
                    new.append((idx, arrays))
        if new:
            # one call for all: a distributed store makes one broadcast of them
            self._kvstore.broadcast([i for i, _ in new], [a[0] for _, a in new],
                                    out=[a for _, a in new])
        self._params_to_init = waiting

    def _ensure_kv(self):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    def _row_sparse_pull(self, param, out, row_id, full_idx=False):
        """Pull rows ``row_id`` of a row_sparse ``param`` from the store into ``out`` (an
        array or a list), the other rows zero; ``full_idx``: all rows (``row_id`` unused)."""
        # Only this weight goes into the store now: the others' contexts may already be
        # in a recorded forward, which a broadcast into them would change under it.
        if not self._kv_initialized:
            self._init_kvstore()
        if param in self._params_to_init:
            self._init_params(only=param)
        idx = self._param2idx[param.name]
        if full_idx:
            self._kvstore.pull(idx, out=out)
        else:
            self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id)

    # -- public API ------------------------------------------------------------------
    @property
    def learning_rate(self):
        """The optimizer's current learning rate."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate can be "
                              "accessed.")
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        """The Optimizer."""
        if isinstance(self._optimizer, opt.Optimizer):
            return self._optimizer
        raise UserWarning("Optimizer has not been initialized yet")

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate (not allowed with an lr_scheduler)."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning rate is mutated.")
        self._optimizer.set_learning_rate(lr)

    def step(self, batch_size, ignore_stale_grad=False):
        """One update: reduce the gradients over contexts, then update with ``1/batch_size``.

        Parameters
        ----------
        batch_size : int
            The gradient is scaled by ``1/batch_size`` (times the optimizer's
            original ``rescale_grad``).
        ignore_stale_grad : bool, default False
            Skip parameters whose gradient has not been written by ``backward``
            since the last step, instead of raising.
        """
        self._optimizer.rescale_grad = self._rescale(batch_size, "step")
        self._ensure_kv()
        fresh = self._freshness(ignore_stale_grad)
        self._allreduce_grads(fresh)
        self._update(fresh)

    def allreduce_grads(self):
        """Sum each parameter's gradients over its contexts (written back to every one).

        Call before :meth:`update` when transforming the summed gradients (e.g.
        clipping); not possible when updating on the kvstore.
        """
        self._not_on_kvstore("allreduce_grads")
        self._allreduce_grads(None)

    def update(self, batch_size, ignore_stale_grad=False):
        """The update half of :meth:`step` (after :meth:`allreduce_grads`)."""
        self._not_on_kvstore("update")
        self._optimizer.rescale_grad = self._rescale(batch_size, "update")
        self._update(self._freshness(ignore_stale_grad))

    def _not_on_kvstore(self, method):
        """Refuse ``method`` (the halves of :meth:`step`) when the kvstore updates."""
        self._ensure_kv()
        if self._kvstore and self._update_on_kvstore:
            raise AssertionError("%s() when parameters are updated on kvstore is not "
                                 "supported. Try setting `update_on_kvstore` to False when "
                                 "creating trainer." % method)

    def _rescale(self, batch_size, method):
        # NOTE: MXNet divides by zero here (a raw ZeroDivisionError); mxlite names it.
        if type(batch_size) in (int, float) and batch_size > 0:     # no ABC check
            return self._scale / batch_size
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Real) \
                or not batch_size > 0:
            raise ValueError("Trainer.%s: batch_size must be a positive number, got %r"
                             % (method, batch_size))
        return self._scale / batch_size

    def save_states(self, fname):
        """Save the optimizer and its states in MXNet's format (a pickle MXNet loads).

        ``optimizer.param_dict`` (the parameters' lr/wd multipliers) is not saved.
        """
        self._ensure_kv()
        if self._kvstore and self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
            return
        with open(fname, "wb") as fout:
            fout.write(self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname):
        """Load states written by :meth:`save_states`, here or by MXNet."""
        self._ensure_kv()
        if self._kvstore and self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            with open(fname, "rb") as f:
                states = f.read()
            for updater in self._updaters:
                updater.set_states(states)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = {i: param for i, param in enumerate(self._params)}

    # -- internals -----------------------------------------------------------------
    def _freshness(self, ignore_stale_grad):
        """``[(index, name, datas, grads, fresh per context)]`` of the trainable parameters;
        raises (changing nothing) on stale ones."""
        plan, stale = [], []
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            datas, grads = param._data, param._grad
            if datas is None or grads is None:      # not initialised: their errors
                datas, grads = param._check_and_get(param._data, list), param.list_grad()
            flags = [is_fresh(d._entry) for d in datas]
            if False in flags:
                stale += [(param.name, datas[j].context) for j, ok in enumerate(flags)
                          if not ok]
            plan.append((i, param, datas, grads, flags))
        if stale and not ignore_stale_grad:
            name, ctx = stale[0]
            raise UserWarning(
                "Gradient of Parameter `%s` on context %s has not been updated "
                "by backward since last `step`. This could mean a bug in your "
                "model that made it only use a subset of the Parameters (Blocks) "
                "for this iteration. If you are intentionally only using a subset, "
                "call step with ignore_stale_grad=True to suppress this "
                "warning and skip updating of Parameters with stale gradient. "
                "Parameters with stale gradients: %s"
                % (name, str(ctx), ", ".join("`%s` on %s" % (n, c) for n, c in stale)))
        return plan

    def _allreduce_grads(self, plan):
        """Push every gradient to the kvstore in one call (checked as a whole first), and
        pull the updated weights (``update_on_kvstore``) or the summed gradients.
        ``plan`` is :meth:`_freshness`'s (parameters with no fresh gradient are left
        out), or None for all trainable parameters."""
        if not self._kvstore:
            return
        if plan is None:
            plan = [(i, param, param._check_and_get(param._data, list), param.list_grad(), None)
                    for i, param in enumerate(self._params) if param.grad_req != "null"]
        keys, grads, datas, pushed = [], [], [], []
        dist = _is_dist(self._kvstore)
        for i, param, pdatas, pgrads, flags in plan:
            if flags is not None and not any(flags) and not dist:
                continue
            if param._stype != "default":
                # a row_sparse weight stays in the store: row_sparse_data pulls its rows
                pushed.append((i, pgrads, pdatas))
                continue
            keys.append(i)
            grads.append(pgrads)
            datas.append(pdatas)
        if not keys and not pushed:
            return
        if self._update_on_kvstore:
            if pushed:
                self._kvstore.push([k for k, _, _ in pushed], [g for _, g, _ in pushed])
            if keys:
                self._kvstore.pushpull(keys, grads, out=datas)
            for dl in datas + [d for _, _, d in pushed]:
                for d in dl:
                    d._fresh_grad = False
            return
        # (the sums written back are not a backward: freshness stays as it was)
        self._kvstore.pushpull(keys, grads)

    def _update(self, plan):
        if self._kvstore and self._update_on_kvstore:
            return
        updates = [([], [], []) for _ in self._updaters]
        for i, param, datas, grads, flags in plan:
            for upd, arr, grad, ok in zip(updates, datas, grads, flags):
                if ok:
                    a, g = arr._data, grad._data
                    if g.shape != a.shape or g.dtype != a.dtype:
                        _check_update_pair(param, arr, grad)
                    upd[0].append(i)
                    upd[1].append(grad)
                    upd[2].append(arr)
        # States are created for every weight before any weight changes, so a
        # failure there leaves all weights as they were.
        for updater, (idx, _, arrs) in zip(self._updaters, updates):
            updater.prepare(idx, arrs)
        for updater, (idx, grads, arrs) in zip(self._updaters, updates):
            updater.apply(idx, grads, arrs)
        for _, _, arrs in updates:
            for arr in arrs:
                arr._entry[0].fresh = False     # (a fresh gradient: a variable's entry)


def _sparse_kvstore(kvstore):
    """The store of a Trainer with row_sparse weights (MXNet's _create_sparse_kvstore)."""
    if isinstance(kvstore, str):
        kvstore = create(kvstore)
    elif not isinstance(kvstore, KVStoreBase):
        raise TypeError("Cannot create '%s' KVStore with row_sparse parameters. The type must "
                        "be KVStore or str." % (kvstore,))
    if not kvstore.is_capable(KVStoreBase.OPTIMIZER):
        raise ValueError("Trainer: row_sparse weights are updated on the kvstore, and %s "
                         "cannot run an optimizer" % type(kvstore).__name__)
    return kvstore


def _check_update_pair(param, arr, grad):
    if grad.shape != arr.shape:
        raise MXNetError("Trainer: gradient of Parameter '%s' has shape %s but its data has "
                         "shape %s" % (param.name, grad.shape, arr.shape))
    if grad.dtype != arr.dtype:
        raise MXNetError("Trainer: gradient of Parameter '%s' has dtype %s but its data has "
                         "dtype %s" % (param.name, grad.dtype, arr.dtype))


def _is_dist(kvstore):
    """Whether ``kvstore`` (a type name or a store) is distributed."""
    if isinstance(kvstore, str):
        return is_dist(kvstore)
    if not isinstance(kvstore, KVStoreBase):
        return False
    try:
        return is_dist(str(kvstore.type))
    except NotImplementedError:     # a registered store that does not name its type
        return False
