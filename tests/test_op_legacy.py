"""Legacy op names and small utility ops (mxlite/operator/tensor/legacy.py and
mxlite/operator/nn/legacy_nn.py).

Golden data: tests/reference_extra/legacy_ops.npz, written by
tests/reference_extra/gen_legacy_ops.py under real MXNet 1.9.1. Each case ran through
MXNet's symbol executor (variables ``a0, a1, ...``, aux states, ``forward(is_train)``,
``backward`` with the stored head gradients), or through ``mx.nd`` and autograd for
the NDArray-only legacy functions (op ``nd:<path>``); the tests run the same through
mxlite's ``mx.sym`` (or ``mx.nd``) and compare outputs, input gradients and the aux
states after. ``__alias_json__`` is a symbol JSON from MXNet whose nodes carry the
old names (``_Equal``, ``_GreaterScalar``, ``_ModScalar`` ...), with MXNet's outputs.
"""
import inspect
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.operator.registry import OPS, Op
from mxlite.operator.tensor import legacy
from optable import case, check_first_order, row_tests

REF = np.load(os.path.join(os.path.dirname(__file__), "reference_extra", "legacy_ops.npz"))
MANIFEST = json.loads(str(REF["__manifest__"]))
RNG = np.random.default_rng(5)


def _get(root, path):
    for part in path.split("."):
        root = getattr(root, part)
    return root


def _nd(a):
    return mx.nd.array(a, dtype=a.dtype)


def _run_nd(c, key):
    """Through mx.nd and autograd: the forward in the case's mode, the backward in
    training mode (as MXNet's executor backward, which mxlite's refuses after a
    predict-mode forward)."""
    xs = [_nd(REF[key("x%d" % i)]) for i in range(c["n_in"])]
    aux = [_nd(REF[key("aux%d" % i)]) for i in range(c["n_aux"])]
    for i in c["grad"]:
        xs[i].attach_grad()
    with mx.autograd.record(train_mode=c["train"]):
        ys = _get(mx.nd, c["op"].replace("nd:", ""))(*(xs + aux), **c["kwargs"])
    ys = ys if isinstance(ys, list) else [ys]
    if c["grad"]:
        mx.autograd.backward(ys, [_nd(REF[key("gy%d" % i)]) for i in range(len(ys))],
                             train_mode=True)
    return ([y.asnumpy() for y in ys], {i: xs[i].grad.asnumpy() for i in c["grad"]},
            [a.asnumpy() for a in aux])


def _run_sym(c, key):
    vs = [mx.sym.var("a%d" % i) for i in range(c["n_in"])]
    sym = _get(mx.sym, c["op"])(*vs, name="op", **c["kwargs"])
    args = {"a%d" % i: _nd(REF[key("x%d" % i)]) for i in range(c["n_in"])}
    aux_names = sym.list_auxiliary_states()
    aux = {n: _nd(REF[key("aux%d" % i)]) for i, n in enumerate(aux_names)}
    grads = {k: mx.nd.zeros(v.shape, dtype=v.dtype) for k, v in args.items()}
    req = {"a%d" % i: ("write" if i in c["grad"] else "null") for i in range(c["n_in"])}
    ex = sym.bind(mx.cpu(), args, args_grad=grads, grad_req=req, aux_states=aux)
    ys = [y.asnumpy() for y in ex.forward(is_train=c["train"])]
    if c["grad"]:
        ex.backward([_nd(REF[key("gy%d" % i)]) for i in range(len(ys))])
    return (ys, {i: grads["a%d" % i].asnumpy() for i in c["grad"]},
            [aux[n].asnumpy() for n in aux_names])


def _close(got, want, what):
    assert got.shape == want.shape, "%s: shape %s, MXNet %s" % (what, got.shape, want.shape)
    assert got.dtype == want.dtype, "%s: dtype %s, MXNet %s" % (what, got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=what)


@pytest.mark.parametrize("c", MANIFEST, ids=[c["name"] for c in MANIFEST])
def test_matches_mxnet(c):
    def key(k):
        return "%s/%s" % (c["name"], k)
    run = _run_nd if c["op"].startswith("nd:") or not c["train"] else _run_sym
    ys, gxs, aux = run(c, key)
    assert len(ys) == c["n_out"]
    for i, y in enumerate(ys):
        _close(y, REF[key("y%d" % i)], "output %d" % i)
    for i, g in gxs.items():
        _close(g, REF[key("gx%d" % i)], "gradient of input %d" % i)
    for i, a in enumerate(aux):
        _close(a, REF[key("auxafter%d" % i)], "aux state %d after" % i)


def test_symbol_json_with_legacy_names_from_mxnet_loads_and_runs():
    text = str(REF["__alias_json__"])
    ops = {n["op"] for n in json.loads(text)["nodes"]}
    assert {"_Equal", "_Greater", "_GreaterScalar", "_ModScalar", "_Logical_Or",
            "_HypotScalar", "_NotEqualScalar", "_Lesser_Equal"} <= ops
    sym = mx.sym.load_json(text)
    ex = sym.bind(mx.cpu(), {"a": _nd(REF["alias_json/x0"]), "b": _nd(REF["alias_json/x1"])})
    ys = ex.forward()
    assert len(ys) == 3
    for i, y in enumerate(ys):
        _close(y.asnumpy(), REF["alias_json/y%d" % i], "output %d" % i)
    # and it round-trips through mxlite's JSON
    again = mx.sym.load_json(sym.tojson()).bind(
        mx.cpu(), {"a": _nd(REF["alias_json/x0"]), "b": _nd(REF["alias_json/x1"])}).forward()
    for y, z in zip(ys, again):
        np.testing.assert_array_equal(y.asnumpy(), z.asnumpy())


# -- the alias mechanism ----------------------------------------------------------------------

def test_op_fields_cover_every_declaration_argument():
    names = set(inspect.signature(Op.__init__).parameters) - {"self", "name", "aliases",
                                                              "params"}
    assert names == set(legacy.OP_FIELDS)
    for attr in legacy.OP_FIELDS.values():
        assert hasattr(OPS["_equal"], attr)


@pytest.mark.parametrize("alias", sorted(legacy.ALIASES))
def test_alias_is_declared_like_its_target(alias):
    op, target = OPS[alias], OPS[legacy.ALIASES[alias]]
    assert op.name == alias
    for attr in ("kernel", "check", "gradient", "inputs", "num_outputs", "saves",
                 "infer_shape_rule", "same_shape"):
        assert getattr(op, attr) is getattr(target, attr) or \
            getattr(op, attr) == getattr(target, attr), attr
    assert list(op.params) == list(target.params)
    assert hasattr(mx.nd._internal, alias) and hasattr(mx.sym._internal, alias)


def test_alias_gradient_is_the_targets():
    x = mx.nd.array([[1.5, -2.0], [0.3, 4.0]], dtype="float64")
    gs = []
    for name in ("_ModScalar", "_mod_scalar"):
        x.attach_grad()
        with mx.autograd.record():
            y = getattr(mx.nd._internal, name)(x, scalar=0.7) * x
        y.backward()
        gs.append(x.grad.asnumpy())
    np.testing.assert_array_equal(gs[0], gs[1])


# -- numeric gradients (float64) ----------------------------------------------------------------

def _u(*shape):
    return RNG.uniform(-1, 1, shape)


def _np_slice_assign(x, v, key):
    y = x.copy()
    y[key] = v
    return y


def _np_pool_v1_avg(x):
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros(x.shape[:2] + (3, 3))
    for i in range(3):
        for j in range(3):
            out[:, :, i, j] = xp[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].sum(axis=(2, 3)) / 9
    return out


def _np_count_sketch(x, h, s, out_dim):
    y = np.zeros((x.shape[0], out_dim))
    for j in range(x.shape[1]):
        y[:, int(h[0, j])] += s[0, j] * x[:, j]
    return y


_H = np.array([[0, 3, 1, 3, 2]], np.float64)
_S = np.array([[1, -1, 1, 1, -1]], np.float64)
_KEY = dict(begin=(0, None), end=(2, None), step=(1, 2))
CASES = [
    case("slice_assign",
         lambda a, b: mx.nd._internal._slice_assign(a, b, **_KEY),
         lambda a, b: _np_slice_assign(a, b, (slice(0, 2), slice(None, None, 2))),
         [_u(3, 4), _u(2, 2)], grad=(0, 1)),
    case("slice_assign_scalar",
         lambda a: mx.nd._internal._crop_assign_scalar(a, scalar=2.0, **_KEY),
         lambda a: _np_slice_assign(a, 2.0, (slice(0, 2), slice(None, None, 2))), [_u(3, 4)]),
    case("square_sum", lambda a: mx.nd._internal._square_sum(a, axis=1, keepdims=True),
         lambda a: (a * a).sum(axis=1, keepdims=True), [_u(3, 4)]),
    case("square_sum_exclude", lambda a: mx.nd._internal._square_sum(a, axis=1, exclude=True),
         lambda a: (a * a).sum(axis=(0, 2)), [_u(2, 3, 4)]),
    case("choose", lambda a, i: mx.nd.choose_element_0index(a, i),
         lambda a, i: a[np.arange(3), np.clip(i.astype(int), 0, 3)],
         [_u(3, 4), np.array([2, 0, 7.0])], order=1),
    case("count_sketch", lambda a, h, s: mx.nd.contrib.count_sketch(a, h, s, out_dim=4),
         lambda a, h, s: _np_count_sketch(a, h, s, 4).astype(a.dtype), [_u(3, 5), _H, _S]),
    case("pool_v1_avg_pad",
         lambda a: mx.nd.Pooling_v1(a, kernel=(3, 3), stride=(2, 2), pad=(1, 1),
                                    pool_type="avg"),
         lambda a: _np_pool_v1_avg(a).astype(a.dtype), [_u(2, 2, 5, 5)]),
    case("svm_l2", lambda a, lab: mx.nd.SVMOutput(a, lab), lambda a, lab: a,
         [_u(3, 4), np.array([0, 3, 1.0])], grad=(), order=1),
    case("cast_storage", lambda a: mx.nd.cast_storage(a, stype="csr"), lambda a: a,
         [_u(2, 3)]),
]


globals().update(row_tests(CASES))


def test_pool_v1_max_gradient_is_numeric_away_from_ties():
    x = RNG.permutation(50).reshape(1, 2, 5, 5).astype(np.float64) / 7 - 3
    c = case("pool_v1_max", lambda a: mx.nd.Pooling_v1(a, kernel=(2, 2), stride=(2, 2),
                                                        pad=(1, 1), pooling_convention="full"),
             None, [x], order=1)
    check_first_order(c, RNG)


def test_batchnorm_v1_training_gradient_is_numeric():
    c = case("bn_v1", lambda a, g, b: mx.nd.BatchNorm_v1(
        a, g, b, mx.nd.zeros(3, dtype="float64"), mx.nd.ones(3, dtype="float64"),
        fix_gamma=False), None, [_u(4, 3, 2), _u(3) + 2, _u(3)], grad=(0, 1, 2), order=1,
             op="BatchNorm_v1")
    with mx.autograd.train_mode():
        check_first_order(c, RNG, rtol=1e-5)


# -- behaviour and errors -------------------------------------------------------------------------

def test_reset_arrays_zeroes_every_input_in_place():
    a, b = mx.nd.ones((2,)), mx.nd.full((3, 2), 5.0)
    assert mx.nd.reset_arrays(a, b, num_arrays=2) == []
    assert a.asnumpy().sum() == 0 and b.asnumpy().sum() == 0


def test_getnnz_counts_nonzeros_dense():
    x = mx.nd.array([[0, 1, 2], [0, 0, 3]])
    assert mx.nd.contrib.getnnz(x).asnumpy().tolist() == [3]
    assert mx.nd.contrib.getnnz(x, axis=1).asnumpy().tolist() == [2, 1]
    assert mx.nd.contrib.getnnz(x, axis=0).dtype == np.int64


def test_histogram_function_follows_mxnet():
    x = mx.nd.array([0, 1, 1, 3, 2.5])
    counts, edges = mx.nd.histogram(x, bins=3, range=(0, 3))
    assert counts.asnumpy().tolist() == [1, 2, 2] and counts.dtype == np.int64
    np.testing.assert_allclose(edges.asnumpy(), [0, 1, 2, 3])
    counts, _ = mx.nd.histogram(x, bins=mx.nd.array([0, 2, 3]))
    assert counts.asnumpy().tolist() == [3, 2]
    counts, _ = mx.nd.histogram(x, bins=2)
    assert counts.asnumpy().tolist() == [3, 2]


def test_zeros_without_dtype_takes_type_codes():
    assert mx.nd._internal._zeros_without_dtype(shape=(2,)).dtype == np.float32
    assert mx.nd._internal._zeros_without_dtype(shape=(2,), dtype=1).dtype == np.float64
    assert mx.nd._internal._zeros_without_dtype(shape=(2,), dtype="int32").dtype == np.int32


@pytest.mark.parametrize("use_linear", [False, True])
def test_svm_output_gradient_is_the_hinge_slope(use_linear):
    x = np.array([[0.5, -2.0, 1.5], [-0.2, 0.3, -1.2]], np.float32)
    label = np.array([2, 0])
    margin, c = 0.7, 1.5
    true = np.eye(3, dtype=bool)[label]
    if use_linear:
        want = np.where(true, -c * (x < margin), c * (-x < margin))
    else:
        want = np.where(true, -2 * c * np.maximum(margin - x, 0), 2 * c * np.maximum(x + margin, 0))
    for raw in (True, False):       # the rule on raw arrays and on NDArrays
        old, mx.autograd.RAW_RULES = mx.autograd.RAW_RULES, raw
        try:
            a = mx.nd.array(x)
            a.attach_grad()
            with mx.autograd.record():
                y = mx.nd.SVMOutput(a, mx.nd.array(label), margin=margin,
                                    regularization_coefficient=c, use_linear=use_linear)
            y.backward(mx.nd.ones_like(y) * 5)      # the head gradient is ignored
        finally:
            mx.autograd.RAW_RULES = old
        np.testing.assert_allclose(a.grad.asnumpy(), want, rtol=1e-6)
        assert a.grad.dtype == np.float32


def test_kl_reg_updates_its_moving_average_in_backward():
    x = mx.nd.array([[0.2, 0.6], [0.4, 0.8]])
    avg = mx.nd.array([0.5, 0.5])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.IdentityAttachKLSparseReg(x, avg, momentum=0.5)
    np.testing.assert_array_equal(avg.asnumpy(), [0.5, 0.5])
    y.backward()
    np.testing.assert_allclose(avg.asnumpy(), [0.4, 0.6], rtol=1e-6)
    a = np.array([0.4, 0.6])
    want = 1 + 0.001 * (-0.1 / a + 0.9 / (1 - a))
    np.testing.assert_allclose(x.grad.asnumpy(), np.tile(want, (2, 1)), rtol=1e-5)


def test_legacy_ops_in_a_hybridized_block():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, x):
            y = F.Pooling_v1(x, kernel=(2, 2), stride=(2, 2), pool_type="avg")
            z = F._internal._GreaterScalar(y, scalar=0.0)
            return F._internal._square_sum(y * z, axis=(1, 2, 3))

    x = mx.nd.array(RNG.uniform(-1, 1, (2, 3, 4, 4)))
    net = Net()
    want = net(x).asnumpy()
    net.hybridize()
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)


@pytest.mark.parametrize("fn, match", [
    (lambda: mx.nd.Convolution_v1(mx.nd.ones((1, 1, 5)), mx.nd.ones((1, 1, 3)),
                                  mx.nd.ones((1,)), kernel=(3,), num_filter=1),
     "only 2-D"),
    (lambda: mx.nd.Convolution_v1(mx.nd.ones((1, 5, 5, 1)), mx.nd.ones((1, 3, 3, 1)),
                                  mx.nd.ones((1,)), kernel=(3, 3), num_filter=1,
                                  layout="NHWC"), "only NCHW"),
    (lambda: mx.nd.Pooling_v1(mx.nd.ones((1, 1, 5)), kernel=(2,)), "4-D"),
    (lambda: mx.nd.cast_storage(mx.nd.ones((2,)), stype="dense"), "row_sparse"),
    (lambda: mx.nd._internal._NoGradient(), "placeholder"),
    (lambda: mx.nd._internal._slice_assign(mx.nd.ones((3, 4)), mx.nd.ones((2, 3)),
                                           begin=(0, 0), end=(2, 2)), r"\(2, 3\)"),
    (lambda: mx.nd.SVMOutput(mx.nd.ones((2, 3)), mx.nd.ones((3,))), "label"),
    (lambda: mx.nd.contrib.count_sketch(mx.nd.ones((1, 2)), mx.nd.array([[0, 5]]),
                                        mx.nd.ones((1, 2)), out_dim=3), "out_dim"),
])
def test_errors_name_the_problem(fn, match):
    with pytest.raises((MXNetError, ValueError, TypeError), match=match):
        fn()


def test_sym_histogram_as_mxnet():
    # MXNet 1.9.1 gives these counts and edges for the same calls.
    x = mx.sym.var("x")
    data = mx.nd.array([0, 1, 1, 3])
    out = mx.sym.histogram(x, bins=3, range=(0, 3)).bind(mx.cpu(), {"x": data}).forward()
    assert out[0].asnumpy().tolist() == [1, 2, 1]
    assert out[1].asnumpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    e = mx.sym.var("e")
    out = mx.sym.histogram(x, bins=e).bind(
        mx.cpu(), {"x": data, "e": mx.nd.array([0, 2, 3])}).forward()
    assert out[0].asnumpy().tolist() == [3, 1]
    with pytest.raises(ValueError, match="range is required"):
        mx.sym.histogram(x, bins=3)
