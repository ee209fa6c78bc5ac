"""``mx.profiler``: time every operator call and user scopes, as ``mxnet.profiler``.

While the profiler runs (``set_state('run')``, not paused), every call through the
operator registry's ``invoke`` (imperative ``mx.nd`` calls and executor / hybridized
graph nodes alike) is timed, and :class:`Task`, :class:`Frame`, :class:`Event`,
:class:`Counter` and :class:`Marker` objects add their own records. :func:`dump`
writes them as a Chrome trace (``chrome://tracing``, Perfetto): one complete event
(``"ph": "X"``, ``ts``/``dur`` in microseconds) per op call or scope, counter
events (``"C"``) and instant events (``"i"``). With ``aggregate_stats=True``,
:func:`dumps` gives count and total/min/max/avg time per op as MXNet's table or JSON.

>>> mx.profiler.set_config(profile_all=True, aggregate_stats=True, filename='prof.json')
>>> mx.profiler.set_state('run')
>>> y = mx.nd.relu(mx.nd.ones((2, 2)))
>>> mx.profiler.set_state('stop')
>>> print(mx.profiler.dumps())          # doctest: +SKIP
>>> mx.profiler.dump()                  # writes prof.json

NOTE: op time is the time of ``compute`` on the calling thread. On a GPU (CuPy)
kernels run asynchronously, so it is the launch time unless the op synchronises.
Gradient rules show up as the ops they are written with (on raw arrays or NDArrays
alike: every kernel runs through ``registry.run_step``).
"""
import json
import os
import threading
import time
import warnings

from .base import MXNetError
from .operator import registry as _registry

__all__ = ["set_config", "set_state", "pause", "resume", "dump", "dumps",
           "profiler_set_config", "profiler_set_state", "dump_profile",
           "Domain", "Task", "Frame", "Event", "Counter", "Marker"]

# MXNet's defaults (ProfileConfigParam): symbolic, imperative, memory and API
# profiling are on unless set_config turns them off; set_config starts from these.
_DEFAULTS = {"filename": "profile.json", "profile_all": False, "profile_symbolic": True,
             "profile_imperative": True, "profile_memory": True, "profile_api": True,
             "continuous_dump": False, "dump_period": 1.0, "aggregate_stats": False,
             "profile_process": "worker"}

_config = dict(_DEFAULTS)
_running = False        # set_state('run') / ('stop')
_paused = False         # pause() / resume()
_can_dump = False       # a run started since the last dump(finished=True)
_events = []            # trace events, in the order they were recorded
_stats = {}             # category -> name -> [count, total, min, max] (microseconds)
_lock = threading.Lock()

# Wall-clock microseconds at perf_counter() == 0, so that ``ts`` reads as a date.
_EPOCH_US = time.time() * 1e6 - time.perf_counter() * 1e6
_SORT_KEYS = {"total": 1, "avg": None, "min": 2, "max": 3, "count": 0}


def _now_us():
    return time.perf_counter() * 1e6 + _EPOCH_US


def _active():
    return _running and not _paused


def _ops_on():
    c = _config
    return c["profile_all"] or c["profile_symbolic"] or c["profile_imperative"]


def _update_hook():
    """Install the timing hook in ``invoke`` only while op records are wanted, so that a
    stopped profiler costs ``invoke`` one global read."""
    _registry._profile_hook = _timed_compute if (_active() and _ops_on()) else None


def _timed_compute(op, p, xp, data):
    t0 = _now_us()
    ys = op.compute(p, xp, *data)
    _add_duration("operator", op.name, t0, _now_us())
    return ys


def _base_event(cat, name, ph, ts):
    return {"name": name, "cat": cat, "ph": ph, "ts": round(ts, 3), "pid": os.getpid(),
            "tid": threading.get_ident()}


def _add_stat(cat, name, value, replace=False):
    with _lock:
        row = _stats.setdefault(cat, {}).get(name)
        if row is None:
            _stats[cat][name] = [1, value, value, value]
            return
        row[0] += 1
        row[1] = value if replace else row[1] + value
        row[2] = min(row[2], value)
        row[3] = max(row[3], value)


def _add_duration(cat, name, t0, t1):
    ev = _base_event(cat, name, "X", t0)
    ev["dur"] = round(t1 - t0, 3)
    _events.append(ev)
    if _config["aggregate_stats"]:
        _add_stat(cat, name, t1 - t0)


# -- configuration and state ----------------------------------------------------------

def _parse_config_value(key, value):
    default = _DEFAULTS[key]
    if isinstance(default, bool):
        if isinstance(value, str):
            if value.lower() not in ("true", "false", "1", "0"):
                raise ValueError("set_config: %s must be a boolean, got %r" % (key, value))
            return value.lower() in ("true", "1")
        return bool(value)
    if isinstance(default, float):
        return float(value)
    return str(value)


def set_config(**kwargs):
    """Configure the profiler (keyword arguments only; the rest take MXNet's defaults).

    Parameters
    ----------
    filename : str, optional
        Where :func:`dump` writes the trace (default ``'profile.json'``).
    profile_all : bool, optional
        Profile everything.
    profile_symbolic, profile_imperative : bool, optional
        Time operator calls (default True). mxlite runs both through one ``invoke``:
        either one turns op timing on, both False turn it off.
    profile_memory, profile_api : bool, optional
        Accepted as MXNet's (default True); mxlite records no memory or C API events.
    continuous_dump : bool, optional
    dump_period : float, optional
        Accepted; :func:`dump` writes when called.
    aggregate_stats : bool, optional
        Keep per-op counts and times for :func:`dumps`.
    profile_process : {'worker'}, optional

    Examples
    --------
    >>> mx.profiler.set_config(profile_all=True, aggregate_stats=True, filename='p.json')
    """
    unknown = sorted(set(kwargs) - set(_DEFAULTS))
    if unknown:
        raise MXNetError("set_config: unknown argument(s) %s; valid arguments are %s"
                         % (", ".join(unknown), ", ".join(sorted(_DEFAULTS))))
    config = dict(_DEFAULTS)
    for k, v in kwargs.items():
        config[k] = _parse_config_value(k, v)
    _check_process(config["profile_process"])
    _config.clear()
    _config.update(config)
    _update_hook()


def _check_process(profile_process):
    if profile_process != "worker":
        raise ValueError("profile_process must be 'worker' (mxlite has no kvstore server), "
                         "got %r" % (profile_process,))


def set_state(state="stop", profile_process="worker"):
    """Start (``'run'``) or stop (``'stop'``) recording.

    Examples
    --------
    >>> mx.profiler.set_state('run')
    >>> mx.profiler.set_state('stop')
    """
    global _running, _can_dump
    if state not in ("run", "stop"):
        raise ValueError("set_state: state must be 'run' or 'stop', got %r" % (state,))
    _check_process(profile_process)
    _running = state == "run"
    if _running:
        _can_dump = True
    _update_hook()


def pause(profile_process="worker"):
    """Stop recording until :func:`resume` (the state stays ``'run'``)."""
    global _paused
    _check_process(profile_process)
    _paused = True
    _update_hook()


def resume(profile_process="worker"):
    """Record again after :func:`pause`."""
    global _paused
    _check_process(profile_process)
    _paused = False
    _update_hook()


def profiler_set_config(mode="symbolic", filename="profile.json"):
    """Deprecated: ``set_config(profile_<mode>=True, filename=filename)``."""
    warnings.warn("profiler.profiler_set_config() is deprecated. "
                  "Please use profiler.set_config() instead")
    set_config(**{"profile_" + mode: True, "filename": filename})


def profiler_set_state(state="stop"):
    """Deprecated: :func:`set_state`."""
    warnings.warn("profiler.profiler_set_state() is deprecated. "
                  "Please use profiler.set_state() instead")
    set_state(state)


def dump_profile():
    """Deprecated: ``dump(True)``."""
    warnings.warn("profiler.dump_profile() is deprecated. Please use profiler.dump() instead")
    dump(True)


# -- output -------------------------------------------------------------------------

def _trace():
    events = list(_events)
    meta = [{"name": "process_name", "ph": "M", "pid": os.getpid(),
             "args": {"name": "mxlite"}}]
    threads = sorted({e["tid"] for e in events})
    meta += [{"name": "thread_name", "ph": "M", "pid": os.getpid(), "tid": t,
              "args": {"name": "thread %d" % i}} for i, t in enumerate(threads)]
    return {"traceEvents": meta + events, "displayTimeUnit": "ms"}


def dump(finished=True, profile_process="worker"):
    """Write every record so far to the configured file as a Chrome trace JSON.

    Parameters
    ----------
    finished : bool, optional
        True: this is the last dump of the run; the records are dropped and
        dumping needs a new ``set_state('run')``. False: keep them, so that a
        later dump writes them again with what came after.

    Raises
    ------
    MXNetError
        When the profiler has not run since the last finished dump.
    """
    global _can_dump
    _check_process(profile_process)
    if not _can_dump:
        raise MXNetError("Profiler hasn't been run. Config and start profiler first")
    with open(_config["filename"], "w") as f:
        json.dump(_trace(), f)
    if finished:
        del _events[:]
        _can_dump = False


def _sorted_rows(rows, sort_by, ascending):
    def key(item):
        count, total, lo, hi = item[1]
        return total / count if sort_by == "avg" else item[1][_SORT_KEYS[sort_by]]
    return sorted(rows.items(), key=key, reverse=not ascending)


_HEAD = "\nProfile Statistics:\n\tNote the difference in units for different entries.\n"
_COLUMNS = ("Name", "Total Count", "Time (ms)", "Min Time (ms)", "Max Time (ms)",
            "Avg Time (ms)")


def _table(stats, sort_by, ascending):
    lines = [_HEAD.rstrip("\n")]
    rule = tuple("-" * len(c) for c in _COLUMNS)
    for cat in sorted(stats):
        lines += [cat, "=" * 17]
        for cols in (_COLUMNS, rule):
            lines.append("%-25s%16s%17s%17s%17s%17s" % cols)
        for name, (count, total, lo, hi) in _sorted_rows(stats[cat], sort_by, ascending):
            lines.append("%-25s%16d%17.4f%17.4f%17.4f%17.4f" % (
                name, count, total / 1e3, lo / 1e3, hi / 1e3, total / count / 1e3))
        lines.append("")
    return "\n".join(lines) + "\n"


def _json(stats, sort_by, ascending):
    times = {}
    for cat in sorted(stats):
        times[cat] = {name: {"Count": count, "Total": round(total / 1e3, 4),
                             "Min": round(lo / 1e3, 4), "Max": round(hi / 1e3, 4),
                             "Avg": round(total / count / 1e3, 4)}
                      for name, (count, total, lo, hi)
                      in _sorted_rows(stats[cat], sort_by, ascending)}
    return json.dumps({"Time": times, "Memory": {}, "Unit": {"Time": "ms", "Memory": "kB"}},
                      indent=4) + "\n"


def dumps(reset=False, format="table", sort_by="total", ascending=False):
    """Aggregate statistics (``aggregate_stats=True``) per category and name.

    Parameters
    ----------
    reset : bool, optional
        Clear the statistics after printing them.
    format : {'table', 'json'}, optional
        MXNet's text table, or JSON ``{"Time": {category: {name: {"Count", "Total",
        "Min", "Max", "Avg"}}}, "Memory": {}, "Unit": {"Time": "ms", "Memory": "kB"}}``.
    sort_by : {'total', 'avg', 'min', 'max', 'count'}, optional
        The order of the rows within a category.
    ascending : bool, optional

    Returns
    -------
    str
        Times in milliseconds. Operators are in category ``'operator'``; tasks and
        counters in their domain's; frames in ``'<domain>,frame'``; events in ``'event'``.
    """
    if format not in ("table", "json"):
        raise ValueError("dumps: format must be 'table' or 'json', got %r" % (format,))
    if sort_by not in _SORT_KEYS:
        raise ValueError("dumps: sort_by must be one of 'total', 'avg', 'min', 'max', "
                         "'count', got %r" % (sort_by,))
    if ascending not in (True, False) or reset not in (True, False):
        raise ValueError("dumps: reset and ascending must be booleans, got %r and %r"
                         % (reset, ascending))
    with _lock:
        stats = {cat: {k: list(v) for k, v in rows.items()} for cat, rows in _stats.items()}
        if reset:
            _stats.clear()
    return (_table if format == "table" else _json)(stats, sort_by, ascending)


# -- user objects ---------------------------------------------------------------------

class Domain:
    """A named group of tasks, frames, counters and markers (a trace category).

    Parameters
    ----------
    name : str
    """

    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name

    def new_task(self, name):
        """A :class:`Task` in this domain."""
        return Task(self, name)

    def new_frame(self, name):
        """A :class:`Frame` in this domain."""
        return Frame(self, name)

    def new_counter(self, name, value=None):
        """A :class:`Counter` in this domain."""
        return Counter(self, name, value)

    def new_marker(self, name):
        """A :class:`Marker` in this domain."""
        return Marker(self, name)


class _Duration:
    """A named scope timed from :meth:`start` to :meth:`stop` (recorded if the profiler
    was recording at ``start``)."""
    _category = None

    def __init__(self, name):
        self.name = name
        self._t0 = None

    def __str__(self):
        return self.name

    def start(self):
        """Start timing this scope."""
        self._t0 = _now_us() if _active() else None

    def stop(self):
        """Stop timing and record the scope (nothing if it was not started while
        the profiler was recording)."""
        if self._t0 is not None:
            _add_duration(self._category, self.name, self._t0, _now_us())
            self._t0 = None


class Task(_Duration):
    """A unit of work in a domain; every pass through start/stop adds to the same
    statistics row (category: the domain's name).

    Examples
    --------
    >>> task = mx.profiler.Domain('d').new_task('load')
    >>> task.start(); task.stop()
    """

    def __init__(self, domain, name):
        super().__init__(name)
        self.domain = domain
        self._category = domain.name


class Frame(_Duration):
    """A frame of a domain (category ``'<domain>,frame'``), as a rendering frame."""

    def __init__(self, domain, name):
        super().__init__(name)
        self.domain = domain
        self._category = "%s,frame" % domain.name


class Event(_Duration):
    """A free-standing named scope (category ``'event'``).

    Examples
    --------
    >>> ev = mx.profiler.Event('step'); ev.start(); ev.stop()
    """
    _category = "event"


class Counter:
    """A named integer tracked over time (``"C"`` trace events while recording).

    Parameters
    ----------
    domain : Domain
    name : str
    value : int, optional
        Initial value.

    Examples
    --------
    >>> c = mx.profiler.Domain('d').new_counter('batches', 0)
    >>> c += 2; c.value
    2
    """

    def __init__(self, domain, name, value=None):
        self.domain = domain
        self.name = name
        self.value = 0
        if value is not None:
            self.set_value(value)

    def __str__(self):
        return self.name

    def set_value(self, value):
        """Set the counter to ``value``."""
        self.value = int(value)
        if _active():
            ev = _base_event(self.domain.name, self.name, "C", _now_us())
            ev["args"] = {self.name: self.value}
            _events.append(ev)
            if _config["aggregate_stats"]:
                # As MXNet: count of updates, Total = current value, Min/Max of values.
                _add_stat(self.domain.name, self.name, self.value, replace=True)

    def increment(self, delta=1):
        """Add ``delta``."""
        self.set_value(self.value + int(delta))

    def decrement(self, delta=1):
        """Subtract ``delta``."""
        self.set_value(self.value - int(delta))

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self


_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "t", "marker": "t"}


class Marker:
    """An instant in time (``"i"`` trace event, category ``'<domain>,instant_marker'``).

    Parameters
    ----------
    domain : Domain
    name : str
    """

    def __init__(self, domain, name):
        self.domain = domain
        self.name = name

    def mark(self, scope="process"):
        """Record the instant; ``scope`` is 'global', 'process', 'thread', 'task' or
        'marker'."""
        if scope not in _SCOPES:
            raise ValueError("Marker.mark: scope must be one of %s, got %r"
                             % (", ".join(_SCOPES), scope))
        if not _active():
            return
        cat = "%s,instant_marker" % self.domain.name
        ev = _base_event(cat, self.name, "i", _now_us())
        ev["s"] = _SCOPES[scope]
        _events.append(ev)
        if _config["aggregate_stats"]:
            with _lock:
                # MXNet lists the category with no rows: markers have no duration.
                _stats.setdefault(cat, {})


# Names MXNet's module also shows, served from where they live in mxlite.
from ._lazy import exports as _exports  # noqa: E402
__getattr__, __dir__ = _exports(__name__, {
    "c_str": "mxlite.base",
    "c_str_array": "mxlite.base",
    "check_call": "mxlite.base",
    "py_str": "mxlite.base",
})
