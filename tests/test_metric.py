"""mx.metric: MXNet 1.9.1's reference values (reference/train/metrics.npz) and behaviour."""
import json
import math
import os

import numpy as np
import pytest

import mxlite as mx
from conftest import REF

TRAIN = os.path.join(REF, "train")


def _cases():
    with open(os.path.join(TRAIN, "manifest.json")) as f:
        return json.load(f)["metrics"]["cases"]


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["id"])
def test_reference_metrics(case):
    z = np.load(os.path.join(TRAIN, "metrics.npz"), allow_pickle=False)
    cls = getattr(mx.metric, case["class"].rsplit(".", 1)[1])
    m = cls(**case["ctor_kwargs"])
    for i, expect in enumerate(case["values_after_each_update"]):
        label = mx.nd.array(z["%s/update%d/label" % (case["id"], i)])
        pred = mx.nd.array(z["%s/update%d/pred" % (case["id"], i)])
        m.update([label], [pred])
        name, value = m.get()
        assert name == case["metric_name"]
        assert np.allclose(value, expect, rtol=case["rtol"], atol=case["atol"]), (i, value, expect)


def test_accuracy_local_and_global():
    acc = mx.metric.create("acc")
    pred = mx.nd.array([[0.3, 0.7], [0.9, 0.1], [0.4, 0.6]])
    acc.update([mx.nd.array([1, 0, 0])], [pred])
    assert acc.get() == ("accuracy", 2 / 3)
    acc.reset_local()
    assert math.isnan(acc.get()[1]) and acc.get_global() == ("accuracy", 2 / 3)
    acc.update(mx.nd.array([1, 1, 1]), pred)           # bare NDArrays are wrapped
    assert acc.get() == ("accuracy", 2 / 3) and acc.get_global()[1] == 4 / 6
    acc.reset()
    assert math.isnan(acc.get_global()[1])
    with pytest.raises(ValueError, match="does not match"):
        acc.update([mx.nd.array([1])], [pred, pred])


def test_topk_accuracy():
    m = mx.metric.TopKAccuracy(top_k=2)
    pred = mx.nd.array([[0.1, 0.5, 0.4], [0.7, 0.2, 0.1], [0.2, 0.3, 0.5]])
    m.update([mx.nd.array([2, 1, 0])], [pred])
    assert m.get() == ("top_k_accuracy_2", 2 / 3)
    with pytest.raises(ValueError, match="use Accuracy"):
        mx.metric.TopKAccuracy(top_k=1)


def _binary_counts(label, pred):
    p = pred.argmax(axis=1)
    tp = int(((p == 1) & (label == 1)).sum())
    fp = int(((p == 1) & (label == 0)).sum())
    fn = int(((p == 0) & (label == 1)).sum())
    tn = int(((p == 0) & (label == 0)).sum())
    return tp, fp, fn, tn


def test_f1_and_mcc_against_numpy():
    rng = np.random.RandomState(3)
    batches = [(rng.randint(0, 2, n).astype(np.float32), rng.uniform(size=(n, 2)).astype(np.float32))
               for n in (7, 11)]
    f1m, f1u = mx.metric.F1(), mx.metric.F1(average="micro")
    mccm, mccu = mx.metric.MCC(), mx.metric.MCC(average="micro")
    totals = np.zeros(4)
    per_f1, per_mcc = [], []

    def f1(tp, fp, fn, tn):
        p = tp / (tp + fp) if tp + fp else 0.
        r = tp / (tp + fn) if tp + fn else 0.
        return 2 * p * r / (p + r) if p + r else 0.

    def mcc(tp, fp, fn, tn):
        d = np.prod([t for t in (tp + fp, tp + fn, tn + fp, tn + fn) if t])
        return (tp * tn - fp * fn) / math.sqrt(d)

    for label, pred in batches:
        c = _binary_counts(label, pred)
        totals += c
        per_f1.append(f1(*c))
        per_mcc.append(mcc(*c))
        for m in (f1m, f1u, mccm, mccu):
            m.update([mx.nd.array(label)], [mx.nd.array(pred)])
    assert f1m.get()[1] == pytest.approx(np.mean(per_f1))
    assert f1u.get()[1] == pytest.approx(f1(*totals))
    assert mccm.get()[1] == pytest.approx(np.mean(per_mcc))
    assert mccu.get()[1] == pytest.approx(mcc(*totals))
    with pytest.raises(ValueError, match="binary"):
        f1m.update([mx.nd.array([0, 1, 2])], [mx.nd.ones((3, 3))])


def test_regression_metrics_average_per_update():
    updates = [(np.array([1., 2., 3.]), np.array([1.5, 2., 2.])),
               (np.array([0., 4.]), np.array([1., 1.]))]
    mae, mse, rmse = mx.metric.MAE(), mx.metric.MSE(), mx.metric.RMSE()
    for label, pred in updates:
        for m in (mae, mse, rmse):
            m.update([mx.nd.array(label)], [mx.nd.array(pred)])
    d = [lab - p for lab, p in updates]
    assert mae.get()[1] == pytest.approx(np.mean([np.abs(x).mean() for x in d]))
    assert mse.get()[1] == pytest.approx(np.mean([(x ** 2).mean() for x in d]))
    assert rmse.get()[1] == pytest.approx(np.mean([np.sqrt((x ** 2).mean()) for x in d]))


def test_cross_entropy_nll_perplexity():
    pred = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]], np.float32)
    label = np.array([1, 0, 1], np.float32)
    p = pred[np.arange(3), label.astype(int)]
    ce = mx.metric.create("ce")
    nll = mx.metric.NegativeLogLikelihood()
    ppl = mx.metric.Perplexity(ignore_label=None)
    ppl_ig = mx.metric.Perplexity(ignore_label=0)
    for m in (ce, nll, ppl, ppl_ig):
        m.update([mx.nd.array(label)], [mx.nd.array(pred)])
    assert ce.get()[1] == pytest.approx(-np.log(p + 1e-12).mean())
    assert nll.get() == ("nll-loss", pytest.approx(-np.log(p + 1e-12).mean()))
    assert ppl.get()[1] == pytest.approx(math.exp(-np.log(p).mean()), rel=1e-6)
    keep = label != 0
    assert ppl_ig.get()[1] == pytest.approx(math.exp(-np.log(p[keep]).sum() / keep.sum()),
                                            rel=1e-6)


def test_pearson_macro_and_micro():
    rng = np.random.RandomState(1)
    xs = [rng.normal(size=20) for _ in range(2)]
    ys = [x + rng.normal(size=20) for x in xs]
    mac, mic = mx.metric.PearsonCorrelation(), mx.metric.PearsonCorrelation(average="micro")
    for x, y in zip(xs, ys):
        for m in (mac, mic):
            m.update([mx.nd.array(y)], [mx.nd.array(x)])
    assert mac.get()[1] == pytest.approx(np.mean([np.corrcoef(x, y)[0, 1] for x, y in zip(xs, ys)]),
                                         rel=1e-5)
    # micro: one correlation over everything (MXNet's streaming covariance is approximate)
    allx, ally = np.concatenate(xs), np.concatenate(ys)
    assert mic.get()[1] == pytest.approx(np.corrcoef(allx, ally)[0, 1], abs=0.05)


def test_loss_custom_np_and_composite():
    loss = mx.metric.Loss()
    loss.update(None, [mx.nd.array([1., 2., 3.])])
    assert loss.get() == ("loss", 2.0)

    def abs_err(label, pred):
        return np.abs(label - pred).sum(), label.size
    custom = mx.metric.np(abs_err)
    custom.update([mx.nd.array([1., 2.])], [mx.nd.array([2., 4.])])
    assert custom.get() == ("abs_err", 1.5)
    lam = mx.metric.create(lambda label, pred: 1.0)
    assert lam.name == "custom(<lambda>)"
    with pytest.raises(NotImplementedError):
        lam.get_config()

    comp = mx.metric.create(["acc", mx.metric.MSE()])
    comp.update([mx.nd.array([1, 0])], [mx.nd.array([[0.1, 0.9], [0.2, 0.8]])])
    names, values = comp.get()
    assert names == ["accuracy", "mse"] and values[0] == 0.5
    assert comp.get_metric(1).name == "mse"
    assert comp.get_name_value()[0] == ("accuracy", 0.5)
    comp.reset()
    assert all(math.isnan(v) for v in comp.get()[1])


def test_create_by_config_and_errors():
    m = mx.metric.create("top_k_acc", top_k=3)
    cfg = m.get_config()
    assert cfg["metric"] == "TopKAccuracy" and cfg["top_k"] == 3
    m2 = mx.metric.create(json.dumps(["f1", {"average": "micro"}]))
    assert isinstance(m2, mx.metric.F1) and m2.average == "micro"
    with pytest.raises(ValueError, match="not registered"):
        mx.metric.create("nope")
    acc = mx.metric.Accuracy(output_names=["out"], label_names=["lab"])
    acc.update_dict({"lab": mx.nd.array([1]), "x": mx.nd.array([0])},
                    {"out": mx.nd.array([[0., 1.]]), "y": mx.nd.array([[1., 0.]])})
    assert acc.get()[1] == 1.0
    assert str(acc) == "EvalMetric: {'accuracy': 1.0}"
