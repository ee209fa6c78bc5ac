"""``mx.rnn``: MXNet 1.x's legacy symbolic RNN cells, bucketing sentence iterator and
RNN checkpoints, for ``mx.mod.Module`` / ``BucketingModule`` language models."""
from . import rnn_cell  # noqa: F401
from .rnn_cell import *  # noqa: F401,F403
from .conv_rnn_cell import *  # noqa: F401,F403
from .fused_rnn_cell import FusedRNN, FusedRNNCell  # noqa: F401
from . import io  # noqa: F401
from .io import encode_sentences, BucketSentenceIter  # noqa: F401
from . import rnn  # noqa: F401
from .rnn import (rnn_unroll, save_rnn_checkpoint, load_rnn_checkpoint,  # noqa: F401
                  do_rnn_checkpoint)

from .. import initializer as _initializer  # noqa: E402
_initializer.FusedRNN = FusedRNN    # MXNet shows it as mx.init.FusedRNN too


# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "DataBatch": "mxlite.io.io",
    "DataDesc": "mxlite.io.io",
    "DataIter": "mxlite.io.io",
    "init": "mxlite.initializer:",
    "load_checkpoint": "mxlite.model",
    "ndarray": "mxlite.nd:",
    "numeric_types": "mxlite.base",
    "save_checkpoint": "mxlite.model",
    "string_types": "mxlite.base",
    "symbol": "mxlite.symbol:",
})
