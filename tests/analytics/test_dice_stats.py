"""The dice statistics on generated throws (fixed seeds): the monitor's false-alarm rate and
power measured against what its Markov chain computes, and the fixed-sample family's."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from daemon.analytics import cusum, dice
from daemon.analytics.common import FAMILY_ALPHA, holm


def fair(rng: np.random.Generator, n: int) -> npt.NDArray[np.int8]:
    return rng.integers(1, 7, (n, 4)).astype(np.int8)


def loaded(
    rng: np.random.Generator, n: int, p: float, positions: tuple[int, ...]
) -> npt.NDArray[np.int8]:
    throws = fair(rng, n)
    faces = np.array([(1 - p) / 5] * 5 + [p])
    for position in positions:
        throws[:, position] = rng.choice(np.arange(1, 7), size=n, p=faces)
    return throws


def test_the_design_meets_the_false_alarm_budget_and_the_four_dice_goal() -> None:
    d = cusum.design()
    assert d.false_alarms_per_100k <= 1.0
    assert d.power_all_dice >= 0.90
    assert d.throws_90_all_dice <= cusum.GOAL_THROWS
    # One loaded die among four: the goal's 4,000 throws are not enough at this budget.
    assert 0.4 < d.power_one_die < 0.9 and d.throws_90_one_die > cusum.GOAL_THROWS


def test_the_chain_matches_a_cusum_run_on_data() -> None:
    """A small limit, so that alarms are many: the chain's ARL against the data's."""
    rng = np.random.default_rng(7)
    steps = (rng.random(400_000) < 1 / 6).astype(np.int64) * cusum.UNITS - cusum.REFERENCE
    alarms, _ = cusum.cusum_alarms(steps, 40)
    measured = len(steps) / len(alarms)
    assert measured == pytest.approx(cusum.average_run_length(40, 1 / 6, 1), rel=0.1)


def test_fair_dice_raise_no_more_false_alarms_than_the_chain_says() -> None:
    rng = np.random.default_rng(20261202)
    throws = fair(rng, 1_000_000)
    alarms = cusum.monitor(throws)
    expected = cusum.design().false_alarms_per_100k * 10  # in 1,000,000 throws
    # Poisson around the exact rate: within three sd of it, and the rate within the goal.
    assert len(alarms) <= expected + 3 * expected**0.5
    assert len(alarms) / 10 <= 1.0 + 3 * expected**0.5 / 10


def _power(positions: tuple[int, ...], runs: int, seed: int) -> float:
    rng = np.random.default_rng(seed)
    caught = 0
    for _ in range(runs):
        alarms = cusum.monitor(loaded(rng, cusum.GOAL_THROWS, cusum.P_LOADED, positions))
        caught += any(a.face == 6 for a in alarms)
    return caught / runs


def test_one_face_at_0_19_on_the_shakers_dice_is_caught_within_4000_throws() -> None:
    measured = _power((0, 1, 2, 3), 200, 1)
    assert measured >= 0.95  # exact: 99.7 %
    assert measured == pytest.approx(cusum.design().power_all_dice, abs=0.03)


def test_one_loaded_die_is_caught_as_often_as_the_chain_says() -> None:
    measured = _power((2,), 200, 2)
    exact = cusum.design().power_one_die
    assert measured == pytest.approx(exact, abs=3 * (exact * (1 - exact) / 200) ** 0.5)


def test_the_fixed_sample_family_flags_fair_dice_about_one_audit_in_a_thousand() -> None:
    rng = np.random.default_rng(3)
    flagged = sum(
        any(holm([t.p_value for t in dice.fixed_tests(fair(rng, 500))])) for _ in range(1000)
    )
    assert flagged <= 5  # 1,000 audits at a family rate of 0.001: 1 expected


def test_the_fixed_tests_see_a_stuck_or_a_sticky_shaker() -> None:
    rng = np.random.default_rng(4)
    stuck = fair(rng, 2000)
    stuck[1::10] = stuck[0::10][: len(stuck[1::10])]  # every tenth throw repeats the one before
    results = {t.name: t.p_value for t in dice.fixed_tests(stuck)}
    assert results["repeats"] < FAMILY_ALPHA / 8
    sticky = np.repeat(fair(rng, 1000), 2, axis=0)  # each throw twice: runs and correlation
    results = {t.name: t.p_value for t in dice.fixed_tests(sticky)}
    assert results["serial_correlation"] < FAMILY_ALPHA / 8
    assert results["runs"] < FAMILY_ALPHA / 8


def test_an_audit_of_loaded_dice_says_so_in_words() -> None:
    rng = np.random.default_rng(5)
    finding = dice.audit("SIM-DICE-4-0001", loaded(rng, 4000, 0.19, (0, 1, 2, 3)))
    assert finding.flagged and finding.verdict.startswith("FLAGGED")
    assert "face 6" in finding.verdict and "within 4,000 throws" in finding.power
    fine = dice.audit("SIM-DICE-4-0002", fair(rng, 4000))
    assert not fine.flagged and fine.verdict.startswith("consistent with fair dice")
