"""``mx.image.ImageIter``: batches of decoded, augmented images from a RecordIO file
(``.rec``, optionally indexed by ``.idx``), an image list file (``.lst``) or a Python list.
"""
import logging
import numbers
import os
import random

from .. import io
from .. import nd
from .. import recordio
from .augmenters import CreateAugmenter
from .image import imdecode

__all__ = ["ImageIter"]


def _read_lst(path, dtype):
    """An image list file: tab-separated index, label(s), relative path per line."""
    imglist, keys = {}, []
    with open(path) as fin:
        for line in iter(fin.readline, ""):
            line = line.strip().split("\t")
            key = int(line[0])
            imglist[key] = (nd.array([float(v) for v in line[1:-1]], dtype=dtype), line[-1])
            keys.append(key)
    return imglist, keys


def _from_list(items, dtype):
    """A Python list of ``[label or labels..., path]``, keyed "1", "2", ... as MXNet."""
    imglist, keys = {}, []
    for index, img in enumerate(items, start=1):
        if len(img) > 2:
            label = nd.array(img[:-1], dtype=dtype)
        elif isinstance(img[0], numbers.Number):
            label = nd.array([img[0]], dtype=dtype)
        else:
            label = nd.array(img[0], dtype=dtype)
        imglist[str(index)] = (label, img[-1])
        keys.append(str(index))
    return imglist, keys


class ImageIter(io.DataIter):
    """Image data iterator with augmentation, as ``mxnet.image.ImageIter``.

    Give ``path_imgrec`` (a .rec file; ``path_imgidx`` too for shuffling and
    partitions), or ``path_imglist`` / ``imglist`` with ``path_root``. Batches hold
    ``data`` of shape (batch_size, C, H, W) float32 and labels of shape (batch_size,)
    (or (batch_size, label_width)).

    Parameters
    ----------
    batch_size : int
    data_shape : (3, H, W)
    label_width : int, default 1
    path_imgrec, path_imglist, path_root, path_imgidx : str, optional
    shuffle : bool, default False
        Shuffle (Python's ``random``) at each reset.
    part_index, num_parts : int
        Read only part ``part_index`` of ``num_parts`` equal parts.
    aug_list : list of Augmenter, optional
        Defaults to ``CreateAugmenter(data_shape, **kwargs)``.
    imglist : list, optional
        ``[[label(s)..., path], ...]``.
    data_name, label_name : str
    dtype : {'float32', 'int32', 'int64', 'float64'}
        Label dtype.
    last_batch_handle : {'pad', 'discard', 'roll_over'}
    **kwargs
        Options of ``CreateAugmenter``.

    Examples
    --------
    >>> it = mx.image.ImageIter(4, (3, 32, 32), path_imgrec='train.rec')  # doctest: +SKIP
    >>> next(it).data[0].shape                                          # doctest: +SKIP
    (4, 3, 32, 32)
    """

    def __init__(self, batch_size, data_shape, label_width=1,
                 path_imgrec=None, path_imglist=None, path_root=None, path_imgidx=None,
                 shuffle=False, part_index=0, num_parts=1, aug_list=None, imglist=None,
                 data_name="data", label_name="softmax_label", dtype="float32",
                 last_batch_handle="pad", **kwargs):
        super().__init__(batch_size)
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise ValueError("ImageIter: give path_imgrec, path_imglist or imglist (a list)")
        if dtype not in ("int32", "float32", "int64", "float64"):
            raise ValueError("ImageIter: label dtype %r not supported (int32, float32, int64, "
                             "float64)" % (dtype,))
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ValueError("ImageIter: last_batch_handle must be 'pad', 'discard' or "
                             "'roll_over', got %r" % (last_batch_handle,))
        self._open_rec(path_imgrec, path_imgidx)
        imgkeys = None
        if path_imglist:
            self.imglist, imgkeys = _read_lst(path_imglist, dtype)
        elif isinstance(imglist, list):
            self.imglist, imgkeys = _from_list(imglist, dtype)
        else:
            self.imglist = None
        self.path_root = path_root
        self.check_data_shape(data_shape)
        self.provide_data = [io.DataDesc(data_name, (batch_size,) + tuple(data_shape))]
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_label = [io.DataDesc(label_name, label_shape)]
        self.batch_size = batch_size
        self.data_shape = tuple(data_shape)
        self.label_width = label_width
        self.shuffle = shuffle
        self.seq = self._sequence(imgkeys, shuffle, num_parts, path_imgidx)
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise ValueError("ImageIter: part_index must be in [0, %d), got %d"
                                 % (num_parts, part_index))
            n = len(self.seq) // num_parts
            self.seq = self.seq[part_index * n:(part_index + 1) * n]
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data = None
        self._cache_label = None
        self._cache_idx = None
        self.reset()

    def _open_rec(self, path_imgrec, path_imgidx):
        self.imgidx = None
        self.imgrec = None
        if not path_imgrec:
            return
        logging.info("%s: loading recordio %s...", type(self).__name__, path_imgrec)
        if path_imgidx:
            self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
            self.imgidx = list(self.imgrec.keys)
        else:
            self.imgrec = recordio.MXRecordIO(path_imgrec, "r")

    def _sequence(self, imgkeys, shuffle, num_parts, path_imgidx):
        """The keys read in order, or None to read the .rec file sequentially."""
        if self.imgrec is None:
            return imgkeys
        if shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise ValueError("ImageIter: shuffle and num_parts > 1 need path_imgidx "
                                 "(the .idx file of path_imgrec)")
            return self.imgidx
        return None

    def reset(self):
        """Back to the first sample (reshuffled when ``shuffle``); with 'roll_over' the
        samples left from the last epoch start the next batch."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        """Reset and drop any samples kept for 'roll_over'."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache_data = None
        self._cache_label = None
        self._cache_idx = None

    def next_sample(self):
        """The next (label, encoded image bytes); StopIteration at the end."""
        if self._allow_read is False:
            raise StopIteration
        if self.seq is None:
            s = self.imgrec.read()
            if s is None:
                if self.last_batch_handle != "discard":
                    self.imgrec.reset()
                raise StopIteration
            self.cur += 1       # only to name a broken record (MXNet keeps no count here)
            header, img = recordio.unpack(s)
            return header.label, img
        if self.cur >= self.num_image:
            if self.last_batch_handle != "discard":
                self.cur = 0
            raise StopIteration
        idx = self.seq[self.cur]
        self.cur += 1
        if self.imgrec is not None:
            header, img = recordio.unpack(self.imgrec.read_idx(idx))
            if self.imglist is None:
                return header.label, img
            return self.imglist[idx][0], img
        label, fname = self.imglist[idx]
        return label, self.read_image(fname)

    def _batchify(self, batch_data, batch_label, start=0):
        """Fill the batch from position ``start``; returns the number of samples in it."""
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                except RuntimeError as e:
                    logging.debug("Invalid image, skipping:  %s", str(e))
                    continue
                data = self.augmentation_transform(data)
                batch_data[i] = self.postprocess_data(data)
                batch_label[i] = label
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def next(self):
        """The next ``DataBatch`` (``pad`` counts the samples repeated from the start)."""
        if self._cache_data is not None:
            batch_data, batch_label = self._cache_data, self._cache_label
            i = self._cache_idx
        else:
            batch_data = nd.zeros((self.batch_size,) + tuple(self.data_shape))
            batch_label = self._new_label_batch()
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad != 0:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return io.DataBatch([batch_data], [batch_label], pad=pad)

    def _new_label_batch(self):
        """The label array a batch is filled into (every row is written)."""
        return nd.empty(self.provide_label[0].shape)

    def check_data_shape(self, data_shape):
        """Check that ``data_shape`` is (3, H, W)."""
        if not len(data_shape) == 3:
            raise ValueError("data_shape should have length 3, with dimensions CxHxW")
        if not data_shape[0] == 3:
            raise ValueError("This iterator expects inputs to have 3 channels.")

    def check_valid_image(self, data):
        """Raise RuntimeError for an empty image (it is then skipped)."""
        if len(data[0].shape) == 0:
            raise RuntimeError("Data shape is wrong")

    def imdecode(self, s):
        """Decode image bytes (see ``mx.image.imdecode``), naming the sample on failure."""
        try:
            return imdecode(s)
        except ImportError:
            raise
        except Exception as e:
            raise RuntimeError("%s, %s" % (self._locate(), e)) from None

    def _locate(self):
        if self.seq is not None:
            idx = self.seq[(self.cur % self.num_image) - 1]
        else:
            idx = self.cur - 1
        if self.imglist is not None:
            return "Broken image filename: %s" % (self.imglist[idx][1],)
        return "Broken image index: %s" % (idx,)

    def read_image(self, fname):
        """The bytes of image file ``fname`` under ``path_root``."""
        with open(os.path.join(self.path_root or "", fname), "rb") as fin:
            return fin.read()

    def augmentation_transform(self, data):
        """Apply the augmenters in order."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        """HWC to CHW, before the image goes into the batch."""
        return nd.transpose(datum, axes=(2, 0, 1))
