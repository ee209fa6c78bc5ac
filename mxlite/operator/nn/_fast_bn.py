"""Optional numba kernels (``_fast``, which compiles them) for BatchNorm's passes.

The normalising pass, ``(x - mean) * scale + beta`` per channel (with a fused step's
residual sum and relu after it), runs as one pass (NumPy makes three to five), each
value computed in the same order: the same bits. The batch statistics (two passes)
and the gradient's sums (one pass, with relu's mask where fused) are summed in
float64, NumPy's pairwise float32 sums' round-off or less, and the data gradient is
one pass of NumPy's operations.
"""
import numpy as np

from ... import engine
from . import _fast


# Each kernel takes whole (N, C, L) arrays and the first channel ``c0`` of the part it
# runs (its per-channel vectors hold that part's channels): a part of the channels cut
# out of a C-contiguous array is a strided view, which numba compiles for any strides,
# without vector loads (measured: the statistics pass 6x slower on such a view than on
# the whole array it came from).

def _channel_affine(x, c0, n0, n1, i0, i1, mean, scale, shift, r, add, relu, y):
    """``y = (x - mean) * scale + shift`` with the per-channel values for channels
    ``c0, c0 + 1, ...`` of axis 1 of ``x`` and ``y`` (N, C, L), over samples ``n0:n1`` and
    positions ``i0:i1``; then ``+ r`` where ``add``, and ``max(., 0)`` where ``relu``
    (NaN stays NaN and -0 becomes +0, as in ``np.maximum(v, 0)``). ``x`` may be ``y``.

    NOTE: each row runs as 1-D slices, one loop per case: 1.05-1.15x faster than one
    loop testing ``add`` and ``relu`` on 3-D indices. In place, the loops get the one
    slice as both ``xr`` and ``yr``: two slices of the same memory fail the compiled
    loop's overlap check, which then runs unvectorised (3x slower)."""
    def row(xr, rr, yr, m, s, b):
        if add and relu:
            for i in range(len(yr)):
                v = (xr[i] - m) * s + b + rr[i]
                yr[i] = v if v > 0 or v != v else 0
        elif add:
            for i in range(len(yr)):
                yr[i] = (xr[i] - m) * s + b + rr[i]
        elif relu:
            for i in range(len(yr)):
                v = (xr[i] - m) * s + b
                yr[i] = v if v > 0 or v != v else 0
        else:
            for i in range(len(yr)):
                yr[i] = (xr[i] - m) * s + b

    same = x.ctypes.data == y.ctypes.data and x.strides == y.strides
    for n in range(n0, n1):
        for k in range(mean.shape[0]):
            c = c0 + k
            yr, rr = y[n, c, i0:i1], r[n, c, i0:i1]
            if same:
                row(yr, rr, yr, mean[k], scale[k], shift[k])
            else:
                row(x[n, c, i0:i1], rr, yr, mean[k], scale[k], shift[k])


def _channel_moments(x, c0, mean, var):
    """The mean and the variance ``mean((x - mean)^2)`` (two passes, summed in float64)
    of channels ``c0, c0 + 1, ...`` (axis 1) of ``x`` (N, C, L), into ``mean`` and ``var``
    (x's dtype; the variance is taken about the mean as rounded to that dtype)."""
    n_, l_ = x.shape[0], x.shape[2]
    count = n_ * l_
    for k in range(mean.shape[0]):
        c = c0 + k
        s = 0.0
        for n in range(n_):
            for i in range(l_):
                s += x[n, c, i]
        mean[k] = s / count
        m = mean[k]
        s = 0.0
        for n in range(n_):
            for i in range(l_):
                d = x[n, c, i] - m
                s += float(d) * float(d)
        var[k] = s / count


def _channel_grad_sums(x, c0, mean, gy, y, relu, g, store, sums):
    """``sums[k] = (sum(g), sum((x - mean) * g))`` over channel ``c0 + k`` (axis 1) of
    (N, C, L) arrays, in float64 (``x - mean`` rounded to x's dtype, as NumPy's), for
    ``g = gy`` or, where ``relu``, relu's gradient ``gy * (y > 0)`` for its output
    ``y`` (stored in ``g`` where ``store``)."""
    n_, l_ = x.shape[0], x.shape[2]
    zero = np.zeros(1, dtype=gy.dtype)[0]
    for k in range(mean.shape[0]):
        c = c0 + k
        m = mean[k]
        s = 0.0
        t = 0.0
        for n in range(n_):
            for i in range(l_):
                v = gy[n, c, i]
                if relu and not y[n, c, i] > 0:
                    v = v * zero
                if store:
                    g[n, c, i] = v
                s += v
                t += float(x[n, c, i] - m) * float(v)
        sums[k, 0] = s
        sums[k, 1] = t


def _channel_grad(x, c0, mean, gy, y, relu, a, k1, k2, gx):
    """``gx = g * a - (x - mean) * k1 - k2`` with the per-channel values for channels
    ``c0, c0 + 1, ...`` of axis 1 (N, C, L), in that order (BatchNorm's data gradient
    as NumPy computes it), ``g`` as in :func:`_channel_grad_sums`."""
    n_, l_ = x.shape[0], x.shape[2]
    zero = np.zeros(1, dtype=gy.dtype)[0]
    for n in range(n_):
        for k in range(mean.shape[0]):
            c = c0 + k
            m, ac, p, q = mean[k], a[k], k1[k], k2[k]
            for i in range(l_):
                v = gy[n, c, i]
                if relu and not y[n, c, i] > 0:
                    v = v * zero
                gx[n, c, i] = v * ac - (x[n, c, i] - m) * p - q


def _inverse_scale(var, gamma, eps, scaled, inv, scale):
    """``inv = 1 / sqrt(var + eps)`` and, where ``scaled``, ``scale = inv * gamma``, in
    var's dtype (``eps`` rounded to it first): NumPy's operations, one value at a time."""
    k = np.empty(2, dtype=var.dtype)    # (constants of var's dtype, as in _fast)
    k[0], k[1] = eps, 1
    e, one = k[0], k[1]
    for i in range(var.shape[0]):
        v = one / np.sqrt(var[i] + e)
        inv[i] = v
        if scaled:
            scale[i] = v * gamma[i]


def inverse_scale(var, gamma, eps, fix_gamma):
    """BatchNorm's ``(inv, scale)`` per channel for the variance ``var`` (1-D) and
    ``gamma`` (``scale`` is ``inv`` where ``fix_gamma``): the values of
    ``normalization._affine``, bit for bit, in one compiled call (its NumPy passes cost
    a fused inference step several of its dozens of us of glue); None where numba is
    off or the vectors are not 1-D float arrays of one shape and dtype."""
    if (type(var) is not np.ndarray or type(gamma) is not np.ndarray or var.ndim != 1
            or gamma.shape != var.shape or var.dtype not in _fast._DTYPES
            or gamma.dtype != var.dtype):
        return None
    jit = _fast.kernels()
    if jit is None:
        return None
    inv = np.empty_like(var)
    scale = inv if fix_gamma else np.empty_like(var)
    jit.inverse_scale(var, gamma, eps, not fix_gamma, inv, scale)
    return inv, scale


def channel_views(*arrays):
    """The (N, C, L) views of NumPy float ``arrays`` of one shape and dtype (channels on
    axis 1, None entries passed through), for the BatchNorm kernels below; None where
    numba is off or they do not qualify (the caller keeps its NumPy passes). An array
    that is no view as (N, C, L) is reshaped into a copy: only inputs may be."""
    x = arrays[0]
    given = [a for a in arrays if a is not None]
    if (x.ndim < 2 or x.dtype not in _fast._DTYPES or 0 in x.shape
            or any(type(a) is not np.ndarray or a.dtype != x.dtype or a.shape != x.shape
                   for a in given)):
        return None
    if _fast.kernels() is None:
        return None
    shape3 = x.shape[:2] + (-1,)
    return [None if a is None else a.reshape(shape3) for a in arrays]


def _vectors(x3, c0, *vectors):
    # NOTE: the kernels index without bounds checks: a misfit is refused before them
    if any(v.dtype != x3.dtype or v.shape != vectors[0].shape for v in vectors) \
            or not 0 <= c0 <= c0 + len(vectors[0]) <= x3.shape[1]:
        raise ValueError("BatchNorm kernels: per-channel vectors of %s channels from channel "
                         "%d do not fit data of shape %s and dtype %s"
                         % ([v.shape for v in vectors], c0, x3.shape, x3.dtype))


def batch_norm_apply(x3, c0, mean, scale, shift, y3, r3=None, relu=False):
    """``y3 = (x3 - mean) * scale + shift`` for channels ``c0, ...`` (as many as the
    vectors hold) of :func:`channel_views` ``x3``, ``y3`` (N, C, L), then ``+ r3``
    (where given) and ``relu`` (where ``relu``), in one pass."""
    _vectors(x3, c0, mean, scale, shift)
    _fast.kernels().channel_affine(x3, c0, 0, x3.shape[0], 0, x3.shape[2], mean, scale, shift,
                             x3 if r3 is None else r3, r3 is not None, relu, y3)


def affine_epilogue(mean, scale, shift, r3=None, relu=False):
    """:func:`batch_norm_apply`'s pass as a callable ``(y3, n0, n1, i0, i1, f0=0,
    f1=None)`` that applies it in place to samples ``n0:n1``, positions ``i0:i1`` and
    channels ``f0:f1`` (all by default) of ``y3`` (N, F, L), ``r3`` being the residual's
    (N, F, L) view: for a convolution to run on each part of its output right after
    the part's product, while it is in the caches (the same values as one pass after:
    the same operations on each). None where numba is off."""
    jit = _fast.kernels()
    if jit is None:
        return None
    channels = len(mean)
    if any(v.ndim != 1 or v.shape != mean.shape or v.dtype != mean.dtype
           for v in (mean, scale, shift)):
        raise ValueError("BatchNorm epilogue: mean, scale and shift of shapes %s and dtypes %s "
                         "are no per-channel vectors of one shape and dtype"
                         % ([v.shape for v in (mean, scale, shift)],
                            [str(v.dtype) for v in (mean, scale, shift)]))

    def apply(y3, n0, n1, i0, i1, f0=0, f1=None):
        f1 = channels if f1 is None else f1
        if (y3.dtype != mean.dtype or y3.shape[1] != channels
                or not 0 <= n0 <= n1 <= y3.shape[0] or not 0 <= i0 <= i1 <= y3.shape[2]
                or not 0 <= f0 <= f1 <= channels
                or r3 is not None and (r3.shape != y3.shape or r3.dtype != y3.dtype)):
            raise ValueError("BatchNorm epilogue: samples %d:%d, positions %d:%d, channels "
                             "%d:%d of %d and residual %s do not fit the output %s"
                             % (n0, n1, i0, i1, f0, f1, channels,
                                None if r3 is None else r3.shape, y3.shape))
        jit.channel_affine(y3, f0, n0, n1, i0, i1, mean[f0:f1], scale[f0:f1], shift[f0:f1],
                           y3 if r3 is None else r3, r3 is not None, relu, y3)
    return apply


def products_by_rows(w, x3, epilogue):
    """``w @ x3[i]`` (N, F, L) for every sample, the product split by its rows (the
    filters) over the workers as :func:`engine.matmul` cuts it (the same parts: the
    same bits), each part then running ``epilogue`` (as :func:`affine_epilogue` makes
    it) on its filters while they are in the caches.

    NOTE: in place of the whole product, then the epilogue in one pass in the caller
    (ResNet-50's 1x1 convolutions on 14x14 and 7x7 maps at batch 1, 28 a step: that
    pass ran 1.6-2 ms a step on the caller alone)."""
    n, f, cols = x3.shape[0], w.shape[0], x3.shape[2]
    y3 = np.empty((n, f, cols), dtype=np.result_type(w, x3))

    def rows(lo, hi):
        np.matmul(w[lo:hi], x3, out=y3[:, lo:hi])
        epilogue(y3, 0, n, 0, cols, lo, hi)
    engine.parallel_stages([(rows, f, min(f, engine.num_threads()))], w.size * n * cols)
    return y3


def batch_norm_moments(x3, c0, mean, var):
    """Fill ``mean`` and ``var`` with the batch statistics of channels ``c0, ...`` of
    :func:`channel_views` ``x3`` (N, C, L), summed in float64."""
    _vectors(x3, c0, mean, var)
    _fast.kernels().channel_moments(x3, c0, mean, var)


def batch_norm_grad_sums(x3, c0, mean, gy3, y3=None, g3=None):
    """``(sum(g), sum((x - mean) * g))`` for channels ``c0, ...`` (as many as ``mean``
    holds) of :func:`channel_views` (N, C, L), in x's dtype (summed in float64), for
    ``g = gy``, or, given relu's output ``y3``, ``g = gy * (y > 0)`` (written into
    ``g3`` where given)."""
    _vectors(x3, c0, mean)
    sums = np.empty((len(mean), 2))
    _fast.kernels().channel_grad_sums(x3, c0, mean, gy3, gy3 if y3 is None else y3, y3 is not None,
                                gy3 if g3 is None else g3, g3 is not None, sums)
    return sums[:, 0].astype(x3.dtype), sums[:, 1].astype(x3.dtype)


def batch_norm_grad(x3, c0, mean, gy3, a, k1, k2, gx3, y3=None):
    """``gx3 = g * a - (x - mean) * k1 - k2`` for channels ``c0, ...`` of
    :func:`channel_views` (N, C, L) in one pass, ``g`` as in
    :func:`batch_norm_grad_sums`."""
    _vectors(x3, c0, mean, a, k1, k2)
    _fast.kernels().channel_grad(x3, c0, mean, gy3, gy3 if y3 is None else y3, y3 is not None,
                           a, k1, k2, gx3)
