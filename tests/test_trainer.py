"""gluon.Trainer on Parameters: step, contexts, stale gradients, grad_req='null',
and states files in MXNet's format (reference/formats/trainer_*.states)."""
import json
import os
import pickle

import numpy as np
import pytest

import mxlite as mx
from mxlite import gluon
from conftest import REF

FORMATS = os.path.join(REF, "formats")


def _param(name, value, ctx=None, **kw):
    p = gluon.Parameter(name, shape=np.shape(value), **kw)
    p.initialize(ctx=ctx or mx.cpu())
    p.set_data(mx.nd.array(value))
    return p


def _backward(params, coeffs):
    """loss = sum_i coeff_i * sum(p_i * p_i) on every context; grad = 2 * coeff * p."""
    with mx.autograd.record():
        losses = [sum((c * (p.data(ctx) * p.data(ctx)).sum() for p, c in zip(params, coeffs)))
                  for ctx in params[0].list_ctx()]
    mx.autograd.backward(losses)


def test_step_sgd_rescales_by_batch_size():
    w = _param("w", [1.0, -2.0])
    b = _param("b", [0.5])
    tr = gluon.Trainer([w, b], "sgd", {"learning_rate": 0.1})
    _backward([w, b], [1.0, 1.0])
    tr.step(4)
    np.testing.assert_allclose(w.data().asnumpy(), [1 - 0.1 * 2 / 4, -2 + 0.1 * 4 / 4], rtol=1e-6)
    np.testing.assert_allclose(b.data().asnumpy(), [0.5 - 0.1 * 1 / 4], rtol=1e-6)
    assert tr.optimizer.rescale_grad == 0.25 and tr.learning_rate == 0.1
    tr.set_learning_rate(0.5)
    assert tr.optimizer.lr == 0.5


def test_dict_params_are_taken_in_sorted_order():
    pd = gluon.ParameterDict("net_")
    pd.get("weight", shape=(2,))
    pd.get("bias", shape=(2,))
    pd.initialize()
    tr = gluon.Trainer(pd, "sgd")
    assert [p.name for p in tr._params] == ["net_bias", "net_weight"]
    with pytest.raises(ValueError, match="list or dict of Parameters"):
        gluon.Trainer([1, 2], "sgd")
    with pytest.raises(ValueError, match="optimizer_params must be None"):
        gluon.Trainer(pd, mx.optimizer.SGD(), {"learning_rate": 1})


@pytest.mark.parametrize("update_on_kvstore", [None, True, False])
def test_multi_context_sums_gradients_and_copies_update(update_on_kvstore):
    ctxs = [mx.cpu(0), mx.cpu(1)]
    w = _param("w", [1.0, 2.0], ctx=ctxs)
    tr = gluon.Trainer([w], "sgd", {"learning_rate": 0.1, "momentum": 0.5},
                       update_on_kvstore=update_on_kvstore)
    expect, mom = np.array([1.0, 2.0]), np.zeros(2)
    for _ in range(2):
        _backward([w], [1.0])              # grad 2w on each of the two contexts
        tr.step(1)
        grad_one = 2 * expect
        mom = 0.5 * mom - 0.1 * (2 * grad_one)
        expect = expect + mom
        for d in w.list_data():
            np.testing.assert_allclose(d.asnumpy(), expect, rtol=1e-6)
        # update_on_kvstore=False writes the sum back to every context; on the
        # kvstore (MXNet's default with several contexts) the buffers keep their own
        want = 2 * grad_one if update_on_kvstore is False else grad_one
        for g in w.list_grad():
            np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-6)
    assert tr._update_on_kvstore is (update_on_kvstore is not False)
    if update_on_kvstore is not False:
        with pytest.raises(AssertionError, match="update_on_kvstore"):
            tr.allreduce_grads()
        with pytest.raises(AssertionError, match="update_on_kvstore"):
            tr.update(1)


def test_allreduce_then_update():
    ctxs = [mx.cpu(0), mx.cpu(1)]
    w = _param("w", [1.0, 3.0], ctx=ctxs)
    tr = gluon.Trainer([w], "sgd", {"learning_rate": 0.1}, update_on_kvstore=False)
    _backward([w], [1.0])
    tr.allreduce_grads()
    for g in w.list_grad():
        np.testing.assert_allclose(g.asnumpy(), [4.0, 12.0])      # 2w summed over 2 contexts
    for g in w.list_grad():
        g[:] = g * 0.5                       # e.g. clipping between the two halves
    tr.update(2)
    for d in w.list_data():
        np.testing.assert_allclose(d.asnumpy(), [1 - 0.1 * 1.0, 3 - 0.1 * 3.0], rtol=1e-6)


def test_stale_gradient_error_names_params_and_changes_nothing():
    w, b = _param("w", [1.0]), _param("b", [2.0])
    tr = gluon.Trainer([w, b], "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    with pytest.raises(UserWarning, match=r"Gradient of Parameter `w` on context cpu\(0\) has not "
                                          r"been updated by backward since last `step`.*`b` on"):
        tr.step(1)                             # no backward yet
    _backward([w], [1.0])                     # b unused in this iteration
    with pytest.raises(UserWarning, match=r"Parameter `b` on context cpu\(0\).*"
                                          r"ignore_stale_grad=True"):
        tr.step(1)
    assert w.data().asscalar() == 1.0 and tr.optimizer.num_update == 0
    assert tr._updaters[0].states == {}
    tr.step(1, ignore_stale_grad=True)        # updates w only
    np.testing.assert_allclose(w.data().asnumpy(), [1 - 0.1 * 2], rtol=1e-6)
    assert b.data().asscalar() == 2.0
    with pytest.raises(UserWarning, match="`w`"):
        tr.step(1)                             # w's gradient is stale again


def test_grad_req_null_is_never_touched():
    w = _param("w", [1.0, 1.0])
    frozen = _param("frozen_weight", [5.0, 5.0], grad_req="null")
    tr = gluon.Trainer([w, frozen], "sgd", {"learning_rate": 0.1, "wd": 0.5, "momentum": 0.9})
    for _ in range(2):
        _backward([w], [1.0])
        tr.step(1)
    assert (frozen.data().asnumpy() == 5.0).all()          # not even weight decay
    assert 1 not in tr._updaters[0].states


def test_deferred_parameter_becomes_trainable():
    net = gluon.nn.Dense(2)
    net.initialize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1.0})
    x = mx.nd.ones((3, 4))
    with mx.autograd.record():
        y = net(x).sum()
    y.backward()
    before = net.weight.data().asnumpy().copy()
    tr.step(3)
    np.testing.assert_allclose(net.weight.data().asnumpy(), before - 1.0, rtol=1e-6)


def test_failed_step_leaves_weights(monkeypatch):
    w, b = _param("w", [1.0]), _param("b", [2.0])
    tr = gluon.Trainer([w, b], "adam")
    _backward([w, b], [1.0, 1.0])

    def broken(index, weight):
        if index == 1:
            raise MemoryError("no room for the state")
        return mx.optimizer.Adam.create_state(tr.optimizer, index, weight)
    monkeypatch.setattr(tr.optimizer, "create_state", broken)
    with pytest.raises(MemoryError):
        tr.step(1)
    assert w.data().asscalar() == 1.0 and b.data().asscalar() == 2.0


def test_lr_mult_and_wd_mult_from_parameters():
    w = _param("w", [1.0], lr_mult=2.0, wd_mult=0.0)
    tr = gluon.Trainer([w], "sgd", {"learning_rate": 0.1, "wd": 1.0})
    _backward([w], [1.0])
    tr.step(1)
    np.testing.assert_allclose(w.data().asnumpy(), [1 - 0.2 * 2], rtol=1e-6)


# -- states files -------------------------------------------------------------------

def _format_entry(name):
    with open(os.path.join(FORMATS, "manifest.json")) as f:
        return [e for e in json.load(f)["files"] if e["file"] == name][0]


def _reference_net(prefix, values, key):
    nn = gluon.nn
    net = nn.HybridSequential(prefix=prefix)
    with net.name_scope():
        net.add(nn.Dense(3, in_units=4, activation="tanh"), nn.Dense(2, in_units=3))
    net.initialize()
    for k, p in net.collect_params().items():
        p.set_data(mx.nd.array(values[key + k]))
    return net


def _l2_step(net, trainer, values):
    data, target = mx.nd.array(values["data"]), mx.nd.array(values["target"])
    with mx.autograd.record():
        out = net(data)
        loss = ((out - target) ** 2).mean(axis=1) * 0.5       # gluon.loss.L2Loss
    loss.backward()
    trainer.step(5)


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_load_mxnet_states_and_resume(opt, tmp_path):
    entry = _format_entry("trainer_%s.states" % opt)
    z = np.load(os.path.join(FORMATS, entry["npz"]), allow_pickle=False)
    net = _reference_net("tr_%s_" % opt, z, "after_save/")
    tr = gluon.Trainer(net.collect_params(), entry["optimizer"], entry["optimizer_kwargs"])
    tr.load_states(os.path.join(FORMATS, entry["file"]))
    assert type(tr.optimizer).__name__ == entry["optimizer_class"].rsplit(".", 1)[1]
    assert tr.optimizer.num_update == entry["optimizer_pickled_attributes"]["num_update"]
    assert tr.optimizer.param_dict[0] is tr._params[0]
    states = tr._updaters[0].states
    for i in range(4):
        if opt == "sgd":
            assert np.array_equal(states[i].asnumpy(), z["state/%d" % i])
        else:
            for j in range(2):
                assert np.array_equal(states[i][j].asnumpy(), z["state/%d/%d" % (i, j)])
    _l2_step(net, tr, z)
    for k, p in net.collect_params().items():
        np.testing.assert_allclose(p.data().asnumpy(), z["after_next_step/" + k],
                                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_save_states_is_byte_identical_to_mxnet(opt, tmp_path):
    """Loading MXNet's file and saving it again gives MXNet's bytes (its pickle layout)."""
    entry = _format_entry("trainer_%s.states" % opt)
    z = np.load(os.path.join(FORMATS, entry["npz"]), allow_pickle=False)
    net = _reference_net("tr_%s_" % opt, z, "after_save/")
    tr = gluon.Trainer(net.collect_params(), entry["optimizer"], entry["optimizer_kwargs"])
    src = os.path.join(FORMATS, entry["file"])
    tr.load_states(src)
    out = tmp_path / "again.states"
    tr.save_states(str(out))
    with open(src, "rb") as f:
        assert out.read_bytes() == f.read()


def test_save_load_roundtrip_continues_identically(tmp_path):
    z = np.load(os.path.join(FORMATS, "trainer_adam_values.npz"), allow_pickle=False)
    net_a = _reference_net("a_", {k.replace("tr_adam_", "a_"): v for k, v in z.items()}, "init/")
    tr_a = gluon.Trainer(net_a.collect_params(), "adam", {"learning_rate": 0.01})
    for _ in range(2):
        _l2_step(net_a, tr_a, z)
    tr_a.save_states(str(tmp_path / "s.states"))
    blob = (tmp_path / "s.states").read_bytes()
    assert b"mxnet.optimizer.optimizer" in blob and b"mxnet.ndarray.ndarray" in blob
    net_b = _reference_net("b_", {k.replace("a_", "b_"): v.data().asnumpy()
                                  for k, v in net_a.collect_params().items()}, "")
    tr_b = gluon.Trainer(net_b.collect_params(), "adam", {"learning_rate": 0.5})
    tr_b.load_states(str(tmp_path / "s.states"))
    assert tr_b.learning_rate == 0.01        # the saved optimizer replaces the new one
    _l2_step(net_a, tr_a, z)
    _l2_step(net_b, tr_b, z)
    for pa, pb in zip(net_a.collect_params().values(), net_b.collect_params().values()):
        np.testing.assert_array_equal(pa.data().asnumpy(), pb.data().asnumpy())


def test_bad_states_file(tmp_path):
    w = _param("w", [1.0])
    tr = gluon.Trainer([w], "sgd")
    bad = tmp_path / "bad.states"
    bad.write_bytes(b"not a pickle")
    with pytest.raises(mx.MXNetError, match="not a valid optimizer states pickle"):
        tr.load_states(str(bad))
    bad.write_bytes(pickle.dumps(({0: 1}, None), protocol=4)[:-3])     # truncated
    with pytest.raises(mx.MXNetError, match="not a valid"):
        tr.load_states(str(bad))
    assert isinstance(tr.optimizer, mx.optimizer.SGD) and tr._updaters[0].optimizer is tr.optimizer


class _RunsCode:
    """What a hostile states file holds: unpickling it would call ``os.system``."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, ("touch %s" % self.path,))


@pytest.mark.parametrize("payload,msg", [
    ("code", r"refers to (posix|nt|os)\.system, which is not a type that optimizer states "
             r"hold.*refusing"),
    ([1, 2], "the file holds list, expected a dict of optimizer states"),
    (({0: None}, "sgd"), "the file holds str where the optimizer should be"),
    ("module", r"refers to mxnet\.gluon\.utils\.download, which is not a type"),
])
def test_load_states_runs_no_code_and_changes_nothing(tmp_path, payload, msg):
    # MXNet unpickles states files as they are; mxlite admits only what states hold.
    w = _param("w", [1.0, 2.0])
    tr = gluon.Trainer([w], "sgd", {"learning_rate": 0.1, "momentum": 0.9})
    _backward([w], [1.0])
    tr.step(1)
    states, opt = dict(tr._updaters[0].states), tr.optimizer
    marker = tmp_path / "ran"
    if payload == "code":
        blob = pickle.dumps(({0: _RunsCode(marker)}, None), protocol=4)
    elif payload == "module":    # an mxlite function under MXNet's name: not a type either
        blob = b"\x80\x04" + b"".join(b"\x8c" + bytes([len(t)]) + t
                                       for t in (b"mxnet.gluon.utils", b"download")) + b"\x93."
    else:
        blob = pickle.dumps(payload, protocol=4)
    (tmp_path / "x.states").write_bytes(blob)
    with pytest.raises(mx.MXNetError, match=msg):
        tr.load_states(str(tmp_path / "x.states"))
    assert not marker.exists()
    assert tr.optimizer is opt and tr._updaters[0].optimizer is opt
    assert tr._updaters[0].states.keys() == states.keys()
    assert all(tr._updaters[0].states[k] is v for k, v in states.items())


def test_only_backward_makes_a_gradient_fresh_as_mxnet():
    # MXNet 1.9.1 (checked): _fresh_grad is set by backward and cleared by the update;
    # zero_grad or writing into .grad does not make a gradient fresh.
    net = gluon.nn.Dense(1, in_units=2)
    net.initialize()
    tr = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    x = mx.nd.ones((2, 2))

    def backward():
        with mx.autograd.record():
            y = net(x).sum()
        y.backward()

    backward()
    assert net.weight.data()._fresh_grad
    tr.step(2)
    assert not net.weight.data()._fresh_grad
    net.collect_params().zero_grad()
    net.weight.grad()[:] = 1.0
    before = net.weight.data().asnumpy().copy()
    with pytest.raises(UserWarning, match="has not been updated by backward"):
        tr.step(2)
    assert (net.weight.data().asnumpy() == before).all()
    backward()
    net.collect_params().zero_grad()        # still fresh: backward ran since the step
    tr.step(2)
    for p in net.collect_params().values():  # MXNet's setter, as some scripts use it
        p.data()._fresh_grad = True
    tr.step(2)


def test_step_with_batch_size_zero_names_it_and_changes_nothing():
    w = _param("w", [1.0, 2.0])
    tr = gluon.Trainer([w], "sgd", {"learning_rate": 0.1})
    _backward([w], [1.0])
    for bad in (0, -2):     # MXNet: a raw ZeroDivisionError (or a flipped step)
        with pytest.raises(ValueError, match="Trainer.step: batch_size must be a positive "
                                             "number, got %d" % bad):
            tr.step(bad)
    np.testing.assert_array_equal(w.data().asnumpy(), [1.0, 2.0])
    tr.step(1)
    np.testing.assert_allclose(w.data().asnumpy(), [0.8, 1.6], rtol=1e-6)


# -- row_sparse weights and gradients (MXNet: the weight lives in the kvstore) ---------------
TWO = [mx.cpu(0), mx.cpu(1)]
W0 = np.arange(8, dtype=np.float32).reshape(4, 2) + 1


def _sparse_param(stype="row_sparse", grad_stype="row_sparse", ctx=None):
    p = gluon.Parameter("x", shape=(4, 2), stype=stype, grad_stype=grad_stype)
    p.initialize(init=mx.init.Constant(0), ctx=ctx or TWO)
    for arr in p._data:     # (set_data before a Trainer: a known value on every context)
        arr[:] = W0
    return p


def test_row_sparse_data_pulls_only_the_rows_asked():
    p = _sparse_param()
    gluon.Trainer([p], "sgd")
    got = p.row_sparse_data(mx.nd.array([3, 1], ctx=mx.cpu(1)))
    assert got.context == mx.cpu(1) and got.stype == "row_sparse"
    np.testing.assert_array_equal(got.asnumpy(), [[0, 0], W0[1], [0, 0], W0[3]])
    both = p.list_row_sparse_data(mx.nd.array([0]))
    for arr in both:
        np.testing.assert_array_equal(arr.asnumpy(), [W0[0], [0, 0], [0, 0], [0, 0]])
    # the whole weight is still there: all rows, and what is saved
    np.testing.assert_array_equal(p.row_sparse_data(mx.nd.arange(4)).asnumpy(), W0)
    p.row_sparse_data(mx.nd.array([2]))
    np.testing.assert_array_equal(p._reduce().asnumpy(), W0)


@pytest.mark.parametrize("stype, grad_stype, update, expected", [
    ("default", "default", None, True), ("default", "default", False, False),
    ("default", "row_sparse", None, False), ("default", "row_sparse", True, True),
    ("default", "row_sparse", False, False), ("row_sparse", "row_sparse", None, True),
    ("row_sparse", "default", None, True)])
def test_sparse_parameters_choose_update_on_kvstore_as_mxnet(stype, grad_stype, update,
                                                              expected, monkeypatch):
    # MXNet 1.9.1 (Trainer._init_kvstore, test_trainer_sparse_kv): a row_sparse weight is
    # updated on the store; a sparse gradient of a dense weight is updated on every
    # context unless the store is distributed; update_on_kvstore given wins
    monkeypatch.delenv("MXNET_UPDATE_ON_KVSTORE", raising=False)
    p = _sparse_param(stype, grad_stype, ctx=TWO)
    p.initialize(init=mx.init.Zero(), ctx=TWO, force_reinit=True)
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 0.1}, kvstore="local",
                            update_on_kvstore=update)
    rows = mx.nd.arange(0, 4)
    ws = p.list_data() if stype == "default" else p.list_row_sparse_data(rows)
    with mx.autograd.record():
        for w in ws:
            (w + 1).backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is expected and trainer._kvstore.type == "local"
    new = p.data(mx.cpu(1)) if stype == "default" else p.row_sparse_data(rows)
    np.testing.assert_allclose(new.asnumpy(), -0.2)       # two contexts' gradients of 1


def test_sparse_weight_needs_a_store_that_updates():
    p = _sparse_param(ctx=[mx.cpu()])
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 0.1})
    p.row_sparse_data(mx.nd.array([0]))
    assert trainer._kvstore is not None and trainer._update_on_kvstore is True
    with pytest.raises(ValueError, match="update_on_kvstore=False when sparse weights"):
        gluon.Trainer([_sparse_param()], "sgd", update_on_kvstore=False)._init_kvstore()
    with pytest.raises(TypeError, match="The type must be KVStore or str"):
        gluon.Trainer([_sparse_param()], "sgd", kvstore=None)._init_kvstore()


def test_resetting_the_store_keeps_every_row_of_a_sparse_weight():
    # set_data of another parameter makes a new store: the row_sparse weight, whose
    # contexts hold the rows last pulled, keeps its whole value
    p = _sparse_param(ctx=[mx.cpu()])
    d = _param("d", [1.0, 2.0])
    gluon.Trainer([p, d], "sgd")
    p.row_sparse_data(mx.nd.array([1]))
    d.set_data(mx.nd.array([5.0, 6.0]))
    np.testing.assert_array_equal(p.row_sparse_data(mx.nd.arange(4)).asnumpy(), W0)
    np.testing.assert_array_equal(d.data().asnumpy(), [5, 6])


def test_sparse_weight_pulled_in_a_forward_leaves_other_parameters_alone():
    # A lookup table read through row_sparse_data inside forward, next to a Dense whose
    # shape waits for the first call, recorded on two contexts: pulling the table's rows
    # must not write into the Dense arrays the first context's graph has recorded.
    class Lookup(gluon.Block):
        def __init__(self):
            super().__init__(prefix="lookup_")
            with self.name_scope():
                self.table = self.params.get("table", shape=(5, 2), stype="row_sparse",
                                             grad_stype="row_sparse")
                self.out = gluon.nn.Dense(3)

        def forward(self, ids):
            rows = mx.nd.Embedding(ids, self.table.row_sparse_data(ids), input_dim=5,
                                   output_dim=2, sparse_grad=True)
            return self.out(rows)

    net = Lookup()
    net.initialize(mx.init.One(), ctx=TWO)
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 1})
    ids = np.array([[0, 3], [3, 4]])
    with mx.autograd.record():
        outs = [net(x) for x in gluon.utils.split_and_load(mx.nd.array(ids), TWO)]
    mx.autograd.backward(outs)
    trainer.step(1)
    assert not trainer._params_to_init
    # each use of a row gets the Dense's three weights of 1 as its gradient, per element
    uses = np.bincount(ids.ravel(), minlength=5)[:, None]
    table = net.table.row_sparse_data(mx.nd.arange(5, ctx=mx.cpu(1)))
    np.testing.assert_array_equal(table.asnumpy(), np.ones((5, 2)) - 3 * uses)


@pytest.mark.parametrize("ctx", [[mx.cpu(0)], TWO])
def test_sparse_embedding_updates_only_the_rows_it_looked_up(ctx):
    # SGD with momentum and weight decay on a row_sparse gradient (lazy_update, MXNet's
    # default): rows 0, 2 and 4 are not looked up and keep their values, decay included
    # (MXNet 1.9.1 gives [1, -0.55, 1, 0.45, 1] in column 0)
    from mxlite.gluon.contrib import nn as cnn
    emb = cnn.SparseEmbedding(5, 2, weight_initializer=mx.init.Constant(1.0))
    emb.initialize(ctx=ctx)
    trainer = gluon.Trainer(emb.collect_params(), "sgd",
                            {"learning_rate": 0.5, "momentum": 0.9, "wd": 0.1})
    with mx.autograd.record():
        outs = [emb(x) for x in gluon.utils.split_and_load(mx.nd.array([1, 3, 1, 1]), ctx)]
    mx.autograd.backward(outs)
    trainer.step(1)
    uses = np.array([0, 3, 0, 1, 0], dtype=np.float32)
    expected = np.where(uses > 0, 1 - 0.5 * (uses + 0.1 * 1), 1)
    got = emb.weight.row_sparse_data(mx.nd.arange(5)).asnumpy()
    np.testing.assert_allclose(got[:, 0], expected, rtol=1e-6)
    np.testing.assert_allclose(got[:, 1], expected, rtol=1e-6)
