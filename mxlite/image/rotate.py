"""Rotation of CHW/NCHW float32 images about their centre (``mx.image.imrotate``,
``random_rotate``), sampled bilinearly with ``BilinearSampler`` as MXNet does: points
that come from outside the image are 0."""
from numbers import Number

import numpy as np

from .. import nd

__all__ = ["imrotate", "random_rotate"]


def _zoom(h, w, rad, zoom_out):
    """Per image, the grid scale that keeps the whole rotated image (``zoom_out``) or
    shows no padding (zoom in)."""
    rho, corner = np.hypot(h, w), np.arctan(h / w)
    rad = np.abs(rad)
    max_x = np.maximum(np.abs(rho * np.cos(corner + rad)), np.abs(rho * np.cos(corner - rad)))
    max_y = np.maximum(np.abs(rho * np.sin(corner + rad)), np.abs(rho * np.sin(corner - rad)))
    if zoom_out:
        return np.maximum(max_x / w, max_y / h)
    return np.minimum(w / max_x, h / max_y)


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """``src`` (CHW, or NCHW with one angle per image or one for all) rotated by
    ``rotation_degrees`` counter-clockwise; ``zoom_in`` scales so that no padding shows,
    ``zoom_out`` so that the whole image stays in view.

    >>> mx.image.imrotate(mx.nd.ones((3, 8, 8)), 90).shape
    (3, 8, 8)
    """
    if zoom_in and zoom_out:
        raise ValueError("imrotate: zoom_in and zoom_out cannot both be True")
    if src.dtype != np.float32:
        raise TypeError("imrotate: only float32 images are supported, got %s" % src.dtype)
    single = src.ndim == 3
    if single:
        if not isinstance(rotation_degrees, Number):
            raise TypeError("imrotate: a single image needs a scalar angle, got %s"
                            % type(rotation_degrees).__name__)
        src = src.expand_dims(axis=0)
    elif src.ndim != 4:
        raise ValueError("imrotate: src must be CHW or NCHW, got %d dimensions" % src.ndim)
    n, _, h, w = src.shape
    if isinstance(rotation_degrees, Number):
        degrees = np.full(n, float(rotation_degrees))
    else:
        degrees = np.asarray(rotation_degrees.asnumpy() if isinstance(rotation_degrees, nd.NDArray)
                             else rotation_degrees, dtype=np.float64).reshape(-1)
    if len(degrees) != n:
        raise ValueError("imrotate: %d images but %d rotation angles" % (n, len(degrees)))
    rad = (np.pi * degrees / 180).astype(np.float32)[:, None, None]
    hs, ws = (h - 1) / 2.0, (w - 1) / 2.0
    ys = (np.arange(h, dtype=np.float32) - hs)[None, :, None]
    xs = (np.arange(w, dtype=np.float32) - ws)[None, None, :]
    cos, sin = np.cos(rad), np.sin(rad)
    # NOTE: normalise to [-1, 1] after rotating, so that the aspect ratio is kept.
    gx = (xs * cos - ys * sin) / ws
    gy = (xs * sin + ys * cos) / hs
    grid = np.stack([gx, gy], axis=1).astype(np.float32)
    if zoom_in or zoom_out:
        grid *= _zoom(float(h), float(w), rad[:, 0, 0], zoom_out).astype(np.float32)[:, None,
                                                                                   None, None]
    out = nd.BilinearSampler(src, nd.array(grid, ctx=src.context))
    return out[0] if single else out


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """:func:`imrotate` by angles drawn uniformly from ``angle_limits`` (degrees) with
    NumPy's global generator, one per image."""
    if src.ndim == 3:
        return imrotate(src, np.random.uniform(*angle_limits), zoom_in, zoom_out)
    return imrotate(src, nd.array(np.random.uniform(*angle_limits, size=src.shape[0])),
                    zoom_in, zoom_out)
