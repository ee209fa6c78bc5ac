"""``mx.gluon.data``: datasets, samplers, the DataLoader, and ``vision`` datasets/transforms."""
from .dataset import Dataset, SimpleDataset, ArrayDataset, RecordFileDataset  # noqa: F401
from .sampler import (Sampler, SequentialSampler, RandomSampler, FilterSampler,  # noqa: F401
                      BatchSampler, IntervalSampler, SplitSampler)
from .dataloader import DataLoader, default_batchify_fn, default_mp_batchify_fn  # noqa: F401
from . import dataset, sampler, dataloader, vision  # noqa: F401
