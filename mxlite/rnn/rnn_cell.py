"""MXNet 1.x's legacy symbolic RNN cells (``mx.rnn.LSTMCell`` ...): they build unrolled
graphs of ``mx.sym`` ops with MXNet's parameter, state and output names.

>>> cell = mx.rnn.LSTMCell(8, prefix='lstm_')
>>> outputs, states = cell.unroll(3, mx.sym.Variable('data'), merge_outputs=True)
>>> outputs.list_arguments()
['data', 'lstm_i2h_weight', 'lstm_i2h_bias', 'lstm_h2h_weight', 'lstm_h2h_bias']
"""
from numbers import Number

from .. import symbol, initializer, nd

__all__ = ["RNNParams", "BaseRNNCell", "RNNCell", "LSTMCell", "GRUCell", "FusedRNNCell",
           "SequentialRNNCell", "DropoutCell", "ModifierCell", "ZoneoutCell",
           "ResidualCell", "BidirectionalCell"]


def _cells_state_info(cells):
    return sum([c.state_info for c in cells], [])


def _cells_begin_state(cells, **kwargs):
    return sum([c.begin_state(**kwargs) for c in cells], [])


def _cells_unpack_weights(cells, args):
    for cell in cells:
        args = cell.unpack_weights(args)
    return args


def _cells_pack_weights(cells, args):
    for cell in cells:
        args = cell.pack_weights(args)
    return args


def _normalize_sequence(length, inputs, layout, merge, in_layout=None):
    """Turn ``inputs`` into a list of per-step symbols (``merge`` False) or one symbol
    with time on the ``layout`` axis (``merge`` True); ``None`` keeps what came."""
    if inputs is None:
        raise ValueError("unroll: inputs=None is not supported; create the input "
                         "variables outside unroll and pass them")
    axis = layout.find('T')
    in_axis = in_layout.find('T') if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise ValueError("unroll: inputs is a grouped symbol with %d outputs; pass "
                                 "list(inputs) instead" % len(inputs.list_outputs()))
            inputs = list(symbol.split(inputs, axis=in_axis, num_outputs=length,
                                       squeeze_axis=1))
    else:
        if length is not None and len(inputs) != length:
            raise ValueError("unroll: got %d inputs for length=%d" % (len(inputs), length))
        if merge is True:
            inputs = [symbol.expand_dims(i, axis=axis) for i in inputs]
            inputs = symbol.Concat(*inputs, dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis


def _call_state_func(func, name, kwargs):
    """``func(name=name, **kwargs)``; attributes such as ``__layout__`` go to the made
    symbol's attributes when ``func`` is an op (mxlite's op functions take no ``__x__``
    keywords, unlike MXNet's)."""
    if func is symbol.Variable:
        return func(name=name, **kwargs)
    attrs = {k: v for k, v in kwargs.items() if k.startswith('__') and k.endswith('__')}
    rest = {k: v for k, v in kwargs.items() if k not in attrs}
    state = func(name=name, **rest)
    if attrs and isinstance(state, symbol.Symbol):
        state._set_attr(**{k: str(v) for k, v in attrs.items()})
    return state


class RNNParams:
    """A container of the weight variables of cells, so that cells can share them.

    Parameters
    ----------
    prefix : str
        Prepended to every variable name.

    Examples
    --------
    >>> p = mx.rnn.RNNParams('lstm_')
    >>> p.get('i2h_weight').name
    'lstm_i2h_weight'
    """

    def __init__(self, prefix=''):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``, created (with ``kwargs`` for
        ``sym.Variable``) on first use."""
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.Variable(name, **kwargs)
        return self._params[name]


class BaseRNNCell:
    """The base class of the symbolic RNN cells.

    Parameters
    ----------
    prefix : str
        Prefix of the names of layers (and of weights when ``params`` is None).
    params : RNNParams or None
        Shared weights; a new container is made when None.
    """

    def __init__(self, prefix='', params=None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step counters before building another graph with this cell."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, '_cells', ()):
            cell.reset()

    def __call__(self, inputs, states):
        """One time step: ``(output, new_states)`` from ``inputs`` (batch, C) and the
        list ``states``."""
        raise NotImplementedError("%s does not define a step" % type(self).__name__)

    @property
    def params(self):
        """The :class:`RNNParams` of this cell."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """One dict (``shape``, ``__layout__``) per state."""
        raise NotImplementedError()

    @property
    def state_shape(self):
        """The shapes of the states (0 for the batch dim)."""
        return [ele['shape'] for ele in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def _check_unmodified(self):
        if self._modified:
            raise RuntimeError("After applying modifier cells (e.g. ZoneoutCell) the base "
                               "cell cannot be called directly. Call the modifier cell "
                               "instead.")

    def begin_state(self, func=symbol.zeros, **kwargs):
        """Initial states, one symbol per ``state_info`` entry, made by ``func``
        (``sym.zeros``, ``sym.Variable``, ...) with the state's name, shape and layout.
        """
        self._check_unmodified()
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            name = '%sbegin_state_%d' % (self._prefix, self._init_counter)
            states.append(_call_state_func(func, name, kwargs))
        return states

    def unpack_weights(self, args):
        """Split the fused gate weights of this cell in ``args`` ({name: NDArray}) into
        one weight and bias per gate (``lstm_i2h_i_weight`` ...); returns a new dict."""
        args = args.copy()
        if not self._gate_names:
            return args
        h = self._num_hidden
        for group in ['i2h', 'h2h']:
            weight = args.pop('%s%s_weight' % (self._prefix, group))
            bias = args.pop('%s%s_bias' % (self._prefix, group))
            for j, gate in enumerate(self._gate_names):
                args['%s%s%s_weight' % (self._prefix, group, gate)] = \
                    weight[j * h:(j + 1) * h].copy()
                args['%s%s%s_bias' % (self._prefix, group, gate)] = \
                    bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The inverse of :meth:`unpack_weights`."""
        args = args.copy()
        if not self._gate_names:
            return args
        for group in ['i2h', 'h2h']:
            weight, bias = [], []
            for gate in self._gate_names:
                weight.append(args.pop('%s%s%s_weight' % (self._prefix, group, gate)))
                bias.append(args.pop('%s%s%s_bias' % (self._prefix, group, gate)))
            args['%s%s_weight' % (self._prefix, group)] = nd.concatenate(weight)
            args['%s%s_bias' % (self._prefix, group)] = nd.concatenate(bias)
        return args

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        """Unroll the cell over ``length`` time steps.

        Parameters
        ----------
        length : int
            Number of steps.
        inputs : Symbol or list of Symbol
            One symbol in ``layout`` (N, T, C for 'NTC'), or ``length`` symbols (N, C).
        begin_state : list of Symbol, optional
            Initial states; zeros when None.
        layout : str
            'NTC' or 'TNC'.
        merge_outputs : bool or None
            True: one output symbol in ``layout``; False: a list per step; None:
            whichever is natural for the cell.

        Returns
        -------
        outputs : Symbol or list of Symbol
        states : list of Symbol
        """
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        states = begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


class _OneStateCell(BaseRNNCell):
    """A cell with one (N, num_hidden) state and plain i2h/h2h weights and biases."""

    def __init__(self, num_hidden, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get('i2h_weight')
        self._iB = self.params.get('i2h_bias')
        self._hW = self.params.get('h2h_weight')
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return [{'shape': (0, self._num_hidden), '__layout__': 'NC'}]


class RNNCell(_OneStateCell):
    """The simple RNN cell: ``h' = act(W_i x + b_i + W_h h + b_h)``.

    Parameters
    ----------
    num_hidden : int
    activation : str or callable, default 'tanh'
    prefix : str, default 'rnn_'
    params : RNNParams or None
    """

    def __init__(self, num_hidden, activation='tanh', prefix='rnn_', params=None):
        super().__init__(num_hidden, prefix=prefix, params=params)
        self._activation = activation

    @property
    def _gate_names(self):
        return ('',)

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden, name='%si2h' % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden, name='%sh2h' % name)
        output = self._get_activation(i2h + h2h, self._activation, name='%sout' % name)
        return output, [output]


class LSTMCell(BaseRNNCell):
    """The LSTM cell (gates in the order i, f, c, o).

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'lstm_'
    params : RNNParams or None
    forget_bias : float, default 1.0
        The initial forget-gate bias, set through ``init.LSTMBias`` on ``i2h_bias``.
    """

    def __init__(self, num_hidden, prefix='lstm_', params=None, forget_bias=1.0):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self.params.get('i2h_weight')
        self._hW = self.params.get('h2h_weight')
        self._iB = self.params.get('i2h_bias',
                                   init=initializer.LSTMBias(forget_bias=forget_bias))
        self._hB = self.params.get('h2h_bias')

    @property
    def state_info(self):
        return [{'shape': (0, self._num_hidden), '__layout__': 'NC'},
                {'shape': (0, self._num_hidden), '__layout__': 'NC'}]

    @property
    def _gate_names(self):
        return ['_i', '_f', '_c', '_o']

    def __call__(self, inputs, states):
        self._counter += 1
        name = '%st%d_' % (self._prefix, self._counter)
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden * 4, name='%si2h' % name)
        h2h = symbol.FullyConnected(data=states[0], weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 4, name='%sh2h' % name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name='%sslice' % name)
        in_gate = symbol.Activation(gates[0], act_type='sigmoid', name='%si' % name)
        forget_gate = symbol.Activation(gates[1], act_type='sigmoid', name='%sf' % name)
        in_transform = symbol.Activation(gates[2], act_type='tanh', name='%sc' % name)
        out_gate = symbol.Activation(gates[3], act_type='sigmoid', name='%so' % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform,
                                        name='%sstate' % name)
        next_h = symbol._internal._mul(out_gate, symbol.Activation(next_c, act_type='tanh'),
                                       name='%sout' % name)
        return next_h, [next_h, next_c]


class GRUCell(_OneStateCell):
    """The GRU cell in cuDNN's form (gates r, z, o; the reset gate scales ``W_h h + b_h``).

    Parameters
    ----------
    num_hidden : int
    prefix : str, default 'gru_'
    params : RNNParams or None
    """

    def __init__(self, num_hidden, prefix='gru_', params=None):
        super().__init__(num_hidden, prefix=prefix, params=params)

    @property
    def _gate_names(self):
        return ['_r', '_z', '_o']

    def __call__(self, inputs, states):
        self._counter += 1
        # NOTE: MXNet names these '<prefix>t0__i2h' (double underscore); kept as is.
        name = '%st%d_' % (self._prefix, self._counter)
        prev_h = states[0]
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=self._num_hidden * 3, name='%s_i2h' % name)
        h2h = symbol.FullyConnected(data=prev_h, weight=self._hW, bias=self._hB,
                                    num_hidden=self._num_hidden * 3, name='%s_h2h' % name)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name='%s_i2h_slice' % name)
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name='%s_h2h_slice' % name)
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type='sigmoid',
                                       name='%s_r_act' % name)
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type='sigmoid',
                                        name='%s_z_act' % name)
        next_h_tmp = symbol.Activation(i2h + reset_gate * h2h, act_type='tanh',
                                       name='%s_h_act' % name)
        next_h = symbol._internal._plus((1. - update_gate) * next_h_tmp, update_gate * prev_h,
                                        name='%sout' % name)
        return next_h, [next_h]


class SequentialRNNCell(BaseRNNCell):
    """A stack of cells: each cell's output is the next cell's input.

    Parameters
    ----------
    params : RNNParams or None
        Shared weights for all the cells added (then the cells must not be given any).
    """

    def __init__(self, params=None):
        super().__init__(prefix='', params=params)
        self._override_cell_params = params is not None
        self._cells = []

    def add(self, cell):
        """Append ``cell`` to the stack."""
        self._cells.append(cell)
        if self._override_cell_params:
            if not cell._own_params:
                raise ValueError("SequentialRNNCell.add: either specify params for "
                                 "SequentialRNNCell or for the child cells, not both")
            cell.params._params.update(self.params._params)
        self.params._params.update(cell.params._params)

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):  # pylint: disable=arguments-differ
        self._check_unmodified()
        return _cells_begin_state(self._cells, **kwargs)

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._cells:
            if isinstance(cell, BidirectionalCell):
                raise NotImplementedError("SequentialRNNCell: a BidirectionalCell cannot be "
                                          "stepped; use unroll")
            n = len(cell.state_info)
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.append(state)
        return inputs, sum(next_states, [])

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        num_cells = len(self._cells)
        if begin_state is None:
            begin_state = self.begin_state()
        p = 0
        next_states = []
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(
                length, inputs=inputs, begin_state=states, layout=layout,
                merge_outputs=None if i < num_cells - 1 else merge_outputs)
            next_states.extend(states)
        return inputs, next_states


class DropoutCell(BaseRNNCell):
    """Dropout on the inputs (no states); for use inside a :class:`SequentialRNNCell`.

    Parameters
    ----------
    dropout : float
    prefix : str, default 'dropout_'
    params : RNNParams or None
    """

    def __init__(self, dropout, prefix='dropout_', params=None):
        super().__init__(prefix, params)
        if not isinstance(dropout, Number):
            raise TypeError("DropoutCell: dropout must be a number, got %s"
                            % type(dropout).__name__)
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """The base class of cells that wrap another cell (``base_cell``), which must then
    be used only through the wrapper."""

    def __init__(self, base_cell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self):
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self):
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs):  # pylint: disable=arguments-differ
        self._check_unmodified()
        # containers pass ``func=`` to every child cell, as BaseRNNCell names it
        init_sym = kwargs.pop('func', init_sym)
        self.base_cell._modified = False
        begin = self.base_cell.begin_state(init_sym, **kwargs)
        self.base_cell._modified = True
        return begin

    def unpack_weights(self, args):
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args):
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError()


class ZoneoutCell(ModifierCell):
    """Zoneout on the outputs and states of ``base_cell``: in training, each unit keeps
    its previous value with probability ``zoneout_outputs`` / ``zoneout_states``.

    Parameters
    ----------
    base_cell : BaseRNNCell
    zoneout_outputs : float, default 0
    zoneout_states : float, default 0
    """

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        from .fused_rnn_cell import FusedRNNCell
        if isinstance(base_cell, (FusedRNNCell, BidirectionalCell)):
            raise TypeError("ZoneoutCell: %s cannot be stepped; apply zoneout to the "
                            "cells inside it (unfuse a FusedRNNCell first)"
                            % type(base_cell).__name__)
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self):
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        p_out, p_states = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)
        # NOTE: MXNet uses zeros((0, 0)) for the first previous output; zeros_like gives
        # the same values with a shape mxlite can infer.
        prev_output = (self.prev_output if self.prev_output is not None
                       else symbol.zeros_like(next_output))
        output = (symbol.where(mask(p_out, next_output), next_output, prev_output)
                  if p_out != 0. else next_output)
        states = ([symbol.where(mask(p_states, new), new, old)
                   for new, old in zip(next_states, states)]
                  if p_states != 0. else next_states)
        self.prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the input to the output of ``base_cell`` (Wu et al., 2016).

    Parameters
    ----------
    base_cell : BaseRNNCell
    """

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name='%s_plus_residual' % output.name)
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        outputs, states = self.base_cell.unroll(length, inputs=inputs, begin_state=begin_state,
                                                layout=layout, merge_outputs=merge_outputs)
        self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, symbol.Symbol)
        inputs, _ = _normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            outputs = symbol.elemwise_add(outputs, inputs,
                                          name='%s_plus_residual' % outputs.name)
        else:
            outputs = [symbol.elemwise_add(o, i, name='%s_plus_residual' % o.name)
                       for o, i in zip(outputs, inputs)]
        return outputs, states


class BidirectionalCell(BaseRNNCell):
    """Runs ``l_cell`` forwards and ``r_cell`` backwards in time and concatenates their
    outputs on the feature axis.

    Parameters
    ----------
    l_cell, r_cell : BaseRNNCell
    params : RNNParams or None
    output_prefix : str, default 'bi_'
    """

    def __init__(self, l_cell, r_cell, params=None, output_prefix='bi_'):
        super().__init__('', params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        if self._override_cell_params:
            if not (l_cell._own_params and r_cell._own_params):
                raise ValueError("BidirectionalCell: either specify params for "
                                 "BidirectionalCell or for the child cells, not both")
            l_cell.params._params.update(self.params._params)
            r_cell.params._params.update(self.params._params)
        self.params._params.update(l_cell.params._params)
        self.params._params.update(r_cell.params._params)
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args):
        return _cells_unpack_weights(self._cells, args)

    def pack_weights(self, args):
        return _cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    @property
    def state_info(self):
        return _cells_state_info(self._cells)

    def begin_state(self, **kwargs):  # pylint: disable=arguments-differ
        self._check_unmodified()
        return _cells_begin_state(self._cells, **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        l_cell, r_cell = self._cells
        n_l = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=begin_state[:n_l],
                                            layout=layout, merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=begin_state[n_l:],
                                            layout=layout, merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = (isinstance(l_outputs, symbol.Symbol)
                             and isinstance(r_outputs, symbol.Symbol))
            if not merge_outputs:
                l_outputs = self._as_list(l_outputs, axis, length)
                r_outputs = self._as_list(r_outputs, axis, length)
        if merge_outputs:
            l_outputs = [l_outputs]
            r_outputs = [symbol.reverse(r_outputs, axis=axis)]
        else:
            r_outputs = list(reversed(r_outputs))
        outputs = [symbol.Concat(l_o, r_o, dim=1 + merge_outputs,
                                 name=('%sout' % self._output_prefix if merge_outputs
                                       else '%st%d' % (self._output_prefix, i)))
                   for i, (l_o, r_o) in enumerate(zip(l_outputs, r_outputs))]
        if merge_outputs:
            outputs = outputs[0]
        return outputs, [l_states, r_states]

    @staticmethod
    def _as_list(outputs, axis, length):
        if isinstance(outputs, symbol.Symbol):
            return list(symbol.SliceChannel(outputs, axis=axis, num_outputs=length,
                                            squeeze_axis=1))
        return outputs


# Names MXNet's module also shows, served from where they live in mxlite.
from .._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "FusedRNN": "mxlite.rnn.fused_rnn_cell",
    "FusedRNNCell": "mxlite.rnn.fused_rnn_cell",
    "BaseConvRNNCell": "mxlite.rnn.conv_rnn_cell",
    "ConvGRUCell": "mxlite.rnn.conv_rnn_cell",
    "ConvLSTMCell": "mxlite.rnn.conv_rnn_cell",
    "ConvRNNCell": "mxlite.rnn.conv_rnn_cell",
    "init": "mxlite.initializer:",
    "ndarray": "mxlite.nd:",
    "numeric_types": "mxlite.base",
    "string_types": "mxlite.base",
})
