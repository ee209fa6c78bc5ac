"""``mx.rnn``: MXNet 1.x's legacy symbolic RNN cells, bucketing sentence iterator and
RNN checkpoints, for ``mx.mod.Module`` / ``BucketingModule`` language models."""
from . import rnn_cell  # noqa: F401
from .rnn_cell import *  # noqa: F401,F403
from . import io  # noqa: F401
from .io import encode_sentences, BucketSentenceIter  # noqa: F401
from . import rnn  # noqa: F401
from .rnn import save_rnn_checkpoint, load_rnn_checkpoint, do_rnn_checkpoint  # noqa: F401

from .. import initializer as _initializer  # noqa: E402
_initializer.FusedRNN = rnn_cell.FusedRNN    # MXNet shows it as mx.init.FusedRNN too
