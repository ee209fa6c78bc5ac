"""Inception v3 (Szegedy et al. 2015), as in MXNet's model zoo (input 299x299)."""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ._common import HybridConcurrent, default_root, load_pretrained

__all__ = ["Inception3", "inception_v3"]

_SETTING_NAMES = ("channels", "kernel_size", "strides", "padding")


def _make_basic_conv(**kwargs):
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(use_bias=False, **kwargs))
    out.add(nn.BatchNorm(epsilon=0.001))
    out.add(nn.Activation("relu"))
    return out


def _make_branch(use_pool, *conv_settings):
    """An optional pool, then basic convs; settings are (channels, kernel, strides, padding)
    with None meaning the Conv2D default."""
    out = nn.HybridSequential(prefix="")
    if use_pool == "avg":
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif use_pool == "max":
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    for setting in conv_settings:
        kwargs = {name: value for name, value in zip(_SETTING_NAMES, setting)
                  if value is not None}
        out.add(_make_basic_conv(**kwargs))
    return out


def _concurrent(prefix, *branches):
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for make in branches:
            out.add(make())
    return out


def _make_A(pool_features, prefix):
    return _concurrent(
        prefix,
        lambda: _make_branch(None, (64, 1, None, None)),
        lambda: _make_branch(None, (48, 1, None, None), (64, 5, None, 2)),
        lambda: _make_branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
        lambda: _make_branch("avg", (pool_features, 1, None, None)))


def _make_B(prefix):
    return _concurrent(
        prefix,
        lambda: _make_branch(None, (384, 3, 2, None)),
        lambda: _make_branch(None, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
        lambda: _make_branch("max"))


def _make_C(c7, prefix):
    return _concurrent(
        prefix,
        lambda: _make_branch(None, (192, 1, None, None)),
        lambda: _make_branch(None, (c7, 1, None, None), (c7, (1, 7), None, (0, 3)),
                             (192, (7, 1), None, (3, 0))),
        lambda: _make_branch(None, (c7, 1, None, None), (c7, (7, 1), None, (3, 0)),
                             (c7, (1, 7), None, (0, 3)), (c7, (7, 1), None, (3, 0)),
                             (192, (1, 7), None, (0, 3))),
        lambda: _make_branch("avg", (192, 1, None, None)))


def _make_D(prefix):
    return _concurrent(
        prefix,
        lambda: _make_branch(None, (192, 1, None, None), (320, 3, 2, None)),
        lambda: _make_branch(None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                             (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
        lambda: _make_branch("max"))


def _split_3x3(first):
    """`first` branch, then parallel 1x3 and 3x1 convs concatenated."""
    out = nn.HybridSequential(prefix="")
    out.add(first)
    split = HybridConcurrent(axis=1, prefix="")
    split.add(_make_branch(None, (384, (1, 3), None, (0, 1))))
    split.add(_make_branch(None, (384, (3, 1), None, (1, 0))))
    out.add(split)
    return out


def _make_E(prefix):
    # NOTE: the creation order below fixes the conv/batchnorm counters, hence the
    # parameter names; it follows MXNet's.
    return _concurrent(
        prefix,
        lambda: _make_branch(None, (320, 1, None, None)),
        lambda: _split_3x3(_make_branch(None, (384, 1, None, None))),
        lambda: _split_3x3(_make_branch(None, (448, 1, None, None), (384, 3, None, 1))),
        lambda: _make_branch("avg", (192, 1, None, None)))


class Inception3(HybridBlock):
    """Inception v3 (expects 299x299 inputs).

    Parameters
    ----------
    classes : int, default 1000
    """

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            add = self.features.add
            add(_make_basic_conv(channels=32, kernel_size=3, strides=2))
            add(_make_basic_conv(channels=32, kernel_size=3))
            add(_make_basic_conv(channels=64, kernel_size=3, padding=1))
            add(nn.MaxPool2D(pool_size=3, strides=2))
            add(_make_basic_conv(channels=80, kernel_size=1))
            add(_make_basic_conv(channels=192, kernel_size=3))
            add(nn.MaxPool2D(pool_size=3, strides=2))
            add(_make_A(32, "A1_"), _make_A(64, "A2_"), _make_A(64, "A3_"), _make_B("B_"))
            add(_make_C(128, "C1_"), _make_C(160, "C2_"), _make_C(160, "C3_"),
                _make_C(192, "C4_"))
            add(_make_D("D_"), _make_E("E1_"), _make_E("E2_"))
            add(nn.AvgPool2D(pool_size=8), nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=cpu(), root=default_root(), **kwargs):
    """Inception v3; ``pretrained=True`` loads MXNet's weights; see `Inception3`."""
    net = Inception3(**kwargs)
    return load_pretrained(net, pretrained, "inceptionv3", root, ctx)
