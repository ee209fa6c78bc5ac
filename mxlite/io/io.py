"""Data iterators for the Module API: ``DataDesc``, ``DataBatch``, ``DataIter``,
``NDArrayIter`` and ``ResizeIter``, as ``mxnet.io``."""
import logging
import warnings
from collections import OrderedDict, namedtuple

import numpy as np

from ..base import MXNetError
from ..nd.ndarray import NDArray, array

__all__ = ["DataDesc", "DataBatch", "DataIter", "MXDataIter", "NDArrayIter", "ResizeIter"]


def ignore_unknown_args(where, unknown):
    """MXNet's C++ data iterators ignore keywords they do not know (``data_shape`` given
    to ``MNISTIter``); so do mxlite's, with one warning naming them."""
    if unknown:
        warnings.warn("%s: MXNet ignores the argument(s) %s, and so does mxlite"
                      % (where, ", ".join(sorted(unknown))), stacklevel=3)


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name, shape, dtype and layout of one input of a model.

    Examples
    --------
    >>> mx.io.DataDesc('data', (32, 3, 28, 28))
    DataDesc[data,(32, 3, 28, 28),<class 'numpy.float32'>,NCHW]
    """

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        ret = super().__new__(cls, name, tuple(shape))
        ret.dtype = dtype
        ret.layout = layout
        return ret

    def __repr__(self):
        return "DataDesc[%s,%s,%s,%s]" % (self.name, self.shape, self.dtype, self.layout)

    @staticmethod
    def get_batch_axis(layout):
        """The index of 'N' in ``layout`` (0 when layout is None)."""
        if layout is None:
            return 0
        return layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """DataDescs from ``[(name, shape)]`` and optionally ``[(name, dtype)]``."""
        if types is not None:
            type_dict = dict(types)
            return [DataDesc(x[0], x[1], type_dict[x[0]]) for x in shapes]
        return [DataDesc(x[0], x[1]) for x in shapes]


class DataBatch:
    """One batch: lists of data and label arrays, and the number of padded samples."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError("DataBatch: data must be a list of NDArrays, got %s"
                            % type(data).__name__)
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError("DataBatch: label must be a list of NDArrays, got %s"
                            % type(label).__name__)
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [l.shape for l in self.label] if self.label else None
        return "%s: data shapes: %s label shapes: %s" % (type(self).__name__, data_shapes,
                                                        label_shapes)


class DataIter:
    """Base class of data iterators: iterate, or call ``next()`` until StopIteration."""

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        pass

    def next(self):
        if self.iter_next():
            return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                             index=self.getindex())
        raise StopIteration

    def __next__(self):
        return self.next()

    def iter_next(self):
        raise NotImplementedError()

    def getdata(self):
        raise NotImplementedError()

    def getlabel(self):
        raise NotImplementedError()

    def getindex(self):
        return None

    def getpad(self):
        raise NotImplementedError()


def _init_data(data, allow_empty, default_name):
    """Normalise data/label into an ordered list of (name, numpy array)."""
    if data is None:
        if not allow_empty:
            raise ValueError("NDArrayIter: data must not be None")
        return []
    if isinstance(data, (np.ndarray, NDArray, list)) and not (
            isinstance(data, list) and data and isinstance(data[0], (np.ndarray, NDArray))):
        data = [data]
    if isinstance(data, list):
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict([("_%d_%s" % (i, default_name), d) for i, d in enumerate(data)])
    if not isinstance(data, dict):
        raise TypeError("NDArrayIter: data must be an NDArray, numpy array, list or dict of them")
    out = []
    for k, v in data.items():
        # As MXNet: NDArrays keep their dtype, anything else becomes float32.
        v = v.asnumpy() if isinstance(v, NDArray) else np.asarray(v, dtype=np.float32)
        out.append((k, v))
    return out


class NDArrayIter(DataIter):
    """Iterate over in-memory arrays in batches.

    Parameters
    ----------
    data, label : array, list or dict of arrays
    batch_size : int
    shuffle : bool
        Shuffle the samples at the start of every epoch (with NumPy's global RNG).
    last_batch_handle : {'pad', 'discard', 'roll_over'}
        'pad' fills the last batch from the start of the data (``pad`` tells how many),
        'discard' drops it, 'roll_over' carries the remainder into the next epoch.
    data_name, label_name : str
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad",
                 data_name="data", label_name="softmax_label"):
        super().__init__(batch_size)
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ValueError("NDArrayIter: last_batch_handle must be 'pad', 'discard' or "
                             "'roll_over', got %r" % (last_batch_handle,))
        if batch_size <= 0:
            raise ValueError("NDArrayIter: batch_size must be positive, got %r" % (batch_size,))
        self.data = _init_data(data, False, data_name)
        self.label = _init_data(label, True, label_name)
        n = self.data[0][1].shape[0]
        for k, v in self.data + self.label:
            if v.shape[0] < n:
                raise ValueError("NDArrayIter: %r has %d samples but %r has %d"
                                 % (k, v.shape[0], self.data[0][0], n))
        longer = [k for k, v in self.data + self.label if v.shape[0] > n]
        if longer:
            # As MXNet: the first data array sets the number of samples; longer arrays
            # give their first ones.
            warnings.warn("NDArrayIter: %s hold more than the %d samples of %r; only their "
                          "first %d are used" % (", ".join(map(repr, longer)), n,
                                                 self.data[0][0], n), stacklevel=2)
            self.data = [(k, v[:n]) for k, v in self.data]
            self.label = [(k, v[:n]) for k, v in self.label]
        self.num_data = n
        if last_batch_handle == "discard" and n < batch_size:
            raise ValueError("NDArrayIter: batch_size %d is larger than the %d samples"
                             % (batch_size, n))
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.idx = np.arange(n)
        self._cache = None      # roll_over remainder indices
        self.cursor = -batch_size
        self.reset()

    @property
    def provide_data(self):
        return [DataDesc(k, (self.batch_size,) + v.shape[1:], v.dtype.type) for k, v in self.data]

    @property
    def provide_label(self):
        return [DataDesc(k, (self.batch_size,) + v.shape[1:], v.dtype.type)
                for k, v in self.label]

    def hard_reset(self):
        """Reset, dropping any rolled-over samples."""
        self._cache = None
        self.reset()

    def reset(self):
        if self.shuffle:
            np.random.shuffle(self.idx)
        self._order = self.idx
        if self.last_batch_handle == "roll_over" and self._cache is not None:
            self._order = np.concatenate([self._cache, self.idx])
            self._cache = None
        self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        n = len(self._order)
        if self.cursor >= n:
            return False
        remaining = n - self.cursor
        if remaining < self.batch_size:
            if self.last_batch_handle == "discard":
                return False
            if self.last_batch_handle == "roll_over":
                self._cache = self._order[self.cursor:]
                return False
        return True

    def _batch_indices(self):
        end = self.cursor + self.batch_size
        sel = self._order[self.cursor:end]
        if len(sel) < self.batch_size:      # 'pad': wrap around to the start
            sel = np.concatenate([sel, self._order[:self.batch_size - len(sel)]])
        return sel

    def _take(self, arrays):
        sel = self._batch_indices()
        return [array(v[sel], dtype=v.dtype) for _, v in arrays]

    def getdata(self):
        return self._take(self.data)

    def getlabel(self):
        return self._take(self.label)

    def getindex(self):
        return self._batch_indices()

    def getpad(self):
        if self.last_batch_handle == "pad":
            over = self.cursor + self.batch_size - len(self._order)
            return max(over, 0)
        return 0

    def next(self):
        if not self.iter_next():
            raise StopIteration
        # NOTE: MXNet's NDArrayIter batches carry no index (getindex() still gives it).
        return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                         index=None, provide_data=self.provide_data,
                         provide_label=self.provide_label)


class _HoldsBatch:
    """The ``get*`` accessors of an iterator that keeps its batch in ``current_batch``."""

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class _NextWithDescs:
    """``next()`` of an iterator whose batches also carry ``provide_data``/``provide_label``."""

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                         index=self.getindex(), provide_data=self.provide_data,
                         provide_label=self.provide_label)


class _TupleBatch(_NextWithDescs):
    """The ``get*`` accessors of an iterator keeping its batch as ``(data, label, pad[,
    index])`` in ``_batch`` (None before the first ``iter_next``)."""

    def _current(self):
        if self._batch is None:
            raise MXNetError("%s: no current batch; call iter_next() (or next()) first"
                             % type(self).__name__)
        return self._batch

    def getdata(self):
        return self._current()[0]

    def getlabel(self):
        return self._current()[1]

    def getpad(self):
        return self._current()[2]

    def getindex(self):
        return self._current()[3]


class MXDataIter(_NextWithDescs, DataIter):
    """The class of MXNet's native iterators (``MNISTIter``, ``CSVIter``, ``LibSVMIter``,
    ``ImageRecordIter``, ``ImageDetRecordIter``): ``isinstance(it, mx.io.MXDataIter)``
    holds for them as in MXNet. ``getdata``/``getlabel`` give one NDArray (not a list)
    and ``next`` wraps them in a ``DataBatch``.

    Parameters
    ----------
    handle : iterator
        What MXNet's C++ iterator handle does: an object with ``iter_next``,
        ``getdata``, ``getlabel``, ``getindex``, ``getpad`` and ``reset`` (for example
        another native iterator). ``MXDataIter(handle)`` reads its first batch to learn
        ``provide_data``/``provide_label`` and ``batch_size``, as MXNet does.
    data_name, label_name : str
        The names in ``provide_data``/``provide_label``.

    NOTE: mxlite's native iterators are subclasses that do the work themselves (their
    handle is ``None``); in MXNet they are the C++ iterators behind a handle.
    """

    handle = None
    first_batch = None
    _debug_skip_load = False
    _debug_at_begin = True

    def __init__(self, handle, data_name="data", label_name="softmax_label", **_):
        super().__init__()
        for method in ("iter_next", "getdata", "getlabel", "getindex", "getpad", "reset"):
            if not callable(getattr(handle, method, None)):
                raise TypeError("MXDataIter: handle must be an iterator with %s(), got %s"
                                % (method, type(handle).__name__))
        self.handle = handle
        if not handle.iter_next():
            raise MXNetError("MXDataIter: the handle %s yields no batch" % type(handle).__name__)
        data, label = handle.getdata(), handle.getlabel()
        self._descs = ([DataDesc(data_name, data.shape, data.dtype)],
                       [DataDesc(label_name, label.shape, label.dtype)])
        self.batch_size = data.shape[0]
        self.first_batch = DataBatch(data=[data], label=[label], pad=handle.getpad(),
                                     index=handle.getindex(), provide_data=self._descs[0],
                                     provide_label=self._descs[1])
        self._debug_at_begin = False

    @property
    def provide_data(self):
        return self._descs[0]

    @property
    def provide_label(self):
        return self._descs[1]

    def debug_skip_load(self):
        """From now on every ``next()`` gives the current batch again without reading
        (to time a network without its input pipeline), as MXNet's."""
        self._debug_skip_load = True
        logging.info("Set debug_skip_load to be true, will simply return first batch")

    def reset(self):
        """Back to the first batch (a subclass resets itself after calling this)."""
        self._debug_at_begin = True
        self.first_batch = None
        if self.handle is not None:
            self.handle.reset()

    def next(self):
        if self._debug_skip_load and not self._debug_at_begin:
            return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                             index=self.getindex())
        if self.first_batch is not None:
            batch, self.first_batch = self.first_batch, None
            return batch
        self._debug_at_begin = False
        return super().next()

    def iter_next(self):
        if self.first_batch is not None:
            return True
        return self.handle.iter_next()

    def getdata(self):
        return self.handle.getdata()

    def getlabel(self):
        return self.handle.getlabel()

    def getindex(self):
        return self.handle.getindex()

    def getpad(self):
        return self.handle.getpad()


class ResizeIter(_HoldsBatch, DataIter):
    """Make ``data_iter`` yield exactly ``size`` batches per epoch (restarting as needed)."""

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__(data_iter.batch_size)
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            try:
                self.current_batch = self.data_iter.next()
            except StopIteration:
                raise MXNetError("ResizeIter: the wrapped iterator yields no batch") from None
        self.cur += 1
        return True


# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "CSVIter": "mxlite.io.extra_iters",
    "ImageDetRecordIter": "mxlite.io.det_record",
    "ImageRecordInt8Iter": "mxlite.io.image_record",
    "ImageRecordIter": "mxlite.io.image_record",
    "ImageRecordIter_v1": "mxlite.io",
    "ImageRecordUInt8Iter": "mxlite.io.image_record",
    "ImageRecordUInt8Iter_v1": "mxlite.io",
    "LibSVMIter": "mxlite.io.det_record",
    "MNISTIter": "mxlite.io.extra_iters",
    "PrefetchingIter": "mxlite.io.extra_iters",
    "c_str_array": "mxlite.base",
    "check_call": "mxlite.base",
    "py_str": "mxlite.base",
})
