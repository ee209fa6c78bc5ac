"""Functions of ``mxnet.ndarray`` that are not operators: ``CachedOp``, DLPack
exchange, the legacy ``imdecode`` and the indexing helpers MXNet exposes."""
import numpy as np

from ..base import MXNetError, integer_types
from .ndarray import NDArray, array, _wrap

__all__ = ["CachedOp", "to_dlpack_for_read", "to_dlpack_for_write", "from_dlpack", "imdecode",
           "get_indexing_dispatch_code", "indexing_key_expand_implicit_axes",
           "get_oshape_of_gather_nd_op"]

_NDARRAY_UNSUPPORTED_INDEXING = -1
_NDARRAY_BASIC_INDEXING = 0
_NDARRAY_ADVANCED_INDEXING = 1
_NDARRAY_EMPTY_TUPLE_INDEXING = 2


class CachedOp:
    """A Symbol run as one function: ``op(*inputs)`` feeds the inputs in the order of
    ``sym.list_inputs()`` and returns the output (a list for several), recorded by
    autograd like any op.

    >>> x = mx.sym.var('x')
    >>> op = mx.nd.CachedOp(2 * x + 1)
    >>> op(mx.nd.array([1, 2]))
    <BLANKLINE>
    [3. 5.]
    <NDArray 2 @cpu(0)>
    """

    def __init__(self, sym, flags=()):
        self._symbol = sym
        self._flags = dict(flags)
        self._inputs = sym.list_inputs()
        self._nodes = sym._nodes()

    def __call__(self, *args, out=None, default_ctx=None):
        from ..symbol.executor import run_graph
        if len(args) != len(self._inputs):
            raise MXNetError("CachedOp: got %d inputs, the symbol takes %d (%s)"
                             % (len(args), len(self._inputs), self._inputs))
        for name, a in zip(self._inputs, args):
            if not isinstance(a, NDArray):
                raise TypeError("CachedOp: input %r must be an NDArray, got %s"
                                % (name, type(a).__name__))
        outs = run_graph(self._symbol, self._nodes, dict(zip(self._inputs, args)))
        if out is not None:
            targets = out if isinstance(out, (list, tuple)) else [out]
            for t, y in zip(targets, outs):
                y.copyto(t)
            return out
        return outs[0] if len(outs) == 1 else outs


class _DLPack:
    """A capsule with the ``__dlpack__`` protocol NumPy's ``from_dlpack`` asks for."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)           # kDLCPU, device 0


def to_dlpack_for_read(data):
    """A DLPack capsule sharing ``data``'s memory (waits for pending writes first)."""
    data.wait_to_read()
    return np.asarray(data._data).__dlpack__()


def to_dlpack_for_write(data):
    """A DLPack capsule sharing ``data``'s memory, for a consumer that writes into it
    (a versioned capsule, which says that the memory is writable)."""
    data.wait_to_read()
    host = data._data
    if not isinstance(host, np.ndarray):
        raise MXNetError("to_dlpack_for_write: only cpu arrays can be shared, got %s"
                         % data.context)
    return host.__dlpack__(max_version=(1, 0))


def from_dlpack(dlpack):
    """An NDArray sharing the memory of a DLPack capsule (or of an object with
    ``__dlpack__``, such as a torch or NumPy array). A capsule of the first DLPack
    version does not say whether its memory may be written: the array is read-only."""
    from ..context import cpu
    obj = dlpack if hasattr(dlpack, "__dlpack__") else _DLPack(dlpack)
    return _wrap(np.from_dlpack(obj), cpu())


def imdecode(str_img, clip_rect=(0, 0, 0, 0), out=None, index=0, channels=3, mean=None):
    """Deprecated (use ``mx.image.imdecode``): decode image bytes into a float32
    ``(channels, h, w)`` array in OpenCV's BGR order, cropped to ``clip_rect``
    ``(x0, y0, x1, y1)`` (all zeros: the whole image) minus ``mean`` (channels, h, w);
    with ``out`` (3-D, or 4-D and ``index``) the result is written there."""
    from ..recordio import _decode_image
    img = _decode_image(bytes(str_img), 0 if channels == 1 else -1)
    img = img[:, :, None] if img.ndim == 2 else img
    x0, y0, x1, y1 = (int(v) for v in clip_rect)
    if y1 - y0 == 0:
        x0, y0, x1, y1 = 0, 0, img.shape[1], img.shape[0]
    if x1 > img.shape[1] or y1 > img.shape[0]:
        raise MXNetError("imdecode: clip_rect %s is outside the %dx%d image"
                         % (tuple(clip_rect), img.shape[1], img.shape[0]))
    if channels > img.shape[2]:
        raise MXNetError("imdecode: channels=%d but the image has %d" % (channels, img.shape[2]))
    chw = img[y0:y1, x0:x1, :channels].transpose(2, 0, 1)
    dtype = np.float32 if mean is None else mean.dtype
    res = chw.astype(dtype)
    if mean is not None:
        if mean.shape != res.shape:
            raise MXNetError("imdecode: mean has shape %s, expected %s" % (mean.shape, res.shape))
        res = res - mean.asnumpy()
    if out is None:
        return array(res, dtype=dtype)
    target = out if out.ndim == 3 else out[index]
    if target.shape != res.shape:
        raise MXNetError("imdecode: out has room for %s, the decoded image is %s"
                         % (target.shape, res.shape))
    target[:] = res
    return out


def get_indexing_dispatch_code(key):
    """0 for basic indexing (ints, slices, None), 1 for advanced (arrays, lists),
    2 for an empty tuple inside ``key`` (a tuple)."""
    if not isinstance(key, tuple):
        raise TypeError("get_indexing_dispatch_code: key must be a tuple, got %s"
                        % type(key).__name__)
    for idx in key:
        if isinstance(idx, (NDArray, np.ndarray, list, tuple, range)):
            if isinstance(idx, tuple) and len(idx) == 0:
                return _NDARRAY_EMPTY_TUPLE_INDEXING
            return _NDARRAY_ADVANCED_INDEXING
        if not (isinstance(idx, (slice,) + integer_types) or idx is None):
            raise ValueError("NDArray does not support slicing with key {} of type {}."
                             .format(idx, type(idx)))
    return _NDARRAY_BASIC_INDEXING


def indexing_key_expand_implicit_axes(key, shape):
    """``(key with every implicit axis made an explicit slice(None), -1)``: an
    ``Ellipsis`` (or the missing trailing axes) becomes as many ``slice(None)`` as the
    dimensions it stands for. Boolean arrays need NumPy semantics (``mx.np``)."""
    key = key if isinstance(key, tuple) else (key,)
    ell_idx, num_none, rest = None, 0, []
    for i, idx in enumerate(key):
        if idx is Ellipsis:
            if ell_idx is not None:
                raise IndexError("Cannot use more than one ellipsis (`...`) for indexing")
            ell_idx = i
            continue
        if idx is None:
            num_none += 1
        if isinstance(idx, bool) or (isinstance(idx, (NDArray, np.ndarray))
                                     and idx.dtype == np.bool_):
            raise ValueError("Cannot perform boolean indexing in legacy mode. Please activate "
                             "numpy semantics by calling `npx.set_np()` in the global scope "
                             "before calling this function.")
        if isinstance(idx, (NDArray, np.ndarray)) and idx.ndim == 0:
            idx = int(idx.item() if isinstance(idx, np.ndarray) else idx.asscalar())
        rest.append(idx)
    if ell_idx is None:
        ell_idx = len(rest)
    fill = (slice(None),) * (len(shape) + num_none - len(rest))
    return tuple(rest[:ell_idx]) + fill + tuple(rest[ell_idx:]), -1


def get_oshape_of_gather_nd_op(dshape, ishape):
    """The output shape of ``gather_nd`` for data of ``dshape`` and indices of
    ``ishape``: ``ishape[1:] + dshape[ishape[0]:]``."""
    if not (len(dshape) and len(ishape)):
        raise ValueError("get_oshape_of_gather_nd_op: shapes must not be empty, got %s and %s"
                         % (dshape, ishape))
    return tuple(ishape[1:]) + tuple(dshape[ishape[0]:])
