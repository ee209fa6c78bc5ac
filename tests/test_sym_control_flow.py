"""Symbolic control flow: ``mx.sym.contrib.foreach`` / ``while_loop`` / ``cond``, the
``_foreach`` / ``_while_loop`` / ``_cond`` ops, hybridized Gluon blocks using
``F.contrib.*``, and MXNet 1.9.1's exported models of them
(``reference_extra/sym_control_flow``, see ``gen_sym_control_flow.py``)."""
import json
import os
import warnings

import numpy as np
import pytest

import mxlite as mx
from mxlite import autograd, gluon
from mxlite.base import MXNetError

HERE = os.path.join(os.path.dirname(__file__), "reference_extra", "sym_control_flow")
T, B, I, H = 4, 2, 3, 3


# -- the blocks MXNet exported (gen_sym_control_flow.py), written for mxlite ---------------
class ForeachRNN(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.wx = self.params.get("wx", shape=(I, H))
            self.wh = self.params.get("wh", shape=(H, H))
            self.b = self.params.get("b", shape=(H,))

    def hybrid_forward(self, F, x, s0, wx, wh, b):
        def body(x_t, states):
            s = F.tanh(F.broadcast_add(F.dot(x_t, wx) + F.dot(states[0], wh), b))
            return s, [s]
        outs, states = F.contrib.foreach(body, x, [s0])
        return outs, states[0]


class ForeachTwoStates(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.w = self.params.get("w", shape=(I,))
            self.w2 = self.params.get("w2", shape=(I,))
            self.b = self.params.get("b", shape=(I,))

    def hybrid_forward(self, F, x, w, w2, b):
        scale = F.relu(w2)
        h0 = F.zeros(shape=(B, I))
        c0 = F.ones(shape=(B, I))

        def body(x_t, states):
            h, c = states
            c_new = F.broadcast_add(F.broadcast_mul(c, scale), b)
            h_new = F.tanh(F.broadcast_mul(x_t, w) + h * c_new)
            return [h_new, c_new * 2.0], [h_new, c_new]
        (o_h, o_c), (h_n, c_n) = F.contrib.foreach(body, x, [h0, c0])
        return o_h, o_c, h_n, c_n


class WhileLoopSum(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.w = self.params.get("w", shape=(H,))
            self.b = self.params.get("b", shape=(H,))

    def hybrid_forward(self, F, x, w, b):
        def func(i, s):
            s_new = F.tanh(F.broadcast_add(F.broadcast_mul(s, w), b))
            return [s_new * 3.0, F.broadcast_add(s_new, i)], [i + 1, s_new]
        outs, (i_n, s_n) = F.contrib.while_loop(lambda i, s: i < 3, func,
                                                [F.zeros(shape=(1,)), x], max_iterations=5)
        return outs[0], outs[1], i_n, s_n


class CondBranch(gluon.HybridBlock):
    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.w1 = self.params.get("w1", shape=(H,))
            self.w2 = self.params.get("w2", shape=(H,))
            self.b = self.params.get("b", shape=(H,))

    def hybrid_forward(self, F, x, w1, w2, b):
        y = F.contrib.cond(F.sum(x) > 0,
                           lambda: F.broadcast_add(F.broadcast_mul(x, w1), b),
                           lambda: F.broadcast_sub(F.broadcast_mul(F.tanh(x), w2), b))
        return y, F.sum(x * x)


CASES = {  # case: (block, npz files)
    "foreach_rnn": (ForeachRNN, ["foreach_rnn"]),
    "foreach_two_states": (ForeachTwoStates, ["foreach_two_states"]),
    "while_loop_sum": (WhileLoopSum, ["while_loop_sum"]),
    "cond_branch": (CondBranch, ["cond_then", "cond_else"]),
}


def _golden(npz):
    z = np.load(os.path.join(HERE, npz + ".npz"))
    names = sorted(k[3:] for k in z.files if k.startswith("in_"))
    return z, names


def _run(net, z, names):
    """Outputs and gradients (params by name, inputs by name) of the golden loss."""
    xs = [mx.nd.array(z["in_" + n]) for n in names]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        outs = net(*xs)
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        loss = sum((o * mx.nd.array(z["head_%d" % k])).sum() for k, o in enumerate(outs))
    loss.backward()
    grads = {n: p.grad().asnumpy() for n, p in net.collect_params().items()}
    grads.update(("in_" + n, x.grad.asnumpy()) for n, x in zip(names, xs))
    return [o.asnumpy() for o in outs], grads


def _compare(z, outs, grads):
    valid = z["valid_rows"] if "valid_rows" in z.files else None
    for k, got in enumerate(outs):
        want = z["out_%d" % k]
        if valid is not None and want.shape[:1] == valid.shape:
            want, got = want[valid], got[valid]     # MXNet leaves padding rows unset
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg="output %d" % k)
    checked = 0
    for key in z.files:
        if key.startswith("grad_"):
            name = key[5:]
            np.testing.assert_allclose(grads[name], z[key], rtol=1e-5, atol=1e-6, err_msg=key)
            checked += 1
    assert checked >= 3


def _with_params(block, case):
    block.collect_params().load(os.path.join(HERE, case + "-0000.params"))   # full names
    return block


@pytest.mark.parametrize("case", sorted(CASES))
def test_models_exported_by_mxnet_give_its_outputs_and_gradients(case):
    for npz in CASES[case][1]:
        z, names = _golden(npz)
        net = gluon.SymbolBlock.imports(os.path.join(HERE, case + "-symbol.json"), names,
                                        os.path.join(HERE, case + "-0000.params"))
        _compare(z, *_run(net, z, names))


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("hybridize", [False, True])
def test_blocks_give_mxnets_outputs_and_gradients(case, hybridize):
    block_cls, npzs = CASES[case]
    for npz in npzs:
        z, names = _golden(npz)
        net = _with_params(block_cls(prefix=case + "_"), case)
        if hybridize:
            net.hybridize()
        with warnings.catch_warnings():
            warnings.simplefilter("error")      # no fallback to imperative
            _compare(z, *_run(net, z, names))


def _control_node(graph):
    nodes = [n for n in graph["nodes"] if "subgraphs" in n]
    assert len(nodes) == 1
    return nodes[0]


def _shape_of(sub):
    """A subgraph's structure: its inputs' names, its ops and its heads."""
    return ([n["name"] for n in sub["nodes"] if n["op"] == "null"],
            [(n["op"], n["inputs"]) for n in sub["nodes"] if n["op"] != "null"],
            sub["heads"])


@pytest.mark.parametrize("case", sorted(CASES))
def test_export_writes_mxnets_control_flow_node(case, tmp_path):
    block_cls, npzs = CASES[case]
    z, names = _golden(npzs[0])
    net = _with_params(block_cls(prefix=case + "_"), case)
    net.hybridize()
    net(*[mx.nd.array(z["in_" + n]) for n in names])
    net.export(str(tmp_path / case))
    with open(str(tmp_path / case) + "-symbol.json") as f:
        ours = json.load(f)
    with open(os.path.join(HERE, case + "-symbol.json")) as f:
        theirs = json.load(f)
    a, b = _control_node(ours), _control_node(theirs)
    assert a["op"] == b["op"] and a["attrs"] == b["attrs"]
    assert ([ours["nodes"][i]["name"] for i, _, _ in a["inputs"]]
            == [theirs["nodes"][i]["name"] for i, _, _ in b["inputs"]])
    assert [_shape_of(s) for s in a["subgraphs"]] == [_shape_of(s) for s in b["subgraphs"]]
    # and the file loads back to the same numbers
    back = gluon.SymbolBlock.imports(str(tmp_path / case) + "-symbol.json", names,
                                     str(tmp_path / case) + "-0000.params")
    _compare(z, *_run(back, z, names))


# -- the symbol API -----------------------------------------------------------------------
def _eval(sym, **arrays):
    return [o.asnumpy() for o in sym.eval(**{k: mx.nd.array(v) for k, v in arrays.items()})]


def test_foreach_symbol_matches_the_python_loop_and_infers_shapes():
    data, h0, w, b = (mx.sym.var(n) for n in ("data", "h0", "w", "b"))

    def body(x, s):
        y = mx.sym.FullyConnected(x, weight=w, bias=b, num_hidden=4) + s[0]
        return y, [mx.sym.tanh(y)]
    outs, states = mx.sym.contrib.foreach(body, data, [h0])
    group = mx.sym.Group([outs, states[0]])
    assert group.list_arguments() == ["data", "h0", "w", "b"]   # data, states, the rest
    args, outs_shapes, _ = group.infer_shape(data=(5, 2, 3), h0=(2, 4))
    assert args == [(5, 2, 3), (2, 4), (4, 3), (4,)]     # the weights' from inside the loop
    assert outs_shapes == [(5, 2, 4), (2, 4)]
    assert group.infer_type(data="float32")[1] == [np.float32, np.float32]
    rng = np.random.RandomState(0)
    x, s, wv, bv = rng.rand(5, 2, 3), rng.rand(2, 4), rng.rand(4, 3), rng.rand(4)
    got = _eval(group, data=x, h0=s, w=wv, b=bv)
    ys = []
    for t in range(5):
        ys.append(x[t] @ wv.T + bv + s)
        s = np.tanh(ys[-1])
    np.testing.assert_allclose(got[0], np.stack(ys), rtol=1e-5)
    np.testing.assert_allclose(got[1], s, rtol=1e-5)


def test_foreach_json_round_trip_and_executor_gradients():
    data, w = mx.sym.var("data"), mx.sym.var("w")
    outs, _ = mx.sym.contrib.foreach(lambda x, s: (x * w + s[0], [s[0] + x]), data,
                                     [mx.sym.zeros((3,))])
    back = mx.sym.load_json(outs.tojson())
    assert back.tojson() == outs.tojson()
    x = mx.nd.array(np.arange(12.0).reshape(4, 3))
    wv = mx.nd.array([1.0, 2.0, 3.0])
    gx, gw = mx.nd.zeros((4, 3)), mx.nd.zeros((3,))
    ex = back.bind(mx.cpu(), {"data": x, "w": wv}, args_grad={"data": gx, "w": gw})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((4, 3)))
    # out_t = x_t * w + sum_{k<t} x_k: d/dx_t = w + (3 - t), d/dw = sum_t x_t
    np.testing.assert_allclose(gx.asnumpy(), wv.asnumpy() + np.arange(3, -1, -1)[:, None])
    np.testing.assert_allclose(gw.asnumpy(), x.asnumpy().sum(0))


def test_while_loop_symbol_pads_with_zeros_and_handles_no_steps():
    i0, s0 = mx.sym.var("i"), mx.sym.var("s")
    outs, (i_n, s_n) = mx.sym.contrib.while_loop(
        lambda i, s: i < 3, lambda i, s: ([s * 2], [i + 1, s + i]), [i0, s0],
        max_iterations=5)
    g = mx.sym.Group([outs[0], i_n, s_n])
    o, i_end, s_end = _eval(g, i=np.array([0.0]), s=np.array([1.0]))
    np.testing.assert_array_equal(o, [[2.0], [2.0], [4.0], [0.0], [0.0]])
    assert i_end[0] == 3 and s_end[0] == 4
    o, i_end, s_end = _eval(g, i=np.array([7.0]), s=np.array([1.0]))    # cond false at once
    np.testing.assert_array_equal(o, np.zeros((5, 1)))
    assert i_end[0] == 7 and s_end[0] == 1


def test_cond_symbol_runs_one_branch_and_gives_zero_gradient_to_the_other():
    x, a, b = mx.sym.var("x"), mx.sym.var("a"), mx.sym.var("b")
    y = mx.sym.contrib.cond(mx.sym.sum(x) > 0, lambda: x * a, lambda: x * b)
    assert sorted(y.list_arguments()) == ["a", "b", "x"]
    for xv, want, ga, gb in (([1.0, 2.0], [3.0, 6.0], [1.0, 2.0], [0.0, 0.0]),
                             ([-1.0, -2.0], [-5.0, -10.0], [0.0, 0.0], [-1.0, -2.0])):
        grads = {n: mx.nd.full((2,), 9.0) for n in ("x", "a", "b")}
        ex = y.bind(mx.cpu(), {"x": mx.nd.array(xv), "a": mx.nd.array([3.0, 3.0]),
                               "b": mx.nd.array([5.0, 5.0])}, args_grad=grads)
        np.testing.assert_array_equal(ex.forward(is_train=True)[0].asnumpy(), want)
        ex.backward(mx.nd.ones((2,)))
        np.testing.assert_array_equal(grads["a"].asnumpy(), ga)
        np.testing.assert_array_equal(grads["b"].asnumpy(), gb)


def test_nested_foreach_names_its_subgraphs_and_runs():
    data = mx.sym.var("data")

    def outer(x, s):
        inner, _ = mx.sym.contrib.foreach(lambda y, t: (y + t[0], [t[0] + 1]), x, [s[0]])
        return inner, [s[0] + mx.sym.sum(x)]
    outs, _ = mx.sym.contrib.foreach(outer, data, [mx.sym.zeros((1,))])
    outer_sub = json.loads(outs.tojson())["nodes"][-1]["subgraphs"][0]
    inner_sub = _control_node(outer_sub)["subgraphs"][0]
    outer_name = _control_node(outer_sub)["attrs"]["__subgraph_name__"]   # in the outer body
    inner_names = {n["attrs"]["__subgraph_name__"] for n in inner_sub["nodes"] if "attrs" in n}
    assert len(inner_names) == 1
    assert list(inner_names)[0].startswith(outer_name + "$foreach")
    x = np.arange(6.0).reshape(2, 3)
    got = _eval(outs, data=x)[0]
    # step 0: s = 0, inner adds 0, 1, 2 to row 0; step 1: s = sum(row 0) = 3. Slices of a
    # 1-d array keep one axis, as in MXNet: (2, 3, 1).
    np.testing.assert_array_equal(got[..., 0], [[0, 2, 4], [6, 8, 10]])


def test_bad_uses_raise_clear_errors():
    data = mx.sym.var("data")
    with pytest.raises(MXNetError, match="data\\[0\\] is not used"):
        mx.sym.contrib.foreach(lambda x, s: (s[0] * 2, [s[0]]), data, [mx.sym.var("s")])
    with pytest.raises(TypeError, match="body must return a pair"):
        mx.sym.contrib.foreach(lambda x, s: x, data, [mx.sym.var("s")])
    with pytest.raises(ValueError, match="max_iterations should be specified"):
        mx.sym.contrib.while_loop(lambda i: i < 1, lambda i: ([], [i + 1]), [data])
    with pytest.raises(ValueError, match="nested the same way"):
        mx.sym.contrib.cond(data > 0, lambda: data, lambda: [data, data])


def test_random_body_cannot_be_differentiated_in_training():
    data = mx.sym.var("data")
    outs, _ = mx.sym.contrib.foreach(
        lambda x, s: (mx.sym.Dropout(x, p=0.5), [s[0]]), data, [mx.sym.zeros((2,))])
    grad = mx.nd.zeros((3, 2))
    ex = outs.bind(mx.cpu(), {"data": mx.nd.ones((3, 2))}, args_grad={"data": grad})
    ex.forward(is_train=True)
    with pytest.raises(MXNetError, match="random numbers in training mode"):
        ex.backward(mx.nd.ones((3, 2)))
    ex.forward(is_train=False)              # no draws in predict mode: fine
    ex.backward(mx.nd.ones((3, 2)))
    np.testing.assert_array_equal(grad.asnumpy(), np.ones((3, 2)))


def test_unknown_subgraph_op_names_the_node():
    graph = json.loads(mx.sym.contrib.foreach(
        lambda x, s: (x * 2, [s[0]]), mx.sym.var("data"), [mx.sym.var("s")])[0].tojson())
    _control_node(graph)["subgraphs"][0]["nodes"][1]["op"] = "_no_such_op"
    with pytest.raises(MXNetError, match="_no_such_op"):
        mx.sym.load_json(json.dumps(graph))


def test_dynamic_unroll_hybridizes_to_one_foreach_node():
    from mxlite.gluon.contrib.rnn.rnn_cell import dynamic_unroll

    class Net(gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            with self.name_scope():
                self.cell = gluon.rnn.LSTMCell(4, input_size=3)

        def hybrid_forward(self, F, x, valid):
            begin = [F.zeros((2, 4)), F.zeros((2, 4))]
            return dynamic_unroll(self.cell, x, begin, valid_length=valid, layout="TNC")[0]

    net = Net()
    net.initialize(mx.init.Uniform(0.5))
    x = mx.nd.array(np.random.RandomState(0).rand(5, 2, 3))
    valid = mx.nd.array([3, 5])
    results = []
    for hybridize in (False, True):
        if hybridize:
            net.hybridize()
        x.attach_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with autograd.record():
                y = net(x, valid)
                (y * y).sum().backward()
        results.append([y.asnumpy(), x.grad.asnumpy(), net.cell.i2h_weight.grad().asnumpy()])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    ops = [n["op"] for n in json.loads(net._cached_graph[0][1].symbol.tojson())["nodes"]]
    assert ops.count("_foreach") == 1
