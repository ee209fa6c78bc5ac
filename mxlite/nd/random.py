"""``mx.nd.random``: random sampling, as ``mxnet.ndarray.random``.

Each sampler takes its distribution parameters either as numbers, drawing an
array of ``shape`` with the ``_random_<dist>`` op, or as NDArrays of one shape
``s``, drawing ``shape`` samples for each element with ``_sample_<dist>`` (the
output has shape ``s + shape``), exactly as MXNet dispatches. The ops
themselves live in ``mxlite/operator/tensor/random.py``; ``*_like`` samplers
are added here from the registry.
"""
import numbers

import numpy as np

from ..context import current_context
from ..operator.registry import OPS, invoke
from .ndarray import NDArray

__all__ = ["uniform", "normal", "randn", "randint", "poisson", "exponential", "gamma",
           "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle"]


def _shape(shape):
    if shape is None:
        return None
    return (int(shape),) if isinstance(shape, (numbers.Integral,)) else tuple(shape)


def _helper(dist, pnames, params, shape, dtype, ctx, out):
    """Dispatch to ``_random_<dist>`` (numbers) or ``_sample_<dist>`` (NDArrays)."""
    shape = _shape(shape)
    if dtype is None and out is not None and np.dtype(out.dtype).kind == "f":
        dtype = out.dtype       # MXNet infers the dtype from ``out``
    if isinstance(params[0], NDArray):
        for name, v in zip(pnames[1:], params[1:]):
            if not isinstance(v, NDArray):
                raise TypeError("%s: distribution parameters must all have the same type, but "
                                "%s is an NDArray and %s is a %s"
                                % (dist, pnames[0], name, type(v).__name__))
        op = OPS["_sample_" + dist]
        kwargs = {"shape": shape or (), "dtype": dtype}
        return invoke(op, list(params), op.parse_params(kwargs), out)
    if isinstance(params[0], numbers.Number):
        for name, v in zip(pnames[1:], params[1:]):
            if not isinstance(v, numbers.Number):
                raise TypeError("%s: distribution parameters must all have the same type, but "
                                "%s is a number and %s is a %s"
                                % (dist, pnames[0], name, type(v).__name__))
        if ctx is None:
            ctx = out.context if out is not None else current_context()
        if shape is None:
            shape = out.shape if out is not None else (1,)
        op = OPS["_random_" + dist]
        kwargs = dict(zip(pnames, params), shape=shape, ctx=ctx, dtype=dtype)
        return invoke(op, (), op.parse_params(kwargs), out, ctx=ctx)
    raise ValueError("%s: distribution parameters must be either NDArray or numbers, but got %s"
                     % (dist, type(params[0]).__name__))


def uniform(low=0, high=1, shape=None, dtype=None, ctx=None, out=None):
    """Draw samples from a uniform distribution on ``[low, high)``.

    Parameters
    ----------
    low, high : float or NDArray, optional
        The interval. NDArrays (of one shape ``s``) give one distribution per
        element, and the output shape ``s + shape``.
    shape : int or tuple of int, optional
        The number of samples (per distribution); ``(1,)`` by default for numbers.
    dtype : {'float16', 'float32', 'float64'}, optional
        Output type, float32 by default.
    ctx : Context, optional
        Device of the output (numbers only); the current context by default.
    out : NDArray, optional
        Store the output here.

    Returns
    -------
    NDArray

    Examples
    --------
    >>> mx.nd.random.uniform(-1, 1, shape=(2, 3)).shape
    (2, 3)
    >>> mx.nd.random.uniform(mx.nd.array([0, 1]), mx.nd.array([1, 2]), shape=4).shape
    (2, 4)
    """
    return _helper("uniform", ("low", "high"), [low, high], shape, dtype, ctx, out)


def normal(loc=0, scale=1, shape=None, dtype=None, ctx=None, out=None):
    """Draw samples from a normal distribution with mean ``loc`` and std ``scale``.

    Parameters and output as :func:`uniform`.

    Examples
    --------
    >>> mx.nd.random.normal(0, 1, shape=(2, 2)).shape
    (2, 2)
    """
    return _helper("normal", ("loc", "scale"), [loc, scale], shape, dtype, ctx, out)


def randn(*shape, loc=0, scale=1, dtype=None, ctx=None, out=None):
    """Draw normal samples of shape ``shape`` (given positionally, as NumPy's ``randn``).

    Examples
    --------
    >>> mx.nd.random.randn(2, 3, loc=5).shape
    (2, 3)
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return _helper("normal", ("loc", "scale"), [loc, scale], shape or None, dtype, ctx, out)


def poisson(lam=1, shape=None, dtype=None, ctx=None, out=None):
    """Draw samples from a Poisson distribution with rate ``lam`` (as floats).

    Parameters and output as :func:`uniform`.
    """
    return _helper("poisson", ("lam",), [lam], shape, dtype, ctx, out)


def exponential(scale=1, shape=None, dtype=None, ctx=None, out=None):
    """Draw samples from an exponential distribution with scale ``scale`` (= 1 / rate).

    Parameters and output as :func:`uniform`.
    """
    lam = 1.0 / scale
    return _helper("exponential", ("lam",), [lam], shape, dtype, ctx, out)


def gamma(alpha=1, beta=1, shape=None, dtype=None, ctx=None, out=None):
    """Draw samples from a gamma distribution with shape ``alpha`` and scale ``beta``.

    Parameters and output as :func:`uniform`.
    """
    return _helper("gamma", ("alpha", "beta"), [alpha, beta], shape, dtype, ctx, out)


def negative_binomial(k=1, p=1, shape=None, dtype=None, ctx=None, out=None):
    """Draw the number of failures before ``k`` successes of probability ``p`` (as floats).

    Parameters and output as :func:`uniform`.
    """
    return _helper("negative_binomial", ("k", "p"), [k, p], shape, dtype, ctx, out)


def generalized_negative_binomial(mu=1, alpha=1, shape=None, dtype=None, ctx=None, out=None):
    """Draw from a negative binomial with mean ``mu`` and dispersion ``alpha`` (as floats).

    ``alpha = 0`` is the Poisson distribution of rate ``mu``. Parameters and
    output as :func:`uniform`.
    """
    return _helper("generalized_negative_binomial", ("mu", "alpha"), [mu, alpha], shape, dtype,
                   ctx, out)


def randint(low, high, shape=None, dtype=None, ctx=None, out=None):
    """Draw integers uniformly from ``[low, high)``.

    Parameters
    ----------
    low, high : int
        The interval.
    shape : int or tuple of int, optional
        Output shape, ``(1,)`` by default.
    dtype : {'int32', 'int64'}, optional
        Output type, int32 by default.
    ctx : Context, optional
        Device of the output.
    out : NDArray, optional
        Store the output here.

    Examples
    --------
    >>> mx.nd.random.randint(0, 10, shape=(3,)).dtype
    <class 'numpy.int32'>
    """
    for name, v in (("low", low), ("high", high)):
        if not isinstance(v, numbers.Integral):
            raise TypeError("randint: %s must be an integer, got %s" % (name, type(v).__name__))
    shape = _shape(shape)
    if ctx is None:
        ctx = out.context if out is not None else current_context()
    if shape is None:
        shape = out.shape if out is not None else (1,)
    op = OPS["_random_randint"]
    p = op.parse_params({"low": low, "high": high, "shape": shape, "ctx": ctx, "dtype": dtype})
    return invoke(op, (), p, out, ctx=ctx)


def multinomial(data, shape=None, get_prob=False, out=None, dtype="int32"):
    """Draw indices from the categorical distributions on the last axis of ``data``.

    Parameters
    ----------
    data : NDArray
        Probabilities, shape ``(d1, ..., dn-1, k)``.
    shape : int or tuple of int, optional
        Samples per distribution; the output shape is ``(d1, ..., dn-1) + shape``.
    get_prob : bool, optional
        Also return the log-probability of each sample (differentiable w.r.t.
        ``data``: the REINFORCE gradient).
    out : NDArray, optional
        Store the samples here.
    dtype : str, optional
        Type of the samples, int32 by default.

    Returns
    -------
    NDArray, or [samples, log_probabilities] when ``get_prob``

    Examples
    --------
    >>> mx.nd.random.multinomial(mx.nd.array([[0, 1], [1, 0]])).asnumpy().tolist()
    [1, 0]
    """
    if not isinstance(data, NDArray):
        raise TypeError("multinomial: data must be an NDArray, got %s" % type(data).__name__)
    op = OPS["_sample_multinomial"]
    p = op.parse_params({"shape": _shape(shape) or (), "get_prob": get_prob, "dtype": dtype})
    return invoke(op, [data], p, out)


def shuffle(data, out=None):
    """A copy of ``data`` with its first axis randomly permuted.

    Examples
    --------
    >>> sorted(mx.nd.random.shuffle(mx.nd.arange(4)).asnumpy().tolist())
    [0.0, 1.0, 2.0, 3.0]
    """
    if not isinstance(data, NDArray):
        raise TypeError("shuffle: data must be an NDArray, got %s" % type(data).__name__)
    op = OPS["_shuffle"]
    return invoke(op, [data], op.default_params, out)
