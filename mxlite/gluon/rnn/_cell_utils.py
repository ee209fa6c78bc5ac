"""What the recurrent cells share: the namespace (``F``) of the inputs, sequences as
one tensor (layout NTC or TNC) or a list of (N, C) steps, and begin states."""
import inspect

from ... import nd
from ...util import _state as _np_state
from ..np_face import face_of, _NpFace

__all__ = []


def _is_tensor(x):
    from ..parameter import tensor_types
    return isinstance(x, tensor_types)


def _namespace(x):
    """``mx.nd`` for NDArrays (Gluon's np face of it for np arrays), ``mx.sym`` for
    Symbols."""
    if isinstance(x, nd.NDArray):
        return face_of(nd) if x._np else nd
    from ... import symbol
    return symbol


def _imperative(F):
    return F is nd or isinstance(F, _NpFace)


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _split(F, x, axis, num_outputs):
    """``x`` split into ``num_outputs`` steps along ``axis`` (squeezed), as a list."""
    parts = F.split(x, axis=axis, num_outputs=num_outputs, squeeze_axis=True)
    if _imperative(F):
        return _as_list(parts)
    return [parts[i] for i in range(num_outputs)]


# ----------------------------------------------------------------------------
# Sequences: one tensor (layout NTC or TNC) <-> a list of (N, C) steps

def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """Bring ``inputs`` to the form ``merge`` asks for.

    Parameters
    ----------
    length : int or None
        Number of time steps (checked against the inputs when given).
    inputs : NDArray or list of NDArray
        One tensor laid out as ``in_layout`` (``layout`` by default), or a list of
        ``(N, C)`` steps.
    layout : {'NTC', 'TNC'}
        The layout of a merged result.
    merge : bool or None
        True: one tensor; False: a list of steps; None: leave as it is.

    Returns
    -------
    inputs, time axis, F (nd or sym), batch size
    """
    if inputs is None:
        raise ValueError("unroll(inputs=None) is not supported: pass the input sequence")
    if layout not in ("NTC", "TNC"):
        raise ValueError("layout must be 'NTC' or 'TNC', got %r" % (layout,))
    axis = layout.find("T")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    batch_size = 0
    if _is_tensor(inputs):
        F = _namespace(inputs)
        if _imperative(F):
            batch_size = inputs.shape[layout.find("N")]
            if length is not None and length != inputs.shape[in_axis]:
                raise ValueError("unroll: length=%d but the inputs have %d time steps (axis %d "
                                 "of shape %s, layout %s)" % (length, inputs.shape[in_axis],
                                                              in_axis, inputs.shape, layout))
            steps = inputs.shape[in_axis]
        else:
            steps = length
        if merge is False:
            if steps is None:
                raise ValueError("unroll: length is needed to split a symbol into steps")
            inputs = _split(F, inputs, in_axis, steps)
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise ValueError("unroll: length=%d but %d input steps were given"
                             % (length, len(inputs)))
        F = _namespace(inputs[0])
        if _imperative(F):
            # NOTE: every step is (N, C) whatever the layout, so the batch is axis 0.
            batch_size = inputs[0].shape[0]
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if _is_tensor(inputs) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _get_begin_state(cell, F, begin_state, inputs, batch_size):
    """``begin_state``, or zeros on the inputs' context with their dtype (MXNet uses
    float32 whatever the inputs, which fails for float64 cells)."""
    if begin_state is not None:
        return _as_list(begin_state)
    if _imperative(F):
        first = inputs if _is_tensor(inputs) else inputs[0]
        return cell.begin_state(func=F.zeros, batch_size=batch_size, ctx=first.context,
                                dtype=first.dtype)
    return cell.begin_state(func=F.zeros, batch_size=batch_size)


def _mask_sequence_variable_length(F, data, length, valid_length, time_axis, merge):
    """Zero the steps at and after ``valid_length`` (per sample)."""
    if not _is_tensor(data):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, valid_length, use_sequence_length=True, axis=time_axis)
    if not merge:
        outputs = _split(F, outputs, time_axis, length)
    return outputs


def _reverse_sequences(sequences, unroll_step, valid_length=None):
    """The list of steps in reverse order; with ``valid_length``, each sample's valid
    prefix is reversed in place and its padding stays at the end."""
    if valid_length is None:
        return list(reversed(sequences))
    F = _namespace(sequences[0])
    rev = F.SequenceReverse(F.stack(*sequences, axis=0), valid_length,
                            use_sequence_length=True)
    return _split(F, rev, 0, unroll_step)


def _cells_state_info(cells, batch_size):
    return sum([c.state_info(batch_size) for c in cells], [])


def _cells_begin_state(cells, **kwargs):
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _accepts(func, name):
    """Whether ``func`` has an explicit parameter ``name``."""
    try:
        return name in inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False


def _make_state(func, name, info):
    """``func(**info)``: MXNet passes ``name=`` and graph attributes (``__layout__``)
    too; they mean nothing to an array function, so they go only where accepted."""
    kwargs = {k: v for k, v in info.items() if not k.startswith("__")}
    if _accepts(func, "name"):
        kwargs["name"] = name
    state = func(**kwargs)
    if _np_state.array and isinstance(state, nd.NDArray):
        state = state.as_np_ndarray()   # under npx.set_np() states are np arrays
    return state


def _get_activation(F, x, activation):
    """Apply ``activation``: a name (``'tanh'``, ``'sigmoid'``, ``'relu'``,
    ``'softsign'``, or any ``Activation`` act_type) or a callable (a Block)."""
    if isinstance(activation, str):
        if activation in ("tanh", "sigmoid", "relu", "softsign"):
            return getattr(F, activation)(x)
        return F.Activation(x, act_type=activation)
    return activation(x)
