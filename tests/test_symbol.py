"""mx.sym: construction, naming, inference, JSON, executors."""
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from conftest import REF


def _mlp():
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=8, name="fc1")
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=3, name="fc2")
    return mx.sym.SoftmaxOutput(fc2, name="softmax")


@pytest.mark.smoke
def test_names_and_lists_as_mxnet():
    net = _mlp()
    assert net.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                                    "softmax_label"]
    assert net.list_outputs() == ["softmax_output"]
    assert net.name == "softmax"
    internals = net.get_internals()
    assert "fc1_output" in internals.list_outputs()
    assert internals["fc1_output"].list_arguments() == ["data", "fc1_weight", "fc1_bias"]
    assert net.get_children().list_outputs() == ["fc2_output", "softmax_label"]
    with mx.name.NameManager():
        a = mx.sym.FullyConnected(mx.sym.var("x"), num_hidden=2)
        b = mx.sym.FullyConnected(a, num_hidden=2)
    assert a.name == "fullyconnected0" and b.name == "fullyconnected1"
    assert b.list_arguments()[-2:] == ["fullyconnected1_weight", "fullyconnected1_bias"]


def test_aux_states_and_outputs_of_batchnorm():
    bn = mx.sym.BatchNorm(mx.sym.var("data"), name="bn")
    assert bn.list_arguments() == ["data", "bn_gamma", "bn_beta"]
    assert bn.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert bn.list_inputs() == ["data", "bn_gamma", "bn_beta", "bn_moving_mean", "bn_moving_var"]
    assert bn.list_outputs() == ["bn_output"]


def test_infer_shape_fills_weights():
    net = _mlp()
    arg, out, aux = net.infer_shape(data=(4, 20))
    assert arg == [(4, 20), (8, 20), (8,), (3, 8), (3,), (4,)]
    assert out == [(4, 3)] and aux == []
    arg, out, aux = net.infer_shape_partial(fc1_weight=(8, 20))
    assert arg[0] == () and out == [()]
    assert net.infer_shape(fc1_weight=(8, 20)) == (None, None, None)
    with pytest.raises(ValueError, match="not an input"):
        net.infer_shape(dta=(4, 20))


# Shapes MXNet 1.9.1 infers for these graphs (checked against it): values flow
# backward through elementwise ops, and into a FullyConnected's data batch dim.
BACKWARD_CASES = [
    ("a + b from a", lambda a, b: a + b, dict(a=(2, 3)), dict(a=(2, 3), b=(2, 3))),
    ("a + b from b", lambda a, b: a + b, dict(b=(2, 3)), dict(a=(2, 3), b=(2, 3))),
    ("through a scalar op", lambda a, b: (a * 2) + b, dict(b=(2, 3)), dict(a=(2, 3))),
    ("through two tanh", lambda a, b: mx.sym.tanh(mx.sym.tanh(a)) + b, dict(b=(2, 3)),
     dict(a=(2, 3))),
    ("from a dense output", lambda a, b: mx.sym.FullyConnected(a, num_hidden=4, name="fc") + b,
     dict(a=(5, 3)), dict(b=(5, 4), fc_weight=(4, 3))),
    ("into a dense input", lambda a, b: mx.sym.FullyConnected(a + b, num_hidden=4, name="fc"),
     dict(b=(5, 3)), dict(a=(5, 3), fc_weight=(4, 3))),
]


@pytest.mark.parametrize("name,build,given,want", BACKWARD_CASES,
                         ids=[c[0] for c in BACKWARD_CASES])
def test_infer_shape_runs_backward_through_the_graph(name, build, given, want):
    sym = build(mx.sym.var("a"), mx.sym.var("b"))
    arg, out, aux = sym.infer_shape(**given)
    shapes = dict(zip(sym.list_arguments(), arg))
    for k, v in want.items():
        assert shapes[k] == v


def test_infer_shape_backward_conflict_and_undetermined():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    with pytest.raises(MXNetError, match=r"_plus|elemwise_add"):
        (mx.sym.tanh(a) + b).infer_shape(a=(2, 3), b=(3, 2))
    # MXNet cannot tell these either: broadcasting, concat, dot leave b open
    for sym in (mx.sym.broadcast_add(a, b), mx.sym.concat(a, b, dim=1), mx.sym.dot(a, b)):
        assert sym.infer_shape(a=(2, 3)) == (None, None, None)


@pytest.mark.parametrize("cell", ["LSTMCell", "GRUCell", "RNNCell"])
def test_rnn_begin_state_zeros_take_the_batch_size_from_the_data(cell):
    # MXNet's default begin state is zeros((0, H)); the batch dim comes from the graph.
    data = mx.sym.var("data")
    c = getattr(mx.rnn, cell)(8, prefix="c_")
    outs, _ = c.unroll(3, inputs=data, begin_state=c.begin_state(), merge_outputs=True)
    assert outs.infer_shape(data=(4, 3, 5))[1] == [(4, 3, 8)]
    ex = outs.simple_bind(mx.cpu(), data=(4, 3, 5))
    for name, arr in ex.arg_dict.items():
        arr[:] = 0.1
    assert ex.forward()[0].shape == (4, 3, 8)
    # the zeros are made on the executor's context, not the default one
    other = outs.simple_bind(mx.cpu(1), data=(4, 3, 5))
    for name, arr in other.arg_dict.items():
        arr[:] = 0.1
    y = other.forward()[0]
    assert y.context == mx.cpu(1)
    np.testing.assert_array_equal(y.asnumpy(), ex.outputs[0].asnumpy())


def test_infer_shape_error_names_node():
    x = mx.sym.var("x", shape=(2, 3))
    y = mx.sym.var("y", shape=(4, 5))
    with pytest.raises(MXNetError, match="plus0|elemwise_add"):
        with mx.name.NameManager():
            mx.sym.broadcast_add(x, y, name="plus0").infer_shape()


def test_infer_type():
    x = mx.sym.var("x")
    y = mx.sym.Cast(x, dtype="float16") * 2
    arg, out, aux = y.infer_type(x="float64")
    assert arg == [np.float64] and out == [np.float16]


def test_variable_attributes():
    w = mx.sym.Variable("w", shape=(2, 3), lr_mult=2.0, wd_mult=0.5, dtype="float64",
                        attr={"mood": "calm"})
    assert w.attr("__shape__") == "(2, 3)"
    assert w.attr("__lr_mult__") == "2.0"
    assert w.attr("__dtype__") == "1"
    assert w.attr("mood") == "calm"
    assert w.list_attr()["__wd_mult__"] == "0.5"
    assert (w * 2).infer_shape()[1] == [(2, 3)]
    assert (w * 2).infer_type()[1] == [np.float64]
    fc = mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=4, name="fc")
    assert fc.attr("num_hidden") == "4"
    assert fc.attr_dict()["fc"]["num_hidden"] == "4"


def test_arithmetic_indexing_group():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    c = (a + b) * 2 - a / b + 1
    ex = c.bind(mx.cpu(), {"a": mx.nd.array([1.0, 2.0]), "b": mx.nd.array([4.0, 8.0])})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), [(5) * 2 - 0.25 + 1, 10 * 2 - 0.25 + 1])
    g = mx.sym.Group([a * 2, b + 1])
    assert len(g) == 2 and len(g.list_outputs()) == 2
    outs = g.eval(a=mx.nd.array([1.0]), b=mx.nd.array([1.0]))
    assert [o.asscalar() for o in outs] == [2, 2]
    assert g[1].list_outputs() == g.list_outputs()[1:]
    split = mx.sym.split(mx.sym.var("x"), num_outputs=3, axis=0, name="sp")
    assert split.list_outputs() == ["sp_output0", "sp_output1", "sp_output2"]
    assert split[2].list_outputs() == ["sp_output2"]
    with pytest.raises(ValueError, match="group"):
        mx.sym.relu(split)


def test_json_round_trip_and_format():
    net = _mlp()
    js = json.loads(net.tojson())
    assert [n["op"] for n in js["nodes"]] == ["null", "null", "null", "FullyConnected", "Activation",
                                             "null", "null", "FullyConnected", "null",
                                             "SoftmaxOutput"]
    assert js["nodes"][3]["attrs"] == {"num_hidden": "8"}
    assert js["heads"] == [[9, 0, 0]]
    assert js["arg_nodes"] == [0, 1, 2, 5, 6, 8]
    back = mx.sym.load_json(net.tojson())
    assert back.list_arguments() == net.list_arguments()
    assert back.tojson() == net.tojson()


def test_save_load_file(tmp_path):
    net = _mlp()
    path = str(tmp_path / "net-symbol.json")
    net.save(path)
    assert mx.sym.load(path).list_outputs() == ["softmax_output"]


def test_load_old_style_json_and_unknown_ops():
    old = {"nodes": [{"op": "null", "param": {}, "name": "data", "inputs": [],
                      "backward_source_id": -1},
                     {"op": "Activation", "param": {"act_type": "relu"}, "name": "relu0",
                      "inputs": [[0, 0]], "backward_source_id": -1}],
           "arg_nodes": [0], "heads": [[1, 0]]}
    sym = mx.sym.load_json(json.dumps(old))
    out = sym.eval(data=mx.nd.array([-1.0, 2.0]))[0]
    assert out.asnumpy().tolist() == [0, 2]
    bad = {"nodes": [{"op": "null", "name": "data", "inputs": []},
                     {"op": "NoSuchOp", "name": "n", "inputs": [[0, 0, 0]]}],
           "arg_nodes": [0], "heads": [[1, 0, 0]]}
    with pytest.raises(MXNetError, match="NoSuchOp"):
        mx.sym.load_json(json.dumps(bad))
    with pytest.raises(MXNetError, match="not a symbol"):
        mx.sym.load_json("{}")


def test_reference_cnn_symbol_loads_and_infers():
    sym = mx.sym.load(os.path.join(REF, "formats", "cnn-symbol.json"))
    args = sym.list_arguments()
    assert args[0] == "data"
    arg, out, aux = sym.infer_shape(data=(2, 3, 8, 8))
    assert out == [(2, 3)]
    assert len(aux) == len(sym.list_auxiliary_states()) > 0


def test_executor_forward_backward_matches_nd():
    net = _mlp()
    rng = np.random.RandomState(0)
    ex = net.simple_bind(mx.cpu(), data=(4, 5))
    vals = {}
    for name, arr in ex.arg_dict.items():
        vals[name] = rng.uniform(-1, 1, arr.shape).astype(np.float32)
        arr[:] = vals[name]
    vals["softmax_label"] = np.array([0, 1, 2, 1], dtype=np.float32)
    ex.arg_dict["softmax_label"][:] = vals["softmax_label"]
    out = ex.forward(is_train=True)[0]
    ex.backward()
    nd = {k: mx.nd.array(v) for k, v in vals.items()}
    for k in ("data", "fc1_weight", "fc2_bias"):
        nd[k].attach_grad()
    with mx.autograd.record():
        h = mx.nd.relu(mx.nd.FullyConnected(nd["data"], nd["fc1_weight"], nd["fc1_bias"],
                                            num_hidden=8))
        y = mx.nd.SoftmaxOutput(mx.nd.FullyConnected(h, nd["fc2_weight"], nd["fc2_bias"],
                                                     num_hidden=3), nd["softmax_label"])
    y.backward()
    np.testing.assert_allclose(out.asnumpy(), y.asnumpy(), rtol=1e-6)
    for k in ("data", "fc1_weight", "fc2_bias"):
        np.testing.assert_allclose(ex.grad_dict[k].asnumpy(), nd[k].grad.asnumpy(), rtol=1e-5,
                                   atol=1e-7)


def test_executor_grad_req_add_and_copy_params():
    x = mx.sym.var("x")
    y = mx.sym.sum(x * x)
    xa = mx.nd.array([1.0, 2.0])
    g = mx.nd.zeros((2,))
    ex = y.bind(mx.cpu(), {"x": xa}, args_grad={"x": g}, grad_req="add")
    for _ in range(2):
        ex.forward(is_train=True)
        ex.backward()
    np.testing.assert_allclose(g.asnumpy(), [4, 8])
    ex.copy_params_from({"x": mx.nd.array([3.0, 3.0])})
    assert ex.forward()[0].asscalar() == 18
    with pytest.raises(ValueError, match="not an argument"):
        ex.copy_params_from({"z": mx.nd.ones((1,))})
    with pytest.raises(MXNetError, match="forward"):
        ex2 = y.bind(mx.cpu(), {"x": xa})
        ex2.backward()


def test_executor_reshape():
    net = _mlp()
    ex = net.simple_bind(mx.cpu(), data=(4, 5))
    ex2 = ex.reshape(data=(6, 5), softmax_label=(6,))
    assert ex2.arg_dict["data"].shape == (6, 5)
    assert ex2.arg_dict["fc1_weight"] is ex.arg_dict["fc1_weight"]
    assert ex2.forward()[0].shape == (6, 3)


class _SoftmaxLoss(mx.operator.CustomOp):
    """The seed tutorial's softmax loss head (label input, need_top_grad=False)."""

    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        y = np.exp(x - x.max(axis=1).reshape((x.shape[0], 1)))
        y /= y.sum(axis=1).reshape((x.shape[0], 1))
        self.assign(out_data[0], req[0], mx.nd.array(y))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        label = in_data[1].asnumpy().ravel().astype(int)
        y = out_data[0].asnumpy()
        y[np.arange(label.shape[0]), label] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(y))


@mx.operator.register("test_sym_softmax")
class _SoftmaxLossProp(mx.operator.CustomOpProp):
    def __init__(self):
        super().__init__(need_top_grad=False)

    def list_arguments(self):
        return ["data", "label"]

    def list_outputs(self):
        return ["output"]

    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]], []

    def create_operator(self, ctx, shapes, dtypes):
        return _SoftmaxLoss()


def _seed_mlp():
    data = mx.symbol.Variable("data")
    fc1 = mx.symbol.FullyConnected(data=data, name="fc1", num_hidden=128)
    act1 = mx.symbol.Activation(data=fc1, name="relu1", act_type="relu")
    fc2 = mx.symbol.FullyConnected(data=act1, name="fc2", num_hidden=64)
    act2 = mx.symbol.Activation(data=fc2, name="relu2", act_type="relu")
    fc3 = mx.symbol.FullyConnected(data=act2, name="fc3", num_hidden=10)
    return mx.symbol.Custom(data=fc3, name="softmax", op_type="test_sym_softmax")


def test_custom_op_in_symbols_names_infers_and_round_trips():
    mlp = _seed_mlp()
    assert mlp.list_arguments()[-1] == "softmax_label"
    assert mlp.list_outputs() == ["softmax_output"]
    arg, out, _ = mlp.infer_shape(data=(8, 64))
    assert arg[-1] == (8,) and out == [(8, 10)]
    back = mx.sym.load_json(mlp.tojson())
    assert back.list_arguments() == mlp.list_arguments()
    bad = json.loads(mlp.tojson())
    bad["nodes"][-1]["attrs"]["op_type"] = "no_such_custom_op"
    with pytest.raises(MXNetError, match="no_such_custom_op"):
        mx.sym.load_json(json.dumps(bad))


def test_seed_example_module_fit_on_digits():
    """The seed: a softmax CustomOp with a label on a symbolic MLP, trained by Module.fit
    with SGD and momentum on the embedded dataset."""
    Digits = mx.gluon.data.vision.Digits
    train, test = Digits(train=True), Digits(train=False)

    def arrays(ds):
        x = np.stack([ds[i][0].asnumpy().reshape(-1) for i in range(len(ds))]) / 255.0
        return x.astype(np.float32), np.array([ds[i][1] for i in range(len(ds))])
    xtr, ytr = arrays(train)
    xte, yte = arrays(test)
    np.random.seed(0)
    mx.random.seed(0)
    train_iter = mx.io.NDArrayIter(xtr, ytr, batch_size=32, shuffle=True)
    test_iter = mx.io.NDArrayIter(xte, yte, batch_size=32)
    mod = mx.mod.Module(_seed_mlp(), context=mx.cpu())
    mod.fit(train_iter, eval_data=test_iter, optimizer="sgd",
            optimizer_params={"learning_rate": 0.1, "momentum": 0.9},
            initializer=mx.init.Xavier(), num_epoch=10)
    # NOTE: accuracy depends on float summation order (CPU, BLAS build): 0.945-0.97 seen.
    # A broken update or gradient stays near 0.1, so 0.9 still catches a regression.
    assert dict(mod.score(test_iter, "acc"))["accuracy"] > 0.9


def test_numpy_style_symbol_functions():
    x = mx.sym.var("x")
    y = mx.sym.maximum(x, 1) + mx.sym.minimum(2, x) * mx.sym.power(x, 2)
    out = y.eval(x=mx.nd.array([0.5, 3.0]))[0].asnumpy()
    np.testing.assert_allclose(out, [1 + 0.5 * 0.25, 3 + 2 * 9])
    z = mx.sym.zeros((2, 3)) + mx.sym.ones((2, 3))
    assert z.eval()[0].asnumpy().tolist() == [[1, 1, 1]] * 2
    assert mx.sym.greater(x, 1).eval(x=mx.nd.array([0.0, 2.0]))[0].asnumpy().tolist() == [0, 1]


def test_infer_shape_fills_deferred_weight_dims():
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Conv2D(8, 3), mx.gluon.nn.Dense(4))
    net.initialize()                     # in_channels/in_units unknown: (8, 0, 3, 3), (4, 0)
    sym = net(mx.sym.var("data"))
    args, outs, _ = sym.infer_shape(data=(1, 3, 8, 8))
    shapes = dict(zip(sym.list_arguments(), args))
    assert shapes[net[0].weight.name] == (8, 3, 3, 3)
    assert shapes[net[1].weight.name] == (4, 8 * 6 * 6)
    assert outs == [(1, 4)]


# -- attribute scopes and the attributes of created weights --------------------------------

def test_attr_scope_reaches_variables_ops_and_the_weights_they_create():
    # MXNet 1.9.1 gives these attribute dicts (hidden keys stored twice).
    with mx.AttrScope(ctx_group="dev1", lr_mult="3"):
        data = mx.sym.var("d")
        with mx.AttrScope(wd_mult="0"):
            fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc")
    outer = {"ctx_group": "dev1", "__ctx_group__": "dev1", "lr_mult": "3", "__lr_mult__": "3"}
    inner = dict(outer, wd_mult="0", __wd_mult__="0")
    assert fc.attr_dict() == {"d": outer, "fc_weight": dict(inner, num_hidden="3"),
                              "fc_bias": dict(inner, num_hidden="3"),
                              "fc": dict(inner, num_hidden="3")}
    assert mx.sym.var("x").list_attr() == {}        # the scopes ended
    assert mx.sym.var("x", lr_mult=2).list_attr() == {"__lr_mult__": "2", "lr_mult": "2"}
    assert mx.sym.var("x", attr={"lr_mult": "2"}).list_attr() == {"__lr_mult__": "2",
                                                                   "lr_mult": "2"}
    with pytest.raises(ValueError, match="must be a string"):
        mx.AttrScope(lr_mult=2)


def test_lr_mult_attribute_on_an_op_freezes_its_weights_in_module_training():
    data = mx.sym.var("data")
    frozen = mx.sym.FullyConnected(data, num_hidden=4, name="frozen", attr={"lr_mult": "0"})
    out = mx.sym.FullyConnected(mx.sym.relu(frozen), num_hidden=2, name="head")
    net = mx.sym.SoftmaxOutput(out, name="softmax")
    rng = np.random.RandomState(0)
    it = mx.io.NDArrayIter(rng.uniform(-1, 1, (8, 5)), rng.randint(0, 2, 8), batch_size=8)
    mod = mx.mod.Module(net, context=mx.cpu())
    mod.bind(it.provide_data, it.provide_label)
    mod.init_params(mx.init.Uniform(0.5))
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 1.0})
    before = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    batch = next(iter(it))
    mod.forward(batch, is_train=True)
    mod.backward()
    mod.update()
    after = {k: v.asnumpy() for k, v in mod.get_params()[0].items()}
    for name in ("frozen_weight", "frozen_bias"):
        np.testing.assert_array_equal(after[name], before[name])
    assert not np.array_equal(after["head_weight"], before["head_weight"])


def test_unnamed_nodes_are_named_after_the_function_called_as_mxnet():
    # MXNet 1.9.1's names for these calls (swapaxes and SwapAxis are one op).
    x, y = mx.sym.var("x"), mx.sym.var("y")
    with mx.name.NameManager():
        got = [(x + y).name, (x * 2).name, (2 - x).name, (-x).name, (x == y).name,
               (x == 2).name, mx.sym.swapaxes(x, dim1=0, dim2=1).name,
               mx.sym.SwapAxis(x, dim1=0, dim2=1).name, mx.sym.broadcast_plus(x, y).name,
               mx.sym.contrib.BilinearResize2D(x, height=2, width=2).name,
               mx.sym.linalg.gemm2(x, y).name, mx.sym.random.uniform(shape=(2,)).name]
    assert got == ["_plus0", "_mulscalar0", "_rminusscalar0", "_mulscalar1", "_equal0",
                   "_equal_scalar0", "swapaxes0", "swapaxis0", "broadcast_plus0",
                   "bilinearresize2d0", "gemm20", "_random_uniform0"]
    rnn = mx.sym.RNN(x, mx.sym.var("p"), mx.sym.var("s"), mx.sym.var("c"), state_size=4,
                     num_layers=1, mode="lstm", state_outputs=True, name="rnn")
    assert rnn.list_outputs() == ["rnn_output", "rnn_state_output", "rnn_statecell_output"]


def test_dunder_keywords_of_op_calls_are_attributes():
    z = mx.sym.zeros((0, 4), __layout__="NC", name="z")
    assert z.attr("__layout__") == "NC"
    assert mx.sym.FullyConnected(mx.sym.var("d"), num_hidden=2, name="fc",
                                 __lr_mult__="0").attr_dict()["fc_weight"]["__lr_mult__"] == "0"


def test_shape_rules_give_what_the_kernels_give():
    # Convolution, Pooling and BatchNorm infer their outputs from the geometry (shape
    # inference of a large network does not run the kernels on full-size dummies):
    # the rule and the kernel must agree everywhere.
    import itertools
    from mxlite.operator import get_op

    def kernel_shapes(op, p, shapes):
        ys = op.compute(p, np, *[np.zeros(s, np.float32) for s in shapes])
        return [y.shape for y in (ys if isinstance(ys, tuple) else (ys,))]

    conv, pool, bn = get_op("Convolution"), get_op("Pooling"), get_op("BatchNorm")
    for nsp, k, s, d, pd, g in itertools.product((1, 2, 3), (1, 3), (1, 2), (1, 2), (0, 1),
                                                 (1, 2)):
        p = conv.parse_params(dict(kernel=(k,) * nsp, stride=(s,) * nsp, dilate=(d,) * nsp,
                                   pad=(pd,) * nsp, num_filter=4, num_group=g))
        shapes = [(2, 4) + (7,) * nsp, (4, 4 // g) + (k,) * nsp, (4,)]
        assert conv.infer_shape(p, shapes)[1] == kernel_shapes(conv, p, shapes)
    for nsp, k, s, pd, conv_, t, gp in itertools.product(
            (1, 2, 3), (1, 2, 3), (1, 2), (0, 1), ("valid", "full", "same"),
            ("max", "avg", "sum"), (False, True)):
        p = pool.parse_params(dict(kernel=(k,) * nsp, stride=(s,) * nsp, pad=(pd,) * nsp,
                                   pooling_convention=conv_, pool_type=t, global_pool=gp))
        shapes = [(2, 3) + (7,) * nsp]
        assert pool.infer_shape(p, shapes)[1] == kernel_shapes(pool, p, shapes)
    for axis in (1, -1):
        p = bn.parse_params(dict(axis=axis))
        shapes = [(2, 3, 5)] + [((2, 3, 5)[axis],)] * 4
        assert bn.infer_shape(p, shapes)[1] == kernel_shapes(bn, p, shapes)
    with pytest.raises(MXNetError, match="kernel"):
        conv.infer_shape(conv.parse_params(dict(kernel=(9, 9), num_filter=2)),
                         [(1, 1, 4, 4), (2, 1, 9, 9), (2,)])


def test_infer_shape_of_a_large_network_matches_its_forward():
    net = mx.gluon.model_zoo.vision.resnet18_v1()
    net.initialize()
    sym = net(mx.sym.var("data"))
    arg, out, aux = sym.infer_shape(data=(2, 3, 64, 64))
    assert out == [(2, 1000)]
    y = net(mx.nd.zeros((2, 3, 64, 64)))
    assert y.shape == (2, 1000)
    shapes = dict(zip(sym.list_arguments(), arg))
    for name, param in net.collect_params().items():
        if name in shapes:
            assert shapes[name] == param.shape


def test_executor_backward_after_predict_forward_and_twice():
    # MXNet 1.9.1 allows backward after forward(is_train=False) (BatchNorm then uses
    # its moving statistics) and a second backward after one forward; the numbers
    # below are MXNet's for this seeded setup.
    data = mx.sym.var("data")
    net = mx.sym.BatchNorm(mx.sym.FullyConnected(data, num_hidden=3, name="fc"),
                           fix_gamma=False, name="bn")
    ex = net.simple_bind(mx.cpu(), data=(4, 5))
    rng = np.random.RandomState(0)
    for _, a in sorted(ex.arg_dict.items()):
        a[:] = rng.randn(*a.shape)
    ex.aux_dict["bn_moving_var"][:] = np.array([1.0, 2.0, 3.0])
    ex.forward(is_train=False)
    g = mx.nd.array(rng.randn(4, 3))
    ex.backward(g)
    first = ex.grad_dict["data"].asnumpy().copy()
    np.testing.assert_allclose(first[0], [4.92136, 0.14212, 0.74517, -3.68787, -6.04966],
                               rtol=1e-4, atol=1e-4)
    ex.backward(g)
    assert np.array_equal(ex.grad_dict["data"].asnumpy(), first)


def _mlp_graph():
    x = mx.sym.var("x")
    return json.loads(mx.sym.relu(mx.sym.FullyConnected(x, num_hidden=3, name="fc"),
                                  name="r").tojson())


@pytest.mark.parametrize("change,msg", [
    (lambda d: d.update(heads=[[99, 0, 0]]), r"head 0 takes input from node 99, which does "
                                             r"not exist \(the graph has 5 nodes\)"),
    (lambda d: d.update(heads=[[4, 5, 0]]), r"head 0 takes output 5 of node 4 \(r\), which "
                                            r"has 1 output"),
    (lambda d: d["nodes"][4].update(inputs=[[4, 0, 0]]),
     r"node 4 \(r\) takes input from node 4, which comes later \(a cycle"),
    (lambda d: d["nodes"][4].update(inputs=[[3, 7, 0]]),
     r"node 4 \(r\) takes output 7 of node 3 \(fc\)"),
    (lambda d: d["nodes"][4].pop("op"), r"node 4 is .*expected an object with string 'op' "
                                        r"and 'name'"),
    (lambda d: d["nodes"][4].update(inputs=[["a"]]), r"node 4 \(r\) has entry \['a'\]"),
])
def test_malformed_json_names_the_node(change, msg):
    graph = _mlp_graph()
    change(graph)
    with pytest.raises(MXNetError, match="load_json: not a valid symbol JSON graph: " + msg):
        mx.sym.load_json(json.dumps(graph))
