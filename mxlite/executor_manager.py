"""MXNet's executor manager of the pre-Module training loop (``mx.model``'s old
FeedForward): ``DataParallelExecutorManager`` and the ``DataParallelExecutorGroup`` it
drives, as ``mxnet.executor_manager``. Both run on the Module's executor group
(:mod:`mxlite.module.executor_group`), which binds, slices and shares the arrays."""
import logging

from . import nd
from .base import mx_real_t  # noqa: F401  (MXNet's module shows it)
from .context import cpu  # noqa: F401  (MXNet's module shows it)
from .io import DataDesc
from .module import executor_group as _group
from .module.executor_group import _split_input_slice

__all__ = ["DataParallelExecutorGroup", "DataParallelExecutorManager"]


def _check_arguments(symbol):
    """Raise ValueError for an argument or auxiliary state name used twice."""
    for kind, names in (("argument", symbol.list_arguments()),
                        ("auxiliary param", symbol.list_auxiliary_states())):
        seen = set()
        for name in names:
            if name in seen:
                raise ValueError('Find duplicated %s name "%s", please make the weight name '
                                 'non-duplicated(using name arguments), arguments are %s'
                                 % (kind, name, names))
            seen.add(name)


def _load(arrays, targets):
    """Copy each array, cut by the slices of ``targets`` (``[(slice, dst)]``), into them."""
    for src, dsts in zip(arrays, targets):
        if not isinstance(dsts, nd.NDArray) and dsts and dsts[-1][0].stop != src.shape[0]:
            raise ValueError("Batch size miss match. Expected %d, got %d"
                             % (dsts[-1][0].stop, src.shape[0]))
    _group._load_general(arrays, targets, [0] * len(targets))


def _load_data(batch, targets):
    _load(batch.data, targets)


def _load_label(batch, targets):
    _load(batch.label, targets)


class DataParallelExecutorGroup:
    """Executors of ``sym`` on the devices ``ctx``, device ``i`` running the batch rows
    ``slices[i]``; the input shapes come from ``train_data.provide_data``/``provide_label``.
    With ``shared_group`` (another bucket), the parameters are that group's arrays."""

    def __init__(self, sym, arg_names, param_names, ctx, slices, train_data,
                 shared_group=None):
        _check_arguments(sym)
        descs = [d if isinstance(d, DataDesc) else DataDesc(*d)
                 for d in list(train_data.provide_data) + list(train_data.provide_label)]
        n_data = len(train_data.provide_data)
        self.data_names = [d.name for d in descs[:n_data]]
        self.label_names = [d.name for d in descs[n_data:]]
        self.aux_names = sym.list_auxiliary_states()
        self.param_idx = [i for i, name in enumerate(arg_names) if name in param_names]
        self.param_names = [arg_names[i] for i in self.param_idx]
        # the slices' sizes as work loads give back exactly these slices
        self._group = _group.DataParallelExecutorGroup(
            sym, ctx, [s.stop - s.start for s in slices], descs[:n_data],
            descs[n_data:] or None, self.param_names, True, False,
            shared_group=None if shared_group is None else shared_group._group)
        self.train_execs = self._group.execs
        self.data_arrays = self._group.data_arrays
        self.label_arrays = self._group.label_arrays or []
        self.param_arrays = self._group.param_arrays
        self.grad_arrays = self._group.grad_arrays
        self.aux_arrays = self._group.aux_arrays
        self.slices = slices

    def load_data_batch(self, data_batch):
        """Copy the batch's data and labels, slice by slice, into the executors."""
        _load_data(data_batch, self.data_arrays)
        _load_label(data_batch, self.label_arrays)

    def forward(self, is_train=False):
        for ex in self.train_execs:
            ex.forward(is_train=is_train)

    def backward(self):
        for ex in self.train_execs:
            ex.backward()

    def update_metric(self, metric, labels, pre_sliced=False):
        """Update ``metric`` with each device's outputs and its rows of ``labels``."""
        for k, (ex, sl) in enumerate(zip(self.train_execs, self.slices)):
            mine = labels[k] if pre_sliced else [label[sl] for label in labels]
            metric.update(mine, ex.outputs)


class DataParallelExecutorManager:
    """Runs a symbol data-parallel over ``ctx`` for the old training loop: the batch of
    ``train_data`` split by ``work_load_list``; with ``sym_gen`` one executor group per
    bucket key, all sharing the parameters.

    Examples
    --------
    >>> mgr = DataParallelExecutorManager(net, [mx.cpu(0), mx.cpu(1)], train_iter,
    ...                                   net.list_arguments(), param_names, aux_names)
    >>> mgr.set_params(arg_params, aux_params)
    >>> mgr.load_data_batch(batch); mgr.forward(is_train=True); mgr.backward()
    """

    def __init__(self, symbol, ctx, train_data, arg_names, param_names, aux_names,
                 work_load_list=None, logger=None, sym_gen=None):
        logger = logging if logger is None else logger
        logger.info("Start training with %s", str(ctx))
        if work_load_list is None:
            work_load_list = [1] * len(ctx)
        if not isinstance(work_load_list, list) or len(work_load_list) != len(ctx):
            raise ValueError("Invalid settings for work load: expected a list of %d numbers, "
                             "got %r" % (len(ctx), work_load_list))
        self.slices = _split_input_slice(train_data.batch_size, work_load_list)
        self.arg_names = arg_names
        self.param_names = param_names
        self.aux_names = aux_names
        self.ctx = ctx
        self.execgrp = DataParallelExecutorGroup(symbol, arg_names, param_names, ctx,
                                                 self.slices, train_data)
        self.symbol = symbol
        self.sym_gen = sym_gen
        self.curr_execgrp = None        # set by load_data_batch
        if sym_gen is not None:
            self.execgrp_bucket = {train_data.default_bucket_key: self.execgrp}

    def install_monitor(self, monitor):
        """Have ``monitor`` watch every executor (not with buckets, as MXNet)."""
        if self.sym_gen is not None:
            raise NotImplementedError("Monitoring is not implemented for bucketing")
        for ex in self.execgrp.train_execs:
            monitor.install(ex)

    def set_params(self, arg_params, aux_params):
        """Copy parameter and auxiliary values into every executor."""
        for ex in self.execgrp.train_execs:
            ex.copy_params_from(arg_params, aux_params)

    def copy_to(self, arg_params, aux_params):
        """Write into ``arg_params``/``aux_params`` (in place) each parameter and
        auxiliary state averaged over the devices."""
        self.execgrp._group.get_params(arg_params, aux_params)

    @property
    def param_arrays(self):
        return self.execgrp.param_arrays

    @property
    def grad_arrays(self):
        return self.execgrp.grad_arrays

    @property
    def aux_arrays(self):
        return self.execgrp.aux_arrays

    def load_data_batch(self, data_batch):
        """Load a batch into the executors of its bucket (made on first use)."""
        if self.sym_gen is not None:
            key = data_batch.bucket_key
            if key not in self.execgrp_bucket:
                self.execgrp_bucket[key] = DataParallelExecutorGroup(
                    self.sym_gen(key), self.arg_names, self.param_names, self.ctx,
                    self.slices, data_batch, shared_group=self.execgrp)
            self.curr_execgrp = self.execgrp_bucket[key]
        else:
            self.curr_execgrp = self.execgrp
        self.curr_execgrp.load_data_batch(data_batch)

    def forward(self, is_train=False):
        self.curr_execgrp.forward(is_train=is_train)

    def backward(self):
        self.curr_execgrp.backward()

    def update_metric(self, metric, labels, pre_sliced=False):
        self.curr_execgrp.update_metric(metric, labels, pre_sliced)
