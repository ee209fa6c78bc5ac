"""Creation, copy, indexing, index arithmetic and finiteness ops, called by their registry
names, each row with its NumPy reference (init ops take no inputs: their reference is
the array NumPy makes)."""
import numpy as np

import mxlite as mx
from optable import Spec, row, row_tests, to_nd

R = np.random.RandomState(5)


def u(*shape):
    return R.uniform(-1, 1, shape)


F32 = np.float32


def _init(op, ref, **params):
    return row(op, lambda: ref, [], params, id=op, grad=())


def _hist(x, bins):
    counts, edges = np.histogram(x, bins=bins.astype(x.dtype))
    return [counts.astype(np.int64), edges.astype(x.dtype)]


X = u(3, 4)
SPECS = [
    _init("_zeros", np.zeros((2, 3), F32), shape=(2, 3)),
    _init("_zeros_without_dtype", np.zeros((2, 3), F32), shape=(2, 3)),
    _init("_ones", np.ones((2, 3), F32), shape=(2, 3)),
    _init("_full", np.full((2, 3), 2.5, F32), shape=(2, 3), value=2.5),
    _init("_arange", np.arange(1, 7, 2, dtype=F32), start=1, stop=7, step=2),
    _init("_eye", np.eye(3, 4, 1, dtype=F32), N=3, M=4, k=1),
    _init("_linspace", np.linspace(0, 1, 5, dtype=F32), start=0, stop=1, num=5),
    # copies and indexing
    row("_copyto", lambda x: x, [X], {"ctx": mx.cpu(0)}),
    Spec("_getitem", lambda x: x[1:, ::2], lambda x: x[1:, ::2], [X], op="_getitem"),
    Spec("_getitem_advanced", lambda x: x[mx.nd.array([2, 0])], lambda x: x[[2, 0]], [X],
         op="_getitem"),
    row("_take_along_axis", lambda x, i: np.take_along_axis(x, i.astype(int), 1),
        [X, np.array([[0., 3.], [1., 1.], [2., 0.]])], {"axis": 1}),
    row("_split_v2", lambda x: np.split(x, [1, 3], axis=1), [X],
        {"indices": (0, 1, 3), "axis": 1}),
    row("_ravel_multi_index", lambda i: np.ravel_multi_index(i.astype(int), (3, 4)).astype(i.dtype),
        [np.array([[0., 1., 2.], [3., 0., 1.]])], {"shape": (3, 4)}, grad=()),
    row("_unravel_index", lambda i: np.stack(np.unravel_index(i.astype(int), (3, 4))).astype(
        i.dtype), [np.array([0., 5., 11.])], {"shape": (3, 4)}, grad=()),
    row("_contrib_index_array", lambda x: np.stack(np.indices(x.shape), -1).astype(np.int64),
        [X], grad=()),
    row("_contrib_getnnz", lambda x: np.array([np.count_nonzero(x)], np.int64),
        [np.where(X > 0, X, 0)], grad=()),
    row("_contrib_allclose", lambda a, b: np.array(np.allclose(a, b), np.uint8),
        [X, X + 1e-9], grad=()),
    row("_histogram", lambda x, b: _hist(x, b), [X, np.array([-1., 0., 0.5, 1.])], grad=()),
    # finiteness and the multi-array reductions of the optimizers
    row("all_finite", lambda x: np.array([np.isfinite(x).all()], F32), [X], grad=()),
    row("multi_all_finite", lambda a, b: np.array([np.isfinite(a).all() and np.isfinite(b).all()],
                                                  F32),
        [X, np.array([1., np.inf])], {"num_arrays": 2}, grad=()),
    row("multi_sum_sq", lambda a, b: np.array([(a * a).sum(), (b * b).sum()], F32),
        [X, u(5)], {"num_arrays": 2}, grad=(), rtol=1e-6),
    # in place: every array zeroed
    Spec("reset_arrays", lambda a, b: _reset(a, b), lambda a, b: [a * 0, b * 0], [u(2, 3), u(4)],
         grad=(), op="reset_arrays"),
]


def _reset(*arrays):
    mx.nd.reset_arrays(*arrays, num_arrays=len(arrays))
    return list(arrays)


globals().update(row_tests(SPECS))


def test_shuffle_permutes_the_first_axis():
    y = mx.nd._internal._shuffle(*to_nd([X])).asnumpy()
    assert sorted(map(tuple, y)) == sorted(map(tuple, X))
