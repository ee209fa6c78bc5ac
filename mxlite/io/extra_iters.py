"""File-reading and prefetching data iterators: ``MNISTIter``, ``CSVIter`` and
``PrefetchingIter``, as ``mxnet.io``.

MXNet implements the first two in C++ (``src/io/iter_mnist.cc``, ``iter_csv.cc``
behind a batch loader and a prefetch thread); here they read the whole file into
NumPy at construction and cut batches from it, which gives the same batches.
"""
import gzip
import logging
import math
import os
import struct
import threading

import numpy as np

from ..base import MXNetError, parse_bool, parse_int, parse_shape
from ..nd.ndarray import array
from .io import DataBatch, DataDesc, DataIter, MXDataIter, _HoldsBatch, ignore_unknown_args

__all__ = ["MNISTIter", "CSVIter", "PrefetchingIter"]

_LOG = logging.getLogger(__name__)


class _FileIter(MXDataIter):
    """A single-input, single-label iterator over batches held in NumPy buffers.

    Subclasses fill ``self._x``, ``self._y``, ``self._index`` and ``self._pad`` in
    ``iter_next``. As MXNet's ``MXDataIter``, ``getdata``/``getlabel`` return one
    NDArray (not a list) and ``next`` wraps them in a ``DataBatch``.
    """

    def __init__(self, batch_size, data_name, label_name):
        DataIter.__init__(self, batch_size)
        self._data_name = data_name
        self._label_name = label_name
        self._x = self._y = self._index = None
        self._pad = 0

    @property
    def provide_data(self):
        return [DataDesc(self._data_name, self._data_shape(), self._data_dtype().type)]

    @property
    def provide_label(self):
        return [DataDesc(self._label_name, self._label_shape(), self._label_dtype().type)]

    def _check_current(self):
        if self._x is None:
            raise MXNetError("%s: no current batch; call iter_next() (or next()) first"
                             % type(self).__name__)

    def getdata(self):
        self._check_current()
        return array(self._x, dtype=self._x.dtype)

    def getlabel(self):
        self._check_current()
        return array(self._y, dtype=self._y.dtype)

    def getindex(self):
        self._check_current()
        return self._index.copy()

    def getpad(self):
        return self._pad



def _positive(name, value, where):
    value = parse_int(value)
    if value <= 0:
        raise ValueError("%s: %s must be positive, got %d" % (where, name, value))
    return value


# ----------------------------------------------------------------------------
# MNIST

# idx file magic numbers: 0x0000 0x08 (unsigned byte) then the number of dimensions.
_IDX_MAGIC = {3: 0x00000803, 1: 0x00000801}


def _read_file(path, where):
    """The bytes of ``path``, gunzipped when it starts with the gzip magic."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise MXNetError("%s: cannot open %r: %s" % (where, path, e.strerror or e)) from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            raise MXNetError("%s: %r is not a valid gzip file: %s" % (where, path, e)) from None
    return raw


def _read_idx(path, ndim, where):
    """A uint8 array from an MNIST idx file of ``ndim`` dimensions (3 images, 1 labels)."""
    raw = _read_file(path, where)
    head = 4 * (ndim + 1)
    if len(raw) < head:
        raise MXNetError("%s: %r is too short (%d bytes) for an idx%d-ubyte header"
                         % (where, path, len(raw), ndim))
    magic, *dims = struct.unpack(">%dI" % (ndim + 1), raw[:head])
    if magic != _IDX_MAGIC[ndim]:
        raise MXNetError("%s: %r has magic number %#010x, expected %#010x (an idx%d-ubyte "
                         "file of %s)" % (where, path, magic, _IDX_MAGIC[ndim], ndim,
                                          "images" if ndim == 3 else "labels"))
    need = head + math.prod(dims)
    if len(raw) < need:
        raise MXNetError("%s: %r is truncated: its header %s needs %d bytes, the file has %d"
                         % (where, path, tuple(dims), need, len(raw)))
    return np.frombuffer(raw, dtype=np.uint8, count=need - head, offset=head).reshape(dims)


def _part_range(count, num_parts, part_index):
    """MXNet's split of ``count`` samples into ``num_parts`` contiguous parts."""
    return count * part_index // num_parts, count * (part_index + 1) // num_parts


class MNISTIter(_FileIter):
    """Iterate over the MNIST idx files (plain or gzipped) in batches.

    Images become float32 in [0, 1) and labels float32, as MXNet's ``MNISTIter``.

    Parameters
    ----------
    image, label : str
        Paths of the idx3-ubyte images and idx1-ubyte labels.
    batch_size : int
        The incomplete last batch is dropped (MXNet never pads MNIST batches).
    shuffle : bool
        Shuffle the samples once, at construction, with ``seed``: every epoch then
        visits them in that same order, as MXNet does.
    flat : bool
        Batches of shape (batch_size, rows*cols) instead of (batch_size, 1, rows, cols).
    seed : int
    silent : bool
        When False, log (``logging.info``) how many images were loaded.
    num_parts, part_index : int
        Read only part ``part_index`` of ``num_parts`` contiguous parts, samples
        ``[count * part_index // num_parts, count * (part_index + 1) // num_parts)``,
        for distributed training.
    prefetch_buffer, ctx
        Accepted for compatibility; batches are cut from memory and live on cpu.
    dtype : None or 'float32'
    data_name, label_name : str

    Notes
    -----
    Differences from MXNet 1.9.1: the shuffled order comes from NumPy's RandomState,
    not MXNet's engine (the same samples per epoch, in another order); ``index`` holds
    each sample's position in the file (MXNet returns zeros); gzipped files are read;
    a wrong magic number, a truncated file, image and label counts that differ and a
    batch larger than the data raise MXNetError (MXNet reads garbage or stops).
    NOTE: MXNet scales by 1/256, not 1/255, so a 255 pixel becomes 0.99609375.

    Examples
    --------
    >>> it = mx.io.MNISTIter(image='train-images-idx3-ubyte',
    ...                      label='train-labels-idx1-ubyte', batch_size=100)
    >>> it.provide_data
    [DataDesc[data,(100, 1, 28, 28),<class 'numpy.float32'>,NCHW]]
    """

    def __init__(self, image="./train-images-idx3-ubyte", label="./train-labels-idx1-ubyte",
                 batch_size=128, shuffle=True, flat=False, seed=0, silent=False, num_parts=1,
                 part_index=0, prefetch_buffer=4, ctx="gpu", dtype=None, data_name="data",
                 label_name="softmax_label", **kwargs):
        where = "MNISTIter"
        ignore_unknown_args(where, kwargs)
        super().__init__(_positive("batch_size", batch_size, where), data_name, label_name)
        self.flat = parse_bool(flat)
        num_parts = _positive("num_parts", num_parts, where)
        part_index = parse_int(part_index)
        if not 0 <= part_index < num_parts:
            raise ValueError("MNISTIter: part_index must be in [0, num_parts=%d), got %d"
                             % (num_parts, part_index))
        if dtype is not None and np.dtype(dtype) != np.float32:
            raise MXNetError("MNISTIter: dtype must be None or float32, got %r" % (dtype,))
        images = _read_idx(image, 3, where)
        labels = _read_idx(label, 1, where)
        if len(images) != len(labels):
            raise MXNetError("MNISTIter: %r holds %d images but %r holds %d labels"
                             % (image, len(images), label, len(labels)))
        start, end = _part_range(len(images), num_parts, part_index)
        self._order = np.arange(start, end)
        if parse_bool(shuffle):
            self._order = np.random.RandomState(parse_int(seed)).permutation(self._order)
        if len(self._order) < self.batch_size:
            raise MXNetError("MNISTIter: batch_size %d is larger than the %d images of part "
                             "%d of %d in %r" % (self.batch_size, len(self._order), part_index,
                                                 num_parts, image))
        self._images, self._labels = images, labels
        self._cursor = 0
        if not parse_bool(silent):
            _LOG.info("MNISTIter: load %d images, shuffle=%d, shape=%s", len(self._order),
                      parse_bool(shuffle), list(self._data_shape()))

    def _data_shape(self):
        rows, cols = self._images.shape[1:]
        if self.flat:
            return (self.batch_size, rows * cols)
        return (self.batch_size, 1, rows, cols)

    def _label_shape(self):
        return (self.batch_size,)

    def _data_dtype(self):
        return np.dtype(np.float32)

    _label_dtype = _data_dtype

    def reset(self):
        super().reset()
        self._cursor = 0

    def iter_next(self):
        end = self._cursor + self.batch_size
        if end > len(self._order):
            return False
        sel = self._order[self._cursor:end]
        self._cursor = end
        # NOTE: times 1/256 (a power of two) is exactly MXNet's division by 256.
        self._x = (self._images[sel].astype(np.float32) * np.float32(1 / 256)).reshape(
            self._data_shape())
        self._y = self._labels[sel].astype(np.float32)
        self._index = sel.astype(np.uint64)
        self._pad = 0
        return True


# ----------------------------------------------------------------------------
# CSV

_CSV_DTYPES = ("float32", "int32", "int64")


def _csv_files(path, where):
    """``path`` itself, or the regular files of directory ``path`` sorted by name."""
    if os.path.isdir(path):
        files = sorted(os.path.join(path, f) for f in os.listdir(path)
                       if os.path.isfile(os.path.join(path, f)))
        if not files:
            raise MXNetError("%s: directory %r holds no files" % (where, path))
        return files
    if not os.path.exists(path):
        raise MXNetError("%s: cannot open %r: no such file or directory" % (where, path))
    return [path]


def _parse_field(tok, dtype):
    if dtype.kind == "f":
        return float(tok)
    try:
        return int(tok)
    except ValueError:
        # NOTE: as MXNet's integer parser, '1.7' -> 1 and '-2.5' -> -2 (truncation).
        return int(float(tok))


def _read_csv(path, width, dtype, what, where):
    """Rows of ``width`` values from a CSV file or directory, as an (n, width) array.

    Blank lines are skipped. NOTE: float32 fields are parsed as float64 and then
    rounded, which can differ from MXNet's direct parse in the last bit for numbers
    with more than ~9 significant digits.
    """
    rows = []
    for fname in _csv_files(path, where):
        with open(fname, "r") as f:
            for lineno, line in enumerate(f, 1):
                line = line.strip()
                if not line:
                    continue
                toks = line.split(",")
                if len(toks) != width:
                    raise MXNetError("%s: line %d of %r has %d values but %s needs %d"
                                     % (where, lineno, fname, len(toks), what, width))
                try:
                    rows.append([_parse_field(t.strip(), dtype) for t in toks])
                except ValueError:
                    raise MXNetError("%s: line %d of %r is not numeric: %r"
                                     % (where, lineno, fname, line)) from None
    if not rows:
        raise MXNetError("%s: %r holds no rows" % (where, path))
    return np.array(rows, dtype=dtype)


class CSVIter(_FileIter):
    """Iterate over the rows of a CSV file (or a directory of them) in batches.

    Parameters
    ----------
    data_csv : str
        A CSV file, or a directory whose files are read in name order.
    data_shape : tuple of int
        The shape of one sample: each row holds ``prod(data_shape)`` values.
    label_csv : str or None
        Labels, one row per sample; None gives zero labels.
    label_shape : tuple of int
        The shape of one label; a single-value label gives labels of shape (batch_size,).
    batch_size : int
    round_batch : bool
        True: the last incomplete batch is filled from the start of the data (``pad``
        tells how many) and the next epoch starts after those samples, as MXNet (the
        epoch after an epoch that wrapped can be shorter, even empty). False: the last
        batch is padded with the previous batch's rows and every epoch starts at row 0.
    prefetch_buffer, ctx
        Accepted for compatibility; the data lives in memory on cpu.
    dtype : {'float32', 'int32', 'int64'}
        The dtype of both data and label.
    data_name, label_name : str

    Notes
    -----
    Differences from MXNet 1.9.1: when a wrapped-around batch needs more rows than the
    data has, the rows are cycled again (MXNet fails with "number of input must be
    bigger than batch size"); a non-numeric field raises MXNetError naming the line;
    label rows beyond the data rows are ignored, as MXNet does.

    Examples
    --------
    >>> it = mx.io.CSVIter(data_csv='data.csv', data_shape=(3,), batch_size=2)
    >>> it.provide_data
    [DataDesc[data,(2, 3),<class 'numpy.float32'>,NCHW]]
    """

    def __init__(self, data_csv, data_shape, label_csv=None, label_shape=(1,), batch_size=None,
                 round_batch=True, prefetch_buffer=4, ctx="gpu", dtype="float32",
                 data_name="data", label_name="softmax_label", **kwargs):
        where = "CSVIter"
        ignore_unknown_args(where, kwargs)
        if batch_size is None:
            raise ValueError("CSVIter: batch_size is required")
        super().__init__(_positive("batch_size", batch_size, where), data_name, label_name)
        self.data_shape = parse_shape(data_shape)
        self.label_shape = parse_shape(label_shape)
        self.round_batch = parse_bool(round_batch)
        self._dtype = self._parse_dtype(dtype)
        width = math.prod(self.data_shape)
        self._rows = _read_csv(data_csv, width, self._dtype, "data_shape %s"
                               % (self.data_shape,), where)
        n = len(self._rows)
        lwidth = math.prod(self.label_shape)
        if label_csv is None:
            self._labels = np.zeros((n, lwidth), dtype=self._dtype)
        else:
            labels = _read_csv(label_csv, lwidth, self._dtype, "label_shape %s"
                               % (self.label_shape,), where)
            if len(labels) < n:
                raise MXNetError("CSVIter: %r has %d rows but data_csv %r has %d"
                                 % (label_csv, len(labels), data_csv, n))
            self._labels = labels[:n]
        # The batch buffers are reused, as MXNet's batch loader: without round_batch
        # the padded rows of a last batch keep the previous batch's values.
        self._x = np.zeros((self.batch_size, width), dtype=self._dtype)
        self._y = np.zeros((self.batch_size, lwidth), dtype=self._dtype)
        self._index = np.zeros(self.batch_size, dtype=np.uint64)
        self._have_batch = False
        self._pos = 0           # the next row the row reader yields
        self._overflow = 0      # rows taken from the next epoch by the last batch

    @staticmethod
    def _parse_dtype(dtype):
        name = "float32" if dtype is None else np.dtype(dtype).name
        if name not in _CSV_DTYPES:
            raise MXNetError("CSVIter: dtype %s is not supported; expected one of %s"
                             % (name, ", ".join(_CSV_DTYPES)))
        return np.dtype(name)

    def _data_shape(self):
        return (self.batch_size,) + self.data_shape

    def _label_shape(self):
        if math.prod(self.label_shape) == 1:
            return (self.batch_size,)
        return (self.batch_size,) + self.label_shape

    def _data_dtype(self):
        return self._dtype

    _label_dtype = _data_dtype

    def reset(self):
        super().reset()
        # As MXNet: after a batch that wrapped around, the next epoch goes on from
        # where the wrap stopped instead of restarting at row 0.
        if self.round_batch and self._overflow:
            self._overflow = 0
        else:
            self._pos = 0

    def _fill(self, top, count):
        """Copy ``count`` rows from the reader position into batch slots from ``top``."""
        sel = np.arange(self._pos, self._pos + count) % len(self._rows)
        self._x[top:top + count] = self._rows[sel]
        self._y[top:top + count] = self._labels[sel]
        self._index[top:top + count] = sel
        self._pos = int(sel[-1]) + 1 if count else self._pos

    def iter_next(self):
        self._pad = 0
        if self._overflow:
            return False
        top = min(self.batch_size, len(self._rows) - self._pos)
        if top <= 0:
            return False
        self._fill(0, top)
        need = self.batch_size - top
        if need and self.round_batch:
            self._pos = 0
            self._fill(top, need)
            self._overflow = need
        self._pad = need
        self._have_batch = True
        return True

    def _check_current(self):
        if not self._have_batch:
            raise MXNetError("CSVIter: no current batch; call iter_next() (or next()) first")

    def getdata(self):
        self._check_current()
        return array(self._x.reshape(self._data_shape()), dtype=self._dtype)

    def getlabel(self):
        self._check_current()
        return array(self._y.reshape(self._label_shape()), dtype=self._dtype)


# ----------------------------------------------------------------------------
# Prefetching

class _Prefetcher:
    """One background thread that fetches the next batch of one iterator.

    The thread holds only this object (never the PrefetchingIter), so that a dropped
    PrefetchingIter is collected and its ``__del__`` stops the thread.
    """

    def __init__(self, data_iter, name):
        self.data_iter = data_iter
        self.batch = None
        self.error = None
        self._ready = threading.Event()     # a fetch finished: batch/error are set
        self._wanted = threading.Event()    # the consumer asks for the next fetch
        self._wanted.set()
        self._alive = True
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self):
        while True:
            self._wanted.wait()
            if not self._alive:
                return
            self._wanted.clear()
            try:
                self.batch, self.error = self.data_iter.next(), None
            except StopIteration:
                self.batch, self.error = None, None
            except BaseException as e:   # handed to the consumer thread, raised there
                self.batch, self.error = None, e
            self._ready.set()

    def wait(self):
        """Block until the pending fetch is done."""
        self._ready.wait()

    def request(self):
        """Start fetching the next batch (call only after ``wait``)."""
        self._ready.clear()
        self._wanted.set()

    def close(self, timeout=None):
        self._alive = False
        self._wanted.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)


def _renamed(descs, renames, where):
    if renames is None:
        return list(descs)
    out = []
    for x in descs:
        if x.name not in renames:
            raise KeyError("PrefetchingIter: %s has no entry for %r (it maps %s)"
                           % (where, x.name, sorted(renames)))
        out.append(DataDesc(renames[x.name], x.shape, x.dtype))
    return out


class PrefetchingIter(_HoldsBatch, DataIter):
    """Fetch the next batches of one or more iterators in background threads.

    The batches of several iterators are joined: their data lists, then their label
    lists, are concatenated (the first iterator's ``pad`` and ``index`` are kept).

    Parameters
    ----------
    iters : DataIter or list of DataIter
        All must yield the same number of batches with the same ``pad``.
    rename_data, rename_label : None or list of dict
        The i-th dict maps the names of ``iters[i].provide_data`` (``provide_label``)
        to new names; it must name every entry.

    Notes
    -----
    An error raised by a wrapped iterator is raised again by ``next``/``iter_next``
    in the consumer thread (that epoch then ends; ``reset`` starts a new one). The
    threads are daemons and stop on ``close()`` or when the iterator is collected.
    Better than MXNet 1.9.1: mismatched iterators raise MXNetError (MXNet asserts).

    Examples
    --------
    >>> it1 = mx.io.NDArrayIter(mx.nd.ones((100, 10)), batch_size=25)
    >>> it2 = mx.io.NDArrayIter(mx.nd.ones((100, 10)), batch_size=25)
    >>> piter = mx.io.PrefetchingIter([it1, it2], rename_data=[{'data': 'data_1'},
    ...                                                         {'data': 'data_2'}])
    >>> [d.name for d in piter.provide_data]
    ['data_1', 'data_2']
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        if not isinstance(iters, (list, tuple)):
            iters = [iters]
        if not iters:
            raise ValueError("PrefetchingIter: iters must hold at least one DataIter")
        self.iters = list(iters)
        self.n_iter = len(self.iters)
        for arg, value in (("rename_data", rename_data), ("rename_label", rename_label)):
            if value is not None and len(value) != self.n_iter:
                raise ValueError("PrefetchingIter: %s must hold one dict per iterator (%d), "
                                 "got %d" % (arg, self.n_iter, len(value)))
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0].shape[0]
        self.current_batch = None
        self._workers = [_Prefetcher(it, "PrefetchingIter-%d" % i)
                         for i, it in enumerate(self.iters)]

    @property
    def provide_data(self):
        renames = self.rename_data or [None] * self.n_iter
        return sum((_renamed(it.provide_data, r, "rename_data[%d]" % i)
                    for i, (it, r) in enumerate(zip(self.iters, renames))), [])

    @property
    def provide_label(self):
        renames = self.rename_label or [None] * self.n_iter
        return sum((_renamed(it.provide_label, r, "rename_label[%d]" % i)
                    for i, (it, r) in enumerate(zip(self.iters, renames))), [])

    def close(self, timeout=None):
        """Stop the prefetch threads (waits up to ``timeout`` seconds for each)."""
        for w in getattr(self, "_workers", ()):
            w.close(timeout)

    def __del__(self):
        try:
            self.close(timeout=1.0)
        except Exception:   # at interpreter shutdown the threading module may be gone
            pass

    def reset(self):
        for w in self._workers:
            w.wait()
        for it in self.iters:
            it.reset()
        for w in self._workers:
            w.request()

    def _take(self):
        """The fetched batches, or None at the end of the epoch; raises fetch errors."""
        for w in self._workers:
            w.wait()
        errors = [w.error for w in self._workers if w.error is not None]
        if errors:
            # The epoch ends here: later iter_next calls return False until reset().
            for w in self._workers:
                w.batch, w.error = None, None
            raise errors[0]
        batches = [w.batch for w in self._workers]
        ended = [b is None for b in batches]
        if any(ended) and not all(ended):
            raise MXNetError("PrefetchingIter: iterators %s ended while %s still have batches"
                             % ([i for i, e in enumerate(ended) if e],
                                [i for i, e in enumerate(ended) if not e]))
        if all(ended):
            return None
        pads = [b.pad for b in batches]
        if len(set(pads)) > 1:
            raise MXNetError("PrefetchingIter: the iterators' batches have different pad %s"
                             % pads)
        return batches

    def iter_next(self):
        batches = self._take()
        if batches is None:
            return False
        self.current_batch = DataBatch(sum((list(b.data) for b in batches), []),
                                       sum((list(b.label or []) for b in batches), []),
                                       batches[0].pad, batches[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        for w in self._workers:
            w.request()
        return True

    def next(self):
        if self.iter_next():
            return self.current_batch
        raise StopIteration

