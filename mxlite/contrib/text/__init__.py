"""``mx.contrib.text``: token counting, vocabularies and token embeddings (GloVe,
FastText and files of your own) for text models."""
from . import utils  # noqa: F401
from . import vocab  # noqa: F401
from . import embedding  # noqa: F401
