"""``mx.init`` / ``mx.initializer``: weight initializers, registered by name.

An :class:`Initializer` is called as ``init(InitDesc(name), arr)`` and fills ``arr``
in place. When the descriptor carries an explicit ``__init__`` attribute (what a
Gluon :class:`~mxlite.gluon.Parameter` with ``init=`` passes) that initializer's
``_init_weight`` fills the array; otherwise the parameter name's suffix picks the
rule, as in MXNet: ``weight`` -> the initializer's own rule, ``bias``, ``beta``,
``running_mean``/``moving_mean`` -> 0, ``gamma``, ``running_var``/``moving_var`` -> 1.

>>> init = mx.init.create('xavier', magnitude=2)
>>> w = mx.nd.zeros((3, 4))
>>> init(mx.init.InitDesc('fc_weight'), w)
"""
import json
import logging
import re
import warnings
from math import sqrt

import numpy as np

from . import registry as _registry

__all__ = ["InitDesc", "Initializer", "register", "alias", "create", "Load", "Mixed", "Zero",
           "One", "Constant", "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu",
           "Bilinear", "LSTMBias"]

_REGISTRY = {}          # lower-case name -> Initializer subclass


class InitDesc(str):
    """The name of a variable to initialise, with its attributes.

    Parameters
    ----------
    name : str
        Name of the variable (its suffix selects the default rule).
    attrs : dict of str to str, optional
        Attributes; ``'__init__'`` names or holds an initializer that overrides the rule.
    global_init : Initializer, optional
        The initializer to fall back to.
    """

    def __new__(cls, name, attrs=None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = attrs or {}
        ret.global_init = global_init
        return ret


# ----------------------------------------------------------------------------
# Registry

def register(klass, name=None):
    """Register an :class:`Initializer` subclass under its lower-cased class name.

    Parameters
    ----------
    klass : type
        A subclass of :class:`Initializer`.
    name : str, optional
        The name to register under; the class name by default.

    Examples
    --------
    >>> @mx.init.register
    ... class MyInit(mx.init.Initializer):
    ...     def _init_weight(self, _, arr):
    ...         arr[:] = 0.1
    >>> mx.init.create('myinit')
    """
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise TypeError("register: can only register a subclass of Initializer, got %r"
                        % (klass,))
    key = (name or klass.__name__).lower()
    old = _REGISTRY.get(key)
    if old is not None and old is not klass:
        warnings.warn("New initializer %s.%s registered with name %s is overriding existing "
                      "initializer %s.%s" % (klass.__module__, klass.__name__, key,
                                             old.__module__, old.__name__),
                      UserWarning, stacklevel=2)
    _REGISTRY[key] = klass
    return klass


def alias(*aliases):
    """Class decorator registering an initializer under extra names (``@alias('zeros')``)."""
    return _registry.get_alias_func(Initializer, "initializer")(*aliases)


def create(*args, **kwargs):
    """An initializer from a name, a JSON dump, a dict or an instance.

    Parameters
    ----------
    *args
        The initializer first: ``'xavier'``, ``'["normal", {"sigma": 0.5}]'`` (what
        :meth:`Initializer.dumps` gives), ``{'initializer': 'uniform', 'scale': 0.1}``,
        or an instance (returned as is); the rest go to the class's constructor. As in
        MXNet it may also come as ``initializer=``, so that a constructor argument
        named ``init`` passes through.
    **kwargs
        Passed to the class's constructor.

    Returns
    -------
    Initializer
    """
    if args:
        init, args = args[0], args[1:]
    elif "initializer" in kwargs:
        init = kwargs.pop("initializer")
    else:
        raise TypeError("initializer.create: give the initializer (a name, JSON, dict or "
                        "instance) as the first argument")
    if isinstance(init, Initializer):
        if args or kwargs:
            raise ValueError("initializer is already an instance. Additional arguments are "
                             "invalid")
        return init
    if isinstance(init, dict):
        kw = dict(init)
        return create(kw.pop("initializer"), **kw)
    if not isinstance(init, str):
        raise TypeError("initializer must be of string type, an Initializer or a dict, got %s"
                        % type(init).__name__)
    if init.startswith("["):
        name, kw = json.loads(init)
        return create(name, **kw)
    if init.startswith("{"):
        return create(json.loads(init))
    klass = _REGISTRY.get(init.lower())
    if klass is None:
        raise ValueError("%s is not registered. Please register with initializer.register "
                         "first; registered initializers are: %s"
                         % (init.lower(), ", ".join(sorted(_REGISTRY))))
    return klass(*args, **kwargs)


# ----------------------------------------------------------------------------
# Base class

# Name suffix -> the Initializer method that fills it (checked in this order).
_SUFFIX_RULES = (
    ("weight", "_init_weight"), ("bias", "_init_bias"), ("gamma", "_init_gamma"),
    ("beta", "_init_beta"), ("running_mean", "_init_zero"), ("moving_mean", "_init_zero"),
    ("running_var", "_init_one"), ("moving_var", "_init_one"),
    ("moving_inv_var", "_init_zero"), ("moving_avg", "_init_zero"),
    ("min", "_init_zero"), ("max", "_init_one"),
)


class Initializer:
    """The base class of initializers: subclasses define ``_init_weight(name, arr)``."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Log (``logging.info``) a statistic of every array initialised.

        Parameters
        ----------
        verbose : bool
        print_func : callable, optional
            ``NDArray -> str``; the root mean square by default.
        """
        self._verbose = verbose
        if print_func is None:
            def print_func(x):
                return str(float(np.sqrt(np.mean(np.square(x.asnumpy(), dtype=np.float64)))))
        self._print_func = print_func
        return self

    def _verbose_print(self, desc, init, arr):
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self):
        """The initializer as a JSON string, ``'["normal", {"sigma": 0.5}]'``."""
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        """Fill ``arr`` (an NDArray) in place for the variable described by ``desc``."""
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        for suffix, method in _SUFFIX_RULES:
            if desc.endswith(suffix):
                getattr(self, method)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name, arr):
        warnings.warn("Calling initializer with init(str, NDArray) has been deprecated. "
                      "please use init(mx.init.InitDesc(...), NDArray) instead.",
                      DeprecationWarning, stacklevel=3)
        if not isinstance(name, str):
            raise TypeError("name must be string")
        if name.startswith("upsampling"):
            self._init_bilinear(name, arr)
            return
        self(InitDesc(name), arr)

    def _init_bilinear(self, _, arr):
        arr[:] = _bilinear_kernel(arr.shape)

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    def _init_bias(self, _, arr):
        arr[:] = 0.0

    def _init_gamma(self, _, arr):
        arr[:] = 1.0

    def _init_beta(self, _, arr):
        arr[:] = 0.0

    def _init_weight(self, name, arr):
        raise NotImplementedError("%s: Must override it (_init_weight)" % type(self).__name__)

    def _init_default(self, name, _):
        raise ValueError(
            "Unknown initialization pattern for %s. Default initialization is now limited to "
            "\"weight\", \"bias\", \"gamma\" (1.0), \"beta\" (0.0), running/moving mean (0.0) "
            "and var (1.0). Please use mx.sym.Variable(init=mx.init.*) or "
            "Parameter(init=...) to set initialization pattern" % name)

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__,
                           ", ".join("%s=%r" % kv for kv in self._kwargs.items()))


# ----------------------------------------------------------------------------
# Helpers

def _random(kind, arr, a, b):
    """Fill ``arr`` with ``uniform(a, b)`` or ``normal(a, b)`` draws from mx.random."""
    from . import nd
    fn = nd.random.uniform if kind == "uniform" else nd.random.normal
    kw = {"low": a, "high": b} if kind == "uniform" else {"loc": a, "scale": b}
    arr[:] = fn(shape=arr.shape, ctx=arr.context, dtype=_float_dtype(arr), **kw)


def _float_dtype(arr):
    dt = np.dtype(arr.dtype)
    return dt if dt.kind == "f" else np.dtype(np.float32)


def _bilinear_kernel(shape):
    """The bilinear upsampling kernel of ``shape`` (..., kh, kw), as MXNet fills it."""
    f = np.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    x = np.arange(shape[3])
    y = np.arange(shape[2])
    kernel = np.outer(1 - np.abs(y / f - c), 1 - np.abs(x / f - c)).astype(np.float32)
    return np.broadcast_to(kernel, shape)


# ----------------------------------------------------------------------------
# Initializers

_registry.adopt(Initializer, _REGISTRY)  # mx.registry.get_registry(Initializer) lists them


class Load(Initializer):
    """Initialize variables from a ``.params`` file or a dict of NDArrays.

    ``arg:``/``aux:`` prefixes are dropped from the loaded names; a name not found
    falls back to ``default_init`` (an error when there is none).
    """

    def __init__(self, param, default_init=None, verbose=False):
        super().__init__()
        if isinstance(param, str):
            from .nd import load
            param = load(param)
        if not isinstance(param, dict):
            raise TypeError("Load: param must be a file name or a dict of NDArrays, got %s"
                            % type(param).__name__)
        self.param = {}
        for name, arr in param.items():
            if name.startswith(("arg:", "aux:")):
                name = name[4:]
            self.param[name] = arr
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            if arr.shape != self.param[name].shape:
                raise ValueError("Parameter %s cannot be initialized from loading. Shape "
                                 "mismatch, target %s vs loaded %s"
                                 % (name, arr.shape, self.param[name].shape))
            arr[:] = self.param[name]
            if self.verbose:
                logging.info("Initialized %s by loading", name)
            return
        if self.default_init is None:
            raise ValueError("Cannot Initialize %s. Not found in loaded param and no default "
                             "Initializer is provided." % name)
        self.default_init(name, arr)
        if self.verbose:
            logging.info("Initialized %s by default", name)


class Mixed(Initializer):
    """Pick the initializer by the first regular expression that matches the name.

    Examples
    --------
    >>> init = mx.init.Mixed(['bias', '.*'], [mx.init.Zero(), mx.init.Uniform(0.1)])
    """

    def __init__(self, patterns, initializers):
        super().__init__()
        if len(patterns) != len(initializers):
            raise ValueError("Mixed: got %d patterns but %d initializers"
                             % (len(patterns), len(initializers)))
        self.map = list(zip([re.compile(p) for p in patterns], initializers))

    def __call__(self, name, arr):
        for prog, init in self.map:
            if prog.match(name):
                init(name, arr)
                return
        raise ValueError("Parameter name %s did not match any pattern. Consider add a \".*\" "
                         "pattern at the and with default Initializer." % name)


@register
@alias("zeros")
class Zero(Initializer):
    """Fill with zeros."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 0


@register
@alias("ones")
class One(Initializer):
    """Fill with ones."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 1


@register
class Constant(Initializer):
    """Fill with ``value``: a scalar or an array broadcastable to the parameter."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value

    def dumps(self):
        """``'["constant", {"value": ...}]'``; an array value is written as nested lists
        (and, as in MXNet, kept in ``_kwargs`` in that form from then on)."""
        val = self._kwargs["value"]
        if not np.isscalar(val):
            self._kwargs["value"] = (val.tolist() if isinstance(val, np.ndarray)
                                     else val.asnumpy().tolist())
        return json.dumps([self.__class__.__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """Uniform draws in ``[-scale, scale]`` (``scale`` 0.07 by default)."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _random("uniform", arr, -self.scale, self.scale)


@register
class Normal(Initializer):
    """Normal draws with mean 0 and standard deviation ``sigma`` (0.01 by default)."""

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _random("normal", arr, 0.0, self.sigma)


@register
class Orthogonal(Initializer):
    """A scaled orthogonal matrix (Saxe et al., 2013) over ``(shape[0], prod(shape[1:]))``.

    Rows are orthonormal when ``shape[0] <= prod(shape[1:])``, columns otherwise,
    times ``scale``.
    """

    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, _, arr):
        from . import nd
        nout = arr.shape[0]
        nin = int(np.prod(arr.shape[1:]))
        if self.rand_type == "uniform":
            tmp = nd.random.uniform(-1.0, 1.0, shape=(nout, nin)).asnumpy()
        elif self.rand_type == "normal":
            tmp = nd.random.normal(0.0, 1.0, shape=(nout, nin)).asnumpy()
        else:
            raise ValueError("Orthogonal: rand_type must be 'uniform' or 'normal', got %r"
                             % (self.rand_type,))
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        res = u if u.shape == tmp.shape else v
        arr[:] = (self.scale * res).reshape(arr.shape)


@register
class Xavier(Initializer):
    """Xavier (Glorot) initialisation: variance ``magnitude / factor``.

    ``factor`` is ``(fan_in + fan_out) / 2`` (``'avg'``), ``fan_in`` (``'in'``) or
    ``fan_out`` (``'out'``), with ``fan_in = shape[1] * prod(shape[2:])`` and
    ``fan_out = shape[0] * prod(shape[2:])``. Uniform draws use the bound
    ``sqrt(magnitude / factor)`` (variance ``magnitude / (3 factor)``); ``'gaussian'``
    draws use it as the standard deviation.
    """

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError("Xavier initializer cannot be applied to vector {0}. It requires at"
                             " least 2D.".format(name))
        hw_scale = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factors = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}
        if self.factor_type not in factors:
            raise ValueError("Incorrect factor type %r; expected 'avg', 'in' or 'out'"
                             % (self.factor_type,))
        scale = sqrt(self.magnitude / factors[self.factor_type])
        if self.rnd_type == "uniform":
            _random("uniform", arr, -scale, scale)
        elif self.rnd_type == "gaussian":
            _random("normal", arr, 0.0, scale)
        else:
            raise ValueError("Unknown random type %r; expected 'uniform' or 'gaussian'"
                             % (self.rnd_type,))


@register
class MSRAPrelu(Xavier):
    """He et al. (2015) initialisation: Gaussian Xavier with ``magnitude = 2 / (1 + slope^2)``."""

    def __init__(self, factor_type="avg", slope=0.25):
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """The bilinear interpolation kernel, for upsampling (Deconvolution) weights."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = _bilinear_kernel(arr.shape)


@register
class LSTMBias(Initializer):
    """Zero LSTM biases except the forget gate's (the second quarter), set to ``forget_bias``."""

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        arr[:] = 0.0
        num_hidden = int(arr.shape[0] / 4)
        arr[num_hidden:2 * num_hidden] = self.forget_bias

# Names MXNet's module also shows, served from where they live in mxlite.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "NDArray": "mxlite.nd.ndarray",
    "is_np_array": "mxlite.util",
    "load": "mxlite.nd",
    "ndarray": "mxlite.nd:",
    "random": "mxlite.random:",
    "registry": "mxlite.registry:",
    "string_types": "mxlite.base",
})
