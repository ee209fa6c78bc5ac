"""Deferred initialisation: Parameters whose shape has unknown (0) dimensions are
created during a HybridBlock's first forward pass.

Each ``F.<op>`` call that receives such a Parameter fills its shape with the op's
registered ``infer_shape`` rule (``FullyConnected`` gives the weight
``(num_hidden, in_units)`` from the data), so no separate shape pass runs and no op
runs twice. ``mx.np`` functions call :func:`_resolve` themselves.
"""
from ..nd.ndarray import NDArray
from .parameter import DeferredInitializationError
from .utils import shape_is_known

__all__ = []


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


def _is_input(a):
    return isinstance(a, (NDArray, _Deferred))


def _resolve(op, args, kwargs):
    """Create the deferred parameters among an op call's inputs; returns the new args/kwargs."""
    pos, pkw, named = op.split_args(args, kwargs, _is_input)
    p = op.parse_params(pkw)
    names = list(op.input_names(p))
    values = [pos[i] if i < len(pos) else named.get(n) for i, n in enumerate(names)]
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
                   {n: s for n, s in zip(names, shapes) if s is not None}))
        v.param.shape = tuple(shape)
        v.param._finish_deferred_init()
        values[i] = v.param.data(v.ctx)
    args = tuple(values[i] if i < len(pos) else a for i, a in enumerate(args))
    kwargs = {key: (values[names.index(key)] if key in names else v)
              for key, v in kwargs.items()}
    return args, kwargs


def first_forward_params(reg_params, ctx):
    """A block's parameters for its first forward: arrays where the shape is known
    (created now), :class:`_Deferred` stand-ins where the ops must infer it."""
    params = {}
    for k, v in reg_params.items():
        if v._data is None and v._deferred_init:
            if shape_is_known(v.shape):
                v._finish_deferred_init()
                params[k] = v.data(ctx)
            else:
                params[k] = _Deferred(v, ctx)
        else:
            params[k] = v.data(ctx)
    return params


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
