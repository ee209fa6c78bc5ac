"""``mx.contrib.io``: ``DataLoaderIter``, a Gluon ``DataLoader`` served as a Module
``DataIter``."""
from ..io import DataIter, DataDesc
from .. import nd

__all__ = ["DataLoaderIter", "DataIter", "DataDesc", "nd"]


class DataLoaderIter(DataIter):
    """Batches of a ``gluon.data.DataLoader`` yielding ``(data, label)`` pairs, as
    ``DataBatch``es for ``Module.fit``.

    ``provide_data``/``provide_label`` come from the first batch. A last, smaller batch
    is padded to the batch size (``getpad()`` says by how many samples); arrays are cast
    to ``dtype``.

    >>> loader = mx.gluon.data.DataLoader(dataset, batch_size=32)
    >>> mod.fit(mx.contrib.io.DataLoaderIter(loader), num_epoch=1)
    """

    def __init__(self, loader, data_name="data", label_name="softmax_label", dtype="float32"):
        super().__init__()
        self._loader = loader
        first = next(iter(loader), None)
        if first is None or len(first) != 2:
            raise ValueError("DataLoaderIter: the loader must yield (data, label) batches; "
                             "got %s" % ("no batch" if first is None else
                                         "%d arrays" % len(first)))
        data, label = first
        self.batch_size = data.shape[0]
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._current_batch = None
        self.reset()

    def reset(self):
        self._iter = iter(self._loader)

    def iter_next(self):
        self._current_batch = next(self._iter, None)
        return self._current_batch is not None

    def _padded(self, x):
        x = x.astype(self.dtype)
        if x.shape[0] == self.batch_size:
            return x
        out = nd.zeros((self.batch_size,) + tuple(x.shape[1:]), ctx=x.context, dtype=self.dtype)
        out[:x.shape[0]] = x
        return out

    def getdata(self):
        return [self._padded(self._current_batch[0])]

    def getlabel(self):
        return [self._padded(self._current_batch[1])]

    def getpad(self):
        return self.batch_size - self._current_batch[0].shape[0]

    def getindex(self):
        return None
