r"""Convolutional recurrent cells (Shi et al., 2015, "Convolutional LSTM Network"):
RNN, LSTM and GRU cells whose input-to-state and state-to-state maps are convolutions.

``i2h`` is a convolution of the input (``i2h_kernel``, ``i2h_pad``, ``i2h_dilate``,
stride 1); ``h2h`` a convolution of the first state padded to keep its size (odd
``h2h_kernel``, ``h2h_dilate``). The state shape follows from ``input_shape``:
``(hidden_channels,) + i2h output size`` for channels-first layouts. Gates are stacked
along the channel axis in MXNet's order (LSTM ``i, f, c, o``; GRU ``r, z, n``).

>>> cell = mx.gluon.contrib.rnn.Conv2DLSTMCell((3, 8, 8), 4, i2h_kernel=3, h2h_kernel=3,
...                                            i2h_pad=1)
>>> cell.initialize()
>>> y, (h, c) = cell(mx.nd.ones((2, 3, 8, 8)), cell.begin_state(2))
>>> y.shape
(2, 4, 8, 8)
"""
from math import floor

from ...nn.conv_layers import channels_first_axes, channels_last_axes
from ...parameter import _AssertError
from ...rnn._cell_utils import _get_activation
from ...rnn.rnn_cell import HybridRecurrentCell

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell",
           "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell"]

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _get_conv_out_size(dimensions, kernels, paddings, dilations):
    """Stride-1 convolution output size per spatial dim (0 stays 0: unknown)."""
    return tuple(int(floor(x + 2 * p - d * (k - 1) - 1) + 1) if x else 0
                 for x, k, p, d in zip(dimensions, kernels, paddings, dilations))


def _spec(value, dims, name):
    """A convolution setting as a ``dims``-tuple of ints (an int is repeated)."""
    if isinstance(value, int):
        return (value,) * dims
    if not isinstance(value, (list, tuple)) or len(value) != dims:
        raise _AssertError("For {dims}D convolution, the convolution settings can only be "
                           "either int or list/tuple of length {dims}; {name}={value!r}"
                           .format(dims=dims, name=name, value=value))
    return tuple(int(v) for v in value)


class _BaseConvRNNCell(HybridRecurrentCell):
    """Parameters, shapes and the two convolutions shared by the convolutional cells."""
    _gate_names = ()

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                 i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout, activation,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        cls = type(self).__name__
        if conv_layout not in _LAYOUTS[dims]:
            raise ValueError("%s: conv_layout must be one of %s, got %r"
                             % (cls, _LAYOUTS[dims], conv_layout))
        input_shape = tuple(input_shape)
        if len(input_shape) != dims + 1:
            raise ValueError("%s: input_shape must have %d entries (channels and %d spatial "
                             "sizes, as laid out by %s), got %r"
                             % (cls, dims + 1, dims, conv_layout, input_shape))
        self._hidden_channels = hidden_channels
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        self._dims = dims
        self._i2h_kernel = _spec(i2h_kernel, dims, "i2h_kernel")
        self._stride = (1,) * dims
        self._i2h_pad = _spec(i2h_pad, dims, "i2h_pad")
        self._i2h_dilate = _spec(i2h_dilate, dims, "i2h_dilate")
        self._h2h_kernel = _spec(h2h_kernel, dims, "h2h_kernel")
        if not all(k % 2 == 1 for k in self._h2h_kernel):
            raise _AssertError("Only support odd number, get h2h_kernel= %s" % str(h2h_kernel))
        self._h2h_dilate = _spec(h2h_dilate, dims, "h2h_dilate")
        (self._channel_axis, self._in_channels, i2h_shape, h2h_shape, self._h2h_pad,
         self._state_shape) = self._decide_shapes()
        rows = hidden_channels * self._num_gates
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_shape,
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_shape,
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(rows,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(rows,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    def reset(self):
        """Reset the step counters. An activation Block (a child, so that it hybridizes
        and its parameters are collected) has none: MXNet's ``reset`` calls it anyway
        and fails, so ``unroll`` with e.g. ``activation=nn.LeakyReLU(0.1)`` breaks there."""
        self._init_counter = -1
        self._counter = -1
        for child in self._children.values():
            if hasattr(child, "reset"):
                child.reset()

    def _decide_shapes(self):
        """Channel axis, input channels, weight shapes, h2h padding and state shape."""
        channel_axis = self._conv_layout.find("C")
        channels_first = channel_axis == 1
        in_channels = self._input_shape[channel_axis - 1]
        dimensions = self._input_shape[1:] if channels_first else self._input_shape[:-1]
        rows = self._hidden_channels * self._num_gates
        out_size = _get_conv_out_size(dimensions, self._i2h_kernel, self._i2h_pad,
                                      self._i2h_dilate)
        h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate, self._h2h_kernel))
        if channels_first:
            i2h_shape = (rows, in_channels) + self._i2h_kernel
            h2h_shape = (rows, self._hidden_channels) + self._h2h_kernel
            state_shape = (self._hidden_channels,) + out_size
        else:
            i2h_shape = (rows,) + self._i2h_kernel + (in_channels,)
            h2h_shape = (rows,) + self._h2h_kernel + (self._hidden_channels,)
            state_shape = out_size + (self._hidden_channels,)
        return channel_axis, in_channels, i2h_shape, h2h_shape, h2h_pad, state_shape

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}
                for _ in range(self._num_states)]

    def __repr__(self):
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channel_axis == 1 else -1]
        mapping = "{0} -> {1}".format(in_channels if in_channels else None, shape[0])
        return "{name}({mapping}, {act}, {layout})".format(
            name=type(self).__name__, mapping=mapping, act=self._activation,
            layout=self._conv_layout)

    def _convolution(self, F, x, weight, bias, kernel, pad, dilate, name):
        num_filter = self._hidden_channels * self._num_gates
        if self._channel_axis == 1:
            return F.Convolution(x, weight, bias, num_filter=num_filter, kernel=kernel,
                                 stride=self._stride, pad=pad, dilate=dilate,
                                 layout=self._conv_layout, name=name)
        # NOTE: mxlite's Convolution is channels-first only: a channels-last cell moves
        # the channels of the data and of the (O, k..., I) weight to axis 1 and back.
        ndim = self._dims + 2
        first = channels_first_axes(ndim)
        y = F.Convolution(F.transpose(x, axes=first), F.transpose(weight, axes=first), bias,
                          num_filter=num_filter, kernel=kernel, stride=self._stride, pad=pad,
                          dilate=dilate, name=name)
        return F.transpose(y, axes=channels_last_axes(ndim))

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias,
                      prefix):
        i2h = self._convolution(F, inputs, i2h_weight, i2h_bias, self._i2h_kernel,
                                self._i2h_pad, self._i2h_dilate, prefix + "i2h")
        h2h = self._convolution(F, states[0], h2h_weight, h2h_bias, self._h2h_kernel,
                                self._h2h_pad, self._h2h_dilate, prefix + "h2h")
        return i2h, h2h


class _ConvRNNCell(_BaseConvRNNCell):
    """``h' = act(W * x + b_i + R * h + b_h)``."""
    _gate_names = ("",)
    _num_states = 1

    def _alias(self):
        return "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        output = _get_activation(F, i2h + h2h, self._activation)
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    """Gates ``i, f, c, o`` on the channel axis; ``activation`` (tanh by default) acts on
    the candidate and on the new cell state, as in MXNet."""
    _gate_names = ("_i", "_f", "_c", "_o")
    _num_states = 2

    def _alias(self):
        return "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, axis=self._channel_axis,
                               name=prefix + "slice")
        in_gate = F.Activation(gates[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(gates[1], act_type="sigmoid", name=prefix + "f")
        in_transform = _get_activation(F, gates[2], self._activation)
        out_gate = F.Activation(gates[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, _get_activation(F, next_c, self._activation),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    """Gates ``r, z`` and candidate ``n = act(W_n * x + b + r (R_n * h + b))``."""
    _gate_names = ("_r", "_z", "_o")
    _num_states = 1

    def _alias(self):
        return "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = "t%d_" % self._counter
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias, prefix)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, axis=self._channel_axis,
                                           name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, axis=self._channel_axis,
                                           name=prefix + "h2h_slice")
        reset_gate = F.Activation(i2h_r + h2h_r, act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(i2h_z + h2h_z, act_type="sigmoid", name=prefix + "z_act")
        candidate = _get_activation(F, i2h + reset_gate * h2h, self._activation)
        next_h = F.elemwise_add((1. - update_gate) * candidate, update_gate * states[0],
                                name=prefix + "out")
        return next_h, [next_h]


_PARAMS_DOC = """
    Parameters
    ----------
    input_shape : tuple of int
        Shape of one step of one sample, laid out as ``conv_layout`` without ``N``:
        e.g. ``{example}`` for ``'{layout}'``.
    hidden_channels : int
        Number of channels of the output and states.
    i2h_kernel : int or tuple of int
        Kernel of the input convolution.
    h2h_kernel : int or tuple of int
        Kernel of the recurrent convolution; odd sizes only (the state keeps its size).
    i2h_pad : int or tuple of int, default {zeros}
        Padding of the input convolution.
    i2h_dilate, h2h_dilate : int or tuple of int, default {ones}
        Dilations of the input and recurrent convolutions.
    i2h_weight_initializer, h2h_weight_initializer : str or Initializer, optional
    i2h_bias_initializer, h2h_bias_initializer : str or Initializer, default 'zeros'
    conv_layout : {{'{layout}', '{last}'}}, default '{layout}'
        Layout of inputs, states and weights.
    activation : str or Block, default 'tanh'
        Activation name (``'tanh'``, ``'relu'``, ``'sigmoid'``, ``'softsign'`` or any
        ``Activation`` act_type) or a Block such as ``nn.LeakyReLU(0.1)``.
    prefix : str, optional
        Default ``'{alias}<n>_'``.
    params : ParameterDict, optional
        Parameters to share.
"""


def _make_cell(base, dims, alias, title, formula):
    """A public cell class: ``base`` with MXNet's ``dims``-D defaults and docstring."""
    zeros, ones = (0,) * dims, (1,) * dims
    layout, last = _LAYOUTS[dims]
    example = "(C, " + ", ".join(layout[2:]) + ")"

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=zeros,
                 i2h_dilate=ones, h2h_dilate=ones, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout=layout, activation="tanh",
                 prefix=None, params=None):
        base.__init__(self, input_shape=input_shape, hidden_channels=hidden_channels,
                      i2h_kernel=i2h_kernel, h2h_kernel=h2h_kernel, i2h_pad=i2h_pad,
                      i2h_dilate=i2h_dilate, h2h_dilate=h2h_dilate,
                      i2h_weight_initializer=i2h_weight_initializer,
                      h2h_weight_initializer=h2h_weight_initializer,
                      i2h_bias_initializer=i2h_bias_initializer,
                      h2h_bias_initializer=h2h_bias_initializer, dims=dims,
                      conv_layout=conv_layout, activation=activation, prefix=prefix,
                      params=params)

    name = "Conv%dD%sCell" % (dims, title)
    doc = "%dD convolutional %s cell.\n\n    .. math::\n%s\n%s" % (
        dims, title, formula, _PARAMS_DOC.format(example=example, layout=layout, last=last,
                                                 zeros=zeros, ones=ones, alias=alias))
    __init__.__qualname__ = name + ".__init__"
    return type(name, (base,), {"__init__": __init__, "__doc__": doc,
                                "__module__": __name__})


_RNN_MATH = r"""        h_t = \tanh(W_i \ast x_t + R_i \ast h_{t-1} + b_i)"""
_LSTM_MATH = r"""        \begin{array}{ll}
        i_t = \sigma(W_i \ast x_t + R_i \ast h_{t-1} + b_i) \\
        f_t = \sigma(W_f \ast x_t + R_f \ast h_{t-1} + b_f) \\
        o_t = \sigma(W_o \ast x_t + R_o \ast h_{t-1} + b_o) \\
        c^\prime_t = \tanh(W_c \ast x_t + R_c \ast h_{t-1} + b_c) \\
        c_t = f_t \circ c_{t-1} + i_t \circ c^\prime_t \\
        h_t = o_t \circ \tanh(c_t)
        \end{array}"""
_GRU_MATH = r"""        \begin{array}{ll}
        r_t = \sigma(W_r \ast x_t + R_r \ast h_{t-1} + b_r) \\
        z_t = \sigma(W_z \ast x_t + R_z \ast h_{t-1} + b_z) \\
        n_t = \tanh(W_i \ast x_t + b_i + r_t \circ (R_n \ast h_{t-1} + b_n)) \\
        h_t = (1 - z_t) \circ n_t + z_t \circ h_{t-1}
        \end{array}"""

Conv1DRNNCell = _make_cell(_ConvRNNCell, 1, "conv_rnn", "RNN", _RNN_MATH)
Conv2DRNNCell = _make_cell(_ConvRNNCell, 2, "conv_rnn", "RNN", _RNN_MATH)
Conv3DRNNCell = _make_cell(_ConvRNNCell, 3, "conv_rnn", "RNN", _RNN_MATH)
Conv1DLSTMCell = _make_cell(_ConvLSTMCell, 1, "conv_lstm", "LSTM", _LSTM_MATH)
Conv2DLSTMCell = _make_cell(_ConvLSTMCell, 2, "conv_lstm", "LSTM", _LSTM_MATH)
Conv3DLSTMCell = _make_cell(_ConvLSTMCell, 3, "conv_lstm", "LSTM", _LSTM_MATH)
Conv1DGRUCell = _make_cell(_ConvGRUCell, 1, "conv_gru", "GRU", _GRU_MATH)
Conv2DGRUCell = _make_cell(_ConvGRUCell, 2, "conv_gru", "GRU", _GRU_MATH)
Conv3DGRUCell = _make_cell(_ConvGRUCell, 3, "conv_gru", "GRU", _GRU_MATH)
