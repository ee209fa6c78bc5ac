"""NumPy functions MXNet serves through official NumPy (``mxnet.numpy.fallback``)."""
import numpy as onp

from ._fallback import FALLBACK_NAMES, make_fallback

__all__ = []

_SUCCESSORS = {"trapz": "trapezoid", "msort": None, "in1d": "isin"}

for _name in FALLBACK_NAMES:
    _fn = getattr(onp, _name, None)
    if _fn is None and _SUCCESSORS.get(_name):
        _fn = getattr(onp, _SUCCESSORS[_name])
    if _fn is None and _name == "msort":
        def _fn(a):
            return onp.sort(a, axis=0)
    if _fn is None:
        continue
    globals()[_name] = make_fallback(_name, _fn)
    __all__.append(_name)

from ._math import positive  # noqa: E402,F401  (MXNet lists it among the fallbacks)

__all__.append("positive")
