"""The symbolic path against the op table: every golden case (151 ops, 289 cases written
by MXNet 1.9.1) built as an ``mx.sym`` graph, bound to an Executor, run forward and
backward, must give the imperative (and MXNet's) outputs, gradients and aux updates."""
import json
import os

import numpy as np
import pytest

import mxlite as mx
from conftest import REF
from test_reference_ops import MXNET_GRADIENT_BUGS, _close

with open(os.path.join(REF, "ops", "manifest.json")) as f:
    CASES = json.load(f)["cases"]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_executor_matches_reference(case):
    with np.load(os.path.join(REF, "ops", case["file"]), allow_pickle=False) as f:
        z = dict(f)
    names = case["inputs"]
    sym = getattr(mx.sym, case["op"])(*[mx.sym.var(n) for n in names], **case["kwargs"])
    values = {n: mx.nd.array(z["input/" + n], dtype=z["input/" + n].dtype) for n in names}
    aux_names = sym.list_auxiliary_states()
    args = {n: values[n] for n in sym.list_arguments()}
    grads = {n: mx.nd.zeros(values[n].shape, dtype=values[n].dtype) for n in case["grads"]
             if n in args}
    reqs = {n: ("write" if n in grads else "null") for n in args}
    ex = sym.bind(mx.cpu(), args, args_grad=grads, grad_req=reqs,
                  aux_states={n: values[n] for n in aux_names})
    # An executor records exactly when it runs in training mode, so cases recorded in
    # predict mode (BatchNorm_predict, ...) are checked forward only here.
    outs = ex.forward(is_train=case["train_mode"])
    for i in case["outputs"]:
        _close(outs[i].asnumpy(), z["output/%d" % i], case["rtol"], case["atol"], "output/%d" % i)
    if not case["forward_only"] and case["train_mode"]:
        heads = [mx.nd.array(z["head/%d" % i], dtype=z["head/%d" % i].dtype)
                 if i in case["head_grads"] else mx.nd.zeros(o.shape, dtype=o.dtype)
                 for i, o in enumerate(outs)]
        ex.backward(heads)
        for n in grads:
            if case["id"] in MXNET_GRADIENT_BUGS:
                continue     # checked against numeric gradients in test_reference_ops
            _close(grads[n].asnumpy(), z["grad/" + n], case["grad_rtol"], case["grad_atol"],
                   "grad/" + n)
    for n in case["aux_updated"]:
        _close(values[n].asnumpy(), z["aux/" + n], case["rtol"], case["atol"], "aux/" + n)
