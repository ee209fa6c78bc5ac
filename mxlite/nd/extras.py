"""Functions of ``mxnet.ndarray`` that are not operators: the legacy ``imdecode`` and
the indexing helpers MXNet exposes."""
import numpy as np

from ..base import MXNetError, integer_types
from .ndarray import NDArray, array

__all__ = ["imdecode", "get_indexing_dispatch_code", "indexing_key_expand_implicit_axes",
           "get_oshape_of_gather_nd_op"]

_NDARRAY_UNSUPPORTED_INDEXING = -1
_NDARRAY_BASIC_INDEXING = 0
_NDARRAY_ADVANCED_INDEXING = 1
_NDARRAY_EMPTY_TUPLE_INDEXING = 2


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
