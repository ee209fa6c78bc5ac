"""Golden data for the fused optimizer update ops (tests/test_optimizer_ops.py), from
real MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_optimizer_ops.py`` from an
environment with ``pip install "numpy<1.24" mxnet==1.9.1``.
Writes ``optimizer_ops.npz`` next to this file: for case ``c`` the keys ``c/x<i>`` (the
inputs before the call), ``c/a<i>`` (the same inputs after it: the states the op updates
in place), ``c/y<i>`` (the outputs); ``__manifest__`` is a JSON list of {name, op (path
under mx.nd), kwargs, n_in, n_out, inplace}. ``inplace`` cases pass ``out=`` the weight
(input 0, or inputs 0, stride, 2*stride ... for the multi_* ops), as MXNet's optimizers do.
"""
import json
import os

import numpy as np
import mxnet as mx

RNG = np.random.RandomState(7)
CASES = []
SHAPE = (4, 5)


def case(name, op, inputs, kwargs, inplace=True, stride=None):
    CASES.append(dict(name=name, op=op, inputs=inputs, kwargs=kwargs, inplace=inplace,
                      stride=stride))


def u(lo=-2.0, hi=2.0, dtype=np.float32, shape=SHAPE):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def _sgd_family():
    for dt in (np.float32, np.float64, np.float16):
        tag = np.dtype(dt).name
        case("sgd_plain_" + tag, "sgd_update", [u(dtype=dt), u(dtype=dt)], dict(lr=0.1))
        case("sgd_wd_rescale_" + tag, "sgd_update", [u(dtype=dt), u(dtype=dt)],
             dict(lr=0.05, wd=0.01, rescale_grad=0.37))
        case("sgd_clip_" + tag, "sgd_update", [u(dtype=dt), u(dtype=dt)],
             dict(lr=0.05, wd=0.01, rescale_grad=0.7, clip_gradient=0.3))
        case("sgd_mom_" + tag, "sgd_mom_update", [u(dtype=dt), u(dtype=dt), u(-.3, .3, dt)],
             dict(lr=0.05, momentum=0.9, wd=0.01, rescale_grad=0.37))
        case("sgd_mom_clip_" + tag, "sgd_mom_update",
             [u(dtype=dt), u(dtype=dt), u(-.3, .3, dt)],
             dict(lr=0.05, momentum=0.8, wd=0.02, rescale_grad=0.7, clip_gradient=0.4))
        case("nag_" + tag, "nag_mom_update", [u(dtype=dt), u(dtype=dt), u(-.3, .3, dt)],
             dict(lr=0.05, momentum=0.9, wd=0.01, rescale_grad=0.37))
        case("nag_clip_" + tag, "nag_mom_update", [u(dtype=dt), u(dtype=dt), u(-.3, .3, dt)],
             dict(lr=0.05, momentum=0.8, wd=0.02, rescale_grad=0.7, clip_gradient=0.4))
        case("signsgd_" + tag, "signsgd_update", [u(dtype=dt), u(dtype=dt)],
             dict(lr=0.05, wd=0.01, rescale_grad=0.5, clip_gradient=0.3))
        case("signum_" + tag, "signum_update", [u(dtype=dt), u(dtype=dt), u(-.3, .3, dt)],
             dict(lr=0.05, momentum=0.9, wd=0.01, rescale_grad=0.37, wd_lh=0.02))
        case("signum_clip_" + tag, "signum_update",
             [u(dtype=dt), u(dtype=dt), u(-.3, .3, dt)],
             dict(lr=0.05, momentum=0.8, wd=0.01, rescale_grad=0.7, clip_gradient=0.4))
    # clip_gradient=0 clips everything to zero in the kernels (only < 0 turns clipping off)
    case("sgd_clip_zero", "sgd_update", [u(), u()], dict(lr=0.1, wd=0.1, clip_gradient=0.0))
    case("sgd_not_inplace", "sgd_update", [u(), u()], dict(lr=0.1, wd=0.1), inplace=False)
    # NAG reads the weight after writing the output: in place, the momentum's weight
    # decay sees the new weight; with a separate output, the old one.
    case("nag_not_inplace", "nag_mom_update", [u(), u(), u(-.3, .3)],
         dict(lr=0.05, momentum=0.9, wd=0.1, rescale_grad=0.37), inplace=False)
    case("nag_zero_wd_not_inplace", "nag_mom_update", [u(), u(), u(-.3, .3)],
         dict(lr=0.05, momentum=0.9, rescale_grad=0.37), inplace=False)


def _mp_family():
    h = np.float16
    for clip in (-1.0, 0.4):
        tag = "clip" if clip >= 0 else "noclip"
        w32 = u()
        case("mp_sgd_" + tag, "mp_sgd_update", [w32.astype(h), u(dtype=h), w32],
             dict(lr=0.05, wd=0.01, rescale_grad=0.37, clip_gradient=clip))
        w32 = u()
        case("mp_sgd_mom_" + tag, "mp_sgd_mom_update",
             [w32.astype(h), u(dtype=h), u(-.3, .3), w32],
             dict(lr=0.05, momentum=0.9, wd=0.01, rescale_grad=0.37, clip_gradient=clip))
        w32 = u()
        case("mp_nag_" + tag, "mp_nag_mom_update",
             [w32.astype(h), u(dtype=h), u(-.3, .3), w32],
             dict(lr=0.05, momentum=0.9, wd=0.01, rescale_grad=0.37, clip_gradient=clip))
    # float32 weights through the mp ops (the master copy is then a float32 twin)
    w32 = u()
    case("mp_sgd_mom_f32", "mp_sgd_mom_update", [w32.copy(), u(), u(-.3, .3), w32],
         dict(lr=0.05, momentum=0.9, wd=0.01))


def _adaptive():
    for dt in (np.float32, np.float64, np.float16):
        tag = np.dtype(dt).name
        case("adam_" + tag, "adam_update", [u(dtype=dt), u(dtype=dt), u(-.2, .2, dt),
                                            u(0, .5, dt)],
             dict(lr=0.01, beta1=0.9, beta2=0.99, epsilon=1e-6, wd=0.01, rescale_grad=0.37))
        case("adam_clip_" + tag, "adam_update",
             [u(dtype=dt), u(dtype=dt), u(-.2, .2, dt), u(0, .5, dt)],
             dict(lr=0.01, wd=0.02, rescale_grad=0.7, clip_gradient=0.5))
        case("rmsprop_" + tag, "rmsprop_update", [u(dtype=dt), u(dtype=dt), u(0, .5, dt)],
             dict(lr=0.01, gamma1=0.9, epsilon=1e-6, wd=0.01, rescale_grad=0.37))
        case("rmsprop_clip_" + tag, "rmsprop_update",
             [u(dtype=dt), u(dtype=dt), u(0, .5, dt)],
             dict(lr=0.3, wd=0.02, rescale_grad=0.7, clip_gradient=0.5, clip_weights=1.5))
        case("rmspropalex_" + tag, "rmspropalex_update",
             [u(dtype=dt), u(dtype=dt), u(1, 2, dt), u(-.2, .2, dt), u(-.1, .1, dt)],
             dict(lr=0.01, gamma1=0.9, gamma2=0.8, epsilon=1e-6, wd=0.01, rescale_grad=0.37))
        case("rmspropalex_clip_" + tag, "rmspropalex_update",
             [u(dtype=dt), u(dtype=dt), u(1, 2, dt), u(-.2, .2, dt), u(-.1, .1, dt)],
             dict(lr=0.3, wd=0.02, rescale_grad=0.7, clip_gradient=0.5, clip_weights=1.5))
        case("ftrl_" + tag, "ftrl_update",
             [u(dtype=dt), u(dtype=dt), u(-1, 1, dt), u(0, 2, dt)],
             dict(lr=0.1, lamda1=0.3, beta=1.5, wd=0.01, rescale_grad=0.37))
        case("ftrl_clip_" + tag, "ftrl_update",
             [u(dtype=dt), u(dtype=dt), u(-1, 1, dt), u(0, 2, dt)],
             dict(lr=0.1, wd=0.02, rescale_grad=0.7, clip_gradient=0.5))
        case("ftml_" + tag, "ftml_update",
             [u(dtype=dt), u(dtype=dt), u(0, 2, dt), u(0, .5, dt), u(-.5, .5, dt)],
             dict(lr=0.01, beta1=0.6, beta2=0.999, epsilon=1e-6, t=3, wd=0.01,
                  rescale_grad=0.37))
        case("ftml_clip_" + tag, "ftml_update",
             [u(dtype=dt), u(dtype=dt), u(0, 2, dt), u(0, .5, dt), u(-.5, .5, dt)],
             dict(lr=0.01, t=1, wd=0.02, rescale_grad=0.7, clip_grad=0.5))
        case("lamb1_" + tag, "lamb_update_phase1",
             [u(dtype=dt), u(dtype=dt), u(-.2, .2, dt), u(0, .5, dt)],
             dict(beta1=0.9, beta2=0.99, epsilon=1e-6, t=3, wd=0.01, rescale_grad=0.37),
             inplace=False)
        case("lamb1_nobias_clip_" + tag, "lamb_update_phase1",
             [u(dtype=dt), u(dtype=dt), u(-.2, .2, dt), u(0, .5, dt)],
             dict(t=2, bias_correction=False, wd=0.02, rescale_grad=0.7, clip_gradient=0.5),
             inplace=False)
        case("lamb2_" + tag, "lamb_update_phase2",
             [u(dtype=dt), u(dtype=dt), np.array([2.5], dt), np.array([1.7], dt)],
             dict(lr=0.01))
        case("lamb2_bounds_" + tag, "lamb_update_phase2",
             [u(dtype=dt), u(dtype=dt), np.array([2.5], dt), np.array([1.7], dt)],
             dict(lr=0.01, lower_bound=0.5, upper_bound=2.0))
        case("adamw_" + tag, "contrib.adamw_update",
             [u(dtype=dt), u(dtype=dt), u(-.2, .2, dt), u(0, .5, dt), np.array([0.37], np.float32)],
             dict(lr=0.01, eta=0.5, beta1=0.9, beta2=0.99, epsilon=1e-6, wd=0.01))
        case("adamw_clip_" + tag, "contrib.adamw_update",
             [u(dtype=dt), u(dtype=dt), u(-.2, .2, dt), u(0, .5, dt), np.array([0.7], np.float32)],
             dict(lr=0.01, eta=2.0, wd=0.02, clip_gradient=0.5))
    case("lamb2_zero_r1", "lamb_update_phase2",
         [u(), u(), np.array([0.0], np.float32), np.array([1.7], np.float32)], dict(lr=0.01))
    case("lamb2_zero_r2", "lamb_update_phase2",
         [u(), u(), np.array([2.5], np.float32), np.array([0.0], np.float32)], dict(lr=0.01))
    case("adamw_inf_rescale", "contrib.adamw_update",
         [u(), u(), u(-.2, .2), u(0, .5), np.array([np.inf], np.float32)],
         dict(lr=0.01, eta=1.0, wd=0.01))
    case("adamw_nan_rescale", "contrib.adamw_update",
         [u(), u(), u(-.2, .2), u(0, .5), np.array([np.nan], np.float32)],
         dict(lr=0.01, eta=1.0, wd=0.01))
    h = np.float16
    w32 = u()
    case("mp_adamw", "contrib.mp_adamw_update",
         [w32.astype(h), u(dtype=h), u(-.2, .2), u(0, .5), w32, np.array([0.37], np.float32)],
         dict(lr=0.01, eta=0.5, wd=0.01, clip_gradient=0.5))
    w32 = u()
    case("mp_lamb1", "mp_lamb_update_phase1",
         [w32.astype(h), u(dtype=h), u(-.2, .2), u(0, .5), w32],
         dict(t=3, wd=0.01, rescale_grad=0.37, clip_gradient=0.5), inplace=False)
    w32 = u()
    case("mp_lamb2", "mp_lamb_update_phase2",
         [w32.astype(h), u(), np.array([2.5], np.float32), np.array([1.7], np.float32), w32],
         dict(lr=0.01, lower_bound=0.5, upper_bound=2.0))


def _multi():
    shapes = [(4, 5), (3,), (2, 2, 2)]
    for mom in (False, True):
        for mp in (False, True):
            xs = []
            for s in shapes:
                w32 = u(shape=s)
                xs += [w32.astype(np.float16) if mp else w32,
                       u(shape=s, dtype=np.float16 if mp else np.float32)]
                if mom:
                    xs.append(u(-.3, .3, shape=s))
                if mp:
                    xs.append(w32)
            kw = dict(lrs=(0.05, 0.1, 0.02), wds=(0.01, 0.0, 0.03), rescale_grad=0.37,
                      num_weights=3)
            if mom:
                kw["momentum"] = 0.9
            op = "multi_%ssgd_%supdate" % ("mp_" if mp else "", "mom_" if mom else "")
            stride = 2 + mom + mp
            case(op, op, xs, kw, stride=stride)
            case(op + "_clip", op, [x.copy() for x in xs], dict(kw, clip_gradient=0.4),
                 stride=stride)


def _run(c, fn):
    xs = [mx.nd.array(x, dtype=x.dtype) for x in c["inputs"]]
    kw = dict(c["kwargs"])
    if c["inplace"]:
        stride = c["stride"]
        kw["out"] = xs[0] if stride is None else [xs[i] for i in range(0, len(xs), stride)]
    ys = fn(*xs, **kw)
    ys = ys if isinstance(ys, (list, tuple)) else [ys]
    return [y.asnumpy() for y in ys], [x.asnumpy() for x in xs]


def main():
    _sgd_family()
    _mp_family()
    _adaptive()
    _multi()
    out, manifest = {}, []
    for c in CASES:
        fn = mx.nd
        for part in c["op"].split("."):
            fn = getattr(fn, part)
        ys, after = _run(c, fn)
        for i, x in enumerate(c["inputs"]):
            out["%s/x%d" % (c["name"], i)] = x
            out["%s/a%d" % (c["name"], i)] = after[i]
        for i, y in enumerate(ys):
            out["%s/y%d" % (c["name"], i)] = y
        manifest.append(dict(name=c["name"], op=c["op"], kwargs=c["kwargs"],
                             n_in=len(c["inputs"]), n_out=len(ys), inplace=c["inplace"],
                             stride=c["stride"]))
    out["__manifest__"] = np.array(json.dumps(manifest))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "optimizer_ops.npz")
    np.savez_compressed(path, **out)
    print("wrote %d cases to %s" % (len(manifest), path))


if __name__ == "__main__":
    main()
