"""``mx.nd`` functions that are not single registered ops: array creation with MXNet's
signatures, and the NumPy-style binary functions that pick the broadcast or scalar op."""
import numpy as np

from ..context import current_context
from ..operator.registry import OPS, apply, invoke
from ..operator import binary_functions as _binary
from .ndarray import NDArray
from .register import _is_array

__all__ = ["zeros", "ones", "full", "arange", "eye", "linspace", "true_divide", "concatenate",
           "moveaxis", "waitall", "onehot_encode", "histogram", "CachedOp"] + list(_binary.TABLE)


def _shape(shape):
    return (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)


def _create(name, ctx, kwargs):
    op = OPS[name]
    # MXNet accepts (and ignores, for arrays) a name and __attr__ keywords.
    out = kwargs.pop("out", None)
    kwargs = {k: v for k, v in kwargs.items()
              if k != "name" and not (k.startswith("__") and k.endswith("__"))}
    return invoke(op, (), op.parse_params(kwargs), out, ctx=ctx or current_context())


def zeros(shape, ctx=None, dtype=None, stype=None, **kwargs):
    """An array of zeros: ``mx.nd.zeros((2, 3), ctx=mx.cpu(), dtype='float32')``;
    ``out=`` writes into an existing array; ``stype`` gives a sparse one."""
    if stype not in (None, "default"):
        from .sparse import zeros as sparse_zeros
        return sparse_zeros(stype, shape, ctx=ctx, dtype=dtype, **kwargs)
    return _create("_zeros", ctx, dict(shape=_shape(shape), dtype=dtype or "float32", **kwargs))


def ones(shape, ctx=None, dtype=None, **kwargs):
    """An array of ones (``out=`` writes into an existing array)."""
    return _create("_ones", ctx, dict(shape=_shape(shape), dtype=dtype or "float32", **kwargs))


def full(shape, val, ctx=None, dtype=np.float32, out=None):
    """An array filled with ``val`` (``out=`` writes into an existing array)."""
    return _create("_full", ctx, dict(shape=_shape(shape), value=val, dtype=dtype or "float32",
                                      out=out))


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None, dtype=np.float32):
    """Evenly spaced values in ``[start, stop)``: ``mx.nd.arange(3)`` is ``[0. 1. 2.]``."""
    return _create("_arange", ctx, dict(start=start, stop=stop, step=step, repeat=repeat,
                                        dtype=dtype or "float32"))


def eye(N, M=0, k=0, ctx=None, dtype=np.float32, **kwargs):
    """A 2-D array with ones on the k-th diagonal."""
    return _create("_eye", ctx, dict(N=N, M=M, k=k, dtype=dtype or "float32"))


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=np.float32):
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    return _create("_linspace", ctx, dict(start=start, stop=stop, num=num, endpoint=endpoint,
                                          dtype=dtype or "float32"))


def _apply(op_name, inputs, params):
    op = OPS[op_name]
    return apply(op, inputs, op.parse_params(params) if params else op.default_params)


for _name in _binary.TABLE:
    # NDArrays, and the raw arrays of a gradient rule running unrecorded
    globals()[_name] = _binary.make(_name, NDArray, _apply, _is_array)
true_divide = divide  # noqa: F821 (defined by the loop above)


def concatenate(arrays, axis=0, always_copy=True):
    """Join arrays along ``axis`` (MXNet's older name for ``concat``)."""
    if not arrays:
        raise ValueError("concatenate: need at least one array")
    if not always_copy and len(arrays) == 1:
        return arrays[0]
    return invoke(OPS["Concat"], list(arrays),
                  OPS["Concat"].parse_params({"num_args": len(arrays), "dim": axis}))


def _axes_tuple(axes, ndim, what):
    """``axes`` (an int or ints) as non-negative ints; ValueError when out of range or
    repeated."""
    axes = (axes,) if isinstance(axes, (int, np.integer)) else tuple(axes)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError("moveaxis: %s axis %d is out of bounds for an array of %d "
                             "dimensions" % (what, a, ndim))
        out.append(int(a) % ndim)
    if len(set(out)) != len(out):
        raise ValueError("moveaxis: repeated axis in %s %s" % (what, axes))
    return out


def moveaxis(tensor, source, destination):
    """Move axes ``source`` (an int or ints) to positions ``destination``; the other
    axes keep their order (``numpy.moveaxis``)."""
    src = _axes_tuple(source, tensor.ndim, "source")
    dst = _axes_tuple(destination, tensor.ndim, "destination")
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of "
                         "elements, got %d and %d" % (len(src), len(dst)))
    axes = [a for a in range(tensor.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        axes.insert(d, s)
    return invoke(OPS["transpose"], (tensor,), OPS["transpose"].parse_params({"axes": tuple(axes)}))


def onehot_encode(indices, out):
    """Write the one-hot encoding of ``indices`` into ``out`` (MXNet's legacy helper)."""
    depth = out.shape[1]
    y = invoke(OPS["one_hot"], (indices,), OPS["one_hot"].parse_params({"depth": depth,
                                                                          "dtype": out.dtype}))
    out[:] = y
    return out


def waitall():
    """Wait for all pending work (see ``mx.engine``)."""
    from ..engine import waitall as _w
    _w()


def histogram(a, bins=10, range=None):  # noqa: A002 (MXNet's argument name)
    """MXNet's ``mx.nd.histogram``: ``(counts, bin_edges)`` of ``a``.

    ``bins`` is a number of equal bins over ``range`` or an NDArray of edges. With a
    number and no range MXNet returns NumPy's result (float counts); so does this.

    >>> mx.nd.histogram(mx.nd.array([0, 1, 1, 3]), bins=3, range=(0, 3))[0]   # [1 2 1]
    """
    from . import _internal
    from .ndarray import array
    if isinstance(bins, NDArray):
        return _internal._histogram(a, bins)
    if range is None:
        counts, edges = np.histogram(a.asnumpy(), bins=bins)
        return array(counts, ctx=a.context), array(edges, ctx=a.context)
    return _internal._histogram(a, bin_cnt=bins, range=range)


class CachedOp:
    """A Symbol made callable on NDArrays, as ``mx.nd.CachedOp``: ``op(*inputs)`` runs
    the graph with the inputs bound to ``sym.list_inputs()`` in order (recorded by
    autograd like the ops themselves) and returns one NDArray, or a list for several
    outputs; ``out=`` writes the results into existing arrays.

    Examples
    --------
    >>> x = mx.sym.var('x')
    >>> op = mx.nd.CachedOp(x * 2 + 1)
    >>> op(mx.nd.array([1, 2])).asnumpy()
    array([3., 5.], dtype=float32)
    """

    def __init__(self, sym, flags=()):
        from ..gluon.cached_graph import CachedGraph
        self._names = sym.list_inputs()
        self._graph = CachedGraph(sym, self._names, {})
        self.flags = dict(flags)

    def __call__(self, *args, out=None, **kwargs):
        if kwargs:
            raise TypeError("CachedOp: unexpected keyword arguments %s" % sorted(kwargs))
        if len(args) != len(self._names):
            raise ValueError("CachedOp: the graph takes %d inputs (%s), got %d"
                             % (len(self._names), ", ".join(self._names), len(args)))
        for name, a in zip(self._names, args):
            if not isinstance(a, NDArray):
                raise TypeError("CachedOp: input %r must be an NDArray, got %s"
                                % (name, type(a).__name__))
        outs = self._graph(list(args), args[0].context if args else current_context())
        if out is not None:
            targets = [out] if isinstance(out, NDArray) else list(out)
            if len(targets) != len(outs):
                raise ValueError("CachedOp: out has %d arrays for %d outputs"
                                 % (len(targets), len(outs)))
            for t, y in zip(targets, outs):
                t[:] = y
            return out
        return outs[0] if len(outs) == 1 else outs
