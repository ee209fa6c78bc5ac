"""``mx.nd.contrib.foreach``, ``while_loop`` and ``cond`` (mxlite/nd/contrib_control_flow.py).

Golden data: ``reference_extra/control_flow.npz``, written by real MXNet 1.9.1 with
``reference_extra/gen_control_flow.py``. The generator's ``CASES`` take the ``nd``
module as an argument, so these tests run the very same functions under mxlite (the
generator imports MXNet only in its ``main``). For case ``c``: ``c/x<i>`` inputs,
``c/y<i>`` compared outputs, ``c/gy<i>`` head gradients, ``c/gx<i>`` input gradients;
``__manifest__`` lists each case's ``structure`` (nesting, list vs tuple and shapes
of the value the control-flow call returned). ``while_loop`` padding rows are
uninitialised in MXNet, so the golden cases compare the first rows only; mxlite's
zero padding is tested on its own below.
"""
import importlib.util
import json
import os

import numpy as np
import pytest

import mxlite as mx
from optable import COMPOSED, case, row_tests

nd = mx.nd
HERE = os.path.dirname(os.path.abspath(__file__))


def _load_generator():
    path = os.path.join(HERE, "reference_extra", "gen_control_flow.py")
    spec = importlib.util.spec_from_file_location("gen_control_flow", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEN = _load_generator()
GOLD = np.load(os.path.join(HERE, "reference_extra", "control_flow.npz"))
MANIFEST = {m["name"]: m for m in json.loads(str(GOLD["__manifest__"]))}
FNS = {c["name"]: c["fn"] for c in GEN.CASES}


def test_every_generator_case_has_golden_data():
    assert sorted(FNS) == sorted(MANIFEST)


@pytest.mark.parametrize("name", sorted(MANIFEST))
def test_golden(name):
    m = MANIFEST[name]
    xs = [nd.array(GOLD["%s/x%d" % (name, k)], dtype=GOLD["%s/x%d" % (name, k)].dtype)
          for k in range(m["n_in"])]
    for k in m["grad"]:
        xs[k].attach_grad()
    gys = [GOLD["%s/gy%d" % (name, k)] for k in range(m["n_out"])]
    with mx.autograd.record():
        ys, raw = FNS[name](nd, *xs)
        loss = GEN.head_loss(nd, ys, gys)
    assert GEN.structure(raw) == m["structure"]
    tol = dict(rtol=1e-10, atol=1e-12) if "float64" in name else dict(rtol=1e-5, atol=1e-6)
    for k, y in enumerate(ys):
        want = GOLD["%s/y%d" % (name, k)]
        assert y.dtype == want.dtype and y.shape == want.shape
        np.testing.assert_allclose(y.asnumpy(), want, **tol)
    if m["grad"]:
        loss.backward()
        for k in m["grad"]:
            np.testing.assert_allclose(xs[k].grad.asnumpy(), GOLD["%s/gx%d" % (name, k)], **tol)


# -- gradients: numeric and against an unrolled loop ------------------------------
def _rnn_step(xt, h, w):
    return nd.tanh(nd.dot(w, h) + xt * h)


def _foreach_rnn(x, h0, w):
    outs, states = nd.contrib.foreach(
        lambda xt, s: ([_rnn_step(xt, s[0], w), xt * s[1]], [_rnn_step(xt, s[0], w), s[1] * 2]),
        x, [h0, h0 * 0.5])
    return outs + states


def _unrolled_rnn(x, h0, w):
    h, c, hs, cs = h0, h0 * 0.5, [], []
    for t in range(x.shape[0]):
        hs.append(_rnn_step(x[t], h, w))
        cs.append(x[t] * c)
        h, c = _rnn_step(x[t], h, w), c * 2
    return [nd.stack(*hs), nd.stack(*cs), h, c]


def _while_rnn(h0, w):
    outs, (i, h) = nd.contrib.while_loop(
        lambda i, h: i < 3, lambda i, h: ([h * h], [i + 1, nd.tanh(nd.dot(w, h))]),
        [nd.zeros((1,), dtype=h0.dtype), h0], max_iterations=4)
    return [outs[0], h]


def _cond_fn(x, y):
    return nd.contrib.cond(x.sum() > 0, lambda: x * nd.sin(y), lambda: x - y)


RNG = np.random.RandomState(5)
GRAD_CASES = [
    case("foreach_rnn", _foreach_rnn, None,
         [RNG.uniform(-1, 1, (4, 3)), RNG.uniform(-1, 1, (3,)), RNG.uniform(-1, 1, (3, 3))],
         grad=(0, 1, 2), op=COMPOSED),
    case("while_rnn", _while_rnn, None,
         [RNG.uniform(-1, 1, (3,)), RNG.uniform(-1, 1, (3, 3))], grad=(0, 1), op=COMPOSED),
    case("cond_then", _cond_fn, None,
         [RNG.uniform(0.5, 1, (2, 3)), RNG.uniform(-1, 1, (2, 3))], grad=(0, 1), order=1,
         op=COMPOSED),
    case("cond_else", _cond_fn, None,
         [RNG.uniform(-1, -0.5, (2, 3)), RNG.uniform(-1, 1, (2, 3))], grad=(0, 1), order=1,
         op=COMPOSED),
]


globals().update(row_tests(GRAD_CASES))


def test_foreach_matches_unrolled_loop():
    rng = np.random.RandomState(2)
    arrays = [rng.uniform(-1, 1, s) for s in ((5, 3), (3,), (3, 3))]
    gys = [rng.uniform(-1, 1, s) for s in ((5, 3), (5, 3), (3,), (3,))]
    results = []
    for fn in (_foreach_rnn, _unrolled_rnn):
        xs = [nd.array(a, dtype=np.float64) for a in arrays]
        for x in xs:
            x.attach_grad()
        with mx.autograd.record():
            ys = fn(*xs)
        mx.autograd.backward(ys, [nd.array(g, dtype=np.float64) for g in gys])
        results.append([y.asnumpy() for y in ys] + [x.grad.asnumpy() for x in xs])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


# -- return structure and padding --------------------------------------------------
def test_foreach_structure_follows_body():
    x = nd.array(np.arange(6).reshape(3, 2))
    outs, states = nd.contrib.foreach(lambda xt, s: ((xt, [xt + s[0]]), (s[0] * 2,)), x,
                                      (nd.ones(2),))
    assert isinstance(outs, list) and isinstance(outs[1], list)
    assert isinstance(states, tuple)     # states are what body returned last
    np.testing.assert_array_equal(outs[1][0].asnumpy(), [[1, 2], [4, 5], [8, 9]])
    np.testing.assert_array_equal(states[0].asnumpy(), [8, 8])
    out, s = nd.contrib.foreach(lambda xt, s: (xt * 2, s + xt), nd.array([1, 2, 3]), nd.zeros(1))
    assert isinstance(out, nd.NDArray) and out.shape == (3, 1) and s.asscalar() == 6
    empty, _ = nd.contrib.foreach(lambda xt, s: ([], s), x, nd.zeros(2))
    assert empty == []


def test_foreach_nested_data_slices_every_leaf():
    a, b = nd.array(np.arange(6).reshape(3, 2)), nd.array([10, 20, 30])
    outs, _ = nd.contrib.foreach(lambda d, s: (d[0][0] + d[1], s), [[a], b], [])
    np.testing.assert_array_equal(outs.asnumpy(), [[10, 11], [22, 23], [34, 35]])


def test_while_loop_pads_with_zeros_to_max_iterations():
    outs, (i, s) = nd.contrib.while_loop(
        lambda i, s: i <= 5, lambda i, s: ([i + s], [i + 1, s + i]),
        (nd.array([0], dtype="int64"), nd.array([1], dtype="int64")), max_iterations=10)
    assert outs[0].shape == (10, 1) and outs[0].dtype == np.int64
    np.testing.assert_array_equal(outs[0].asnumpy().ravel(), [1, 2, 4, 7, 11, 16, 0, 0, 0, 0])
    assert (i.asscalar(), s.asscalar()) == (6, 16)


def test_while_loop_stops_at_max_iterations():
    outs, v = nd.contrib.while_loop(lambda v: True, lambda v: (v, v + 1), nd.zeros(1),
                                    max_iterations=nd.array([3]))
    assert isinstance(v, nd.NDArray) and v.asscalar() == 3
    np.testing.assert_array_equal(outs.asnumpy().ravel(), [0, 1, 2])


def test_while_loop_without_steps_returns_loop_vars_unchanged():
    loop_vars = (nd.array([9]), nd.array([1]))
    outs, got = nd.contrib.while_loop(lambda i, s: i < 3, lambda i, s: (i, [i + 1, s]),
                                      loop_vars, max_iterations=5)
    assert outs == [] and got is loop_vars
    outs, got = nd.contrib.while_loop(lambda i: i < 3, lambda i: (i, i + 1), nd.zeros(1),
                                      max_iterations=0)
    assert outs == [] and got.asscalar() == 0


def test_cond_runs_only_the_chosen_branch():
    ran = []
    a = nd.array([3.0])

    def branch(tag, value):
        def run():
            ran.append(tag)
            return value
        return run
    assert nd.contrib.cond(a > 1, branch("then", a * 2), branch("else", a)).asscalar() == 6
    assert nd.contrib.cond(nd.array([[0]]), branch("then", a), branch("else", [a])) == [a]
    assert nd.contrib.cond(True, branch("then", 1), branch("else", 2)) == 1
    assert ran == ["then", "else", "then"]


# -- errors name the function and the argument ------------------------------------
ERRORS = [
    (TypeError, "foreach: body must be a callable",
     lambda: nd.contrib.foreach(nd.ones(2), nd.ones(2), [])),
    (TypeError, r"foreach: data\[1\] must be an NDArray",
     lambda: nd.contrib.foreach(lambda d, s: (d[0], s), [nd.ones(2), 3], [])),
    (TypeError, "foreach: data must be an NDArray",
     lambda: nd.contrib.foreach(lambda d, s: (d, s), np.ones(2), [])),
    (TypeError, "foreach: init_states must be an NDArray",
     lambda: nd.contrib.foreach(lambda d, s: (d, s), nd.ones(2), 5)),
    (ValueError, "foreach: every array in data must have the same length",
     lambda: nd.contrib.foreach(lambda d, s: (d[0], s), [nd.ones(3), nd.ones(2)], [])),
    (ValueError, "foreach: data must hold at least one NDArray",
     lambda: nd.contrib.foreach(lambda d, s: (d, s), [], [])),
    (TypeError, "foreach: body must return a pair",
     lambda: nd.contrib.foreach(lambda d, s: d, nd.ones(2), [])),
    (TypeError, "foreach: the outputs of body must be an NDArray",
     lambda: nd.contrib.foreach(lambda d, s: (1.0, s), nd.ones(2), [])),
    (ValueError, r"foreach: the states returned by body in iteration 0 are \[\[NDArray\]\]",
     lambda: nd.contrib.foreach(lambda d, s: (d, [s]), nd.ones(2), [nd.ones(1)])),
    (ValueError, "foreach: body must return outputs nested the same way",
     lambda: nd.contrib.foreach(lambda d, s: ([d] * int(d.asscalar() + 1), s),
                                nd.array([0, 1]), [])),
    (ValueError, "foreach: output 0 of body must have the same shape",
     lambda: nd.contrib.foreach(lambda d, s: (nd.ones(int(d.asscalar())), s),
                                nd.array([1, 2]), [])),
    (ValueError, "while_loop: max_iterations should be specified",
     lambda: nd.contrib.while_loop(lambda i: i < 3, lambda i: (i, i + 1), nd.zeros(1))),
    (ValueError, "while_loop: cannot convert max_iterations",
     lambda: nd.contrib.while_loop(lambda i: i < 3, lambda i: (i, i + 1), nd.zeros(1), "x")),
    (TypeError, "while_loop: cond must be a callable",
     lambda: nd.contrib.while_loop(None, lambda i: (i, i + 1), nd.zeros(1), 3)),
    (ValueError, "while_loop: loop_vars should contain at least one element",
     lambda: nd.contrib.while_loop(lambda: True, lambda: ([], []), [], 3)),
    (TypeError, r"while_loop: loop_vars\[1\] must be an NDArray",
     lambda: nd.contrib.while_loop(lambda i, s: i < 3, lambda i, s: (i, [i, s]),
                                   [nd.zeros(1), 2], 3)),
    (ValueError, r"while_loop: the value returned by cond must be an NDArray with one "
                 r"element, got shape \(2,\)",
     lambda: nd.contrib.while_loop(lambda i: nd.ones(2), lambda i: (i, i + 1), nd.zeros(1), 3)),
    (TypeError, "while_loop: the value returned by cond must be an NDArray with one element, "
                "got str",
     lambda: nd.contrib.while_loop(lambda i: "yes", lambda i: (i, i + 1), nd.zeros(1), 3)),
    (TypeError, "while_loop: func must return a pair",
     lambda: nd.contrib.while_loop(lambda i: i < 3, lambda i: i + 1, nd.zeros(1), 3)),
    (ValueError, "while_loop: func returned 2 loop_vars, expected 1",
     lambda: nd.contrib.while_loop(lambda i: i < 3, lambda i: (i, [i + 1, i]), nd.zeros(1), 3)),
    (ValueError, r"while_loop: func returned loop_vars nested as \[\[NDArray\]\]",
     lambda: nd.contrib.while_loop(lambda i: i < 3, lambda i: (i, [[i + 1]]), nd.zeros(1), 3)),
    (ValueError, "while_loop: number of elements in step_output should be the same",
     lambda: nd.contrib.while_loop(lambda i: i < 3, lambda i: ([i] * int(i.asscalar() + 1),
                                                              i + 1), nd.zeros(1), 3)),
    (ValueError, r"while_loop: element 0 of step_output must have the same shape(.|\n)*"
                 r"step 1: shape \(2,\)",
     lambda: nd.contrib.while_loop(lambda i: i < 3, lambda i: (nd.ones(int(i.asscalar()) + 1),
                                                              i + 1), nd.zeros(1), 3)),
    (ValueError, r"cond: pred must be an NDArray with one element, got shape \(2,\)",
     lambda: nd.contrib.cond(nd.array([1, 0]), lambda: 1, lambda: 2)),
    (TypeError, "cond: pred must be an NDArray with one element, got NoneType",
     lambda: nd.contrib.cond(None, lambda: 1, lambda: 2)),
    (TypeError, "cond: else_func must be a callable",
     lambda: nd.contrib.cond(nd.ones(1), lambda: 1, nd.ones(1))),
]


@pytest.mark.parametrize("exc, match, call", ERRORS, ids=[e[1][:40] for e in ERRORS])
def test_errors(exc, match, call):
    with pytest.raises(exc, match=match):
        call()


def test_attached_to_nd_contrib():
    from mxlite.nd import contrib_control_flow as cf
    assert (nd.contrib.foreach, nd.contrib.while_loop, nd.contrib.cond) == \
        (cf.foreach, cf.while_loop, cf.cond)
