"""Translations of the interleaved self-attention ops GluonNLP's BERT and Transformer
use (opset 13). ``queries_keys_values`` is ``(T, N, heads * 3 * D)``, each head holding
its query, key and value side by side; heads are batched as ``(N * heads, T, D)``.
Shapes come from the graph (``Shape``), so sequence length and batch may stay open.
"""
import math

import numpy as np

from .._export_onnx import MXNetGraph
from ._common import scalar

register = MXNetGraph.register


def _head_part(b, n, j):
    """Part ``j`` (0 query, 1 key, 2 value) of every head: ``(N * heads, T, D)``."""
    heads = n.p.heads
    d = n.in_shapes[0][2] // (heads * 3)
    x = b.add("Reshape", [n.ins[0], b.int64s([0, 0, heads, 3, d], n.name + "_split")],
              name=n.name)
    part = b.add("Gather", [x, b.const(np.int64(j), n.name + "_part")], name=n.name, axis=3)
    part = b.add("Transpose", [part], name=n.name, perm=[1, 2, 0, 3])     # (N, h, T, D)
    return _merge_leading(b, n, part, d)


def _merge_leading(b, n, x, d):
    """``(N, heads, T, D)`` -> ``(N * heads, T, D)``."""
    t, batch = n.in_shapes[0][0], n.in_shapes[0][1]
    return b.add("Reshape", [x, _shape(b, n, x, [batch * n.p.heads, (2, t), d])], name=n.name)


def _shape(b, n, x, dims):
    """A target shape: ints, and ``(k, static size)`` for dim ``k`` of ``x``, read from
    the graph when shapes are dynamic."""
    if not b.dynamic:
        return b.int64s([v[1] if isinstance(v, tuple) else v for v in dims], n.name + "_shape")
    shape = b.add("Shape", [x], name=n.name)
    # The leading dim (batch * heads or batch) is left for Reshape to infer.
    parts = [b.add("Gather", [shape, b.int64s([v[0]], n.name + "_dim")], name=n.name, axis=0)
             if isinstance(v, tuple) else b.int64s([-1 if k == 0 else v], n.name + "_d")
             for k, v in enumerate(dims)]
    return b.add("Concat", parts, name=n.name, axis=0)


@register("_contrib_interleaved_matmul_selfatt_qk")
def convert_selfatt_qk(b, n):
    d = n.in_shapes[0][2] // (n.p.heads * 3)
    q = b.add("Mul", [_head_part(b, n, 0), scalar(b, n, 1.0 / math.sqrt(d))], name=n.name)
    kt = b.add("Transpose", [_head_part(b, n, 1)], name=n.name, perm=[0, 2, 1])
    b.add("MatMul", [q, kt], n.outs, name=n.name)


@register("_contrib_interleaved_matmul_selfatt_valatt")
def convert_selfatt_valatt(b, n):
    heads = n.p.heads
    d = n.in_shapes[0][2] // (heads * 3)
    y = b.add("MatMul", [n.ins[1], _head_part(b, n, 2)], name=n.name)     # (N*h, T, D)
    t, batch = n.in_shapes[0][0], n.in_shapes[0][1]
    y = b.add("Reshape", [y, _shape(b, n, y, [batch, heads, (1, t), d])], name=n.name)
    y = b.add("Transpose", [y], name=n.name, perm=[2, 0, 1, 3])           # (T, N, h, D)
    b.add("Reshape", [y, b.int64s([0, 0, heads * d], n.name + "_merge")], n.outs, name=n.name)
