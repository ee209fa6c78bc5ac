"""Matrix products: dot, batch_dot, khatri_rao.

``dot`` follows MXNet: it contracts the last axis of ``lhs`` (the first with
``transpose_a``) with the first axis of ``rhs`` (the last with ``transpose_b``),
so N-D operands act as 2-D matrices with their other axes flattened. The
gradients are again dots, of the 2-D views, so they can be differentiated.
"""
import numpy as np

from ... import nd
from ...base import MXNetError, parse_bool, parse_str, parse_int
from ...engine import matmul
from ..registry import register_op, Param
from .shape import _variadic_inputs

_TRANSPOSE = [Param("transpose_a", parse_bool, False, "Use the transpose of lhs."),
              Param("transpose_b", parse_bool, False, "Use the transpose of rhs."),
              Param("forward_stype", lambda v: None if v in (None, "None") else parse_str(v),
                    None, "Ignored: every array is dense in mxlite.")]


def _dot_views(p, a_shape, b_shape):
    """2-D shapes of lhs and rhs as stored, and the output shape."""
    if not a_shape or not b_shape:
        raise MXNetError("inputs must have at least one dimension, got %s and %s"
                         % (a_shape, b_shape))
    if p.transpose_a:
        k, a_rest = a_shape[0], a_shape[1:]
        a2 = (k, int(np.prod(a_rest)))
    else:
        k, a_rest = a_shape[-1], a_shape[:-1]
        a2 = (int(np.prod(a_rest)), k)
    if p.transpose_b:
        kb, b_rest = b_shape[-1], b_shape[:-1]
        b2 = (int(np.prod(b_rest)), kb)
    else:
        kb, b_rest = b_shape[0], b_shape[1:]
        b2 = (kb, int(np.prod(b_rest)))
    if k != kb:
        raise MXNetError("shapes %s and %s do not match for a product (transpose_a=%s, "
                         "transpose_b=%s): %d vs %d" % (a_shape, b_shape, p.transpose_a,
                                                         p.transpose_b, k, kb))
    return a2, b2, (a_rest + b_rest) or (1,)


def matmul2d(xp, a, b):
    """``a @ b`` for 2-D ``a``, ``b``. An inner size of 1 is an outer product, which
    BLAS-backed matmul runs several times slower than one broadcast multiply (and
    the two give the same numbers: each entry is one product)."""
    if a.shape[1] == 1 and a.dtype.kind == "f":
        return xp.multiply(a, b)
    return matmul(xp, a, b)         # on the CPU workers (engine.matmul)


def _dot(p, xp, a, b):
    if a.dtype is not b.dtype and a.dtype != b.dtype:     # (``is``: the common case, cheaply)
        raise MXNetError("lhs and rhs must have the same dtype, got %s and %s"
                         % (a.dtype, b.dtype))
    if a.ndim == 2 and b.ndim == 2:        # the hot case: no shape bookkeeping
        am = a.T if p.transpose_a else a
        bm = b.T if p.transpose_b else b
        if am.shape[1] == bm.shape[0]:
            return matmul2d(xp, am, bm)
    a2, b2, out = _dot_views(p, a.shape, b.shape)
    # reshape of a contiguous array and .T are views: matmul reads them in place.
    am = a.reshape(a2)
    bm = b.reshape(b2)
    y = xp.matmul(am.T if p.transpose_a else am, bm.T if p.transpose_b else bm)
    return y.reshape(out)


def _product_grads(dot, a, b, g, ta, tb):
    """Gradients of ``op(a) @ op(b)`` for output gradient ``g`` (2-D or batched)."""
    if not ta and not tb:
        return dot(g, b, False, True), dot(a, g, True, False)
    if ta and not tb:
        return dot(b, g, False, True), dot(a, g, False, False)
    if not ta and tb:
        return dot(g, b, False, False), dot(g, a, True, False)
    return dot(b, g, True, True), dot(g, a, True, True)


def _dot2(a, b, ta, tb):
    return nd.dot(a, b, transpose_a=ta, transpose_b=tb)


def _dot_grad(p, x, y, gy, need):
    a, b = x
    a2, b2, _ = _dot_views(p, a.shape, b.shape)
    rows = a2[1] if p.transpose_a else a2[0]
    cols = b2[0] if p.transpose_b else b2[1]
    g2 = gy[0].reshape((rows, cols))
    ga, gb = _product_grads(_dot2, a.reshape(a2), b.reshape(b2), g2, p.transpose_a,
                            p.transpose_b)
    return [ga.reshape(a.shape), gb.reshape(b.shape)]


register_op("dot", _dot, inputs=("lhs", "rhs"), gradient=_dot_grad, saves="x",
            params=_TRANSPOSE,
            doc="Matrix product. N-D inputs: contract the last axis of lhs with the first of "
                "rhs (output ``lhs.shape[:-1] + rhs.shape[1:]``); two 1-D inputs give their "
                "inner product with shape (1,).\n\n"
                ">>> mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((3, 4))).shape  # (2, 4)")


def _batch_dot(p, xp, a, b):
    if a.ndim < 3 or a.ndim != b.ndim:
        raise MXNetError("expected two arrays of equal rank >= 3 (batch, rows, cols), got "
                         "shapes %s and %s" % (a.shape, b.shape))
    if a.shape[:-2] != b.shape[:-2]:
        raise MXNetError("batch dimensions differ: %s and %s" % (a.shape, b.shape))
    if a.dtype != b.dtype:
        raise MXNetError("lhs and rhs must have the same dtype, got %s and %s"
                         % (a.dtype, b.dtype))
    am = xp.swapaxes(a, -1, -2) if p.transpose_a else a
    bm = xp.swapaxes(b, -1, -2) if p.transpose_b else b
    if am.shape[-1] != bm.shape[-2]:
        raise MXNetError("shapes %s and %s do not match for a batched product (transpose_a=%s,"
                         " transpose_b=%s)" % (a.shape, b.shape, p.transpose_a, p.transpose_b))
    return xp.matmul(am, bm)


def _bdot(a, b, ta, tb):
    return nd.batch_dot(a, b, transpose_a=ta, transpose_b=tb)


def _batch_dot_grad(p, x, y, gy, need):
    return list(_product_grads(_bdot, x[0], x[1], gy[0], p.transpose_a, p.transpose_b))


register_op("batch_dot", _batch_dot, inputs=("lhs", "rhs"), gradient=_batch_dot_grad,
            saves="x", params=_TRANSPOSE,
            doc="Batched matrix product over the leading axes: (B, n, k) x (B, k, m) -> "
                "(B, n, m).")


# -- khatri_rao ---------------------------------------------------------------------

def _khatri_rao(p, xp, *xs):
    if not xs:
        raise MXNetError("needs at least one input")
    r = xs[0].shape[-1] if xs[0].ndim == 2 else None
    for i, x in enumerate(xs):
        if x.ndim != 2 or x.shape[1] != r:
            raise MXNetError("input %d has shape %s; every input must be 2-D with %s columns"
                             % (i, x.shape, r))
    y = xs[0]
    for x in xs[1:]:
        y = (y[:, None, :] * x[None, :, :]).reshape(-1, r)
    return y


def _khatri_rao_grad(p, x, y, gy, need):
    # y[(i1, ..., in), r] = prod_m x_m[i_m, r]: view gy with one axis per input.
    rows = [xi.shape[0] for xi in x]
    r = x[0].shape[1]
    g = gy[0].reshape(tuple(rows) + (r,))
    n = len(x)
    gx = []
    for m in range(n):
        t = g
        for j in range(n):
            if j != m:
                shape = [1] * n + [r]
                shape[j] = rows[j]
                t = t * x[j].reshape(tuple(shape))
        gx.append(nd.sum(t, axis=tuple(j for j in range(n) if j != m)) if n > 1 else t)
    return gx


register_op("khatri_rao", _khatri_rao, gradient=_khatri_rao_grad, saves="x",
            inputs=_variadic_inputs,
            variadic="num_args", params=[Param("num_args", parse_int, 1, "The number of inputs.")],
            doc="Column-wise Kronecker product of 2-D arrays with the same number of columns: "
                "shapes (I1, R), ..., (In, R) give (I1*...*In, R).")
