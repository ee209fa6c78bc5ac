"""OpenCV's ``resize`` on NumPy HWC images, for ``mx.image.imresize``.

Nearest (0) and bilinear (1) are the Gluon transforms' helper
(``gluon.data.vision.transforms._resize_hwc``); this module adds what MXNet's image API
uses by default and the gluon transforms do not have: bicubic (2), area (3) and
Lanczos (4), each as a separable filter (source indices and weights per output
position, clamped at the borders as OpenCV's BORDER_REPLICATE).

NOTE: for uint8 images OpenCV works in fixed point (weights rounded to 11 bits, one
rounded shift at the end); the separable filters here do the same, so bicubic and
Lanczos match MXNet exactly, as bilinear does (``mx.nd.image.resize``'s kernel).
"""
import math

import numpy as np

from ..gluon.data.vision.transforms import _cast_like as _saturate, _resize_hwc

__all__ = ["resize_hwc", "INTERP_NAMES"]

INTERP_NAMES = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area", 4: "lanczos4"}

_COEF_BITS = 11                   # OpenCV's INTER_RESIZE_COEF_BITS
_COEF_SCALE = 1 << _COEF_BITS


def _source_positions(n_in, n_out):
    """OpenCV's half-pixel source position of each output pixel: integer part and
    fraction (computed in float32, as OpenCV does)."""
    fx = ((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5).astype(np.float32)
    sx = np.floor(fx).astype(np.int64)
    return sx, fx - sx.astype(np.float32)


def _cubic_taps(n_in, n_out):
    """Indices (n_out, 4) and weights of OpenCV's bicubic (a = -0.75)."""
    sx, x = _source_positions(n_in, n_out)
    a = np.float32(-0.75)
    one = np.float32(1)
    c0 = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a
    c1 = ((a + 2) * x - (a + 3)) * x * x + 1
    c2 = ((a + 2) * (one - x) - (a + 3)) * (one - x) * (one - x) + 1
    c3 = one - c0 - c1 - c2
    idx = sx[:, None] + np.arange(-1, 3)
    return np.clip(idx, 0, n_in - 1), np.stack([c0, c1, c2, c3], axis=1)


def _lanczos_taps(n_in, n_out):
    """Indices (n_out, 8) and weights of OpenCV's Lanczos-4 (normalized to sum 1)."""
    sx, x = _source_positions(n_in, n_out)
    x64 = x.astype(np.float64)[:, None]
    y = -(x64 + 3 - np.arange(8)) * math.pi * 0.25
    with np.errstate(divide="ignore", invalid="ignore"):
        # sinc(t) * sinc(t / 4) up to a factor common to the 8 taps (normalized away):
        # OpenCV's table of (sin, cos) pairs is this alternating sine written out.
        c = ((-1.0) ** np.arange(8) * np.sin(y) / (y * y)).astype(np.float32)
    exact = x < np.finfo(np.float32).eps
    c[exact] = 0
    c[exact, 3] = 1
    c = c * (np.float32(1) / c.sum(axis=1, dtype=np.float32))[:, None]
    idx = sx[:, None] + np.arange(-3, 5)
    return np.clip(idx, 0, n_in - 1), c.astype(np.float32)


def _area_taps(n_in, n_out):
    """Indices and weights of OpenCV's INTER_AREA for a shrinking axis: each output
    pixel averages the source cells it covers, partial cells weighted by coverage."""
    scale = n_in / n_out
    rows = []
    for dx in range(n_out):
        fsx1 = dx * scale
        fsx2 = fsx1 + scale
        cell = min(scale, n_in - fsx1)
        sx2 = min(math.floor(fsx2), n_in - 1)
        sx1 = min(math.ceil(fsx1), sx2)
        taps = []
        if sx1 - fsx1 > 1e-3:
            taps.append((sx1 - 1, (sx1 - fsx1) / cell))
        taps.extend((sx, 1.0 / cell) for sx in range(sx1, sx2))
        if fsx2 - sx2 > 1e-3:
            taps.append((sx2, min(min(fsx2 - sx2, 1.0), cell) / cell))
        rows.append(taps)
    k = max(len(t) for t in rows)
    idx = np.zeros((n_out, k), np.int64)
    w = np.zeros((n_out, k), np.float32)
    for dx, taps in enumerate(rows):
        for j, (sx, wt) in enumerate(taps):
            idx[dx, j], w[dx, j] = sx, wt
    return idx, w


def _area_up_taps(n_in, n_out):
    """OpenCV's INTER_AREA when the image grows along some axis: a bilinear filter
    whose fraction is the overlap of the output cell with the next source cell."""
    scale = n_in / n_out
    inv = n_out / n_in
    dx = np.arange(n_out)
    sx = np.floor(dx * scale).astype(np.int64)
    fx = ((dx + 1) - (sx + 1) * inv).astype(np.float32)
    fx = np.where(fx <= 0, np.float32(0), fx - np.floor(fx)).astype(np.float32)
    high = sx >= n_in - 1
    fx[high], sx[high] = 0, n_in - 1
    idx = np.stack([sx, np.minimum(sx + 1, n_in - 1)], axis=1)
    return idx, np.stack([np.float32(1) - fx, fx], axis=1)


def _separable(img, taps_h, taps_w, fixed_point):
    """Filter along W, then along H (OpenCV's order), with (index, weight) taps."""
    (hi, hw), (wi, ww) = taps_h, taps_w
    if fixed_point:
        hw = np.rint(hw * _COEF_SCALE).astype(np.int64)
        ww = np.rint(ww * _COEF_SCALE).astype(np.int64)
        x = img.astype(np.int64)
    else:
        x = img.astype(np.float32 if img.dtype != np.float64 else np.float64)
        hw, ww = hw.astype(x.dtype), ww.astype(x.dtype)
    t = sum(x[:, wi[:, k]] * ww[:, k, None] for k in range(wi.shape[1]))
    y = sum(t[hi[:, k]] * hw[:, k, None, None] for k in range(hi.shape[1]))
    if fixed_point:
        # NOTE: arithmetic shift with a half added: OpenCV's FixedPtCast (floor for
        # negatives, which the clip below then saturates).
        y = (y + (1 << (2 * _COEF_BITS - 1))) >> (2 * _COEF_BITS)
    return y


def _area(img, w, h):
    sh, sw = img.shape[:2]
    if sw >= w and sh >= h:
        if sw % w == 0 and sh % h == 0:
            return _area_fast(img, sw // w, sh // h)
        taps = (_area_taps(sh, h), _area_taps(sw, w))
        y = _separable(img, taps[0], taps[1], fixed_point=False)
        return np.rint(y) if np.issubdtype(img.dtype, np.integer) else y
    fixed = img.dtype == np.uint8
    return _separable(img, _area_up_taps(sh, h), _area_up_taps(sw, w), fixed_point=fixed)


def _area_fast(img, kx, ky):
    """Integer shrink factors: the mean of each ky x kx block."""
    h, w = img.shape[0] // ky, img.shape[1] // kx
    blocks = img.reshape((h, ky, w, kx) + img.shape[2:])
    if np.issubdtype(img.dtype, np.integer):
        s = blocks.astype(np.int64).sum(axis=(1, 3))
        return (s + (kx * ky) // 2) // (kx * ky)
    return blocks.mean(axis=(1, 3), dtype=np.float32 if img.dtype != np.float64 else None)


def resize_hwc(img, w, h, interp):
    """Resize an HW or HWC NumPy image to width ``w`` and height ``h``, as OpenCV.

    ``interp``: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos-4.
    """
    if w <= 0 or h <= 0:
        raise ValueError("imresize: the output size must be positive, got w=%d, h=%d" % (w, h))
    if img.ndim == 2:
        return resize_hwc(img[:, :, None], w, h, interp)[:, :, 0]
    if (img.shape[1], img.shape[0]) == (w, h):
        return img.copy()
    if interp in (0, 1):
        return _resize_hwc(img, w, h, interp)
    if interp == 3:
        return _saturate(_area(img, w, h), img.dtype)
    taps = _cubic_taps if interp == 2 else _lanczos_taps
    y = _separable(img, taps(img.shape[0], h), taps(img.shape[1], w),
                   fixed_point=img.dtype == np.uint8)
    if np.issubdtype(img.dtype, np.integer) and img.dtype != np.uint8:
        y = np.rint(y)
    return _saturate(y, img.dtype)
