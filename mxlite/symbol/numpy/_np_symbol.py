"""``_Symbol``: a Symbol with the np interface's semantics (MXNet's
``mxnet.symbol.numpy._Symbol``), what a HybridBlock traces under ``npx.set_np()``.

Operators and methods compose the np ops (``x + y`` is ``_npi_add`` with broadcasting,
``x.reshape(2, -1)`` is ``_np_reshape``); basic indexing is ``slice`` followed by
``_np_squeeze`` for the integer-indexed axes (and ``_npi_expand_dims`` for ``None``).
"""
from ..symbol import Symbol
from ...numpy import _math, _shape

__all__ = ["_Symbol"]


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
    """``x[key]`` for ints, slices and None (NumPy's basic indexing) as graph ops."""
    from ...operator.registry import OPS
    from ..register import op_call
    if not isinstance(key, tuple):
        key = (key,)
    if any(k is Ellipsis for k in key):
        if key.count(Ellipsis) > 1 or key[-1] is not Ellipsis:
            raise IndexError("mx.sym.np: Ellipsis is only supported at the end of an index")
        key = key[:-1]
    if not key:
        return x
    begin, end, step, drop, new = [], [], [], [], []
    axis = out_axis = 0
    for k in key:
        if k is None:
            new.append(out_axis)
            out_axis += 1
            continue
        if isinstance(k, slice):
            begin.append(k.start)
            end.append(k.stop)
            step.append(k.step)
            out_axis += 1
        elif isinstance(k, int):
            begin.append(k)
            end.append(k + 1 if k != -1 else None)
            step.append(None)
            drop.append(axis)
        else:
            raise IndexError("mx.sym.np: only integers, slices, None and a trailing Ellipsis "
                             "index a Symbol, got %r" % (k,))
        axis += 1
    y = op_call(OPS["slice"], [x], {"begin": tuple(begin), "end": tuple(end),
                                    "step": tuple(step)}, hint="slice")
    if drop:
        y = op_call(OPS["_np_squeeze"], [y], {"axis": tuple(drop)}, hint="squeeze")
    for pos in new:
        y = op_call(OPS["_npi_expand_dims"], [y], {"axis": pos}, hint="expand_dims")
    return y
