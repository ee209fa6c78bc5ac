"""Samplers: iterables of dataset indices (or of index batches), as ``mxnet.gluon.data``."""
import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler",
           "BatchSampler", "IntervalSampler", "SplitSampler"]

_LAST_BATCH = ("keep", "discard", "rollover")


class Sampler:
    """Base class for samplers: subclasses define ``__iter__`` and ``__len__``."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """Samples ``start, start + 1, ..., start + length - 1`` in order.

    Examples
    --------
    >>> list(SequentialSampler(3, start=2))
    [2, 3, 4]
    """

    def __init__(self, length, start=0):
        self._length = length
        self._start = start

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """Samples ``0 .. length - 1`` in a random order, without replacement.

    The order comes from NumPy's global RNG (``np.random.shuffle``) as in MXNet, so
    ``np.random.seed`` makes it repeat; each iteration draws a new order.
    """

    def __init__(self, length):
        self._length = length

    def __iter__(self):
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices.tolist())

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """Samples the indices of ``dataset`` whose sample makes ``fn(sample)`` true.

    ``fn`` is evaluated once, over the whole dataset, when the sampler is built.
    """

    def __init__(self, fn, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i in range(len(dataset)) if fn(dataset[i])]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


def _check_last_batch(last_batch):
    if last_batch not in _LAST_BATCH:
        raise ValueError("last_batch must be one of 'keep', 'discard', or 'rollover', "
                         "but got %r" % (last_batch,))


class BatchSampler(Sampler):
    """Groups the indices of another sampler into lists of ``batch_size``.

    Parameters
    ----------
    sampler : Sampler
        The source of indices.
    batch_size : int
        Size of a mini-batch.
    last_batch : {'keep', 'discard', 'rollover'}
        What to do with a last, incomplete batch: return it (``keep``), drop it
        (``discard``), or prepend its indices to the first batch of the next
        iteration (``rollover``).

    Examples
    --------
    >>> list(BatchSampler(SequentialSampler(10), 3, 'keep'))
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    """

    def __init__(self, sampler, batch_size, last_batch="keep"):
        _check_last_batch(last_batch)
        if int(batch_size) != batch_size or batch_size < 1:
            raise ValueError("batch_size must be a positive integer, got %r" % (batch_size,))
        self._sampler = sampler
        self._batch_size = int(batch_size)
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self):
        n = len(self._sampler)
        if self._last_batch == "keep":
            return (n + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return n // self._batch_size
        return (len(self._prev) + n) // self._batch_size


class IntervalSampler(Sampler):
    """Samples ``0, interval, 2 * interval, ...``, then (with ``rollover``) the same
    from 1, 2, ... until every index of ``range(length)`` was visited once.

    As ``mxnet.gluon.contrib.data.IntervalSampler``.

    Examples
    --------
    >>> list(IntervalSampler(13, interval=3))
    [0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
    >>> list(IntervalSampler(13, interval=3, rollover=False))
    [0, 3, 6, 9, 12]
    """

    def __init__(self, length, interval, rollover=True):
        if not 0 < interval <= length:
            raise ValueError("IntervalSampler: interval must be in [1, length=%d], got %r"
                             % (length, interval))
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self):
        for start in range(self._interval if self._rollover else 1):
            yield from range(start, self._length, self._interval)

    def __len__(self):
        # NOTE: MXNet reports `length` even with rollover=False (fewer indices come out);
        # we report the number of indices actually produced.
        if self._rollover:
            return self._length
        return len(range(0, self._length, self._interval))


class SplitSampler(Sampler):
    """Samples part ``part_index`` of ``num_parts`` equal, contiguous parts of
    ``range(length)``: each worker of a distributed job reads its own shard.

    Every part has ``length // num_parts`` samples (the last ``length % num_parts``
    indices are left out), so that the workers make the same number of steps, as
    data-parallel training needs. Not in MXNet 1.9.1 itself; as GluonCV's and
    GluonNLP's ``SplitSampler``.

    Parameters
    ----------
    length : int
    num_parts : int, default 1
        Usually ``kvstore.num_workers``.
    part_index : int, default 0
        Usually ``kvstore.rank``.
    shuffle : bool, default False
        Visit the part in a new random order (NumPy's global RNG) each iteration.

    Examples
    --------
    >>> list(SplitSampler(10, num_parts=3, part_index=1))
    [3, 4, 5]
    """

    def __init__(self, length, num_parts=1, part_index=0, shuffle=False):
        if not isinstance(num_parts, (int, np.integer)) or num_parts < 1:
            raise ValueError("SplitSampler: num_parts must be a positive int, got %r"
                             % (num_parts,))
        if not 0 <= part_index < num_parts:
            raise ValueError("SplitSampler: part_index must be in [0, num_parts=%d), got %r"
                             % (num_parts, part_index))
        size = length // num_parts
        self._start, self._size = size * part_index, size
        self._shuffle = shuffle

    def __iter__(self):
        indices = np.arange(self._start, self._start + self._size)
        if self._shuffle:
            np.random.shuffle(indices)
        return iter(indices.tolist())

    def __len__(self):
        return self._size
