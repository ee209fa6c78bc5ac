"""Gluon Blocks: :class:`Block` and :class:`HybridBlock`.

A Block owns a :class:`~mxlite.gluon.ParameterDict` whose names carry the
Block's prefix (``dense0_weight``); children and parameters assigned as attributes
are registered, and ``name_scope()`` nests the prefixes of the children created
inside it (``hybridsequential0_dense0_weight``) with one counter per scope, as in
MXNet. ``save_parameters`` writes MXNet's ``.params`` format with structural names
(``0.weight``, ``0.1.bias``).

``HybridBlock.hybrid_forward(F, x, *args, **params)`` runs with ``F = mx.nd``.
Parameters whose shape has unknown (0) dimensions are created during the first
forward pass: each op that receives one fills its shape with the op's registered
``infer_shape`` rule (``FullyConnected`` gives the weight ``(num_hidden, in_units)``
from the data), so no separate shape pass runs and no op runs twice.
"""
import contextlib
import re
import threading
import warnings
from collections import OrderedDict

from .. import initializer
from ..context import _state as _ctx_state
from ..nd.ndarray import NDArray
from ..util import _state as _np_state
from .np_face import face_of, check_outputs, check_inputs, np_symbol, _retype_np, NP_NDARRAY
from .parameter import Parameter, ParameterDict, DeferredInitializationError, load_checked
from .utils import _indent, HookHandle, shape_is_known

__all__ = ["Block", "HybridBlock", "SymbolBlock"]


def _nd():
    from .. import nd
    return nd


def _symbol_type():
    """``mx.sym.Symbol`` when the symbol API is present, else None."""
    try:
        from ..symbol import Symbol
        return Symbol
    except ImportError:
        return None


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
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
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
        children = set(id(c) for c in self._children.values())

        def unregistered(data):
            if isinstance(data, (list, tuple)):
                return any(unregistered(x) for x in data)
            if isinstance(data, dict):
                return any(unregistered(x) for x in data.values())
            return isinstance(data, Block) and id(data) not in children

        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or k == "_children"):
                if unregistered(v):
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
        _nd().save(filename, {key: val._reduce() for key, val in params.items()})

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
        loaded = _nd().io._load_either(filename)
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
        """Install an op monitor on the children (mxlite runs no cached graph to monitor)."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def summary(self, *inputs):
        """Print each layer's output shape and parameter count for one forward on ``inputs``.

        The block must be initialised. A hybridized block prints the same table:
        the summary's forward runs imperatively (forward hooks do not fire inside a
        cached graph) and hybridization is restored afterwards, even on error.
        (MXNet 1.9 refuses hybridized blocks with an AssertionError instead.)
        """
        from .nn.basic_layers import Sequential, HybridSequential
        summary = OrderedDict()
        seen = set()
        hooks = []
        hybridized = []

        def summary_hook(block, _, outputs):
            key = "%s-%i" % (block.__class__.__name__, len(summary))
            entry = summary[key] = OrderedDict(output_shape=_shape_str(outputs), n_params=0,
                                               trainable=0, shared=0)
            for p in block.params.values():
                size = p.data().size
                entry["n_params"] += size
                entry["trainable"] += 0 if p.grad_req == "null" else size
                if p in seen:
                    entry["shared"] += size
                else:
                    seen.add(p)

        def register(block):
            if isinstance(block, HybridBlock) and block._active:
                hybridized.append(block)
                block._active = False      # the cached graph is kept for afterwards
            if not isinstance(block, (Sequential, HybridSequential)):
                hooks.append(block.register_forward_hook(summary_hook))

        summary["Input"] = OrderedDict(output_shape=_shape_str(inputs), n_params=0,
                                       trainable=0, shared=0)
        try:
            self.apply(register)
            self(*inputs)
            _print_summary(summary)
        finally:
            for h in hooks:
                h.detach()
            for block in hybridized:
                block._active = True


def _shape_str(args):
    """Shapes of (nested) outputs as MXNet's summary prints them."""
    def shapes(a):
        if isinstance(a, (list, tuple)):
            return [shapes(x) for x in a]
        return a.shape if hasattr(a, "shape") else a
    s = shapes(args)
    return str(s)[1:-1] if isinstance(s, list) else str(s)


def _print_summary(summary):
    line_format = "{:>20}  {:>42} {:>15}"
    print("-" * 80)
    print(line_format.format("Layer (type)", "Output Shape", "Param #"))
    print("=" * 80)
    total = trainable = shared = 0
    for layer, entry in summary.items():
        print(line_format.format(layer, str(entry["output_shape"]), entry["n_params"]))
        total += entry["n_params"]
        trainable += entry["trainable"]
        shared += entry["shared"]
    print("=" * 80)
    print("Parameters in forward computation graph, duplicate included")
    print("   Total params: " + str(total))
    print("   Trainable params: " + str(trainable))
    print("   Non-trainable params: " + str(total - trainable))
    print("Shared params in forward computation graph: " + str(shared))
    print("Unique parameters in model: " + str(total - shared))
    print("-" * 80)


# ----------------------------------------------------------------------------
# Deferred shapes: the first forward pass

class _Deferred:
    """Stands for a Parameter whose shape is not known yet, during the first forward.

    An ``F.<op>`` call that receives it infers its shape from the other inputs
    (the op's ``infer_shape`` rule), creates it and passes the real array on.
    """
    __slots__ = ("param", "ctx")
    _deferred_param = True

    def __init__(self, param, ctx):
        self.param = param
        self.ctx = ctx

    def _unusable(self, *args, **kwargs):
        raise DeferredInitializationError(
            "Parameter '%s' has unknown shape %s and was used outside an operator that can infer "
            "it (in hybrid_forward, pass it to an F.<op> call first, or give the layer its input "
            "size: in_units, in_channels, ...)" % (self.param.name, self.param.shape))

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _unusable
    __truediv__ = __rtruediv__ = __pow__ = __rpow__ = __neg__ = __getitem__ = _unusable

    def __getattr__(self, name):
        if name == "_np":       # an np-style call site: resolved by the op (mx.np.apply)
            return False
        self._unusable()


def _resolve(op, args, kwargs):
    """Create the deferred parameters among an op call's inputs; returns the new args/kwargs."""
    pos = []
    k = 0
    while k < len(args) and (args[k] is None or isinstance(args[k], (NDArray, _Deferred))):
        pos.append(args[k])
        k += 1
    pkw = {key: v for key, v in kwargs.items() if key in op.params}
    param_names = [n for n in op.params if n != op.variadic]
    pkw.update(zip(param_names, args[k:]))
    p = op.parse_params(pkw)
    names = list(op.input_names(p))
    values = [pos[i] if i < len(pos) else kwargs.get(n) for i, n in enumerate(names)]
    shapes = [v.shape if isinstance(v, NDArray) else
              (v.param._shape if isinstance(v, _Deferred) else None) for v in values]
    inferred, _ = op.infer_shape(p, shapes)
    for i, v in enumerate(values):
        if not isinstance(v, _Deferred):
            continue
        shape = inferred[i] if inferred is not None else None
        if shape is None or not shape_is_known(shape):
            raise ValueError(
                "Deferred initialization failed because shape cannot be inferred. %s could not "
                "infer input '%s' (Parameter '%s' of shape %s) from the input shapes %s; give "
                "the layer its input size (in_units, in_channels, ...)"
                % (op.name, names[i], v.param.name, v.param.shape,
                   dict((n, s) for n, s in zip(names, shapes) if s is not None)))
        v.param.shape = tuple(shape)
        v.param._finish_deferred_init()
        values[i] = v.param.data(v.ctx)
    args = tuple(values[i] if i < len(pos) else a for i, a in enumerate(args))
    kwargs = {key: (values[names.index(key)] if key in names else v)
              for key, v in kwargs.items()}
    return args, kwargs


class _DeferredF:
    """``F`` for the first forward pass: ``mx.nd`` whose op functions resolve
    :class:`_Deferred` parameters before running."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        attr = getattr(self._module, name)
        if not callable(attr) or isinstance(attr, type):
            if hasattr(attr, "__dict__") and not isinstance(attr, type):
                return _DeferredF(attr)        # a submodule: nd.contrib, nd.linalg ...
            return attr

        module = getattr(attr, "__module__", "") or ""
        if module.startswith("mxlite.numpy") and not module.startswith("mxlite.numpy_ext"):
            return attr         # mx.np functions resolve deferred Parameters themselves

        def call(*args, **kwargs):
            if any(isinstance(a, _Deferred) for a in args) or \
                    any(isinstance(a, _Deferred) for a in kwargs.values()):
                from ..operator.registry import OPS
                op = OPS.get(getattr(attr, "__name__", name))
                if op is None:
                    raise DeferredInitializationError(
                        "F.%s received a Parameter of unknown shape, but it is not a registered "
                        "operator that can infer the shape; give the layer its input size "
                        "(in_units, in_channels, ...)" % name)
                args, kwargs = _resolve(op, args, kwargs)
            return attr(*args, **kwargs)
        call.__name__ = name
        return call


# ----------------------------------------------------------------------------
# HybridBlock

def _input_kinds(args):
    """For (nested) ``args``: the context of the first NDArray (None without one),
    whether a Symbol is among them, and the set of the arrays' contexts."""
    sym = _symbol_type()
    first, has_sym, ctxs = None, False, set()
    stack = list(reversed(args))
    while stack:
        a = stack.pop()
        if isinstance(a, NDArray):
            first = a.context if first is None else first
            ctxs.add(a.context)
        elif sym is not None and isinstance(a, sym):
            has_sym = True
        elif isinstance(a, (list, tuple)):
            stack.extend(reversed(a))
    return first, has_sym, ctxs


def _mx_format(fmt, nones):
    """MXNet's input format: the nesting ``fmt`` with -1 at the None leaves."""
    it = iter(nones or (False,) * _count_leaves(fmt))

    def walk(f):
        return tuple(-1 if next(it) else 0 if g == 0 else walk(g) for g in f)
    return walk(fmt)


def _count_leaves(fmt):
    return sum(1 if f == 0 else _count_leaves(f) for f in fmt)


def _check_structure(first_key, key):
    """As MXNet: a hybridized block takes the input structure of its first call again;
    only None arguments may be added or left out at the end (defaults)."""
    stored, fmt = _mx_format(*first_key), _mx_format(*key)
    if fmt == stored:
        return
    short, long_ = (stored, fmt) if len(stored) <= len(fmt) else (fmt, stored)
    if long_[:len(short)] == short and all(f == -1 for f in long_[len(short):]):
        return
    raise ValueError("The argument structure of HybridBlock does not match the cached version. "
                     "Stored format = %s, input format = %s" % (list(stored), list(fmt)))


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
    created during the first call. ``hybridize()`` is accepted; the block keeps
    running imperatively.

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
            _check_structure(self._cached_graph[0][0], key)
        from .. import symbol
        from .cached_graph import CachedGraph, flatten, regroup
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
        graph.np_outs = [isinstance(o, _Symbol) for o in outs]
        self._cached_graph = self._cached_graph + ((key, graph),)
        return graph

    def _flat_inputs(self, x, args):
        """The input arrays flattened, their nesting format, and which flattened
        positions hold None (empty when none do)."""
        from .cached_graph import flatten
        if not args and isinstance(x, NDArray):     # the common call: one array
            return [x], (0,), ()
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
        from .cached_graph import regroup
        flat, fmt, nones = self._flat_inputs(x, args)
        graph = self._graph_for(fmt, len(nones) or len(flat), nones)
        if graph is None:
            return None
        outs = graph(flat, ctx)
        if any(graph.np_outs):
            outs = [_retype_np(y) if is_np else y for y, is_np in zip(outs, graph.np_outs)]
        if graph.single:
            return outs[0]
        return regroup(outs, graph.out_format)[0]

    def forward(self, x, *args):
        """Run ``hybrid_forward`` with ``F = mx.nd`` and this block's parameters on the
        context of the first input array."""
        if isinstance(x, NDArray) and not args:
            ctx, has_sym = x.context, False
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
                if self._initialized_for(ctx):
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
            return self._imperative_forward(ctx, x, args)
        finally:
            _ctx_state.ctx = old

    def _imperative_forward(self, ctx, x, args):
        try:
            params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        except DeferredInitializationError:
            return self._first_forward(ctx, x, args)
        return self.hybrid_forward(face_of(_nd()), x, *args, **params)

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
        params = {}
        for k, v in self._reg_params.items():
            if v._data is None and v._deferred_init:
                if shape_is_known(v.shape):
                    v._finish_deferred_init()
                    params[k] = v.data(ctx)
                else:
                    params[k] = _Deferred(v, ctx)
            else:
                params[k] = v.data(ctx)
        return self.hybrid_forward(_DeferredF(face_of(_nd())), x, *args, **params)

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


class SymbolBlock(HybridBlock):
    """A Block that runs a Symbol graph: ``SymbolBlock(outputs, inputs, params=None)``.

    Every argument of ``outputs`` that is not an input becomes a Parameter (auxiliary
    states with ``grad_req='null'``), named exactly as in the graph. Shapes unknown
    until the first call are inferred from the input shapes.

    Examples
    --------
    >>> net = mx.gluon.SymbolBlock.imports('cnn-symbol.json', ['data'], 'cnn-0000.params')
    >>> y = net(mx.nd.ones((2, 3, 8, 8)))
    """

    def __init__(self, outputs, inputs, params=None):
        from ..symbol import Symbol, Group
        from .cached_graph import CachedGraph, flatten
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, Symbol) and len(inputs) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = flatten(inputs)
        names = []
        for s in syms:
            if not isinstance(s, Symbol) or len(s) != 1 or s._outputs[0][0].op is not None:
                raise ValueError("SymbolBlock: inputs must be variables (mx.sym.var), got %r" % s)
            names.append(s.name)
        out = Group(outputs) if isinstance(outputs, (list, tuple)) else outputs
        for node in out._nodes():
            if node.op is None and node.attrs.get("__storage_type__") == "1":
                raise AssertionError("SymbolBlock doesn't support Parameter '%s' because its "
                                     "storage type is 'row_sparse'." % node.name)
        missing = [n for n in names if n not in out.list_inputs()]
        if missing:
            raise ValueError("SymbolBlock: input(s) %s are not used by the graph, whose inputs "
                             "are %s" % (missing, out.list_inputs()))
        for name in out.list_arguments():
            if name not in names:
                self.params.get(name, allow_deferred_init=True)
        for name in out.list_auxiliary_states():
            if name not in names:
                self.params.get(name, grad_req="null", allow_deferred_init=True)
        # As MXNet: registered under their names less the common prefix, so that a
        # SymbolBlock inside another block saves and loads its parameters by structure.
        import os
        cut = len(os.path.commonprefix(list(self.params.keys())))
        self._reg_params = {key[cut:]: p for key, p in self.params.items()}
        self._sym = out
        self._input_names = names
        self._multi = isinstance(outputs, (list, tuple)) or len(out) > 1
        self._graph = CachedGraph(out, names, {p.name: p for p in self.params.values()})
        self._graph.out_format = None
        self._cached_graph = ((self._in_format, self._graph),)
        self._graph.single = not self._multi

    def _clear_cached_op(self):
        pass      # the graph is the block: nothing to re-trace

    def forward(self, x, *args):
        from ..symbol import Symbol
        from .cached_graph import flatten
        flat, fmt = flatten((x,) + args)
        if len(flat) != len(self._input_names):
            raise ValueError("SymbolBlock: expected %d input(s) (%s), got %d"
                             % (len(self._input_names), ", ".join(self._input_names), len(flat)))
        if isinstance(flat[0], Symbol):
            out = self._sym._compose(dict(zip(self._input_names, flat)))
            return list(out) if self._multi else out
        if not all(isinstance(a, NDArray) for a in flat):
            raise TypeError("SymbolBlock: inputs must all be NDArrays or all Symbols")
        ctx = flat[0].context
        self._finish_shapes(flat)
        outs = self._graph(flat, ctx)
        if flat[0]._np:         # np inputs give np outputs (MXNet under set_np)
            outs = _retype_np(outs)
        return outs if self._multi else outs[0]

    def _finish_shapes(self, flat):
        pending = [p for p in self.params.values() if p._data is None]
        if not pending:
            return
        shapes = {n: a.shape for n, a in zip(self._input_names, flat)}
        args, _, aux = self._sym.infer_shape_partial(**shapes)
        known = dict(zip(self._sym.list_arguments(), args))
        known.update(zip(self._sym.list_auxiliary_states(), aux))
        types = {n: a.dtype for n, a in zip(self._input_names, flat)}
        arg_t, _, aux_t = self._sym.infer_type(**types)
        dtypes = dict(zip(self._sym.list_arguments(), arg_t))
        dtypes.update(zip(self._sym.list_auxiliary_states(), aux_t))
        for p in pending:
            shape = known.get(p.name)
            if not shape or not shape_is_known(shape):
                raise DeferredInitializationError(
                    "SymbolBlock: cannot infer the shape of Parameter '%s' from the input "
                    "shapes %s" % (p.name, shapes))
            p.shape = tuple(shape)
            if p._deferred_init:
                p._finish_deferred_init()

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError("SymbolBlock runs its graph; it has no hybrid_forward")

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock from ``-symbol.json`` (and ``.params``) files, as written by
        ``HybridBlock.export`` or MXNet. ``data`` and ``data0`` name the same single input."""
        from .. import symbol
        sym = symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        available = sym.list_inputs()
        names = []
        for n in input_names:
            if n not in available:
                alias = {"data0": "data", "data": "data0"}.get(n)
                if alias in available:
                    n = alias
            names.append(n)
        ret = SymbolBlock(sym, [symbol.var(n) for n in names])
        if param_file is not None:
            ret.collect_params().load(param_file, ctx=ctx, allow_missing=allow_missing,
                                      ignore_extra=ignore_extra, cast_dtype=True,
                                      dtype_source="saved")
        return ret
