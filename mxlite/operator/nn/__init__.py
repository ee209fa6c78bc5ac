"""Neural-network ops (FullyConnected, Convolution, Pooling, normalisation, losses, RNN ...)."""
from . import (fully_connected, convolution, pooling, activation, softmax,  # noqa: F401
               normalization, dropout, embedding, upsampling, loss, sequence, ctc, rnn,
               sampling, detection, multibox, fused)
from . import deformable  # noqa: F401
from . import two_stage  # noqa: F401
from . import contrib_extra  # noqa: F401
from ..tensor import optimizer_extra  # noqa: F401
from . import legacy_nn  # noqa: F401
from . import contrib_more  # noqa: F401
from . import quantize, quantized  # noqa: F401
