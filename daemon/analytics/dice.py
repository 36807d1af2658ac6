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
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import sparse, special, stats
from scipy.sparse.linalg import spsolve

from daemon.analytics.common import (
    FAMILY_ALPHA,
    Finding,
    Test,
    adjusted_min_p,
    binomial_greater,
    holm,
)

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


def cusum_alarms(
    increments: npt.NDArray[np.int64], limit: int, start: int = 0
) -> tuple[list[int], int]:
    """The 0-based steps at which S = max(0, S + increment) reaches `limit` (then restarts),
    from S = `start`, and S after the last step (the floor carries it to its next pass).

    Chunk by chunk, with S carried over: from S0, S_t = X_t - min(0, min X_u) where X is S0
    plus the running sum (Lindley's recursion, vectorised); a chunk grows while no alarm comes,
    so the work is in proportion to the steps, however many alarms there are.
    """
    alarms: list[int] = []
    position, state, width = 0, start, 1024
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
    return alarms, state


@dataclass(frozen=True)
class Alarm:
    face: int
    position: int | None  # None: all four dice
    throw: int  # 1-based


MONITORS = FACES * (1 + DICE)  # per face: all four dice, then each position


def monitor_from(
    throws: Throws, limits: tuple[int, int], states: list[int], before: int = 0
) -> tuple[list[Alarm], list[int]]:
    """The alarms of the 30 monitors over `throws` that follow `before` throws whose monitors
    ended at `states` (face by face: all dice, then each position); and their states after."""
    pooled_limit, position_limit = limits
    alarms: list[Alarm] = []
    after: list[int] = []
    dice = throws.shape[1]
    if len(throws) <= SMALL_BATCH:
        return _monitor_steps(throws, limits, states, before)
    for face in range(1, FACES + 1):
        hits = throws == face
        pooled = hits.sum(axis=1, dtype=np.int64) * UNITS - REFERENCE * dice
        at = (face - 1) * (1 + dice)
        found, state = cusum_alarms(pooled, pooled_limit, states[at])
        alarms += [Alarm(face, None, before + t + 1) for t in found]
        after.append(state)
        for position in range(dice):
            steps = hits[:, position].astype(np.int64) * UNITS - REFERENCE
            found, state = cusum_alarms(steps, position_limit, states[at + 1 + position])
            alarms += [Alarm(face, position + 1, before + t + 1) for t in found]
            after.append(state)
    alarms.sort(key=lambda a: (a.throw, a.face, a.position or 0))
    return alarms, after


SMALL_BATCH = 256  # fewer throws (the floor's hour): all 30 monitors a step at a time


def _monitor_steps(
    throws: Throws, limits: tuple[int, int], states: list[int], before: int
) -> tuple[list[Alarm], list[int]]:
    """`monitor_from` for a few throws: the 30 monitors as one vector, throw by throw (the
    same integer arithmetic, so the same alarms and states)."""
    dice = throws.shape[1]
    faces = np.arange(1, FACES + 1)
    hits = (throws[:, None, :] == faces[None, :, None]).astype(np.int64)  # (n, face, die)
    pooled = hits.sum(axis=2) * UNITS - REFERENCE * dice
    steps = np.concatenate([pooled[:, :, None], hits * UNITS - REFERENCE], axis=2)
    steps = steps.reshape(len(throws), FACES * (1 + dice))  # face by face: all dice, then each
    limit = np.tile([limits[0]] + [limits[1]] * dice, FACES)
    s = np.asarray(states, dtype=np.int64)
    alarms: list[Alarm] = []
    for t in range(len(throws)):
        s = np.maximum(s + steps[t], 0)
        crossed = s >= limit
        if crossed.any():
            for m in np.flatnonzero(crossed).tolist():
                face, where = divmod(m, 1 + dice)
                alarms.append(Alarm(face + 1, where or None, before + t + 1))
            s[crossed] = 0
    return alarms, s.tolist()


def monitor(throws: Throws, limits: tuple[int, int] | None = None) -> list[Alarm]:
    """Every alarm of the 30 CUSUM monitors over `throws`, in throw order."""
    if limits is None:
        d = design()
        limits = (d.pooled_limit, d.position_limit)
    return monitor_from(throws, limits, [0] * FACES * (1 + throws.shape[1]))[0]


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
