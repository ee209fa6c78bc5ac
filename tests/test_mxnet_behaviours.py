"""Behaviours of MXNet 1.9.1 that code written for it relies on: initializers named by
ops for the variables they read, hidden attribute keywords on ops, keywords that MXNet
ignores, CTC labels, NDArrayIter sample counts, ``autograd.get_symbol``."""
import json
import warnings

import numpy as np
import pytest

import mxlite as mx


def test_constant_dumps_writes_array_values_as_lists():
    init = mx.init.Constant(mx.nd.ones((2, 2)))
    text = init.dumps()
    assert json.loads(text) == ["constant", {"value": [[1.0, 1.0], [1.0, 1.0]]}]
    # as in MXNet the JSON form stays in _kwargs, so it dumps the same way again
    assert text == json.dumps(["constant", init._kwargs])
    assert mx.init.Constant(np.zeros(2)).dumps() == '["constant", {"value": [0.0, 0.0]}]'
    assert mx.init.Constant(1).dumps() == '["constant", {"value": 1}]'


def test_prelu_gamma_gets_its_shape_and_default_init():
    data = mx.sym.Variable("data")
    net = mx.sym.LeakyReLU(data=data, act_type="prelu")
    assert net.infer_shape(data=(4, 6))[0] == [(4, 6), (6,)]
    mod = mx.mod.Module(net, label_names=None)
    mod.bind(data_shapes=[("data", (4, 6))])
    mod.init_params()
    (gamma,) = mod.get_params()[0].values()
    np.testing.assert_array_equal(gamma.asnumpy(), np.full(6, 0.25, np.float32))
    # a variable with its own initializer keeps it
    g = mx.sym.Variable("g", init=mx.init.One())
    mod = mx.mod.Module(mx.sym.LeakyReLU(data=data, gamma=g, act_type="prelu"),
                        label_names=None)
    mod.bind(data_shapes=[("data", (4, 6))])
    mod.init_params()
    assert (mod.get_params()[0]["g"].asnumpy() == 1).all()


def test_batchnorm_moving_stats_carry_their_initializers_in_json():
    nodes = json.loads(mx.sym.BatchNorm(mx.sym.var("x"), name="bn").tojson())["nodes"]
    attrs = {n["name"]: n.get("attrs", {}) for n in nodes}
    assert attrs["bn_moving_mean"]["__init__"] == '["zero", {}]'
    assert attrs["bn_moving_var"]["__init__"] == '["one", {}]'
    assert "__init__" not in attrs["bn_gamma"]


def test_lr_and_wd_mult_keywords_on_an_op_reach_its_weights():
    data = mx.sym.Variable("data")
    bias = mx.sym.Variable("fc1_bias", lr_mult=1.0)
    fc1 = mx.sym.FullyConnected(data=data, bias=bias, name="fc1", num_hidden=4, lr_mult=0)
    fc2 = mx.sym.FullyConnected(data=fc1, name="fc2", num_hidden=4, wd_mult=0.5)
    attrs = fc2.attr_dict()
    assert attrs["fc1_weight"]["__lr_mult__"] == "0"
    assert attrs["fc1_bias"]["__lr_mult__"] == "1.0"
    assert attrs["fc2_bias"]["__wd_mult__"] == "0.5"
    mod = mx.mod.Module(fc2, label_names=None)
    mod.bind(data_shapes=[("data", (2, 3))])
    mod.init_params()
    mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    assert mod._optimizer.lr_mult == {"fc1_bias": 1.0, "fc1_weight": 0.0}
    assert mod._optimizer.wd_mult == {"fc2_bias": 0.5, "fc2_weight": 0.5, "fc1_bias": 0.0}
    with pytest.raises(ValueError, match="Variable\\(lr_mult=2\\)"):
        mx.sym.FullyConnected(data=data, num_hidden=4, weight_lr_mult=2)


def test_keyword_of_a_parameterless_op_is_ignored_with_one_warning():
    a, b = mx.nd.array([0.0]), mx.nd.array([[1.0], [-2.0]])
    with pytest.warns(UserWarning, match="broadcast_maximum takes no parameters"):
        y = mx.nd.broadcast_maximum(a, b, axis=7)
    np.testing.assert_array_equal(y.asnumpy(), [[1.0], [0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mx.nd.broadcast_maximum(a, b, axis=7)       # warned once already
    with pytest.raises(TypeError, match="unexpected argument"):
        mx.nd.sum(a, axes=0)                        # an op with params still checks


def test_ctc_label_may_equal_the_blank_class():
    loss = mx.gluon.loss.CTCLoss()          # blank is the last class (3 of 4)
    data = mx.nd.ones((2, 20, 4))
    plain = loss(data, mx.nd.array([[1, 0, -1, -1], [2, 1, 1, -1]]))
    with_blank = loss(data, mx.nd.array([[2, 1, 3, 3], [3, 2, 2, 3]]), None,
                      mx.nd.array([2, 3]))
    # uniform activations: only the label pattern matters, not the class ids
    np.testing.assert_allclose(with_blank.asnumpy(), plain.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(plain.asnumpy(), [18.82820702, 16.50581741], rtol=1e-5)
    with pytest.raises(mx.base.MXNetError, match="label values"):
        loss(data, mx.nd.array([[4, 0], [1, 1]]))


def test_ndarray_iter_uses_the_first_samples_of_longer_labels():
    data = np.arange(10, dtype=np.float32).reshape(5, 2)
    label = np.arange(8, dtype=np.float32)
    with pytest.warns(UserWarning, match="only their first 5 are used"):
        it = mx.io.NDArrayIter(data, label, batch_size=5)
    batch = next(it)
    np.testing.assert_array_equal(batch.label[0].asnumpy(), label[:5])
    with pytest.raises(ValueError, match="has 3 samples"):
        mx.io.NDArrayIter(data, label[:3], batch_size=5)


def test_get_symbol_returns_the_recorded_graph():
    x, z = mx.nd.array([3.0]), mx.nd.array([1.0])
    x.attach_grad()
    z.attach_grad()
    with mx.autograd.record():
        y = x * x + 2 * z - 1
    sym = mx.autograd.get_symbol(y)
    assert sorted(sym.list_arguments()) == ["var0", "var1"]
    twos = {n: mx.nd.array([2.0]) for n in sym.list_arguments()}
    assert sym.eval(**twos)[0].asscalar() == 2 * 2 + 2 * 2 - 1
    with pytest.raises(mx.base.MXNetError, match="not in a recorded graph"):
        mx.autograd.get_symbol(mx.nd.ones((1,)))


def test_get_symbol_keeps_the_attributes_the_calls_gave():
    # MXNet records an op's attributes as the call passed them, not its defaults
    # (MXNet 1.9.1: Pooling's node has attrs kernel, pool_type and stride only).
    x = mx.nd.array(np.arange(2 * 3 * 9 * 9, dtype=np.float32).reshape(2, 3, 9, 9))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pool_type="max")
        z = mx.nd.sum(mx.nd.relu(y), axis=1)
    sym = mx.autograd.get_symbol(z)
    nodes = [n for n in json.loads(sym.tojson())["nodes"] if n["op"] != "null"]
    assert [(n["op"], n.get("attrs", {})) for n in nodes] == [
        ("Pooling", {"kernel": "(3, 3)", "pool_type": "max", "stride": "(2, 2)"}),
        ("relu", {}), ("sum", {"axis": "1"})]
    back = mx.sym.load_json(sym.tojson())
    np.testing.assert_array_equal(back.eval(var0=x)[0].asnumpy(), z.asnumpy())


def _dense_stack(n):
    net = mx.gluon.nn.HybridSequential()
    with net.name_scope():
        for _ in range(n):
            net.add(mx.gluon.nn.Dense(4))
    net.initialize(mx.init.Uniform(1.0))
    return net


def test_get_symbol_shows_a_hybridized_call_as_one_cached_op():
    # MXNet 1.9.1: a hybridized block recorded without inlining is one _CachedOp node
    # reading the data and every parameter; with inline_limit above its size the ops
    # themselves are recorded (MXNet's test_inline: two nodes more for three Dense).
    net = _dense_stack(3)
    x = mx.nd.array(np.random.RandomState(0).rand(2, 5).astype(np.float32))
    counts = {}
    for limit in (3, 0):
        net.hybridize(inline_limit=limit)
        with mx.autograd.record():
            y = net(x)
        sym = mx.autograd.get_symbol(y)
        nodes = json.loads(sym.tojson())["nodes"]
        counts[limit] = len(nodes)
        y.backward()
    assert counts[3] == counts[0] + 2
    ops = [n["op"] for n in nodes if n["op"] != "null"]
    assert ops == ["_CachedOp"]
    assert sym.list_outputs()[0].endswith("_" + net(mx.sym.var("data")).list_outputs()[0])
    # the node runs the graph: the data is the unrecorded input, the rest the
    # parameters, matched by the shapes inference gives them
    data = [n for n in sym.list_arguments() if n.startswith("null")]
    assert len(data) == 1 and len(sym.list_arguments()) == 7
    params = list(net.collect_params().values())
    arg_shapes = sym.infer_shape(**{data[0]: x.shape})[0]
    feed = {data[0]: x}
    for name, shape in zip(sym.list_arguments(), arg_shapes):
        if name != data[0]:
            match = [p for p in params if p.shape == shape and p.name not in feed]
            feed[name] = match[0].data()
            params.remove(match[0])
    for graph in (sym, mx.sym.load_json(sym.tojson())):
        np.testing.assert_allclose(graph.eval(**feed)[0].asnumpy(), y.asnumpy(), rtol=1e-6)
    # and its gradient is the block's: y.backward() above left the parameters' (ones
    # as the head gradient)
    grads = {name: mx.nd.zeros(v.shape) for name, v in feed.items()}
    ex = sym.bind(mx.cpu(), args=feed, args_grad=grads)
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones(y.shape))
    by_array = {id(v): name for name, v in feed.items()}
    checked = 0
    for param in net.collect_params().values():
        name = by_array[id(param.data())]
        np.testing.assert_allclose(grads[name].asnumpy(), param.grad().asnumpy(), rtol=1e-5,
                                   atol=1e-6)
        checked += 1
    assert checked == 6


def test_get_symbol_puts_the_cached_op_inputs_in_the_graphs_order():
    # the recorded node takes the data, then the parameters; the _CachedOp node takes
    # them as the graph lists its inputs (data, weight, bias, weight, bias)
    net = _dense_stack(2)
    net.hybridize(inline_limit=0)
    x = mx.nd.ones((1, 3))
    net(x)      # (mxlite's first call of a hybridized block runs op by op)
    x.attach_grad()
    with mx.autograd.record():
        y = net(x)
    sym = mx.autograd.get_symbol(y)
    nodes = json.loads(sym.tojson())["nodes"]
    (cached,) = [n for n in nodes if n["op"] == "_CachedOp"]
    assert len(cached["inputs"]) == 5
    names = [nodes[i]["name"] for i, _, _ in cached["inputs"]]
    shapes = dict(zip(sym.list_arguments(), sym.infer_shape(**{names[0]: (1, 3)})[0]))
    assert [shapes[n] for n in names] == [(1, 3), (4, 3), (4,), (4, 4), (4,)]


def test_np_semantics_switches_at_top_level():
    assert mx.np_shape is mx.util.np_shape and mx.use_np is mx.util.use_np
    with mx.np_shape(True):
        assert mx.is_np_shape()
    assert not mx.is_np_shape()
    assert mx.test_utils.use_np is mx.util.use_np


def test_teststore_sums_without_an_optimizer():
    kv = mx.kv.create("teststore")
    assert kv.type == "teststore" and not kv.is_capable(mx.kv.KVStoreBase.OPTIMIZER)
    a, b = mx.nd.ones((2,)), mx.nd.ones((2,)) * 2
    kv.pushpull(0, [a, b])
    np.testing.assert_array_equal(a.asnumpy(), [3, 3])
    np.testing.assert_array_equal(b.asnumpy(), [3, 3])
    x = mx.gluon.Parameter("x", shape=(3,))
    x.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="zeros")
    trainer = mx.gluon.Trainer([x], "sgd", {"learning_rate": 1.0}, kvstore=kv)
    with mx.autograd.record():
        for w in x.list_data():
            (w + 1).backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is False
    np.testing.assert_array_equal(x.data(mx.cpu(1)).asnumpy(), [-2, -2, -2])
    bad = mx.gluon.Trainer([x], "sgd", kvstore=kv, update_on_kvstore=True)
    with pytest.raises(ValueError, match="update_on_kvstore=False"):
        bad._init_kvstore()


def test_sparse_parameter_takes_one_trainer():
    x = mx.gluon.Parameter("x", shape=(4,), stype="row_sparse")
    x.initialize()
    t0 = mx.gluon.Trainer([x], "sgd")
    assert x._trainer is t0
    x._set_trainer(None)
    x._set_trainer(t0)
    with pytest.raises(RuntimeError, match="More than one trainers"):
        mx.gluon.Trainer([x], "sgd")
    dense = mx.gluon.Parameter("d", shape=(4,))
    dense.initialize()
    mx.gluon.Trainer([dense], "sgd")
    mx.gluon.Trainer([dense], "sgd")            # a dense one may change trainers


def test_zeros_like_dtype_is_ignored_with_a_warning_in_nd_and_sym():
    x = mx.nd.ones((2,), dtype="float16")
    with pytest.warns(UserWarning, match="ones_like takes no parameters"):
        y = mx.nd.ones_like(x, dtype="int32")
    assert y.dtype == np.float16                  # MXNet keeps the input's dtype
    with pytest.warns(UserWarning, match="zeros_like takes no parameters"):
        s = mx.sym.zeros_like(mx.sym.var("a"), dtype="int32")
    assert s.list_arguments() == ["a"]


def test_variable_attribute_holding_an_initializer_serialises_with_dumps():
    v = mx.sym.Variable("w", attr={"__init__": mx.init.Xavier(magnitude=2)})
    assert json.loads(v.attr("__init__"))[0] == "xavier"
    node = json.loads(v.tojson())["nodes"][0]
    assert node["attrs"]["__init__"] == mx.init.Xavier(magnitude=2).dumps()
