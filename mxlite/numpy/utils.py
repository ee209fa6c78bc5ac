"""Constants of ``mx.np`` (NumPy's values)."""
import numpy as onp

__all__ = ["e", "pi", "inf", "nan", "newaxis", "NAN", "NINF", "NZERO", "NaN", "PINF", "PZERO"]

e = onp.e
pi = onp.pi
inf = onp.inf
nan = onp.nan
newaxis = None
NAN = NaN = onp.nan
NINF = -onp.inf
PINF = onp.inf
NZERO = -0.0
PZERO = 0.0
