"""Loss heads, sequence ops, CTCLoss and the fused RNN op: NumPy references,
float64 numeric gradients and error messages."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from optable import case, to_nd, central_difference, check_first_order, row_tests

nd = mx.nd
R = np.random.RandomState(11)


def u(*shape):
    return R.uniform(-1, 1, shape)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def grad_of(op, xs, head=None, **kw):
    """(output, gradient of input 0) with a given (or random) head gradient."""
    arrs = [nd.array(x, dtype=x.dtype) for x in xs]
    arrs[0].attach_grad()
    with mx.autograd.record():
        y = getattr(nd, op)(*arrs, **kw)
    y.backward(nd.array(head if head is not None else R.uniform(-1, 1, y.shape), dtype=y.dtype))
    return y.asnumpy(), arrs[0].grad.asnumpy()


# -- loss heads: the backward pass ignores the head gradient ---------------------------

@pytest.mark.parametrize("kw,norm", [({}, 1), ({"normalization": "batch"}, 4),
                                     ({"grad_scale": 3.0, "normalization": "batch"}, 4 / 3)])
def test_softmax_output_gradient_is_softmax_minus_onehot(kw, norm):
    x = u(4, 5)
    label = np.array([0, 3, 1, 4.0])
    y, g = grad_of("SoftmaxOutput", [x, label], **kw)
    np.testing.assert_allclose(y, softmax(x), rtol=1e-12)
    np.testing.assert_allclose(g, (softmax(x) - np.eye(5)[[0, 3, 1, 4]]) / norm, rtol=1e-12)
    _, g2 = grad_of("Softmax", [x, label], **kw)          # another head, same gradient
    np.testing.assert_allclose(g2, g, rtol=1e-12)


def test_softmax_output_ignore_valid_and_smoothing():
    x = u(4, 3)
    label = np.array([2, -1, 0, 1.0])
    _, g = grad_of("SoftmaxOutput", [x, label], use_ignore=True, normalization="valid",
                   smooth_alpha=0.2)
    target = np.full((4, 3), 0.1)
    target[np.arange(4), [2, 0, 0, 1]] = 0.8
    want = (softmax(x) - target) / 3
    want[1] = 0
    np.testing.assert_allclose(g, want, rtol=1e-12)


def test_softmax_output_multi_output_divides_by_positions():
    x = u(2, 3, 4)
    label = R.randint(0, 3, (2, 4)).astype(np.float64)
    y, g = grad_of("SoftmaxOutput", [x, label], multi_output=True)
    np.testing.assert_allclose(y, softmax(x, axis=1), rtol=1e-12)
    onehot = np.moveaxis(np.eye(3)[label.astype(int)], -1, 1)
    np.testing.assert_allclose(g, (softmax(x, axis=1) - onehot) / 4, rtol=1e-12)


def test_softmax_output_label_gets_zero_gradient_and_probability_labels():
    x, p = u(3, 4), softmax(u(3, 4))
    a, lab = nd.array(x, dtype="float64"), nd.array(p, dtype="float64")
    a.attach_grad()
    lab.attach_grad()
    with mx.autograd.record():
        y = nd.SoftmaxOutput(a, lab, grad_scale=2.0)
    y.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), 2 * (softmax(x) - p), rtol=1e-12)
    assert not lab.grad.asnumpy().any()


@pytest.mark.parametrize("op,fwd,bwd", [
    ("LinearRegressionOutput", lambda x: x, lambda y, l: y - l),
    ("LogisticRegressionOutput", lambda x: 1 / (1 + np.exp(-x)), lambda y, l: y - l),
    ("MAERegressionOutput", lambda x: x, lambda y, l: np.sign(y - l)),
])
def test_regression_outputs(op, fwd, bwd):
    x, label = u(3, 4), u(3, 4)
    y, g = grad_of(op, [x, label], grad_scale=2.0)
    np.testing.assert_allclose(y, fwd(x), rtol=1e-12)
    # MXNet divides by the number of outputs per sample (4 here).
    np.testing.assert_allclose(g, bwd(fwd(x), label) * 2.0 / 4, rtol=1e-12)
    y1, g1 = grad_of(op, [x[:, 0], label[:, 0]])
    np.testing.assert_allclose(g1, bwd(fwd(x[:, 0]), label[:, 0]), rtol=1e-12)


@pytest.mark.parametrize("kw,value", [({"grad_scale": 0.5}, 0.5),
                                      ({"normalization": "batch"}, 1 / 3),
                                      ({"normalization": "valid", "valid_thresh": 0.5}, 1 / 2)])
def test_make_loss(kw, value):
    x = np.array([[0.1, 0.9, 0.2], [0.7, -1.0, 0.3], [0.0, 0.0, 0.4]])
    y, g = grad_of("MakeLoss", [x], **kw)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_allclose(g, np.full(x.shape, value), rtol=1e-12)


def _sce_ref(x, label):
    logp = np.log(softmax(x))
    return -logp[np.arange(len(label)), label.astype(int)].sum().reshape(1)


def _smooth_l1_ref(x, s):
    return np.where(np.abs(x) < 1 / s ** 2, 0.5 * (s * x) ** 2, np.abs(x) - 0.5 / s ** 2)


def _away(x, s):
    """Keep values off smooth_l1's breakpoints at +-1/s^2."""
    return np.where(np.abs(np.abs(x) - 1 / s ** 2) < 0.1, x + 0.3, x)


# -- sequence ops ---------------------------------------------------------------------------

def _mask_ref(x, lens, value=0.0, axis=0):
    y = x.copy()
    for n, ln in enumerate(lens.astype(int)):
        if axis == 0:
            y[ln:, n] = value
        else:
            y[n, ln:] = value
    return y


def _last_ref(x, lens=None, axis=0):
    steps = x.shape[axis]
    lens = np.full(x.shape[1 - axis], steps) if lens is None else lens.astype(int)
    return np.stack([x[ln - 1, n] if axis == 0 else x[n, ln - 1] for n, ln in enumerate(lens)])


def _reverse_ref(x, lens):
    y = x.copy()
    for n, ln in enumerate(lens.astype(int)):
        y[:ln, n] = x[:ln, n][::-1]
    return y


LENS = np.array([3, 1, 4.0])

CASES = [
    case("SequenceMask", lambda x, l: nd.SequenceMask(x, l, use_sequence_length=True, value=-2.0),
         lambda x, l: _mask_ref(x, l, -2.0), [u(4, 3, 2), LENS]),
    case("SequenceMask_axis1",
         lambda x, l: nd.SequenceMask(x, l, use_sequence_length=True, axis=1),
         lambda x, l: _mask_ref(x, l, 0.0, axis=1), [u(3, 4, 2), LENS]),
    case("SequenceMask_nolen", lambda x: nd.SequenceMask(x), lambda x: x, [u(4, 3)]),
    case("SequenceLast", lambda x, l: nd.SequenceLast(x, l, use_sequence_length=True),
         _last_ref, [u(4, 3, 2), LENS]),
    case("SequenceLast_axis1", lambda x, l: nd.SequenceLast(x, l, use_sequence_length=True,
                                                           axis=1),
         lambda x, l: _last_ref(x, l, axis=1), [u(3, 4), LENS]),
    case("SequenceLast_nolen", lambda x: nd.SequenceLast(x), lambda x: x[-1], [u(4, 3, 2)]),
    case("SequenceReverse", lambda x, l: nd.SequenceReverse(x, l, use_sequence_length=True),
         _reverse_ref, [u(4, 3, 2), LENS]),
    case("SequenceReverse_nolen", lambda x: nd.SequenceReverse(x), lambda x: x[::-1],
         [u(4, 3, 2)]),
    case("smooth_l1", lambda x: nd.smooth_l1(x, scalar=1.0), lambda x: _smooth_l1_ref(x, 1.0),
         [_away(u(3, 4) * 2, 1.0)]),
    case("smooth_l1_scalar2", lambda x: nd.smooth_l1(x, scalar=2.0),
         lambda x: _smooth_l1_ref(x, 2.0), [_away(u(3, 4), 2.0)]),
    case("softmax_cross_entropy", lambda x, l: nd.softmax_cross_entropy(x, l), _sce_ref,
         [u(4, 5), np.array([1, 0, 4, 2.0])], order=1),
]


for _c in CASES:          # the tolerance these rows had in both float types
    _c.rtol, _c.atol = 1e-5, 1e-6
globals().update(row_tests(CASES))


def test_sequence_length_gets_zero_gradient():
    x, lens = nd.array(u(4, 3, 2)), nd.array(LENS)
    lens.attach_grad()
    lens.grad[:] = 5
    with mx.autograd.record():
        y = nd.SequenceReverse(x, lens, use_sequence_length=True)
    y.backward()
    assert not lens.grad.asnumpy().any()


# -- CTC ---------------------------------------------------------------------------------

def _ctc_ref_one(acts, label, blank):
    """-log p(label | acts) for one sample by the textbook DP in probability space."""
    y = softmax(acts, axis=1)
    ext = [blank]
    for k in label:
        ext += [k, blank]
    S, steps = len(ext), len(acts)
    alpha = np.zeros((steps, S))
    alpha[0, 0] = y[0, blank]
    if S > 1:
        alpha[0, 1] = y[0, ext[1]]
    for t in range(1, steps):
        for s in range(S):
            a = alpha[t - 1, s] + (alpha[t - 1, s - 1] if s >= 1 else 0)
            if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                a += alpha[t - 1, s - 2]
            alpha[t, s] = a * y[t, ext[s]]
    p = alpha[-1, -1] + (alpha[-1, -2] if S > 1 else 0)
    return -np.log(p)


def _ctc_ref(data, label, data_len=None, label_len=None, blank_label="first"):
    steps, n, c = data.shape
    blank = 0 if blank_label == "first" else c - 1
    pad = 0 if blank_label == "first" else -1
    out = []
    for i in range(n):
        lab = [int(v) for v in label[i]]
        if label_len is not None:
            lab = lab[:int(label_len[i])]
        elif pad in lab:
            lab = lab[:lab.index(pad)]
        t = steps if data_len is None else int(data_len[i])
        out.append(_ctc_ref_one(data[:t, i], lab, blank))
    return np.array(out).astype(data.dtype)


CTC_DATA = u(6, 3, 5) * 2
CTC_CASES = [
    case("ctc_first", lambda d, l: nd.CTCLoss(d, l), _ctc_ref,
         [CTC_DATA, np.array([[1, 2, 2, 0], [3, 0, 0, 0], [4, 1, 3, 2.0]])], order=1),
    case("ctc_last_lengths",
         lambda d, l, dl, ll: nd.ctc_loss(d, l, dl, ll, use_data_lengths=True,
                                          use_label_lengths=True, blank_label="last"),
         lambda d, l, dl, ll: _ctc_ref(d, l, dl, ll, "last"),
         [CTC_DATA, np.array([[1, 1, 0, 3], [2, 0, 1, 1], [0, 3, 3, 2.0]]),
          np.array([6, 4, 5.0]), np.array([3, 0, 2.0])], order=1),
    case("ctc_contrib_last_pad", lambda d, l: nd.contrib.CTCLoss(d, l, blank_label="last"),
         lambda d, l: _ctc_ref(d, l, blank_label="last"),
         [CTC_DATA, np.array([[1, 2, -1], [0, -1, -1], [3, 3, 1.0]])], order=1),
]


globals().update({name + "_ctc": t for name, t in row_tests(CTC_CASES).items()})


def test_ctc_gradient_is_zero_past_data_length():
    c = CTC_CASES[1]
    xs = to_nd(c.inputs)
    xs[0].attach_grad()
    with mx.autograd.record():
        y = c.fn(*xs)
    y.backward()
    g = xs[0].grad.asnumpy()
    assert not g[4:, 1].any() and not g[5:, 2].any() and g[3, 1].any()


# -- RNN -----------------------------------------------------------------------------------

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def _sig(x):
    return 1 / (1 + np.exp(-x))


def _split(w, mode, n_in, H, L, D):
    """Per (layer, direction): [Wx, Wh, bx, bh], read from the flat vector in order."""
    G = GATES[mode]
    cur = [0]

    def take(*shape):
        k = int(np.prod(shape))
        a = w[cur[0]:cur[0] + k].reshape(shape)
        cur[0] += k
        return a

    mats = [[take(G * H, n_in if l == 0 else D * H), take(G * H, H)]
            for l in range(L) for _ in range(D)]
    for m in mats:
        m += [take(G * H), take(G * H)]
    assert cur[0] == w.size
    return mats


def _step(mode, x, h, c, wx, wh, bx, bh):
    H = h.shape[1]
    if mode == "lstm":
        a = x @ wx.T + bx + h @ wh.T + bh
        i, f, g, o = _sig(a[:, :H]), _sig(a[:, H:2 * H]), np.tanh(a[:, 2 * H:3 * H]), \
            _sig(a[:, 3 * H:])
        c = f * c + i * g
        return o * np.tanh(c), c
    if mode == "gru":
        ax, ah = x @ wx.T + bx, h @ wh.T + bh
        r, z = _sig(ax[:, :H] + ah[:, :H]), _sig(ax[:, H:2 * H] + ah[:, H:2 * H])
        n = np.tanh(ax[:, 2 * H:] + r * ah[:, 2 * H:])
        return (1 - z) * n + z * h, c
    a = x @ wx.T + bx + h @ wh.T + bh
    return (np.tanh(a) if mode == "rnn_tanh" else np.maximum(a, 0)), c


def _rnn_ref(mode, L, D, H, data, w, h0, c0=None, state_outputs=False):
    mats = _split(w, mode, data.shape[2], H, L, D)
    x = data
    hy, cy = [], []
    for l in range(L):
        outs = []
        for d in range(D):
            k = l * D + d
            h, c = h0[k], (c0[k] if c0 is not None else None)
            seq = range(len(x)) if d == 0 else reversed(range(len(x)))
            hs = [None] * len(x)
            for t in seq:
                h, c = _step(mode, x[t], h, c, *mats[k])
                hs[t] = h
            outs.append(np.stack(hs))
            hy.append(h)
            cy.append(c)
        x = np.concatenate(outs, axis=2)
    if not state_outputs:
        return x
    return [x, np.stack(hy)] + ([np.stack(cy)] if mode == "lstm" else [])


def _psize(mode, I, H, L, D):
    G = GATES[mode]
    return sum(D * (G * H * ((I if l == 0 else D * H) + H) + 2 * G * H) for l in range(L))


def _rnn_case(mode, L=1, D=1, state_outputs=False, T=3, N=2, I=3, H=3):
    kw = dict(mode=mode, state_size=H, num_layers=L, bidirectional=D == 2,
              state_outputs=state_outputs)
    inputs = [u(T, N, I), u(_psize(mode, I, H, L, D)) * 0.8, u(L * D, N, H)]
    if mode == "lstm":
        inputs.append(u(L * D, N, H))
    name = "RNN_%s_L%d_D%d%s" % (mode, L, D, "_states" if state_outputs else "")
    return case(name, lambda *x: nd.RNN(*x, **kw),
                lambda *x: _rnn_ref(mode, L, D, H, *x, state_outputs=state_outputs),
                inputs, grad=tuple(range(len(inputs))), order=1)


RNN_CASES = [
    _rnn_case("lstm", state_outputs=True),
    _rnn_case("lstm", L=2, D=2),
    _rnn_case("gru", D=2, state_outputs=True),
    _rnn_case("gru", L=2),
    _rnn_case("rnn_tanh", L=3, D=2, state_outputs=True),
    _rnn_case("rnn_relu", L=2, D=2, state_outputs=True),
]


globals().update({name + "_rnn": t for name, t in row_tests(RNN_CASES).items()})


def test_rnn_dropout_between_layers_in_training_only():
    c = _rnn_case("rnn_tanh", L=2, T=4, N=3, H=6)
    xs = to_nd(c.inputs)
    kw = dict(mode="rnn_tanh", state_size=6, num_layers=2, p=0.5)
    plain = nd.RNN(*xs, **kw).asnumpy()
    np.testing.assert_allclose(plain, c.ref(*c.inputs), rtol=1e-10)
    with mx.autograd.train_mode():
        dropped = nd.RNN(*xs, **kw).asnumpy()
    assert not np.allclose(dropped, plain)

    def loss(data):
        mx.random.seed(5)             # the same dropout masks every call
        with mx.autograd.train_mode():
            return float(nd.RNN(nd.array(data, dtype="float64"), *xs[1:], **kw).sum().asscalar())

    x = nd.array(c.inputs[0], dtype="float64")
    x.attach_grad()
    mx.random.seed(5)
    with mx.autograd.record(train_mode=True):
        y = nd.RNN(x, *xs[1:], **kw)
    y.backward()
    v = np.random.RandomState(0).standard_normal(x.shape)
    numeric = central_difference(lambda a: loss(a[0]), [c.inputs[0]], 0, v)
    assert np.isclose(float((x.grad.asnumpy() * v).sum()), numeric, rtol=1e-6)


def test_rnn_lstm_state_clipping_clips_and_stops_gradient():
    c = _rnn_case("lstm", T=5)
    xs = to_nd([a * 3 for a in c.inputs])
    kw = dict(mode="lstm", state_size=3, num_layers=1, state_outputs=True,
              lstm_state_clip_min=-0.2, lstm_state_clip_max=0.2)
    cy = nd.RNN(*xs, **kw)[2].asnumpy()
    assert np.abs(cy).max() <= 0.2 + 1e-12
    clip = case("lstm_clip", lambda *x: nd.RNN(*x, **kw)[0], None, [a * 3 for a in c.inputs],
                grad=(0, 1, 2, 3), order=1)
    check_first_order(clip, np.random.RandomState(6))


# -- errors -----------------------------------------------------------------------------------

def _a(*shape):
    return nd.array(u(*shape))


ERRORS = [
    ("rnn_param_size",
     lambda: nd.RNN(_a(3, 2, 3), _a(100), _a(1, 2, 4), _a(1, 2, 4), state_size=4, num_layers=1,
                    mode="lstm"), "RNN", "expected (144,)"),
    ("rnn_state_shape",
     lambda: nd.RNN(_a(3, 2, 3), _a(36), _a(2, 2, 4), state_size=4, num_layers=1,
                    mode="rnn_tanh"), "RNN", "expected (1, 2, 4)"),
    ("rnn_bad_mode", lambda: nd.RNN(_a(3, 2, 3), _a(32), _a(1, 2, 4), state_size=4, num_layers=1,
                                    mode="lstm2"), "RNN", "'lstm2'"),
    ("ctc_label_batch", lambda: nd.CTCLoss(_a(5, 2, 4), nd.ones((3, 2))), "CTCLoss",
     "expected (2, L)"),
    ("ctc_label_value", lambda: nd.CTCLoss(_a(5, 2, 4), nd.array([[1, 7], [1, 1]])), "CTCLoss",
     "[0, 4)"),
    ("softmax_output_label", lambda: nd.SoftmaxOutput(_a(4, 5), nd.ones((3,))), "SoftmaxOutput",
     "expected (4,)"),
    ("regression_label", lambda: nd.LinearRegressionOutput(_a(4, 2), nd.ones((4, 3))),
     "LinearRegressionOutput", "expected (4, 2)"),
    ("sce_label", lambda: nd.softmax_cross_entropy(_a(4, 5), nd.ones((5,))),
     "softmax_cross_entropy", "label (5,)"),
    ("mask_length_shape", lambda: nd.SequenceMask(_a(4, 3), nd.ones((2,)),
                                                  use_sequence_length=True),
     "SequenceMask", "expected (3,)"),
    ("last_length_range", lambda: nd.SequenceLast(_a(4, 3), nd.array([1, 5, 2]),
                                                  use_sequence_length=True),
     "SequenceLast", "[1, 4]"),
    ("reverse_axis1", lambda: nd.SequenceReverse(_a(4, 3), axis=1), "SequenceReverse", "axis=1"),
]


@pytest.mark.parametrize("fn,name,words", [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors_name_op_argument_and_shapes(fn, name, words):
    with pytest.raises((MXNetError, ValueError)) as info:
        fn()
    msg = str(info.value)
    assert msg.startswith(name), "message does not name %s: %s" % (name, msg)
    assert words in msg, "message lacks %r: %s" % (words, msg)


# -- symbols: label, length, parameter and state shapes are inferred from the data -------------

def test_infer_shape_fills_labels_lengths_and_rnn_parameters():
    data = mx.sym.var("data")
    arg, out, _ = mx.sym.SoftmaxOutput(data, name="softmax").infer_shape(data=(4, 5))
    assert arg == [(4, 5), (4,)] and out == [(4, 5)]
    arg, out, _ = mx.sym.SoftmaxOutput(data, multi_output=True).infer_shape(data=(2, 3, 4))
    assert arg[1] == (2, 4)
    arg, _, _ = mx.sym.LinearRegressionOutput(data).infer_shape(data=(3, 2))
    assert arg[1] == (3, 2)
    seq = mx.sym.SequenceLast(data, mx.sym.var("len"), use_sequence_length=True, axis=1)
    assert seq.infer_shape(data=(2, 5, 3))[:2] == ([(2, 5, 3), (2,)], [(2, 3)])
    rnn = mx.sym.RNN(data, mx.sym.var("parameters"), mx.sym.var("state"),
                     mx.sym.var("state_cell"), state_size=4, num_layers=1, mode="lstm",
                     state_outputs=True)
    arg, out, _ = rnn.infer_shape(data=(3, 2, 3))
    assert arg == [(3, 2, 3), (144,), (1, 2, 4), (1, 2, 4)]
    assert out == [(3, 2, 4), (1, 2, 4), (1, 2, 4)]
