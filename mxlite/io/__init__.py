"""``mx.io``: data iterators for the Module API."""
from .io import DataDesc, DataBatch, DataIter, NDArrayIter, ResizeIter  # noqa: F401
