"""Every registered operator has a test row (PyTorch's OpInfo rule): a :class:`optable.Spec`
in some test table, or a golden case written by real MXNet 1.9.1 (forward and gradient).
Ops without one are listed in EXEMPT with the reason, and nowhere else."""
import glob
import importlib
import json
import os

import numpy as np

import optable
from conftest import REF
from mxlite.nd.register import namespace_of
from mxlite.operator.registry import OPS

HERE = os.path.dirname(os.path.abspath(__file__))

_BACKWARD = "a backward op: it runs inside its forward op's gradient, which the forward's " \
            "rows check against numeric gradients"
_USER_CODE = "runs code the caller gives it: covered by its adapters' tests"
EXEMPT = {
    "Custom": _USER_CODE + " (test_custom_op.py)",
    "_foreach": _USER_CODE + " (test_nd_control_flow.py, test_sym_control_flow.py)",
    "_while_loop": _USER_CODE + " (test_nd_control_flow.py, test_sym_control_flow.py)",
    "_cond": _USER_CODE + " (test_nd_control_flow.py, test_sym_control_flow.py)",
    "_CachedOp": "runs the hybridized block's graph autograd.get_symbol gives it: forward "
                 "and gradient against the block's own (test_mxnet_behaviours.py)",
}
EXEMPT.update({name: _BACKWARD for name in {op.name for op in OPS.values()}
               if name.startswith("_backward_")})
EXEMPT.update({name: _BACKWARD + " (and test_op_contrib_backward.py checks it)" for name in
               ("_contrib_backward_gradientmultiplier", "_contrib_backward_hawkesll")})
# Ops only gradient rules call: each is checked through the numeric gradients (first and
# second order) of the forward ops named.
_INSIDE = "runs only inside the gradient of %s, whose rows check it"
EXEMPT.update({
    "_conv_weight_grad": _INSIDE % "Convolution and Deconvolution",
    "_deformable_conv_backward": _INSIDE % "_contrib_DeformableConvolution",
    "_embedding_backward": _INSIDE % "Embedding",
    "_getitem_backward": _INSIDE % "_getitem (NDArray indexing)",
    "_npi_getitem_backward": _INSIDE % "_npi_getitem (mx.np indexing)",
    "_lrn_window_sum": _INSIDE % "LRN",
    "_pool_max_gather": _INSIDE % "Pooling (max)",
    "_pool_max_scatter": _INSIDE % "Pooling (max)",
    "_pool_scatter": _INSIDE % "Pooling",
    "_psroi_pool_scatter": _INSIDE % "_contrib_PSROIPooling",
    "_roi_align_scatter": _INSIDE % "_contrib_ROIAlign",
    "_roi_pool_gather": _INSIDE % "ROIPooling",
    "_roi_pool_scatter": _INSIDE % "ROIPooling",
    "_sampling_scatter_add": _INSIDE % "BilinearSampler and GridGenerator",
    "_box_nms_gather": _INSIDE % "_contrib_box_nms",
    "_box_nms_scatter": _INSIDE % "_contrib_box_nms",
    "_NoGradient": "a placeholder node of MXNet's gradient graphs: it loads from JSON and "
                   "cannot run, as in MXNet (test_symbol.py)",
    "_setitem": "NDArray.__setitem__'s op, whose params only NDArray makes: the setitem "
                "tests of test_op_tensor.py",
    "_sparse_retain": "mx.nd.sparse.retain: rows, storage type, gradient and bad rows in "
                      "test_sparse_api.py",
    "_sparse_adagrad_update": "mx.nd.sparse.adagrad_update: against MXNet's formula, on the "
                              "gradient's rows only, in test_sparse_api.py",
})

def _table_modules():
    """Import every test module that builds rows, so that their Specs exist (here, while
    this module loads: rows made inside a running test are not a table's)."""
    for path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
        with open(path, encoding="utf-8") as f:
            if "optable" in f.read() and path != os.path.abspath(__file__):
                importlib.import_module(os.path.basename(path)[:-3])


_table_modules()


def _resolve(path, by_function, namespace=""):
    """The registry name of an op named as golden files name it: a registry name or alias
    (``linalg_gelqf``), or the path of its function under ``mx.nd`` (``contrib.fft``,
    ``_internal._Equal``; ``namespace``: the one a file's short names are in)."""
    ns, _, short = path.rpartition(".")
    ns = ns or namespace
    for name in (path, by_function.get((ns, short)), "_%s_%s" % (ns, short),
                 short if ns == "_internal" else None):
        if name in OPS:
            return OPS[name].name
    return None


def _golden_ops():
    """Registry names of the ops that golden cases from MXNet 1.9.1 run: the ops manifest,
    the ``__manifest__`` of the extra golden files and their per-case ``<case>/op``."""
    by_function = {namespace_of(op.name): op.name for op in OPS.values()}
    with open(os.path.join(REF, "ops", "manifest.json")) as f:
        paths = {c["op"] for c in json.load(f)["cases"]}
    for npz in sorted(glob.glob(os.path.join(os.path.dirname(REF), "reference_extra", "*.npz"))):
        with np.load(npz) as z:
            if "__manifest__" in z.files:
                cases = json.loads(str(z["__manifest__"]))
                paths |= {c["op"] for c in cases if isinstance(c, dict) and "op" in c}
            paths |= {str(z[k]) for k in z.files if k.endswith("/op")}
    names = {_resolve(p, by_function) for p in paths}
    with np.load(os.path.join(os.path.dirname(REF), "reference_extra", "image_ops.npz")) as z:
        names |= {_resolve(str(z[k]), by_function, "image") for k in z.files if k.endswith("/op")}
    return names - {None}


def test_every_registered_op_has_a_row():
    covered, unclear = set(), []
    for c in optable.ALL:
        try:
            covered |= optable.ops_of(c)
        except ValueError as e:
            unclear.append(str(e))
    assert not unclear, "rows that do not say which op they test:\n" + "\n".join(unclear)
    covered |= _golden_ops()
    # mxlite's ops, not those that other tests register for themselves
    registered = {op.name for op in OPS.values()
                  if (getattr(op.kernel, "__module__", None) or "").startswith("mxlite.")}
    missing = sorted(registered - covered - set(EXEMPT))
    assert not missing, "%d registered ops have no test row (add a Spec, or an EXEMPT " \
                        "entry with its reason): %s" % (len(missing), " ".join(missing))
    stale = sorted(n for n in EXEMPT if n not in registered or n in covered)
    assert not stale, "EXEMPT entries for ops that are gone or have rows now (remove them): " \
                      "%s" % stale
