"""Helpers shared by the model-zoo families: the ``pretrained`` refusal, the default
``root`` and the concurrent container that the branchy networks need."""
import os

from ....base import MXNetError, data_dir
from ... import nn


def default_root():
    """``$MXNET_HOME/models`` (``~/.mxnet/models`` by default), MXNet's model store."""
    return os.path.join(data_dir(), "models")


def check_pretrained(pretrained, model_name, root):
    """Refuse ``pretrained=True``: there is no network access to download weights.

    Raises
    ------
    MXNetError
        When `pretrained` is true; the message says how to load local weights.
    """
    if not pretrained:
        return
    raise MXNetError(
        "pretrained=True for model '%s': mxlite cannot download pretrained weights (no "
        "network access, no model store). Build the network with pretrained=False and load "
        "a .params file saved by MXNet's model zoo instead, e.g. "
        "net = get_model('%s'); net.load_parameters('%s')"
        % (model_name, model_name,
           os.path.join(os.path.expanduser(root), "%s-<hash>.params" % model_name)))


class HybridConcurrent(nn.HybridSequential):
    """Runs every child on the same input and concatenates the outputs along `axis`
    (what ``gluon.contrib.nn.HybridConcurrent`` does; kept here so the model zoo
    does not depend on ``contrib``)."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        outs = [block(x) for block in self._children.values()]
        return F.concat(*outs, dim=self.axis)
