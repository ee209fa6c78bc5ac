"""Golden files for symbolic control flow (``F.contrib.foreach/while_loop/cond`` inside
hybridized Gluon blocks, i.e. the ``_foreach``, ``_while_loop`` and ``_cond`` ops with
subgraphs in ``-symbol.json``), from real MXNet 1.9.1.

Run with a Python that has MXNet 1.9.1:
``python tests/reference_extra/gen_sym_control_flow.py``.
Importing mxlite is never needed; this file is not imported by the tests.

For each case ``c`` it writes into ``sym_control_flow/`` next to this file:

* ``c-symbol.json`` / ``c-0000.params``: ``block.export(prefix)`` of the hybridized block
  (the JSON text exactly as MXNet wrote it is the golden artifact);
* ``c.npz`` (for ``cond_branch``: ``cond_then.npz`` and ``cond_else.npz``, two inputs run
  through the same exported model), holding

  - ``in_<name>``: the inputs, named as in the exported graph (``data``, ``data1`` ...);
  - ``out_<k>``: every output of the block, in export order;
  - ``head_<k>``: fixed random weights of the same shape as ``out_<k>``; the loss that was
    differentiated is ``sum_k sum(out_k * head_k)``;
  - ``grad_<p>``: the gradient of every parameter, ``<p>`` being the name in the
    ``.params`` file without its ``arg:`` prefix;
  - ``grad_in_<name>``: the gradient of every input;
  - ``valid_rows`` (``while_loop_sum`` only): a bool mask over the first axis of the step
    outputs, True for the 3 rows the loop ran. MXNet leaves the other
    ``max_iterations - 3`` rows uninitialised (whatever the memory held: tiny denormals,
    stale values from earlier arrays, even NaN), so they are stored as MXNet gave them but
    must not be compared; their gradients do not reach anything.

The script also reloads every exported model with ``SymbolBlock.imports``, and runs a
non-hybridized copy of each block (where control flow is a Python loop), and checks that
both reproduce the stored outputs and gradients; it prints each control-flow node's attrs
and its subgraph's inputs.
"""
import json
import os

os.environ.setdefault("MXNET_MKLDNN_ENABLED", "0")

import mxnet as mx  # noqa: E402
import numpy as np  # noqa: E402
from mxnet import autograd, gluon, nd  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "sym_control_flow")

T, B, I, H = 4, 2, 3, 3
MAX_ITER = 5
N_STEPS = 3


def _u(rng, shape, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(np.float32)


# --------------------------------------------------------------------------- blocks

class ForeachRNN(gluon.HybridBlock):
    """Hand-written RNN cell in a foreach body; inputs (x (T,B,I), s0 (B,H))."""

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
    """Two states [h, c] (begun with zeros), two outputs per step; ``c`` (and the second
    output) never see the data; ``scale = relu(w2)`` is computed before the loop."""

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
    """Loop vars (i, s); cond ``i < 3``; func uses params w, b; max_iterations=5, so the
    step outputs have 2 padding rows. (A cond that also computes on ``s``, e.g.
    ``(i < 3) * (sum(abs(s)) < 1e4)``, runs in MXNet 1.9.1 without autograd but fails under
    ``autograd.record()`` with "Assigning to NDArrays that are already in a computational
    graph", so the cond reads the counter only.)"""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.w = self.params.get("w", shape=(H,))
            self.b = self.params.get("b", shape=(H,))

    def hybrid_forward(self, F, x, w, b):
        i0 = F.zeros(shape=(1,))

        def cond(i, s):
            return i < N_STEPS

        def func(i, s):
            s_new = F.tanh(F.broadcast_add(F.broadcast_mul(s, w), b))
            return [s_new * 3.0, F.broadcast_add(s_new, i)], [i + 1, s_new]

        outs, (i_n, s_n) = F.contrib.while_loop(cond, func, [i0, x],
                                                max_iterations=MAX_ITER)
        return outs[0], outs[1], i_n, s_n


class CondBranch(gluon.HybridBlock):
    """``cond(sum(x) > 0, x * w1 + b, tanh(x) * w2 - b)``; x (B, H)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.w1 = self.params.get("w1", shape=(H,))
            self.w2 = self.params.get("w2", shape=(H,))
            self.b = self.params.get("b", shape=(H,))

    def hybrid_forward(self, F, x, w1, w2, b):
        pred = F.sum(x) > 0
        y = F.contrib.cond(
            pred,
            lambda: F.broadcast_add(F.broadcast_mul(x, w1), b),
            lambda: F.broadcast_sub(F.broadcast_mul(F.tanh(x), w2), b))
        return y, F.sum(x * x)


# --------------------------------------------------------------------------- running

def _set_params(block, rng):
    block.initialize(mx.init.Zero())
    for name in sorted(block.collect_params().keys()):
        p = block.collect_params()[name]
        p.set_data(nd.array(_u(rng, p.shape, -0.9, 0.9)))


def _run(block, inputs, heads, rng):
    """Forward + backward of ``sum_k sum(out_k * head_k)`` (random heads drawn from ``rng``
    when ``heads`` is None); returns (outs, heads, param grads by name, input grads)."""
    xs = [nd.array(v) for v in inputs]
    for x in xs:
        x.attach_grad()
        x.grad[:] = np.nan
    # Fill every gradient buffer with NaN first: MXNet's backward of ``_cond`` does not
    # write the gradient of a parameter used only by the branch not taken (the buffer keeps
    # whatever it held, e.g. the previous call's gradient), so unwritten buffers are
    # reported and stored as the true gradient, zero.
    for p in block.collect_params().values():
        p.grad()[:] = np.nan
    with autograd.record():
        outs = block(*xs)
        if not isinstance(outs, (list, tuple)):
            outs = [outs]
        if heads is None:
            heads = [_u(rng, o.shape) for o in outs]
        loss = sum((o * nd.array(h)).sum() for o, h in zip(outs, heads))
    loss.backward()
    pgrads = {name: p.grad().asnumpy()
              for name, p in block.collect_params().items()}
    xgrads = [x.grad.asnumpy() for x in xs]
    for name, g in list(pgrads.items()) + list(enumerate(xgrads)):
        if np.isnan(g).any():
            assert np.isnan(g).all(), name
            print("  %s: gradient of %r left unwritten by MXNet's backward (stored as 0)"
                  % (type(block).__name__, name))
            g[...] = 0
    return [o.asnumpy() for o in outs], heads, pgrads, xgrads


def _input_names(prefix):
    """The graph inputs that are not parameters (Gluon names them ``data`` when there is
    one, ``data0``, ``data1`` ... when there are several)."""
    js = json.load(open(prefix + "-symbol.json"))
    params = set(_param_names(prefix))
    return [js["nodes"][i]["name"] for i in js["arg_nodes"]
            if js["nodes"][i]["name"] not in params]


def _check_reload(prefix, in_names, inputs, outs, heads, pgrads, xgrads, mask=None):
    """Reload the exported model and compare outputs / gradients to the stored ones."""
    sb = gluon.SymbolBlock.imports(prefix + "-symbol.json", in_names, prefix + "-0000.params")
    o2, _, pg2, xg2 = _run(sb, inputs, heads, None)
    for k, (a, b) in enumerate(zip(outs, o2)):
        if mask is not None and a.shape[:1] == mask.shape:
            a, b = a[mask], b[mask]
        assert np.allclose(a, b, atol=1e-6), ("reload output", prefix, k)
    for name, g in pgrads.items():
        assert np.allclose(g, pg2[name], atol=1e-6), ("reload grad", prefix, name)
    for a, b in zip(xgrads, xg2):
        assert np.allclose(a, b, atol=1e-6), ("reload input grad", prefix)


def _check_imperative(block, inputs, outs, heads, pgrads, xgrads, mask=None):
    """Run a fresh, non-hybridized copy of ``block`` (where ``F.contrib`` control flow is a
    Python loop over NDArrays) and compare it with MXNet's symbolic results."""
    twin = type(block)(prefix=block.prefix)
    twin.initialize(mx.init.Zero())
    for name, p in block.collect_params().items():
        twin.collect_params()[name].set_data(p.data())
    o2, _, pg2, xg2 = _run(twin, inputs, heads, None)
    for k, (a, b) in enumerate(zip(outs, o2)):
        if mask is not None and a.shape[:1] == mask.shape:
            a, b = a[mask], b[mask]
        assert np.allclose(a, b, atol=1e-5), ("imperative output", block.prefix, k)
    for name, g in pgrads.items():
        assert np.allclose(g, pg2[name], atol=1e-5), ("imperative grad", block.prefix, name)
    for a, b in zip(xgrads, xg2):
        assert np.allclose(a, b, atol=1e-5), ("imperative input grad", block.prefix)


def _summary(case, prefix):
    js = json.load(open(prefix + "-symbol.json"))
    print("== %s: graph inputs %s, heads %s" % (
        case, [js["nodes"][i]["name"] for i in js["arg_nodes"]], js["heads"]))
    for node in js["nodes"]:
        if node["op"] in ("_foreach", "_while_loop", "_cond"):
            print("  node %s op %s attrs %s" % (node["name"], node["op"], node.get("attrs")))
            print("    inputs (outer graph):", [js["nodes"][e[0]]["name"] for e in node["inputs"]])
            for k, sg in enumerate(node.get("subgraphs", [])):
                names = [sg["nodes"][i]["name"] for i in sg["arg_nodes"]]
                ops = [n["op"] for n in sg["nodes"] if n["op"] != "null"]
                print("    subgraph %d: arg_nodes %s; ops %s; heads %s" % (
                    k, names, ops, sg["heads"]))


def _save(path, in_names, inputs, outs, heads, pgrads, xgrads, param_names, extra=None):
    d = {}
    for n, v in zip(in_names, inputs):
        d["in_" + n] = v
    for k, (o, h) in enumerate(zip(outs, heads)):
        d["out_%d" % k] = o
        d["head_%d" % k] = h
    for name, g in pgrads.items():
        assert name in param_names, (name, param_names)
        d["grad_" + name] = g
    for n, g in zip(in_names, xgrads):
        d["grad_in_" + n] = g
    if extra:
        d.update(extra)
    np.savez_compressed(path, **d)


def _param_names(prefix):
    return [k.split(":", 1)[1] for k in nd.load(prefix + "-0000.params")]


def _export(block, case, inputs):
    block.hybridize()
    block(*[nd.array(v) for v in inputs])  # build the cached graph
    prefix = os.path.join(OUT, case)
    block.export(prefix)
    return prefix


def main():
    os.makedirs(OUT, exist_ok=True)
    mx.random.seed(0)
    rng = np.random.RandomState(0)

    # foreach_rnn
    blk = ForeachRNN(prefix="foreach_rnn_")
    _set_params(blk, rng)
    inputs = [_u(rng, (T, B, I)), _u(rng, (B, H))]
    prefix = _export(blk, "foreach_rnn", inputs)
    outs, heads, pg, xg = _run(blk, inputs, None, rng)
    names = _input_names(prefix)
    _save(prefix + ".npz", names, inputs, outs, heads, pg, xg, _param_names(prefix))
    _check_reload(prefix, names, inputs, outs, heads, pg, xg)
    _check_imperative(blk, inputs, outs, heads, pg, xg)
    _summary("foreach_rnn", prefix)

    # foreach_two_states
    blk = ForeachTwoStates(prefix="foreach_two_states_")
    _set_params(blk, rng)
    inputs = [_u(rng, (T, B, I))]
    prefix = _export(blk, "foreach_two_states", inputs)
    outs, heads, pg, xg = _run(blk, inputs, None, rng)
    names = _input_names(prefix)
    _save(prefix + ".npz", names, inputs, outs, heads, pg, xg, _param_names(prefix))
    _check_reload(prefix, names, inputs, outs, heads, pg, xg)
    _check_imperative(blk, inputs, outs, heads, pg, xg)
    _summary("foreach_two_states", prefix)

    # while_loop_sum: run twice, the second time after filling memory with garbage,
    # to see whether MXNet zeros the padding rows.
    blk = WhileLoopSum(prefix="while_loop_sum_")
    _set_params(blk, rng)
    inputs = [_u(rng, (B, H))]
    prefix = _export(blk, "while_loop_sum", inputs)
    outs, heads, pg, xg = _run(blk, inputs, None, rng)
    junk = [nd.full((MAX_ITER, B, H), 123.25) for _ in range(50)]
    del junk
    outs2, _, pg2, xg2 = _run(blk, inputs, heads, None)
    mask = np.arange(MAX_ITER) < N_STEPS
    for a, b in zip(outs, outs2):
        if a.shape[:1] == mask.shape:
            print("while_loop_sum padding rows, run 1:", a[~mask].ravel().tolist())
            print("while_loop_sum padding rows, run 2:", b[~mask].ravel().tolist())
            assert np.array_equal(a[mask], b[mask])
        else:
            assert np.array_equal(a, b)
    names = _input_names(prefix)
    _save(prefix + ".npz", names, inputs, outs, heads, pg, xg, _param_names(prefix),
          extra={"valid_rows": mask})
    _check_reload(prefix, names, inputs, outs, heads, pg, xg, mask)
    _check_imperative(blk, inputs, outs, heads, pg, xg, mask)
    _summary("while_loop_sum", prefix)

    # cond_branch: one model, two inputs
    blk = CondBranch(prefix="cond_branch_")
    _set_params(blk, rng)
    x_then = np.abs(_u(rng, (B, H))) + 0.1
    x_else = -np.abs(_u(rng, (B, H))) - 0.1
    prefix = _export(blk, "cond_branch", [x_then])
    names = _input_names(prefix)
    for tag, x in (("then", x_then), ("else", x_else)):
        outs, heads, pg, xg = _run(blk, [x], None, rng)
        _save(os.path.join(OUT, "cond_%s.npz" % tag), names, [x], outs, heads, pg, xg,
              _param_names(prefix))
        _check_reload(prefix, names, [x], outs, heads, pg, xg)
        _check_imperative(blk, [x], outs, heads, pg, xg)
        print("cond_%s: grads %s" % (tag, {k: v.ravel().tolist() for k, v in pg.items()}))
    _summary("cond_branch", prefix)


if __name__ == "__main__":
    main()
