"""``mx.contrib``: MXNet's experimental namespace (``mx.contrib.nd``/``sym`` for the
contrib operators, the first autograd API, ``io.DataLoaderIter``, ``text``
vocabularies and embeddings, the ``tensorboard`` callback, ``svrg_optimization``), and
mxlite's optional add-ons: ``mxlite.contrib.horovod`` is Horovod's ``horovod.mxnet`` API
on MPI (import it explicitly; it needs ``mxlite[dist]``).

A plain package: each submodule is its own file, imported here by name (a submodule
that needs an optional package imports it only when used).
"""
from . import ndarray  # noqa: F401
from . import symbol  # noqa: F401
from . import ndarray as nd  # noqa: F401
from . import symbol as sym  # noqa: F401
from . import autograd  # noqa: F401
from . import io  # noqa: F401
from . import text  # noqa: F401
from . import onnx  # noqa: F401
from . import tensorboard  # noqa: F401
