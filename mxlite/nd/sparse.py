"""``mx.nd.sparse``: MXNet's sparse array API (``CSRNDArray``, ``RowSparseNDArray``,
``csr_matrix``, ``row_sparse_array``, ``zeros``, ``retain`` ...) on dense storage.

mxlite stores every array dense. A sparse array here is an NDArray that holds all of
its values and reports its storage type; its ``data``/``indices``/``indptr`` are
worked out from the values (the non-zero rows of a row-sparse array, the non-zero
elements of a CSR matrix). Values, shapes and dtypes are MXNet's; memory use is
not. The storage type of an op's result follows MXNet's rules
(:mod:`mxlite.operator.storage`), and the ops MXNet lists in ``mx.nd.sparse``
(``dot``, ``abs``, ``sgd_update`` ...) are here as in ``mx.nd``.
"""
import numpy as np

from ..base import MXNetError, np_dtype

_py_slice = slice   # (the module's ``slice`` becomes the op, as in MXNet's mx.nd.sparse)
from ..context import current_context
from .ndarray import NDArray, _wrap

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "csr_matrix",
           "row_sparse_array", "zeros", "empty", "array", "retain", "add", "subtract",
           "multiply", "divide", "cast_storage"]


class BaseSparseNDArray(NDArray):
    """An NDArray that reports a sparse storage type (its values are stored dense)."""
    __slots__ = ()
    _STYPE = None
    _sparse = True

    @property
    def stype(self):
        return self._STYPE

    def __repr__(self):
        return "\n<%s %s @%s>" % (type(self).__name__, "x".join(str(d) for d in self.shape),
                                  self._ctx)

    __str__ = __repr__

    # As MXNet's: + - * of two arrays of one shape run the elemwise ops, whose
    # storage rules keep a sparse type (csr + csr is csr); / is NDArray's.
    def __add__(self, other):
        return add(self, other)

    def __sub__(self, other):
        return subtract(self, other)

    def __mul__(self, other):
        return multiply(self, other)

    def tostype(self, stype):
        """This array in storage ``stype`` (a copy; ``'default'`` gives a dense NDArray)."""
        return cast_storage(self, stype)

    def copy(self):
        return _as_stype(self._data.copy(), self._ctx, self._STYPE)

    def astype(self, dtype, copy=True):
        if not copy and self._data.dtype == np_dtype(dtype, "astype"):
            return self
        return _as_stype(self._data.astype(np_dtype(dtype, "astype")), self._ctx, self._STYPE)

    def check_format(self, full_check=True):
        """Dense storage is always a valid layout: nothing to check."""

    def _nonzero_rows(self):
        flat = self._data.reshape(self.shape[0], -1) if self.ndim else self._data.reshape(1, -1)
        xp = self._ctx.xp or self._ctx.array_module()
        return xp.nonzero(xp.any(flat != 0, axis=1))[0].astype(np.int64)


class RowSparseNDArray(BaseSparseNDArray):
    """A row-sparse array: ``data`` holds the rows listed in ``indices``; the other rows
    are zero."""
    __slots__ = ()
    _STYPE = "row_sparse"

    @property
    def indices(self):
        """The (sorted, int64) indices of the rows that hold non-zero values."""
        return _wrap(self._nonzero_rows(), self._ctx)

    @property
    def data(self):
        """The rows listed by ``indices``: shape ``(len(indices),) + shape[1:]``."""
        return _wrap(self._data[self._nonzero_rows()], self._ctx)

    def retain(self, indices):
        """Only the rows in ``indices`` (an NDArray of row ids) kept (the op of
        ``mx.nd.sparse.retain``)."""
        from . import _internal
        return _internal._sparse_retain(self, indices)


class CSRNDArray(BaseSparseNDArray):
    """A compressed-sparse-row matrix: row ``i`` holds ``data[indptr[i]:indptr[i+1]]``
    at columns ``indices[indptr[i]:indptr[i+1]]``."""
    __slots__ = ()
    _STYPE = "csr"

    def _coo(self):
        xp = self._ctx.xp or self._ctx.array_module()
        return xp.nonzero(self._data)

    @property
    def indices(self):
        """The column index of each stored value, row by row (int64)."""
        return _wrap(self._coo()[1].astype(np.int64), self._ctx)

    @property
    def indptr(self):
        """Where each row starts in ``data``/``indices`` (length rows + 1, int64)."""
        xp = self._ctx.xp or self._ctx.array_module()
        counts = xp.count_nonzero(self._data, axis=1)
        return _wrap(xp.concatenate([xp.zeros(1, np.int64),
                                     xp.cumsum(counts).astype(np.int64)]), self._ctx)

    @property
    def data(self):
        """The non-zero values, row by row."""
        return _wrap(self._data[self._coo()], self._ctx)

    def __getitem__(self, key):
        """Rows, as MXNet's CSRNDArray gives them: ``c[i]`` is row i as a 1-row CSR
        matrix, ``c[a:b]`` rows a to b (a CSR copy), ``c[:]`` the matrix itself."""
        if isinstance(key, (int, np.integer)) and not isinstance(key, (bool, np.bool_)):
            rows = self.shape[0]
            if not -rows <= key < rows:
                raise IndexError("CSRNDArray: row %d is out of range for %d rows" % (key, rows))
            key = _py_slice(key % rows, key % rows + 1)
        if not isinstance(key, _py_slice) or key.step is not None:
            raise ValueError("CSRNDArray supports indexing by an integer or a continuous "
                             "slice of rows only, got %r" % (key,))
        if key.start is None and key.stop is None:
            return self
        start, stop, _ = key.indices(self.shape[0])
        from . import _internal
        return _internal.slice(self, begin=(start,), end=(max(start, stop),))

    def asscipy(self):
        """This matrix as ``scipy.sparse.csr_matrix`` (needs SciPy)."""
        import scipy.sparse as sps
        return sps.csr_matrix(self.asnumpy())


_CLASSES = {"row_sparse": RowSparseNDArray, "csr": CSRNDArray}


def _as_stype(data, ctx, stype):
    """Backend array ``data`` wrapped as an array of storage ``stype`` (no copy)."""
    if stype == "default":
        return _wrap(data, ctx)
    cls = _CLASSES.get(stype)
    if cls is None:
        raise ValueError("unknown storage type %r; expected 'default', 'row_sparse' or 'csr'"
                         % (stype,))
    if stype == "csr" and data.ndim != 2:
        raise MXNetError("stype 'csr' (compressed sparse rows) needs a 2-D array, got shape %s"
                         % (data.shape,))
    if stype == "row_sparse" and data.ndim == 0:
        raise MXNetError("stype 'row_sparse' needs an array with at least one dimension")
    a = object.__new__(cls)
    a._data, a._ctx, a._entry, a._version, a._grad = data, ctx, None, None, None
    return a


def cast_storage(data, stype):
    """A copy of NDArray ``data`` in storage ``stype`` (``'default'``, ``'row_sparse'``
    or ``'csr'``)."""
    return _as_stype(data._data.copy(), data._ctx, stype)


def _ctx_dtype(ctx, dtype, default):
    return ctx or current_context(), np_dtype(dtype if dtype is not None else default)


def _on(np_values, ctx):
    if ctx.device_typeid == 2:
        np_values = ctx.array_module().asarray(np_values)
    return np_values


def zeros(stype, shape, ctx=None, dtype=None, **kwargs):
    """An all-zero array of storage ``stype`` (``'default'`` gives a dense one)."""
    ctx, dt = _ctx_dtype(ctx, dtype, np.float32)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    out = _as_stype(_on(np.zeros(shape, dt), ctx), ctx, stype)
    target = kwargs.pop("out", None)
    if kwargs:
        raise TypeError("zeros: unexpected arguments %s" % sorted(kwargs))
    if target is not None:
        target[:] = out
        return target
    return out


def empty(stype, shape, ctx=None, dtype=None):
    """A new array of storage ``stype`` (zero-filled)."""
    return zeros(stype, shape, ctx=ctx, dtype=dtype)


def _values(source):
    if isinstance(source, NDArray):
        return source.asnumpy()
    if hasattr(source, "toarray") and hasattr(source, "tocsr"):    # a SciPy sparse matrix
        return source.toarray()
    return np.asarray(source)


def _check_shape(shape, got, where):
    if shape is not None and tuple(shape) != tuple(got):
        raise ValueError("%s: shape %s does not match the data's shape %s"
                         % (where, tuple(shape), tuple(got)))


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A CSRNDArray from ``(data, indices, indptr)``, ``(data, (row, col))`` (COO), a
    SciPy sparse matrix, a dense array, another CSRNDArray, or a shape ``(M, N)`` for an
    all-zero matrix."""
    if isinstance(arg1, tuple) and len(arg1) == 2 and all(isinstance(d, (int, np.integer))
                                                          for d in arg1):
        return zeros("csr", arg1, ctx=ctx, dtype=dtype)
    ctx = ctx or (arg1.context if isinstance(arg1, NDArray) else current_context())
    if isinstance(arg1, tuple) and len(arg1) == 3:
        values, indices, indptr = (np.asarray(_values(a)) for a in arg1)
        indices, indptr = indices.astype(np.int64), indptr.astype(np.int64)
        if shape is None:
            shape = (len(indptr) - 1, int(indices.max()) + 1 if indices.size else 0)
        if len(indptr) != shape[0] + 1 or (indptr.size and (indptr[0] != 0 or
                                                            indptr[-1] != len(values))):
            raise ValueError("csr_matrix: indptr %s does not describe %d rows of %d values"
                             % (indptr.tolist(), shape[0], len(values)))
        dense = np.zeros(shape, values.dtype if dtype is None else np_dtype(dtype))
        rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
        dense[rows, indices] = values
    elif isinstance(arg1, tuple) and len(arg1) == 2:
        values, (row, col) = _values(arg1[0]), arg1[1]
        row, col = _values(row).astype(np.int64), _values(col).astype(np.int64)
        if shape is None:
            shape = (int(row.max()) + 1, int(col.max()) + 1)
        dense = np.zeros(shape, values.dtype if dtype is None else np_dtype(dtype))
        np.add.at(dense, (row, col), values)
    else:
        dense = _values(arg1)
        _check_shape(shape, dense.shape, "csr_matrix")
    return _finish(dense, arg1, dtype, ctx, "csr")


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None):
    """A RowSparseNDArray from ``(data, indices)`` (the rows and their row ids), a dense
    array, another RowSparseNDArray, or a shape for an all-zero array."""
    if isinstance(arg1, tuple) and all(isinstance(d, (int, np.integer)) for d in arg1):
        return zeros("row_sparse", arg1, ctx=ctx, dtype=dtype)
    ctx = ctx or (arg1.context if isinstance(arg1, NDArray) else current_context())
    if isinstance(arg1, tuple) and len(arg1) == 2:
        values, rows = _values(arg1[0]), _values(arg1[1]).astype(np.int64)
        if shape is None:
            shape = (int(rows.max()) + 1 if rows.size else 0,) + values.shape[1:]
        if values.shape[0] != rows.shape[0] or tuple(values.shape[1:]) != tuple(shape[1:]):
            raise ValueError("row_sparse_array: data of shape %s does not fit %d row ids of "
                             "an array of shape %s" % (values.shape, rows.shape[0], shape))
        dense = np.zeros(shape, values.dtype if dtype is None else np_dtype(dtype))
        dense[rows] = values
    else:
        dense = _values(arg1)
        _check_shape(shape, dense.shape, "row_sparse_array")
    return _finish(dense, arg1, dtype, ctx, "row_sparse")


def _finish(dense, source, dtype, ctx, stype):
    """NumPy values ``dense`` as an array of ``stype`` on ``ctx``: of ``dtype`` if given,
    else the source NDArray's dtype, else float32 for float64 values (MXNet's default)."""
    dt = np_dtype(dtype) if dtype is not None else (
        dense.dtype if isinstance(source, NDArray) or dense.dtype != np.float64 else np.float32)
    return _as_stype(_on(np.array(dense, dtype=dt), ctx), ctx, stype)


def array(source_array, ctx=None, dtype=None):
    """A sparse array from a sparse array or a SciPy sparse matrix (CSR)."""
    if isinstance(source_array, BaseSparseNDArray):
        out = _as_stype(source_array._data.copy(), ctx or source_array.context,
                        source_array.stype)
        return out if dtype is None else out.astype(dtype)
    if hasattr(source_array, "tocsr"):
        return csr_matrix(source_array, ctx=ctx, dtype=dtype)
    raise ValueError("sparse.array: expected a sparse NDArray or a SciPy sparse matrix, got %s"
                     % type(source_array).__name__)


# The ops MXNet also lists in ``mx.nd.sparse`` (and ``mx.sym.sparse``): the same
# functions as ``mx.nd.<name>``, added as the ops register (``retain`` is the op
# ``_sparse_retain``; ``cast_storage`` is the function above here, the op in
# ``mx.sym.sparse``).
OP_NAMES = (
    "ElementWiseSum", "Embedding", "FullyConnected", "LinearRegressionOutput",
    "LogisticRegressionOutput", "MAERegressionOutput", "_contrib_round_ste",
    "_contrib_sign_ste", "abs", "adagrad_update", "adam_update", "add_n", "arccos",
    "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "broadcast_add", "broadcast_div",
    "broadcast_minus", "broadcast_mul", "broadcast_plus", "broadcast_sub", "cbrt", "ceil",
    "clip", "concat", "cos", "cosh", "degrees", "dot", "elemwise_add", "elemwise_div",
    "elemwise_mul", "elemwise_sub", "exp", "expm1", "fix", "floor", "ftrl_update", "gamma",
    "gammaln", "log", "log10", "log1p", "log2", "make_loss", "mean", "negative", "norm",
    "radians", "relu", "rint", "round", "rsqrt", "sgd_mom_update", "sgd_update", "sigmoid",
    "sign", "sin", "sinh", "slice", "sqrt", "square", "stop_gradient", "sum", "tan",
    "tanh", "trunc", "where", "zeros_like")
_OP_NAMES = frozenset(OP_NAMES)


def listed_as(fname):
    """The name op function ``fname`` has in the sparse namespaces, or None."""
    if fname.startswith("_sparse_"):
        return fname[len("_sparse_"):]
    return fname if fname in _OP_NAMES or fname == "cast_storage" else None


def _elementwise(name, same_shape):
    def fn(lhs, rhs):
        from .. import nd
        if isinstance(lhs, NDArray) and isinstance(rhs, NDArray) and lhs.shape == rhs.shape:
            return getattr(nd, same_shape)(lhs, rhs)
        return getattr(nd, name)(lhs, rhs)
    fn.__name__ = name
    fn.__doc__ = ("``lhs %s rhs``: ``%s`` for arrays of one shape (a sparse result where "
                  "its storage rule gives one), else with broadcasting or a scalar."
                  % (name, same_shape))
    return fn


add, subtract, multiply, divide = (_elementwise(n, "elemwise_" + e) for n, e in (
    ("add", "add"), ("subtract", "sub"), ("multiply", "mul"), ("divide", "div")))
