"""``FusedRNNCell``: every layer and direction of a legacy RNN as one ``RNN`` op with one
packed parameter vector, and ``FusedRNN``, the initializer of that vector."""
from .. import symbol, initializer, nd
from .rnn_cell import (BaseRNNCell, BidirectionalCell, DropoutCell, GRUCell, LSTMCell, RNNCell,
                       SequentialRNNCell, _normalize_sequence)

__all__ = ["FusedRNN", "FusedRNNCell"]


@initializer.register
class FusedRNN(initializer.Initializer):
    """Initialise the packed ``parameters`` vector of a :class:`FusedRNNCell` gate by gate:
    each unpacked weight with ``init`` (the global initializer when None), LSTM forget-gate
    biases with ``forget_bias``.

    Parameters
    ----------
    init : Initializer, str or None
    num_hidden, num_layers : int
    mode : str
    bidirectional : bool
    forget_bias : float
    """

    def __init__(self, init=None, num_hidden=None, num_layers=None, mode=None,
                 bidirectional=False, forget_bias=1.0):
        if isinstance(init, str):
            init = initializer.create(init)
        kwargs = dict(num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                      bidirectional=bidirectional, forget_bias=forget_bias)
        # NOTE: MXNet also dumps init=null; mx.init.create(name, init=...) would clash
        # with create's own first argument, so a None init is left out of the JSON.
        if init is not None:
            kwargs['init'] = init.dumps()
        super().__init__(**kwargs)
        self._init = init
        self._cell_args = (num_hidden, num_layers, mode, bidirectional)
        self._forget_bias = forget_bias
        self._mode = mode

    def _init_weight(self, desc, arr):
        cell = FusedRNNCell(*self._cell_args, forget_bias=self._forget_bias, prefix='')
        args = cell.unpack_weights({'parameters': arr})
        for name in args:
            arg_desc = initializer.InitDesc(name, global_init=desc.global_init)
            if self._mode == 'lstm' and name.endswith('_f_bias'):
                args[name][:] = self._forget_bias
            elif self._init is None:
                desc.global_init(arg_desc, args[name])
            else:
                self._init(arg_desc, args[name])
        arr[:] = cell.pack_weights(args)['parameters']


class FusedRNNCell(BaseRNNCell):
    """All layers and directions of an RNN as one ``RNN`` op with one packed
    ``<prefix>parameters`` vector (laid out as MXNet/cuDNN: every layer's weights, then
    every layer's biases).

    Parameters
    ----------
    num_hidden : int
    num_layers : int, default 1
    mode : str, default 'lstm'
        'rnn_relu', 'rnn_tanh', 'lstm' or 'gru'.
    bidirectional : bool, default False
    dropout : float, default 0
    get_next_state : bool, default False
        Also return the final states.
    forget_bias : float, default 1.0
    prefix : str, default '<mode>_'
    params : RNNParams or None
    """

    def __init__(self, num_hidden, num_layers=1, mode='lstm', bidirectional=False,
                 dropout=0., get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        if prefix is None:
            prefix = '%s_' % mode
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._directions = ['l', 'r'] if bidirectional else ['l']
        init = FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter = self.params.get('parameters', init=init)

    @property
    def state_info(self):
        b = self._bidirectional + 1
        n = (self._mode == 'lstm') + 1
        return [{'shape': (b * self._num_layers, 0, self._num_hidden), '__layout__': 'LNC'}
                for _ in range(n)]

    @property
    def _gate_names(self):
        return {'rnn_relu': [''], 'rnn_tanh': [''], 'lstm': ['_i', '_f', '_c', '_o'],
                'gru': ['_r', '_z', '_o']}[self._mode]

    def _slice_weights(self, arr, li, lh):
        """Views of ``arr`` per layer, direction, gate: ``{name: NDArray}``."""
        args = {}
        b = len(self._directions)
        p = 0
        for layer in range(self._num_layers):
            for direction in self._directions:
                cols = li if layer == 0 else b * lh
                for gate in self._gate_names:
                    name = '%s%s%d_i2h%s_weight' % (self._prefix, direction, layer, gate)
                    args[name] = arr[p:p + lh * cols].reshape((lh, cols))
                    p += lh * cols
                for gate in self._gate_names:
                    name = '%s%s%d_h2h%s_weight' % (self._prefix, direction, layer, gate)
                    args[name] = arr[p:p + lh * lh].reshape((lh, lh))
                    p += lh * lh
        for layer in range(self._num_layers):
            for direction in self._directions:
                for group in ['i2h', 'h2h']:
                    for gate in self._gate_names:
                        name = '%s%s%d_%s%s_bias' % (self._prefix, direction, layer, group,
                                                     gate)
                        args[name] = arr[p:p + lh]
                        p += lh
        if p != arr.size:
            raise ValueError("FusedRNNCell: the parameters have %d elements, the layout "
                             "needs %d" % (arr.size, p))
        return args

    def unpack_weights(self, args):
        args = args.copy()
        arr = args.pop(self._parameter.name)
        b = len(self._directions)
        m = len(self._gate_names)
        h = self._num_hidden
        num_input = arr.size // b // h // m - (self._num_layers - 1) * (h + b * h + 2) - h - 2
        args.update({name: v.copy()
                     for name, v in self._slice_weights(arr, num_input, h).items()})
        return args

    def pack_weights(self, args):
        args = args.copy()
        b = len(self._directions)
        m = len(self._gate_names)
        h = self._num_hidden
        w0 = args['%sl0_i2h%s_weight' % (self._prefix, self._gate_names[0])]
        num_input = w0.shape[1]
        total = ((num_input + h + 2) * h * m * b
                 + (self._num_layers - 1) * m * h * (h + b * h + 2) * b)
        arr = nd.zeros((total,), ctx=w0.context, dtype=w0.dtype)
        for name, view in self._slice_weights(arr, num_input, h).items():
            view[:] = args.pop(name)
        args[self._parameter.name] = arr
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("FusedRNNCell cannot be stepped. Please use unroll")

    def unroll(self, length, inputs, begin_state=None, layout='NTC', merge_outputs=None):
        self.reset()
        inputs, axis = _normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise ValueError("FusedRNNCell: unsupported layout %r" % layout)
        if begin_state is None:
            begin_state = self.begin_state()
        names = ['state', 'state_cell'] if self._mode == 'lstm' else ['state']
        rnn = symbol.RNN(data=inputs, parameters=self._parameter,
                         state_size=self._num_hidden, num_layers=self._num_layers,
                         bidirectional=self._bidirectional, p=self._dropout,
                         state_outputs=self._get_next_state, mode=self._mode,
                         name=self._prefix + 'rnn', **dict(zip(names, begin_state)))
        if self._get_next_state:
            outputs, states = rnn[0], [rnn[i] for i in range(1, len(names) + 1)]
        else:
            outputs, states = rnn, []
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = _normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The same network as a :class:`SequentialRNNCell` of unfused cells (with the
        names :meth:`unpack_weights` gives), which can be stepped."""
        make = {'rnn_relu': lambda pre: RNNCell(self._num_hidden, activation='relu',
                                                prefix=pre),
                'rnn_tanh': lambda pre: RNNCell(self._num_hidden, activation='tanh',
                                                prefix=pre),
                'lstm': lambda pre: LSTMCell(self._num_hidden, prefix=pre),
                'gru': lambda pre: GRUCell(self._num_hidden, prefix=pre)}[self._mode]
        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make('%sl%d_' % (self._prefix, i)),
                                            make('%sr%d_' % (self._prefix, i)),
                                            output_prefix='%sbi_l%d_' % (self._prefix, i)))
            else:
                stack.add(make('%sl%d_' % (self._prefix, i)))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix='%s_dropout%d_' % (self._prefix, i)))
        return stack
