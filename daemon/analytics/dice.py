"""Dice, per shaker serial: are its dice fair, and does each throw forget the last?

Fixed-sample tests over the audited throws (each shaker reports four dice, in a fixed order: the
die position):

- face counts of all dice against 1/6 each (Pearson chi-square, 5 df), and of each position;
- runs of totals above / below 14 (the mean of four dice; a total of 14 is left out), the
  Wald-Wolfowitz runs test, two-sided;
- lag-1 serial correlation of the totals (z = r * sqrt(n), two-sided);
- repeats: a throw identical to the one before (the four dice in order; 1 in 1,296 when fair),
  one-sided binomial.

The eight p-values are one family: Holm's step-down at `FAMILY_ALPHA` (0.001).

The sequential monitor is a one-sided Bernoulli CUSUM per face, of all four dice together (6
monitors, one step a throw: the face's count among the four) and of each die position (24
monitors): S = max(0, S + count - REFERENCE * dice), an alarm when S reaches the limit, then S
starts again from 0. The reference 2/11 lies between 1/6 (fair) and 0.19 (the bias to find), so
S is a Markov chain on whole elevenths: its average run length between false alarms (ARL0) and
the chance it alarms within N throws of a loaded die are computed exactly from that chain
(Brook and Evans 1972), not assumed. The limits are the smallest whose false alarms, summed over
the 30 monitors, stay within one per 100,000 fair throws (half the budget to each family).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy import sparse, stats
from scipy.sparse.linalg import spsolve

from daemon.analytics.common import FAMILY_ALPHA, Finding, Test, adjusted_min_p, holm

FACES = 6
DICE = 4
P_FAIR = 1 / 6
P_LOADED = 0.19  # the bias the monitor is designed for: one face at 0.19
UNITS = 11  # S in elevenths of a face
REFERENCE = 2  # ... the reference 2/11 a die
FALSE_ALARMS_PER_THROW = 1e-5  # the budget: one per 100,000 throws, all 30 monitors together
GOAL_THROWS = 4000

Throws = npt.NDArray[np.int8]  # shape (n, 4), faces 1-6


def _increments(count_probabilities: npt.NDArray[np.float64], dice: int) -> dict[int, float]:
    """The chain's steps (in elevenths) and their probabilities, for a face counted among
    `dice` dice with P(count = k) = count_probabilities[k]."""
    return {
        k * UNITS - REFERENCE * dice: float(p) for k, p in enumerate(count_probabilities) if p > 0
    }


def _counts(p: float, dice: int) -> npt.NDArray[np.float64]:
    return np.asarray(stats.binom.pmf(np.arange(dice + 1), dice, p), dtype=np.float64)


def _chain(limit: int, steps: dict[int, float]) -> sparse.csr_matrix:
    """Transient part of the CUSUM chain: states 0..limit-1 (S in elevenths)."""
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for step, p in steps.items():
        for s in range(limit):
            target = max(0, s + step)
            if target < limit:
                rows.append(s)
                cols.append(target)
                vals.append(p)
    return sparse.csr_matrix((vals, (rows, cols)), shape=(limit, limit))


def average_run_length(limit: int, p: float, dice: int) -> float:
    """Throws to an alarm from S = 0 when the face comes up with probability `p` a die."""
    q = _chain(limit, _increments(_counts(p, dice), dice))
    identity = sparse.identity(limit, format="csr")
    lengths = spsolve((identity - q).tocsc(), np.ones(limit))
    return float(lengths[0])


def alarm_probability(limit: int, p: float, dice: int, throws: int) -> float:
    """The chance of an alarm within `throws` throws, from S = 0, at face probability `p`."""
    q = _chain(limit, _increments(_counts(p, dice), dice)).T.tocsr()
    state = np.zeros(limit)
    state[0] = 1.0
    for _ in range(throws):
        state = q @ state
    return float(1.0 - state.sum())


def throws_for_power(limit: int, p: float, dice: int, power: float = 0.9) -> int:
    """The fewest throws after which an alarm has come with probability `power`."""
    q = _chain(limit, _increments(_counts(p, dice), dice)).T.tocsr()
    state = np.zeros(limit)
    state[0] = 1.0
    for n in range(1, 1_000_001):
        state = q @ state
        if 1.0 - state.sum() >= power:
            return n
    return -1


def _smallest_limit(target_arl: float, dice: int) -> int:
    low, high = 1, 64
    while average_run_length(high, P_FAIR, dice) < target_arl:
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        if average_run_length(middle, P_FAIR, dice) >= target_arl:
            high = middle
        else:
            low = middle
    return high


@dataclass(frozen=True)
class MonitorDesign:
    """The CUSUM limits and what they give, computed exactly from the chain."""

    pooled_limit: int  # in elevenths, for the 6 monitors of all four dice
    position_limit: int  # for the 24 monitors of one die position
    pooled_arl0: float  # fair throws between false alarms, one monitor
    position_arl0: float
    false_alarms_per_100k: float  # all 30 monitors, fair dice
    power_all_dice: float  # alarm within GOAL_THROWS, one face at 0.19 on all four dice
    power_one_die: float  # ... on one die only
    throws_90_all_dice: int
    throws_90_one_die: int

    def json(self) -> dict[str, float | int]:
        return {k: v for k, v in self.__dict__.items()}


@lru_cache(maxsize=1)
def design() -> MonitorDesign:
    pooled_target = FACES / (FALSE_ALARMS_PER_THROW / 2)
    position_target = FACES * DICE / (FALSE_ALARMS_PER_THROW / 2)
    pooled = _smallest_limit(pooled_target, DICE)
    position = _smallest_limit(position_target, 1)
    pooled_arl0 = average_run_length(pooled, P_FAIR, DICE)
    position_arl0 = average_run_length(position, P_FAIR, 1)
    return MonitorDesign(
        pooled_limit=pooled,
        position_limit=position,
        pooled_arl0=pooled_arl0,
        position_arl0=position_arl0,
        false_alarms_per_100k=1e5 * (FACES / pooled_arl0 + FACES * DICE / position_arl0),
        power_all_dice=alarm_probability(pooled, P_LOADED, DICE, GOAL_THROWS),
        power_one_die=alarm_probability(position, P_LOADED, 1, GOAL_THROWS),
        throws_90_all_dice=throws_for_power(pooled, P_LOADED, DICE),
        throws_90_one_die=throws_for_power(position, P_LOADED, 1),
    )


def cusum_alarms(increments: npt.NDArray[np.int64], limit: int) -> list[int]:
    """The 0-based steps at which S = max(0, S + increment) reaches `limit` (then restarts).

    Chunk by chunk, with S carried over: from S0, S_t = X_t - min(0, min X_u) where X is S0
    plus the running sum (Lindley's recursion, vectorised); a chunk grows while no alarm comes,
    so the work is in proportion to the steps, however many alarms there are.
    """
    alarms: list[int] = []
    position, state, width = 0, 0, 1024
    while position < len(increments):
        walk = state + np.cumsum(increments[position : position + width])
        s = walk - np.minimum(np.minimum.accumulate(walk), 0)
        crossed = np.flatnonzero(s >= limit)
        if len(crossed):
            at = position + int(crossed[0])
            alarms.append(at)
            position, state, width = at + 1, 0, 1024
        else:
            position += len(walk)
            state = int(s[-1])
            width *= 2
    return alarms


@dataclass(frozen=True)
class Alarm:
    face: int
    position: int | None  # None: all four dice
    throw: int  # 1-based


def monitor(throws: Throws, limits: tuple[int, int] | None = None) -> list[Alarm]:
    """Every alarm of the 30 CUSUM monitors over `throws`, in throw order."""
    if limits is None:
        d = design()
        limits = (d.pooled_limit, d.position_limit)
    pooled_limit, position_limit = limits
    alarms: list[Alarm] = []
    dice = throws.shape[1]
    for face in range(1, FACES + 1):
        hits = throws == face
        pooled = hits.sum(axis=1, dtype=np.int64) * UNITS - REFERENCE * dice
        alarms += [Alarm(face, None, t + 1) for t in cusum_alarms(pooled, pooled_limit)]
        for position in range(dice):
            steps = hits[:, position].astype(np.int64) * UNITS - REFERENCE
            found = cusum_alarms(steps, position_limit)
            alarms += [Alarm(face, position + 1, t + 1) for t in found]
    return sorted(alarms, key=lambda a: (a.throw, a.face, a.position or 0))


def runs_test(totals: npt.NDArray[np.int64], centre: float) -> tuple[float, float]:
    """Wald-Wolfowitz runs above/below `centre` (ties left out): (z, two-sided p)."""
    signs = totals[totals != centre] > centre
    n1 = int(signs.sum())
    n2 = len(signs) - n1
    if n1 == 0 or n2 == 0:
        return 0.0, 1.0
    runs = 1 + int(np.count_nonzero(signs[1:] != signs[:-1]))
    n = n1 + n2
    mean = 2 * n1 * n2 / n + 1
    variance = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1)) if n > 1 else 0.0
    if variance <= 0:
        return 0.0, 1.0
    z = (runs - mean) / math.sqrt(variance)
    return z, float(2 * stats.norm.sf(abs(z)))


def serial_correlation(totals: npt.NDArray[np.int64]) -> tuple[float, float]:
    """Lag-1 autocorrelation of the totals: (r, two-sided p from z = (r + 1/n) * sqrt(n))."""
    n = len(totals)
    if n < 3:
        return 0.0, 1.0
    centred = totals - totals.mean()
    denominator = float(np.dot(centred, centred))
    if denominator == 0:
        return 1.0, 0.0
    r = float(np.dot(centred[1:], centred[:-1]) / denominator)
    z = (r + 1 / n) * math.sqrt(n)
    return r, float(2 * stats.norm.sf(abs(z)))


def power_chi_square(n_dice: int, alpha: float) -> float:
    """Power of the faces' chi-square (5 df, level `alpha`) over `n_dice` dice when one face
    is at 0.19 and the others share the rest."""
    p1 = np.array([(1 - P_LOADED) / 5] * 5 + [P_LOADED])
    noncentrality = n_dice * float(np.sum((p1 - P_FAIR) ** 2 / P_FAIR))
    critical = stats.chi2.isf(alpha, FACES - 1)
    return float(stats.ncx2.sf(critical, FACES - 1, noncentrality))


def fixed_tests(throws: Throws) -> list[Test]:
    """The eight fixed-sample tests over the throws (n >= 2)."""
    n, dice = throws.shape
    tests: list[Test] = []
    counts = np.bincount(throws.ravel(), minlength=FACES + 1)[1:]
    chi = stats.chisquare(counts)
    tests.append(
        Test(
            "faces",
            float(chi.statistic),
            float(chi.pvalue),
            f"face counts of all dice {counts.tolist()} against {n * dice / 6:.1f} each",
            {"counts": counts.tolist()},
        )
    )
    for position in range(dice):
        c = np.bincount(throws[:, position], minlength=FACES + 1)[1:]
        chi = stats.chisquare(c)
        tests.append(
            Test(
                f"faces_die_{position + 1}",
                float(chi.statistic),
                float(chi.pvalue),
                f"die {position + 1}: {c.tolist()}",
                {"counts": c.tolist()},
            )
        )
    totals = throws.sum(axis=1, dtype=np.int64)
    z, p = runs_test(totals, 3.5 * dice)
    tests.append(Test("runs", z, p, "runs of totals above and below the mean"))
    r, p = serial_correlation(totals)
    tests.append(Test("serial_correlation", r, p, "lag-1 correlation of the totals"))
    repeats = int(np.count_nonzero(np.all(throws[1:] == throws[:-1], axis=1)))
    chance = float(P_FAIR**dice)
    p = float(stats.binomtest(repeats, max(n - 1, 1), chance, alternative="greater").pvalue)
    expected = (n - 1) * chance
    tests.append(
        Test("repeats", repeats, p, f"{repeats} throws repeated the one before ({expected:.2f})")
    )
    return tests


def audit(serial: str, throws: Throws) -> Finding:
    """One shaker's verdict: the CUSUM alarms and the Holm family of fixed-sample tests."""
    n = int(throws.shape[0])
    d = design()
    if n < 2:
        return Finding("dice", serial, False, 0.0, 1.0, f"{n} throw(s): too few to test", "", n, [])
    tests = fixed_tests(throws)
    p_values = [t.p_value for t in tests]
    rejected = holm(p_values)
    alarms = monitor(throws, (d.pooled_limit, d.position_limit))
    family_p = adjusted_min_p(p_values)
    flagged = bool(alarms) or any(rejected)
    faces = tests[0]
    words: list[str] = []
    if alarms:
        first = alarms[0]
        where = "all four dice" if first.position is None else f"die {first.position}"
        words.append(
            f"the CUSUM monitor for face {first.face} ({where}) crossed its limit at throw "
            f"{first.throw:,} of {n:,} ({len(alarms)} alarm(s) in all)"
        )
    for test, rejected_one in zip(tests, rejected, strict=True):
        if rejected_one:
            words.append(f"{test.name} failed (p = {test.p_value:.2g}): {test.detail}")
    if flagged:
        verdict = "FLAGGED: " + "; ".join(words)
    else:
        verdict = (
            f"consistent with fair dice over {n:,} throws: faces, runs, serial correlation "
            f"and repeats pass (family p = {family_p:.3g}), no CUSUM alarm"
        )
    chi_power = power_chi_square(n * DICE, FAMILY_ALPHA / len(tests))
    power = (
        f"one face at 0.19 on all four dice is caught by the monitor within {GOAL_THROWS:,} "
        f"throws with probability {d.power_all_dice:.1%} (90% by throw "
        f"{d.throws_90_all_dice:,}); on one die only, {d.power_one_die:.1%} (90% by throw "
        f"{d.throws_90_one_die:,}); the faces' chi-square over these {n:,} throws has "
        f"{chi_power:.1%} power for it; false alarms: "
        f"{d.false_alarms_per_100k:.2f} per 100,000 fair throws (monitor), "
        f"{FAMILY_ALPHA:.1%} of audits (tests)"
    )
    return Finding(
        "dice",
        serial,
        flagged,
        faces.statistic,
        family_p,
        verdict,
        power,
        n,
        tests,
        {
            "alarms": [a.__dict__ for a in alarms[:20]],
            "alarm_count": len(alarms),
            "monitor": d.json(),
        },
    )
