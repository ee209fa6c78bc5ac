"""AlexNet ("One weird trick...", Krizhevsky 2014), as in MXNet's model zoo."""
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ._common import default_root, load_pretrained

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    """AlexNet: five convolutions, three max-pools, two 4096-unit dense layers.

    Parameters
    ----------
    classes : int, default 1000
        Number of output classes.
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                add = self.features.add
                add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation="relu"))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Conv2D(192, kernel_size=5, padding=2, activation="relu"))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                for channels in (384, 256, 256):
                    add(nn.Conv2D(channels, kernel_size=3, padding=1, activation="relu"))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Flatten())
                for _ in range(2):
                    add(nn.Dense(4096, activation="relu"))
                    add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=cpu(), root=default_root(), **kwargs):
    """AlexNet; ``pretrained=True`` loads MXNet's weights; see `AlexNet`."""
    net = AlexNet(**kwargs)
    return load_pretrained(net, pretrained, "alexnet", root, ctx)
