"""Where MXNet's native files are, as ``mxnet.libinfo``: ``find_lib_path``,
``find_include_path``, ``find_conf_path`` and ``__version__``.

mxlite is pure Python and ships no ``libmxnet`` and no C headers, so these find what
``MXNET_LIBRARY_PATH``, ``MXNET_INCLUDE_PATH`` and ``MXNET_CONF_PATH`` (or
``LD_LIBRARY_PATH``) point at, as MXNet's do, and otherwise raise MXNet's
``RuntimeError`` listing the places searched.
"""
import logging
import os
import platform

# The MXNet API level mxlite implements (mx.__version__).
__version__ = "1.9.1"

_HERE = os.path.dirname(os.path.abspath(__file__))

__all__ = ["find_lib_path", "find_include_path", "find_conf_path"]


def _from_env(var, exists):
    """The absolute path in environment variable ``var`` if it exists (else None, with
    MXNet's warning for a relative or missing one)."""
    path = os.environ.get(var)
    if not path:
        return None
    if not exists(path):
        logging.warning("%s '%s' doesn't exist", var, path)
        return None
    if not os.path.isabs(path):
        logging.warning("%s should be an absolute path, instead of: %s", var, path)
        return None
    return path


def find_lib_path(prefix="libmxnet"):
    """Paths of the MXNet shared library ``prefix`` (``.so``/``.dylib``/``.dll``).

    Returns
    -------
    list of str

    Raises
    ------
    RuntimeError
        When there is none (always, unless ``MXNET_LIBRARY_PATH`` or
        ``LD_LIBRARY_PATH`` leads to one: mxlite has no C library).
    """
    env = _from_env("MXNET_LIBRARY_PATH", os.path.isfile)
    if env:
        return [env]
    dirs = [_HERE, os.path.join(_HERE, "../../lib/"), os.path.join(_HERE, "../../build/")]
    if os.name == "posix" and os.environ.get("LD_LIBRARY_PATH"):
        dirs = [p.strip() for p in os.environ["LD_LIBRARY_PATH"].split(":")] + dirs
    if os.name == "nt":
        suffixes = [".dll"]
    elif platform.system() == "Darwin":
        suffixes = [".dylib", ".so"]
    else:
        suffixes = [".so"]
    candidates = [os.path.join(d, prefix + s) for s in suffixes for d in dirs]
    found = [p for p in candidates if os.path.isfile(p)]
    if not found:
        raise RuntimeError("Cannot find the MXNet library.\nList of candidates:\n"
                           + "\n".join(candidates))
    return found


def find_include_path():
    """The directory of MXNet's C headers (``MXNET_INCLUDE_PATH``).

    Raises
    ------
    RuntimeError
        When there is none: mxlite ships no headers.
    """
    env = _from_env("MXNET_INCLUDE_PATH", os.path.isdir)
    if env:
        return env
    candidates = [os.path.join(_HERE, "include/"), os.path.join(_HERE, "../../include/")]
    for path in candidates:
        if os.path.isdir(path):
            return path
    raise RuntimeError("Cannot find the MXNet include path in either %s or %s\n"
                       % tuple(candidates))


def find_conf_path(prefix="tvmop"):
    """The TVM op config file ``prefix.conf`` (``MXNET_CONF_PATH``).

    Raises
    ------
    RuntimeError
        When there is none (mxlite has no TVM ops).
    """
    env = _from_env("MXNET_CONF_PATH", os.path.isfile)
    if env:
        return env
    candidates = [os.path.join(_HERE, d, prefix + ".conf") for d in ("../../lib/", "../../build/")]
    found = [p for p in candidates if os.path.isfile(p)]
    if not found:
        raise RuntimeError("Cannot find the TVM op config.\nList of candidates:\n"
                           + "\n".join(candidates))
    return found
