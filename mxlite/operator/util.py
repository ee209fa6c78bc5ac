"""Small helpers shared by op declarations."""
from collections.abc import Sequence

from ..base import MXNetError, check_nbytes


def unbroadcast(gx, shape):
    """Sum gradient ``gx`` down to ``shape`` (undo broadcasting); an NDArray or a raw
    array in, the same kind out."""
    if gx.shape == shape:
        return gx
    extra = len(gx.shape) - len(shape)
    axes = tuple(range(extra)) + tuple(i + extra for i, d in enumerate(shape)
                                       if d == 1 and gx.shape[i + extra] != 1)
    if axes:
        gx = gx.sum(axis=axes, keepdims=True)
    return gx.reshape(shape) if gx.shape != shape else gx


def same_dtype(name, a, b):
    if a.dtype != b.dtype:
        raise MXNetError("%s: inputs have different dtypes %s and %s; cast one with astype()"
                         % (name, a.dtype, b.dtype))


def norm_axis(axis, ndim, name="axis"):
    """An axis in [0, ndim), with MXNet's error for out-of-range values."""
    if not -ndim <= axis < max(ndim, 1):
        raise MXNetError("%s %d is out of range for an array of %d dimension(s)" % (name, axis, ndim))
    return axis % ndim if ndim else 0


def nonempty_axes(x, axes, what="reduce"):
    """Raise unless every axis in ``axes`` of array ``x`` has some elements: a max, min or
    arg-extreme of nothing has no value (MXNet refuses it as well)."""
    for a in axes:
        if x.shape[a] == 0:
            raise MXNetError("data expected a non-empty axis %d to %s, got shape %s"
                             % (a, what, tuple(x.shape)))


def fits_memory(what, nbytes):
    """A ``check``: the ``nbytes(p, *x)`` the op allocates fit this machine's memory, or an
    error naming the param ``what`` (fail at once, not with a bare MemoryError or after
    minutes of swapping)."""
    def check(p, *x):
        check_nbytes(check.op.name, "%s=%s" % (what, getattr(p, what)), nbytes(p, *x))
    check.op = None     # set by Op
    return check


def norm_axes(axis, ndim, exclude=False):
    """Axes of a reduction as a sorted tuple: None means all; ``exclude`` inverts."""
    if axis is None or axis == ():
        axes = tuple(range(ndim))
        if exclude:
            axes = () if axis is None else axes
        return axes
    if isinstance(axis, int):
        a = norm_axis(axis, ndim)
        if not exclude:
            return (a,)
        return tuple(i for i in range(ndim) if i != a)
    axes = tuple(sorted({norm_axis(a, ndim) for a in axis}))
    if exclude:
        axes = tuple(i for i in range(ndim) if i not in axes)
    return axes


def fill_missing(gy, y):
    """Output gradients ``gy`` with zeros where none came (None), for a rule of an op
    with several outputs that reads each one's gradient."""
    from .. import nd
    return [nd.zeros_like(b) if g is None else g for g, b in zip(gy, y)]


def raw_data(a):
    """The backend array under ``a``: a gradient rule sees NDArrays when its backward is
    recorded and raw arrays when it is not (see ``autograd.node_backward``)."""
    from ..nd.ndarray import NDArray
    return a._data if isinstance(a, NDArray) else a


_DEVICE_ADD_AT = frozenset(("int32", "int64", "uint32", "uint64", "float16", "float32",
                            "float64"))


def add_at(xp, target, key, values):
    """``xp.add.at(target, key, values)``, the scatter-add of gradient rules. CuPy's
    ``add.at`` takes only the dtypes above: bool and the small integers are summed in
    int64 there and cast back, which gives NumPy's sums in the dtype (wrapped for the
    integers, True where any True for bool)."""
    if xp.__name__ == "numpy" or target.dtype.name in _DEVICE_ADD_AT:
        xp.add.at(target, key, values)
    else:
        _add_at_wide(xp, target, key, values)


def _add_at_wide(xp, target, key, values):
    wide = target.astype("int64")
    xp.add.at(wide, key, xp.asarray(values).astype("int64"))
    target[...] = wide.astype(target.dtype)


def host(a):
    """A raw backend array (NumPy or CuPy), or a scalar, as a NumPy array: GPU data is
    copied to the host. For the steps that run on the host whatever the device (a
    histogram's search, a sampler's rejection loop)."""
    import numpy as np
    return a.get() if hasattr(a, "__cuda_array_interface__") else np.asarray(a)


def const_like(like, arr):
    """NumPy ``arr`` as a constant beside ``like`` in a gradient rule: on its device, and
    an NDArray (outside the graph) when ``like`` is one, else a raw array."""
    from ..nd.ndarray import NDArray, _wrap
    from .registry import array_module_of
    if isinstance(like, NDArray):
        ctx = like._ctx
        return _wrap((ctx.xp or ctx.array_module()).asarray(arr), ctx)
    return array_module_of(like).asarray(arr)


def context_of(a):
    """The Context of an NDArray or of a raw backend array."""
    from ..nd.ndarray import NDArray
    from .registry import context_of_raw
    return a.context if isinstance(a, NDArray) else context_of_raw(a)


def generator_of(a):
    """The random generator of the device ``a`` (an NDArray or a raw array) is on:
    ``mx.random.seed`` makes its draws repeat."""
    from .. import random
    return random.get_generator(context_of(a))


def detached(a):
    """``a`` cut from the autograd graph (a raw array has none)."""
    return a.detach() if hasattr(a, "detach") else a


def identity_grad(p, x, y, gy, need):
    """Gradient rule of ops that pass their one input through (copies, casts of storage)."""
    return [gy[0]]


def zeros_grad(p, x, y, gy, need):
    """Gradient rule of piecewise-constant ops (floor, sign, ...): zero for every input."""
    from .. import nd
    return [nd.zeros_like(xi) for xi in x]


def no_second_order(name):
    """Gradient rule of an op's registered backward op: second-order gradients through
    ``name`` are not supported (MXNet has none either)."""
    def rule(p, x, y, gy, need):
        raise MXNetError("%s: second-order gradients are not supported (MXNet has none "
                         "either)" % name)
    return rule


class PerItemNames(Sequence):
    """The input names of an op that takes ``names`` for each of ``count`` items and then
    ``tail``: ``weight_0, grad_0, weight_1, grad_1, ..., lrs, wds``. Names are made on
    demand, so a call with a huge count param (``num_weights=10**9``) is refused by
    comparing lengths, before two billion names would be built."""

    def __init__(self, names, count, tail=()):
        self.names, self.count, self.tail = tuple(names), count, tuple(tail)

    def __len__(self):
        return len(self.names) * self.count + len(self.tail)

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        body = len(self.names) * self.count
        if i >= body:
            return self.tail[i - body]
        item, k = divmod(i, len(self.names))
        return "%s_%d" % (self.names[k], item)

    def __contains__(self, name):
        if name in self.tail:
            return True
        stem, _, index = str(name).rpartition("_")
        return (stem in self.names and index.isdigit() and str(int(index)) == index
                and int(index) < self.count)


def per_item_names(names, count_param, tail=()):
    """``inputs=`` of an op taking ``names`` per item, ``p.<count_param>`` items, then
    ``tail`` (a :class:`PerItemNames` for the parsed params)."""
    return lambda p: PerItemNames(names, getattr(p, count_param), tail)
