"""mx.lr_scheduler against hand-computed formulas (MXNet's definitions), warmup included."""
import math

import pytest

from sparsenet import lr_scheduler as ls


def test_factor_changes_after_each_step_and_stops():
    s = ls.FactorScheduler(step=3, factor=0.5, stop_factor_lr=0.1, base_lr=1.0)
    got = [s(n) for n in range(14)]
    # MXNet: the rate changes when num_update > count + step, i.e. at 4, 7, 10, 13
    expected = [1.0] * 4 + [0.5] * 3 + [0.25] * 3 + [0.125] * 3 + [0.1]
    assert got == pytest.approx(expected)
    # pure function of num_update: going back gives the earlier rate again
    assert s(2) == 1.0 and s.base_lr == 1.0


def test_multifactor():
    s = ls.MultiFactorScheduler(step=[5, 8], factor=0.1, base_lr=2.0)
    assert [s(n) for n in (1, 5, 6, 8, 9, 100)] == pytest.approx([2, 2, 0.2, 0.2, 0.02, 0.02])


def test_poly_with_linear_warmup():
    s = ls.PolyScheduler(max_update=12, base_lr=1.0, pwr=2, final_lr=0.2, warmup_steps=2,
                         warmup_begin_lr=0.4)
    assert s(0) == pytest.approx(0.4) and s(1) == pytest.approx(0.7)
    for n in range(2, 13):
        expected = 0.2 + 0.8 * (1 - (n - 2) / 10) ** 2
        assert s(n) == pytest.approx(expected)
    assert s(50) == pytest.approx(0.2)


def test_cosine_with_constant_warmup():
    s = ls.CosineScheduler(max_update=20, base_lr=0.5, final_lr=0.05, warmup_steps=5,
                           warmup_begin_lr=0.01, warmup_mode="constant")
    assert [s(n) for n in range(5)] == [0.01] * 5
    for n in range(5, 21):
        expected = 0.05 + 0.45 * (1 + math.cos(math.pi * (n - 5) / 15)) / 2
        assert s(n) == pytest.approx(expected)
    assert s(21) == pytest.approx(0.05)


def test_warmup_final_lr_follows_base_lr():
    s = ls.FactorScheduler(step=10, base_lr=0.1, warmup_steps=4)
    s.base_lr = 0.2  # what the optimizer does when given learning_rate
    assert s(2) == pytest.approx(0.1)
    assert s.warmup_final_lr == 0.2


@pytest.mark.parametrize("make,match", [
    (lambda: ls.FactorScheduler(step=0), r"step must be >= 1"),
    (lambda: ls.FactorScheduler(step=2, factor=1.5), r"factor must be <= 1"),
    (lambda: ls.MultiFactorScheduler(step=[3, 3]), r"strictly increasing"),
    (lambda: ls.MultiFactorScheduler(step=[]), r"non-empty list"),
    (lambda: ls.PolyScheduler(max_update=0), r"max_update must be >= 1"),
    (lambda: ls.PolyScheduler(max_update=5, warmup_steps=5), r"must exceed warmup_steps"),
    (lambda: ls.CosineScheduler(max_update=2.5), r"max_update must be an int"),
    (lambda: ls.LRScheduler(base_lr=0.1, warmup_begin_lr=0.5), r"must not exceed base_lr"),
    (lambda: ls.LRScheduler(warmup_mode="cubic"), r"'linear' or 'constant'"),
    (lambda: ls.LRScheduler(warmup_steps=-1), r"warmup_steps must be >= 0"),
])
def test_bad_arguments(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_base_class_needs_a_schedule():
    with pytest.raises(NotImplementedError, match="must define _schedule"):
        ls.LRScheduler()(3)
