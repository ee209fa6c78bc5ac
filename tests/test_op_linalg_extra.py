"""linalg extractdiag/makediag/extracttrian/maketrian/gelqf/syevd and the random_pdf_*
ops: forward and gradients against real MXNet 1.9.1, float64 numeric gradients (first
and second order), factorisation identities, error messages, mx.sym and hybridized use.

Golden data: ``reference_extra/linalg_pdf.npz``, written by
``reference_extra/gen_linalg_pdf.py`` under MXNet 1.9.1, float32 and float64. For case
``c``: ``c/x<i>`` inputs, ``c/y<i>`` outputs, ``c/gy<i>`` head gradients, ``c/gx<i>``
input gradients; ``__manifest__`` (JSON) lists each case's op (path under ``mx.nd``),
kwargs and which inputs have gradients.

Two deliberate float64 differences (relative 1e-8, float32 is unaffected): MXNet's
normal density uses a float32 pi, and its digamma (in the gamma, negative binomial and
Dirichlet gradients) a float32 log; mxlite uses the exact values.
"""
import json
import os

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from optable import case, outputs, raising, row_tests

nd = mx.nd
la = mx.nd.linalg
GOLDEN = np.load(os.path.join(os.path.dirname(__file__), "reference_extra", "linalg_pdf.npz"))
MANIFEST = json.loads(str(GOLDEN["__manifest__"]))
R = np.random.RandomState(13)

# float64 cases whose MXNet values carry MXNet's float32 pi / float32-log digamma
_LOOSE = ("pdf_normal", "pdf_gamma", "pdf_dirichlet", "pdf_negative_binomial",
          "pdf_gen_negative_binomial")


def _nd(a):
    return nd.array(a, dtype=a.dtype)


def _op(path):
    f = nd
    for part in path.split("."):
        f = getattr(f, part)
    return f


def _tol(name, dtype):
    if dtype == np.float32:
        return 2e-6
    return 2e-7 if name.startswith(_LOOSE) else 1e-12


def _close(got, want, what, tol):
    assert got.dtype == want.dtype, "%s: dtype %s, MXNet %s" % (what, got.dtype, want.dtype)
    assert got.shape == want.shape, "%s: shape %s, MXNet %s" % (what, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=what)


# -- golden: forward and gradients as MXNet ------------------------------------------------

@pytest.mark.parametrize("c", MANIFEST, ids=[c["name"] for c in MANIFEST])
def test_matches_mxnet(c):
    name = c["name"]
    xs = [_nd(GOLDEN["%s/x%d" % (name, i)]) for i in range(c["n_in"])]
    for i in c["grad"]:
        xs[i].attach_grad()
    with mx.autograd.record():
        ys = outputs(_op(c["op"])(*xs, **c["kwargs"]))
    assert len(ys) == c["n_out"]
    tol = _tol(name, GOLDEN["%s/x0" % name].dtype)
    for i, y in enumerate(ys):
        _close(y.asnumpy(), GOLDEN["%s/y%d" % (name, i)], "%s y%d" % (name, i), tol)
    if c["grad"]:
        heads = [_nd(GOLDEN["%s/gy%d" % (name, i)]) for i in range(len(ys))]
        mx.autograd.backward(ys, heads)
        for i in c["grad"]:
            _close(xs[i].grad.asnumpy(), GOLDEN["%s/gx%d" % (name, i)], "%s gx%d" % (name, i),
                   tol)


# -- numeric gradients (float64) -----------------------------------------------------------

def u(*shape, lo=-1.0, hi=1.0):
    return R.uniform(lo, hi, shape)


def T(a):
    return np.swapaxes(a, -1, -2)


def sym(x):
    """syevd reads one triangle; a symmetric use of the input makes the numeric
    gradient the symmetric one that MXNet's formula gives."""
    return (x + nd.swapaxes(x, -1, -2)) * 0.5


def spread(*batch, n=3):
    """Symmetric matrices with well separated eigenvalues."""
    q, _ = np.linalg.qr(R.randn(*(batch + (n, n))))
    return (q * (np.arange(n) * 1.3 - 1.0)) @ T(q)


def _np_syevd(a):
    lam, v = np.linalg.eigh(a)
    uu = T(v)
    k = np.argmax(np.abs(uu), axis=-1)
    sign = np.sign(np.take_along_axis(uu, k[..., None], axis=-1))
    return [uu * sign, lam]


def _np_gelqf(a):
    q, r = np.linalg.qr(T(a))
    return [T(q), T(r)]


def _trian(a, offset=0, lower=True):
    n = a.shape[-1]
    k = abs(offset)
    r, c = np.tril_indices(n - k)
    r = r + k
    upper = offset > 0 or (offset == 0 and not lower)
    return a[..., c, r] if upper else a[..., r, c]


def _np_maketrian(a, offset=0, lower=True):
    t = int(np.sqrt(2 * a.shape[-1]))
    n = t + abs(offset)
    y = np.zeros(a.shape[:-1] + (n, n), a.dtype)
    r, c = np.tril_indices(t)
    r = r + abs(offset)
    upper = offset > 0 or (offset == 0 and not lower)
    if upper:
        r, c = c, r
    y[..., r, c] = a
    return y


LINALG = [
    case("extractdiag", lambda a: la.extractdiag(a, offset=1),
         lambda a: np.diagonal(a, 1, -2, -1), [u(2, 3, 3)]),
    case("makediag", lambda a: la.makediag(a, offset=-1),
         lambda a: np.stack([np.diag(r, -1) for r in a]), [u(2, 3)]),
    case("extracttrian_upper", lambda a: la.extracttrian(a, lower=False),
         lambda a: _trian(a, 0, False), [u(2, 3, 3)]),
    case("extracttrian_offm1", lambda a: la.extracttrian(a, offset=-1),
         lambda a: _trian(a, -1), [u(4, 4)]),
    case("maketrian_off1", lambda a: la.maketrian(a, offset=1),
         lambda a: _np_maketrian(a, 1), [u(3)]),
    case("gelqf", lambda a: la.gelqf(a), _np_gelqf, [u(2, 3, 4)]),
    case("gelqf_square", lambda a: la.gelqf(a), _np_gelqf, [u(3, 3) + 2 * np.eye(3)]),
    case("syevd", lambda a: la.syevd(sym(a)), _np_syevd, [spread()], op="_linalg_syevd"),
    case("syevd_batch", lambda a: la.syevd(sym(a)), _np_syevd, [spread(2, n=4)],
         op="_linalg_syevd"),
]


def _pos(*shape, lo=0.3, hi=3.0):
    return u(*shape, lo=lo, hi=hi)


def _counts(*shape):
    return R.randint(0, 6, shape).astype(np.float64)


def _pdf(dist, log):
    f = getattr(nd, "random_pdf_" + dist)
    return lambda *a: f(*a, is_log=log)


def _np_normal(x, m, s):
    m, s = m[:, None], s[:, None]
    return np.exp(-(x - m) ** 2 / (2 * s * s)) / np.sqrt(2 * np.pi * s * s)


def _np_dirichlet(x, a):
    from math import lgamma
    a = a[:, None, :]
    lg = np.vectorize(lgamma)
    return np.exp(((a - 1) * np.log(x)).sum(-1) + lg(a.sum(-1)) - lg(a).sum(-1)).astype(x.dtype)


# grad2: the inputs with a complete second derivative (digamma terms have none)
PDF = [
    case("pdf_uniform", _pdf("uniform", False),
         lambda x, lo, hi: np.broadcast_to(1 / (hi - lo)[:, None], x.shape),
         [u(2, 3), _pos(2, lo=-3, hi=-1), _pos(2)], grad=(1, 2)),
    case("pdf_normal", _pdf("normal", False), _np_normal, [u(2, 3), u(2), _pos(2)],
         grad=(0, 1, 2)),
    case("pdf_normal_log", _pdf("normal", True), lambda x, m, s: np.log(_np_normal(x, m, s)),
         [u(2, 3), u(2), _pos(2)], grad=(0, 1, 2)),
    case("pdf_gamma", _pdf("gamma", False), None, [_pos(3, 2), _pos(3), _pos(3)],
         grad=(0, 1, 2), grad2=(0, 2)),
    case("pdf_exponential_log", _pdf("exponential", True),
         lambda x, lam: np.log(lam)[:, None] - lam[:, None] * x, [_pos(2, 3), _pos(2)],
         grad=(0, 1)),
    case("pdf_poisson", _pdf("poisson", False), None, [_counts(2, 4), _pos(2)], grad=(1,)),
    case("pdf_negative_binomial", _pdf("negative_binomial", False), None,
         [_counts(2, 3), _pos(2), _pos(2, lo=0.2, hi=0.8)], grad=(1, 2), grad2=(2,)),
    case("pdf_gen_negative_binomial_log", _pdf("generalized_negative_binomial", True), None,
         [_counts(3, 2), _pos(3), _pos(3, lo=0.2, hi=1.5)], grad=(1, 2), grad2=(1,)),
    case("pdf_dirichlet", _pdf("dirichlet", False), _np_dirichlet,
         [R.dirichlet([1.0, 2.0, 3.0], (2, 4)), _pos(2, 3)], grad=(0, 1), grad2=(0,)),
]


# -- errors --------------------------------------------------------------------------------

ERRORS = raising(
    "errors name the argument",
    (lambda: la.extractdiag(nd.zeros((3, 4))), "square"),
    (lambda: la.extractdiag(nd.zeros((3, 3)), offset=3), "offset 3"),
    (lambda: la.extractdiag(nd.zeros((3, 3), dtype="int32")), "float32 or float64"),
    (lambda: la.maketrian(nd.zeros((4,))), "triangular number"),
    (lambda: la.gelqf(nd.zeros((3, 2))), "at most as many rows"),
    (lambda: la.syevd(nd.zeros((3, 2))), "square"),
    (lambda: nd.random_pdf_normal(nd.ones((2, 3)), nd.zeros((3,)), nd.ones((3,))),
     r"mu has shape \(3,\), expected \(2,\)"),
    (lambda: nd.random_pdf_normal(nd.ones((2, 3)), nd.zeros((2,)), nd.ones((1,))),
     r"sigma has shape \(1,\)"),
    (lambda: nd.random_pdf_exponential(nd.ones((2,)), nd.ones((2, 1))), "at least 2"),
    (lambda: nd.random_pdf_normal(nd.ones((2,), dtype="float64"), nd.zeros((2,)),
                                  nd.ones((2,))), "dtype float32, expected float64"),
    (lambda: nd.random_pdf_dirichlet(nd.ones((2, 3)), nd.ones((2, 4))), "vector sample"))


globals().update(row_tests(LINALG + PDF + [ERRORS]))


# -- identities ----------------------------------------------------------------------------

def test_gelqf_factorises_and_q_is_row_orthonormal():
    a = u(3, 2, 5)
    q, low = (y.asnumpy() for y in la.gelqf(_nd(a)))
    np.testing.assert_allclose(low @ q, a, atol=1e-12)
    np.testing.assert_allclose(q @ T(q), np.broadcast_to(np.eye(2), (3, 2, 2)), atol=1e-12)
    assert np.all(np.triu(low, 1) == 0)


def test_syevd_reads_the_lower_triangle_and_orders_and_signs_as_mxnet():
    a = u(2, 4, 4)
    uu, lam = (y.asnumpy() for y in la.syevd(_nd(a)))
    full = np.tril(a) + T(np.tril(a, -1))
    np.testing.assert_allclose(uu @ full, lam[..., None] * uu, atol=1e-12)
    assert np.all(np.diff(lam, axis=-1) > 0)
    lead = np.take_along_axis(uu, np.argmax(np.abs(uu), -1)[..., None], -1)
    assert np.all(lead > 0)
    assert not hasattr(nd, "linalg_syevd")       # as MXNet: only _linalg_syevd / linalg.syevd


def test_maketrian_inverts_extracttrian():
    a = u(2, 5, 5)
    for kw in (dict(), dict(lower=False), dict(offset=2), dict(offset=-1, lower=False)):
        v = la.extracttrian(_nd(a), **kw)
        back = la.extracttrian(la.maketrian(v, **kw), **kw)
        np.testing.assert_array_equal(back.asnumpy(), v.asnumpy())


def test_pdf_param_gradient_sums_over_samples():
    x, m, s = u(2, 3, 4), u(2, 3), _pos(2, 3)
    xs = [_nd(v) for v in (x, m, s)]
    for v in xs:
        v.attach_grad()
    with mx.autograd.record():
        y = nd.random_pdf_normal(*xs, is_log=True)
    y.backward()
    np.testing.assert_allclose(xs[1].grad.asnumpy(),
                               ((x - m[..., None]) / s[..., None] ** 2).sum(-1), rtol=1e-12)
    assert xs[0].grad.shape == x.shape


# -- mx.sym and hybridized blocks ----------------------------------------------------------

def test_every_op_runs_through_symbol_bind():
    a, b, c = mx.sym.var("a"), mx.sym.var("b"), mx.sym.var("c")
    m = spread(2, n=3).astype(np.float32)
    x = u(2, 3).astype(np.float32)
    p = _pos(2).astype(np.float32)
    rows = [
        (mx.sym.linalg.extractdiag(a, offset=-1), dict(a=m)),
        (mx.sym.linalg.makediag(a, offset=1), dict(a=x)),
        (mx.sym.linalg.extracttrian(a, lower=False), dict(a=m)),
        (mx.sym.linalg.maketrian(a, offset=-1), dict(a=x)),
        (mx.sym.linalg.gelqf(a), dict(a=x[None])),
        (mx.sym.linalg.syevd(a), dict(a=m)),
        (mx.sym.random_pdf_uniform(a, b, c), dict(a=x, b=-p, c=p)),
        (mx.sym.random_pdf_normal(a, b, c, is_log=True), dict(a=x, b=p, c=p)),
        (mx.sym.random_pdf_gamma(a, b, c), dict(a=x * x + 0.1, b=p, c=p)),
        (mx.sym.random_pdf_exponential(a, b), dict(a=x * x, b=p)),
        (mx.sym.random_pdf_poisson(a, b), dict(a=np.round(x * x * 3), b=p)),
        (mx.sym.random_pdf_negative_binomial(a, b, c), dict(a=np.round(x * x * 3), b=p,
                                                              c=p / 4)),
        (mx.sym.random_pdf_generalized_negative_binomial(a, b, c),
         dict(a=np.round(x * x * 3), b=p, c=p)),
        (mx.sym.random_pdf_dirichlet(a, b), dict(a=(x * x + 0.1)[:, None, :], b=p[:, None] + x)),
    ]
    for s, arrays in rows:
        s2 = mx.sym.load_json(s.tojson())
        names = s2.list_arguments()
        ex = s2.bind(mx.cpu(), {k: _nd(arrays[k]) for k in names})
        got = [o.asnumpy() for o in ex.forward()]
        want = outputs(_same_op(s)(*[_nd(arrays[k]) for k in names], **_attrs(s)))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w.asnumpy(), rtol=1e-6, err_msg=s.tojson()[:200])
        _, out_shapes, _ = s.infer_shape(**{k: arrays[k].shape for k in names})
        assert [tuple(o) for o in out_shapes] == [w.shape for w in want]


def _node(s):
    return json.loads(s.tojson())["nodes"][-1]


def _same_op(s):
    return getattr(nd._internal, _node(s)["op"])


def _attrs(s):
    return _node(s).get("attrs", {})


def test_hybridized_block_matches_imperative():
    class Net(mx.gluon.HybridBlock):
        def hybrid_forward(self, F, a, x, mu, sigma):
            q, low = F.linalg.gelqf(a)
            uu, lam = F.linalg.syevd(F.linalg.gemm2(low, low, transpose_b=True))
            tri = F.linalg.extracttrian(uu, lower=False)
            d = F.linalg.makediag(F.linalg.extractdiag(low) * lam, offset=1)
            lp = F.random_pdf_normal(x, mu, sigma, is_log=True)
            return F.sum(tri) + F.sum(d) + F.sum(F.linalg.maketrian(tri)) + F.sum(lp) + F.sum(q)

    args = [_nd(v.astype(np.float32)) for v in (u(2, 3), u(2, 4), u(2), _pos(2))]
    net = Net()
    want = net(*args).asnumpy()
    net.hybridize()
    for v in args:
        v.attach_grad()
    with mx.autograd.record():
        got = net(*args)
    got.backward()
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)
    assert all(np.all(np.isfinite(v.grad.asnumpy())) for v in args)
