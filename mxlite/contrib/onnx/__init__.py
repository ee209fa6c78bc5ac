"""``mx.contrib.onnx``: ONNX import (``import_model``, ``import_to_gluon``,
``get_model_metadata``) and the older path of ``mx.onnx.export_model``.

As in MXNet 1.9.1, each public function prints a deprecation notice first (MXNet 1.10
was to drop these paths) and calls the function of the same name with ``_``.
"""
from .onnx2mx.import_model import import_model as import_model_
from .onnx2mx.import_model import get_model_metadata as get_model_metadata_
from .onnx2mx.import_to_gluon import import_to_gluon as import_to_gluon_
from ...onnx import export_model as export_model_
from . import onnx2mx  # noqa: F401

__all__ = ["import_model", "get_model_metadata", "import_to_gluon", "export_model"]

_IMPORT_NOTICE = ("Please be advised that importing ONNX models into MXNet is going to be "
                  "deprecated in the upcoming MXNet v1.10 release. The following apis will be "
                  "deleted: mxnet.contrib.onnx.import_model/get_model_metadata/import_to_gluon.")


def import_model(*args, **kwargs):
    """:func:`~.onnx2mx.import_model.import_model`, after MXNet's deprecation notice."""
    print('Calling mxnet.contrib.onnx.import_model...')
    print(_IMPORT_NOTICE)
    return import_model_(*args, **kwargs)


def get_model_metadata(*args, **kwargs):
    """:func:`~.onnx2mx.import_model.get_model_metadata`, after MXNet's deprecation
    notice."""
    print('Calling mxnet.contrib.onnx.get_model_metadata...')
    print(_IMPORT_NOTICE)
    return get_model_metadata_(*args, **kwargs)


def import_to_gluon(*args, **kwargs):
    """:func:`~.onnx2mx.import_to_gluon.import_to_gluon`, after MXNet's deprecation
    notice."""
    print('Calling mxnet.contrib.onnx.import_to_gluon...')
    print(_IMPORT_NOTICE)
    return import_to_gluon_(*args, **kwargs)


def export_model(*args, **kwargs):
    """:func:`mxlite.onnx.export_model`, after MXNet's notice that it moved there."""
    print('Calling mxnet.contrib.onnx.export_model...')
    print('Please be advised that the ONNX module has been moved to mxnet.onnx and '
          'mxnet.onnx.export_model is the preferred path. The current path will be deprecated '
          'in the upcoming MXNet v1.10 release.')
    return export_model_(*args, **kwargs)
