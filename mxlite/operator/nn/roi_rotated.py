"""``RROIAlign``: ROIAlign over rotated boxes.

MXNet has no backward for it (its backward aborts); mxlite raises on backward.
"""
import math

import numpy as np

from ...base import MXNetError, parse_shape, parse_int, parse_float
from ..registry import register_op, Param, ranks
from ..util import host
from .detection import _batch_index, _pair


_RROI = "RROIAlign"


def _rroi_points(p, xp, roi, h, w, dt):
    """Flat corner indices (4, PH, gh, PW, gw) and weights of one rotated roi."""
    ph_n, pw_n = p.pooled_size
    scale = dt.type(np.float32(p.spatial_scale))
    cw, ch = roi[1] * scale, roi[2] * scale
    rw = max(roi[3] * scale, dt.type(1))
    rh = max(roi[4] * scale, dt.type(1))
    theta = dt.type(float(roi[5]) * math.pi / 180.0)
    start_h, start_w = dt.type(-float(rh) / 2.0), dt.type(-float(rw) / 2.0)
    bin_h, bin_w = rh / dt.type(ph_n), rw / dt.type(pw_n)
    sr = p.sampling_ratio
    gh = sr if sr > 0 else int(math.ceil(rh / dt.type(ph_n)))
    gw = sr if sr > 0 else int(math.ceil(rw / dt.type(pw_n)))
    yy = (start_h + np.arange(ph_n).astype(dt)[:, None] * bin_h) \
        + (np.arange(gh) + np.float32(0.5)).astype(dt)[None, :] * bin_h / dt.type(gh)
    xx = (start_w + np.arange(pw_n).astype(dt)[:, None] * bin_w) \
        + (np.arange(gw) + np.float32(0.5)).astype(dt)[None, :] * bin_w / dt.type(gw)
    yy, xx = yy[:, :, None, None], xx[None, None, :, :]
    cos, sin = np.cos(theta), np.sin(theta)
    x = xx * cos + yy * sin + cw
    y = yy * cos - xx * sin + ch
    empty = (y < -1.0) | (y > h) | (x < -1.0) | (x > w)
    y, x = np.maximum(y, dt.type(0)), np.maximum(x, dt.type(0))
    y0, x0 = y.astype(np.int64), x.astype(np.int64)
    ey, ex = y0 >= h - 1, x0 >= w - 1
    y0, x0 = np.where(ey, h - 1, y0), np.where(ex, w - 1, x0)
    y = np.where(ey, y0.astype(dt), y)
    x = np.where(ex, x0.astype(dt), x)
    y1, x1 = np.where(ey, y0, y0 + 1), np.where(ex, x0, x0 + 1)
    ly, lx = y - y0.astype(dt), x - x0.astype(dt)
    one = dt.type(1)
    hy, hx = one - ly, one - lx
    keep = (~empty).astype(dt)
    pos = np.stack([y0 * w + x0, y0 * w + x1, y1 * w + x0, y1 * w + x1])
    wts = np.stack([hy * hx, hy * lx, ly * hx, ly * lx]) * keep
    pos = np.where(empty, 0, pos)
    return xp.asarray(pos), xp.asarray(wts), gh * gw


def _rroi_align(p, xp, data, rois):
    if rois.ndim != 2 or rois.shape[1] != 6:
        raise MXNetError("%s: rois must be 2-D (num_rois, 6) [batch_index, x, y, w, h, angle], "
                         "got shape %s" % (_RROI, rois.shape))
    _pair(p.pooled_size, _RROI, "pooled_size")
    n, c, h, w = data.shape
    dt = data.dtype
    b = _batch_index(xp, _RROI, rois, n, negative_ok=False)
    rois_host = host(rois).astype(dt)
    out = xp.zeros((rois.shape[0], c) + tuple(p.pooled_size), dtype=dt)
    for r in range(rois.shape[0]):
        pos, wts, count = _rroi_points(p, xp, rois_host[r], h, w, dt)
        img = data[int(b[r])].reshape(c, -1)
        vals = (img[:, pos] * wts[None]).sum(axis=(1, 3, 5))       # (C, PH, PW)
        out[r] = vals / dt.type(count)
    return out


def _rroi_grad(p, x, y, gy, need):
    raise MXNetError("%s: backward is not supported (MXNet 1.9.1 has no RROIAlign gradient)"
                     % _RROI)


register_op("_contrib_RROIAlign", _rroi_align, inputs=("data", "rois"), check=ranks(data=(4, 4)),
            params=[Param("pooled_size", parse_shape, doc="Output size (h, w).", low=1),
                    Param("spatial_scale", parse_float, doc="Feature map size over image size."),
                    Param("sampling_ratio", parse_int, -1,
                          "Samples per bin side; <= 0: ceil(roi size / pooled size).")],
            gradient=_rroi_grad, saves="",
            doc="Rotated ROI align: rois (R, 6) [batch_index, x_center, y_center, width, height, "
                "angle in degrees]; every bin averages bilinear samples of the rotated grid. "
                "Forward only, as in MXNet.")
