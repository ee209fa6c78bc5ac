"""Optional numba kernels (``_fast``, which compiles them) for the im2col convolution's
data gradient: :func:`add_offsets` adds the products of all kernel offsets, made by
one product, onto a channels-last output (``convolution._row2im``).

The same values as NumPy's passes, bit for bit: each output value takes the offsets'
products in the order NumPy's one add per offset gives them.
"""
import numpy as np

from ...engine import parallel_parts
from . import _fast


def _add_offsets(p, kh, kw, sh, sw, dh, dw, y):
    """``y`` (N, H, W, F) plus, for each offset ``t = i * kw + j`` of a (kh, kw) kernel
    in turn, ``p[:, :, :, t]`` ((N, OH, OW, F) of ``p`` (N, OH, OW, kh * kw, F)) at
    rows ``oy * sh + i * dh`` and columns ``ox * sw + j * dw``.

    NOTE: NumPy's add of one offset's block (strided views with runs of F values in
    ``p``) took 46 us for LeNet's second layer at batch 64 (25 offsets of (64, 8, 8,
    20)); this loop, sample by sample (each sample's output stays in the L1 cache
    while its offsets are added), 0.56 ms for all 25 (0.79 offset by offset over the
    whole batch)."""
    n_, oh, ow = p.shape[:3]
    f_ = p.shape[4]
    for n in range(n_):
        for t in range(kh * kw):
            i, j = t // kw, t % kw
            for oy in range(oh):
                r = oy * sh + i * dh
                for ox in range(ow):
                    q = ox * sw + j * dw
                    for c in range(f_):
                        y[n, r, q, c] += p[n, oy, ox, t, c]


def add_offsets(p, kernel, stride, dilate, y):
    """:func:`_add_offsets` for a 2-D kernel on NumPy float arrays of one dtype, then True;
    False (nothing done) where numba is off or the kernel does not apply."""
    if (len(kernel) != 2 or y.dtype not in _fast._DTYPES or p.dtype != y.dtype
            or type(p) is not np.ndarray or type(y) is not np.ndarray):
        return False
    jit = _fast.kernels()
    if jit is None:
        return False
    # (by samples over the workers: each sample's sums are its own)
    parallel_parts(lambda at: jit.add_offsets(p[at], *kernel, *stride, *dilate, y[at]),
                   y.shape[:1], p.nbytes, np)
    return True


# The kernels that ``_fast.kernels`` compiles, by the names it gives them.
KERNELS = {"add_offsets": _add_offsets}
