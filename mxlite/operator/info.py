"""What the operator registry tells about its ops, as MXNet's ``mx.operator`` reports it:
``get_all_registered_operators`` and ``get_operator_arguments``."""
from collections import namedtuple

from ..base import MXNetError
from .registry import OPS, REQUIRED, list_ops

__all__ = ["OperatorArguments", "get_all_registered_operators", "get_operator_arguments"]

OperatorArguments = namedtuple("OperatorArguments", ["narg", "names", "types"])


def get_all_registered_operators():
    """The names of every registered operator, aliases included."""
    return list_ops()


def get_operator_arguments(op_name):
    """``OperatorArguments(narg, names, types)`` of ``op_name``: its inputs (type
    ``NDArray-or-Symbol``; ``NDArray-or-Symbol[]`` for a variadic op) and its params
    (``'int, required'``, ``"{'max', 'avg'}, optional, default='max'"``).

    >>> mx.operator.get_operator_arguments('Activation').names
    ['data', 'act_type']
    """
    from ..nd.register import _param_type
    op = OPS.get(op_name)
    if op is None:
        raise MXNetError("get_operator_arguments: no operator named %r" % (op_name,))
    names, types = [], []
    if op.variadic:
        names.append("data")
        types.append("NDArray-or-Symbol[]")
    elif not callable(op.inputs):
        names += list(op.inputs)
        types += ["NDArray-or-Symbol"] * len(op.inputs)
    for prm in op.params.values():
        if prm.name == op.variadic:
            continue
        names.append(prm.name)
        types.append(_param_type(prm) + (", required" if prm.default is REQUIRED else
                                         ", optional, default=%r" % (prm.default,)))
    return OperatorArguments(len(names), names, types)
