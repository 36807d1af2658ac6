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

Beside them, the sequential monitor: a one-sided Bernoulli CUSUM per face, of all four dice and
of each die position, its limits computed exactly (`daemon.analytics.cusum`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import special, stats

from daemon.analytics.common import (
    FAMILY_ALPHA,
    Finding,
    Test,
    adjusted_min_p,
    binomial_greater,
    holm,
)
from daemon.analytics.cusum import (
    DICE,
    FACES,
    GOAL_THROWS,
    MONITORS,
    P_FAIR,
    P_LOADED,
    Throws,
    design,
    monitor_from,
)


def runs_from(above: int, below: int, runs: int) -> tuple[float, float]:
    """Wald-Wolfowitz runs test from the counts above and below the centre and the runs:
    (z, two-sided p)."""
    n1, n2 = above, below
    if n1 == 0 or n2 == 0:
        return 0.0, 1.0
    n = n1 + n2
    mean = 2 * n1 * n2 / n + 1
    variance = 2 * n1 * n2 * (2 * n1 * n2 - n) / (n * n * (n - 1)) if n > 1 else 0.0
    if variance <= 0:
        return 0.0, 1.0
    z = (runs - mean) / math.sqrt(variance)
    return z, float(2 * special.ndtr(-abs(z)))


def runs_test(totals: npt.NDArray[np.int64], centre: float) -> tuple[float, float]:
    """Wald-Wolfowitz runs above/below `centre` (ties left out): (z, two-sided p)."""
    signs = totals[totals != centre] > centre
    n1 = int(signs.sum())
    runs = 1 + int(np.count_nonzero(signs[1:] != signs[:-1])) if len(signs) else 0
    return runs_from(n1, len(signs) - n1, runs)


def correlation_from(
    n: int, total: int, squares: int, lagged: int, *, first: int, last: int
) -> tuple[float, float]:
    """Lag-1 autocorrelation of n totals from their sums (exact integers): the sum, the sum of
    squares, the sum of products of neighbours, the first and the last; (r, two-sided p from
    z = (r + 1/n) * sqrt(n))."""
    if n < 3:
        return 0.0, 1.0
    spread = n * squares - total * total  # n * sum of squared deviations
    if spread == 0:
        return 1.0, 0.0
    # n^2 * sum (x_t - m)(x_t-1 - m) = n^2 L - n S (2S - first - last) + (n - 1) S^2
    products = n * n * lagged - n * total * (2 * total - first - last) + (n - 1) * total * total
    r = products / (n * spread)
    z = (r + 1 / n) * math.sqrt(n)
    return r, float(2 * special.ndtr(-abs(z)))


def serial_correlation(totals: npt.NDArray[np.int64]) -> tuple[float, float]:
    """Lag-1 autocorrelation of the totals: (r, two-sided p from z = (r + 1/n) * sqrt(n))."""
    t = [int(x) for x in totals]
    if len(t) < 3:
        return 0.0, 1.0
    lagged = int(np.dot(totals[1:], totals[:-1]))
    return correlation_from(
        len(t), sum(t), int(np.dot(totals, totals)), lagged, first=t[0], last=t[-1]
    )


@dataclass
class DiceStats:
    """What the dice audit needs of one shaker's throws, as running sums that a new batch of
    throws adds to (the floor keeps them per table and serial between its passes, so a pass
    reads only the lines since the last): the face counts per die position, the totals' sums
    for runs and serial correlation, the repeats, the 30 monitors' states and their alarms.
    Exact integers: the audit of the sums is the audit of the throws."""

    dice: int = DICE
    throws: int = 0
    counts: list[list[int]] = field(default_factory=lambda: [[0] * FACES for _ in range(DICE)])
    total: int = 0
    squares: int = 0
    lagged: int = 0
    first: int = 0
    last: int = 0
    above: int = 0
    below: int = 0
    runs: int = 0
    last_sign: int = 0  # +1 above, -1 below, 0 none yet
    repeats: int = 0
    last_throw: list[int] = field(default_factory=list)
    states: list[int] = field(default_factory=lambda: [0] * MONITORS)
    alarms: list[dict[str, int | None]] = field(default_factory=list)  # the first 20
    alarm_count: int = 0

    @classmethod
    def of(cls, throws: Throws) -> DiceStats:
        found = cls(dice=int(throws.shape[1]) if throws.ndim == 2 and throws.shape[1] else DICE)
        found.counts = [[0] * FACES for _ in range(found.dice)]
        found.states = [0] * FACES * (1 + found.dice)
        found.add(throws)
        return found

    def add(self, throws: Throws) -> None:
        """Fold a batch of throws (in order, after those already in) into the sums."""
        n = int(throws.shape[0])
        if n == 0:
            return
        for position in range(self.dice):
            c = np.bincount(throws[:, position], minlength=FACES + 1)[1:]
            self.counts[position] = [
                a + int(b) for a, b in zip(self.counts[position], c, strict=True)
            ]
        totals = throws.sum(axis=1, dtype=np.int64)
        self.total += int(totals.sum())
        self.squares += int(np.dot(totals, totals))
        self.lagged += int(np.dot(totals[1:], totals[:-1]))
        if self.throws:
            self.lagged += self.last * int(totals[0])
            same = self.last_throw == [int(d) for d in throws[0]]
            self.repeats += int(same)
        else:
            self.first = int(totals[0])
        self.last = int(totals[-1])
        self.repeats += int(np.count_nonzero(np.all(throws[1:] == throws[:-1], axis=1)))
        self.last_throw = [int(d) for d in throws[-1]]
        centre = 3.5 * self.dice
        signs = totals[totals != centre] > centre
        if len(signs):
            above = int(signs.sum())
            self.above += above
            self.below += len(signs) - above
            changes = int(np.count_nonzero(signs[1:] != signs[:-1]))
            head = 1 if bool(signs[0]) else -1
            self.runs += changes + (1 if self.last_sign != head else 0)
            self.last_sign = 1 if bool(signs[-1]) else -1
        d = design()
        found, self.states = monitor_from(
            throws, (d.pooled_limit, d.position_limit), self.states, self.throws
        )
        self.alarm_count += len(found)
        room = 20 - len(self.alarms)
        self.alarms += [a.__dict__ for a in found[: max(room, 0)]]
        self.throws += n

    def json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> DiceStats:
        return cls(**value)


@dataclass(frozen=True)
class ChiSquare:
    statistic: float
    pvalue: float


def face_band(dice: int) -> tuple[float, float, float]:
    """For `dice` fair dice: each face's expected count and its 99 % band (binomial)."""
    low, high = stats.binom.ppf([0.005, 0.995], dice, 1 / FACES)
    return dice / FACES, float(low), float(high)


def chi_square(counts: npt.NDArray[np.int64]) -> ChiSquare:
    """Pearson's chi-square of counts against equal expected counts (scipy.stats.chisquare's
    figures, by its special functions: the floor computes thousands at a pass)."""
    expected = float(counts.sum()) / len(counts)
    if expected == 0:
        return ChiSquare(float("nan"), float("nan"))
    statistic = float(((counts - expected) ** 2).sum() / expected)
    return ChiSquare(statistic, float(special.chdtrc(len(counts) - 1, statistic)))


def power_chi_square(n_dice: int, alpha: float) -> float:
    """Power of the faces' chi-square (5 df, level `alpha`) over `n_dice` dice when one face
    is at 0.19 and the others share the rest."""
    p1 = np.array([(1 - P_LOADED) / 5] * 5 + [P_LOADED])
    noncentrality = n_dice * float(np.sum((p1 - P_FAIR) ** 2 / P_FAIR))
    critical = special.chdtri(FACES - 1, alpha)  # chi2.isf
    return float(1.0 - special.chndtr(critical, FACES - 1, noncentrality))  # ncx2.sf


def fixed_tests(throws: Throws | DiceStats) -> list[Test]:
    """The eight fixed-sample tests over the throws (n >= 2), or over their sums."""
    sums = throws if isinstance(throws, DiceStats) else DiceStats.of(throws)
    n, dice = sums.throws, sums.dice
    tests: list[Test] = []
    counts = np.sum(np.asarray(sums.counts, dtype=np.int64), axis=0)
    chi = chi_square(counts)
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
        c = np.asarray(sums.counts[position], dtype=np.int64)
        chi = chi_square(c)
        tests.append(
            Test(
                f"faces_die_{position + 1}",
                float(chi.statistic),
                float(chi.pvalue),
                f"die {position + 1}: {c.tolist()}",
                {"counts": c.tolist()},
            )
        )
    z, p = runs_from(sums.above, sums.below, sums.runs)
    tests.append(Test("runs", z, p, "runs of totals above and below the mean"))
    r, p = correlation_from(
        n, sums.total, sums.squares, sums.lagged, first=sums.first, last=sums.last
    )
    tests.append(Test("serial_correlation", r, p, "lag-1 correlation of the totals"))
    repeats = sums.repeats
    chance = float(P_FAIR**dice)
    p = binomial_greater(repeats, max(n - 1, 1), chance)
    expected = (n - 1) * chance
    tests.append(
        Test("repeats", repeats, p, f"{repeats} throws repeated the one before ({expected:.2f})")
    )
    return tests


def audit(serial: str, throws: Throws | DiceStats) -> Finding:
    """One shaker's verdict: the CUSUM alarms and the Holm family of fixed-sample tests, over
    its throws or their sums (`DiceStats`: the same verdict)."""
    sums = throws if isinstance(throws, DiceStats) else DiceStats.of(throws)
    n = sums.throws
    d = design()
    if n < 2:
        return Finding("dice", serial, False, 0.0, 1.0, f"{n} throw(s): too few to test", "", n, [])
    tests = fixed_tests(sums)
    p_values = [t.p_value for t in tests]
    rejected = holm(p_values)
    alarms = sums.alarms
    family_p = adjusted_min_p(p_values)
    flagged = bool(sums.alarm_count) or any(rejected)
    faces = tests[0]
    words: list[str] = []
    if alarms:
        first = alarms[0]
        where = "all four dice" if first["position"] is None else f"die {first['position']}"
        words.append(
            f"the CUSUM monitor for face {first['face']} ({where}) crossed its limit at throw "
            f"{first['throw']:,} of {n:,} ({sums.alarm_count} alarm(s) in all)"
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
            "alarms": list(alarms),
            "alarm_count": sums.alarm_count,
            "monitor": d.json(),
        },
    )
