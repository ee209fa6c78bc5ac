"""``IntervalSampler`` of ``mx.gluon.contrib.data``.

It is the same class as ``mxlite.gluon.data.sampler.IntervalSampler`` (one sampler,
two import paths): indices ``0, interval, 2 * interval, ...``, then, with ``rollover``,
the same from 1, 2, ... until every index was visited once.

>>> list(IntervalSampler(13, interval=3))
[0, 3, 6, 9, 12, 1, 4, 7, 10, 2, 5, 8, 11]
"""
from ...data.sampler import IntervalSampler

__all__ = ["IntervalSampler"]
