"""``_contrib_fft`` / ``_contrib_ifft``: the FFT over the last axis, with MXNet's
interleaved (real, imaginary) layout and its unnormalised inverse."""
from ... import nd
from ...base import MXNetError, parse_int
from ..registry import register_op, Param, ranks


def _fft(p, xp, x):
    """Complex FFT over the last axis of real ``x`` (..., d): (..., 2d) interleaved
    [re0, im0, re1, im1, ...]."""
    f = xp.fft.fft(x.astype(xp.float64), axis=-1)
    out = xp.stack([f.real, f.imag], axis=-1).reshape(x.shape[:-1] + (2 * x.shape[-1],))
    return out.astype(x.dtype)


def _ifft(p, xp, x):
    """Real part of the *unnormalised* inverse FFT of interleaved complex ``x`` (..., 2d):
    (..., d). NOTE: MXNet (cuFFT) does not divide by d: ``ifft(fft(x)) = d * x``."""
    if x.shape[-1] % 2:
        raise MXNetError("ifft: the last axis holds (real, imag) pairs and must be even, got "
                         "shape %s" % (tuple(x.shape),))
    z = x.astype(xp.float64).reshape(x.shape[:-1] + (x.shape[-1] // 2, 2))
    c = z[..., 0] + 1j * z[..., 1]
    return (xp.fft.ifft(c, axis=-1).real * c.shape[-1]).astype(x.dtype)


_COMPUTE_SIZE = Param("compute_size", parse_int, 128,
                      "Rows per cuFFT batch in MXNet; no effect here.")
# y = F x (x real) has the gradient Re(F^H gy) = ifft(gy); y = Re(F^H z) has F gy.
register_op("_contrib_fft", _fft, params=[_COMPUTE_SIZE], saves="",
            check=ranks(data=1),
            gradient=lambda p, x, y, gy, need: [nd.contrib.ifft(gy[0])],
            doc="FFT over the last axis: real (..., d) -> (..., 2d) interleaved real and "
                "imaginary parts. (MXNet 1.9.1 runs it on GPU only.)")
register_op("_contrib_ifft", _ifft, params=[_COMPUTE_SIZE], saves="",
            check=ranks(data=1),
            gradient=lambda p, x, y, gy, need: [nd.contrib.fft(gy[0])],
            doc="Inverse FFT over the last axis of interleaved complex (..., 2d) -> the real "
                "part (..., d), unnormalised as MXNet's (no division by d).")
