"""Tensor ops (elementwise, reductions, shape, indexing, creation, random, linalg)."""
from . import elemwise_unary, elemwise_binary, reduce, shape, indexing, init  # noqa: F401
