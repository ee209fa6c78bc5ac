"""``mx.nd.contrib``: filled from the operator registry (ops named contrib*)."""

import numpy as _np


def isinf(data):
    """1 where ``data`` is +inf or -inf, else 0 (in the input dtype)."""
    return data.abs() == _np.inf


def isfinite(data):
    """1 where ``data`` is neither infinite nor NaN, else 0 (in the input dtype)."""
    return (data.abs() != _np.inf) * (data == data)


def isnan(data):
    """1 where ``data`` is NaN, else 0 (in the input dtype)."""
    return data != data
