"""Gluon under ``npx.set_np()``: the ``F`` a HybridBlock gets, and the checks on what
blocks take and give.

``F`` is ``mx.nd`` (or ``mx.sym`` while tracing) with ``F.np``/``F.npx`` added; under
NumPy semantics its op functions take ``mx.np.ndarray`` (their outputs are np arrays
too, as an op's outputs take its inputs' class), so the layers' ``F.FullyConnected``
and the like serve both faces unchanged.
"""
from ..nd.ndarray import NDArray
from ..numpy._ndarray import ndarray as NP_NDARRAY
from ..util import _state as _np_state

__all__ = ["face_of", "check_outputs", "check_inputs", "NP_NDARRAY"]


def _retype_np(y):
    if isinstance(y, NDArray):
        if type(y) is NDArray:
            y.__class__ = NP_NDARRAY
        return y
    if isinstance(y, (list, tuple)):
        return type(y)(_retype_np(e) for e in y)
    return y


def _legacy(a):
    if isinstance(a, NDArray) and a._np:
        return a.as_nd_ndarray()
    if isinstance(a, (list, tuple)):
        return type(a)(_legacy(e) for e in a)
    return a


class _SymFace:
    """``mx.sym`` as ``F`` while tracing under NumPy semantics (``F.np``/``F.npx``)."""

    def __init__(self, module, np_mod, npx_mod):
        self._module = module
        self.np = np_mod
        self.npx = npx_mod

    def __getattr__(self, name):
        return getattr(self._module, name)


class _NpFace(_SymFace):
    """``mx.nd`` as Gluon's ``F`` under NumPy semantics: op functions take np arrays,
    other callables (``F.zeros``, ``F.random.normal`` ...) give np arrays."""

    def __getattr__(self, name):
        # Called once per name: the function is then an instance attribute, which
        # Python finds without calling __getattr__ (a layer's F.FullyConnected is hot).
        attr = getattr(self._module, name)
        op = getattr(attr, "_op", None)
        if op is not None:
            from ..nd.register import make_function
            fn = make_function(op, getattr(attr, "__name__", name), face="np")
        elif callable(attr) and not isinstance(attr, type):
            def fn(*args, **kwargs):
                return _retype_np(attr(*_legacy(args), **{k: _legacy(v)
                                                          for k, v in kwargs.items()}))
            fn.__name__ = getattr(attr, "__name__", name)
        elif hasattr(attr, "__dict__") and not isinstance(attr, type):
            fn = _NpFace(attr, self.np, self.npx)      # nd.contrib, nd.random ...
        else:
            return attr
        self.__dict__[name] = fn
        return fn


_faces = {}


def face_of(module):
    """``F`` for ``module`` (``mx.nd`` or ``mx.sym``) under the current semantics."""
    if not _np_state.array:
        return module
    face = _faces.get(module.__name__)
    if face is None:
        from .. import numpy as np_mod, numpy_extension as npx_mod
        if module.__name__.endswith("symbol"):
            face = _SymFace(module, module.np, module.npx)
        else:
            face = _NpFace(module, np_mod, npx_mod)
        _faces[module.__name__] = face
    return face


def np_symbol(s):
    """Symbol ``s`` as an np ``_Symbol`` under NumPy semantics (itself otherwise)."""
    if not _np_state.array:
        return s
    from ..symbol.numpy._np_symbol import _Symbol
    return _Symbol(s._outputs)


def check_outputs(block, out):
    """MXNet's rule under NumPy semantics: a Block gives np arrays, not legacy ones."""
    if type(out) is NP_NDARRAY:
        return
    if type(out).__name__ == "Symbol":
        raise TypeError(
            "Block's output ndarrays/symbols must be of type `mxnet.numpy.ndarray` or "
            "`mxnet.symbol.numpy._Symbol`, while got output type %s (in %s)"
            % (type(out), type(block).__name__))
    if isinstance(out, NDArray):
        if not out._np:
            raise TypeError(
                "Block's output ndarrays/symbols must be of type `mxnet.numpy.ndarray` or "
                "`mxnet.symbol.numpy._Symbol`, while got output type %s (in %s); convert it "
                "with as_np_ndarray()" % (type(out), type(block).__name__))
    elif isinstance(out, (list, tuple)):
        for o in out:
            check_outputs(block, o)


def check_inputs(block, args):
    """Under NumPy semantics a legacy NDArray input is refused, as MXNet's np ops do."""
    for a in args:
        if type(a) is not NP_NDARRAY and isinstance(a, NDArray) and not a._np:
            raise TypeError(
                "%s: received a legacy NDArray under NumPy semantics (npx.set_np()); this "
                "block's operators can only accept MXNet numpy ndarrays. Call "
                "as_np_ndarray() on the input first" % type(block).__name__)
