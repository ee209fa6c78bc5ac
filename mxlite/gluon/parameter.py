"""Gluon parameters: :class:`Parameter`, :class:`Constant` and :class:`ParameterDict`.

A Parameter holds one copy of its value per :class:`~mxlite.Context` (``cpu(0)`` and
``cpu(1)`` are separate arrays), each marked for autograd with the parameter's
``grad_req``. Its shape may have unknown (0) dimensions until the first forward pass
fills them (deferred initialisation).

>>> w = mx.gluon.Parameter('fc_weight', shape=(2, 3), init=mx.init.Xavier())
>>> w.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
>>> w.data(mx.cpu(1)).shape
(2, 3)
"""
import warnings
from collections import OrderedDict

import numpy as np

from ..util import _state as _np_state
from .. import autograd, initializer, nd
from ..base import MXNetError, np_dtype
from ..context import Context, cpu, current_context
from .utils import _indent, _brief_print_list, shape_is_known

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "ParameterDict",
           "tensor_types"]


class DeferredInitializationError(MXNetError):
    """Error for unfinished deferred initialization."""


class _AssertError(AssertionError, ValueError):
    """Raised where MXNet asserts (an ``AssertionError``); a ``ValueError`` as well, so that
    code written for either catches it."""


def _tensor_types():
    from ..nd import NDArray
    try:
        from ..symbol import Symbol
        return (Symbol, NDArray)
    except ImportError:
        return (NDArray,)


tensor_types = _tensor_types()


def _ctx_list(ctx):
    if ctx is None:
        return [current_context()]
    if isinstance(ctx, Context):
        return [ctx]
    return list(ctx)


def _same_dtype(a, b):
    return np.dtype(a) == np.dtype(b)


class Parameter:
    """A weight of a Block: one array per context, with gradient buffers.

    Parameters
    ----------
    name : str
        Name of this parameter (Blocks prefix it: ``dense0_weight``).
    grad_req : {'write', 'add', 'null'}, default 'write'
        How ``backward`` updates the gradient; ``'null'``: no gradient buffer.
    shape : int or tuple of int, optional
        0 marks a dimension unknown until the first forward pass.
    dtype : numpy.dtype or str, default numpy.float32
    lr_mult, wd_mult : float, default 1.0
        Learning-rate and weight-decay multipliers for the optimizer.
    init : Initializer or str, optional
        Overrides the global initializer passed to :meth:`initialize`.
    allow_deferred_init : bool, default False
        Allow :meth:`initialize` on an incomplete shape; the arrays are created at
        the first forward pass.
    differentiable : bool, default True
        False forces ``grad_req='null'``.
    stype, grad_stype : {'default', 'row_sparse', 'csr'}, default 'default'
        Accepted for compatibility; mxlite stores every array dense.
    """

    def __init__(self, name, grad_req="write", shape=None, dtype=np.float32, lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=False, differentiable=True,
                 stype="default", grad_stype="default"):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, (int, np.integer)):
            shape = (int(shape),)
        # -1 (NumPy shape semantics) and 0 both mark an unknown dimension; kept as 0
        self._shape = tuple(0 if d == -1 else d for d in shape) if shape is not None else None
        self.name = name
        np_dtype(dtype, "Parameter '%s'" % name)
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        for arg, st in (("grad_stype", grad_stype), ("stype", stype)):
            if st not in ("default", "row_sparse", "csr"):
                raise _AssertError("%s for Parameter '%s' must be one of 'default', "
                                   "'row_sparse', or 'csr', but got '%s'" % (arg, name, st))
        self._grad_stype = grad_stype
        self._stype = stype

    def __repr__(self):
        return "Parameter {name} (shape={shape}, dtype={dtype})".format(
            name=self.name, shape=self.shape, dtype=self.dtype)

    # -- attributes ----------------------------------------------------------------
    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in ("write", "add", "null"):
            raise _AssertError("grad_req must be one of 'write', 'add', or 'null', but got '%s'"
                               % (req,))
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            self._data = [d.detach() for d in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        """The data type; assigning it casts the data (:meth:`cast`)."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        """The shape; 0 marks a dimension not known yet (-1 under NumPy semantics)."""
        s = self._shape
        if _np_state.shape and s is not None and 0 in s:
            return tuple(-1 if d == 0 else d for d in s)
        return s

    @shape.setter
    def shape(self, new_shape):
        new_shape = tuple(0 if d == -1 else d for d in new_shape) \
            if new_shape is not None else None
        if self._shape is None:
            self._shape = new_shape
            return
        if len(self._shape) != len(new_shape) or not all(
                j in (0, i) for i, j in zip(new_shape, self._shape)):
            raise _AssertError("Expected shape %s is incompatible with given shape %s."
                               % (str(new_shape), str(self._shape)))
        self._shape = new_shape

    def _set_trainer(self, trainer):
        """Set the Trainer that updates this parameter; a sparse one takes only one."""
        if self._stype != "default" and self._trainer is not None and trainer is not None \
                and self._trainer is not trainer:
            raise RuntimeError("Failed to set the trainer for Parameter '%s' because it was "
                               "already set. More than one trainers for a %s Parameter is not "
                               "supported." % (self.name, self._stype))
        self._trainer = trainer

    # -- access --------------------------------------------------------------------
    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            idx = self._ctx_map.get(ctx)
            if idx is not None:
                return arr_list[idx]
            raise RuntimeError("Parameter '%s' was not initialized on context %s. It was only "
                               "initialized on %s." % (self.name, str(ctx), str(self._ctx_list)))
        if self._deferred_init:
            raise DeferredInitializationError(
                "Parameter '%s' has not been initialized yet because initialization was "
                "deferred. Actual initialization happens during the first forward pass. "
                "Please pass one batch of data through the network before accessing Parameters. "
                "You can also avoid deferred initialization by specifying in_units, "
                "num_features, etc., for network layers." % (self.name))
        raise RuntimeError(
            "Parameter '%s' has not been initialized. Note that you should initialize "
            "parameters and create Trainer with Block.collect_params() instead of Block.params "
            "because the later does not include Parameters of nested child Blocks" % (self.name))

    def data(self, ctx=None):
        """The value on ``ctx`` (the only context, or the current one, by default).

        Raises
        ------
        RuntimeError
            When not initialised, or not on ``ctx``.
        DeferredInitializationError
            When the shape is still waiting for the first forward pass.
        """
        if self._stype != "default":
            self._check_dense("data")
        return self._check_and_get(self._data, ctx)

    def list_data(self):
        """The values on every context, in the order of :meth:`list_ctx`."""
        self._check_dense("list_data")
        return self._check_and_get(self._data, list)

    def _check_dense(self, method):
        if self._stype != "default":
            raise RuntimeError("Cannot return a copy of Parameter '%s' via %s() because its "
                               "storage type is %s. Please use row_sparse_data() instead."
                               % (self.name, method, self._stype))

    def grad(self, ctx=None):
        """The gradient buffer on ``ctx``."""
        if self._data is not None and self._grad is None:
            raise RuntimeError("Cannot get gradient array for Parameter '%s' because "
                               "grad_req='null'" % (self.name))
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        """The gradient buffers on every context."""
        return self.grad(list)

    def row_sparse_data(self, row_id):
        """The value of a ``row_sparse`` parameter on ``row_id``'s context for the rows
        ``row_id`` lists (the other rows zero), pulled from its Trainer's kvstore, which
        holds the whole weight and updates it."""
        return self._row_sparse_get("row_sparse_data", row_id, row_id.context)

    def list_row_sparse_data(self, row_id):
        """:meth:`row_sparse_data` on every context."""
        return self._row_sparse_get("list_row_sparse_data", row_id, list)

    def _row_sparse_get(self, method, row_id, ctx):
        if self._stype != "row_sparse":
            raise RuntimeError("Cannot return copies of Parameter '%s' via %s() because its "
                               "storage type is %s. Please use data() instead."
                               % (self.name, method, self._stype))
        from ..nd.ndarray import NDArray
        if not isinstance(row_id, NDArray):
            raise TypeError("%s: row_id must be an NDArray, got %s"
                            % (method, type(row_id).__name__))
        if self._trainer is None:
            raise RuntimeError("Cannot get row_sparse data for Parameter '%s' when no Trainer "
                               "is created with it." % self.name)
        results = self._check_and_get(self._data, ctx)
        self._trainer._row_sparse_pull(self, results, row_id)
        return results

    def list_ctx(self):
        """The contexts this parameter lives (or will live, when deferred) on."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError("Parameter '%s' has not been initialized" % self.name)
        return self._ctx_list

    # -- initialisation ------------------------------------------------------------
    def initialize(self, init=None, ctx=None, default_init=initializer.Uniform(),
                   force_reinit=False):
        """Create the arrays (and gradient buffers) on ``ctx``.

        The value is drawn once, on the CPU, and copied to every context.

        Parameters
        ----------
        init : Initializer, optional
            Overrides :attr:`init` and ``default_init``.
        ctx : Context or list of Context, optional
            The current context by default.
        default_init : Initializer, default Uniform()
            Used when neither ``init`` nor :attr:`init` is given.
        force_reinit : bool, default False
            Re-initialise an initialised parameter (otherwise warn and keep it).
        """
        if self._data is not None and not force_reinit:
            warnings.warn("Parameter '%s' is already initialized, ignoring. Set "
                          "force_reinit=True to re-initialize." % self.name, stacklevel=2)
            return
        self._data = self._grad = None
        ctx = _ctx_list(ctx)
        if init is None:
            init = default_init if self.init is None else self.init
        if not shape_is_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError("Cannot initialize Parameter '%s' because it has invalid shape: "
                             "%s." % (self.name, str(self.shape)))
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self):
        """Create the arrays once the shape is known (a no-op when not deferred)."""
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        if not shape_is_known(self.shape):
            raise _AssertError("Cannot initialize Parameter '%s' because it has invalid shape: "
                               "%s. Please specify in_units, in_channels, etc for `Block`s."
                               % (self.name, str(self.shape)))
        self._deferred_init = ()
        with autograd.pause():
            if data is None:
                data = nd.zeros(self.shape, dtype=np_dtype(self.dtype), ctx=cpu())
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {"__init__": init}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        """Copy ``data`` to every context and attach the gradient buffers."""
        self._ctx_list = list(ctx_list)
        self._ctx_map = {c: i for i, c in enumerate(self._ctx_list)}
        with autograd.pause():
            self._data = [data.copyto(c) for c in self._ctx_list]
            if self._stype != "default":
                self._data = [d.tostype(self._stype) for d in self._data]
        if _np_state.array:         # under npx.set_np(): Parameter data are np arrays
            from ..numpy._ndarray import ndarray
            for d in self._data:
                d.__class__ = ndarray
        self._init_grad()

    def _init_grad(self):
        if self.grad_req == "null":
            self._grad = None
            return
        for d in self._data:
            d.attach_grad(self.grad_req, stype=self._grad_stype)
        self._grad = [d.grad for d in self._data]

    def _reduce(self):
        """The value averaged over contexts, on the CPU (what is saved); a row_sparse
        weight's whole value from its Trainer's store."""
        if self._stype == "row_sparse" and self._trainer is not None:
            data = nd.sparse.zeros("row_sparse", self.shape, ctx=cpu(), dtype=self.dtype)
            self._trainer._row_sparse_pull(self, data, None, full_idx=True)
            return data
        arrays = self._check_and_get(self._data, list)
        with autograd.pause():
            if len(arrays) == 1:
                return arrays[0].copyto(cpu())
            return nd.add_n(*[a.copyto(cpu()).as_nd_ndarray() for a in arrays]) / len(arrays)

    def reset_ctx(self, ctx):
        """Move the parameter to other contexts (keeping its value)."""
        ctx = _ctx_list(ctx)
        if self._data:
            data = self._reduce()
            self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError("Cannot reset context for Parameter '%s' because it has not been "
                             "initialized." % self.name)

    def set_data(self, data):
        """Set the value on every context (``data``: NDArray or array-like)."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise _AssertError("Parameter '%s' has not been initialized" % self.name)
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        if trainer is not None and getattr(trainer, "_kv_initialized", False) and \
                getattr(trainer, "_update_on_kvstore", False) and \
                self not in getattr(trainer, "_params_to_init", ()):
            trainer._reset_kvstore()
        with autograd.pause():
            for arr in self._data:
                arr[:] = data

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source="current"):
        """(Re)initialise from loaded ``data``; the caller has checked shapes and dtypes."""
        if self._shape:
            self._shape = tuple(i if i != 0 else j for i, j in zip(self._shape, data.shape))
        if cast_dtype and not _same_dtype(self.dtype, data.dtype):
            if dtype_source == "current":
                data = data.astype(self.dtype, copy=False)
            else:
                self.dtype = data.dtype
        if self._data is None:
            if self._deferred_init:
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, _ctx_list(ctx))
        else:
            self.set_data(data)
        self._deferred_init = ()

    def _load_problem(self, data, ctx, cast_dtype):
        """Why ``data`` cannot be loaded into this parameter (None when it can)."""
        if self._shape is not None and (len(self._shape) != len(data.shape) or any(
                s not in (0, d) for s, d in zip(self._shape, data.shape))):
            return "shape", "expected %s vs saved %s" % (str(self._shape), str(data.shape))
        if not cast_dtype and not _same_dtype(self.dtype, data.dtype):
            return "dtype", "expected %s vs saved %s" % (np.dtype(self.dtype).name,
                                                         np.dtype(data.dtype).name)
        if ctx is not None:
            want = set(_ctx_list(ctx))
            have = (set(self._ctx_list) if self._data is not None else
                    set(self._deferred_init[1]) if self._deferred_init else None)
            if have is not None and want != have:
                return "context", "requested %s but it was initialized on %s" % (
                    sorted(want, key=str), sorted(have, key=str))
        return None

    # -- gradients and types -----------------------------------------------------------
    def zero_grad(self):
        """Set the gradient buffers to 0 (nothing when there are none)."""
        if self._grad is None:
            return
        with autograd.pause():
            for g in self._grad:
                g[:] = 0

    def var(self):
        """A symbol variable for this parameter (needs ``mx.sym``)."""
        if self._var is None:
            try:
                from ..symbol import var
            except ImportError:
                raise MXNetError("Parameter.var: mx.sym is not available in this mxlite build; "
                                 "use data() with the NDArray API") from None
            self._var = var(self.name, shape=self._shape, dtype=self.dtype, lr_mult=self.lr_mult,
                            wd_mult=self.wd_mult, init=self.init, stype=self._stype)
        return self._var

    def cast(self, dtype):
        """Cast the data and gradients to ``dtype`` (keeping their values)."""
        np_dtype(dtype, "Parameter '%s'.cast" % self.name)
        self._dtype = dtype
        if self._data is None:
            return
        with autograd.pause():
            self._data = [d.astype(dtype) for d in self._data]
            if self._grad is None:
                return
            self._grad = [g.astype(dtype) for g in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)


class _ValueInit(initializer.Initializer):
    """Copies a fixed value (the initializer of a :class:`Constant`)."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value


class Constant(Parameter):
    """A parameter that autograd and the Trainer leave alone (``grad_req`` is ``'null'``);
    :meth:`set_data` still changes it.

    Parameters
    ----------
    name : str
    value : array-like or NDArray

    Examples
    --------
    >>> const = mx.gluon.Constant('const', [[1, 2], [3, 4]])
    """

    def __init__(self, name, value):
        if not isinstance(value, nd.NDArray):
            value = nd.array(value)
        self.value = value
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=_ValueInit(value))

    def __repr__(self):
        return "Constant {name} (shape={shape}, dtype={dtype})".format(
            name=self.name, shape=self.shape, dtype=self.dtype)

    @property
    def grad_req(self):
        return "null"

    @grad_req.setter
    def grad_req(self, req):
        if req != "null":
            warnings.warn('Constant parameter "{}" does not support grad_req other than "null", '
                          'and new value "{}" is ignored.'.format(self.name, req))


def _merge_shape(want, have):
    """The shape agreeing with both (0 = unknown), or None when they conflict."""
    if len(want) != len(have):
        return None
    out = []
    for a, b in zip(want, have):
        if a != b and a > 0 and b > 0:
            return None
        out.append(b if a in (0, -1) else a)
    return tuple(out)


class ParameterDict:
    """An ordered dictionary of Parameters whose :meth:`get` creates prefixed ones.

    Parameters
    ----------
    prefix : str, default ''
        Prepended to the names of the parameters :meth:`get` creates.
    shared : ParameterDict, optional
        Looked up before creating a parameter (how Blocks share weights).
    """

    def __init__(self, prefix="", shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        name = self._prefix + " " if self._prefix else ""
        content = "\n".join(_indent("  {0}".format(v), 2) for v in self.values())
        return "{name}(\n{content}\n)".format(name=name, content=content)

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        """Prepended to the names of the parameters :meth:`get` creates."""
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name, **kwargs):
        """The Parameter ``prefix + name``: found here, in the shared dict, or created with
        ``kwargs``.

        An existing parameter must agree with ``kwargs``; a shape with 0 (unknown)
        dimensions merges with a known one.

        Examples
        --------
        >>> params = mx.gluon.ParameterDict('net_')
        >>> params.get('weight', shape=(3, 0)).name
        'net_weight'
        """
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            existing = param._shape if k == "shape" else (
                getattr(param, k, None) if hasattr(param, k) else None)
            if existing is None:
                setattr(param, k, v)
                continue
            if k == "shape" and v is not None:
                v = (v,) if isinstance(v, int) else tuple(v)
                merged = _merge_shape(v, existing)
                if merged is not None:
                    param._shape = merged
                    continue
            elif k == "dtype" and _same_dtype(v, existing):
                continue
            if v is not None and v != existing:
                raise _AssertError(
                    "Cannot retrieve Parameter '%s' because desired attribute does not match "
                    "with stored for attribute '%s': desired '%s' vs stored '%s'."
                    % (name, k, str(v), str(existing)))
        return param

    def get_constant(self, name, value=None):
        """The :class:`Constant` ``prefix + name``, created from ``value`` if missing."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError("No constant named '{}'. Please specify value if you want to "
                               "create a new constant.".format(name))
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise _AssertError("Parameter '{}' already exists but it is not a constant."
                                   .format(name))
            value = value.asnumpy() if hasattr(value, "asnumpy") else np.asarray(value)
            if param.shape != value.shape or not (param.value.asnumpy() == value).all():
                raise _AssertError("Constant '{}' already exists but it's value doesn't match "
                                   "new value".format(name))
        return param

    def update(self, other):
        """Add every parameter of ``other`` (a name clash with a different one is an error)."""
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise _AssertError("Cannot update self with other because they have different "
                                   "Parameters with the same name '%s'" % k)
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False,
                   force_reinit=False):
        """Initialise every parameter; ``init`` is the default for those without their own."""
        if verbose:
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        """Set every gradient buffer to 0."""
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx):
        """Move every parameter to ``ctx`` (a Context or a list)."""
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self):
        """Every context some parameter lives on."""
        s = set()
        for p in self.values():
            s.update(p.list_ctx())
        return list(s)

    def setattr(self, name, value):
        """Set attribute ``name`` of every parameter (``setattr('grad_req', 'null')``)."""
        for p in self.values():
            setattr(p, name, value)

    def save(self, filename, strip_prefix=""):
        """Save the values (averaged over contexts) under their names minus ``strip_prefix``."""
        arg_dict = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise ValueError(
                    "Prefix '%s' is to be striped before saving, but Parameter's name '%s' does "
                    "not start with '%s'. this may be due to your Block shares parameters from "
                    "other Blocks or you forgot to use 'with name_scope()' when creating child "
                    "blocks." % (strip_prefix, param.name, strip_prefix))
            arg_dict[param.name[len(strip_prefix):]] = param._reduce()
        nd.save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current"):
        """Load values saved by :meth:`save`; names get ``restore_prefix`` prepended.

        Everything is checked before any parameter changes: a mismatch raises one
        error listing the missing and unexpected names and the shape/dtype mismatches.
        """
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise _AssertError("restore_prefix is '%s' but Parameters name '%s' does not "
                                       "start with '%s'" % (restore_prefix, name, restore_prefix))
        self.load_dict(nd.io._load_either(filename), ctx, allow_missing, ignore_extra, restore_prefix,
                       filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix="", filename=None, cast_dtype=False, dtype_source="current"):
        """Load from a dict of NDArrays (``arg:``/``aux:`` prefixes are dropped)."""
        items = param_dict.items() if isinstance(param_dict, dict) else param_dict
        loaded = {restore_prefix + (k[4:] if k.startswith(("arg:", "aux:")) else k): v
                  for k, v in items}
        source = "file '%s'" % filename if filename else "param_dict"
        load_checked(dict(self._params), loaded, source, ctx, allow_missing, ignore_extra,
                     cast_dtype, dtype_source, strip=len(restore_prefix))


def load_checked(targets, loaded, source, ctx, allow_missing, ignore_extra, cast_dtype,
                 dtype_source, strip=0):
    """Load ``loaded`` (name -> NDArray) into ``targets`` (name -> Parameter), all or nothing.

    A parameter may appear under several names (shared); it is missing only when
    none of them is in ``loaded``. On any problem nothing is changed and one error
    lists every missing name, unexpected name and shape/dtype/context mismatch.
    """
    if dtype_source not in ("current", "saved"):
        raise ValueError("dtype_source must be 'current' or 'saved', got %r" % (dtype_source,))
    names_of = {}
    for name, p in targets.items():
        names_of.setdefault(id(p), []).append(name)
    missing = [] if allow_missing else [
        name for name, p in targets.items()
        if not any(n in loaded for n in names_of[id(p)])]
    unexpected = [] if ignore_extra else [n for n in loaded if n not in targets]
    problems = {}
    for name, data in loaded.items():
        if name in targets:
            why = targets[name]._load_problem(data, ctx, cast_dtype)
            if why is not None:
                full = targets[name].name
                label = "'%s'" % name[strip:] + ("" if full == name else " (%s)" % full)
                problems.setdefault(why[0], []).append("%s %s" % (label, why[1]))
    if missing or unexpected or problems:
        raise _LoadError(_load_message(source, missing, unexpected, problems, strip,
                                       list(loaded), list(targets)))
    for name, data in loaded.items():
        if name in targets:
            targets[name]._load_init(data, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)


class _LoadError(_AssertError):
    """Parameters and a file disagree (MXNet raises AssertionError or ValueError here)."""


def _load_message(source, missing, unexpected, problems, strip, file_names, net_names):
    limit = 50
    parts = []
    if missing:
        parts.append("missing in %s: %s (set allow_missing=True to skip them; the file "
                     "contains %s)" % (source, _brief_print_list([m[strip:] for m in missing],
                                                                 limit),
                                       _brief_print_list([n[strip:] for n in file_names], limit)))
    if unexpected:
        parts.append("loaded from %s but not present in the network: %s (set ignore_extra=True "
                     "to ignore them; the network has %s)"
                     % (source, _brief_print_list([u[strip:] for u in unexpected], limit),
                        _brief_print_list([n[strip:] for n in net_names], limit)))
    hints = {"shape": "", "dtype": " (set cast_dtype=True to cast)", "context": ""}
    for kind in ("shape", "dtype", "context"):
        if kind in problems:
            parts.append("%s mismatch: %s%s" % (kind, "; ".join(problems[kind]), hints[kind]))
    return ("Cannot load parameters from %s, no parameter was changed. Parameters %s"
            % (source, ". Parameters ".join(parts)))
