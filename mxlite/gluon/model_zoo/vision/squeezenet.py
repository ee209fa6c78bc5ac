"""SqueezeNet 1.0 and 1.1 (Iandola et al. 2016), as in MXNet's model zoo."""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ._common import HybridConcurrent, default_root, load_pretrained

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1", "get_squeezenet"]


def _make_fire_conv(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding))
    out.add(nn.Activation("relu"))
    return out


def _make_fire(squeeze_channels, expand1x1_channels, expand3x3_channels):
    """A fire module: a 1x1 squeeze, then 1x1 and 3x3 expands concatenated."""
    out = nn.HybridSequential(prefix="")
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = HybridConcurrent(axis=1, prefix="")
    paths.add(_make_fire_conv(expand1x1_channels, 1))
    paths.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(HybridBlock):
    """SqueezeNet.

    Parameters
    ----------
    version : str
        ``'1.0'`` or ``'1.1'``.
    classes : int, default 1000
    """

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        if version not in ("1.0", "1.1"):
            raise ValueError("Unsupported SqueezeNet version %s: 1.0 or 1.1 expected" % version)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            add = self.features.add
            if version == "1.0":
                add(nn.Conv2D(96, kernel_size=7, strides=2), nn.Activation("relu"), _pool())
                add(_make_fire(16, 64, 64), _make_fire(16, 64, 64), _make_fire(32, 128, 128))
                add(_pool())
                add(_make_fire(32, 128, 128), _make_fire(48, 192, 192),
                    _make_fire(48, 192, 192), _make_fire(64, 256, 256))
                add(_pool())
                add(_make_fire(64, 256, 256))
            else:
                add(nn.Conv2D(64, kernel_size=3, strides=2), nn.Activation("relu"), _pool())
                add(_make_fire(16, 64, 64), _make_fire(16, 64, 64))
                add(_pool())
                add(_make_fire(32, 128, 128), _make_fire(32, 128, 128))
                add(_pool())
                add(_make_fire(48, 192, 192), _make_fire(48, 192, 192),
                    _make_fire(64, 256, 256), _make_fire(64, 256, 256))
            add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation("relu"),
                            nn.AvgPool2D(13), nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=cpu(), root=default_root(), **kwargs):
    """SqueezeNet `version` (``'1.0'`` or ``'1.1'``); ``pretrained=True`` loads MXNet's weights."""
    net = SqueezeNet(version, **kwargs)
    return load_pretrained(net, pretrained, "squeezenet%s" % version, root, ctx)


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0; keyword arguments as `get_squeezenet`."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1; keyword arguments as `get_squeezenet`."""
    return get_squeezenet("1.1", **kwargs)
