"""``mx.np.ndarray``: an NDArray of another class, with NumPy's semantics.

Same data, context and autograd slot as :class:`mxlite.nd.NDArray`; what differs is
what the methods and operators do: NumPy indexing with real 0-d results, bool
comparisons, NumPy ``reshape``, MXNet's np dtype rules, NumPy's repr. Every operator
runs a registry op (``_npi_add`` ...), and an op's outputs take the class of its first
input, so an np array stays one through any op, Gluon's included.
"""
import numpy as onp

from ..nd.ndarray import NDArray, _wrap, _index_key
from ..operator.registry import OPS, Params, invoke
from ..operator.numpy.shape import NP_GETITEM

__all__ = ["ndarray", "apply", "check_np", "legacy_error", "np_error"]

_SCALARS = (int, float, bool, onp.number, onp.bool_)


def np_error(name, py_name=None):
    """The TypeError of an np op given a legacy NDArray, in MXNet's words."""
    return TypeError(
        "Operator `%s` registered in backend is known as `%s` in Python. This is a numpy "
        "operator which can only accept MXNet numpy ndarrays, while received a legacy "
        "ndarray. Please ensure that you have activated numpy semantics by calling "
        "`npx.set_np()` in your code. If you still see this error with numpy semantics "
        "activated, please call `as_np_ndarray()` upon the legacy ndarray to convert it to "
        "an MXNet numpy ndarray, and then feed the converted array to this operator."
        % (name, py_name or name.split("_", 2)[-1]))


def legacy_error(name):
    """The TypeError of a legacy op given an np array, in MXNet's words."""
    return TypeError(
        "Operator `%s` registered in backend is known as `%s` in Python. This is a legacy "
        "operator which can only accept legacy ndarrays, while received an MXNet numpy "
        "ndarray. Please call `as_nd_ndarray()` upon the numpy ndarray to convert it to a "
        "legacy ndarray, and then feed the converted array to this operator." % (name, name))


def check_np(name, arrays, py_name=None):
    """Raise MXNet's TypeError when one of ``arrays`` is a legacy NDArray."""
    for a in arrays:
        if type(a) is not ndarray and not isinstance(a, ndarray):
            if isinstance(a, NDArray):
                raise np_error(name, py_name)
            raise TypeError("%s: expected an mx.np.ndarray, got %s"
                            % (py_name or name, type(a).__name__))


def apply(name, inputs, params=None, out=None, py_name=None):
    """Run np op ``name`` on np arrays (or compose it on Symbols) with ``params``."""
    op = OPS[name]
    if inputs and _is_symbol(inputs[0]):
        from ..symbol.register import op_call
        return op_call(op, list(inputs), dict(params or {}), hint=py_name or name)
    for a in inputs:
        if type(a) is not ndarray:
            if getattr(a, "_deferred_param", False):
                # A Parameter of unknown shape in a first forward: the op's shape rule
                # creates it from the other inputs (as Gluon's F.<op> calls do).
                from ..gluon.deferred_init import _resolve
                inputs, _ = _resolve(op, tuple(inputs), dict(params or {}))
                break
            check_np(name, (a,), py_name)
    p = op.parse_params(params) if params else op.default_params
    return invoke(op, inputs, p, out)


def _is_symbol(x):
    return type(x).__name__ in ("Symbol", "_Symbol") and not isinstance(x, NDArray)


def _retype(x):
    """``x`` (a fresh NDArray from an op with no np input) as an np array."""
    if isinstance(x, list):
        return [_retype(e) for e in x]
    x.__class__ = ndarray
    return x


class ndarray(NDArray):
    """An array of ``mx.np``: NumPy's semantics on mxlite's NDArray machinery.

    Make one with :func:`mxlite.numpy.array`, ``mx.np.zeros`` and the like, or from a
    legacy array with ``as_np_ndarray()``.

    Examples
    --------
    >>> x = mx.np.array([[1, 2], [3, 4]])
    >>> x[1, 0]
    array(3.)
    >>> (x > 2).dtype
    dtype('bool')
    """
    __slots__ = ()
    _np = True

    # -- attributes --------------------------------------------------------------
    @property
    def dtype(self):
        return self._data.dtype

    @property
    def T(self):
        return apply("_np_transpose", (self,))

    def __repr__(self):
        s = repr(self.asnumpy())
        dt = self._data.dtype
        if "dtype=" in s:
            if dt == onp.float32:
                s = s[:s.rindex(",")] + ")"
        elif dt not in (onp.float32, onp.bool_):
            s = s[:-1] + ", dtype=%s)" % dt
        if self._ctx.device_type != "cpu":
            s = s[:-1] + ", ctx=%s)" % self._ctx
        return s

    def __str__(self):
        return str(self.asnumpy())

    def __format__(self, fmt):
        """A 0-d array formats as its value; others only with an empty spec (NumPy's rule)."""
        if self.ndim == 0:
            return self.item().__format__(fmt)
        if fmt:
            raise TypeError("unsupported format string passed to ndarray.__format__")
        return str(self)

    def __reduce__(self):
        return (_rebuild, (self.asnumpy(), self._ctx))

    # -- conversions ---------------------------------------------------------------
    def as_nd_ndarray(self):
        """The same data (and autograd slot) as a legacy ``mx.nd.NDArray``."""
        return _same_slots(self, NDArray)

    def as_np_ndarray(self):
        return self

    def item(self, *args):
        """The element as a Python scalar."""
        if args:
            return self.asnumpy().item(*args)
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self.asnumpy().item()

    def tolist(self):
        return self.asnumpy().tolist()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.size != 1 or self._data.dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self.item())

    def __bool__(self):
        n = self.size
        if n == 1:
            return bool(self.item())
        if n == 0:
            return False
        raise ValueError("The truth value of an ndarray with multiple elements is ambiguous.")

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of unsized object")
        return self._data.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(self._data.shape[0]):
            yield self[i]

    def __array__(self, dtype=None, copy=None):
        # NOTE: MXNet's np.ndarray gives NumPy no buffer: onp.asarray(x) is an object
        # array of its 0-d elements. Use x.asnumpy() for the values.
        a = onp.empty(self.shape[:1] if self.ndim else (), dtype=object)
        if self.ndim == 0:
            a[()] = self
        else:
            for i in range(self.shape[0]):
                a[i] = self[i]
        return a

    def attach_grad(self, grad_req="write", stype=None):
        super().attach_grad(grad_req, stype)
        if self._grad is not None:
            self._grad.__class__ = ndarray

    # -- indexing --------------------------------------------------------------------
    def __getitem__(self, key):
        key, view = _index_key(key, self.shape)
        return invoke(NP_GETITEM, (self,), Params(NP_GETITEM, {"key": key, "view": view}))

    # -- shape -----------------------------------------------------------------------
    def reshape(self, *shape, order="C", **kwargs):
        """NumPy's reshape: ``x.reshape(2, 3)`` or ``x.reshape((2, -1))``; only -1 is a
        code (MXNet's others are ``npx.reshape``'s)."""
        if "newshape" in kwargs or "shape" in kwargs:
            shape = (kwargs.pop("newshape", None) or kwargs.pop("shape"),)
        if kwargs:
            raise TypeError("reshape: unexpected argument %r" % next(iter(kwargs)))
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        return apply("_np_reshape", (self,), {"newshape": tuple(shape), "order": order})

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (list, tuple))):
            axes = axes[0]
        return apply("_np_transpose", (self,), {"axes": tuple(axes) if axes else None})

    def swapaxes(self, axis1, axis2):
        return apply("_npi_swapaxes", (self,), {"dim1": axis1, "dim2": axis2})

    def squeeze(self, axis=None):
        return apply("_np_squeeze", (self,), {"axis": axis})

    def flatten(self, order="C"):
        return apply("_np_reshape", (self,), {"newshape": (-1,)}).copy()

    def ravel(self, order="C"):
        return apply("_np_reshape", (self,), {"newshape": (-1,)})

    def copy(self, order="C"):
        if order != "C":
            raise NotImplementedError("ndarray.copy: only order='C' is supported, got %r"
                                      % (order,))
        return apply("_np_copy", (self,))

    def broadcast_to(self, shape):
        return apply("_np_broadcast_to", (self,), {"shape": tuple(shape)})

    # -- arithmetic --------------------------------------------------------------------
    def _np_binary(self, other, op, sop, rsop=None, out=None):
        if isinstance(other, ndarray):
            o = OPS[op]
            return invoke(o, (other, self) if rsop == "swap" else (self, other),
                          o.default_params, out)
        if isinstance(other, _SCALARS):
            o = OPS[rsop if rsop and rsop != "swap" else sop]
            return invoke(o, (self,), o.parse_params({"scalar": other}), out)
        if isinstance(other, NDArray):
            raise np_error(op)
        if isinstance(other, (onp.ndarray, list, tuple)):
            from ._creation import array
            return self._np_binary(array(other, ctx=self._ctx), op, sop, rsop, out)
        if other is None and "equal" in op:
            raise TypeError("type %s not supported" % type(other))
        return NotImplemented

    def __add__(self, other):
        return self._np_binary(other, "_npi_add", "_npi_add_scalar")

    def __radd__(self, other):
        return self._np_binary(other, "_npi_add", "_npi_add_scalar", "swap")

    def __iadd__(self, other):
        return self._np_binary(other, "_npi_add", "_npi_add_scalar", out=self)

    def __sub__(self, other):
        return self._np_binary(other, "_npi_subtract", "_npi_subtract_scalar")

    def __rsub__(self, other):
        if isinstance(other, ndarray):
            return self._np_binary(other, "_npi_subtract", None, "swap")
        return self._np_binary(other, "_npi_subtract", None, "_npi_rsubtract_scalar")

    def __isub__(self, other):
        return self._np_binary(other, "_npi_subtract", "_npi_subtract_scalar", out=self)

    def __mul__(self, other):
        return self._np_binary(other, "_npi_multiply", "_npi_multiply_scalar")

    def __rmul__(self, other):
        return self._np_binary(other, "_npi_multiply", "_npi_multiply_scalar", "swap")

    def __imul__(self, other):
        return self._np_binary(other, "_npi_multiply", "_npi_multiply_scalar", out=self)

    def __truediv__(self, other):
        return self._np_binary(other, "_npi_true_divide", "_npi_true_divide_scalar")

    def __rtruediv__(self, other):
        if isinstance(other, ndarray):
            return self._np_binary(other, "_npi_true_divide", None, "swap")
        return self._np_binary(other, "_npi_true_divide", None, "_npi_rtrue_divide_scalar")

    def __itruediv__(self, other):
        return self._np_binary(other, "_npi_true_divide", "_npi_true_divide_scalar", out=self)

    def __mod__(self, other):
        return self._np_binary(other, "_npi_mod", "_npi_mod_scalar")

    def __rmod__(self, other):
        if isinstance(other, ndarray):
            return self._np_binary(other, "_npi_mod", None, "swap")
        return self._np_binary(other, "_npi_mod", None, "_npi_rmod_scalar")

    def __imod__(self, other):
        return self._np_binary(other, "_npi_mod", "_npi_mod_scalar", out=self)

    def __pow__(self, other):
        return self._np_binary(other, "_npi_power", "_npi_power_scalar")

    def __rpow__(self, other):
        if isinstance(other, ndarray):
            return self._np_binary(other, "_npi_power", None, "swap")
        return self._np_binary(other, "_npi_power", None, "_npi_rpower_scalar")

    def __ipow__(self, other):
        return self._np_binary(other, "_npi_power", "_npi_power_scalar", out=self)

    def __matmul__(self, other):
        if not isinstance(other, NDArray):
            return NotImplemented
        return apply("_npi_matmul", (self, other))

    def __rmatmul__(self, other):
        if not isinstance(other, NDArray):
            return NotImplemented
        return apply("_npi_matmul", (other, self))

    def __neg__(self):
        op = OPS["_npi_negative"]
        return invoke(op, (self,), op.default_params)

    def __abs__(self):
        op = OPS["_npi_absolute"]
        return invoke(op, (self,), op.default_params)

    def __invert__(self):
        return apply("_npi_bitwise_not", (self,))

    def __eq__(self, other):
        return self._np_binary(other, "_npi_equal", "_npi_equal_scalar")

    def __ne__(self, other):
        return self._np_binary(other, "_npi_not_equal", "_npi_not_equal_scalar")

    def __gt__(self, other):
        return self._np_binary(other, "_npi_greater", "_npi_greater_scalar")

    def __ge__(self, other):
        return self._np_binary(other, "_npi_greater_equal", "_npi_greater_equal_scalar")

    def __lt__(self, other):
        return self._np_binary(other, "_npi_less", "_npi_less_scalar")

    def __le__(self, other):
        return self._np_binary(other, "_npi_less_equal", "_npi_less_equal_scalar")

    __hash__ = NDArray.__hash__


# Legacy fluent methods that MXNet's np.ndarray refuses (use the mx.np/mx.npx function).
_REFUSED = ("abs arccos arccosh arcsin arcsinh arctan arctanh argmax_channel asscalar "
            "broadcast_axes broadcast_like cbrt ceil cos cosh degrees depth_to_space diag exp "
            "expand_dims expm1 fix flip floor log log10 log1p log2 log_softmax nanprod nansum "
            "norm one_hot ones_like pad pick radians rcbrt reciprocal relu reshape_like rint "
            "rsqrt shape_array sigmoid sign sin sinh size_array slice slice_axis slice_like "
            "softmax softmin space_to_depth split split_v2 sqrt square tan tanh tile topk "
            "tostype trunc zeros_like").split()


def _refused(name):
    def method(self, *args, **kwargs):
        raise AttributeError("mxnet.numpy.ndarray object has no attribute %s (use mx.np.%s "
                             "or mx.npx.%s)" % (name, name, name))
    method.__name__ = name
    return method


for _name in _REFUSED:
    setattr(ndarray, _name, _refused(_name))


def _same_slots(x, cls):
    """A ``cls`` array sharing ``x``'s data, version and autograd slot."""
    y = _wrap(x._data, x._ctx)
    y.__class__ = cls
    y._version = x._share_version()
    y._entry = x._entry
    y._grad = x._grad
    return y


def _as_np_ndarray(self):
    """The same data (and autograd slot) as an ``mx.np.ndarray``."""
    return _same_slots(self, ndarray)


def _as_nd_ndarray(self):
    return self


NDArray.as_np_ndarray = _as_np_ndarray
NDArray.as_nd_ndarray = _as_nd_ndarray


def _rebuild(data, ctx):
    from ._creation import array
    return array(data, ctx=ctx, dtype=data.dtype)

