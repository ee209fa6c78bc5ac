"""FullyConnected: ``y = x W^T + b``.

Its gradients are ``dot`` calls (``gx = gy W``, ``gW = gy^T x``), so a gradient
penalty through a dense layer differentiates to any order.
"""
import math
import numpy as np

from ...engine import matmul
from ...base import MXNetError, parse_int, parse_bool
from ..registry import register_op, Param, bound
from ..batchwise import rows
from ..tensor import matrix  # noqa: F401  (registers dot, which the gradient runs)

_DOT = bound("dot")
_DOT_TA = bound("dot", transpose_a=True)


def _in_units(p, dshape):
    """Input features per row: all trailing dims when flattening, else the last."""
    if p.flatten and len(dshape) != 2:     # 2-D data (the common case) needs no product
        return math.prod(dshape[1:]) if len(dshape) > 1 else 1
    return dshape[-1]


def _shape_error(arg, got, want, dshape, p):
    return MXNetError("FullyConnected: %s has shape %s, expected %s for data of shape %s and "
                      "num_hidden=%d" % (arg, tuple(got), tuple(want), tuple(dshape),
                                         p.num_hidden))


def _check(p, x, w, b):
    want = (p.num_hidden, _in_units(p, x.shape))
    if tuple(w.shape) != want:
        raise _shape_error("weight", w.shape, want, x.shape, p)
    if b is not None and tuple(b.shape) != (p.num_hidden,):
        raise _shape_error("bias", b.shape, (p.num_hidden,), x.shape, p)


def _rows(p, x):
    """The data as a 2-D matrix (rows, in_units)."""
    return x.reshape(x.shape[0], -1) if p.flatten else x.reshape(-1, x.shape[-1])


def _out_shape(p, dshape):
    return (dshape[0], p.num_hidden) if p.flatten else tuple(dshape[:-1]) + (p.num_hidden,)


def flips(xp, rows, in_units, out_units):
    """Whether :func:`_product` runs ``rows x in_units -> out_units`` as ``(w @ x.T).T``."""
    return xp is np and 1 < rows and 8 * rows <= out_units and in_units >= 256


def _product(xp, x, w):
    """``x @ w.T`` for 2-D ``x``. A few rows against a wide weight run as
    ``(w @ x.T).T``: with OpenBLAS that orientation is up to 1.5x faster there (16
    rows of 784 into 256: 47 vs 55 us; ``benchmarks/bench_gemm_orientation.py``),
    and the copy back to rows-first order costs little at that size."""
    if flips(xp, x.shape[0], x.shape[1], w.shape[0]):
        return matmul(xp, w, x.T).T.copy()
    return matmul(xp, x, w.T)


def _compute(p, xp, x, w, b=None):
    _check(p, x, w, b)
    flat = x.ndim == 2      # (the common case: rows already, and so is the output)
    y = _product(xp, x if flat else _rows(p, x), w)
    if b is not None:
        y += b
    if not flat:
        y = y.reshape(_out_shape(p, x.shape))
    return y.astype(x.dtype, copy=False)


def _gradient(p, x, y, gy, need):
    data, w = x[0], x[1]
    g = gy[0]
    if g.ndim != 2:
        g = g.reshape((-1, p.num_hidden))
    # An input outside the recorded graph (the network's data, a frozen weight) needs
    # no gradient: skipping it saves the largest GEMM of a first layer.
    gx = gw = None
    if need[0]:
        gx = _DOT(g, w)
        if data.ndim != 2:      # (2-D data: gx has its shape already)
            gx = gx.reshape(data.shape)
    if need[1]:
        gw = _DOT_TA(g, data if data.ndim == 2 else _rows(p, data))
    if p.no_bias:
        return [gx, gw]
    return [gx, gw, g.sum(axis=0) if need[2] else None]


def _infer_shape_back(p, ins, outs):
    """The data's leading dims from the output's, as MXNet does: a begin state
    ``zeros((0, H))`` feeding only a FullyConnected takes its batch size this way."""
    d, o = ins[0], outs[0]
    if d is None or o is None:
        return ins
    lead = 1 if p.flatten else len(d) - 1
    if len(o) != (2 if p.flatten else len(d)) or len(d) < lead:
        return ins
    filled = tuple(o[i] if d[i] == 0 else d[i] for i in range(lead)) + tuple(d[lead:])
    return [filled] + list(ins[1:])


def _infer_shape(p, shapes):
    """Fill weight ``(num_hidden, in_units)`` and bias ``(num_hidden,)`` from the data shape;
    an error naming both shapes when a given weight disagrees."""
    shapes = list(shapes)
    d = shapes[0]
    known = d is not None and len(d) > 0 and 0 not in (d[1:] if p.flatten else d[-1:])
    if not known:
        w = shapes[1]
        # The last data dim can come from the weight when nothing is flattened.
        if d is not None and w is not None and 0 not in w and len(w) == 2 and (
                not p.flatten or len(d) == 2):
            shapes[0] = tuple(d[:-1]) + (w[1],)
        return shapes
    want = [(p.num_hidden, _in_units(p, d)), (p.num_hidden,)]
    for i, arg in ((1, "weight"), (2, "bias")):
        if i >= len(shapes):
            break
        got = shapes[i]
        if got is None or len(got) == 0 or 0 in got:
            shapes[i] = want[i - 1]
        elif tuple(got) != want[i - 1]:
            raise _shape_error(arg, got, want[i - 1], d, p)
    return shapes


register_op("FullyConnected", _compute, gradient=_gradient,
            saves="x",
            inputs=lambda p: ("data", "weight") if p.no_bias else ("data", "weight", "bias"),
            params=[Param("num_hidden", parse_int, doc="Number of output units.", low=1),
                    Param("no_bias", parse_bool, False, "Whether to leave out the bias."),
                    Param("flatten", parse_bool, True,
                          "Flatten all but the first axis of the data; else act on the last.")],
            infer_shape=_infer_shape, infer_shape_back=_infer_shape_back, batchwise=rows("data"),
            doc="Fully connected layer: ``y = x W^T + b`` with ``W`` of shape "
                "``(num_hidden, in_units)``.")
