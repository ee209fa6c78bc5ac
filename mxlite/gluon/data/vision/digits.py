"""The UCI handwritten digits, shipped inside mxlite: a real image dataset that needs
no download.

The 1,797 8x8 images of the test set of the UCI "Optical Recognition of Handwritten
Digits" data set (E. Alpaydin and C. Kaynak, 1998, https://doi.org/10.24432/C50P49,
CC BY 4.0; see ``_data/DIGITS_LICENSE.md``).
"""
import os

import numpy as np

from ....util import _state as _np_state

from .. import dataset
from .... import nd

__all__ = ["Digits"]

_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_data", "digits.npz")

#: Fraction of each class that goes to the training set (the rest is the test set).
TRAIN_NUMERATOR, TRAIN_DENOMINATOR = 4, 5
# NOTE: the file is ordered by writer, so taking each digit's first rows would put
# the last writers only in the test set (a simple MLP then scores ~91% instead of
# ~97%). Each digit's rows are shuffled once, with this fixed legacy-RandomState
# seed (its stream never changes across NumPy versions), before the 80/20 cut.
SPLIT_SEED = 0


def _load():
    """The raw images (N, 8, 8) uint8 in 0..16 and labels (N,) int32."""
    if not os.path.exists(_FILE):
        raise OSError("Digits: the embedded data file %s is missing; the mxlite installation "
                      "is incomplete (reinstall mxlite)" % _FILE)
    with np.load(_FILE) as f:
        return f["images"], f["labels"].astype(np.int32)


def _to_255(images):
    """Scale pixel counts 0..16 to 0..255, rounding to nearest (16 -> 255, 8 -> 128)."""
    return ((images.astype(np.uint16) * 255 + 8) // 16).astype(np.uint8)


def split_indices(labels, train):
    """Row indices of the train or test part: a fixed, stratified split.

    Each digit's rows are permuted with ``RandomState(SPLIT_SEED)``; the first
    ``n * 4 // 5`` of them are training rows, the rest test rows. The indices are
    returned in file order, and the split is the same on every machine.
    """
    keep = np.zeros(len(labels), dtype=bool)
    rng = np.random.RandomState(SPLIT_SEED)
    for digit in np.unique(labels):
        rows = np.flatnonzero(labels == digit)
        rows = rows[rng.permutation(len(rows))]
        keep[rows[:len(rows) * TRAIN_NUMERATOR // TRAIN_DENOMINATOR]] = True
    return np.flatnonzero(keep if train else ~keep)


class Digits(dataset.Dataset):
    """Handwritten digits 0-9 as 8x8 grey images, embedded in the package.

    Each sample is ``(image, label)`` like :class:`MNIST`: ``image`` an NDArray of
    shape (8, 8, 1) (height, width, channel), dtype uint8, values 0..255 (the original
    4x4-block pixel counts 0..16, scaled by 255/16 and rounded); ``label`` a
    ``numpy.int32`` scalar. ``transforms.ToTensor()`` turns an image into a float32
    (1, 8, 8) tensor in [0, 1].

    The split is fixed and stratified: for every digit, 80% of its rows
    (``n * 4 // 5``, chosen by a permutation with a fixed seed, see
    :func:`split_indices`) form the training set, 1,433 images in all, and the
    remaining 364 the test set. Each digit has 139-146 training images.

    Parameters
    ----------
    train : bool, default True
        The training set, or the test set.
    transform : callable, optional
        ``transform(image, label) -> sample``, applied to every sample.

    Examples
    --------
    >>> train = mx.gluon.data.vision.Digits(train=True)
    >>> len(train), train[0][0].shape
    (1433, (8, 8, 1))
    """

    def __init__(self, train=True, transform=None):
        self._train = bool(train)
        self._transform = transform
        images, labels = _load()
        rows = split_indices(labels, self._train)
        # NumPy inside, NDArrays made per sample: the dataset pickles cheaply to workers.
        self._data = _to_255(images[rows])[..., None]
        self._label = labels[rows]

    def __len__(self):
        return len(self._label)

    def __getitem__(self, idx):
        image = nd.array(self._data[idx], dtype=np.uint8)
        if _np_state.array:         # under npx.set_np() samples are np arrays
            image = image.as_np_ndarray()
        label = self._label[idx]
        if self._transform is not None:
            return self._transform(image, label)
        return image, label

    def __repr__(self):
        return "Digits(train=%s, %d samples)" % (self._train, len(self))
