"""``mx.gluon.contrib``: Gluon's contributed parts: more layers (``nn``), recurrent cells
(``rnn``: convolutional, projected, variational dropout), data (``data``) and the
Estimator fit loop (``estimator``)."""
from . import estimator, nn, rnn, data  # noqa: F401
