"""Elementwise np ops: ``_npi_add`` ..., their ``*_scalar`` forms, unary math, comparisons.

The kernels and gradient rules are the legacy ops' (``broadcast_add``, ``exp`` ...);
what differs is MXNet's NumPy dtype rules:

- two arrays: equal dtypes stay; a float meets an int (or bool): the float; two floats
  or two ints: the wider; bool meets int: float32 (as MXNet 1.9.1 gives);
- ``true_divide`` of integers gives float32; comparisons give bool;
- an array with a Python scalar keeps the array's dtype (the scalar is cast to it:
  ``int32 * 1.5`` multiplies by 1), except ``true_divide`` of an int array (float32);
- results are real arrays, 0-d included (NumPy's ufuncs give scalars for 0-d inputs).
"""
import numpy as onp

from ..registry import OPS, dtypes, register_op
from ..util import zeros_grad

F32 = onp.dtype(onp.float32)
BOOL = onp.dtype(onp.bool_)


def promote(a, b):
    """MXNet's result dtype of a binary np op on arrays of dtypes ``a`` and ``b``."""
    if a == b:
        return a
    fa, fb = a.kind == "f", b.kind == "f"
    if fa and fb:
        return a if a.itemsize >= b.itemsize else b
    if fa:
        return a
    if fb:
        return b
    if a.kind == "b" or b.kind == "b":
        return F32
    return onp.promote_types(a, b)


def _keep_float_dtype(xs, gxs):
    # NOTE: NumPy < 2 turns a 0-d float32 times a Python float into float64; legacy
    # arrays are never 0-d, np ones often are. A float input gets its own dtype back.
    return [g if g is None or g.dtype == x.dtype or x.dtype.kind != "f" else g.astype(x.dtype)
            for x, g in zip(xs, gxs)]


def _cast_gradient(rule):
    if rule is None:
        return None

    def gradient(p, x, y, gy, need):
        return _keep_float_dtype(x, rule(p, x, y, gy, need))
    return gradient


def derive(name, base, compute, aliases=(), **kw):
    """Register np op ``name`` with ``compute`` and the legacy op ``base``'s inputs,
    params and gradient rules (the same math under MXNet's np name)."""
    b = OPS[base]
    spec = dict(inputs=b.inputs, params=tuple(b.params.values()),
                gradient=_cast_gradient(b.gradient),
                saves=b.saves, num_outputs=b.num_outputs,
                num_visible_outputs=b.num_visible_outputs, same_shape=b.same_shape,
                variadic=b.variadic, infer_shape=b.infer_shape_rule,
                infer_type=b.infer_type_rule, doc=b.doc, aliases=aliases)
    spec.update(kw)
    return register_op(name, compute, **spec)


def _binary_compute(kernel, compute_dtype, out_dtype=None):
    def compute(p, xp, a, b):
        if out_dtype is None and a.dtype == b.dtype and a.dtype.kind == "f":
            y = kernel(xp, a, b)        # the common case: no promotion to do
            return y if type(y) is xp.ndarray else xp.asarray(y)
        dt = compute_dtype(a.dtype, b.dtype)
        if a.dtype != dt:
            a = a.astype(dt)
        if b.dtype != dt:
            b = b.astype(dt)
        y = kernel(xp, a, b)
        if out_dtype is not None:
            return xp.asarray(y, dtype=out_dtype)
        return xp.asarray(y)
    return compute


def _div_dtype(a, b):
    dt = promote(a, b)
    return dt if dt.kind == "f" else F32


def _binary_type(rule):
    return lambda p, dtypes: [rule(onp.dtype(dtypes[0]), onp.dtype(dtypes[1]))]


# np name, legacy op, kernel(xp, a, b)
_ARITH = [
    ("add", "broadcast_add", lambda xp, a, b: a + b),
    ("subtract", "broadcast_sub", lambda xp, a, b: a - b),
    ("multiply", "broadcast_mul", lambda xp, a, b: a * b),
    ("mod", "broadcast_mod", lambda xp, a, b: xp.mod(a, b)),
    ("power", "broadcast_power", lambda xp, a, b: xp.power(a, b)),
    ("maximum", "broadcast_maximum", lambda xp, a, b: xp.maximum(a, b)),
    ("minimum", "broadcast_minimum", lambda xp, a, b: xp.minimum(a, b)),
    ("hypot", "broadcast_hypot", lambda xp, a, b: xp.hypot(a, b)),
]
for _n, _base, _k in _ARITH:
    derive("_npi_" + _n, _base, _binary_compute(_k, promote), infer_type=_binary_type(promote),
           # NOTE: as NumPy, MXNet refuses to subtract booleans
           check=dtypes(inputs="fiu") if _n == "subtract" else None,
           doc="Elementwise %s of two arrays with broadcasting (``mx.np.%s``)." % (_n, _n))
derive("_npi_true_divide", "broadcast_div", _binary_compute(lambda xp, a, b: a / b, _div_dtype),
       infer_type=_binary_type(_div_dtype),
       doc="Elementwise true division with broadcasting; integers give float32.")

_COMPARE = [("equal", "broadcast_equal", lambda xp, a, b: a == b),
            ("not_equal", "broadcast_not_equal", lambda xp, a, b: a != b),
            ("greater", "broadcast_greater", lambda xp, a, b: a > b),
            ("greater_equal", "broadcast_greater_equal", lambda xp, a, b: a >= b),
            ("less", "broadcast_lesser", lambda xp, a, b: a < b),
            ("less_equal", "broadcast_lesser_equal", lambda xp, a, b: a <= b),
            ("logical_and", "broadcast_logical_and", lambda xp, a, b: xp.logical_and(a, b)),
            ("logical_or", "broadcast_logical_or", lambda xp, a, b: xp.logical_or(a, b)),
            ("logical_xor", "broadcast_logical_xor", lambda xp, a, b: xp.logical_xor(a, b))]
# NOTE: MXNet records comparisons and gives their inputs zero gradients (a comparison
# in a recorded graph does not stop backward), so they have the zero rule.
for _n, _base, _k in _COMPARE:
    derive("_npi_" + _n, _base, _binary_compute(_k, promote, BOOL), gradient=zeros_grad,
           infer_type=lambda p, dtypes: [BOOL],
           doc="Elementwise %s of two arrays with broadcasting, as bool." % _n)

# name, kernel, the dtype kinds it takes
_INT_ONLY = [("bitwise_and", lambda xp, a, b: xp.bitwise_and(a, b), "iub"),
             ("bitwise_or", lambda xp, a, b: xp.bitwise_or(a, b), "iub"),
             ("bitwise_xor", lambda xp, a, b: xp.bitwise_xor(a, b), "iub"),
             ("lcm", lambda xp, a, b: xp.lcm(a, b), "iu")]
for _n, _k, _kinds in _INT_ONLY:
    derive("_npi_" + _n, "broadcast_equal", _binary_compute(_k, promote), gradient=None,
           infer_type=_binary_type(promote), check=dtypes(inputs=_kinds),
           doc="Elementwise %s of two integer arrays with broadcasting." % _n)


# -- with a Python scalar -------------------------------------------------------------

def _as_array(base, dtype=None, float_bool=False):
    """The legacy op ``base``'s kernel giving a real array (of ``dtype``), 0-d included;
    ``float_bool``: a bool input is computed as float32."""
    kernel = OPS[base].compute

    def compute(p, xp, x):
        if float_bool and x.dtype == BOOL:
            x = x.astype(F32)
        return xp.asarray(kernel(p, xp, x), dtype=dtype)
    return compute


def _scalar_type(p, dtypes):
    dt = onp.dtype(dtypes[0])
    return [F32 if dt == BOOL else dt]


_SCALAR = [("add_scalar", "_plus_scalar"), ("subtract_scalar", "_minus_scalar"),
           ("rsubtract_scalar", "_rminus_scalar"), ("multiply_scalar", "_mul_scalar"),
           ("mod_scalar", "_mod_scalar"), ("rmod_scalar", "_rmod_scalar"),
           ("power_scalar", "_power_scalar"), ("rpower_scalar", "_rpower_scalar"),
           ("maximum_scalar", "_maximum_scalar"), ("minimum_scalar", "_minimum_scalar"),
           ("hypot_scalar", "_hypot_scalar")]
for _n, _base in _SCALAR:
    derive("_npi_" + _n, _base, _as_array(_base, float_bool=True), infer_type=_scalar_type)


def _true_divide_scalar(reverse):
    def compute(p, xp, x):
        if x.dtype.kind != "f":
            x = x.astype(F32)
        s = x.dtype.type(p.scalar)
        with onp.errstate(divide="ignore", invalid="ignore"):
            return xp.asarray(s / x if reverse else x / s)
    return compute


def _float_type(p, dtypes):
    dt = onp.dtype(dtypes[0])
    return [dt if dt.kind == "f" else F32]


derive("_npi_true_divide_scalar", "_div_scalar", _true_divide_scalar(False),
       infer_type=_float_type, doc="Array divided by a scalar; integers give float32.")
derive("_npi_rtrue_divide_scalar", "_rdiv_scalar", _true_divide_scalar(True),
       infer_type=_float_type, doc="A scalar divided by an array; integers give float32.")

_SCALAR_COMPARE = [("equal_scalar", "_equal_scalar"), ("not_equal_scalar", "_not_equal_scalar"),
                   ("greater_scalar", "_greater_scalar"),
                   ("greater_equal_scalar", "_greater_equal_scalar"),
                   ("less_scalar", "_lesser_scalar"), ("less_equal_scalar", "_lesser_equal_scalar")]


for _n, _base in _SCALAR_COMPARE:
    derive("_npi_" + _n, _base, _as_array(_base, BOOL), gradient=zeros_grad,
           infer_type=lambda p, dtypes: [BOOL])


# -- unary ----------------------------------------------------------------------------

# np name, legacy op (same kernel and gradient), MXNet aliases
_UNARY = [("absolute", "abs", ("_npi_abs",)), ("negative", "negative", ()),
          ("exp", "exp", ()), ("expm1", "expm1", ()), ("log", "log", ()),
          ("log10", "log10", ()), ("log2", "log2", ()), ("log1p", "log1p", ()),
          ("sqrt", "sqrt", ()), ("cbrt", "cbrt", ()), ("square", "square", ()),
          ("reciprocal", "reciprocal", ()), ("sin", "sin", ()), ("cos", "cos", ()),
          ("tan", "tan", ()), ("arcsin", "arcsin", ()), ("arccos", "arccos", ()),
          ("arctan", "arctan", ()), ("sinh", "sinh", ()), ("cosh", "cosh", ()),
          ("tanh", "tanh", ()), ("arcsinh", "arcsinh", ()), ("arccosh", "arccosh", ()),
          ("arctanh", "arctanh", ()), ("degrees", "degrees", ("_npi_rad2deg",)),
          ("radians", "radians", ("_npi_deg2rad",)), ("rint", "rint", ()),
          ("fix", "fix", ()), ("floor", "floor", ()), ("ceil", "ceil", ()),
          ("trunc", "trunc", ()), ("sign", "sign", ())]
for _n, _base, _al in _UNARY:
    derive("_npi_" + _n, _base, _as_array(_base), aliases=_al,
           doc="Elementwise %s (``mx.np.%s``)." % (_n, _n))


def _bool_unary(kernel):
    def compute(p, xp, x):
        return xp.asarray(kernel(xp, x), dtype=BOOL)
    return compute


_PREDICATES = [("logical_not", lambda xp, x: xp.logical_not(x)),
               ("isnan", lambda xp, x: xp.isnan(x)), ("isinf", lambda xp, x: xp.isinf(x)),
               ("isfinite", lambda xp, x: xp.isfinite(x)),
               ("isposinf", lambda xp, x: xp.isposinf(x)),
               ("isneginf", lambda xp, x: xp.isneginf(x))]
for _n, _k in _PREDICATES:
    register_op("_npi_" + _n, _bool_unary(_k), inputs=("x",), same_shape=(0,),
                infer_type=lambda p, dtypes: [BOOL],
                doc="Elementwise %s, as a bool array (not differentiable)." % _n)

register_op("_npi_bitwise_not", lambda p, xp, x: xp.asarray(xp.invert(x)), inputs=("x",),
            same_shape=(0,), aliases=("_npi_invert",), check=dtypes(x="iub"),
            doc="Elementwise bitwise NOT of an integer or bool array.")
