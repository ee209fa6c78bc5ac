"""``mx.nd.sparse``: MXNet's sparse array API with MXNet's values, on dense storage."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError

DENSE = np.array([[0, 1, 0], [2, 0, 3], [0, 0, 0]], dtype=np.float32)


def test_csr_parts_follow_scipy_layout():
    c = mx.nd.array(DENSE).tostype("csr")
    assert isinstance(c, mx.nd.sparse.CSRNDArray) and c.stype == "csr"
    np.testing.assert_array_equal(c.data.asnumpy(), [1, 2, 3])
    np.testing.assert_array_equal(c.indices.asnumpy(), [1, 0, 2])
    np.testing.assert_array_equal(c.indptr.asnumpy(), [0, 1, 3, 3])
    np.testing.assert_array_equal(c.asnumpy(), DENSE)
    back = c.tostype("default")
    assert back.stype == "default" and type(back) is mx.nd.NDArray
    with pytest.raises(MXNetError, match="2-D"):
        mx.nd.ones((2, 2, 2)).tostype("csr")


def test_row_sparse_parts_are_the_nonzero_rows():
    r = mx.nd.array(DENSE).tostype("row_sparse")
    assert r.stype == "row_sparse"
    np.testing.assert_array_equal(r.indices.asnumpy(), [0, 1])
    np.testing.assert_array_equal(r.data.asnumpy(), DENSE[:2])
    kept = r.retain(mx.nd.array([1]))
    np.testing.assert_array_equal(kept.asnumpy(), [[0, 0, 0], [2, 0, 3], [0, 0, 0]])


def test_constructors():
    c = mx.nd.sparse.csr_matrix((np.array([1.0, 2, 3]), np.array([1, 0, 2]),
                                 np.array([0, 1, 3, 3])), shape=(3, 3))
    np.testing.assert_array_equal(c.asnumpy(), DENSE)
    assert c.dtype == np.float32
    coo = mx.nd.sparse.csr_matrix((np.array([5.0]), (np.array([2]), np.array([1]))),
                                  shape=(3, 3))
    assert coo.asnumpy()[2, 1] == 5 and coo.asnumpy().sum() == 5
    r = mx.nd.sparse.row_sparse_array((np.ones((1, 3)), [2]), shape=(4, 3))
    np.testing.assert_array_equal(r.asnumpy()[2], [1, 1, 1])
    assert r.asnumpy().sum() == 3
    z = mx.nd.sparse.zeros("csr", (2, 5))
    assert z.stype == "csr" and z.shape == (2, 5) and z.asnumpy().sum() == 0
    assert mx.nd.zeros((3, 2), stype="row_sparse").stype == "row_sparse"
    with pytest.raises(ValueError, match="indptr"):
        mx.nd.sparse.csr_matrix((np.ones(2), np.array([0, 1]), np.array([0, 1])), shape=(2, 2))


def test_scipy_matrices_convert_both_ways():
    sps = pytest.importorskip("scipy.sparse")
    m = sps.coo_matrix(([2.0], ([9], [99]))).tocsr()
    c = mx.nd.sparse.csr_matrix(m)
    assert c.shape == (10, 100) and c.asnumpy()[9, 99] == 2
    np.testing.assert_array_equal(c.asscipy().toarray(), m.toarray())
    assert mx.nd.sparse.array(m).stype == "csr"


def test_sparse_gradient_buffer():
    x = mx.nd.ones((3, 2))
    x.attach_grad(stype="row_sparse")
    assert x.grad.stype == "row_sparse"
    with mx.autograd.record():
        y = (x * mx.nd.array([[1], [0], [2]])).sum()
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [[1, 1], [0, 0], [2, 2]])
    np.testing.assert_array_equal(x.grad.indices.asnumpy(), [0, 2])


def test_row_sparse_parameter_is_read_through_row_sparse_data():
    p = mx.gluon.Parameter("w", shape=(4, 2), stype="row_sparse", grad_stype="row_sparse")
    p.initialize(init="ones", ctx=[mx.cpu(0), mx.cpu(1)])
    rows = mx.nd.arange(0, 4, ctx=mx.cpu(1))
    with pytest.raises(RuntimeError, match="no Trainer"):
        p.row_sparse_data(rows)
    with pytest.raises(RuntimeError, match="Please use row_sparse_data"):
        p.data()
    with pytest.raises(RuntimeError, match="Please use row_sparse_data"):
        p.list_data()
    mx.gluon.Trainer([p], "sgd")
    w = p.row_sparse_data(rows)
    assert w.stype == "row_sparse" and w.context == mx.cpu(1) and w.shape == (4, 2)
    assert len(p.list_row_sparse_data(rows)) == 2
    assert p.grad(mx.cpu(0)).stype == "row_sparse"
    dense = mx.gluon.Parameter("d", shape=(2,))
    dense.initialize()
    with pytest.raises(RuntimeError, match="Please use data"):
        dense.row_sparse_data(mx.nd.array([0]))
    assert dense.data().stype == "default"


@pytest.mark.parametrize("array_stype", ["default", "csr", "row_sparse"])
def test_gradient_buffer_takes_the_array_stype_unless_given(array_stype):
    x = mx.nd.zeros((1, 1), stype=array_stype)
    x.attach_grad()
    assert x.grad.stype == array_stype
    for grad_stype in ("default", "csr", "row_sparse"):
        x.attach_grad(stype=grad_stype)
        assert x.grad.stype == grad_stype
        assert x.detach().stype == array_stype
