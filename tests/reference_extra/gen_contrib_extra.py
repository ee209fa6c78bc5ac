"""Golden data for tests/test_op_contrib_extra.py, from real MXNet 1.9.1.

Run with MXNet's interpreter: ``python tests/reference_extra/gen_contrib_extra.py`` from
an environment with ``pip install "numpy<1.24" mxnet==1.9.1``. Writes
``contrib_extra.npz`` next to this file. ``__manifest__`` is a JSON list of cases
{name, kind, op (path under mx.nd), kwargs, n_in, n_out, ...}:

- kind ``grad``: ``c/x<i>`` inputs, ``c/y<i>`` outputs, ``c/gy<i>`` head gradients,
  ``c/gx<i>`` the input gradients (for the inputs listed in ``grad``), ``c/a<i>`` the
  inputs after the call (BatchNorm's moving statistics). Recorded in training mode.
- kind ``update``: optimizer ops. ``c/x<i>`` inputs before the call, ``c/a<i>`` the
  same inputs after it (states updated in place), ``c/y<i>`` outputs; ``inplace``
  cases pass ``out=`` the weights (inputs 0, stride, 2*stride ...), as MXNet's
  optimizers do.
"""
import json
import os

import numpy as np
import mxnet as mx

RNG = np.random.RandomState(11)
MANIFEST = []
DATA = {}


def u(shape, lo=-1.0, hi=1.0, dtype=np.float32):
    return RNG.uniform(lo, hi, shape).astype(dtype)


def _bn_relu(*x, **kw):
    # NOTE: MXNet 1.9.1's BatchNormWithReLU runs only with MKL-DNN (not in the pip
    # wheel's CPU path): its definition, relu(BatchNorm(...)), stands in for it.
    return mx.nd.relu(mx.nd.BatchNorm(*x, **kw))


def _op(path):
    if path == "contrib.BatchNormWithReLU":
        return _bn_relu
    fn = mx.nd
    for part in path.split("."):
        fn = getattr(fn, part)
    return fn


def grad_case(name, op, inputs, kwargs, grad=None, n_out=None, head=None, extra=None):
    """Forward and (for the inputs in ``grad``) backward of ``op`` under MXNet."""
    xs = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    grad = list(range(len(inputs))) if grad is None else list(grad)
    for i in grad:
        xs[i].attach_grad()
    with mx.autograd.record(train_mode=True):
        ys = _op(op)(*xs, **kwargs)
        ys = ys if isinstance(ys, list) else [ys]
    if n_out is not None:
        ys = ys[:n_out]
    gys = [head[i] if head is not None else u(y.shape, dtype=y.dtype) for i, y in enumerate(ys)]
    if grad:
        mx.autograd.backward(ys, [mx.nd.array(g, dtype=g.dtype) for g in gys])
    for i, a in enumerate(inputs):
        DATA["%s/x%d" % (name, i)] = a
    for i, (y, g) in enumerate(zip(ys, gys)):
        DATA["%s/y%d" % (name, i)] = y.asnumpy()
        DATA["%s/gy%d" % (name, i)] = g
    for i in grad:
        DATA["%s/gx%d" % (name, i)] = xs[i].grad.asnumpy()
    for i, x in enumerate(xs):
        DATA["%s/a%d" % (name, i)] = x.asnumpy()     # after the call (moving statistics)
    c = dict(name=name, kind="grad", op=op, kwargs=kwargs, n_in=len(inputs), n_out=len(ys),
             grad=grad)
    c.update(extra or {})
    MANIFEST.append(c)


def update_case(name, op, inputs, kwargs, inplace=True, stride=None, n_weights=1,
                sparse_grad=False):
    """One call of an optimizer op; records the inputs before/after and the outputs."""
    xs = [mx.nd.array(a, dtype=a.dtype) for a in inputs]
    call = list(xs)
    if sparse_grad:
        # group_adagrad_update has only a row_sparse-gradient kernel on CPU
        call[1] = xs[1].tostype("row_sparse")
    kw = dict(kwargs)
    if inplace:
        kw["out"] = xs[0] if stride is None else [xs[i] for i in range(0, stride * n_weights,
                                                                       stride)]
    ys = _op(op)(*call, **kw)
    ys = ys if isinstance(ys, list) else [ys]
    for i, a in enumerate(inputs):
        DATA["%s/x%d" % (name, i)] = a
        DATA["%s/a%d" % (name, i)] = xs[i].asnumpy()
    for i, y in enumerate(ys):
        DATA["%s/y%d" % (name, i)] = y.asnumpy()
    MANIFEST.append(dict(name=name, kind="update", op=op, kwargs=kwargs, n_in=len(inputs),
                         n_out=len(ys), inplace=inplace, stride=stride,
                         n_weights=n_weights))


# ----------------------------------------------------------------------------------------
# 1. Transformer attention

def _attention():
    # NOTE: MXNet 1.9.1 runs these only in float32 on CPU.
    for dt in (np.float32,):
        tag = np.dtype(dt).name
        S, B, H, D = 5, 2, 3, 4
        qkv = u((S, B, H * 3 * D), dtype=dt)
        grad_case("selfatt_qk_" + tag, "contrib.interleaved_matmul_selfatt_qk", [qkv],
                  dict(heads=H))
        att = u((B * H, S, S), dtype=dt)
        grad_case("selfatt_valatt_" + tag, "contrib.interleaved_matmul_selfatt_valatt",
                  [qkv, att], dict(heads=H))
        Q, K = 4, 6
        q = u((Q, B, H * D), dtype=dt)
        kv = u((K, B, H * 2 * D), dtype=dt)
        grad_case("encdec_qk_" + tag, "contrib.interleaved_matmul_encdec_qk", [q, kv],
                  dict(heads=H))
        att = u((B * H, Q, K), dtype=dt)
        grad_case("encdec_valatt_" + tag, "contrib.interleaved_matmul_encdec_valatt",
                  [kv, att], dict(heads=H))
    grad_case("div_sqrt_dim", "contrib.div_sqrt_dim", [u((2, 3, 7))], {})


# ----------------------------------------------------------------------------------------
# 2. Other contrib ops (fft/ifft run on GPU only in MXNet 1.9.1: no golden data)

def _others():
    c = 3
    for fix_gamma in (True, False):
        grad_case("bn_relu_fix%d" % fix_gamma, "contrib.BatchNormWithReLU",
                  [u((2, c, 3, 2)), u((c,), 0.5, 1.5), u((c,), -.2, .2), u((c,), -.1, .1),
                   u((c,), 0.5, 1.5)],
                  dict(fix_gamma=fix_gamma, momentum=0.8, eps=1e-4), grad=[0, 1, 2])
    grad_case("bn_relu_axis_last", "contrib.BatchNormWithReLU",
              [u((4, 2, c)), u((c,), 0.5, 1.5), u((c,), -.2, .2), np.zeros(c, np.float32),
               np.ones(c, np.float32)], dict(fix_gamma=False, axis=-1), grad=[0, 1, 2])
    s = np.array([[[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]]], np.float32)
    grad_case("bipartite_doc", "contrib.bipartite_matching", [s],
              dict(threshold=1e-12, is_ascend=False), grad=[])
    s = np.round(u((2, 5, 4)), 1)       # ties on purpose
    grad_case("bipartite_ties", "contrib.bipartite_matching", [s],
              dict(threshold=-0.5, is_ascend=False), grad=[])
    grad_case("bipartite_ascend", "contrib.bipartite_matching", [s],
              dict(threshold=0.5, is_ascend=True), grad=[])


# ----------------------------------------------------------------------------------------
# 3. Optimizer update ops

def _multi_adamw():
    shapes = [(4, 5), (7,), (2, 3, 2)]
    n = len(shapes)
    kw = dict(lrs=(0.01, 0.02, 0.005), wds=(0.0, 0.01, 0.1), etas=(1.0, 0.5, 0.9),
              beta1=0.9, beta2=0.99, epsilon=1e-6)
    for clip in (-1.0, 0.3):
        tag = "clip" if clip >= 0 else "noclip"
        xs = []
        for s in shapes:
            xs += [u(s), u(s), u(s, -.1, .1), u(s, 0, .1)]
        update_case("multi_adamw_" + tag, "_internal._multi_adamw_update",
                    xs + [np.array([0.7], np.float32)],
                    dict(kw, clip_gradient=clip, num_weights=n), stride=4, n_weights=n)
        xs = []
        for s in shapes:
            w32 = u(s)
            xs += [w32.astype(np.float16), u(s, dtype=np.float16), u(s, -.1, .1),
                   u(s, 0, .1), w32]
        update_case("multi_mp_adamw_" + tag, "_internal._multi_mp_adamw_update",
                    xs + [np.array([0.7], np.float32)],
                    dict(kw, clip_gradient=clip, num_weights=n), stride=5, n_weights=n)
    xs = []
    for s in shapes:
        xs += [u(s), u(s), u(s, -.1, .1), u(s, 0, .1)]
    update_case("multi_adamw_skip_inf", "_internal._multi_adamw_update",
                xs + [np.array([np.inf], np.float32)], dict(kw, num_weights=n), stride=4,
                n_weights=n)


def _multi_lamb():
    shapes = [(4, 5), (7,), (2, 3, 2)]
    n = len(shapes)
    for bc, clip, bounds in ((True, -1.0, (-1.0, -1.0)), (False, 0.5, (0.5, 2.0))):
        tag = "bc" if bc else "nobc"
        kw = dict(learning_rates=(0.01, 0.02, 0.005), wds=(0.0, 0.01, 0.1),
                  step_count=(1, 3, 10), beta1=0.9, beta2=0.99, epsilon=1e-6,
                  rescale_grad=0.8, bias_correction=bc, clip_gradient=clip,
                  lower_bound=bounds[0], upper_bound=bounds[1], num_tensors=n)
        xs = []
        for s in shapes:
            xs += [u(s), u(s), u(s, -.1, .1), u(s, 0, .1)]
        update_case("multi_lamb_" + tag, "_internal._multi_lamb_update", xs, kw, stride=4,
                    n_weights=n)
        xs = []
        for s in shapes:
            w32 = u(s)
            xs += [w32.astype(np.float16), u(s, dtype=np.float16), u(s, -.1, .1),
                   u(s, 0, .1), w32]
        update_case("multi_mp_lamb_" + tag, "_internal._multi_mp_lamb_update", xs, kw,
                    stride=5, n_weights=n)


def _group_adagrad():
    for clip in (-1.0, 0.5):
        tag = "clip" if clip >= 0 else "noclip"
        g = u((6, 5))
        g[2] = 0    # a row without gradient: not updated
        update_case("group_adagrad_" + tag, "contrib.group_adagrad_update",
                    [u((6, 5)), g, u((6, 1), 0, .5)],
                    dict(lr=0.1, rescale_grad=0.9, clip_gradient=clip, epsilon=1e-5),
                    sparse_grad=True)


def _preloaded():
    shapes = [(4, 5), (7,), (2, 3)]
    n = len(shapes)
    lrs = np.array([0.1, 0.05, 0.2], np.float32)
    wds = np.array([0.0, 0.01, 0.1], np.float32)
    for clip in (-1.0, 0.4):
        tag = "clip" if clip >= 0 else "noclip"
        kw = dict(rescale_grad=0.7, clip_gradient=clip, num_weights=n)
        xs = []
        for s in shapes:
            xs += [u(s), u(s)]
        update_case("pl_sgd_" + tag, "preloaded_multi_sgd_update", xs + [lrs, wds], kw,
                    stride=2, n_weights=n)
        xs = []
        for s in shapes:
            xs += [u(s), u(s), u(s, -.2, .2)]
        update_case("pl_sgd_mom_" + tag, "preloaded_multi_sgd_mom_update", xs + [lrs, wds],
                    dict(kw, momentum=0.9), stride=3, n_weights=n)
        xs = []
        for s in shapes:
            w32 = u(s)
            xs += [w32.astype(np.float16), u(s, dtype=np.float16), w32]
        update_case("pl_mp_sgd_" + tag, "preloaded_multi_mp_sgd_update", xs + [lrs, wds], kw,
                    stride=3, n_weights=n)
        xs = []
        for s in shapes:
            w32 = u(s)
            xs += [w32.astype(np.float16), u(s, dtype=np.float16), u(s, -.2, .2), w32]
        update_case("pl_mp_sgd_mom_" + tag, "preloaded_multi_mp_sgd_mom_update",
                    xs + [lrs, wds], dict(kw, momentum=0.9), stride=4, n_weights=n)


def main():
    for part in (_attention, _others, _multi_adamw, _multi_lamb, _group_adagrad, _preloaded):
        part()
    DATA["__manifest__"] = np.array(json.dumps(MANIFEST))
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "contrib_extra.npz")
    np.savez_compressed(out, **DATA)
    print("wrote %d cases to %s" % (len(MANIFEST), out))


if __name__ == "__main__":
    main()
