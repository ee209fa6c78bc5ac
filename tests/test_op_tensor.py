"""Tensor op library: reductions, shape, indexing, ordering, dot and contrib ops.

Each row of ``CASES`` is one op call with its NumPy reference; generic tests check
the forward pass (float64 and float32), a float64 numeric gradient along a random
direction and the second-order gradient. ``ERRORS`` rows must raise an error that
names the op. NDArray indexing and assignment are tested at the end.
"""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from optable import case, outputs, to_nd, check_first_order, check_second_order

nd = mx.nd
R = np.random.RandomState(42)


def u(*shape):
    """Uniform in [-1, 1) as float64."""
    return R.uniform(-1, 1, shape)


def pos(*shape):
    return R.uniform(0.5, 1.5, shape)


def distinct(*shape):
    """Distinct, well separated values (no ties for max/sort/topk)."""
    return (R.permutation(int(np.prod(shape))).reshape(shape) + R.uniform(0.1, 0.4, shape)) / 4


def idx(values):
    return np.array(values, dtype=np.float64)


def _moments(x, axes, keepdims=False):
    return [x.mean(axis=axes, keepdims=keepdims), x.var(axis=axes, keepdims=keepdims)]


def _topk_np(x, k, axis=-1, ascend=False):
    order = np.argsort(x if ascend else -x, axis=axis, kind="stable")
    i = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, i, axis=axis), i


def _mask_np(x, k):
    m = np.zeros_like(x)
    np.put_along_axis(m, _topk_np(x, k)[1], 1, axis=-1)
    return m


def _d2s(x, b):
    n, c, h, w = x.shape
    return x.reshape(n, b, b, c // b // b, h, w).transpose(0, 3, 4, 1, 5, 2).reshape(
        n, c // b // b, h * b, w * b)


def _scatter_nd(v, i, shape):
    y = np.zeros(shape, v.dtype)
    y[tuple(i.astype(int))] = v
    return y


def _index_copy(old, i, new):
    y = old.copy()
    y[i.astype(int)] = new
    return y


def _khatri_rao(a, b):
    return (a[:, None, :] * b[None, :, :]).reshape(-1, a.shape[1])


CASES = [
    # reductions
    case("sum_axis", lambda x: nd.sum(x, axis=(0, 2)), lambda x: x.sum(axis=(0, 2)), [u(2, 3, 4)]),
    case("sum_exclude", lambda x: nd.sum(x, axis=1, exclude=True, keepdims=True),
         lambda x: x.sum(axis=(0, 2), keepdims=True), [u(2, 3, 4)]),
    case("mean_all", lambda x: nd.mean(x), lambda x: x.mean().reshape(1), [u(3, 4)]),
    case("prod", lambda x: nd.prod(x, axis=1), lambda x: x.prod(axis=1), [pos(3, 4)]),
    case("max", lambda x: nd.max(x, axis=-1), lambda x: x.max(axis=-1), [distinct(3, 4)]),
    case("min_keepdims", lambda x: nd.min(x, axis=0, keepdims=True),
         lambda x: x.min(axis=0, keepdims=True), [distinct(3, 4)]),
    case("nansum", lambda x: nd.nansum(x, axis=1), lambda x: np.nansum(x, axis=1),
         [np.where(np.eye(3, 4) > 0, np.nan, u(3, 4))], grad=()),
    case("nanprod", lambda x: nd.nanprod(x), lambda x: np.nanprod(x).reshape(1),
         [np.where(np.eye(3, 4) > 0, np.nan, pos(3, 4))], grad=()),
    case("norm_l2", lambda x: nd.norm(x), lambda x: np.sqrt((x * x).sum()).reshape(1),
         [u(2, 3, 4)]),
    case("norm_l2_axis", lambda x: nd.norm(x, ord=2, axis=(1, 2), keepdims=True),
         lambda x: np.sqrt((x * x).sum(axis=(1, 2), keepdims=True)), [u(2, 3, 4)]),
    case("norm_l1", lambda x: nd.norm(x, ord=1, axis=1), lambda x: np.abs(x).sum(axis=1),
         [u(2, 3, 4)]),
    case("argmax", lambda x: nd.argmax(x, axis=1), lambda x: x.argmax(axis=1).astype(x.dtype),
         [distinct(3, 4)], grad=()),
    case("argmax_flat", lambda x: nd.argmax(x), lambda x: x.argmax().reshape(1).astype(x.dtype),
         [distinct(3, 4)], grad=()),
    case("argmin_keepdims", lambda x: nd.argmin(x, axis=0, keepdims=True),
         lambda x: x.argmin(axis=0)[None].astype(x.dtype), [distinct(3, 4)], grad=()),
    case("argmax_channel", lambda x: nd.argmax_channel(x),
         lambda x: x.argmax(axis=-1).astype(x.dtype), [distinct(3, 4)], grad=()),
    case("moments", lambda x: nd.moments(x, axes=(0, 2)), lambda x: _moments(x, (0, 2)),
         [u(2, 3, 4)]),
    case("moments_keepdims", lambda x: nd.moments(x, axes=(1,), keepdims=True),
         lambda x: _moments(x, (1,), True), [u(2, 3, 4)]),
    # shape
    case("reshape_codes", lambda x: nd.reshape(x, shape=(0, -4, 2, -1, -2)),
         lambda x: x.reshape(2, 2, 3, 4), [u(2, 6, 4)]),
    case("transpose", lambda x: nd.transpose(x, axes=(2, 0, 1)),
         lambda x: x.transpose(2, 0, 1), [u(2, 3, 4)]),
    case("swapaxes", lambda x: nd.swapaxes(x, dim1=0, dim2=2), lambda x: x.swapaxes(0, 2),
         [u(2, 3, 4)]),
    case("expand_dims", lambda x: nd.expand_dims(x, axis=-1), lambda x: x[..., None], [u(2, 3)]),
    case("squeeze", lambda x: nd.squeeze(x, axis=(0, 2)), lambda x: x.reshape(3, 4),
         [u(1, 3, 1, 4)]),
    case("squeeze_all", lambda x: nd.squeeze(x), lambda x: x.reshape(1), [u(1, 1)]),
    case("flatten", lambda x: nd.flatten(x), lambda x: x.reshape(2, -1), [u(2, 3, 4)]),
    case("concat", lambda a, b: nd.concat(a, b, dim=1),
         lambda a, b: np.concatenate([a, b], axis=1), [u(2, 3), u(2, 1)], grad=(0, 1)),
    case("stack", lambda a, b: nd.stack(a, b, axis=-1), lambda a, b: np.stack([a, b], -1),
         [u(2, 3), u(2, 3)], grad=(0, 1)),
    case("split", lambda x: nd.split(x, num_outputs=3, axis=1),
         lambda x: np.split(x, 3, axis=1), [u(2, 6)]),
    case("split_squeeze", lambda x: nd.split(x, num_outputs=3, axis=0, squeeze_axis=True),
         lambda x: list(x), [u(3, 2)]),
    case("split_v2", lambda x: nd.split_v2(x, (1, 4), axis=0),
         lambda x: np.split(x, (1, 4), axis=0), [u(6, 2)]),
    case("split_v2_sections", lambda x: nd.split_v2(x, 2, axis=1),
         lambda x: np.split(x, 2, axis=1), [u(3, 4)]),
    case("tile", lambda x: nd.tile(x, reps=(2, 1, 3)), lambda x: np.tile(x, (2, 1, 3)),
         [u(2, 3)]),
    case("repeat", lambda x: nd.repeat(x, repeats=2, axis=1), lambda x: np.repeat(x, 2, 1),
         [u(2, 3)]),
    case("repeat_flat", lambda x: nd.repeat(x, repeats=3), lambda x: np.repeat(x, 3), [u(2, 3)]),
    case("reverse", lambda x: nd.flip(x, axis=(0, 2)), lambda x: x[::-1, :, ::-1], [u(2, 3, 4)]),
    case("pad_constant", lambda x: nd.pad(x, mode="constant", pad_width=(0, 0, 0, 0, 1, 2, 2, 1),
                                          constant_value=0.5),
         lambda x: np.pad(x, ((0, 0), (0, 0), (1, 2), (2, 1)), constant_values=0.5),
         [u(1, 2, 3, 3)]),
    case("pad_edge", lambda x: nd.pad(x, mode="edge", pad_width=(0, 0, 0, 0, 1, 1, 2, 2)),
         lambda x: np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 2)), mode="edge"), [u(1, 2, 3, 3)]),
    case("pad_reflect", lambda x: nd.pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 2, 1, 1, 2)),
         lambda x: np.pad(x, ((0, 0), (0, 0), (2, 1), (1, 2)), mode="reflect"),
         [u(1, 2, 3, 4)]),
    case("broadcast_to", lambda x: nd.broadcast_to(x, shape=(2, 0, 4)),
         lambda x: np.broadcast_to(x, (2, 3, 4)), [u(1, 3, 1)]),
    case("broadcast_axis", lambda x: nd.broadcast_axis(x, axis=(0, 2), size=(2, 4)),
         lambda x: np.broadcast_to(x, (2, 3, 4)), [u(1, 3, 1)]),
    case("broadcast_like", lambda a, b: nd.broadcast_like(a, b),
         lambda a, b: np.broadcast_to(a, b.shape), [u(1, 3, 1), u(2, 3, 4)]),
    case("broadcast_like_axes", lambda a, b: nd.broadcast_like(a, b, lhs_axes=(0,), rhs_axes=(1,)),
         lambda a, b: np.broadcast_to(a, (5, 3)), [u(1, 3), u(4, 5)]),
    case("reshape_like", lambda a, b: nd.reshape_like(a, b), lambda a, b: a.reshape(b.shape),
         [u(2, 6), u(3, 4)]),
    case("reshape_like_range", lambda a, b: nd.reshape_like(a, b, lhs_begin=1, rhs_begin=0,
                                                            rhs_end=2),
         lambda a, b: a.reshape(2, 3, 2), [u(2, 6), u(3, 2, 7)]),
    case("depth_to_space", lambda x: nd.depth_to_space(x, block_size=2),
         lambda x: _d2s(x, 2), [u(1, 8, 2, 3)]),
    case("space_to_depth", lambda x: nd.space_to_depth(nd.depth_to_space(x, block_size=2),
                                                       block_size=2),
         lambda x: x, [u(1, 8, 2, 3)]),
    case("shape_array", lambda x: nd.shape_array(x), lambda x: np.array(x.shape, np.int64),
         [u(2, 3, 4)], grad=()),
    case("size_array", lambda x: nd.size_array(x), lambda x: np.array([x.size], np.int64),
         [u(2, 3, 4)], grad=()),
    case("diag_2d", lambda x: nd.diag(x, k=1), lambda x: np.diag(x, 1), [u(3, 4)]),
    case("diag_1d", lambda x: nd.diag(x, k=-1), lambda x: np.diag(x, -1), [u(3)]),
    case("diag_3d", lambda x: nd.diag(x, axis1=1, axis2=2),
         lambda x: np.diagonal(x, 0, 1, 2), [u(2, 3, 3)]),
    # indexing
    case("take_clip", lambda a, i: nd.take(a, i), lambda a, i: a[np.clip(i.astype(int), 0, 4)],
         [u(5, 3), idx([[0, 4], [7, -2], [1, 1]])]),
    case("take_wrap_axis", lambda a, i: nd.take(a, i, axis=1, mode="wrap"),
         lambda a, i: a[:, i.astype(int) % 4], [u(2, 4, 3), idx([5, -1, 2, 2])]),
    case("pick", lambda x, i: nd.pick(x, i), lambda x, i: x[np.arange(3), i.astype(int)],
         [u(3, 4), idx([3, 0, 3])]),
    case("pick_axis0_keepdims", lambda x, i: nd.pick(x, i, axis=0, keepdims=True, mode="wrap"),
         lambda x, i: x[i.astype(int) % 3, np.arange(4)][None], [u(3, 4), idx([4, -1, 0, 2])]),
    case("one_hot", lambda i: nd.one_hot(i, depth=4, on_value=3, off_value=-1, dtype="int32"),
         lambda i: np.where(i[:, None] == np.arange(4), 3, -1).astype(np.int32),
         [idx([1, 3, 7, -1])], grad=()),
    case("where", lambda c, x, y: nd.where(c, x, y), lambda c, x, y: np.where(c != 0, x, y),
         [(u(3, 4) > 0).astype(np.float64), u(3, 4), u(3, 4)], grad=(1, 2)),
    case("where_rows", lambda c, x, y: nd.where(c, x, y),
         lambda c, x, y: np.where(c[:, None] != 0, x, y),
         [idx([1, 0, 1]), u(3, 2), u(3, 2)], grad=(1, 2)),
    case("gather_nd", lambda x, i: nd.gather_nd(x, i), lambda x, i: x[tuple(i.astype(int))],
         [u(3, 4, 2), idx([[0, 2, 2], [1, 3, 1]])]),
    case("scatter_nd", lambda v, i: nd.scatter_nd(v, i, shape=(3, 4)),
         lambda v, i: _scatter_nd(v, i, (3, 4)), [u(3), idx([[0, 2, 1], [1, 3, 0]])]),
    case("slice", lambda x: nd.slice(x, begin=(None, 3), end=(None, 0), step=(2, -1)),
         lambda x: x[::2, 3:0:-1], [u(4, 5)]),
    case("slice_neg", lambda x: nd.slice(x, begin=(-3, 1), end=(-1, 9)),
         lambda x: x[-3:-1, 1:9], [u(4, 5)]),
    case("slice_axis", lambda x: nd.slice_axis(x, axis=-1, begin=-3, end=None),
         lambda x: x[:, -3:], [u(3, 5)]),
    case("slice_like", lambda x, s: nd.slice_like(x, s, axes=(0, 2)),
         lambda x, s: x[:2, :, :1], [u(4, 5, 3), u(2, 3, 1)]),
    # ordering
    case("topk_value", lambda x: nd.topk(x, k=2, ret_typ="value"),
         lambda x: _topk_np(x, 2)[0], [distinct(3, 5)]),
    case("topk_both_ascend", lambda x: nd.topk(x, k=3, axis=0, ret_typ="both", is_ascend=True),
         lambda x: [_topk_np(x, 3, 0, True)[0], _topk_np(x, 3, 0, True)[1].astype(np.float32)],
         [distinct(4, 3)]),
    case("topk_flat", lambda x: nd.topk(x, k=3, axis=None, ret_typ="value"),
         lambda x: _topk_np(x.reshape(-1), 3)[0], [distinct(2, 4)]),
    case("topk_indices", lambda x: nd.topk(x, k=2, dtype="int32"),
         lambda x: _topk_np(x, 2)[1].astype(np.int32), [distinct(3, 5)], grad=()),
    case("topk_mask", lambda x: nd.topk(x, k=2, ret_typ="mask"), lambda x: _mask_np(x, 2),
         [distinct(3, 5)], grad=()),
    case("sort", lambda x: nd.sort(x, axis=0, is_ascend=False), lambda x: -np.sort(-x, axis=0),
         [distinct(4, 3)]),
    case("sort_flat", lambda x: nd.sort(x, axis=None), lambda x: np.sort(x, axis=None),
         [distinct(2, 3)]),
    case("argsort", lambda x: nd.argsort(x, dtype="int64"),
         lambda x: np.argsort(x, axis=-1), [distinct(3, 5)], grad=()),
    # products
    case("dot", lambda a, b: nd.dot(a, b), lambda a, b: a @ b, [u(3, 4), u(4, 2)], grad=(0, 1)),
    case("dot_ta", lambda a, b: nd.dot(a, b, transpose_a=True), lambda a, b: a.T @ b,
         [u(4, 3), u(4, 2)], grad=(0, 1)),
    case("dot_tb", lambda a, b: nd.dot(a, b, transpose_b=True), lambda a, b: a @ b.T,
         [u(3, 4), u(2, 4)], grad=(0, 1)),
    case("dot_tab", lambda a, b: nd.dot(a, b, transpose_a=True, transpose_b=True),
         lambda a, b: a.T @ b.T, [u(4, 3), u(2, 4)], grad=(0, 1)),
    case("dot_1d", lambda a, b: nd.dot(a, b), lambda a, b: np.dot(a, b).reshape(1),
         [u(5), u(5)], grad=(0, 1)),
    case("dot_3d_2d", lambda a, b: nd.dot(a, b), lambda a, b: np.tensordot(a, b, 1),
         [u(2, 3, 4), u(4, 5)], grad=(0, 1)),
    case("dot_ta_3d", lambda a, b: nd.dot(a, b, transpose_a=True),
         lambda a, b: np.tensordot(a, b, (0, 0)), [u(2, 3, 4), u(2, 5)], grad=(0, 1)),
    case("batch_dot", lambda a, b: nd.batch_dot(a, b), lambda a, b: a @ b,
         [u(2, 3, 4), u(2, 4, 2)], grad=(0, 1)),
    case("batch_dot_tab", lambda a, b: nd.batch_dot(a, b, transpose_a=True, transpose_b=True),
         lambda a, b: a.swapaxes(1, 2) @ b.swapaxes(1, 2), [u(2, 4, 3), u(2, 2, 4)], grad=(0, 1)),
    case("khatri_rao", lambda a, b: nd.khatri_rao(a, b), _khatri_rao, [u(2, 3), u(4, 3)],
         grad=(0, 1)),
    # contrib
    case("boolean_mask", lambda x, i: nd.contrib.boolean_mask(x, i),
         lambda x, i: x[i != 0], [u(4, 2), idx([0, 1, 1, 0])]),
    case("arange_like", lambda x: nd.contrib.arange_like(x, start=1, step=2, repeat=2),
         lambda x: (1 + 2 * (np.arange(x.size) // 2)).reshape(x.shape).astype(x.dtype),
         [u(2, 3)], grad=()),
    case("index_copy", lambda o, i, n: nd.contrib.index_copy(o, i, n), _index_copy,
         [u(3, 2), idx([2, 0]), u(2, 2)], grad=(0, 2)),
    case("div_sqrt_dim", lambda x: nd.contrib.div_sqrt_dim(x), lambda x: x / 2.0, [u(3, 4)]),
]

GRAD_CASES = [c for c in CASES if c.grad]
ORDER2_CASES = [c for c in GRAD_CASES if c.order >= 2]


def _ids(cases):
    return [c.id for c in cases]


def _compare(c, ys, refs, rtol, atol):
    assert len(ys) == len(refs), "%s: %d outputs, expected %d" % (c.id, len(ys), len(refs))
    for k, (y, r) in enumerate(zip(ys, refs)):
        r = np.asarray(r)
        got = y.asnumpy()
        assert got.shape == r.shape, "%s output %d: shape %s, expected %s" % (
            c.id, k, got.shape, r.shape)
        assert got.dtype == r.dtype, "%s output %d: dtype %s, expected %s" % (
            c.id, k, got.dtype, r.dtype)
        np.testing.assert_allclose(got, r, rtol=rtol, atol=atol, err_msg=c.id)


@pytest.mark.parametrize("c", CASES, ids=_ids(CASES))
def test_forward_float64(c):
    refs = c.ref(*c.inputs)
    _compare(c, outputs(c.fn(*to_nd(c.inputs))), outputs(refs), 1e-12, 1e-12)


@pytest.mark.parametrize("c", CASES, ids=_ids(CASES))
def test_forward_float32_keeps_dtype(c):
    xs = [a.astype(np.float32) if a.dtype == np.float64 else a for a in c.inputs]
    _compare(c, outputs(c.fn(*to_nd(xs))), outputs(c.ref(*xs)), 1e-5, 1e-6)


@pytest.mark.parametrize("c", GRAD_CASES, ids=_ids(GRAD_CASES))
def test_gradient_numeric(c):
    check_first_order(c, np.random.RandomState(1))


@pytest.mark.parametrize("c", ORDER2_CASES, ids=_ids(ORDER2_CASES))
def test_second_order_gradient(c):
    check_second_order(c, np.random.RandomState(2))
