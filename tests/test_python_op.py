"""MXNet's deprecated Python operators ``mx.operator.NumpyOp``, ``NDArrayOp`` and
``PythonOp``: an instance called on symbols gives a symbol that runs its
``forward``/``backward`` (on NumPy arrays or NDArrays). Values are MXNet 1.9.1's for
its own NumpySoftmax example (MXNet 1.9.1's NDArrayOp backward fails with "Shape is
unknown"; mxlite runs it)."""
import numpy as np
import pytest

import mxlite as mx

X = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]])
LABEL = np.array([2.0, 0.0])
# MXNet 1.9.1
SOFTMAX = [[0.09003057, 0.24472846, 0.66524094], [0.21194156, 0.21194156, 0.5761169]]
GRAD = [[0.09003057, 0.24472846, -0.33475906], [-0.78805846, 0.21194156, 0.5761169]]


def _deprecated(cls, *args):
    kind = next(c.__name__ for c in cls.__mro__ if c.__module__.startswith("mxlite."))
    with pytest.warns(UserWarning, match="%s has been deprecated. Please use CustomOp" % kind):
        return cls(*args)


class _SoftmaxLoss:
    """What both softmax loss layers declare: (data, label), no top gradient."""

    def __init__(self):
        super().__init__(False)

    def list_arguments(self):
        return ["data", "label"]

    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]]


class NumpySoftmax(_SoftmaxLoss, mx.operator.NumpyOp):
    def forward(self, in_data, out_data):
        x, y = in_data[0], out_data[0]
        assert isinstance(x, np.ndarray) and isinstance(y, np.ndarray)
        y[:] = np.exp(x - x.max(axis=1, keepdims=True))
        y /= y.sum(axis=1, keepdims=True)

    def backward(self, out_grad, in_data, out_data, in_grad):
        label = in_data[1].astype(int)
        in_grad[0][:] = out_data[0]
        in_grad[0][np.arange(label.shape[0]), label] -= 1.0


class NDArraySoftmax(_SoftmaxLoss, mx.operator.NDArrayOp):
    def forward(self, in_data, out_data):
        assert isinstance(in_data[0], mx.nd.NDArray)
        out_data[0][:] = mx.nd.softmax(in_data[0])

    def backward(self, out_grad, in_data, out_data, in_grad):
        in_grad[0][:] = out_data[0] - mx.nd.one_hot(in_data[1], 3)


@pytest.mark.parametrize("cls", [NumpySoftmax, NDArraySoftmax])
def test_softmax_loss_layer_forward_and_backward(cls):
    op = _deprecated(cls)
    s = op(data=mx.sym.var("data"), label=mx.sym.var("label"), name="sm")
    assert s.list_arguments() == ["data", "label"] and s.list_outputs() == ["sm_output"]
    ex = s.simple_bind(mx.cpu(), data=(2, 3), label=(2,))
    out = ex.forward(is_train=True, data=mx.nd.array(X), label=mx.nd.array(LABEL))
    np.testing.assert_allclose(out[0].asnumpy(), SOFTMAX, rtol=1e-6)
    ex.backward()       # need_top_grad=False: no head gradient
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), GRAD, rtol=1e-6, atol=1e-7)
    assert ex.grad_dict["label"].asnumpy().tolist() == [0.0, 0.0]


def test_default_names_and_grad_req_add():
    s = _deprecated(NumpySoftmax)(data=mx.sym.var("data"), label=mx.sym.var("label"))
    assert s.list_outputs()[0].startswith("_native") and s.list_outputs()[0].endswith("_output")
    s2 = _deprecated(NDArraySoftmax)(mx.sym.var("data"), mx.sym.var("label"))
    assert s2.list_outputs()[0].startswith("_ndarray")
    ex = s.simple_bind(mx.cpu(), grad_req="add", data=(2, 3), label=(2,))
    for _ in range(2):
        ex.forward(is_train=True, data=mx.nd.array(X), label=mx.nd.array(LABEL))
        ex.backward()
    np.testing.assert_allclose(ex.grad_dict["data"].asnumpy(), 2 * np.array(GRAD), rtol=1e-6,
                               atol=1e-7)


def test_defaults_copy_forward_and_write_ones_backward():
    class Identity(mx.operator.NumpyOp):
        pass
    s = _deprecated(Identity)(mx.sym.var("x")) * 3
    ex = s.simple_bind(mx.cpu(), x=(2, 2))
    out = ex.forward(is_train=True, x=mx.nd.array([[1, 2], [3, 4]]))
    np.testing.assert_array_equal(out[0].asnumpy(), [[3, 6], [9, 12]])
    ex.backward()
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), np.ones((2, 2)))


def test_ndarrayop_backward_dependency_and_top_grad():
    class Scale(mx.operator.NDArrayOp):
        def forward(self, in_data, out_data):
            out_data[0][:] = in_data[0] * 2

        def backward(self, out_grad, in_data, out_data, in_grad):
            in_grad[0][:] = out_grad[0] * 2
    op = _deprecated(Scale)
    assert op.need_top_grad() is True
    assert op.declare_backward_dependency([0], [1], [2]) == [0, 1, 2]
    s = op(mx.sym.var("x"))
    ex = s.simple_bind(mx.cpu(), x=(3,))
    ex.forward(is_train=True, x=mx.nd.array([1, 2, 3]))
    ex.backward(mx.nd.array([1, 10, 100]))
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), [2, 20, 200])


def test_pythonop_is_abstract():
    op = _deprecated(mx.operator.PythonOp)
    with pytest.raises(NotImplementedError, match="Must override this"):
        op(mx.sym.var("x"))
    assert op.list_arguments() == ["data"] and op.list_outputs() == ["output"]
    assert op.infer_shape([(2, 3)]) == ([(2, 3)], [(2, 3)])
