"""Golden data for the extra linalg ops and the random_pdf ops
(tests/test_op_linalg_extra.py), from real MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_linalg_pdf.py`` from an
environment with ``pip install "numpy<1.24" mxnet==1.9.1``.
Writes ``linalg_pdf.npz`` next to this file: for case ``c`` the keys ``c/x<i>`` (inputs),
``c/y<i>`` (outputs), ``c/gy<i>`` (head gradients) and ``c/gx<i>`` (input gradients, for
the inputs listed in the case's ``grad``); ``__manifest__`` is a JSON list of
{name, op (path under mx.nd), kwargs, n_in, n_out, grad}.
"""
import json
import os

import numpy as np
import mxnet as mx

RNG = np.random.RandomState(5)
CASES = []


def case(name, op, inputs, kwargs=None, grad=()):
    CASES.append(dict(name=name, op=op, inputs=inputs, kwargs=kwargs or {}, grad=list(grad)))


def u(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape)


def sym_distinct(*batch, n=3):
    """Symmetric matrices with well separated eigenvalues (syevd's gradient needs gaps)."""
    q, _ = np.linalg.qr(RNG.randn(*(batch + (n, n))))
    w = np.arange(n) * 1.5 - 1.0 + RNG.uniform(-0.2, 0.2, batch + (n,))
    return (q * w[..., None, :]) @ np.swapaxes(q, -1, -2)


def _linalg(tag, dt):
    c = lambda a: a.astype(dt)
    la = "linalg."
    case("extractdiag_" + tag, la + "extractdiag", [c(u(3, 3))], grad=[0])
    case("extractdiag_off1_batch_" + tag, la + "extractdiag", [c(u(2, 4, 4))],
         dict(offset=1), grad=[0])
    case("extractdiag_offm2_" + tag, la + "extractdiag", [c(u(4, 4))], dict(offset=-2), grad=[0])
    case("makediag_" + tag, la + "makediag", [c(u(3))], grad=[0])
    case("makediag_offm1_batch_" + tag, la + "makediag", [c(u(2, 3))], dict(offset=-1), grad=[0])
    case("makediag_off2_" + tag, "linalg_makediag", [c(u(2, 1, 2))], dict(offset=2), grad=[0])
    case("extracttrian_" + tag, la + "extracttrian", [c(u(4, 4))], grad=[0])
    case("extracttrian_upper_" + tag, la + "extracttrian", [c(u(2, 4, 4))], dict(lower=False),
         grad=[0])
    case("extracttrian_off1_" + tag, la + "extracttrian", [c(u(4, 4))], dict(offset=1), grad=[0])
    case("extracttrian_offm1_upper_" + tag, la + "extracttrian", [c(u(2, 3, 3))],
         dict(offset=-1, lower=False), grad=[0])
    case("extracttrian_off2_lower_" + tag, "linalg_extracttrian", [c(u(4, 4))],
         dict(offset=2, lower=True), grad=[0])
    case("maketrian_" + tag, la + "maketrian", [c(u(6))], grad=[0])
    case("maketrian_upper_" + tag, la + "maketrian", [c(u(2, 6))], dict(lower=False), grad=[0])
    case("maketrian_off1_" + tag, la + "maketrian", [c(u(6))], dict(offset=1), grad=[0])
    case("maketrian_offm2_" + tag, "linalg_maketrian", [c(u(2, 3))], dict(offset=-2), grad=[0])
    case("gelqf_" + tag, la + "gelqf", [c(u(2, 3))], grad=[0])
    case("gelqf_batch_" + tag, la + "gelqf", [c(u(2, 3, 5))], grad=[0])
    case("gelqf_square_" + tag, "linalg_gelqf", [c(u(3, 3) + 2 * np.eye(3))], grad=[0])
    case("syevd_" + tag, la + "syevd", [c(sym_distinct())], grad=[0])
    case("syevd_batch_" + tag, la + "syevd", [c(sym_distinct(2, n=4))], grad=[0])
    # only the lower triangle is read
    case("syevd_nonsym_" + tag, la + "syevd", [c(u(3, 3))])


def _pdf(tag, dt):
    c = lambda a: a.astype(dt)
    for log in (False, True):
        t = tag + ("_log" if log else "")
        kw = dict(is_log=log)
        case("pdf_uniform_" + t, "random_pdf_uniform",
             [c(u(2, 3)), c(u(2, lo=-3, hi=-1)), c(u(2, lo=1, hi=3))], kw, grad=[0, 1, 2])
        case("pdf_normal_" + t, "random_pdf_normal",
             [c(u(2, 4)), c(u(2)), c(u(2, lo=0.5, hi=2))], kw, grad=[0, 1, 2])
        case("pdf_normal_same_" + t, "random_pdf_normal",
             [c(u(2, 3)), c(u(2, 3)), c(u(2, 3, lo=0.5, hi=2))], kw, grad=[0, 1, 2])
        case("pdf_gamma_" + t, "random_pdf_gamma",
             [c(u(3, 2, 2, lo=0.2, hi=4)), c(u(3, lo=0.5, hi=4)), c(u(3, lo=0.5, hi=2))], kw,
             grad=[0, 1, 2])
        case("pdf_exponential_" + t, "random_pdf_exponential",
             [c(u(3, 4, lo=0, hi=3)), c(u(3, lo=0.3, hi=2))], kw, grad=[0, 1])
        case("pdf_poisson_" + t, "random_pdf_poisson",
             [c(RNG.randint(0, 6, (2, 5)).astype(float)), c(u(2, lo=0.5, hi=4))], kw,
             grad=[0, 1])
        case("pdf_negative_binomial_" + t, "random_pdf_negative_binomial",
             [c(RNG.randint(0, 6, (2, 4)).astype(float)), c(u(2, lo=0.5, hi=4)),
              c(u(2, lo=0.2, hi=0.8))], kw, grad=[0, 1, 2])
        case("pdf_gen_negative_binomial_" + t, "random_pdf_generalized_negative_binomial",
             [c(RNG.randint(0, 6, (2, 2, 3)).astype(float)), c(u(2, 2, lo=0.5, hi=4)),
              c(u(2, 2, lo=0.2, hi=1.5))], kw, grad=[0, 1, 2])
        d = RNG.dirichlet([1.0, 2.0, 3.0], (2, 4))
        case("pdf_dirichlet_" + t, "random_pdf_dirichlet", [c(d), c(u(2, 3, lo=0.5, hi=3))],
             kw, grad=[0, 1])
        case("pdf_dirichlet_one_" + t, "random_pdf_dirichlet",
             [c(RNG.dirichlet([1.0, 1.0, 2.0, 1.0])), c(u(4, lo=0.5, hi=3))], kw, grad=[0, 1])
        case("pdf_dirichlet_shared_" + t, "random_pdf_dirichlet",
             [c(RNG.dirichlet([2.0, 1.0, 1.0], (2, 3))), c(u(3, lo=0.5, hi=3))], kw, grad=[0, 1])


def _define():
    for dt in (np.float32, np.float64):
        tag = np.dtype(dt).name
        _linalg(tag, dt)
        _pdf(tag, dt)


def _op(path):
    f = mx.nd
    for part in path.split("."):
        f = getattr(f, part)
    return f


def _run(c, out):
    xs = [mx.nd.array(a, dtype=a.dtype) for a in c["inputs"]]
    for i in c["grad"]:
        xs[i].attach_grad()
    with mx.autograd.record():
        ys = _op(c["op"])(*xs, **c["kwargs"])
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    name = c["name"]
    for i, a in enumerate(c["inputs"]):
        out["%s/x%d" % (name, i)] = a
    for i, y in enumerate(ys):
        out["%s/y%d" % (name, i)] = y.asnumpy()
    if c["grad"]:
        gys = [RNG.uniform(-1, 1, y.shape).astype(y.dtype) for y in ys]
        mx.autograd.backward(ys, [mx.nd.array(g, dtype=g.dtype) for g in gys])
        for i, g in enumerate(gys):
            out["%s/gy%d" % (name, i)] = g
        for i in c["grad"]:
            out["%s/gx%d" % (name, i)] = xs[i].grad.asnumpy()
    return dict(name=name, op=c["op"], kwargs=c["kwargs"], n_in=len(xs), n_out=len(ys),
                grad=c["grad"])


def main():
    _define()
    out, manifest = {}, []
    for c in CASES:
        manifest.append(_run(c, out))
    out["__manifest__"] = np.array(json.dumps(manifest))
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "linalg_pdf.npz")
    np.savez_compressed(path, **out)
    print("wrote %d cases to %s" % (len(manifest), path))


if __name__ == "__main__":
    main()
