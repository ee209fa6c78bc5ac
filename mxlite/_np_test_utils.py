"""The np-interface helpers of ``mx.test_utils`` (``use_np``,
``check_gluon_hybridize_consistency``)."""
from .util import use_np  # noqa: F401

__all__ = ["use_np", "check_gluon_hybridize_consistency"]


def check_gluon_hybridize_consistency(net_builder, data_l, numpy_func=None, test_grad=True,
                                      rtol=1E-4, atol=1E-4):
    """Check that a block gives the same outputs (and input gradients) imperatively
    and hybridized, and optionally the values of ``numpy_func``.

    ``net_builder(prefix='net_')`` makes a fresh block each time; the first one's
    parameter values initialise the others. With ``test_grad`` each run also records and
    backpropagates ``out.backward(out)`` and compares the gradients of the inputs.
    """
    from . import autograd
    from .initializer import Initializer
    from .test_utils import assert_almost_equal

    class _FromValues(Initializer):
        def __init__(self, values):
            super().__init__()
            self._values = values

        def _init_weight(self, name, arr):
            arr[()] = self._values[name]

    want_out = want_grads = params = None
    for hybridize in (False, True):
        for use_autograd in ((False, True) if test_grad else (False,)):
            net = net_builder(prefix="net_")
            if params is None:
                net.initialize()
            else:
                net.initialize(_FromValues(params))
            if hybridize:
                net.hybridize()
            inputs = [x.copy() for x in data_l]
            if use_autograd:
                for x in inputs:
                    x.attach_grad()
                with autograd.record():
                    out = net(*inputs)
                out.backward(out)
            else:
                out = net(*inputs)
            if params is None:
                params = {k: v.data().asnumpy() for k, v in net.collect_params().items()}
            if want_out is None:
                want_out = out.asnumpy()
            else:
                assert_almost_equal(out.asnumpy(), want_out, rtol=rtol, atol=atol)
            if use_autograd:
                grads = [x.grad.asnumpy() for x in inputs]
                if want_grads is None:
                    want_grads = grads
                else:
                    for g, w in zip(grads, want_grads):
                        assert_almost_equal(g, w, rtol=rtol, atol=atol)
            if numpy_func is not None:
                ref = numpy_func(*[x.asnumpy() for x in data_l])
                assert_almost_equal(out.asnumpy(), ref, rtol=rtol, atol=atol)
