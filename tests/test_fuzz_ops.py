"""Seeded fuzzing of every registered operator with bad inputs.

Each op is called with arrays of a wrong rank, dtype or arity, mixed dtypes, empty and
0-d arrays, NaNs, a bogus choice, negative sizes and shapes no machine holds. Every call must either succeed or raise an
error naming the op (an MXNetError, or a ValueError/TypeError), an error must leave
every input as it was, and it must come from the op's own rules ("<op>: <argument>
expected ..., got ..."), never from NumPy failing deep inside a kernel.
"""
import collections
import os
import time
import traceback
import warnings

import numpy as np
import pytest

import mxlite as mx
from mxlite.base import MXNetError
from mxlite.nd.register import namespace_of
from mxlite.operator.registry import OPS, REQUIRED, Op, ranks, run_step

SEED = 20161116
# Ops that run code given to them (subgraphs, user ops), and the ops of NDArray indexing,
# whose params (Python index objects) only NDArray itself gives.
SKIP = {"Custom", "_foreach", "_while_loop", "_cond", "_CachedOp", "_setitem", "_getitem",
        "_getitem_backward", "_npi_getitem", "_npi_getitem_backward"}
# MXNet's own error of a wrong call: the exceptions a bad input may raise.
CLEAR = (MXNetError, ValueError, TypeError)


def _value(prm):
    """A plausible value for a required param, from its declared type."""
    if prm.choices is not None:
        return prm.choices[0] if prm.choices[0] is not None else prm.choices[-1]
    special = {"dtype": "float32", "ctx": "cpu(0)", "kernel": (1, 1)}
    if prm.name in special:
        return special[prm.name]
    name = getattr(prm.parse, "__name__", "")
    if "shape" in name or "tuple" in name:
        return (1,)
    if "int" in name:
        return 1
    if "float" in name:
        return 0.5
    if "bool" in name:
        return False
    if "dtype" in name:
        return "float32"
    return "1"


def _base_call(op):
    params = {k: _value(prm) for k, prm in op.params.items() if prm.default is REQUIRED}
    return params, len(op.input_names(op.parse_params(params)))


def _arrays(kind, n, rng):
    shapes = {"good": (2, 3), "rank0": (), "rank1": (3,), "rank5": (1, 2, 1, 2, 1),
              "empty": (0, 3), "nan": (2, 3), "int": (2, 3), "half": (2, 3), "bool": (2, 3)}
    dtype = {"int": np.int32, "half": np.float16, "bool": np.bool_}.get(kind, np.float32)
    out = []
    for _ in range(n):
        a = rng.uniform(0.1, 0.9, shapes[kind]).astype(dtype)
        if kind == "nan":
            a[...] = np.nan
        out.append(mx.nd.array(a, dtype=dtype))
    return out


def _cases(op, rng):
    params, n = _base_call(op)
    cases = [(kind, _arrays(kind, n, rng), params)
             for kind in ("good", "rank0", "rank1", "rank5", "empty", "nan", "int", "half",
                          "bool")]
    if n:
        cases.append(("arity-1", _arrays("good", n - 1, rng), params))
    cases.append(("arity+1", _arrays("good", n + 1, rng), params))
    if n > 1:       # dtypes mixed: the first input's and another's for the rest
        for other in ("int", "half"):
            cases.append(("mixed:" + other, _arrays("good", 1, rng) + _arrays(other, n - 1, rng),
                          params))
    for k, prm in op.params.items():
        if prm.choices is not None:
            cases.append(("choice:" + k, _arrays("good", n, rng), dict(params, **{k: "bogus"})))
        name = getattr(prm.parse, "__name__", "")
        if ("int" in name or "shape" in name) and "dtype" not in name:
            neg = (-2,) if "shape" in name else -2
            cases.append(("negative:" + k, _arrays("good", n, rng), dict(params, **{k: neg})))
        if "shape" in name:     # more than any machine holds (100 TB at one byte each)
            cases.append(("huge:" + k, _arrays("good", n, rng),
                          dict(params, **{k: (10 ** 7, 10 ** 7)})))
    return cases


def _function(op):
    """``mx.nd``'s function for ``op``: the user's way in (it checks arity too)."""
    ns, short = namespace_of(op.name)
    fn = getattr(getattr(mx.nd, ns) if ns else mx.nd, short, None)
    return fn if fn is not None else getattr(mx.nd._internal, op.name)


def _names_op(op, msg):
    """Whether ``msg`` names the op, an alias, or the function the user called."""
    return any(n in msg for n in (op.name, namespace_of(op.name)[1]) + op.aliases)


_PACKAGE = os.path.dirname(mx.__file__) + os.sep


def _raw(e):
    """Whether error ``e`` is NumPy or Python failing inside a kernel (the registry wraps
    it, keeping it as ``__cause__``) rather than a rule of mxlite raising it."""
    root = e
    while root.__cause__ is not None and root.__cause__ is not root:
        root = root.__cause__
    if root is e:
        return False
    frames = traceback.extract_tb(root.__traceback__)
    last = frames[-1] if frames else None
    return last is None or not last.filename.startswith(_PACKAGE) or \
        not (last.line or "").lstrip().startswith("raise")


def _run_all():
    rng = np.random.RandomState(SEED)
    tally, bad = collections.Counter(), []
    ops = {id(op): op for name, op in sorted(OPS.items())}.values()
    for op in ops:
        if op.name in SKIP or op.custom_parse is not None:
            continue
        fn = _function(op)
        tally["ops"] += 1
        for kind, xs, params in _cases(op, rng):
            before = [x.asnumpy().copy() for x in xs]
            try:
                # NOTE: NaN or inf results (arccosh(0.5), 1 // 0) are MXNet's silent
                # answers; NumPy warns about them, which is no error, so the warnings are
                # counted here instead of failing the call as this suite's filter would.
                with mx.autograd.pause(), warnings.catch_warnings(record=True) as seen:
                    warnings.simplefilter("always", RuntimeWarning)
                    fn(*xs, **params)
                tally["ok, NumPy warned" if seen else "ok"] += 1
                continue
            except CLEAR as e:
                msg = "%s: %s" % (type(e).__name__, e)
                clear, raw = _names_op(op, str(e)), _raw(e)
            except Exception as e:      # noqa: BLE001  (what the test looks for)
                msg, clear, raw = "%s: %s" % (type(e).__name__, e), False, True
            changed = [i for i, (x, b) in enumerate(zip(xs, before))
                       if x.shape != b.shape or not np.array_equal(x.asnumpy(), b, equal_nan=True)]
            ok = clear and not raw and not changed
            tally["error" if ok else "raw" if clear and not changed else "bad"] += 1
            if not ok:
                bad.append("%s [%s]%s%s %s" % (op.name, kind, " changed %s" % changed
                                               if changed else "", " (raw)" if raw else "",
                                               msg[:160]))
    return tally, bad


def test_a_raw_numpy_error_is_told_from_a_rule():
    x = np.ones(2)
    deep = Op("_fuzz_probe", lambda p, xp, x: x.reshape(x.shape[3]))
    ruled = Op("_fuzz_probe", lambda p, xp, x: x.reshape(x.shape[3]), check=ranks(data=4))
    for op, raw in ((deep, True), (ruled, False)):
        with pytest.raises(MXNetError, match="^_fuzz_probe: ") as e:
            run_step(op, op.default_params, np, [x])
        assert _raw(e.value) is raw
    assert str(e.value) == "_fuzz_probe: data expected at least 4 dims, got shape (2,)"


def test_every_op_fails_clearly_and_changes_nothing():
    t0 = time.time()
    tally, bad = _run_all()
    n_ops = tally.pop("ops")
    print("fuzz: %d cases, %d ops in %.1fs: %s" % (sum(tally.values()), n_ops,
                                                   time.time() - t0, dict(tally)))
    assert not bad, "%d unclear errors:\n%s" % (len(bad), "\n".join(bad[:60]))
