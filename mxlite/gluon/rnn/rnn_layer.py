"""Recurrent layers ``RNN``, ``LSTM`` and ``GRU``: whole sequences through the fused
``RNN`` operator.

Each layer holds MXNet's per-layer, per-direction parameters ``l0_i2h_weight``,
``l0_h2h_weight``, ``l0_i2h_bias``, ``l0_h2h_bias`` (``r0_...`` for the backward
direction, ``l1_...`` for the second layer) and concatenates them in the operator's
flat layout at each forward pass, so the gradient reaches each of them. A layer
computes exactly what the matching cells unrolled over the sequence compute
(:meth:`_RNNLayer._unfuse` builds them, sharing the layer's parameters).

>>> layer = mx.gluon.rnn.LSTM(20, num_layers=2)
>>> layer.initialize()
>>> x = mx.nd.ones((5, 3, 10))                     # (T, N, C)
>>> out, (h, c) = layer(x, layer.begin_state(batch_size=3))
>>> out.shape, h.shape
((5, 3, 20), (2, 3, 20))
"""
import numbers
import re

import numpy as np

from ... import nd
from ...base import MXNetError, check_nbytes
from ..block import HybridBlock
from . import rnn_cell
from ._cell_utils import _is_tensor, _make_state

__all__ = ["RNN", "LSTM", "GRU"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


class _RNNLayer(HybridBlock):
    """Implementation of the recurrent layers (see :class:`RNN`, :class:`LSTM`,
    :class:`GRU` for the parameters)."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size=None, h2r_weight_initializer=None,
                 lstm_state_clip_min=None, lstm_state_clip_max=None, lstm_state_clip_nan=False,
                 dtype="float32", use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise ValueError("Invalid layout %s; must be one of ['TNC' or 'NTC']" % (layout,))
        if projection_size:
            raise MXNetError("%s: projection_size is not supported (the RNN operator of mxlite "
                             "has no LSTM projection)" % type(self).__name__)
        self._hidden_size = hidden_size
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self._gates = _GATES[mode]
        rows, n_in = self._gates * hidden_size, input_size
        name = type(self).__name__
        for arg, v in (("hidden_size", hidden_size), ("num_layers", num_layers)):
            if not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError("%s: %s must be a positive integer, got %r" % (name, arg, v))
        # the h2h weights and biases alone (the i2h ones need the input size): a size
        # no machine holds fails here, not after minutes of creating Parameters
        check_nbytes(name, "num_layers=%d with hidden_size=%d" % (num_layers, hidden_size),
                     num_layers * self._dir * rows * (hidden_size + 2) * np.dtype(dtype).itemsize)
        for i in range(num_layers):
            for j in self._directions():
                for name, shape, init in (
                        ("i2h_weight", (rows, n_in), i2h_weight_initializer),
                        ("h2h_weight", (rows, hidden_size), h2h_weight_initializer),
                        ("i2h_bias", (rows,), i2h_bias_initializer),
                        ("h2h_bias", (rows,), h2h_bias_initializer)):
                    self._register_param("%s%d_%s" % (j, i, name), shape, init, dtype)
            n_in = hidden_size * self._dir

    def _directions(self):
        return ["l", "r"][:self._dir]

    def _register_param(self, name, shape, init, dtype):
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True, dtype=dtype)
        setattr(self, name, p)
        return p

    def __repr__(self):
        s = "{name}({mapping}, {layout}"
        if self._num_layers != 1:
            s += ", num_layers={num_layers}"
        if self._dropout != 0:
            s += ", dropout={dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        s += ")"
        shape = self.l0_i2h_weight.shape
        mapping = "{0} -> {1}".format(shape[1] if shape[1] else None, shape[0] // self._gates)
        return s.format(name=type(self).__name__, mapping=mapping, layout=self._layout,
                        num_layers=self._num_layers, dropout=self._dropout)

    def _collect_params_with_prefix(self, prefix=""):
        """Structural names as MXNet saves them (``_unfused.0.l_cell.i2h_weight``), so
        that ``save_parameters`` files move between mxlite and MXNet."""
        if prefix:
            prefix += "."
        pattern = re.compile(r"(l|r)(\d+)_(i2h|h2h)_(weight|bias)\Z")
        bidirectional = self._dir == 2

        def convert_key(key):
            d, layer, g, t = pattern.match(key).groups()
            if bidirectional:
                return "_unfused.{}.{}_cell.{}_{}".format(layer, d, g, t)
            return "_unfused.{}.{}_{}".format(layer, g, t)

        ret = {prefix + convert_key(key): val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size=0):
        """Shapes of the states: ``(num_layers * directions, batch_size, hidden_size)``,
        one for ``h`` (and one for ``c`` for LSTM)."""
        info = {"shape": (self._num_layers * self._dir, batch_size, self._hidden_size),
                "__layout__": "LNC", "dtype": self._dtype}
        return [info, dict(info)] if self._mode == "lstm" else [info]

    def cast(self, dtype):
        self._dtype = dtype
        super().cast(dtype)

    def begin_state(self, batch_size=0, func=nd.zeros, **kwargs):
        """Initial recurrent states (zeros by default).

        Parameters
        ----------
        batch_size : int, default 0
        func : callable, default mx.nd.zeros
            Called with ``shape=`` and ``dtype=`` (and ``name=`` when it takes one)
            plus ``kwargs`` (``ctx=``...).

        Returns
        -------
        list of NDArray
            ``[h]``, or ``[h, c]`` for LSTM.
        """
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            info.update(kwargs)
            states.append(_make_state(func, "%sh0_%d" % (self.prefix, i), info))
        return states

    def __call__(self, inputs, states=None, sequence_length=None):
        """``out = layer(x)`` or ``out, states = layer(x, states)``.

        Parameters
        ----------
        inputs : NDArray
            ``(T, N, C)`` for layout 'TNC', ``(N, T, C)`` for 'NTC'.
        states : NDArray or list of NDArray, optional
            Initial states (see :meth:`begin_state`); zeros when left out, and then
            only the output is returned.
        sequence_length : NDArray, optional
            ``(N,)`` valid lengths, for a layer made with ``use_sequence_length=True``.
        """
        skip_states = states is None
        if skip_states:
            if isinstance(inputs, nd.NDArray):
                batch_size = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                from ... import symbol
                states = self.begin_state(0, func=symbol.zeros)
        if _is_tensor(states):
            states = [states]
        if self._use_sequence_length:
            if sequence_length is None:
                raise ValueError("%s was created with use_sequence_length=True: pass "
                                 "sequence_length, the (batch,) valid lengths"
                                 % type(self).__name__)
            out = super().__call__(inputs, states, sequence_length)
        elif sequence_length is not None:
            raise ValueError("%s: sequence_length was given but the layer was created without "
                             "use_sequence_length=True" % type(self).__name__)
        else:
            out = super().__call__(inputs, states)
        # NOTE: dropped here, not in hybrid_forward (as MXNet does): a hybridized
        # layer's graph is traced once and must not depend on how it was called.
        return out[0] if skip_states else out

    def _infer_param_shapes(self, x, *args):
        # The parameters reach the RNN operator concatenated, so the operator cannot
        # infer the first layer's input size: take it from the data.
        for d in self._directions():
            weight = getattr(self, "%s0_i2h_weight" % d)
            weight.shape = (weight.shape[0], x.shape[2])

    def _check_inputs(self, inputs, states):
        if inputs.ndim != 3:
            raise ValueError("%s: the input must be 3-D (%s), got shape %s"
                             % (type(self).__name__, self._layout, inputs.shape))
        n_in = self.l0_i2h_weight._shape[1]
        if n_in and inputs.shape[2] != n_in:
            raise ValueError("%s: the input has %d features (shape %s, layout %s) but the layer "
                             "expects input_size=%d" % (type(self).__name__, inputs.shape[2],
                                                        inputs.shape, self._layout, n_in))
        info = self.state_info(inputs.shape[self._layout.find("N")])
        if len(states) != len(info):
            raise ValueError("%s expects %d state arrays, got %d"
                             % (type(self).__name__, len(info), len(states)))
        for state, want in zip(states, info):
            if state.shape != want["shape"]:
                raise ValueError("Invalid recurrent state shape. Expecting %s, got %s."
                                 % (str(want["shape"]), str(state.shape)))

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **params):
        if isinstance(inputs, nd.NDArray):
            self._check_inputs(inputs, states)
        if sequence_length is not None:
            return self._forward_unfused(F, inputs, states, sequence_length)
        return self._forward_kernel(F, inputs, states, **params)

    def _flat_params(self, F, params):
        """The parameters in the RNN operator's order: all weights, then all biases,
        each by layer, direction, i2h then h2h."""
        flat = [params["%s%d_%s_%s" % (d, layer, g, t)].reshape((-1,))
                for t in ("weight", "bias") for layer in range(self._num_layers)
                for d in self._directions() for g in ("i2h", "h2h")]
        return F.concat(*flat, dim=0)

    def _forward_kernel(self, F, inputs, states, **params):
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        rnn = F.RNN(inputs, self._flat_params(F, params), *states,
                    state_size=self._hidden_size, num_layers=self._num_layers,
                    bidirectional=self._dir == 2, p=self._dropout, state_outputs=True,
                    mode=self._mode, lstm_state_clip_min=self._lstm_state_clip_min,
                    lstm_state_clip_max=self._lstm_state_clip_max,
                    lstm_state_clip_nan=self._lstm_state_clip_nan)
        outputs, states = rnn[0], [rnn[i] for i in range(1, 3 if self._mode == "lstm" else 2)]
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)
        return outputs, states

    def _forward_unfused(self, F, inputs, states, sequence_length):
        """Variable lengths through the equivalent cells: outputs past each sample's
        length are 0, the states are those after its last valid step, and the
        backward direction starts at that step."""
        if not isinstance(inputs, nd.NDArray):
            raise MXNetError("%s: use_sequence_length=True runs imperatively only (the number "
                             "of steps must be known)" % type(self).__name__)
        stack = self._unfuse()
        n_kinds = len(states)
        cell_states = [s[k] for k in range(self._num_layers * self._dir) for s in states]
        steps = inputs.shape[self._layout.find("T")]
        outputs, final = stack.unroll(steps, inputs, begin_state=cell_states,
                                      layout=self._layout, merge_outputs=True,
                                      valid_length=sequence_length)
        out_states = [F.stack(*final[k::n_kinds], axis=0) for k in range(n_kinds)]
        return outputs, out_states

    def _unfuse(self):
        """The equivalent stack of cells (one per layer, a BidirectionalCell for two
        directions, DropoutCells between layers), sharing this layer's parameters."""
        act = {"rnn_relu": "relu", "rnn_tanh": "tanh"}.get(self._mode)
        cell_type = {"rnn_relu": rnn_cell.RNNCell, "rnn_tanh": rnn_cell.RNNCell,
                     "lstm": rnn_cell.LSTMCell, "gru": rnn_cell.GRUCell}[self._mode]

        def get_cell(**kwargs):
            if act is not None:
                kwargs["activation"] = act
            return cell_type(self._hidden_size, **kwargs)

        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            n_in = self.l0_i2h_weight._shape[1]
            for i in range(self._num_layers):
                kwargs = {"input_size": n_in,
                          "i2h_weight_initializer": self._i2h_weight_initializer,
                          "h2h_weight_initializer": self._h2h_weight_initializer,
                          "i2h_bias_initializer": self._i2h_bias_initializer,
                          "h2h_bias_initializer": self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(get_cell(prefix="l%d_" % i, **kwargs),
                                                         get_cell(prefix="r%d_" % i, **kwargs)))
                else:
                    stack.add(get_cell(prefix="l%d_" % i, **kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                n_in = self._hidden_size * self._dir
        return stack


_COMMON_DOC = """
    num_layers : int, default 1
        Number of stacked layers.
    layout : {'TNC', 'NTC'}, default 'TNC'
        Layout of the input and output: T time, N batch, C features.
    dropout : float, default 0
        Dropout on the outputs of every layer but the last (training only).
    bidirectional : bool, default False
        Also run each layer backward in time; the outputs of both directions are
        concatenated (2 * hidden_size features).
    i2h_weight_initializer, h2h_weight_initializer : Initializer or str, optional
        For the input-to-hidden and hidden-to-hidden weights (the global one by default).
    i2h_bias_initializer, h2h_bias_initializer : Initializer or str, default 'zeros'
    input_size : int, default 0
        Number of input features; 0 infers it from the first input.
    dtype : str, default 'float32'
    use_sequence_length : bool, default False
        Accept ``sequence_length`` (``(N,)`` valid lengths) in the call: outputs past
        each length are 0 and the states are those after the last valid step. (It runs
        the equivalent cells; MXNet 1.9.1's CPU operator ignores the lengths.)
    prefix : str, optional
    params : ParameterDict, optional

    Inputs: ``data`` (laid out as ``layout``) and optionally ``states``, a list as
    :meth:`begin_state` gives. Outputs: ``out`` of shape (T, N, D * hidden_size)
    (layout TNC), and, when states were passed, the final states.
"""


class RNN(_RNNLayer):
    r"""Multi-layer Elman RNN: :math:`h_t = act(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} +
    b_{hh})` with ``act`` relu or tanh.

    Parameters
    ----------
    hidden_size : int
    activation : {'relu', 'tanh'}, default 'relu'
    """

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        if activation not in ("relu", "tanh"):
            raise ValueError("RNN: activation must be 'relu' or 'tanh', got %r" % (activation,))
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, dtype=dtype, **kwargs)


class LSTM(_RNNLayer):
    r"""Multi-layer long short-term memory (gates ``i, f, g, o``; states ``[h, c]``).

    Parameters
    ----------
    hidden_size : int
    projection_size : None
        Not supported (an error when given).
    state_clip_min, state_clip_max : float, optional
        Clip the cell state after each step.
    state_clip_nan : bool, default False
        Accepted for compatibility.
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)


class GRU(_RNNLayer):
    r"""Multi-layer gated recurrent unit (gates ``r, z, n``, as cuDNN and MXNet:
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) n + z h``).

    Parameters
    ----------
    hidden_size : int
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", dtype="float32",
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", dtype=dtype, **kwargs)


for _cls in (RNN, LSTM, GRU):
    _cls.__doc__ += _COMMON_DOC
