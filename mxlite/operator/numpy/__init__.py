"""Operators of MXNet's NumPy-compatible interface, under MXNet's own names.

``_npi_*``/``_np_*`` back ``mx.np``, ``_npx_*`` back ``mx.npx``. Most are the
legacy ops' kernels and gradient rules declared again under the np name with
MXNet's NumPy dtype rules (:mod:`.elemwise`, :mod:`.reduce`, :mod:`.shape`,
:mod:`.npx`): one kernel, two faces.
"""
from . import elemwise, reduce, shape, npx, linalg, init, matrix, numeric, statistics  # noqa: F401
