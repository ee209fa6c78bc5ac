"""``mx.gluon.contrib``: experimental Gluon additions (the Estimator fit loop)."""
from . import estimator  # noqa: F401
