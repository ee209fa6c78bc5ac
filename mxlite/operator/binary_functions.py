"""The NumPy-style binary functions (``mx.nd.maximum``, ``mx.sym.power``, ...), declared
once for both namespaces: either side may be a scalar, and the function picks the
broadcasting op or the op with a scalar operand, as MXNet's do."""
import numbers
import operator as _py

import numpy as np

__all__ = ["TABLE", "make"]

# name: (op for two arrays, op for array-then-scalar, op for scalar-then-array, scalars)
TABLE = {
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar", _py.add),
    "subtract": ("broadcast_sub", "_minus_scalar", "_rminus_scalar", _py.sub),
    "multiply": ("broadcast_mul", "_mul_scalar", "_mul_scalar", _py.mul),
    "divide": ("broadcast_div", "_div_scalar", "_rdiv_scalar", _py.truediv),
    "modulo": ("broadcast_mod", "_mod_scalar", "_rmod_scalar", _py.mod),
    "power": ("broadcast_power", "_power_scalar", "_rpower_scalar", _py.pow),
    "maximum": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar", max),
    "minimum": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar", min),
    "hypot": ("broadcast_hypot", "_hypot_scalar", "_hypot_scalar",
              lambda a, b: float(np.hypot(a, b))),
    "equal": ("broadcast_equal", "_equal_scalar", "_equal_scalar",
              lambda a, b: float(a == b)),
    "not_equal": ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar",
                  lambda a, b: float(a != b)),
    "greater": ("broadcast_greater", "_greater_scalar", "_lesser_scalar",
                lambda a, b: float(a > b)),
    "greater_equal": ("broadcast_greater_equal", "_greater_equal_scalar",
                      "_lesser_equal_scalar", lambda a, b: float(a >= b)),
    "lesser": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar",
               lambda a, b: float(a < b)),
    "lesser_equal": ("broadcast_lesser_equal", "_lesser_equal_scalar",
                     "_greater_equal_scalar", lambda a, b: float(a <= b)),
    "logical_and": ("broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar",
                    lambda a, b: float(bool(a) and bool(b))),
    "logical_or": ("broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar",
                   lambda a, b: float(bool(a) or bool(b))),
    "logical_xor": ("broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar",
                    lambda a, b: float(bool(a) != bool(b))),
}


def make(name, array_type, apply, is_array=None):
    """The function ``name`` for arrays of ``array_type``; ``apply(op_name, inputs, params)``
    runs a registered op in that namespace (NDArray or Symbol); ``is_array(a)``: whether
    ``a`` counts as an array (default: an ``array_type``)."""
    both, right, left, scalars = TABLE[name]
    if is_array is None:
        def is_array(a):
            return isinstance(a, array_type)

    def fn(lhs, rhs):
        # NOTE: numbers first: a NumPy scalar is a scalar operand, even where raw arrays
        # count as arrays (a gradient rule's).
        ln, rn = isinstance(lhs, numbers.Number), isinstance(rhs, numbers.Number)
        if ln and rn:
            return scalars(lhs, rhs)
        if rn and is_array(lhs):
            return apply(right, [lhs], {"scalar": rhs})
        if ln and is_array(rhs):
            return apply(left, [rhs], {"scalar": lhs})
        if is_array(lhs) and is_array(rhs):
            return apply(both, [lhs, rhs], {})
        raise TypeError("%s: expected %ss or scalars, got %s and %s"
                        % (name, array_type.__name__, type(lhs).__name__, type(rhs).__name__))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = ("Elementwise ``%s`` with broadcasting; either side may be a scalar "
                  "(the op ``%s``, or ``%s``/``%s`` with a scalar)." % (name, both, right, left))
    return fn
