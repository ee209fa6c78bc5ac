"""``Vocabulary``: token <-> index for ``mx.contrib.text``."""
import collections

from . import _constants as C

__all__ = ["Vocabulary"]


class Vocabulary:
    """Indices for an unknown token (always 0), reserved tokens, then the keys of
    ``counter`` by decreasing count (ties in sorted order).

    Parameters
    ----------
    counter : collections.Counter, optional
    most_freq_count : int, optional
        At most this many tokens from ``counter`` (reserved tokens not counted).
    min_freq : int, default 1
        Tokens counted less often are left out.
    unknown_token : hashable, default '<unk>'
    reserved_tokens : list, optional
        Always indexed, after the unknown token; no duplicates, not ``unknown_token``.

    >>> v = Vocabulary(collections.Counter(['a', 'b', 'b']), reserved_tokens=['<pad>'])
    >>> v.idx_to_token
    ['<unk>', '<pad>', 'b', 'a']
    """

    def __init__(self, counter=None, most_freq_count=None, min_freq=1, unknown_token="<unk>",
                 reserved_tokens=None):
        if min_freq <= 0:
            raise ValueError("Vocabulary: min_freq must be positive, got %r" % (min_freq,))
        if reserved_tokens is not None:
            if unknown_token in reserved_tokens:
                raise ValueError("Vocabulary: reserved_tokens cannot contain unknown_token %r"
                                 % (unknown_token,))
            if len(set(reserved_tokens)) != len(reserved_tokens):
                raise ValueError("Vocabulary: reserved_tokens has duplicates: %r"
                                 % (reserved_tokens,))
        self._unknown_token = unknown_token
        self._reserved_tokens = None if reserved_tokens is None else list(reserved_tokens)
        self._idx_to_token = [unknown_token] + list(reserved_tokens or [])
        self._token_to_idx = {t: i for i, t in enumerate(self._idx_to_token)}
        if counter is not None:
            self._index_counter_keys(counter, most_freq_count, min_freq)

    def _index_counter_keys(self, counter, most_freq_count, min_freq):
        if not isinstance(counter, collections.Counter):
            raise TypeError("Vocabulary: counter must be a collections.Counter, got %s"
                            % type(counter).__name__)
        special = set(self._idx_to_token)
        ranked = sorted(sorted(counter.items(), key=lambda kv: kv[0]),
                        key=lambda kv: kv[1], reverse=True)
        cap = len(special) + (len(counter) if most_freq_count is None else most_freq_count)
        for token, freq in ranked:
            if freq < min_freq or len(self._idx_to_token) == cap:
                break
            if token not in special:
                self._token_to_idx[token] = len(self._idx_to_token)
                self._idx_to_token.append(token)

    def __len__(self):
        return len(self._idx_to_token)

    @property
    def token_to_idx(self):
        """dict: token -> index."""
        return self._token_to_idx

    @property
    def idx_to_token(self):
        """list: the tokens in index order."""
        return self._idx_to_token

    @property
    def unknown_token(self):
        return self._unknown_token

    @property
    def reserved_tokens(self):
        return self._reserved_tokens

    def to_indices(self, tokens):
        """The index of a token (a list of indices for a list); unknown tokens give 0."""
        if not isinstance(tokens, list):
            return self._token_to_idx.get(tokens, C.UNKNOWN_IDX)
        return [self._token_to_idx.get(t, C.UNKNOWN_IDX) for t in tokens]

    def to_tokens(self, indices):
        """The token of an index (a list of tokens for a list)."""
        single = not isinstance(indices, list)
        out = []
        for idx in [indices] if single else indices:
            if not isinstance(idx, int) or idx >= len(self._idx_to_token):
                raise ValueError("Vocabulary.to_tokens: token index %r is invalid (the "
                                 "vocabulary has %d tokens)" % (idx, len(self._idx_to_token)))
            out.append(self._idx_to_token[idx])
        return out[0] if single else out
