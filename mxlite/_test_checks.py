"""The checks of ``mx.test_utils`` that go beyond comparing two arrays: statistical
tests of random generators (``verify_generator`` and its chi-square test), the
comparison of two optimizers step by step (``compare_optimizer``), NumPy-style
reductions (``np_reduce``) and well-conditioned test matrices.

:mod:`mxlite.test_utils` re-exports every public name here.
"""
import math
import os
import platform
from collections import OrderedDict

import numpy as np

__all__ = ["effective_dtype", "random_sample", "np_reduce", "rand_coord_2d",
           "get_identity_mat", "get_identity_mat_batch", "gen_buckets_probs_with_ppf",
           "mean_check", "var_check", "chi_square_check", "verify_generator",
           "compare_optimizer", "is_cd_run", "is_aarch64_run", "has_tvm_ops",
           "is_op_runnable", "new_matrix_with_real_eigvals_2d",
           "new_matrix_with_real_eigvals_nd", "new_orthonormal_matrix_2d",
           "new_sym_matrix_with_real_eigvals_2d", "new_sym_matrix_with_real_eigvals_nd"]


def effective_dtype(dat):
    """The dtype whose tolerances suit comparisons of ``dat``'s values.

    That is ``dat``'s dtype, except for float32 data on a GPU whose matrix products
    run in TF32 (CuPy with ``CUPY_TF32=1``): such results have about float16's
    precision, so float16 is returned.
    """
    dtype = np.dtype(dat.dtype)
    ctx = getattr(dat, "ctx", None)
    on_gpu = getattr(ctx, "device_type", "cpu") == "gpu"
    if dtype == np.float32 and on_gpu and os.environ.get("CUPY_TF32") == "1":
        return np.dtype(np.float16)
    return dtype


def random_sample(population, k):
    """``k`` elements of the sequence ``population`` drawn without replacement (with
    NumPy's global random state, so ``np.random.seed`` makes it repeatable)."""
    if not 0 <= k <= len(population):
        raise ValueError("random_sample: k must be in [0, %d], got %r" % (len(population), k))
    chosen = list(population)
    np.random.shuffle(chosen)
    return chosen[:k]


def _sorted_items(d):
    """The (key, value) pairs of ``d`` sorted by key."""
    return sorted(d.items(), key=lambda kv: kv[0])


def _sorted_dict(d):
    """An OrderedDict of ``d``'s items sorted by key."""
    return OrderedDict(_sorted_items(d))


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce NumPy array ``dat`` with ``numpy_reduce_func`` (``np.sum``, ``np.max``...)
    over ``axis`` (None: every axis; an int; or a list of ints), one axis at a time
    from the last; ``keepdims`` keeps the reduced axes with length 1.

    Examples
    --------
    >>> mx.test_utils.np_reduce(np.ones((2, 3, 4)), (0, 2), True, np.sum).shape
    (1, 3, 1)
    """
    if axis is None:
        axes = list(range(dat.ndim))
    elif isinstance(axis, (int, np.integer)):
        axes = [int(axis)]
    else:
        axes = [int(a) for a in axis]
    axes = [a + dat.ndim if a < 0 else a for a in axes]
    ret = dat
    for a in sorted(axes, reverse=True):
        ret = numpy_reduce_func(ret, axis=a)
    if keepdims:
        shape = list(dat.shape)
        for a in axes:
            shape[a] = 1
        ret = np.reshape(ret, shape)
    return ret


def rand_coord_2d(x_low, x_high, y_low, y_high):
    """A random int64 point ``(x, y)`` with ``x`` in ``[x_low, x_high)`` and ``y`` in
    ``[y_low, y_high)``."""
    return (np.random.randint(x_low, x_high, dtype=np.int64),
            np.random.randint(y_low, y_high, dtype=np.int64))


def get_identity_mat(size):
    """The ``size`` x ``size`` identity matrix as a float32 NDArray."""
    from . import nd
    return nd.array(np.eye(size, dtype=np.float32))


def get_identity_mat_batch(size):
    """A batch of two identity matrices, shape ``(2, size, size)``."""
    from . import nd
    return nd.array(np.stack([np.eye(size, dtype=np.float32)] * 2))


# -- statistical checks of random generators -------------------------------------------

def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equally likely buckets of a continuous distribution, from its
    quantile function ``ppf``: the list of ``(low, high)`` bounds and their
    probabilities (each ``1 / nbuckets``)."""
    if nbuckets <= 0:
        raise ValueError("gen_buckets_probs_with_ppf: nbuckets must be positive, got %r"
                         % (nbuckets,))
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets)))
               for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator, mu, sigma, nsamples=1000000):
    """Whether the mean of ``generator(nsamples)`` lies within three standard errors
    (``3 sigma / sqrt(nsamples)``) of ``mu``."""
    mean = np.asarray(generator(nsamples)).mean()
    half = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - half < mean < mu + half)


def var_check(generator, sigma, nsamples=1000000):
    """Whether the sample variance of ``generator(nsamples)`` lies within three standard
    errors (``3 sqrt(2 sigma^4 / (n - 1))``) of ``sigma ** 2``."""
    var = np.asarray(generator(nsamples)).var(ddof=1)
    half = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - half < var < sigma ** 2 + half)


def _upper_gamma_regularized(a, x):
    """Q(a, x) = Gamma(a, x) / Gamma(a), the regularized upper incomplete gamma function
    (a series below ``a + 1``, a continued fraction above, as in Numerical Recipes)."""
    if x <= 0:
        return 1.0
    log_front = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:
        term = total = 1.0 / a
        n = a
        while abs(term) > abs(total) * 1e-15:
            n += 1
            term *= x / n
            total += term
        return max(0.0, 1.0 - total * math.exp(log_front))
    tiny = 1e-300
    b = x + 1 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 10000):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        step = d * c
        h *= step
        if abs(step - 1) < 1e-15:
            break
    return math.exp(log_front) * h


def _chisquare_pvalue(obs, exp):
    """The p-value of Pearson's chi-square statistic with ``len(obs) - 1`` degrees of
    freedom (``scipy.stats.chisquare``)."""
    obs, exp = np.asarray(obs, np.float64), np.asarray(exp, np.float64)
    stat = float(np.sum((obs - exp) ** 2 / exp))
    return _upper_gamma_regularized((len(obs) - 1) / 2.0, stat / 2.0)


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Pearson's chi-square test of ``generator(nsamples)`` against ``probs``.

    ``buckets`` lists ``(low, high)`` ranges, ascending and disjoint, for a
    continuous distribution, or the possible values of a discrete one; ``probs``
    their probabilities. Returns ``(p, observed counts, expected counts)``; a p
    above 0.05 is the usual pass.
    """
    if not isinstance(buckets, list):
        raise TypeError("chi_square_check: buckets must be a list, got %s"
                        % type(buckets).__name__)
    if len(probs) != len(buckets):
        raise ValueError("chi_square_check: %d probs for %d buckets" % (len(probs), len(buckets)))
    samples = np.asarray(generator(nsamples))
    continuous = isinstance(buckets[0], (list, tuple))
    if continuous:
        edges = np.asarray(buckets, dtype=np.float32).reshape(-1)
        if np.any(np.diff(edges) < 0):
            raise ValueError("chi_square_check: buckets must be ascending and disjoint, got %s"
                             % (buckets,))
        # A sample in [low_i, high_i) falls right of edge 2i, so its bucket is pos // 2.
        ids = np.searchsorted(edges, samples, side="right") // 2
        obs = np.array([(ids == i).sum() for i in range(len(buckets))])
    else:
        obs = np.array([(samples == b).sum() for b in buckets])
    expected = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    return _chisquare_pvalue(obs, expected), obs, expected


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Run :func:`chi_square_check` ``nrepeat`` times; raise AssertionError unless at
    least ``nrepeat * success_rate`` runs have p above ``alpha``. Returns the p-values.

    Examples
    --------
    >>> buckets, probs = [0, 1], [0.5, 0.5]
    >>> ps = mx.test_utils.verify_generator(lambda n: np.random.randint(0, 2, n),
    ...                                     buckets, probs, nsamples=1000)
    """
    results = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    pvalues = [r[0] for r in results]
    if (np.array(pvalues) > alpha).sum() < nrepeat * success_rate:
        raise AssertionError("Generator test fails, Chi-square p=%s, obs_freq=%s, "
                             "expected_freq=%s.\nbuckets=%s, probs=%s"
                             % (pvalues, [r[1] for r in results], [r[2] for r in results],
                                buckets, probs))
    return pvalues


# -- optimizers ----------------------------------------------------------------------------

def _uniform_pair(shape, dtype, stype):
    """Two equal random arrays: the first dense, the second of storage ``stype``."""
    from . import nd, random
    from .test_utils import default_context, rand_ndarray
    ctx = default_context()
    if stype == "default":
        second = random.uniform(shape=shape, ctx=ctx, dtype=dtype)
    elif stype in ("row_sparse", "csr"):
        second = rand_ndarray(shape, stype, density=1, dtype=dtype)
    else:
        raise ValueError("compare_optimizer: unknown storage type %r" % (stype,))
    return nd.array(second.asnumpy(), ctx=ctx, dtype=second.dtype), second


def compare_optimizer(opt1, opt2, shape, dtype, w_stype="default", g_stype="default",
                      rtol=1e-4, atol=1e-5, compare_states=True, ntensors=1):
    """Check that optimizers ``opt1`` and ``opt2`` take the same step.

    With one ``shape``, both update a copy of the same random weight with the same
    random gradient (``w_stype``/``g_stype`` give the second one's storage type)
    and the states and weights must agree. With a list of shapes, ``opt2`` updates
    ``ntensors`` weights in one multi-tensor call and ``opt1`` one by one.
    """
    from . import random
    from .test_utils import assert_almost_equal, compare_ndarray_tuple, default_context
    if not isinstance(shape, list):
        if ntensors != 1:
            raise ValueError("compare_optimizer: ntensors=%d needs a list of shapes" % ntensors)
        w1, w2 = _uniform_pair(shape, dtype, w_stype)
        g1, g2 = _uniform_pair(shape, dtype, g_stype)
        state1 = opt1.create_state_multi_precision(0, w1)
        state2 = opt2.create_state_multi_precision(0, w2)
        if compare_states:
            compare_ndarray_tuple(state1, state2)
        opt1.update_multi_precision(0, w1, g1, state1)
        opt2.update_multi_precision(0, w2, g2, state2)
        if compare_states:
            compare_ndarray_tuple(state1, state2, rtol=rtol, atol=atol)
        assert_almost_equal(w1, w2, rtol=rtol, atol=atol)
        return
    ctx = default_context()
    w1 = [random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape]
    g1 = [random.uniform(shape=s, ctx=ctx, dtype=dtype) for s in shape]
    w2, g2 = [w.copy() for w in w1], [g.copy() for g in g1]
    state2 = [opt2.create_state_multi_precision(0, w2[i]) for i in range(ntensors)]
    opt2.update_multi_precision(list(range(ntensors)), w2, g2, state2)
    for i in range(ntensors):
        state1 = opt1.create_state_multi_precision(i, w1[i])
        opt1.update_multi_precision(i, w1[i], g1[i], state1)
        if compare_states:
            compare_ndarray_tuple(state1, state2[i], rtol, atol)
        compare_ndarray_tuple(w1[i], w2[i], rtol, atol)


# -- where the tests run -------------------------------------------------------------------

def is_cd_run():
    """Whether this runs in a continuous-delivery job (``CD_JOB=1``)."""
    return os.environ.get("CD_JOB", "0") == "1"


def is_aarch64_run():
    """Whether this machine is aarch64."""
    return platform.machine() == "aarch64"


def has_tvm_ops():
    """Whether operators generated by TVM are built in: never in mxlite."""
    from .runtime import Features
    return Features().is_enabled("TVM_OP")


def is_op_runnable():
    """Whether the TVM-generated operators can run on the current context: always, as
    mxlite has none that need a newer GPU."""
    return True


# -- well-conditioned test matrices ----------------------------------------------------------

def new_matrix_with_real_eigvals_2d(n):
    """A random ``n`` x ``n`` matrix ``Q^-1 D Q`` with real eigenvalues (the diagonal of
    ``D``, in ``[-10, 10)``) and a well-conditioned ``Q`` (2-norm condition below 3)."""
    while True:
        v = np.random.uniform(-1.0, 1.0, (n, 1))
        v /= np.linalg.norm(v)
        q = (np.eye(n) - 2 * v @ v.T) @ np.diag(np.random.uniform(-1.0, 1.0, n))
        if np.linalg.cond(q, 2) < 3:
            break
    return np.linalg.inv(q) @ np.diag(np.random.uniform(-10.0, 10.0, n)) @ q


def new_matrix_with_real_eigvals_nd(shape):
    """A stack of :func:`new_matrix_with_real_eigvals_2d` matrices of ``shape``."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]).reshape(shape)


def new_orthonormal_matrix_2d(n):
    """A random orthonormal ``n`` x ``n`` matrix (the Q of a QR decomposition)."""
    x = np.random.randn(n, n)
    return np.linalg.qr(x.T @ x)[0]


def new_sym_matrix_with_real_eigvals_2d(n):
    """A random symmetric ``n`` x ``n`` matrix with eigenvalues in ``[-10, 10)``."""
    q = new_orthonormal_matrix_2d(n)
    return q.T @ np.diag(np.random.uniform(-10.0, 10.0, n)) @ q


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A stack of :func:`new_sym_matrix_with_real_eigvals_2d` matrices of ``shape``."""
    n = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1])
                     for _ in range(n)]).reshape(shape)
