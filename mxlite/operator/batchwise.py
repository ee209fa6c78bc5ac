"""Which ops a hybridized graph may run on parts of a batch at once.

An op's ``batchwise`` (see :class:`~mxlite.operator.registry.Op`) is a rule
``rule(p, shapes, batched) -> bool``: given its params, its inputs' shapes and which
inputs carry the batch along axis 0, whether row ``i`` of its visible outputs depends
only on row ``i`` of those inputs and on the others whole, for any cut of the rows.
Where every step of a graph says so, ``gluon/cached_graph`` may run the graph on
contiguous parts of the batch, each part whole on one thread, and join the outputs
(the kernels' own numbers: nothing is reduced across the cut). An op without a rule
(None) is never cut. A rule also answers for a step none of whose inputs is batched:
such a step runs once in each part, so it must give the same values each time (no
random draws). The rules read the params at the time of the call, and, where an op's
kernel does (BatchNorm, Dropout), whether autograd is in training mode.

The rules are made here:

- :func:`rows` for most ops: the inputs named may carry the batch, the others must not
  (Convolution: ``rows("data")``; a weight cut in parts would be another op);
- :func:`broadcast_rows` for elementwise arithmetic: any input may carry the batch, an
  input that does not must broadcast along axis 0 (rank lower than the output's, or a
  leading 1), so that each row sees it whole;
- :func:`together` for ops that join their inputs along another axis (Concat): all
  inputs carry the batch, or none does.

A rule's ``when(p, shapes)`` adds a condition on the params (``softmax`` not over
axis 0); :func:`axis_not_batch` is the common one. Called with ``shapes`` and
``batched`` None, a rule says whether the params allow a cut at all: a graph asks that
of every step before it infers its shapes, since shape inference may run kernels on
dummies (a Dropout in training mode would draw from the random generator).
"""
from ..autograd import _state as _ag_state

__all__ = ["rows", "broadcast_rows", "together", "axis_not_batch", "inference",
           "ELEMENTWISE"]


def rows(*names, when=None):
    """A rule: only the inputs ``names`` (the first input where none are given) may carry
    the batch; ``when(p, shapes)`` must hold too."""
    def rule(p, shapes, batched):
        if batched and True in batched:
            if not names:
                if True in batched[1:]:
                    return False
            elif any(b and name not in names for name, b in zip(p._op.input_names(p), batched)):
                return False
        return when is None or bool(when(p, shapes))
    return rule


def broadcast_rows(when=None):
    """A rule for elementwise ops with broadcasting: an input without the batch has a
    lower rank than the batched ones or a leading 1; ``when(p, shapes)`` must hold too."""
    def rule(p, shapes, batched):
        ranks = [len(s) for s, b in zip(shapes, batched) if b] if shapes else ()
        if ranks:
            top = max(len(s) for s in shapes)
            if min(ranks) != top:
                return False
            for s, b in zip(shapes, batched):
                if not b and len(s) == top and s[0] != 1:
                    return False
        return when is None or bool(when(p, shapes))
    return rule


def together(when=None):
    """A rule: every input carries the batch, or none does; ``when(p, shapes)`` holds."""
    def rule(p, shapes, batched):
        if batched and True in batched and False in batched:
            return False
        return when is None or bool(when(p, shapes))
    return rule


def axis_not_batch(name="axis"):
    """A ``when``: the param ``name`` (an axis of the first input) is not axis 0, nor None
    (the whole array)."""
    def when(p, shapes):
        axis = p.get(name)
        if axis is None or axis == 0:
            return False
        return shapes is None or bool(shapes[0]) and axis % len(shapes[0]) != 0
    return when


def inference(p, shapes=None):
    """A ``when`` for BatchNorm flavours: the moving statistics are used (not training,
    or ``use_global_stats``), no mean and variance are output, and the channels are
    not axis 0."""
    return ((not _ag_state.training or p.use_global_stats) and not p.output_mean_var
            and p.axis != 0 and (shapes is None or p.axis % len(shapes[0]) != 0))


# the rule of one-input elementwise ops
ELEMENTWISE = rows()
