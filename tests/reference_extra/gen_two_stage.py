"""Golden data for the two-stage detector ops, from real MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_two_stage.py`` from an
environment with ``pip install "numpy<1.24" mxnet==1.9.1``.
Writes ``two_stage.npz``: for every op case ``<case>`` the keys ``<case>/op``
(registered op name), ``<case>/params`` (JSON of the keyword params), ``<case>/in<i>``
(inputs), ``<case>/out<i>`` (visible outputs), and, for cases with gradients,
``<case>/head`` (head gradient of output 0) and ``<case>/grad<i>`` (input gradients).
The Gluon case ``block/...`` holds ``kwargs`` (JSON constructor arguments), ``x``,
``param/<name>`` (parameter values by their name without the block prefix), ``out``,
``head``, ``xgrad`` and ``pgrad/<name>``.
"""
import json
import os

import mxnet as mx
import numpy as np

RNG = np.random.RandomState(7)
CASES = {}


def case(name, op, inputs, params, grad=False, dtype="float32"):
    """Run ``op`` in MXNet and store inputs, outputs and (if ``grad``) gradients."""
    fn = getattr(mx.nd.contrib, op[len("_contrib_"):])
    xs = [mx.nd.array(a, dtype=dtype) for a in inputs]
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        ys = fn(*xs, **params)
    ys = ys if isinstance(ys, list) else [ys]
    rec = {"op": np.array(op), "params": np.array(json.dumps(params))}
    for i, a in enumerate(xs):
        rec["in%d" % i] = a.asnumpy()
    for i, y in enumerate(ys):
        rec["out%d" % i] = y.asnumpy()
    if grad:
        head = RNG.uniform(-1, 1, ys[0].shape).astype(dtype)
        ys[0].backward(mx.nd.array(head, dtype=dtype))
        rec["head"] = head
        for i, x in enumerate(xs):
            rec["grad%d" % i] = x.grad.asnumpy()
    CASES[name] = rec


def deformable_cases():
    def run(name, n, c, h, w, dtype="float32", edges=False, **kw):
        kernel, pad = kw["kernel"], kw.get("pad", (0, 0))
        stride, dilate = kw.get("stride", (1, 1)), kw.get("dilate", (1, 1))
        ho = (h + 2 * pad[0] - dilate[0] * (kernel[0] - 1) - 1) // stride[0] + 1
        wo = (w + 2 * pad[1] - dilate[1] * (kernel[1] - 1) - 1) // stride[1] + 1
        dg = kw.get("num_deformable_group", 1)
        g = kw.get("num_group", 1)
        data = RNG.uniform(-1, 1, (n, c, h, w))
        off = RNG.uniform(-2.5, 2.5, (n, dg * 2 * kernel[0] * kernel[1], ho, wo))
        if edges:
            # points just outside, on and inside the borders (y channels even, x odd)
            off[0, 0, 0, :6] = [-0.5, -1.0, h - 0.5, h - 1.0, h + 0.0, -1e-3]
            off[0, 1, 0, :6] = [0.0, w - 1.0, -0.25, w - 0.5, 0.5, w + 0.0]
            off[-1, 2, -1, :3] = [0.0, 1.0, 2.0]    # integer positions
            off[-1, 3, -1, :3] = [0.0, -1.0, 1.0]
        inputs = [data, off, RNG.uniform(-1, 1, (kw["num_filter"], c // g) + kernel)]
        if not kw.get("no_bias", False):
            inputs.append(RNG.uniform(-1, 1, (kw["num_filter"],)))
        case(name, "_contrib_DeformableConvolution", inputs, kw, grad=True, dtype=dtype)

    run("deform_basic", 2, 3, 6, 7, kernel=(3, 3), pad=(1, 1), num_filter=4, edges=True)
    run("deform_f64", 2, 3, 6, 7, dtype="float64", kernel=(3, 3), pad=(1, 1), num_filter=4,
        edges=True)
    run("deform_groups", 2, 4, 7, 6, kernel=(3, 2), stride=(2, 1), dilate=(1, 2), pad=(2, 1),
        num_filter=6, num_group=2, num_deformable_group=2, edges=True)
    run("deform_groups_f64", 1, 6, 5, 5, dtype="float64", kernel=(2, 2), num_filter=4,
        num_group=2, num_deformable_group=3, no_bias=True)
    run("deform_1x1", 1, 2, 4, 4, kernel=(1, 1), num_filter=3, no_bias=True)


def psroi_cases():
    for name, (dim, gs, p, scale, dtype) in {
            "psroi_basic": (2, 3, 3, 0.25, "float32"),
            "psroi_f64": (2, 3, 3, 0.25, "float64"),
            "psroi_pooled_gt_group": (3, 2, 4, 0.5, "float32"),
            "psroi_pooled_lt_group": (2, 3, 2, 0.3, "float64")}.items():
        data = RNG.uniform(-1, 1, (2, dim * gs * gs, 9, 11))
        rois = np.array([[0, 2.5, 3.5, 20.5, 30.0],     # halves: C rounding
                         [1, -8, -6, 50, 60],          # past the map
                         [1, 30, 30, 31, 31],          # tiny
                         [0, 0, 0, 0, 0],              # a point
                         [1, 10.4, 4.6, 10.6, 4.4],    # x2 < x1 after rounding
                         [0, 12, 8, 40, 36]])
        case(name, "_contrib_PSROIPooling", [data, rois],
             {"spatial_scale": scale, "output_dim": dim, "pooled_size": p, "group_size": gs},
             grad=True, dtype=dtype)
    data = RNG.uniform(-1, 1, (1, 2 * 9, 8, 8))
    case("psroi_default_group", "_contrib_PSROIPooling", [data, np.array([[0, 1, 1, 30, 20]])],
         {"spatial_scale": 0.25, "output_dim": 2, "pooled_size": 3}, grad=True)


def proposal_cases():
    a, h, w = 12, 5, 6
    cls = RNG.uniform(0, 1, (2, 2 * a, h, w))
    bbox = RNG.uniform(-0.3, 0.3, (2, 4 * a, h, w))
    info = np.array([[80, 96, 1.0], [60, 70, 0.8]])     # image 1 is padded: -1 scores
    case("proposal_default", "_contrib_Proposal", [cls[:1], bbox[:1], info[:1]],
         {"output_score": True}, grad=True)
    case("proposal_topn", "_contrib_Proposal", [cls[1:], bbox[1:], info[1:]],
         {"output_score": True, "rpn_pre_nms_top_n": 50, "rpn_post_nms_top_n": 20,
          "threshold": 0.5, "rpn_min_size": 8})
    case("proposal_no_score", "_contrib_Proposal", [cls[1:], bbox[1:], info[1:]],
         {"rpn_post_nms_top_n": 40})
    case("multi_basic", "_contrib_MultiProposal", [cls, bbox, info],
         {"output_score": True, "rpn_post_nms_top_n": 40}, grad=True)
    case("multi_iou_loss", "_contrib_MultiProposal", [cls, bbox, info],
         {"output_score": True, "rpn_post_nms_top_n": 500, "rpn_pre_nms_top_n": -1,
          "iou_loss": True})
    # tied scores (rounded), other anchors and stride: ties keep anchor order
    case("multi_ties", "_contrib_MultiProposal",
         [np.round(cls[:, :24], 1), bbox * 3, np.array([[40, 44, 1.0], [30, 40, 0.8]])],
         {"output_score": True, "rpn_post_nms_top_n": 300, "threshold": 0.3,
          "scales": (2, 4, 8), "ratios": (0.5, 1, 2, 3.0), "feature_stride": 8})
    big_a, bh, bw = 9, 20, 25
    case("proposal_large", "_contrib_Proposal",
         [np.round(RNG.uniform(0, 1, (1, 2 * big_a, bh, bw)), 2),
          RNG.uniform(-0.5, 0.5, (1, 4 * big_a, bh, bw)), np.array([[250, 300, 1.5]])],
         {"output_score": True, "rpn_post_nms_top_n": 1000, "rpn_pre_nms_top_n": 3000,
          "scales": (8, 16, 32)})


def block_case():
    kwargs = {"channels": 4, "kernel_size": 3, "padding": 1, "num_deformable_group": 2,
              "strides": 1}
    layer = mx.gluon.contrib.cnn.DeformableConvolution(**kwargs)
    layer.initialize()
    x = mx.nd.array(RNG.uniform(-1, 1, (2, 4, 7, 6)))
    layer(x)
    rec = {"kwargs": np.array(json.dumps(kwargs)), "x": x.asnumpy()}
    prefix = layer.prefix
    for name, prm in layer.collect_params().items():
        # non-zero offset weights, so that the offsets are not all zero
        value = RNG.uniform(-0.5, 0.5, prm.shape)
        prm.set_data(mx.nd.array(value))
        rec["param/" + name[len(prefix):]] = value.astype(np.float32)
    layer.hybridize()
    x.attach_grad()
    with mx.autograd.record():
        y = layer(x)
    head = RNG.uniform(-1, 1, y.shape).astype(np.float32)
    y.backward(mx.nd.array(head))
    rec.update(out=y.asnumpy(), head=head, xgrad=x.grad.asnumpy())
    for name, prm in layer.collect_params().items():
        rec["pgrad/" + name[len(prefix):]] = prm.grad().asnumpy()
    CASES["block"] = rec


def main():
    deformable_cases()
    psroi_cases()
    proposal_cases()
    block_case()
    flat = {"%s/%s" % (c, k): v for c, rec in CASES.items() for k, v in rec.items()}
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "two_stage.npz")
    np.savez_compressed(out, **flat)
    print("wrote %d cases to %s" % (len(CASES), out))


if __name__ == "__main__":
    main()
