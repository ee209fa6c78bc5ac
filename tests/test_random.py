"""Random sampling: mx.nd.random, mx.random, the _random_/_sample_ ops, seeding."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.test_utils import assert_almost_equal, check_numeric_gradient
from optable import Spec, check_moments, op_function, row_tests

N = 200000       # large enough for mean/var within a few standard errors, still fast


def _zipf_moments(n):
    c = np.arange(n)
    p = (np.log(c + 2) - np.log(c + 1)) / np.log(n + 1)
    mean = (c * p).sum()
    return mean, (c * c * p).sum() - mean * mean


def _rows(dist, mean, var, random, sample):
    """Rows for ``_random_<dist>`` (scalar params), ``_random_<dist>_like`` (the shape of
    its data) and ``_sample_<dist>`` (params as arrays), all with the same distribution."""
    rows = [
        Spec(dist, lambda: op_function("_random_" + dist)(shape=N, **random), None, [],
             grad=(), op="_random_" + dist, moments=(mean, var)),
        Spec(dist + "_like", lambda z: op_function("_random_%s_like" % dist)(z, **random), None,
             [np.zeros(N)], grad=(), op="_random_%s_like" % dist, moments=(mean, var)),
    ]
    if sample:
        rows.append(Spec("sample_" + dist, lambda *a: op_function("_sample_" + dist)(*a, shape=N),
                         None, [np.array([v], np.float32) for v in sample], grad=(),
                         op="_sample_" + dist, moments=(mean, var)))
    return rows


SPECS = (_rows("uniform", 1.0, 16 / 12, dict(low=-1, high=3), (-1, 3))
         + _rows("normal", 2.0, 0.25, dict(loc=2, scale=0.5), (2, 0.5))
         + _rows("gamma", 6.0, 18.0, dict(alpha=2.0, beta=3.0), (2.0, 3.0))
         + _rows("exponential", 2.0, 4.0, dict(lam=0.5), (0.5,))
         + _rows("poisson", 3.5, 3.5, dict(lam=3.5), (3.5,))
         + _rows("negative_binomial", 4 * 0.6 / 0.4, 4 * 0.6 / 0.16, dict(k=4, p=0.4), (4, 0.4))
         + _rows("generalized_negative_binomial", 2.0, 2.0 + 0.5 * 4, dict(mu=2.0, alpha=0.5),
                 (2.0, 0.5))
         + [Spec("randint", lambda: op_function("_random_randint")(low=-3, high=5, shape=N), None,
                 [], grad=(), op="_random_randint", moments=(0.5, (8 ** 2 - 1) / 12)),
            Spec("multinomial", lambda p: op_function("_sample_multinomial")(p, shape=N), None,
                 [np.array([[0.2, 0.3, 0.5]])], grad=(), op="_sample_multinomial",
                 moments=(1.3, 2.3 - 1.3 ** 2)),
            # one class per row: plain draws from P(c) = log((c + 2) / (c + 1)) / log(51)
            Spec("unique_zipfian", lambda: op_function("_sample_unique_zipfian")(
                range_max=50, shape=(N // 10, 1))[0], None, [], grad=(),
                 op="_sample_unique_zipfian", moments=_zipf_moments(50)),
            Spec("shuffle", lambda x: mx.nd.sort(op_function("_shuffle")(x), axis=0),
                 lambda x: np.sort(x, axis=0), [np.random.RandomState(3).uniform(size=(50, 2))],
                 grad=(), op="_shuffle")])
globals().update(row_tests(SPECS))

# the user-facing functions of the same distributions: name, call, mean, variance
SCALAR_CASES = [
    ("uniform", lambda: mx.nd.random.uniform(-1, 3, shape=N), 1.0, 16 / 12),
    ("normal", lambda: mx.nd.random.normal(2, 0.5, shape=N), 2.0, 0.25),
    ("randn", lambda: mx.nd.random.randn(N, loc=-1, scale=2), -1.0, 4.0),
    ("gamma", lambda: mx.nd.random.gamma(2.0, 3.0, shape=N), 6.0, 18.0),
    ("exponential", lambda: mx.nd.random.exponential(2.0, shape=N), 2.0, 4.0),
    ("poisson", lambda: mx.nd.random.poisson(3.5, shape=N), 3.5, 3.5),
    ("negative_binomial", lambda: mx.nd.random.negative_binomial(4, 0.4, shape=N),
     4 * 0.6 / 0.4, 4 * 0.6 / 0.16),
    ("generalized_negative_binomial",
     lambda: mx.nd.random.generalized_negative_binomial(2.0, 0.5, shape=N), 2.0, 2.0 + 0.5 * 4),
    ("randint", lambda: mx.nd.random.randint(-3, 5, shape=N), 0.5, (8 ** 2 - 1) / 12),
]


@pytest.mark.parametrize("name, call, mean, var", SCALAR_CASES, ids=[c[0] for c in SCALAR_CASES])
def test_scalar_distribution_moments(name, call, mean, var):
    x = call()
    assert x.shape == (N,)
    check_moments(Spec(name, call, None, [], grad=(), moments=(mean, var)))


def test_ranges_and_integrality():
    u = mx.nd.random.uniform(2, 2.5, shape=N).asnumpy()
    assert u.min() >= 2 and u.max() < 2.5
    h = mx.nd.random.uniform(0, 1, shape=N, dtype="float16").asnumpy()
    assert h.max() < 1                     # rounding to float16 must not reach high
    r = mx.nd.random.randint(-3, 5, shape=N).asnumpy()
    assert r.min() == -3 and r.max() == 4
    for x in (mx.nd.random.poisson(2, shape=1000), mx.nd.random.negative_binomial(2, 0.5,
                                                                                    shape=1000)):
        a = x.asnumpy()
        assert (a >= 0).all() and (a == np.round(a)).all()
    assert (mx.nd.random.exponential(1, shape=1000).asnumpy() > 0).all()
    assert (mx.nd.random.gamma(0.5, 1, shape=1000).asnumpy() >= 0).all()
    assert (mx.nd.random.negative_binomial(3, 1.0, shape=10).asnumpy() == 0).all()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_dtypes_and_shapes(dtype):
    for fn in (mx.nd.random.uniform, mx.nd.random.normal, mx.nd.random.gamma,
               mx.nd.random.exponential, mx.nd.random.poisson):
        x = fn(shape=(2, 3), dtype=dtype)
        assert x.dtype == np.dtype(dtype) and x.shape == (2, 3) and x.context == mx.cpu(0)
    assert mx.nd.random.uniform().shape == (1,)              # default shape 1, as MXNet
    assert mx.nd.random.normal(shape=4).shape == (4,)
    assert mx.nd.random.randn().shape == (1,)
    assert mx.nd.random.randn(2, 3).shape == (2, 3)
    assert mx.nd.random.uniform(shape=(0, 3)).shape == (0, 3)


def test_default_dtypes():
    assert mx.nd.random.uniform(shape=2).dtype == np.float32
    assert mx.nd.random.randint(0, 4, shape=2).dtype == np.int32
    assert mx.nd.random.randint(0, 2 ** 40, shape=2, dtype="int64").dtype == np.int64
    assert mx.nd.random.multinomial(mx.nd.array([0.5, 0.5])).dtype == np.int32


def test_ctx_and_out():
    x = mx.nd.random.normal(0, 1, shape=(2,), ctx=mx.cpu(2))
    assert x.context == mx.cpu(2)
    with mx.cpu(3):
        assert mx.nd.random.uniform(shape=2).context == mx.cpu(3)
    out = mx.nd.zeros((3, 2), dtype="float64")
    y = mx.nd.random.uniform(5, 6, out=out)                   # shape and dtype from out
    assert y is out and out.dtype == np.float64
    assert (out.asnumpy() >= 5).all() and (out.asnumpy() < 6).all()


# -- seeding ---------------------------------------------------------------------------------

def _draw_all():
    return [mx.nd.random.uniform(shape=5).asnumpy(), mx.nd.random.normal(shape=5).asnumpy(),
            mx.nd.random.randint(0, 100, shape=5).asnumpy(),
            mx.nd.random.poisson(4, shape=5).asnumpy(),
            mx.nd.random.gamma(2, 2, shape=5).asnumpy(),
            mx.nd.random.multinomial(mx.nd.array([0.1, 0.2, 0.7]), shape=5).asnumpy(),
            mx.nd.random.shuffle(mx.nd.arange(10)).asnumpy(),
            mx.nd.random.normal(mx.nd.zeros((2,)), mx.nd.ones((2,)), shape=3).asnumpy()]


def test_seed_repeats_exactly():
    mx.random.seed(1234)
    a = _draw_all()
    b = _draw_all()
    mx.random.seed(1234)
    c = _draw_all()
    for x, y, z in zip(a, b, c):
        np.testing.assert_array_equal(x, z)
    assert any(not np.array_equal(x, y) for x, y in zip(a, b))
    mx.random.seed(1235)
    assert not np.array_equal(_draw_all()[0], a[0])


def test_cpu_contexts_share_one_generator_as_mxnet():
    # MXNet 1.9.1: seed(1); normal(cpu(0)) then seed(1); normal(cpu(1)) give the same numbers,
    # and seeding one CPU context seeds them all.
    mx.random.seed(1)
    a = mx.nd.random.normal(shape=3, ctx=mx.cpu(0)).asnumpy()
    b = mx.nd.random.normal(shape=3, ctx=mx.cpu(1)).asnumpy()
    mx.random.seed(1)
    c = mx.nd.random.normal(shape=3, ctx=mx.cpu(1)).asnumpy()
    np.testing.assert_array_equal(a, c)
    assert not np.array_equal(a, b)
    mx.random.seed(1, ctx=mx.cpu(1))
    np.testing.assert_array_equal(mx.nd.random.normal(shape=3).asnumpy(), a)


def test_seed_rejects_bad_values():
    with pytest.raises(ValueError):
        mx.random.seed(1.5)
    with pytest.raises(ValueError):
        mx.random.seed(-1)
    with pytest.raises(TypeError):
        mx.random.seed(1, ctx="cpu")


# -- NDArray parameters: _sample_* ------------------------------------------------------------

def test_sample_ops_shape_and_per_element_parameters():
    low = mx.nd.array([[0, 10], [100, 1000]])
    high = low + 1
    x = mx.nd.random.uniform(low, high, shape=(50, 2))
    assert x.shape == (2, 2, 50, 2) and x.dtype == np.float32
    a = x.asnumpy()
    lo = low.asnumpy()[:, :, None, None]
    assert (a >= lo).all() and (a < lo + 1).all()
    y = mx.nd.random.normal(mx.nd.array([0.0, 50.0]), mx.nd.array([1.0, 1.0]), shape=N // 10)
    assert_almost_equal(y.asnumpy().mean(axis=1), np.array([0.0, 50.0]), atol=0.05, rtol=0)
    e = mx.nd.random.exponential(mx.nd.array([1.0, 4.0]), shape=N // 10)   # scale
    assert_almost_equal(e.asnumpy().mean(axis=1), np.array([1.0, 4.0]), rtol=0.05, atol=0)
    assert mx.nd.random.poisson(mx.nd.array([1.0, 2.0])).shape == (2,)
    assert mx.nd.random.gamma(mx.nd.array([1.0]), mx.nd.array([2.0]), shape=3,
                              dtype="float64").dtype == np.float64
    # float64 parameters still give float32 samples by default, as MXNet.
    assert mx.nd.random.uniform(mx.nd.zeros((2,), dtype="float64"),
                                mx.nd.ones((2,), dtype="float64")).dtype == np.float32


def test_sample_op_gradient_is_zero_as_mxnet():
    loc, scale = mx.nd.array([0.0, 1.0]), mx.nd.array([1.0, 2.0])
    loc.attach_grad()
    scale.attach_grad()
    with mx.autograd.record():
        y = mx.nd.random.normal(loc, scale, shape=3)
    y.backward()
    assert (loc.grad.asnumpy() == 0).all() and (scale.grad.asnumpy() == 0).all()


def test_mixed_or_bad_parameter_types():
    with pytest.raises(TypeError, match="same type"):
        mx.nd.random.uniform(mx.nd.zeros((1,)), 1.0)
    with pytest.raises(TypeError, match="same type"):
        mx.nd.random.normal(0.0, mx.nd.ones((1,)))
    with pytest.raises(ValueError, match="NDArray or numbers"):
        mx.nd.random.uniform("a", "b")
    with pytest.raises(mx.MXNetError, match="same shape"):
        mx.nd.random.normal(mx.nd.zeros((2,)), mx.nd.ones((3,)))


@pytest.mark.parametrize("call, message", [
    (lambda: mx.nd.random.uniform(2, 1), "low must be less or equal to high"),
    (lambda: mx.nd.random.normal(0, -1), "scale"),
    (lambda: mx.nd.random.gamma(-1, 1), "gamma"),
    (lambda: mx.nd.random.poisson(-1), "non-negative"),
    (lambda: mx.nd.random.negative_binomial(2, 1.5), "negative binomial"),
    (lambda: mx.nd.random.randint(3, 3), "low must be less than high"),
    (lambda: mx.nd.random.randint(0, 2 ** 40), "does not fit"),
    (lambda: mx.nd.random.uniform(shape=2, dtype="int32"), "dtype"),
    (lambda: mx.nd.random.randint(0, 3, dtype="float32"), "dtype"),
    (lambda: mx.nd.random_uniform(), "shape"),
    (lambda: mx.nd.random.normal(mx.nd.zeros((2,)), mx.nd.array([1.0, -1.0])), "scale"),
])
def test_invalid_parameters_raise(call, message):
    with pytest.raises((mx.MXNetError, ValueError), match=message):
        call()


# -- legacy names and mx.random -----------------------------------------------------------------

def test_legacy_aliases_and_op_names():
    for name in ("uniform", "normal", "random_uniform", "random_normal", "random_gamma",
                 "random_exponential", "random_poisson", "random_negative_binomial",
                 "random_generalized_negative_binomial", "random_randint", "sample_uniform",
                 "sample_normal", "sample_gamma", "sample_exponential", "sample_poisson",
                 "sample_negative_binomial", "sample_generalized_negative_binomial",
                 "sample_multinomial", "shuffle"):
        assert callable(getattr(mx.nd, name)), name
    x = mx.nd.random_normal(loc=10, scale=0.1, shape=(1000,))
    assert abs(x.asnumpy().mean() - 10) < 0.05
    assert mx.nd.uniform(low=0, high=1, shape=(2, 2)).shape == (2, 2)
    assert mx.nd._internal._random_uniform(shape=(3,)).shape == (3,)
    assert mx.nd.sample_uniform(mx.nd.zeros((2,)), mx.nd.ones((2,)), shape=4).shape == (2, 4)
    # mx.nd.gamma stays the gamma *function*.
    assert_almost_equal(mx.nd.gamma(mx.nd.array([5.0])), np.array([24.0]))


def test_mx_random_aliases():
    for name in ("uniform", "normal", "randn", "randint", "poisson", "exponential", "gamma",
                 "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle"):
        assert getattr(mx.random, name) is getattr(mx.nd.random, name)
    mx.random.seed(7)
    a = mx.random.uniform(0, 1, shape=(4,)).asnumpy()
    mx.random.seed(7)
    np.testing.assert_array_equal(mx.nd.random.uniform(0, 1, shape=(4,)).asnumpy(), a)


def test_like_samplers():
    x = mx.nd.zeros((3, 4), dtype="float64")
    y = mx.nd.random.uniform_like(x, low=2, high=3)
    assert y.shape == (3, 4) and y.dtype == np.float64
    assert (y.asnumpy() >= 2).all() and (y.asnumpy() < 3).all()
    assert mx.nd.random.normal_like(x).shape == (3, 4)


# -- multinomial ---------------------------------------------------------------------------------

def test_multinomial_frequencies_and_shapes():
    p = np.array([[0.1, 0.2, 0.7], [0.5, 0.5, 0.0]], np.float32)
    s = mx.nd.random.multinomial(mx.nd.array(p), shape=N // 4).asnumpy()
    assert s.shape == (2, N // 4)
    for row, probs in zip(s, p):
        freq = np.bincount(row, minlength=3) / row.size
        assert_almost_equal(freq, probs, atol=0.01, rtol=0)
    assert mx.nd.random.multinomial(mx.nd.array([0.2, 0.8])).shape == (1,)
    assert mx.nd.random.multinomial(mx.nd.array([0.2, 0.8]), shape=(2, 3)).shape == (2, 3)
    assert mx.nd.random.multinomial(mx.nd.array([[0.2, 0.8]]), shape=(2, 3),
                                    dtype="float32").dtype == np.float32
    # Deterministic rows.
    det = mx.nd.random.multinomial(mx.nd.array([[0, 1, 0], [0, 0, 1]]), shape=4).asnumpy()
    assert det.tolist() == [[1] * 4, [2] * 4]


def test_multinomial_get_prob_and_gradient():
    p = mx.nd.array([[0.2, 0.8], [0.5, 0.5]])
    p.attach_grad()
    with mx.autograd.record():
        s, logp = mx.nd.random.multinomial(p, shape=3, get_prob=True)
    assert logp.dtype == np.float32 and logp.shape == (2, 3)
    sn = s.asnumpy()
    expected = np.log(np.take_along_axis(p.asnumpy(), sn, axis=1))
    assert_almost_equal(logp, expected, rtol=1e-6, atol=1e-7)
    head = mx.nd.array(np.random.rand(2, 3))
    logp.backward(head)
    # REINFORCE: d/dp_k sum_s head_s log p[s] = sum over samples s == k of head_s / p_k.
    g = np.zeros((2, 2))
    for r in range(2):
        for j in range(3):
            g[r, sn[r, j]] += head.asnumpy()[r, j] / p.asnumpy()[r, sn[r, j]]
    assert_almost_equal(p.grad, g, rtol=1e-5, atol=1e-6)


# -- shuffle --------------------------------------------------------------------------------------

def test_shuffle_permutes_first_axis_only():
    x = mx.nd.arange(20).reshape((10, 2))
    y = mx.nd.random.shuffle(x)
    a = y.asnumpy()
    assert y.shape == (10, 2) and y.dtype == x.dtype
    assert sorted(a[:, 0].tolist()) == list(range(0, 20, 2))
    assert (a[:, 1] == a[:, 0] + 1).all()                # rows stay intact
    assert x.asnumpy()[:, 0].tolist() == list(range(0, 20, 2))   # input untouched
    assert mx.nd.shuffle(mx.nd.array([[1, 2]], dtype="int32")).dtype == np.int32
    seen = {tuple(mx.nd.random.shuffle(mx.nd.arange(4)).asnumpy()) for _ in range(50)}
    assert len(seen) > 5


def test_shuffle_gradient_follows_the_permutation():
    # MXNet has no gradient for shuffle; mxlite routes it through the permutation.
    x = np.random.rand(5, 3)
    w = mx.nd.array(np.random.rand(5, 3), dtype="float64")

    def f(a):
        mx.random.seed(3)             # the same permutation at every evaluation
        return mx.nd.random.shuffle(a) ** 2 * w
    check_numeric_gradient(f, [x], dtype=np.float64, numeric_eps=1e-6, rtol=1e-6)
    xa = mx.nd.array(x, dtype="float64")
    xa.attach_grad()
    w = mx.nd.array(np.arange(5.0)[:, None] * np.ones((1, 3)), dtype="float64")
    with mx.autograd.record():
        y = mx.nd.random.shuffle(xa)
        loss = (y * w).sum()
    loss.backward()
    # y[i] = x[perm[i]] so dloss/dx[perm[i]] = w[i]: the gradient row of x[j] is the
    # position j landed at.
    ya = y.asnumpy()
    for j in range(5):
        i = int(np.where((ya == x[j]).all(axis=1))[0][0])
        assert (xa.grad.asnumpy()[j] == i).all()


def test_sample_unique_zipfian():
    # Distinct classes per row from P(c) = (log(c+2) - log(c+1)) / log(R+1), the draws
    # counted (MXNet's op for sampled softmax; its RNG differs, the law is the same).
    mx.random.seed(3)
    sample = mx.nd._internal._sample_unique_zipfian
    s, t = sample(range_max=1000, shape=(4, 500))
    assert s.dtype == np.int64 and t.dtype == np.int64 and t.shape == (4,)
    rows = s.asnumpy()
    assert all(len(set(r)) == 500 for r in rows) and rows.min() >= 0 and rows.max() < 1000
    assert (t.asnumpy() >= 500).all()
    mx.random.seed(3)
    again, _ = sample(range_max=1000, shape=(4, 500))
    assert np.array_equal(again.asnumpy(), rows)
    # one sample per row is one plain draw: its frequencies follow the law
    s, t = sample(range_max=50, shape=(20000, 1))
    assert (t.asnumpy() == 1).all()
    counts = np.bincount(s.asnumpy().ravel(), minlength=50) / 20000.0
    c = np.arange(50)
    law = (np.log(c + 2) - np.log(c + 1)) / np.log(51)
    np.testing.assert_allclose(counts, law, atol=0.01)
    with pytest.raises(mx.MXNetError, match="distinct"):
        sample(range_max=5, shape=(1, 6))
    with pytest.raises(mx.MXNetError, match="2-D"):
        sample(range_max=5, shape=(6,))


def test_like_samplers_take_0d_data():
    for fn in (mx.nd.random.poisson_like, mx.nd.random.negative_binomial_like,
               mx.nd.random.generalized_negative_binomial_like):
        assert fn(mx.nd.ones(())).shape == () and fn(mx.nd.ones((2,))).shape == (2,)


def test_device_generator_gives_numpys_generator_methods():
    # A GPU's generator draws from CuPy's RandomState under NumPy Generator's names;
    # NumPy's RandomState has the same interface, so it stands in for CuPy's here.
    from mxlite.random import _DeviceGenerator
    g = _DeviceGenerator(np, 5)
    u = g.random((1000,))
    assert u.shape == (1000,) and u.dtype == np.float64 and 0 <= u.min() and u.max() < 1
    assert g.random((2,), dtype=np.float32).dtype == np.float32
    i = g.integers(3, 7, size=(500,))
    assert i.dtype == np.int64 and set(np.unique(i).tolist()) == {3, 4, 5, 6}
    assert set(np.unique(g.integers(2, size=200)).tolist()) == {0, 1}
    assert set(np.unique(g.integers(1, 3, size=300, endpoint=True)).tolist()) == {1, 2, 3}
    assert sorted(g.permutation(6).tolist()) == list(range(6))
    for name, args in (("normal", (0, 1)), ("uniform", (-1, 1)), ("standard_normal", ()),
                       ("standard_gamma", (2.0,)), ("standard_exponential", ()),
                       ("poisson", (3.0,)), ("gamma", (2.0, 1.0)), ("laplace", (0, 1)),
                       ("gumbel", (0, 1)), ("logistic", (0, 1)), ("lognormal", (0, 1)),
                       ("weibull", (2.0,)), ("pareto", (3.0,)), ("rayleigh", (1.0,))):
        assert getattr(g, name)(*args, size=(4, 3)).shape == (4, 3), name
    m = g.multinomial(10, [0.2, 0.3, 0.5], size=(4,))
    assert m.shape == (4, 3) and m.dtype == np.int64 and (m.sum(axis=1) == 10).all()
    assert abs(g.multinomial(4000, [0.25, 0.75])[0] - 1000) < 150
    again = _DeviceGenerator(np, 5)
    np.testing.assert_array_equal(again.random((1000,)), u)
