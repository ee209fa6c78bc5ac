"""``mx.metric``: evaluation metrics, as in MXNet 1.9.1.

Every metric keeps a local and a global running sum (``sum_metric``/``num_inst``
and ``global_sum_metric``/``global_num_inst``); ``reset_local`` clears only the
local one. The numbers are MXNet 1.9.1's, quirks included: MAE, MSE and RMSE
average their per-update values (not per sample), and so does F1 with
``average='macro'``.

>>> acc = mx.metric.Accuracy()
>>> acc.update([mx.nd.array([0, 1, 1])], [mx.nd.array([[0.3, 0.7], [0, 1.], [0.4, 0.6]])])
>>> acc.get()
('accuracy', 0.6666666666666666)
"""
import numpy  # noqa: F401 (MXNet's module shows it too)

from .. import registry as _registry
from .._lazy import exports as _exports
from .base import (EvalMetric, CompositeEvalMetric, Loss, Torch, Caffe, CustomMetric,
                   create, register, alias, np, check_label_shapes, _REGISTRY)
from .classification import Accuracy, TopKAccuracy, F1, MCC, Perplexity
from .regression import (MAE, MSE, RMSE, CrossEntropy, NegativeLogLikelihood,
                         PearsonCorrelation, PCC)

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "Caffe", "CustomMetric", "create",
           "register", "alias", "np", "check_label_shapes"]

_registry.adopt(EvalMetric, _REGISTRY)  # mx.registry.get_registry(EvalMetric) lists them

# Names MXNet's module also shows, served from where they live in mxlite.
__getattr__, __dir__ = _exports(__name__, {
    "ndarray": "mxlite.nd:",
    "numeric_types": "mxlite.base",
    "registry": "mxlite.registry:",
    "string_types": "mxlite.base",
})
