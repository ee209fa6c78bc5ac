"""Gradients at the edges: ops with several outputs differentiated through only some of
them (the outputs no head reaches get zero gradient, so the result equals the one where
every output is used with a zero head, as in MXNet), and reductions of empty arrays."""
import numpy as onp
import pytest

import mxlite as mx
from mxlite import np, npx


def _grad(f, x):
    x.attach_grad()
    with mx.autograd.record():
        y = f(x)
    y.backward()
    return x.grad.asnumpy()


MATRIX = onp.array([[2., 1, 0], [1, 3, 1]])
SYM = onp.array([[2., 1], [1, 3]])

CASES = [
    ("gelqf", lambda x: mx.nd.linalg.gelqf(x), MATRIX, 2, False),
    ("syevd", lambda x: mx.nd.linalg.syevd(x), SYM, 2, False),
    ("split", lambda x: mx.nd.split(x, 3, axis=1), MATRIX, 3, False),
    ("split_v2", lambda x: mx.nd.split_v2(x, 3, axis=1), MATRIX, 3, False),
    ("np.split", lambda x: np.split(x, 3, axis=1), MATRIX, 3, True),
    ("np.linalg.svd", lambda x: np.linalg.svd(x), MATRIX, 3, True),
]


@pytest.mark.parametrize("name, f, data, n, np_face", CASES, ids=[c[0] for c in CASES])
def test_one_output_used_equals_all_used_with_zero_heads(name, f, data, n, np_face):
    array = np.array if np_face else mx.nd.array
    if np_face:
        npx.set_np()
    try:
        for k in range(n):
            one = _grad(lambda x: (f(x)[k] * f(x)[k]).sum(), array(data, dtype="float64"))

            def every(x, k=k):
                outs = f(x)
                return sum((o * o if i == k else o * 0).sum() for i, o in enumerate(outs))
            assert onp.all(onp.isfinite(one)), name
            onp.testing.assert_allclose(one, _grad(every, array(data, dtype="float64")),
                                        rtol=1e-10, atol=1e-12, err_msg="%s output %d" % (name, k))
    finally:
        if np_face:
            npx.reset_np()


@pytest.mark.parametrize("np_face", [False, True])
@pytest.mark.parametrize("shape, axis", [((0, 3), None), ((0, 3), 0), ((0, 3), 1), ((2, 0), 1),
                                         ((2, 0), 0), ((3, 0, 2), (0, 2))])
def test_reduction_of_an_empty_array_has_an_empty_gradient(shape, axis, np_face):
    # The gradient of sum/prod over an empty input is an empty array of the input's shape
    # (the legacy broadcast_to reads a 0 as "keep this dimension", which gave (1, 3))
    array = np.zeros if np_face else mx.nd.zeros
    if np_face:
        npx.set_np()
    try:
        for fn in ("sum", "prod"):
            mod = np if np_face else mx.nd
            x = array(shape)
            x.attach_grad()
            with mx.autograd.record():
                y = getattr(mod, fn)(x, axis=axis)
            y.backward()
            assert x.grad.shape == shape, (fn, shape, axis)
    finally:
        if np_face:
            npx.reset_np()


def test_max_and_min_of_an_empty_axis_are_errors_not_zeros():
    # An empty axis has no extreme (as argmax): an error naming the op, where mxlite gave
    # 0 of shape (1,); over a non-empty axis of an empty array the result is empty
    for fn in (mx.nd.max, mx.nd.min):
        for axis in (0, None):
            with pytest.raises(mx.base.MXNetError, match=r"^(max|min): data expected a "
                                                         r"non-empty axis 0"):
                fn(mx.nd.zeros((0, 3)), axis=axis)
        x = mx.nd.zeros((0, 3))
        x.attach_grad()
        with mx.autograd.record():
            y = fn(x, axis=1)
        y.backward()
        assert y.shape == (0,) and x.grad.shape == (0, 3)
