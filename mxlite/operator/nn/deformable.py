"""``_contrib_DeformableConvolution`` (Dai et al. 2017), with MXNet 1.9.1's sampling.

Every kernel tap ``k = (i, j)`` of every output position reads the input at
``(h_out * stride - pad + i * dilate + dy, w_out * stride - pad + j * dilate + dx)``
where ``(dy, dx)`` are channels ``2 * k`` and ``2 * k + 1`` of the offset's deformable
group (y before x). As MXNet's CPU kernel does:

- a sample point outside ``[0, H) x [0, W)`` reads 0 (no partial reads from the
  border: a point at ``y = -0.5`` is 0, not half of row 0);
- a point in the last row or column (``y >= H - 1``) reads that row alone (its
  bilinear weight on the missing row below is dropped, not renormalised), so
  the gradient with respect to the offset is 0 along that axis there.

The kernel builds the deformed columns ``(N, C * K, L)`` with one gather per
bilinear corner over all taps at once, and multiplies them with the weight per
group, as im2col does. The gradients (data, offset, weight) come from a
registered backward op on the same sampling plan; the data gradient scatters
with ``bincount``. Second-order gradients are not supported (MXNet has none).
"""
import numpy as np

from ... import nd
from ...base import MXNetError, parse_shape, parse_int, parse_bool
from ..registry import register_op, Param
from ..util import no_second_order
from .convolution import geometry, conv_out_size

_NAME = "DeformableConvolution"


# -- geometry and checks --------------------------------------------------------------

# The inputs after data: DCNv1's, and DCNv2's (deformable_modulated.py), which adds a mask.
_INPUTS = ("offset", "weight", "bias")


def _geometry(p, data_shape, name=_NAME):
    """(kernel, stride, dilate, pad, out) of 4-D data of shape ``data_shape``."""
    if len(data_shape) != 4:
        raise MXNetError("%s: data must be 4-D (batch, channel, height, width), got shape %s"
                         % (name, tuple(data_shape)))
    kernel, stride, dilate, pad = geometry(p, 2, name)
    out = tuple(conv_out_size(name, data_shape[2:], kernel, stride, dilate, pad))
    return kernel, stride, dilate, pad, out


def _check_groups(p, channels, name):
    g, dg = p.num_group, p.num_deformable_group
    if g <= 0 or channels % g or p.num_filter % g:
        raise MXNetError("%s: num_group=%d must divide the input channels (%d) and num_filter "
                         "(%d)" % (name, g, channels, p.num_filter))
    if dg <= 0 or channels % dg:
        raise MXNetError("%s: num_deformable_group=%d must divide the input channels (%d)"
                         % (name, dg, channels))


def _shapes(p, dshape, inputs=_INPUTS, name=_NAME):
    """The shapes MXNet expects for ``inputs`` (offset, [mask,] weight, bias) with data of
    shape ``dshape``."""
    kernel, _, _, _, out = _geometry(p, dshape, name)
    _check_groups(p, dshape[1], name)
    taps = kernel[0] * kernel[1] * p.num_deformable_group
    shapes = {"offset": (dshape[0], 2 * taps) + out, "mask": (dshape[0], taps) + out,
              "weight": (p.num_filter, dshape[1] // p.num_group) + tuple(kernel),
              "bias": (p.num_filter,)}
    return [shapes[i] for i in inputs]


def _check_inputs(p, data, others, inputs=_INPUTS, name=_NAME):
    """Raise unless ``others`` (the arrays of ``inputs``; None where absent) fit data."""
    for what, a, shape in zip(inputs, others, _shapes(p, data.shape, inputs, name)):
        if a is not None and tuple(a.shape) != shape:
            raise MXNetError("%s: %s has shape %s, expected %s for data of shape %s, kernel=%s, "
                             "num_filter=%d, num_group=%d and num_deformable_group=%d"
                             % (name, what, tuple(a.shape), shape, tuple(data.shape),
                                tuple(p.kernel), p.num_filter, p.num_group,
                                p.num_deformable_group))


def infer_shapes(inputs=_INPUTS, name=_NAME):
    """The ``infer_shape`` rule of a deformable convolution taking data then ``inputs``."""
    def rule(p, shapes):
        shapes = list(shapes)
        d = shapes[0]
        if d is None or len(d) != 4 or 0 in d:
            return shapes
        for i, want in enumerate(_shapes(p, d, inputs, name)[:len(shapes) - 1], 1):
            got = shapes[i]
            if got is None or len(got) == 0 or 0 in got:
                shapes[i] = want
            elif tuple(got) != want:
                raise MXNetError("%s: %s has shape %s, expected %s for data of shape %s"
                                 % (name, inputs[i - 1], tuple(got), want, tuple(d)))
        return shapes
    return rule


# -- the sampling plan -----------------------------------------------------------------

class _Plan:
    """Where every tap of every output position samples, per deformable group.

    Arrays have shape (N, dg, K * L): ``lo``/``hi`` flat corner rows and columns,
    ``ly``/``lx`` the fractional parts (0 on a clamped last row/column), ``valid``
    the points inside the map. Invalid points are clamped to (0, 0) for safe gathers
    and carry zero weight.
    """

    def __init__(self, xp, offset, shape, kernel, stride, dilate, pad, out, dg):
        n, _, h, w = shape
        dt = offset.dtype
        kh, kw = kernel
        k, ho, wo = kh * kw, out[0], out[1]
        off = offset.reshape(n, dg, k, 2, ho * wo)
        ti, tj = np.divmod(np.arange(k), kw)
        rows = np.arange(ho) * stride[0] - pad[0]
        cols = np.arange(wo) * stride[1] - pad[1]
        base_y = rows[None, :, None] + (ti * dilate[0])[:, None, None]
        base_x = cols[None, None, :] + (tj * dilate[1])[:, None, None]
        base_y = np.broadcast_to(base_y, (k, ho, wo)).reshape(k, -1)
        base_x = np.broadcast_to(base_x, (k, ho, wo)).reshape(k, -1)
        # NOTE: integer base + DType offset, in DType (as MXNet's index_t + DType).
        y = xp.asarray(base_y.astype(dt)) + off[:, :, :, 0]
        x = xp.asarray(base_x.astype(dt)) + off[:, :, :, 1]
        self.valid = ((y >= 0) & (x >= 0) & (y < h) & (x < w)).reshape(n, dg, -1)
        self.ylo, self.yhi, self.ly = self._axis(xp, y, h, dt)
        self.xlo, self.xhi, self.lx = self._axis(xp, x, w, dt)
        self.xp, self.w, self.k, self.l = xp, w, k, ho * wo

    def _axis(self, xp, v, size, dt):
        n, dg = v.shape[:2]
        with np.errstate(invalid="ignore"):
            lo = xp.floor(v)
        lo = xp.clip(xp.nan_to_num(lo), -1, size).astype(np.int64)
        edge = lo >= size - 1
        lo = xp.where(edge, size - 1, lo)
        hi = xp.where(edge, size - 1, lo + 1)
        frac = xp.where(edge, dt.type(0), v - lo.astype(dt))
        lo, hi = xp.clip(lo, 0, size - 1), xp.clip(hi, 0, size - 1)
        return lo.reshape(n, dg, -1), hi.reshape(n, dg, -1), frac.reshape(n, dg, -1)

    def corners(self):
        """((flat index, bilinear weight) for the four corners), MXNet's w1..w4 order."""
        xp_where = self.xp.where
        one = self.ly.dtype.type(1)
        hy, hx = one - self.ly, one - self.lx
        zero = self.ly.dtype.type(0)
        mask = self.valid
        pts = ((self.ylo, self.xlo, hy * hx), (self.ylo, self.xhi, hy * self.lx),
               (self.yhi, self.xlo, self.ly * hx), (self.yhi, self.xhi, self.ly * self.lx))
        return [(r * self.w + c, xp_where(mask, wt, zero)) for r, c, wt in pts]


def _gather(xp, data, idx):
    """``data`` (N, dg, Cg, H*W) read at ``idx`` (N, dg, K*L): (N, dg, Cg, K*L)."""
    return xp.take_along_axis(data, idx[:, :, None, :], axis=3)


def _plan(p, xp, data_shape, offset):
    kernel, stride, dilate, pad, out = _geometry(p, data_shape)
    return _Plan(xp, offset, data_shape, kernel, stride, dilate, pad, out,
                 p.num_deformable_group), kernel, out


def _columns(p, xp, data, offset):
    """Deformed im2col columns (N, C, K, L) (rows c * K + k, as MXNet's) and the plan."""
    plan, kernel, out = _plan(p, xp, data.shape, offset)
    n, c = data.shape[:2]
    dg = p.num_deformable_group
    d = data.reshape(n, dg, c // dg, -1)
    cols = None
    for idx, wt in plan.corners():
        term = wt[:, :, None, :] * _gather(xp, d, idx)
        cols = term if cols is None else cols + term
    k = kernel[0] * kernel[1]
    return cols.reshape(n, c, k, -1), plan, kernel, out


# -- forward ---------------------------------------------------------------------------

def _deform_conv(p, xp, data, offset, weight, bias=None):
    _check_inputs(p, data, (offset, weight, bias))
    cols, _, kernel, out = _columns(p, xp, data, offset)
    n, c = data.shape[:2]
    g, f = p.num_group, p.num_filter
    cols = cols.reshape(n, g, -1, cols.shape[-1])                    # (N, G, Cg*K, L)
    y = xp.matmul(weight.reshape(1, g, f // g, -1), cols)            # (N, G, Fg, L)
    y = y.reshape((n, f) + tuple(out))
    if bias is not None:
        y = y + bias.reshape(1, -1, 1, 1)
    return y.astype(data.dtype, copy=False)


# -- backward --------------------------------------------------------------------------

def _backward(p, xp, gy, data, offset, weight, need=(True, True, True)):
    """(gdata, goffset, gweight) of DeformableConvolution for head gradient ``gy``."""
    n, c, h, w = data.shape
    g, f, dg = p.num_group, p.num_filter, p.num_deformable_group
    cols, plan, kernel, out = _columns(p, xp, data, offset)
    k, l = kernel[0] * kernel[1], out[0] * out[1]
    gy = gy.reshape(n, g, f // g, l)
    gdata = goff = gw = None
    if need[2]:
        gw = xp.matmul(gy, xp.swapaxes(cols.reshape(n, g, -1, l), 2, 3)).sum(axis=0)
        gw = gw.reshape(weight.shape).astype(data.dtype, copy=False)
    if not (need[0] or need[1]):
        return gdata, goff, gw
    wt = xp.swapaxes(weight.reshape(g, f // g, -1), 1, 2)[None]       # (1, G, Cg*K, Fg)
    gcols = xp.matmul(wt, gy).reshape(n, dg, c // dg, k * l)         # (N, dg, Cd, K*L)
    corners = plan.corners()
    if need[0]:
        gdata = _scatter(xp, gcols, corners, data.shape, dg)
    if need[1]:
        goff = _offset_grad(xp, gcols, data, plan, dg)
        goff = goff.reshape(n, dg, k, 2, out[0], out[1]).reshape(offset.shape)
    return gdata, goff, gw


def _scatter(xp, gcols, corners, shape, dg):
    """Data gradient: each column gradient added at its four corners, by weight."""
    n, c, h, w = shape
    cd = c // dg
    base = (xp.arange(n * dg * cd) * (h * w)).reshape(n, dg, cd, 1)
    total = None
    for idx, wt in corners:
        flat = (base + idx[:, :, None, :]).ravel()
        vals = (gcols * wt[:, :, None, :]).ravel()
        part = xp.bincount(flat, weights=vals, minlength=n * c * h * w)
        total = part if total is None else total + part
    return total.reshape(shape).astype(gcols.dtype, copy=False)


def _offset_grad(xp, gcols, data, plan, dg):
    """d out / d (dy, dx) of every tap, summed over the group's channels:
    (N, dg, K*L, 2) -> laid out (N, dg, K, 2, L) by the caller."""
    n, c = data.shape[:2]
    d = data.reshape(n, dg, c // dg, -1)
    v = {(a, b): _gather(xp, d, row * plan.w + col)
         for a, row in enumerate((plan.ylo, plan.yhi)) for b, col in enumerate((plan.xlo, plan.xhi))}
    return corner_offset_grad(xp, gcols, v, plan.ly, plan.lx, plan.valid.astype(gcols.dtype),
                              plan.k)


def corner_offset_grad(xp, g, v, ly, lx, valid, k):
    """d loss / d (dy, dx) of every bilinear sample, (N, dg, K, 2, L), from the column
    gradient ``g`` (N, dg, C/dg, K*L), the four corner values ``v[a, b]`` (a: the lower
    row, b: the right column), the fractions ``ly, lx`` and where a sample counts."""
    n, dg = g.shape[:2]
    one = ly.dtype.type(1)
    ly, lx = ly[:, :, None, :], lx[:, :, None, :]
    dy = (one - lx) * (v[1, 0] - v[0, 0]) + lx * (v[1, 1] - v[0, 1])
    dx = (one - ly) * (v[0, 1] - v[0, 0]) + ly * (v[1, 1] - v[1, 0])
    gy_ = (g * dy).sum(axis=2) * valid
    gx_ = (g * dx).sum(axis=2) * valid
    return xp.stack([gy_.reshape(n, dg, k, -1), gx_.reshape(n, dg, k, -1)], axis=3)


# -- registration ----------------------------------------------------------------------

def _grad(p, x, y, gy, need):
    outs = nd._internal._deformable_conv_backward(gy[0], x[0], x[1], x[2], **dict(p.items()))
    gx = [outs[0], outs[1], outs[2]]
    if not p.no_bias:
        gx.append(nd.sum(gy[0], axis=(0, 2, 3)))
    return gx


def _backward_rule(p, gy, data, offset, weight):
    """The forward's rule (:func:`_check_inputs`), and ``gy`` of the output's shape."""
    _check_inputs(p, data, (offset, weight, None))
    want = (data.shape[0], p.num_filter) + tuple(offset.shape[2:])
    if gy.shape != want:
        raise MXNetError("grad has shape %s, expected %s (the output's)" % (gy.shape, want))


_PARAMS = [
    Param("kernel", parse_shape, doc="Kernel size (h, w)."),
    Param("stride", parse_shape, (), "Stride (h, w); 1 if empty."),
    Param("dilate", parse_shape, (), "Dilation (h, w); 1 if empty."),
    Param("pad", parse_shape, (), "Zero padding (h, w); 0 if empty."),
    Param("num_filter", parse_int, doc="Number of output channels."),
    Param("num_group", parse_int, 1, "Number of groups (channels split evenly)."),
    Param("num_deformable_group", parse_int, 1,
          "Number of offset (and mask) groups; the input channels split evenly among them."),
    Param("workspace", parse_int, 1024, "Ignored (MXNet's scratch size in MB)."),
    Param("no_bias", parse_bool, False, "Whether to leave out the bias."),
    Param("layout", None, None, "NCHW only (as MXNet runs it).", choices=(None, "NCHW")),
]

register_op("_contrib_DeformableConvolution", _deform_conv,
            inputs=lambda p: ("data", "offset", "weight") if p.no_bias
            else ("data", "offset", "weight", "bias"),
            params=_PARAMS, gradient=_grad, saves="x",
            infer_shape=infer_shapes(),
            doc="2-D deformable convolution: a convolution whose every kernel tap samples "
                "the input bilinearly at its place plus a learned offset. offset: (N, "
                "num_deformable_group * 2 * kh * kw, out_h, out_w), (dy, dx) per tap; weight: "
                "(num_filter, C / num_group, kh, kw).")
register_op("_deformable_conv_backward", _backward,
            inputs=("grad", "data", "offset", "weight"), params=_PARAMS, check=_backward_rule,
            gradient=no_second_order(_NAME), saves="", num_outputs=3,
            output_names=("data_grad", "offset_grad", "weight_grad"),
            doc="Gradients (data, offset, weight) of DeformableConvolution.")
