"""mx.kv: create, init/push/pull/pushpull/broadcast/row_sparse_pull, optimizers on the
store, states files, errors; and the Trainer on a store. Expected values are NumPy's,
and a few behaviours and bytes observed from MXNet 1.9.1."""
import sys

import numpy as np
import pytest

import mxlite as mx
from mxlite import gluon

LOCAL = ["local", "device", "nccl", "local_update_cpu", "local_allreduce_cpu",
         "local_allreduce_device"]


def _nd(value, ctx=None, dtype="float32"):
    return mx.nd.array(value, ctx=ctx or mx.cpu(), dtype=dtype)


def _pulled(kv, key, shape, ctx=None, dtype="float32"):
    out = mx.nd.zeros(shape, ctx=ctx or mx.cpu(), dtype=dtype)
    kv.pull(key, out=out)
    return out.asnumpy()


# -- create ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", LOCAL)
def test_create_local_types(name):
    kv = mx.kv.create(name.upper() if name == "device" else name)
    assert isinstance(kv, mx.kv.KVStore) and isinstance(kv, mx.kv.KVStoreBase)
    assert (kv.type, kv.rank, kv.num_workers) == (name, 0, 1)
    assert mx.kvstore is mx.kv and mx.kv.create().type == "local"


@pytest.fixture
def no_mpi4py(monkeypatch):
    """A process where ``import mpi4py`` fails (and no MPI world exists yet)."""
    from mxlite.kvstore import _mpi
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    monkeypatch.setattr(_mpi, "_WORLD", None)


@pytest.mark.parametrize("name", ["dist_sync", "dist_async", "dist_device_sync", "dist"])
def test_create_distributed_without_mpi4py_says_how_to_install(name, no_mpi4py):
    with pytest.raises(mx.MXNetError, match=r"mpi4py, which is not installed.*mxlite\[dist\]"):
        mx.kv.create(name)


def test_create_bad_names():
    with pytest.raises(mx.MXNetError, match=r"unknown kvstore type 'foo'.*local, device"):
        mx.kv.create("foo")
    with pytest.raises(TypeError, match="name must be a string"):
        mx.kv.create(3)


def test_registered_store_is_created_by_name():
    @mx.kv.KVStoreBase.register
    class MyTestStore(mx.kv.KVStoreBase):
        pass
    try:
        assert type(mx.kv.create("MyTestStore")) is MyTestStore
        with pytest.warns(UserWarning, match="overriding existing kvstore"):
            mx.kv.KVStoreBase.register(MyTestStore)
    finally:
        mx.kv.KVStoreBase.kv_registry.pop("myteststore")


def test_capabilities_and_barrier():
    kv = mx.kv.create("device")
    assert kv.is_capable("optimizer") and kv.is_capable(mx.kv.KVStoreBase.OPTIMIZER.upper())
    with pytest.raises(ValueError, match="Unknown capability: foo"):
        kv.is_capable("foo")
    assert kv._barrier() is None


# -- init, push, pull -----------------------------------------------------------------------

def test_init_pull_int_and_str_keys():
    kv = mx.kv.create()
    src = _nd(np.arange(6).reshape(2, 3))
    kv.init(3, src * 2)
    kv.init([5, 7], [src, src + 1])
    src[:] = -1                                   # the store holds a copy
    np.testing.assert_array_equal(_pulled(kv, 3, (2, 3)), np.arange(6).reshape(2, 3) * 2)
    outs = [mx.nd.zeros((2, 3)), mx.nd.zeros((2, 3))]
    kv.pull([5, 7], out=outs)
    np.testing.assert_array_equal(outs[1].asnumpy(), np.arange(6).reshape(2, 3) + 1)
    kvs = mx.kv.create("device")
    kvs.init(["a", "b"], [_nd([1.0]), _nd([2.0, 3.0])])
    np.testing.assert_array_equal(_pulled(kvs, "b", (2,)), [2.0, 3.0])


def test_push_sums_values_from_several_devices():
    kv = mx.kv.create("device")
    kv.init(3, mx.nd.ones((2, 3)) * 2)
    rng = np.random.RandomState(0)
    vals = [rng.rand(2, 3).astype(np.float32) for _ in range(4)]
    kv.push(3, [_nd(v, ctx=mx.cpu(i)) for i, v in enumerate(vals)], priority=-3)
    np.testing.assert_allclose(_pulled(kv, 3, (2, 3)), sum(vals), rtol=1e-6)
    kv.push(3, mx.nd.ones((2, 3)) * 8)            # without an optimizer the push replaces
    np.testing.assert_array_equal(_pulled(kv, 3, (2, 3)), np.full((2, 3), 8.0))


def test_push_and_pull_lists_of_keys():
    kv = mx.kv.create()
    kv.init(["a", "b"], [mx.nd.zeros((1,)), mx.nd.zeros((2,))])
    kv.push(["a", "b"], [[_nd([3.0]), _nd([3.0], ctx=mx.cpu(1))], [_nd([1.0, 2.0])] * 2])
    outs = [[mx.nd.zeros((1,), ctx=mx.cpu(i)) for i in range(2)],
            [mx.nd.zeros((2,), ctx=mx.cpu(i)) for i in range(3)]]
    kv.pull(["a", "b"], out=outs)
    for o in outs[0]:
        assert o.asnumpy().tolist() == [6.0]
    for i, o in enumerate(outs[1]):
        assert o.context == mx.cpu(i) and o.asnumpy().tolist() == [2.0, 4.0]
    kv.push(["a", "a"], [_nd([1.0]), _nd([2.0])])   # a key given twice: its values are summed
    assert _pulled(kv, "a", (1,)).tolist() == [3.0]


def test_pull_casts_to_the_output_dtype():
    kv = mx.kv.create("device")
    kv.init("h", mx.nd.ones((2,), dtype="float16"))
    kv.push("h", mx.nd.ones((2,)) * 3)
    out = _pulled(kv, "h", (2,), dtype="float64")
    assert out.dtype == np.float64 and out.tolist() == [3.0, 3.0]


def test_pushpull_is_an_allreduce():
    kv = mx.kv.create("device")
    kv.init("x", mx.nd.zeros((2,)))
    vals = [_nd([1.0, 2.0], ctx=mx.cpu(i)) for i in range(2)]
    outs = [mx.nd.zeros((2,), ctx=mx.cpu(i)) for i in range(3)]
    kv.pushpull("x", vals, out=outs)
    for o in outs:
        assert o.asnumpy().tolist() == [2.0, 4.0]
    assert vals[0].asnumpy().tolist() == [1.0, 2.0]
    kv.pushpull("x", vals)                       # no out: the sum goes back into the values
    for v in vals:
        assert v.asnumpy().tolist() == [2.0, 4.0]
    x = _nd([5.0, 5.0])
    kv.pushpull("x", _nd([7.0, 1.0]), out=[mx.nd.zeros((2,)), x])
    assert x.asnumpy().tolist() == [7.0, 1.0]


def test_broadcast_initialises_and_copies():
    kv = mx.kv.create()
    outs = [mx.nd.zeros((2, 2), ctx=mx.cpu(i)) for i in range(2)]
    kv.broadcast(7, _nd([[1, 2], [3, 4]]), out=outs)
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy(), [[1, 2], [3, 4]])
    with pytest.raises(mx.MXNetError, match="duplicate init of key 7"):
        kv.broadcast(7, _nd([[1, 2], [3, 4]]), out=outs)
    with pytest.raises(mx.MXNetError, match=r"key 8 has a value of shape \(2,\) but out 0 of 1 "
                                            r"has shape \(3,\)"):
        kv.broadcast(8, _nd([1, 2]), out=mx.nd.zeros((3,)))
    assert not kv._has_key(8)


def test_row_sparse_pull_dense_fallback():
    kv = mx.kv.create()
    value = np.arange(12, dtype=np.float32).reshape(4, 3)
    kv.init(0, _nd(value))
    out = mx.nd.ones((4, 3)) * 9
    kv.row_sparse_pull(0, out=out, row_ids=_nd([0, 2]))
    want = np.zeros((4, 3), np.float32)
    want[[0, 2]] = value[[0, 2]]
    np.testing.assert_array_equal(out.asnumpy(), want)
    outs = [mx.nd.zeros((4, 3), ctx=mx.cpu(i)) for i in range(2)]
    kv.row_sparse_pull(0, out=outs, row_ids=[_nd([3]), _nd([1, 3])])
    np.testing.assert_array_equal(outs[0].asnumpy()[3], value[3])
    assert outs[0].asnumpy()[:3].sum() == 0
    np.testing.assert_array_equal(outs[1].asnumpy()[[1, 3]], value[[1, 3]])
    kv.row_sparse_pull(0, out=outs, row_ids=_nd([1]))      # one row_ids for every output
    for o in outs:
        np.testing.assert_array_equal(o.asnumpy()[1], value[1])
    with pytest.raises(mx.MXNetError, match=r"row_ids of key 0 must be integers in \[0, 4\)"):
        kv.row_sparse_pull(0, out=out, row_ids=_nd([4]))
    with pytest.raises(ValueError, match="got 3 row_ids for 2 outputs"):
        kv.row_sparse_pull(0, out=outs, row_ids=[_nd([0])] * 3)
    with pytest.raises(ValueError, match="out and row_ids are required"):
        kv.row_sparse_pull(0, out=out)


# -- optimizers on the store ---------------------------------------------------------------

def test_set_optimizer_updates_on_push():
    """SGD with momentum on the summed gradient (MXNet 1.9.1 pulls 0, -1.9, -4.61)."""
    kv = mx.kv.create("local")
    kv.init(5, mx.nd.ones((2,)))
    kv.set_optimizer(mx.optimizer.create("sgd", learning_rate=0.5, momentum=0.9))
    w, mom = np.ones(2), np.zeros(2)
    for _ in range(3):
        kv.push(5, [mx.nd.ones((2,), ctx=mx.cpu(i)) for i in range(2)])
        mom = 0.9 * mom - 0.5 * 2.0
        w = w + mom
        np.testing.assert_allclose(_pulled(kv, 5, (2,)), w, rtol=1e-6)
    np.testing.assert_allclose(w, [-4.61, -4.61])
    with pytest.raises(TypeError, match="expected an mx.optimizer.Optimizer, got str"):
        kv.set_optimizer("sgd")


def test_custom_updater_gets_key_merged_and_stored():
    kv = mx.kv.create()
    kv.init("s", mx.nd.ones((2,)))
    calls = []

    def update(key, merged, stored):
        calls.append((key, merged.asnumpy().tolist(), stored.asnumpy().tolist()))
        stored += merged * 2
    kv._set_updater(update)
    kv.push("s", [mx.nd.ones((2,)), mx.nd.ones((2,))])
    assert calls == [("s", [2.0, 2.0], [1.0, 1.0])]
    assert _pulled(kv, "s", (2,)).tolist() == [5.0, 5.0]
    with pytest.raises(mx.MXNetError, match="has no states to save"):
        kv.save_optimizer_states("unused")
    with pytest.raises(TypeError, match="must be callable"):
        kv._set_updater(3)


def test_failed_push_with_optimizer_changes_no_weight(monkeypatch):
    kv = mx.kv.create()
    kv.init([0, 1], [mx.nd.ones((2,)), mx.nd.ones((3,))])
    optimizer = mx.optimizer.Adam()
    kv.set_optimizer(optimizer)

    def broken(index, weight):
        if index == 1:
            raise MemoryError("no room for the state")
        return mx.optimizer.Adam.create_state(optimizer, index, weight)
    monkeypatch.setattr(optimizer, "create_state", broken)
    with pytest.raises(MemoryError):
        kv.push([0, 1], [mx.nd.ones((2,)), mx.nd.ones((3,))])
    assert _pulled(kv, 0, (2,)).tolist() == [1.0, 1.0]
    assert optimizer.num_update == 0


def test_optimizer_states_save_and_load(tmp_path):
    def store(lr, weight):
        kv = mx.kv.create("device")
        kv.init(5, _nd(weight))
        kv.set_optimizer(mx.optimizer.create("adam", learning_rate=lr))
        return kv

    grad = _nd([0.5, 0.25])
    kv_a = store(0.1, [1.0, -1.0])
    for _ in range(2):
        kv_a.push(5, grad)
    kv_a.save_optimizer_states(str(tmp_path / "plain"))
    kv_a.save_optimizer_states(str(tmp_path / "dump"), dump_optimizer=True)
    weight = _pulled(kv_a, 5, (2,))

    kv_b = store(0.3, weight)                  # states only: the optimizer stays
    kv_b.load_optimizer_states(str(tmp_path / "plain"))
    assert kv_b._updater.optimizer.lr == 0.3
    for sa, sb in zip(kv_a._updater.states[5], kv_b._updater.states[5]):
        np.testing.assert_array_equal(sa.asnumpy(), sb.asnumpy())

    kv_c = store(0.3, weight)                  # with the optimizer: continues as kv_a
    kv_c.load_optimizer_states(str(tmp_path / "dump"))
    assert kv_c._updater.optimizer.lr == 0.1
    kv_a.push(5, grad)
    kv_c.push(5, grad)
    np.testing.assert_array_equal(_pulled(kv_c, 5, (2,)), _pulled(kv_a, 5, (2,)))
    with pytest.raises(mx.MXNetError, match="no optimizer; call set_optimizer first"):
        mx.kv.create().save_optimizer_states(str(tmp_path / "none"))
    with pytest.raises(mx.MXNetError, match="no optimizer"):
        mx.kv.create().load_optimizer_states(str(tmp_path / "plain"))


def test_states_file_has_mxnet_bytes(tmp_path):
    """Plain SGD has no state: MXNet 1.9.1 writes exactly these bytes for key 7."""
    kv = mx.kv.create()
    kv.init(7, mx.nd.zeros((2, 2)))
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.1))
    kv.push(7, mx.nd.ones((2, 2)))
    np.testing.assert_allclose(_pulled(kv, 7, (2, 2)), np.full((2, 2), -0.1), rtol=1e-6)
    kv.save_optimizer_states(str(tmp_path / "s"))
    mxnet_bytes = b"\x80\x04\x95\x07\x00\x00\x00\x00\x00\x00\x00}\x94K\x07Ns."
    assert (tmp_path / "s").read_bytes() == mxnet_bytes


def test_gradient_compression_is_checked_and_exact():
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init(0, mx.nd.zeros((3,)))
    kv.push(0, [_nd([0.1, -0.7, 2.0]), _nd([0.2, 0.0, 0.0])])
    np.testing.assert_allclose(_pulled(kv, 0, (3,)), [0.3, -0.7, 2.0], rtol=1e-6)
    with pytest.raises(mx.MXNetError, match="unknown type for gradient compression '1bit'"):
        kv.set_gradient_compression({"type": "1bit"})
    with pytest.raises(mx.MXNetError, match="threshold must be greater than 0"):
        kv.set_gradient_compression({"type": "2bit", "threshold": -1})
    with pytest.raises(mx.MXNetError, match="required parameter 'type'"):
        kv.set_gradient_compression({"threshold": 0.5})
    with pytest.raises(mx.MXNetError, match="not supported for this type of kvstore"):
        mx.kv.create("local").set_gradient_compression({"type": "2bit"})


# -- errors ------------------------------------------------------------------------------

def test_errors_name_the_key_and_shapes():
    kv = mx.kv.create()
    kv.init(3, mx.nd.zeros((2, 3)))
    with pytest.raises(mx.MXNetError, match=r"push: key 99 has not been initialised; "
                                            r"call kv.init\(99, value\)"):
        kv.push(99, mx.nd.ones((2, 3)))
    with pytest.raises(mx.MXNetError, match="pull: key 98 has not been initialised"):
        kv.pull(98, out=mx.nd.zeros((2, 3)))
    with pytest.raises(mx.MXNetError, match=r"push: key 3 holds shape \(2, 3\) but value 1 of 2 "
                                            r"has shape \(3, 3\)"):
        kv.push(3, [mx.nd.ones((2, 3)), mx.nd.ones((3, 3))])
    with pytest.raises(mx.MXNetError, match=r"pull: key 3 holds shape \(2, 3\) but out 0 of 1 "
                                            r"has shape \(3,\)"):
        kv.pull(3, out=mx.nd.zeros((3,)))
    with pytest.raises(mx.MXNetError, match="duplicate init of key 3"):
        kv.init(3, mx.nd.zeros((2, 3)))
    with pytest.raises(mx.MXNetError, match="key 4 was given 2 values"):
        kv.init(4, [mx.nd.zeros((1,)), mx.nd.zeros((1,))])
    with pytest.raises(mx.MXNetError, match="mixed key types are not allowed: this store uses "
                                            "int keys, got str key 'w'"):
        kv.push("w", mx.nd.ones((2, 3)))
    with pytest.raises(TypeError, match="keys must be int or str, got float"):
        kv.push(2.5, mx.nd.ones((2, 3)))
    with pytest.raises(TypeError, match="key 3 needs NDArrays, got ndarray"):
        kv.push(3, [np.ones((2, 3))])
    with pytest.raises(ValueError, match="2 keys need a list of 2 values, got 1"):
        kv.push([3, 4], [mx.nd.ones((2, 3))])
    with pytest.raises(ValueError, match="out is required"):
        kv.pull(3)
    assert _pulled(kv, 3, (2, 3)).sum() == 0


def test_failed_calls_change_nothing():
    kv = mx.kv.create()
    kv.init([0, 1], [mx.nd.zeros((2,)), mx.nd.zeros((3,))])
    with pytest.raises(mx.MXNetError, match="key 1 holds shape"):
        kv.push([0, 1], [mx.nd.ones((2,)), mx.nd.ones((2,))])
    assert _pulled(kv, 0, (2,)).tolist() == [0.0, 0.0]
    kv.push(0, mx.nd.ones((2,)))
    outs = [mx.nd.ones((2,)) * 5, mx.nd.zeros((4,))]
    with pytest.raises(mx.MXNetError, match="key 1 holds shape"):
        kv.pull([0, 1], out=outs)
    assert outs[0].asnumpy().tolist() == [5.0, 5.0]
    with pytest.raises(mx.MXNetError, match="out 0 of 1 has shape"):
        kv.pushpull(0, mx.nd.ones((2,)) * 7, out=mx.nd.zeros((3,)))
    assert _pulled(kv, 0, (2,)).tolist() == [1.0, 1.0]
    with pytest.raises(mx.MXNetError, match="duplicate init of key 0"):
        kv.init([2, 0], [mx.nd.zeros((1,)), mx.nd.zeros((1,))])
    assert not kv._has_key(2)


# -- the Trainer on a store --------------------------------------------------------------

def _param(name, value, ctx):
    p = gluon.Parameter(name, shape=np.shape(value))
    p.initialize(ctx=ctx)
    p.set_data(mx.nd.array(value))
    return p


def _backward(params, coeffs=None):
    """loss = sum_i coeff_i * sum(p_i ** 2) on every context (grad 2 * coeff * p)."""
    coeffs = coeffs or [1.0] * len(params)
    with mx.autograd.record():
        losses = [sum((c * (p.data(ctx) ** 2).sum() for p, c in zip(params, coeffs)))
                  for ctx in params[0].list_ctx()]
    mx.autograd.backward(losses)


@pytest.mark.parametrize("kvstore", ["local", "device"])
def test_trainer_creates_a_store_for_several_contexts(kvstore):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    w = _param("w", [1.0, -2.0], ctxs)
    tr = gluon.Trainer([w], "sgd", {"learning_rate": 0.1}, kvstore=kvstore)
    _backward([w])
    tr.step(1)
    assert isinstance(tr._kvstore, mx.kv.KVStore) and tr._kvstore.type == kvstore
    for d in w.list_data():
        np.testing.assert_allclose(d.asnumpy(), [1 - 0.1 * 4, -2 + 0.1 * 8], rtol=1e-6)


def test_trainer_uses_a_given_store_even_on_one_context():
    kv = mx.kv.create("device")
    w = _param("w", [1.0, 2.0], mx.cpu())
    tr = gluon.Trainer([w], "sgd", {"learning_rate": 0.1, "momentum": 0.5}, kvstore=kv)
    expect, mom = np.array([1.0, 2.0]), np.zeros(2)
    for _ in range(2):
        _backward([w])
        tr.step(2)
        mom = 0.5 * mom - 0.1 * (2 * expect) / 2
        expect = expect + mom
    np.testing.assert_allclose(w.data().asnumpy(), expect, rtol=1e-6)
    assert tr._kvstore is kv and tr._update_on_kvstore
    np.testing.assert_allclose(_pulled(kv, 0, (2,)), expect, rtol=1e-6)   # key = param index
    assert 0 in kv._updater.states and tr._updaters[0].states == {}


def test_trainer_without_store_updates_each_context_alone():
    """kvstore=None (as MXNet): no reduction, each context steps with its own gradient."""
    ctxs = [mx.cpu(0), mx.cpu(1)]
    w = _param("w", [1.0], ctxs)
    tr = gluon.Trainer([w], "sgd", {"learning_rate": 0.1}, kvstore=None)
    with mx.autograd.record():
        losses = [w.data(c) * k for c, k in zip(ctxs, (1.0, 3.0))]
    mx.autograd.backward(losses)
    tr.step(1)
    assert tr._kvstore is None
    assert [d.asscalar() for d in w.list_data()] == pytest.approx([0.9, 0.7])


def test_trainer_store_errors(no_mpi4py):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    w = _param("w", [1.0], ctxs)
    _backward([w])
    with pytest.raises(mx.MXNetError, match=r"pip install 'mxlite\[dist\]'"):
        gluon.Trainer([w], "sgd", kvstore="dist_sync")
    with pytest.raises(TypeError, match="kvstore must be KVStore, str or None, got int"):
        gluon.Trainer([w], "sgd", kvstore=3).step(1)
    with pytest.raises(mx.MXNetError, match="Gradient compression is not supported"):
        gluon.Trainer([w], "sgd", kvstore="local",
                      compression_params={"type": "2bit"}).step(1)
    tr = gluon.Trainer([w], "sgd", kvstore="device", compression_params={"type": "2bit"})
    _backward([w])                     # a new Trainer counts existing gradients as seen
    tr.step(1)
    assert tr._kvstore._compression_params == {"type": "2bit"}
    one = _param("one", [1.0], mx.cpu())
    with pytest.raises(ValueError, match="update_on_kvstore=True without a kvstore"):
        gluon.Trainer([one], "sgd", update_on_kvstore=True).step(1)


def test_trainer_with_a_store_that_cannot_optimize():
    class SumStore(mx.kv.KVStoreBase):
        """Sums over devices; no optimizer (as MXNet's TestStore)."""
        type = "sumstore"

        def broadcast(self, key, value, out, priority=0):
            for o in out:
                o[:] = value

        def pushpull(self, key, value, out=None, priority=0):
            for k, grads in zip(key, value):
                total = sum(g.as_in_context(grads[0].context) for g in grads)
                for g in grads:
                    g[:] = total.as_in_context(g.context)

        def is_capable(self, capability):
            return False

    ctxs = [mx.cpu(0), mx.cpu(1)]
    w = _param("w", [1.0, 3.0], ctxs)
    tr = gluon.Trainer([w], "sgd", {"learning_rate": 0.1}, kvstore=SumStore())
    _backward([w])
    tr.step(4)
    assert tr._update_on_kvstore is False
    for d in w.list_data():
        np.testing.assert_allclose(d.asnumpy(), [1 - 0.1 * 1.0, 3 - 0.1 * 3.0], rtol=1e-6)
    with pytest.raises(ValueError, match="set update_on_kvstore=False when training with "
                                         "SumStore"):
        gluon.Trainer([w], "sgd", kvstore=SumStore(), update_on_kvstore=True).step(1)


@pytest.mark.parametrize("update_on_kvstore", [True, False])
def test_trainer_stale_gradients_stay_stale_through_the_store(update_on_kvstore):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    w, b = _param("w", [1.0], ctxs), _param("b", [2.0], ctxs)
    tr = gluon.Trainer([w, b], "sgd", {"learning_rate": 0.1},
                       update_on_kvstore=update_on_kvstore)
    _backward([w, b])
    tr.step(1)
    _backward([w])                                 # b not used
    with pytest.raises(UserWarning, match=r"`b` on cpu\(0\), `b` on cpu\(1\)"):
        tr.step(1)
    assert [d.asscalar() for d in w.list_data()] == pytest.approx([0.6, 0.6])
    tr.step(1, ignore_stale_grad=True)
    assert [d.asscalar() for d in w.list_data()] == pytest.approx([0.6 - 0.1 * 2.4] * 2)
    assert [d.asscalar() for d in b.list_data()] == pytest.approx([2.0 - 0.1 * 8.0] * 2)
    _backward([w])
    with pytest.raises(UserWarning, match="`b` on"):
        tr.step(1)                                 # b is still stale after the allreduce


def test_trainer_allreduce_keeps_a_stale_context_stale():
    """update_on_kvstore=False writes the sum into every gradient buffer; the buffer of a
    context that ran no backward must still count as stale at the next step."""
    ctxs = [mx.cpu(0), mx.cpu(1)]
    w, b = _param("w", [1.0], ctxs), _param("b", [2.0], ctxs)
    tr = gluon.Trainer([w, b], "sgd", {"learning_rate": 0.1}, update_on_kvstore=False)

    def backward_b_on_cpu0_only():
        with mx.autograd.record():
            losses = [(w.data(c) ** 2).sum() + ((b.data(c) ** 2).sum() if c == ctxs[0] else 0)
                      for c in ctxs]
        mx.autograd.backward(losses)

    _backward([w, b])
    tr.step(1)
    backward_b_on_cpu0_only()
    tr.step(1, ignore_stale_grad=True)
    # b (1.2 after the first step) is summed over both buffers, 2.4 fresh on cpu(0)
    # and the 8.0 that the first allreduce left on cpu(1); the sum updates cpu(0)
    # only, as in MXNet, which skips the stale context's update too
    assert [d.asscalar() for d in b.list_data()] == pytest.approx([1.2 - 0.1 * 10.4, 1.2])
    backward_b_on_cpu0_only()
    with pytest.raises(UserWarning, match=r"Parameters with stale gradients: `b` on cpu\(1\)$"):
        tr.step(1)


def test_trainer_failed_step_on_the_store_leaves_weights(monkeypatch):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    w, b = _param("w", [1.0], ctxs), _param("b", [2.0], ctxs)
    tr = gluon.Trainer([w, b], "adam")
    _backward([w, b])

    def broken(index, weight):
        if index == 1:
            raise MemoryError("no room for the state")
        return mx.optimizer.Adam.create_state(tr.optimizer, index, weight)
    monkeypatch.setattr(tr.optimizer, "create_state", broken)
    with pytest.raises(MemoryError):
        tr.step(1)
    assert [d.asscalar() for d in w.list_data() + b.list_data()] == [1.0, 1.0, 2.0, 2.0]


@pytest.mark.parametrize("given", [False, True])
def test_trainer_set_data_reaches_the_store(given):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    w = _param("w", [1.0], ctxs)
    kv = mx.kv.create("device") if given else "device"
    tr = gluon.Trainer([w], "sgd", {"learning_rate": 0.1}, kvstore=kv)
    _backward([w])
    tr.step(1)                                     # 1 - 0.1 * 4
    w.set_data(mx.nd.array([10.0]))
    _backward([w])
    tr.step(1)                                     # 10 - 0.1 * 40
    assert [d.asscalar() for d in w.list_data()] == pytest.approx([6.0, 6.0])
    assert (tr._kvstore is kv) is given


def test_trainer_states_roundtrip_on_the_store(tmp_path):
    ctxs = [mx.cpu(0), mx.cpu(1)]

    def make(lr):
        w = _param("w", [1.0, -1.0], ctxs)
        return w, gluon.Trainer([w], "adam", {"learning_rate": lr})

    w_a, tr_a = make(0.01)
    for _ in range(2):
        _backward([w_a])
        tr_a.step(1)
    tr_a.save_states(str(tmp_path / "s.states"))
    assert tr_a._update_on_kvstore
    w_b, tr_b = make(0.5)
    w_b.set_data(w_a.data())
    tr_b.load_states(str(tmp_path / "s.states"))
    assert tr_b.learning_rate == 0.01 and tr_b.optimizer is tr_b._kvstore._updater.optimizer
    assert tr_b.optimizer.param_dict[0] is w_b
    for w, tr in ((w_a, tr_a), (w_b, tr_b)):
        _backward([w])
        tr.step(1)
    for da, db in zip(w_a.list_data(), w_b.list_data()):
        np.testing.assert_array_equal(da.asnumpy(), db.asnumpy())


def test_kvstore_server_has_nothing_to_serve(capsys):
    server = mx.kv.KVStoreServer(mx.kv.create("local"))
    assert server.kvstore.type == "local"
    assert server.run() is None
    assert "need no servers" in capsys.readouterr().err
