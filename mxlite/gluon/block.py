"""Gluon Blocks: :class:`Block` and :class:`HybridBlock` (:class:`SymbolBlock` is in
``symbol_block.py``, deferred shapes in ``deferred_init.py``).

A Block owns a :class:`~mxlite.gluon.ParameterDict` whose names carry the
Block's prefix (``dense0_weight``); children and parameters assigned as attributes
are registered, and ``name_scope()`` nests the prefixes of the children created
inside it (``hybridsequential0_dense0_weight``) with one counter per scope, as in
MXNet. ``save_parameters`` writes MXNet's ``.params`` format with structural names
(``0.weight``, ``0.1.bias``).

``HybridBlock.hybrid_forward(F, x, *args, **params)`` runs with ``F = mx.nd``.
Parameters whose shape has unknown (0) dimensions are created during the first
forward pass (``deferred_init.py``).
"""
import contextlib
import re
import threading
import warnings
from collections import OrderedDict

from .. import initializer, nd
from ..context import _state as _ctx_state
from ..nd.ndarray import NDArray
from ..util import _state as _np_state
from .np_face import face_of, check_outputs, check_inputs, np_symbol, _retype_np, NP_NDARRAY
from . import batch_rows
from .cached_graph import CachedGraph, flatten, regroup, check_structure
from .deferred_init import _DeferredF, first_forward_params
from .parameter import Parameter, ParameterDict, DeferredInitializationError, load_checked
from .utils import _indent, HookHandle, shape_is_known

__all__ = ["Block", "HybridBlock", "SymbolBlock"]


# ----------------------------------------------------------------------------
# Naming

class _Counters(threading.local):
    """Per-thread counter of top-level block names (``dense0``, ``dense1``...)."""

    def __init__(self):
        self.counter = {}


_top_level = _Counters()


def _top_level_name(hint):
    count = _top_level.counter.get(hint, 0)
    _top_level.counter[hint] = count + 1
    return "%s%d" % (hint, count)


class _BlockScope:
    """The scope of ``with block.name_scope():``; counts child names per hint."""
    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """The prefix and ParameterDict of a new Block named after ``hint``."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = _top_level_name(hint) + "_"
            if params is None:
                params = ParameterDict(prefix)
            else:
                params = ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = "%s%d_" % (hint, count)
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        return self

    def __exit__(self, *exc):
        if self._block._empty_prefix:
            return
        _BlockScope._current.value = self._old_scope


# ----------------------------------------------------------------------------
# Block

class Block:
    """Base class of every layer and model: subclass it and define ``forward``.

    Children (Blocks) and Parameters assigned as attributes are registered;
    :meth:`collect_params` gathers the parameters of the whole tree.

    Parameters
    ----------
    prefix : str, optional
        Prefix of this block's name and parameter names; ``<classname><n>_`` by default.
    params : ParameterDict, optional
        Parameters to share: ``Dense(20, params=dense0.collect_params())``.

    Examples
    --------
    >>> class Model(mx.gluon.Block):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         with self.name_scope():
    ...             self.dense0 = mx.gluon.nn.Dense(20)
    ...     def forward(self, x):
    ...         return self.dense0(x)
    """

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix.removesuffix("_")
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        modstr = "\n".join("  ({key}): {block}".format(key=key, block=_indent(repr(block), 2))
                           for key, block in self.__dict__.items() if isinstance(block, Block))
        return "{name}(\n{modstr}\n)".format(name=self.__class__.__name__, modstr=modstr)

    def __setattr__(self, name, value):
        """Register Blocks as children and Parameters as this block's parameters."""
        if "_children" not in self.__dict__ and isinstance(value, (Block, Parameter)):
            raise AttributeError(
                "%s: cannot assign the %s %r before Block.__init__() has run; call "
                "super().__init__() at the start of __init__" % (
                    type(self).__name__, type(value).__name__, name))
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError("Changing attribute type for {name} from {type1} to {type2} "
                                "is not allowed.".format(name=name, type1=type(existing),
                                                         type2=type(value)))
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise ValueError("Overriding Parameter attribute %s is not allowed. If you want "
                                 "to share parameters between blocks, please set 'params' at "
                                 "Block construction instead." % name)
            self._reg_params[name] = value
        super().__setattr__(name, value)

    def _check_container_with_block(self):
        children = {id(c) for c in self._children.values()}

        def unregistered(data):
            if isinstance(data, (list, tuple)):
                return any(unregistered(x) for x in data)
            if isinstance(data, dict):
                return any(unregistered(x) for x in data.values())
            return isinstance(data, Block) and id(data) not in children

        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or k == "_children") \
                    and unregistered(v):
                warnings.warn('"{name}" is an unregistered container with Blocks. Note that '
                              'Blocks inside the list, tuple or dict will not be registered '
                              'automatically. Make sure to register them using '
                              'register_child() or switching to nn.Sequential/'
                              'nn.HybridSequential instead. '
                              .format(name=self.__class__.__name__ + "." + k), stacklevel=3)

    def _alias(self):
        return self.__class__.__name__.lower()

    @property
    def prefix(self):
        """Prefix of this block (``'dense0_'``)."""
        return self._prefix

    @property
    def name(self):
        """Name of this block, its prefix without the trailing ``'_'``."""
        return self._name

    def name_scope(self):
        """Scope in which created child blocks get this block's prefix::

            with self.name_scope():
                self.dense = nn.Dense(20)
        """
        return self._scope

    @property
    def params(self):
        """This block's own ParameterDict (children's parameters not included)."""
        return self._params

    def collect_params(self, select=None):
        """A ParameterDict of the parameters of this block and all its children.

        Parameters
        ----------
        select : str, optional
            A regular expression; only names it matches (``re.match``) are kept,
            e.g. ``'.*weight|.*bias'``.
        """
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({name: value for name, value in self.params.items()
                        if pattern.match(name)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=""):
        """Parameters by structural name: ``'0.weight'``, ``'0.1.bias'``."""
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    # -- saving and loading -----------------------------------------------------------
    def save_parameters(self, filename, deduplicate=False):
        """Save the parameters in MXNet's ``.params`` format, by structural name.

        Parameters
        ----------
        filename : str
        deduplicate : bool, default False
            Save a parameter shared by several blocks once (under its last name).
        """
        params = self._collect_params_with_prefix()
        if deduplicate:
            reverse = {id(v): (k, v) for k, v in params.items()}
            params = dict(reverse.values())
        nd.save(filename, {key: val._reduce() for key, val in params.items()})

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Load parameters saved by :meth:`save_parameters` (here or in MXNet).

        Nothing changes unless everything matches: otherwise one error lists the
        missing and unexpected names and the shape and dtype mismatches.

        Parameters
        ----------
        filename : str
        ctx : Context or list of Context, optional
            Where to create parameters that are not initialised yet (cpu by default).
        allow_missing : bool, default False
            Skip parameters the file does not have.
        ignore_extra : bool, default False
            Ignore names in the file that the block does not have.
        cast_dtype : bool, default False
            Cast values whose dtype differs instead of failing.
        dtype_source : {'current', 'saved'}, default 'current'
            With ``cast_dtype``, which dtype wins.
        """
        loaded = nd.io._load_either(filename)
        if not isinstance(loaded, dict):
            raise ValueError("load_parameters: file '%s' holds a list of %d arrays without "
                             "names, not saved parameters" % (filename, len(loaded)))
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded):
            # A file from ParameterDict.save / the old save_params: full names.
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        load_checked(params, loaded, "file '%s'" % filename, ctx, allow_missing, ignore_extra,
                     cast_dtype, dtype_source)

    def save_params(self, filename):
        """[Deprecated] Save with full parameter names; use :meth:`save_parameters`."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you "
                      "want load from SymbolBlock later, please use export instead.",
                      DeprecationWarning, stacklevel=2)
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """[Deprecated] Use :meth:`load_parameters`."""
        warnings.warn("load_params is deprecated. Please use load_parameters.",
                      DeprecationWarning, stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    # -- structure ----------------------------------------------------------------
    def register_child(self, block, name=None):
        """Register ``block`` as a child (attribute assignment does this)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """Call ``hook(block, inputs)`` before each forward; returns a :class:`HookHandle`."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """Call ``hook(block, inputs, outputs)`` after each forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Call ``fn(block)`` on every child (recursively), then on this block; returns self."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialise the parameters of this block and its children
        (``collect_params().initialize(...)``)."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def zero_grad(self):
        """Set the gradients of every parameter to 0."""
        self.collect_params().zero_grad()

    def reset_ctx(self, ctx):
        """Move every parameter to ``ctx``."""
        self.collect_params().reset_ctx(ctx)

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlock children (a plain Block itself stays imperative)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype):
        """Cast the parameters of this block and its children to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for param in self.params.values():
            param.cast(dtype)

    # -- running ------------------------------------------------------------------
    def __call__(self, *args):
        """Run ``forward`` with the hooks. Only positional arguments."""
        if not (self._forward_pre_hooks or self._forward_hooks):
            out = self.forward(*args)
        else:
            for hook in self._forward_pre_hooks.values():
                hook(self, args)
            out = self.forward(*args)
            for hook in self._forward_hooks.values():
                hook(self, args, out)
        if _np_state.array and type(out) is not NP_NDARRAY:
            check_outputs(self, out)
        return out

    def forward(self, *args):
        """The computation on NDArrays; override it."""
        raise NotImplementedError("%s must define forward()" % type(self).__name__)

    def register_op_hook(self, callback, monitor_all=False):
        """Install an op monitor on the HybridBlock children (see HybridBlock's)."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def summary(self, *inputs):
        """Print each layer's output shape and parameter count for one forward on ``inputs``.

        The block must be initialised. A hybridized block prints the same table:
        the summary's forward runs imperatively (forward hooks do not fire inside a
        cached graph) and hybridization is restored afterwards, even on error.
        (MXNet 1.9 refuses hybridized blocks with an AssertionError instead.)
        """
        from .summary import summarize
        summarize(self, inputs)


# ----------------------------------------------------------------------------
# HybridBlock

def _input_kinds(args):
    """For (nested) ``args``: the context of the first NDArray (None without one),
    whether a Symbol is among them, and the set of the arrays' contexts."""
    first = args[0]
    if isinstance(first, NDArray):     # the common call: NDArrays on one context
        ctx = first._ctx
        for a in args:
            if not isinstance(a, NDArray) or a._ctx is not ctx:
                break
        else:
            return ctx, False, {ctx}
    from ..symbol import Symbol
    first, has_sym, ctxs = None, False, set()
    stack = list(reversed(args))
    while stack:
        a = stack.pop()
        if isinstance(a, NDArray):
            first = a.context if first is None else first
            ctxs.add(a.context)
        elif isinstance(a, Symbol):
            has_sym = True
        elif isinstance(a, (list, tuple)):
            stack.extend(reversed(a))
    return first, has_sym, ctxs


def _trace_failure(e):
    """``'<Error>: message (at file:line: code)'``: why a trace failed and the innermost
    line outside mxlite that led there."""
    import os
    import traceback
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    where = None
    for frame in traceback.extract_tb(e.__traceback__):
        if not os.path.abspath(frame.filename).startswith(here):
            where = frame
    text = "%s: %s" % (type(e).__name__, e)
    if where is not None:
        text += " (at %s:%d: %s)" % (where.filename, where.lineno, (where.line or "").strip())
    return text


class HybridBlock(Block):
    """A Block whose computation is ``hybrid_forward(F, x, *args, **params)``.

    ``F`` is ``mx.nd`` and ``params`` holds this block's registered parameters
    as arrays on the input's context. Parameters with unknown dimensions are
    created during the first call. After ``hybridize()`` the computation is traced
    into a graph and replayed (``cached_graph.py``).

    Examples
    --------
    >>> class Model(mx.gluon.HybridBlock):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         with self.name_scope():
    ...             self.dense0 = mx.gluon.nn.Dense(20)
    ...     def hybrid_forward(self, F, x):
    ...         return F.relu(self.dense0(x))
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._cached_op = None
        self._out_format = None
        self._in_format = None
        self._active = False
        self._flags = []
        self._callback = None
        self._monitor_all = False
        self._backend = None
        self._backend_opts = {}
        self._trace_failed = False
        self._all_ready = False
        self._on_ctx = None     # see _params_on

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def _clear_cached_op(self):
        self._cached_graph = ()
        self._cached_op = None
        self._trace_failed = False
        self._all_ready = False

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError(
                "Children of HybridBlock must also be HybridBlock, but %s has type %s. If you "
                "are using Sequential, please try HybridSequential instead."
                % (str(block), str(type(block))))
        super().register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active=True, backend=None, clear=True, static_alloc=False,
                  static_shape=False, inline_limit=2, forward_bulk_size=None,
                  backward_bulk_size=None, **kwargs):
        """Trace ``hybrid_forward`` into a graph at the next call and replay it after.

        The graph is traced once per input structure with ``F = mx.sym`` and replayed
        through the same operators (identical results and gradients, less Python
        work per call). A block that cannot be traced (it reads ``x.shape`` or calls
        ``asnumpy()``) warns once and keeps running imperatively.
        """
        if kwargs:
            self._backend_opts = kwargs
        self._backend = backend
        self._active = active
        self._flags = [("static_alloc", static_alloc), ("static_shape", static_shape),
                       ("inline_limit", inline_limit)]
        if forward_bulk_size is not None:
            self._flags.append(("forward_bulk_size", forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(("backward_bulk_size", backward_bulk_size))
        if clear:
            self._clear_cached_op()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn('"{block}" is being hybridized while still having forward hook/'
                          'pre-hook. If "{block}" is a child of HybridBlock, the hooks will not '
                          'take effect.'.format(block=self))
        super().hybridize(active, static_alloc=static_alloc, static_shape=static_shape,
                          inline_limit=inline_limit, forward_bulk_size=forward_bulk_size,
                          backward_bulk_size=backward_bulk_size, **kwargs)

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)

    def register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(name, op_name, array)`` for the output of every op the
        hybridized graph runs (``b"dense0_fwd_output"``, ``b"FullyConnected"``: bytes,
        as MXNet's C strings, for ``py_str``) and, with ``monitor_all``, for its inputs
        first (``b"dense0_fwd_data"``, ``b"relu0_fwd_input0"`` for an op that MXNet
        registers without input names); the graph then runs op by op. NOTE: ``array``
        is the NDArray, where MXNet passes its handle. As in MXNet, a first call infers deferred parameter shapes from the traced
        graph while a hook is set (without one it runs imperatively, creating them)."""
        self._callback = callback
        self._monitor_all = monitor_all
        for child in self._children.values():
            child._callback = callback
            child._monitor_all = monitor_all

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.json`` and ``path-%04d.params`` (``arg:``/``aux:`` keys),
        the files ``SymbolBlock.imports`` and MXNet load.

        The block must be hybridized and have run forward at least once.
        """
        if self._trace_failed:
            raise RuntimeError(
                "export: %s could not be traced into a graph (%s). Export needs a "
                "hybrid_forward that uses only F.* operators on its inputs: no NumPy "
                "conversion (asnumpy, asscalar), no Python branching on array values, no "
                "NDArray-only methods" % (type(self).__name__, self._trace_failed))
        if not self._cached_graph:
            raise RuntimeError(
                "Please first call block.hybridize() and then run forward with this block at "
                "least once before calling export.")
        from .. import nd
        sym = self._cached_graph[-1][1].symbol
        sym.save("%s-symbol.json" % path)
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arg_dict = {}
        for name, param in self.collect_params().items():
            if name in arg_names:
                arg_dict["arg:%s" % name] = param._reduce()
            elif name in aux_names:
                arg_dict["aux:%s" % name] = param._reduce()
        nd.save("%s-%04d.params" % (path, epoch), arg_dict)
        return "%s-symbol.json" % path, "%s-%04d.params" % (path, epoch)

    def _graph_for(self, fmt, n_inputs, nones=()):
        """The cached graph for an input structure, tracing it on first use. ``nones``
        marks the flattened inputs that are None: they stay None in the trace.

        Returns None when the block cannot be traced (after warning once).
        """
        key = (fmt, tuple(nones))
        for k, graph in self._cached_graph:
            if k == key:
                return graph
        if self._trace_failed:
            return None
        if self._cached_graph:
            check_structure(self._cached_graph[0][0], key)
        from .. import symbol
        n_arrays = n_inputs - sum(nones)
        names = ["data"] if n_arrays == 1 else ["data%d" % i for i in range(n_arrays)]
        it = iter([np_symbol(symbol.var(n)) for n in names])
        inputs = [None if none else next(it) for none in (nones or [False] * n_inputs)]
        grouped, _ = regroup(inputs, fmt)
        try:
            out = self._symbol_forward(*grouped)
            outs, out_fmt = flatten(out if isinstance(out, (list, tuple)) else [out])
            if _np_state.array:
                check_outputs(self, outs)
            sym = symbol.Group(outs)
            params = {p.name: p for p in self.collect_params().values()}
            graph = CachedGraph(sym, names, params)
        except Exception as e:  # noqa: BLE001 (any failure means: run imperatively)
            if isinstance(e, TypeError) and str(e).startswith("Block's output"):
                raise
            self._trace_failed = _trace_failure(e)
            warnings.warn("%s cannot be hybridized: %s; it keeps running imperatively (export "
                          "is not possible)" % (type(self).__name__, self._trace_failed),
                          stacklevel=3)
            return None
        graph.out_format = out_fmt
        graph.single = not isinstance(out, (list, tuple))
        # Each output keeps the face it was traced with: an np Symbol gives an np array,
        # a legacy one (``x.as_nd_ndarray() + ...``) an NDArray, as in MXNet.
        from ..symbol.numpy._np_symbol import _Symbol
        np_outs = [isinstance(o, _Symbol) for o in outs]
        graph.np_outs = np_outs if any(np_outs) else None
        self._cached_graph = self._cached_graph + ((key, graph),)
        return graph

    def _flat_inputs(self, x, args):
        """The input arrays flattened, their nesting format, and which flattened
        positions hold None (empty when none do)."""
        if isinstance(x, NDArray):      # the common call: arrays, none nested
            if not args:
                return [x], (0,), ()
            for a in args:
                if not isinstance(a, NDArray):
                    break
            else:
                return [x, *args], (0,) * (1 + len(args)), ()
        flat, fmt = flatten((x,) + args)
        for a in flat:
            if a is not None and not isinstance(a, NDArray):
                raise ValueError("When hybridized, the input of HybridBlock %s must be "
                                 "(nested) list of Symbol or NDArray, but got %r of type %s"
                                 % (self.name, a, type(a).__name__))
        nones = tuple(a is None for a in flat)
        if not any(nones):
            return flat, fmt, ()
        return [a for a in flat if a is not None], fmt, nones

    def _call_cached(self, ctx, x, args):
        flat, fmt, nones = self._flat_inputs(x, args)
        graph = self._graph_for(fmt, len(nones) or len(flat), nones)
        if graph is None:
            return None
        if self._callback is None:
            outs = graph(flat, ctx)
        else:
            outs = graph.run_monitored(flat, ctx, self._callback, self._monitor_all)
        if graph.np_outs:
            outs = [_retype_np(y) if is_np else y for y, is_np in zip(outs, graph.np_outs)]
        if graph.single:
            return outs[0]
        return regroup(outs, graph.out_format)[0]

    def _init_from_graph(self, x, args):
        """Create the deferred parameters from the traced graph's shape inference, as
        MXNet's first hybridized call does (for an op hook, which sees the graph's ops
        only); False where the shapes cannot all be inferred."""
        flat, fmt, nones = self._flat_inputs(x, args)
        graph = self._graph_for(fmt, len(nones) or len(flat), nones)
        if graph is None:
            return False
        sym = graph.symbol
        args_, _, aux = sym.infer_shape_partial(
            **{n: a.shape for n, a in zip(graph.input_names, flat)})
        shapes = dict(zip(sym.list_arguments() + sym.list_auxiliary_states(), args_ + aux))
        todo = [p for p in self.collect_params().values() if p._data is None]
        if any(not p._deferred_init or not shape_is_known(shapes.get(p.name)) for p in todo):
            return False
        for p in todo:
            p.shape = shapes[p.name]
            p._finish_deferred_init()
        return self._initialized_for(None)

    def forward(self, x, *args):
        """Run ``hybrid_forward`` with ``F = mx.nd`` and this block's parameters on the
        context of the first input array."""
        if isinstance(x, NDArray) and not args:
            ctx, has_sym = x._ctx, False
        else:
            ctx, has_sym, ctxs = _input_kinds((x,) + args)
            if has_sym and ctx is not None:
                raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols "
                                 "types for the input. Please check the type of the args.\n")
            if self._active and len(ctxs) > 1:
                raise ValueError("Find multiple contexts in the input, After hybridized, the "
                                 "HybridBlock only supports one input context. Find all "
                                 "contexts = %s" % sorted(map(str, ctxs)))
        if _np_state.array and (args or type(x) is not NP_NDARRAY):
            check_inputs(self, (x,) + args)
        if ctx is None:
            if has_sym:
                return self._symbol_forward(x, *args)
            raise ValueError("In HybridBlock, there must be one NDArray or one Symbol in the "
                             "input. Please check the type of the args.\n")
        # NOTE: not ``with ctx:``; an array's Context object is shared and its
        # ``__enter__`` is not reentrant, so nested blocks would leak the context.
        old = _ctx_state.ctx
        _ctx_state.ctx = ctx
        try:
            if self._active:
                if self._initialized_for(ctx) or (self._callback is not None
                                                  and self._init_from_graph(x, args)):
                    out = self._call_cached(ctx, x, args)
                    if out is not None:
                        return out
                else:
                    # Deferred shapes resolve in an imperative first call; the graph is
                    # traced right after, so export works after one forward.
                    out = self._imperative_forward(ctx, x, args)
                    if self._initialized_for(ctx):
                        flat, fmt, nones = self._flat_inputs(x, args)
                        self._graph_for(fmt, len(nones) or len(flat), nones)
                    return out
            if not args:        # (a row-wise network's inference, by parts of its batch)
                out = batch_rows.run(self, x)
                if out is not None:
                    return out
            return self._imperative_forward(ctx, x, args)
        finally:
            _ctx_state.ctx = old

    def _imperative_forward(self, ctx, x, args):
        params = self._params_on(ctx)
        if params is None:
            return self._first_forward(ctx, x, args)
        return self.hybrid_forward(face_of(nd) if _np_state.array else nd, x, *args, **params)

    def _params_on(self, ctx):
        """This block's parameter arrays on ``ctx`` by name, or None while deferred ones
        wait for the first forward. Looked up again only when a parameter is added or
        its list of arrays replaced (initialize, reset_ctx, cast and load replace it)."""
        regs = self._reg_params
        found = self._on_ctx
        if found is not None and found[0] is ctx and found[1] is regs and found[2] == len(regs):
            for param, held in found[3]:
                if param._data is not held:
                    break
            else:
                return found[4]
        try:
            params = {k: v.data(ctx) for k, v in regs.items()}
        except DeferredInitializationError:
            return None
        self._on_ctx = (ctx, regs, len(regs), [(v, v._data) for v in regs.values()], params)
        return params

    def _initialized_for(self, ctx):
        """Whether every parameter of the tree has data (deferred ones resolved); until
        then a hybridized block runs imperatively, which resolves them."""
        if self._all_ready:
            return True
        for p in self.collect_params().values():
            if p._data is None:
                return False
        self._all_ready = True
        return True

    def _first_forward(self, ctx, x, args):
        """Forward with deferred parameters created as the ops meet them."""
        self._infer_param_shapes(x, *args)
        params = first_forward_params(self._reg_params, ctx)
        return self.hybrid_forward(_DeferredF(face_of(nd)), x, *args, **params)

    def _infer_param_shapes(self, x, *args):
        """Fill unknown parameter shapes from the inputs before the first forward.

        Layers whose shapes follow directly from the input (a normalisation's
        channel count) override this; the rest are inferred by the ops.
        """

    def _symbol_forward(self, x, *args):
        from .. import symbol
        from ..name import Prefix
        params = {k: np_symbol(v.var()) for k, v in self._reg_params.items()}
        # A block made with prefix='' names its ops in the enclosing block's counter, as
        # in MXNet: two such blocks in one stage give activation0 and activation1.
        names = contextlib.nullcontext() if self._empty_prefix else Prefix(self.prefix)
        with self.name_scope(), names:
            return self.hybrid_forward(face_of(symbol), x, *args, **params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The computation, written with ``F`` (``mx.nd``); override it."""
        raise NotImplementedError("%s must define hybrid_forward()" % type(self).__name__)


from .symbol_block import SymbolBlock  # noqa: E402 (a HybridBlock subclass; MXNet keeps it here)
