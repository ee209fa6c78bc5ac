"""``mx.np.unique`` and ``mx.np.nonzero`` run MXNet's ``_npi_unique`` and ``_npx_nonzero``:
NumPy's values, MXNet's int64 indices, recorded by autograd with a zero gradient."""
import numpy as onp
import pytest

import mxlite as mx
from mxlite import np

A = [1, 2, 6, 4, 2, 3, 2]


@pytest.mark.parametrize("flags", [(False, False, False), (True, False, False),
                                   (False, True, True), (True, True, True)])
def test_unique_matches_numpy_with_int64_indices(flags):
    ri, rv, rc = flags
    got = np.unique(np.array(A), return_index=ri, return_inverse=rv, return_counts=rc)
    want = onp.unique(onp.array(A, dtype="float32"), return_index=ri, return_inverse=rv,
                      return_counts=rc)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    assert len(got) == len(want)
    assert got[0].dtype == onp.float32
    for g, w in zip(got, want):
        onp.testing.assert_array_equal(g.asnumpy(), onp.reshape(w, -1))
        assert type(g) is np.ndarray
    assert all(g.dtype == onp.int64 for g in got[1:])


def test_unique_along_an_axis_and_mxnet_doc_examples():
    rows = np.unique(np.array([[1, 0, 0], [1, 0, 0], [2, 3, 4]]), axis=0)
    assert rows.tolist() == [[1, 0, 0], [2, 3, 4]]
    u, inverse = np.unique(np.array(A), return_inverse=True)
    assert inverse.tolist() == [0, 1, 4, 3, 1, 2, 1]
    assert u[inverse].tolist() == A


def test_nonzero_gives_one_int64_index_array_per_axis():
    b = np.arange(12).reshape(3, 4)
    got = np.nonzero(b > 3)
    want = onp.nonzero(onp.arange(12).reshape(3, 4) > 3)
    assert len(got) == 2 and all(g.dtype == onp.int64 for g in got)
    for g, w in zip(got, want):
        onp.testing.assert_array_equal(g.asnumpy(), w)
    assert b[got].tolist() == list(range(4, 12))
    assert [g.tolist() for g in (b > 3).nonzero()] == [w.tolist() for w in want]


def test_unique_records_a_zero_gradient_as_mxnet():
    x = np.array([3.0, 1.0, 3.0])
    x.attach_grad()
    with mx.autograd.record():
        y = (np.unique(x) * 2).sum()
    y.backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
