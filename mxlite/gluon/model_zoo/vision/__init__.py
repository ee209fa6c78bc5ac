"""``mx.gluon.model_zoo.vision``: ResNet v1/v2, VGG, AlexNet, DenseNet, SqueezeNet,
Inception v3, MobileNet and MobileNetV2, built as in MXNet 1.9 (same structure and
parameter names, so ``.params`` files saved by MXNet load with ``load_parameters``).

>>> net = mx.gluon.model_zoo.vision.get_model('resnet18_v1', classes=10)
>>> net.initialize()
>>> net(mx.nd.ones((1, 3, 32, 32))).shape
(1, 10)

``pretrained=True`` loads MXNet's published weights from the local store, downloading
them when they are missing (``mx.gluon.model_zoo.model_store``).
"""
from .alexnet import AlexNet, alexnet
from .densenet import (DenseNet, densenet121, densenet161, densenet169, densenet201,
    get_densenet)
from .inception import Inception3, inception_v3
from .resnet import (ResNetV1, ResNetV2, BasicBlockV1, BasicBlockV2, BottleneckV1,
    BottleneckV2, resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1, resnet152_v1,
    resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2, get_resnet)
from .squeezenet import SqueezeNet, squeezenet1_0, squeezenet1_1, get_squeezenet
from .vgg import (VGG, vgg11, vgg13, vgg16, vgg19, vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn,
    get_vgg)
from .mobilenet import (MobileNet, MobileNetV2, mobilenet1_0, mobilenet_v2_1_0,
    mobilenet0_75, mobilenet_v2_0_75, mobilenet0_5, mobilenet_v2_0_5, mobilenet0_25,
    mobilenet_v2_0_25, get_mobilenet, get_mobilenet_v2)

__all__ = ["AlexNet", "alexnet", "DenseNet", "densenet121", "densenet161", "densenet169",
           "densenet201", "get_densenet", "Inception3", "inception_v3", "ResNetV1",
           "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1", "BottleneckV2",
           "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1",
           "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2",
           "get_resnet", "SqueezeNet", "squeezenet1_0", "squeezenet1_1", "get_squeezenet",
           "VGG", "vgg11", "vgg13", "vgg16", "vgg19", "vgg11_bn", "vgg13_bn", "vgg16_bn",
           "vgg19_bn", "get_vgg", "MobileNet", "MobileNetV2", "mobilenet1_0",
           "mobilenet_v2_1_0", "mobilenet0_75", "mobilenet_v2_0_75", "mobilenet0_5",
           "mobilenet_v2_0_5", "mobilenet0_25", "mobilenet_v2_0_25", "get_mobilenet",
           "get_mobilenet_v2", "get_model"]

# NOTE: the function alexnet shadows the submodule of the same name, so the table below
# names the imported functions, never module attributes.
_MODELS = {
    "resnet18_v1": resnet18_v1, "resnet34_v1": resnet34_v1,
    "resnet50_v1": resnet50_v1, "resnet101_v1": resnet101_v1,
    "resnet152_v1": resnet152_v1, "resnet18_v2": resnet18_v2,
    "resnet34_v2": resnet34_v2, "resnet50_v2": resnet50_v2,
    "resnet101_v2": resnet101_v2, "resnet152_v2": resnet152_v2,
    "vgg11": vgg11, "vgg13": vgg13, "vgg16": vgg16, "vgg19": vgg19,
    "vgg11_bn": vgg11_bn, "vgg13_bn": vgg13_bn, "vgg16_bn": vgg16_bn,
    "vgg19_bn": vgg19_bn,
    "alexnet": alexnet,
    "densenet121": densenet121, "densenet161": densenet161,
    "densenet169": densenet169, "densenet201": densenet201,
    "squeezenet1.0": squeezenet1_0, "squeezenet1.1": squeezenet1_1,
    "inceptionv3": inception_v3,
    "mobilenet1.0": mobilenet1_0, "mobilenet0.75": mobilenet0_75,
    "mobilenet0.5": mobilenet0_5, "mobilenet0.25": mobilenet0_25,
    "mobilenetv2_1.0": mobilenet_v2_1_0,
    "mobilenetv2_0.75": mobilenet_v2_0_75,
    "mobilenetv2_0.5": mobilenet_v2_0_5,
    "mobilenetv2_0.25": mobilenet_v2_0_25,
}


def get_model(name, **kwargs):
    """Build a model-zoo network by name.

    Parameters
    ----------
    name : str
        Model name (case-insensitive), e.g. ``'resnet50_v1'``, ``'vgg16_bn'``,
        ``'squeezenet1.1'``, ``'mobilenetv2_0.5'``, ``'inceptionv3'``.
    **kwargs
        Passed to the constructor: ``classes``, ``pretrained`` (True loads MXNet's
        weights: the local store first, else a download), ``ctx``, ``root``, and the architecture's own options.

    Returns
    -------
    HybridBlock
        The network, not initialised.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the valid ones.
    """
    key = name.lower()
    if key not in _MODELS:
        raise ValueError("Model %s is not supported. Available options are\n\t%s"
                         % (name, "\n\t".join(sorted(_MODELS))))
    return _MODELS[key](**kwargs)
