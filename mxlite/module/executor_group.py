"""``DataParallelExecutorGroup``: one Symbol bound on several contexts, each executor
running a slice of the batch, as ``mxnet.module.executor_group``. ``Module`` runs
through it."""
import logging
from collections import OrderedDict

from .. import context as ctx
from .. import nd
from ..base import MXNetError
from ..io import DataDesc

__all__ = ["DataParallelExecutorGroup"]


def _split_input_slice(batch_size, work_load_list):
    """Slices of ``range(batch_size)`` in proportion to ``work_load_list`` (MXNet's
    rounding: each share rounded, the last one takes what is left)."""
    total = sum(work_load_list)
    sizes = [round(w * batch_size / total) for w in work_load_list]
    if sum(sizes) < batch_size:
        sizes[-1] += batch_size - sum(sizes)
    slices, end = [], 0
    for size in sizes:
        begin = int(min(end, batch_size))
        end = int(min(begin + size, batch_size))
        if begin >= end:
            raise ValueError("Too many slices. Some splits are empty: batch size %d over the "
                             "work loads %s" % (batch_size, list(work_load_list)))
        slices.append(slice(begin, end))
    return slices


def _load_general(data, targets, major_axis):
    """Copy each source array (or its slice along the batch axis) into its targets:
    ``targets[i]`` is one array, a list of arrays (sources already split), or a list of
    ``(slice, array)`` pairs."""
    for src, dsts, axis in zip(data, targets, major_axis):
        if isinstance(dsts, nd.NDArray):
            src.copyto(dsts)
        elif isinstance(src, (list, tuple)):
            for s, d in zip(src, dsts):
                s.copyto(d)
        else:
            for sl, dst in dsts:
                if axis >= 0 and (sl.start != 0 or src.shape[axis] != sl.stop):
                    part = src[sl] if axis == 0 else nd.slice_axis(
                        src, axis=axis, begin=sl.start, end=sl.stop)
                    part.copyto(dst)
                else:
                    src.copyto(dst)


def _load_batch(batch, targets, major_axis, field):
    """``batch.data``/``batch.label`` (``field``) into the executors' arrays; a list of
    batches holds one batch per executor."""
    if isinstance(batch, list):
        per_input = [[getattr(b, field)[i] for b in batch] for i in range(len(targets))]
        _load_general(per_input, [[dst for _, dst in t] for t in targets], major_axis)
    else:
        _load_general(getattr(batch, field), targets, major_axis)


def _merge_multi_context(outputs, major_axis):
    """One array per output: the devices' parts concatenated along the batch axis (an
    output without one, axis < 0, is the same everywhere: the first device's)."""
    merged = []
    for parts, axis in zip(outputs, major_axis):
        if axis >= 0 and len(parts) > 1:
            merged.append(nd.concat(*[p.as_in_context(parts[0].context) for p in parts],
                                    dim=axis))
        else:
            merged.append(parts[0])
    return merged


def _prepare_group2ctxs(group2ctxs, ctx_len):
    """One ``{ctx_group: Context}`` (or None) per device."""
    if group2ctxs is None:
        return [None] * ctx_len
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != ctx_len:
            raise ValueError("group2ctxs: expected one dict per context (%d), got %d"
                             % (ctx_len, len(group2ctxs)))
        return group2ctxs
    if isinstance(group2ctxs, dict):
        ret = [{} for _ in range(ctx_len)]
        for group, where in group2ctxs.items():
            where = [where] * ctx_len if isinstance(where, ctx.Context) else list(where)
            if len(where) == 1:
                where = where * ctx_len
            if len(where) != ctx_len:
                raise ValueError("group2ctxs[%r]: expected 1 or %d contexts, got %d"
                                 % (group, ctx_len, len(where)))
            for i in range(ctx_len):
                ret[i][group] = where[i]
        return ret
    raise TypeError("group2ctxs must be a dict of str to Context (or list of Context), or a "
                    "list of such dicts, got %s" % type(group2ctxs).__name__)


class DataParallelExecutorGroup:
    """Executors of one Symbol on a list of devices; each runs its slice of the batch.

    Parameters
    ----------
    symbol : Symbol
    contexts : list of Context
    workload : list of float
        Relative share of the batch for each context.
    data_shapes, label_shapes : list of DataDesc or (name, shape)
        The inputs, in the order of ``DataBatch.data``/``label`` (label_shapes may be None).
    param_names : list of str
        The arguments that are parameters.
    for_training : bool
        Allocate gradients (otherwise every grad_req is 'null').
    inputs_need_grad : bool
        Also compute the gradients of the data inputs.
    shared_group : DataParallelExecutorGroup, optional
        Another group (another bucket) whose parameter, gradient and auxiliary arrays
        this one uses wherever shapes agree.
    fixed_param_names : list of str
        Parameters without gradient.
    grad_req : str, list or dict
        'write', 'add' or 'null', for all arguments or per argument.
    state_names : list of str
        Arguments that are states (set with ``set_states``).
    group2ctxs : dict or list of dict
        ``ctx_group`` attribute -> Context (accepted; mxlite runs a graph on one device).

    Examples
    --------
    >>> g = DataParallelExecutorGroup(net, [mx.cpu(0), mx.cpu(1)], [1, 1],
    ...                               [('data', (8, 4))], [('softmax_label', (8,))],
    ...                               ['fc_weight', 'fc_bias'], True, False)
    >>> g.slices
    [slice(0, 4, None), slice(4, 8, None)]
    """

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req="write", state_names=None, group2ctxs=None):
        self.param_names = list(param_names)
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = list(contexts)
        self.workload = list(workload) if workload is not None else [1] * len(self.contexts)
        if len(self.workload) != len(self.contexts):
            raise ValueError("DataParallelExecutorGroup: %d work loads for %d contexts"
                             % (len(self.workload), len(self.contexts)))
        self.group2ctxs = _prepare_group2ctxs(group2ctxs, len(self.contexts))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        data_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in data_shapes]
        if label_shapes is not None:
            label_shapes = [d if isinstance(d, DataDesc) else DataDesc(*d) for d in label_shapes]
        self.grad_req = self._grad_reqs("null" if not for_training else grad_req,
                                        [d.name for d in data_shapes])
        self.batch_size = None
        self.slices = None
        self.execs = []
        self._default_execs = None
        self._monitor = None
        self.data_arrays = self.label_arrays = self.param_arrays = self.state_arrays = None
        self.grad_arrays = self.aux_arrays = self.input_grad_arrays = None
        self.data_shapes = self.label_shapes = None
        self.data_names = self.label_names = None
        self.data_layouts = self.label_layouts = None
        self.output_names = symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        self.output_layouts = [DataDesc.get_batch_axis(symbol[i].attr("__layout__"))
                               for i in range(self.num_outputs)]
        self.bind_exec(data_shapes, label_shapes, shared_group)

    def _grad_reqs(self, grad_req, data_names):
        """``{argument: req}`` from one req, a list of them, or a dict of overrides."""
        if isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(self.arg_names):
                raise ValueError("grad_req: %d entries for the %d arguments %s"
                                 % (len(grad_req), len(self.arg_names), self.arg_names))
            return dict(zip(self.arg_names, grad_req))
        if not isinstance(grad_req, (str, dict)):
            raise ValueError("grad_req must be one of str, list, tuple, or dict.")
        base = grad_req if isinstance(grad_req, str) else "write"
        reqs = {}
        for name in self.arg_names:
            if name in self.param_names:
                reqs[name] = "null" if name in self.fixed_param_names else base
            elif name in data_names:
                reqs[name] = base if self.inputs_need_grad else "null"
            else:
                reqs[name] = "null"
        if isinstance(grad_req, dict):
            reqs.update(grad_req)
        return reqs

    # -- binding ---------------------------------------------------------------------------
    def decide_slices(self, data_shapes):
        """The batch axis of each input; sets ``batch_size`` and ``slices`` (all inputs
        with a batch axis must agree on its size)."""
        if not data_shapes:
            raise ValueError("decide_slices: no data shapes")
        major_axis = [DataDesc.get_batch_axis(d.layout) for d in data_shapes]
        for (name, shape), axis in zip(data_shapes, major_axis):
            if axis == -1:
                continue
            if self.batch_size is None:
                self.batch_size = shape[axis]
                self.slices = _split_input_slice(self.batch_size, self.workload)
            elif shape[axis] != self.batch_size:
                raise MXNetError("all data must have the same batch size: batch_size = %d, "
                                 "but %s has shape %s" % (self.batch_size, name, shape))
        return major_axis

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Bind (or, with ``reshape``, re-bind for new shapes) one executor per context."""
        if self.execs and not reshape:
            raise MXNetError("bind_exec: already bound; pass reshape=True for new shapes")
        self.batch_size = None
        self.data_layouts = self.decide_slices(data_shapes)
        if label_shapes is not None:
            self.label_layouts = self.decide_slices(label_shapes)
        for i in range(len(self.contexts)):
            shapes = self._sliced_shape(data_shapes, i, self.data_layouts)
            if label_shapes is not None:
                shapes += self._sliced_shape(label_shapes, i, self.label_layouts)
            if reshape:
                if self._monitor is not None and self.execs[i] in self._monitor.exes:
                    self._monitor.exes.remove(self.execs[i])
                self.execs[i] = self._bind_ith_exec(i, shapes, self._default_execs[i])
            else:
                shared = None if shared_group is None else shared_group.execs[i]
                self.execs.append(self._bind_ith_exec(i, shapes, shared))
        self.data_shapes = data_shapes
        self.label_shapes = label_shapes
        self.data_names = [d.name for d in data_shapes]
        if label_shapes is not None:
            self.label_names = [d.name for d in label_shapes]
        self._collect_arrays()

    def reshape(self, data_shapes, label_shapes):
        """Re-bind for new input shapes; arrays whose shapes do not change are kept."""
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        if self._default_execs is None:
            self._default_execs = list(self.execs)
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def _bind_ith_exec(self, i, shapes, shared_exec):
        """The executor of context ``i``; it uses ``shared_exec``'s arrays for parameters,
        their gradients and auxiliary states (and, when it re-binds the same group, for
        every argument) wherever the shapes agree."""
        context = self.contexts[i]
        input_shapes = {d.name: d.shape for d in shapes}
        arg_shapes, _, aux_shapes = self.symbol.infer_shape(**input_shapes)
        if arg_shapes is None:
            partial = self.symbol.infer_shape_partial(**input_shapes)[0]
            missing = [a for a, s in zip(self.arg_names, partial) if not s]
            raise MXNetError("DataParallelExecutorGroup: cannot infer the shapes of %s from %s"
                             % (missing, input_shapes))
        arg_types, _, aux_types = self.symbol.infer_type(**{d.name: d.dtype for d in shapes})
        reuse = (lambda name: True) if shared_exec is not None and \
            shared_exec in (self._default_execs or []) else self.param_names.__contains__
        old_args = shared_exec.arg_dict if shared_exec is not None else {}
        old_grads = shared_exec.grad_dict if shared_exec is not None else {}
        old_aux = shared_exec.aux_dict if shared_exec is not None else {}

        def array(old, name, shape, dtype, share=True):
            a = old.get(name) if share else None
            if a is not None and a.shape == tuple(shape) and a.dtype == dtype:
                return a
            return nd.zeros(shape, ctx=context, dtype=dtype)
        args, grads = {}, {}
        for name, shape, dt in zip(self.arg_names, arg_shapes, arg_types):
            args[name] = array(old_args, name, shape, dt, reuse(name))
            if self.grad_req[name] != "null":
                grads[name] = array(old_grads, name, shape, dt, reuse(name))
        aux = {name: array(old_aux, name, shape, dt)
               for name, shape, dt in zip(self.aux_names, aux_shapes, aux_types)}
        ex = self.symbol.bind(context, args, grads, self.grad_req, aux,
                              group2ctx=self.group2ctxs[i])
        if self._monitor is not None:
            self._monitor.install(ex)
        return ex

    def _sliced_shape(self, shapes, i, major_axis):
        """``shapes`` with the batch axis cut to context ``i``'s slice."""
        out = []
        for desc, axis in zip(shapes, major_axis):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            out.append(DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout))
        return out

    def _collect_arrays(self):
        """Per input/parameter, the arrays of every executor (with their batch slices)."""
        slices = self.slices or [slice(i, i + 1) for i in range(len(self.execs))]
        self.data_arrays = [[(slices[i], e.arg_dict[name]) for i, e in enumerate(self.execs)]
                            for name, _ in self.data_shapes]
        self.state_arrays = [[e.arg_dict[name] for e in self.execs] for name in self.state_names]
        # NOTE: a label the symbol does not take (an iterator's softmax_label for a
        # symbol without loss) is not loaded anywhere; MXNet fails to bind it.
        self.label_arrays = None if self.label_shapes is None else [
            [(slices[i], e.arg_dict[name]) for i, e in enumerate(self.execs)
             if name in e.arg_dict] for name, _ in self.label_shapes]
        self.param_arrays = [[e.arg_arrays[i] for e in self.execs]
                             for i, name in enumerate(self.arg_names) if name in self.param_names]
        self.grad_arrays = [[e.grad_arrays[i] for e in self.execs]
                            for i, name in enumerate(self.arg_names)
                            if name in self.param_names] if self.for_training else None
        self.input_grad_arrays = [[e.grad_arrays[self.arg_names.index(name)] for e in self.execs]
                                  for name, _ in self.data_shapes
                                  if name in self.arg_names] if self.inputs_need_grad else None
        self.aux_arrays = [[e.aux_arrays[i] for e in self.execs]
                           for i in range(len(self.aux_names))]

    # -- parameters --------------------------------------------------------------------------
    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copy parameters into every executor."""
        for ex in self.execs:
            ex.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Write into ``arg_params``/``aux_params`` (dicts of NDArrays, in place) the
        average over the devices of each parameter and auxiliary state."""
        for names, blocks, dst in ((self.param_names, self.param_arrays, arg_params),
                                   (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                weight = sum(w.copyto(ctx.cpu()) for w in block) / len(block)
                weight.astype(dst[name].dtype).copyto(dst[name])

    # -- computation -------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Load the batch's slices into the executors and run them."""
        _load_batch(data_batch, self.data_arrays, self.data_layouts, "data")
        if is_train is None:
            is_train = self.for_training
        first = data_batch[0] if isinstance(data_batch, list) else data_batch
        if self.label_arrays is not None and first is not None and first.label:
            _load_batch(data_batch, self.label_arrays, self.label_layouts, "label")
        for ex in self.execs:
            ex.forward(is_train=is_train)

    def backward(self, out_grads=None):
        """Backward on every device; ``out_grads`` (whole batch) are sliced per device."""
        if not self.for_training:
            raise MXNetError("backward: re-bind with for_training=True to run backward")
        out_grads = [out_grads] if isinstance(out_grads, nd.NDArray) else (out_grads or [])
        for i, (ex, sl) in enumerate(zip(self.execs, self.slices)):
            mine = []
            for grad, axis in zip(out_grads, self.output_layouts):
                if axis >= 0:
                    part = nd.slice_axis(grad, axis=axis, begin=sl.start, end=sl.stop)
                    mine.append(part.as_in_context(self.contexts[i]))
                else:
                    mine.append(grad.copyto(self.contexts[i]))
            ex.backward(out_grads=mine or None)

    def get_output_shapes(self):
        """``[(name, shape)]`` of the merged outputs."""
        first = {name: a.shape for name, a in self.execs[0].arg_dict.items()}
        shapes = []
        for name, out, axis in zip(self.output_names, self.symbol.infer_shape(**first)[1],
                                   self.output_layouts):
            shape = list(out)
            if axis >= 0:
                shape[axis] = self.batch_size
            shapes.append((name, tuple(shape)))
        return shapes

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        """Outputs ``[begin, end)`` of the last forward: merged over devices, or
        ``[[out1_dev1, out1_dev2], ...]``."""
        end = self.num_outputs if end is None else end
        outputs = [[ex.outputs[i] for ex in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            return _merge_multi_context(outputs, self.output_layouts[begin:end])
        return outputs

    def get_states(self, merge_multi_context=True):
        """The state arrays, ``[[state1_dev1, state1_dev2], ...]``."""
        if merge_multi_context:
            raise MXNetError("get_states: merge_multi_context=True is not supported (as MXNet)")
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Set the states from arrays laid out as ``get_states`` gives them, or to one
        scalar ``value``."""
        if (states is None) == (value is None):
            raise MXNetError("set_states: give exactly one of states and value")
        if states is not None:
            _load_general(states, self.state_arrays, (0,) * len(states))
        else:
            for arrays in self.state_arrays:
                for a in arrays:
                    a[:] = value

    def get_input_grads(self, merge_multi_context=True):
        """The gradients of the data inputs (bound with ``inputs_need_grad``)."""
        if not self.inputs_need_grad:
            raise MXNetError("get_input_grads: bind with inputs_need_grad=True")
        if merge_multi_context:
            return _merge_multi_context(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with each device's outputs and its slice of ``labels``
        (``pre_sliced``: ``labels`` already holds one list per device)."""
        for k, (ex, sl) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                mine = labels[k]
            else:
                mine = []
                for label, axis in zip(labels, self.label_layouts or [0] * len(labels)):
                    if axis == 0:
                        mine.append(label[sl])
                    elif axis > 0:
                        mine.append(nd.slice_axis(label, axis=axis, begin=sl.start,
                                                  end=sl.stop).as_in_context(label.context))
                    else:
                        mine.append(label)
            eval_metric.update_dict(OrderedDict(zip(self.label_names or [], mine)),
                                    OrderedDict(zip(self.output_names, ex.outputs)))

    def install_monitor(self, mon):
        """Have ``mon`` watch every executor, also those bound later for new shapes."""
        self._monitor = mon
        for ex in self.execs:
            mon.install(ex)
