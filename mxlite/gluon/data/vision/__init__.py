"""``mx.gluon.data.vision``: vision datasets and image transforms."""
from .datasets import (MNIST, FashionMNIST, CIFAR10, CIFAR100,  # noqa: F401
                       ImageRecordDataset, ImageFolderDataset)
from . import datasets, transforms  # noqa: F401
from .digits import Digits  # noqa: F401
from . import digits  # noqa: F401
