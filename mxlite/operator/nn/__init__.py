"""Neural-network ops (FullyConnected, Convolution, Pooling, normalisation, losses, RNN ...)."""
from . import (fully_connected, convolution, pooling, activation, softmax,  # noqa: F401
               normalization, dropout, embedding, upsampling, loss, sequence, ctc, rnn,
               sampling, detection, multibox, fused)
from . import deformable  # noqa: F401
from . import two_stage  # noqa: F401
from . import attention, fft  # noqa: F401
from ..tensor import optimizer_extra  # noqa: F401
from . import legacy_nn  # noqa: F401
from . import (correlation, deformable_modulated, deformable_psroi,  # noqa: F401
               roi_rotated, hawkes)
from . import quantize, quantized  # noqa: F401
