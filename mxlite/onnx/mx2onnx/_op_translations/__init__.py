"""The translations of MXNet operators to ONNX, registered on
:class:`~.._export_onnx.MXNetGraph` when imported."""
from . import _nn  # noqa: F401
from . import _tensor  # noqa: F401
from . import _more  # noqa: F401
from . import _rnn  # noqa: F401
from . import _sequence  # noqa: F401
from . import _attention  # noqa: F401
