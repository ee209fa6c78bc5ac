"""Contributed recurrent cells: :class:`VariationalDropoutCell`, :class:`LSTMPCell`,
and :func:`dynamic_unroll` (an unroll through ``F.contrib.foreach``).

>>> cell = mx.gluon.contrib.rnn.LSTMPCell(hidden_size=8, projection_size=3)
>>> cell.initialize()
>>> y, (r, c) = cell(mx.nd.ones((2, 5)), cell.begin_state(2))
>>> y.shape, c.shape
((2, 3), (2, 8))
"""
from ...parameter import _AssertError
from ...rnn._cell_utils import (_as_list, _format_sequence, _get_begin_state, _is_tensor,
                                _mask_sequence_variable_length)
from ...rnn.rnn_cell import (BidirectionalCell, HybridRecurrentCell, ModifierCell,
                             SequentialRNNCell)

__all__ = ["VariationalDropoutCell", "LSTMPCell"]


def _has_bidirectional(cell):
    """Whether ``cell`` is, or stacks, a BidirectionalCell."""
    if isinstance(cell, BidirectionalCell):
        return True
    if isinstance(cell, SequentialRNNCell):
        return any(_has_bidirectional(c) for c in cell._children.values())
    return False


class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal and Ghahramani, 2016) around ``base_cell``: the same
    dropout mask is used at every time step. Inputs, the first state (``h``) and
    outputs get separate masks.

    A mask is drawn at the first step after :meth:`reset` and kept until the next
    :meth:`reset` (``unroll`` resets): when stepping by hand, call ``reset()`` between
    sequences. Dropout acts only in training (``autograd.train_mode``/``record``).

    Parameters
    ----------
    base_cell : RecurrentCell
        The cell to wrap.
    drop_inputs : float, default 0
        Dropout rate of the inputs (0: none).
    drop_states : float, default 0
        Dropout rate of the first state; not allowed around a BidirectionalCell.
    drop_outputs : float, default 0
        Dropout rate of the outputs.

    Examples
    --------
    >>> base = mx.gluon.rnn.LSTMCell(4)
    >>> cell = mx.gluon.contrib.rnn.VariationalDropoutCell(base, drop_inputs=0.5)
    >>> cell.prefix
    'lstm0_vardrop'
    """

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        if drop_states and _has_bidirectional(base_cell):
            # NOTE: MXNet asserts on a Sequential cell's `_bidirectional`, an attribute
            # it never sets (AttributeError); we look for a BidirectionalCell inside.
            raise _AssertError("BidirectionalCell doesn't support variational state dropout. "
                               "Please add VariationalDropoutCell to the cells underneath "
                               "instead.")
        for name, rate in (("drop_inputs", drop_inputs), ("drop_states", drop_states),
                           ("drop_outputs", drop_outputs)):
            if not isinstance(rate, (int, float)) or not 0 <= rate < 1:
                raise ValueError("VariationalDropoutCell: %s must be a rate in [0, 1), got %r"
                                 % (name, rate))
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs

    def _alias(self):
        return "vardrop"

    def reset(self):
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    @staticmethod
    def _mask(F, like, rate):
        # Dropout of ones: 0 or 1/(1-rate) in training, all ones in prediction.
        return F.Dropout(F.ones_like(like), p=rate)

    def hybrid_forward(self, F, inputs, states):
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = self._mask(F, states[0], self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = self._mask(F, inputs, self.drop_inputs)
        if self.drop_states:
            # Only h, the first state of every cell, is dropped.
            states = list(states)
            states[0] = states[0] * self.drop_states_mask
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        output, next_states = self.base_cell(inputs, states)
        if self.drop_outputs and self.drop_outputs_mask is None:
            self.drop_outputs_mask = self._mask(F, output, self.drop_outputs)
        if self.drop_outputs:
            output = output * self.drop_outputs_mask
        return output, next_states

    def __repr__(self):
        return "{name}(p_out = {p_out}, p_state = {p_state})".format(
            name=type(self).__name__, p_out=self.drop_outputs, p_state=self.drop_states)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll over ``length`` steps (see :meth:`RecurrentCell.unroll`).

        Without state dropout, inputs and outputs are dropped for the whole sequence at
        once, with one mask shared along the time axis, around ``base_cell.unroll``.
        """
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length=valid_length)
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs, states, layout,
                                                    merge_outputs=True,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        if merge_outputs is None:
            merge_outputs = _is_tensor(outputs)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, states


class LSTMPCell(HybridRecurrentCell):
    r"""Long short-term memory cell with a projected recurrent state (LSTMP, Sak et al.,
    2014).

    .. math::
        i, f, g, o = \sigma, \sigma, \tanh, \sigma
            (W_{i2h} x_t + b_{i2h} + W_{h2h} r_{t-1} + b_{h2h}) \\
        c_t = f c_{t-1} + i g, \quad h_t = o \tanh(c_t), \quad r_t = W_{h2r} h_t

    The output and first state is ``r`` ``(N, projection_size)``; the second state is
    ``c`` ``(N, hidden_size)``.

    Parameters
    ----------
    hidden_size : int
        Number of units of the cell state.
    projection_size : int
        Number of units of the output (the projection).
    i2h_weight_initializer, h2h_weight_initializer, h2r_weight_initializer : optional
        Initializers of ``i2h_weight (4H, in)``, ``h2h_weight (4H, P)``,
        ``h2r_weight (P, H)``.
    i2h_bias_initializer, h2h_bias_initializer : default 'zeros'
        Initializers of ``i2h_bias`` and ``h2h_bias`` ``(4H,)``.
    input_size : int, default 0
        Number of input features; 0 infers it at the first step.
    prefix : str, optional
        Default ``'lstmp<n>_'``.
    params : ParameterDict, optional
        Parameters to share.
    """

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._projection_size = projection_size
        rows = 4 * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(rows, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(rows, projection_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.h2r_weight = self.params.get("h2r_weight", shape=(projection_size, hidden_size),
                                          init=h2r_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstmp"

    def __repr__(self):
        shape = self.i2h_weight.shape
        mapping = "{0} -> {1} -> {2}".format(shape[1] if shape[1] else None, shape[0],
                                             self.h2r_weight.shape[0])
        return "{name}({mapping})".format(name=type(self).__name__, mapping=mapping)

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias,
                       h2h_bias):
        prefix = "t%d_" % self._counter
        rows = 4 * self._hidden_size
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=rows,
                               name=prefix + "i2h")
        h2h = F.FullyConnected(states[0], h2h_weight, h2h_bias, num_hidden=rows,
                               name=prefix + "h2h")
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, name=prefix + "slice")
        in_gate = F.Activation(gates[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(gates[1], act_type="sigmoid", name=prefix + "f")
        in_transform = F.Activation(gates[2], act_type="tanh", name=prefix + "c")
        out_gate = F.Activation(gates[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                name=prefix + "state")
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type="tanh"),
                                name=prefix + "hidden")
        next_r = F.FullyConnected(hidden, h2r_weight, num_hidden=self._projection_size,
                                  no_bias=True, name=prefix + "out")
        return next_r, [next_r, next_c]


def _swap_time_first(F, x, axis, ndim):
    """``x`` with axes 0 and ``axis`` swapped (its own inverse)."""
    axes = list(range(ndim))
    axes[0], axes[axis] = axes[axis], axes[0]
    return F.transpose(x, axes=axes), axes


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC",
                   valid_length=None):
    """Unroll ``cell`` over a sequence with ``F.contrib.foreach`` (one graph node for
    the loop when symbolic).

    Parameters
    ----------
    cell : RecurrentCell
        The cell to step.
    inputs : NDArray or Symbol
        ``(T, N, ...)`` for layout 'TNC', ``(N, T, ...)`` for 'NTC'.
    begin_state : list of NDArray or Symbol
        The initial states.
    drop_inputs, drop_outputs : float, default 0
        Dropout rates of inputs and outputs, one mask shared along time.
    layout : {'TNC', 'NTC'}, default 'TNC'
    valid_length : NDArray or Symbol, optional
        ``(N,)`` lengths: outputs past them are 0, and the states stop changing after
        each sample's last valid step.

    Returns
    -------
    outputs : NDArray or Symbol
        Laid out as ``layout``.
    states : list
        The final states.
    """
    inputs, axis, F, _ = _format_sequence(None, inputs, layout, True)
    ndim = len(layout)
    axes = None
    if axis != 0:
        inputs, axes = _swap_time_first(F, inputs, axis, ndim)
    states = begin_state
    if drop_inputs:
        # NOTE: as in MXNet, the mask is shared along `axis` of the *time-major* data.
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(axis,))
    if valid_length is None:
        def loop_body(x, states):
            return cell(x, states)
    else:
        states = list(_as_list(states)) + [F.zeros((1,))]

        def loop_body(x, states):
            cell_states, step = states[:-1], states[-1]
            out, new_states = cell(x, cell_states)
            alive = F.broadcast_greater(valid_length, step)
            new_states = [F.where(alive, new, old) for new, old in zip(new_states, cell_states)]
            return out, new_states + [step + 1]
    outputs, states = F.contrib.foreach(loop_body, inputs, states)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(axis,))
    if axes is not None:
        outputs = F.transpose(outputs, axes=axes)
    if valid_length is not None:
        outputs = F.SequenceMask(outputs, sequence_length=valid_length,
                                 use_sequence_length=True, axis=axis)
        return outputs, states[:-1]
    return outputs, states
