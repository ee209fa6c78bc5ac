"""Sentence encoding and the bucketing iterator of MXNet 1.x's language-model examples."""
import bisect
import random

import numpy as np

from ..io import DataIter, DataBatch, DataDesc
from .. import nd

__all__ = ["encode_sentences", "BucketSentenceIter"]


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key='\n',
                     start_label=0, unknown_token=None):
    """Encode sentences (lists of tokens) as lists of ints, growing ``vocab``.

    Parameters
    ----------
    sentences : list of list of str
    vocab : dict of str to int, optional
        Given: unknown tokens are an error unless ``unknown_token`` is set. None: a new
        vocabulary ``{invalid_key: invalid_label}`` grows with every new token.
    invalid_label : int, default -1
        The index of ``invalid_key``, never given to another token.
    invalid_key : str, default '\\n'
    start_label : int, default 0
        The first index to hand out.
    unknown_token : str, optional
        The token that unknown tokens map to (added to the vocabulary when new).

    Returns
    -------
    (list of list of int, dict of str to int)

    Examples
    --------
    >>> mx.rnn.encode_sentences([['a', 'b'], ['b', 'c']], invalid_label=0, start_label=1)
    ([[1, 2], [2, 3]], {'\\n': 0, 'a': 1, 'b': 2, 'c': 3})
    """
    idx = start_label
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    res = []
    for sent in sentences:
        coded = []
        for word in sent:
            if word not in vocab:
                if not (new_vocab or unknown_token):
                    raise KeyError("encode_sentences: unknown token %r; pass vocab=None to "
                                   "grow a vocabulary or set unknown_token" % (word,))
                if idx == invalid_label:
                    idx += 1
                if unknown_token:
                    word = unknown_token
                # NOTE: as in MXNet, an unknown token takes a fresh index each time even
                # when it maps to an unknown_token already in the vocabulary.
                vocab[word] = idx
                idx += 1
            coded.append(vocab[word])
        res.append(coded)
    return res, vocab


class BucketSentenceIter(DataIter):
    """Batches of encoded sentences of equal (bucket) length, padded with
    ``invalid_label``; the label of each step is the next token.

    Parameters
    ----------
    sentences : list of list of int
    batch_size : int
    buckets : list of int, optional
        Bucket lengths; by default every length shared by at least ``batch_size``
        sentences. Longer sentences are discarded.
    invalid_label : int, default -1
    data_name, label_name : str
    dtype : str, default 'float32'
    layout : str, default 'NT'
        'NT' (batch, time) or 'TN' (time, batch).

    Examples
    --------
    >>> it = mx.rnn.BucketSentenceIter(sentences, batch_size=32, buckets=[10, 20])
    >>> batch = next(it); batch.bucket_key
    10
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1,
                 data_name='data', label_name='softmax_label', dtype='float32', layout='NT'):
        super().__init__()
        if not buckets:
            counts = np.bincount([len(s) for s in sentences])
            buckets = [i for i, j in enumerate(counts) if j >= batch_size]
        buckets.sort()
        self.major_axis = layout.find('N')
        if self.major_axis not in (0, 1) or sorted(layout) != ['N', 'T']:
            raise ValueError("BucketSentenceIter: layout must be 'NT' (batch major) or 'TN' "
                             "(time major), got %r" % (layout,))
        buckets, self.data = self._fill(sentences, buckets, invalid_label, dtype)
        self.batch_size = batch_size
        self.buckets = buckets
        self.data_name = data_name
        self.label_name = label_name
        self.dtype = dtype
        self.invalid_label = invalid_label
        self.nddata = []
        self.ndlabel = []
        self.layout = layout
        self.default_bucket_key = max(buckets)
        shape = self._shape(batch_size, self.default_bucket_key)
        self.provide_data = [DataDesc(name=data_name, shape=shape, layout=layout)]
        self.provide_label = [DataDesc(name=label_name, shape=shape, layout=layout)]
        self.idx = []
        for i, buck in enumerate(self.data):
            self.idx.extend([(i, j) for j in range(0, len(buck) - batch_size + 1, batch_size)])
        self.curr_idx = 0
        self.reset()

    @staticmethod
    def _fill(sentences, buckets, invalid_label, dtype):
        """Pad each sentence to the first bucket that fits; drop empty buckets."""
        data = [[] for _ in buckets]
        used = [False] * len(buckets)
        ndiscard = 0
        for sent in sentences:
            buck = bisect.bisect_left(buckets, len(sent))
            if buck == len(buckets):
                ndiscard += 1
                continue
            used[buck] = True
            buff = np.full((buckets[buck],), invalid_label, dtype=dtype)
            buff[:len(sent)] = sent
            data[buck].append(buff)
        if ndiscard:
            print("WARNING: discarded %d sentences longer than the largest bucket." % ndiscard)
        buckets = [b for b, u in zip(buckets, used) if u]
        return buckets, [np.asarray(d, dtype=dtype) for d in data if d]

    def _shape(self, batch_size, length):
        return (batch_size, length) if self.major_axis == 0 else (length, batch_size)

    def reset(self):
        """Go back to the start, shuffling the batch order and each bucket's sentences
        (with Python's ``random`` and NumPy's global generator, as MXNet)."""
        self.curr_idx = 0
        random.shuffle(self.idx)
        for buck in self.data:
            np.random.shuffle(buck)
        self.nddata = []
        self.ndlabel = []
        for buck in self.data:
            label = np.empty_like(buck)
            label[:, :-1] = buck[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(nd.array(buck, dtype=self.dtype))
            self.ndlabel.append(nd.array(label, dtype=self.dtype))

    def next(self):
        """The next :class:`~mxlite.io.DataBatch`, with ``bucket_key`` set."""
        if self.curr_idx == len(self.idx):
            raise StopIteration
        i, j = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[i][j:j + self.batch_size]
        label = self.ndlabel[i][j:j + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        return DataBatch([data], [label], pad=0, bucket_key=self.buckets[i],
                         provide_data=[DataDesc(name=self.data_name, shape=data.shape,
                                                layout=self.layout)],
                         provide_label=[DataDesc(name=self.label_name, shape=label.shape,
                                                 layout=self.layout)])


# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "ndarray": "mxlite.nd:",
})
