"""Loading a saved model (``prefix-symbol.json`` + ``prefix-epoch.params``) for export."""
import os

from ... import nd
from ... import symbol

__all__ = ["load_module"]


def load_module(sym_filepath, params_filepath):
    """``(symbol, params)`` from a symbol file and a params file (as
    :meth:`HybridBlock.export` and ``mx.model.save_checkpoint`` write them), ``params``
    holding the arguments and auxiliary states in one dict, their ``arg:``/``aux:``
    prefixes removed.
    """
    if not (os.path.isfile(sym_filepath) and os.path.isfile(params_filepath)):
        raise ValueError("mx.onnx.export_model: symbol file %r and params file %r must both "
                         "exist" % (sym_filepath, params_filepath))
    sym = symbol.load(sym_filepath)
    saved = nd.load(params_filepath)
    if not isinstance(saved, dict):
        raise ValueError("mx.onnx.export_model: %r holds a list of arrays; expected named "
                         "parameters" % params_filepath)
    params = {(k[4:] if k.startswith(("arg:", "aux:")) else k): v for k, v in saved.items()}
    return sym, params


# MXNet's module shows the package it imports as ``mx``.
from ..._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {"mx": "mxlite:"})
