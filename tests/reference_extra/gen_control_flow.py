"""Golden data for ``nd.contrib.foreach/while_loop/cond`` (tests/test_nd_control_flow.py),
from real MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_control_flow.py``.
The cases (``CASES``) are written against an ``nd`` module argument so that the test
runs the very same functions under mxlite: importing this file does not import MXNet.
Writes ``control_flow.npz`` next to this file: for case ``c`` the keys ``c/x<i>``
(inputs), ``c/y<i>`` (the compared outputs), ``c/gy<i>`` (head gradients) and
``c/gx<i>`` (gradients of the inputs listed in ``grad``); ``__manifest__`` is a JSON
list of {name, n_in, n_out, grad, structure}, where ``structure`` describes the nested
value the control-flow call returned (``N(2, 3)`` an NDArray, ``[..]`` a list,
``(..)`` a tuple). ``while_loop`` padding rows are uninitialised in MXNet, so those
cases compare the first rows only (their full shapes are in ``structure``).
"""
import json
import os

import numpy as np

CASES = []


def case(name, inputs, grad=()):
    """Register ``fn(nd, *xs) -> (compared outputs, raw returned value)`` as a case."""
    def add(fn):
        CASES.append(dict(name=name, fn=fn, inputs=inputs, grad=list(grad)))
        return fn
    return add


def structure(v):
    """The nesting and shapes of a returned value, independent of the array class."""
    if hasattr(v, "shape") and hasattr(v, "asnumpy"):
        return "N%s" % (tuple(v.shape),)
    if isinstance(v, tuple):
        return "(%s)" % ", ".join(structure(x) for x in v)
    if isinstance(v, list):
        return "[%s]" % ", ".join(structure(x) for x in v)
    return type(v).__name__


def head_loss(nd, ys, gys):
    """``sum_k <ys[k], gys[k]>``: backward from it gives the gradients for head
    gradients ``gys`` (outputs outside the graph simply add a constant)."""
    return sum((y * nd.array(g, dtype=g.dtype)).sum() for y, g in zip(ys, gys))


def _u(rng, shape, dtype, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


def _define():
    rng = np.random.RandomState(7)
    for dt in (np.float32, np.float64):
        tag = np.dtype(dt).name

        @case("foreach_rnn_" + tag, [_u(rng, (5, 3), dt), _u(rng, (3,), dt),
                                     _u(rng, (3, 3), dt), _u(rng, (2, 3), dt)], grad=[0, 1, 2, 3])
        def _rnn(nd, x, h0, w, c0):
            def body(xt, states):
                h, c = states
                h = nd.tanh(xt * h + nd.dot(w, h) + c[0])
                return [h, h * xt], [h, c * 0.5 + h]
            outs, states = nd.contrib.foreach(body, x, [h0, c0])
            return outs + states, (outs, states)

        @case("while_rnn_" + tag, [np.zeros((1,), dt), _u(rng, (2,), dt)], grad=[1])
        def _while(nd, i0, v0):
            outs, (i, v) = nd.contrib.while_loop(
                lambda i, v: i < 3, lambda i, v: (nd.sin(v) * v, [i + 1, v * 2 + i]),
                [i0, v0], max_iterations=5)
            return [outs[:3], i, v], (outs, [i, v])

        @case("cond_then_" + tag, [_u(rng, (2, 2), dt, 0.5, 1), _u(rng, (2, 2), dt)], grad=[0, 1])
        def _then(nd, x, y):
            out = nd.contrib.cond(x.sum() > 0, lambda: [x * y, (nd.exp(y),)],
                                  lambda: [x - y, (y,)])
            return [out[0], out[1][0]], out

        @case("cond_else_" + tag, [_u(rng, (3,), dt, -1, -0.5), _u(rng, (3,), dt)], grad=[0, 1])
        def _else(nd, x, y):
            out = nd.contrib.cond(x.sum() > 0, lambda: x * y, lambda: x * x - y)
            return [out], out

    @case("foreach_listdata", [_u(rng, (4, 2), np.float32), _u(rng, (4,), np.float32),
                               _u(rng, (2,), np.float32)], grad=[0, 1, 2])
    def _listdata(nd, a, b, s0):
        def body(xs, s):
            at, bt = xs
            return at * bt + s, s * bt + at
        outs, s = nd.contrib.foreach(body, [a, b], s0)
        return [outs, s], (outs, s)

    @case("foreach_nested_out", [_u(rng, (3, 2, 2), np.float32), _u(rng, (2, 2), np.float32)],
          grad=[0, 1])
    def _nested(nd, x, s0):
        outs, s = nd.contrib.foreach(lambda xt, s: ((xt, [xt * s[0]]), (s[0] + xt,)), x, (s0,))
        return [outs[0], outs[1][0], s[0]], (outs, s)

    @case("while_full_nested", [_u(rng, (2, 3), np.float32)], grad=[0])
    def _full(nd, v0):
        outs, v = nd.contrib.while_loop(lambda v: nd.ones((1,)),
                                        lambda v: ([v, [v.sum(axis=1)]], v * 0.5 + 1),
                                        v0, max_iterations=4)
        return [outs[0], outs[1][0], v], (outs, v)

    @case("while_doc_int64", [np.array([0], np.int64), np.array([1], np.int64)])
    def _doc(nd, i0, s0):
        outs, states = nd.contrib.while_loop(lambda i, s: i <= 5,
                                             lambda i, s: ([i + s], [i + 1, s + i]),
                                             (i0, s0), max_iterations=10)
        return [outs[0][:6]] + states, (outs, states)

    @case("while_no_output", [np.array([0.0], np.float32)])
    def _none(nd, i0):
        outs, i = nd.contrib.while_loop(lambda i: i < 3, lambda i: (None, i + 1), i0,
                                        max_iterations=5)
        return [i], (outs, i)

    @case("while_zero_steps", [np.array([9.0], np.float32), np.array([1.0], np.float32)])
    def _zero(nd, i0, s0):
        outs, states = nd.contrib.while_loop(lambda i, s: i < 3, lambda i, s: (i, [i + 1, s]),
                                             (i0, s0), max_iterations=5)
        return list(states), (outs, states)


_define()


def main():
    import mxnet as mx
    rng = np.random.RandomState(11)
    arrays, manifest = {}, []
    for c in CASES:
        xs = [mx.nd.array(a, dtype=a.dtype) for a in c["inputs"]]
        for i in c["grad"]:
            xs[i].attach_grad()
        with mx.autograd.record():
            ys, raw = c["fn"](mx.nd, *xs)
            gys = [rng.uniform(-1, 1, y.shape).astype(y.dtype) for y in ys]
            loss = head_loss(mx.nd, ys, gys)
        if c["grad"]:
            loss.backward()
        name = c["name"]
        for k, a in enumerate(c["inputs"]):
            arrays["%s/x%d" % (name, k)] = a
        for k, (y, g) in enumerate(zip(ys, gys)):
            arrays["%s/y%d" % (name, k)] = y.asnumpy()
            arrays["%s/gy%d" % (name, k)] = g
        for k in c["grad"]:
            arrays["%s/gx%d" % (name, k)] = xs[k].grad.asnumpy()
        manifest.append(dict(name=name, n_in=len(xs), n_out=len(ys), grad=c["grad"],
                             structure=structure(raw)))
    arrays["__manifest__"] = np.array(json.dumps(manifest))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "control_flow.npz")
    np.savez_compressed(out, **arrays)
    print("wrote %d cases to %s" % (len(manifest), out))


if __name__ == "__main__":
    main()
