"""Datasets: indexable collections of samples, as ``mxnet.gluon.data``."""
import os

from ... import nd

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Abstract dataset: subclasses define ``__getitem__`` and ``__len__``.

    NumPy arrays, NDArrays and lists can also be used directly as datasets.
    The methods below return new, lazily evaluated datasets; they are picklable
    when the functions given to them are (module-level functions or callable
    objects, not lambdas), which worker processes under ``spawn`` need.
    """

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """The samples for which ``fn(sample)`` is true (``fn`` runs once per sample now).

        A tuple sample is passed to ``fn`` whole, as one argument (as in MXNet).
        """
        from .sampler import FilterSampler
        return _SampledDataset(self, FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Shard ``index`` of ``num_shards`` contiguous, near-equal parts.

        The first ``len(self) % num_shards`` shards hold one sample more, as in MXNet.
        """
        if num_shards <= 0:
            raise ValueError("shard: num_shards must be positive, got %r" % (num_shards,))
        if not 0 <= index < num_shards:
            raise ValueError("shard: index must be in [0, %d), got %r" % (num_shards, index))
        shard_len, rest = divmod(len(self), num_shards)
        start = shard_len * index + min(index, rest)
        length = shard_len + (index < rest)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(length, start))

    def take(self, count):
        """The first ``count`` samples (all of them when ``count`` is None or too big)."""
        if count is None or count > len(self):
            count = len(self)
        from .sampler import SequentialSampler
        return _SampledDataset(self, SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices that ``sampler`` (a ``Sampler``) yields."""
        from .sampler import Sampler
        if not isinstance(sampler, Sampler):
            raise TypeError("Invalid sampler type: %s. Expected gluon.data.Sampler instead."
                            % type(sampler))
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """Each sample passed through ``fn`` (a tuple sample is unpacked: ``fn(*sample)``).

        Parameters
        ----------
        fn : callable
            The transform.
        lazy : bool, default True
            If False, transform every sample now and keep the results; a random
            ``fn`` then gives the same result every epoch.
        """
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn, lazy=True):
        """Like ``transform``, on the first element of each sample only (the data,
        not the label)."""
        return self.transform(_TransformFirstClosure(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over any object with ``len()`` and ``[]`` (a list, an array)."""

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirstClosure:
    """A callable object rather than a closure, so that it pickles."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._sampler = sampler
        self._indices = list(iter(sampler))

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Zips several dataset-like objects: sample ``i`` is ``(x1[i], x2[i], ...)``.

    With a single argument, sample ``i`` is ``x1[i]`` itself. A 1-d NDArray is kept
    as NumPy (as in MXNet), so that its samples are scalars rather than 1-element arrays.

    Examples
    --------
    >>> ds = ArrayDataset(np.zeros((4, 2)), [0, 1, 0, 1])
    >>> len(ds), ds[3][1]
    (4, 1)
    """

    def __init__(self, *args):
        if not args:
            raise ValueError("ArrayDataset needs at least 1 array")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise ValueError("All arrays must have the same length; array[0] has length "
                                 "%d while array[%d] has %d." % (self._length, i, len(data)))
            if isinstance(data, nd.NDArray) and data.ndim == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class RecordFileDataset(Dataset):
    """A dataset over a RecordIO file: sample ``i`` is the raw bytes of record ``i``.

    Parameters
    ----------
    filename : str
        Path to the ``.rec`` file; its index must sit beside it with the ``.idx``
        extension (as written by ``MXIndexedRecordIO`` or ``im2rec``).
    """

    def __init__(self, filename):
        from ... import recordio
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)
