"""Basic Gluon layers: containers (Sequential, HybridSequential), Dense, Activation,
Dropout, normalisation layers, Embedding, Flatten, Identity and the Lambda blocks.

>>> net = mx.gluon.nn.HybridSequential()
>>> with net.name_scope():
...     net.add(mx.gluon.nn.Dense(10, activation='relu'), mx.gluon.nn.Dense(2))
>>> net[0].weight.name
'hybridsequential0_dense0_weight'
"""
import warnings

import numpy as np

from ...base import MXNetError
from ...nd.ndarray import NDArray
from .. import batch_rows
from ..block import Block, HybridBlock
from ..utils import _indent

__all__ = ["Sequential", "HybridSequential", "Dense", "Activation", "Dropout", "Embedding",
           "BatchNorm", "BatchNormReLU", "InstanceNorm", "LayerNorm", "GroupNorm", "Flatten", "Identity",
           "Lambda", "HybridLambda"]


def _children_repr(block):
    modstr = "\n".join("  ({key}): {block}".format(key=key, block=_indent(repr(child), 2))
                       for key, child in block._children.items())
    return "{name}(\n{modstr}\n)".format(name=block.__class__.__name__, modstr=modstr)


class _SequentialMixin:
    """``add``, indexing, slicing and ``len`` shared by both containers."""

    def add(self, *blocks):
        """Append blocks; they run in order."""
        for block in blocks:
            self.register_child(block)

    def __repr__(self):
        return _children_repr(self)

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if not isinstance(layers, list):
            return layers
        net = self._empty_copy()
        with net.name_scope():
            net.add(*layers)
        return net

    def _empty_copy(self):
        """A container like this one, without children (what a slice fills)."""
        return type(self)(prefix=self._prefix)

    def __len__(self):
        return len(self._children)

    def __getstate__(self):
        # (its fused chains are this container's cache: a copy or a pickle makes its own)
        state = self.__dict__.copy()
        state.pop("_chains", None)
        return state


class Sequential(_SequentialMixin, Block):
    """Stacks Blocks sequentially.

    Examples
    --------
    >>> net = mx.gluon.nn.Sequential()
    >>> with net.name_scope():
    ...     net.add(mx.gluon.nn.Dense(10, activation='relu'))
    ...     net.add(mx.gluon.nn.Dense(20))
    """

    _rows = True        # (see gluon/batch_rows.py)

    def forward(self, x):
        if isinstance(x, NDArray):      # (as HybridSequential's imperative call)
            y = batch_rows.run(self, x)
            return sequential_chains.run(self, x) if y is None else y
        for block in self._children.values():
            x = block(x)
        return x

    def hybridize(self, active=True, **kwargs):
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn("All children of this Sequential layer '%s' are HybridBlocks. Consider "
                          "using HybridSequential for the best performance." % self.prefix,
                          stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_SequentialMixin, HybridBlock):
    """Stacks HybridBlocks sequentially. Not hybridized, an unrecorded call runs its
    Conv2D -> BatchNorm [-> relu] children as one step each (``sequential_chains``)."""

    _rows = True        # (see gluon/batch_rows.py)

    def hybrid_forward(self, F, x):
        if isinstance(x, NDArray):
            return sequential_chains.run(self, x)
        for block in self._children.values():
            x = block(x)
        return x


class Activation(HybridBlock):
    """An activation function (``'relu'``, ``'sigmoid'``, ``'tanh'``, ``'softrelu'``,
    ``'softsign'``); its default prefix is the activation's name (``relu0_``)."""

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, activation, **kwargs):
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self):
        return self._act_type

    def hybrid_forward(self, F, x):
        return F.Activation(x, act_type=self._act_type, name="fwd")

    def __repr__(self):
        return "{name}({act})".format(name=self.__class__.__name__, act=self._act_type)


class Dense(HybridBlock):
    """A fully connected layer: ``activation(dot(x, weight.T) + bias)``.

    Parameters
    ----------
    units : int
        Output size.
    activation : str, optional
        An :class:`Activation` applied to the output.
    use_bias : bool, default True
    flatten : bool, default True
        Flatten all but the first axis of the input; else act on the last axis.
    dtype : str, default 'float32'
    weight_initializer, bias_initializer : Initializer or str
    in_units : int, default 0
        Input size; 0 infers it at the first forward pass.
    """

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            if activation is not None:
                self.act = Activation(activation, prefix=activation + "_")
            else:
                self.act = None

    def hybrid_forward(self, F, x, weight, bias=None):
        y = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                             flatten=self._flatten, name="fwd")
        if self.act is not None:
            y = self.act(y)
        return y

    def __repr__(self):
        shape = self.weight.shape
        return "{name}({layout}, {act})".format(
            name=self.__class__.__name__, act=self.act if self.act else "linear",
            layout="{0} -> {1}".format(shape[1] if shape[1] else None, shape[0]))


class Dropout(HybridBlock):
    """Zero inputs with probability ``rate`` in training (scaling the rest by
    ``1 / (1 - rate)``); ``axes`` shares the mask along those axes."""

    _rows = "inference"     # (see gluon/batch_rows.py)

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd")
        return F.identity(x)

    def __repr__(self):
        return "{name}(p = {rate}, axes={axes})".format(name=self.__class__.__name__,
                                                        rate=self._rate, axes=self._axes)


class _NormBase(HybridBlock):
    """Shared parts of the normalisation layers: gamma/beta and the repr."""

    def _norm_params(self, in_channels, center, scale, beta_initializer, gamma_initializer,
                     differentiable=False):
        kw = {"differentiable": scale} if differentiable else {}
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(in_channels,), init=gamma_initializer,
                                     allow_deferred_init=True, **kw)
        kw = {"differentiable": center} if differentiable else {}
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(in_channels,), init=beta_initializer,
                                    allow_deferred_init=True, **kw)

    def _infer_param_shapes(self, x, *args):
        # NOTE: the channel count is the input's size along the normalised axis;
        # computed here so the layer does not depend on the op's infer_shape rule.
        axis = self._channel_axis
        if not -x.ndim <= axis < x.ndim:
            raise MXNetError("%s: axis=%d is out of range for input of shape %s"
                             % (type(self).__name__, axis, tuple(x.shape)))
        channels = x.shape[axis]
        for p in self._reg_params.values():
            if p._shape is not None and len(p._shape) == 1 and p._shape[0] == 0:
                p.shape = (channels,)

    def _content(self):
        return ", ".join("=".join([k, repr(v)]) for k, v in self._kwargs.items())

    def __repr__(self):
        in_channels = self.gamma.shape[0]
        return "{name}({content}, in_channels={c})".format(
            name=self.__class__.__name__, content=self._content(), c=in_channels)


class BatchNorm(_NormBase):
    """Batch normalization over axis ``axis`` (the channels).

    In training (``autograd.record()``), the batch statistics normalise and
    ``running_mean``/``running_var`` are updated as ``momentum * running +
    (1 - momentum) * batch``; in inference the running statistics are used.

    Parameters
    ----------
    axis : int, default 1
    momentum : float, default 0.9
    epsilon : float, default 1e-5
    center, scale : bool, default True
        Learn beta / gamma (else beta is 0 / gamma is 1).
    use_global_stats : bool, default False
        Always normalise with the running statistics.
    in_channels : int, default 0
        0 infers the channel count at the first forward pass.
    """

    _rows = "inference"     # (see gluon/batch_rows.py)

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        self._channel_axis = axis
        if in_channels != 0:
            self.in_channels = in_channels
        self._norm_params(in_channels, center, scale, beta_initializer, gamma_initializer,
                          differentiable=True)
        self.running_mean = self.params.get("running_mean", grad_req="null",
                                            shape=(in_channels,), init=running_mean_initializer,
                                            allow_deferred_init=True, differentiable=False)
        self.running_var = self.params.get("running_var", grad_req="null",
                                           shape=(in_channels,),
                                           init=running_variance_initializer,
                                           allow_deferred_init=True, differentiable=False)

    def cast(self, dtype):
        # NOTE: statistics in float16 lose too much; MXNet keeps BatchNorm in float32.
        if np.dtype(dtype).name == "float16":
            dtype = "float32"
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                           **self._kwargs)

    def __repr__(self):
        in_channels = self.gamma.shape[0]
        return "{name}({content}, in_channels={c})".format(
            name=self.__class__.__name__, content=self._content(),
            c=in_channels if in_channels else None)


class BatchNormReLU(BatchNorm):
    """:class:`BatchNorm` followed by ReLU, as one op (``contrib.BatchNormWithReLU``);
    same parameters."""

    _rows = "inference"     # (see gluon/batch_rows.py)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.BatchNormWithReLU(x, gamma, beta, running_mean, running_var,
                                           name="fwd", **self._kwargs)


class InstanceNorm(_NormBase):
    """Instance normalization: each sample and channel normalised over its spatial axes."""

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._channel_axis = axis
        self._epsilon = epsilon
        self._norm_params(in_channels, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name="fwd",
                              eps=self._epsilon).swapaxes(1, self._axis)


class LayerNorm(_NormBase):
    """Layer normalization over ``axis`` (the last by default)."""

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._channel_axis = axis
        self._epsilon = epsilon
        self._norm_params(in_channels, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)


class GroupNorm(HybridBlock):
    """Group normalization: channels split in ``num_groups`` groups; gamma and beta
    have shape ``(num_groups,)`` as in MXNet 1.x."""

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center,
                        "scale": scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(num_groups,), init=gamma_initializer,
                                     allow_deferred_init=True)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(num_groups,), init=beta_initializer,
                                    allow_deferred_init=True)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def __repr__(self):
        return "{name}({content})".format(
            name=self.__class__.__name__,
            content=", ".join("=".join([k, repr(v)]) for k, v in self._kwargs.items()))


class Embedding(HybridBlock):
    """Map integer indices (given as floats, as MXNet does) to rows of a
    ``(input_dim, output_dim)`` weight."""

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        grad_stype = "row_sparse" if sparse_grad else "default"
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True, grad_stype=grad_stype)

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        return "{block_name}({input_dim} -> {output_dim}, {dtype})".format(
            block_name=self.__class__.__name__, **self._kwargs)


class Flatten(HybridBlock):
    """Reshape ``(N, d1, d2, ...)`` to ``(N, d1 * d2 * ...)``."""

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.Flatten(x)

    def __repr__(self):
        return self.__class__.__name__


class Identity(HybridBlock):
    """Returns its input unchanged (a placeholder layer)."""

    _rows = True        # (see gluon/batch_rows.py)

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return x

    def __repr__(self):
        return self.__class__.__name__


def _nd_function(function, where):
    from ... import nd
    if not hasattr(nd, function):
        raise ValueError("Function name %s is not found in ndarray (%s)." % (function, where))
    return getattr(nd, function)


class Lambda(Block):
    """Wrap a function (or the name of an ``mx.nd`` function) as a Block.

    Examples
    --------
    >>> block = mx.gluon.nn.Lambda('tanh')
    >>> block = mx.gluon.nn.Lambda(lambda x: mx.nd.LeakyReLU(x, slope=0.1))
    """

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            self._func_impl = _nd_function(function, "Lambda")
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError("Unrecognized function in lambda: {} of type {}"
                             .format(function, type(function)))

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return "{name}({function})".format(name=self.__class__.__name__,
                                           function=self._func_impl.__name__)


class HybridLambda(HybridBlock):
    """Wrap ``function(F, x, *args)`` (or an operator name) as a HybridBlock.

    Examples
    --------
    >>> block = mx.gluon.nn.HybridLambda('tanh')
    >>> block = mx.gluon.nn.HybridLambda(lambda F, x: F.LeakyReLU(x, slope=0.1))
    """

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            _nd_function(function, "HybridLambda")
            self._func = lambda F, *args: getattr(F, function)(*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise ValueError("Unrecognized function in lambda: {} of type {}"
                             .format(function, type(function)))

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self):
        return "{name}({function})".format(name=self.__class__.__name__,
                                           function=self._func_name)


from . import sequential_chains  # noqa: E402 (it reads this module's layers)
