"""Helpers shared by the model-zoo families: loading pretrained weights, the default
``root`` and the concurrent container that the branchy networks need."""
import os

from ....base import data_dir
from ... import nn


def default_root():
    """``$MXNET_HOME/models`` (``~/.mxnet/models`` by default), MXNet's model store."""
    return os.path.join(data_dir(), "models")


def load_pretrained(net, pretrained, model_name, root, ctx):
    """``net`` itself, with MXNet's pretrained weights of ``model_name`` loaded on
    ``ctx`` when ``pretrained``: the local store under ``root`` first, else a download
    (``model_store.get_model_file``, which says where to put the file without network)."""
    if pretrained:
        from ..model_store import get_model_file
        net.load_parameters(get_model_file(model_name, root=root), ctx=ctx)
    return net


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
