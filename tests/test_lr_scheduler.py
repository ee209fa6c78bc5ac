"""mx.lr_scheduler: the schedules and their warm-up, as MXNet 1.9 computes them."""
import math

import pytest

import mxlite as mx

S = mx.lr_scheduler


def test_factor_scheduler():
    s = S.FactorScheduler(step=3, factor=0.5, base_lr=1.0, stop_factor_lr=0.2)
    got = [s(n) for n in range(1, 14)]
    # decays once num_update passes each multiple of step, never below stop_factor_lr
    assert got == [1.0] * 3 + [0.5] * 3 + [0.25] * 3 + [0.2] * 4


def test_multi_factor_scheduler():
    s = S.MultiFactorScheduler(step=[2, 5], factor=0.1, base_lr=1.0)
    got = [s(n) for n in range(1, 8)]
    expect = [1.0, 1.0, 0.1, 0.1, 0.1, 0.01, 0.01]
    assert all(math.isclose(a, b) for a, b in zip(got, expect))
    assert s.cur_step_ind == 2 and s.count == 5


def test_poly_scheduler_with_linear_warmup():
    s = S.PolyScheduler(max_update=12, base_lr=1.0, pwr=2, final_lr=0.1,
                        warmup_steps=2, warmup_begin_lr=0.5)
    assert s(0) == 0.5 and s(1) == 0.75          # linear warm-up to base_lr
    for n in (2, 7, 12):
        assert math.isclose(s(n), 0.1 + 0.9 * (1 - (n - 2) / 10) ** 2)
    assert s(20) == pytest.approx(0.1)            # stays at final_lr


def test_cosine_scheduler_with_constant_warmup():
    s = S.CosineScheduler(max_update=10, base_lr=2.0, final_lr=0.0, warmup_steps=4,
                          warmup_begin_lr=0.1, warmup_mode="constant")
    assert [s(n) for n in range(4)] == [0.1] * 4
    assert math.isclose(s(7), 2.0 * (1 + math.cos(math.pi * 3 / 6)) / 2)
    assert math.isclose(s(10), 0.0, abs_tol=1e-12)


@pytest.mark.parametrize("kwargs,match", [
    (dict(warmup_mode="cubic"), "linear and constant"),
    (dict(warmup_steps=-1), "positive or 0"),
    (dict(warmup_begin_lr=1.0), "higher than warmup_begin_lr"),
])
def test_warmup_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        S.FactorScheduler(step=1, base_lr=0.5, **kwargs)


def test_argument_errors():
    with pytest.raises(ValueError, match="greater or equal than 1"):
        S.FactorScheduler(step=0)
    with pytest.raises(ValueError, match="no more than 1"):
        S.FactorScheduler(step=2, factor=1.5)
    with pytest.raises(ValueError, match="increasing"):
        S.MultiFactorScheduler(step=[3, 2])
    with pytest.raises(ValueError, match="strictly positive"):
        S.CosineScheduler(max_update=0)
    with pytest.raises(NotImplementedError):
        S.LRScheduler()(1)


def test_optimizer_learning_rate_overrides_scheduler_base_lr(capsys):
    s = S.FactorScheduler(step=2, base_lr=1.0)
    opt = mx.optimizer.SGD(learning_rate=0.3, lr_scheduler=s)
    assert s.base_lr == 0.3 and opt.learning_rate == 0.3
    assert "overwritten" in capsys.readouterr().out
