"""Shape manipulation, joining, products, sorting and selection of ``mx.np``.

Differentiable ones run registry ops (``_np_reshape``, ``_npi_concatenate``,
``_np_dot`` ...), ``unique`` and ``nonzero`` too (MXNet's ``_npi_unique`` and
``_npx_nonzero``, recorded with zero gradients) and ``argsort`` (``_npi_argsort``).
"""
import numpy as onp

from ..nd.ndarray import NDArray
from ._ndarray import ndarray, apply
from ._fallback import fallback

__all__ = ["reshape", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims", "ravel",
           "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack", "row_stack",
           "append", "split", "array_split", "hsplit", "vsplit", "dsplit", "tile", "repeat",
           "flip", "fliplr", "flipud", "where", "clip", "dot", "matmul", "broadcast_to",
           "broadcast_arrays", "atleast_1d", "atleast_2d", "atleast_3d", "copy", "sort",
           "argsort", "unique", "nonzero", "take", "meshgrid", "shape", "ndim", "size",
           "may_share_memory", "shares_memory", "rollaxis"]


def _np(x):
    if isinstance(x, NDArray) or type(x).__name__ in ("Symbol", "_Symbol") or \
            getattr(x, "_deferred_param", False):
        return x
    from ._creation import array
    return array(x)


def _np_like(x, like):
    """``_np(x)``, with host data (a list, a NumPy array) made on ``like``'s context."""
    if not isinstance(like, NDArray) or isinstance(x, NDArray):
        return _np(x)
    from ._creation import array
    return array(x, ctx=like.ctx)


def reshape(a, newshape, order="C"):
    """NumPy's reshape (one -1 allowed; MXNet's codes are ``npx.reshape``'s)."""
    if isinstance(newshape, int):
        newshape = (newshape,)
    return apply("_np_reshape", (_np(a),), {"newshape": tuple(newshape), "order": order},
                 py_name="reshape")


def ravel(x, order="C"):
    return reshape(x, (-1,))


def transpose(a, axes=None):
    return apply("_np_transpose", (_np(a),), {"axes": None if axes is None else tuple(axes)},
                 py_name="transpose")


def swapaxes(a, axis1, axis2):
    return apply("_npi_swapaxes", (_np(a),), {"dim1": axis1, "dim2": axis2}, py_name="swapaxes")


def moveaxis(a, source, destination):
    a = _np(a)
    src = [s % a.ndim for s in (source if isinstance(source, (list, tuple)) else [source])]
    dst = [d % a.ndim for d in (destination if isinstance(destination, (list, tuple))
                                else [destination])]
    order = [n for n in range(a.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def rollaxis(a, axis, start=0):
    a = _np(a)
    axis %= a.ndim
    start = start % (a.ndim + 1) if start < 0 else start
    if axis < start:
        start -= 1
    order = [n for n in range(a.ndim) if n != axis]
    order.insert(start, axis)
    return transpose(a, order)


def squeeze(x, axis=None):
    return apply("_np_squeeze", (_np(x),), {"axis": axis}, py_name="squeeze")


def expand_dims(a, axis):
    return apply("_npi_expand_dims", (_np(a),), {"axis": axis}, py_name="expand_dims")


def broadcast_to(array, shape):
    if isinstance(shape, int):
        shape = (shape,)
    return apply("_np_broadcast_to", (_np(array),), {"shape": tuple(shape)},
                 py_name="broadcast_to")


def broadcast_arrays(*args):
    shape = onp.broadcast_shapes(*[a.shape for a in args])
    return [broadcast_to(a, shape) for a in args]


def concatenate(seq, axis=0, out=None):
    """Join arrays along ``axis`` (None: flatten first)."""
    seq = [_np(a) for a in seq]
    return apply("_npi_concatenate", tuple(seq), {"num_args": len(seq), "axis": axis},
                 out=out, py_name="concatenate")


def append(arr, values, axis=None):
    return concatenate([_np(arr), _np(values)], axis=axis)


def stack(arrays, axis=0, out=None):
    """Join arrays along a new ``axis``."""
    arrays = [_np(a) for a in arrays]
    return apply("_npi_stack", tuple(arrays), {"num_args": len(arrays), "axis": axis},
                 out=out, py_name="stack")


def atleast_1d(*arys):
    res = [a if a.ndim >= 1 else a.reshape(1) for a in map(_np, arys)]
    return res[0] if len(res) == 1 else res


def atleast_2d(*arys):
    res = [a if a.ndim >= 2 else a.reshape((1, -1)) for a in map(_np, arys)]
    return res[0] if len(res) == 1 else res


def atleast_3d(*arys):
    def up(a):
        if a.ndim == 0:
            return a.reshape(1, 1, 1)
        if a.ndim == 1:
            return a.reshape(1, -1, 1)
        if a.ndim == 2:
            return expand_dims(a, 2)
        return a
    res = [up(a) for a in map(_np, arys)]
    return res[0] if len(res) == 1 else res


def hstack(arrays):
    arrays = atleast_1d(*arrays) if len(arrays) > 1 else [atleast_1d(arrays[0])]
    return concatenate(arrays, axis=0 if arrays[0].ndim == 1 else 1)


def vstack(arrays, out=None):
    arrays = atleast_2d(*arrays) if len(arrays) > 1 else [atleast_2d(arrays[0])]
    return concatenate(arrays, axis=0, out=out)


row_stack = vstack


def dstack(arrays):
    arrays = atleast_3d(*arrays) if len(arrays) > 1 else [atleast_3d(arrays[0])]
    return concatenate(arrays, axis=2)


def column_stack(tup):
    cols = [a.reshape((-1, 1)) if a.ndim < 2 else a for a in map(_np, tup)]
    return concatenate(cols, axis=1)


def split(ary, indices_or_sections, axis=0):
    """Split into equal sections or at the given indices along ``axis``."""
    return _split("_npi_split", ary, indices_or_sections, axis)


def _split(name, ary, indices_or_sections, axis):
    ary = _np(ary)
    if isinstance(indices_or_sections, int):
        params = {"sections": indices_or_sections, "axis": axis}
    else:
        params = {"indices": (0,) + tuple(indices_or_sections), "axis": axis}
    out = apply(name, (ary,), params, py_name=name[5:])
    if isinstance(out, (list, tuple)):
        return list(out)
    if not isinstance(out, NDArray):        # a Symbol: one Symbol per output
        return list(out)
    return [out]


def array_split(ary, indices_or_sections, axis=0):
    """As :func:`split`, but sections need not divide the axis equally."""
    ary = _np(ary)
    if isinstance(indices_or_sections, int):
        n = ary.shape[axis]
        k, extra = divmod(n, indices_or_sections)
        sizes = [k + 1] * extra + [k] * (indices_or_sections - extra)
        indices_or_sections = list(onp.cumsum(sizes)[:-1])
    return split(ary, [int(i) for i in indices_or_sections], axis)


def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D arrays)."""
    return _split("_npi_hsplit", ary, indices_or_sections, 1)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=2)


def tile(A, reps):
    if isinstance(reps, int):
        reps = (reps,)
    return apply("_npi_tile", (_np(A),), {"reps": tuple(reps)}, py_name="tile")


def repeat(a, repeats, axis=None):
    return apply("_np_repeat", (_np(a),), {"repeats": int(repeats), "axis": axis},
                 py_name="repeat")


def flip(m, axis=None, out=None):
    m = _np(m)
    if axis is None:
        axis = tuple(range(m.ndim))
    return apply("_npi_flip", (m,), {"axis": axis}, out=out, py_name="flip")


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def where(condition, x=None, y=None):
    """Elements of ``x`` where ``condition``, else of ``y``; one argument: ``nonzero``."""
    if x is None and y is None:
        return nonzero(condition)
    condition = _np(condition)
    ctx = condition.ctx
    from ._creation import full
    if not isinstance(x, NDArray):
        x = full((), x, dtype=y.dtype if isinstance(y, NDArray) else None, ctx=ctx)
    if not isinstance(y, NDArray):
        y = full((), y, dtype=x.dtype, ctx=ctx)
    return apply("_npi_where", (condition, x, y), py_name="where")


def clip(a, a_min, a_max, out=None):
    """Limit values to [a_min, a_max]; None leaves a side open."""
    if a_min is None and a_max is None:
        raise ValueError("array_clip: must set either max or min")
    if isinstance(a_min, NDArray) or isinstance(a_max, NDArray):
        return fallback(onp.clip, a, a_min, a_max)
    return apply("_npi_clip", (_np(a),), {"a_min": a_min, "a_max": a_max}, out=out,
                 py_name="clip")


def dot(a, b, out=None):
    """NumPy's dot: the inner product of 1-D arrays, the matrix product of 2-D ones,
    a sum over the last axis of ``a`` and the second-to-last of ``b`` otherwise."""
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return onp.dot(a, b)
    return apply("_np_dot", (_np(a), _np(b)), out=out, py_name="dot")


def matmul(a, b, out=None, **kwargs):
    """The matrix product, broadcasting stacks of matrices (the ``@`` operator)."""
    return apply("_npi_matmul", (_np(a), _np(b)), out=out, py_name="matmul")


def copy(a):
    return apply("_np_copy", (_np(a),), py_name="copy")


def sort(a, axis=-1, kind=None, order=None):
    """A sorted copy along ``axis`` (None: the flattened array)."""
    a = _np(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    return apply("sort", (a,), {"axis": axis}, py_name="sort")


def argsort(a, axis=-1, kind=None, order=None):
    """The indices that sort ``a`` along ``axis`` (None: the flattened array), as int64
    (MXNet's ``_npi_argsort``, a stable sort)."""
    return apply("_npi_argsort", (_np(a),), {"axis": axis, "is_ascend": True,
                                             "dtype": "int64"}, py_name="argsort")


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    """The sorted unique elements (and optionally their indices, inverse indices and
    counts, int64), by MXNet's ``_npi_unique``."""
    y = apply("_npi_unique", (_np(ar),), {"return_index": return_index,
                                          "return_inverse": return_inverse,
                                          "return_counts": return_counts, "axis": axis},
              py_name="unique")
    return tuple(y) if isinstance(y, list) else y


def nonzero(a):
    """The indices of the nonzero elements, one int64 array per axis (MXNet's
    ``_npx_nonzero``, one row per element, taken apart)."""
    rows = apply("_npx_nonzero", (_np(a),), py_name="nonzero")
    return tuple(rows[:, i] for i in range(rows.shape[1]))


def take(a, indices, axis=None, mode="raise", out=None):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flat array if None)."""
    a = _np(a)
    if axis is None:
        a, axis = a.reshape(-1), 0
    idx = indices if isinstance(indices, NDArray) else _np(onp.asarray(indices))
    key = (slice(None),) * (axis % a.ndim) + (idx,)
    return a[key]


def meshgrid(*xi, **kwargs):
    """Coordinate matrices from coordinate vectors (``indexing='xy'`` or ``'ij'``)."""
    indexing = kwargs.pop("indexing", "xy")
    sparse = kwargs.pop("sparse", False)
    kwargs.pop("copy", True)     # broadcast_to already copies
    if kwargs:
        raise TypeError("meshgrid() got an unexpected keyword argument %r" % next(iter(kwargs)))
    n = len(xi)
    xs = [_np(x).reshape(-1) for x in xi]
    shape = [x.size for x in xs]
    if indexing == "xy" and n > 1:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xs):
        s = [1] * n
        j = i
        if indexing == "xy" and n > 1 and i < 2:
            j = 1 - i
        s[j] = x.size
        g = x.reshape(s)
        out.append(g if sparse else broadcast_to(g, shape))
    return out


def shape(a):
    return tuple(a.shape) if hasattr(a, "shape") else onp.shape(a)


def ndim(a):
    return a.ndim if hasattr(a, "ndim") else onp.ndim(a)


def size(a, axis=None):
    if axis is None:
        return a.size if hasattr(a, "size") else onp.size(a)
    return a.shape[axis]


def may_share_memory(a, b, max_work=None):
    """Whether ``a`` and ``b`` may share memory."""
    return bool(onp.may_share_memory(a._data, b._data))


def shares_memory(a, b, max_work=None):
    """Whether ``a`` and ``b`` share memory."""
    return bool(onp.shares_memory(a._data, b._data))



def _method(fn):
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = fn.__name__
    method.__doc__ = "``mx.np.%s(self, ...)``." % fn.__name__
    return method


for _fn in (repeat, clip, dot, sort, argsort, nonzero, take):
    setattr(ndarray, _fn.__name__, _method(_fn))
