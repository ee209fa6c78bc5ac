"""``mx.contrib.autograd``: MXNet's first autograd API (``train_section``,
``mark_variables``, ``compute_gradient``, ``grad_and_loss``), on mxlite's tape.

In this API training mode and recording go together: ``set_is_training(True)`` turns
both on.

>>> x = mx.nd.array([1, 2, 3])
>>> grad_fn = mx.contrib.autograd.grad(lambda x: (x * x).sum())
>>> grad_fn(x)[0]
<BLANKLINE>
[2. 4. 6.]
<NDArray 3 @cpu(0)>
"""
import functools

from .. import autograd as _autograd
from ..nd.ndarray import NDArray
from ..nd import zeros_like
from .._lazy import exports as _exports

__all__ = ["set_is_training", "TrainingStateScope", "train_section", "test_section",
           "mark_variables", "backward", "compute_gradient", "grad_and_loss", "grad"]

mark_variables = _autograd.mark_variables


def set_is_training(is_train):
    """Turn training mode and recording on or off together; returns the previous
    training state."""
    prev = _autograd.set_training(is_train)
    _autograd.set_recording(is_train)
    return prev


class TrainingStateScope:
    """``with`` scope entering training (and recording) state ``enter_state`` and
    restoring the previous state on exit."""

    def __init__(self, enter_state):
        self._enter_state = enter_state
        self._prev = None

    def __enter__(self):
        self._prev = set_is_training(self._enter_state)

    def __exit__(self, ptype, value, trace):
        if self._prev != self._enter_state:
            set_is_training(self._prev)


def train_section():
    """A scope that records and runs in training mode."""
    return TrainingStateScope(True)


def test_section():
    """A scope that neither records nor trains (inside a ``train_section``)."""
    return TrainingStateScope(False)


def backward(outputs, out_grads=None, retain_graph=False):
    """Write the gradients of ``outputs`` (a list) into the marked variables."""
    if not isinstance(outputs, (list, tuple)):
        raise TypeError("backward: outputs must be a list or tuple of NDArrays, got %s"
                        % type(outputs).__name__)
    if out_grads is not None and len(out_grads) != len(outputs):
        raise ValueError("backward: got %d out_grads for %d outputs"
                         % (len(out_grads), len(outputs)))
    _autograd.backward(list(outputs), out_grads, retain_graph=retain_graph)


def compute_gradient(outputs):
    """Deprecated spelling of :func:`backward`."""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """Wrap ``func`` so that it returns ``(gradients, outputs)``: the gradients of its
    output with respect to its arguments (those at ``argnum``, an int or a list)."""
    @functools.wraps(func)
    def wrapped(*args):
        variables = args
        if argnum is not None:
            variables = [args[i] for i in (argnum if isinstance(argnum, list) else [argnum])]
        for x in variables:
            if not isinstance(x, NDArray):
                raise TypeError("grad_and_loss: the inputs to differentiate must be NDArrays, "
                                "got %s" % type(x).__name__)
        grads = [zeros_like(x) for x in variables]
        mark_variables(list(variables), grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func, argnum=None):
    """Wrap ``func`` so that it returns the gradients of its output with respect to its
    arguments (see :func:`grad_and_loss`)."""
    grad_with_loss = grad_and_loss(func, argnum)

    @functools.wraps(grad_with_loss)
    def wrapped(*args):
        return grad_with_loss(*args)[0]
    return wrapped


__getattr__, __dir__ = _exports(__name__, {
    "NDArray": "mxlite.nd.ndarray", "string_types": "mxlite.base", "check_call": "mxlite.base",
    "c_array": "mxlite.base", "c_array_buf": "mxlite.base", "c_handle_array": "mxlite.base"})
