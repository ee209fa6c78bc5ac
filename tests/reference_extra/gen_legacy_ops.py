"""Golden data for the legacy op names and small utility ops (tests/test_op_legacy.py),
from real MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_legacy_ops.py``.
Writes ``legacy_ops.npz`` next to this file. Every case runs through MXNet's symbol
executor (``bind``, ``forward(is_train)``, ``backward``) on variables ``a0, a1, ...``
with the op node named ``op``; ops named ``nd:<path>`` are MXNet's NDArray-only legacy
functions, run through ``mx.nd`` and autograd instead. Keys for case ``c``: ``c/x<i>`` (arguments), ``c/aux<i>``
(auxiliary states before), ``c/y<i>`` (outputs), ``c/gy<i>`` (head gradients),
``c/gx<i>`` (argument gradients, for the indices in ``grad``), ``c/auxafter<i>``.
``__manifest__``: JSON list of {name, op (path under mx.sym), kwargs, n_in, n_aux, n_out,
train, grad}. ``__alias_json__``: a symbol JSON saved by MXNet whose nodes were renamed
to the legacy names (``_Equal``, ``_GreaterScalar``, ``_ModScalar``, ...) and loaded and
run by MXNet again; ``alias_json/x<i>`` its inputs, ``alias_json/y<i>`` MXNet's outputs.
"""
import json
import os

import numpy as np
import mxnet as mx

RNG = np.random.RandomState(11)
CASES = []


def case(name, op, inputs, kwargs=None, aux=(), grad=(), train=True, head=None):
    CASES.append(dict(name=name, op=op, inputs=inputs, kwargs=kwargs or {}, aux=list(aux),
                      grad=list(grad), train=train, head=head))


def u(*shape, dtype=np.float32, lo=-2, hi=2):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def _define():
    x = u(3, 4)
    for alias in ("_Equal", "_Not_Equal", "_Greater", "_Greater_Equal", "_Lesser",
                  "_Lesser_Equal", "_Logical_And", "_Logical_Or", "_Logical_Xor"):
        y = np.where(RNG.rand(3, 4) > 0.5, x, u(3, 4)).astype(np.float32)
        y[0, 0] = 0
        case(alias, "_internal." + alias, [x, y])
    for alias in ("_EqualScalar", "_NotEqualScalar", "_GreaterScalar", "_GreaterEqualScalar",
                  "_LesserScalar", "_LesserEqualScalar", "_LogicalAndScalar",
                  "_LogicalOrScalar", "_LogicalXorScalar"):
        case(alias, "_internal." + alias, [np.round(x)], dict(scalar=1.0))
    case("_ModScalar", "_internal._ModScalar", [x * 3], dict(scalar=1.5), grad=[0])
    case("_RModScalar", "_internal._RModScalar", [x + 3], dict(scalar=2.5), grad=[0])
    case("_HypotScalar", "_internal._HypotScalar", [x], dict(scalar=1.5), grad=[0])
    case("_grad_add", "_internal._grad_add", [x, u(3, 4)])
    case("_identity_with_attr_like_rhs", "_internal._identity_with_attr_like_rhs",
         [x, u(3, 4)], grad=[0, 1])
    case("_scatter_plus_scalar", "_internal._scatter_plus_scalar", [x], dict(scalar=0.5),
         grad=[0])
    case("_scatter_minus_scalar", "_internal._scatter_minus_scalar", [x], dict(scalar=0.5),
         grad=[0])
    case("_scatter_elemwise_div", "_internal._scatter_elemwise_div",
         [x, u(3, 4, lo=0.5, hi=2)], grad=[0, 1])
    case("_onehot_encode", "nd:_internal._onehot_encode",
         [np.array([0, 3, 1], np.float32), np.zeros((3, 5), np.float32)])
    idx = np.array([1.7, -1, 9], np.float32)
    case("nd:choose_element_0index", "nd:choose_element_0index", [x, idx], grad=[0])
    case("nd:fill_element_0index", "nd:fill_element_0index", [x, u(3), idx])
    for tag, kw in (("basic", dict(begin=(0, 1), end=(2, 3))),
                    ("step", dict(begin=(None, 3), end=(None, 0), step=(2, -2)))):
        rows = len(range(3)[slice(kw["begin"][0], kw["end"][0], (kw.get("step") or (1,))[0])])
        cols = len(range(4)[slice(kw["begin"][1], kw["end"][1], (kw.get("step") or (1, 1))[1])])
        case("_slice_assign_" + tag, "_internal._slice_assign", [x, u(rows, cols)], kw)
        case("_crop_assign_" + tag, "nd:_internal._crop_assign", [x, u(rows, cols)], kw)
        case("_slice_assign_scalar_" + tag, "_internal._slice_assign_scalar", [x],
             dict(scalar=-3.0, **kw))
        case("_crop_assign_scalar_" + tag, "nd:_internal._crop_assign_scalar", [x],
             dict(scalar=2.0, **kw))
    case("hist_range", "_internal._histogram", [u(5, 6)], dict(bin_cnt=4, range=(-1.5, 1.5)))
    case("hist_edges", "_internal._histogram",
         [np.round(u(5, 6) * 2) / 2, np.array([-2, -0.5, 0, 1, 2], np.float32)])
    case("all_finite_yes", "all_finite", [x])
    bad = x.copy()
    bad[1, 2] = np.inf
    case("all_finite_no", "all_finite", [bad])
    case("multi_all_finite_no", "multi_all_finite", [x, bad, u(2)], dict(num_arrays=3))
    case("multi_all_finite_yes", "multi_all_finite", [x, u(2)], dict(num_arrays=2))
    case("multi_sum_sq", "multi_sum_sq", [x, u(7), u(2, 2, 2)], dict(num_arrays=3))
    case("multi_sum_sq_f64", "multi_sum_sq", [u(3, dtype=np.float64)], dict(num_arrays=1))
    case("multi_lars", "multi_lars",
         [np.array([0.1, 0.2, 0.3, 0.4], np.float32), np.array([4, 0, 9, 2.5], np.float32),
          np.array([1, 2, 0, 0.3], np.float32), np.array([0.01, 0, 0.1, 0.2], np.float32)],
         dict(eta=0.5, eps=1e-3, rescale_grad=0.5))
    case("cast_storage_default", "cast_storage", [x], dict(stype="default"), grad=[0])
    # v1 ops
    d = u(2, 3, 5, 5)
    w, b = u(4, 3, 3, 3), u(4)
    case("conv_v1", "Convolution_v1", [d, w, b], dict(kernel=(3, 3), num_filter=4),
         grad=[0, 1, 2])
    case("conv_v1_geom", "Convolution_v1", [d, w, b],
         dict(kernel=(3, 3), num_filter=4, stride=(2, 1), pad=(1, 2), dilate=(1, 2)),
         grad=[0, 1, 2])
    case("conv_v1_nobias_group", "Convolution_v1", [u(2, 4, 5, 5), u(6, 2, 2, 3)],
         dict(kernel=(2, 3), num_filter=6, num_group=2, no_bias=True), grad=[0, 1])
    for tag, kw in (("max", dict(kernel=(2, 2))),
                    ("max_pad", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1))),
                    ("max_full_pad", dict(kernel=(2, 2), stride=(2, 2), pad=(1, 1),
                                          pooling_convention="full")),
                    ("avg_pad", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg")),
                    ("avg_full", dict(kernel=(2, 2), stride=(2, 2), pool_type="avg",
                                      pooling_convention="full")),
                    ("sum_full_pad", dict(kernel=(3, 2), stride=(2, 3), pad=(1, 0),
                                          pool_type="sum", pooling_convention="full")),
                    ("global_avg", dict(global_pool=True, pool_type="avg", kernel=(1, 1))),
                    ("global_max_pad", dict(global_pool=True, kernel=(2, 2), pad=(1, 1)))):
        data = d if tag != "global_max_pad" else -np.abs(d) - 0.1
        case("pool_v1_" + tag, "Pooling_v1", [data], kw, grad=[0])
    gamma, beta = u(3, lo=0.5, hi=1.5), u(3)
    aux = [np.full(3, 0.1, np.float32), np.full(3, 2.0, np.float32)]
    dd = u(4, 3, 2, 2)
    heads = [(np.arange(dd.size) % 7).reshape(dd.shape).astype(np.float32),
             np.zeros(3, np.float32), np.zeros(3, np.float32)]
    for train in (True, False):
        t = "train" if train else "predict"
        for tag, kw in (("", {}), ("gamma", dict(fix_gamma=False)),
                        ("global", dict(fix_gamma=False, use_global_stats=True)),
                        ("meanvar", dict(fix_gamma=False, output_mean_var=True, eps=1e-5,
                                         momentum=0.6))):
            n_out = 3 if kw.get("output_mean_var") else 1
            case("bn_v1_%s_%s" % (t, tag), "BatchNorm_v1", [dd, gamma, beta], kw, aux=aux,
                 grad=[0, 1, 2], train=train, head=heads[:n_out])
    case("bn_v1_2d", "BatchNorm_v1", [u(5, 3), gamma, beta], dict(fix_gamma=False), aux=aux,
         grad=[0, 1, 2])
    scores = u(4, 5)
    label = np.array([0, 4, 2, 2], np.float32)
    case("svm_l2", "SVMOutput", [scores, label], grad=[0])
    case("svm_l1", "SVMOutput", [scores, label],
         dict(margin=0.5, regularization_coefficient=0.3, use_linear=True), grad=[0])
    case("svm_l2_params", "SVMOutput", [scores, label],
         dict(margin=1.5, regularization_coefficient=2.0), grad=[0])
    act = u(6, 4, lo=0.05, hi=0.95)
    case("kl_reg", "IdentityAttachKLSparseReg", [act], aux=[np.full(4, 0.3, np.float32)],
         grad=[0])
    # NOTE: MXNet's backward fails for data of more than 2 dims (a reduction shape check).
    case("kl_reg_params", "IdentityAttachKLSparseReg", [u(5, 3, lo=0.05, hi=0.95)],
         dict(sparseness_target=0.2, penalty=0.01, momentum=0.5),
         aux=[np.full(3, 0.4, np.float32)], grad=[0])


def _op(path):
    obj = mx.sym
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def _run_nd(c):
    """Legacy NDArray-only functions: mx.nd and autograd."""
    obj = mx.nd
    for part in c["op"][3:].split("."):
        obj = getattr(obj, part)
    xs = [mx.nd.array(a, dtype=a.dtype) for a in c["inputs"]]
    for i in c["grad"]:
        xs[i].attach_grad()
    with mx.autograd.record(train_mode=c["train"]):
        ys = obj(*xs, **c["kwargs"])
    ys = ys if isinstance(ys, (list, tuple)) else [ys]
    out = {"x%d" % i: a for i, a in enumerate(c["inputs"])}
    out.update({"y%d" % i: y.asnumpy() for i, y in enumerate(ys)})
    if c["grad"]:
        head = RNG.uniform(-1, 1, ys[0].shape).astype(np.float32)
        ys[0].backward(mx.nd.array(head))
        out["gy0"] = head
        out.update({"gx%d" % i: xs[i].grad.asnumpy() for i in c["grad"]})
    return out, len(ys)


def _run(c):
    if c["op"].startswith("nd:"):
        return _run_nd(c)
    vs = [mx.sym.var("a%d" % i) for i in range(len(c["inputs"]))]
    sym = _op(c["op"])(*vs, name="op", **c["kwargs"])
    args = {"a%d" % i: mx.nd.array(a, dtype=a.dtype) for i, a in enumerate(c["inputs"])}
    auxn = {n: mx.nd.array(a, dtype=a.dtype)
            for n, a in zip(sym.list_auxiliary_states(), c["aux"])}
    grads = {k: mx.nd.zeros(v.shape, dtype=v.dtype) for k, v in args.items()}
    req = {"a%d" % i: ("write" if i in c["grad"] else "null") for i in range(len(vs))}
    ex = sym.bind(mx.cpu(), args, args_grad=grads, grad_req=req, aux_states=auxn)
    ys = [y.asnumpy() for y in ex.forward(is_train=c["train"])]
    out = {}
    if c["grad"]:
        heads = c["head"] or [RNG.uniform(-1, 1, y.shape).astype(y.dtype) for y in ys]
        ex.backward([mx.nd.array(h, dtype=h.dtype) for h in heads])
        for i, h in enumerate(heads):
            out["gy%d" % i] = h
        for i in c["grad"]:
            try:
                out["gx%d" % i] = grads["a%d" % i].asnumpy()
            except mx.base.MXNetError as e:
                raise RuntimeError("case %s: %s" % (c["name"], str(e)[-200:])) from None
    for i, a in enumerate(c["inputs"]):
        out["x%d" % i] = a
    for i, a in enumerate(c["aux"]):
        out["aux%d" % i] = a
    for i, n in enumerate(sym.list_auxiliary_states()):
        out["auxafter%d" % i] = auxn[n].asnumpy()
    for i, y in enumerate(ys):
        out["y%d" % i] = y
    return out, len(ys)


def _alias_json():
    """A graph saved by MXNet, renamed to the legacy spellings, loaded and run again."""
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.broadcast_add(mx.sym._internal._equal(a, b), mx.sym._internal._greater(a, b))
    s = s + mx.sym._internal._greater_scalar(a, scalar=0.5)
    s = s + mx.sym._internal._mod_scalar(b, scalar=0.7)
    s = mx.sym._internal._logical_or(s, mx.sym._internal._lesser_equal(a, b)) + s
    s = mx.sym.Group([s, mx.sym._internal._hypot_scalar(a, scalar=2.0),
                      mx.sym._internal._not_equal_scalar(b, scalar=1.0)])
    graph = json.loads(s.tojson())
    rename = {"_equal": "_Equal", "_greater": "_Greater", "_greater_scalar": "_GreaterScalar",
              "_mod_scalar": "_ModScalar", "_logical_or": "_Logical_Or",
              "_lesser_equal": "_Lesser_Equal", "_hypot_scalar": "_HypotScalar",
              "_not_equal_scalar": "_NotEqualScalar"}
    for node in graph["nodes"]:
        node["op"] = rename.get(node["op"], node["op"])
    text = json.dumps(graph, indent=2)
    loaded = mx.sym.load_json(text)
    xa = np.round(u(3, 4) * 2) / 2
    xb = np.where(RNG.rand(3, 4) > 0.5, xa, np.round(u(3, 4) * 2) / 2).astype(np.float32)
    ex = loaded.bind(mx.cpu(), {"a": mx.nd.array(xa), "b": mx.nd.array(xb)})
    ys = [y.asnumpy() for y in ex.forward()]
    out = {"alias_json/x0": xa, "alias_json/x1": xb}
    out.update({"alias_json/y%d" % i: y for i, y in enumerate(ys)})
    return text, out


def main():
    _define()
    data, manifest = {}, []
    for c in CASES:
        out, n_out = _run(c)
        data.update({"%s/%s" % (c["name"], k): v for k, v in out.items()})
        manifest.append(dict(name=c["name"], op=c["op"], kwargs=c["kwargs"],
                             n_in=len(c["inputs"]), n_aux=len(c["aux"]), n_out=n_out,
                             train=c["train"], grad=c["grad"]))
    text, out = _alias_json()
    data.update(out)
    data["__manifest__"] = np.array(json.dumps(manifest))
    data["__alias_json__"] = np.array(text)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "legacy_ops.npz")
    np.savez_compressed(path, **data)
    print("wrote %d cases to %s" % (len(manifest), path))


if __name__ == "__main__":
    main()
