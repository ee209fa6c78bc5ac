"""Token counting for ``mx.contrib.text``."""
import collections
import re

__all__ = ["count_tokens_from_str"]


def count_tokens_from_str(source_str, token_delim=" ", seq_delim="\n", to_lower=False,
                          counter_to_update=None):
    """Count the tokens of ``source_str``, split on ``token_delim`` and ``seq_delim``
    (both regular expressions); empty tokens are dropped.

    Returns ``counter_to_update`` updated with the counts, or a new ``collections.Counter``.

    >>> count_tokens_from_str(' Life is great ! \\n life is good . \\n', to_lower=True)
    Counter({'life': 2, 'is': 2, 'great': 1, '!': 1, 'good': 1, '.': 1})
    """
    tokens = [t for t in re.split(token_delim + "|" + seq_delim, source_str) if t]
    if to_lower:
        tokens = [t.lower() for t in tokens]
    if counter_to_update is None:
        return collections.Counter(tokens)
    counter_to_update.update(tokens)
    return counter_to_update
