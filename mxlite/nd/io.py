"""``mx.nd.save`` / ``mx.nd.load``: MXNet's binary NDArray container.

The layout (all little-endian) is the one MXNet 1.x writes for ``.nd`` and
``.params`` files::

    file    := u64 0x112, u64 0, u64 n, record * n, u64 m, (u64 len, utf-8 bytes) * m
    record  := u32 magic (0xF993FAC9), i32 storage_type (0 = dense), u32 ndim, i64 dim * ndim,
               [if ndim > 0: i32 dev_type, i32 dev_id, i32 type_flag, raw C-order data]

``m`` is 0 when a list was saved and ``n`` when a dict was saved. Files written
here are byte-identical to MXNet's. Besides the current record version (v2)
the reader accepts v3 (NumPy shape semantics, 0xF993FACA), v1 (0xF993FAC8, no
storage type), the pre-v1 records whose magic is the ndim itself (with u32
dims), and row_sparse / csr records, which become dense arrays (mxlite stores
every array dense). Anything malformed raises :class:`MXNetError` naming the
source and the problem; nothing is read past the end of the data.
"""
import math
import os
import struct

import numpy as np

from ..base import MXNetError, FLAG_TO_DTYPE, DTYPE_TO_FLAG, check_nbytes
from ..context import Context, cpu, num_gpus
from .ndarray import NDArray, _wrap
from .. import util as _util

__all__ = ["save", "load", "load_frombuffer"]

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
_MAX_LEGACY_NDIM = 32          # a pre-v1 record starts with its ndim instead of a magic
_STYPE_NAMES = {0: "default", 1: "row_sparse", 2: "csr"}
_NUM_AUX = {0: 0, 1: 1, 2: 2}  # aux arrays per storage type: row_sparse idx; csr indptr, indices


# ----------------------------------------------------------------------------
# Writing

def _record(arr):
    """The bytes of one v2 dense record for NDArray ``arr``."""
    data = arr.asnumpy()
    if not data.flags["C_CONTIGUOUS"]:      # (ascontiguousarray makes 0-d arrays 1-d)
        data = np.ascontiguousarray(data)
    dt = data.dtype
    if dt not in DTYPE_TO_FLAG:
        raise MXNetError("save: cannot store dtype %s; MXNet files hold %s"
                         % (dt, ", ".join(str(d) for d in DTYPE_TO_FLAG)))
    shape = data.shape
    # Under NumPy shape semantics MXNet writes v3 records, where ndim 0 is a 0-d array
    # (with its value) rather than an empty one.
    v3 = _util.is_np_shape()
    parts = [struct.pack("<IiI", V3_MAGIC if v3 else V2_MAGIC, 0, len(shape)),
             struct.pack("<%dq" % len(shape), *shape)]
    if shape or v3:
        ctx = arr.context
        parts.append(struct.pack("<iii", ctx.device_typeid, ctx.device_id, DTYPE_TO_FLAG[dt]))
        parts.append(data.astype(dt.newbyteorder("<"), copy=False).tobytes())
    return b"".join(parts)


def _serialize_ndarray(arr):
    """One NDArray as MXNet's raw record bytes (what ``NDArray.__getstate__`` holds).

    Parameters
    ----------
    arr : NDArray

    Returns
    -------
    bytes
    """
    if not isinstance(arr, NDArray):
        raise TypeError("_serialize_ndarray: expected an NDArray, got %s" % type(arr).__name__)
    return _record(arr)


def _container(arrays, names):
    parts = [struct.pack("<QQQ", LIST_MAGIC, 0, len(arrays))]
    parts += [_record(a) for a in arrays]
    parts.append(struct.pack("<Q", len(names)))
    for n in names:
        b = n.encode("utf-8")
        parts.append(struct.pack("<Q", len(b)))
        parts.append(b)
    return b"".join(parts)


def _split(data):
    """``(arrays, names)`` from what the user passes to :func:`save`."""
    if isinstance(data, NDArray):
        return [data], []
    if isinstance(data, dict):
        names, arrays = list(data.keys()), list(data.values())
        bad = [k for k in names if not isinstance(k, str)]
        if bad:
            raise TypeError("save: dict keys must be str, got %r" % (bad[0],))
        bad = [(k, v) for k, v in data.items() if not isinstance(v, NDArray)]
        if bad:
            raise TypeError("save: value for key %r is a %s, expected an NDArray"
                            % (bad[0][0], type(bad[0][1]).__name__))
        return arrays, names
    if isinstance(data, (list, tuple)):
        for i, v in enumerate(data):
            if not isinstance(v, NDArray):
                raise TypeError("save: element %d is a %s, expected an NDArray"
                                % (i, type(v).__name__))
        return list(data), []
    raise ValueError("save: data needs to either be a NDArray, dict of str, NDArray pairs "
                     "or a list of NDArrays, got %s" % type(data).__name__)


def _save_tobuffer(data):
    """The bytes :func:`save` would write for ``data`` (NDArray, list or dict)."""
    arrays, names = _split(data)
    return _container(arrays, names)


def save(fname, data):
    """Save an NDArray, a list of NDArrays or a dict of str -> NDArray to a file.

    The file is in MXNet's binary format: real MXNet loads it with
    ``mx.nd.load``, and the bytes are those MXNet itself writes. A single
    NDArray is stored as a one-element list.

    Parameters
    ----------
    fname : str or os.PathLike
        The file name.
    data : NDArray, list of NDArray or dict of str to NDArray
        What to save; a dict keeps its names (in insertion order).

    Examples
    --------
    >>> mx.nd.save("x.nd", {"w": mx.nd.ones((2, 3))})
    >>> mx.nd.load("x.nd")["w"].shape
    (2, 3)
    """
    fname = _path(fname)
    buf = _save_tobuffer(data)
    with open(fname, "wb") as f:
        f.write(buf)


# ----------------------------------------------------------------------------
# Reading

class _Reader:
    """Bounds-checked little-endian reads from a byte buffer; errors name ``source``."""

    def __init__(self, buf, source):
        self.buf = memoryview(buf).cast("B")
        self.pos = 0
        self.source = source

    def error(self, what):
        return MXNetError("load: %s is not a valid MXNet NDArray file: %s" % (self.source, what))

    def remaining(self):
        return len(self.buf) - self.pos

    def take(self, n, what):
        if n < 0 or n > self.remaining():
            raise self.error("%s needs %d bytes at offset %d but only %d remain (truncated file)"
                             % (what, n, self.pos, self.remaining()))
        b = self.buf[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt, what):
        fmt = "<" + fmt
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))


def _read_shape(r, i, dim_fmt, ndim=None):
    """A shape: ``ndim`` (read as i32 unless given), then ``ndim`` dims of ``dim_fmt``."""
    if ndim is None:
        ndim, = r.unpack("i", "array %d: ndim" % i)
    if ndim < -1 or ndim > _MAX_LEGACY_NDIM:
        raise r.error("array %d has ndim %d (expected 0..%d)" % (i, ndim, _MAX_LEGACY_NDIM))
    if ndim <= 0:
        return ndim, ()
    dims = r.unpack("%d%s" % (ndim, dim_fmt), "array %d: shape" % i)
    return ndim, tuple(int(d) for d in dims)


def _read_dtype(r, i):
    flag, = r.unpack("i", "array %d: type flag" % i)
    dt = FLAG_TO_DTYPE.get(flag)
    if dt is None:
        raise r.error("array %d has unknown type flag %d (known: %s)"
                      % (i, flag, ", ".join("%d=%s" % kv for kv in sorted(FLAG_TO_DTYPE.items()))))
    return dt


def _read_values(r, i, shape, dt, what="data"):
    n = 1
    for d in shape:
        n *= d
    raw = r.take(n * dt.itemsize, "array %d: %s of shape %s (%s)" % (i, what, shape, dt))
    # NOTE: copy out of the file buffer so the array owns writable memory.
    return np.frombuffer(raw, dtype=dt.newbyteorder("<")).astype(dt).reshape(shape)


def _check_dims(r, i, shape):
    if any(d < 0 for d in shape):
        raise r.error("array %d has a negative dimension in shape %s" % (i, shape))


def _load_context(r, i):
    dev_type, dev_id = r.unpack("ii", "array %d: context" % i)
    # As MXNet: arrays saved from a GPU go back to that GPU when one is there,
    # everything else to cpu(0).
    if dev_type == 2 and 0 <= dev_id < num_gpus():
        return Context("gpu", dev_id)
    return cpu(0)


def _on(ctx, data):
    if ctx.device_typeid == 2:
        data = ctx.array_module().asarray(data)
    return _wrap(data, ctx)


def _empty(ctx):
    # NOTE: MXNet can store an uninitialised ("none") array; mxlite has no
    # such thing and loads it as an empty float32 array of shape (0,).
    return _on(ctx, np.zeros((0,), np.float32))


def _read_legacy(r, i, magic):
    """A v1 record (i64 dims) or a pre-v1 one (``magic`` is ndim, u32 dims)."""
    if magic == V1_MAGIC:
        ndim, shape = _read_shape(r, i, "q")
    else:
        ndim, shape = _read_shape(r, i, "I", ndim=magic)
    if ndim <= 0:
        return _empty(cpu(0))
    _check_dims(r, i, shape)
    ctx = _load_context(r, i)
    dt = _read_dtype(r, i)
    return _on(ctx, _read_values(r, i, shape, dt))


def _densify(r, i, stype, shape, values, aux):
    # NOTE: mxlite stores sparse arrays densely; a few bytes of file can declare a dense
    # shape of terabytes.
    check_nbytes("load", "array %d (sparse, dense shape %s)" % (i, shape),
                 math.prod(shape) * values.dtype.itemsize)
    dense = np.zeros(shape, values.dtype)
    if stype == 1:                      # row_sparse: aux[0] = row indices
        idx = aux[0].astype(np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= shape[0]):
            raise r.error("array %d: row_sparse row index out of range for shape %s" % (i, shape))
        dense[idx] = values.reshape((len(idx),) + shape[1:])
        return dense
    indptr, indices = aux[0].astype(np.int64), aux[1].astype(np.int64)
    if len(shape) != 2 or len(indptr) != shape[0] + 1 or indptr[-1] != len(indices) \
            or len(indices) != values.size:
        raise r.error("array %d: inconsistent csr record (shape %s, indptr %d, indices %d, "
                      "values %d)" % (i, shape, len(indptr), len(indices), values.size))
    if indices.size and (indices.min() < 0 or indices.max() >= shape[1]):
        raise r.error("array %d: csr column index out of range for shape %s" % (i, shape))
    rows = np.repeat(np.arange(shape[0]), np.diff(indptr))
    dense[rows, indices] = values.reshape(-1)
    return dense


def _check_semantics(r, i, magic):
    """MXNet loads a record only under the shape semantics it was saved in."""
    if magic == V3_MAGIC and not _util.is_np_shape():
        raise MXNetError("load: %s: array %d was saved in np shape semantics and must be "
                         "loaded in them: load it inside `with mx.np_shape(True):` (or under "
                         "npx.set_np())" % (r.source, i))
    if magic != V3_MAGIC and _util.is_np_shape():
        raise MXNetError("load: %s: array %d was not saved in np shape semantics but is being "
                         "loaded in them: load it inside `with mx.np_shape(False):`"
                         % (r.source, i))


def _read_record(r, i, strict=False):
    magic, = r.unpack("I", "array %d: magic" % i)
    if strict:
        _check_semantics(r, i, magic)
    if magic not in (V2_MAGIC, V3_MAGIC):
        if magic == V1_MAGIC or magic <= _MAX_LEGACY_NDIM:
            return _read_legacy(r, i, magic)
        raise r.error("array %d has bad magic 0x%08X (expected 0x%08X)" % (i, magic, V2_MAGIC))
    stype, = r.unpack("i", "array %d: storage type" % i)
    if stype not in _NUM_AUX:
        raise r.error("array %d has unsupported storage type %d (known: %s)"
                      % (i, stype, ", ".join("%d=%s" % kv for kv in _STYPE_NAMES.items())))
    nad = _NUM_AUX[stype]
    if nad:
        _read_shape(r, i, "q")      # storage shape: unreliable, see below
    ndim, shape = _read_shape(r, i, "q")
    # v3 (NumPy semantics): ndim -1 or a -1 dim means "unknown", ndim 0 a scalar.
    if ndim < 0 or (magic == V2_MAGIC and ndim == 0) or (magic == V3_MAGIC and -1 in shape):
        return _empty(cpu(0))
    _check_dims(r, i, shape)
    ctx = _load_context(r, i)
    dt = _read_dtype(r, i)
    aux_meta = []
    for k in range(nad):
        flag, = r.unpack("i", "array %d: aux type %d" % (i, k))
        if flag not in FLAG_TO_DTYPE:
            raise r.error("array %d has unknown aux type flag %d" % (i, flag))
        aux_meta.append((FLAG_TO_DTYPE[flag], _read_shape(r, i, "q")[1]))
    if not nad:
        return _on(ctx, _read_values(r, i, shape, dt))
    # NOTE: MXNet may write a stale storage shape (a csr made by tostype has
    # (0,)); like MXNet, take the stored values' shape from the aux shapes.
    nnz = aux_meta[-1][1][0] if aux_meta[-1][1] else 0
    vshape = (nnz,) if stype == 2 else (nnz,) + shape[1:]
    _check_dims(r, i, vshape)
    values = _read_values(r, i, vshape, dt)
    aux = [_read_values(r, i, s, adt, "aux data %d" % k) for k, (adt, s) in enumerate(aux_meta)]
    return _on(ctx, _densify(r, i, stype, shape, values, aux))


def _min_record_bytes():
    return 12       # magic + storage type + ndim: every record is at least this long


def _read_container(buf, source, strict=True):
    r = _Reader(buf, source)
    header, _reserved = r.unpack("QQ", "header")
    if header != LIST_MAGIC:
        raise r.error("bad header magic 0x%X (expected 0x%X)" % (header, LIST_MAGIC))
    n, = r.unpack("Q", "array count")
    if n * _min_record_bytes() > r.remaining():
        raise r.error("array count %d cannot fit in the %d bytes that follow" % (n, r.remaining()))
    arrays = [_read_record(r, i, strict) for i in range(n)]
    m, = r.unpack("Q", "name count")
    if m not in (0, n):
        raise r.error("%d names for %d arrays (expected 0 or %d)" % (m, n, n))
    names = []
    for i in range(m):
        length, = r.unpack("Q", "name %d length" % i)
        raw = r.take(length, "name %d" % i)
        try:
            names.append(bytes(raw).decode("utf-8"))
        except UnicodeDecodeError:
            raise r.error("name %d is not valid UTF-8" % i) from None
    if m:
        return dict(zip(names, arrays))
    return arrays


def _deserialize_ndarray(buf):
    """An NDArray from one raw record (the inverse of :func:`_serialize_ndarray`).

    Parameters
    ----------
    buf : bytes or bytearray

    Returns
    -------
    NDArray
    """
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError("_deserialize_ndarray: expected bytes, got %s" % type(buf).__name__)
    return _read_record(_Reader(buf, "serialized NDArray"), 0)


def load_frombuffer(buf):
    """Load what :func:`save` wrote, from bytes in memory.

    Parameters
    ----------
    buf : bytes, bytearray or str
        The content of a file written by ``mx.nd.save``.

    Returns
    -------
    list of NDArray or dict of str to NDArray
        A dict when names were stored, else a list.
    """
    if isinstance(buf, str):
        buf = buf.encode("latin-1")
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError("load_frombuffer: buf required to be a string or bytes, got %s"
                        % type(buf).__name__)
    return _read_container(buf, "buffer")


def load(fname):
    """Load arrays saved by ``mx.nd.save`` (mxlite's or MXNet's) from a file.

    Parameters
    ----------
    fname : str or os.PathLike
        The file name.

    Returns
    -------
    list of NDArray or dict of str to NDArray
        A dict when names were stored (a saved dict), else a list. Arrays saved
        from a GPU go back to that GPU when it exists; all others are on ``cpu(0)``.

    Examples
    --------
    >>> mx.nd.save("x.nd", [mx.nd.zeros((2,))])
    >>> mx.nd.load("x.nd")
    [
    [0. 0.]
    <NDArray 2 @cpu(0)>]
    """
    return _load_file(fname, strict=True)


def _load_either(fname):
    """:func:`load` that takes records of either shape semantics, as Gluon's
    ``load_parameters`` does in MXNet (it retries outside np semantics)."""
    return _load_file(fname, strict=False)


def _load_file(fname, strict):
    fname = _path(fname)
    try:
        with open(fname, "rb") as f:
            buf = f.read()
    except OSError as e:
        raise MXNetError("load: cannot read %r: %s" % (fname, e.strerror or e)) from None
    return _read_container(buf, repr(fname), strict)


def _path(fname):
    if isinstance(fname, os.PathLike):
        fname = os.fspath(fname)
    if not isinstance(fname, str):
        raise TypeError("fname required to be a string or path, got %s" % type(fname).__name__)
    return fname
