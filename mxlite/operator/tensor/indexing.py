"""Indexing: ``x[key]`` and ``x[key] = v`` as recordable ops."""
import numpy as np

from ..registry import register_op, Params, invoke
from ..util import unbroadcast


def _is_advanced(key):
    if isinstance(key, tuple):
        return any(isinstance(k, np.ndarray) or (hasattr(k, "__cuda_array_interface__")) for k in key)
    return isinstance(key, np.ndarray) or hasattr(key, "__cuda_array_interface__")


def _dev_key(xp, key):
    if xp is np:
        return key
    if isinstance(key, tuple):
        return tuple(xp.asarray(k) if isinstance(k, np.ndarray) else k for k in key)
    return xp.asarray(key) if isinstance(key, np.ndarray) else key


def _getitem(p, xp, x):
    y = x[_dev_key(xp, p.key)]
    if not p.view and xp.may_share_memory(x, y):
        y = y.copy()
    if y.ndim == 0:     # MXNet 1.x has no 0-d arrays: a scalar result has shape (1,)
        y = y.reshape(1)
    return y


def _getitem_grad(p, x, y, gy):
    op = _GETITEM_BWD
    return [invoke(op, (gy[0],), Params(op, {"key": p.key, "shape": x[0].shape}))]


def _getitem_backward(p, xp, gy):
    gx = xp.zeros(p.shape, gy.dtype)
    key = _dev_key(xp, p.key)
    target_shape = gx[key].shape
    g = gy.reshape(target_shape)
    if _is_advanced(p.key):
        xp.add.at(gx, key, g)
    else:
        gx[key] = g
    return gx


def _getitem_backward_grad(p, x, y, gy):
    op = _GETITEM
    return [invoke(op, (gy[0],), Params(op, {"key": p.key, "view": False})).reshape(x[0].shape)]


_GETITEM = register_op("_getitem", _getitem, gradient=_getitem_grad, saves="",
                       doc="``x[key]`` (used by NDArray indexing).")
_GETITEM_BWD = register_op("_getitem_backward", _getitem_backward, gradient=_getitem_backward_grad,
                           saves="", doc="Scatter-add ``gy`` into zeros at ``key``.")


def _setitem(p, xp, x, v=None):
    y = x.copy()
    y[_dev_key(xp, p.key)] = p.scalar if v is None else v
    return y


def _setitem_grad(p, x, y, gy):
    op = _SETITEM
    g = gy[0]
    gx = invoke(op, (g,), Params(op, {"key": p.key, "scalar": 0.0}))
    if len(x) == 1:
        return [gx]
    gv = invoke(_GETITEM, (g,), Params(_GETITEM, {"key": p.key, "view": False}))
    v = x[1]
    if gv.shape != v.shape:
        if gv.size == v.size:
            gv = gv.reshape(v.shape)
        else:
            gv = unbroadcast(gv, (1,) * (gv.ndim - v.ndim) + v.shape).reshape(v.shape)
    return [gx, gv]


_SETITEM = register_op("_setitem", _setitem, gradient=_setitem_grad, saves="",
                       inputs=lambda p: ("data",) if p.scalar is not None else ("data", "value"),
                       doc="A copy of ``x`` with ``x[key] = value`` (used by NDArray "
                           "assignment under autograd).")
