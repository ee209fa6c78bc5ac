"""The NDArray: a backend array, its Context, and its autograd slot.

Arithmetic, comparisons, indexing and the fluent methods all go through the
operator registry (``mxlite.operator.invoke``), so that they are recorded by
autograd exactly like ``mx.nd.<op>`` calls.
"""
import numpy as np

from ..base import MXNetError, np_dtype
from ..context import Context, current_context
from .. import autograd as _autograd

__all__ = ["NDArray", "array", "empty", "from_dlpack", "to_dlpack_for_read",
           "to_dlpack_for_write"]

py_slice = slice    # MXNet's name for the built-in slice (its module shadows ``slice``)

# Storage type ids as MXNet numbers them (``__storage_type__`` attributes hold the id).
_STORAGE_TYPE_UNDEFINED, _STORAGE_TYPE_DEFAULT = -1, 0
_STORAGE_TYPE_ROW_SPARSE, _STORAGE_TYPE_CSR = 1, 2
_STORAGE_TYPE_STR_TO_ID = {"undefined": _STORAGE_TYPE_UNDEFINED,
                           "default": _STORAGE_TYPE_DEFAULT,
                           "row_sparse": _STORAGE_TYPE_ROW_SPARSE, "csr": _STORAGE_TYPE_CSR}
_STORAGE_TYPE_ID_TO_STR = {v: k for k, v in _STORAGE_TYPE_STR_TO_ID.items()}

_reg = None          # mxlite.operator.registry, bound when it finishes loading
_object_new = object.__new__
_float32 = np.dtype(np.float32)


def _wrap(data, ctx, cls=None):
    """A new NDArray (or ``cls``, an NDArray class) around backend array ``data`` on
    ``ctx`` (no copy)."""
    a = _object_new(cls or NDArray)
    a._data = data
    a._ctx = ctx
    a._entry = None
    a._version = None
    a._grad = None
    return a


def _write_into(out, y):
    """Write result ``y`` into the existing NDArray ``out`` (the ``out=`` keyword)."""
    if not isinstance(out, NDArray):
        raise TypeError("out must be an NDArray, got %s" % type(out).__name__)
    if out._data.shape != y._data.shape:
        raise MXNetError("out: result has shape %s but out has shape %s"
                         % (y._data.shape, out._data.shape))
    if out._data is not y._data:
        out._data[...] = y._data
    v = out._version
    if v is not None:
        v[0] += 1
    if y._entry is not None:
        out._entry = y._entry
    elif out._entry is not None and out._entry[0].op is not None:
        out._entry = None


def _op(name):
    return _reg.OPS[name]


def _invoke(name, inputs, kwargs=None, out=None):
    op = _reg.OPS[name]
    return _reg.invoke(op, inputs, op.parse_params(kwargs) if kwargs else op.default_params, out)


class NDArray:
    """An n-dimensional array on a device, as ``mxnet.nd.NDArray``.

    Create one with :func:`mxlite.nd.array`, ``mx.nd.zeros`` and the like.

    Examples
    --------
    >>> x = mx.nd.array([[1, 2]])
    >>> x
    <BLANKLINE>
    [[1. 2.]]
    <NDArray 1x2 @cpu(0)>
    """
    __slots__ = ("_data", "_ctx", "_entry", "_version", "_grad", "__weakref__")
    __array_priority__ = 1000.0
    _np = False         # True for mx.np.ndarray

    # -- basic attributes ------------------------------------------------------
    @property
    def shape(self):
        return self._data.shape

    @property
    def dtype(self):
        return self._data.dtype.type

    @property
    def size(self):
        return self._data.size

    @property
    def ndim(self):
        return self._data.ndim

    @property
    def context(self):
        return self._ctx

    ctx = context

    # whether the class reports a sparse storage type (mx.nd.sparse's classes)
    _sparse = False

    @property
    def stype(self):
        return "default"

    @property
    def writable(self):
        return True

    @property
    def T(self):
        if self.ndim < 2:
            return self
        op = _reg.OPS["transpose"]
        return _reg.invoke(op, (self,), op.default_params, copy_views=True)

    @property
    def grad(self):
        """The gradient buffer written by ``backward`` (None before ``attach_grad``)."""
        return self._grad

    @property
    def handle(self):
        return self

    @property
    def _fresh_grad(self):
        """MXNet's flag: whether ``backward`` wrote this (marked) array's gradient since
        a Trainer last used it."""
        return _autograd.is_fresh(self._entry)

    @_fresh_grad.setter
    def _fresh_grad(self, value):
        _autograd.set_fresh(self._entry, value)

    def _share_version(self):
        v = self._version
        if v is None:
            v = self._version = [0]
        return v

    def _bump(self):
        v = self._version
        if v is not None:
            v[0] += 1

    # -- conversion ------------------------------------------------------------
    def asnumpy(self):
        """A NumPy copy of the data."""
        d = self._data
        if self._ctx.device_typeid == 2:
            return d.get()
        return np.array(d)

    def asscalar(self):
        """The value of a one-element array as a NumPy scalar."""
        if self.size != 1:
            raise ValueError("The current array is not a scalar: asscalar needs shape (1,) "
                             "or one element, got shape %s" % (self.shape,))
        return self.asnumpy().reshape(())[()]

    def item(self):
        return self.asscalar().item()

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def astype(self, dtype, copy=True):
        """A copy cast to ``dtype`` (self when ``copy=False`` and the dtype already matches)."""
        dt = np_dtype(dtype, "astype")
        if not copy and self._data.dtype == dt:
            return self
        return _invoke("Cast", (self,), {"dtype": dt})

    def copy(self):
        """A deep copy on the same context."""
        return self.copyto(self._ctx)

    def copyto(self, other):
        """Copy into ``other``: an NDArray (written in place) or a Context (a new array)."""
        if isinstance(other, Context):
            return _invoke("_copyto", (self,), {"ctx": other})
        if isinstance(other, NDArray):
            if other is self:
                return other
            if other.shape != self.shape:
                raise ValueError("copyto: cannot copy an array of shape %s into one of shape %s"
                                 % (self.shape, other.shape))
            y = _invoke("_copyto", (self,), {"ctx": other._ctx})
            _write_into(other, y)
            return other
        raise TypeError("copyto: expected an NDArray or Context, got %s" % type(other).__name__)

    def as_in_context(self, context):
        """This array if it is on ``context``, else a copy there."""
        if self._ctx == context:
            return self
        return self.copyto(context)

    as_in_ctx = as_in_context

    def tostype(self, stype):
        """This array in storage ``stype``: itself for ``'default'``, else a
        ``RowSparseNDArray``/``CSRNDArray`` copy (see :mod:`mxlite.nd.sparse`)."""
        if stype == "default":
            return self
        from .sparse import cast_storage
        return cast_storage(self, stype)

    def broadcast_to(self, shape):
        """Broadcast to ``shape``; unlike the op, missing leading axes count as 1
        (MXNet's method: a (2,) array broadcasts to (3, 2))."""
        from .. import nd
        shape = tuple(shape)
        cur = (1,) * (len(shape) - self.ndim) + self.shape
        if len(shape) < self.ndim or any(c not in (1, s) for c, s in zip(cur, shape)):
            raise ValueError("operands could not be broadcast together with remapped shapes"
                             "[original->remapped]: %s and requested shape %s"
                             % (self.shape, shape))
        x = self.reshape(cur) if cur != self.shape else self
        return nd.broadcast_to(x, shape=shape)

    def broadcast_like(self, other):
        """Broadcast to ``other``'s shape, with the rules of :meth:`broadcast_to`."""
        return self.broadcast_to(other.shape)

    def detach(self):
        """The same data, cut from the autograd graph."""
        y = _wrap(self._data, self._ctx)
        y.__class__ = self.__class__
        y._version = self._share_version()
        return y

    def wait_to_read(self):
        if self._ctx.device_typeid == 2:
            self._ctx.array_module().cuda.get_current_stream().synchronize()

    wait_to_write = wait_to_read

    # -- autograd --------------------------------------------------------------
    def attach_grad(self, grad_req="write", stype=None):
        """Allocate a gradient buffer and mark this array as a variable for autograd."""
        if grad_req not in ("write", "add", "null"):
            raise ValueError("attach_grad: grad_req must be 'write', 'add' or 'null', got %r"
                             % (grad_req,))
        xp = self._ctx.xp or self._ctx.array_module()
        grad = _wrap(xp.zeros(self._data.shape, self._data.dtype), self._ctx)
        stype = self.stype if stype is None else stype   # as MXNet: the array's own
        if stype != "default":
            from .sparse import cast_storage
            grad = cast_storage(grad, stype)
        _autograd.mark_variables([self], [grad], grad_req)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True):
        """Compute the gradient of this array with respect to the marked variables."""
        _autograd.backward([self], None if out_grad is None else [out_grad],
                           retain_graph=retain_graph, train_mode=train_mode)

    # -- shape -----------------------------------------------------------------
    def reshape(self, *shape, **kwargs):
        """A view of the data with a new shape, with MXNet's special codes 0, -1, -2,
        -3, -4 and ``reverse``.

        ``x.reshape(2, 3)``, ``x.reshape((2, 3))`` and ``x.reshape(shape=(2, 3))`` agree.
        A shape with another number of elements raises ValueError.
        """
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        unknown = [k for k in kwargs if k not in ("shape", "reverse")]
        if unknown:
            raise TypeError("Got unknown keywords in reshape: %s. Accepted keyword arguments "
                            "are 'shape' and 'reverse'." % ", ".join(unknown))
        if shape:
            if "shape" in kwargs:
                raise TypeError("reshape: shape given both positionally and as a keyword")
            kwargs["shape"] = tuple(shape)
        if kwargs.get("shape") is not None:
            from ..operator.tensor.shape import ReshapeSizeError, infer_reshape
            try:
                infer_reshape(self.shape, tuple(kwargs["shape"]), kwargs.get("reverse", False))
            except ReshapeSizeError as e:      # a ValueError, as in MXNet
                raise ReshapeSizeError("Cannot reshape array of size %d into shape %s: %s"
                                 % (self.size, tuple(kwargs["shape"]), e)) from None
        return _invoke("Reshape", (self,), kwargs)

    def _reshaped(self, op_name, kwargs, inplace):
        """``op_name``'s result: a view of this array with ``inplace``, else a copy."""
        y = _invoke(op_name, (self,), kwargs)
        return self.reshape(y.shape) if inplace else y.copy()

    def flatten(self, inplace=False):
        """Shape ``(d0, d1*...*dk)``: a copy, or with ``inplace`` a view of this array."""
        return self._reshaped("Flatten", None, inplace)

    def expand_dims(self, axis, inplace=False):
        """A new axis of size 1 at ``axis``: a copy, or with ``inplace`` a view."""
        return self._reshaped("expand_dims", {"axis": axis}, inplace)

    def squeeze(self, axis=None, inplace=False):
        """Axes of size 1 removed (all of them when ``axis`` is None): a copy, or with
        ``inplace`` a view."""
        return self._reshaped("squeeze", {"axis": axis}, inplace)

    def slice_assign(self, rhs, begin, end, step):
        """Write NDArray ``rhs`` into ``self[begin:end:step]`` (per axis); returns self."""
        return _invoke("_slice_assign", (self, rhs),
                       {"begin": begin, "end": end, "step": step}, out=self)

    def slice_assign_scalar(self, value, begin, end, step):
        """Write the number ``value`` into ``self[begin:end:step]``; returns self."""
        return _invoke("_slice_assign_scalar", (self,),
                       {"scalar": value, "begin": begin, "end": end, "step": step}, out=self)

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """Whether slicing an array of ``shape`` with ``slc_key`` (one slice per axis)
        selects one contiguous block of its (row-major) memory.

        Going from the last axis to the first: once an axis keeps a proper subset,
        every axis before it must keep at most one element; an axis keeping several
        elements must have step 1.
        """
        if len(slc_key) != len(shape):
            raise ValueError("_basic_indexing_slice_is_contiguous: %d slices for %d axes"
                             % (len(slc_key), len(shape)))
        lens = [len(range(*slc.indices(n))) for slc, n in zip(slc_key, shape)]
        if int(np.prod(lens)) <= 1:
            return True
        subset = False
        for slc, n, k in reversed(list(zip(slc_key, shape, lens))):
            if k > 1 and (slc.indices(n)[2] != 1 or subset):
                return False
            subset = subset or k < n
        return True

    def __len__(self):
        if self.ndim == 0:
            raise TypeError("len() of a 0-d NDArray")
        return self._data.shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        n = self.size
        if n == 0:
            return False
        if n == 1:
            return bool(self.asnumpy().reshape(-1)[0])
        raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")

    __nonzero__ = __bool__

    # -- printing and pickling -------------------------------------------------
    def __repr__(self):
        shape_info = "x".join(str(d) for d in self.shape)
        return "\n%s\n<%s %s @%s>" % (str(self.asnumpy()), type(self).__name__, shape_info,
                                      self._ctx)

    __str__ = __repr__

    def __reduce__(self):
        return (_rebuild, (self.asnumpy(), self._ctx))

    def __getstate__(self):
        """``{'handle': bytearray}``: the array as one MXNet raw record."""
        from .io import _serialize_ndarray
        return {"handle": bytearray(_serialize_ndarray(self))}

    def __setstate__(self, state):
        """Take the data of a ``__getstate__`` record (MXNet's too; one saved on a GPU
        loads on the CPU when there is no GPU)."""
        from .io import _deserialize_ndarray
        handle = state.get("handle") if isinstance(state, dict) else None
        if handle is None:
            raise ValueError("NDArray.__setstate__: expected {'handle': bytes}, got %r"
                             % (state,))
        src = _deserialize_ndarray(bytes(handle))
        self._data, self._ctx = src._data, src._ctx
        self._entry = self._version = self._grad = None

    # -- DLPack ------------------------------------------------------------------
    def to_dlpack_for_read(self):
        """A DLPack capsule sharing this array's memory, for reading."""
        from .interop import _dlpack_capsule
        self.wait_to_read()
        return _dlpack_capsule(self._data)

    def to_dlpack_for_write(self):
        """A DLPack capsule sharing this array's memory, for writing."""
        from .interop import _dlpack_capsule
        self.wait_to_write()
        return _dlpack_capsule(self._data)

    def __hash__(self):
        return id(self) // 16

    # -- indexing --------------------------------------------------------------
    def __getitem__(self, key):
        key, view = _index_key(key, self.shape)
        op = _reg.OPS["_getitem"]
        return _reg.invoke(op, (self,), _reg.Params(op, {"key": key, "view": view}))

    def __setitem__(self, key, value):
        key, _ = _index_key(key, self.shape)
        scalar = isinstance(value, (int, float, bool, np.generic))
        if not scalar and not isinstance(value, NDArray):
            a = np.asarray(value)
            if a.dtype.kind == "O":
                raise TypeError("NDArray.__setitem__: cannot assign a value of type %s"
                                % type(value).__name__)
            value = array(a, ctx=self._ctx, dtype=self._data.dtype)
        elif not scalar and value._ctx != self._ctx:
            value = value.as_in_context(self._ctx)
        if _autograd._state.recording and (
                self._entry is not None or (not scalar and value._entry is not None)):
            # Recorded: x[key] = v becomes an op whose result is written into x.
            op = _reg.OPS["_setitem"]
            if scalar:
                _reg.invoke(op, (self,), _reg.Params(op, {"key": key, "scalar": float(value)}),
                            out=self)
            else:
                _reg.invoke(op, (self, value), _reg.Params(op, {"key": key, "scalar": None}),
                            out=self)
            return
        try:
            if scalar:
                self._data[key] = value
            else:
                self._data[key] = _fit_value(self._data[key].shape, value._data)
        except (ValueError, IndexError) as e:
            raise MXNetError("NDArray.__setitem__: cannot assign a value of shape %s to index "
                             "%r of an array of shape %s: %s"
                             % (np.shape(value), key, self.shape, e)) from None
        self._bump()
        if self._entry is not None and self._entry[0].op is not None:
            self._entry = None

    # -- arithmetic --------------------------------------------------------------
    def _binary(self, other, op, scalar_op, out=None, reverse=False):
        if isinstance(other, NDArray):      # the common case first: one isinstance
            return _reg.invoke(_reg.OPS[op], (other, self) if reverse else (self, other),
                               _NO_PARAMS[op], out)
        if isinstance(other, (int, float, np.number, bool, np.bool_)):
            sop = _reg.OPS[scalar_op]
            return _reg.invoke(sop, (self,), sop.parse_params({"scalar": other}), out)
        if not isinstance(other, np.ndarray):
            return NotImplemented
        return self._binary(array(other, ctx=self._ctx, dtype=self.dtype), op, scalar_op, out,
                            reverse)

    def __add__(self, other):
        return self._binary(other, "broadcast_add", "_plus_scalar")

    __radd__ = __add__

    def __iadd__(self, other):
        return self._binary(other, "broadcast_add", "_plus_scalar", out=self)

    def __sub__(self, other):
        return self._binary(other, "broadcast_sub", "_minus_scalar")

    def __rsub__(self, other):
        return self._binary(other, "broadcast_sub", "_rminus_scalar", reverse=True)

    def __isub__(self, other):
        return self._binary(other, "broadcast_sub", "_minus_scalar", out=self)

    def __mul__(self, other):
        return self._binary(other, "broadcast_mul", "_mul_scalar")

    __rmul__ = __mul__

    def __imul__(self, other):
        return self._binary(other, "broadcast_mul", "_mul_scalar", out=self)

    def __truediv__(self, other):
        return self._binary(other, "broadcast_div", "_div_scalar")

    def __rtruediv__(self, other):
        return self._binary(other, "broadcast_div", "_rdiv_scalar", reverse=True)

    def __itruediv__(self, other):
        return self._binary(other, "broadcast_div", "_div_scalar", out=self)

    __div__ = __truediv__
    __rdiv__ = __rtruediv__
    __idiv__ = __itruediv__

    def __mod__(self, other):
        return self._binary(other, "broadcast_mod", "_mod_scalar")

    def __rmod__(self, other):
        return self._binary(other, "broadcast_mod", "_rmod_scalar", reverse=True)

    def __imod__(self, other):
        return self._binary(other, "broadcast_mod", "_mod_scalar", out=self)

    def __pow__(self, other):
        return self._binary(other, "broadcast_power", "_power_scalar")

    def __rpow__(self, other):
        return self._binary(other, "broadcast_power", "_rpower_scalar", reverse=True)

    def __ipow__(self, other):
        return self._binary(other, "broadcast_power", "_power_scalar", out=self)

    def __neg__(self):
        return _reg.invoke(_reg.OPS["negative"], (self,), _NO_PARAMS["negative"])

    def __pos__(self):
        return self

    def __abs__(self):
        return _reg.invoke(_reg.OPS["abs"], (self,), _NO_PARAMS["abs"])

    def __eq__(self, other):
        if other is None:
            return False
        return self._binary(other, "broadcast_equal", "_equal_scalar")

    def __ne__(self, other):
        if other is None:
            return True
        return self._binary(other, "broadcast_not_equal", "_not_equal_scalar")

    def __gt__(self, other):
        return self._binary(other, "broadcast_greater", "_greater_scalar")

    def __ge__(self, other):
        return self._binary(other, "broadcast_greater_equal", "_greater_equal_scalar")

    def __lt__(self, other):
        return self._binary(other, "broadcast_lesser", "_lesser_scalar")

    def __le__(self, other):
        return self._binary(other, "broadcast_lesser_equal", "_lesser_equal_scalar")


_NO_PARAMS = {}


def _rebuild(data, ctx):
    return array(data, ctx=ctx, dtype=data.dtype)


def _bind_registry(registry):
    """Called once the operator registry has loaded."""
    global _reg
    _reg = registry


def _default_params_table():
    for name in ("broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_div",
                 "broadcast_mod", "broadcast_power", "broadcast_equal", "broadcast_not_equal",
                 "broadcast_greater", "broadcast_greater_equal", "broadcast_lesser",
                 "broadcast_lesser_equal", "negative", "abs"):
        _NO_PARAMS[name] = _reg.OPS[name].default_params


# -- indexing helpers -----------------------------------------------------------

def _index_key(key, shape):
    """Normalise an index into NumPy form; tell whether MXNet returns a view.

    As MXNet: basic indexing (ints, slices, None, Ellipsis) gives a view when the
    selected elements form one contiguous block of memory, and every other index a
    copy.
    """
    if isinstance(key, NDArray):
        key = _index_array(key)
    elif isinstance(key, tuple):
        key = tuple(_index_array(k) if isinstance(k, NDArray) else
                    (np.asarray(k) if isinstance(k, list) else k) for k in key)
    elif isinstance(key, list):
        key = np.asarray(key)
    if isinstance(key, np.ndarray) and key.dtype.kind == "f":
        key = key.astype(np.int64)
    return key, _basic_view(key, shape)


def _basic_view(key, shape):
    """Whether basic index ``key`` selects a contiguous block (False for advanced ones)."""
    items = key if isinstance(key, tuple) else (key,)
    if not all(k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice))
               and not isinstance(k, (bool, np.bool_)) for k in items):
        return False
    items = [k for k in items if k is not None]
    if items.count(Ellipsis) > 1 or len(items) - items.count(Ellipsis) > len(shape):
        return False
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items[i:i + 1] = [slice(None)] * (len(shape) - len(items) + 1)
    items += [slice(None)] * (len(shape) - len(items))
    slices = []
    for k, n in zip(items, shape):
        if isinstance(k, slice):
            slices.append(k)
        elif -n <= k < n:
            slices.append(slice(int(k) % n, int(k) % n + 1))
        else:
            return False            # out of range: NumPy raises the error
    return NDArray._basic_indexing_slice_is_contiguous(slices, shape)


def _fit_value(target_shape, v):
    from ..operator.tensor.indexing import fit_value
    return fit_value(target_shape, v)


def _index_array(k):
    a = k.asnumpy()
    if a.dtype.kind == "f":
        a = a.astype(np.int64)
    return a


# -- creation -------------------------------------------------------------------

def array(source_array, ctx=None, dtype=None):
    """Create an NDArray from a list, NumPy array, scalar or NDArray (a copy).

    The dtype is ``dtype`` if given, else the source's dtype for an NDArray, else
    float32 (NumPy arrays included, as in MXNet 1.x).

    Examples
    --------
    >>> mx.nd.array([1, 2]).dtype
    <class 'numpy.float32'>
    """
    if ctx is None:
        ctx = current_context()
    if isinstance(source_array, NDArray):
        dt = np_dtype(dtype, "array") if dtype is not None else source_array._data.dtype
        src = source_array.asnumpy()
    else:
        # NOTE: as in MXNet 1.x, NumPy arrays of any dtype become float32 unless
        # dtype is given (only NDArray sources keep their dtype).
        dt = np_dtype(dtype, "array") if dtype is not None else _float32
        src = source_array
        if hasattr(src, "__cuda_array_interface__"):
            if ctx.device_typeid == 2:      # device to device: a copy on the GPU
                return _wrap(ctx.array_module().array(src, dtype=dt), ctx)
            src = src.get()
    try:
        data = np.array(src, dtype=dt)
    except (ValueError, TypeError) as e:
        raise TypeError("array: cannot make an NDArray from %s: %s"
                        % (type(source_array).__name__, e)) from None
    if data.dtype.kind == "O":
        raise TypeError("array: cannot make an NDArray from %s" % type(source_array).__name__)
    if ctx.device_typeid == 2:
        data = ctx.array_module().asarray(data)
    return _wrap(data, ctx)


def empty(shape, ctx=None, dtype=None):
    """An uninitialised (here: zero-filled) array of ``shape``."""
    if ctx is None:
        ctx = current_context()
    if isinstance(shape, int):
        shape = (shape,)
    xp = ctx.xp or ctx.array_module()
    return _wrap(xp.zeros(tuple(shape), np_dtype(dtype, "empty")), ctx)


# Fluent methods: ``x.sum(axis=1)`` is ``mx.nd.sum(x, axis=1)``.
FLUENT_METHODS = (
    "abs arccos arccosh arcsin arcsinh arctan arctanh argmax argmax_channel argmin argsort "
    "broadcast_axes broadcast_like broadcast_to cbrt ceil clip cos cosh degrees depth_to_space "
    "diag exp expm1 fix flip floor log log10 log1p log2 log_softmax max mean "
    "min nanprod nansum norm one_hot ones_like pad pick prod radians rcbrt reciprocal relu "
    "repeat reshape_like rint round rsqrt shape_array sigmoid sign sin sinh size_array slice "
    "slice_axis slice_like softmax softmin sort space_to_depth split split_v2 sqrt square sum "
    "swapaxes take tan tanh tile topk transpose trunc zeros_like"
).split()


def _fluent(name):
    def method(self, *args, **kwargs):
        from .. import nd
        return getattr(nd, name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = "Fluent form of ``mx.nd.%s(self, ...)``." % name
    return method


for _name in FLUENT_METHODS:
    if not hasattr(NDArray, _name):
        setattr(NDArray, _name, _fluent(_name))


# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "from_dlpack": "mxlite.nd.interop",
    "from_numpy": "mxlite.nd.interop",
    "to_dlpack_for_read": "mxlite.nd.interop",
    "to_dlpack_for_write": "mxlite.nd.interop",
    "add": "mxlite.nd",
    "arange": "mxlite.nd",
    "concatenate": "mxlite.nd",
    "divide": "mxlite.nd",
    "equal": "mxlite.nd",
    "eye": "mxlite.nd",
    "full": "mxlite.nd",
    "get_indexing_dispatch_code": "mxlite.nd.extras",
    "get_oshape_of_gather_nd_op": "mxlite.nd.extras",
    "greater": "mxlite.nd",
    "greater_equal": "mxlite.nd",
    "histogram": "mxlite.nd",
    "imdecode": "mxlite.nd.extras",
    "indexing_key_expand_implicit_axes": "mxlite.nd.extras",
    "lesser": "mxlite.nd",
    "lesser_equal": "mxlite.nd",
    "linspace": "mxlite.nd",
    "logical_and": "mxlite.nd",
    "logical_or": "mxlite.nd",
    "logical_xor": "mxlite.nd",
    "maximum": "mxlite.nd",
    "minimum": "mxlite.nd",
    "modulo": "mxlite.nd",
    "moveaxis": "mxlite.nd",
    "multiply": "mxlite.nd",
    "not_equal": "mxlite.nd",
    "onehot_encode": "mxlite.nd",
    "ones": "mxlite.nd",
    "power": "mxlite.nd",
    "split_v2": "mxlite.nd",
    "subtract": "mxlite.nd",
    "true_divide": "mxlite.nd",
    "waitall": "mxlite.nd",
    "zeros": "mxlite.nd",
})
