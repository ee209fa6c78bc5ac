"""MXNet 1.x's legacy op names and small utility ops.

Old ``-symbol.json`` files and scripts name ops by spellings that MXNet 1.9.1 still
registers: capitalised aliases (``_Equal``, ``_ModScalar``), ops kept for old
executors (``_grad_add``, ``_zeros_without_dtype``), the legacy NDArray functions
(``_onehot_encode``, ``choose_element_0index``, ``_crop_assign``) and
the small multi-tensor helpers of the optimizers (``multi_sum_sq``, ``multi_lars``,
``all_finite``, ``reset_arrays``).

Aliases are made by :func:`register_alias`: a new :class:`Op` under the old name built
from the existing op's declaration (compute, gradient, params, shape rules), so a JSON
node with the old name loads and runs exactly as the op it names.

mxlite has dense storage only: the sparse-storage ops (``cast_storage``,
``_scatter_*``, ``_square_sum``, ``_contrib_getnnz``) take and return dense arrays
with the numbers MXNet gives for the dense equivalent.
"""
import numpy as np

from ... import nd
from ...base import (MXNetError, FLAG_TO_DTYPE, np_dtype, parse_bool, parse_float, parse_int,
                     parse_float_tuple, optional)
from ..registry import register_op, Param, get_op, ranks
from .indexing import _slice_key
from .init import shape_fits

# Op.__init__ keyword -> the Op attribute that stores it (name, aliases, params aside).
OP_FIELDS = {"compute": "kernel", "check": "check", "inputs": "inputs", "gradient": "gradient",
             "num_outputs": "num_outputs", "num_visible_outputs": "num_visible_outputs",
             "infer_shape": "infer_shape_rule", "infer_type": "infer_type_rule",
             "mutate": "mutate", "saves": "saves", "is_view": "is_view", "doc": "doc",
             "variadic": "variadic", "variadic_group": "variadic_group",
             "input_types": "input_types",
             "output_names": "output_names",
             "no_grad_inputs": "no_grad_inputs", "output_ctx": "output_ctx",
             "parse": "custom_parse",
             "same_shape": "same_shape",
             "infer_shape_back": "infer_shape_back", "shape_from_data": "shape_from_data",
             "unlisted": "unlisted", "batchwise": "batchwise"}


def declaration(op):
    """The keyword arguments of :func:`register_op` that re-declare ``op``."""
    kwargs = {k: getattr(op, attr) for k, attr in OP_FIELDS.items()}
    kwargs["params"] = list(op.params.values())
    return kwargs


def register_alias(name, target, doc=None):
    """Register ``name`` as an op that behaves exactly as the op ``target``.

    Parameters
    ----------
    name : str
        The old (alias) name, as written in old symbol JSON.
    target : str
        A registered op name.
    doc : str, optional
        The docstring; by default the target's with a line naming it.

    Returns
    -------
    Op
    """
    kwargs = declaration(get_op(target))
    kwargs["doc"] = doc or "%s\n\nMXNet's legacy name for ``%s``." % (
        (kwargs["doc"] or "").strip(), target)
    return register_op(name, **kwargs)


# -- pure aliases (MXNet resolves these names to the target op) ---------------------------

ALIASES = {
    "_Equal": "_equal", "_Not_Equal": "_not_equal", "_Greater": "_greater",
    "_Greater_Equal": "_greater_equal", "_Lesser": "_lesser", "_Lesser_Equal": "_lesser_equal",
    "_Logical_And": "_logical_and", "_Logical_Or": "_logical_or", "_Logical_Xor": "_logical_xor",
    "_EqualScalar": "_equal_scalar", "_NotEqualScalar": "_not_equal_scalar",
    "_GreaterScalar": "_greater_scalar", "_GreaterEqualScalar": "_greater_equal_scalar",
    "_LesserScalar": "_lesser_scalar", "_LesserEqualScalar": "_lesser_equal_scalar",
    "_LogicalAndScalar": "_logical_and_scalar", "_LogicalOrScalar": "_logical_or_scalar",
    "_LogicalXorScalar": "_logical_xor_scalar", "_ModScalar": "_mod_scalar",
    "_RModScalar": "_rmod_scalar", "_HypotScalar": "_hypot_scalar",
    # Separate ops in MXNet with the same numbers on dense storage.
    "_grad_add": "elemwise_add",
    "_scatter_plus_scalar": "_plus_scalar", "_scatter_minus_scalar": "_minus_scalar",
    "_scatter_elemwise_div": "elemwise_div",
    # Gluon's fused RNN layers concatenate their weights with this op in exported JSON.
    "_rnn_param_concat": "Concat",
    # Embedding with a row_sparse gradient in MXNet (stored dense in mxlite).
    "_contrib_SparseEmbedding": "Embedding",
}

for _name, _target in ALIASES.items():
    register_alias(_name, _target)


# -- executor helpers ------------------------------------------------------------------------

def _identity_like_rhs(p, xp, lhs, rhs):
    if lhs.shape != rhs.shape:
        raise MXNetError("lhs has shape %s but rhs has shape %s; expected equal shapes"
                         % (lhs.shape, rhs.shape))
    return lhs.copy()


register_op("_identity_with_attr_like_rhs", _identity_like_rhs, inputs=("lhs", "rhs"),
            gradient=lambda p, x, y, gy, need: [gy[0], nd.zeros_like(x[1])], saves="x",
            same_shape=(0, 1),
            doc="``lhs``, unchanged; ``rhs`` only lends its shape (zero gradient).")


def _dtype_or_code(v):
    """A dtype from a name, NumPy type or MXNet's integer type code; -1 means float32."""
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        v = int(v)
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        if v == -1:
            return np.dtype(np.float32)
        if v not in FLAG_TO_DTYPE:
            raise ValueError("dtype code %d is not one of %s" % (v, sorted(FLAG_TO_DTYPE)))
        return np.dtype(FLAG_TO_DTYPE[v])
    return np_dtype(v, "dtype")


_ZEROS = get_op("_zeros")
register_op("_zeros_without_dtype", lambda p, xp: xp.zeros(p.shape, p.dtype), inputs=(),
            check=shape_fits(),
            params=[_ZEROS.params["shape"], _ZEROS.params["ctx"],
                    Param("dtype", _dtype_or_code, np.dtype(np.float32),
                          "MXNet's type code or a dtype; -1 (unknown) gives float32.")],
            doc="An array of zeros. NOTE: MXNet leaves ``dtype=-1`` to graph type inference; "
                "mxlite infers types forward only and makes it float32.")


def _no_gradient(p, xp):
    raise MXNetError("_NoGradient is the placeholder MXNet puts in gradient graphs where a "
                     "variable gets no gradient; it has no value to compute")


register_op("_NoGradient", _no_gradient, inputs=(),
            infer_shape=lambda p, shapes: ([], [None]),
            doc="Placeholder node of MXNet's gradient graphs: loads from JSON, cannot run "
                "(as in MXNet).")


# -- legacy NDArray functions ---------------------------------------------------------------

def _onehot_encode(p, xp, lhs, rhs):
    if lhs.ndim != 1 or rhs.ndim != 2 or rhs.shape[0] != lhs.shape[0]:
        raise MXNetError("expected indices of shape (n,) and out of shape (n, depth); got %s "
                         "and %s" % (lhs.shape, rhs.shape))
    idx = lhs.astype(np.int64)
    return (idx[:, None] == xp.arange(rhs.shape[1])).astype(rhs.dtype)


register_op("_onehot_encode", _onehot_encode, inputs=("lhs", "rhs"),
            doc="One-hot rows: ``y[i, lhs[i]] = 1``; ``rhs`` gives the shape and dtype "
                "(MXNet's deprecated ``onehot_encode``; not differentiable).")


def _check_2d_index(name, x, index):
    if x.ndim != 2 or index.shape != (x.shape[0],):
        raise MXNetError("%s: expected 2-D data and an index of shape (%d,); got %s and %s"
                         % (name, x.shape[0] if x.ndim else 0, x.shape, index.shape))


def _pick_params():
    pick = get_op("pick")
    return pick, pick.parse_params({"axis": 1, "mode": "clip"})


def _choose(p, xp, x, index):
    _check_2d_index("choose_element_0index", x, index)
    pick, pp = _pick_params()
    return pick.compute(pp, xp, x, index)


def _choose_grad(p, x, y, gy, need):
    pick, pp = _pick_params()
    return pick.gradient(pp, x, y, gy, need)


register_op("choose_element_0index", _choose, inputs=("lhs", "rhs"), gradient=_choose_grad,
            saves="x",
            doc="``y[i] = lhs[i, rhs[i]]``: ``pick`` along axis 1, indices truncated and "
                "clipped to the row.")


def _fill(p, xp, x, value, index):
    _check_2d_index("fill_element_0index", x, index)
    if value.shape != (x.shape[0],):
        raise MXNetError("fill_element_0index: mhs must have shape (%d,), got %s"
                         % (x.shape[0], value.shape))
    y = x.copy()
    cols = index.astype(np.int64)
    # As MXNet: a row whose index is out of range is left alone.
    rows = xp.nonzero((cols >= 0) & (cols < x.shape[1]))[0]
    y[rows, cols[rows]] = value[rows]
    return y


register_op("fill_element_0index", _fill, inputs=("lhs", "mhs", "rhs"),
            doc="A copy of ``lhs`` with ``y[i, rhs[i]] = mhs[i]`` (indices truncated; rows "
                "with an out-of-range index unchanged; not differentiable, as in MXNet).")


# -- slice assignment -------------------------------------------------------------------------

_SLICE = get_op("slice")
_SLICE_PARAMS = [_SLICE.params[k] for k in ("begin", "end", "step")]


def _slice_assign(p, xp, lhs, rhs):
    y = lhs.copy()
    key = _slice_key(p, lhs.ndim)
    want = y[key].shape
    if rhs.shape != want:
        raise MXNetError("rhs has shape %s but the slice %s of lhs %s has shape %s"
                         % (rhs.shape, key, lhs.shape, want))
    y[key] = rhs
    return y


def _slice_assign_grad(p, x, y, gy, need):
    kw = {"begin": p.begin, "end": p.end, "step": p.step}
    return [nd._internal._slice_assign_scalar(gy[0], scalar=0.0, **kw),
            nd.slice(gy[0], **kw)]


def _slice_assign_scalar(p, xp, x):
    y = x.copy()
    y[_slice_key(p, x.ndim)] = p.scalar
    return y


def _slice_assign_scalar_grad(p, x, y, gy, need):
    return [nd._internal._slice_assign_scalar(gy[0], scalar=0.0, begin=p.begin, end=p.end,
                                              step=p.step)]


_SA_DOC = ("A copy of ``lhs`` whose slice ``[begin:end:step]`` (as ``slice``) is replaced by "
           "``rhs``. NOTE: MXNet declares no gradient; mxlite gives the exact one (the slice's "
           "gradient goes to ``rhs``, the rest to ``lhs``).")
register_op("_slice_assign", _slice_assign, inputs=("lhs", "rhs"), params=_SLICE_PARAMS,
            gradient=_slice_assign_grad, saves="", aliases=("_crop_assign",), doc=_SA_DOC)
register_op("_slice_assign_scalar", _slice_assign_scalar, params=[
    Param("scalar", parse_float, 0.0, "The value written into the slice.")] + _SLICE_PARAMS,
    gradient=_slice_assign_scalar_grad, saves="", aliases=("_crop_assign_scalar",),
    doc="A copy of ``data`` whose slice ``[begin:end:step]`` is set to ``scalar`` (gradient: "
        "zero on the slice).")


# -- storage-type ops on dense arrays ----------------------------------------------------------

_STYPES = ("default", "row_sparse", "csr")


def _cast_storage_check(p, x):
    least, most = {"row_sparse": (1, None), "csr": (2, 2)}.get(p.stype, (0, None))
    if x.ndim < least or (most is not None and x.ndim > most):
        raise MXNetError("cast_storage: stype %r needs %s dims, got shape %s"
                         % (p.stype, "2" if most else "at least %d" % least, x.shape))


register_op("cast_storage", lambda p, xp, x: x.copy(), gradient=lambda p, x, y, gy, need: [gy[0]],
            saves="", same_shape=(0,), check=_cast_storage_check,
            params=[Param("stype", choices=_STYPES)],
            doc="A copy of ``data`` in storage ``stype`` (mxlite keeps the values dense; the "
                "result reports the storage type).")


def _retain(p, xp, x, indices):
    rows = indices.astype(np.int64).ravel()
    if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= x.shape[0]):
        raise MXNetError("_sparse_retain: indices must be rows of data, in [0, %d); got rows "
                         "%d to %d" % (x.shape[0], int(rows.min()), int(rows.max())))
    out = xp.zeros_like(x)
    out[rows] = x[rows]
    return out


def _retain_grad(p, x, y, gy, need):
    return [nd._internal._sparse_retain(gy[0], x[1]), None]


register_op("_sparse_retain", _retain, inputs=("data", "indices"), check=ranks(data=1),
            same_shape=(0,),
            gradient=_retain_grad, saves="x", no_grad_inputs=(1,),
            doc="``mx.nd.sparse.retain``: the rows of ``data`` that ``indices`` lists, the "
                "other rows zero (a row_sparse array; the gradient keeps the same rows).")

_SUM = get_op("sum")


def _square_sum(p, xp, x):
    return _SUM.compute(p, xp, x * x)


def _square_sum_grad(p, x, y, gy, need):
    g = _SUM.gradient(p, [x[0]], y, gy, need)[0]
    return [g * x[0] * 2]


register_op("_square_sum", _square_sum, gradient=_square_sum_grad, saves="x",
            params=[_SUM.params[k] for k in ("axis", "keepdims", "exclude")],
            doc="``sum(data ** 2, axis, keepdims, exclude)`` (MXNet runs it on row_sparse data; "
                "dense here).")


def _getnnz(p, xp, x):
    if p.axis is None:
        return xp.asarray([xp.count_nonzero(x)], dtype=np.int64)
    if x.ndim != 2 or p.axis not in (0, 1):
        raise MXNetError("axis must be None, 0 or 1 for 2-D data; got axis=%s for shape %s"
                         % (p.axis, x.shape))
    return xp.count_nonzero(x, axis=p.axis).astype(np.int64)


register_op("_contrib_getnnz", _getnnz, infer_type=lambda p, dt: np.dtype(np.int64),
            params=[Param("axis", optional(parse_int), None, "None: all; 1: per row.")],
            doc="The number of non-zero entries (int64), in all or per row. NOTE: MXNet counts "
                "the stored entries of a csr array and rejects axis=0; mxlite counts non-zeros "
                "of dense data and takes axis=0 too.")


# -- histogram ---------------------------------------------------------------------------------

def _histogram(p, xp, x, bins=None):
    data = x.reshape(-1)
    if bins is not None:
        edges = bins.astype(x.dtype)
        # Bins are closed on the left, the last one on the right too (as NumPy's).
        idx = xp.searchsorted(edges, data, side="right") - 1
        idx = xp.where(data == edges[-1], len(edges) - 2, idx)
        n = len(edges) - 1
    else:
        if p.bin_cnt is None:
            raise MXNetError("give bin_cnt (with range) or a bins array")
        lo, hi = p.range if p.range is not None else (float(data.min()), float(data.max()))
        n = p.bin_cnt
        edges = xp.linspace(lo, hi, n + 1).astype(x.dtype)
        # NOTE: MXNet's bin index is floor((d - lo) * n / (hi - lo)) in the data's dtype,
        # with d == hi in the last bin.
        d = data.astype(x.dtype)
        idx = xp.floor((d - x.dtype.type(lo)) * x.dtype.type(n)
                       / (x.dtype.type(hi) - x.dtype.type(lo))).astype(np.int64)
        idx = xp.where(d == x.dtype.type(hi), n - 1, idx)
        idx = xp.where((d < lo) | (d > hi), -1, idx)
    ok = (idx >= 0) & (idx < n)
    counts = xp.bincount(idx[ok], minlength=n)[:n].astype(np.int64)
    return counts, edges


def _histogram_rule(p, x, bins=None):
    if bins is not None and (bins.ndim != 1 or bins.size < 2):
        raise MXNetError("bins expected a 1-D array of at least 2 edges, got shape %s"
                         % (bins.shape,))
    if bins is None and p.range is None and x.size == 0:
        raise MXNetError("data expected some values to take the range from (or give range), "
                         "got shape %s" % (x.shape,))


register_op("_histogram", _histogram, check=_histogram_rule,
            inputs=lambda p: ("data",) if p.bin_cnt is not None else ("data", "bins"),
            num_outputs=2,
            infer_type=lambda p, dt: [np.dtype(np.int64), dt[0]],
            params=[Param("bin_cnt", optional(parse_int), None, "Number of equal bins."),
                    Param("range", optional(parse_float_tuple), None,
                          "(min, max) of the bins; the data's if None.")],
            doc="Counts (int64) of ``data`` in ``bin_cnt`` equal bins over ``range``, or in the "
                "bins with the edges ``bins``; returns (counts, edges).")


# -- multi-tensor helpers of the optimizers ----------------------------------------------------

def _all_finite_of(xp, xs):
    ok = all(bool(xp.isfinite(x).all()) for x in xs)
    return xp.asarray([1.0 if ok else 0.0], dtype=np.float32)


_INIT = Param("init_output", parse_bool, True,
              "Ignored: MXNet leaves the output uninitialised when False; mxlite always "
              "starts from 1.")
register_op("all_finite", lambda p, xp, x: _all_finite_of(xp, [x]), params=[_INIT],
            infer_type=lambda p, dt: np.dtype(np.float32),
            doc="[1.] when every element of ``data`` is finite, [0.] otherwise (float32).")
def _arrays(p):
    return ["array%d" % i for i in range(p.num_arrays)]


register_op("multi_all_finite", lambda p, xp, *xs: _all_finite_of(xp, xs), inputs=_arrays,
            variadic="num_arrays", infer_type=lambda p, dt: np.dtype(np.float32),
            params=[Param("num_arrays", parse_int, 1, "The number of arrays."), _INIT],
            doc="[1.] when every element of every input is finite, [0.] otherwise (float32).")


def _multi_sum_sq(p, xp, *xs):
    # NOTE: MXNet accumulates each array's squares in float32 whatever its dtype.
    return xp.asarray([float(xp.sum(xp.square(x.astype(np.float32)), dtype=np.float32))
                       for x in xs], dtype=np.float32)


register_op("multi_sum_sq", _multi_sum_sq, inputs=_arrays, variadic="num_arrays",
            infer_type=lambda p, dt: np.dtype(np.float32),
            params=[Param("num_arrays", parse_int, 1, "The number of arrays.")],
            doc="The sum of squares of each input, as one float32 vector of length num_arrays.")


def _multi_lars(p, xp, lrs, wss, gss, wds):
    w = xp.sqrt(wss)
    g = xp.sqrt(gss) * lrs.dtype.type(p.rescale_grad)
    scaled = lrs * lrs.dtype.type(p.eta) * w / (g + wds * w + lrs.dtype.type(p.eps))
    return xp.where((wss > 0) & (gss > 0), scaled, lrs).astype(lrs.dtype)


register_op("multi_lars", _multi_lars, inputs=("lrs", "weights_sum_sq", "grads_sum_sq", "wds"),
            params=[Param("eta", parse_float, doc="The LARS coefficient."),
                    Param("eps", parse_float, doc="Added to the denominator."),
                    Param("rescale_grad", parse_float, 1.0, "Gradient rescaling.")],
            doc="LARS learning rates: ``lr * eta * |w| / (|g| * rescale_grad + wd * |w| + eps)`` "
                "where both norms are positive, ``lr`` elsewhere.")


def _reset_arrays(p, xp, *xs):
    for x in xs:
        x[...] = 0
    return ()


register_op("reset_arrays", _reset_arrays, inputs=_arrays, variadic="num_arrays",
            num_outputs=0, num_visible_outputs=0, mutate=(0,),
            infer_shape=lambda p, shapes: (shapes, []),
            params=[Param("num_arrays", parse_int, 1, "The number of arrays.")],
            doc="Set every input to zero in place; returns nothing. NOTE: only the first "
                "input is declared mutated (the registry takes a fixed index list), so "
                "autograd's version check sees the others' reset only through their data.")


# -- count sketch --------------------------------------------------------------------------------

def _sketch_index(name, x, h, s):
    if h.size != x.shape[-1] or s.size != x.shape[-1]:
        raise MXNetError("%s: h and s must hold in_dim=%d values, got shapes %s and %s"
                         % (name, x.shape[-1], h.shape, s.shape))
    return h.reshape(-1).astype(np.int64), s.reshape(-1)


def _count_sketch(p, xp, x, h, s):
    idx, sign = _sketch_index("count_sketch", x, h, s)
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= p.out_dim):
        raise MXNetError("h must hold indices in [0, out_dim=%d)" % p.out_dim)
    flat = x.reshape(-1, x.shape[-1])
    y = xp.zeros((flat.shape[0], p.out_dim), x.dtype)
    for j in range(flat.shape[1]):      # in_dim scatter-adds (columns may collide)
        y[:, int(idx[j])] += flat[:, j] * sign[j]
    return y.reshape(x.shape[:-1] + (p.out_dim,))


def _count_sketch_grad(p, x, y, gy, need):
    cols = nd.take(gy[0], x[1].reshape((-1,)), axis=-1)
    return [cols * x[2].reshape((-1,)), None, None]


register_op("_contrib_count_sketch", _count_sketch, inputs=("data", "h", "s"),
            check=ranks(data=(2, 2)),
            gradient=_count_sketch_grad, saves="x", no_grad_inputs=(1, 2),
            params=[Param("out_dim", parse_int, doc="The sketch length."),
                    Param("processing_batch_size", parse_int, 32, "Ignored (a GPU tiling size).")],
            doc="Count sketch: ``y[..., h[j]] += s[j] * data[..., j]``. NOTE: MXNet runs it on "
                "GPU only; mxlite on every context.")


__all__ = ["register_alias", "declaration", "histogram", "ALIASES", "OP_FIELDS"]
