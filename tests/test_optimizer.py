"""mx.optimizer: every update rule against a NumPy (float64) reimplementation, the
Optimizer base (rescale/clip/wd/multipliers/schedulers/multi-precision), the
Updater, and MXNet's optimizer traces (reference/train/optim_*.npz)."""
import json
import math
import os
import pickle

import numpy as np
import pytest

import mxlite as mx
from conftest import NUMBA_MISSING, REF

TRAIN = os.path.join(REF, "train")
LR, RESCALE, WD, CLIP = 0.05, 0.5, 0.01, 0.3


def _clip(g, c):
    return np.clip(g, -c, c) if c else g


# NumPy references: (w, g, state dict, t, kw) -> new w; state updated in place.
def ref_sgd(w, g, s, t, kw):
    g = _clip(RESCALE * g, kw.get("clip_gradient"))
    mom = kw.get("momentum", 0.0)
    if mom:
        s["m"] = mom * s.get("m", 0 * w) - LR * (g + WD * w)
        return w + s["m"]
    return w - LR * (g + WD * w)


def ref_nag(w, g, s, t, kw):
    g = _clip(RESCALE * g, kw.get("clip_gradient"))
    mom, m = kw["momentum"], s.get("m", 0 * w)
    step = LR * (g + WD * w)
    new_w = w + mom * (mom * m - step) - step
    s["m"] = mom * m - LR * (g + WD * new_w)     # MXNet reads the new weight here
    return new_w


def ref_signum(w, g, s, t, kw):
    g = _clip(RESCALE * g, kw.get("clip_gradient"))
    mom = kw.get("momentum", 0.9)
    s["m"] = mom * s.get("m", 0 * w) - (1 - mom) * (WD * w + g)
    return (1 - LR * kw.get("wd_lh", 0.0)) * w + LR * np.sign(s["m"])


def ref_adam(w, g, s, t, kw):
    b1, b2, eps = 0.9, 0.999, 1e-8
    g = _clip(RESCALE * g + WD * w, kw.get("clip_gradient"))
    s["m"] = b1 * s.get("m", 0 * w) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0 * w) + (1 - b2) * g * g
    lr = LR * math.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    return w - lr * s["m"] / (np.sqrt(s["v"]) + eps)


def ref_adagrad(w, g, s, t, kw):
    g = _clip(RESCALE * g, kw.get("clip_gradient"))
    s["h"] = s.get("h", 0 * w) + g * g
    return w - LR * (g / np.sqrt(s["h"] + 1e-7) + WD * w)


def ref_rmsprop(w, g, s, t, kw):
    g = _clip(RESCALE * g + WD * w, kw.get("clip_gradient"))
    s["n"] = 0.9 * s.get("n", 0 * w) + 0.1 * g * g
    if not kw.get("centered"):
        new_w = w - LR * g / np.sqrt(s["n"] + 1e-8)
    else:
        s["g"] = 0.9 * s.get("g", 0 * w) + 0.1 * g
        s["d"] = 0.9 * s.get("d", 0 * w) - LR * g / np.sqrt(s["n"] - s["g"] ** 2 + 1e-8)
        new_w = w + s["d"]
    cw = kw.get("clip_weights")
    return np.clip(new_w, -cw, cw) if cw else new_w


def ref_adadelta(w, g, s, t, kw):
    rho, eps = 0.9, 1e-5
    g = _clip(RESCALE * g, kw.get("clip_gradient"))
    s["ag"] = rho * s.get("ag", 0 * w) + (1 - rho) * g * g
    delta = np.sqrt(s.get("ad", 0 * w) + eps) / np.sqrt(s["ag"] + eps) * g
    s["ad"] = rho * s.get("ad", 0 * w) + (1 - rho) * delta * delta
    return w - (delta + WD * w)


def ref_adamax(w, g, s, t, kw):
    g = _clip(RESCALE * g + WD * w, kw.get("clip_gradient"))
    s["m"] = 0.9 * s.get("m", 0 * w) + 0.1 * g
    s["u"] = np.maximum(0.999 * s.get("u", 0 * w), np.abs(g))
    return w - LR / (1 - 0.9 ** t) * s["m"] / s["u"]


def ref_nadam(w, g, s, t, kw):
    b1, b2, eps, sd = 0.9, 0.999, 1e-8, 0.004
    g = _clip(RESCALE * g + WD * w, kw.get("clip_gradient"))
    mt = b1 * (1 - 0.5 * 0.96 ** (t * sd))
    mt1 = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * sd))
    sched = s["shared"]["sched"] = s["shared"]["sched"] * mt
    s["m"] = b1 * s.get("m", 0 * w) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0 * w) + (1 - b2) * g * g
    m_bar = (1 - mt) * g / (1 - sched) + mt1 * s["m"] / (1 - sched * mt1)
    return w - LR * m_bar / (np.sqrt(s["v"] / (1 - b2 ** t)) + eps)


def ref_ftrl(w, g, s, t, kw):
    lamda1, beta = 0.01, 1
    g = _clip(RESCALE * g, kw.get("clip_gradient"))
    z, n = s.get("z", 0 * w), s.get("n", 0 * w)
    z = z + g - (np.sqrt(n + g * g) - np.sqrt(n)) * w / LR
    n = n + g * g
    s["z"], s["n"] = z, n
    return (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / LR + WD) * (np.abs(z) > lamda1)


def ref_ftml(w, g, s, t, kw):
    b1, b2, eps = 0.6, 0.999, 1e-8
    g = _clip(RESCALE * g + WD * w, kw.get("clip_gradient"))
    s["v"] = b2 * s.get("v", 0 * w) + (1 - b2) * g * g
    d_t = (1 - b1 ** t) / LR * (np.sqrt(s["v"] / (1 - b2 ** t)) + eps)
    s["z"] = b1 * s.get("z", 0 * w) + (1 - b1) * g - (d_t - b1 * s.get("d", 0 * w)) * w
    s["d"] = d_t
    return -s["z"] / d_t


def ref_lamb(w, g, s, t, kw):
    b1, b2, eps = 0.9, 0.999, 1e-6
    g = _clip(RESCALE * g, kw.get("clip_gradient"))
    s["m"] = b1 * s.get("m", 0 * w) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0 * w) + (1 - b2) * g * g
    m, v = s["m"], s["v"]
    if kw.get("bias_correction", True):
        m, v = m / (1 - b1 ** t), v / (1 - b2 ** t)
    r = m / (np.sqrt(v) + eps) + WD * w
    r1, r2 = np.linalg.norm(w), np.linalg.norm(r)
    if kw.get("lower_bound"):
        r1 = max(r1, kw["lower_bound"])
    if kw.get("upper_bound"):
        r1 = min(r1, kw["upper_bound"])
    return w - LR * (r1 / r2 if r1 > 0 and r2 > 0 else 1.0) * r


CASES = [
    ("sgd", {}, ref_sgd),
    ("sgd", dict(momentum=0.9, clip_gradient=CLIP), ref_sgd),
    ("nag", dict(momentum=0.9, clip_gradient=CLIP), ref_nag),
    ("signum", dict(clip_gradient=CLIP, wd_lh=0.02), ref_signum),
    ("adam", dict(clip_gradient=CLIP), ref_adam),
    ("adagrad", dict(clip_gradient=CLIP), ref_adagrad),
    ("rmsprop", dict(clip_gradient=CLIP, clip_weights=0.8), ref_rmsprop),
    ("rmsprop", dict(clip_gradient=CLIP, centered=True), ref_rmsprop),
    ("adadelta", dict(clip_gradient=CLIP), ref_adadelta),
    ("adamax", dict(clip_gradient=CLIP), ref_adamax),
    ("nadam", dict(clip_gradient=CLIP), ref_nadam),
    ("ftrl", dict(clip_gradient=CLIP), ref_ftrl),
    ("ftml", dict(clip_gradient=CLIP), ref_ftml),
    ("lamb", dict(clip_gradient=CLIP), ref_lamb),
    ("lamb", dict(bias_correction=False, lower_bound=0.5, upper_bound=1.0), ref_lamb),
]


def _data(steps=3):
    rng = np.random.RandomState(0)
    shapes = [(4, 3), (5,)]
    init = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    grads = [[rng.uniform(-2, 2, s).astype(np.float32) for s in shapes] for _ in range(steps)]
    return init, grads


@pytest.mark.parametrize("name,kw,ref", CASES,
                         ids=["%s-%d" % (c[0], i) for i, c in enumerate(CASES)])
def test_update_rule_matches_numpy(name, kw, ref):
    init, grads = _data()
    opt = mx.optimizer.create(name, learning_rate=LR, rescale_grad=RESCALE, wd=WD, **kw)
    updater = mx.optimizer.get_updater(opt)
    ws = [mx.nd.array(a) for a in init]
    expect = [a.astype(np.float64) for a in init]
    shared = {"sched": 1.0}
    states = [{"shared": shared} for _ in init]
    for step, gs in enumerate(grads, 1):
        for i, (w, g) in enumerate(zip(ws, gs)):
            updater(i, mx.nd.array(g), w)
            expect[i] = ref(expect[i], g.astype(np.float64), states[i], step, kw)
        for w, e in zip(ws, expect):
            np.testing.assert_allclose(w.asnumpy(), e, rtol=1e-4, atol=1e-5)
    assert opt.num_update == 3 and opt._index_update_count == {0: 3, 1: 3}


def test_update_is_in_place_and_bumps_version():
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
    w = mx.nd.array([1.0, 2.0])
    data = w._data
    w.attach_grad()
    with mx.autograd.record():
        y = (w * w).sum()
    opt.update(0, w, mx.nd.array([1.0, 1.0]), opt.create_state(0, w))
    assert w._data is data
    np.testing.assert_allclose(w.asnumpy(), [0.9, 1.9], rtol=1e-6)
    with pytest.raises(mx.MXNetError, match="changed in place"):
        y.backward()


def test_shape_mismatch_raises_before_changing_weight():
    opt = mx.optimizer.Adam()
    w = mx.nd.ones((3,))
    with pytest.raises(mx.MXNetError, match=r"grad has shape \(2,\).*\(3,\)"):
        opt.update(0, w, mx.nd.ones((2,)), opt.create_state(0, w))
    assert (w.asnumpy() == 1).all() and opt.num_update == 0


def test_np_arrays_update_and_are_checked_like_ndarrays():
    opt = mx.optimizer.SGD(learning_rate=0.5)
    w = mx.np.ones((3,))
    opt.update(0, w, mx.np.ones((3,)), None)
    assert w.tolist() == [0.5, 0.5, 0.5] and type(w) is mx.np.ndarray
    with pytest.raises(mx.MXNetError, match=r"grad has shape \(2,\).*\(3,\)"):
        opt.update(0, w, mx.np.ones((2,)), None)
    assert w.tolist() == [0.5, 0.5, 0.5]


def test_clip_gradient_zero_means_no_clip_for_kernel_optimizers():
    # MXNet passes clip_gradient to its fused kernels only when truthy.
    opt = mx.optimizer.SGD(learning_rate=1.0, clip_gradient=0)
    w = mx.nd.zeros((1,))
    opt.update(0, w, mx.nd.array([5.0]), None)
    assert w.asscalar() == -5.0
    opt = mx.optimizer.AdaGrad(learning_rate=1.0, clip_gradient=0)
    w = mx.nd.zeros((1,))
    opt.update(0, w, mx.nd.array([5.0]), opt.create_state(0, w))
    assert w.asscalar() == 0.0


def test_sgld_mean_step_and_noise():
    opt = mx.optimizer.SGLD(learning_rate=0.01, wd=0.0)
    w = mx.nd.zeros((20000,))
    opt.update(0, w, mx.nd.ones((20000,)), None)
    x = w.asnumpy()
    assert abs(x.mean() - (-0.005)) < 0.003       # -lr/2 * grad
    assert abs(x.std() - 0.1) < 0.005             # N(0, sqrt(lr))


def test_dcasgd():
    opt = mx.optimizer.DCASGD(learning_rate=0.1, lamda=0.5)
    w = mx.nd.array([1.0, -1.0])
    state = opt.create_state(0, w)
    opt.update(0, w, mx.nd.array([1.0, 2.0]), state)     # previous == weight: plain SGD
    np.testing.assert_allclose(w.asnumpy(), [0.9, -1.2], rtol=1e-6)
    opt.update(0, w, mx.nd.array([1.0, 2.0]), state)
    g, prev = np.array([1.0, 2.0]), np.array([1.0, -1.0])
    expect = np.array([0.9, -1.2]) - 0.1 * (g + 0.5 * g * g * (np.array([0.9, -1.2]) - prev))
    np.testing.assert_allclose(w.asnumpy(), expect, rtol=1e-6)


# -- the base class -----------------------------------------------------------------

def test_defaults_match_mxnet():
    for tr in _traces():
        opt = mx.optimizer.create(tr["optimizer"], **tr["optimizer_kwargs"])
        for k, v in tr["optimizer_attributes_after_creation"].items():
            if k in ("num_update", "rescale_grad"):
                continue
            assert getattr(opt, k) == v, (tr["id"], k)
    assert mx.optimizer.create("adagrad").float_stable_eps == 1e-7
    assert mx.optimizer.create("sgd").lr == 0.01
    assert mx.optimizer.Adam().lr == 0.001


def test_create_and_register():
    assert isinstance(mx.optimizer.create("SGD"), mx.optimizer.SGD)
    assert isinstance(mx.optimizer.Optimizer.create_optimizer("ftrl"), mx.optimizer.FTRL)
    with pytest.raises(ValueError, match="Cannot find optimizer nope"):
        mx.optimizer.create("nope")

    @mx.optimizer.register
    class MyTestOpt(mx.optimizer.Optimizer):
        def update(self, index, weight, grad, state):
            weight[:] = weight + grad

    o = mx.optimizer.create("mytestopt", learning_rate=0.5)
    assert isinstance(o, MyTestOpt) and o.lr == 0.5
    with pytest.warns(UserWarning, match="overriding"):
        mx.optimizer.register(MyTestOpt)
    del mx.optimizer.Optimizer.opt_registry["mytestopt"]


def test_lr_and_wd_multipliers():
    opt = mx.optimizer.SGD(learning_rate=1.0, wd=0.1,
                           param_idx2name={0: "fc_weight", 1: "fc_bias", 2: "bn_gamma"})
    # names not ending in _weight/_gamma get no weight decay
    assert opt._get_wd(0) == 0.1 and opt._get_wd(1) == 0.0 and opt._get_wd(2) == 0.1
    opt.set_lr_mult({"fc_weight": 0.5, 2: 3.0})
    assert opt._get_lr(0) == 0.5 and opt._get_lr(1) == 1.0 and opt._get_lr(2) == 3.0
    opt.set_wd_mult({"fc_bias": 2.0})
    assert opt._get_wd(1) == 0.2

    class P:
        lr_mult, wd_mult = 4.0, 0.0
    opt.param_dict = {0: P()}       # a Parameter's own multipliers win
    assert opt._get_lr(0) == 4.0 and opt._get_wd(0) == 0.0
    w = mx.nd.ones((2,))
    opt.update(0, w, mx.nd.ones((2,)), None)
    np.testing.assert_allclose(w.asnumpy(), [-3.0, -3.0])


def test_learning_rate_and_scheduler():
    opt = mx.optimizer.SGD(learning_rate=0.1)
    opt.set_learning_rate(0.2)
    assert opt.learning_rate == 0.2
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    opt = mx.optimizer.SGD(lr_scheduler=sched)
    assert opt.learning_rate == 1.0
    with pytest.raises(UserWarning, match="LRScheduler of the optimizer has already been"):
        opt.set_learning_rate(0.3)
    w = mx.nd.zeros((1,))
    lrs = []
    for _ in range(5):
        before = w.asscalar()
        opt.update(0, w, mx.nd.array([-1.0]), None)
        lrs.append(round(float(w.asscalar() - before), 6))
    assert lrs == [1.0, 1.0, 0.5, 0.5, 0.25]      # lr from num_update after counting


def test_sgd_aggregates_updates_in_groups_as_mxnet():
    # MXNet's SGD updates a list of weights in groups of aggregate_num (4): each group
    # counts its updates, then reads the learning rate. Weight 1 has been updated 3
    # times, so weight 0 (in its group) already sees num_update 4: lr 0.125, not 0.25.
    # Expected values from MXNet 1.9.1 running this code.
    sched = mx.lr_scheduler.FactorScheduler(step=1, factor=0.5, base_lr=1.0)
    opt = mx.optimizer.SGD(learning_rate=1.0, lr_scheduler=sched)
    assert opt.aggregate_num == 4
    upd = mx.optimizer.get_updater(opt)
    ws = [mx.nd.ones((2,)) for _ in range(6)]
    gs = [mx.nd.ones((2,)) for _ in range(6)]
    for _ in range(3):
        upd(1, gs[1], ws[1])
    upd(list(range(6)), gs, ws)
    assert [float(w.asnumpy()[0]) for w in ws] == [0.875, -0.875, 0.875, 0.875, 0.875, 0.875]
    assert opt.num_update == 4


def test_sgd_group_update_equals_single_updates():
    # float16 weights with multi_precision and float32 weights in one list: grouped by
    # dtype, each through its own path, the same numbers as one at a time.
    init, grads = _data()
    kw = dict(learning_rate=LR, wd=WD, momentum=0.9, multi_precision=True)
    ua, ub = (mx.optimizer.get_updater(mx.optimizer.SGD(**kw)) for _ in range(2))
    dtypes = (np.float16, np.float32, np.float16)
    wa = [mx.nd.array(init[0], dtype=t) for t in dtypes]
    wb = [w.copy() for w in wa]
    for gs in grads:
        g = [mx.nd.array(gs[0], dtype=t) for t in dtypes]
        ua([0, 1, 2], g, wa)
        for i in range(3):
            ub(i, g[i], wb[i])
    for a, b in zip(wa, wb):
        assert a.dtype == b.dtype
        assert (a.asnumpy() == b.asnumpy()).all()


def test_aggregation_size_from_environment(monkeypatch):
    monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "2")
    assert mx.optimizer.SGD().aggregate_num == 2


def test_begin_num_update():
    opt = mx.optimizer.Adam(begin_num_update=10, learning_rate=0.1)
    w = mx.nd.zeros((1,))
    opt.update(0, w, mx.nd.array([1.0]), opt.create_state(0, w))
    assert opt.num_update == 11 and opt._index_update_count[0] == 11
    # t = 11 in Adam's bias correction: the first moment is 0.1 * g
    t = 11
    step = 0.1 * math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t) * 0.1 / (math.sqrt(0.001) + 1e-8)
    np.testing.assert_allclose(w.asscalar(), -step, rtol=1e-5)


@pytest.mark.parametrize("name,kw", [("sgd", dict(momentum=0.9)), ("nag", dict(momentum=0.9)),
                                     ("adam", {}), ("lamb", {})])
def test_multi_precision_float16(name, kw):
    init, grads = _data()
    opt16 = mx.optimizer.create(name, learning_rate=LR, wd=WD, multi_precision=True, **kw)
    opt32 = mx.optimizer.create(name, learning_rate=LR, wd=WD, **kw)
    u16, u32 = mx.optimizer.get_updater(opt16), mx.optimizer.get_updater(opt32)
    w16 = mx.nd.array(init[0], dtype=np.float16)
    w32 = mx.nd.array(init[0].astype(np.float16).astype(np.float32))
    for gs in grads:
        g16 = mx.nd.array(gs[0], dtype=np.float16)
        u16(0, g16, w16)
        u32(0, g16.astype(np.float32), w32)
    state = u16.states[0]
    master = state[1] if name in ("sgd", "nag") else state[0]
    assert master.dtype == np.float32 and w16.dtype == np.float16
    # the float32 master follows the float32 run exactly; the weight is its cast
    np.testing.assert_allclose(master.asnumpy(), w32.asnumpy(), rtol=1e-6, atol=1e-7)
    assert (w16.asnumpy() == master.asnumpy().astype(np.float16)).all()


def test_float16_without_multi_precision_warns():
    opt = mx.optimizer.SGD(momentum=0.9)
    with pytest.warns(UserWarning, match="multi_precision=True"):
        opt.create_state_multi_precision(0, mx.nd.ones((2,), dtype=np.float16))


# -- Updater -------------------------------------------------------------------------

def test_updater_states_roundtrip_and_context_sync():
    opt = mx.optimizer.Adam(learning_rate=0.1)
    upd = mx.optimizer.get_updater(opt)
    w = mx.nd.ones((3,))
    upd(0, mx.nd.ones((3,)), w)
    blob = upd.get_states(dump_optimizer=True)
    upd2 = mx.optimizer.get_updater(mx.optimizer.Adam(learning_rate=0.1))
    upd2.set_states(blob)
    assert isinstance(upd2.optimizer, mx.optimizer.Adam) and upd2.optimizer.num_update == 1
    assert upd2.states_synced == {0: False}
    w2 = w.copyto(mx.cpu(1))
    upd(0, mx.nd.ones((3,)), w)
    upd2(0, mx.nd.ones((3,), ctx=mx.cpu(1)), w2)
    assert upd2.states[0][0].context == mx.cpu(1)
    # loaded moments (0.1, 0.001); update counts are per device as in MXNet, so t = 1 on cpu(1)
    m, v = 0.9 * 0.1 + 0.1, 0.999 * 0.001 + 0.001
    step = 0.1 * math.sqrt(1 - 0.999) / (1 - 0.9) * m / (math.sqrt(v) + 1e-8)
    np.testing.assert_allclose(w2.asnumpy(), 0.9 - step, rtol=1e-5)
    assert upd2.optimizer._all_index_update_counts == {0: {0: 1}, 1: {0: 1}}
    # without the optimizer
    upd3 = mx.optimizer.get_updater(mx.optimizer.Adam())
    upd3.set_states(upd.get_states())
    assert sorted(upd3.states) == [0]


def test_state_pickle_uses_mxnet_globals():
    opt = mx.optimizer.SGD(momentum=0.9, lr_scheduler=mx.lr_scheduler.FactorScheduler(3))
    blob = mx.optimizer.get_updater(opt).get_states(dump_optimizer=True)
    assert b"mxnet.optimizer.optimizer" in blob and b"mxnet.lr_scheduler" in blob
    with pytest.raises((ModuleNotFoundError, ImportError)):
        pickle.loads(blob)       # real MXNet's names, not mxlite's


# -- MXNet's traces ---------------------------------------------------------------

def _manifest():
    with open(os.path.join(TRAIN, "manifest.json")) as f:
        return json.load(f)["optimizer_traces"]


def _traces():
    return _manifest()["traces"]


@pytest.mark.parametrize("tr", _traces(), ids=lambda t: t["id"])
def test_trace_replay_from_stored_gradients(tr):
    """Apply the optimizer to MXNet's stored raw gradients; compare every step's weights."""
    z = np.load(os.path.join(TRAIN, tr["file"]), allow_pickle=False)
    opt = mx.optimizer.create(tr["optimizer"], rescale_grad=1.0 / tr["batch_size"],
                              **tr["optimizer_kwargs"])
    upd = mx.optimizer.get_updater(opt)
    names = sorted(tr["params"])        # the Trainer's index order
    ws = {n: mx.nd.array(z["init/" + n]) for n in names}
    for k in range(1, tr["steps"] + 1):
        for i, n in enumerate(names):
            upd(i, mx.nd.array(z["step%d/grad/%s" % (k, n)]), ws[n])
        for n in names:
            np.testing.assert_allclose(ws[n].asnumpy(), z["step%d/weight/%s" % (k, n)],
                                       rtol=tr["weight_rtol"], atol=tr["weight_atol"])
    assert opt.num_update == tr["optimizer_attributes_after_creation"]["num_update"]


def _softmax_ce(out, label):
    if hasattr(mx.gluon.loss, "SoftmaxCrossEntropyLoss"):
        return mx.gluon.loss.SoftmaxCrossEntropyLoss()(out, label)
    return -mx.nd.pick(mx.nd.log_softmax(out), label, axis=-1)


@pytest.mark.parametrize("tr", _traces(), ids=lambda t: t["id"])
def test_trace_replay_with_trainer(tr):
    """The full trace: Dense-tanh-Dense, SoftmaxCrossEntropyLoss, Trainer.step(8)."""
    nn = mx.gluon.nn
    z = np.load(os.path.join(TRAIN, tr["file"]), allow_pickle=False)
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(6, in_units=4, activation="tanh"), nn.Dense(3, in_units=6))
    net.initialize()
    params = net.collect_params()
    by_suffix = {}
    for key, p in params.items():
        suffix = key[key.index("dense"):]
        # the two Dense blocks are numbered from 0 within this net's scope
        by_suffix[suffix] = p
    names = sorted(tr["params"])
    assert sorted(by_suffix) == names
    for n in names:
        by_suffix[n].set_data(mx.nd.array(z["init/" + n]))
    trainer = mx.gluon.Trainer([by_suffix[n] for n in names], tr["optimizer"],
                               tr["optimizer_kwargs"])
    data, label = mx.nd.array(z["data"]), mx.nd.array(z["label"])
    for k in range(1, tr["steps"] + 1):
        with mx.autograd.record():
            loss = _softmax_ce(net(data), label)
        loss.backward()
        np.testing.assert_allclose(loss.asnumpy(), z["step%d/loss" % k],
                                   rtol=tr["loss_rtol"], atol=tr["loss_atol"])
        for n in names:
            np.testing.assert_allclose(by_suffix[n].grad().asnumpy(),
                                       z["step%d/grad/%s" % (k, n)],
                                       rtol=tr["grad_rtol"], atol=tr["grad_atol"])
        trainer.step(tr["batch_size"])
        for n in names:
            np.testing.assert_allclose(by_suffix[n].data().asnumpy(),
                                       z["step%d/weight/%s" % (k, n)],
                                       rtol=tr["weight_rtol"], atol=tr["weight_atol"])
    assert trainer.optimizer.rescale_grad == 1.0 / tr["batch_size"]


SGD_BITS = os.path.join(os.path.dirname(__file__), "reference_extra", "sgd_bits.npz")


@pytest.mark.parametrize("path", ["numba", "numpy", "numpy pieces"])
@pytest.mark.parametrize("momentum, rescale", [(0.0, 1 / 16), (0.0, 1 / 3), (0.9, 1 / 16),
                                               (0.9, 1 / 3)])
def test_sgd_gives_mxnets_bits(momentum, rescale, path, monkeypatch):
    # MXNet 1.9.1's SGD optimizer (its multi_sgd_mom_update kernel), bit for bit, over
    # gradients spanning 17 orders of magnitude (reference_extra/gen_sgd_bits.py), by
    # numba's one pass, or NumPy's passes (by pieces of 7 elements, as a large weight's).
    if path == "numba" and NUMBA_MISSING:
        pytest.skip("numba (the extra 'fast') is not installed")
    ran = []
    fast = mx.operator.tensor._fast_update.sgd
    monkeypatch.setattr(mx.operator.tensor._fast_update, "sgd",
                        lambda *a: ran.append(path == "numba" and fast(*a)) or ran[-1])
    if path == "numpy pieces":
        monkeypatch.setattr(mx.optimizer.sgd, "CHUNK", 7)
    with np.load(SGD_BITS) as z:
        g, w0, want = z["grad"], z["weight"], z["%s_%s" % (momentum, rescale)]
    opt = mx.optimizer.SGD(learning_rate=0.037, momentum=momentum, wd=0.01,
                           rescale_grad=rescale)
    w = mx.nd.array(w0)
    opt.update_multi_precision(0, w, mx.nd.array(g), opt.create_state_multi_precision(0, w))
    np.testing.assert_array_equal(w.asnumpy(), want)
    assert ran == [path == "numba"]


@pytest.mark.skipif(NUMBA_MISSING, reason="numba (the extra 'fast') is not installed")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("momentum, wd", [(0.0, 0.0), (0.0, 1e-4), (0.9, 0.0), (0.9, 1e-4)])
def test_sgd_numba_pass_gives_numpys_bits(dtype, momentum, wd, monkeypatch):
    # numba's one pass against NumPy's passes, bit for bit, over values with infinities,
    # NaN and signed zeros, at each dtype and with and without decay and momentum
    rng = np.random.RandomState(3)
    w0, g0, m0 = (rng.standard_normal(5000).astype(dtype) * 10.0 ** rng.randint(-8, 8, 5000)
                  for _ in range(3))
    w0[:4], g0[4:8], m0[8:12] = [np.inf, -np.nan, -0.0, 0.0], [-np.inf, np.nan, -0.0, 0.0], \
        [np.inf, np.nan, -0.0, 1.0]
    got = []
    for numba_on in (True, False):
        if not numba_on:
            monkeypatch.setattr(mx.operator.tensor._fast_update, "sgd", lambda *a: False)
        opt = mx.optimizer.SGD(learning_rate=0.1, momentum=momentum, wd=wd, rescale_grad=0.25)
        w, m = mx.nd.array(w0, dtype=dtype), mx.nd.array(m0, dtype=dtype)
        with np.errstate(invalid="ignore", over="ignore"):     # (NumPy's inf - inf)
            opt.update(0, w, mx.nd.array(g0, dtype=dtype), m if momentum else None)
        got.append((w.asnumpy(), m.asnumpy()))
        assert w.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got[0][0], got[1][0])
    np.testing.assert_array_equal(got[0][1], got[1][1])
