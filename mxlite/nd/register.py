"""Builds the ``mx.nd.<op>`` functions from the operator registry.

Each function is a real Python function with an ``inspect.Signature`` and a
numpydoc docstring made from the op's declaration; no source text is generated.
Inputs come first (positionally or by name), then the op's params (positional
after the inputs, as in MXNet, or by keyword), then ``out=`` and ``name=``.
"""
import inspect
from typing import Literal

import numpy as np

from ..autograd import _state as _ag_state
from ..operator.registry import REQUIRED, invoke, apply
from .ndarray import NDArray

_ndarray = np.ndarray

__all__ = ["make_function", "namespace_of", "signature", "docstring"]


def namespace_of(name):
    """Where ``mx.nd`` shows an op: ``('linalg', 'gemm')``, ``('contrib', 'x')``,
    ``('_internal', '_plus_scalar')`` or ``('', 'relu')``."""
    if name.startswith("_random_pdf_"):     # MXNet shows these as mx.nd.random_pdf_* only
        return "_internal", name
    for prefix, ns in (("_linalg_", "linalg"), ("linalg_", "linalg"),
                       ("_contrib_", "contrib"), ("_random_", "random"),
                       ("_sample_", "random"), ("_image_", "image")):
        if name.startswith(prefix):
            return ns, name[len(prefix):]
    if name.startswith("_"):
        return "_internal", name
    return "", name


def _type_name(parse):
    n = getattr(parse, "__name__", "")
    return {"parse_bool": "bool", "parse_int": "int", "parse_float": "float",
            "parse_str": "str", "parse_shape": "tuple of int", "parse_axis": "int or tuple of int",
            "parse_dtype": "str or numpy dtype", "parse_opt_shape": "tuple of int or None",
            "parse_float_tuple": "tuple of float"}.get(n.replace("optional_", ""), "value")


def _param_type(prm):
    """``{'relu', 'tanh'}``, ``int (>= 1)`` or ``tuple of int``: MXNet's spelling."""
    if prm.choices is not None:
        return "{%s}" % ", ".join(repr(c) for c in prm.choices)
    bounds = [b for b in (prm.low is not None and ">= %s" % (prm.low,),
                          prm.high is not None and "<= %s" % (prm.high,)) if b]
    t = _type_name(prm.parse)
    return t + (" (%s%s)" % ("each " if t.startswith("tuple") else "", ", ".join(bounds))
                if bounds else "")


def _annotation(prm):
    if prm.choices is None:
        return inspect.Parameter.empty
    return Literal[prm.choices]


def docstring(op, fname):
    lines = [(op.doc or "The %s operator." % op.name).strip(), "", "Parameters", "----------"]
    if op.variadic:
        lines += ["*data : NDArray", "    The input arrays."]
    elif not callable(op.inputs):
        for n in op.inputs:
            lines += ["%s : NDArray" % n, "    Input %r." % n]
    else:
        lines += ["data, ... : NDArray", "    The inputs (which ones depends on the params)."]
    for prm in op.params.values():
        if prm.name == op.variadic:
            continue
        d = "" if prm.default is REQUIRED else ", optional, default %r" % (prm.default,)
        lines += ["%s : %s%s" % (prm.name, _param_type(prm), d)]
        if prm.doc:
            lines += ["    " + prm.doc]
    lines += ["out : NDArray, optional", "    The output array to write into.",
              "name : str, optional", "    Ignored by ``mx.nd`` (symbols use it).",
              "", "Returns", "-------", "NDArray or list of NDArray"]
    if fname != op.name:
        lines += ["", "Registered as operator ``%s``." % op.name]
    return "\n".join(lines)


def signature(op, extra=("out", "name")):
    """The signature of an op function: inputs, then keyword-only params and ``extra``."""
    P = inspect.Parameter
    ps = []
    if op.variadic:
        ps.append(P("data", P.VAR_POSITIONAL))
    elif not callable(op.inputs):
        ps += [P(n, P.POSITIONAL_OR_KEYWORD, default=None) for n in op.inputs]
    ps += [P(prm.name, P.KEYWORD_ONLY, default=prm.default, annotation=_annotation(prm))
           for prm in op.params.values() if prm.name != op.variadic]
    ps += [P(k, P.KEYWORD_ONLY, default=None) for k in extra]
    return inspect.Signature(ps)


def _check_input(op, name, v, face, fname):
    """Raise unless ``v`` is an array this face's functions take: ``'nd'`` functions
    take legacy NDArrays, ``'np'`` ones ``mx.np.ndarray``, ``'any'`` ones both (Gluon's
    ``F``); MXNet's two faces reject each other's arrays. Raw arrays pass inside a
    gradient rule running on them."""
    if not isinstance(v, NDArray):
        if _is_raw(v):
            return
        raise TypeError("%s: input %r must be an NDArray, got %s"
                        % (op.name, name, type(v).__name__))
    if face == "any" or v._np == (face == "np"):
        return
    from ..numpy._ndarray import legacy_error, np_error
    raise np_error(op.name, fname) if face == "np" else legacy_error(fname)


def make_function(op, fname, face="nd"):
    """The ``mx.nd`` function for ``op``, shown under ``fname``.

    ``face`` says which arrays it takes: ``'nd'`` (legacy NDArrays, as ``mx.nd``),
    ``'np'`` (``mx.np.ndarray``, as ``mx.npx``) or ``'any'``.
    """
    static = None if (callable(op.inputs) or op.variadic) else tuple(op.inputs)
    n_static = len(static) if static is not None else -1
    param_names = [k for k in op.params if k != op.variadic]
    cls = NDArray
    if face == "np":
        from ..numpy._ndarray import ndarray as cls

    def fn(*args, out=None, name=None, **kwargs):
        # Fast path: the inputs by position, the params by keyword or default
        # (``nd.sum(g, axis=0)``, ``nd.relu(x)``), on NDArrays, or on the raw arrays of
        # a gradient rule running on them (an unrecorded backward).
        raw = False
        for a in args:
            if type(a) is not cls:
                if not _is_raw(a):
                    break
                raw = True
        else:
            p = op.keyword_params(kwargs) if kwargs else op.default_params
            if p is not None and len(args) == (n_static if n_static >= 0 else
                                               len(op.input_names(p))):
                if raw:
                    return _run(op, args, p, out)
                return invoke(op, args, p, out, copy_views=True)
        if not kwargs and len(args) == n_static and op.default_params is not None:
            for n, a in zip(static, args):
                _check_input(op, n, a, face, fname)     # an input of the wrong kind raises
            return _run(op, args, op.default_params, out)
        return _call(op, param_names, args, kwargs, out, face, fname)

    fn.__name__ = fname
    fn.__qualname__ = fname
    fn.__doc__ = docstring(op, fname)
    fn.__signature__ = signature(op)
    fn.__module__ = "mxlite.nd" if face == "nd" else "mxlite.numpy_extension"
    fn._op = op
    return fn


def _is_array(a):
    return isinstance(a, NDArray) or _is_raw(a)


def _is_raw(a):
    """Whether ``a`` is a raw backend array that may stand for an NDArray input: only
    while a gradient rule runs on raw arrays (an unrecorded backward)."""
    # NOTE: arithmetic on 0-d NumPy arrays gives NumPy scalars (np.generic), so a rule
    # running on the raw arrays of 0-d np inputs passes those too.
    return _ag_state.raw and (isinstance(a, (np.ndarray, np.generic))
                              or type(a).__module__.startswith("cupy"))


def _run(op, inputs, p, out):
    """:func:`invoke`, or :func:`apply` for a rule's raw arrays."""
    if out is None:
        return apply(op, inputs, p, copy_views=True)
    return invoke(op, inputs, p, out, copy_views=True)


def _call(op, param_names, args, kwargs, out, face="nd", fname=None):
    if op.variadic:
        inputs = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
        for i, a in enumerate(inputs):
            _check_input(op, "data[%d]" % i, a, face, fname)
        count = op.variadic_count(len(inputs))
        given = kwargs.get(op.variadic)
        kwargs = dict(kwargs)
        kwargs[op.variadic] = count
        p = op.parse_params(kwargs)
        if given is not None and getattr(
                op.parse_params(dict(kwargs, **{op.variadic: given})), op.variadic) != count:
            raise ValueError("%s: %s=%s but %d inputs were given"
                             % (op.name, op.variadic, given, len(inputs)))
        return _run(op, inputs, p, out)

    pos_inputs, pkw, named = op.split_args(args, kwargs, _is_array)
    if named and not callable(op.inputs):
        _check_unknown(op, named, op.inputs, param_names)
    p = op.parse_params(pkw)
    names = op.input_names(p)
    if named:
        _check_unknown(op, named, names, param_names)
    if len(pos_inputs) > len(names):
        surplus = pos_inputs[len(names):]
        if any(s is not None for s in surplus):
            raise TypeError("%s takes %d input(s) (%s) with these params, got %d"
                            % (op.name, len(names), ", ".join(names), len(pos_inputs)))
        pos_inputs = pos_inputs[:len(names)]
    inputs = []
    for i, n in enumerate(names):
        v = pos_inputs[i] if i < len(pos_inputs) else None
        if n in named:
            if v is not None:
                raise TypeError("%s: input %r given twice" % (op.name, n))
            v = named[n]
        if v is None:
            raise TypeError("%s: missing input %r (inputs: %s)" % (op.name, n, _listed(names)))
        _check_input(op, n, v, face, fname)
        inputs.append(v)
    return _run(op, inputs, p, out)


def _listed(names, most=12):
    """``names`` joined for a message: the first ``most`` and a count past them."""
    if len(names) <= most:
        return ", ".join(names)
    return "%s, ... (%d in all)" % (", ".join(names[:most]), len(names))


_IGNORED_WARNED = set()


def warn_ignored(op, key):
    """Warn, once per op and keyword, that a keyword of a parameterless op is ignored."""
    if (op.name, key) not in _IGNORED_WARNED:
        _IGNORED_WARNED.add((op.name, key))
        import warnings
        warnings.warn("%s takes no parameters; MXNet ignores %s=, and so does mxlite"
                      % (op.name, key), stacklevel=5)


def _check_unknown(op, named, input_names, param_names):
    """Raise TypeError for a keyword that is neither an input nor a param; drop it
    from ``named`` with one warning instead where the op takes no params at all (MXNet
    has no parser for those ops and ignores such keywords)."""
    unknown = [key for key in named if key not in input_names]
    if unknown and not op.params and not any(isinstance(named[k], NDArray) for k in unknown):
        for key in unknown:
            del named[key]
            warn_ignored(op, key)
        return
    if unknown:
        raise TypeError("%s: unexpected argument %r; valid arguments are %s"
                        % (op.name, unknown[0], ", ".join(list(input_names) + param_names)))
