"""Deformable convolution layer (MXNet 1.9.1's ``gluon.contrib.cnn``)."""
from ...block import HybridBlock
from ...nn import Activation
from ...nn.conv_layers import _tuple

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(value, what):
    return tuple(int(v) for v in _tuple(value, 2, what, "DeformableConvolution"))


class DeformableConvolution(HybridBlock):
    """2-D deformable convolution v1 (Dai et al. 2017) with its own offset convolution.

    An ordinary convolution of the input (``offset_weight``, ``offset_bias``; zeros by
    default, so an untrained layer is a plain convolution) predicts
    ``2 * kh * kw * num_deformable_group`` offset channels, and
    ``contrib.DeformableConvolution`` samples the input at the offset kernel taps
    (``deformable_conv_weight``, ``deformable_conv_bias``). Parameter names, shapes
    and initialisers are MXNet 1.9.1's; the offset convolution uses ``groups`` too,
    as MXNet's does.

    Parameters
    ----------
    channels : int
        Number of output channels.
    kernel_size, strides, padding, dilation : int or tuple of 2 ints
    groups : int, default 1
        Groups of both convolutions.
    num_deformable_group : int, default 1
        Offset groups (the input channels split evenly among them).
    layout : {'NCHW'}
        Only NCHW runs (MXNet accepts 'NHWC' here but its op has no such kernel).
    use_bias : bool, default True
    in_channels : int, default 0
        Input channels; 0 infers them at the first forward pass.
    activation : str, optional
    weight_initializer, bias_initializer : Initializer or str
        Of the deformable convolution (bias: zeros).
    offset_weight_initializer, offset_bias_initializer : Initializer or str
        Of the offset convolution (both zeros).
    offset_use_bias : bool, default True

    Examples
    --------
    >>> layer = mx.gluon.contrib.cnn.DeformableConvolution(8, kernel_size=3, padding=1)
    >>> layer.initialize()
    >>> layer(mx.nd.ones((1, 4, 6, 6))).shape
    (1, 8, 6, 6)
    """

    _offset_parts = 2        # (dy, dx) per kernel tap

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True,
                 op_name="DeformableConvolution", adj=None, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        if layout != "NCHW":
            raise ValueError("DeformableConvolution: layout=%r is not supported; only 'NCHW'"
                             % (layout,))
        kernel = _pair(kernel_size, "kernel_size")
        if groups <= 0 or channels % groups or in_channels % groups:
            raise ValueError("DeformableConvolution: groups=%d must divide channels (%d) and "
                             "in_channels (%d)" % (groups, channels, in_channels))
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            self._op_name = op_name
            geom = {"kernel": kernel, "stride": _pair(strides, "strides"),
                    "dilate": _pair(dilation, "dilation"), "pad": _pair(padding, "padding")}
            offset_channels = self._offset_parts * kernel[0] * kernel[1] * num_deformable_group
            self.offset_split_index = 2 * kernel[0] * kernel[1] * num_deformable_group
            self._kwargs_offset = dict(geom, num_filter=offset_channels, num_group=groups,
                                       no_bias=not offset_use_bias, layout=layout)
            self._kwargs_deformable_conv = dict(
                geom, num_filter=channels, num_group=groups,
                num_deformable_group=num_deformable_group, no_bias=not use_bias,
                layout=layout)
            if adj:
                self._kwargs_offset["adj"] = adj
                self._kwargs_deformable_conv["adj"] = adj
            self.offset_weight = self.params.get(
                "offset_weight", shape=(offset_channels, in_channels // groups) + kernel,
                init=offset_weight_initializer, allow_deferred_init=True)
            self.offset_bias = self.params.get(
                "offset_bias", shape=(offset_channels,), init=offset_bias_initializer,
                allow_deferred_init=True) if offset_use_bias else None
            # NOTE: MXNet leaves the input dim of this weight 0 even when in_channels is
            # given, so it is always initialised at the first forward pass.
            self.deformable_conv_weight = self.params.get(
                "deformable_conv_weight", shape=(channels, 0) + kernel, init=weight_initializer,
                allow_deferred_init=True)
            self.deformable_conv_bias = self.params.get(
                "deformable_conv_bias", shape=(channels,), init=bias_initializer,
                allow_deferred_init=True) if use_bias else None
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def _infer_param_shapes(self, x, *args):
        shape = getattr(x, "shape", None)
        if not isinstance(shape, tuple) or len(shape) != 4:
            raise ValueError("DeformableConvolution: expected 4-D input (N, C, H, W), got "
                             "shape %s" % (shape,))
        groups = self._kwargs_offset["num_group"]
        if shape[1] % groups:
            raise ValueError("DeformableConvolution: groups=%d must divide the input channels, "
                             "but the input of shape %s has %d" % (groups, shape, shape[1]))
        inner = shape[1] // groups
        for param in (self.offset_weight, self.deformable_conv_weight):
            if 0 in param.shape:
                param.shape = (param.shape[0], inner) + tuple(param.shape[2:])

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        conv_inputs = [x, offset_weight] + ([] if offset_bias is None else [offset_bias])
        offset = F.Convolution(*conv_inputs, cudnn_off=True, **self._kwargs_offset)
        extra = {} if deformable_conv_bias is None else {"bias": deformable_conv_bias}
        y = F.contrib.DeformableConvolution(data=x, offset=offset, weight=deformable_conv_weight,
                                            name="fwd", **extra, **self._kwargs_deformable_conv)
        if self.act is not None:
            y = self.act(y)
        return y

    def _alias(self):
        return "deformable_conv"

    def __repr__(self):
        kw = self._kwargs_deformable_conv
        s = "{name}({mapping}, kernel_size={kernel}, stride={stride}"
        if kw["pad"] != (0, 0):
            s += ", padding={pad}"
        if kw["dilate"] != (1, 1):
            s += ", dilation={dilate}"
        if kw["num_group"] != 1:
            s += ", groups={num_group}"
        if self.deformable_conv_bias is None:
            s += ", bias=False"
        if self.act:
            s += ", {}".format(self.act)
        s += ")"
        shape = self.deformable_conv_weight.shape
        return s.format(name=type(self).__name__,
                        mapping="{0} -> {1}".format(shape[1] if shape[1] else None, shape[0]),
                        **kw)


class ModulatedDeformableConvolution(DeformableConvolution):
    """2-D modulated deformable convolution (DCN v2, Zhu et al. 2019): the offset
    convolution also predicts a mask per kernel tap, ``2 * sigmoid(m)``, that scales the
    sampled values (``contrib.ModulatedDeformableConvolution``). Parameters as
    :class:`DeformableConvolution`; the offset convolution has ``3 * kh * kw *
    num_deformable_group`` output channels (offsets first, then the mask).

    >>> layer = mx.gluon.contrib.cnn.ModulatedDeformableConvolution(8, kernel_size=3,
    ...                                                             padding=1)
    """
    _offset_parts = 3        # (dy, dx, mask) per kernel tap

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        conv_inputs = [x, offset_weight] + ([] if offset_bias is None else [offset_bias])
        offset = F.Convolution(*conv_inputs, cudnn_off=True, **self._kwargs_offset)
        offset_t = F.slice_axis(offset, axis=1, begin=0, end=self.offset_split_index)
        mask = F.sigmoid(F.slice_axis(offset, axis=1, begin=self.offset_split_index,
                                      end=None)) * 2
        extra = {} if deformable_conv_bias is None else {"bias": deformable_conv_bias}
        y = F.contrib.ModulatedDeformableConvolution(
            data=x, offset=offset_t, mask=mask, weight=deformable_conv_weight, name="fwd",
            **extra, **self._kwargs_deformable_conv)
        if self.act is not None:
            y = self.act(y)
        return y

    def _alias(self):
        return "modulated_deformable_conv"
