"""The optional ``onnx`` package, imported only when an ONNX function is called."""
import importlib

__all__ = ["require_onnx"]


def require_onnx(api, module="onnx"):
    """``onnx`` (or one of its submodules), or an ImportError that says which API needs
    it and how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            "%s needs the onnx package (%s); install it with pip install 'mxlite[onnx]' "
            "(or pip install onnx)" % (api, e)) from None
