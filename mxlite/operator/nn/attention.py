"""GluonNLP's interleaved attention matmuls of MXNet 1.9.1
(``_contrib_interleaved_matmul_{selfatt,encdec}_{qk,valatt}``).

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


from ... import nd
from ...base import MXNetError, parse_int
from ..registry import register_op, Param, ranks


# -- layout helpers on raw arrays ---------------------------------------------------------

def _split_raw(name, x, heads, n):
    """``x`` (S, B, heads * n * D) -> n arrays (B * heads, S, D)."""
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


def _encdec_valatt_grad(p, x, y, gy, need):
    kv, att = x
    k, v = _split_nd(kv, p.heads, 2)
    g = _split_nd(gy[0], p.heads, 1)[0]           # (B * heads, Q, D)
    gv = nd.batch_dot(att, g, transpose_a=True)
    gatt = nd.batch_dot(g, v, transpose_b=True)
    return [_merge_nd([nd.zeros_like(k), gv], p.heads, kv.shape[1]), gatt]


register_op("_contrib_interleaved_matmul_selfatt_qk", _selfatt_qk,
            inputs=("queries_keys_values",), params=[_HEADS], gradient=_selfatt_qk_grad,
            saves="x", check=ranks(queries_keys_values=(3, 3)),
            doc="Self-attention scores ``(q / sqrt(head_dim)) k^T`` (batch * heads, seq, seq)"
                " from interleaved projections (seq, batch, heads * 3 * head_dim).")
register_op("_contrib_interleaved_matmul_selfatt_valatt", _selfatt_valatt,
            inputs=("queries_keys_values", "attention"), params=[_HEADS],
            gradient=_selfatt_valatt_grad, saves="x", check=ranks(queries_keys_values=(3, 3)),
            doc="``attention @ v`` for interleaved projections (seq, batch, heads * 3 * "
                "head_dim) and attention (batch * heads, seq, seq); output (seq, batch, "
                "heads * head_dim).")
register_op("_contrib_interleaved_matmul_encdec_qk", _encdec_qk,
            inputs=("queries", "keys_values"), params=[_HEADS], gradient=_encdec_qk_grad,
            saves="x", check=ranks(queries=(3, 3), keys_values=(3, 3)),
            doc="Encoder-decoder scores ``(q / sqrt(head_dim)) k^T`` (batch * heads, q_seq, "
                "k_seq) from queries (q_seq, batch, heads * head_dim) and interleaved keys and "
                "values (k_seq, batch, heads * 2 * head_dim).")
register_op("_contrib_interleaved_matmul_encdec_valatt", _encdec_valatt,
            inputs=("keys_values", "attention"), params=[_HEADS],
            gradient=_encdec_valatt_grad, saves="x", check=ranks(keys_values=(3, 3)),
            doc="``attention @ v`` for interleaved keys and values (k_seq, batch, heads * 2 * "
                "head_dim) and attention (batch * heads, q_seq, k_seq); output (q_seq, batch, "
                "heads * head_dim).")
