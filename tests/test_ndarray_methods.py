"""NDArray methods and mx.nd functions as MXNet 1.9.1 defines them: views against
copies, shape methods with ``inplace``, pickling state, DLPack, CachedOp, ``out=``."""
import itertools

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError


def test_reshape_to_another_size_is_a_value_error():
    x = mx.nd.arange(30).reshape(2, 3, 5)
    with pytest.raises(ValueError, match="Cannot reshape array of size 30"):
        x.reshape((4, 4))
    with pytest.raises(TypeError, match="unknown keywords in reshape: order"):
        x.reshape((6, 5), order="C")
    # the op keeps MXNet's op error
    with pytest.raises(MXNetError):
        mx.nd.reshape(x, shape=(4, 4))
    assert x.reshape(-1, 0, reverse=True).shape == (6, 5)


@pytest.mark.parametrize("method,kwargs,shape", [
    ("flatten", {}, (2, 15)),
    ("expand_dims", {"axis": 1}, (2, 1, 3, 5)),
    ("squeeze", {"axis": None}, (2, 3, 5)),
])
def test_shape_methods_copy_unless_inplace(method, kwargs, shape):
    base_shape = (2, 3, 5) if method != "squeeze" else (2, 1, 3, 5)
    x = mx.nd.arange(30).reshape(base_shape)
    copy = getattr(x, method)(**kwargs)
    view = getattr(x, method)(inplace=True, **kwargs)
    assert copy.shape == view.shape == shape
    x[0] = -1
    assert copy.asnumpy().min() == 0          # the copy kept the old values
    assert view.asnumpy().min() == -1         # the view sees the write


def test_moveaxis_takes_several_axes_like_numpy():
    x = mx.nd.zeros((4, 1, 2, 3))
    ref = np.zeros((4, 1, 2, 3))
    for src, dst in [([0, 1], [2, 3]), ([3, 0], [1, 0]), (range(4), range(4)), (-1, 0)]:
        assert mx.nd.moveaxis(x, src, dst).shape == np.moveaxis(ref, src, dst).shape
    with pytest.raises(ValueError, match="out of bounds"):
        mx.nd.moveaxis(x, 4, 0)
    with pytest.raises(ValueError, match="same number"):
        mx.nd.moveaxis(x, [0, 1], [0])


def test_split_v2_is_a_method_too():
    x = mx.nd.arange(12).reshape(2, 6)
    parts = x.split_v2((1, 4), axis=1)
    assert [p.shape for p in parts] == [(2, 1), (2, 3), (2, 2)]
    np.testing.assert_array_equal(parts[1].asnumpy(), x.asnumpy()[:, 1:4])


def test_slice_assign_methods_write_in_place():
    x = mx.nd.zeros((3, 4))
    r = x.slice_assign(mx.nd.ones((2, 2)), (0, 1), (2, 3), (None, None))
    assert r is x
    x.slice_assign_scalar(7, (2,), (3,), (None,))
    want = np.zeros((3, 4))
    want[0:2, 1:3] = 1
    want[2] = 7
    np.testing.assert_array_equal(x.asnumpy(), want)


def test_contiguity_rule_agrees_with_numpy():
    shape = (4, 3, 5)
    a = np.arange(60).reshape(shape)
    choices = [slice(None), slice(1, 3), slice(0, 1), slice(None, None, 2), slice(None, None, -1),
               slice(2, 2)]
    for key in itertools.product(choices, repeat=3):
        got = mx.nd.NDArray._basic_indexing_slice_is_contiguous(key, shape)
        assert got == a[key].flags.c_contiguous, key


def test_contiguous_basic_index_is_a_view_and_others_copies():
    x = mx.nd.arange(24).reshape(2, 3, 4)
    row = x[1, 2]              # one contiguous row: a view
    row[:] = -1
    assert (x.asnumpy()[1, 2] == -1).all()
    col = x[:, 1]              # strided: a copy
    col[:] = 100
    assert (x.asnumpy() != 100).all()
    block = x[1, 0:2]          # two whole rows of one matrix: a view
    block[:] = 5
    assert (x.asnumpy()[1, 0:2] == 5).all()


def test_getstate_setstate_round_trip_and_gpu_state_on_cpu():
    x = mx.nd.array([[1, 2], [3, 4]], dtype="int32")
    state = x.__getstate__()
    assert isinstance(state["handle"], bytearray)
    y = mx.nd.zeros((1,))
    y.__setstate__(state)
    assert y.dtype == np.int32 and np.array_equal(y.asnumpy(), x.asnumpy())
    # a record written on gpu(0): magic, dense, shape (1,), gpu(0), float32, value 0
    raw = (b"\xc9\xfa\x93\xf9" + b"\x00" * 4 + b"\x01\x00\x00\x00" + b"\x01" + b"\x00" * 7
           + b"\x02\x00\x00\x00" + b"\x00" * 8 + b"\x00" * 4)
    z = mx.nd.arange(3)
    z.__setstate__({"handle": bytearray(raw)})
    if mx.context.num_gpus() == 0:
        assert z.context == mx.cpu(0)
    assert z.shape == (1,) and z.asscalar() == 0


def test_dlpack_shares_memory():
    a = mx.nd.array(np.arange(6).reshape(2, 3))
    w = mx.nd.from_dlpack(a.to_dlpack_for_write())
    w[0, 0] = 42
    assert a[0, 0].asscalar() == 42
    r = mx.nd.from_dlpack(mx.nd.to_dlpack_for_read(a))
    np.testing.assert_array_equal(r.asnumpy(), a.asnumpy())
    # a NumPy array exports DLPack too
    n = mx.nd.from_dlpack(np.ones((2, 2), np.int32))
    assert n.dtype == np.int32 and n.shape == (2, 2)


def test_from_numpy_twice_on_the_same_array():
    src = np.arange(6, dtype=np.float32).reshape(3, 2)
    mx.nd.from_numpy(src)
    again = mx.nd.from_numpy(src)          # src is locked by the first call
    with pytest.raises(ValueError):
        src[0, 0] = 1
    again[2, 1] = 100
    assert src[2, 1] == 100


def test_creation_functions_write_into_out():
    out = mx.nd.zeros((2, 2))
    assert mx.nd.ones((2, 2), out=out) is out
    assert (out.asnumpy() == 1).all()
    mx.nd.full((2, 2), 3, out=out)
    assert (out.asnumpy() == 3).all()
    mx.nd.zeros((2, 2), out=out)
    assert (out.asnumpy() == 0).all()
    assert mx.nd.zeros((2,), stype="default").shape == (2,)
    assert mx.nd.zeros((2,), stype="row_sparse").stype == "row_sparse"


def test_cached_op_runs_a_symbol_on_ndarrays():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    op = mx.nd.CachedOp(a * b + 1)
    x, y = mx.nd.array([1, 2]), mx.nd.array([3, 4])
    np.testing.assert_array_equal(op(x, y).asnumpy(), [4, 9])
    out = mx.nd.zeros((2,))
    op(x, y, out=out)
    np.testing.assert_array_equal(out.asnumpy(), [4, 9])
    x.attach_grad()
    with mx.autograd.record():
        z = op(x, y) * 2
    z.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [6, 8])
    with pytest.raises(ValueError, match="takes 2 inputs"):
        op(x)
    two = mx.nd.CachedOp(mx.sym.Group([a + 1, a * 2]))
    assert len(two(x)) == 2


def test_broadcast_like_rejects_empty_axes():
    lhs, rhs = mx.nd.ones((1, 2)), mx.nd.ones((3, 2))
    assert mx.nd.broadcast_like(lhs, rhs).shape == (3, 2)
    assert mx.nd.broadcast_like(lhs, rhs, lhs_axes=(0,), rhs_axes=(0,)).shape == (3, 2)
    with pytest.raises(MXNetError, match="empty tuple of axes"):
        mx.nd.broadcast_like(lhs, rhs, lhs_axes=(), rhs_axes=())


def test_slice_like_with_axes_accepts_other_ranks():
    x = mx.nd.arange(5 * 4 * 2).reshape(5, 4, 2)
    like = mx.nd.zeros((3, 3))
    y = x.slice_like(like, axes=(0, -2))      # -2 counts in data's rank: axis 1
    np.testing.assert_array_equal(y.asnumpy(), x.asnumpy()[:3, :3, :])
    with pytest.raises(MXNetError, match="name the axes"):
        mx.nd.slice_like(x, like)
    with pytest.raises(MXNetError, match="exceeds the 2 dimensions"):
        mx.nd.slice_like(x, like, axes=(2,))
    s = mx.sym.slice_like(mx.sym.var("d"), mx.sym.var("l"), axes=(0, -2))
    assert s.infer_shape(d=(5, 4, 2), l=(3, 3))[1] == [(3, 3, 2)]


def test_array_from_a_freed_graph_is_a_constant_in_a_new_record():
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        h = x * 3
        h.backward()                        # frees the graph behind h
    with mx.autograd.record():
        y = (h + 1) * x                     # h now counts as a constant
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), h.asnumpy() + 1)
