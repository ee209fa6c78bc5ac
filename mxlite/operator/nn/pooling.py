"""Pooling: max, avg, sum and lp over 1, 2 or 3 spatial dims (channels first).

The forward reduces a strided window view of the padded input (max pooling: the
running maximum of the k*k strided views, one per window offset). Gradients are
registered ops that are adjoint pairs, so they differentiate again:
``_pool_scatter`` (avg/sum/lp: spread ``gy`` over each window; its gradient is
Pooling itself) and ``_pool_max_scatter``/``_pool_max_gather`` (route ``gy`` to
and from the first maximum of each window).

A recorded max pooling that the numba kernels run keeps where each window's first
maximum is, as a hidden output (``workspace``, as MXNet's oneDNN Pooling has one), so
that an unrecorded backward only adds ``gy`` there, without searching the windows
again.
"""
import collections
import itertools
import math

import numpy as np

from ... import nd
from ...autograd import _state as _ag_state
from ...base import MXNetError, parse_shape, parse_int, parse_bool, optional
from ...engine import parallel_parts, parallel_copy
from ..registry import register_op, Param
from ..batchwise import rows
from . import _fast_pool
from .convolution import LAYOUTS, check_layout, pad_spatial, windows

_CONVENTIONS = ("valid", "full", "same")


def _geometry(p, shape):
    """(kernel, stride, pad_before, pad_after, out) for data of ``shape``."""
    nsp = len(shape) - 2
    if nsp < 1 or nsp > 3:
        raise MXNetError("Pooling: data must be 3-D, 4-D or 5-D (N, C, spatial...), got shape %s"
                         % (tuple(shape),))
    check_layout("Pooling", p, len(shape))
    size = tuple(shape[2:])
    if p.global_pool:
        return size, (1,) * nsp, (0,) * nsp, (0,) * nsp, (1,) * nsp
    kernel = tuple(p.kernel)
    if len(kernel) != nsp or any(k <= 0 for k in kernel):
        raise MXNetError("Pooling: kernel=%s must have %d positive entries for data of shape %s"
                         % (kernel, nsp, tuple(shape)))
    stride = tuple(p.stride) if p.stride else (1,) * nsp
    pad = tuple(p.pad) if p.pad else (0,) * nsp
    if len(stride) != nsp or len(pad) != nsp:
        raise MXNetError("Pooling: stride=%s and pad=%s must have %d entries like kernel=%s"
                         % (stride, pad, nsp, kernel))
    out, before, after = [], [], []
    for n, k, s, q in zip(size, kernel, stride, pad):
        if p.pooling_convention == "same":
            o = -(-n // s)
            total = max((o - 1) * s + k - n, 0)
            q = total // 2
        elif n + 2 * q < k:
            raise MXNetError("Pooling: kernel=%s is larger than the padded input (size %s, "
                             "pad=%s)" % (kernel, size, pad))
        elif p.pooling_convention == "full":
            o = -(-(n + 2 * q - k) // s) + 1
        else:
            o = (n + 2 * q - k) // s + 1
        out.append(o)
        before.append(q)
        after.append(max((o - 1) * s + k - n - q, 0))
    return kernel, stride, tuple(before), tuple(after), tuple(out)


def _window_view(xp, x, kernel, stride, before, after, out, fill):
    xpad = pad_spatial(xp, x, before, after, fill)
    return windows(xp, xpad, kernel, stride, (1,) * len(kernel), out)[:, 0]


def _offset_slices(off, stride, out):
    """Index of the (N, C, *out) strided view holding window offset ``off`` of every window."""
    return (slice(None), slice(None)) + tuple(
        slice(o, o + s * (m - 1) + 1, s) for o, s, m in zip(off, stride, out))


def _offsets(kernel):
    return itertools.product(*[range(k) for k in kernel])


def _max_fill(x):
    return -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min


def _window_max(xp, planes, kernel, stride, out):
    """Maximum of every window of the padded input, given as :func:`_phase_planes`.

    NOTE: the maximum of k*k (N, C, *out) views is many times faster than reducing
    the (N, C, *out, *kernel) window view, whose inner loops are k long. The maximum
    does not depend on the order, so the result is the same.
    """
    y = xp.empty(planes.shape[:2] + tuple(out), dtype=planes.dtype)

    def part(at):
        ys, pl = y[at], planes[at]
        for i, off in enumerate(_offsets(kernel)):
            v = _phase_view(pl, off, stride, out)
            if i:
                xp.maximum(ys, v, out=ys)
            else:
                xp.copyto(ys, v)
    parallel_parts(part, y.shape[:2], planes.nbytes, xp)
    return y


def _avg_count(xp, p, shape, kernel, stride, before, after, out, dtype):
    """Per-window divisor: positions inside the padded (or, without count_include_pad,
    the original) input, as MXNet counts them."""
    include = p.count_include_pad is None or p.count_include_pad
    size = shape[2:]
    full = tuple(n + b + a for n, b, a in zip(size, before, after))
    m = xp.zeros((1, 1) + full, dtype=dtype)
    region = tuple(slice(0 if include else b, (b + n + b) if include else b + n)
                   for n, b in zip(size, before))
    m[(0, 0) + region] = 1
    v = windows(xp, m, kernel, stride, (1,) * len(kernel), out)[:, 0]
    return v.sum(axis=tuple(range(-len(kernel), 0)))


def _lp(p):
    if p.p_value is None:
        raise MXNetError("Pooling: pool_type='lp' needs p_value (e.g. p_value=2)")
    return p.p_value


def _max_pool(p, xp, x, kernel, stride, before, after, out):
    y = _fast_pool.max_pool2d(x, kernel, stride, before, out)
    if y is not None:
        return y
    planes = _phase_planes(xp, x, kernel, stride, before, after, _max_fill(x))
    return _window_max(xp, planes, kernel, stride, out)


def _sum_pool(p, xp, x, kernel, stride, before, after, out):
    if _whole_maps(p, x):
        return x.reshape(x.shape[:2] + (-1,)).sum(axis=2).reshape(x.shape[:2] + out)
    v = _window_view(xp, x, kernel, stride, before, after, out, 0)
    return v.sum(axis=tuple(range(-len(kernel), 0)))


def _avg_pool(p, xp, x, kernel, stride, before, after, out):
    y = _sum_pool(p, xp, x, kernel, stride, before, after, out)
    if _whole_maps(p, x):
        return y / y.dtype.type(np.prod(kernel))
    return y / _avg_count(xp, p, x.shape, kernel, stride, before, after, out, x.dtype)


def _whole_maps(p, x):
    """Whether a global pooling of float data ``x`` reads each map as one contiguous row:
    the window view's sum runs over the same row (its axes merged), so the row's sum
    and the division by its size are the values of the windows' passes, bit for bit.

    NOTE: ResNet-50 b1's global pooling (2048 maps of 7x7) 47 us against 63 warm."""
    return p.global_pool and x.dtype.kind == "f" and x.flags.c_contiguous


def _lp_pool(p, xp, x, kernel, stride, before, after, out):
    pv = _lp(p)
    v = _window_view(xp, x, kernel, stride, before, after, out, 0)
    return _lp_root(xp, (v ** pv if pv != 1 else v).sum(axis=tuple(range(-len(kernel), 0))), pv)


def _compute(p, xp, x):
    geometry = _geometry(p, x.shape)
    kind = _POOLS[p.pool_type]
    if kind.indexed is not None and _ag_state.recording:
        found = kind.indexed(x, *geometry)
        if found is not None:
            return found
    return kind.pool(p, xp, x, *geometry).astype(x.dtype, copy=False), _no_index(xp)


def _no_index(xp):
    """The hidden ``workspace`` output of a pooling that keeps no places of maxima."""
    return xp.empty((0,), dtype=np.int32)


def _max_indexed(x, kernel, stride, before, after, out):
    """(y, the places of the windows' first maxima) by the numba kernel, or None."""
    return _fast_pool.max_pool2d(x, kernel, stride, before, out, index=True)


def _lp_root(xp, s, pv):
    # NOTE: MXNet keeps the sign for odd p (cbrt of a negative sum is negative).
    if pv == 1:
        return s
    if pv == 2:
        return xp.sqrt(s)
    if pv == 3:
        return xp.cbrt(s)
    return xp.sign(s) * xp.abs(s) ** (1.0 / pv)


def _kwargs(p):
    return dict(p.items())


def _max_grad(p, x, y, gy):
    return nd._internal._pool_max_scatter(x, gy, y, **_kwargs(p))


def _window_grad(p, x, y, gy):
    return nd._internal._pool_scatter(gy, in_shape=x.shape, **_kwargs(p))


def _lp_grad(p, x, y, gy):
    # dy/dx = x^(p-1) / y^(p-1) inside each window
    pv = _lp(p)
    kw = dict(_kwargs(p), pool_type="sum")
    if pv == 1:
        return nd._internal._pool_scatter(gy, in_shape=x.shape, **kw)
    g = gy / y ** (pv - 1)
    return nd._internal._pool_scatter(g, in_shape=x.shape, **kw) * x ** (pv - 1)


def _gradient(p, x, y, gy, need):
    index = y[1] if len(y) > 1 else None
    if index is not None and index.size and _ag_state.raw:
        kernel, stride = _geometry(p, x[0].shape)[:2]
        gx = _fast_pool.max_pool2d_scatter(index, gy[0], x[0].shape,
                                           overlap=any(s < k for s, k in zip(stride, kernel)))
        if gx is not None:
            return [gx]
    return [_POOLS[p.pool_type].gradient(p, x[0], y[0], gy[0])]


# One pool_type: ``pool(p, xp, x, *geometry)``, ``gradient(p, x, y, gy)``, the
# per-window ``divisor`` its scatter divides by (None: none), and ``indexed(x,
# *geometry)``: the pooling and its hidden output where a recorded forward keeps one
# (None where it cannot: then the hidden output is empty).
_Pool = collections.namedtuple("_Pool", "pool gradient divisor indexed", defaults=(None, None))


# pool_type -> its kernels: the table the param's choices come from.
_POOLS = {"max": _Pool(_max_pool, _max_grad, indexed=_max_indexed),
          "avg": _Pool(_avg_pool, _window_grad, _avg_count),
          "sum": _Pool(_sum_pool, _window_grad), "lp": _Pool(_lp_pool, _lp_grad)}


_PARAMS = [
    Param("kernel", parse_shape, (), "Window size (ignored with global_pool).", low=1),
    Param("pool_type", None, "max", choices=_POOLS),
    Param("global_pool", parse_bool, False, "Pool over the whole spatial extent."),
    Param("cudnn_off", parse_bool, False, "Ignored."),
    Param("pooling_convention", None, "valid",
          "valid (floor), full (ceil) or same (ceil(size / stride)).", choices=_CONVENTIONS),
    Param("stride", parse_shape, (), "Stride per spatial dim; 1 if empty.", low=1),
    Param("pad", parse_shape, (), "Padding per spatial dim; 0 if empty.", low=0),
    Param("p_value", optional(parse_int), None, "The p of lp pooling.", low=1),
    Param("count_include_pad", optional(parse_bool), None,
          "avg: count padded positions in the divisor (default True)."),
    Param("layout", None, None, "Channels first only (MXNet runs the channels-last ones "
          "on GPUs only).", choices=LAYOUTS),
]

def _infer_shape(p, shapes):
    """The output shape from the geometry, without pooling full-size dummies."""
    d = shapes[0]
    if d is None or 0 in d:
        return list(shapes)
    out = _geometry(p, d)[-1]
    return list(shapes), [tuple(d[:2]) + tuple(out), (0,)]


register_op("Pooling", _compute, gradient=_gradient, params=_PARAMS, saves="xy",
            num_outputs=2, num_visible_outputs=1, output_names=("output", "workspace"),
            infer_shape=_infer_shape, batchwise=rows(),
            doc="Pooling over 1, 2 or 3 spatial dims: ``max``, ``avg``, ``sum`` or ``lp``.")


# -- gradient ops ------------------------------------------------------------------------

def _scatter(p, xp, gy, in_shape=None):
    """Spread each window's ``gy`` over its input positions (avg divides by the count)."""
    shape = tuple(p.in_shape if in_shape is None else in_shape)
    kernel, stride, before, after, out = _geometry(p, shape)
    divisor = _POOLS[p.pool_type].divisor
    if divisor is not None:
        gy = gy / divisor(xp, p, shape, kernel, stride, before, after, out, gy.dtype)
    full = tuple(n + b + a for n, b, a in zip(shape[2:], before, after))
    gx = xp.zeros(shape[:2] + full, dtype=gy.dtype)
    for off in _offsets(kernel):
        gx[_offset_slices(off, stride, out)] += gy
    crop = tuple(slice(b, b + n) for b, n in zip(before, shape[2:]))
    return xp.ascontiguousarray(gx[(slice(None), slice(None)) + crop])


def _scatter_grad(p, x, y, gy, need):
    kw = {k: v for k, v in p.items() if k != "in_shape"}
    return [nd.Pooling(gy[0], **kw)]


register_op("_pool_scatter", _scatter, gradient=_scatter_grad, saves="",
            params=_PARAMS + [Param("in_shape", parse_shape, doc="The pooled input's shape.")],
            doc="Gradient of avg/sum Pooling: each window's gradient spread over the window.")


def _argmax_index(xp, p, x):
    """Flat index, into the padded input, of the first maximum of every window."""
    kernel, stride, before, after, out = _geometry(p, x.shape)
    v = _window_view(xp, x, kernel, stride, before, after, out, _max_fill(x))
    k = v.reshape(v.shape[:2 + len(out)] + (-1,)).argmax(axis=-1)
    offs = xp.unravel_index(k, kernel)
    full = tuple(n + b + a for n, b, a in zip(x.shape[2:], before, after))
    grids = xp.indices(out)
    flat = 0
    for i in range(len(out)):
        flat = flat * full[i] + grids[i] * stride[i] + offs[i]
    nc = x.shape[0] * x.shape[1]
    base = xp.arange(nc).reshape(x.shape[:2] + (1,) * len(out)) * int(np.prod(full))
    return flat + base, full, before


def _tiled_max_scatter(xp, x, gy, y, kernel, out):
    """:func:`_max_scatter` for windows that tile the input (stride = kernel, no
    padding): with the input viewed as (N, C, o1, k1, o2, k2, ...), one pass per
    kernel offset compares that offset's elements with ``y`` and writes ``gy`` (or 0)
    straight into its places of the result (several times faster than the general
    path's masked adds). None when a window has no or several maxima (NaN, ties) or
    ``gy`` is not finite (0 * inf): the general path handles those."""
    if not bool(xp.isfinite(gy).all()):
        return None
    n, c = x.shape[:2]
    covered = tuple(o * k for o, k in zip(out, kernel))
    split = (n, c) + tuple(v for o, k in zip(out, kernel) for v in (o, k))
    crop = (slice(None), slice(None)) + tuple(slice(0, m) for m in covered)
    full = tuple(x.shape[2:]) == covered
    x6 = (x if full else x[crop]).reshape(split)
    g = xp.empty((n, c) + covered, dtype=gy.dtype)
    g6 = g.reshape(split)
    hits = xp.zeros(y.shape, dtype=np.uint8 if math.prod(kernel) < 255 else np.int32)

    def part(nc):
        xs, gs, ys, gys, hs = x6[nc], g6[nc], y[nc], gy[nc], hits[nc]
        for off in _offsets(kernel):
            at = (slice(None), slice(None)) + tuple(v for a in off for v in (slice(None), a))
            hit = xs[at] == ys
            hs += hit
            xp.multiply(hit, gys, out=gs[at])
    parallel_parts(part, y.shape[:2], g.nbytes, xp)
    if bool((hits != 1).any()):
        return None
    if full:
        return g
    gx = xp.zeros(x.shape, dtype=gy.dtype)
    gx[crop] = g
    return gx


def _max_scatter(p, xp, x, gy, y):
    """``gy`` of every window added at the window's first maximum (row-major order);
    ``y``: the pooled output.

    One pass per window offset over (N, C, *out) views: the offsets are visited in
    row-major order and ``taken`` marks the windows whose maximum was already found,
    so each window routes its gradient exactly once. Every pass writes into buffers
    made once (no masked or branching loops: a mask with one hit in k*k makes those
    mispredict), on :func:`_phase_planes` where overlapping windows have strides.
    """
    kernel, stride, before, after, out = _geometry(p, x.shape)
    gx = _fast_pool.max_pool2d_grad(x, gy, y, kernel, stride, before)
    if gx is not None:
        return gx
    if tuple(stride) == tuple(kernel) and not any(before) and not any(after):
        gx = _tiled_max_scatter(xp, x, gy, y, kernel, out)
        if gx is not None:
            return gx
    planes = _phase_planes(xp, x, kernel, stride, before, after, _max_fill(x))
    # NOTE: a window holding NaN has the maximum NaN; its first NaN takes the gradient.
    nan = x.dtype.kind == "f" and bool(xp.isnan(y).any())
    masked = bool(xp.isfinite(gy).all())        # else 0 * inf would leak NaN: use where
    g = xp.zeros(planes.shape, dtype=gy.dtype)

    def part(nc):
        pl, gs, ys, gys = planes[nc], g[nc], y[nc], gy[nc]
        hit = xp.empty(ys.shape, dtype=bool)
        taken = xp.zeros(ys.shape, dtype=bool)
        routed = xp.empty(ys.shape, dtype=gy.dtype)
        for off in _offsets(kernel):
            v = _phase_view(pl, off, stride, out)
            xp.equal(v, ys, out=hit)
            if nan:
                hit |= v != v
            xp.greater(hit, taken, out=hit)         # hit and not taken
            xp.logical_or(taken, hit, out=taken)
            if masked:
                xp.multiply(gys, hit, out=routed)
            else:
                routed = xp.where(hit, gys, 0)
            dst = _phase_view(gs, off, stride, out)
            xp.add(dst, routed, out=dst)
    parallel_parts(part, y.shape[:2], g.nbytes, xp)
    return _from_phase_planes(xp, g, x.shape, before, stride)


def _phase_planes(xp, x, kernel, stride, before, after, fill):
    """``x`` (N, C, *S) padded by ``before``/``after`` with ``fill``, as the contiguous
    planes (N, C, *stride, *(P / stride)) of its positions by phase (index mod stride),
    each padded size P rounded up to a multiple of its stride: a strided window offset
    is then a shifted block of one plane, whose rows are contiguous (elementwise
    passes over them run several times faster than over every s-th element).

    Just the padded array (N, C, *P) where the windows do not overlap (each input
    position read once: the planes cost more than they save) or every stride is 1;
    :func:`_phase_view` tells the two apart by their rank."""
    if math.prod(kernel) <= math.prod(stride) or all(s == 1 for s in stride):
        return pad_spatial(xp, x, before, after, fill)
    size = x.shape[2:]
    planes = tuple(-(-(b + m + a) // s) for b, m, a, s in zip(before, size, after, stride))
    out = xp.empty(x.shape[:2] + tuple(stride) + planes, dtype=x.dtype)

    def part(nc):
        o, xs = out[nc], x[nc]
        o.fill(fill)
        for phase, src, dst in _phase_copies(before, size, stride):
            o[(slice(None), slice(None)) + phase + dst] = xs[(slice(None), slice(None)) + src]
    parallel_parts(part, x.shape[:2], out.nbytes, xp)
    return out


def _from_phase_planes(xp, planes, shape, before, stride):
    """The (N, C, *S) array of ``shape`` inside :func:`_phase_planes` (padding left out)."""
    x = xp.empty(shape, dtype=planes.dtype)
    if planes.ndim == len(shape):
        crop = tuple(slice(b, b + m) for b, m in zip(before, shape[2:]))
        return parallel_copy(xp, x, planes[(slice(None), slice(None)) + crop])

    def part(nc):
        xs, pl = x[nc], planes[nc]
        for phase, src, dst in _phase_copies(before, shape[2:], stride):
            xs[(slice(None), slice(None)) + src] = pl[(slice(None), slice(None)) + phase + dst]
    parallel_parts(part, shape[:2], x.nbytes, xp)
    return x


def _phase_copies(before, size, stride):
    """(phase, slices of the input, slices of its plane) for each phase: the input
    positions i with (i + before) % stride == phase, and where their plane holds them."""
    per_dim = []
    for b, m, s in zip(before, size, stride):
        dim = []
        for ph in range(s):
            i0 = (ph - b) % s               # the first input index of this phase
            j0 = (i0 + b) // s
            dim.append((ph, slice(i0, m, s), slice(j0, j0 + len(range(i0, m, s)))))
        per_dim.append(dim)
    for combo in itertools.product(*per_dim):
        yield tuple(c[0] for c in combo), tuple(c[1] for c in combo), tuple(c[2] for c in combo)


def _phase_view(planes, off, stride, out):
    """The (N, C, *out) view of window offset ``off`` in :func:`_phase_planes`."""
    if planes.ndim == 2 + len(stride):
        return planes[_offset_slices(off, stride, out)]
    return planes[(slice(None), slice(None)) + tuple(o % s for o, s in zip(off, stride))
                  + tuple(slice(o // s, o // s + m) for o, s, m in zip(off, stride, out))]


def _max_gather(p, xp, x, g):
    idx, full, before = _argmax_index(xp, p, x)
    after = tuple(f - m - b for f, m, b in zip(full, x.shape[2:], before))
    gp = pad_spatial(xp, g, before, after, 0)
    return gp.reshape(-1)[idx]


def _max_scatter_grad(p, x, y, gy, need):
    return [nd.zeros_like(x[0]), nd._internal._pool_max_gather(x[0], gy[0], **dict(p.items())),
            None]


def _max_gather_grad(p, x, y, gy, need):
    kw = dict(p.items())
    return [nd.zeros_like(x[0]),
            nd._internal._pool_max_scatter(x[0], gy[0], nd.Pooling(x[0], **kw), **kw)]


register_op("_pool_max_scatter", _max_scatter, gradient=_max_scatter_grad, saves="x",
            inputs=("data", "grad", "pooled"), params=_PARAMS,
            doc="Gradient of max Pooling: ``grad`` routed to each window's first maximum "
                "(``pooled``: the pooled data).")
register_op("_pool_max_gather", _max_gather, gradient=_max_gather_grad, saves="x",
            inputs=("data", "grad"), params=_PARAMS,
            doc="``grad`` read at each window's first maximum (adjoint of _pool_max_scatter).")
