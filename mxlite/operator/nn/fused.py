"""Ops a hybridized graph runs in place of a chain of ops (see
``gluon/cached_graph.py``): the chain's numbers, bit for bit, in one step.
:data:`FUSIONS` is the table of the chains and the op standing for each.

BatchNorm -> relu and BatchNorm -> elemwise_add -> relu (ResNet's blocks) run as
``_contrib_BatchNormWithReLU`` and ``_batch_norm_add_relu`` (``normalization.py``):
the sum and relu in place on BatchNorm's fresh output, channel by channel, and in
the backward relu's mask from the output, BatchNorm's sums after it.

``_conv_kept_filters`` is Convolution, standing for a 3x3 convolution of a graph
parameter: in inference it keeps the weight's Winograd transform (``_fast``) across
calls while the weight is the same array at the same version. Such a convolution, a
1x1 or strided one, or one with a bias, feeding a BatchNorm flavour alone runs with it
as ``_conv_batch_norm``: in inference (the moving statistics) the convolution's kernel
(Winograd's, a 1x1 one's, the blocked strided one's) applies BatchNorm's affine, the
residual sum and relu to each part of its output as it makes it, in BatchNorm's order
(one pass over the output less, while it is in the caches; an im2col one applies them
in one pass over its output, in place of BatchNorm's), and a bias is taken into
BatchNorm's mean (one pass less, float32 round-off: the one departure from the
chain's bits); otherwise, and where no such kernel runs, the two ops' kernels one
after the other, and their rules.

``_subsample`` is ``slice`` stepping over the spatial axes: a graph whose strided 1x1
convolutions (ResNet's downsampling blocks: the body's first and the shortcut) alone
read one value runs it once, and them at stride 1 on its copy, where their kernels
copied those positions out each (:func:`unstrided_pointwise`).

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
import contextlib
import functools

import numpy as np

from ...autograd import _state as _ag_state
from ...base import MXNetError, parse_bool
from ...nd.ndarray import NDArray
from ..registry import register_op, Param, get_op, array_module_of, dtypes
from ..batchwise import rows, inference
from ..util import norm_axis
from ..tensor.indexing import pick_with_flat, PICK_MODES
from .softmax import _PARAMS as _SOFTMAX_PARAMS, _log_softmax
from . import _fast, _fast_bn, _fast_direct, _conv_kernels as kern
from .convolution import geometry, conv_out_size
from .normalization import batch_norm, moving_affine


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


def _parse_graph_object(cls):
    """The parser of a param a hybridized graph fills with a ``cls`` (None or 'None'
    when absent, as a JSON round trip gives it)."""
    def parse(v):
        if isinstance(v, cls):
            return v
        if v is None or v == "None":
            return None
        raise ValueError("expected a %s (a hybridized graph's) or None, got %r"
                         % (cls.__name__, v))
    return parse


_parse_kept = _parse_graph_object(KeptWeight)


def _kept_entry(p, w):
    """What :func:`_fast.keeping` takes to keep the transforms of Convolution ``p``'s
    weight ``w`` (``p.kept``: a KeptWeight, or None: a plain Convolution's params have
    none): in an unrecorded call (inference) only; else None."""
    weight = getattr(p, "kept", None)
    if weight is not None and not _ag_state.recording:
        version = weight.version_of(w)
        if version is not None:
            return w, version, weight.kept
    return None


def _keeping(p, w):
    """The context in which Convolution ``p`` keeps the Winograd filters of its weight
    ``w`` (:func:`_kept_entry`)."""
    return _kept_context(_kept_entry(p, w))


def _kept_context(entry):
    """``_fast.keeping`` for a :func:`_kept_entry` (one for each call: it holds the entry
    it replaced), or a context keeping nothing for None."""
    return contextlib.nullcontext() if entry is None else _fast.keeping(*entry)


def _conv_kept(p, xp, *x):
    """Convolution; in an unrecorded call (inference), with the Winograd filters of the
    weight kept across calls while the weight is unchanged (``_fast.keeping``)."""
    with _keeping(p, x[1]):
        return _CONV.kernel(p, xp, *x)


CONV_KEPT_FILTERS = register_op(
    "_conv_kept_filters", _conv_kept, gradient=_CONV.gradient, saves=_CONV.saves,
    num_outputs=_CONV.num_outputs, num_visible_outputs=_CONV.num_visible_outputs,
    output_names=_CONV.output_names, inputs=_CONV.inputs, infer_shape=_CONV.infer_shape_rule,
    check=_CONV.check, batchwise=_CONV.batchwise,
    params=list(_CONV.params.values()) + [
        Param("kept", _parse_kept, None, "The weight parameter (a KeptWeight), or None.")],
    doc="Convolution (what a hybridized graph runs for a 3x3 convolution of a parameter), "
        "whose inference keeps the weight's Winograd transform while the weight is "
        "unchanged: the same array at the same version.")


def keep_filters(p, arrays):
    """The step (op, params) running Convolution ``p`` with its filters kept, for the
    weight parameter whose NDArrays ``arrays()`` gives; None where it keeps none
    (``_fast.keeps_filters``)."""
    if not _fast.keeps_filters(p):
        return None
    return CONV_KEPT_FILTERS, CONV_KEPT_FILTERS.parse_params(dict(p.items(),
                                                                  kept=KeptWeight(arrays)))


# -- Convolution -> BatchNorm [-> elemwise_add] [-> relu] -----------------------------------

class ConvBatchNorm:
    """A ``_conv_batch_norm`` step's chain: the Convolution (op, params) and the BatchNorm
    flavour (op, params) after it, with whether it adds a residual and rectifies, and
    whether the convolution has a bias (then ``bare_p``: its params without)."""

    def __init__(self, conv, conv_p, bn, bn_p):
        self.conv, self.conv_p, self.bn, self.bn_p = conv, conv_p, bn, bn_p
        self.residual = bn.name == "_batch_norm_add_relu"
        self.relu = bn.name != "BatchNorm"
        self.bias = not conv_p.no_bias
        self.bare_p = conv.parse_params(dict(conv_p.items(), no_bias=True))
        self._fits = {}
        # set by a hybridized graph whose parameters all of the chain's are
        # (:func:`watch_params`): the graph's count of the times they may have changed
        self.epoch = None
        self.prepared = {}      # per data shape: its _Prepared inference

    def fitting(self, data, w, b, gamma, beta, mean, var, r):
        """How an inference runs on these arrays (``b``, ``r``: the bias, the residual, or
        None): None where the chain's kernels are to run (:func:`_conv_bn_inference`'s
        checks); else the convolution's 2-D geometry (kernel, stride, dilate, pad, output
        size) and its kind: "3x3" (``_fast.conv3x3`` may run it), "1x1" (a product), or
        "cols" (im2col's); or False where no kernel applies the epilogue (the checks of
        :func:`_conv_with_epilogue`).

        NOTE: found once per data shape for the parameters' arrays (held, compared by
        identity: an array keeps its shape and dtype) and the data's dtype, not at every
        call: the Python of ResNet-50 b1's 52 fused steps (their kernels stubbed, one
        thread, warm) 1.09 -> 0.92 ms a call."""
        fit = self._fits.get(data.shape)
        if (fit is None or w is not fit[0] or gamma is not fit[1] or beta is not fit[2]
                or mean is not fit[3] or var is not fit[4] or b is not fit[5]
                or data.dtype != fit[6] or type(data) is not np.ndarray
                or r is not None and (r.shape != fit[7] or r.dtype != fit[6])):
            fit = (w, gamma, beta, mean, var, b, data.dtype, None if r is None else r.shape,
                   self._fit(data, w, b, gamma, beta, mean, var, r))
            if len(self._fits) < 16:
                self._fits[data.shape] = fit
        return fit[8]

    def _fit(self, data, w, b, gamma, beta, mean, var, r):
        """:meth:`fitting`'s answer, worked out."""
        p, f = self.conv_p, (self.conv_p.num_filter,)
        if (data.dtype not in _fast._DTYPES or type(data) is not np.ndarray
                or self.bn_p.axis != 1 or gamma.shape != f or beta.shape != f
                or mean.shape != f or var.shape != f or b is not None and b.shape != f):
            return None
        if (data.ndim != 4 or w.ndim != 4 or w.shape[:2] != f + data.shape[1:2]
                or w.dtype != data.dtype or type(w) is not np.ndarray or p.num_group != 1
                or len(p.kernel) != 2 or p.layout not in (None, "NCHW")):
            return False
        found = geometry(p, 2, "Convolution")
        kernel, stride, dilate, pad = found
        found += (conv_out_size("Convolution", data.shape[2:], *found),)
        if tuple(w.shape[2:]) != kernel or r is not None and (
                r.shape != data.shape[:1] + f + found[4] or r.dtype != data.dtype):
            return False
        if kern.is_pointwise(kernel, pad, dilate, 1):
            return found + ("1x1",)
        if kernel == (3, 3) and tuple(stride) == (1, 1) and tuple(dilate) == (1, 1):
            return found + ("3x3",)
        return found + ("cols",)

    def again(self, data):
        """Whether this step's inference on data of ``data``'s shape and dtype ran before,
        with the graph's parameters unchanged since (:meth:`prepare`)."""
        seen = self.prepared.get(data.shape)
        return seen is not None and seen.epoch == self.epoch[0] and seen.dtype == data.dtype

    def prepare(self, data, r, call, outs, again):
        """Keep ``call`` (:func:`_epilogue_call`'s) and the hidden outputs ``outs`` as the
        inference of data of ``data``'s shape (and a residual of ``r``'s) while the
        graph's parameters are unchanged, where they were since the call before
        (``again``, :meth:`again`): from their second call unchanged on, as the weights'
        transforms are kept; in a graph that tells their changes (:func:`watch_params`)."""
        if not PREPARED or self.epoch is None:
            return
        if again or len(self.prepared) < 16:
            self.prepared[data.shape] = _Prepared(self.epoch[0], call if again else None,
                                                  data.dtype, None if r is None else r.shape,
                                                  outs)

    def __repr__(self):
        return "%s -> %s" % (self.conv.name, self.bn.name)


_parse_chain = _parse_graph_object(ConvBatchNorm)

# Whether a graph's ``_conv_batch_norm`` steps keep their inference's call per data shape
# (:class:`_Prepared`; else each call works it out again: kept for measuring).
PREPARED = True


class _Prepared:
    """A ``_conv_batch_norm`` step's inference on data of one shape and dtype: ``call(data,
    r)``, the kernel's call with everything but the data and the residual bound (the
    packed weights or the kept filters' holder, BatchNorm's scale and shift, the units),
    and the hidden outputs ``outs``, made while the graph's count of parameter changes
    was ``epoch`` (:func:`watch_params`); ``call`` None: seen once.

    NOTE: ResNet-50 b1's inference worked each out at every call: the geometry, BatchNorm's
    vectors, the kept weights' lookups, the units: ~35 us of Python a step with the caches
    cold from the kernel before (53 steps, while the other thread waits); checking each
    step's parameters (their versions, the statistics' bytes) ~15 us of it."""
    __slots__ = ("epoch", "call", "dtype", "residual", "outs")

    def __init__(self, epoch, call, dtype, residual, outs):
        self.epoch, self.call, self.dtype, self.outs = epoch, call, dtype, outs
        self.residual = residual    # the residual's shape (None: the chain adds none)

    def fits(self, epoch, data, r):
        """Whether the call runs on ``data`` (of its shape) and the residual ``r`` at the
        graph's count of parameter changes ``epoch``: the count it was made at, NumPy data
        of its dtype, ``r`` of the output's shape and that dtype."""
        return (self.call is not None and epoch == self.epoch and type(data) is np.ndarray
                and data.dtype == self.dtype and (r is None or r.shape == self.residual
                                                  and r.dtype == self.dtype))


def watch_params(op, p, params, epoch):
    """Give a graph's ``_conv_batch_norm`` step ``(op, p)`` the graph's count of the times
    its parameters may have changed, ``epoch`` (a list ``[count]``: the graph bumps it
    where one changed between two calls, or a call may have changed one), where all
    that it reads but the data and the residual are parameters (``params``: per input,
    whether it is one): its prepared inference is made again when the count moved
    (:meth:`ConvBatchNorm.prepare`)."""
    chain = p.chain if op is CONV_BATCH_NORM else None
    if chain is not None and all(params[1:6]) and (params[-1] or not chain.bias):
        chain.epoch = epoch


def _conv_bn(p, xp, data, w, gamma, beta, moving_mean, moving_var, *rest):
    """The chain's outputs (BatchNorm's three) and, hidden, the convolution's (its output
    and columns); ``rest``: the residual, then the bias, where the chain has them. In
    inference with the moving statistics, the convolution's kernel applies BatchNorm's
    affine (and the sum and relu) as it makes the output where it can, and a bias is
    taken into BatchNorm's mean."""
    chain = p.chain
    if chain is None:
        raise MXNetError("_conv_batch_norm: chain is None; expected the chain's ops and params "
                         "(a ConvBatchNorm), which a hybridized graph gives the step it "
                         "runs in place of Convolution -> BatchNorm")
    r = rest[0] if chain.residual else None
    b = rest[-1] if chain.bias else None
    bn_p = chain.bn_p
    if not _ag_state.recording and (bn_p.use_global_stats or not _ag_state.training):
        prepared = chain.prepared.get(data.shape) if PREPARED else None
        if prepared is not None and prepared.fits(chain.epoch[0], data, r):
            y = prepared.call(data, r)
            if y is not None:
                return (y,) + prepared.outs
        y = _conv_bn_inference(chain, xp, data, w, b, gamma, beta, moving_mean, moving_var, r)
        if y is not None:
            return y
    z, cols = chain.conv.kernel(chain.conv_p, xp, data, w, *rest[chain.residual:])
    y, mean, inv = batch_norm(bn_p, xp, z, gamma, beta, moving_mean, moving_var, r,
                              chain.relu)
    return y, mean, inv, z, cols


def _conv_bn_inference(chain, xp, data, w, b, gamma, beta, moving_mean, moving_var, r):
    """:func:`_conv_bn`'s outputs in inference, or None where the data do not fit (the
    caller runs the chain, which raises any error); the kernel's call kept for the next
    calls on data of this shape (:meth:`ConvBatchNorm.prepare`).

    NOTE: a bias ``b`` is taken into BatchNorm's mean, ``(z - (mean - b)) * scale +
    shift`` for the convolution ``z`` without it, instead of ``((z + b) - mean) * ...``:
    one pass less, the chain's numbers to float32 round-off (not bit for bit)."""
    fit = chain.fitting(data, w, b, gamma, beta, moving_mean, moving_var, r)
    if fit is None:
        return None
    dt = data.dtype
    mean = moving_mean if b is None else moving_mean.astype(dt) - b.astype(dt)
    again = chain.epoch is not None and chain.again(data)
    found = fit and _epilogue_call(chain, fit, data, w, gamma, beta, mean, moving_var, r,
                                   again)
    y = found[0](data, r) if found else None
    if y is None:
        if b is None:
            return None
        z = chain.conv.kernel(chain.bare_p, xp, data, w)[0]
        y, inv = batch_norm(chain.bn_p, xp, z, gamma, beta, mean, moving_var, r,
                            chain.relu)[::2]
    else:
        inv = found[1]
    # NOTE: the hidden outputs, which an unrecorded call leaves unread: the moving mean
    # itself and a shared empty array (a NumPy call less each: a step's glue)
    empty = _EMPTY[dt]
    outs = (moving_mean if moving_mean.dtype == dt else moving_mean.astype(dt), inv, empty,
            empty)
    if found and y is not None:
        chain.prepare(data, r, found[0], outs, again)
    return (y,) + outs


def _read_only_empty(dtype):
    a = np.empty(0, dtype=dtype)
    a.flags.writeable = False
    return a


_EMPTY = {dt: _read_only_empty(dt) for dt in _fast._DTYPES}


def _epilogue_call(chain, fit, data, w, gamma, beta, mean, var, r, again):
    """(``call(data, r)``, inv): ``call`` gives the chain's convolution without its bias,
    with BatchNorm's inference (``mean``, ``var``: the moving statistics), the sum of a
    residual ``r`` (like this call's ``r``, or None) and relu applied by the kernel as
    it makes each part of the output (the chain's operations on the values it would
    read), for data of ``data``'s shape and dtype: Winograd's (3x3), a 1x1
    convolution's or a blocked strided one's, else im2col's after its product
    (:func:`kern.correlate`); None where numba is off (and a call gives None where no
    kernel applies). ``fit``: the convolution's geometry and kind
    (:meth:`ConvBatchNorm.fitting`). ``again``: whether the step ran on these
    parameters the call before (:meth:`ConvBatchNorm.again`), from which a small 3x3
    convolution's direct kernel is tried here (its weights packed, as ``_fast.conv3x3``
    would pack them on that call) rather than in ``_fast.conv3x3``.

    NOTE: im2col's pass after the product (ResNet-18's first stride-2 3x3 convolution,
    batch 4, one thread): 0.92x the time of the convolution then BatchNorm's pass."""
    if _fast.kernels() is None:
        return None
    p = chain.conv_p
    kernel, stride, dilate, pad, out, kind = fit
    mean, inv, scale, shift = moving_affine(chain.bn_p, np, data.dtype, gamma, beta, mean, var)
    relu = chain.relu
    entry = _kept_entry(p, w)
    if kind != "cols":
        # the direct kernel's call, its weights packed (from the weight's second call on)
        epilogue = (mean, scale, shift, r, relu)
        call = None
        with _kept_context(entry):
            if kind == "1x1":
                call = _fast_direct.pointwise_call(data, w, stride, epilogue)
            elif again:
                call = _fast_direct.conv3x3_call(data, w, pad, out, epilogue)
        if call is not None:
            return call, inv
    n, f = data.shape[0], p.num_filter

    def call(data, r):
        if kind == "3x3":
            with _kept_context(entry):
                y = _fast.conv3x3(data, w, stride, dilate, pad, 1, out,
                                  epilogue=(mean, scale, shift, r, relu), inference=True)
            if y is not None:
                return y[0]
        epilogue = _fast_bn.affine_epilogue(mean, scale, shift,
                                            None if r is None else r.reshape(n, f, -1), relu)
        if epilogue is None:
            return None
        if kind == "1x1":
            return kern.pointwise(np, data, w, stride, epilogue)
        with _kept_context(entry):
            return kern.correlate(np, data, w, kernel, stride, dilate, pad, 1, out,
                                  inference=True, epilogue=epilogue)[0]
    return call, inv


def _conv_bn_gradient(p, x, y, gy, need):
    """BatchNorm's rule (for the hidden convolution output), then Convolution's."""
    chain = p.chain
    ends = 6 + chain.residual      # x: data, weight, BatchNorm's inputs but z, [bias]
    conv_x, conv_need = list(x[:2]) + list(x[ends:]), list(need[:2]) + list(need[ends:])
    bn_need = [any(conv_need)] + list(need[2:ends])
    gb = chain.bn.gradient(chain.bn_p, [y[3]] + list(x[2:ends]), list(y[:3]), list(gy[:3]),
                           bn_need)
    gc = [None] * len(conv_x)
    if bn_need[0]:
        gc = chain.conv.gradient(chain.conv_p, conv_x, list(y[3:]), [gb[0], None], conv_need)
    return list(gc[:2]) + list(gb[1:]) + list(gc[2:])


CONV_BATCH_NORM = register_op(
    "_conv_batch_norm", _conv_bn, gradient=_conv_bn_gradient, saves="xy",
    inputs=lambda p: ("data", "weight", "gamma", "beta", "moving_mean", "moving_var") + (
        ("residual",) if p.chain is not None and p.chain.residual else ()) + (
        ("bias",) if p.chain is not None and p.chain.bias else ()),
    num_outputs=5, num_visible_outputs=1, mutate=(4, 5), no_grad_inputs=(4, 5),
    batchwise=rows("data", "residual", when=lambda p, s: p.chain and inference(p.chain.bn_p, s)),
    params=[Param("chain", _parse_chain, None, "The chain's ops and params (a ConvBatchNorm).")],
    doc="Convolution -> BatchNorm [-> elemwise_add] [-> relu] in one step (what a "
        "hybridized graph runs for that chain), with the chain's outputs, moving statistics "
        "and gradients; hidden outputs: the convolution's output and columns.")


# -- one copy of the strided positions for the strided 1x1 convolutions of one value ---------

_SLICE = get_op("slice")

SUBSAMPLE = register_op(
    "_subsample", _SLICE.kernel, gradient=_SLICE.gradient, saves=_SLICE.saves,
    params=list(_SLICE.params.values()), check=_SLICE.check, batchwise=rows(),
    doc="``slice`` stepping over the spatial axes alone (what a hybridized graph runs once "
        "for the strided 1x1 convolutions reading one value): a copy, batch by batch.")


def unstrided_pointwise(op, p):
    """(its stride, the step at stride 1) for a graph step ``(op, p)`` running a 2-D 1x1
    convolution at a stride over 1 (Convolution, ``_conv_kept_filters`` or a
    ``_conv_batch_norm`` of one) in one group, channels first, without padding; else
    None. Such a convolution of ``x`` is the stride-1 one of ``x[:, :, ::s0, ::s1]``,
    which its kernels copy out first: the same values."""
    chain = p.chain if op is CONV_BATCH_NORM else None
    conv, conv_p = (chain.conv, chain.conv_p) if chain is not None else (op, p)
    if (conv not in (_CONV, CONV_KEPT_FILTERS) or tuple(conv_p.kernel) != (1, 1)
            or conv_p.num_group != 1 or any(conv_p.pad) or conv_p.layout not in (None, "NCHW")
            or len(conv_p.stride) != 2 or tuple(conv_p.stride) == (1, 1)):
        return None
    unit = conv.parse_params(dict(conv_p.items(), stride=(1, 1)))
    if chain is not None:
        unit = op.parse_params(dict(chain=ConvBatchNorm(conv, unit, chain.bn, chain.bn_p)))
    return tuple(conv_p.stride), (op, unit)


def subsample(stride):
    """The step (op, params) copying every ``stride``-th position of (N, C, H, W) data."""
    return SUBSAMPLE, SUBSAMPLE.parse_params(dict(begin=(None,) * 4, end=(None,) * 4,
                                                  step=(1, 1) + tuple(stride)))


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


def _takes_epilogue(p):
    """Whether a kernel applies BatchNorm's inference as it makes the output of Convolution
    ``p`` where the data fit (:func:`_conv_with_epilogue`): 2-D, one group, channels first,
    1x1 without padding or strided."""
    kernel = tuple(p.kernel)
    return (len(kernel) == 2 and p.num_group == 1 and p.layout in (None, "NCHW")
            and (kernel == (1, 1) and not any(p.pad) or max(p.stride or (1,)) > 1))


def _conv_batch_norm(conv, bn, links):
    """A convolution whose output only the BatchNorm flavour reads (over the channels,
    without output_mean_var), where its inference saves a pass: a 3x3 one (the Winograd
    kernel applies BatchNorm as it makes its output) or one with a bias (taken into
    BatchNorm's mean)."""
    (conv_p, conv_ins, _), (bn_p, bn_ins, _) = links
    if (bn_p.output_mean_var or bn_p.axis != 1
            or (conv == "Convolution" and conv_p.no_bias and not _takes_epilogue(conv_p))):
        return None
    chain = ConvBatchNorm(get_op(conv), conv_p, get_op(bn), bn_p)
    return CONV_BATCH_NORM, CONV_BATCH_NORM.parse_params(dict(chain=chain)), (
        conv_ins[:2] + bn_ins[1:] + conv_ins[2:])


# (op names, first to last; the rule), longest chains first; a chain may end with a fused
# step of an earlier row
FUSIONS = [
    (("BatchNorm", "elemwise_add", "Activation"), _bn_add_relu),
    (("BatchNorm", "elemwise_add", "relu"), _bn_add_relu),
    (("BatchNorm", "Activation"), _bn_relu),
    (("BatchNorm", "relu"), _bn_relu),
    (("log_softmax", "pick"), _log_softmax_pick),
] + [((conv, bn), functools.partial(_conv_batch_norm, conv, bn))
     for conv in ("_conv_kept_filters", "Convolution")
     for bn in ("BatchNorm", "_contrib_BatchNormWithReLU", "_batch_norm_add_relu")]
