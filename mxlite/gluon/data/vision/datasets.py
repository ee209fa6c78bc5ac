"""Vision datasets, as ``mxnet.gluon.data.vision``: MNIST, FashionMNIST, CIFAR10/100
from their standard files, and image folders and image RecordIO files.

Nothing is downloaded (mxlite runs where there may be no network): put the standard
files in ``root`` yourself; a missing file raises an error naming the files and where
they go.
"""
import gzip
import os
import pickle
import struct
import tarfile
import warnings

import numpy as np

from ....base import data_dir
from .... import nd
from ..dataset import Dataset, RecordFileDataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100", "ImageRecordDataset",
           "ImageFolderDataset"]


def _missing(dataset, root, names, hint):
    return FileNotFoundError(
        "%s: cannot find %s in %s. mxlite does not download datasets: put the standard "
        "files there (%s), or pass root= the folder that holds them."
        % (dataset, ", ".join(names), os.path.abspath(root), hint))


class _DownloadedDataset(Dataset):
    """Base of the datasets held in memory: ``_data`` (NDArray) and ``_label`` (NumPy)."""

    def __init__(self, root, transform):
        self._root = os.path.expanduser(root)
        self._transform = transform
        self._data = None
        self._label = None
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError


# ---------------------------------------------------------------- MNIST

def _open_maybe_gz(path):
    """The file at ``path`` (.gz), or its uncompressed twin without ``.gz``."""
    if os.path.exists(path):
        return gzip.open(path, "rb")
    plain = path.removesuffix(".gz")
    if os.path.exists(plain):
        return open(plain, "rb")
    return None


def _read_idx(f, name, ndim):
    """Parse an IDX file (big-endian header: magic 0x0000080<ndim>, then the dims)."""
    magic = struct.unpack(">I", f.read(4))[0]
    if magic != 0x0800 + ndim:
        raise ValueError("%s is not an IDX file of unsigned bytes with %d dimensions "
                         "(magic number 0x%08x, expected 0x%08x)"
                         % (name, ndim, magic, 0x800 + ndim))
    dims = struct.unpack(">%dI" % ndim, f.read(4 * ndim))
    data = np.frombuffer(f.read(), dtype=np.uint8)
    if data.size != int(np.prod(dims)):
        raise ValueError("%s: header says %s values, the file holds %d" % (name, dims, data.size))
    return data.reshape(dims)


class MNIST(_DownloadedDataset):
    """MNIST handwritten digits: samples are ``(uint8 NDArray (28, 28, 1), int32 label)``.

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/mnist``
        Folder with ``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``,
        ``t10k-images-idx3-ubyte.gz`` and ``t10k-labels-idx1-ubyte.gz`` (gzipped or not).
    train : bool, default True
        The training set, or the test set.
    transform : callable, optional
        Called as ``transform(data, label)`` on every sample.
    """

    _files = {True: ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
              False: ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}
    _hint = "from http://yann.lecun.com/exdb/mnist"

    def __init__(self, root=os.path.join(data_dir(), "datasets", "mnist"),
                 train=True, transform=None):
        self._train = train
        super().__init__(root, transform)

    def _get_data(self):
        names = self._files[bool(self._train)]
        paths = [os.path.join(self._root, n) for n in names]
        handles = [_open_maybe_gz(p) for p in paths]
        if any(h is None for h in handles):
            for h in handles:
                if h is not None:
                    h.close()
            missing = [n for n, h in zip(names, handles) if h is None]
            raise _missing(type(self).__name__, self._root, missing, self._hint)
        with handles[0] as fdata, handles[1] as flabel:
            data = _read_idx(fdata, names[0], 3)
            label = _read_idx(flabel, names[1], 1).astype(np.int32)
        if len(data) != len(label):
            raise ValueError("%s: %d images but %d labels" % (type(self).__name__,
                                                             len(data), len(label)))
        data = data.reshape(data.shape + (1,))
        self._data = nd.array(data, dtype=data.dtype)
        self._label = label


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, a drop-in replacement of MNIST (same files and format).

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/fashion-mnist``
    train : bool, default True
    transform : callable, optional
    """

    _hint = "from https://github.com/zalandoresearch/fashion-mnist"

    def __init__(self, root=os.path.join(data_dir(), "datasets", "fashion-mnist"),
                 train=True, transform=None):
        super().__init__(root, train, transform)


# ---------------------------------------------------------------- CIFAR

class _NumpyOnlyUnpickler(pickle.Unpickler):
    """Unpickle the CIFAR "python version" batches without running arbitrary code:
    only NumPy's array reconstruction is allowed."""

    _allowed = {("numpy.core.multiarray", "_reconstruct"),
                ("numpy._core.multiarray", "_reconstruct"),
                ("numpy.core.multiarray", "scalar"), ("numpy._core.multiarray", "scalar"),
                ("numpy", "ndarray"), ("numpy", "dtype"),
                # protocol-2 pickles store raw bytes through codecs.encode
                ("_codecs", "encode")}

    def find_class(self, module, name):
        if (module, name) in self._allowed:
            return super().find_class(module, name)
        raise pickle.UnpicklingError("CIFAR batch file refers to %s.%s, which is not allowed"
                                     % (module, name))


def _load_py_batch(path):
    with open(path, "rb") as f:
        d = _NumpyOnlyUnpickler(f, encoding="bytes").load()
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in d.items()}


def _find(root, subdirs, names):
    """The folder among ``root`` and ``root/<subdir>`` that holds all ``names``."""
    for folder in [root] + [os.path.join(root, s) for s in subdirs]:
        if all(os.path.exists(os.path.join(folder, n)) for n in names):
            return folder
    return None


def _extract(archive, root):
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            target = os.path.abspath(os.path.join(root, member.name))
            if not target.startswith(os.path.abspath(root) + os.sep):
                raise ValueError("%s: refusing to extract %s outside %s"
                                 % (archive, member.name, root))
        if hasattr(tarfile, "data_filter"):
            tar.extractall(root, filter="data")
        else:
            tar.extractall(root)  # noqa: S202 - members checked above


class CIFAR10(_DownloadedDataset):
    """CIFAR-10: samples are ``(uint8 NDArray (32, 32, 3), int32 label)``.

    Reads the binary version as MXNet does (``data_batch_1.bin`` ... ``data_batch_5.bin``,
    ``test_batch.bin``, each record a label byte and 3072 CHW pixel bytes), in ``root``
    or ``root/cifar-10-batches-bin``; or the archive ``cifar-10-binary.tar.gz`` in
    ``root``, which is extracted there; or else the Python version
    (``root/cifar-10-batches-py/data_batch_1`` ...).

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/cifar10``
    train : bool, default True
    transform : callable, optional
        Called as ``transform(data, label)`` on every sample.
    """

    _archive = "cifar-10-binary.tar.gz"
    _bin_dir = "cifar-10-batches-bin"
    _py_dir = "cifar-10-batches-py"
    _hint = "from https://www.cs.toronto.edu/~kriz/cifar.html"
    _label_bytes = 1

    def __init__(self, root=os.path.join(data_dir(), "datasets", "cifar10"),
                 train=True, transform=None):
        self._train = train
        super().__init__(root, transform)

    def _bin_names(self):
        if self._train:
            return ["data_batch_%d.bin" % i for i in range(1, 6)]
        return ["test_batch.bin"]

    def _py_names(self):
        if self._train:
            return ["data_batch_%d" % i for i in range(1, 6)]
        return ["test_batch"]

    def _label_index(self):
        return 0

    def _read_batch(self, filename):
        record = 3072 + self._label_bytes
        with open(filename, "rb") as f:
            raw = np.frombuffer(f.read(), dtype=np.uint8)
        if raw.size % record:
            raise ValueError("%s: size %d is not a multiple of the %d-byte CIFAR record"
                             % (filename, raw.size, record))
        raw = raw.reshape(-1, record)
        data = raw[:, self._label_bytes:].reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return data, raw[:, self._label_index()].astype(np.int32)

    def _read_py_batch(self, filename):
        d = _load_py_batch(filename)
        data = np.asarray(d["data"], dtype=np.uint8).reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return data, np.asarray(d[self._py_label_key()], dtype=np.int32)

    def _py_label_key(self):
        return "labels"

    def _locate(self):
        """(reader, folder, names) for the files present; extracts the archive if needed."""
        names = self._bin_names()
        folder = _find(self._root, [self._bin_dir], names)
        if folder is None and os.path.exists(os.path.join(self._root, self._archive)):
            _extract(os.path.join(self._root, self._archive), self._root)
            folder = _find(self._root, [self._bin_dir], names)
        if folder is not None:
            return self._read_batch, folder, names
        py_names = self._py_names()
        folder = _find(self._root, [self._py_dir], py_names)
        if folder is not None:
            return self._read_py_batch, folder, py_names
        raise _missing(type(self).__name__, self._root, names,
                       "%s: the binary version, or the archive %s, or the Python version in "
                       "%s/" % (self._hint, self._archive, self._py_dir))

    def _get_data(self):
        reader, folder, names = self._locate()
        data, label = zip(*(reader(os.path.join(folder, n)) for n in names))
        data = np.ascontiguousarray(np.concatenate(data))
        self._data = nd.array(data, dtype=data.dtype)
        self._label = np.concatenate(label)


class CIFAR100(CIFAR10):
    """CIFAR-100: samples are ``(uint8 NDArray (32, 32, 3), int32 label)``.

    Reads ``train.bin`` / ``test.bin`` (records: coarse label, fine label, 3072 pixels)
    in ``root`` or ``root/cifar-100-binary``, the archive ``cifar-100-binary.tar.gz``,
    or the Python version (``root/cifar-100-python/train``, ``test``).

    Parameters
    ----------
    root : str, default ``$MXNET_HOME/datasets/cifar100``
    fine_label : bool, default False
        The 100 fine classes, or the 20 coarse super-classes.
    train : bool, default True
    transform : callable, optional
    """

    _archive = "cifar-100-binary.tar.gz"
    _bin_dir = "cifar-100-binary"
    _py_dir = "cifar-100-python"
    _label_bytes = 2

    def __init__(self, root=os.path.join(data_dir(), "datasets", "cifar100"),
                 fine_label=False, train=True, transform=None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _bin_names(self):
        return ["train.bin" if self._train else "test.bin"]

    def _py_names(self):
        return ["train" if self._train else "test"]

    def _label_index(self):
        return int(bool(self._fine_label))

    def _py_label_key(self):
        return "fine_labels" if self._fine_label else "coarse_labels"


# ---------------------------------------------------------------- image files

def _imdecode(buf, flag):
    """Bytes to an RGB (flag 1) or greyscale (flag 0, shape (H, W, 1)) uint8 NDArray."""
    from .... import recordio
    img = recordio._decode_image(buf, 1 if flag else 0, to_rgb=True)
    if img.ndim == 2:
        img = img[:, :, None]
    return nd.array(img, dtype=np.uint8)


class ImageRecordDataset(RecordFileDataset):
    """Images in a RecordIO file (packed with ``recordio.pack_img`` or ``im2rec``):
    samples are ``(uint8 NDArray HWC in RGB, label)``. Needs Pillow or OpenCV.

    Parameters
    ----------
    filename : str
        The ``.rec`` file (its ``.idx`` beside it).
    flag : {0, 1}, default 1
        0: greyscale (H, W, 1); 1: colour (H, W, 3).
    transform : callable, optional
        Called as ``transform(data, label)``.
    """

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        from .... import recordio
        header, img = recordio.unpack(super().__getitem__(idx))
        data = _imdecode(img, self._flag)
        if self._transform is not None:
            return self._transform(data, header.label)
        return data, header.label


class ImageFolderDataset(Dataset):
    """Images in one sub-folder per class (``root/car/0001.jpg``, ``root/bus/023.png``):
    samples are ``(uint8 NDArray HWC in RGB, int label)``, labels by sorted folder name.
    Needs Pillow or OpenCV.

    Parameters
    ----------
    root : str
    flag : {0, 1}, default 1
        0: greyscale (H, W, 1); 1: colour (H, W, 3).
    transform : callable, optional
        Called as ``transform(data, label)``.

    Attributes
    ----------
    synsets : list of str
        Class names; ``synsets[i]`` is the folder of label ``i``.
    items : list of (str, int)
        Every image as (filename, label).
    """

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self._exts = [".jpg", ".jpeg", ".png"]
        self._list_images(self._root)

    def _list_images(self, root):
        self.synsets = []
        self.items = []
        if not os.path.isdir(root):
            raise FileNotFoundError("ImageFolderDataset: %s is not a folder" % root)
        for folder in sorted(os.listdir(root)):
            path = os.path.join(root, folder)
            if not os.path.isdir(path):
                warnings.warn("Ignoring %s, which is not a directory." % path, stacklevel=3)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for filename in sorted(os.listdir(path)):
                filename = os.path.join(path, filename)
                ext = os.path.splitext(filename)[1]
                if ext.lower() not in self._exts:
                    warnings.warn("Ignoring %s of type %s. Only support %s"
                                  % (filename, ext, ", ".join(self._exts)), stacklevel=3)
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        filename, label = self.items[idx]
        with open(filename, "rb") as f:
            img = _imdecode(f.read(), self._flag)
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)
