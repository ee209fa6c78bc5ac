"""``mx.gluon.contrib``: Gluon's contributed parts: more layers (``nn``), deformable
convolution (``cnn``), recurrent cells (``rnn``: convolutional, projected, variational
dropout), data (``data``) and the Estimator fit loop (``estimator``)."""
from . import estimator, nn, cnn, rnn, data  # noqa: F401
