"""Convolution, transposed convolution, pooling and padding layers of ``mx.gluon.nn``.

Channels-first layouts (``NCW``, ``NCHW``, ``NCDHW``) call the ``Convolution``,
``Deconvolution`` and ``Pooling`` ops directly. Channels-last layouts (``NHWC``,
``NDHWC``, and ``NWC`` for pooling) are accepted as in MXNet: the layer moves the
channels to axis 1, runs the channels-first op and moves them back, with the
weight stored in MXNet's channels-last shape ``(channels, *kernel_size, in_channels)``.

>>> conv = mx.gluon.nn.Conv2D(16, kernel_size=3, in_channels=3)
>>> conv
Conv2D(3 -> 16, kernel_size=(3, 3), stride=(1, 1))
>>> conv.weight.shape
(16, 3, 3, 3)
"""
import numbers

from ...autograd import _state as _ag_state
from ...nd.ndarray import NDArray
from ...operator.registry import invoke, get_op
from ...operator.nn import fused
from ..block import HybridBlock
from .basic_layers import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose",
           "Conv3DTranspose", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D",
           "AvgPool3D", "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D",
           "GlobalAvgPool1D", "GlobalAvgPool2D", "GlobalAvgPool3D", "ReflectionPad2D"]

# The channels-first layout of each number of spatial dims.
_FIRST = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _tuple(value, n, what, name):
    """``value`` as a tuple of ``n`` ints (a number is repeated), checked."""
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    value = tuple(value)
    if len(value) != n:
        raise ValueError("%s: %s must be a number or a list of %d ints, got %s"
                         % (name, what, n, value))
    return value


def _check_layout(name, layout, allowed):
    if layout not in allowed:
        raise ValueError("%s: layout=%r is not supported; expected one of %s"
                         % (name, layout, ", ".join(allowed)))


def _check_input(block, x):
    """A clear error for input of the wrong rank (NDArrays only; a Symbol has no shape)."""
    shape = getattr(x, "shape", None)
    want = len(block._layout)
    if isinstance(shape, tuple) and len(shape) != want:
        raise ValueError("%s: expected %d-D input with layout %s, got input of shape %s"
                         % (type(block).__name__, want, block._layout, shape))


def channels_first_axes(ndim):
    """Axes taking ``(N, spatial..., C)`` to ``(N, C, spatial...)``."""
    return (0, ndim - 1) + tuple(range(1, ndim - 1))


def channels_last_axes(ndim):
    """Axes taking ``(N, C, spatial...)`` to ``(N, spatial..., C)``."""
    return (0,) + tuple(range(2, ndim)) + (1,)


# ----------------------------------------------------------------------------
# Convolutions

class _Conv(HybridBlock):
    """Shared body of the convolution layers (private).

    Parameters
    ----------
    channels : int
        Number of output channels.
    kernel_size : tuple of int
    strides, padding, dilation : int or tuple of int
    groups : int
        Channels are split in ``groups`` groups convolved separately.
    layout : str
        ``'NCHW'``-style layout of the data (and weight).
    in_channels : int, default 0
        Number of input channels; 0 infers it at the first forward pass.
    activation : str, optional
        An :class:`Activation` applied to the output.
    use_bias : bool, default True
    weight_initializer, bias_initializer : Initializer or str
    op_name : {'Convolution', 'Deconvolution'}
    adj : tuple of int, optional
        ``output_padding`` of the transposed convolutions.
    """

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", op_name="Convolution", adj=None, prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        name = type(self).__name__
        nsp = len(kernel_size)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            self._layout = layout
            self._op_name = op_name
            self._kwargs = {
                "kernel": tuple(kernel_size), "stride": _tuple(strides, nsp, "strides", name),
                "dilate": _tuple(dilation, nsp, "dilation", name),
                "pad": _tuple(padding, nsp, "padding", name), "num_filter": channels,
                "num_group": groups, "no_bias": not use_bias, "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = adj
            if groups <= 0 or channels % groups or in_channels % groups:
                raise ValueError("%s: groups=%d must divide channels (%d) and in_channels (%d)"
                                 % (name, groups, channels, in_channels))
            self.weight = self.params.get("weight", shape=self._weight_shape(in_channels),
                                          init=weight_initializer, allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(channels,), init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            if activation is not None:
                self.act = Activation(activation, prefix=activation + "_")
            else:
                self.act = None

    def _weight_shape(self, in_channels):
        """MXNet's weight shape: ``(out, in / groups, *kernel)`` for Convolution,
        ``(in, out / groups, *kernel)`` for Deconvolution; channels-last layouts
        move the second dimension to the end."""
        groups = self._kwargs["num_group"]
        if self._op_name == "Convolution":
            outer, inner = self._channels, in_channels // groups
        else:
            outer, inner = in_channels, self._channels // groups
        kernel = self._kwargs["kernel"]
        if self._layout[1] == "C":
            return (outer, inner) + kernel
        return (outer,) + kernel + (inner,)

    def _infer_param_shapes(self, x, *args):
        # NOTE: the input channel count comes straight from the data, so deferred
        # weights resolve for every layout, channels-last included (the op alone
        # could not see through the transposes of the channels-last path).
        _check_input(self, x)
        channels = x.shape[self._layout.find("C")]
        groups = self._kwargs["num_group"]
        if channels % groups:
            raise ValueError("%s: groups=%d must divide the input channels, but the input of "
                             "shape %s has %d" % (type(self).__name__, groups, x.shape,
                                                  channels))
        if 0 in self.weight._shape:
            self.weight.shape = self._weight_shape(channels)

    def hybrid_forward(self, F, x, weight, bias=None):
        _check_input(self, x)
        if isinstance(weight, NDArray) and not _ag_state.recording:
            kept = self._kept_filters()
            # (data that do not fit run the Convolution op, for its error)
            if kept is not None and x.ndim == 4 and x.shape[1] == weight.shape[1]:
                y = invoke(kept[0], (x, weight) if bias is None else (x, weight, bias), kept[1])
                return y if self.act is None else self.act(y)
        op = getattr(F, self._op_name)
        kwargs = self._kwargs
        channels_last = self._layout[1] != "C"
        if channels_last:
            ndim = len(self._layout)
            x = F.transpose(x, axes=channels_first_axes(ndim))
            weight = F.transpose(weight, axes=channels_first_axes(ndim))
            kwargs = dict(kwargs, layout=_FIRST[ndim - 2])
        if bias is None:
            y = op(x, weight, name="fwd", **kwargs)
        else:
            y = op(x, weight, bias, name="fwd", **kwargs)
        if channels_last:
            y = F.transpose(y, axes=channels_last_axes(len(self._layout)))
        if self.act is not None:
            y = self.act(y)
        return y

    def _kept_filters(self):
        """The step (op, params) of an unrecorded imperative call (inference) that keeps
        the transform of this layer's weight across calls while the weight is unchanged,
        as a hybridized graph's step does (``fused.keep_filters``); None where none is
        kept (a transposed, channels-last, strided 3x3 or larger convolution)."""
        kept = self.__dict__.get("_kept_step", False)
        if kept is False:
            kept = None
            if self._op_name == "Convolution" and self._layout[1] == "C":
                conv = get_op("Convolution")
                kept = fused.keep_filters(conv.parse_params(self._kwargs),
                                          lambda: self.weight._data)
            self._kept_step = kept
        return kept

    def __getstate__(self):
        # (the kept transform is this layer's cache: a copy or a pickle keeps its own)
        state = self.__dict__.copy()
        state.pop("_kept_step", None)
        return state

    def _alias(self):
        return "conv"

    def __repr__(self):
        # NOTE: as MXNet 1.9.1 prints it: "in -> out" is weight.shape[1] -> weight.shape[0]
        # (so transposed and channels-last layers print other numbers), and
        # output_padding is never shown (MXNet checks an attribute it never sets).
        s = "{name}({mapping}, kernel_size={kernel}, stride={stride}"
        nsp = len(self._kwargs["kernel"])
        if self._kwargs["pad"] != (0,) * nsp:
            s += ", padding={pad}"
        if self._kwargs["dilate"] != (1,) * nsp:
            s += ", dilation={dilate}"
        if self._kwargs["num_group"] != 1:
            s += ", groups={num_group}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += ", {}".format(self.act)
        s += ")"
        shape = self.weight.shape
        return s.format(name=type(self).__name__,
                        mapping="{0} -> {1}".format(shape[1] if shape[1] else None, shape[0]),
                        **self._kwargs)


def _conv_args(name, nsp, kernel_size, layout, allowed):
    _check_layout(name, layout, allowed)
    return _tuple(kernel_size, nsp, "kernel_size", name)


class Conv1D(_Conv):
    """1-D convolution (e.g. over time) of ``(batch, in_channels, width)`` data.

    ``out_width = floor((width + 2 * padding - dilation * (kernel_size - 1) - 1) / stride) + 1``.

    Parameters
    ----------
    channels : int
        Number of output channels (filters).
    kernel_size : int or tuple of 1 int
    strides, padding, dilation : int or tuple of 1 int, default 1, 0, 1
    groups : int, default 1
    layout : {'NCW'}
    activation : str, optional
    use_bias : bool, default True
    weight_initializer, bias_initializer : Initializer or str
    in_channels : int, default 0
        0 infers the input channels at the first forward pass.

    Examples
    --------
    >>> conv = mx.gluon.nn.Conv1D(4, 3)
    >>> conv.initialize()
    >>> conv(mx.nd.ones((2, 5, 10))).shape
    (2, 4, 8)
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 layout="NCW", activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        kernel_size = _conv_args("Conv1D", 1, kernel_size, layout, ("NCW",))
        op_name = kwargs.pop("op_name", "Convolution")
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, op_name, **kwargs)


class Conv2D(_Conv):
    """2-D convolution of images, ``(batch, in_channels, height, width)`` with layout
    ``'NCHW'`` (or ``'NHWC'``).

    Parameters are those of :class:`Conv1D` with 2-tuples; ``layout`` is ``'NCHW'``
    or ``'NHWC'`` (whose weight has shape ``(channels, kh, kw, in_channels)``).

    Examples
    --------
    >>> conv = mx.gluon.nn.Conv2D(16, 3, padding=1)
    >>> conv.initialize()
    >>> conv(mx.nd.ones((1, 3, 8, 8))).shape
    (1, 16, 8, 8)
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, layout="NCHW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        kernel_size = _conv_args("Conv2D", 2, kernel_size, layout, ("NCHW", "NHWC"))
        op_name = kwargs.pop("op_name", "Convolution")
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, op_name, **kwargs)


class Conv3D(_Conv):
    """3-D convolution of volumes, ``(batch, in_channels, depth, height, width)`` with
    layout ``'NCDHW'`` (or ``'NDHWC'``). Parameters as :class:`Conv2D` with 3-tuples.

    Examples
    --------
    >>> conv = mx.gluon.nn.Conv3D(8, 2, in_channels=1)
    >>> conv.weight.shape
    (8, 1, 2, 2, 2)
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout="NCDHW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        kernel_size = _conv_args("Conv3D", 3, kernel_size, layout, ("NCDHW", "NDHWC"))
        op_name = kwargs.pop("op_name", "Convolution")
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, op_name, **kwargs)


class _ConvTranspose(_Conv):
    """A transposed convolution (``Deconvolution``) with ``output_padding``."""

    def __init__(self, nsp, allowed, channels, kernel_size, strides, padding, output_padding,
                 dilation, groups, layout, activation, use_bias, weight_initializer,
                 bias_initializer, in_channels, **kwargs):
        name = type(self).__name__
        kernel_size = _conv_args(name, nsp, kernel_size, layout, allowed)
        output_padding = _tuple(output_padding, nsp, "output_padding", name)
        op_name = kwargs.pop("op_name", "Deconvolution")
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer, op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


class Conv1DTranspose(_ConvTranspose):
    """1-D transposed convolution ("deconvolution") of ``(batch, in_channels, width)``.

    ``out_width = (width - 1) * strides - 2 * padding + kernel_size + output_padding``
    (with dilation 1). The weight has shape ``(in_channels, channels / groups, k)``.

    Parameters
    ----------
    channels : int
    kernel_size : int or tuple of 1 int
    strides, padding, output_padding, dilation : int or tuple of 1 int
    groups : int, default 1
    layout : {'NCW'}
    activation, use_bias, weight_initializer, bias_initializer, in_channels
        As in :class:`Conv1D`.

    Examples
    --------
    >>> up = mx.gluon.nn.Conv1DTranspose(2, 3, strides=2, in_channels=4)
    >>> up.weight.shape
    (4, 2, 3)
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout="NCW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        super().__init__(1, ("NCW",), channels, kernel_size, strides, padding, output_padding,
                         dilation, groups, layout, activation, use_bias, weight_initializer,
                         bias_initializer, in_channels, **kwargs)


class Conv2DTranspose(_ConvTranspose):
    """2-D transposed convolution; as :class:`Conv1DTranspose` with 2-tuples and
    layout ``'NCHW'`` or ``'NHWC'``.

    Examples
    --------
    >>> up = mx.gluon.nn.Conv2DTranspose(3, 4, strides=2, padding=1)
    >>> up.initialize()
    >>> up(mx.nd.ones((1, 8, 5, 5))).shape
    (1, 3, 10, 10)
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout="NCHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        super().__init__(2, ("NCHW", "NHWC"), channels, kernel_size, strides, padding,
                         output_padding, dilation, groups, layout, activation, use_bias,
                         weight_initializer, bias_initializer, in_channels, **kwargs)


class Conv3DTranspose(_ConvTranspose):
    """3-D transposed convolution; as :class:`Conv1DTranspose` with 3-tuples and
    layout ``'NCDHW'`` or ``'NDHWC'``.

    Examples
    --------
    >>> mx.gluon.nn.Conv3DTranspose(2, 3, in_channels=4).weight.shape
    (4, 2, 3, 3, 3)
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout="NCDHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        super().__init__(3, ("NCDHW", "NDHWC"), channels, kernel_size, strides, padding,
                         output_padding, dilation, groups, layout, activation, use_bias,
                         weight_initializer, bias_initializer, in_channels, **kwargs)


# ----------------------------------------------------------------------------
# Pooling

class _Pooling(HybridBlock):
    """Shared body of the pooling layers (private).

    Parameters
    ----------
    pool_size : tuple of int
    strides : int, tuple of int or None
        None: ``pool_size``.
    padding : int or tuple of int
    ceil_mode : bool
        Round the output size up (MXNet's ``pooling_convention='full'``).
    global_pool : bool
    pool_type : {'max', 'avg'}
    layout : str
    count_include_pad : bool, optional
        avg only: count the padding in each window's divisor.
    """

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type,
                 layout, count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        nsp = len(pool_size)
        if strides is None:
            strides = pool_size
        self._layout = layout
        self._kwargs = {
            "kernel": tuple(pool_size), "stride": _tuple(strides, nsp, "strides", name),
            "pad": _tuple(padding, nsp, "padding", name), "global_pool": global_pool,
            "pool_type": pool_type, "layout": layout,
            "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self):
        return "pool"

    def hybrid_forward(self, F, x):
        _check_input(self, x)
        if self._layout[1] == "C":
            return F.Pooling(x, name="fwd", **self._kwargs)
        ndim = len(self._layout)
        kwargs = dict(self._kwargs, layout=_FIRST[ndim - 2])
        y = F.Pooling(F.transpose(x, axes=channels_first_axes(ndim)), name="fwd", **kwargs)
        return F.transpose(y, axes=channels_last_axes(ndim))

    def __repr__(self):
        s = "{name}(size={kernel}, stride={stride}, padding={pad}, ceil_mode={ceil_mode}"
        s += ", global_pool={global_pool}, pool_type={pool_type}, layout={layout})"
        return s.format(name=type(self).__name__,
                        ceil_mode=self._kwargs["pooling_convention"] == "full", **self._kwargs)


_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _pool_size(name, nsp, pool_size, layout):
    _check_layout(name, layout, _LAYOUTS[nsp])
    return _tuple(pool_size, nsp, "pool_size", name)


class MaxPool1D(_Pooling):
    """Max pooling over the width of ``(batch, channels, width)`` data.

    ``out_width = floor((width + 2 * padding - pool_size) / strides) + 1`` (``ceil``
    with ``ceil_mode=True``).

    Parameters
    ----------
    pool_size : int or tuple of 1 int, default 2
    strides : int, tuple of 1 int or None, default None
        None: ``pool_size``.
    padding : int or tuple of 1 int, default 0
    layout : {'NCW', 'NWC'}
    ceil_mode : bool, default False

    Examples
    --------
    >>> mx.gluon.nn.MaxPool1D()(mx.nd.array([[[1, 3, 2, 5]]]))
    <BLANKLINE>
    [[[3. 5.]]]
    <NDArray 1x1x2 @cpu(0)>
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False,
                 **kwargs):
        pool_size = _pool_size("MaxPool1D", 1, pool_size, layout)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "max", layout,
                         **kwargs)


class MaxPool2D(_Pooling):
    """Max pooling over height and width; as :class:`MaxPool1D` with 2-tuples and
    layout ``'NCHW'`` or ``'NHWC'``.

    Examples
    --------
    >>> mx.gluon.nn.MaxPool2D(pool_size=2)(mx.nd.ones((1, 3, 8, 8))).shape
    (1, 3, 4, 4)
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout="NCHW",
                 ceil_mode=False, **kwargs):
        pool_size = _pool_size("MaxPool2D", 2, pool_size, layout)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "max", layout,
                         **kwargs)


class MaxPool3D(_Pooling):
    """Max pooling over depth, height and width; as :class:`MaxPool1D` with 3-tuples
    and layout ``'NCDHW'`` or ``'NDHWC'``.

    Examples
    --------
    >>> mx.gluon.nn.MaxPool3D()(mx.nd.ones((1, 2, 4, 4, 4))).shape
    (1, 2, 2, 2, 2)
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCDHW", **kwargs):
        pool_size = _pool_size("MaxPool3D", 3, pool_size, layout)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "max", layout,
                         **kwargs)


class AvgPool1D(_Pooling):
    """Average pooling over the width; as :class:`MaxPool1D`, plus

    Parameters
    ----------
    count_include_pad : bool, default True
        Divide by the whole window, padding included (else by the positions inside
        the input).

    Examples
    --------
    >>> mx.gluon.nn.AvgPool1D()(mx.nd.array([[[1, 3, 2, 5]]]))
    <BLANKLINE>
    [[[2.  3.5]]]
    <NDArray 1x1x2 @cpu(0)>
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False,
                 count_include_pad=True, **kwargs):
        pool_size = _pool_size("AvgPool1D", 1, pool_size, layout)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class AvgPool2D(_Pooling):
    """Average pooling over height and width; as :class:`AvgPool1D` with 2-tuples and
    layout ``'NCHW'`` or ``'NHWC'``.

    Examples
    --------
    >>> mx.gluon.nn.AvgPool2D(3, strides=1, padding=1)(mx.nd.ones((1, 1, 4, 4))).shape
    (1, 1, 4, 4)
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCHW", count_include_pad=True, **kwargs):
        pool_size = _pool_size("AvgPool2D", 2, pool_size, layout)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class AvgPool3D(_Pooling):
    """Average pooling over depth, height and width; as :class:`AvgPool1D` with
    3-tuples and layout ``'NCDHW'`` or ``'NDHWC'``.

    Examples
    --------
    >>> mx.gluon.nn.AvgPool3D()(mx.nd.ones((1, 2, 4, 4, 4))).shape
    (1, 2, 2, 2, 2)
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout="NCDHW", count_include_pad=True, **kwargs):
        pool_size = _pool_size("AvgPool3D", 3, pool_size, layout)
        super().__init__(pool_size, strides, padding, ceil_mode, False, "avg", layout,
                         count_include_pad, **kwargs)


class _GlobalPooling(_Pooling):
    """Pooling over the whole spatial extent: the spatial dims become 1."""

    _nsp = 0
    _pool_type = ""

    def __init__(self, layout, **kwargs):
        _check_layout(type(self).__name__, layout, _LAYOUTS[self._nsp])
        super().__init__((1,) * self._nsp, None, 0, True, True, self._pool_type, layout,
                         **kwargs)


class GlobalMaxPool1D(_GlobalPooling):
    """Maximum over the width: ``(N, C, W)`` to ``(N, C, 1)``.

    Examples
    --------
    >>> mx.gluon.nn.GlobalMaxPool1D()(mx.nd.array([[[1, 3, 2]]]))
    <BLANKLINE>
    [[[3.]]]
    <NDArray 1x1x1 @cpu(0)>
    """

    _rows = True        # (see gluon/batch_rows.py)
    _nsp, _pool_type = 1, "max"

    def __init__(self, layout="NCW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalMaxPool2D(_GlobalPooling):
    """Maximum over height and width: ``(N, C, H, W)`` to ``(N, C, 1, 1)``."""

    _rows = True        # (see gluon/batch_rows.py)
    _nsp, _pool_type = 2, "max"

    def __init__(self, layout="NCHW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalMaxPool3D(_GlobalPooling):
    """Maximum over depth, height and width: ``(N, C, D, H, W)`` to ``(N, C, 1, 1, 1)``."""

    _rows = True        # (see gluon/batch_rows.py)
    _nsp, _pool_type = 3, "max"

    def __init__(self, layout="NCDHW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalAvgPool1D(_GlobalPooling):
    """Mean over the width: ``(N, C, W)`` to ``(N, C, 1)``."""

    _rows = True        # (see gluon/batch_rows.py)
    _nsp, _pool_type = 1, "avg"

    def __init__(self, layout="NCW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalAvgPool2D(_GlobalPooling):
    """Mean over height and width: ``(N, C, H, W)`` to ``(N, C, 1, 1)``.

    Examples
    --------
    >>> mx.gluon.nn.GlobalAvgPool2D()(mx.nd.ones((2, 3, 5, 5))).shape
    (2, 3, 1, 1)
    """

    _rows = True        # (see gluon/batch_rows.py)
    _nsp, _pool_type = 2, "avg"

    def __init__(self, layout="NCHW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalAvgPool3D(_GlobalPooling):
    """Mean over depth, height and width: ``(N, C, D, H, W)`` to ``(N, C, 1, 1, 1)``."""

    _rows = True        # (see gluon/batch_rows.py)
    _nsp, _pool_type = 3, "avg"

    def __init__(self, layout="NCDHW", **kwargs):
        super().__init__(layout, **kwargs)


# ----------------------------------------------------------------------------
# Padding

class ReflectionPad2D(HybridBlock):
    """Pad the height and width of ``(N, C, H, W)`` data by reflecting it at the border.

    Parameters
    ----------
    padding : int or tuple of 8 ints, default 0
        An int pads every side of H and W by that much; 8 ints are ``pad_width``
        of :func:`mx.nd.pad` (before/after for each of the 4 axes, the first two 0).

    Examples
    --------
    >>> mx.gluon.nn.ReflectionPad2D(1)(mx.nd.ones((1, 3, 4, 4))).shape
    (1, 3, 6, 6)
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, numbers.Integral):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        padding = tuple(padding)
        if len(padding) != 8:
            raise ValueError("ReflectionPad2D: padding must be an int or 8 ints (pad_width "
                             "of the 4 axes), got %s" % (padding,))
        self._padding = padding

    def hybrid_forward(self, F, x):
        shape = getattr(x, "shape", None)
        if isinstance(shape, tuple) and len(shape) != 4:
            raise ValueError("ReflectionPad2D: expected 4-D input (N, C, H, W), got input of "
                             "shape %s" % (shape,))
        return F.pad(x, mode="reflect", pad_width=self._padding)
