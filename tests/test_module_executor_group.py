"""``mx.module.executor_group.DataParallelExecutorGroup``: one Symbol bound on several
contexts, each executor running its slice of the batch, as in MXNet 1.9.1 (whose
values the slices, grad_req tables and shapes below are)."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.module.executor_group import DataParallelExecutorGroup, _split_input_slice

nd = mx.nd
CTXS = [mx.cpu(0), mx.cpu(1)]
PARAMS = ["fc_weight", "fc_bias"]


def _net():
    fc = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3, name="fc")
    return mx.sym.SoftmaxOutput(fc, name="softmax")


def _group(batch=5, **kw):
    kw.setdefault("for_training", True)
    kw.setdefault("inputs_need_grad", False)
    return DataParallelExecutorGroup(_net(), CTXS, [1, 1], [("data", (batch, 4))],
                                     [("softmax_label", (batch,))], PARAMS, **kw)


def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("batch, loads, want", [
    (10, [1, 1, 1], [(0, 3), (3, 6), (6, 10)]),
    (7, [1, 2], [(0, 2), (2, 7)]),
    (5, [1, 1, 1, 1], [(0, 1), (1, 2), (2, 3), (3, 5)]),
    (9, [0.5, 2, 1], [(0, 1), (1, 6), (6, 9)]),
])
def test_batch_split_by_workload_as_mxnet(batch, loads, want):
    assert [(s.start, s.stop) for s in _split_input_slice(batch, loads)] == want


def test_batch_smaller_than_the_contexts_fails():
    with pytest.raises(ValueError, match="Too many slices"):
        _split_input_slice(2, [1, 1, 1])


@pytest.mark.smoke
def test_bind_slices_the_batch_and_builds_grad_reqs():
    g = _group(fixed_param_names=["fc_bias"])
    assert g.slices == [slice(0, 2), slice(2, 5)] and g.batch_size == 5
    assert g.grad_req == {"data": "null", "fc_weight": "write", "fc_bias": "null",
                          "softmax_label": "null"}
    assert [e.arg_dict["data"].shape for e in g.execs] == [(2, 4), (3, 4)]
    assert g.get_output_shapes() == [("softmax_output", (5, 3))]
    assert [len(p) for p in g.param_arrays] == [2, 2]
    assert g.grad_arrays[1] == [None, None] and g.input_grad_arrays is None
    assert (g.data_layouts, g.label_layouts, g.output_layouts) == ([0], [0], [0])
    g = _group(for_training=False)
    assert set(g.grad_req.values()) == {"null"} and g.grad_arrays is None
    g = _group(inputs_need_grad=True, grad_req="add")
    assert g.grad_req["data"] == "add" and g.grad_req["fc_weight"] == "add"
    g = _group(grad_req={"fc_bias": "null"})
    assert g.grad_req["fc_bias"] == "null" and g.grad_req["fc_weight"] == "write"


def test_forward_backward_over_two_devices_equal_one_batch():
    rng = np.random.RandomState(0)
    x, y = rng.randn(5, 4), np.array([0, 2, 1, 1, 0])
    w, b = rng.randn(3, 4), rng.randn(3)
    g = _group(inputs_need_grad=True)
    g.set_params({"fc_weight": nd.array(w), "fc_bias": nd.array(b)}, {})
    g.forward(mx.io.DataBatch([nd.array(x)], [nd.array(y)]), is_train=True)
    p = _softmax(x @ w.T + b)
    np.testing.assert_allclose(g.get_outputs()[0].asnumpy(), p, rtol=1e-5)
    parts = g.get_outputs(merge_multi_context=False)
    assert [o.shape for o in parts[0]] == [(2, 3), (3, 3)]
    g.backward()
    gz = p - np.eye(3)[y]
    gw = sum(dev.asnumpy() for dev in g.grad_arrays[0])
    np.testing.assert_allclose(gw, gz.T @ x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g.get_input_grads()[0].asnumpy(), gz @ w, rtol=1e-5, atol=1e-6)
    metric = mx.metric.Accuracy()
    g.update_metric(metric, [nd.array(y)], pre_sliced=False)
    assert metric.num_inst == 5
    assert metric.get()[1] == pytest.approx(np.mean(p.argmax(axis=1) == y))


def test_get_params_averages_the_devices():
    g = _group()
    g.execs[0].arg_dict["fc_bias"][:] = 1.0
    g.execs[1].arg_dict["fc_bias"][:] = 3.0
    arg = {"fc_weight": nd.zeros((3, 4)), "fc_bias": nd.zeros((3,))}
    g.get_params(arg, {})
    np.testing.assert_array_equal(arg["fc_bias"].asnumpy(), [2.0, 2.0, 2.0])


def test_reshape_keeps_the_parameter_arrays():
    g = _group()
    weight = g.execs[0].arg_dict["fc_weight"]
    g.reshape([mx.io.DataDesc("data", (8, 4))], [mx.io.DataDesc("softmax_label", (8,))])
    assert g.slices == [slice(0, 4), slice(4, 8)]
    assert g.execs[0].arg_dict["fc_weight"] is weight
    assert g.execs[0].arg_dict["data"].shape == (4, 4)
    assert g.param_arrays[0][0] is weight


def test_shared_group_shares_parameters():
    g = _group()
    h = DataParallelExecutorGroup(_net(), CTXS, [1, 1], [("data", (6, 4))],
                                  [("softmax_label", (6,))], PARAMS, True, False,
                                  shared_group=g)
    for a, b in zip(g.execs, h.execs):
        assert a.arg_dict["fc_weight"] is b.arg_dict["fc_weight"]
        assert a.grad_dict["fc_weight"] is b.grad_dict["fc_weight"]
        assert a.arg_dict["data"] is not b.arg_dict["data"]


def test_batch_axis_from_the_layout():
    # time-major input: the batch is axis 1
    net = mx.sym.sum(mx.sym.var("data"), axis=0)
    g = DataParallelExecutorGroup(net, CTXS, [1, 1], [mx.io.DataDesc("data", (3, 4, 2),
                                                                      layout="TNC")],
                                  None, [], False, False)
    assert [e.arg_dict["data"].shape for e in g.execs] == [(3, 2, 2), (3, 2, 2)]
    x = np.arange(24.0).reshape(3, 4, 2)
    g.forward(mx.io.DataBatch([nd.array(x)], None))
    np.testing.assert_array_equal(g.get_outputs()[0].asnumpy(), x.sum(axis=0))


def test_states_set_and_get():
    data, state = mx.sym.var("data"), mx.sym.var("state")
    g = DataParallelExecutorGroup(data + state, CTXS, [1, 1], [("data", (4, 2))], None, [],
                                  False, False, state_names=["state"])
    g.set_states(value=2.0)
    assert [s.asnumpy().tolist() for s in g.get_states(merge_multi_context=False)[0]] == \
        [[[2.0, 2.0]] * 2] * 2
    g.set_states(states=[[nd.ones((2, 2)), nd.zeros((2, 2))]])
    g.forward(mx.io.DataBatch([nd.ones((4, 2))], None))
    np.testing.assert_array_equal(g.get_outputs()[0].asnumpy(), [[2, 2]] * 2 + [[1, 1]] * 2)
    with pytest.raises(MXNetError, match="exactly one"):
        g.set_states()
    with pytest.raises(MXNetError, match="merge_multi_context"):
        g.get_states()


def test_module_runs_through_its_executor_group():
    mod = mx.mod.Module(_net(), context=CTXS)
    mod.bind([("data", (6, 4))], [("softmax_label", (6,))])
    assert isinstance(mod._exec_group, mx.module.executor_group.DataParallelExecutorGroup)
    assert mx.module.module.DataParallelExecutorGroup is DataParallelExecutorGroup
    mod.init_params(mx.init.Uniform(0.5))
    w = mod.get_params()[0]["fc_weight"].asnumpy()
    for ex in mod._exec_group.execs:
        np.testing.assert_array_equal(ex.arg_dict["fc_weight"].asnumpy(), w)
    # a smaller last batch re-binds (reshape) with the same parameters
    mod.forward(mx.io.DataBatch([nd.ones((3, 4))], [nd.zeros((3,))]), is_train=False)
    assert mod._exec_group.slices == [slice(0, 2), slice(2, 3)]
    assert mod.get_outputs()[0].shape == (3, 3)
    np.testing.assert_array_equal(mod.get_params()[0]["fc_weight"].asnumpy(), w)
