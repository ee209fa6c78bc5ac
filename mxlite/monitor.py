"""``mx.monitor.Monitor``: statistics of the arrays inside executors during training
(``Module.fit(monitor=...)``), printed every ``interval`` batches."""
import logging
import math
import re

from .nd.ndarray import NDArray
from ._lazy import exports as _exports

__all__ = ["Monitor"]


def _norm_stat(x):
    """``norm(x) / sqrt(x.size)``: the default statistic."""
    from . import nd
    return nd.norm(x) / math.sqrt(x.size)


class Monitor:
    """Collect ``stat_func(array)`` for every op output (and input, with ``monitor_all``)
    whose name matches ``pattern``, on every ``interval``-th batch, plus every argument
    and the matching auxiliary states at :meth:`toc`.

    Parameters
    ----------
    interval : int
        Batches between two collections.
    stat_func : callable, optional
        NDArray -> NDArray (or list of NDArrays); ``norm(x)/sqrt(x.size)`` by default.
    pattern : str
        Regular expression matched (from the start) against the array names.
    sort : bool
        Sort the results by name.
    monitor_all : bool
        Monitor op inputs as well as outputs.

    >>> mon = mx.mon.Monitor(10, pattern='.*weight')
    >>> mod.fit(train_iter, num_epoch=1, monitor=mon)
    """

    def __init__(self, interval, stat_func=None, pattern=".*", sort=False, monitor_all=False):
        self.stat_func = stat_func if stat_func is not None else _norm_stat
        self.interval = interval
        self.activated = False
        self.queue = []
        self.step = 0
        self.exes = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

    def stat_helper(self, name, array):
        """The executor callback: queue the statistic of ``array`` when collecting."""
        if not self.activated or not self.re_prog.match(name):
            return
        self.queue.append((self.step, name, self.stat_func(array)))

    def install(self, exe):
        """Monitor the executor ``exe``."""
        exe.set_monitor_callback(self.stat_helper, self.monitor_all)
        self.exes.append(exe)

    def tic(self):
        """Start a batch: collection is on for every ``interval``-th batch."""
        if self.step % self.interval == 0:
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self):
        """End a batch: ``[(step, name, statistic as text)]`` of what was collected."""
        if not self.activated:
            return []
        for exe in self.exes:
            for name, array in zip(exe.arg_names, exe.arg_arrays):
                self.queue.append((self.step, name, self.stat_func(array)))
            for name, array in zip(exe.aux_names, exe.aux_arrays):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = []
        for step, name, values in self.queue:
            values = [values] if isinstance(values, NDArray) else values
            if not isinstance(values, list):
                raise TypeError("Monitor: stat_func must return an NDArray or a list of "
                                "NDArrays, got %s" % type(values).__name__)
            text = "".join((str(v.asscalar()) if v.shape == (1,) else str(v.asnumpy())) + "\t"
                           for v in values)
            res.append((step, name, text))
        self.queue = []
        return res

    def toc_print(self):
        """:meth:`toc`, logged at INFO level."""
        for step, name, text in self.toc():
            logging.info("Batch: {:7d} {:30s} {:s}".format(step, name, text))


__getattr__, __dir__ = _exports(__name__, {"NDArray": "mxlite.nd.ndarray",
                                           "ndarray": "mxlite.nd:", "py_str": "mxlite.base"})
