"""``mx.np.set_printoptions`` (NumPy's, which np arrays print with)."""
import numpy as onp

__all__ = ["set_printoptions"]


def set_printoptions(precision=None, threshold=None, **kwarg):
    """Set how arrays print (``precision`` digits, summarise past ``threshold`` elements)."""
    onp.set_printoptions(precision=precision, threshold=threshold, **kwarg)
