"""``_Symbol``: a Symbol with the np interface's semantics (MXNet's
``mxnet.symbol.numpy._Symbol``), what a HybridBlock traces under ``npx.set_np()``.

Operators and methods compose the np ops (``x + y`` is ``_npi_add`` with broadcasting,
``x.reshape(2, -1)`` is ``_np_reshape``); basic indexing is ``slice`` followed by
``_npx_reshape`` dropping the integer-indexed axes, as MXNet writes it (and
``_npi_expand_dims`` for ``None``).
"""
import functools

import numpy as onp

from ..symbol import Symbol
from ...numpy import _math, _shape

__all__ = ["_Symbol", "creation_twin", "CREATION"]

# mx.np's creation functions that have a graph op (the others need values: NumPy runs them)
CREATION = ("empty", "zeros", "ones", "full", "arange", "linspace", "eye", "identity",
            "indices")


class _Symbol(Symbol):
    """A Symbol with np semantics (operators broadcast, comparisons give bool)."""
    __slots__ = ()

    def as_nd_ndarray(self):
        """The same outputs as a legacy Symbol."""
        return Symbol(self._outputs)

    def as_np_ndarray(self):
        return self

    def __getitem__(self, key):
        if len(self._outputs) > 1 or isinstance(key, str):
            return Symbol.__getitem__(self, key)
        return _basic_index(self, key)

    def __add__(self, other):
        return _math.add(self, other)

    def __radd__(self, other):
        return _math.add(other, self)

    def __sub__(self, other):
        return _math.subtract(self, other)

    def __rsub__(self, other):
        return _math.subtract(other, self)

    def __mul__(self, other):
        return _math.multiply(self, other)

    def __rmul__(self, other):
        return _math.multiply(other, self)

    def __truediv__(self, other):
        return _math.true_divide(self, other)

    def __rtruediv__(self, other):
        return _math.true_divide(other, self)

    def __mod__(self, other):
        return _math.mod(self, other)

    def __rmod__(self, other):
        return _math.mod(other, self)

    def __pow__(self, other):
        return _math.power(self, other)

    def __rpow__(self, other):
        return _math.power(other, self)

    def __neg__(self):
        return _math.negative(self)

    def __abs__(self):
        return _math.absolute(self)

    def __matmul__(self, other):
        return _shape.matmul(self, other)

    def __eq__(self, other):
        return _math.equal(self, other)

    def __ne__(self, other):
        return _math.not_equal(self, other)

    def __gt__(self, other):
        return _math.greater(self, other)

    def __ge__(self, other):
        return _math.greater_equal(self, other)

    def __lt__(self, other):
        return _math.less(self, other)

    def __le__(self, other):
        return _math.less_equal(self, other)

    __hash__ = Symbol.__hash__

    @property
    def T(self):
        return _shape.transpose(self)

    def reshape(self, *shape, order="C", **kwargs):
        if "newshape" in kwargs or "shape" in kwargs:
            shape = (kwargs.pop("newshape", None) or kwargs.pop("shape"),)
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        return _shape.reshape(self, tuple(shape), order)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (list, tuple))):
            axes = axes[0]
        return _shape.transpose(self, tuple(axes) if axes else None)

    def astype(self, dtype, copy=True):
        from .. import Cast
        return Cast(self, dtype=dtype)


def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    return method


for _fn in (_math.sum, _math.mean, _math.max, _math.min, _math.prod, _math.std, _math.var,
            _math.argmax, _math.argmin, _math.cumsum, _shape.dot, _shape.squeeze,
            _shape.swapaxes, _shape.flip, _shape.repeat, _shape.tile, _shape.clip,
            _shape.ravel):
    setattr(_Symbol, _fn.__name__, _method(_fn))
_Symbol.flatten = _Symbol.ravel


def _basic_index(x, key):
    """``x[key]`` for ints, slices, None and one Ellipsis anywhere (NumPy's basic
    indexing) as graph ops, as MXNet 1.9.1 writes them: ``slice`` on the leading axes,
    then ``_npx_reshape`` with -3 dropping each integer-indexed axis. The axes after
    an Ellipsis are indexed the same way between two ``_np_transpose`` (which reverse
    the axes), since a Symbol's rank is not known while it is traced."""
    as_tuple = isinstance(key, tuple)
    if not as_tuple:
        key = (key,)
    dots = [i for i, k in enumerate(key) if k is Ellipsis]
    if len(dots) > 1:
        raise IndexError("an index can only have a single ellipsis ('...'), got %r" % (key,))
    pre, post = (key[:dots[0]], key[dots[0] + 1:]) if dots else (key, ())
    y = _index_leading(x, pre, as_tuple)
    if any(k is not None for k in post):
        y = _transposed(_index_leading(_transposed(y), post[::-1], as_tuple))
    for pos in _new_axes(pre):
        y = _op("_npi_expand_dims", y, axis=pos)
    for pos in _new_axes(post[::-1]):
        y = _op("_npi_expand_dims", y, axis=-1 - pos)
    return y


def _op(name, *x, **params):
    from ...operator.registry import OPS
    from ..register import op_call
    return op_call(OPS[name], list(x), params, hint=name.split("_", 2)[-1])


def creation_twin(fn):
    """The ``mx.sym.np`` twin of ``mx.np`` creation function ``fn``: the same op
    (``_npi_zeros`` ...), added to the graph as a node without inputs."""
    @functools.wraps(fn.build)
    def twin(*args, **kwargs):
        name, params = fn.build(*args, **kwargs)
        y = _op(name, **{k: v for k, v in params.items() if v is not None})
        return _Symbol(y._outputs)
    twin.__module__ = "mxlite.symbol.numpy"
    return twin


def _transposed(x):
    return _op("_np_transpose", x, axes=None)


def _index_leading(x, key, as_tuple):
    """``x[key]`` for ints and slices (None skipped) on the leading axes; a tuple key
    is reshaped even when no axis drops, as MXNet writes it."""
    begin, end, step, codes = [], [], [], []
    for k in key:
        if k is None:
            continue
        if isinstance(k, slice):
            if k.step == 0:
                raise ValueError("slice step cannot be zero")
            begin.append(k.start)
            end.append(k.stop)
            step.append(k.step)
            codes.append(-2)
        elif isinstance(k, (int, onp.integer)) and not isinstance(k, bool):
            k = int(k)
            # MXNet's form: a negative index walks backwards, so its end stays in range
            begin.append(k)
            end.append(k + 1 if k >= 0 else k - 1)
            step.append(1 if k >= 0 else -1)
            codes.append(-3)
        else:
            raise IndexError("mx.sym.np: only integers, slices, None and one Ellipsis "
                             "index a Symbol, got %r" % (k,))
    if not codes:
        return x
    y = _op("slice", x, begin=tuple(begin), end=tuple(end), step=tuple(step))
    if -3 in codes or as_tuple:
        y = _op("_npx_reshape", y, newshape=tuple(codes) + (-4,))
    return y


def _new_axes(key):
    """Where the None entries of ``key`` put new axes in the result (from its start)."""
    out, pos = [], 0
    for k in key:
        if k is None:
            out.append(pos)
        if k is None or isinstance(k, slice):
            pos += 1
    return out
