"""mx.profiler: op timing through invoke, the Chrome trace written by dump, dumps'
aggregate statistics, run/stop/pause/resume, and user Task/Frame/Event/Counter/Marker."""
import json
import time

import numpy as np
import pytest

import mxlite as mx
from mxlite import profiler
from mxlite.operator import registry


@pytest.fixture
def trace_file(tmp_path):
    """A clean profiler writing to a temporary file; left stopped with no records."""
    path = str(tmp_path / "profile.json")

    def clean():
        profiler.resume()
        profiler.set_config(filename=path)
        profiler.set_state("run")
        profiler.dump(finished=True)     # drops earlier records
        profiler.set_state("stop")
        profiler.dumps(reset=True)
    clean()
    yield path
    clean()
    profiler.set_config()


def _run(path, fn, **config):
    config.setdefault("aggregate_stats", True)
    profiler.set_config(filename=path, **config)
    profiler.set_state("run")
    try:
        fn()
    finally:
        profiler.set_state("stop")
    profiler.dump()
    with open(path) as f:
        return json.load(f)


def _ops(trace, name=None):
    return [e for e in trace["traceEvents"] if e.get("cat") == "operator"
            and (name is None or e["name"] == name)]


def _some_ops():
    x = mx.nd.ones((2, 3))
    for _ in range(3):
        mx.nd.relu(x)
    a = mx.nd.array(np.random.rand(300, 300))
    mx.nd.dot(a, a)


def test_trace_has_one_complete_event_per_op_call(trace_file):
    t0 = time.time() * 1e6
    trace = _run(trace_file, _some_ops)
    t1 = time.time() * 1e6
    assert set(trace) == {"traceEvents", "displayTimeUnit"}
    relu = _ops(trace, "relu")
    assert len(relu) == 3 and len(_ops(trace, "dot")) == 1 and len(_ops(trace, "_ones")) == 1
    for e in _ops(trace):
        assert e["ph"] == "X"
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert e["dur"] >= 0
        # ts is wall-clock microseconds: inside the window the ops ran in
        assert t0 - 1e3 <= e["ts"] <= e["ts"] + e["dur"] <= t1 + 1e3
    starts = [e["ts"] for e in _ops(trace)]
    assert starts == sorted(starts)
    # a 300x300 matmul costs far more than relu on 6 elements
    assert _ops(trace, "dot")[0]["dur"] > min(e["dur"] for e in relu)
    meta = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    assert {m["name"] for m in meta} >= {"process_name", "thread_name"}


def test_stopped_profiler_removes_the_hook(trace_file):
    assert registry._profile_hook is None
    profiler.set_state("run")
    assert registry._profile_hook is not None
    profiler.pause()
    assert registry._profile_hook is None
    profiler.resume()
    assert registry._profile_hook is not None
    profiler.set_state("stop")
    assert registry._profile_hook is None


def test_dumps_json_agrees_with_the_trace(trace_file):
    trace = _run(trace_file, _some_ops)
    stats = json.loads(profiler.dumps(format="json"))
    assert stats["Unit"] == {"Time": "ms", "Memory": "kB"}
    relu = stats["Time"]["operator"]["relu"]
    assert relu["Count"] == 3
    durs_ms = [e["dur"] / 1e3 for e in _ops(trace, "relu")]
    assert relu["Total"] == pytest.approx(sum(durs_ms), abs=2e-4)
    assert relu["Min"] == pytest.approx(min(durs_ms), abs=2e-4)
    assert relu["Max"] == pytest.approx(max(durs_ms), abs=2e-4)
    assert relu["Min"] <= relu["Avg"] <= relu["Max"]
    assert stats["Time"]["operator"]["dot"]["Count"] == 1


def test_dumps_table_layout_and_sorting(trace_file):
    _run(trace_file, _some_ops)
    table = profiler.dumps(sort_by="count", ascending=False)
    assert table.startswith("\nProfile Statistics:\n")
    lines = table.splitlines()
    i = lines.index("operator")
    assert lines[i + 1] == "=" * 17
    assert lines[i + 2].split() == ["Name", "Total", "Count", "Time", "(ms)", "Min", "Time",
                                    "(ms)", "Max", "Time", "(ms)", "Avg", "Time", "(ms)"]
    rows = [ln.split() for ln in lines[i + 4:] if ln.strip()]
    assert rows[0][0] == "relu" and rows[0][1] == "3"
    counts = [int(r[1]) for r in rows]
    assert counts == sorted(counts, reverse=True)
    total, lo, hi, avg = map(float, rows[0][2:])
    # NOTE: printed to 1e-4 ms, so total and 3 * avg differ by up to 5e-5 + 3 * 5e-5 = 2e-4
    # from rounding alone: a bound of exactly 2e-4 failed now and then.
    assert lo <= avg <= hi and total == pytest.approx(3 * avg, abs=2.5e-4)
    asc = [ln.split()[1] for ln in profiler.dumps(sort_by="count", ascending=True)
           .splitlines()[i + 4:] if ln.strip()]
    assert asc[-1] == "3"


def test_dumps_reset_and_no_aggregate(trace_file):
    _run(trace_file, _some_ops)
    assert "relu" in profiler.dumps(reset=True)
    assert "relu" not in profiler.dumps()
    _run(trace_file, _some_ops, aggregate_stats=False)
    assert json.loads(profiler.dumps(format="json"))["Time"] == {}


def test_stop_and_pause_exclude_ops(trace_file):
    x = mx.nd.ones((2,))

    def body():
        mx.nd.relu(x)
        profiler.pause()
        mx.nd.sigmoid(x)
        profiler.resume()
        mx.nd.tanh(x)
    mx.nd.exp(x)                   # before run: not recorded
    trace = _run(trace_file, body)
    mx.nd.log(x)                   # after stop: not recorded
    names = {e["name"] for e in _ops(trace)}
    assert {"relu", "tanh"} <= names
    assert not names & {"sigmoid", "exp", "log"}


def test_op_profiling_can_be_turned_off(trace_file):
    def body():
        task = profiler.Domain("d").new_task("t")
        task.start()
        mx.nd.relu(mx.nd.ones((2,)))
        task.stop()
    trace = _run(trace_file, body, profile_symbolic=False, profile_imperative=False)
    assert _ops(trace) == []
    assert [e["name"] for e in trace["traceEvents"] if e.get("cat") == "d"] == ["t"]


def test_executor_ops_are_recorded(trace_file):
    # NOTE: a hybridized block's fused replay (gluon/cached_graph.py) runs op.compute
    # itself, outside invoke, and is not timed per op.
    def body():
        x = mx.sym.Variable("x")
        w = mx.sym.Variable("w")
        y = mx.sym.FullyConnected(mx.sym.sigmoid(x), w, num_hidden=3, no_bias=True)
        ex = y.bind(mx.cpu(), {"x": mx.nd.ones((2, 2)), "w": mx.nd.ones((3, 2))})
        ex.forward()
    names = [e["name"] for e in _ops(_run(trace_file, body))]
    assert names[-2:] == ["sigmoid", "FullyConnected"]


def test_errors_pass_through_while_profiling(trace_file):
    profiler.set_state("run")
    try:
        with pytest.raises(mx.MXNetError, match="dot"):
            mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((2, 3)))
    finally:
        profiler.set_state("stop")


def test_user_scopes_counters_and_markers(trace_file):
    domain = profiler.Domain("dom")
    counter = domain.new_counter("ctr", 5)      # set before run: value only

    def body():
        nonlocal counter
        task, frame = domain.new_task("task"), domain.new_frame("frame")
        event = profiler.Event("event")
        for scope in (task, frame, event):
            scope.start()
            time.sleep(0.002)
            scope.stop()
        counter.set_value(5)
        counter.increment(3)
        counter -= 1
        counter += 4
        domain.new_marker("mark").mark("thread")
        profiler.pause()
        quiet = profiler.Event("quiet")
        quiet.start()
        quiet.stop()
        domain.new_marker("hidden").mark()
        profiler.resume()

    trace = _run(trace_file, body)
    by_name = {e["name"]: e for e in trace["traceEvents"] if e["ph"] != "M"}
    for name, cat in (("task", "dom"), ("frame", "dom,frame"), ("event", "event")):
        e = by_name[name]
        assert e["cat"] == cat and e["ph"] == "X"
        assert 2000 <= e["dur"] < 2e6           # slept 2 ms
    values = [e["args"]["ctr"] for e in trace["traceEvents"] if e.get("name") == "ctr"]
    assert values == [5, 8, 7, 11] and counter.value == 11
    mark = by_name["mark"]
    assert mark["ph"] == "i" and mark["s"] == "t" and mark["cat"] == "dom,instant_marker"
    assert "quiet" not in by_name and "hidden" not in by_name
    stats = json.loads(profiler.dumps(format="json"))["Time"]
    assert stats["dom"]["task"]["Count"] == 1 and stats["dom"]["task"]["Total"] >= 2.0
    assert stats["dom"]["ctr"]["Count"] == 4
    assert stats["dom"]["ctr"]["Max"] == pytest.approx(11 / 1e3)
    assert stats["dom,instant_marker"] == {}
    with pytest.raises(ValueError, match="scope"):
        domain.new_marker("m").mark("galaxy")


def test_dump_finished_semantics(trace_file):
    with pytest.raises(mx.MXNetError, match="hasn't been run"):
        profiler.dump()
    profiler.set_config(filename=trace_file)
    profiler.set_state("run")
    mx.nd.relu(mx.nd.ones((2,)))
    profiler.dump(finished=False)
    with open(trace_file) as f:
        assert [e["name"] for e in _ops(json.load(f))] == ["_ones", "relu"]
    mx.nd.tanh(mx.nd.ones((2,)))
    profiler.set_state("stop")
    profiler.dump(finished=True)
    with open(trace_file) as f:
        assert [e["name"] for e in _ops(json.load(f))] == ["_ones", "relu", "_ones", "tanh"]
    with pytest.raises(mx.MXNetError, match="hasn't been run"):
        profiler.dump()


def test_bad_arguments():
    with pytest.raises(mx.MXNetError, match="profile_everything"):
        profiler.set_config(profile_everything=True)
    with pytest.raises(ValueError, match="state"):
        profiler.set_state("go")
    with pytest.raises(ValueError, match="format"):
        profiler.dumps(format="xml")
    with pytest.raises(ValueError, match="sort_by"):
        profiler.dumps(sort_by="name")
    with pytest.raises(ValueError, match="profile_process"):
        profiler.set_state("stop", profile_process="server")


def test_deprecated_names_warn(trace_file):
    with pytest.warns(UserWarning, match="deprecated"):
        profiler.profiler_set_config(mode="all", filename=trace_file)
    with pytest.warns(UserWarning, match="deprecated"):
        profiler.profiler_set_state("run")
    with pytest.warns(UserWarning, match="deprecated"):
        profiler.profiler_set_state("stop")
    with pytest.warns(UserWarning, match="deprecated"):
        profiler.dump_profile()
    with open(trace_file) as f:
        assert "traceEvents" in json.load(f)


def test_hybridized_blocks_are_profiled_op_by_op(tmp_path):
    net = mx.gluon.nn.HybridSequential()
    net.add(mx.gluon.nn.Dense(4, activation="relu"), mx.gluon.nn.Dense(2))
    net.initialize()
    net.hybridize()
    x = mx.nd.ones((3, 5))
    net(x)
    mx.profiler.set_config(profile_all=True, aggregate_stats=True,
                           filename=str(tmp_path / "p.json"))
    mx.profiler.set_state("run")
    try:
        y = net(x)
    finally:
        mx.profiler.set_state("stop")
    table = mx.profiler.dumps(reset=True)
    assert "FullyConnected" in table and "Activation" in table
    assert y.shape == (3, 2)
