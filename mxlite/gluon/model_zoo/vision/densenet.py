"""DenseNet-121/161/169/201 (Huang et al. 2016), as in MXNet's model zoo."""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ._common import HybridConcurrent, default_root, load_pretrained

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201",
           "get_densenet"]


def _make_dense_layer(growth_rate, bn_size, dropout):
    """BN-ReLU-conv1x1-BN-ReLU-conv3x3, its output concatenated to its input."""
    new_features = nn.HybridSequential(prefix="")
    new_features.add(nn.BatchNorm(), nn.Activation("relu"),
                     nn.Conv2D(bn_size * growth_rate, kernel_size=1, use_bias=False),
                     nn.BatchNorm(), nn.Activation("relu"),
                     nn.Conv2D(growth_rate, kernel_size=3, padding=1, use_bias=False))
    if dropout:
        new_features.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix="")
    out.add(nn.Identity(), new_features)
    return out


def _make_dense_block(num_layers, bn_size, growth_rate, dropout, stage_index):
    out = nn.HybridSequential(prefix="stage%d_" % stage_index)
    with out.name_scope():
        for _ in range(num_layers):
            out.add(_make_dense_layer(growth_rate, bn_size, dropout))
    return out


def _make_transition(num_output_features):
    out = nn.HybridSequential(prefix="")
    out.add(nn.BatchNorm(), nn.Activation("relu"),
            nn.Conv2D(num_output_features, kernel_size=1, use_bias=False),
            nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    """DenseNet.

    Parameters
    ----------
    num_init_features : int
        Channels of the stem convolution.
    growth_rate : int
        Channels each dense layer adds.
    block_config : list of int
        Dense layers per block.
    bn_size : int, default 4
        Bottleneck width multiplier (1x1 conv has ``bn_size * growth_rate`` channels).
    dropout : float, default 0
        Dropout rate after each dense layer (0: none).
    classes : int, default 1000
    """

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2, padding=3,
                                        use_bias=False),
                              nn.BatchNorm(), nn.Activation("relu"),
                              nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            num_features = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(_make_dense_block(num_layers, bn_size, growth_rate, dropout,
                                                    i + 1))
                num_features += num_layers * growth_rate
                if i != len(block_config) - 1:
                    num_features //= 2
                    self.features.add(_make_transition(num_features))
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.AvgPool2D(pool_size=7),
                              nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers, pretrained=False, ctx=cpu(), root=default_root(), **kwargs):
    """DenseNet with `num_layers` in (121, 161, 169, 201); ``pretrained=True`` loads."""
    if num_layers not in densenet_spec:
        raise ValueError("Invalid number of layers: %s. Options are %s"
                         % (num_layers, sorted(densenet_spec)))
    num_init_features, growth_rate, block_config = densenet_spec[num_layers]
    net = DenseNet(num_init_features, growth_rate, block_config, **kwargs)
    return load_pretrained(net, pretrained, "densenet%d" % num_layers, root, ctx)


def _densenet_constructor(num_layers):
    def constructor(**kwargs):
        return get_densenet(num_layers, **kwargs)
    constructor.__name__ = "densenet%d" % num_layers
    constructor.__doc__ = "DenseNet-%d; keyword arguments as `get_densenet`." % num_layers
    return constructor


densenet121 = _densenet_constructor(121)
densenet161 = _densenet_constructor(161)
densenet169 = _densenet_constructor(169)
densenet201 = _densenet_constructor(201)
