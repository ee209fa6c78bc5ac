"""Builds the ``mx.sym.<op>`` functions from the operator registry.

Inputs are Symbols (positionally or by name); a missing input becomes a variable
named ``<node>_<input>`` (``fc1_weight``), as in MXNet. Params are kept as MXNet
attribute strings (for JSON) and parsed once into typed values.
"""
import numpy as np

from ..attribute import HIDDEN_KEYS, AttrScope, with_hidden_keys
from ..base import format_attr
from ..name import current as _current_names
from ..nd.register import docstring, signature
from .symbol import Symbol, SymNode, Variable

__all__ = ["make_function", "op_call"]


def _attr_string(v):
    if isinstance(v, str):
        return v
    if isinstance(v, type) and v.__module__ == "numpy":     # np.float32: a dtype
        v = np.dtype(v)
    return format_attr(tuple(v) if isinstance(v, list) else v)


def _is_symbol(a):
    return isinstance(a, Symbol)


def op_call(op, args, kwargs, name=None, attr=None, hint=None):
    """Create the node for ``op`` applied to Symbols ``args``/``kwargs``; an unnamed node
    is named after ``hint`` (the name it was called by, as in MXNet) or the op."""
    dunder = [k for k in kwargs if k.startswith("__") and k.endswith("__")]
    if dunder:      # ``__layout__='NC'`` and the like are attributes, as in MXNet
        attr = dict(attr or {}, **{k: str(kwargs[k]) for k in dunder})
        kwargs = {k: v for k, v in kwargs.items() if k not in dunder}
    # As MXNet: ``lr_mult=0`` (and the other hidden keys) on an op is the attribute
    # ``__lr_mult__`` of the node, which the weights the op creates inherit.
    hidden = [k for k in kwargs if k in HIDDEN_KEYS and k not in op.params]
    if hidden:
        attr = dict(attr or {}, **{"__%s__" % k: str(kwargs[k]) for k in hidden})
        kwargs = {k: v for k, v in kwargs.items() if k not in hidden}
    for k in kwargs:
        for key in HIDDEN_KEYS:
            if k.endswith("_" + key) and k not in op.params:
                raise ValueError("%s: setting variable attributes with %s is deprecated; "
                                 "please instead use w = Variable(%s=%s) and pass %s=w"
                                 % (op.name, k, key, kwargs[k], k[:-len(key) - 1]))
    if op.variadic:
        args = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) \
            else list(args)
        _, raw, named = op.split_args((), kwargs, _is_symbol)
        if op.variadic not in raw:
            raw[op.variadic] = op.variadic_count(len(args))
    else:
        args, raw, named = op.split_args(args, kwargs, _is_symbol)
    sym_kw = {k: v for k, v in named.items() if isinstance(v, Symbol)}
    # None means "absent" for an input; other values are params the op does not declare
    raw.update((k, v) for k, v in named.items() if v is not None and k not in sym_kw)
    params = {k: _attr_string(v) for k, v in raw.items()}
    unknown = [k for k in params if k not in op.params]
    if unknown and not op.params and op.custom_parse is None:
        # As MXNet (no parser for an op without params): such keywords are ignored.
        from ..nd.register import warn_ignored
        for k in unknown:
            warn_ignored(op, k)
            del params[k]
        unknown = []
    if unknown and op.custom_parse is None:
        raise TypeError("%s: unexpected argument %r; valid arguments are %s"
                        % (op.name, unknown[0], ", ".join(op.arg_names())))
    attrs = with_hidden_keys(AttrScope.current().get(attr))
    node = SymNode(op, "", params, attrs)
    node.name = _current_names().get(name, hint or op.name.lower())
    names = node.input_names()
    inputs = []
    for i, n in enumerate(names):
        s = args[i] if i < len(args) else None
        if n in sym_kw:
            s = sym_kw.pop(n)
        if s is None:
            # NOTE: as in MXNet, a weight the op creates carries the op's params and
            # attributes (so ``attr={'lr_mult': ...}`` on the op reaches its weights).
            s = Variable("%s_%s" % (node.name, n), attr=dict(params, **attrs))
        if len(s._outputs) != 1:
            raise ValueError("%s: input %r is a group of %d outputs; pass one output"
                             % (op.name, n, len(s._outputs)))
        inputs.append(s._outputs[0])
    if sym_kw:
        raise TypeError("%s: unexpected input %r; inputs are %s"
                        % (op.name, next(iter(sym_kw)), ", ".join(names)))
    if len(args) > len(names):
        raise TypeError("%s takes %d input(s) (%s), got %d"
                        % (op.name, len(names), ", ".join(names), len(args)))
    node.inputs = inputs
    _default_var_inits(op, inputs)
    # The result has the class of the first input Symbol (an np Symbol stays one).
    cls = next((type(a) for a in args if isinstance(a, Symbol)), Symbol)
    return cls([(node, i) for i in range(node.num_visible())])


# MXNet's FSetInputVarAttrOnCompose: a variable read by these inputs (by index) gets
# this initializer as its ``__init__`` attribute unless it has one.
_ZERO, _ONE = '["zero", {}]', '["one", {}]'
_BN_INITS = {3: _ZERO, 4: _ONE}
_INPUT_VAR_INITS = {
    "BatchNorm": _BN_INITS, "BatchNorm_v1": _BN_INITS, "_contrib_SyncBatchNorm": _BN_INITS,
    "_contrib_BatchNormWithReLU": _BN_INITS, "IdentityAttachKLSparseReg": {1: _ZERO},
    "LeakyReLU": {1: '["Constant", {"value": 0.25}]'},
}


def _default_var_inits(op, inputs):
    table = _INPUT_VAR_INITS.get(op.name)
    if table:
        for i, init in table.items():
            if i < len(inputs):
                node = inputs[i][0]
                if node.op is None and "__init__" not in node.attrs:
                    node.attrs["__init__"] = init


def make_function(op, fname, hint=None):
    """``mx.sym.<fname>``; unnamed nodes are named ``<hint><n>`` (MXNet names them after
    the function called: ``swapaxes0`` but ``swapaxis0``, ``bilinearresize2d0``)."""
    hint = (hint or fname).lower()

    def fn(*args, name=None, attr=None, **kwargs):
        return op_call(op, args, kwargs, name=name, attr=attr, hint=hint)

    fn.__name__ = fname
    fn.__qualname__ = fname
    fn.__doc__ = docstring(op, fname).replace("NDArray", "Symbol")
    fn.__signature__ = signature(op, extra=("name", "attr"))
    fn.__module__ = "mxlite.symbol"
    return fn
