"""MXNet 0.x Python operators, deprecated in MXNet for ``CustomOp`` but still shipped by
MXNet 1.9.1: ``PythonOp``, ``NumpyOp`` (forward/backward on NumPy arrays) and
``NDArrayOp`` (on NDArrays). Calling an instance on symbols gives a symbol; here it is a
``Custom`` node over an op type registered for that instance, so these run on the one
CustomOp machinery (graph executor, autograd, hybridized blocks alike)::

    class NumpySoftmax(mx.operator.NumpyOp):
        def __init__(self):
            super().__init__(need_top_grad=False)
        def list_arguments(self):
            return ['data', 'label']
        def infer_shape(self, in_shape):
            return [in_shape[0], (in_shape[0][0],)], [in_shape[0]]
        def forward(self, in_data, out_data):
            ...                             # write out_data[0][:] in place
        def backward(self, out_grad, in_data, out_data, in_grad):
            ...                             # write in_grad[0][:] in place

    net = NumpySoftmax()(data=fc, label=mx.sym.var('label'), name='softmax')

NOTE: MXNet passes the C++ buffers to ``forward``/``backward``; mxlite passes scratch
arrays (zeros) and writes them to the op's outputs and gradients by their ``req``
afterwards, so ``grad_req='add'`` accumulates as it should.
"""
import itertools
import warnings

import numpy as np

from .custom import CustomOp, CustomOpProp, register

__all__ = ["PythonOp", "NumpyOp", "NDArrayOp"]

_SERIAL = itertools.count()


class PythonOp:
    """Base class for operators implemented in Python (deprecated: use ``CustomOp``).

    Parameters
    ----------
    need_top_grad : bool
        What the default ``need_top_grad()`` returns: False for a loss layer, whose
        backward does not read the gradient of its output.
    """
    _ref_holder = []

    def __init__(self, need_top_grad=True):
        self.info_ = None
        self.need_top_grad_ = need_top_grad
        kind = next(c.__name__ for c in type(self).__mro__ if c.__module__ == __name__)
        warnings.warn("%s has been deprecated. Please use CustomOp" % kind, stacklevel=2)

    def __call__(self, *args, **kwargs):
        return self.get_symbol(*args, **kwargs)

    def get_symbol(self, *args, **kwargs):
        """A symbol applying this operator to the input symbols ``args``/``kwargs``."""
        raise NotImplementedError("Must override this")

    def forward(self, in_data, out_data):
        """Write ``out_data`` (in place) from ``in_data``; the default copies the input."""
        out_data[0][:] = in_data[0]

    def backward(self, out_grad, in_data, out_data, in_grad):
        """Write ``in_grad`` (in place); the default writes ones."""
        in_grad[0][:] = 1.0

    def infer_shape(self, in_shape):
        """``(argument shapes, output shapes)`` from the argument shapes."""
        return in_shape, [in_shape[0]]

    def list_outputs(self):
        return ["output"]

    def list_arguments(self):
        return ["data"]

    def need_top_grad(self):
        """Whether ``backward`` reads ``out_grad`` (False for loss layers)."""
        return self.need_top_grad_

    def _symbol(self, hint, args, kwargs):
        """``mx.sym.Custom`` over an op type that runs this instance."""
        from .. import symbol
        from ..name import current
        op_type = "%s_%d" % (hint, next(_SERIAL))
        register(op_type)(_prop_class(self))
        PythonOp._ref_holder.append(self)
        name = current().get(kwargs.pop("name", None), hint)
        return symbol.Custom(*args, op_type=op_type, name=name, **kwargs)


class NumpyOp(PythonOp):
    """A :class:`PythonOp` whose ``forward``/``backward`` see NumPy arrays (deprecated:
    use ``CustomOp``)."""

    _view = staticmethod(lambda a: a.asnumpy())
    _scratch = staticmethod(lambda a: np.zeros(a.shape, a.dtype))

    def get_symbol(self, *args, **kwargs):
        return self._symbol("_native", args, kwargs)


class NDArrayOp(PythonOp):
    """A :class:`PythonOp` whose ``forward``/``backward`` see NDArrays (deprecated: use
    ``CustomOp``)."""

    _view = staticmethod(lambda a: a)
    _scratch = staticmethod(lambda a: a.zeros_like())

    def get_symbol(self, *args, **kwargs):
        return self._symbol("_ndarray", args, kwargs)

    def declare_backward_dependency(self, out_grad, in_data, out_data):
        """Ids of the blobs ``backward`` reads: ``out_grad`` (if ``need_top_grad``),
        ``in_data`` and ``out_data``."""
        deps = list(out_grad) if self.need_top_grad() else []
        return deps + list(in_data) + list(out_data)


def _prop_class(pyop):
    """A CustomOpProp class whose instances describe ``pyop``."""

    class PythonOpProp(CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=pyop.need_top_grad())

        def list_arguments(self):
            return pyop.list_arguments()

        def list_outputs(self):
            return pyop.list_outputs()

        def infer_shape(self, in_shape):
            ishape, oshape = pyop.infer_shape(in_shape)
            return ishape, oshape, []

        def declare_backward_dependency(self, out_grad, in_data, out_data):
            rule = getattr(pyop, "declare_backward_dependency", None)
            if rule is None:
                return super().declare_backward_dependency(out_grad, in_data, out_data)
            return rule(out_grad, in_data, out_data)

        def create_operator(self, ctx, in_shapes, in_dtypes):
            return _PythonOpAdapter(pyop)

    PythonOpProp.__name__ = "%sProp" % type(pyop).__name__
    return PythonOpProp


class _PythonOpAdapter(CustomOp):
    """Runs a PythonOp's ``forward``/``backward`` on scratch copies and assigns them."""

    def __init__(self, pyop):
        super().__init__()
        self.pyop = pyop

    def forward(self, is_train, req, in_data, out_data, aux):
        view, scratch = self.pyop._view, self.pyop._scratch
        outs = [scratch(o) for o in out_data]
        self.pyop.forward(in_data=[view(x) for x in in_data], out_data=outs)
        for dst, r, src in zip(out_data, req, outs):
            self.assign(dst, r, src)

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        view, scratch = self.pyop._view, self.pyop._scratch
        grads = [scratch(g) for g in in_grad]
        self.pyop.backward(out_grad=[view(g) for g in out_grad],
                           in_data=[view(x) for x in in_data],
                           out_data=[view(y) for y in out_data], in_grad=grads)
        for dst, r, src in zip(in_grad, req, grads):
            self.assign(dst, r, src)
