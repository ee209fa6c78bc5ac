"""Contrib ops of ``mxlite/operator/nn/`` (attention, fft, normalization, detection) and the optimizer ops of
``mxlite/operator/tensor/optimizer_extra.py`` against real MXNet 1.9.1.

Golden data: ``reference_extra/contrib_extra.npz`` (made by
``reference_extra/gen_contrib_extra.py`` under MXNet 1.9.1). ``__manifest__`` lists the
cases {name, kind, op (path under mx.nd), kwargs, n_in, n_out, ...}:

- kind ``grad``: ``c/x<i>`` inputs, ``c/y<i>`` outputs, ``c/gy<i>`` head gradients and
  ``c/gx<i>`` the input gradients (inputs listed in ``grad``). The attention ops are float32
  only (MXNet's CPU kernels take nothing else).
- kind ``update``: ``c/x<i>`` the inputs before the call, ``c/a<i>`` after it (states
  updated in place), ``c/y<i>`` the outputs; ``inplace`` cases pass ``out=`` the weights
  (inputs 0, stride, 2 * stride ...). Bit-exact except ``_multi_mp_lamb_update``.
"""

import numpy as np
import pytest

import mxlite as mx
import golden_manifest
from optable import case, row_tests

Z, MANIFEST = golden_manifest.load("contrib_extra.npz")
GRAD = [c for c in MANIFEST if c["kind"] == "grad"]
UPDATE = [c for c in MANIFEST if c["kind"] == "update"]
# NOTE: MXNet's multi_sum_sq behind LAMB's trust ratio rounds differently from every
# summation order tried; the weights agree to float32 ulps only (the moments exactly).
NOT_BIT_EXACT = {"multi_lamb_bc": 1e-6, "multi_lamb_nobc": 1e-6,
                 "multi_mp_lamb_bc": 1e-5, "multi_mp_lamb_nobc": 1e-5}


_op = golden_manifest.op_at


def _arr(key):
    return golden_manifest.array(Z, key)


@pytest.mark.parametrize("c", GRAD, ids=[c["name"] for c in GRAD])
def test_forward_backward_match_mxnet(c):
    n = c["name"]
    xs, ys = golden_manifest.run(Z, c)
    for i, y in enumerate(ys):
        np.testing.assert_allclose(y.asnumpy(), Z["%s/y%d" % (n, i)], rtol=1e-5, atol=1e-6)
    for i, x in enumerate(xs):      # in-place updates (BatchNorm's moving statistics)
        if i in c["grad"]:
            continue    # NOTE: MXNet also writes 1 into gamma when fix_gamma; mxlite does not
        np.testing.assert_allclose(x.asnumpy(), Z["%s/a%d" % (n, i)], rtol=1e-5, atol=1e-6)
    for i in c["grad"]:
        np.testing.assert_allclose(xs[i].grad.asnumpy(), Z["%s/gx%d" % (n, i)], rtol=1e-5,
                                   atol=1e-6, err_msg="input %d" % i)


@pytest.mark.parametrize("c", UPDATE, ids=[c["name"] for c in UPDATE])
def test_update_matches_mxnet(c):
    n = c["name"]
    xs = [_arr("%s/x%d" % (n, i)) for i in range(c["n_in"])]
    kw = dict(c["kwargs"])
    if c["inplace"]:
        s = c["stride"]
        kw["out"] = xs[0] if s is None else [xs[i] for i in range(0, s * c["n_weights"], s)]
    ys = _op(c["op"])(*xs, **kw)
    ys = ys if isinstance(ys, list) else [ys]
    assert len(ys) == c["n_out"]
    tol = NOT_BIT_EXACT.get(n)
    for i, y in enumerate(ys + xs):
        want = Z["%s/%s%d" % (n, "y" if i < len(ys) else "a", i if i < len(ys) else i - len(ys))]
        assert y.dtype == want.dtype
        if tol is None:
            np.testing.assert_array_equal(y.asnumpy(), want, err_msg="array %d" % i)
        else:
            np.testing.assert_allclose(y.asnumpy().astype(np.float64), want, rtol=0,
                                       atol=tol if want.dtype != np.float16 else 1e-3)


# -- attention: numeric gradients in float64, second order, mx.sym and hybridize ---------

H = 2


def _qkv(rng, s=3, b=2, d=3, n=3):
    return rng.uniform(-1, 1, (s, b, H * n * d))


def _att_cases():
    rng = np.random.RandomState(3)
    qkv, kv, q = _qkv(rng), _qkv(rng, s=4, n=2), _qkv(rng, n=1)
    return [
        case("selfatt_qk", lambda x: mx.nd.contrib.interleaved_matmul_selfatt_qk(x, heads=H),
             None, [qkv]),
        case("selfatt_valatt", lambda x, a: mx.nd.contrib.interleaved_matmul_selfatt_valatt(
            x, a, heads=H), None, [qkv, rng.uniform(-1, 1, (2 * H, 3, 3))], grad=(0, 1)),
        case("encdec_qk", lambda x, k: mx.nd.contrib.interleaved_matmul_encdec_qk(
            x, k, heads=H), None, [q, kv], grad=(0, 1)),
        case("encdec_valatt", lambda k, a: mx.nd.contrib.interleaved_matmul_encdec_valatt(
            k, a, heads=H), None, [kv, rng.uniform(-1, 1, (2 * H, 3, 4))], grad=(0, 1)),
    ]


def _reference_attention(qkv, heads):
    """Plain NumPy multi-head self-attention scores and values, MXNet's layout."""
    s, b, e = qkv.shape
    d = e // (3 * heads)
    r = qkv.reshape(s, b, heads, 3, d).transpose(1, 2, 0, 3, 4).reshape(b * heads, s, 3, d)
    q, k, v = r[:, :, 0], r[:, :, 1], r[:, :, 2]
    att = q @ k.transpose(0, 2, 1) / np.sqrt(d)
    out = (att @ v).reshape(b, heads, s, d).transpose(2, 0, 1, 3).reshape(s, b, heads * d)
    return att, out


def test_attention_through_symbol():
    rng = np.random.RandomState(1)
    qkv = rng.uniform(-1, 1, (4, 2, H * 3 * 5)).astype(np.float32)
    x = mx.sym.var("qkv")
    att = mx.sym.contrib.interleaved_matmul_selfatt_qk(x, heads=H)
    out = mx.sym.contrib.interleaved_matmul_selfatt_valatt(x, att, heads=H)
    _, shapes, _ = out.infer_shape(qkv=qkv.shape)
    assert shapes == [(4, 2, H * 5)]
    exe = out.bind(mx.cpu(), {"qkv": mx.nd.array(qkv)})
    y = exe.forward()[0].asnumpy()
    np.testing.assert_allclose(y, _reference_attention(qkv, H)[1], rtol=1e-5, atol=1e-6)


class _EncDec(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, q, kv):
        att = F.softmax(F.contrib.interleaved_matmul_encdec_qk(q, kv, heads=H), axis=-1)
        return F.contrib.interleaved_matmul_encdec_valatt(kv, att, heads=H)


def test_attention_hybridized_block_matches_imperative():
    rng = np.random.RandomState(2)
    q = mx.nd.array(rng.uniform(-1, 1, (3, 2, H * 4)))
    kv = mx.nd.array(rng.uniform(-1, 1, (5, 2, H * 2 * 4)))
    net = _EncDec()
    want = net(q, kv).asnumpy()
    net.hybridize()
    q.attach_grad()
    with mx.autograd.record():
        y = net(q, kv)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), want, rtol=1e-6)
    assert np.abs(q.grad.asnumpy()).sum() > 0


def test_fft_ifft_roundtrip_and_layout():
    x = np.random.RandomState(4).uniform(-1, 1, (3, 8))
    y = mx.nd.contrib.fft(mx.nd.array(x, dtype=np.float64)).asnumpy()
    f = np.fft.fft(x, axis=-1)
    np.testing.assert_allclose(y[:, 0::2], f.real, atol=1e-12)
    np.testing.assert_allclose(y[:, 1::2], f.imag, atol=1e-12)
    # MXNet's ifft does not divide by the length
    back = mx.nd.contrib.ifft(mx.nd.array(y, dtype=np.float64)).asnumpy()
    np.testing.assert_allclose(back, 8 * x, atol=1e-12)


# gradient rows: first and second order against numeric differences (float64)
SPECS = _att_cases() + [
    case("fft", lambda x: mx.nd.contrib.fft(x), None,
         [np.random.RandomState(5).uniform(-1, 1, (2, 6))]),
    case("ifft", lambda x: mx.nd.contrib.ifft(x), None,
         [np.random.RandomState(6).uniform(-1, 1, (2, 6))])]
globals().update(row_tests(SPECS))


def test_bn_relu_and_bipartite_through_symbol():
    x = mx.sym.var("x")
    y = mx.sym.contrib.BatchNormWithReLU(x, fix_gamma=False, name="bn")
    data = np.random.RandomState(7).uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    exe = y.simple_bind(mx.cpu(), x=data.shape)
    exe.arg_dict["x"][:] = data
    exe.arg_dict["bn_gamma"][:] = 1.0
    exe.aux_dict["bn_moving_var"][:] = 1.0
    out = exe.forward(is_train=False)[0].asnumpy()
    np.testing.assert_allclose(out, np.maximum(data / np.sqrt(1 + 1e-3), 0), rtol=1e-6)
    m = mx.sym.contrib.bipartite_matching(mx.sym.var("s"), threshold=1e-12)
    s = mx.nd.array([[[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]]])
    rows = m.bind(mx.cpu(), {"s": s}).forward()[0].asnumpy()
    np.testing.assert_array_equal(rows, [[1, -1, 0]])


def test_attention_errors():
    with pytest.raises(mx.MXNetError, match="multiple of heads"):
        mx.nd.contrib.interleaved_matmul_selfatt_qk(mx.nd.ones((2, 1, 10)), heads=3)
    with pytest.raises(mx.MXNetError, match="attention must have shape"):
        mx.nd.contrib.interleaved_matmul_selfatt_valatt(mx.nd.ones((2, 1, 12)),
                                                        mx.nd.ones((2, 3, 3)), heads=2)
    with pytest.raises(mx.MXNetError, match=r"encdec_qk: keys_values expected 3 dims, got "
                                            r"shape \(2, 12\)"):
        mx.nd.contrib.interleaved_matmul_encdec_qk(mx.nd.ones((2, 1, 6)), mx.nd.ones((2, 12)),
                                                   heads=2)
    with pytest.raises(mx.MXNetError, match=r"selfatt_valatt: queries_keys_values expected 3 "
                                            r"dims, got shape \(2, 1, 1, 12\)"):
        mx.nd.contrib.interleaved_matmul_selfatt_valatt(mx.nd.ones((2, 1, 1, 12)),
                                                        mx.nd.ones((2, 2, 2)), heads=2)


# -- optimizer ops: behaviour -------------------------------------------------------------

def test_preloaded_sgd_in_place_and_count_checked():
    w, g = mx.nd.ones((3,)), mx.nd.ones((3,))
    lrs, wds = mx.nd.array([0.1]), mx.nd.array([0.0])
    out = mx.nd.preloaded_multi_sgd_update(w, g, lrs, wds, num_weights=1, out=[w])
    np.testing.assert_allclose(w.asnumpy(), 0.9)
    assert out[0] is w
    with pytest.raises(mx.MXNetError, match="lrs has 2 value"):
        mx.nd.preloaded_multi_sgd_update(w, g, mx.nd.array([0.1, 0.2]), wds, num_weights=1)


def test_group_adagrad_zero_rows_untouched():
    w = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    g = mx.nd.array([[0.0, 0.0], [1.0, -1.0]])
    h = mx.nd.zeros((2, 1))
    mx.nd.contrib.group_adagrad_update(w, g, h, lr=0.5, out=w)
    np.testing.assert_allclose(h.asnumpy().ravel(), [0.0, 1.0])
    np.testing.assert_allclose(w.asnumpy()[0], [1.0, 2.0])
    np.testing.assert_allclose(w.asnumpy()[1], [3.0 - 0.5 / np.sqrt(1 + 1e-5),
                                                4.0 + 0.5 / np.sqrt(1 + 1e-5)], rtol=1e-6)
