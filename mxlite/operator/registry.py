"""The operator registry: every operator is declared here once.

An :class:`Op` carries a name and aliases, its input names, typed params with
defaults, ``compute(p, xp, *x)`` on raw backend arrays, and ``gradient(p, x, y, gy,
need)`` (``need[i]``: whether input i wants its gradient) written with mxlite ops,
which run on raw arrays when the backward is not recorded and on NDArrays when it is
(so that recording the backward pass gives higher-order gradients). ``mx.nd.<name>``
and ``mx.sym.<name>`` are generated from these declarations. :func:`run_step` is the
one place a kernel runs and :func:`invoke` the one place an op runs on NDArrays: it
unwraps inputs, runs the step, wraps outputs and records the autograd node.

Declaring a new op::

    from mxlite.operator import register_op, Param

    def _gy_times_3(p, x, y, gy, need):
        return [gy[0] * 3]

    register_op("triple", compute=lambda p, xp, x: x * 3, gradient=_gy_times_3)
    mx.nd.triple(mx.nd.ones((2,)))          # [3. 3.]
"""
import inspect
import sys as _sys

import numpy as np

_ndarray = np.ndarray

from ..base import MXNetError, OpIndexError, ParamError, format_attr, optional, parse_str
from ..context import current_context

__all__ = ["Op", "Param", "ranks", "dtypes", "register_op", "get_op", "list_ops", "invoke",
           "run_step", "on_ndarrays", "runs_on_raw", "OPS", "REQUIRED"]

OPS = {}            # every name and alias -> Op
REQUIRED = inspect.Parameter.empty   # marks a param without default


class Param:
    """A typed operator parameter: ``Param(name, parse, default, doc, choices=, low=, high=)``.

    ``parse`` turns a Python value or an MXNet attribute string into the typed value.
    ``choices`` (a tuple, or a dict whose keys are the choices: the kernel table the op
    dispatches through) lists the values allowed, ``None`` among them for an optional
    param; ``parse`` then defaults to reading a string. ``low``/``high`` bound a number,
    or every element of a tuple. A value outside them is a :class:`ParamError` at the
    edge (``mx.nd``, ``mx.sym`` and JSON loading alike), never a surprise in a kernel.
    """
    __slots__ = ("name", "parse", "default", "doc", "choices", "low", "high")

    def __init__(self, name, parse=None, default=REQUIRED, doc="", choices=None, low=None,
                 high=None):
        self.name = name
        self.choices = None if choices is None else tuple(choices)
        if parse is None:
            if self.choices is None:
                raise TypeError("Param %r: give a parser or choices" % name)
            parse = optional(parse_str) if None in self.choices else parse_str
        self.parse = parse
        self.default = default
        self.doc = doc
        self.low = low
        self.high = high

    def violation(self, v):
        """What is wrong with the parsed value ``v`` (a message), or None."""
        if self.choices is not None:
            if v not in self.choices:
                return "%s must be one of %s; got %r" % (
                    self.name, ", ".join(str(c) for c in self.choices), v)
            return None
        if v is None or (self.low is None and self.high is None):
            return None
        for e in (v if isinstance(v, tuple) else (v,)):
            if e is None:
                continue
            if self.low is not None and e < self.low:
                return "%s must be >= %s; got %r" % (self.name, self.low, v)
            if self.high is not None and e > self.high:
                return "%s must be <= %s; got %r" % (self.name, self.high, v)
        return None

    @property
    def checked(self):
        return self.choices is not None or self.low is not None or self.high is not None


class Params:
    """Parsed, typed parameters of one op call, read as attributes (``p.axis``).

    Instances may be cached and shared between calls: treat them as immutable.
    """

    def __init__(self, op, values, given=None):
        self.__dict__.update(values)
        self.__dict__["_op"] = op
        # the names the call gave (None: not known), which MXNet records as its attrs
        self.__dict__["_given"] = given

    def __setattr__(self, name, value):
        raise AttributeError("operator params are immutable")

    def items(self):
        return [(k, v) for k, v in self.__dict__.items() if k != "_op" and k != "_given"]

    def get(self, name, default=None):
        return self.__dict__.get(name, default)

    def to_attrs(self, given_only=False):
        """The params as MXNet attribute strings (as stored in symbol JSON); where
        ``given_only``, those the call named, as MXNet's recorded ops keep them (all of
        them where that is not known)."""
        given = self._given if given_only else None
        if given is not None:
            return {k: format_attr(self.__dict__[k]) for k in given}
        return {k: format_attr(v) for k, v in self.items()}

    def __repr__(self):
        return "%s(%s)" % (self._op.name, ", ".join("%s=%r" % kv for kv in self.items()))


class Op:
    """An operator declaration. See the module docstring and :func:`register_op`."""

    def __init__(self, name, compute, inputs=("data",), params=(), gradient=None,
                 num_outputs=1, num_visible_outputs=None, aliases=(), infer_shape=None,
                 infer_type=None, mutate=(), saves="xy", is_view=False, doc="",
                 variadic=None, output_names=None, no_grad_inputs=(), output_ctx=None,
                 parse=None, same_shape=None, infer_shape_back=None, check=None,
                 variadic_group=1, input_types=None, shape_from_data=False,
                 unlisted="", batchwise=None):
        self.name = name
        # check(p, *x): the op's shape and dtype rules on the raw inputs, raising where
        # they fail. It runs before the kernel wherever the kernel runs (imperative,
        # hybridized, symbolic), so an op that writes in place raises before its first
        # write and a wrong rank or dtype is named instead of failing deep in NumPy.
        if isinstance(check, (tuple, list)):
            check = _all_of(check)
        self.check = check
        self.inputs = inputs            # tuple of names, or callable(p) -> names
        for rule in getattr(check, "rules", (check,)):
            if getattr(rule, "op", False) is None:
                rule.op = self              # a ranks() or dtypes() rule names its op
        # the dtypes that pass a check that is one dtypes() rule for every input (see run_step)
        self.admitted = check.admitted() if hasattr(check, "admitted") else None
        self.kernel = kernel = compute      # compute without the check
        if check is not None:
            def compute(p, xp, *x):
                check(p, *x)
                return kernel(p, xp, *x)
        self.compute = compute
        self.params = {prm.name: prm for prm in params}
        # callable(p, x, y, gy, need) -> list of gx; None: not differentiable (the
        # output is a constant to autograd, as argmax or shape_array are).
        if gradient is not None and not _takes_five(gradient):
            raise TypeError("%s: a gradient rule takes (p, x, y, gy, need)" % name)
        self.gradient = gradient
        # Indices of the inputs whose shape is the first output's (elementwise ops):
        # shape inference fills any of them, or the output, from another, in either
        # direction through the graph, as MXNet's does.
        # ("all": every input, for variadic ops.)
        self.same_shape = same_shape if same_shape in (None, "all") else tuple(same_shape)
        # callable(p, in_shapes, out_shapes) -> in_shapes: what known outputs tell about
        # the inputs (0 dims unknown), for graph shape inference.
        self.infer_shape_back = infer_shape_back
        self.num_outputs = num_outputs  # int or callable(p)
        self.num_visible_outputs = num_visible_outputs
        self.aliases = tuple(aliases)
        self.infer_shape_rule = infer_shape
        self.infer_type_rule = infer_type
        # callable(p) -> per input, the dtype it has whatever its neighbours are (the
        # float32 ranges of a quantized op), or None: graph type inference gives an
        # unknown input this before the type of the op's other inputs
        self.input_types = input_types
        self.mutate = tuple(mutate)     # indices of inputs updated in place
        # the output shape follows the input values, not only their shapes (boolean_mask):
        # a graph holding the op cannot tell its steps' shapes from its inputs' shapes
        self.shape_from_data = shape_from_data
        # which of "xy" MXNet registers no names for (FListInputNames/FListOutputNames:
        # its unary macro's ops "xy", Activation "x"): its monitors and op hooks call
        # those inputs input0, input1... and those outputs 0, 1...
        self.unlisted = unlisted
        # rule(p, shapes, batched) -> whether a graph may run the op on parts of a batch
        # (see operator/batchwise.py); None: never
        self.batchwise = batchwise
        self.saves = saves              # which of x/y the gradient reads (version-checked)
        self.is_view = is_view          # output shares memory with input 0
        self.doc = doc
        self.variadic = variadic        # name of the count param (num_args) for *data ops
        if variadic and self.params[variadic].low is None:
            self.params[variadic].low = 1   # as MXNet: a variadic op takes one input or more
        # inputs per count: 3 for quantized_concat (num_args data, then a min and a max
        # for each)
        self.variadic_group = variadic_group
        self.output_names = output_names
        self.no_grad_inputs = tuple(no_grad_inputs)
        self.output_ctx = output_ctx    # callable(p) -> Context, when not the inputs'
        # callable(kwargs) -> Params for ops whose params are open-ended (Custom)
        self.custom_parse = parse
        defaults = {k: prm.default for k, prm in self.params.items() if prm.default is not REQUIRED}
        self._required = [k for k, prm in self.params.items() if prm.default is REQUIRED]
        self._defaults = defaults
        self.default_params = None if self._required else Params(self, defaults, ())
        self._cache = {}

    # -- params ---------------------------------------------------------------
    def parse_params(self, kwargs):
        """Typed :class:`Params` from keyword values or attribute strings."""
        if self.custom_parse is not None:
            return self.custom_parse(kwargs)
        if not kwargs:
            if self.default_params is None:
                raise TypeError("%s: missing required argument(s) %s"
                                % (self.name, ", ".join(repr(k) for k in self._required)))
            return self.default_params
        try:
            key = tuple(kwargs.items())
            p = self._cache.get(key)
            if p is not None:
                return p
        except TypeError:       # unhashable values (lists): parse without caching
            key = None
        values = dict(self._defaults)
        params = self.params
        for k, v in kwargs.items():
            prm = params.get(k)
            if prm is None:
                raise TypeError("%s: unexpected argument %r; valid arguments are %s"
                                % (self.name, k, ", ".join(self.arg_names()) or "none"))
            try:
                values[k] = typed = prm.parse(v)
            except (ValueError, TypeError) as e:
                raise ParamError("%s: invalid value %r for argument %r: %s"
                                 % (self.name, v, k, e)) from None
            if prm.checked:
                bad = prm.violation(typed)
                if bad is not None:
                    raise ParamError("%s: %s" % (self.name, bad))
        missing = [k for k in self._required if k not in values]
        if missing:
            raise TypeError("%s: missing required argument(s) %s"
                            % (self.name, ", ".join(repr(k) for k in missing)))
        p = Params(self, values, tuple(kwargs))
        if key is not None and len(self._cache) < 256:
            self._cache[key] = p
        return p

    def keyword_params(self, kwargs):
        """:meth:`parse_params` for ``kwargs`` that name declared params only; ``None``
        when some keyword is not one (an input by name), or the op parses its own."""
        try:
            p = self._cache.get(tuple(kwargs.items()))
        except TypeError:       # unhashable values: the general path parses them
            return None
        if p is not None:
            return p
        if self.custom_parse is not None or self.variadic or not self.params.keys() >= kwargs.keys():
            return None
        return self.parse_params(kwargs)

    def split_args(self, args, kwargs, is_input):
        """MXNet's calling convention for ``op(*args, **kwargs)``, for ``mx.nd``,
        ``mx.sym`` and Gluon's deferred parameters alike: the leading positional
        ``args`` that are inputs (``is_input(a)``, or None) are the inputs, the
        positional args after them are params in declaration order; a keyword naming
        a declared param is a param, any other keyword names an input.

        Returns ``(inputs, params, named)``: the positional inputs (a list), the param
        values by name, and the keyword inputs by name (dicts)."""
        k = 0
        while k < len(args) and (args[k] is None or is_input(args[k])):
            k += 1
        params, named = {}, {}
        declared = self.params
        for key, v in kwargs.items():
            if key in declared:
                params[key] = v
            else:
                named[key] = v
        extra = args[k:]
        if extra:
            names = [n for n in declared if n != self.variadic]
            if len(extra) > len(names):
                raise TypeError("%s: too many positional arguments (%d)" % (self.name, len(args)))
            for pname, v in zip(names, extra):
                if pname in params:
                    raise TypeError("%s: argument %r given twice" % (self.name, pname))
                params[pname] = v
        return list(args[:k]), params, named

    def variadic_count(self, n_inputs):
        """The count param (``num_args``) of a variadic op called with ``n_inputs``."""
        group = self.variadic_group
        if n_inputs % group:
            raise ValueError("%s: takes %d inputs per %s, got %d inputs"
                             % (self.name, group, self.variadic, n_inputs))
        return n_inputs // group

    def arg_names(self):
        names = [] if callable(self.inputs) else list(self.inputs)
        return names + list(self.params)

    def input_names(self, p):
        return self.inputs(p) if callable(self.inputs) else self.inputs

    def n_outputs(self, p):
        n = self.num_outputs
        return n(p) if callable(n) else n

    def n_visible(self, p):
        n = self.num_visible_outputs
        if n is None:
            return self.n_outputs(p)
        return n(p) if callable(n) else n

    # -- shape and dtype inference --------------------------------------------
    def infer_type(self, p, dtypes):
        """Output dtypes (a list) for input dtypes."""
        if self.infer_type_rule is not None:
            out = self.infer_type_rule(p, dtypes)
            return list(out) if isinstance(out, (list, tuple)) else [out] * self.n_outputs(p)
        # Default: an explicit ``dtype`` param (Cast, one_hot, zeros, ...) names the
        # output type; otherwise outputs take the first input's type.
        dt = p.get("dtype") if "dtype" in self.params else None
        if dt is not None:
            return [np.dtype(dt)] * self.n_outputs(p)
        return [dtypes[0] if dtypes else np.dtype(np.float32)] * self.n_outputs(p)

    def infer_shape(self, p, shapes, dtypes=None):
        """Complete ``shapes`` (inputs, ``None`` or 0-dims where unknown) and
        return ``(input_shapes, output_shapes)``.

        An op's ``infer_shape`` rule fills in what can be deduced (weights from
        data); output shapes come from running ``compute`` on zero-strided dummies
        when the op gives no rule for them.
        """
        shapes = list(shapes)
        if self.infer_shape_rule is not None:
            res = self.infer_shape_rule(p, shapes)
            if isinstance(res, tuple) and len(res) == 2 and isinstance(res[1], list):
                return [tuple(s) if s is not None else None for s in res[0]], res[1]
            shapes = [tuple(s) if s is not None else None for s in res]
        if any(s is None or 0 in s for s in shapes):
            return shapes, None
        if self.same_shape and self.n_outputs(p) == 1:
            # Elementwise: the output is the (agreeing) inputs' shape; when they disagree
            # the kernel below raises the op's own error.
            idx = range(len(shapes)) if self.same_shape == "all" else self.same_shape
            same = [shapes[i] for i in idx if i < len(shapes)]
            if same and all(s == same[0] for s in same):
                return shapes, [tuple(same[0])]
        if dtypes is None:
            dtypes = [np.dtype(np.float32)] * len(shapes)
        dummies = [np.broadcast_to(np.zeros((), dt), s) for s, dt in zip(shapes, dtypes)]
        # NOTE: the dummies are zeros, so 0/0 and log(0) happen: only shapes are read.
        with np.errstate(all="ignore"):
            ys = self.compute(p, np, *[np.array(d) if self.mutate else d for d in dummies])
        ys = ys if isinstance(ys, tuple) else (ys,)
        return shapes, [tuple(y.shape) for y in ys]

    def __repr__(self):
        return "<Op %s>" % self.name


def _takes_five(fn):
    """Whether ``fn`` can be called as ``fn(p, x, y, gy, need)``."""
    try:
        inspect.signature(fn).bind(0, 0, 0, 0, 0)
    except TypeError:
        return False
    except ValueError:      # no signature to read (a builtin): trust it
        pass
    return True


def on_ndarrays(rule):
    """A gradient rule ``rule(p, x, y, gy, need)`` written with NDArray methods, made to
    take the raw arrays of an unrecorded backward too: it gets NDArrays on their
    context (zeros for a missing ``gy``) and its NDArray gradients are unwrapped.

    User extensions (``autograd.Function``, ``CustomOp``, ``@customop``) take this
    form (a method too: ``self`` comes first). An op's rule written with ``mx.nd``
    functions and operators alone needs no adapter: those run on raw arrays directly."""
    def gradient(*args):
        *owner, p, x, y, gy, need = args
        if type(x[0]) is not NDArray:
            ctx = context_of_raw(x[0])
            xp = array_module_of(x[0])
            gy = [xp.zeros_like(b) if a is None else a for a, b in zip(gy, y)]
            gx = rule(*owner, p, [_wrap(a, ctx) for a in x], [_wrap(a, ctx) for a in y],
                      [_wrap(a, ctx) for a in gy], need)
            return [None if g is None else g._data for g in gx]
        if any(a is None for a in gy):
            zeros_like = OPS["zeros_like"]
            gy = [invoke(zeros_like, [b], zeros_like.default_params) if a is None else a
                  for a, b in zip(gy, y)]
        return rule(*owner, p, x, y, gy, need)
    gradient.__name__ = getattr(rule, "__name__", "gradient")
    gradient.__wrapped__ = rule
    gradient.on_ndarrays = True
    return gradient


def runs_on_raw(op):
    """Whether ``op``'s gradient rule runs on raw arrays as it is (no :func:`on_ndarrays`)."""
    return op.gradient is not None and not getattr(op.gradient, "on_ndarrays", False)


def array_module_of(a):
    """The array module (``xp``) of raw backend array ``a``: NumPy, or CuPy."""
    return np if type(a) is _ndarray or isinstance(a, (np.ndarray, np.generic)) else _sys.modules[
        type(a).__module__.split(".")[0]]


def context_of_raw(a):
    """A Context for raw backend array ``a``: ``cpu()`` for NumPy, its ``gpu(i)``."""
    from ..context import cpu, gpu
    return cpu() if isinstance(a, (np.ndarray, np.generic)) else gpu(a.device.id)


def ranks(**rules):
    """A ``check`` of the inputs' ranks: ``ranks(data=(3, 5))`` for 3-D to 5-D data,
    ``ranks(data=1)`` for at least 1 dim (inputs by position in the op's input names).
    A bad rank is ``"data expected 3 to 5 dims, got shape (2,)"``."""
    def check(p, *x):
        names = list(check.op.input_names(p))
        for name, rule in rules.items():
            lo, hi = (rule, None) if isinstance(rule, int) else rule
            if name not in names or names.index(name) >= len(x):
                continue
            shape = tuple(x[names.index(name)].shape)
            if len(shape) < lo or (hi is not None and len(shape) > hi):
                want = ("%d" % lo if hi == lo else "%d to %d" % (lo, hi)) if hi is not None \
                    else "at least %d" % lo
                raise MXNetError("%s: %s expected %s dims, got shape %s"
                                 % (check.op.name, name, want, shape))
    check.op = None     # set by Op when the rule is declared
    return check


# What a dtype rule's kinds (numpy ``dtype.kind`` letters) say in an error message.
_KIND_WORDS = {"f": "a floating-point dtype", "fiu": "a numeric dtype (not bool)",
               "iu": "an integer dtype", "iub": "an integer or bool dtype",
               "fc": "a floating-point dtype"}


def dtype_error(op, p, i, a, kinds):
    """Raise ``op``'s error for input ``i`` (array ``a``) of a dtype not among ``kinds``."""
    names = list(op.input_names(p))
    name = names[i] if i < len(names) else "input%d" % i
    raise MXNetError("%s: %s expected %s, got %s" % (
        op.name, name, _KIND_WORDS.get(kinds, "dtype kind " + kinds), a.dtype))


def dtypes(**rules):
    """A ``check`` of the inputs' dtypes by kind: ``dtypes(data="f")`` for floating-point
    data, ``dtypes(inputs="fiu")`` for every input numeric (bool refused), as MXNet's
    kernels refuse the types they have no code for. A bad dtype is ``"weight expected
    a floating-point dtype, got int32"``."""
    every = rules.pop("inputs", None)
    ok = {kinds: set() for kinds in list(rules.values()) + [every]}
    plans = {}      # the op's input names -> (position, kinds) of the inputs rules name

    def check(p, *x):
        # NOTE: a dtype seen to pass is remembered (``ok``): a set lookup costs a third
        # of reading ``dtype.kind``, and this runs on every call of the op.
        if every is not None:
            for i, a in enumerate(x):
                if a.dtype not in ok[every]:
                    admit(p, i, a, every)
        if rules:
            names = check.op.inputs
            if callable(names):
                names = tuple(names(p))
            at = plans.get(names)
            if at is None:
                at = tuple((names.index(n), k) for n, k in rules.items() if n in names)
                if len(plans) < 16:
                    plans[names] = at
            for i, kinds in at:
                if i < len(x) and x[i].dtype not in ok[kinds]:
                    admit(p, i, x[i], kinds)

    def admit(p, i, a, kinds):
        """Remember the dtype of ``a`` (input ``i``) as fit for ``kinds``, or fail naming it."""
        if a.dtype.kind not in kinds:
            dtype_error(check.op, p, i, a, kinds)
        ok[kinds].add(a.dtype)

    def admitted():
        """The dtypes seen to pass when the check holds every input of its op to one rule
        (``inputs=``, or one kind for each of a fixed list of names), else None: run_step
        admits those without calling the check."""
        if every is not None and not rules:
            return ok[every]
        names = check.op.inputs
        kinds = set(rules.values())
        if every is None and len(kinds) == 1 and not callable(names) and set(names) <= set(rules):
            return ok[kinds.pop()]
        return None

    check.admitted = admitted
    check.op = None     # set by Op when the rule is declared
    return check


def _all_of(rules):
    """One ``check`` running ``rules`` (ranks(), dtypes(), an op's own) in order."""
    rules = tuple(r for r in rules if r is not None)

    def check(p, *x):
        for rule in rules:
            rule(p, *x)
    check.rules = rules
    return check


def register_op(name, compute, **kwargs):
    """Declare an operator and register it (and its aliases) in the registry.

    Parameters
    ----------
    name : str
        The operator name, as used by ``mx.nd.<name>`` and in symbol JSON.
    compute : callable
        ``compute(p, xp, *x)``: typed params, the array module and the raw input
        arrays; returns one array or a tuple of arrays.
    **kwargs
        See :class:`Op`: ``inputs``, ``params``, ``gradient``, ``num_outputs``,
        ``aliases``, ``infer_shape``, ``infer_type``, ``mutate``, ``doc`` ...

    Returns
    -------
    Op
    """
    op = Op(name, compute, **kwargs)
    for n in (name,) + op.aliases:
        OPS[n] = op
    _on_register(op)
    return op


_listeners = []


def _on_register(op):
    for fn in _listeners:
        fn(op)


def get_op(name):
    """The :class:`Op` registered under ``name``; MXNetError listing near names if none."""
    op = OPS.get(name)
    if op is None:
        import difflib
        near = difflib.get_close_matches(name, list(OPS), n=5)
        raise MXNetError("operator %r is not registered%s" % (
            name, "; did you mean %s?" % ", ".join(near) if near else ""))
    return op


def list_ops():
    """Sorted names (and aliases) of every registered operator."""
    return sorted(OPS)


# ----------------------------------------------------------------------------
# The one choke point.

# mx.profiler installs ``hook(op, p, xp, data) -> outputs`` here while it records;
# None otherwise, so that a stopped profiler costs one global read per call.
_profile_hook = None


# What NumPy raises deep inside a kernel when inputs do not fit it ("tuple index out of
# range", a bare MemoryError): a message that names none of the op's arguments.
_RAW_ERRORS = (IndexError, KeyError, AttributeError, ArithmeticError, MemoryError)


def _describe(op, p, data):
    """``data float32 (2, 3), weight float32 (4,); num_hidden=5``: what the op got."""
    try:
        names = list(op.input_names(p))
    except Exception:       # noqa: BLE001  (only a description)
        names = []
    names += ["input%d" % i for i in range(len(names), len(data))]
    parts = ["%s %s %s" % (n, getattr(x, "dtype", type(x).__name__),
                           tuple(getattr(x, "shape", ()))) for n, x in zip(names, data)]
    set_params = ["%s=%r" % kv for kv in p.items()
                  if kv[0] in op.params and op.params[kv[0]].default is not kv[1]
                  and op.params[kv[0]].default != kv[1]] if hasattr(p, "items") else []
    return ", ".join(parts or ["no inputs"]) + ("; " + ", ".join(set_params) if set_params else "")


def _fail(op, e, p=None, data=None):
    """The error a kernel raised, as the user sees it: prefixed with the op's name; a
    raw NumPy error (see _RAW_ERRORS) becomes an MXNetError saying what the op got."""
    msg = str(e)
    if isinstance(e, _RAW_ERRORS) and not isinstance(e, MXNetError):
        if isinstance(e, MemoryError):
            msg = "out of memory (%s)" % (msg or "MemoryError")
        elif isinstance(e, KeyError):
            msg = "KeyError %s" % msg
        if data is not None:
            msg = "%s, for %s" % (msg, _describe(op, p, data))
        prefix = op.name + ": "
        err_type = OpIndexError if isinstance(e, IndexError) else MXNetError
        return err_type(msg if msg.startswith(prefix) else prefix + msg)
    if msg.startswith((op.name + ":", op.name + " ")):
        return e if isinstance(e, MXNetError) or not isinstance(e, Exception) else type(e)(msg)
    err_type = type(e) if isinstance(e, (TypeError, MXNetError)) else MXNetError
    try:
        return err_type("%s: %s" % (op.name, msg))
    except Exception:
        return MXNetError("%s: %s" % (op.name, msg))


def run_step(op, p, xp, data):
    """Run ``op``'s kernel on raw arrays ``data``: the one place a kernel runs (for
    :func:`invoke`, hybridized graphs, and gradient rules running on raw arrays).
    Returns what ``compute`` returns; errors are named after the op."""
    try:
        if _profile_hook is None:
            # op.compute is check + kernel; called here one by one, one frame less
            check = op.check
            if check is not None:
                admitted = op.admitted
                if admitted is None:
                    check(p, *data)
                else:
                    for a in data:
                        if a.dtype not in admitted:
                            check(p, *data)
                            break
            return op.kernel(p, xp, *data)
        return _profile_hook(op, p, xp, data)
    except Exception as e:
        raise _fail(op, e, p, data) from e


def visible(op, p, ys):
    """The visible outputs of a kernel's tuple of raw outputs ``ys``: one array, or a list."""
    nvis = op.n_visible(p)
    return ys[0] if nvis == 1 else list(ys[:nvis])


def apply(op, inputs, p, copy_views=False):
    """``op`` on ``inputs`` as a gradient rule calls it: :func:`invoke` on NDArrays; on
    raw arrays (NDArrays among them unwrapped) the kernel alone, its raw visible
    output(s) back and nothing recorded."""
    xp = np
    for x in inputs:
        if type(x) is not _ndarray:     # (NumPy arrays only: an unrecorded backward)
            if all(isinstance(a, NDArray) for a in inputs):
                return invoke(op, inputs, p, copy_views=copy_views)
            inputs = [a._data if isinstance(a, NDArray) else
                      np.asarray(a) if isinstance(a, np.generic) else a for a in inputs]
            xp = array_module_of(inputs[0])
            break
    ys = run_step(op, p, xp, inputs)
    return ys if type(ys) is not tuple else visible(op, p, ys)


def bound(name, **params):
    """Op ``name`` with ``params`` parsed once: a function of the inputs, called by a
    gradient rule as it would call the ``mx.nd`` function (through :func:`apply`: on
    NDArrays when its backward is recorded, on raw arrays when it is not), without
    the keyword handling of a call with ``params`` each time."""
    op = get_op(name)
    p = op.parse_params(params)

    def call(*inputs):
        return apply(op, inputs, p, copy_views=True)
    call.__name__ = call.__qualname__ = name
    return call


def invoke(op, inputs, p, out=None, ctx=None, copy_views=False):
    """Run ``op`` on NDArray ``inputs`` with parsed params ``p``.

    Returns an NDArray, or a list of them for ops with several visible outputs.
    When ``out`` is given the result is written into it (an NDArray or list).
    ``copy_views``: an op whose output views its input (reshape, transpose...) gives
    a copy, as MXNet's ops (``mx.nd.reshape``) do; only ``NDArray.reshape`` and indexing
    give views there.
    """
    if inputs:
        x0 = inputs[0]
        ctx = x0._ctx
        data = [x0._data]
        for x in inputs[1:]:
            if x._ctx is not ctx and x._ctx != ctx:
                raise MXNetError("%s: all inputs must be on one context; got %s and %s"
                                 % (op.name, ctx, x._ctx))
            data.append(x._data)
    else:
        data = ()
        if ctx is None:
            ctx = p.get("ctx") or current_context()
    ys = run_step(op, p, ctx.xp or ctx.array_module(), data)
    if op.mutate:
        for i in op.mutate:
            v = inputs[i]._version
            if v is not None:
                v[0] += 1
    if op.output_ctx is not None:
        ctx = op.output_ctx(p)
    # Outputs take the class of the first input (an mx.np.ndarray stays one), or where
    # an input is sparse, the storage type MXNet's rules give them.
    cls = x0.__class__ if inputs else None
    if cls is not None and (cls._sparse or (op.name in _STORAGE_CHECKED
                                            and _storage.applies(op, inputs))):
        cls = _storage.output_class(op, p, inputs)
    outs = [_wrap(y, ctx, cls) for y in ys] if type(ys) is tuple else [_wrap(ys, ctx, cls)]
    if op.is_view:
        if copy_views:
            outs[0]._data = outs[0]._data.copy()
        else:
            outs[0]._version = inputs[0]._share_version()
    if _ag_state.recording and op.gradient is not None:
        for x in inputs:
            if x._entry is not None:
                record_node(op, p, inputs, outs)
                break
    nvis = len(outs) if op.num_visible_outputs is None else op.n_visible(p)
    if out is not None:
        if isinstance(out, NDArray):
            _write_into(out, outs[0])
            return out
        for o, y in zip(out, outs[:nvis]):
            _write_into(o, y)
        return list(out)
    if nvis == 1:
        return outs[0]
    return outs[:nvis]


# Imported last: mxlite.nd imports this module while it loads.
from ..autograd import _state as _ag_state, record_node  # noqa: E402
from . import storage as _storage  # noqa: E402
_STORAGE_CHECKED = _storage.CHECKED
from ..nd.ndarray import NDArray, _wrap, _write_into, _bind_registry  # noqa: E402

_bind_registry(_sys.modules[__name__])
