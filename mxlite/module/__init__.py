"""``mx.mod``: the Module API."""
from .base_module import BaseModule  # noqa: F401
from .module import Module  # noqa: F401
from .bucketing_module import BucketingModule  # noqa: F401
from .sequential_module import SequentialModule  # noqa: F401
from .python_module import PythonModule, PythonLossModule  # noqa: F401
from . import base_module, executor_group, module, bucketing_module, sequential_module  # noqa: F401
from . import python_module  # noqa: F401
