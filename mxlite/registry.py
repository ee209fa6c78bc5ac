"""``mx.registry``: registries of classes by lower-cased name, keyed by a base class,
and the register/alias/create functions built on them (as MXNet's ``registry``).

``mx.init.Initializer`` and ``mx.metric.EvalMetric`` keep their registries here too, so
``get_registry(mx.init.Initializer)`` lists the initializers.

>>> class Shape: pass
>>> register = mx.registry.get_register_func(Shape, "shape")
>>> create = mx.registry.get_create_func(Shape, "shape")
>>> @register
... class Square(Shape):
...     def __init__(self, side=1): self.side = side
>>> create("square", side=2).side
2
"""
import json
import warnings

from .base import string_types

__all__ = ["get_registry", "get_register_func", "get_alias_func", "get_create_func",
           "adopt"]

_REGISTRY = {}   # base class -> {lower-case name: class}


def adopt(base_class, table):
    """Make ``table`` (a dict owned by the module defining ``base_class``) the registry
    of ``base_class``; returns it."""
    _REGISTRY[base_class] = table
    return table


def _table(base_class):
    return _REGISTRY.setdefault(base_class, {})


def get_registry(base_class):
    """A copy of the ``{name: class}`` registry of ``base_class``."""
    return _table(base_class).copy()


def get_register_func(base_class, nickname):
    """A function ``register(klass, name=None)`` adding a subclass of ``base_class``
    under ``name`` (default: its class name), lower-cased; replacing an entry warns."""
    registry = _table(base_class)

    def register(klass, name=None):
        if not (isinstance(klass, type) and issubclass(klass, base_class)):
            raise TypeError("register: can only register a subclass of %s, got %r"
                            % (base_class.__name__, klass))
        name = (name or klass.__name__).lower()
        old = registry.get(name)
        if old is not None and old is not klass:
            warnings.warn("New %s %s.%s registered with name %s is overriding existing %s "
                          "%s.%s" % (nickname, klass.__module__, klass.__name__, name,
                                     nickname, old.__module__, old.__name__),
                          UserWarning, stacklevel=2)
        registry[name] = klass
        return klass

    register.__doc__ = "Register %s to the %s factory" % (nickname, nickname)
    return register


def get_alias_func(base_class, nickname):
    """A class decorator factory ``alias(*names)`` registering a class under each name."""
    register = get_register_func(base_class, nickname)

    def alias(*aliases):
        def reg(klass):
            for name in aliases:
                register(klass, name)
            return klass
        return reg
    return alias


def get_create_func(base_class, nickname):
    """A function ``create(name, *args, **kwargs)`` making a registered class's instance.

    ``name`` may be an instance (returned as is), a dict of kwargs holding ``nickname``,
    a JSON string ``'["name", {kwargs}]'`` or ``'{"nickname": "name", ...}'``, or a
    registered name; the name may also be passed as the keyword ``nickname``.
    """
    registry = _table(base_class)

    def create(*args, **kwargs):
        if args:
            name, args = args[0], args[1:]
        elif nickname in kwargs:
            name = kwargs.pop(nickname)
        else:
            raise TypeError("create: give the %s name as the first argument or as %s="
                            % (nickname, nickname))
        if isinstance(name, base_class):
            if args or kwargs:
                raise ValueError("create: %s is already an instance; extra arguments are "
                                 "invalid" % nickname)
            return name
        if isinstance(name, dict):
            return create(**name)
        if not isinstance(name, string_types):
            raise TypeError("create: %s must be a string, got %r" % (nickname, name))
        if name.startswith("["):
            name, kwargs = json.loads(name)
            return create(name, **kwargs)
        if name.startswith("{"):
            return create(**json.loads(name))
        klass = registry.get(name.lower())
        if klass is None:
            raise ValueError("create: %s %r is not registered (registered: %s); register it "
                             "with %s.register first" % (nickname, name,
                                                        ", ".join(sorted(registry)), nickname))
        return klass(*args, **kwargs)

    create.__doc__ = ("Create a %s instance from a name, a config or an instance."
                      % nickname)
    return create
