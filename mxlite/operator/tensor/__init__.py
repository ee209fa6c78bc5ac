"""Tensor ops (elementwise, reductions, shape, indexing, creation, random, linalg)."""
from . import (elemwise_unary, elemwise_binary, reduce, shape, indexing, ordering,  # noqa: F401
               matrix, init, random, linalg, contrib, misc, optimizer_ops, legacy)
