"""Recurrent cells: one time step of a recurrent network, and ``unroll`` over a sequence.

A cell maps ``(x_t, states) -> (y_t, new_states)``. Parameter names, prefixes, gate
order and formulas are MXNet 1.x's, so weights move freely between a cell, MXNet and
the fused layers of :mod:`.rnn_layer`:

- ``RNNCell``  ``h' = act(W_i2h x + b_i2h + W_h2h h + b_h2h)``
- ``LSTMCell`` gates ``i, f, g, o`` (in that order along the first weight axis),
  ``c' = f * c + i * g``, ``h' = o * tanh(c')``
- ``GRUCell``  gates ``r, z, n``, ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``,
  ``h' = (1 - z) * n + z * h``

>>> cell = mx.gluon.rnn.LSTMCell(20, prefix='lstm0_')
>>> cell.initialize()
>>> outputs, states = cell.unroll(5, mx.nd.ones((4, 5, 8)), layout='NTC', merge_outputs=True)
>>> outputs.shape, states[1].shape
((4, 5, 20), (4, 20))
"""
from ... import nd
from ..block import Block, HybridBlock
from ..parameter import _AssertError
from ..utils import _indent
from ._cell_utils import (_is_tensor, _format_sequence, _get_begin_state,
                          _mask_sequence_variable_length, _reverse_sequences,
                          _cells_state_info, _cells_begin_state, _make_state, _get_activation)

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell"]


# ----------------------------------------------------------------------------
# Base classes

class RecurrentCell(Block):
    """Abstract base class of recurrent cells.

    Subclasses define ``state_info`` and the step (``forward`` or ``hybrid_forward``
    with signature ``(inputs, states)``); ``unroll`` then runs whole sequences.

    Parameters
    ----------
    prefix : str, optional
        Prefix of the parameter names.
    params : ParameterDict, optional
        Parameters to share with another cell.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step counters before a new sequence (``unroll`` does it)."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size=0):
        """The shape (and layout) of each state: a list of dicts."""
        raise NotImplementedError()

    def _check_unmodified(self):
        if self._modified:
            raise _AssertError("After applying modifier cells (e.g. ZoneoutCell) the base cell "
                               "cannot be called directly. Call the modifier cell instead.")

    def begin_state(self, batch_size=0, func=nd.zeros, **kwargs):
        """Initial states: one array per entry of :meth:`state_info`.

        Parameters
        ----------
        batch_size : int, default 0
            Batch size of the states (0: unknown, symbols only).
        func : callable, default mx.nd.zeros
            Called with ``shape=`` (and ``name=`` when it takes one) plus ``kwargs``,
            e.g. ``mx.nd.random.uniform`` or ``ctx=`` / ``dtype=`` for ``zeros``.

        Returns
        -------
        list of NDArray
        """
        self._check_unmodified()
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info or {})
            info.update(kwargs)
            states.append(_make_state(func, "%sbegin_state_%d" % (self._prefix,
                                                                  self._init_counter), info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Run the cell over ``length`` time steps.

        Parameters
        ----------
        length : int
            Number of steps.
        inputs : NDArray or list of NDArray
            A tensor laid out as ``layout``, or a list of ``length`` arrays ``(N, C)``.
        begin_state : list of NDArray, optional
            Initial states (zeros by default, see :meth:`begin_state`).
        layout : {'NTC', 'TNC'}, default 'NTC'
        merge_outputs : bool, optional
            True: outputs as one tensor laid out as ``layout``; False: a list of steps;
            None: like the inputs (a tensor when ``valid_length`` is given).
        valid_length : NDArray, optional
            ``(N,)`` lengths: outputs past each length are 0 and the returned states
            are those after each sample's last valid step.

        Returns
        -------
        outputs : NDArray or list of NDArray
        states : list of NDArray
            The states after the last (valid) step.
        """
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        outputs, all_states = [], []
        for x in inputs:
            y, states = self(x, states)
            outputs.append(y)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*steps, axis=0), valid_length,
                                     use_sequence_length=True, axis=0)
                      for steps in zip(*all_states)]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def forward(self, inputs, states):
        """One step: ``(output, new_states)``."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell whose step is ``hybrid_forward(F, inputs, states, **params)``."""

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError("%s must define hybrid_forward()" % type(self).__name__)


def _mapping(weight):
    """``'in -> out'`` of a repr, ``None`` for an input size not known yet."""
    shape = weight.shape
    return "{0} -> {1}".format(shape[1] if shape[1] else None, shape[0])


class _GatedCell(HybridRecurrentCell):
    """The weights shared by RNN/LSTM/GRU cells: ``i2h_weight (G*H, in)``,
    ``h2h_weight (G*H, H)``, ``i2h_bias``, ``h2h_bias (G*H,)``."""
    _num_gates = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        rows = self._num_gates * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(rows, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(rows, hidden_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _projections(self, F, inputs, h, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        rows = self._num_gates * self._hidden_size
        i2h = F.FullyConnected(inputs, i2h_weight, i2h_bias, num_hidden=rows)
        h2h = F.FullyConnected(h, h2h_weight, h2h_bias, num_hidden=rows)
        return i2h, h2h

    def __repr__(self):
        return "{name}({mapping})".format(name=type(self).__name__,
                                          mapping=_mapping(self.i2h_weight))


# ----------------------------------------------------------------------------
# The three cells

class RNNCell(_GatedCell):
    r"""Elman RNN cell: :math:`h_t = act(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})`.

    Parameters
    ----------
    hidden_size : int
        Number of units of the output and state.
    activation : str or Block, default 'tanh'
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    input_size : int, default 0
        Number of input features; 0 infers it from the first input.
    prefix : str, optional
        Default ``'rnn<n>_'``.
    params : ParameterDict, optional
        Parameters to share.

    Examples
    --------
    >>> cell = mx.gluon.rnn.RNNCell(10)
    >>> cell.initialize()
    >>> y, (h,) = cell(mx.nd.ones((2, 3)), cell.begin_state(2))
    >>> y.shape
    (2, 10)
    """

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation

    def _alias(self):
        return "rnn"

    def __repr__(self):
        return "{name}({mapping}, {act})".format(name=type(self).__name__,
                                                 mapping=_mapping(self.i2h_weight),
                                                 act=self._activation)

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias)
        output = _get_activation(F, i2h + h2h, self._activation)
        return output, [output]


class LSTMCell(_GatedCell):
    r"""Long short-term memory cell (gates ``i, f, g, o``, no peepholes).

    .. math::
        i, f, g, o = \sigma(\cdot), \sigma(\cdot), \tanh(\cdot), \sigma(\cdot)
        \text{ of } W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh} \\
        c_t = f c_{t-1} + i g, \quad h_t = o \tanh(c_t)

    The states are ``[h, c]``, both ``(N, hidden_size)``.

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    input_size : int, default 0
        0 infers it from the first input.
    prefix : str, optional
        Default ``'lstm<n>_'``.
    params : ParameterDict, optional
    activation : str or Block, default 'tanh'
        Applied to ``g`` and to the cell state.
    recurrent_activation : str or Block, default 'sigmoid'
        Applied to the gates ``i, f, o``.
    """
    _num_gates = 4

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def _alias(self):
        return "lstm"

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias)
        gates = F.SliceChannel(i2h + h2h, num_outputs=4)
        act, rec = self._activation, self._recurrent_activation
        in_gate = _get_activation(F, gates[0], rec)
        forget_gate = _get_activation(F, gates[1], rec)
        in_transform = _get_activation(F, gates[2], act)
        out_gate = _get_activation(F, gates[3], rec)
        next_c = forget_gate * states[1] + in_gate * in_transform
        next_h = out_gate * _get_activation(F, next_c, act)
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    r"""Gated recurrent unit cell (Cho et al., 2014), as cuDNN and MXNet compute it.

    .. math::
        r = \sigma(W_{ir} x + b_{ir} + W_{hr} h + b_{hr}), \quad
        z = \sigma(W_{iz} x + b_{iz} + W_{hz} h + b_{hz}) \\
        n = \tanh(W_{in} x + b_{in} + r (W_{hn} h + b_{hn})), \quad
        h' = (1 - z) n + z h

    Parameters
    ----------
    hidden_size : int
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str, optional
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    input_size : int, default 0
        0 infers it from the first input.
    prefix : str, optional
        Default ``'gru<n>_'``.
    params : ParameterDict, optional
    """
    _num_gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params)

    def _alias(self):
        return "gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        h = states[0]
        i2h, h2h = self._projections(F, inputs, h, i2h_weight, h2h_weight, i2h_bias, h2h_bias)
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3)
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3)
        reset_gate = F.sigmoid(i2h_r + h2h_r)
        update_gate = F.sigmoid(i2h_z + h2h_z)
        candidate = F.tanh(i2h_n + reset_gate * h2h_n)
        next_h = (1 - update_gate) * candidate + update_gate * h
        return next_h, [next_h]


# ----------------------------------------------------------------------------
# Containers

class _SequentialCellMixin:
    """Stacking for :class:`SequentialRNNCell` and :class:`HybridSequentialRNNCell`."""

    def __repr__(self):
        modstr = "\n".join("({i}): {m}".format(i=i, m=_indent(repr(m), 2))
                           for i, m in self._children.items())
        return "{name}(\n{modstr}\n)".format(name=type(self).__name__, modstr=modstr)

    def add(self, cell):
        """Append a cell to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        """The begin states of every cell, concatenated in order."""
        self._check_unmodified()
        return _cells_begin_state(self._children.values(), **kwargs)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise _AssertError("a stack holding a BidirectionalCell cannot be stepped; "
                                   "use unroll")
            n = len(cell.state_info())
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll each cell over the whole sequence in turn (see
        :meth:`RecurrentCell.unroll`); the states are every cell's, in order."""
        self.reset()
        inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        cells = list(self._children.values())
        p = 0
        next_states = []
        for i, cell in enumerate(cells):
            n = len(cell.state_info())
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=begin_state[p:p + n],
                                         layout=layout,
                                         merge_outputs=None if i < len(cells) - 1
                                         else merge_outputs,
                                         valid_length=valid_length)
            p += n
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i):
        return list(self._children.values())[i]

    def __len__(self):
        return len(self._children)


class SequentialRNNCell(_SequentialCellMixin, RecurrentCell):
    """Stacks cells: the output of each is the input of the next; the states are
    the states of every cell, concatenated.

    Examples
    --------
    >>> stack = mx.gluon.rnn.SequentialRNNCell()
    >>> with stack.name_scope():
    ...     stack.add(mx.gluon.rnn.LSTMCell(8))
    ...     stack.add(mx.gluon.rnn.GRUCell(8))
    """


class HybridSequentialRNNCell(_SequentialCellMixin, HybridRecurrentCell):
    """:class:`SequentialRNNCell` of hybrid cells."""

    def hybrid_forward(self, *args, **kwargs):
        raise NotImplementedError


class DropoutCell(HybridRecurrentCell):
    """Dropout on the step's input (no state), for stacking between cells.

    Parameters
    ----------
    rate : float
        Fraction of the input units to drop (training only).
    axes : tuple of int, default ()
        Axes along which the mask is shared.
    """

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        if not isinstance(rate, (int, float)):
            raise _AssertError("rate must be a number, got %r" % (rate,))
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return "{name}(rate={rate}, axes={axes})".format(name=type(self).__name__,
                                                         rate=self._rate, axes=self._axes)

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return "dropout"

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(inputs, p=self._rate, axes=self._axes)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Dropout over the whole sequence at once (``valid_length`` is not needed:
        dropout keeps zeros at zero)."""
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if _is_tensor(inputs):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


class ModifierCell(HybridRecurrentCell):
    """Base class of cells that wrap another cell (:class:`ZoneoutCell`,
    :class:`ResidualCell`); the wrapped cell's parameters are this cell's, and the
    wrapped cell cannot be stepped on its own any more."""

    def __init__(self, base_cell):
        if base_cell._modified:
            raise _AssertError("Cell %s is already modified. One cell cannot be modified twice"
                               % base_cell.name)
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=nd.zeros, **kwargs):
        self._check_unmodified()
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError

    def __repr__(self):
        return "{name}({base})".format(name=type(self).__name__, base=self.base_cell)


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al., 2016): in training, each unit of the output and of the
    states keeps its previous value with probability ``zoneout_outputs`` /
    ``zoneout_states`` instead of taking the new one.

    Parameters
    ----------
    base_cell : RecurrentCell
        Not a BidirectionalCell (it cannot be stepped).
    zoneout_outputs : float, default 0
    zoneout_states : float, default 0
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, BidirectionalCell):
            raise _AssertError("BidirectionalCell doesn't support zoneout since it doesn't "
                               "support step. Please add ZoneoutCell to the cells underneath "
                               "instead.")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states

    def __repr__(self):
        return "{name}(p_out={p_out}, p_state={p_state}, {base})".format(
            name=type(self).__name__, p_out=self.zoneout_outputs, p_state=self.zoneout_states,
            base=self.base_cell)

    def _alias(self):
        return "zoneout"

    def reset(self):
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p, like):
            # Dropout of ones: nonzero (kept) with probability 1 - p in training, all
            # ones in prediction, so zoneout is off outside autograd.train_mode().
            return F.Dropout(F.ones_like(like), p=p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        p_out, p_state = self.zoneout_outputs, self.zoneout_states
        output = (F.where(keep_new(p_out, next_output), next_output, prev_output)
                  if p_out != 0. else next_output)
        states = ([F.where(keep_new(p_state, new), new, old)
                   for new, old in zip(next_states, states)] if p_state != 0. else next_states)
        self._prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the input of each step to the wrapped cell's output (He et al., 2016);
    input and output sizes must agree."""

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        return output + inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        merge_outputs = _is_tensor(outputs) if merge_outputs is None else merge_outputs
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, axis,
                                                    merge_outputs)
        if merge_outputs:
            return outputs + inputs, states
        return [y + x for y, x in zip(outputs, inputs)], states


class BidirectionalCell(HybridRecurrentCell):
    """Runs ``l_cell`` forward and ``r_cell`` backward in time and concatenates their
    outputs along the feature axis. It can only be unrolled, not stepped.

    Parameters
    ----------
    l_cell : RecurrentCell
        The forward-in-time cell.
    r_cell : RecurrentCell
        The backward-in-time cell.
    output_prefix : str, default 'bi_'
    """

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self):
        return "{name}(forward={l_cell}, backward={r_cell})".format(
            name=type(self).__name__, l_cell=self._children["l_cell"],
            r_cell=self._children["r_cell"])

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs):
        """The forward cell's begin states, then the backward cell's."""
        self._check_unmodified()
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll both cells; with ``valid_length``, the backward cell reads each
        sample's valid steps only, last to first. The states are the forward cell's
        then the backward cell's."""
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = _reverse_sequences(inputs, length, valid_length)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        l_cell, r_cell = self._children.values()
        n_left = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left],
                                            layout=layout, merge_outputs=False,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                            begin_state=states[n_left:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = valid_length is not None
        outputs = [F.concat(l_y, r_y, dim=1) for l_y, r_y in zip(l_outputs, r_outputs)]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge_outputs)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, l_states + r_states
