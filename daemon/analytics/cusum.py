"""The sequential dice monitor: a one-sided Bernoulli CUSUM per face, designed exactly.

Of all four dice together (6 monitors, one step a throw: the face's count among the four) and of
each die position (24 monitors): S = max(0, S + count - REFERENCE * dice), an alarm when S
reaches the limit, then S starts again from 0. The reference 2/11 lies between 1/6 (fair) and
0.19 (the bias to find), so S is a Markov chain on whole elevenths: its average run length
between false alarms (ARL0) and the chance it alarms within N throws of a loaded die are computed
exactly from that chain (Brook and Evans 1972), not assumed. The limits are the smallest whose
false alarms, summed over the 30 monitors, stay within one per 100,000 fair throws (half the
budget to each family). The audit (`daemon.analytics.dice`) runs the monitors beside its
fixed-sample tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from scipy import sparse, stats
from scipy.sparse.linalg import spsolve

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
