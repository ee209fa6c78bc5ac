"""``mx.io``: data iterators for the Module API."""
from .io import DataDesc, DataBatch, DataIter, MXDataIter, NDArrayIter, ResizeIter  # noqa: F401
from .extra_iters import MNISTIter, CSVIter, PrefetchingIter  # noqa: F401
from .image_record import ImageRecordIter, ImageRecordUInt8Iter, ImageRecordInt8Iter  # noqa: F401
from .det_record import ImageDetRecordIter, LibSVMIter  # noqa: F401

# MXNet's first ImageRecordIter implementation, kept under these names; mxlite has one.
ImageRecordIter_v1 = ImageRecordIter
ImageRecordUInt8Iter_v1 = ImageRecordUInt8Iter
from . import utils  # noqa: F401,E402
