"""``autograd.Function``: a user-defined differentiable function with its own backward."""
from ..base import MXNetError
from ..operator.registry import on_ndarrays

__all__ = ["Function"]


class _FunctionOp:
    """The op-like object a recorded :class:`Function` call leaves in the graph."""
    __slots__ = ("func", "name")
    saves = ""

    def __init__(self, func):
        self.func = func
        self.name = type(func).__name__

    @on_ndarrays
    def gradient(self, p, x, y, gy, need):
        from . import pause
        with pause():
            gx = self.func.backward(*gy)
        gx = [gx] if not isinstance(gx, (list, tuple)) else list(gx)
        if len(gx) != len(x):
            raise MXNetError("%s.backward returned %d gradients, expected %d (one per input of "
                             "forward)" % (self.name, len(gx), len(x)))
        return gx


class Function:
    """Customize differentiation: subclass and define ``forward`` and ``backward``.

    ``forward`` runs with recording paused and returns NDArray(s); ``backward``
    receives the output gradients and returns one gradient per input.

    Examples
    --------
    >>> class sigmoid(mx.autograd.Function):
    ...     def forward(self, x):
    ...         y = 1 / (1 + mx.nd.exp(-x))
    ...         self.save_for_backward(y)
    ...         return y
    ...     def backward(self, dy):
    ...         y, = self.saved_tensors
    ...         return dy * y * (1 - y)
    """

    def __init__(self):
        self._used = False
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def __call__(self, *inputs):
        from . import _state, in_graph, record_node, pause
        from ..nd.ndarray import NDArray, _wrap
        if self._used:
            raise MXNetError("%s: each Function instance can be called only once; create a "
                             "new instance per call" % type(self).__name__)
        self._used = True
        with pause(train_mode=_state.training):
            outputs = self.forward(*inputs)
        single = isinstance(outputs, NDArray)
        outs = [outputs] if single else list(outputs)
        if _state.recording and any(in_graph(x) for x in inputs):
            # An output that is an input (or a view the caller still holds) must
            # become a new array: rewiring the input itself would make a cycle.
            outs = [_wrap(y._data, y._ctx) if any(y is x for x in inputs) else y for y in outs]
            record_node(_FunctionOp(self), None, list(inputs), outs)
        return outs[0] if single else outs

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError
