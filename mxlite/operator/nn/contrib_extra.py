"""Contrib ops of MXNet 1.9.1 not covered elsewhere: GluonNLP's interleaved attention
matmuls (``_contrib_interleaved_matmul_{selfatt,encdec}_{qk,valatt}``), ``_contrib_fft`` /
``_contrib_ifft``, ``_contrib_BatchNormWithReLU`` and ``_contrib_bipartite_matching``.

Interleaved layout (MXNet's ``transformer.cc``): the projections of one sequence position
and batch item lie in one row ``(seq, batch, heads * n * head_dim)`` grouped by head, so
row ``[h, j, :]`` of the reshape ``(seq, batch, heads, n, head_dim)`` is head ``h`` of part
``j`` (queries, keys, values for ``n = 3``; keys, values for ``n = 2``). Attention scores
are ``(batch * heads, q_seq, k_seq)``, batch-major. The ``qk`` ops scale the queries by
``1 / sqrt(head_dim)`` before the product (as ``div_sqrt_dim`` does); the ``valatt`` ops
do not scale.

NOTE: MXNet 1.9.1 runs these ops in float32 only on CPU; mxlite accepts any float dtype
and computes in it.
"""
import math

import numpy as np

from ... import nd
from ...base import MXNetError, parse_bool, parse_float, parse_int
from ..registry import register_op, Param, on_ndarrays, OPS, ranks
from . import normalization  # noqa: F401  (BatchNorm, reused by BatchNormWithReLU)


# -- layout helpers on raw arrays ---------------------------------------------------------

def _split_raw(name, x, heads, n):
    """``x`` (S, B, heads * n * D) -> n arrays (B * heads, S, D)."""
    if x.ndim != 3:
        raise MXNetError("%s: input must be 3-D (seq_length, batch_size, embed), got shape %s"
                         % (name, tuple(x.shape)))
    S, B, E = x.shape
    if heads <= 0 or E % (heads * n):
        raise MXNetError("%s: the last axis (%d) must be a multiple of heads * %d = %d"
                         % (name, E, n, heads * n))
    D = E // (heads * n)
    r = x.reshape(S, B, heads, n, D)
    return [r[:, :, :, j, :].transpose(1, 2, 0, 3).reshape(B * heads, S, D) for j in range(n)]


def _merge_raw(y, heads, batch):
    """``y`` (B * heads, S, D) -> (S, B, heads * D)."""
    _, S, D = y.shape
    return y.reshape(batch, heads, S, D).transpose(2, 0, 1, 3).reshape(S, batch, heads * D)


def _scale(d, dtype):
    return dtype.type(1.0 / math.sqrt(d))


def _check_att(name, att, rows, q, k):
    if tuple(att.shape) != (rows, q, k):
        raise MXNetError("%s: attention must have shape %s (batch * heads, query length, key "
                         "length), got %s" % (name, (rows, q, k), tuple(att.shape)))


# -- layout helpers on NDArrays (for gradients that can be differentiated again) ----------

def _split_nd(x, heads, n):
    S, B, E = x.shape
    D = E // (heads * n)
    r = nd.reshape(x, shape=(S, B, heads, n, D))
    return [nd.reshape(nd.transpose(nd.reshape(nd.slice_axis(r, axis=3, begin=j, end=j + 1),
                                                shape=(S, B, heads, D)), axes=(1, 2, 0, 3)),
                       shape=(B * heads, S, D)) for j in range(n)]


def _merge_nd(parts, heads, batch):
    """n arrays (B * heads, S, D) -> (S, B, heads * n * D), interleaved per head."""
    _, S, D = parts[0].shape
    t = [nd.transpose(nd.reshape(p, shape=(batch, heads, S, D)), axes=(2, 0, 1, 3))
         for p in parts]
    return nd.reshape(nd.stack(*t, axis=3), shape=(S, batch, heads * len(parts) * D))


def _merge_head_nd(y, heads, batch):
    _, S, D = y.shape
    return nd.reshape(nd.transpose(nd.reshape(y, shape=(batch, heads, S, D)),
                                   axes=(2, 0, 1, 3)), shape=(S, batch, heads * D))


# -- the four ops -------------------------------------------------------------------------

_HEADS = Param("heads", parse_int, doc="Number of attention heads.")


def _selfatt_qk(p, xp, qkv):
    q, k, _ = _split_raw("interleaved_matmul_selfatt_qk", qkv, p.heads, 3)
    return xp.matmul(q * _scale(q.shape[2], q.dtype), k.transpose(0, 2, 1))


@on_ndarrays
def _selfatt_qk_grad(p, x, y, gy, need):
    qkv, = x
    q, k, v = _split_nd(qkv, p.heads, 3)
    s = 1.0 / math.sqrt(q.shape[2])
    gq = nd.batch_dot(gy[0], k) * s
    gk = nd.batch_dot(gy[0], q, transpose_a=True) * s
    return [_merge_nd([gq, gk, nd.zeros_like(v)], p.heads, qkv.shape[1])]


def _selfatt_valatt(p, xp, qkv, att):
    name = "interleaved_matmul_selfatt_valatt"
    _, _, v = _split_raw(name, qkv, p.heads, 3)
    _check_att(name, att, v.shape[0], v.shape[1], v.shape[1])
    return _merge_raw(xp.matmul(att, v), p.heads, qkv.shape[1])


@on_ndarrays
def _selfatt_valatt_grad(p, x, y, gy, need):
    qkv, att = x
    q, k, v = _split_nd(qkv, p.heads, 3)
    g = _split_nd(gy[0], p.heads, 1)[0]           # (B * heads, S, D)
    gv = nd.batch_dot(att, g, transpose_a=True)
    gatt = nd.batch_dot(g, v, transpose_b=True)
    zero = nd.zeros_like(q)
    return [_merge_nd([zero, zero, gv], p.heads, qkv.shape[1]), gatt]


def _encdec_qk(p, xp, queries, kv):
    name = "interleaved_matmul_encdec_qk"
    q, = _split_raw(name, queries, p.heads, 1)
    k, _ = _split_raw(name, kv, p.heads, 2)
    if queries.shape[1] != kv.shape[1] or q.shape[2] != k.shape[2]:
        raise MXNetError("%s: queries %s and keys_values %s disagree on batch size or "
                         "head_dim (keys_values holds 2 * heads * head_dim per row)"
                         % (name, tuple(queries.shape), tuple(kv.shape)))
    return xp.matmul(q * _scale(q.shape[2], q.dtype), k.transpose(0, 2, 1))


@on_ndarrays
def _encdec_qk_grad(p, x, y, gy, need):
    queries, kv = x
    q, = _split_nd(queries, p.heads, 1)
    k, v = _split_nd(kv, p.heads, 2)
    s = 1.0 / math.sqrt(q.shape[2])
    gq = nd.batch_dot(gy[0], k) * s
    gk = nd.batch_dot(gy[0], q, transpose_a=True) * s
    return [_merge_head_nd(gq, p.heads, queries.shape[1]),
            _merge_nd([gk, nd.zeros_like(v)], p.heads, kv.shape[1])]


def _encdec_valatt(p, xp, kv, att):
    name = "interleaved_matmul_encdec_valatt"
    _, v = _split_raw(name, kv, p.heads, 2)
    if att.ndim != 3 or att.shape[0] != v.shape[0] or att.shape[2] != v.shape[1]:
        raise MXNetError("%s: attention must have shape (batch * heads, query length, %d) = "
                         "(%d, q, %d), got %s" % (name, v.shape[1], v.shape[0], v.shape[1],
                                                  tuple(att.shape)))
    return _merge_raw(xp.matmul(att, v), p.heads, kv.shape[1])


@on_ndarrays
def _encdec_valatt_grad(p, x, y, gy, need):
    kv, att = x
    k, v = _split_nd(kv, p.heads, 2)
    g = _split_nd(gy[0], p.heads, 1)[0]           # (B * heads, Q, D)
    gv = nd.batch_dot(att, g, transpose_a=True)
    gatt = nd.batch_dot(g, v, transpose_b=True)
    return [_merge_nd([nd.zeros_like(k), gv], p.heads, kv.shape[1]), gatt]


register_op("_contrib_interleaved_matmul_selfatt_qk", _selfatt_qk,
            inputs=("queries_keys_values",), params=[_HEADS], gradient=_selfatt_qk_grad,
            saves="x",
            doc="Self-attention scores ``(q / sqrt(head_dim)) k^T`` (batch * heads, seq, seq)"
                " from interleaved projections (seq, batch, heads * 3 * head_dim).")
register_op("_contrib_interleaved_matmul_selfatt_valatt", _selfatt_valatt,
            inputs=("queries_keys_values", "attention"), params=[_HEADS],
            gradient=_selfatt_valatt_grad, saves="x",
            doc="``attention @ v`` for interleaved projections (seq, batch, heads * 3 * "
                "head_dim) and attention (batch * heads, seq, seq); output (seq, batch, "
                "heads * head_dim).")
register_op("_contrib_interleaved_matmul_encdec_qk", _encdec_qk,
            inputs=("queries", "keys_values"), params=[_HEADS], gradient=_encdec_qk_grad,
            saves="x",
            doc="Encoder-decoder scores ``(q / sqrt(head_dim)) k^T`` (batch * heads, q_seq, "
                "k_seq) from queries (q_seq, batch, heads * head_dim) and interleaved keys and "
                "values (k_seq, batch, heads * 2 * head_dim).")
register_op("_contrib_interleaved_matmul_encdec_valatt", _encdec_valatt,
            inputs=("keys_values", "attention"), params=[_HEADS],
            gradient=_encdec_valatt_grad, saves="x",
            doc="``attention @ v`` for interleaved keys and values (k_seq, batch, heads * 2 * "
                "head_dim) and attention (batch * heads, q_seq, k_seq); output (q_seq, batch, "
                "heads * head_dim).")


# -- _contrib_fft / _contrib_ifft -------------------------------------------------------------

def _fft(p, xp, x):
    """Complex FFT over the last axis of real ``x`` (..., d): (..., 2d) interleaved
    [re0, im0, re1, im1, ...]."""
    f = xp.fft.fft(x.astype(xp.float64), axis=-1)
    out = xp.stack([f.real, f.imag], axis=-1).reshape(x.shape[:-1] + (2 * x.shape[-1],))
    return out.astype(x.dtype)


def _ifft(p, xp, x):
    """Real part of the *unnormalised* inverse FFT of interleaved complex ``x`` (..., 2d):
    (..., d). NOTE: MXNet (cuFFT) does not divide by d: ``ifft(fft(x)) = d * x``."""
    if x.shape[-1] % 2:
        raise MXNetError("ifft: the last axis holds (real, imag) pairs and must be even, got "
                         "shape %s" % (tuple(x.shape),))
    z = x.astype(xp.float64).reshape(x.shape[:-1] + (x.shape[-1] // 2, 2))
    c = z[..., 0] + 1j * z[..., 1]
    return (xp.fft.ifft(c, axis=-1).real * c.shape[-1]).astype(x.dtype)


_COMPUTE_SIZE = Param("compute_size", parse_int, 128,
                      "Rows per cuFFT batch in MXNet; no effect here.")
# y = F x (x real) has the gradient Re(F^H gy) = ifft(gy); y = Re(F^H z) has F gy.
register_op("_contrib_fft", _fft, params=[_COMPUTE_SIZE], saves="",
            check=ranks(data=1),
            gradient=lambda p, x, y, gy, need: [nd.contrib.ifft(gy[0])],
            doc="FFT over the last axis: real (..., d) -> (..., 2d) interleaved real and "
                "imaginary parts. (MXNet 1.9.1 runs it on GPU only.)")
register_op("_contrib_ifft", _ifft, params=[_COMPUTE_SIZE], saves="",
            check=ranks(data=1),
            gradient=lambda p, x, y, gy, need: [nd.contrib.fft(gy[0])],
            doc="Inverse FFT over the last axis of interleaved complex (..., 2d) -> the real "
                "part (..., d), unnormalised as MXNet's (no division by d).")


# -- _contrib_BatchNormWithReLU ----------------------------------------------------------------

def _bn_relu(p, xp, *x):
    y, mean, inv = OPS["BatchNorm"].compute(p, xp, *x)
    return xp.maximum(y, 0), mean, inv


def _bn_relu_grad(p, x, y, gy, need):
    # relu's mask comes from the output; BatchNorm's rule reads only the saved mean/inv.
    g = gy[0] * (y[0] > 0)
    return OPS["BatchNorm"].gradient(p, x, y, [g] + list(gy[1:]), need)


def _register_bn_relu():
    bn = OPS["BatchNorm"]
    register_op("_contrib_BatchNormWithReLU", _bn_relu, gradient=_bn_relu_grad, saves="xy",
                inputs=bn.inputs, num_outputs=3, num_visible_outputs=bn.num_visible_outputs,
                mutate=bn.mutate, no_grad_inputs=bn.no_grad_inputs,
                infer_shape=bn.infer_shape_rule, params=list(bn.params.values()),
                same_shape=(0,),
                doc="``relu(BatchNorm(...))`` in one op, with BatchNorm's params, outputs and "
                    "moving statistics (updated in place in training mode).")


_register_bn_relu()


# -- _contrib_bipartite_matching ---------------------------------------------------------------

def _bipartite(p, xp, data):
    """Greedy matching by score: (B, N, M) -> row matches (B, N), column matches (B, M)."""
    s = np.asarray(data.get() if hasattr(data, "get") else data)
    if s.ndim < 2:
        raise MXNetError("bipartite_matching: data must be at least 2-D (..., N, M), got "
                         "shape %s" % (s.shape,))
    if p.topk > 0:
        # NOTE: MXNet 1.9.1 keeps more than topk matches (its topk cuts the sorted
        # candidate list in a way not reproduced yet): refuse rather than differ.
        raise MXNetError("bipartite_matching: topk=%d is not supported (only -1)" % p.topk)
    lead, (n, m) = s.shape[:-2], s.shape[-2:]
    s = s.reshape(-1, n, m)
    rows = np.full((s.shape[0], n), -1, s.dtype)
    cols = np.full((s.shape[0], m), -1, s.dtype)
    for b in range(s.shape[0]):
        flat = s[b].reshape(-1)
        order = np.argsort(flat if p.is_ascend else -flat, kind="stable")
        for k in order:
            v = flat[k]
            if (v > p.threshold) if p.is_ascend else (v < p.threshold):
                break
            i, j = divmod(int(k), m)
            if rows[b, i] == -1 and cols[b, j] == -1:
                rows[b, i], cols[b, j] = j, i
    return xp.asarray(rows.reshape(lead + (n,))), xp.asarray(cols.reshape(lead + (m,)))


register_op("_contrib_bipartite_matching", _bipartite, num_outputs=2,
            params=[Param("is_ascend", parse_bool, False, "Match the lowest scores first."),
                    Param("threshold", parse_float, doc="Ignore scores below it (above it "
                                                        "with is_ascend)."),
                    Param("topk", parse_int, -1, "Only -1 (no limit) is supported.")],
            gradient=lambda p, x, y, gy, need: [nd.zeros_like(x[0])], saves="x",
            doc="Greedy bipartite matching on a score matrix (B, N, M): the matched column "
                "of each row (-1: none) and the matched row of each column. Zero gradient.")
