"""``mx.log``: loggers with MXNet's glog-like format
(``W1125 15:04:05 4242 file.py:func:12] message``)."""
import logging
import warnings

__all__ = ["CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET", "get_logger",
           "getLogger"]

CRITICAL = logging.CRITICAL
ERROR = logging.ERROR
WARNING = logging.WARNING
INFO = logging.INFO
DEBUG = logging.DEBUG
NOTSET = logging.NOTSET

_LABELS = {CRITICAL: "C", ERROR: "E", WARNING: "W", INFO: "I", DEBUG: "D"}


class _Formatter(logging.Formatter):
    """One letter for the level, then the time, process, place and message; coloured
    red (warnings and worse), green (info) or blue (debug) for a terminal."""

    def __init__(self):
        super().__init__(datefmt="%m%d %H:%M:%S")

    def format(self, record):
        level = record.levelno
        color = "\x1b[31m" if level >= WARNING else "\x1b[32m" if level >= INFO else "\x1b[34m"
        self._style._fmt = (color + _LABELS.get(level, "U") + "%(asctime)s %(process)d "
                            "%(pathname)s:%(funcName)s:%(lineno)d]\x1b[0m %(message)s")
        return super().format(record)


def get_logger(name=None, filename=None, filemode=None, level=WARNING):
    """A logger named ``name`` writing to ``filename`` (opened with ``filemode``,
    default ``'a'``) or to stderr in MXNet's format, at ``level``.

    Configured once per name: asking again returns the same logger unchanged. With
    ``name=None`` the root logger is returned as it is.

    >>> logger = mx.log.get_logger("train", level=mx.log.INFO)
    """
    logger = logging.getLogger(name)
    if name is not None and not getattr(logger, "_init_done", False):
        logger._init_done = True
        if filename:
            handler = logging.FileHandler(filename, filemode or "a")
        else:
            handler = logging.StreamHandler()
            handler.setFormatter(_Formatter())
        logger.addHandler(handler)
        logger.setLevel(level)
    return logger


def getLogger(name=None, filename=None, filemode=None, level=WARNING):
    """Deprecated spelling of :func:`get_logger` (warns with a DeprecationWarning)."""
    warnings.warn("getLogger is deprecated, Use get_logger instead.", DeprecationWarning,
                  stacklevel=2)
    return get_logger(name, filename, filemode, level)
