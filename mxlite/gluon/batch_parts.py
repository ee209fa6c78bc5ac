"""A hybridized graph's inference on parts of its batch at once.

At two threads or more, an unrecorded replay of a graph whose every step is
batch-separable (each op's ``batchwise`` rule, ``operator/batchwise.py``) runs on
contiguous parts of the batch, one part per thread, each part whole on its thread:
its kernels run serially, the BLAS at one thread (``engine.batch_parts``). The
outputs are joined along axis 0. This uses the cores with less work than splitting
each op over them (``engine.parallel``/``matmul``): no handoff per op, no pass cut
too small to gain, no operand packed again per part. Each row's numbers are its
kernels' own, the same as in the whole replay where the kernels work sample by
sample; a product that OpenBLAS orders by its shape may differ in float32 round-off.

A graph is separable for given input shapes when every step's rule holds for its
inputs (the data inputs carry the batch, the parameters do not, a step's outputs carry
it where an input does), every batched value keeps the batch on axis 0 in the full
shapes and in each part's (the shapes inferred for both: a Reshape to a fixed batch
size is no row map), every graph output carries the batch, and the steps are large enough
(``MIN_STEP_VALUES``). The answer is kept per input shapes, training mode and thread
count.
"""
import os

import numpy as np

from .. import engine
from ..autograd import _state as _ag_state
from ..nd.ndarray import _wrap
from ..operator import registry as _registry

__all__ = ["run"]

# Whether an unrecorded replay may run on parts of its batch: MXLITE_BATCH_PARTS=0 turns
# it off (tests do, to compare with the whole replay).
ENABLED = os.environ.get("MXLITE_BATCH_PARTS", "1") != "0"
# Values the graph's steps output, per step on average, from which it is cut: each part
# runs every step's Python glue holding the GIL, which a small step does not outweigh.
# NOTE: measured at 2 threads (whole and cut alternated in one process, min of 7):
# LeNet 0.80x at batch 8 (30K values a step), 0.93x at 16, 1.03x at 32 (120K), 1.03x
# at 64, 1.35x at 128; 3-layer MLPs 0.78-0.86x at 50-100K values a step (their
# products already split well over the workers), 0.98x at 450K; ResNet-18, ResNet-50,
# MobileNet-v2 and VGG-11 gained 1.10-1.45x from batch 2 (220K values a step and up).
MIN_STEP_VALUES = 1 << 17


def run(graph, raw, nda, ctx, xp):
    """The outputs (NDArrays) of ``graph`` replayed on parts of the batch, with ``raw``
    holding its inputs and parameters (and ``nda`` their NDArrays); None where the
    replay is not to be cut (one thread, a worker, not NumPy, recording, a profiler
    running, a batch of 1, a step that is not batch-separable)."""
    if (not ENABLED or engine._threads < 2 or engine._here.inside or xp is not np
            or _ag_state.recording or _registry._profile_hook is not None):
        return None
    n = _parts(graph, raw)
    if not n:
        return None
    training = _ag_state.training
    cut = [s for s, _ in graph.input_slots]
    steps = graph._run_bare

    def part(lo, hi):
        was = _ag_state.training     # a worker's own: the kernels read the caller's
        _ag_state.training = training
        try:
            vals = list(raw)
            for s in cut:
                vals[s] = raw[s][lo:hi]
            graph._replay_steps(None, vals, None, xp, ctx, None, None, None, steps)
            return [vals[s] for s in graph.out_slots]
        finally:
            _ag_state.training = was
    ys = [np.concatenate(y) for y in zip(*engine.batch_parts(part, n))]
    for extra in graph._bumps:
        graph._step_extra(extra, raw, nda, ctx, None, False)
    return [_wrap(y, ctx) for y in ys]


def _parts(graph, raw):
    """The batch size where ``graph`` runs on parts of it for these inputs, else 0.

    NOTE: a graph's first run with given shapes runs whole (where it may be cut, from
    the second on): it is often its only one (a child block's graph while its parent
    traces), and caches that keep per-weight work from a second use on (Winograd's
    filters, ``fused.keep_filters``) would take its parts for two runs."""
    shapes = tuple([raw[s].shape for s, _ in graph.input_slots])
    key = (shapes, _ag_state.training, engine._threads)
    found = graph._batch_parts.get(key)
    if found is None:
        if len(graph._batch_parts) < 64:
            graph._batch_parts[key] = _separable(graph, shapes, raw)
        return 0
    return found


def _separable(graph, shapes, raw):
    """:func:`_parts`'s answer, worked out."""
    n = shapes[0][0] if shapes and shapes[0] else 0
    if n < 2 or graph._open or any(not s or s[0] != n for s in shapes):
        return 0
    for op, p, *_ in graph._plan:       # the params first (see operator/batchwise.py)
        if op.batchwise is None or not op.batchwise(p, None, None):
            return 0
    if any(r is not None for st in graph._plan if st[7] for _, r in st[7][2]):
        return 0        # an output viewing an input or parameter: a join would copy it
    k = min(engine._threads, n)
    sizes = {n * (i + 1) // k - n * i // k for i in range(k)}
    full = _slot_shapes(graph, shapes, raw)
    cuts = [_slot_shapes(graph, [(m,) + s[1:] for s in shapes], raw) for m in sizes]
    if full is None or None in cuts:
        return 0
    batched = {s for s, _ in graph.input_slots}
    values = 0
    for op, p, ins, first, multi, nid, nvis, extra in graph._plan:
        flags = tuple([s in batched for s in ins])
        if not op.batchwise(p, [full[s] for s in ins], flags):
            return 0
        if True not in flags:
            continue
        for s in range(first, first + nvis):
            rest = full[s][1:]
            if full[s][:1] != (n,) or any(c[s] != (m,) + rest for c, m in zip(cuts, sizes)):
                return 0
            batched.add(s)
            values += int(np.prod(full[s]))
    if values < MIN_STEP_VALUES * len(graph._plan):
        return 0
    return n if all(s in batched for s in graph.out_slots) else 0


def _slot_shapes(graph, shapes, raw):
    """Each value slot's shape for graph inputs of ``shapes`` (parameters as in ``raw``),
    by the graph's shape inference; None where it does not tell them all."""
    known = {graph.input_names[k]: shape for (_, k), shape in zip(graph.input_slots, shapes)}
    known.update((name, raw[s].shape) for name, s in zip(graph._param_names,
                                                          graph._param_slot_ids))
    try:
        per_node = graph.symbol._infer_shape_impl((), known)[3]
    except Exception:       # shapes the graph refuses: the whole replay raises its error
        return None
    out = {s: tuple(raw[s].shape) for s in graph._param_slot_ids}
    out.update((s, tuple(shape)) for (s, _), shape in zip(graph.input_slots, shapes))
    for op, p, ins, first, multi, nid, nvis, extra in graph._plan:
        found = per_node.get(nid)
        if found is None and type(nid) is tuple:      # a step of no node (a graph's rewrite)
            found = op.infer_shape(p, [out[s] for s in ins])[1]
        if found is None or len(found) < nvis:
            return None
        for i in range(nvis):
            s = found[i]
            if s is None or 0 in s:
                return None
            out[first + i] = tuple(s)
    return out
