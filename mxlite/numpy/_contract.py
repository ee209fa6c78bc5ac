"""``mx.np`` functions on matrices and contractions that run MXNet's ops (recorded by
autograd, traced by hybridize): ``tril``, ``trace``, ``diag``, ``diagonal``, ``roll``,
``rot90``, ``diff``, ``arctan2``, ``tensordot``, ``einsum``, and ``inner``/``outer``/``vdot`` composed from
tensordot as MXNet composes them."""
import numpy as onp

from ._ndarray import apply
from ._shape import _np

__all__ = ["tril", "trace", "diag", "diagonal", "roll", "rot90", "diff", "arctan2",
           "tensordot", "einsum", "inner", "outer", "vdot"]

_NUMBERS = (int, float, onp.integer, onp.floating)


def tril(m, k=0):
    """The lower triangle (at and below diagonal ``k``) of (a stack of) matrices."""
    return apply("_npi_tril", (_np(m),), {"k": k}, py_name="tril")


def trace(a, offset=0, axis1=0, axis2=1, out=None):
    """The sum along diagonal ``offset`` of the axes ``axis1``, ``axis2``."""
    return apply("_np_trace", (_np(a),), {"offset": offset, "axis1": axis1, "axis2": axis2},
                 out=out, py_name="trace")


def diagonal(a, offset=0, axis1=0, axis2=1):
    """Diagonal ``offset`` of the axes ``axis1``, ``axis2``, as the last axis."""
    return apply("_np_diagonal", (_np(a),), {"offset": offset, "axis1": axis1,
                                             "axis2": axis2}, py_name="diagonal")


def diag(v, k=0):
    """The ``k``-th diagonal of a matrix, or a matrix with vector ``v`` on it."""
    return apply("_np_diag", (_np(v),), {"k": k}, py_name="diag")


def roll(a, shift, axis=None):
    """Elements shifted by ``shift`` along ``axis`` (of the flattened array if None)."""
    as_tuple = (lambda v: None if v is None else tuple(v) if isinstance(v, (list, tuple))
                else (v,))
    return apply("_np_roll", (_np(a),), {"shift": as_tuple(shift), "axis": as_tuple(axis)},
                 py_name="roll")


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    return apply("_npi_rot90", (_np(m),), {"k": k, "axes": tuple(axes)}, py_name="rot90")


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (no prepend/append, as MXNet)."""
    if prepend is not None or append is not None:
        raise NotImplementedError("diff: prepend and append are not supported (as in "
                                  "MXNet 1.9.1)")
    return apply("_npi_diff", (_np(a),), {"n": n, "axis": axis}, py_name="diff")


def arctan2(x1, x2, out=None, **kwargs):
    """Elementwise ``arctan(x1 / x2)`` in the quadrant of (x2, x1), with broadcasting."""
    if isinstance(x2, _NUMBERS):
        if isinstance(x1, _NUMBERS):
            return apply("_npi_arctan2_scalar", (_np(float(x1)),), {"scalar": float(x2)})
        return apply("_npi_arctan2_scalar", (_np(x1),), {
            "scalar": float(x2), "is_int": isinstance(x2, (int, onp.integer))}, out=out, py_name="arctan2")
    if isinstance(x1, _NUMBERS):
        return apply("_npi_rarctan2_scalar", (_np(x2),), {
            "scalar": float(x1), "is_int": isinstance(x1, (int, onp.integer))}, out=out, py_name="arctan2")
    return apply("_npi_arctan2", (_np(x1), _np(x2)), out=out, py_name="arctan2")


def tensordot(a, b, axes=2):
    """Sum of products over the last ``axes`` axes of a and the first of b, or over the
    axis pairs ``(a_axes, b_axes)``."""
    if isinstance(axes, int):
        return apply("_npi_tensordot_int_axes", (_np(a), _np(b)), {"axes": axes},
                     py_name="tensordot")
    a_axes, b_axes = axes
    a_axes = (a_axes,) if isinstance(a_axes, int) else tuple(a_axes)
    b_axes = (b_axes,) if isinstance(b_axes, int) else tuple(b_axes)
    if len(a_axes) != len(b_axes):
        raise ValueError("tensordot: axes to sum over must have the same length, got %s "
                         "and %s" % (a_axes, b_axes))
    return apply("_npi_tensordot", (_np(a), _np(b)), {"a_axes_summed": a_axes,
                                                       "b_axes_summed": b_axes},
                 py_name="tensordot")


def einsum(*operands, **kwargs):
    """Einstein summation: ``einsum('ij,jk->ik', a, b)``; ``optimize=True`` searches a
    cheaper contraction order."""
    subscripts, arrays = operands[0], [_np(x) for x in operands[1:]]
    out = kwargs.pop("out", None)
    optimize = int(bool(kwargs.pop("optimize", False)))
    if kwargs:
        raise TypeError("einsum: unexpected argument(s) %s" % ", ".join(sorted(kwargs)))
    return apply("_npi_einsum", tuple(arrays), {"subscripts": subscripts,
                                                "num_args": len(arrays),
                                                "optimize": optimize},
                 out=out, py_name="einsum")


def inner(a, b):
    """The inner product over the last axes."""
    return tensordot(a, b, ([-1], [-1]))


def outer(a, b):
    """The outer product of the flattened arrays."""
    return tensordot(_np(a).reshape(-1), _np(b).reshape(-1), 0)


def vdot(a, b):
    """The dot product of the flattened arrays."""
    return tensordot(_np(a).reshape(-1), _np(b).reshape(-1), 1)
