"""Token embeddings for ``mx.contrib.text``: GloVe and FastText files (read from
``embedding_root``, downloaded from MXNet's mirror when missing), files of your own
(:class:`CustomEmbedding`) and concatenations (:class:`CompositeEmbedding`).

A file holds one token per line followed by its vector, separated by ``elem_delim``.
Index 0 is the unknown token: its vector comes from the file when the file has the
``unknown_token``, from ``init_unknown_vec(shape=vec_len)`` otherwise.

>>> emb = mx.contrib.text.embedding.CustomEmbedding('my_vectors.txt', elem_delim=' ')
>>> emb.get_vecs_by_tokens(['hello', 'world']).shape
(2, 50)
"""
import logging
import os
import tarfile
import warnings
import zipfile

from . import _constants as C
from . import vocab
from ... import nd
from ... import registry
from ..._lazy import exports as _exports

__all__ = ["register", "create", "get_pretrained_file_names", "GloVe", "FastText",
           "CustomEmbedding", "CompositeEmbedding"]


def _default_root():
    return os.path.join(os.environ.get("MXNET_HOME", os.path.join("~", ".mxnet")),
                        "embeddings")


class _TokenEmbedding(vocab.Vocabulary):
    """A vocabulary with a vector per token (``idx_to_vec``, an NDArray of shape
    ``(len(self), vec_len)``)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._vec_len = None
        self._idx_to_vec = None

    # -- pretrained files --------------------------------------------------------
    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        return pretrained_file_name

    @classmethod
    def _get_pretrained_file_url(cls, pretrained_file_name):
        repo_url = os.environ.get("MXNET_GLUON_REPO", C.APACHE_REPO_URL)
        if not repo_url.endswith("/"):
            repo_url += "/"
        return "%sgluon/embeddings/%s/%s" % (repo_url, cls.__name__.lower(),
                                             cls._get_download_file_name(pretrained_file_name))

    @classmethod
    def _get_pretrained_file(cls, embedding_root, pretrained_file_name):
        """The local path of ``pretrained_file_name`` under ``embedding_root/<class>``,
        downloaded and extracted first when it is missing or its SHA-1 differs."""
        from ...gluon.utils import check_sha1, download
        embedding_dir = os.path.join(os.path.expanduser(embedding_root), cls.__name__.lower())
        path = os.path.join(embedding_dir, pretrained_file_name)
        expected = cls.pretrained_file_name_sha1[pretrained_file_name]
        if os.path.exists(path) and check_sha1(path, expected):
            return path
        url = cls._get_pretrained_file_url(pretrained_file_name)
        archive = os.path.join(embedding_dir, os.path.basename(url))
        archive_sha1 = getattr(cls, "pretrained_archive_name_sha1", {}).get(
            os.path.basename(url), expected)
        download(url, archive, sha1_hash=archive_sha1)
        if archive.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                zf.extractall(embedding_dir)
        elif archive.endswith(".gz"):
            with tarfile.open(archive, "r:gz") as tar:
                tar.extractall(path=embedding_dir)
        return path

    @classmethod
    def _check_pretrained_file_names(cls, pretrained_file_name):
        if pretrained_file_name not in cls.pretrained_file_name_sha1:
            name = cls.__name__.lower()
            raise KeyError("Cannot find pretrained file %s for token embedding %s. Valid "
                           "pretrained files for embedding %s: %s"
                           % (pretrained_file_name, name, name,
                              ", ".join(cls.pretrained_file_name_sha1)))

    # -- loading -----------------------------------------------------------------
    def _load_embedding(self, path, elem_delim, init_unknown_vec, encoding="utf8"):
        path = os.path.expanduser(path)
        if not os.path.isfile(path):
            raise ValueError("%s: pretrained_file_path must be a token embedding file; %r "
                             "is not a file" % (type(self).__name__, path))
        logging.info("Loading pre-trained token embedding vectors from %s", path)
        rows, unknown_vec, seen = [], None, set()
        with open(path, "r", encoding=encoding) as f:
            for line_num, line in enumerate(f, 1):
                elems = line.rstrip().split(elem_delim)
                if len(elems) <= 1:
                    raise ValueError("%s: line %d of %s has no vector (expected 'token%sv1%s"
                                     "v2...')" % (type(self).__name__, line_num, path,
                                                  elem_delim, elem_delim))
                token, vec = elems[0], [float(v) for v in elems[1:]]
                if token == self.unknown_token and unknown_vec is None:
                    unknown_vec = vec
                    seen.add(token)
                elif token in seen:
                    warnings.warn("At line %d of the pre-trained token embedding file: the "
                                  "embedding vector for token %s has been loaded and a "
                                  "duplicate embedding for the same token is seen and skipped."
                                  % (line_num, token))
                elif len(vec) == 1:
                    warnings.warn("At line %d of the pre-trained text embedding file: token %s "
                                  "with 1-dimensional vector %s is likely a header and is "
                                  "skipped." % (line_num, token, vec))
                else:
                    if rows and len(vec) != len(rows[0]):
                        raise ValueError("%s: line %d of %s: token %r has %d dimensions, the "
                                         "tokens before it %d" % (type(self).__name__, line_num,
                                                                  path, token, len(vec),
                                                                  len(rows[0])))
                    rows.append(vec)
                    self._token_to_idx[token] = len(self._idx_to_token)
                    self._idx_to_token.append(token)
                    seen.add(token)
        if not rows:
            raise ValueError("%s: %s holds no token vectors" % (type(self).__name__, path))
        self._vec_len = len(rows[0])
        first = len(self._idx_to_token) - len(rows)
        table = nd.zeros((len(self._idx_to_token), self._vec_len))
        table[first:] = nd.array(rows)
        table[C.UNKNOWN_IDX] = (nd.array(unknown_vec) if unknown_vec is not None
                                else init_unknown_vec(shape=self._vec_len))
        self._idx_to_vec = table

    def _set_idx_to_vec_by_embeddings(self, token_embeddings, vocab_len, vocab_idx_to_token):
        """Rows of ``vocab_idx_to_token`` looked up in each embedding, concatenated."""
        parts = []
        for embed in token_embeddings:
            rest = embed.get_vecs_by_tokens(vocab_idx_to_token[1:]).reshape((-1, embed.vec_len))
            parts.append(nd.concat(embed.idx_to_vec[0:1], rest, dim=0))
        self._idx_to_vec = nd.concat(*parts, dim=1) if len(parts) > 1 else parts[0]
        self._vec_len = self._idx_to_vec.shape[1]

    def _index_tokens_from_vocabulary(self, vocabulary):
        self._token_to_idx = dict(vocabulary.token_to_idx)
        self._idx_to_token = list(vocabulary.idx_to_token)
        self._unknown_token = vocabulary.unknown_token
        self._reserved_tokens = (None if vocabulary.reserved_tokens is None
                                 else list(vocabulary.reserved_tokens))

    def _build_embedding_for_vocabulary(self, vocabulary):
        if vocabulary is None:
            return
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise TypeError("%s: vocabulary must be a mx.contrib.text.vocab.Vocabulary, got %s"
                            % (type(self).__name__, type(vocabulary).__name__))
        self._set_idx_to_vec_by_embeddings([self], len(vocabulary), vocabulary.idx_to_token)
        self._index_tokens_from_vocabulary(vocabulary)

    # -- public --------------------------------------------------------------------
    @property
    def vec_len(self):
        """The length of each vector."""
        return self._vec_len

    @property
    def idx_to_vec(self):
        """NDArray ``(len(self), vec_len)``: the vector of each index."""
        return self._idx_to_vec

    def get_vecs_by_tokens(self, tokens, lower_case_backup=False):
        """The vector of a token (1-D), or of each token of a list (2-D); unknown tokens
        get index 0's vector. With ``lower_case_backup`` a token not found is looked up
        again in lower case."""
        single = not isinstance(tokens, list)
        tokens = [tokens] if single else tokens
        if lower_case_backup:
            indices = [self._token_to_idx[t] if t in self._token_to_idx
                       else self._token_to_idx.get(t.lower(), C.UNKNOWN_IDX) for t in tokens]
        else:
            indices = [self._token_to_idx.get(t, C.UNKNOWN_IDX) for t in tokens]
        vecs = nd.Embedding(nd.array(indices), self._idx_to_vec, self._idx_to_vec.shape[0],
                            self._idx_to_vec.shape[1])
        return vecs[0] if single else vecs

    def update_token_vectors(self, tokens, new_vectors):
        """Replace the vectors of known ``tokens`` by the rows of ``new_vectors``."""
        single = not isinstance(tokens, list) or len(tokens) == 1
        tokens = tokens if isinstance(tokens, list) else [tokens]
        if not isinstance(new_vectors, nd.NDArray):
            raise TypeError("update_token_vectors: new_vectors must be an NDArray, got %s"
                            % type(new_vectors).__name__)
        if single and new_vectors.ndim == 1:
            new_vectors = new_vectors.expand_dims(axis=0)
        if new_vectors.ndim != 2 or new_vectors.shape != (len(tokens), self.vec_len):
            raise ValueError("update_token_vectors: new_vectors has shape %s, expected %s"
                             % (new_vectors.shape, (len(tokens), self.vec_len)))
        indices = []
        for token in tokens:
            if token not in self._token_to_idx:
                raise ValueError("Token %s is unknown. To update the embedding vector for an "
                                 "unknown token, please specify it explicitly as the "
                                 "`unknown_token` %s in `tokens`. This is to avoid unintended "
                                 "updates." % (token, self._idx_to_token[C.UNKNOWN_IDX]))
            indices.append(self._token_to_idx[token])
        self._idx_to_vec[nd.array(indices)] = new_vectors


register = registry.get_register_func(_TokenEmbedding, "token embedding")
register.__doc__ = """Register a ``_TokenEmbedding`` subclass for :func:`create`."""
_create = registry.get_create_func(_TokenEmbedding, "token embedding")


def create(embedding_name, **kwargs):
    """An instance of the embedding registered as ``embedding_name`` (``'glove'``,
    ``'fasttext'`` or one of your own), made with ``kwargs``."""
    return _create(embedding_name, **kwargs)


def get_pretrained_file_names(embedding_name=None):
    """The pretrained file names of ``embedding_name``, or ``{name: [files]}`` for every
    registered embedding."""
    reg = registry.get_registry(_TokenEmbedding)
    if embedding_name is None:
        return {name: list(cls.pretrained_file_name_sha1) for name, cls in reg.items()}
    if embedding_name not in reg:
        raise KeyError("Cannot find `embedding_name` %s. Use `get_pretrained_file_names("
                       "embedding_name=None).keys()` to get all the valid embedding names."
                       % embedding_name)
    return list(reg[embedding_name].pretrained_file_name_sha1)


class _Pretrained(_TokenEmbedding):
    """An embedding read from a published file (``pretrained_file_name``)."""
    pretrained_file_name_sha1 = {}

    def __init__(self, pretrained_file_name, embedding_root=None, init_unknown_vec=nd.zeros,
                 vocabulary=None, **kwargs):
        self._check_pretrained_file_names(pretrained_file_name)
        super().__init__(**kwargs)
        path = self._get_pretrained_file(embedding_root or _default_root(),
                                         pretrained_file_name)
        self._load_embedding(path, " ", init_unknown_vec)
        self._build_embedding_for_vocabulary(vocabulary)


@register
class GloVe(_Pretrained):
    """GloVe vectors (https://nlp.stanford.edu/projects/glove/); the ``.txt`` files come
    in ``.zip`` archives."""
    pretrained_archive_name_sha1 = C.GLOVE_PRETRAINED_FILE_SHA1
    pretrained_file_name_sha1 = C.GLOVE_PRETRAINED_ARCHIVE_SHA1

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        for archive in cls.pretrained_archive_name_sha1:
            if pretrained_file_name.startswith(archive[:-len(".zip")]):
                return archive
        return pretrained_file_name

    def __init__(self, pretrained_file_name="glove.840B.300d.txt", embedding_root=None,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(pretrained_file_name, embedding_root, init_unknown_vec, vocabulary,
                         **kwargs)


@register
class FastText(_Pretrained):
    """FastText vectors (https://fasttext.cc/): ``.vec`` files, from ``.zip`` archives
    where the mirror has one."""
    pretrained_archive_name_sha1 = C.FAST_TEXT_ARCHIVE_SHA1
    pretrained_file_name_sha1 = C.FAST_TEXT_FILE_SHA1

    @classmethod
    def _get_download_file_name(cls, pretrained_file_name):
        archive = os.path.splitext(pretrained_file_name)[0] + ".zip"
        return archive if archive in cls.pretrained_archive_name_sha1 else pretrained_file_name

    def __init__(self, pretrained_file_name="wiki.simple.vec", embedding_root=None,
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(pretrained_file_name, embedding_root, init_unknown_vec, vocabulary,
                         **kwargs)


class CustomEmbedding(_TokenEmbedding):
    """Vectors from a file of your own: ``token<elem_delim>v1<elem_delim>v2...`` per line."""

    def __init__(self, pretrained_file_path, elem_delim=" ", encoding="utf8",
                 init_unknown_vec=nd.zeros, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        self._load_embedding(pretrained_file_path, elem_delim, init_unknown_vec, encoding)
        self._build_embedding_for_vocabulary(vocabulary)


class CompositeEmbedding(_TokenEmbedding):
    """The tokens of ``vocabulary`` with the vectors of ``token_embeddings`` (one
    embedding or a list) concatenated."""

    def __init__(self, vocabulary, token_embeddings):
        if not isinstance(vocabulary, vocab.Vocabulary):
            raise TypeError("CompositeEmbedding: vocabulary must be a Vocabulary, got %s"
                            % type(vocabulary).__name__)
        if not isinstance(token_embeddings, list):
            token_embeddings = [token_embeddings]
        for embed in token_embeddings:
            if not isinstance(embed, _TokenEmbedding):
                raise TypeError("CompositeEmbedding: token_embeddings must be token "
                                "embeddings, got %s" % type(embed).__name__)
        super().__init__()
        self._index_tokens_from_vocabulary(vocabulary)
        self._set_idx_to_vec_by_embeddings(token_embeddings, len(self), self._idx_to_token)


__getattr__, __dir__ = _exports(__name__, {
    "C": "mxlite.contrib.text._constants:", "base": "mxlite.base:", "nd": "mxlite.nd:",
    "registry": "mxlite.registry:", "vocab": "mxlite.contrib.text.vocab:",
    "is_np_array": "mxlite.util"})
