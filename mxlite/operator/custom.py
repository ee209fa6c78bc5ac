"""Operators written in Python: ``CustomOp``, ``CustomOpProp``, ``register`` and ``mx.nd.Custom``.

As in MXNet 1.x, a custom op is two classes. The *Prop* describes the op (its
argument, output and auxiliary-state names, shape and dtype inference, which
blobs the backward pass reads) and creates the *operator*, whose ``forward`` and
``backward`` fill pre-allocated output and gradient NDArrays, usually through
``self.assign(dst, req, src)``::

    class Sigmoid(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            y = 1.0 / (1.0 + np.exp(-in_data[0].asnumpy()))
            self.assign(out_data[0], req[0], mx.nd.array(y))

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            y = out_data[0].asnumpy()
            self.assign(in_grad[0], req[0], mx.nd.array(out_grad[0].asnumpy() * y * (1 - y)))

    @mx.operator.register("sigmoid")
    class SigmoidProp(mx.operator.CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=True)
        def infer_shape(self, in_shapes):
            return (in_shapes[0],), (in_shapes[0],), ()
        def create_operator(self, ctx, in_shapes, in_dtypes):
            return Sigmoid()

    y = mx.nd.Custom(x, op_type="sigmoid")

Where mxlite differs from MXNet, it is to fail loudly instead of silently or
with a hang: a wrong-shaped ``assign``, an ``infer_shape`` that does not return
three lists of the right lengths, an unknown ``op_type`` or kwarg, and any
exception raised by the user's code all raise an error that names the op type
and the method; the op runs synchronously in the caller's thread (no engine
threads, so no deadlock and ``os.fork`` is safe); a failed ``forward`` leaves
the auxiliary states untouched (it runs on copies that are committed only on
success). Outputs are always zero-filled before ``forward``.
"""
import inspect
import sys

import numpy as np

from ..base import MXNetError, DTYPE_TO_FLAG, np_dtype, parse_str
from ..context import current_context, _state as _ctx_state
from ..autograd import in_graph, is_recording, is_training, record_node, set_recording
from ..nd.ndarray import NDArray, _wrap, _write_into
from .registry import Param, Params, context_of_raw, on_ndarrays, register_op

__all__ = ["CustomOp", "CustomOpProp", "register", "Custom", "make_params", "registered"]

_REQS = ("null", "write", "inplace", "add")
_PROP_CLASSES = {}      # op_type -> CustomOpProp subclass
_ENTRIES = {}           # (op_type, kwargs as strings) -> _PropEntry
_MAX_ENTRIES = 256
_MAX_PLANS = 64


# ----------------------------------------------------------------------------
# The user-facing base classes.

# sys.getrefcount(src) inside assign when src is an unnamed temporary: the
# parameter and getrefcount's own argument, plus the caller's stack slot before
# Python 3.11 (whose calls move arguments into the callee's frame).
_TEMPORARY_REFS = 2 if sys.version_info >= (3, 11) else 3


class CustomOp:
    """Base class of operators implemented in Python (``mx.operator.CustomOp``).

    Override ``forward`` and ``backward``; write results with :meth:`assign`.
    """

    def __init__(self):
        pass

    def forward(self, is_train, req, in_data, out_data, aux):
        """Compute ``out_data`` from ``in_data``.

        Parameters
        ----------
        is_train : bool
            Whether the call is for training (``autograd.is_training()``).
        req : list of str
            How to write each output: ``'null'``, ``'write'``, ``'inplace'`` or ``'add'``.
        in_data, out_data, aux : list of NDArray
            Inputs, pre-allocated (zero-filled) outputs, and auxiliary states
            that may be updated in place.
        """
        raise NotImplementedError("%s.forward is not implemented; override "
                                  "CustomOp.forward" % type(self).__name__)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        """Compute ``in_grad`` (written according to ``req``) from ``out_grad``.

        ``req[i]`` is ``'write'`` for inputs that need a gradient and ``'null'``
        for the others.
        """
        raise NotImplementedError("%s.backward is not implemented; override "
                                  "CustomOp.backward" % type(self).__name__)

    def assign(self, dst, req, src):
        """Write ``src`` into ``dst`` according to ``req``.

        Parameters
        ----------
        dst : NDArray
            An output or gradient buffer.
        req : {'null', 'write', 'inplace', 'add'}
        src : NDArray, numpy.ndarray or scalar
            Must have ``dst``'s shape (scalars are broadcast). Unlike MXNet,
            a mismatch raises an error naming the op type and the slot.
        """
        if req == "null":
            return
        if req not in _REQS:
            raise ValueError("CustomOp.assign: req must be one of %s, got %r"
                             % (", ".join(_REQS), req))
        if not isinstance(dst, NDArray):
            dst[:] = src        # not one of ours: do what MXNet does
            return
        d = dst._data
        if isinstance(src, NDArray):
            if src._ctx != dst._ctx:
                src = src.as_in_context(dst._ctx)
            s = src._data
        elif isinstance(src, (list, tuple)):
            s = np.asarray(src)
        else:
            s = src
        xp = dst._ctx.xp or dst._ctx.array_module()
        if xp is not np and isinstance(s, np.ndarray):
            s = xp.asarray(s)       # host values into a GPU array, as MXNet copies them
        shape = getattr(s, "shape", ())
        if shape != d.shape and shape != ():
            raise MXNetError(self._assign_error(dst, shape))
        if req == "add":
            xp.add(d, s, out=d, casting="unsafe")
        elif (s is not d and getattr(s, "dtype", None) == d.dtype and shape == d.shape
              and type(s) is type(d) and getattr(s, "base", 0) is None
              and sys.getrefcount(src) <= _TEMPORARY_REFS + (s is src)):
            # NOTE: src is a temporary (``assign(o, r, x.dot(w))`` or ``mx.nd.array(y)``)
            # that owns its buffer and that nothing else references: take the buffer
            # over instead of copying it.
            dst._data = s
        else:
            d[...] = s
        v = dst._version
        if v is not None:
            v[0] += 1

    def _assign_error(self, dst, shape):
        where = getattr(self, "_mx_where", None)
        slot = "dst"
        prefix = "CustomOp.assign: "
        if where is not None:
            op_type, method, slots = where
            prefix = "Custom op %r (%s): " % (op_type, method)
            for kind, arrays in slots:
                for i, a in enumerate(arrays):
                    if a is dst:
                        slot = "%s[%d]" % (kind, i)
        return ("%sassign to %s: the source has shape %s but %s has shape %s; they must match"
                % (prefix, slot, tuple(shape), slot, tuple(dst.shape)))


class CustomOpProp:
    """Base class of custom operator properties (``mx.operator.CustomOpProp``).

    Parameters
    ----------
    need_top_grad : bool
        Whether ``backward`` reads the output gradients. ``False`` makes the op a
        loss head: ``y.backward()`` needs no head gradient and ``out_grad`` holds ones.
    """

    def __init__(self, need_top_grad=True):
        self.need_top_grad_ = need_top_grad

    def need_top_grad(self):
        """Whether backward needs the gradient of the outputs."""
        return self.need_top_grad_

    def list_arguments(self):
        """Names of the inputs, in the order ``mx.nd.Custom`` takes them."""
        return ["data"]

    def list_outputs(self):
        """Names of the outputs."""
        return ["output"]

    def list_auxiliary_states(self):
        """Names of the auxiliary states (passed after the arguments)."""
        return []

    def infer_shape(self, in_shape):
        """Shapes: returns three lists ``(in_shapes, out_shapes, aux_shapes)``.

        The default gives every output the first input's shape.
        """
        return in_shape, [in_shape[0]] * len(self.list_outputs()), []

    def infer_type(self, in_type):
        """Dtypes: returns ``(in_types, out_types, aux_types)``.

        The default gives every argument, output and aux state the first input's dtype.
        """
        t = in_type[0]
        return ([t] * len(in_type), [t] * len(self.list_outputs()),
                [t] * len(self.list_auxiliary_states()))

    def infer_storage_type(self, in_stype):
        """Storage types: mxlite stores every array dense (``'default'``)."""
        for i, st in enumerate(in_stype):
            if st != "default":
                raise MXNetError("infer_storage_type: in_stype[%d] is %r; mxlite supports "
                                 "only dense ('default') storage" % (i, st))
        return (list(in_stype), ["default"] * len(self.list_outputs()),
                ["default"] * len(self.list_auxiliary_states()))

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """Ids of the blobs ``backward`` reads (``out_grad`` only with ``need_top_grad``)."""
        deps = []
        if self.need_top_grad_:
            deps.extend(out_grad)
        deps.extend(in_data)
        deps.extend(out_data)
        return deps

    def create_operator(self, ctx, in_shapes, in_dtypes):
        """A :class:`CustomOp` for inputs of these shapes and dtypes (MXNet type flags)."""
        return CustomOp()


def register(reg_name):
    """Class decorator: register a :class:`CustomOpProp` subclass as op type ``reg_name``.

    Examples
    --------
    >>> @mx.operator.register("sigmoid")
    ... class SigmoidProp(mx.operator.CustomOpProp):
    ...     ...
    >>> y = mx.nd.Custom(x, op_type="sigmoid")
    """
    if not isinstance(reg_name, str) or not reg_name:
        raise TypeError("register: the op type must be a non-empty string, got %r" % (reg_name,))

    def do_register(prop_cls):
        if not (isinstance(prop_cls, type) and issubclass(prop_cls, CustomOpProp)):
            raise TypeError("register(%r): expected a subclass of CustomOpProp, got %r"
                            % (reg_name, prop_cls))
        _PROP_CLASSES[reg_name] = prop_cls
        for key in [k for k in _ENTRIES if k[0] == reg_name]:
            del _ENTRIES[key]       # a re-registered op type must not reuse old Props
        return prop_cls
    return do_register


def registered():
    """Sorted names of the registered custom op types."""
    return sorted(_PROP_CLASSES)


# ----------------------------------------------------------------------------
# One Prop per (op_type, kwargs), one plan per input signature.

def _user_error(op_type, method, e):
    """The error raised for an exception escaping the user's ``method``."""
    if isinstance(e, MXNetError) and str(e).startswith("Custom op "):
        return e
    return MXNetError("Custom op %r (%s): %s: %s" % (op_type, method, type(e).__name__, e))


class _PropEntry:
    """A constructed Prop and what it declares, shared by every call with these kwargs."""
    __slots__ = ("op_type", "prop", "args", "outs", "auxs", "n_args", "n_in", "n_out",
                 "need_top_grad", "saves", "plans")

    def __init__(self, op_type, kwargs):
        cls = _PROP_CLASSES.get(op_type)
        if cls is None:
            raise MXNetError("Custom: op_type %r is not registered; registered custom ops: %s. "
                             "Register a CustomOpProp subclass with "
                             "@mx.operator.register(%r)" % (op_type, ", ".join(registered()),
                                                            op_type))
        try:
            inspect.signature(cls).bind(**kwargs)
        except TypeError as e:
            raise TypeError("Custom op %r: %s.__init__ does not accept the arguments %s (%s); "
                            "every keyword of mx.nd.Custom other than op_type goes to the Prop "
                            "constructor, as a string" % (op_type, cls.__name__,
                                                          sorted(kwargs), e)) from None
        except ValueError:      # no signature (builtins): let the call decide
            pass
        self.op_type = op_type
        self.prop = prop = self._call("__init__", cls, **kwargs)
        self.args = list(self._call("list_arguments", prop.list_arguments))
        self.outs = list(self._call("list_outputs", prop.list_outputs))
        self.auxs = list(self._call("list_auxiliary_states", prop.list_auxiliary_states))
        self.n_args, self.n_out = len(self.args), len(self.outs)
        self.n_in = self.n_args + len(self.auxs)
        self._dependencies()
        self.plans = {}

    def _call(self, method, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise _user_error(self.op_type, method, e) from e

    def _dependencies(self):
        n_out, n_args = self.n_out, self.n_args
        og = list(range(n_out))
        ind = list(range(n_out, n_out + n_args))
        outd = list(range(n_out + n_args, 2 * n_out + n_args))
        deps = set(self._call("declare_backward_dependency",
                              self.prop.declare_backward_dependency, og, ind, outd))
        self.need_top_grad = any(i in deps for i in og)
        self.saves = ("x" if any(i in deps for i in ind) else "") + \
                     ("y" if any(i in deps for i in outd) else "")

    def infer(self, method, values):
        """The Prop's ``method`` (``infer_shape``, ``infer_type``, ``infer_storage_type``) on
        the arguments' ``values``: (per input and aux state, per output), its form checked:
        two or three lists (the aux states' last) of the declared lengths."""
        res = self._call(method, getattr(self.prop, method), values)
        if not (isinstance(res, (list, tuple)) and len(res) in (2, 3)
                and all(isinstance(r, (list, tuple)) for r in res)):
            raise MXNetError(
                "Custom op %r (%s): must return two or three lists (inputs, outputs and, when "
                "the op has any, auxiliary states), got %r" % (self.op_type, method, res))
        res = list(res) + ([[]] if len(res) == 2 else [])
        for what, got, want in (("input", res[0], self.n_args), ("output", res[1], self.n_out),
                                ("auxiliary state", res[2], len(self.auxs))):
            if len(got) != want:
                raise MXNetError("Custom op %r (%s): returned %d %s entries, expected %d"
                                 % (self.op_type, method, len(got), what, want))
        return list(res[0]) + list(res[2]), list(res[1])

    def plan(self, ctx, inputs):
        """The :class:`_Plan` for NDArray ``inputs`` on ``ctx`` (by their shapes and dtypes)."""
        sig = (ctx,) + tuple([(x._data.shape, x._data.dtype) for x in inputs])
        plan = self.plans.get(sig)
        if plan is None:
            if len(self.plans) >= _MAX_PLANS:
                self.plans.clear()
            plan = self.plans[sig] = _Plan(self, ctx, inputs)
        return plan

    def check_inputs(self, inputs):
        if len(inputs) != self.n_in:
            names = self.args + self.auxs
            raise TypeError("Custom op %r takes %d input(s) (%s), got %d"
                            % (self.op_type, self.n_in, ", ".join(names), len(inputs)))


class _Plan:
    """Inferred output shapes/dtypes and a pool of operator instances for one signature."""
    __slots__ = ("entry", "ctx", "outs", "in_shapes", "in_flags", "pool", "node_op")

    def __init__(self, entry, ctx, inputs):
        self.entry = entry
        self.ctx = ctx
        shapes = [tuple(x.shape) for x in inputs]
        dtypes = [x._data.dtype for x in inputs]
        self._check_stypes(entry)
        out_shapes = self._infer_shapes(entry, shapes)
        out_dtypes = self._infer_types(entry, dtypes)
        self.outs = list(zip(out_shapes, out_dtypes))
        self.in_shapes = [list(s) for s in shapes]
        self.in_flags = [DTYPE_TO_FLAG[dt] for dt in dtypes]
        self.pool = []
        self.node_op = _NodeOp(entry, self)

    def _infer_shapes(self, entry, shapes):
        ins, outs = entry.infer("infer_shape", [list(s) for s in shapes[:entry.n_args]])
        names = entry.args + entry.auxs
        for i, (got, real) in enumerate(zip(ins, shapes)):
            if _as_shape(entry, got) != real:
                raise MXNetError("Custom op %r (infer_shape): returned shape %s for input %r, "
                                 "but the array given has shape %s"
                                 % (entry.op_type, tuple(got), names[i], real))
        return [_as_shape(entry, s) for s in outs]

    def _infer_types(self, entry, dtypes):
        ins, outs = entry.infer("infer_type", [dt.type for dt in dtypes[:entry.n_args]])
        for i, (got, real) in enumerate(zip(ins[:entry.n_args], dtypes)):
            if np_dtype(got, "Custom op %r (infer_type)" % entry.op_type) != real:
                raise MXNetError("Custom op %r (infer_type): returned dtype %s for input %r, "
                                 "but the array given has dtype %s"
                                 % (entry.op_type, np.dtype(got).name, entry.args[i], real.name))
        return [np_dtype(t, "Custom op %r (infer_type)" % entry.op_type) for t in outs]

    @staticmethod
    def _check_stypes(entry):
        ins, outs = entry.infer("infer_storage_type", ["default"] * entry.n_args)
        for st in ins + outs:
            if st != "default":
                raise MXNetError("Custom op %r (infer_storage_type): storage type %r is not "
                                 "supported; mxlite stores every array dense ('default')"
                                 % (entry.op_type, st))

    def take(self):
        """An operator instance no pending backward holds (created when none is free)."""
        try:
            return self.pool.pop()
        except IndexError:
            pass
        entry = self.entry
        op = entry._call("create_operator", entry.prop.create_operator, self.ctx,
                         [list(s) for s in self.in_shapes], list(self.in_flags))
        if not callable(getattr(op, "forward", None)):
            raise MXNetError("Custom op %r (create_operator): must return a CustomOp, got %r"
                             % (entry.op_type, op))
        return op

    def give_back(self, op):
        if not self.pool:
            self.pool.append(op)


def _as_shape(entry, s):
    try:
        return tuple(int(d) for d in s)
    except (TypeError, ValueError):
        raise MXNetError("Custom op %r (infer_shape): %r is not a shape (a list of ints)"
                         % (entry.op_type, s)) from None


# ----------------------------------------------------------------------------
# Running an op.

def _run_user(op, entry, method, slots, kwargs, ctx):
    """Call ``op.forward``/``op.backward`` inside ``with ctx:`` and with recording
    paused, as MXNet does; errors name the op type and the method."""
    rec = set_recording(False)
    op._mx_where = (entry.op_type, method, slots)
    ctx_prev = _ctx_state.ctx
    _ctx_state.ctx = ctx
    try:
        getattr(op, method)(**kwargs)
    except Exception as e:
        raise _user_error(entry.op_type, method, e) from e
    finally:
        set_recording(rec)
        _ctx_state.ctx = ctx_prev
        op._mx_where = None     # the slots hold the call's buffers: let them go


def _buffers(xp, ctx, shapes_dtypes):
    """Uninitialised output/gradient buffers (the op must write them, as in MXNet),
    with version counters that tell whether it did."""
    out = []
    for shape, dtype in shapes_dtypes:
        a = _wrap(xp.empty(shape, dtype), ctx)
        a._version = [0]
        out.append(a)
    return out


def _check_written(entry, method, slot, arrays, reqs):
    """Raise for a buffer with req 'write' that ``method`` never wrote: MXNet returns
    whatever memory held (a silent wrong result)."""
    for i, (a, r) in enumerate(zip(arrays, reqs)):
        if r == "write" and a._version[0] == 0:
            raise MXNetError("Custom op %r (%s): %s[%d] was never written although its req is "
                             "'write'; call self.assign(%s[%d], req[%d], value)"
                             % (entry.op_type, method, slot, i, slot, i, i))


def _forward(plan, inputs, keep=False):
    """Run the forward of an operator instance from ``plan``'s pool; returns the output
    NDArrays and the instance, which goes back to the pool unless ``keep`` (the backward
    of a recorded call runs on it). Aux states are committed only when forward succeeds."""
    entry = plan.entry
    ctx = plan.ctx
    op = plan.take()
    aux = inputs[entry.n_args:]
    try:
        outs = _buffers(ctx.xp or ctx.array_module(), ctx, plan.outs)
        # NOTE: forward writes into copies of the aux states, so that a forward that
        # raises half-way cannot leave them half-updated.
        aux_tmp = [_wrap(a._data.copy(), ctx) for a in aux] if aux else []
        _run_user(op, entry, "forward", (("out_data", outs), ("aux", aux_tmp)),
                  {"is_train": is_training(), "req": ["write"] * entry.n_out,
                   "in_data": list(inputs[:entry.n_args]), "out_data": outs, "aux": aux_tmp},
                  ctx)
        _check_written(entry, "forward", "out_data", outs, ["write"] * entry.n_out)
    except BaseException:
        plan.give_back(op)
        raise
    if not keep:
        plan.give_back(op)
    for a, t in zip(aux, aux_tmp):
        a._data[...] = t._data
        a._bump()
    return outs, op


class _Call:
    """What one recorded call keeps for its backward: the operator instance and aux states."""
    __slots__ = ("op", "aux")

    def __init__(self, op, aux):
        self.op = op
        self.aux = aux


class _NodeOp:
    """The op-like object a recorded Custom call leaves in the autograd graph."""
    __slots__ = ("name", "saves", "plan")

    def __init__(self, entry, plan):
        self.name = "Custom op %r" % entry.op_type
        self.saves = entry.saves
        self.plan = plan

    @on_ndarrays
    def gradient(self, call, x, y, gy, need):
        plan = self.plan
        entry = plan.entry
        ctx = x[0]._ctx
        xp = ctx.xp or ctx.array_module()
        req = ["write" if want else "null" for want in need]
        in_grad = _buffers(xp, ctx, [(xi._data.shape, xi._data.dtype) for xi in x])
        if not entry.need_top_grad:
            gy = [_wrap(xp.ones(yi._data.shape, yi._data.dtype), ctx) for yi in y]
        _run_user(call.op, entry, "backward", (("in_grad", in_grad),),
                  {"req": req, "out_grad": gy, "in_data": x, "out_data": y,
                   "in_grad": in_grad, "aux": call.aux}, ctx)
        _check_written(entry, "backward", "in_grad", in_grad, req)
        # NOTE: with retain_graph a second backward reuses this instance, which a
        # later forward may meanwhile have taken from the pool.
        plan.give_back(call.op)
        return [g if r == "write" else None for g, r in zip(in_grad, req)]


def _entry_for(op_type, kwargs):
    key = (op_type, tuple(kwargs.items()))
    entry = _ENTRIES.get(key)
    if entry is None:
        if len(_ENTRIES) >= _MAX_ENTRIES:
            _ENTRIES.clear()
        entry = _ENTRIES[key] = _PropEntry(op_type, kwargs)
    return entry


def _split_kwargs(kwargs):
    """Prop kwargs as strings (``str(v)``, as MXNet passes them), and NDArray inputs by name."""
    skw = {}
    named = None
    for k, v in kwargs.items():
        if type(v) is str:
            skw[k] = v
        elif isinstance(v, NDArray):
            named = named or {}
            named[k] = v
        else:
            skw[k] = str(v)
    return skw, named


def _order_named(entry, inputs, named):
    names = entry.args + entry.auxs
    unknown = [k for k in named if k not in names]
    if unknown:
        raise TypeError("Custom op %r: %r is not an input; inputs are %s"
                        % (entry.op_type, unknown[0], ", ".join(names)))
    inputs = list(inputs)
    for n in names[len(inputs):]:
        if n not in named:
            raise TypeError("Custom op %r: missing input %r (inputs: %s)"
                            % (entry.op_type, n, ", ".join(names)))
        inputs.append(named.pop(n))
    if named:
        raise TypeError("Custom op %r: input %r given twice" % (entry.op_type, next(iter(named))))
    return inputs


def Custom(*inputs, op_type=None, name=None, out=None, **kwargs):
    """Run the custom operator registered as ``op_type`` (``mx.nd.Custom``).

    Parameters
    ----------
    *inputs : NDArray
        The arguments in the order of the Prop's ``list_arguments``, then its
        auxiliary states (``list_auxiliary_states``).
    op_type : str
        The name given to :func:`register`.
    name : str, optional
        Ignored by ``mx.nd`` (symbols use it).
    out : NDArray or list of NDArray, optional
        Where to write the outputs.
    **kwargs
        Passed to the Prop's constructor as strings (``str(v)``: ``"0.1"``,
        ``"(7, 7)"``, ``"True"``), as MXNet does.

    Returns
    -------
    NDArray, or a list of NDArray when the op has several outputs.

    Examples
    --------
    >>> x = mx.nd.array([0.0, 1.0]); x.attach_grad()
    >>> with mx.autograd.record():
    ...     y = mx.nd.Custom(x, op_type="sigmoid")
    >>> y.backward()
    """
    if op_type is None:
        raise TypeError("Custom: op_type is required (the name given to mx.operator.register)")
    skw, named = _split_kwargs(kwargs) if kwargs else ({}, None)
    entry = _entry_for(op_type, skw)
    if named:
        inputs = _order_named(entry, inputs, named)
    if len(inputs) != entry.n_in or not inputs:
        entry.check_inputs(inputs)
        raise TypeError("Custom op %r: at least one input is needed (it gives the context)"
                        % op_type)
    for i, x in enumerate(inputs):
        if not isinstance(x, NDArray):
            raise TypeError("Custom op %r: input %d must be an NDArray, got %s"
                            % (op_type, i, type(x).__name__))
    ctx = inputs[0]._ctx
    plan = entry.plan(ctx, inputs)
    args = inputs[:entry.n_args]
    record = is_recording() and any(in_graph(x) for x in args)
    outs, op = _forward(plan, inputs, keep=record)
    if record:
        record_node(plan.node_op, _Call(op, list(inputs[entry.n_args:])), list(args), outs)
    if out is not None:
        for o, y in zip([out] if isinstance(out, NDArray) else out, outs):
            _write_into(o, y)
        return out
    return outs[0] if entry.n_out == 1 else outs


# ----------------------------------------------------------------------------
# The registry entry, for the symbol API and graph executors.

def make_params(op_type, **kwargs):
    """:class:`Params` of a "Custom" call, for :func:`mxlite.operator.invoke` and graphs
    (the registry's parser cannot know a Prop's kwargs)."""
    skw, named = _split_kwargs(kwargs)
    if named:
        raise TypeError("make_params: inputs are not params: %s" % ", ".join(named))
    values = {"op_type": op_type}
    values.update(skw)
    p = Params(_OP, values)
    _entry_of(p)     # the op type must be registered and its Prop take these kwargs
    return p


def _entry_of(p):
    return _entry_for(p.op_type, {k: v for k, v in p.items() if k != "op_type"})


def _compute(p, xp, *data):
    entry = _entry_of(p)
    ctx = current_context()
    if data and (ctx.device_typeid == 2) != (not isinstance(data[0], np.ndarray)):
        ctx = context_of_raw(data[0])   # the inputs' device, not the default one
    inputs = [_wrap(d, ctx) for d in data]
    outs = _forward(entry.plan(ctx, inputs), inputs)[0]
    return tuple(y._data for y in outs) if len(outs) > 1 else outs[0]._data


def _gradient(p, x, y, gy, need):
    # NOTE: graph executors keep no per-call state, so backward runs on a pooled
    # instance: this suits ops that do not carry state from forward on ``self``.
    entry = _entry_of(p)
    ctx = x[0]._ctx
    plan = entry.plan(ctx, x)
    op = plan.take()
    return plan.node_op.gradient(_Call(op, list(x[entry.n_args:])), x[:entry.n_args], y,
                                 gy, need[:entry.n_args]) + [None] * len(entry.auxs)


def _infer_shape(p, shapes):
    entry = _entry_of(p)
    args = shapes[:entry.n_args]
    if args and args[0] is None:
        return shapes
    # As in MXNet, unknown input shapes (a label, say) reach the Prop as [] so that
    # it can fill them in from the data; a Prop that cannot leaves them unknown.
    try:
        ins, outs = entry.infer("infer_shape", [list(s) if s is not None else [] for s in args])
    except MXNetError:
        if any(s is None for s in args):
            return shapes
        raise
    return [_as_shape(entry, s) for s in ins], [_as_shape(entry, s) for s in outs]


def _infer_type(p, dtypes):
    entry = _entry_of(p)
    outs = entry.infer("infer_type", [np.dtype(d).type for d in dtypes[:entry.n_args]])[1]
    return [np_dtype(t) for t in outs]


_OP = register_op(
    "Custom", _compute,
    inputs=lambda p: (lambda e: e.args + e.auxs)(_entry_of(p)),
    params=[Param("op_type", parse_str, doc="The name the op's Prop was registered under.")],
    gradient=on_ndarrays(_gradient),
    num_outputs=lambda p: _entry_of(p).n_out,
    infer_shape=_infer_shape,
    infer_type=_infer_type,
    saves="xy",
    parse=lambda kwargs: make_params(**kwargs),
    doc="Apply a custom operator implemented in Python (see mx.operator.CustomOpProp).")


def _expose():
    # After register_op the nd listener has added a generic mx.nd.Custom, which
    # cannot pass arbitrary kwargs to the Prop: replace it with ours.
    from .. import nd
    Custom.__module__ = "mxlite.nd"
    nd.Custom = Custom
    nd._internal.Custom = Custom


_expose()
register("custom_op")(CustomOpProp)
