"""The Optimizer base class, the registry (``register``/``create``) and the Updater.

Every optimizer updates the weight NDArray *in place*: Parameters hold
references to their arrays, so an update never rebinds them. Updates run on
the raw backend arrays (``NDArray._data``) with the context's array module
``xp``; they are never recorded by autograd. Each in-place write bumps the
weight's version, so a backward through a graph that read the old weight fails
loudly instead of giving a wrong gradient.

The attribute names are MXNet's (``lr``, ``wd``, ``rescale_grad``,
``_index_update_count``, ...), and an optimizer pickles to exactly MXNet's
``__dict__``: Trainer states files move both ways between mxlite and MXNet.
"""
import os
import warnings

import numpy as np

from ..base import MXNetError, register_class
from ..nd.ndarray import NDArray, _wrap

__all__ = ["Optimizer", "register", "create", "Updater", "get_updater"]

float16 = np.dtype(np.float16)


# ----------------------------------------------------------------------------
# Raw-array helpers shared by the update rules

def xp_of(arr):
    """The array module (numpy or cupy) of NDArray ``arr``."""
    ctx = arr._ctx
    return ctx.xp or ctx.array_module()


def zeros_like_weight(weight, dtype=None):
    """A zero NDArray shaped like ``weight`` on its context (``dtype`` defaults to its own)."""
    xp = xp_of(weight)
    dt = weight._data.dtype if dtype is None else np.dtype(dtype)
    return _wrap(xp.zeros(weight._data.shape, dt), weight._ctx)


def write(arr, value):
    """Write raw ``value`` into NDArray ``arr`` in place and bump its version."""
    arr._data[...] = value
    arr._bump()


def clip(xp, g, bound):
    """``g`` clipped to ``[-bound, bound]``."""
    return xp.clip(g, -bound, bound)


def kernel_clip(xp, g, clip_gradient):
    """Clip as MXNet's fused update kernels do: only when ``clip_gradient`` is truthy.

    NOTE: MXNet's Python layer passes ``clip_gradient`` to its kernels only when
    it is truthy, so ``clip_gradient=0`` means *no* clipping for those
    optimizers, whereas the optimizers written in Python (AdaGrad, AdaDelta,
    Adamax, Nadam, SGLD) test ``is not None`` and clip everything to 0.
    """
    if clip_gradient:
        return xp.clip(g, -clip_gradient, clip_gradient)
    return g


def python_clip(xp, g, clip_gradient):
    """Clip as MXNet's Python-level optimizers do: whenever ``clip_gradient`` is not None."""
    if clip_gradient is not None:
        return xp.clip(g, -clip_gradient, clip_gradient)
    return g


def check_pair(name, weight, grad):
    # (the fast path serves both faces: legacy NDArrays and mx.np arrays)
    if type(weight) is type(grad) and isinstance(weight, NDArray) and (
            weight._data.shape == grad._data.shape):
        return
    if not isinstance(weight, NDArray) or not isinstance(grad, NDArray):
        raise TypeError("%s.update: weight and grad must be NDArrays, got %s and %s"
                        % (name, type(weight).__name__, type(grad).__name__))
    if weight.shape != grad.shape:
        raise MXNetError("%s.update: grad has shape %s but the weight has shape %s"
                         % (name, grad.shape, weight.shape))


def aggregation_size(default):
    """How many weights one aggregated update takes: ``MXNET_OPTIMIZER_AGGREGATION_SIZE``
    as in MXNet, else ``default``."""
    return int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", str(default)))


def begin_update(opt, name, index, weight, grad):
    """The start of every update rule: check the pair, count the update, and return
    ``(lr, wd, xp)`` for parameter ``index``."""
    check_pair(name, weight, grad)
    opt._update_count(index)
    return opt._get_lr(index), opt._get_wd(index), xp_of(weight)


# ----------------------------------------------------------------------------
# The base class

class Optimizer:
    """The base class of all optimizers.

    Parameters
    ----------
    rescale_grad : float
        Multiply the gradient by this before updating (the Trainer sets ``1/batch_size``).
    param_idx2name : dict of int to str, optional
        Parameter names by index; with it, parameters whose names end neither in
        ``_weight`` nor ``_gamma`` get no weight decay.
    wd : float
        Weight decay (L2 regularisation) coefficient.
    clip_gradient : float, optional
        Clip the (rescaled) gradient to ``[-clip_gradient, clip_gradient]``.
    learning_rate : float, optional
        The learning rate (0.01 when neither it nor ``lr_scheduler`` is given).
        When both are given it overrides the scheduler's ``base_lr``.
    lr_scheduler : LRScheduler, optional
        Gives the learning rate from the update count.
    sym : Symbol, optional
        Reads ``__lr_mult__``/``__wd_mult__`` attributes of its arguments.
    begin_num_update : int
        The update count to start from.
    multi_precision : bool
        Keep a float32 master copy of float16 weights and update that.
    param_dict : dict of int to Parameter, optional
        Parameters by index; their ``lr_mult``/``wd_mult`` take precedence.

    Examples
    --------
    >>> opt = mx.optimizer.create('sgd', learning_rate=0.1)
    >>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
    >>> opt.update(0, w, g, opt.create_state(0, w)); w
    <BLANKLINE>
    [0.9 0.9]
    <NDArray 2 @cpu(0)>
    """

    opt_registry = {}

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0.,
                 clip_gradient=None, learning_rate=None,
                 lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if self.lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if self.lr_scheduler is not None and learning_rate is not None \
                and self.lr_scheduler.base_lr != learning_rate:
            # NOTE: MXNet prints (not warns) this message.
            print(UserWarning("learning rate from ``lr_scheduler`` has been "
                              "overwritten by ``learning_rate`` in optimizer."))
            self.lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError("param_idx2name should be a dict of param indexes to names, got %s"
                            % type(param_idx2name).__name__)
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.allow_np_array = False
        self.set_lr_mult({})
        self.set_wd_mult({})

    # -- registry ----------------------------------------------------------------
    @staticmethod
    def register(klass):
        """Register an optimizer class under its lower-cased class name.

        Examples
        --------
        >>> @mx.optimizer.register
        ... class MyOptimizer(mx.optimizer.Optimizer):
        ...     pass
        >>> type(mx.optimizer.create('myoptimizer')).__name__
        'MyOptimizer'
        """
        return register_class(Optimizer.opt_registry, klass, "optimizer", "register")

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An optimizer from its registered name (case-insensitive) and constructor kwargs.

        Examples
        --------
        >>> type(mx.optimizer.create('adam', learning_rate=0.1)).__name__
        'Adam'
        """
        klass = Optimizer.opt_registry.get(str(name).lower())
        if klass is None:
            raise ValueError("Cannot find optimizer %s (registered: %s)"
                             % (name, ", ".join(sorted(Optimizer.opt_registry))))
        return klass(**kwargs)

    # -- learning rate -----------------------------------------------------------
    @property
    def learning_rate(self):
        """The current learning rate (from the scheduler when there is one)."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def set_learning_rate(self, lr):
        """Set the learning rate; only allowed without an ``lr_scheduler``."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been "
                              "defined. Note that set_learning_rate can mutate "
                              "the value of the learning rate of the optimizer "
                              "only when the LRScheduler of the optimizer is "
                              "undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale):  # noqa: ARG002 (MXNet's signature)
        """[DEPRECATED] Use :meth:`set_lr_mult`."""
        raise DeprecationWarning("set_lr_scale is deprecated; use set_lr_mult")

    def set_lr_mult(self, args_lr_mult):
        """Set per-parameter learning-rate multipliers, keyed by name or index."""
        self.lr_mult = {}
        self._mults_from_sym("__lr_mult__", self.lr_mult)
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Set per-parameter weight-decay multipliers, keyed by name or index.

        Parameters named in ``param_idx2name`` that end neither in ``_weight`` nor
        ``_gamma`` default to 0 (no decay on biases and BatchNorm betas).
        """
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not n.endswith(("_weight", "_gamma")):
                self.wd_mult[n] = 0.0
        self._mults_from_sym("__wd_mult__", self.wd_mult)
        self.wd_mult.update(args_wd_mult)

    def _mults_from_sym(self, key, out):
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and key in attr[name]:
                    out[name] = float(attr[name][key])

    # -- update counting -----------------------------------------------------------
    def _set_current_context(self, device_id):
        """Count updates separately per device (one Updater per context)."""
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index):
        """Count one more update of ``index`` (an int or a list) and refresh ``num_update``."""
        counts = self._index_update_count
        begin, top = self.begin_num_update, self.num_update
        for idx in index if isinstance(index, (list, tuple)) else (index,):
            n = counts[idx] = counts.get(idx, begin) + 1
            top = max(top, n)
        self.num_update = top

    def _get_lrs(self, indices):
        lr = self.learning_rate
        return [lr * self._mult(index, self.lr_mult, "lr_mult") for index in indices]

    def _get_lr(self, index):
        """The learning rate of parameter ``index`` (multipliers applied)."""
        return self.learning_rate * self._mult(index, self.lr_mult, "lr_mult")

    def _get_wds(self, indices):
        wd = self.wd
        return [wd * self._mult(index, self.wd_mult, "wd_mult") for index in indices]

    def _get_wd(self, index):
        """The weight decay of parameter ``index`` (multipliers applied)."""
        return self.wd * self._mult(index, self.wd_mult, "wd_mult")

    def _mult(self, index, table, attr):
        # Precedence as MXNet: the Parameter's own multiplier, then by index, then by name.
        if index in self.param_dict:
            return getattr(self.param_dict[index], attr)
        if index in table:
            return table[index]
        if index in self.idx2name:
            return table.get(self.idx2name[index], 1.0)
        return 1.0

    # -- states and updates ---------------------------------------------------------
    def create_state(self, index, weight):  # noqa: ARG002
        """The auxiliary state (momentum, moments...) of one weight; None if none."""
        return

    def create_state_multi_precision(self, index, weight):
        """:meth:`create_state`, plus a float32 master copy for float16 weights
        when ``multi_precision`` is on: then the state is ``(master, state)``."""
        if self.multi_precision and weight.dtype == float16:
            master = weight.astype(np.float32)
            return (master,) + (self.create_state(index, master),)
        self._warn_fp16(weight)
        return self.create_state(index, weight)

    def _warn_fp16(self, weight):
        if weight.dtype == float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to "
                          "poor accuracy or slow convergence. "
                          "Consider using multi_precision=True option of the "
                          "%s optimizer" % type(self).__name__)

    def update(self, index, weight, grad, state):
        """Update ``weight`` in place from ``grad`` and ``state``.

        Parameters
        ----------
        index : int
            The parameter's index (selects its lr/wd multipliers and update count).
        weight : NDArray
            Updated in place.
        grad : NDArray
            The raw gradient (``rescale_grad`` is applied here).
        state : any
            What :meth:`create_state` returned.
        """
        raise NotImplementedError()

    def _updates_rows(self, index):
        """Whether a row_sparse gradient of weight ``index`` updates only its rows (MXNet's
        lazy updates: ``lazy_update``, where the optimizer has it)."""
        return getattr(self, "lazy_update", False)

    def update_multi_precision(self, index, weight, grad, state):
        """:meth:`update`, through the float32 master copy for float16 weights."""
        if self.multi_precision and weight.dtype == float16:
            master, original_state = state[0], state[1]
            grad32 = grad.astype(np.float32)
            self.update(index, master, grad32, original_state)
            write(weight, master._data.astype(weight._data.dtype))
        else:
            self.update(index, weight, grad, state)

    # -- pickling: MXNet's __dict__, without param_dict -------------------------------
    def __getstate__(self):
        ret = self.__dict__.copy()
        ret.pop("param_dict", None)
        return ret

    def __setstate__(self, state):
        self.__dict__ = state
        # param_dict is set again by the Trainer that loads the states.
        self.param_dict = {}


register = Optimizer.register
create = Optimizer.create_optimizer


class _MasterLastMixin:
    """SGD and NAG keep their float16 master copy *after* the state: ``(state, master)``."""

    def create_state_multi_precision(self, index, weight):
        if self.multi_precision and weight.dtype == float16:
            master = weight.astype(np.float32)
            return (self.create_state(index, master), master)
        self._warn_fp16(weight)
        return self.create_state(index, weight)

    def update_multi_precision(self, index, weight, grad, state):
        if self.multi_precision and weight.dtype == float16 \
                and isinstance(state, (tuple, list)):
            mom, master = state
            grad32 = grad.astype(np.float32)
            self.update(index, master, grad32, mom)
            write(weight, master._data.astype(weight._data.dtype))
        else:
            self.update(index, weight, grad, state)


# ----------------------------------------------------------------------------
# Updater

class Updater:
    """Applies an optimizer to (index, grad, weight), keeping one state per index.

    Parameters
    ----------
    optimizer : Optimizer
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight):
        """Update ``weight`` (or a list of weights) from ``grad``."""
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), list(grad), list(weight)
        else:
            indices, grads, weights = [index], [grad], [weight]
        self.prepare(indices, weights)
        self.apply(indices, grads, weights)

    def apply(self, indices, grads, weights):
        """Update ``weights`` whose states :meth:`prepare` has made.

        An optimizer with ``aggregate_num > 0`` and an ``update_group`` method updates
        the weights in groups of that many, by dtype in order of appearance, as
        MXNet's aggregated updates do (each group counts its updates before reading
        the learning rate); any other updates them one by one.
        """
        if not weights:
            return
        opt = self.optimizer
        opt._set_current_context(weights[0].context.device_id)
        states = self.states
        if any(g._sparse for g in grads):
            indices, grads, weights = self._apply_rows(indices, grads, weights)
            if not weights:
                return
        group = getattr(opt, "update_group", None)
        if not (self.aggregate_updates and group is not None):
            for i, w, g in zip(indices, weights, grads):
                opt.update_multi_precision(i, w, g, states[i])
            return
        size = max(1, opt.aggregate_num)
        dtype = weights[0]._data.dtype
        for w in weights:
            if w._data.dtype != dtype:
                break
        else:       # one dtype (the common case): the groups are slices
            for start in range(0, len(weights), size):
                idx = indices[start:start + size]
                group(idx, weights[start:start + size], grads[start:start + size],
                      [states[i] for i in idx])
            return
        by_dtype = {}
        for item in zip(indices, weights, grads):
            by_dtype.setdefault(item[1].dtype, []).append(item)
        for items in by_dtype.values():
            for start in range(0, len(items), size):
                idx, ws, gs = zip(*items[start:start + size])
                group(list(idx), list(ws), list(gs), [states[i] for i in idx])

    def _apply_rows(self, indices, grads, weights):
        """Update the weights whose gradient is row_sparse on that gradient's rows only
        (MXNet's lazy updates: ``lazy_update`` of SGD and Adam, AdaGrad's sparse update):
        the other rows of the weight and its states keep their values, weight decay
        and momentum included. Returns the other updates, for the usual path.

        NOTE: a gradient's rows are its non-zero rows here (its values are dense); MXNet's
        are the rows the backward wrote, which may hold zeros."""
        opt, rest, by_rows = self.optimizer, ([], [], []), []
        # (every check before any update: an error changes nothing)
        for i, g, w in zip(indices, grads, weights):
            if g.stype == "row_sparse" and g.ndim and g.shape == w.shape \
                    and opt._updates_rows(i):
                by_rows.append((i, g, w))
            else:
                for part, v in zip(rest, (i, g, w)):
                    part.append(v)
        for i, g, w in by_rows:
            rows = g._nonzero_rows()
            state = _rows_of(self.states[i], rows)
            w_rows = _rows_of(w, rows)
            opt.update_multi_precision(i, w_rows, _rows_of(g, rows), state)
            _put_rows(w, w_rows, rows)
            _put_rows(self.states[i], state, rows)
        return rest

    def prepare(self, indices, weights):
        """Create missing states and move loaded ones to their weight's context."""
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                idx = indices[i] = idx.decode()
            if idx not in self.states:
                self.states[idx] = self.optimizer.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced.get(idx, False):
                self.states[idx] = self.sync_state_context(self.states[idx], weights[i].context)
                self.states_synced[idx] = True

    def sync_state_context(self, state, context):
        """``state`` (an NDArray or nested tuple/list of them) on ``context``."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states):
        """Load what :meth:`get_states` returned (MXNet's pickles too)."""
        states, optimizer = parse_states(states)
        self.states = states
        if optimizer is not None:
            self.optimizer = optimizer
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer=False):
        """The states (and the optimizer if ``dump_optimizer``) pickled as MXNet does."""
        from ._pickle import dumps
        return dumps((self.states, self.optimizer) if dump_optimizer else self.states)


def parse_states(data):
    """``(states, optimizer or None)`` from a states pickle, checked before anything is
    replaced: ``states`` maps indices to states, the optimizer is an Optimizer."""
    from ._pickle import loads
    obj = loads(data)
    optimizer = None
    if isinstance(obj, tuple) and len(obj) == 2:
        obj, optimizer = obj
        if not isinstance(optimizer, Optimizer):
            raise MXNetError("load_states: the file holds %s where the optimizer should be"
                             % type(optimizer).__name__)
    if not isinstance(obj, dict):
        raise MXNetError("load_states: the file holds %s, expected a dict of optimizer states "
                         "(index -> state) or (states, optimizer)" % type(obj).__name__)
    return obj, optimizer


def get_updater(optimizer):
    """An :class:`Updater` for ``optimizer`` (callable as ``updater(index, grad, weight)``)."""
    return Updater(optimizer)


# Names MXNet's module also shows, served from where they live in mxlite.
def _rows_of(x, rows):
    """Rows ``rows`` of an NDArray (a copy), of each in a tuple or list of them."""
    if isinstance(x, NDArray):
        return _wrap(x._data[rows], x._ctx)
    if isinstance(x, (tuple, list)):
        return type(x)(_rows_of(v, rows) for v in x)
    return x


def _put_rows(x, part, rows):
    """Write what :func:`_rows_of` took (updated) back into its rows of ``x``."""
    if isinstance(x, NDArray):
        x._data[rows] = part._data
        x._bump()
    elif isinstance(x, (tuple, list)):
        for v, p in zip(x, part):
            _put_rows(v, p, rows)


from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "AdaDelta": "mxlite.optimizer.adaptive",
    "AdaGrad": "mxlite.optimizer.adaptive",
    "Adam": "mxlite.optimizer.adaptive",
    "Adamax": "mxlite.optimizer.adaptive",
    "DCASGD": "mxlite.optimizer.sgd",
    "FTML": "mxlite.optimizer.adaptive",
    "Ftrl": "mxlite.optimizer.adaptive",
    "LAMB": "mxlite.optimizer.adaptive",
    "LARS": "mxlite.optimizer.sgd",
    "LBSGD": "mxlite.optimizer.sgd",
    "NAG": "mxlite.optimizer.sgd",
    "Nadam": "mxlite.optimizer.adaptive",
    "RMSProp": "mxlite.optimizer.adaptive",
    "SGD": "mxlite.optimizer.sgd",
    "SGLD": "mxlite.optimizer.sgd",
    "Signum": "mxlite.optimizer.sgd",
    "Test": "mxlite.optimizer.sgd",
    "ccSGD": "mxlite.optimizer.sgd",
})
