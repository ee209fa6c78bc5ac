"""ResNet v1 (He et al. 2015) and v2 (pre-activation, He et al. 2016), as in MXNet's
model zoo: same blocks, prefixes and child names, so MXNet ``.params`` files load."""
from .... import nd
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ...nn import sequential_chains
from ._common import default_root, load_pretrained

__all__ = ["ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1",
           "BottleneckV2", "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1",
           "resnet152_v1", "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2",
           "resnet152_v2", "get_resnet"]


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _downsample_v1(channels, stride, in_channels):
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                      in_channels=in_channels))
    out.add(nn.BatchNorm())
    return out


class BasicBlockV1(HybridBlock):
    """Two 3x3 convolutions with BatchNorm; ReLU after the residual sum (ResNet-18/34).

    Parameters
    ----------
    channels : int
        Output channels.
    stride : int
        Stride of the first convolution (and of the downsample branch).
    downsample : bool, default False
        Project the shortcut with a strided 1x1 convolution.
    in_channels : int, default 0
        Input channels (0: inferred from the data).
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(_conv3x3(channels, stride, in_channels), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(channels, 1, channels), nn.BatchNorm())
        self.downsample = _downsample_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample else x
        if F is nd:     # (the body's last convolution makes the sum and relu)
            return sequential_chains.residual_relu(self.body, x, residual)
        return F.Activation(residual + self.body(x), act_type="relu")


class BottleneckV1(HybridBlock):
    """1x1 - 3x3 - 1x1 bottleneck with BatchNorm; ReLU after the sum (ResNet-50+).

    Parameters are those of `BasicBlockV1`; the inner width is ``channels // 4``.
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        # NOTE: MXNet's v1 bottleneck keeps biases on its 1x1 convolutions; so do we, so
        # that its .params files load.
        self.body.add(nn.Conv2D(channels // 4, kernel_size=1, strides=stride), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(channels // 4, 1, channels // 4),
                      nn.BatchNorm(), nn.Activation("relu"),
                      nn.Conv2D(channels, kernel_size=1, strides=1), nn.BatchNorm())
        self.downsample = _downsample_v1(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample else x
        if F is nd:     # (the body's last convolution makes the sum and relu)
            return sequential_chains.residual_relu(self.body, x, residual)
        return F.Activation(self.body(x) + residual, act_type="relu")


class BasicBlockV2(HybridBlock):
    """Pre-activation basic block: BN-ReLU-conv3x3 twice, plain residual sum.

    Parameters are those of `BasicBlockV1`.
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False,
                                     in_channels=in_channels) if downsample else None)

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample:
            # the projection sees the pre-activated input, as in the paper
            residual = self.downsample(x)
        x = self.conv1(x)
        x = F.Activation(self.bn2(x), act_type="relu")
        return self.conv2(x) + residual


class BottleneckV2(HybridBlock):
    """Pre-activation bottleneck: BN-ReLU-conv1x1, BN-ReLU-conv3x3, BN-ReLU-conv1x1.

    Parameters are those of `BasicBlockV1`; the inner width is ``channels // 4``.
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(channels // 4, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels // 4, stride, channels // 4)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = (nn.Conv2D(channels, 1, stride, use_bias=False,
                                     in_channels=in_channels) if downsample else None)

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        x = self.conv2(F.Activation(self.bn2(x), act_type="relu"))
        x = self.conv3(F.Activation(self.bn3(x), act_type="relu"))
        return x + residual


def _make_stage(block, layers, channels, stride, stage_index, in_channels):
    stage = nn.HybridSequential(prefix="stage%d_" % stage_index)
    with stage.name_scope():
        stage.add(block(channels, stride, channels != in_channels, in_channels=in_channels,
                        prefix=""))
        for _ in range(layers - 1):
            stage.add(block(channels, 1, False, in_channels=channels, prefix=""))
    return stage


def _check_spec(layers, channels):
    if len(layers) != len(channels) - 1:
        raise ValueError("ResNet: len(channels) must be len(layers) + 1, got %d and %d"
                         % (len(channels), len(layers)))


class ResNetV1(HybridBlock):
    """ResNet v1.

    Parameters
    ----------
    block : HybridBlock class
        `BasicBlockV1` or `BottleneckV1`.
    layers : list of int
        Blocks per stage.
    channels : list of int
        Stem channels, then each stage's output channels (``len(layers) + 1`` values).
    classes : int, default 1000
    thumbnail : bool, default False
        Use a single 3x3 stride-1 stem (for small images such as CIFAR).
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        _check_spec(layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            if thumbnail:
                self.features.add(_conv3x3(channels[0], 1, 0))
            else:
                self.features.add(nn.Conv2D(channels[0], 7, 2, 3, use_bias=False),
                                  nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))
            for i, num_layer in enumerate(layers):
                self.features.add(_make_stage(block, num_layer, channels[i + 1],
                                              1 if i == 0 else 2, i + 1, channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class ResNetV2(HybridBlock):
    """ResNet v2 (pre-activation); parameters as `ResNetV1` with the V2 blocks."""

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        _check_spec(layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            # input normalisation without learned scale/shift
            self.features.add(nn.BatchNorm(scale=False, center=False))
            if thumbnail:
                self.features.add(_conv3x3(channels[0], 1, 0))
            else:
                self.features.add(nn.Conv2D(channels[0], 7, 2, 3, use_bias=False),
                                  nn.BatchNorm(), nn.Activation("relu"), nn.MaxPool2D(3, 2, 1))
            in_channels = channels[0]
            for i, num_layer in enumerate(layers):
                self.features.add(_make_stage(block, num_layer, channels[i + 1],
                                              1 if i == 0 else 2, i + 1, in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.GlobalAvgPool2D(),
                              nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


resnet_spec = {18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
                         {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2}]


def get_resnet(version, num_layers, pretrained=False, ctx=cpu(), root=default_root(),
               **kwargs):
    """ResNet `version` (1 or 2) with `num_layers` in (18, 34, 50, 101, 152).

    ``pretrained=True`` loads MXNet's weights (``model_store.get_model_file``: the local
    store, else a download). Other keyword arguments go to `ResNetV1`/`ResNetV2`.
    """
    if num_layers not in resnet_spec:
        raise ValueError("Invalid number of layers: %s. Options are %s"
                         % (num_layers, sorted(resnet_spec)))
    if version not in (1, 2):
        raise ValueError("Invalid resnet version: %s. Options are 1 and 2." % version)
    block_type, layers, channels = resnet_spec[num_layers]
    block = resnet_block_versions[version - 1][block_type]
    net = resnet_net_versions[version - 1](block, layers, channels, **kwargs)
    return load_pretrained(net, pretrained, "resnet%d_v%d" % (num_layers, version), root, ctx)


def _resnet_constructor(version, num_layers):
    def constructor(**kwargs):
        return get_resnet(version, num_layers, **kwargs)
    constructor.__name__ = "resnet%d_v%d" % (num_layers, version)
    constructor.__doc__ = "ResNet-%d v%d; keyword arguments as `get_resnet`." % (num_layers,
                                                                               version)
    return constructor


resnet18_v1 = _resnet_constructor(1, 18)
resnet34_v1 = _resnet_constructor(1, 34)
resnet50_v1 = _resnet_constructor(1, 50)
resnet101_v1 = _resnet_constructor(1, 101)
resnet152_v1 = _resnet_constructor(1, 152)
resnet18_v2 = _resnet_constructor(2, 18)
resnet34_v2 = _resnet_constructor(2, 34)
resnet50_v2 = _resnet_constructor(2, 50)
resnet101_v2 = _resnet_constructor(2, 101)
resnet152_v2 = _resnet_constructor(2, 152)
