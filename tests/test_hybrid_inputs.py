"""What a hybridized HybridBlock accepts as input (MXNet 1.9.1's rules), what it says
when its hybrid_forward cannot be traced, and the NDArray methods of Symbol."""
import warnings

import numpy as np
import pytest

import mxlite as mx
from mxlite import gluon


class Add(gluon.HybridBlock):
    def hybrid_forward(self, F, a, b=None):
        if a is None:
            return b * 2
        return a if b is None else a + b


def test_none_inputs_pass_through_and_keep_their_positions():
    ones = mx.nd.ones((3,))
    for args, want in [((None, ones), 2), ((ones, ones), 2), ((ones, None), 1)]:
        net = Add()
        net.hybridize()
        for _ in range(2):                       # traced call, then cached call
            np.testing.assert_array_equal(net(*args).asnumpy(), np.full(3, want))
    net = Add()
    net.hybridize()
    net(None, ones)
    with pytest.raises(ValueError, match="does not match the cached version"):
        net(ones, ones)


def test_trailing_none_may_be_left_out():
    ones = mx.nd.ones((3,))
    net = Add()
    net.hybridize()
    a = net(ones)
    b = net(ones, None)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    with pytest.raises(ValueError, match="does not match"):
        net(ones, ones)


def test_hybridized_inputs_must_be_arrays_on_one_context():
    ones = mx.nd.ones((3,))
    net = Add()
    net.hybridize()
    with pytest.raises(ValueError, match="must be \\(nested\\) list of Symbol or NDArray"):
        net(ones, 1)
    with pytest.raises(ValueError, match="mixed NDArrays and Symbols"):
        net(ones, mx.sym.var("b"))
    with pytest.raises(ValueError, match="multiple contexts"):
        net(mx.nd.ones((3,), ctx=mx.cpu(1)), mx.nd.ones((3,), ctx=mx.cpu(2)))
    plain = Add()                                # not hybridized: a scalar is fine
    np.testing.assert_array_equal(plain(ones, 1).asnumpy(), np.full(3, 2))


class Untraceable(gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return x * float(x.sum().asscalar())


def test_failed_trace_names_the_line_once_and_export_explains():
    net = Untraceable()
    net.hybridize()
    x = mx.nd.ones((2,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y1 = net(x)
        y2 = net(x)
    msgs = [str(w.message) for w in caught if "cannot be hybridized" in str(w.message)]
    assert len(msgs) == 1
    assert "asscalar" in msgs[0] and "test_hybrid_inputs.py" in msgs[0]
    np.testing.assert_array_equal(y1.asnumpy(), [2, 2])
    np.testing.assert_array_equal(y2.asnumpy(), [2, 2])
    with pytest.raises(RuntimeError, match="could not be traced.*only F"):
        net.export("unused")


def test_symbol_has_the_ndarray_methods():
    x = mx.sym.var("x")
    y = x.astype("float16")
    assert y.infer_type(x="float32")[1] == [np.float16]
    for method in ("asnumpy", "asscalar", "wait_to_read", "detach", "backward", "copy"):
        with pytest.raises(mx.base.NotImplementedForSymbol, match=method):
            getattr(x, method)()
    assert x.as_nd_ndarray() is x
    assert x.as_np_ndarray().list_arguments() == ["x"]
    assert x.flatten().list_arguments() == ["x"]


def test_symbol_block_refuses_row_sparse_weights():
    data = mx.sym.var("data")
    weight = mx.sym.var("weight", stype="row_sparse")
    out = mx.sym.dot(data, weight)
    with pytest.raises(AssertionError, match="row_sparse"):
        gluon.SymbolBlock(out, data)


def test_nested_symbol_block_saves_and_loads_by_structure(tmp_path):
    x = mx.sym.var("data")
    sym = mx.sym.FullyConnected(x, num_hidden=3, name="feat_fc")

    class Outer(gluon.Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.feat = gluon.SymbolBlock(sym, x)
                self.out = gluon.nn.Dense(2)

        def forward(self, a):
            return self.out(self.feat(a))

    net = Outer()
    net.initialize()
    a = mx.nd.ones((2, 4))
    y = net(a)
    f = str(tmp_path / "outer.params")
    net.save_parameters(f)
    assert sorted(mx.nd.load(f)) == ["feat.bias", "feat.weight", "out.bias", "out.weight"]
    other = Outer()
    other.load_parameters(f)
    np.testing.assert_allclose(other(a).asnumpy(), y.asnumpy(), rtol=1e-6)
