"""Text datasets of ``mx.gluon.contrib.data.text``: WikiText-2 and WikiText-103 for
word-level language modelling.

Nothing is downloaded (mxlite runs where there may be no network): put the extracted
``wiki.train.tokens``, ``wiki.valid.tokens`` and ``wiki.test.tokens`` (from
``wikitext-2-v1.zip`` / ``wikitext-103-v1.zip``) in ``root``; a missing file raises
``FileNotFoundError`` naming the file and the folder.

Each sample is ``(data, label)``, two int32 NDArrays of ``seq_len`` token indices, the
label being the data shifted by one token; ``<eos>`` ends every line.
"""
import os

import numpy as np

from .... import nd
from ....base import data_dir
from ...data.dataset import Dataset
from ...data.vision.datasets import _missing
from ....contrib.text.utils import count_tokens_from_str
from ....contrib.text.vocab import Vocabulary
from ._constants import EOS_TOKEN

__all__ = ["WikiText2", "WikiText103"]



class _WikiText(Dataset):
    """A WikiText segment read from ``root``, cut into rows of ``seq_len`` tokens."""
    _archive = ""
    _files = {"train": "wiki.train.tokens", "validation": "wiki.valid.tokens",
              "test": "wiki.test.tokens"}

    def __init__(self, root, segment, vocab, seq_len):
        if segment not in self._files:
            raise ValueError("%s: segment must be one of %s, got %r"
                             % (type(self).__name__, sorted(self._files), segment))
        if int(seq_len) != seq_len or seq_len < 1:
            raise ValueError("%s: seq_len must be a positive integer, got %r"
                             % (type(self).__name__, seq_len))
        self._root = os.path.expanduser(root)
        self._segment = segment
        self._seq_len = int(seq_len)
        self._vocab = vocab
        self._counter = None
        self._get_data()

    @property
    def vocabulary(self):
        """The vocabulary that maps tokens to the indices of the samples."""
        return self._vocab

    @property
    def frequencies(self):
        """``collections.Counter`` of the tokens of this segment (None when ``vocab``
        was given)."""
        return self._counter

    def _read(self, path):
        with open(path, "r", encoding="utf8") as f:
            content = f.read()
        if self._vocab is None:
            self._counter = count_tokens_from_str(content)
            self._vocab = Vocabulary(self._counter, reserved_tokens=[EOS_TOKEN])
        lines = [line.strip().split() for line in content.splitlines()]
        tokens = [t for line in lines if line for t in line + [EOS_TOKEN]]
        indices = np.array(self._vocab.to_indices(tokens), dtype=np.int32)
        return indices[:-1], indices[1:]

    def _get_data(self):
        name = self._files[self._segment]
        path = os.path.join(self._root, name)
        if not os.path.isfile(path):
            raise _missing(type(self).__name__, self._root, [name],
                           "extract %s from %s" % (", ".join(sorted(self._files.values())),
                                                   self._archive))
        data, label = self._read(path)
        # As MXNet: the tail that does not fill a whole row of seq_len is dropped.
        n = len(data) // self._seq_len * self._seq_len
        self._data = nd.array(data[:n].reshape(-1, self._seq_len), dtype=np.int32)
        self._label = nd.array(label[:n].reshape(-1, self._seq_len), dtype=np.int32)

    def __getitem__(self, idx):
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)


class WikiText2(_WikiText):
    """WikiText-2 word-level language-modelling dataset (Salesforce research; license
    CC BY-SA).

    Parameters
    ----------
    root : str, default $MXNET_HOME/datasets/wikitext-2
        Folder holding ``wiki.{train,valid,test}.tokens``.
    segment : {'train', 'validation', 'test'}, default 'train'
    vocab : Vocabulary, optional
        Any object with ``to_indices(list_of_tokens)``; by default a vocabulary is built
        from the segment: ``'<unk>'`` 0, ``'<eos>'`` 1, then tokens by frequency.
    seq_len : int, default 35
        Tokens per sample, across sentence boundaries.

    Notes
    -----
    MXNet downloads ``wikitext-2-v1.zip`` when the file is missing or its SHA-1 differs;
    mxlite downloads nothing and reads whatever file is in ``root``.
    """
    _archive = "wikitext-2-v1.zip"

    def __init__(self, root=os.path.join(data_dir(), "datasets", "wikitext-2"),
                 segment="train", vocab=None, seq_len=35):
        super().__init__(root, segment, vocab, seq_len)


class WikiText103(_WikiText):
    """WikiText-103 word-level language-modelling dataset (Salesforce research; license
    CC BY-SA). Parameters as :class:`WikiText2`, with ``root`` defaulting to
    ``$MXNET_HOME/datasets/wikitext-103`` and the archive ``wikitext-103-v1.zip``.
    """
    _archive = "wikitext-103-v1.zip"

    def __init__(self, root=os.path.join(data_dir(), "datasets", "wikitext-103"),
                 segment="train", vocab=None, seq_len=35):
        super().__init__(root, segment, vocab, seq_len)
