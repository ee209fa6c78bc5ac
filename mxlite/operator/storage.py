"""The storage type of an op's output where an input is sparse (MXNet's
``FInferStorageType``), for the imperative path.

mxlite keeps the values of every array dense (``mx.nd.sparse``); what storage type
an output reports follows MXNet 1.9.1's documented rules, so that code reading
``.stype``, ``.indices`` or ``.data`` of a result sees MXNet's kinds of array:
``abs(row_sparse)`` is row_sparse, ``exp(row_sparse)`` dense, ``dot(csr, dense)``
dense, ``dot(csr.T, dense)`` row_sparse, ``elemwise_add(csr, csr)`` csr. An op with
no rule gives a dense array for sparse inputs, as MXNet's storage fallback does.

Where MXNet would give a sparse result whose implicit zeros are not the values
(``clip`` of a csr array to a range without 0), the result here is dense, with the
right values.
"""
# Unary ops that map 0 to 0: the output keeps the input's storage type. (MXNet
# documents ``f(row_sparse) = row_sparse`` and ``f(csr) = csr`` for each.)
_ZERO_PRESERVING = frozenset((
    "abs", "arcsin", "arcsinh", "arctan", "arctanh", "cbrt", "ceil", "degrees", "expm1",
    "fix", "floor", "log1p", "negative", "radians", "relu", "rint", "round", "sign", "sin",
    "sinh", "sqrt", "square", "tan", "tanh", "trunc", "_contrib_round_ste",
    "_contrib_sign_ste", "zeros_like", "_mul_scalar", "_div_scalar", "BlockGrad",
    "_copy", "_copyto"))


def _same(p, stypes):
    return stypes[0]


def _make_loss(p, stypes):
    return stypes[0] if stypes[0] == "row_sparse" else "default"


def _cast_storage(p, stypes):
    return p.stype


def _both(p, stypes):
    """elemwise_add / elemwise_sub: sparse where both inputs have one sparse type."""
    return stypes[0] if stypes[0] == stypes[1] else "default"


def _elemwise_mul(p, stypes):
    if "row_sparse" in stypes and "csr" not in stypes:
        return "row_sparse"
    return stypes[0] if stypes[0] == stypes[1] else "default"


def _add_n(p, stypes):
    return "row_sparse" if all(s == "row_sparse" for s in stypes) else "default"


def _clip(p, stypes):
    keeps_zero = p.a_min <= 0 <= p.a_max
    return stypes[0] if keeps_zero else "default"


def _csr_scaled(p, stypes):
    """broadcast_mul / broadcast_div of a csr matrix by a dense array: csr."""
    return "csr" if stypes[0] == "csr" and stypes[1] == "default" else "default"


def _concat(p, stypes):
    return "csr" if p.dim == 0 and all(s == "csr" for s in stypes) else "default"


def _slice(p, stypes):
    return "csr" if stypes[0] == "csr" else "default"


def _dot(p, stypes):
    if p.forward_stype is not None:
        return p.forward_stype
    if stypes == ["csr", "default"] and p.transpose_a:
        return "row_sparse"
    if stypes == ["default", "csr"] and not p.transpose_b:
        return "csr"
    return "default"


RULES = dict.fromkeys(_ZERO_PRESERVING, _same)
RULES.update({
    "make_loss": _make_loss, "cast_storage": _cast_storage,
    "elemwise_add": _both, "elemwise_sub": _both, "elemwise_mul": _elemwise_mul,
    "add_n": _add_n, "clip": _clip, "broadcast_mul": _csr_scaled,
    "broadcast_div": _csr_scaled, "Concat": _concat, "slice": _slice, "dot": _dot,
})
RULES.update({"_sparse_retain": lambda p, stypes: "row_sparse"})
# Ops whose output can be sparse though their first input is dense: where a later
# input is sparse, or always (a cast).
_ANY_INPUT = frozenset(("elemwise_mul", "dot"))
_ALWAYS = frozenset(("cast_storage", "_sparse_retain"))
CHECKED = _ANY_INPUT | _ALWAYS


def applies(op, inputs):
    """For an op in :data:`CHECKED` whose first input is dense: whether its output's
    class is its rule's."""
    return op.name in _ALWAYS or any(x.__class__._sparse for x in inputs)


def output_class(op, p, inputs):
    """The NDArray class of ``op``'s outputs for ``inputs``: the class of the storage
    type its rule gives (a dense result keeps a dense first input's class)."""
    from ..nd.ndarray import NDArray
    from ..nd.sparse import _CLASSES
    rule = RULES.get(op.name)
    stype = "default" if rule is None else rule(p, [x.stype for x in inputs])
    if stype == "default":
        first = inputs[0].__class__
        return NDArray if first._sparse else first
    return _CLASSES[stype]
