"""Block.summary on hybridized blocks (issue #7 item 6): the same table as the imperative
block, hybridization and the cached graph kept, hooks removed, even on error."""
import numpy as np
import pytest

import mxlite as mx
from mxlite.gluon import nn

# Printed by MXNet 1.9.1's net.summary(x) for _conv_net() (imperative; MXNet refuses a
# hybridized block with an AssertionError, mxlite prints the same table for it).
MXNET_TABLE = """\
--------------------------------------------------------------------------------
        Layer (type)                                Output Shape         Param #
================================================================================
               Input                                (2, 1, 8, 8)               0
            Conv2D-1                                (2, 4, 6, 6)              40
         BatchNorm-2                                (2, 4, 6, 6)              16
        Activation-3                                (2, 4, 6, 6)               0
             Dense-4                                     (2, 10)            1450
================================================================================
Parameters in forward computation graph, duplicate included
   Total params: 1506
   Trainable params: 1498
   Non-trainable params: 8
Shared params in forward computation graph: 0
Unique parameters in model: 1506
--------------------------------------------------------------------------------
"""


def _conv_net():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Conv2D(4, 3, in_channels=1), nn.BatchNorm(), nn.Activation("relu"),
                nn.Dense(10))
    net.initialize()
    return net


class _Model(mx.gluon.HybridBlock):
    """A custom block with children and a shared Dense."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.body = nn.HybridSequential()
            self.body.add(nn.Dense(8, activation="tanh"), nn.Dropout(0.5))
            self.head = nn.Dense(3)

    def hybrid_forward(self, F, x):
        return self.head(self.body(x)) + self.head(self.body(x))


def _blocks(net):
    found = []
    net.apply(found.append)
    return found


def test_hybridized_summary_prints_the_mxnet_table(capsys):
    net = _conv_net()
    x = mx.nd.ones((2, 1, 8, 8))
    net.summary(x)
    assert capsys.readouterr().out == MXNET_TABLE
    net.hybridize()
    y = net(x)
    graph = net._cached_graph
    assert graph
    net.summary(x)
    assert capsys.readouterr().out == MXNET_TABLE
    # still hybridized, with the same graph (not traced again), and no hook left
    assert all(b._active for b in _blocks(net))
    assert net._cached_graph is graph
    assert not any(b._forward_hooks for b in _blocks(net))
    # (a graph's later runs may go on parts of the batch: float32 round-off from its first)
    np.testing.assert_allclose(net(x).asnumpy(), y.asnumpy(), rtol=1e-6, atol=1e-7)


def test_custom_block_shared_params_same_table_hybridized(capsys):
    x = mx.nd.array(np.random.RandomState(0).rand(4, 5))
    net = _Model()
    net.initialize()
    net.summary(x)
    imperative = capsys.readouterr().out
    net.hybridize()
    net(x)
    net.summary(x)
    assert capsys.readouterr().out == imperative
    # MXNet 1.9.1's rows, less its spurious Symbol row for the deferred Activation
    rows = [line.split()[0] for line in imperative.splitlines()[3:13]]
    assert rows == ["Input", "Activation-1", "Dense-2", "Dropout-3", "Dense-4", "Activation-5",
                    "Dense-6", "Dropout-7", "Dense-8", "_Model-9"]
    assert "Shared params in forward computation graph: 75\n" in imperative


def test_hybridized_before_first_call_deferred_shapes(capsys):
    """hybridize() then summary() straight away: deferred shapes resolve imperatively."""
    net = _conv_net()
    net.hybridize()
    net.summary(mx.nd.ones((2, 1, 8, 8)))
    assert capsys.readouterr().out == MXNET_TABLE
    assert all(b._active for b in _blocks(net))
    assert net(mx.nd.ones((2, 1, 8, 8))).shape == (2, 10)
    assert net._cached_graph


def test_hybridization_restored_after_an_error():
    net = _conv_net()
    net.hybridize()
    net(mx.nd.ones((2, 1, 8, 8)))
    with pytest.raises(mx.MXNetError):
        net.summary(mx.nd.ones((2, 3, 8, 8)))       # Conv2D has in_channels=1
    assert all(b._active for b in _blocks(net))
    assert not any(b._forward_hooks for b in _blocks(net))
    assert net(mx.nd.ones((2, 1, 8, 8))).shape == (2, 10)


def test_partly_hybridized_tree(capsys):
    """Only the hybridized children are switched, and only they are switched back."""
    net = _conv_net()
    x = mx.nd.ones((2, 1, 8, 8))
    net[0].hybridize()
    net(x)
    net.summary(x)
    assert capsys.readouterr().out == MXNET_TABLE
    assert [b._active for b in _blocks(net)] == [True, False, False, False, False]
