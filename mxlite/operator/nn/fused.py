"""Ops a hybridized graph runs in place of a chain of ops (see
``gluon/cached_graph.py``): the chain's numbers, bit for bit, in one step.
:data:`FUSIONS` is the table of the chains and the op standing for each.

BatchNorm -> relu and BatchNorm -> elemwise_add -> relu (ResNet's blocks) run as
``_contrib_BatchNormWithReLU`` and ``_batch_norm_add_relu`` (``normalization.py``):
the sum and relu in place on BatchNorm's fresh output, channel by channel, and in
the backward relu's mask from the output, BatchNorm's sums after it.

``_conv_kept_filters`` is Convolution, standing for a 3x3 convolution of a graph
parameter: in inference it keeps the weight's Winograd transform (``_fast``) across
calls while the weight is the same array at the same version.

``_log_softmax_pick`` is ``pick(log_softmax(x, axis), index, axis)``, the heart of
``SoftmaxCrossEntropyLoss``. It keeps the log-probabilities and the flat positions
it picked as hidden outputs, so its backward neither recomputes the positions nor
builds the zero-filled scatter of pick's gradient. That gradient has one value per
row, so the backward can be written per position:

    chain:  gs = scatter(g)            (g at the picked position, 0 elsewhere)
            gx = gs - exp(y) * sum(gs, axis)
    fused:  s = g + 0                  (the row sum: one value plus zeros; ``+ 0``
                                        turns -0 into +0 as that sum does)
            t = exp(y) * s
            gx = 0 - t,  and g - t at the picked positions

the same operations on the same operands at every position. The fused kernel runs
when the backward is not recorded and no gradient reached the hidden outputs.
"""
import numpy as np

from ...autograd import _state as _ag_state
from ...base import parse_bool
from ...nd.ndarray import NDArray
from ..registry import register_op, Param, get_op, array_module_of, dtypes
from ..util import norm_axis
from ..tensor.indexing import pick_with_flat, PICK_MODES
from .softmax import _PARAMS as _SOFTMAX_PARAMS, _log_softmax
from . import _fast


def _compute(p, xp, x, idx):
    y = _log_softmax(p, xp, x)
    picked, flat = pick_with_flat(p, xp, y, idx)
    return picked, y, flat


def _fused_gradient(p, xp, x, y, gy):
    _, logp, flat = y
    g = gy[0]
    axis = norm_axis(p.axis, logp.ndim)
    s = g.reshape(logp.shape[:axis] + (1,) + logp.shape[axis + 1:]) + 0
    t = xp.exp(logp)
    t *= s
    at_picked = t.reshape(-1)[flat]
    gx = xp.subtract(logp.dtype.type(0), t, out=t)
    gx.reshape(-1)[flat] = g.reshape(flat.shape) - at_picked
    return [gx.astype(x[0].dtype, copy=False), None]


def _gradient(p, x, y, gy, need):
    """The chain's own rules, in order (a recorded, differentiable backward). A
    recorded backward can reach the hidden log-probabilities too (a second-order
    gradient through log_softmax's rule reads them): that gradient joins pick's."""
    if not need[0]:
        return [None, None]
    if gy[1] is None and not isinstance(x[0], NDArray):
        # NOTE: unrecorded, and nothing read the log-probabilities: the fused kernel.
        return _fused_gradient(p, array_module_of(x[0]), x, y, gy)
    pick, log_softmax = get_op("pick"), get_op("log_softmax")
    gs = gy[1]
    if gy[0] is not None:
        pp = pick.parse_params(dict(axis=p.axis, keepdims=p.keepdims, mode=p.mode))
        gs0 = pick.gradient(pp, [y[1], x[1]], [y[0]], [gy[0]], [True, False])[0]
        gs = gs0 if gs is None else gs0 + gs
    lp = log_softmax.parse_params(dict(axis=p.axis))
    return [log_softmax.gradient(lp, [x[0]], [y[1]], [gs], [True])[0], None]


def _infer_type(p, dtypes):
    return [dtypes[0], dtypes[0], np.dtype(np.int64)]


LOG_SOFTMAX_PICK = register_op(
    "_log_softmax_pick", _compute, inputs=("data", "index"),
    params=_SOFTMAX_PARAMS + [
        Param("keepdims", parse_bool, False, "Keep the picked axis with size 1."),
        Param("mode", None, "clip", "Out-of-range indices.", choices=PICK_MODES)],
    num_outputs=3, num_visible_outputs=1, gradient=_gradient,
    saves="xy", infer_type=_infer_type, check=dtypes(data="f"),
    doc="``pick(log_softmax(data, axis), index, axis)`` in one step (what a hybridized "
        "graph runs for that chain); hidden outputs: the log-probabilities and the flat "
        "picked positions.")


# -- Convolution keeping its Winograd filters ----------------------------------------------

class KeptWeight:
    """A ``_conv_kept_filters`` step's weight parameter: ``arrays()``, its NDArrays (one per
    context), and the transformed filters kept for it."""

    def __init__(self, arrays):
        self.arrays = arrays
        self.kept = _fast.KeptFilters()

    def version_of(self, w):
        """The version list of the parameter's NDArray holding raw ``w`` (None if none)."""
        for a in self.arrays() or ():
            if a._data is w:
                return a._share_version()
        return None


_CONV = get_op("Convolution")


def _parse_kept(v):
    if isinstance(v, KeptWeight):
        return v
    if v is None or v == "None":
        return None
    raise ValueError("expected a KeptWeight (a hybridized graph's) or None, got %r" % (v,))


def _conv_kept(p, xp, *x):
    """Convolution; in an unrecorded call (inference), with the Winograd filters of the
    weight kept across calls while the weight is unchanged (``_fast.keeping``)."""
    weight = p.kept
    if weight is not None and not _ag_state.recording:
        version = weight.version_of(x[1])
        if version is not None:
            with _fast.keeping(x[1], version, weight.kept):
                return _CONV.kernel(p, xp, *x)
    return _CONV.kernel(p, xp, *x)


CONV_KEPT_FILTERS = register_op(
    "_conv_kept_filters", _conv_kept, gradient=_CONV.gradient, saves=_CONV.saves,
    num_outputs=_CONV.num_outputs, num_visible_outputs=_CONV.num_visible_outputs,
    output_names=_CONV.output_names, inputs=_CONV.inputs, infer_shape=_CONV.infer_shape_rule,
    check=_CONV.check,
    params=list(_CONV.params.values()) + [
        Param("kept", _parse_kept, None, "The weight parameter (a KeptWeight), or None.")],
    doc="Convolution (what a hybridized graph runs for a 3x3 convolution of a parameter), "
        "whose inference keeps the weight's Winograd transform while the weight is "
        "unchanged: the same array at the same version.")


def keep_filters(p, arrays):
    """The step (op, params) running Convolution ``p`` with its filters kept, for the
    weight parameter whose NDArrays ``arrays()`` gives; None where no Winograd kernel
    could run it (not a one-group, stride-1, undilated 3x3 2-D convolution)."""
    if (tuple(p.kernel) != (3, 3) or p.num_group != 1 or tuple(p.stride) not in ((), (1, 1))
            or tuple(p.dilate) not in ((), (1, 1))):
        return None
    return CONV_KEPT_FILTERS, CONV_KEPT_FILTERS.parse_params(dict(p.items(),
                                                                  kept=KeptWeight(arrays)))


# -- the table -----------------------------------------------------------------------------
# A rule gets the chain's links, first to last: (params, input slots, the position in
# those slots where the previous link's output comes in; None for the first link), and
# returns the fused step's (op, params, input slots), or None where it does not cover
# that chain.

def _log_softmax_pick(links):
    """Not with a temperature, an output dtype, lengths, or two different axes."""
    (a, (x,), _), (b, (_, index), _) = links
    if a.temperature is not None or a.dtype is not None or a.use_length or a.axis != b.axis:
        return None
    return LOG_SOFTMAX_PICK, LOG_SOFTMAX_PICK.parse_params(
        dict(axis=a.axis, keepdims=b.keepdims, mode=b.mode)), (x, index)


def _bn_then_relu(name, links, ins):
    """``name`` (a BatchNorm with relu) for a chain from a BatchNorm without
    output_mean_var (its mean and inv are not read elsewhere) to a relu."""
    bn = links[0][0]
    if bn.output_mean_var or getattr(links[-1][0], "act_type", "relu") != "relu":
        return None
    op = get_op(name)
    return op, op.parse_params(dict(bn.items())), ins


def _bn_relu(links):
    return _bn_then_relu("_contrib_BatchNormWithReLU", links, links[0][1])


def _bn_add_relu(links):
    (_, bn_ins, _), (_, add_ins, via) = links[:2]
    return _bn_then_relu("_batch_norm_add_relu", links, bn_ins + (add_ins[1 - via],))


# (op names, first to last; the rule), longest chains first
FUSIONS = [
    (("BatchNorm", "elemwise_add", "Activation"), _bn_add_relu),
    (("BatchNorm", "elemwise_add", "relu"), _bn_add_relu),
    (("BatchNorm", "Activation"), _bn_relu),
    (("BatchNorm", "relu"), _bn_relu),
    (("log_softmax", "pick"), _log_softmax_pick),
]
