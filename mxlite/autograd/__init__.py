"""Imperative autograd: ``record``/``pause`` scopes, the recorded graph and ``backward``.

Every op run by :func:`mxlite.operator.invoke` while recording, with an input that
is a marked variable or a recorded result, leaves a :class:`Node` (written by
:func:`record_node`, the tape's one writer). ``backward`` walks the nodes in reverse
topological order, runs each node's rule through :func:`node_backward` (on raw
arrays; on NDArrays when the backward is itself recorded, so that it yields
higher-order gradients) and writes each variable's ``.grad`` by its ``grad_req``.
"""
import contextlib
import threading
from heapq import heappop as _heappop, heappush as _heappush
from itertools import count as _count
from sys import getrefcount as _getrefcount

import numpy as np
from numpy import ndarray as _ndarray

from ..base import MXNetError
from . import later

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "mark_variables", "backward", "grad", "Function",
           "get_symbol"]


class _State(threading.local):
    def __init__(self):
        self.recording = False
        self.training = False
        self.raw = False        # gradient rules run on raw arrays (see node_backward)
        # the backward running frees each node's saved values once its rule ran
        # (retain_graph=False): a rule that saves a whole graph (a hybridized block's)
        # may drop each step's values as it goes
        self.freeing = False


_state = _State()

# A backward that is not itself recorded runs gradient rules on raw arrays (no
# NDArray per intermediate). Tests turn this off to run them on NDArrays instead and
# compare the numbers.
RAW_RULES = True
_NO_WALK = contextlib.nullcontext()


def is_recording():
    """Whether ops are being recorded for gradient computation."""
    return _state.recording


def is_training():
    """Whether ops run in training mode (Dropout drops, BatchNorm uses batch stats)."""
    return _state.training


def set_recording(is_recording):  # noqa: F811 (MXNet's name)
    """Set recording on or off; returns the previous state."""
    prev = _state.recording
    _state.recording = bool(is_recording)
    return prev


def set_training(train_mode):
    """Set training mode on or off; returns the previous state."""
    prev = _state.training
    _state.training = bool(train_mode)
    return prev


class _Scope:
    """``with`` scope that sets recording and/or training and restores them on exit."""
    __slots__ = ("_rec", "_train", "_prev_rec", "_prev_train")

    def __init__(self, is_record, train_mode):
        self._rec = is_record
        self._train = train_mode
        self._prev_rec = self._prev_train = None

    def __enter__(self):
        st = _state
        self._prev_rec, self._prev_train = st.recording, st.training
        if self._rec is not None:
            st.recording = self._rec
        if self._train is not None:
            st.training = self._train
        return self

    def __exit__(self, *exc):
        _state.recording, _state.training = self._prev_rec, self._prev_train


def record(train_mode=True):
    """Scope in which ops are recorded for ``backward``.

    Examples
    --------
    >>> x = mx.nd.array([1, 2]); x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = x * x
    >>> y.backward(); x.grad
    [2. 4.]
    """
    return _Scope(True, train_mode)


def pause(train_mode=False):
    """Scope in which recording stops (e.g. metric or target computations)."""
    return _Scope(False, train_mode)


def train_mode():
    """Scope in which ops run in training mode, recording unchanged."""
    return _Scope(None, True)


def predict_mode():
    """Scope in which ops run in inference mode, recording unchanged."""
    return _Scope(None, False)


# ----------------------------------------------------------------------------
# The graph.

_next_seq = _count().__next__


class Node:
    """One recorded op call: its op and params, the graph entries of its inputs,
    and the raw input/output arrays its gradient reads (with their versions).

    ``seq`` numbers nodes in the order they were recorded. A node's inputs exist before
    it does, so every parent has a smaller ``seq``: visiting nodes by decreasing ``seq``
    is a reverse topological order, which ``backward`` uses instead of sorting."""
    __slots__ = ("op", "p", "parents", "need", "xdata", "ydata", "ctx", "yctx", "checks",
                 "freed", "nout", "seq")

    def __init__(self, op, p, parents, need, xdata, ydata, ctx, yctx, checks):
        self.seq = _next_seq()
        self.nout = len(ydata)
        self.yctx = yctx
        self.op = op
        self.p = p
        self.parents = parents
        self.need = need        # per input, whether it is in the graph (wants a gradient)
        self.xdata = xdata
        self.ydata = ydata
        self.ctx = ctx
        self.checks = checks
        self.freed = False

    @property
    def var_inputs(self):
        """The positions of the inputs that are marked variables (whose gradients the
        backward may take later, ``autograd.later``)."""
        return tuple(i for i, e in enumerate(self.parents)
                     if e is not None and type(e[0]) is VarNode)


class VarNode:
    """The leaf of a marked variable; ``backward`` writes ``var.grad`` here and marks it
    fresh (MXNet's ``_fresh_grad``, which a Trainer clears when it updates)."""
    __slots__ = ("var", "grad_req", "fresh")
    op = None
    nout = 1
    freed = False

    def __init__(self, var, grad_req):
        self.var = var
        self.grad_req = grad_req
        self.fresh = False


def is_fresh(entry):
    """MXNet's ``_fresh_grad`` of an array with graph entry ``entry``: whether
    ``backward`` wrote its gradient since the flag was last cleared."""
    return entry is not None and getattr(entry[0], "fresh", False)


def set_fresh(entry, value):
    """Set the ``_fresh_grad`` flag of a marked variable's entry (others have none)."""
    if entry is not None and hasattr(entry[0], "fresh"):
        entry[0].fresh = bool(value)


def in_graph(x):
    """Whether NDArray ``x`` is in the recorded graph (a marked variable or the output of
    a recorded op): what an extension asks before it writes a node with :func:`record_node`."""
    return x._entry is not None


def record_node(op, p, inputs, outs, checks=None):
    """Write one node on the tape: ``outs`` (NDArrays) came from ``inputs`` by ``op``.

    The one writer of the tape, used by :func:`mxlite.operator.invoke` and by every
    extension as an adapter: ``autograd.Function``, ``CustomOp``, ``@customop`` and a
    hybridized graph's call. ``op`` is anything with a ``name``, ``saves`` (which of
    ``"xy"`` its gradient reads: those arrays are version-checked) and
    ``gradient(p, x, y, gy, need)`` (see :func:`node_backward`); ``p`` is handed
    back to that gradient. ``checks`` replaces the version checks ``saves`` asks for
    (a hybridized graph checks the arrays its steps read)."""
    saves = op.saves
    if checks is None:
        checks = []
    else:
        saves = ""
    parents = []
    need = []
    xdata = []
    if "x" in saves:
        for x in inputs:
            v = x._version
            if v is None:
                v = x._version = [0]
            checks.append((v, v[0], x))
    for x in inputs:
        # As MXNet: an array whose graph a backward has freed is a constant to new records.
        e = x._entry
        if e is not None and e[0].freed:
            e = None
        parents.append(e)
        need.append(e is not None)
        xdata.append(x._data)
    y0 = outs[0]
    if "y" in saves:
        for y in outs:
            v = y._version = [0]
            checks.append((v, 0, y))
    ydata = [y._data for y in outs] if len(outs) > 1 else [y0._data]
    node = Node(op, p, parents, need, xdata, ydata, inputs[0]._ctx, y0._ctx, checks)
    if len(outs) == 1:
        y0._entry = (node, 0)
    else:
        for i, y in enumerate(outs):
            y._entry = (node, i)
    return node


def mark_variables(variables, gradients, grad_reqs="write"):
    """Mark NDArrays as variables whose gradients ``backward`` writes into ``gradients``."""
    from ..nd.ndarray import NDArray
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not (len(variables) == len(gradients) == len(grad_reqs)):
        raise ValueError("mark_variables: got %d variables, %d gradients and %d grad_reqs; "
                         "expected equal lengths" % (len(variables), len(gradients), len(grad_reqs)))
    for v, g, req in zip(variables, gradients, grad_reqs):
        if req not in ("write", "add", "null"):
            raise ValueError("mark_variables: grad_req must be 'write', 'add' or 'null', got %r"
                             % (req,))
        if g.shape != v.shape:
            raise ValueError("mark_variables: gradient buffer has shape %s, expected %s"
                             % (g.shape, v.shape))
        v._grad = g
        v._entry = None if req == "null" else (VarNode(v, req), 0)


_nd = None


def _push(table, pending, entries, gs):
    """Add gradients ``gs`` to the graph ``entries`` ((node, output index), or None) in
    ``table``; a node's first gradient queues it: op nodes on the heap ``pending[0]``
    by decreasing ``seq``, variables last (``pending[1]``).

    NOTE: a function of its own, so that no local name of the backward loop keeps a
    gradient alive: one referenced only by the table can become its variable's
    ``.grad`` buffer without a copy (see :func:`_write_var_grad`)."""
    for entry, g in zip(entries, gs):
        if entry is None or g is None:
            continue
        node, index = entry
        gl = table.get(node)
        if gl is None:
            gl = table[node] = [None] * node.nout
            if node.op is None:
                pending[1].append(node)
            else:
                _heappush(pending[0], (-node.seq, node))
        if gl[index] is None:
            gl[index] = g
        else:
            gl[index] = later.value(gl[index]) + later.value(g)


def _nd_module():
    global _nd, _SOLE_OWNER
    if _nd is None:
        from .. import nd
        _nd = nd
        _SOLE_OWNER = _sole_owner_counts()
    return _nd


def _run_backward(heads, head_grads, retain_graph, create_graph, train_mode, variables=None,
                  unreachable_zeros=False):
    nd = _nd or _nd_module()
    NDArray = nd.NDArray
    heads = [heads] if isinstance(heads, NDArray) else list(heads)
    if head_grads is None:
        head_grads = [None] * len(heads)
    else:
        head_grads = [head_grads] if isinstance(head_grads, NDArray) else list(head_grads)
    if len(head_grads) != len(heads):
        raise ValueError("backward: got %d head gradients for %d heads"
                         % (len(head_grads), len(heads)))
    st = _state
    prev = (st.recording, st.training, st.raw, st.freeing)
    st.recording = create_graph
    st.training = train_mode
    st.raw = raw = not create_graph and RAW_RULES
    st.freeing = not retain_graph
    try:
        # Output gradients by node: raw arrays when the rules run on them (wrapped as
        # NDArrays only where they leave: .grad buffers, grad()'s results), else NDArrays.
        table = {}
        pending = ([], [])      # (heap of op nodes by decreasing seq, variable nodes)
        for h, g in zip(heads, head_grads):
            if not isinstance(h, NDArray):
                raise TypeError("backward: heads must be NDArrays, got %s" % type(h).__name__)
            if h._entry is None:
                raise MXNetError(
                    "backward: cannot differentiate an NDArray that is not in a recorded graph; "
                    "run the computation inside `with autograd.record():` and call "
                    "attach_grad() on the inputs you want gradients for")
            if g is not None and getattr(g, "_np", False):
                g = g.as_nd_ndarray()   # rules run on legacy arrays (same data and graph slot)
            if g is None and create_graph:
                # recorded: keeps higher derivatives in the graph
                g = nd.ones_like(h.as_nd_ndarray() if h._np else h)
            elif g is None:
                ctx = h._ctx
                # (empty + fill: what np.ones does, without its Python-level wrapper)
                g = (ctx.xp or ctx.array_module()).empty(h.shape, h._data.dtype)
                g.fill(1)
                if not raw:
                    g = nd.ndarray._wrap(g, ctx)
            elif not isinstance(g, NDArray):
                raise TypeError("backward: head gradients must be NDArrays, got %s"
                                % type(g).__name__)
            elif g.shape != h.shape:
                raise ValueError("backward: head gradient has shape %s, expected %s (the head's "
                                 "shape)" % (g.shape, h.shape))
            elif raw:
                g = g._data
            _push(table, pending, (h._entry,), (g,))
        wanted = None
        results = None
        if variables is not None:
            wanted = {}
            for k, v in enumerate(variables):
                if v._entry is None:
                    raise MXNetError("grad: variable %d is not part of the recorded graph; call "
                                     "attach_grad() on it before recording" % k)
                wanted.setdefault((id(v._entry[0]), v._entry[1]), []).append(k)
            results = [None] * len(variables)
        # Every consumer of a node was recorded after it, so by the time the heap
        # yields a node, all gradients flowing into it have arrived.
        heap, var_nodes = pending
        # unrecorded, into the variables' buffers: a rule may hand a variable's gradient
        # to a CPU worker and the walk go on (autograd.later)
        deferring = raw and wanted is None
        with later.walk() if deferring else _NO_WALK:
            while heap:
                node = _heappop(heap)[1]
                gl = table.pop(node)
                if wanted is not None:
                    _collect_wanted(wanted, results, node, gl, raw)
                later.allow(node.var_inputs if deferring else ())
                _push(table, pending, node.parents,
                      _node_gradient(node, gl, create_graph, retain_graph))
        # The variables' buffers are written last, when no rule can fail any more.
        for node in var_nodes:
            gl = table.pop(node)
            gl[0] = later.value(gl[0])
            if wanted is not None:
                _collect_wanted(wanted, results, node, gl, raw)
            else:
                if raw:
                    gl[0] = nd.ndarray._wrap(gl[0], node.var._ctx)
                _write_var_grad(node, gl[0])
        if results is not None:
            for k, r in enumerate(results):
                if r is None and unreachable_zeros:
                    results[k] = nd.zeros_like(variables[k])
                elif r is None:     # as MXNet: no gradient path is an error, not zeros
                    raise MXNetError("grad: cannot differentiate with respect to variable %d "
                                     "because it is unreachable from the heads (no recorded "
                                     "computation leads from it to them)" % k)
        return results
    finally:
        st.recording, st.training, st.raw, st.freeing = prev


def _collect_wanted(wanted, results, node, gl, raw):
    for i, g in enumerate(gl):
        for k in wanted.get((id(node), i), ()):
            if raw and g is not None:
                g = _nd.ndarray._wrap(g, node.var._ctx if node.op is None else node.yctx)
            results[k] = g


def _node_gradient(node, gl, create_graph, retain_graph):
    """The input gradients of a recorded ``node`` for its output gradients ``gl`` (None
    where none came): checks that the node can run, then :func:`node_backward` on raw
    arrays (``gl`` and the result raw too), or on NDArrays carrying the graph's entries
    when the backward is recorded."""
    op = node.op
    if node.freed:
        raise MXNetError(
            "backward: the graph through %s has already been freed by an earlier backward; "
            "pass retain_graph=True to the first backward to run backward on it again" % op.name)
    for vobj, version, arr in node.checks:
        if vobj[0] != version:
            raise MXNetError(
                "backward: an input or output of %s was changed in place after %s was recorded "
                "(version %d, now %d); its gradient would be wrong. Copy the array (x.copy()) "
                "before changing it, or change it outside the recorded computation"
                % (op.name, op.name, version, vobj[0]))
    need = node.need
    if create_graph or not RAW_RULES:
        _wrap = _nd.ndarray._wrap
        ctx = node.ctx
        xs = [_wrap(d, ctx) for d in node.xdata]
        for x, entry in zip(xs, node.parents):
            x._entry = entry
        ys = [_wrap(d, node.yctx) for d in node.ydata]
        if create_graph:
            for i, y in enumerate(ys):
                y._entry = (node, i)
        gxs = node_backward(op, node.p, xs, ys, gl, need, ctx)
    else:       # raw arrays in and out
        gxs = node_backward(op, node.p, node.xdata, node.ydata, gl, need, node.ctx)
    if not retain_graph:
        node.freed = True
        node.xdata = node.ydata = None
        node.checks = ()
        node.p = None       # what an op kept for its backward (a hybridized graph's tape)
    return gxs


def node_backward(op, p, x, y, gy, need, ctx, check=True):
    """The one place a gradient rule runs: ``op.gradient(p, x, y, gy, need)``.

    ``x``, ``y``, ``gy`` are raw arrays when the backward is not recorded and NDArrays
    (in the recorded graph) when it is; ``gy`` covers every output, hidden ones too,
    None where no gradient came. Rules on integer data get NDArrays wrapped on ``ctx``
    (zeros for the missing ``gy``) and give raw arrays back: Python's operators on raw
    arrays would follow NumPy there (``/`` is true division) instead of MXNet. Errors
    are named after the op; a needed gradient of the wrong shape is an error (``check``
    False skips that check, for a caller that has already seen the rule give the right
    shapes for these very input shapes; an op whose ``checks_shapes`` is true, a
    hybridized graph whose walk checks its steps, is not checked again; nor are the
    inputs of an op whose ``runs_steps`` is true wrapped: its walk runs each step's rule
    through this function, which wraps where that step's data asks). Returns one
    gradient per input (None where ``need`` is false or the input has none).
    """
    x0 = x[0]
    wrapped = entered = False
    # (the common case, an unrecorded backward on NumPy float arrays, skips all this)
    if not (type(x0) is _ndarray and _state.raw and x0.dtype.kind == "f"):
        nd = _nd or _nd_module()
        if type(x0) is not nd.NDArray:
            if x0.dtype.kind != "f" and not getattr(op, "runs_steps", False):
                _wrap = nd.ndarray._wrap
                y = [_wrap(a, ctx) for a in y]
                gy = [nd.zeros_like(b) if a is None else _wrap(a, ctx) for a, b in zip(gy, y)]
                x = [_wrap(a, ctx) for a in x]
                wrapped = True
            elif not _state.raw:
                _state.raw = entered = True     # called outside a backward: nd functions take raw arrays
    try:
        gx = op.gradient(p, x, y, gy, need)
    except MXNetError as e:
        if str(e).startswith(op.name):
            raise
        raise MXNetError("%s (backward): %s" % (op.name, e)) from e
    finally:
        if entered:
            _state.raw = False
    if check and not getattr(op, "checks_shapes", False):
        for i, gi in enumerate(gx):
            if gi is not None and need[i] and gi.shape != x[i].shape:
                raise MXNetError("%s (backward): gradient has shape %s, expected %s"
                                 % (op.name, gi.shape, x[i].shape))
    if wrapped:
        return [None if g is None else g._data for g in gx]
    return gx


def _write_var_grad(vnode, g, probe=False):
    var = vnode.var
    buf = var._grad
    if vnode.grad_req == "write":
        s, d = g._data, buf._data
        if probe:
            return _ref_counts(g, s, d)
        if (type(s) is _ndarray and type(d) is _ndarray and s.base is None
                and (s.dtype is d.dtype or s.dtype == d.dtype) and s.shape == d.shape
                and _writable_c(s.flags) and _ref_counts(g, s, d) == _SOLE_OWNER):
            # The fresh gradient is referenced by nothing but the backward pass (no
            # other variable, head or saved value shares it) and the old buffer by
            # nothing but ``.grad`` (no view of it exists): take the fresh array over
            # instead of copying it in. Nobody can tell the difference.
            buf._data = s
        else:
            d[...] = s
    else:
        buf._data += g._data.astype(buf._data.dtype, copy=False)
    if buf._version is not None:
        buf._version[0] += 1
    vnode.fresh = True


def _writable_c(flags):
    return flags.c_contiguous and flags.writeable


def _ref_counts(g, s, d):
    return _getrefcount(g), _getrefcount(s), _getrefcount(d)


def _sole_owner_counts():
    """The reference counts :func:`_write_var_grad` sees for a gradient held only by
    the backward pass and a buffer held only by its ``.grad`` NDArray, measured on the
    same call path (the numbers differ between Python versions)."""
    from ..nd.ndarray import _wrap
    from ..context import cpu
    var = _wrap(np.zeros(1, np.float32), cpu())
    var._grad = _wrap(np.zeros(1, np.float32), cpu())
    gl = [_wrap(np.zeros(1, np.float32), cpu())]
    return _write_var_grad(VarNode(var, "write"), gl[0], True)


_SOLE_OWNER = None          # set on first backward: adopt nothing until then


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):
    """Compute the gradients of ``heads`` and write them into the marked variables' ``.grad``.

    Parameters
    ----------
    heads : NDArray or list of NDArray
    head_grads : NDArray or list, optional
        Gradients with respect to the heads; ones where ``None``.
    retain_graph : bool
        Keep the graph so that backward can run on it again.
    train_mode : bool
        Whether the gradient computation runs in training mode.
    """
    _run_backward(heads, head_grads, retain_graph, False, train_mode)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """Gradients of ``heads`` with respect to ``variables``, returned as new NDArrays.

    ``.grad`` buffers are not touched. With ``create_graph=True`` the gradient
    computation is itself recorded, so the results can be differentiated again.

    Examples
    --------
    >>> x = mx.nd.array([1., 2.]); x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = (x ** 3).sum()
    ...     dx = mx.autograd.grad(y, [x], create_graph=True)[0]
    ...     z = dx.sum()
    >>> z.backward(); x.grad     # d/dx of 3x^2 is 6x
    [ 6. 12.]
    """
    from ..nd.ndarray import NDArray
    variables = [variables] if isinstance(variables, NDArray) else list(variables)
    if retain_graph is None:
        retain_graph = create_graph
    return _run_backward(heads, head_grads, retain_graph, create_graph, train_mode, variables)


def _grads_or_zeros(heads, variables, head_grads, train_mode):
    """:func:`grad` for mxlite's own gradient rules (a subgraph's backward): a variable
    that a branch not taken leaves unreached gets zeros."""
    return _run_backward(heads, head_grads, False, False, train_mode, list(variables),
                         unreachable_zeros=True)


def get_symbol(x):
    """The recorded computation of NDArray ``x`` as a Symbol (marked variables become
    its arguments).

    Examples
    --------
    >>> x = mx.nd.ones((1,)); x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = x * x + 1
    >>> mx.autograd.get_symbol(y).list_arguments()
    ['var0']
    """
    from ._symbol import graph_symbol
    return graph_symbol(x)


from .function import Function  # noqa: E402

# MXNet's autograd module has no __all__ and imports NDArray and Symbol, so
# ``from mxnet.autograd import *`` gives them too; they load on first use here.
__all__ += ["NDArray", "Symbol"]


# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "MXCallbackList": "mxlite.base",
    "NDArray": "mxlite.nd.ndarray",
    "Symbol": "mxlite.symbol.symbol",
    "c_array": "mxlite.base",
    "c_array_buf": "mxlite.base",
    "c_handle_array": "mxlite.base",
    "check_call": "mxlite.base",
    "string_types": "mxlite.base",
})
