"""The data and environment helpers of ``mx.test_utils``: ``download``, the MNIST and
CIFAR-10 getters, model downloads and the run-environment checks.

Every getter first looks for the files where MXNet's would leave them (the current
directory, or ``data/``) and downloads only what is missing, so on a machine without
network put the files there by hand; a failed download raises ``OSError`` naming the
URL and the place to put the file.
"""
import bz2
import gzip
import logging
import os
import struct
import zipfile

import numpy as np

__all__ = ["download", "download_model", "get_mnist", "get_mnist_pkl", "get_mnist_ubyte",
           "get_cifar10", "get_mnist_iterator", "get_zip_data", "get_bz2_data",
           "get_im2rec_path"]

_DATA_URL = "http://data.mxnet.io/"
_MODEL_URL = _DATA_URL + "models/"
_MODELS = {
    "imagenet1k-inception-bn": "imagenet/inception-bn/Inception-BN",
    "imagenet1k-resnet-18": "imagenet/resnet/18-layers/resnet-18",
    "imagenet1k-resnet-34": "imagenet/resnet/34-layers/resnet-34",
    "imagenet1k-resnet-50": "imagenet/resnet/50-layers/resnet-50",
    "imagenet1k-resnet-101": "imagenet/resnet/101-layers/resnet-101",
    "imagenet1k-resnet-152": "imagenet/resnet/152-layers/resnet-152",
    "imagenet1k-resnext-50": "imagenet/resnext/50-layers/resnext-50",
    "imagenet1k-resnext-101": "imagenet/resnext/101-layers/resnext-101",
    "imagenet1k-resnext-101-64x4d": "imagenet/resnext/101-layers/resnext-101-64x4d",
    "imagenet11k-resnet-152": "imagenet-11k/resnet-152/resnet-152",
    "imagenet11k-place365ch-resnet-152": "imagenet-11k-place365-ch/resnet-152",
    "imagenet11k-place365ch-resnet-50": "imagenet-11k-place365-ch/resnet-50",
}
# Inception-BN was published at epoch 126, the others at epoch 0.
_DEFAULT_MODEL_INFO = {
    name: {"symbol": _MODEL_URL + path + "-symbol.json",
           "params": _MODEL_URL + path + ("-0126.params" if "Inception" in path
                                          else "-0000.params")}
    for name, path in _MODELS.items()}


def download(url, fname=None, dirname=None, overwrite=False, retries=5):
    """Download ``url`` to ``fname`` (default: the URL's last part) in ``dirname``;
    an existing file is kept unless ``overwrite``. Returns the file name.

    Raises ``OSError`` with the URL and the target path when every one of the
    ``retries + 1`` attempts fails (no network, unknown host, HTTP error).
    """
    from .gluon.utils import download as _download
    if retries < 0:
        raise ValueError("download: retries must be at least 0, got %r" % (retries,))
    if fname is None:
        fname = url.split("/")[-1]
    if dirname is None:
        dirname = os.path.dirname(fname)
    else:
        fname = os.path.join(dirname, fname)
    if dirname:
        os.makedirs(dirname, exist_ok=True)
    if not overwrite and os.path.exists(fname):
        logging.info("%s exists, skipping download", fname)
        return fname
    _download(url, path=fname, overwrite=True, retries=retries)
    logging.info("downloaded %s into %s successfully", url, fname)
    return fname


def download_model(model_name, dst_dir="./", meta_info=None):
    """Download ``model_name``'s ``-symbol.json`` and ``-0000.params`` (URLs from
    ``meta_info``, ``{name: {'symbol': url, 'params': url}}``, MXNet's model list by
    default) into ``dst_dir``. Returns ``(prefix, 0)``, or ``(None, 0)`` for an unknown
    name."""
    meta_info = dict(_DEFAULT_MODEL_INFO if meta_info is None else meta_info)
    if model_name not in meta_info:
        return None, 0
    os.makedirs(dst_dir, exist_ok=True)
    meta = dict(meta_info[model_name])
    for key in ("symbol", "params"):
        if key not in meta:
            raise ValueError("download_model: meta_info[%r] has no %r URL" % (model_name, key))
    prefix = os.path.join(dst_dir, model_name)
    download(meta["symbol"], prefix + "-symbol.json")
    download(meta["params"], prefix + "-0000.params")
    return prefix, 0


def _read_idx_gz(label_file, image_file):
    with gzip.open(label_file) as f:
        struct.unpack(">II", f.read(8))
        label = np.frombuffer(f.read(), dtype=np.int8)
    with gzip.open(image_file, "rb") as f:
        _, _, rows, cols = struct.unpack(">IIII", f.read(16))
        image = np.frombuffer(f.read(), dtype=np.uint8).reshape(len(label), 1, rows, cols)
    return label, image.astype(np.float32) / 255


def get_mnist():
    """MNIST as ``{'train_data', 'train_label', 'test_data', 'test_label'}``: images
    float32 ``(N, 1, 28, 28)`` in [0, 1], labels int8, read from the ``*-idx?-ubyte.gz``
    files in the current directory (downloaded when missing)."""
    path = _DATA_URL + "data/mnist/"
    out = {}
    for part, prefix in (("train", "train"), ("test", "t10k")):
        label, image = _read_idx_gz(download(path + prefix + "-labels-idx1-ubyte.gz"),
                                    download(path + prefix + "-images-idx3-ubyte.gz"))
        out[part + "_data"], out[part + "_label"] = image, label
    return {k: out[k] for k in ("train_data", "train_label", "test_data", "test_label")}


def get_mnist_pkl():
    """Make sure ``data/mnist.pkl.gz`` exists (downloaded when missing)."""
    os.makedirs("data", exist_ok=True)
    if not os.path.exists(os.path.join("data", "mnist.pkl.gz")):
        download("http://deeplearning.net/data/mnist/mnist.pkl.gz", dirname="data")


def _get_zip_into_data(url, expected):
    os.makedirs("data", exist_ok=True)
    if not all(os.path.exists(os.path.join("data", f)) for f in expected):
        with zipfile.ZipFile(download(url, dirname="data")) as zf:
            zf.extractall("data")


def get_mnist_ubyte():
    """Make sure the four MNIST ``*-ubyte`` files are in ``data/`` (from
    ``data/mnist.zip``, downloaded when missing)."""
    _get_zip_into_data(_DATA_URL + "mxnet/data/mnist.zip",
                       ["train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"])


def get_cifar10():
    """Make sure ``data/cifar/{train,test}.{rec,lst}`` exist (from
    ``data/cifar10.zip``, downloaded when missing)."""
    _get_zip_into_data(_DATA_URL + "mxnet/data/cifar10.zip",
                       [os.path.join("cifar", f) for f in
                        ("train.rec", "test.rec", "train.lst", "test.lst")])


def get_mnist_iterator(batch_size, input_shape, num_parts=1, part_index=0):
    """``(train, val)`` ``MNISTIter``s over ``data/`` (see :func:`get_mnist_ubyte`);
    images are flat unless ``input_shape`` has three dimensions."""
    from .io import MNISTIter
    get_mnist_ubyte()
    flat = len(input_shape) != 3
    train = MNISTIter(image="data/train-images-idx3-ubyte",
                      label="data/train-labels-idx1-ubyte", batch_size=batch_size,
                      shuffle=True, flat=flat, num_parts=num_parts, part_index=part_index)
    val = MNISTIter(image="data/t10k-images-idx3-ubyte", label="data/t10k-labels-idx1-ubyte",
                    batch_size=batch_size, flat=flat, num_parts=num_parts,
                    part_index=part_index)
    return train, val


def get_zip_data(data_dir, url, data_origin_name):
    """Download ``url`` as ``data_dir/data_origin_name`` and extract it there, unless
    that file exists."""
    if not os.path.exists(os.path.join(data_dir, data_origin_name)):
        path = download(url, dirname=data_dir, overwrite=False)
        with zipfile.ZipFile(path) as zf:
            zf.extractall(path=data_dir)


def get_bz2_data(data_dir, data_name, url, data_origin_name):
    """Download ``url`` as ``data_dir/data_origin_name`` and decompress it into
    ``data_dir/data_name`` (removing the archive), unless ``data_name`` exists."""
    data_name = os.path.join(data_dir, data_name)
    if os.path.exists(data_name):
        return
    origin = download(url, fname=data_origin_name, dirname=data_dir, overwrite=False)
    with bz2.BZ2File(origin, "rb") as src, open(data_name, "wb") as dst:
        dst.writelines(iter(lambda: src.read(1 << 20), b""))
    os.remove(origin)


def get_im2rec_path(home_env="MXNET_HOME"):
    """The path of the ``tools/im2rec.py`` script under ``$home_env`` or beside the
    package; ``IOError`` when there is none (mxlite ships no im2rec tool)."""
    root = os.environ.get(home_env, os.path.dirname(os.path.abspath(__file__)))
    for path in (os.path.join(root, "tools", "im2rec.py"),
                 os.path.join(root, "..", "..", "tools", "im2rec.py")):
        if os.path.isfile(path):
            return path
    raise OSError("Could not find path to tools/im2rec.py")

