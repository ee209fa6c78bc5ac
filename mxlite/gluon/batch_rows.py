"""An unrecorded imperative call (inference, not hybridized) of a block whose every
layer maps the rows of its batch to rows, run on parts of the batch at once.

A hybridized graph's inference runs on parts of its batch, one part per thread, each
whole on its thread (``batch_parts``, ``engine.batch_parts``), after it has checked
each op's rule. Without a graph there is nothing to check op by op, so an imperative
call is cut only where each block under it is one of the layers that declare
themselves row-wise (a class attribute ``_rows``, its own, never inherited: a subclass
may compute anything): ``True``, or ``"inference"`` for those whose training mode
mixes rows or draws (BatchNorm's batch statistics, Dropout). A block with a hook, a
hybridized one or one whose parameters wait for their shapes is never cut, nor its
parents; its children may be, where they are called. A layer alone (no children) is
never cut: its kernels split their own passes, with no join to copy.

Each part runs every layer's Python glue holding the GIL, which small layers do not
outweigh: the batch is cut from ``MIN_VALUES`` input values on. The outputs are joined
along the batch; each row's numbers are those the layers' kernels give for its part,
as in a hybridized graph cut the same way (a product that OpenBLAS orders by its shape
may differ in float32 round-off from the whole batch's).
"""
import numpy as np

from .. import engine
from ..autograd import _state as _ag_state
from ..nd.ndarray import NDArray, _wrap
from ..operator import registry as _registry
from ..util import _state as _np_state

# Input values from which a call is cut (ResNet and MobileNet at 224x224 from batch 2).
MIN_VALUES = 1 << 18


def _rows(block, top=False):
    """Whether ``block`` and every block under it map rows to rows in this call (the top
    block's own hooks run outside the cut, around the joined output)."""
    mark = type(block).__dict__.get("_rows")
    if not mark or getattr(block, "_active", False) or mark == "inference" and (
            _ag_state.training or getattr(block, "_channel_axis", None) == 0):
        return False        # (a BatchNorm over axis 0 normalises each row by its index)
    if not top and (block._forward_hooks or block._forward_pre_hooks):
        return False
    if any(p._data is None for p in block._reg_params.values()):
        return False
    return all(_rows(c) for c in block._children.values())


def run(block, x):
    """``block`` 's forward on NDArray ``x`` by parts of its batch, joined; None where the
    call is not cut (one layer alone: its kernels split their own passes; one thread, a
    worker, recording, mx.np's semantics, not NumPy data, a profiler running, a small
    input, a layer that is not row-wise)."""
    n = x.shape[0] if x.ndim else 0
    if (n < 2 or not block._children or engine._threads < 2 or engine._here.inside or _ag_state.recording
            or _np_state.array or type(x) is not NDArray or type(x._data) is not np.ndarray
            or x.size < MIN_VALUES or _registry._profile_hook is not None
            or not _rows(block, top=True)):
        return None
    training, ctx, data = _ag_state.training, x._ctx, x._data

    def part(lo, hi):
        was = _ag_state.training     # a worker's own: the layers read the caller's
        _ag_state.training = training
        try:
            y = block.forward(_wrap(data[lo:hi], ctx))
        finally:
            _ag_state.training = was
        if type(y) is not NDArray or y.ndim == 0 or y.shape[0] != hi - lo:
            raise ValueError("%s: a row-wise block gave %r for %d rows of its batch"
                             % (type(block).__name__, y, hi - lo))
        return y._data
    return _wrap(np.concatenate(engine.batch_parts(part, n)), ctx)
