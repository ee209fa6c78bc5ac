"""Convolutional cells of the legacy symbolic RNN API (``mx.rnn.ConvRNNCell``,
``ConvLSTMCell``, ``ConvGRUCell``): the fully connected i2h/h2h maps of the plain cells
become convolutions, so states are feature maps."""
import functools

from .. import symbol
from .rnn_cell import BaseRNNCell

__all__ = ["BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]

_LEAKY = functools.partial(symbol.LeakyReLU, act_type="leaky", slope=0.2)


class BaseConvRNNCell(BaseRNNCell):
    """Common part of the convolutional cells: the i2h convolution (``i2h_kernel``,
    ``i2h_stride``, ``i2h_pad``, ``i2h_dilate``) and the h2h one (odd ``h2h_kernel``,
    padded to keep the state's size); states have the shape of the i2h output for
    ``input_shape`` (batch 0). The cells take these arguments in this order, with
    MXNet's defaults; ``prefix`` defaults to the cell's (``'ConvLSTM_'``, ...)."""

    _default_prefix = ""
    _num_states = 2

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", activation=_LEAKY,
                 prefix=None, params=None, conv_layout="NCHW"):
        super().__init__(prefix=self._default_prefix if prefix is None else prefix,
                         params=params)
        if any(k % 2 == 0 for k in h2h_kernel):
            raise ValueError("%s: h2h_kernel must be odd, got %s"
                             % (type(self).__name__, tuple(h2h_kernel)))
        self._h2h_kernel, self._h2h_dilate = tuple(h2h_kernel), tuple(h2h_dilate)
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(h2h_dilate, h2h_kernel))
        self._i2h_kernel, self._i2h_stride = tuple(i2h_kernel), tuple(i2h_stride)
        self._i2h_pad, self._i2h_dilate = tuple(i2h_pad), tuple(i2h_dilate)
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        probe = symbol.Convolution(data=symbol.Variable("data"), num_filter=num_hidden,
                                   kernel=self._i2h_kernel, stride=self._i2h_stride,
                                   pad=self._i2h_pad, dilate=self._i2h_dilate,
                                   layout=conv_layout)
        self._state_shape = (0,) + tuple(probe.infer_shape(data=input_shape)[1][0][1:])
        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}] * self._num_states

    def _step(self, inputs, states):
        """The next step's name prefix and its i2h and h2h convolutions."""
        self._counter += 1
        name = "%st%d_" % (self._prefix, self._counter)
        return (name,) + self._conv_forward(inputs, states, name)

    def _conv_forward(self, inputs, states, name):
        n = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(name="%si2h" % name, data=inputs, num_filter=n,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate, weight=self._iW,
                                 bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name="%sh2h" % name, data=states[0], num_filter=n,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1, 1), weight=self._hW,
                                 bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError("BaseConvRNNCell is the abstract base of the convolutional "
                                  "cells: use ConvRNNCell, ConvLSTMCell or ConvGRUCell")


class ConvRNNCell(BaseConvRNNCell):
    """``h' = act(conv_i(x) + conv_h(h))``; ``activation`` defaults to a leaky ReLU of
    slope 0.2."""

    _default_prefix = "ConvRNN_"
    _num_states = 1

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        name, i2h, h2h = self._step(inputs, states)
        output = self._get_activation(i2h + h2h, self._activation, name="%sout" % name)
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """The LSTM with convolutions (Shi et al., 2015): gates i, f, c, o along the channel
    axis; ``activation`` (leaky ReLU by default) for the candidate and the output."""

    _default_prefix = "ConvLSTM_"

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        name, i2h, h2h = self._step(inputs, states)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4,
                                    axis=self._conv_layout.find("C"), name="%sslice" % name)
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name="%si" % name)
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name="%sf" % name)
        in_transform = self._get_activation(gates[2], self._activation, name="%sc" % name)
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name="%so" % name)
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform,
                                        name="%sstate" % name)
        next_h = symbol._internal._mul(out_gate, self._get_activation(next_c, self._activation),
                                       name="%sout" % name)
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """The GRU with convolutions: reset and update gates, then
    ``h' = (1 - z) * act(i2h + r * h2h) + z * h``."""

    _default_prefix = "ConvGRU_"
    _num_states = 1

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        name, i2h, h2h = self._step(inputs, states)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name="%s_i2h_slice" % name)
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name="%s_h2h_slice" % name)
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name="%s_r_act" % name)
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid",
                                        name="%s_z_act" % name)
        next_h_tmp = self._get_activation(i2h + reset_gate * h2h, self._activation,
                                          name="%s_h_act" % name)
        next_h = symbol._internal._plus((1. - update_gate) * next_h_tmp, update_gate * states[0],
                                        name="%sout" % name)
        return next_h, [next_h]
