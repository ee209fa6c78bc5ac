"""Contributed layers of ``mx.gluon.contrib.nn``.

- :class:`Concurrent` / :class:`HybridConcurrent` feed one input to every child and
  concatenate the children's outputs along ``axis``.
- :class:`Identity` returns its input.
- :class:`SparseEmbedding` is an Embedding with MXNet's ``row_sparse`` declarations
  (stored dense in mxlite).
- :class:`PixelShuffle1D`, :class:`PixelShuffle2D`, :class:`PixelShuffle3D` move groups
  of channels into blocks of pixels (sub-pixel upsampling).
- :class:`SyncBatchNorm` is BatchNorm with statistics shared across devices (one device
  in mxlite).

>>> net = mx.gluon.contrib.nn.HybridConcurrent(axis=1)
>>> with net.name_scope():
...     net.add(mx.gluon.nn.Dense(3), mx.gluon.contrib.nn.Identity())
>>> net.initialize()
>>> net(mx.nd.ones((2, 4))).shape
(2, 7)
"""
import warnings

from .... import nd
from ...block import Block, HybridBlock
from ...nn import BatchNorm, HybridSequential, Sequential
from ...parameter import _AssertError

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "SparseEmbedding", "SyncBatchNorm",
           "PixelShuffle1D", "PixelShuffle2D", "PixelShuffle3D"]


class _ConcurrentMixin:
    """The concatenation ``axis``; slicing keeps it (MXNet's slice falls back to the
    default axis -1)."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def _empty_copy(self):
        return type(self)(axis=self.axis, prefix=self._prefix)


class Concurrent(_ConcurrentMixin, Sequential):
    """Feeds the input to every child Block and concatenates their outputs on ``axis``.

    Parameters
    ----------
    axis : int, default -1
        The axis on which to concatenate the outputs.
    prefix : str, optional
    params : ParameterDict, optional

    Examples
    --------
    >>> net = mx.gluon.contrib.nn.Concurrent()
    >>> with net.name_scope():
    ...     net.add(mx.gluon.nn.Dense(10, activation='relu'))
    ...     net.add(mx.gluon.nn.Dense(20))
    ...     net.add(mx.gluon.contrib.nn.Identity())
    """

    def forward(self, x):
        return nd.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class HybridConcurrent(_ConcurrentMixin, HybridSequential):
    """:class:`Concurrent` of HybridBlocks: hybridizable.

    Parameters
    ----------
    axis : int, default -1
        The axis on which to concatenate the outputs.
    prefix : str, optional
    params : ParameterDict, optional
    """

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)


class Identity(HybridBlock):
    """Returns its input unchanged (a residual branch of a :class:`HybridConcurrent`).

    Examples
    --------
    >>> mx.gluon.contrib.nn.Identity()(mx.nd.ones((1, 2)))
    <BLANKLINE>
    [[1. 1.]]
    <NDArray 1x2 @cpu(0)>
    """

    def hybrid_forward(self, F, x):
        return x


class SparseEmbedding(Block):
    """Turns non-negative integer indices into dense vectors of size ``output_dim``.

    The weight and its gradient are ``RowSparseNDArray`` (for distributed training with
    huge vocabularies), read through ``row_sparse_data``, so a Trainer must be created
    with the parameter before the first forward, as in MXNet. mxlite keeps sparse
    arrays' values dense (see :mod:`mxlite.nd.sparse`): the gradient is zero on the rows
    not looked up, and results and optimizer updates equal a dense Embedding's.

    Parameters
    ----------
    input_dim : int
        Size of the vocabulary (largest index + 1).
    output_dim : int
        Size of each embedding vector.
    dtype : str or numpy.dtype, default 'float32'
        Data type of the weight and of the output.
    weight_initializer : Initializer, optional
        Initializer of the ``(input_dim, output_dim)`` weight.
    prefix : str, optional
    params : ParameterDict, optional

    Examples
    --------
    >>> emb = mx.gluon.contrib.nn.SparseEmbedding(10, 3)
    >>> emb.initialize()
    >>> trainer = mx.gluon.Trainer(emb.collect_params(), 'sgd')
    >>> emb(mx.nd.array([[1, 2]])).shape
    (1, 2, 3)
    """

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x):
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, **self._kwargs)

    def __repr__(self):
        return "{block_name}({input_dim} -> {output_dim}, {dtype})".format(
            block_name=type(self).__name__, **self._kwargs)


# ----------------------------------------------------------------------------
# Pixel shuffle

def _factors(factor, ndim, layer):
    """``factor`` as a tuple of ``ndim`` positive ints (an int is repeated)."""
    if isinstance(factor, (list, tuple)):
        factors = tuple(factor)
        if len(factors) != ndim:
            raise _AssertError("%s: factor must be an int or a tuple of %d ints, got %r "
                               "(wrong length %d)" % (layer, ndim, factor, len(factors)))
    else:
        factors = (factor,) * ndim
    try:
        factors = tuple(int(f) for f in factors)
    except (TypeError, ValueError):
        raise TypeError("%s: factor must be an int or a tuple of %d ints, got %r"
                        % (layer, ndim, factor)) from None
    if any(f < 1 for f in factors):
        raise ValueError("%s: factors must be positive, got %r" % (layer, factor))
    return factors


class _PixelShuffle(HybridBlock):
    _ndim = 0

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors(factor, self._ndim, type(self).__name__)

    def __repr__(self):
        return "{}({})".format(type(self).__name__, self._factors)


class PixelShuffle1D(_PixelShuffle):
    r"""Pixel-shuffle upsampling along ``W``: ``(N, f*C, W) -> (N, C, W*f)``.

    Output ``[n, c, w*f + i]`` is input ``[n, c*f + i, w]``.

    Parameters
    ----------
    factor : int or 1-tuple of int
        Upsampling factor of ``W``.

    Examples
    --------
    >>> mx.gluon.contrib.nn.PixelShuffle1D(2)(mx.nd.zeros((1, 8, 3))).shape
    (1, 4, 6)
    """
    _ndim = 1

    def __init__(self, factor):
        super().__init__(factor)
        self._factor = self._factors[0]

    def hybrid_forward(self, F, x):
        f = self._factor
        x = F.reshape(x, (0, -4, -1, f, 0))  # (N, C, f, W)
        x = F.transpose(x, (0, 1, 3, 2))     # (N, C, W, f)
        return F.reshape(x, (0, 0, -3))      # (N, C, W*f)

    def __repr__(self):
        return "{}({})".format(type(self).__name__, self._factor)


class PixelShuffle2D(_PixelShuffle):
    r"""Pixel-shuffle upsampling along ``H`` and ``W``:
    ``(N, f1*f2*C, H, W) -> (N, C, H*f1, W*f2)`` (Shi et al., 2016, sub-pixel convolution).

    Output ``[n, c, h*f1 + i, w*f2 + j]`` is input ``[n, (c*f1 + i)*f2 + j, h, w]``.

    Parameters
    ----------
    factor : int or 2-tuple of int
        Upsampling factors of ``H`` and ``W``.

    Examples
    --------
    >>> mx.gluon.contrib.nn.PixelShuffle2D((2, 3))(mx.nd.zeros((1, 12, 3, 5))).shape
    (1, 2, 6, 15)
    """
    _ndim = 2

    def hybrid_forward(self, F, x):
        f1, f2 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))  # (N, C, f1*f2, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))    # (N, C, f1, f2, H, W)
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))        # (N, C, H, f1, W, f2)
        return F.reshape(x, (0, 0, -3, -3))           # (N, C, H*f1, W*f2)


class PixelShuffle3D(_PixelShuffle):
    r"""Pixel-shuffle upsampling along ``D``, ``H`` and ``W``:
    ``(N, f1*f2*f3*C, D, H, W) -> (N, C, D*f1, H*f2, W*f3)``.

    Parameters
    ----------
    factor : int or 3-tuple of int
        Upsampling factors of ``D``, ``H`` and ``W``.

    Examples
    --------
    >>> mx.gluon.contrib.nn.PixelShuffle3D((2, 3, 4))(mx.nd.zeros((1, 48, 3, 5, 7))).shape
    (1, 2, 6, 15, 28)
    """
    _ndim = 3

    def hybrid_forward(self, F, x):
        # NOTE: MXNet's transpose stops at 6-D, so the three factors are moved into
        # place one at a time with swaps instead of one 8-D transpose.
        f1, f2, f3 = self._factors
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))  # (N, C, f1*f2*f3, D, H, W)
        x = F.swapaxes(x, 2, 3)                               # (N, C, D, f1*f2*f3, H, W)
        x = F.reshape(x, (0, 0, 0, -4, f1, f2 * f3, 0, 0))    # (N, C, D, f1, f2*f3, H, W)
        x = F.reshape(x, (0, 0, -3, 0, 0, 0))                 # (N, C, D*f1, f2*f3, H, W)
        x = F.swapaxes(x, 3, 4)                               # (N, C, D*f1, H, f2*f3, W)
        x = F.reshape(x, (0, 0, 0, 0, -4, f2, f3, 0))         # (N, C, D*f1, H, f2, f3, W)
        x = F.reshape(x, (0, 0, 0, -3, 0, 0))                 # (N, C, D*f1, H*f2, f3, W)
        x = F.swapaxes(x, 4, 5)                               # (N, C, D*f1, H*f2, W, f3)
        return F.reshape(x, (0, 0, 0, 0, -3))                 # (N, C, D*f1, H*f2, W*f3)


class SyncBatchNorm(BatchNorm):
    """Batch normalisation with statistics shared by ``num_devices`` devices (MXNet's
    cross-GPU BatchNorm), channels on axis 1.

    mxlite runs the contexts of a split batch one after another, so statistics cannot
    be synchronised across them: with one device (``num_devices=1``, the default on a
    machine without GPUs) this is BatchNorm; with more, the forward pass raises.

    Parameters
    ----------
    in_channels : int, default 0
        0 infers the channel count at the first forward pass.
    num_devices : int, optional
        Devices sharing the statistics; by default the number of GPUs (at least 1),
        with MXNet's warning to set it.
    momentum, epsilon, center, scale, use_global_stats : see :class:`~mxlite.gluon.nn.BatchNorm`
    """

    def __init__(self, in_channels=0, num_devices=None, momentum=0.9, epsilon=1e-5,
                 center=True, scale=True, use_global_stats=False, beta_initializer="zeros",
                 gamma_initializer="ones", running_mean_initializer="zeros",
                 running_variance_initializer="ones", **kwargs):
        super().__init__(1, momentum, epsilon, center, scale, use_global_stats,
                         beta_initializer, gamma_initializer, running_mean_initializer,
                         running_variance_initializer, in_channels, **kwargs)
        if num_devices is None:
            num_devices = self._get_num_devices()
        self._kwargs = {"eps": epsilon, "momentum": momentum, "fix_gamma": not scale,
                        "use_global_stats": use_global_stats, "ndev": num_devices,
                        "key": self.prefix}

    @staticmethod
    def _get_num_devices():
        from ....context import num_gpus
        warnings.warn("Caution using SyncBatchNorm: if not using all the GPUs, please "
                      "mannually set num_devices", UserWarning)
        return max(num_gpus(), 1)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        return F.contrib.SyncBatchNorm(x, gamma, beta, running_mean, running_var,
                                       name="fwd", **self._kwargs)
