"""``mxlite.contrib.horovod``: Horovod's ``horovod.mxnet`` API on mxlite's MPI layer.

Scripts written for Horovod run unchanged once ``horovod.mxnet`` names this module::

    import mxlite, mxlite.contrib.horovod
    mxlite.install_as_mxnet()
    mxlite.contrib.horovod.install_as_horovod()   # before `import horovod.mxnet as hvd`

and are launched with ``mpirun -n 4 python train.py`` (or ``horovodrun``'s equivalent,
``python -m mxlite.launch -n 4 python train.py``).

Semantics are Horovod's: ``allreduce`` averages by default, ``DistributedTrainer`` and
``DistributedOptimizer`` average the gradients over the workers (where
``kvstore='dist_sync'`` sums them), and parameters are made equal only by
``broadcast_parameters``. Collectives run on the same watched MPI communicator as the
``dist_*`` kvstores: a failing rank aborts the whole job.
"""
import types
from collections import OrderedDict

import numpy as np

from .. import optimizer as _opt
from ..gluon.parameter import DeferredInitializationError, Parameter
from ..gluon.trainer import Trainer
from ..kvstore import _mpi
from ..nd.ndarray import NDArray

__all__ = ["init", "shutdown", "is_initialized", "size", "local_size", "rank", "local_rank",
           "cross_size", "cross_rank", "mpi_enabled", "mpi_built", "mpi_threads_supported",
           "gloo_enabled", "gloo_built", "nccl_built", "ddl_built", "ccl_built", "cuda_built",
           "rocm_built", "Average", "Sum", "Adasum", "Min", "Max", "Product",
           "allreduce", "allreduce_", "grouped_allreduce", "grouped_allreduce_", "allgather",
           "broadcast", "broadcast_", "broadcast_object", "allgather_object",
           "broadcast_parameters", "Compression", "DistributedOptimizer",
           "DistributedTrainer", "install_as_horovod"]

# Horovod's reduction ops (horovod.common.basics values)
Average, Sum, Adasum, Min, Max, Product = range(6)

_STARTED = False


def _world():
    if not _STARTED:
        raise ValueError("Horovod has not been initialized; use hvd.init().")
    return _mpi.world()


def install_as_horovod():
    """Make ``import horovod.mxnet`` (and ``from horovod import mxnet``) give this module."""
    import sys
    me = sys.modules[__name__]
    parent = sys.modules.get("horovod")
    if parent is None:
        parent = sys.modules["horovod"] = types.ModuleType("horovod")
        parent.__path__ = []
    parent.mxnet = me
    sys.modules["horovod.mxnet"] = me
    return me


def init(comm=None):
    """Start (MPI is initialised here). ``comm`` other than all ranks is refused."""
    global _STARTED
    if comm is not None and comm not in ([], None) and \
            (not isinstance(comm, (list, tuple)) or sorted(comm) != list(range(len(comm)))):
        raise ValueError("mxlite.contrib.horovod.init: only the whole job (comm=None) is "
                         "supported, got %r" % (comm,))
    _mpi.world()
    _STARTED = True


def shutdown():
    """Stop using Horovod (MPI itself ends with the process)."""
    global _STARTED
    _STARTED = False


def is_initialized():
    return _STARTED


def size():
    """The number of workers."""
    return _world().size


def rank():
    """This worker's rank, ``0 .. size() - 1``."""
    return _world().rank


def local_size():
    """The number of workers on this machine."""
    return _world().local.Get_size()


def local_rank():
    """This worker's rank among those on this machine (use it to pick a GPU)."""
    return _world().local.Get_rank()


def _hosts():
    return sorted(set(_world().allgather_obj(_world().MPI.Get_processor_name(), op="hosts")))


def cross_size():
    """The number of machines in the job."""
    return len(_hosts())


def cross_rank():
    """This machine's index among the machines (by host name)."""
    return _hosts().index(_world().MPI.Get_processor_name())


def mpi_enabled():
    return True


def mpi_built():
    return True


def mpi_threads_supported():
    return _world().MPI.Query_thread() == _world().MPI.THREAD_MULTIPLE


def gloo_enabled():
    return False


gloo_built = nccl_built = ddl_built = ccl_built = cuda_built = rocm_built = gloo_enabled


# -- collectives on NDArrays ---------------------------------------------------------------
def _host(tensor):
    data = tensor._data
    return np.array(data if isinstance(data, np.ndarray) else data.get())


def _write(tensor, value):
    value = value.astype(tensor._data.dtype, copy=False)
    if isinstance(tensor._data, np.ndarray):
        tensor._data[...] = value
    else:
        tensor._data.set(value)
    tensor._bump()


def _reduce_op(average, op):
    if op is not None and average is not None:
        raise ValueError("allreduce: give op or average, not both")
    if op is None:
        op = Sum if average is False else Average
    if op == Adasum:
        raise NotImplementedError("allreduce: op=Adasum is not supported by mxlite; use "
                                  "Average or Sum")
    if op not in (Average, Sum, Min, Max, Product):
        raise ValueError("allreduce: unknown op %r" % (op,))
    return op


def _allreduce_arrays(tensors, average, name, prescale_factor, postscale_factor, op):
    op = _reduce_op(average, op)
    world = _world()
    MPI = world.MPI
    mpi_op = {Average: MPI.SUM, Sum: MPI.SUM, Min: MPI.MIN, Max: MPI.MAX,
              Product: MPI.PROD}[op]
    arrays = [_host(t) for t in tensors]
    if prescale_factor != 1.0:
        arrays = [a * prescale_factor if a.dtype.kind == "f" else a for a in arrays]
    names = [name if name is not None else "allreduce.%d" % i for i in range(len(arrays))]
    world.allreduce(arrays, names, op="allreduce", reduce_op=mpi_op)
    scale = postscale_factor / (world.size if op == Average else 1)
    if scale != 1.0:
        arrays = [a * scale for a in arrays]
    return arrays


def allreduce(tensor, average=None, name=None, priority=0, prescale_factor=1.0,  # noqa: ARG001
              postscale_factor=1.0, process_set=None, op=None):  # noqa: ARG001
    """A new NDArray: ``tensor`` reduced over the workers (averaged by default).

    Examples
    --------
    >>> hvd.allreduce(mx.nd.ones((2,)) * (hvd.rank() + 1))    # 2 workers  # doctest: +SKIP
    [1.5 1.5]
    """
    out = tensor.copy()
    allreduce_(out, average, name, priority, prescale_factor, postscale_factor, process_set, op)
    return out


def allreduce_(tensor, average=None, name=None, priority=0,  # noqa: ARG001
               prescale_factor=1.0, postscale_factor=1.0, process_set=None, op=None):  # noqa: ARG001
    """Reduce ``tensor`` in place over the workers (averaged by default); returns it."""
    _write(tensor, _allreduce_arrays([tensor], average, name, prescale_factor,
                                     postscale_factor, op)[0])
    return tensor


def grouped_allreduce(tensors, average=None, name=None, priority=0, prescale_factor=1.0,
                      postscale_factor=1.0, process_set=None, op=None):
    """New NDArrays: each of ``tensors`` reduced (in one fused exchange)."""
    outs = [t.copy() for t in tensors]
    grouped_allreduce_(outs, average, name, priority, prescale_factor, postscale_factor,
                       process_set, op)
    return outs


def grouped_allreduce_(tensors, average=None, name=None, priority=0,  # noqa: ARG001
                       prescale_factor=1.0, postscale_factor=1.0, process_set=None,  # noqa: ARG001
                       op=None):
    """Reduce every one of ``tensors`` in place (in one fused exchange); returns them."""
    for t, a in zip(tensors, _allreduce_arrays(tensors, average, name, prescale_factor,
                                               postscale_factor, op)):
        _write(t, a)
    return tensors


def broadcast(tensor, root_rank, name=None, priority=0, process_set=None):  # noqa: ARG001
    """A new NDArray holding rank ``root_rank``'s ``tensor``."""
    out = tensor.copy()
    broadcast_(out, root_rank, name)
    return out


def broadcast_(tensor, root_rank, name=None, priority=0, process_set=None):  # noqa: ARG001
    """Overwrite ``tensor`` with rank ``root_rank``'s, in place; returns it."""
    a = _host(tensor)
    _world().bcast([a], [name or "broadcast"], root=root_rank)
    _write(tensor, a)
    return tensor


def allgather(tensor, name=None, priority=0, process_set=None):  # noqa: ARG001
    """The workers' ``tensor``s concatenated along axis 0, in rank order (their first
    dimensions may differ)."""
    from .. import nd
    parts = _world().allgather_obj(_host(tensor), op="allgather")
    return nd.array(np.concatenate(parts, axis=0), ctx=tensor.context, dtype=tensor.dtype)


def broadcast_object(obj, root_rank=0, name=None, process_set=None):  # noqa: ARG001
    """Rank ``root_rank``'s picklable ``obj`` on every worker."""
    return _world().bcast_obj(obj, root=root_rank)


def allgather_object(obj, name=None, process_set=None):  # noqa: ARG001
    """Every worker's picklable ``obj``, in rank order."""
    return _world().allgather_obj(obj)


def broadcast_parameters(params, root_rank=0, prefix=None):
    """Make every worker's parameters rank ``root_rank``'s.

    ``params`` is a dict (e.g. ``Module.get_params()[0]``) or a ParameterDict
    (``net.collect_params()``), taken in sorted name order. A Parameter whose
    initialisation is deferred is broadcast when its shape becomes known (at the
    first forward pass, which every worker makes).
    """
    if not hasattr(params, "items"):
        raise ValueError("invalid params of type: %s" % type(params))
    prefix = prefix or ""
    tensors, names = [], []
    for name, p in sorted(params.items()):
        if isinstance(p, Parameter):
            try:
                tensors.append(p.data())
            except DeferredInitializationError:
                p._init_impl = types.MethodType(_broadcast_after(p, root_rank,
                                                                 prefix + str(name)), p)
                continue
        else:
            tensors.append(p)
        names.append(prefix + str(name))
    if size() == 1 or not tensors:
        return
    arrays = [_host(t) for t in tensors]
    _world().bcast(arrays, names, root=root_rank)
    for t, a in zip(tensors, arrays):
        if isinstance(t, NDArray):
            _write(t, a)
    for p in params.values():
        if isinstance(p, Parameter) and p._data is not None and len(p._data) > 1:
            p.set_data(p._data[0])


def _broadcast_after(param, root_rank, name):
    init_impl = param._init_impl

    def wrapped(self, *args, **kwargs):
        init_impl(*args, **kwargs)
        data = self.data()
        broadcast_(data, root_rank, name=name)
        if len(self._data) > 1:
            self.set_data(data)
    return wrapped


# -- training --------------------------------------------------------------------------------
class Compression:
    """Gradient compression for the allreduce: ``none`` or ``fp16``."""

    class _NoneCompressor:
        @staticmethod
        def compress(tensor):
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):  # noqa: ARG004
            return tensor

    class _FP16Compressor:
        @staticmethod
        def compress(tensor):
            if np.dtype(tensor.dtype).kind == "f":
                return tensor.astype("float16"), tensor.dtype
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor if ctx is None else tensor.astype(ctx)

    none = _NoneCompressor
    fp16 = _FP16Compressor


class DistributedOptimizer(_opt.Optimizer):
    """Wrap an Optimizer so that each update first averages the gradient over the workers.

    Every attribute other than the wrapping ones is the wrapped optimizer's (reading
    and setting), so ``rescale_grad``, the learning rate and the update counts stay
    where that optimizer keeps them. Aggregated updates (``update_group``) average all
    their gradients in one fused exchange.
    """

    _OWN = ("_optimizer", "_gradient_predivide_factor", "_num_groups")

    def __init__(self, optimizer, gradient_predivide_factor=1.0, num_groups=0):  # noqa: D107
        # NOTE: Optimizer.__init__ is not called: the state is the wrapped optimizer's.
        object.__setattr__(self, "_optimizer", optimizer)
        object.__setattr__(self, "_gradient_predivide_factor", gradient_predivide_factor)
        object.__setattr__(self, "_num_groups", num_groups)

    def __getattr__(self, item):
        return getattr(self.__dict__["_optimizer"], item)

    def __setattr__(self, key, value):
        if key in self._OWN:
            object.__setattr__(self, key, value)
        else:
            setattr(self._optimizer, key, value)

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _average(self, index, grads):
        if size() == 1:
            return
        f = self._gradient_predivide_factor
        grouped_allreduce_(grads, average=True, name=str(index), prescale_factor=1.0 / f,
                           postscale_factor=f)

    def create_state(self, index, weight):
        return self._optimizer.create_state(index, weight)

    def create_state_multi_precision(self, index, weight):
        return self._optimizer.create_state_multi_precision(index, weight)

    def update(self, index, weight, grad, state):
        self._average(index, grad if isinstance(grad, (list, tuple)) else [grad])
        self._optimizer.update(index, weight, grad, state)

    def update_multi_precision(self, index, weight, grad, state):
        self._average(index, grad if isinstance(grad, (list, tuple)) else [grad])
        self._optimizer.update_multi_precision(index, weight, grad, state)

    def update_group(self, indices, weights, grads, states):
        self._average(indices, grads)
        self._optimizer.update_group(indices, weights, grads, states)

    def set_learning_rate(self, lr):
        self._optimizer.set_learning_rate(lr)

    def set_lr_mult(self, args_lr_mult):
        self._optimizer.set_lr_mult(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        self._optimizer.set_wd_mult(args_wd_mult)


class DistributedTrainer(Trainer):
    """A gluon Trainer that averages the gradients over the workers (Horovod's).

    ``step(batch_size)`` updates with the mean over the workers of each worker's
    gradient scaled by ``1/batch_size``. Call :func:`broadcast_parameters` first so
    that the workers start from the same weights.
    """

    def __init__(self, params, optimizer, optimizer_params=None, compression=Compression.none,
                 gradient_predivide_factor=1.0, prefix=None, num_groups=0):
        if isinstance(optimizer, DistributedOptimizer):
            import warnings
            optimizer = optimizer._optimizer
            warnings.warn("DistributedTrainer does not take DistributedOptimizer as its "
                          "optimizer. We have unwrapped it for you.")
        if isinstance(params, dict):
            params = OrderedDict(params)
        super().__init__(params, optimizer, optimizer_params=optimizer_params, kvstore=None)
        self._compression = compression
        self._gradient_predivide_factor = gradient_predivide_factor
        self._scale *= gradient_predivide_factor / size()
        self._prefix = prefix or ""
        self._num_groups = num_groups

    def _allreduce_grads(self, plan):  # noqa: ARG002 (every trainable gradient, as Horovod)
        if size() == 1:
            return
        grads, ctxs = [], []
        params = [p for p in self._params if p.grad_req != "null"]
        for p in params:
            g, ctx = self._compression.compress(p.list_grad()[0])
            grads.append(g)
            ctxs.append(ctx)
        grouped_allreduce_(grads, average=False, name=self._prefix + "grads",
                           prescale_factor=1.0 / self._gradient_predivide_factor)
        for p, g, ctx in zip(params, grads, ctxs):
            if self._compression is not Compression.none:
                p.list_grad()[0][:] = self._compression.decompress(g, ctx)
