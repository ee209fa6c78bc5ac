"""``mx.contrib.svrg_optimization``: stochastic variance-reduced gradient training
(Johnson & Zhang, 2013) for the Module API."""
from . import svrg_optimizer  # noqa: F401
from . import svrg_module  # noqa: F401
