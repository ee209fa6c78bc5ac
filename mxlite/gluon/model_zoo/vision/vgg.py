"""VGG-11/13/16/19, with and without batch normalisation, as in MXNet's model zoo."""
from ....context import cpu
from ....initializer import Xavier
from ...block import HybridBlock
from ... import nn
from ._common import default_root, load_pretrained

__all__ = ["VGG", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn",
           "vgg19_bn", "get_vgg"]

vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


class VGG(HybridBlock):
    """VGG network.

    Parameters
    ----------
    layers : list of int
        Number of 3x3 convolutions in each of the five stages.
    filters : list of int
        Channels of each stage.
    classes : int, default 1000
    batch_norm : bool, default False
        Put a BatchNorm after every convolution.
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(filters):
            raise ValueError("VGG: layers and filters must have the same length, got %d and %d"
                             % (len(layers), len(filters)))
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation="relu", weight_initializer="normal",
                                           bias_initializer="zeros"))
                self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer="normal",
                                   bias_initializer="zeros")

    @staticmethod
    def _make_features(layers, filters, batch_norm):
        featurizer = nn.HybridSequential(prefix="")
        for num, channels in zip(layers, filters):
            for _ in range(num):
                featurizer.add(nn.Conv2D(channels, kernel_size=3, padding=1,
                                         weight_initializer=Xavier(rnd_type="gaussian",
                                                                   factor_type="out",
                                                                   magnitude=2),
                                         bias_initializer="zeros"))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation("relu"))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_vgg(num_layers, pretrained=False, ctx=cpu(), root=default_root(), **kwargs):
    """VGG with `num_layers` in (11, 13, 16, 19); ``batch_norm=True`` for the _bn variants."""
    if num_layers not in vgg_spec:
        raise ValueError("Invalid number of layers: %s. Options are %s"
                         % (num_layers, sorted(vgg_spec)))
    suffix = "_bn" if kwargs.get("batch_norm") else ""
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    return load_pretrained(net, pretrained, "vgg%d%s" % (num_layers, suffix), root, ctx)


def _vgg_constructor(num_layers, batch_norm):
    def constructor(**kwargs):
        if batch_norm:
            kwargs["batch_norm"] = True
        return get_vgg(num_layers, **kwargs)
    constructor.__name__ = "vgg%d%s" % (num_layers, "_bn" if batch_norm else "")
    constructor.__doc__ = "VGG-%d%s; keyword arguments as `get_vgg`." % (
        num_layers, " with batch normalisation" if batch_norm else "")
    return constructor


vgg11 = _vgg_constructor(11, False)
vgg13 = _vgg_constructor(13, False)
vgg16 = _vgg_constructor(16, False)
vgg19 = _vgg_constructor(19, False)
vgg11_bn = _vgg_constructor(11, True)
vgg13_bn = _vgg_constructor(13, True)
vgg16_bn = _vgg_constructor(16, True)
vgg19_bn = _vgg_constructor(19, True)
