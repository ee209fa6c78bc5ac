"""``mx.np.genfromtxt``: NumPy's text reader, giving an ``mx.np.ndarray``."""
import numpy as onp

from ._fallback import make_fallback

__all__ = ["genfromtxt"]

genfromtxt = make_fallback("genfromtxt", onp.genfromtxt)
