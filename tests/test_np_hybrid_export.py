"""Hybridized np blocks that index and create arrays: the values of NumPy, the graphs of
MXNet 1.9.1 (``slice`` + ``_npx_reshape``, ``_npi_zeros`` ...), in both directions of
export and import. The MXNet side is ``reference_extra/np_hybrid_export_mxnet191.json``
(written by ``gen_np_hybrid_export.py``)."""
import json
import os

import numpy as onp
import pytest

import mxlite as mx
from mxlite import np, npx

HERE = os.path.dirname(os.path.abspath(__file__))
X = onp.arange(24, dtype="float32").reshape(2, 3, 4)


@pytest.fixture(autouse=True)
def np_semantics():
    npx.set_np()
    yield
    npx.reset_np()


def _golden():
    with open(os.path.join(HERE, "reference_extra", "np_hybrid_export_mxnet191.json")) as f:
        return {b["name"]: b for b in json.load(f)}


class Indexing(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return x[0] + x[:2].sum() + x[1, :, -1].sum() + x[1][::-1, 1:3][0].sum()


class Creation(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        v = x[0, 0]
        return (v + F.np.zeros((4,)) + F.np.ones((4,), dtype="float64") + F.np.full((4,), 2)
                + F.np.arange(4) + F.np.eye(4)[1] + F.np.linspace(0, 1, 4)
                + F.np.identity(4)[2] + F.np.zeros_like(v) + F.np.ones_like(v)
                * F.np.full_like(v, 2) + F.np.indices((2, 4))[1][0] + F.np.arange(2, 10, 2))


def _ops(symbol_json):
    return [n["op"] for n in json.loads(symbol_json)["nodes"] if n["op"] != "null"]


@pytest.mark.parametrize("block", [Indexing, Creation])
def test_hybridized_block_gives_mxnet_values_and_graph(block, tmp_path):
    want = _golden()[block.__name__]
    net = block()
    net.initialize()
    eager = net(np.array(X))
    net.hybridize()
    y = net(np.array(X))
    onp.testing.assert_allclose(y.asnumpy(), want["output"], rtol=1e-6)
    onp.testing.assert_allclose(eager.asnumpy(), want["output"], rtol=1e-6)
    prefix = os.path.join(str(tmp_path), "m")
    net.export(prefix)
    with open(prefix + "-symbol.json") as f:
        assert _ops(f.read()) == _ops(want["symbol"])


@pytest.mark.parametrize("name", ["Indexing", "Creation"])
def test_mxnet_exports_of_np_blocks_load_and_run(name, tmp_path):
    want = _golden()[name]
    path = os.path.join(str(tmp_path), "m-symbol.json")
    with open(path, "w") as f:
        f.write(want["symbol"])
    net = mx.gluon.SymbolBlock.imports(path, ["data"])
    onp.testing.assert_allclose(net(np.array(X)).asnumpy(), want["output"], rtol=1e-6)


class Index(mx.gluon.HybridBlock):
    def __init__(self, key):
        super().__init__()
        self.key = key

    def hybrid_forward(self, F, x):
        return x[self.key] * 2


E = Ellipsis
KEYS = [0, -1, slice(1, None), (0, 1), (slice(None), -1), (E, 0), (0, E, -1),
        (E, slice(None, None, -1), 1), (None, 0), (E, None), (1, None, E, None, 2),
        (slice(None, None, 2), E, slice(1, 3)), (E,), (), (-2, E, None, slice(-3, None, -1), 0),
        (None,), (0, None, 1, None, 2, 3)]


@pytest.mark.parametrize("key", KEYS, ids=[repr(k) for k in KEYS])
def test_basic_index_in_a_hybridized_block_is_numpys_with_its_gradient(key):
    x = onp.arange(120, dtype="float32").reshape(2, 3, 4, 5)
    net = Index(key)
    net.hybridize()
    a = np.array(x)
    a.attach_grad()
    with mx.autograd.record():
        y = net(a)
    y.backward()
    assert y.shape == x[key].shape
    onp.testing.assert_array_equal(y.asnumpy(), x[key] * 2)
    want = onp.zeros_like(x)
    want[key] += 2
    onp.testing.assert_array_equal(a.grad.asnumpy(), want)


def test_index_errors_are_numpys():
    net = Index((E, 0, E))
    net.hybridize()
    with pytest.warns(UserWarning, match="single ellipsis"):
        with pytest.raises(IndexError, match="single ellipsis"):
            net(np.ones((2, 3)))


def test_creation_functions_of_sym_np_add_graph_nodes():
    z = mx.sym.np.zeros((2, 3), dtype="int32")
    assert type(z) is mx.sym.np._Symbol
    assert z.tojson().count('"_npi_zeros"') == 1
    assert mx.sym.np.arange(3).tojson().count('"_npi_arange"') == 1
    with pytest.raises(ValueError, match="retstep"):
        mx.sym.np.linspace(0, 1, 5, retstep=True)


def test_imperative_creation_runs_the_same_ops():
    assert np.zeros((2, 3)).dtype == onp.float32 and type(np.ones(2)) is np.ndarray
    assert np.zeros(()).shape == ()
    assert np.arange(5).dtype == onp.float32 and np.arange(2, 8, 2).tolist() == [2, 4, 6]
    assert np.eye(2, 3, 1).tolist() == [[0, 1, 0], [0, 0, 1]]
    assert np.identity(2, dtype="int64").dtype == onp.int64
    assert np.indices((2, 2)).dtype == onp.int32
    y, step = np.linspace(0, 1, 5, retstep=True)
    assert step == 0.25 and y.tolist() == [0, 0.25, 0.5, 0.75, 1]
    a = np.array([[1, 2]], dtype="int32")
    assert np.full_like(a, 7).dtype == onp.int32 and np.ones_like(a, dtype="float64").dtype \
        == onp.float64
    assert np.zeros_like(a, shape=(3,)).shape == (3,)
    # created arrays are constants: a gradient flows past them, not into them
    x = np.ones((2,))
    x.attach_grad()
    with mx.autograd.record():
        loss = (x * np.ones_like(x) * 3 + np.zeros_like(x)).sum()
    loss.backward()
    assert x.grad.tolist() == [3, 3]


class ZeroSize(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        return x + F.np.zeros((0,)) + F.np.ones((2, 0)) + F.np.full((0,), 3)


def test_zero_size_creation_in_a_hybridized_block():
    # under NumPy shape semantics a 0 in a created shape is a size, never "unknown"
    net = ZeroSize()
    net.hybridize()
    y = net(np.zeros((0,)))
    assert y.shape == (2, 0)


class HSplit(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        a, b, c = F.np.hsplit(x, [1, 3])
        return F.np.concatenate([a * 3, b, c * 0.5], axis=1)


@pytest.mark.parametrize("shape", [(4, 4), (2, 4, 3)])
def test_hsplit_in_a_hybridized_block(shape):
    # hsplit splits axis 1 whatever the rank: the op decides, as MXNet's _npi_hsplit
    x = onp.arange(onp.prod(shape), dtype="float32").reshape(shape)
    a, b, c = onp.hsplit(x, [1, 3])
    net = HSplit()
    net.hybridize()
    xa = np.array(x)
    xa.attach_grad()
    with mx.autograd.record():
        y = net(xa)
        loss = y.sum()
    loss.backward()
    onp.testing.assert_allclose(y.asnumpy(), onp.concatenate([a * 3, b, c * 0.5], axis=1))
    want = onp.concatenate([onp.full(a.shape, 3.0), onp.ones(b.shape),
                            onp.full(c.shape, 0.5)], axis=1)
    onp.testing.assert_array_equal(xa.grad.asnumpy(), want)


def test_split_indices_beyond_the_axis_give_empty_parts_as_numpy():
    x = onp.arange(16.0).reshape(4, 4)
    for idx in ([3, 6], [0, 2], [2, 2]):
        got = np.split(np.array(x), idx, axis=1)
        want = onp.split(x, idx, axis=1)
        assert [g.shape for g in got] == [w.shape for w in want]
    assert [p.tolist() for p in np.hsplit(np.arange(4.0), [2, 2])] == [[0, 1], [], [2, 3]]
