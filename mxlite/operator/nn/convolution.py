"""Convolution and Deconvolution (1-D, 2-D, 3-D, grouped, dilated).

The kernels (``_conv_kernels``) are im2col on a strided view of the padded input and
one batched matmul over the groups; 1x1 convolutions are plain products. A stride-1
Deconvolution is the correlation with the flipped weights (the forward kernel);
a strided one scatters back with one strided add per kernel offset (never a Python
loop over pixels). The gradients are themselves
registered ops, so gradient penalties differentiate through them:

- the data gradient of Convolution is a Deconvolution, and vice versa;
- the weight gradient of both is ``_conv_weight_grad(data, grad)``, whose own
  gradient is a Deconvolution (for ``data``) and a Convolution (for ``grad``).

A recorded Convolution keeps the columns its forward built (within ``_ColsBudget``) as
a hidden output, ``cols``, which its rule hands to ``_conv_weight_grad``: they live and
die with the node, and the backward need not build them again.
"""
import itertools
import weakref

import numpy as np

from ... import nd
from ...autograd import _state as _ag_state, later
from ...base import MXNetError, parse_shape, parse_int, parse_bool
from ... import engine
from ...engine import matmul, parallel_copy, parallel_parts
from ..registry import register_op, Param
from ..batchwise import rows
from . import _conv_kernels as kern, _fast, _fast_conv, _fast_direct
from ._conv_kernels import pad_spatial, windows, prod as _prod  # noqa: F401 (pooling, misc)

_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


# -- geometry ------------------------------------------------------------------------

def _tuple(v, n, fill):
    """``v`` as an n-tuple; empty means ``fill`` everywhere."""
    return tuple(v) if v else (fill,) * n


def geometry(p, nsp, name):
    """(kernel, stride, dilate, pad) as n-tuples, checked against the data's rank."""
    kernel = tuple(p.kernel)
    if len(kernel) != nsp:
        raise MXNetError("%s: kernel=%s has %d dimension(s), expected %d for %d-D data "
                         "(layout %s)" % (name, kernel, len(kernel), nsp, nsp + 2,
                                          _LAYOUTS.get(nsp, "?")))
    if any(k <= 0 for k in kernel):
        raise MXNetError("%s: kernel=%s must be positive" % (name, kernel))
    out = [kernel]
    for arg, fill in (("stride", 1), ("dilate", 1), ("pad", 0)):
        v = _tuple(getattr(p, arg), nsp, fill)
        if len(v) != nsp:
            raise MXNetError("%s: %s=%s has %d dimension(s), expected %d like kernel=%s"
                             % (name, arg, v, len(v), nsp, kernel))
        if arg != "pad" and any(e <= 0 for e in v):
            raise MXNetError("%s: %s=%s must be positive" % (name, arg, v))
        out.append(v)
    return tuple(out)


def conv_out_size(name, size, kernel, stride, dilate, pad):
    """Output spatial size of a convolution; an error when the kernel does not fit."""
    out = []
    for i, (n, k, s, d, q) in enumerate(zip(size, kernel, stride, dilate, pad)):
        dk = d * (k - 1) + 1
        if n + 2 * q < dk:
            raise MXNetError("%s: kernel=%s (dilated size %d) is larger than the padded input "
                             "(size %d + 2*%d) in spatial dimension %d"
                             % (name, kernel, dk, n, q, i))
        out.append((n + 2 * q - dk) // s + 1)
    return tuple(out)


class _ColsBudget:
    """How many bytes of columns the recorded nodes hold (their hidden ``cols``
    outputs): a forward keeps its columns for the weight gradient while the total
    stays within ``MAX_BYTES``; each kept array gives its bytes back when it is freed
    (with its node, after the backward). Past the bound a network rebuilds its
    later layers' columns in the backward.

    NOTE: rebuilding the columns costs about a third of an im2col convolution's
    non-GEMM time in a training step. Every column of a ResNet-18 step at batch 8
    (about 460 MB) saves 8% of the step, but a hybridized step's tape holds them all
    until its backward ends: its peak RSS rose from 1.05x PyTorch's to 1.65x. This
    bound keeps about half of them (1.39x)."""

    MAX_BYTES = 256 << 20

    def __init__(self):
        self.held = 0

    def keep(self, cols):
        """Whether to keep ``cols`` (then counted until it is freed)."""
        n = cols.nbytes
        if self.held + n > self.MAX_BYTES:
            return False
        self.held += n
        weakref.finalize(cols, self._release, n)
        return True

    def _release(self, n):
        self.held -= n


_COLS = _ColsBudget()


def _no_cols(xp, dtype):
    """The hidden ``cols`` output of a convolution that keeps no columns."""
    return xp.empty((0,), dtype=dtype)


def _use_rows(x, w, groups, kernel):
    """Whether a transposed convolution (a convolution's data gradient) of ``x`` (N, Cin,
    *S) with ``w`` (Cin, F, *kernel) runs as ONE product over all N * S input positions
    rather than N per-sample products (:func:`_row2im`, adding into a channels-last
    output, whose runs of F values are contiguous): in one group, from 8 filters, where
    ``_fast_conv`` 's kernel adds its one product's blocks on (2-D, NumPy arrays of one
    float dtype, the product within ``ONE_PRODUCT_MAX_BYTES``); else where positions
    per sample are few next to the K * F values each one spreads to, as the per-sample
    products are then small.

    NOTE: by the kernel, one thread, the CPU time of the rows against the per-sample
    columns: ResNet-18's 3x3 stride-2 layer 64 -> 128 (28x28 gradient, batch 8) 0.62x,
    and 0.5-0.8x over 3x3 and 4x4 stride-2 shapes from 7x7 to 56x56 at batch 1 to 8;
    without the kernel (NumPy's adds per offset), 1.25-1.7x at 28x28 and 56x56. That
    layer's whole backward at 2 threads (the data gradient beside the weight gradient),
    alternated: 35.9 -> 29.8 ms (least of 30), 45 -> 38 (median)."""
    f = w.shape[1]
    if groups != 1 or f < 8:
        return False
    size = x.shape[2:]
    if (len(kernel) == 2 and type(x) is np.ndarray and type(w) is np.ndarray
            and x.dtype == w.dtype and x.dtype in _fast._DTYPES
            and x.shape[0] * _prod(size) * f * _prod(kernel) * x.itemsize <= ONE_PRODUCT_MAX_BYTES
            and _fast.kernels() is not None):
        return True
    return _prod(size) <= f * _prod(kernel)


def conv_nd(xp, x, w, kernel, stride, dilate, pad, groups, need_cols=False, inference=False,
            bias=None):
    """Grouped N-D cross-correlation of ``x`` (N, C, *S) with ``w`` (F, C/G, *kernel)
    (plus ``bias`` per channel, if given), and the columns it was computed from (None
    for a 1x1 convolution, which has none, for a kernel that builds none, unless
    ``need_cols``, and for one by blocks of output rows, whose weight gradient builds
    its own blocks). ``inference``: an unrecorded forward (not a gradient's pass),
    which may run an inference kernel."""
    out = conv_out_size("Convolution", x.shape[2:], kernel, stride, dilate, pad)
    if kern.is_pointwise(kernel, pad, dilate, groups):
        # (the direct kernel tried once a call: it keeps its packed weights from the
        # second call that sees them)
        added = xp is np and bias is not None and bias.dtype == x.dtype
        y = _fast_direct.pointwise(x, w, stride, _bias_epilogue(bias)) if added else None
        if y is None:
            y = kern.add_bias(kern.pointwise(xp, x, w, stride, direct=not added), bias)
        return y, None
    return kern.correlate(xp, x, w, kernel, stride, dilate, pad, groups, out,
                          need_cols=need_cols, inference=inference, bias=bias)


def _bias_epilogue(b):
    """The bias ``b`` as the epilogue of ``_fast_direct`` 's kernel, added to each part of
    the output as it is made: ``(z - 0) * 1 + b``, the bits of ``z + b`` (no pass after)."""
    return np.zeros_like(b), np.ones_like(b), b, None, False


def conv_weight_grad(xp, x, gy, kernel, stride, dilate, pad, groups, cols=None):
    """d<gy, conv(x, w)>/dw: shape (F, C/G, *kernel). ``cols``: the columns (or the
    Winograd input tiles) of ``x`` its forward kept, if any (else they are made again)."""
    out = gy.shape[2:]
    if kern.is_pointwise(kernel, pad, dilate, groups):
        return kern.pointwise_weight_grad(xp, x, gy, stride)
    cols = cols if cols is not None and cols.size else None
    gw = _fast.weight_grad3x3(x, gy, kernel, stride, dilate, pad, groups, cols)
    if gw is not None:
        return gw
    if cols is None and kern.blocked(xp, x.shape[1], kernel, stride, dilate, groups, out):
        return kern.blocked_weight_grad(x, gy, kernel, stride, pad)
    if cols is None or cols.shape[1] != x.shape[1] // groups * _prod(kernel):  # not im2col's
        cols = kern.build_cols(xp, x, kernel, stride, dilate, pad, groups, out,
                               filters=gy.shape[1])
    gw = kern.cols_weight_grad(xp, cols, gy, groups, x.shape[1])
    return gw.reshape((gy.shape[1], x.shape[1] // groups) + tuple(kernel))


def deconv_out_size(name, size, kernel, stride, dilate, pad, adj):
    out = tuple((n - 1) * s + d * (k - 1) + 1 + a - 2 * q
                for n, k, s, d, q, a in zip(size, kernel, stride, dilate, pad, adj))
    if any(o <= 0 for o in out):
        raise MXNetError("%s: output size %s is not positive for input size %s, kernel=%s, "
                         "stride=%s, pad=%s" % (name, out, tuple(size), kernel, stride, pad))
    return out


def deconv_nd(xp, x, w, kernel, stride, dilate, pad, adj, groups):
    """Grouped N-D transposed convolution of ``x`` (N, Cin, *S) with ``w`` (Cin, F/G, *k)."""
    n, cin = x.shape[:2]
    out = deconv_out_size("Deconvolution", x.shape[2:], kernel, stride, dilate, pad, adj)
    if kern.is_pointwise(kernel, pad, dilate, groups):
        return kern.transposed_pointwise(xp, x, w, stride, out)
    if all(s == 1 for s in stride) and 4 * _prod(out) <= 5 * _prod(x.shape[2:]):
        return kern.transposed_stride1(xp, x, w, kernel, dilate, pad, adj, groups)
    full = tuple(o + 2 * q for o, q in zip(out, pad))
    if _use_rows(x, w, groups, kernel):
        y = _row2im(xp, x, w, kernel, stride, dilate, full)
    else:
        y = _col2im(xp, x, w, kernel, stride, dilate, groups, full)
    crop = tuple(slice(q, q + o) for q, o in zip(pad, out))
    return parallel_copy(xp, xp.empty(y.shape[:2] + tuple(out), dtype=y.dtype),
                         y[(slice(None), slice(None)) + crop])


def _row2im(xp, x, w, kernel, stride, dilate, full):
    """The transposed convolution as products over all N * S input positions at once:
    (N * S, Cin) x (Cin, F) gives an offset's contiguous (N, *S, F) block, added onto
    the channels-last output at its (strided) place (runs of S_last * F values); the
    result is then made channels-first. With ``_fast_conv`` 's kernel (2-D), ONE
    product (N * S, Cin) x (Cin, K * F) gives every offset's block (where they fit
    ``ONE_PRODUCT_MAX_BYTES``), which the kernel adds on in NumPy's order (the
    products may round as BLAS orders each shape's sums).

    NOTE: LeNet's second layer at batch 64 (Cin 50, F 20, 8x8 inputs): 25 products
    of 20 columns and NumPy's adds took 3.4-3.7 ms at one thread, one product of 500
    columns and the kernel 2.5 (the same bits there)."""
    n, cin = x.shape[:2]
    f = w.shape[1]
    size = tuple(x.shape[2:])
    xt = xp.moveaxis(x, 1, -1).reshape(-1, cin)                            # (N*S, Cin)
    wk = xp.ascontiguousarray(xp.moveaxis(w, 1, -1)).reshape(cin, -1, f)   # (Cin, K, F)
    y = xp.zeros((n,) + tuple(full) + (f,), dtype=x.dtype)
    if xt.shape[0] * wk[0].size * y.itemsize <= ONE_PRODUCT_MAX_BYTES and xp is np:
        p = matmul(xp, xt, wk.reshape(cin, -1)).reshape((n,) + size + wk.shape[1:])
        if _fast_conv.add_offsets(p, kernel, stride, dilate, y):
            return xp.moveaxis(y, -1, 1)
    for i, off in _offsets(kernel):
        dst = tuple(slice(o * d, o * d + s * (m - 1) + 1, s)
                    for o, d, s, m in zip(off, dilate, stride, size))
        _add_split(xp, y[(slice(None),) + dst],
                   matmul(xp, xt, wk[:, i]).reshape((n,) + size + (f,)))
    return xp.moveaxis(y, -1, 1)


# Bytes of all offsets' products up to which :func:`_row2im` makes them by one product
# (beyond, one product per offset).
ONE_PRODUCT_MAX_BYTES = 64 << 20


def _add_split(xp, dst, src):
    """``dst += src`` (the same shape), by :func:`parallel_parts`."""
    parallel_parts(lambda at: xp.add(dst[at], src[at], out=dst[at]), dst.shape, dst.nbytes, xp)


def _col2im(xp, x, w, kernel, stride, dilate, groups, full):
    n, cin = x.shape[:2]
    fg = w.shape[1]
    wm = xp.swapaxes(w.reshape(groups, cin // groups, -1), 1, 2)     # (G, Fg*K, Cg)
    return _col2im_strided(xp, x, wm, kernel, stride, dilate, groups, groups * fg, full)


def _offsets(kernel):
    return enumerate(itertools.product(*[range(k) for k in kernel]))


def _col2im_strided(xp, x, wm, kernel, stride, dilate, groups, f, full):
    """Columns ``wm @ x`` (per sample and group) summed onto the (N, F, *full) output by
    one strided add per kernel offset; offsets never overlap within one add."""
    n, cin = x.shape[:2]
    size = x.shape[2:]
    cols = matmul(xp, wm, x.reshape(n, groups, cin // groups, -1))   # (N, G, Fg*K, L)
    cols = cols.reshape((n, f, _prod(kernel)) + size)
    y = xp.zeros((n, f) + full, dtype=x.dtype)
    for i, off in _offsets(kernel):
        dst = tuple(slice(o * d, o * d + s * (m - 1) + 1, s)
                    for o, d, s, m in zip(off, dilate, stride, size))
        _add_split(xp, y[(slice(None), slice(None)) + dst], cols[:, :, i])
    return y


# -- Convolution ----------------------------------------------------------------------

def _common_params(no_bias_default):
    return [
        Param("kernel", parse_shape, doc="Kernel size (1, 2 or 3 dims).", low=1),
        Param("stride", parse_shape, (), "Stride per spatial dim; 1 if empty.", low=1),
        Param("dilate", parse_shape, (), "Dilation per spatial dim; 1 if empty.", low=1),
        Param("pad", parse_shape, (), "Zero padding per spatial dim; 0 if empty.", low=0),
        Param("num_filter", parse_int, doc="Number of output channels.", low=1),
        Param("num_group", parse_int, 1, "Number of groups (channels split evenly).", low=1),
        Param("workspace", parse_int, 1024, "Ignored (MXNet's scratch size in MB).", low=0),
        Param("no_bias", parse_bool, no_bias_default, "Whether to leave out the bias."),
        Param("cudnn_tune", None, None, "Ignored.", choices=CUDNN_TUNE),
        Param("cudnn_off", parse_bool, False, "Ignored."),
        Param("layout", None, None, "NCW, NCHW or NCDHW (channels first; MXNet runs the "
              "channels-last ones on GPUs only).", choices=LAYOUTS),
    ]


CUDNN_TUNE = (None, "off", "limited_workspace", "fastest")
LAYOUTS = (None, "NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC")


def check_layout(name, p, ndim):
    if ndim < 3 or ndim > 5:
        raise MXNetError("%s: data must be 3-D, 4-D or 5-D (N, C, spatial...), got %d-D"
                         % (name, ndim))
    if p.layout is not None and p.layout != _LAYOUTS[ndim - 2]:
        raise MXNetError("%s: layout=%r is not supported for %d-D data; mxlite supports the "
                         "channels-first layout %s (transpose the data first)"
                         % (name, p.layout, ndim, _LAYOUTS[ndim - 2]))


def _check_groups(name, p, channels, what):
    g = p.num_group
    if g <= 0 or channels % g or p.num_filter % g:
        raise MXNetError("%s: num_group=%d must divide the %s (%d) and num_filter (%d)"
                         % (name, g, what, channels, p.num_filter))


def _shape_error(name, arg, got, want, data_shape, p):
    return MXNetError("%s: %s has shape %s, expected %s for data of shape %s, kernel=%s, "
                      "num_filter=%d and num_group=%d"
                      % (name, arg, tuple(got), tuple(want), tuple(data_shape), tuple(p.kernel),
                         p.num_filter, p.num_group))


def _conv_weight_shape(p, dshape):
    return (p.num_filter, dshape[1] // p.num_group) + tuple(p.kernel)


def _check_inputs(name, p, x, w, b, weight_shape):
    want = weight_shape(p, x.shape)
    if tuple(w.shape) != want:
        raise _shape_error(name, "weight", w.shape, want, x.shape, p)
    if b is not None and tuple(b.shape) != (p.num_filter,):
        raise _shape_error(name, "bias", b.shape, (p.num_filter,), x.shape, p)


def _conv_compute(p, xp, x, w, b=None):
    check_layout("Convolution", p, x.ndim)
    kernel, stride, dilate, pad = geometry(p, x.ndim - 2, "Convolution")
    _check_groups("Convolution", p, x.shape[1], "input channels")
    _check_inputs("Convolution", p, x, w, b, _conv_weight_shape)
    y, cols = conv_nd(xp, x, w, kernel, stride, dilate, pad, p.num_group,
                      need_cols=_ag_state.recording, inference=not _ag_state.recording, bias=b)
    # A recorded forward keeps its columns (or Winograd's input tiles) for the weight
    # gradient, as a hidden output.
    if cols is None or not _ag_state.recording or not _COLS.keep(cols):
        cols = _no_cols(xp, x.dtype)
    return y.astype(x.dtype, copy=False), cols


def _bias_grad(gy, want):
    """The bias gradient: ``gy`` summed over all but the channels.

    NOTE: over the batch first, then each channel's positions: two reductions along
    whole rows, 1.6-4x faster than one over the axes (0, 2, ...) (LeNet's layers at
    batch 64)."""
    if not want:
        return None
    return nd.sum(nd.sum(gy.reshape(tuple(gy.shape[:2]) + (-1,)), axis=0), axis=1)


def _adj_for(size, out, kernel, stride, dilate, pad):
    """The Deconvolution ``adj`` that maps ``out`` back to exactly ``size``."""
    return tuple(n + 2 * q - ((o - 1) * s + d * (k - 1) + 1)
                 for n, o, k, s, d, q in zip(size, out, kernel, stride, dilate, pad))


def _side_by_side(need, arrays):
    """Whether a backward needs both the data and the weight gradient, unrecorded, of
    NumPy ``arrays``: the two are independent, and run side by side on the CPU
    workers (:func:`engine.overlap`) by the kernels their ops run."""
    return (need[0] and need[1] and _ag_state.raw
            and all(type(a) is np.ndarray for a in arrays))


def _conv_grad(p, x, y, gy, need):
    data, w = x[0], x[1]
    g = gy[0]
    kernel, stride, dilate, pad = geometry(p, data.ndim - 2, "Convolution")
    # An input outside the recorded graph (the network's data) needs no gradient:
    # the first layer's Deconvolution would cost as much as its forward.
    gx = gw = None
    adj = _adj_for(data.shape[2:], g.shape[2:], kernel, stride, dilate, pad)
    if _side_by_side(need, (data, w, g, y[1])):
        def data_grad():
            return deconv_nd(np, g, w, kernel, stride, dilate, pad, adj, p.num_group)

        def weight_grad():
            return conv_weight_grad(np, data, g, kernel, stride, dilate, pad, p.num_group, y[1])
        if later.may_defer(1):      # made by a worker while the backward walk goes on
            gw = later.submit(weight_grad, w.shape, data.dtype, "Convolution")
            gx = data_grad()
        else:
            gx, gw = engine.overlap(data_grad, weight_grad)
        return [gx.astype(g.dtype, copy=False), gw] + (
            [] if p.no_bias else [_bias_grad(g, need[2])])
    if need[0]:
        gx = nd.Deconvolution(g, w, kernel=kernel, stride=stride, dilate=dilate, pad=pad,
                              adj=adj, num_filter=data.shape[1], num_group=p.num_group,
                              no_bias=True)
    if need[1]:
        gw = nd._internal._conv_weight_grad(data, g, y[1], kernel=kernel, stride=stride,
                                            dilate=dilate, pad=pad, num_group=p.num_group,
                                            with_cols=True)
    return [gx, gw] + ([] if p.no_bias else [_bias_grad(g, need[2])])


def _infer_weights(name, weight_shape, channel_what):
    """An infer_shape rule filling weight (and bias) from the data shape."""
    def rule(p, shapes):
        shapes = list(shapes)
        d = shapes[0]
        if d is None or len(d) < 2 or d[1] == 0:
            return shapes
        _check_groups(name, p, d[1], channel_what)
        want = weight_shape(p, d)
        for i, (arg, shape) in enumerate((("weight", want), ("bias", (p.num_filter,))), 1):
            if i >= len(shapes):
                break
            got = shapes[i]
            if got is None or 0 in got or len(got) == 0:
                shapes[i] = shape
            elif tuple(got) != shape:
                raise _shape_error(name, arg, got, shape, d, p)
        return shapes
    return rule


_conv_weights = _infer_weights("Convolution", _conv_weight_shape, "input channels")


def _conv_infer(p, shapes):
    """Weights from the data, and the output shape without running the kernel (shape
    inference of a large network would otherwise convolve full-size dummies)."""
    shapes = _conv_weights(p, shapes)
    d = shapes[0]
    if any(s is None or 0 in s for s in shapes):
        return shapes
    check_layout("Convolution", p, len(d))
    kernel, stride, dilate, pad = geometry(p, len(d) - 2, "Convolution")
    out = conv_out_size("Convolution", d[2:], kernel, stride, dilate, pad)
    return shapes, [(d[0], p.num_filter) + tuple(out), (0,)]


register_op("Convolution", _conv_compute, gradient=_conv_grad,
            saves="x", num_outputs=2, num_visible_outputs=1, output_names=("output", "cols"),
            inputs=lambda p: ("data", "weight") if p.no_bias else ("data", "weight", "bias"),
            params=_common_params(False), infer_shape=_conv_infer, batchwise=rows("data"),
            doc="Convolution (cross-correlation) over 1, 2 or 3 spatial dims, channels first. "
                "``weight`` has shape ``(num_filter, C / num_group, *kernel)``.")


# -- the weight gradient as an op ------------------------------------------------------

def _wgrad_compute(p, xp, x, g, cols=None):
    kernel, stride, dilate, pad = geometry(p, x.ndim - 2, "_conv_weight_grad")
    return conv_weight_grad(xp, x, g, kernel, stride, dilate, pad, p.num_group, cols)


def _wgrad_grad(p, x, y, gy, need):
    # gw = W(data, grad) is bilinear: <W(a, g), H> = <conv(a, H), g> = <a, deconv(g, H)>.
    data, g = x[0], x[1]
    h = gy[0]
    kernel, stride, dilate, pad = geometry(p, data.ndim - 2, "_conv_weight_grad")
    adj = _adj_for(data.shape[2:], g.shape[2:], kernel, stride, dilate, pad)
    common = dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad, num_group=p.num_group,
                  no_bias=True)
    g_data = nd.Deconvolution(g, h, adj=adj, num_filter=data.shape[1], **common)
    g_grad = nd.Convolution(data, h, num_filter=g.shape[1], **common)
    return [g_data, g_grad] + ([None] if p.with_cols else [])


register_op("_conv_weight_grad", _wgrad_compute, gradient=_wgrad_grad, saves="x",
            inputs=lambda p: ("data", "grad", "cols") if p.with_cols else ("data", "grad"),
            params=[Param("kernel", parse_shape, low=1), Param("stride", parse_shape, (), low=1),
                    Param("dilate", parse_shape, (), low=1), Param("pad", parse_shape, (), low=0),
                    Param("num_group", parse_int, 1, low=1),
                    Param("with_cols", parse_bool, False,
                          "Whether input ``cols`` carries the columns of ``data`` that "
                          "Convolution's forward kept (empty: build them again).")],
            doc="The weight gradient of Convolution: ``d<grad, conv(data, w)>/dw``.")


# -- Deconvolution ----------------------------------------------------------------------

def _deconv_weight_shape(p, dshape):
    return (dshape[1], p.num_filter // p.num_group) + tuple(p.kernel)


def deconv_pad_adj(p, size, kernel, stride, dilate):
    """(pad, adj) of a Deconvolution; ``target_shape`` overrides both, as in MXNet."""
    nsp = len(kernel)
    if p.target_shape and any(p.target_shape):
        if len(p.target_shape) != nsp:
            raise MXNetError("Deconvolution: target_shape=%s has %d dimension(s), expected %d"
                             % (p.target_shape, len(p.target_shape), nsp))
        pad, adj = [], []
        for n, k, s, d, t in zip(size, kernel, stride, dilate, p.target_shape):
            total = s * (n - 1) + d * (k - 1) + 1 - t
            if total < 0:
                raise MXNetError("Deconvolution: target_shape=%s is too big for input size %s"
                                 % (p.target_shape, tuple(size)))
            adj.append(total % 2)
            pad.append((total + 1) // 2)
        return tuple(pad), tuple(adj)
    adj = _tuple(p.adj, nsp, 0)
    if len(adj) != nsp:
        raise MXNetError("Deconvolution: adj=%s has %d dimension(s), expected %d"
                         % (adj, len(adj), nsp))
    return _tuple(p.pad, nsp, 0), adj


def _deconv_geometry(p, x):
    kernel, stride, dilate, _ = geometry(p, x.ndim - 2, "Deconvolution")
    pad, adj = deconv_pad_adj(p, x.shape[2:], kernel, stride, dilate)
    return kernel, stride, dilate, pad, adj


def _deconv_compute(p, xp, x, w, b=None):
    check_layout("Deconvolution", p, x.ndim)
    kernel, stride, dilate, pad, adj = _deconv_geometry(p, x)
    if x.shape[1] % p.num_group or p.num_filter % p.num_group:
        _check_groups("Deconvolution", p, x.shape[1], "input channels")
    _check_inputs("Deconvolution", p, x, w, b, _deconv_weight_shape)
    y = deconv_nd(xp, x, w, kernel, stride, dilate, pad, adj, p.num_group)
    return kern.add_bias(y, b).astype(x.dtype, copy=False)


def _deconv_grad(p, x, y, gy, need):
    data, w = x[0], x[1]
    g = gy[0]
    kernel, stride, dilate, pad, _ = _deconv_geometry(p, data)
    common = dict(kernel=kernel, stride=stride, dilate=dilate, pad=pad, num_group=p.num_group)
    gx = gw = None
    if _side_by_side(need, (data, w, g)):
        gx, gw = engine.overlap(
            lambda: conv_nd(np, g, w, kernel, stride, dilate, pad, p.num_group)[0],
            lambda: conv_weight_grad(np, g, data, kernel, stride, dilate, pad, p.num_group))
        return [gx.astype(g.dtype, copy=False), gw] + (
            [] if p.no_bias else [_bias_grad(g, need[2])])
    if need[0]:
        gx = nd.Convolution(g, w, num_filter=data.shape[1], no_bias=True, **common)
    if need[1]:
        gw = nd._internal._conv_weight_grad(g, data, **common)
    return [gx, gw] + ([] if p.no_bias else [_bias_grad(g, need[2])])


register_op("Deconvolution", _deconv_compute, gradient=_deconv_grad, saves="x",
            batchwise=rows("data"),
            inputs=lambda p: ("data", "weight") if p.no_bias else ("data", "weight", "bias"),
            params=_common_params(True) + [
                Param("adj", parse_shape, (), "Extra output size at the end of each dim.",
                      low=0),
                Param("target_shape", parse_shape, (), "Output spatial shape; sets pad and adj.")],
            infer_shape=_infer_weights("Deconvolution", _deconv_weight_shape, "input channels"),
            doc="Transposed convolution (the data gradient of Convolution). ``weight`` has "
                "shape ``(C, num_filter / num_group, *kernel)``; ``no_bias`` defaults to True.")
