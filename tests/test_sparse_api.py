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


# -- storage types of op results (MXNet's documented FInferStorageType rules) -------------
RSP = mx.nd.array(DENSE).tostype("row_sparse")
CSR = mx.nd.array(DENSE).tostype("csr")
ONES = mx.nd.ones((3, 3))


@pytest.mark.parametrize("name, src, stype", [
    ("abs", RSP, "row_sparse"), ("sqrt", CSR, "csr"), ("negative", CSR, "csr"),
    ("relu", RSP, "row_sparse"), ("exp", RSP, "default"), ("cos", CSR, "default"),
    ("sigmoid", RSP, "default"), ("zeros_like", CSR, "csr"), ("sum", CSR, "default")])
def test_unary_results_keep_storage_only_where_zero_stays_zero(name, src, stype):
    out = getattr(mx.nd.sparse, name)(src)
    assert out.stype == stype
    assert type(out) is {"default": mx.nd.NDArray, "csr": mx.nd.sparse.CSRNDArray,
                         "row_sparse": mx.nd.sparse.RowSparseNDArray}[stype]
    np.testing.assert_allclose(out.asnumpy(), getattr(mx.nd, name)(mx.nd.array(DENSE)).asnumpy())


def test_binary_and_dot_results_follow_mxnet_rules():
    assert (CSR + CSR).stype == "csr" and (RSP - RSP).stype == "row_sparse"
    assert (CSR * CSR).stype == "csr" and (CSR / 2).stype == "csr" and (RSP * 3).stype == \
        "row_sparse"
    assert (CSR + 1).stype == "default" and (ONES + CSR).stype == "default"
    assert mx.nd.elemwise_mul(ONES, RSP).stype == "row_sparse"
    assert mx.nd.sparse.add_n(RSP, RSP).stype == "row_sparse"
    assert mx.nd.sparse.add_n(RSP, ONES).stype == "default"
    np.testing.assert_array_equal((CSR + CSR).asnumpy(), 2 * DENSE)
    np.testing.assert_array_equal((CSR + CSR).indices.asnumpy(), [1, 0, 2])
    dot = mx.nd.sparse.dot
    assert dot(CSR, ONES).stype == "default"
    assert dot(CSR, ONES, transpose_a=True).stype == "row_sparse"
    assert dot(ONES, CSR).stype == "csr"
    assert dot(ONES, CSR, forward_stype="default").stype == "default"
    assert dot(CSR, RSP).stype == "default"
    np.testing.assert_allclose(dot(CSR, ONES, transpose_a=True).asnumpy(), DENSE.T @ np.ones((3, 3)))
    # clip keeps the storage only for a range holding 0 (else the zeros change)
    assert mx.nd.clip(CSR, -1, 2).stype == "csr"
    low = mx.nd.clip(CSR, 1, 2)
    assert low.stype == "default" and low.asnumpy().min() == 1


def test_dense_inputs_give_dense_results():
    assert type(mx.nd.dot(ONES, ONES)) is mx.nd.NDArray
    assert type(mx.nd.elemwise_mul(ONES, ONES)) is mx.nd.NDArray
    assert type(mx.nd.cast_storage(ONES, stype="default")) is mx.nd.NDArray


def test_retain_is_an_op_with_a_gradient():
    x = mx.nd.array(DENSE)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.sparse.retain(x, mx.nd.array([2, 1]))
        loss = (y * y).sum()
    loss.backward()
    assert y.stype == "row_sparse"
    np.testing.assert_array_equal(y.asnumpy(), [[0, 0, 0], DENSE[1], DENSE[2]])
    np.testing.assert_array_equal(x.grad.asnumpy(), 2 * np.array([[0, 0, 0], DENSE[1], DENSE[2]]))
    with pytest.raises(MXNetError, match=r"_sparse_retain: indices must be rows.*\[0, 3\)"):
        mx.nd.sparse.retain(x, mx.nd.array([3]))
    with pytest.raises(MXNetError, match="cast_storage: stype 'csr' needs 2 dims"):
        mx.nd.cast_storage(mx.nd.ones((2, 2, 2)), stype="csr")
    assert mx.nd.cast_storage(mx.nd.array(DENSE), stype="csr").stype == "csr"
    sym = mx.sym.sparse.retain(mx.sym.var("d"), mx.sym.var("i"))
    out = sym.eval(d=mx.nd.array(DENSE), i=mx.nd.array([1]))[0]
    np.testing.assert_array_equal(out.asnumpy(), [[0, 0, 0], DENSE[1], [0, 0, 0]])


def test_sparse_adagrad_update_changes_only_the_gradient_rows():
    w0 = np.arange(6, dtype=np.float32).reshape(3, 2) + 1
    w, h = mx.nd.array(w0), mx.nd.ones((3, 2))
    g = mx.nd.array([[0, 0], [1, -2], [0, 0]]).tostype("row_sparse")
    mx.nd.sparse.adagrad_update(w, g, h, out=w, lr=0.1, rescale_grad=2.0, clip_gradient=3.0)
    gr = np.clip(np.array([2.0, -4.0], dtype=np.float32), -3, 3)
    hist = 1 + gr * gr
    np.testing.assert_allclose(h.asnumpy(), [[1, 1], hist, [1, 1]])
    np.testing.assert_allclose(w.asnumpy(), [w0[0], w0[1] - gr / np.sqrt(hist + 1e-7) * 0.1,
                                             w0[2]], rtol=1e-6)
    with pytest.raises(MXNetError, match="wd must be 0"):
        mx.nd.sparse.adagrad_update(w, g, h, out=w, lr=0.1, wd=0.1)
    np.testing.assert_allclose(h.asnumpy(), [[1, 1], hist, [1, 1]])     # unchanged


def test_sparse_namespaces_have_mxnets_names():
    import json
    import os
    path = os.path.join(os.path.dirname(__file__), "reference_extra", "api_sparse_mxnet191.json")
    with open(path) as f:
        modules = json.load(f)["modules"]
    for mod, names in ((mx.nd.sparse, modules["mxnet.ndarray.sparse"]),
                       (mx.sym.sparse, modules["mxnet.symbol.sparse"])):
        assert [n for n in names if not hasattr(mod, n)] == []
    # the same op functions as the dense namespaces
    assert mx.nd.sparse.sqrt is mx.nd.sqrt and mx.sym.sparse.dot is mx.sym.dot
    # a module built from them runs (MXNet's test_rsp_const_init)
    data = mx.sym.var("data", stype="csr")
    weight = mx.sym.var("weight", shape=(4, 2), init=mx.init.Constant(2.0), stype="row_sparse")
    mod = mx.mod.Module(mx.sym.sparse.dot(data, weight), label_names=None)
    mod.bind(data_shapes=[("data", (3, 4))])
    mod.init_params()
    assert (mod.get_params()[0]["weight"].asnumpy() == 2).all()


def test_csr_rows_by_index_and_slice_stay_csr():
    # MXNet's CSRNDArray.__getitem__: an integer or a continuous slice of rows
    c = mx.nd.array(DENSE).tostype("csr")
    rows = c[1:3]
    assert type(rows) is mx.nd.sparse.CSRNDArray
    np.testing.assert_array_equal(rows.asnumpy(), DENSE[1:3])
    assert c[-2].shape == (1, 3) and c[-2].stype == "csr"
    np.testing.assert_array_equal(c[-2].asnumpy(), DENSE[1:2])
    assert c[:] is c
    with pytest.raises(ValueError, match="continuous slice"):
        c[::2]
    with pytest.raises(IndexError, match="row 3 is out of range"):
        c[3]
    parts = mx.gluon.utils.split_and_load(mx.nd.array(np.eye(4)).tostype("csr"),
                                          [mx.cpu(0), mx.cpu(1)])
    assert [(p.stype, p.context) for p in parts] == [("csr", mx.cpu(0)), ("csr", mx.cpu(1))]
    np.testing.assert_array_equal(parts[1].asnumpy(), np.eye(4)[2:])


# MXNet 1.9.1's weights after two updates by a row_sparse gradient (lr 0.1; rows 0 and 2
# have no gradient), printed by real MXNet for this test.
_LAZY_MXNET = {
    ("sgd", (("momentum", 0.9), ("wd", 0.1))): [[1.0, 2.0], [2.6243, 3.3064], [5.0, 6.0],
                                                [5.9307, 7.7688]],
    ("sgd", (("lazy_update", False), ("momentum", 0.9), ("wd", 0.1))): [
        [0.9711, 1.9422], [2.6243, 3.3064], [4.8555, 5.8266], [5.9307, 7.7688]],
    ("adam", (("wd", 0.1),)): [[1.0, 2.0], [2.8, 3.8], [5.0, 6.0], [6.8, 7.8]],
    ("adagrad", ()): [[1.0, 2.0], [2.8293, 3.8293], [5.0, 6.0], [6.8293, 8.0]],
}


@pytest.mark.parametrize("name, kwargs", sorted(_LAZY_MXNET))
def test_row_sparse_gradients_update_only_their_rows(name, kwargs):
    opt = mx.optimizer.create(name, learning_rate=0.1, **dict(kwargs))
    update = mx.optimizer.get_updater(opt)
    w = mx.nd.array(np.arange(8, dtype=np.float32).reshape(4, 2) + 1)
    g = mx.nd.array([[0, 0], [1, 2], [0, 0], [3, 0]]).tostype("row_sparse")
    update(0, g, w)
    update(0, g, w)
    np.testing.assert_allclose(w.asnumpy(), _LAZY_MXNET[(name, kwargs)], rtol=2e-5)
    # the rows updated are the dense update's rows, states included
    dense_opt = mx.optimizer.create(name, learning_rate=0.1, **dict(kwargs))
    dense = mx.optimizer.get_updater(dense_opt)
    w2 = mx.nd.array((np.arange(8, dtype=np.float32).reshape(4, 2) + 1)[[1, 3]])
    for _ in range(2):
        dense(0, mx.nd.array([[1, 2], [3, 0]]), w2)
    np.testing.assert_array_equal(w.asnumpy()[[1, 3]], w2.asnumpy())


def test_sparse_adagrad_refuses_weight_decay_and_changes_nothing():
    update = mx.optimizer.get_updater(mx.optimizer.create("adagrad", learning_rate=0.1,
                                                          wd=0.1))
    w = mx.nd.ones((3, 2))
    with pytest.raises(MXNetError, match="needs wd=0"):
        update(0, mx.nd.array([[0, 0], [1, 1], [0, 0]]).tostype("row_sparse"), w)
    np.testing.assert_array_equal(w.asnumpy(), np.ones((3, 2)))
