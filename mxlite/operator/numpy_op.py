"""MinPy-style custom operators: ``@mx.operator.customop('numpy' | 'mxnet')``.

The decorator turns a function into a callable object; ``def_grad(fn, argnum)``
gives the gradient with respect to argument ``argnum``, where ``fn(ans, *args)``
returns a function of the upstream gradient (the same arrays the forward saw,
``ans`` being its result)::

    @mx.operator.customop('numpy')
    def my_softmax(x, y):                   # x: scores, y: int labels (NumPy)
        probs = numpy.exp(x - numpy.max(x, axis=1, keepdims=True))
        probs /= numpy.sum(probs, axis=1, keepdims=True)
        return -numpy.sum(numpy.log(probs[numpy.arange(x.shape[0]), y])) / x.shape[0]

    def my_softmax_grad(ans, x, y):
        def grad(g):
            ...
            return dx
        return grad

    my_softmax.def_grad(my_softmax_grad)    # argnum=0

Called on NDArrays under ``autograd.record()``, one call is one graph node whose
gradient runs the registered functions, so the op composes with built-in ops and
Blocks. With ``'numpy'`` the function and its gradients see NumPy arrays (NDArray
arguments are converted, other arguments such as labels or ints pass through) and
results come back as NDArrays (a scalar becomes shape ``(1,)``, as MXNet has no 0-d
arrays); with ``'mxnet'`` they see and return NDArrays. Called on NumPy arrays only,
the object is the plain function.
"""
import functools

import numpy as np

from ..base import MXNetError, DTYPE_TO_FLAG
from ..autograd import in_graph, record_node, set_recording
from ..nd.ndarray import NDArray, _wrap
from .registry import on_ndarrays

__all__ = ["customop", "CustomFunction"]


def customop(kind):
    """Decorator making a function a custom op with user-defined gradients.

    Parameters
    ----------
    kind : {'numpy', 'mxnet'}
        The array type the function and its gradients take and return.

    Returns
    -------
    callable
        A decorator returning a :class:`CustomFunction`.
    """
    if kind not in ("numpy", "mxnet"):
        raise ValueError("customop: kind must be 'numpy' or 'mxnet', got %r" % (kind,))

    def decorate(fn):
        return CustomFunction(fn, kind)
    return decorate


class CustomFunction:
    """A function with gradients registered by :meth:`def_grad` (made by :func:`customop`)."""

    def __init__(self, fn, kind):
        functools.update_wrapper(self, fn)
        self._fn = fn
        self._kind = kind
        self._grads = {}
        self._node_op = _CustomFunctionOp(self)

    def def_grad(self, fn, argnum=0):
        """Register ``fn(ans, *args) -> (g -> gradient of argument argnum)``.

        Returns this object, so calls can be chained.
        """
        if not callable(fn):
            raise TypeError("%s.def_grad: expected a function, got %r" % (self.__name__, fn))
        if not isinstance(argnum, int) or argnum < 0:
            raise ValueError("%s.def_grad: argnum must be a non-negative int, got %r"
                             % (self.__name__, argnum))
        self._grads[argnum] = fn
        return self

    def __call__(self, *args, **kwargs):
        pos = [i for i, a in enumerate(args) if isinstance(a, NDArray)]
        if not pos:
            return self._fn(*args, **kwargs)
        ctx = args[pos[0]]._ctx
        numpy_kind = self._kind == "numpy"
        fargs = [a.asnumpy() if numpy_kind and isinstance(a, NDArray) else a for a in args]
        if numpy_kind:
            kwargs = {k: v.asnumpy() if isinstance(v, NDArray) else v for k, v in kwargs.items()}
        rec = set_recording(False)
        try:
            ans = self._fn(*fargs, **kwargs)
        finally:
            set_recording(rec)
        many = isinstance(ans, (tuple, list))
        dtype = args[pos[0]]._data.dtype
        outs = [self._to_nd(a, ctx, dtype, "result") for a in (ans if many else (ans,))]
        inputs = [args[i] for i in pos]
        if rec and any(in_graph(x) for x in inputs):
            record_node(self._node_op, _Saved(pos, fargs, ans, many), inputs, outs)
        return outs if many else outs[0]

    def _to_nd(self, a, ctx, dtype, what):
        """``a`` (the function's result or gradient) as an NDArray on ``ctx``."""
        if isinstance(a, NDArray):
            return a if a._ctx == ctx else a.as_in_context(ctx)
        arr = np.asarray(a)
        if arr.dtype.kind not in "biuf":
            raise MXNetError("customop %s: the %s must be arrays or numbers, got %s"
                             % (self.__name__, what, type(a).__name__))
        if arr.dtype not in DTYPE_TO_FLAG:
            arr = arr.astype(dtype)
        if arr.ndim == 0:
            arr = arr.reshape(1)        # MXNet has no 0-d arrays
        elif not arr.flags.writeable or arr.base is not None:
            arr = arr.copy()
        if ctx.device_typeid == 2:
            arr = ctx.array_module().asarray(arr)
        return _wrap(arr, ctx)

    def __repr__(self):
        return "<customop(%r) %s>" % (self._kind, self.__name__)


class _Saved:
    """What a recorded call keeps for its gradient: the arguments the function saw and
    its result."""
    __slots__ = ("pos", "args", "ans", "many")

    def __init__(self, pos, args, ans, many):
        self.pos = pos
        self.args = args
        self.ans = ans
        self.many = many


class _CustomFunctionOp:
    """The op-like object a recorded :class:`CustomFunction` call leaves in the graph."""
    __slots__ = ("func", "name")
    saves = ""          # the gradient reads the arrays saved at call time

    def __init__(self, func):
        self.func = func
        self.name = "customop %s" % func.__name__

    @on_ndarrays
    def gradient(self, saved, x, y, gy, need):
        func = self.func
        numpy_kind = func._kind == "numpy"
        if numpy_kind:
            g = [gi.asnumpy().reshape(np.shape(a))
                 for gi, a in zip(gy, saved.ans if saved.many else (saved.ans,))]
        else:
            g = list(gy)
        g = tuple(g) if saved.many else g[0]
        gxs = []
        for xi, argnum, want in zip(x, saved.pos, need):
            if not want:
                gxs.append(None)
                continue
            gfn = func._grads.get(argnum)
            if gfn is None:
                raise MXNetError("customop %s: no gradient for argument %d; declare one with "
                                 "%s.def_grad(fn, argnum=%d)"
                                 % (func.__name__, argnum, func.__name__, argnum))
            rec = set_recording(False)
            try:
                gx = gfn(saved.ans, *saved.args)(g)
            except MXNetError:
                raise
            except Exception as e:
                raise MXNetError("customop %s: the gradient for argument %d raised %s: %s"
                                 % (func.__name__, argnum, type(e).__name__, e)) from e
            finally:
                set_recording(rec)
            gx = func._to_nd(gx, xi._ctx, xi._data.dtype, "gradient")
            if gx.shape != xi.shape:
                raise MXNetError("customop %s: the gradient for argument %d has shape %s, "
                                 "expected %s (the argument's shape)"
                                 % (func.__name__, argnum, gx.shape, xi.shape))
            if gx._data.dtype != xi._data.dtype:
                gx = _wrap(gx._data.astype(xi._data.dtype), xi._ctx)
            gxs.append(gx)
        return gxs
