"""Ops with several outputs, differentiated through only some of them: the outputs no
head reaches get zero gradient, so the result equals the one where every output is used
with a zero head (MXNet's rule). A rule that forgot the missing head gradients raised."""
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
