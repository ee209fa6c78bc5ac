"""Golden files with a ``__manifest__`` (contrib_extra.npz, contrib_more.npz): loading them
and running one case through ``mx.nd`` with autograd, shared by their test modules."""
import json
import os

import mxlite as mx
import numpy as np
from conftest import REF


def load(name):
    """``(npz, manifest)`` of ``reference_extra/<name>``."""
    z = np.load(os.path.join(os.path.dirname(REF), "reference_extra", name))
    return z, json.loads(str(z["__manifest__"]))


def op_at(path):
    """The function at ``path`` under ``mx.nd`` (``contrib.fft``)."""
    fn = mx.nd
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


def array(z, key):
    a = z[key]
    return mx.nd.array(a, dtype=a.dtype)


def run(z, c, train_mode=True):
    """Inputs and outputs of case ``c`` (backward done with the stored head gradients
    when the case lists inputs in ``grad``)."""
    n = c["name"]
    xs = [array(z, "%s/x%d" % (n, i)) for i in range(c["n_in"])]
    for i in c["grad"]:
        xs[i].attach_grad()
    with mx.autograd.record(train_mode=train_mode):
        ys = op_at(c["op"])(*xs, **c["kwargs"])
    ys = (ys if isinstance(ys, list) else [ys])[:c["n_out"]]
    if c["grad"]:
        mx.autograd.backward(ys, [array(z, "%s/gy%d" % (n, i)) for i in range(c["n_out"])])
    return xs, ys
