"""Shuffles, per shuffler serial: does the order out forget the order in?

Each audited deck is a permutation: for each position the cards came out in (the order the shoe
dealt them), the position that card went in at (the previous deck's dealt order: the order the
dealer collected the cards, as the simulator models it; see docs/integrity.md for real tables).
For a shuffler that randomises, every permutation is equally likely whatever went in. Tests:

- rising sequences (Bayer and Diaconis 1992): the maximal runs of consecutive input positions
  that come out in order; a random deck of 52 has 26.5 (sd 2.10); k riffles leave at most 2^k.
  The mean over the decks, two-sided z. Its value sets the *equivalent riffles*: the number of
  Gilbert-Shannon-Reeds riffles whose expected rising sequences match the observed mean.
- a guessing game (Diaconis, Fulman and Holmes 2013): a guesser who knows the input order names
  each next card before it is shown (the neighbour, in input order, of the card just shown, in
  the direction of the last step; else the first unseen card). Against a random deck any guess
  of an unseen card is right with probability 1/(cards left): 4.54 a deck on average (the 52nd
  harmonic number), whatever the strategy. One-sided z on the mean score.
- card x position: the count of cards that went in at position i and came out at position j, a
  52 x 52 table, Pearson chi-square against D/52 a cell once D >= 260 decks (>= 5 a cell), with
  52 x 51 degrees of freedom (each row a multinomial; the columns' constraint makes it
  conservative).

The p-values are one family: Holm's step-down at `FAMILY_ALPHA` (0.001).
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import special

from daemon.analytics.common import FAMILY_ALPHA, Finding, Test, adjusted_min_p, holm

CARDS = 52
CHI_SQUARE_DECKS = 260  # 260 / 52 = 5 expected a cell
RISING_MEAN = (CARDS + 1) / 2
RISING_VARIANCE = (CARDS + 1) / 12
GUESS_MEAN = sum(1 / k for k in range(1, CARDS + 1))
GUESS_VARIANCE = sum(1 / k - 1 / k**2 for k in range(1, CARDS + 1))

Permutations = npt.NDArray[np.int16]  # (decks, 52): input position of each output position


def random_rising_distribution(
    cards: int = CARDS,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """P(R = r) for a random deck: the Eulerian numbers A(n, r - 1) / n!."""
    eulerian = [1]
    for n in range(2, cards + 1):
        previous = eulerian
        eulerian = [
            (d + 1) * (previous[d] if d < len(previous) else 0)
            + (n - d) * (previous[d - 1] if d >= 1 else 0)
            for d in range(n)
        ]
    total = math.factorial(cards)
    r = np.arange(1, cards + 1)
    return r, np.array([count / total for count in eulerian])


def permutations(inputs: npt.NDArray[np.int16], outputs: npt.NDArray[np.int16]) -> Permutations:
    """Decks as permutations: `inputs` and `outputs` hold card ids (0-51) in order, a row a
    deck; the result holds, for each output position, the input position of its card."""
    where = np.empty_like(inputs)
    rows = np.arange(len(inputs))[:, None]
    where[rows, inputs] = np.arange(inputs.shape[1], dtype=inputs.dtype)
    return np.asarray(np.take_along_axis(where, outputs, axis=1), dtype=np.int16)


def rising_sequences(decks: Permutations) -> npt.NDArray[np.int64]:
    """Rising sequences of each deck: 1 + the input positions i whose successor i+1 came out
    before it."""
    out_position = np.argsort(decks, axis=1)
    descents = np.count_nonzero(out_position[:, 1:] < out_position[:, :-1], axis=1)
    return np.asarray(descents, dtype=np.int64) + 1


def guess_scores(decks: Permutations) -> npt.NDArray[np.int64]:
    """The guesser's correct guesses, a deck (see the module's docstring for the strategy)."""
    n_decks, cards = decks.shape
    rows = np.arange(n_decks)
    seen = np.zeros((n_decks, cards), dtype=bool)
    last = np.full(n_decks, -1, dtype=np.int64)
    direction = np.ones(n_decks, dtype=np.int64)
    score = np.zeros(n_decks, dtype=np.int64)
    first_unseen = np.zeros(n_decks, dtype=np.int64)
    for j in range(cards):
        ahead = last + direction
        behind = last - direction
        ok_ahead = (ahead >= 0) & (ahead < cards)
        ok_ahead &= ~seen[rows, np.clip(ahead, 0, cards - 1)]
        ok_behind = (behind >= 0) & (behind < cards)
        ok_behind &= ~seen[rows, np.clip(behind, 0, cards - 1)]
        guess = np.where(ok_ahead, ahead, np.where(ok_behind, behind, first_unseen))
        actual = decks[:, j].astype(np.int64)
        score += guess == actual
        seen[rows, actual] = True
        while True:  # the first unseen card moves on past the ones just seen (52 in all)
            moved = (first_unseen < cards) & seen[rows, np.minimum(first_unseen, cards - 1)]
            if not moved.any():
                break
            first_unseen += moved
        if j:
            direction = np.where(actual > last, 1, -1)
        last = actual
    return score


def position_table(decks: Permutations) -> npt.NDArray[np.int64]:
    """Counts of (input position, output position) over the decks."""
    cards = decks.shape[1]
    cells = decks.astype(np.int64) * cards + np.arange(cards)
    return np.bincount(cells.ravel(), minlength=cards * cards).reshape(cards, cards)


def table_chi_square(table: npt.NDArray[np.int64], decks: int) -> tuple[float, float, int]:
    """(statistic, p-value, degrees of freedom) of a card x position table of `decks` decks."""
    expected = decks / CARDS
    statistic = float(((table - expected) ** 2).sum() / expected)
    df = CARDS * (CARDS - 1)
    return statistic, float(special.chdtrc(df, statistic)), df


def position_chi_square(decks: Permutations) -> tuple[float, float, int]:
    """(statistic, p-value, degrees of freedom) of the card x position table."""
    return table_chi_square(position_table(decks), len(decks))


@lru_cache(maxsize=1)
def riffle_rising_means(cards: int = CARDS, most: int = 16) -> tuple[float, ...]:
    """E[rising sequences] after k = 0..most GSR riffles (an a-shuffle, a = 2^k): the number of
    permutations with r rising sequences is the Eulerian number A(n, r-1), each has
    probability C(a + n - r, n) / a^n (Bayer and Diaconis 1992)."""
    eulerian = [1]  # A(n, d) for d descents, built up from n = 1
    for n in range(2, cards + 1):
        previous = eulerian
        eulerian = [
            (d + 1) * (previous[d] if d < len(previous) else 0)
            + (n - d) * (previous[d - 1] if d >= 1 else 0)
            for d in range(n)
        ]
    means = []
    for k in range(most + 1):
        a = 2**k
        total = Fraction(0)
        for d, count in enumerate(eulerian):
            r = d + 1
            if r > a:
                break
            total += r * count * math.comb(a + cards - r, cards)
        means.append(float(total / a**cards))
    return tuple(means)


def equivalent_riffles(mean_rising: float) -> float | None:
    """The (fractional) number of riffles whose expected rising sequences is `mean_rising`;
    None when it is above what any number of riffles gives (not riffle-like)."""
    means = riffle_rising_means()
    if mean_rising > means[-1] + 1e-9:
        return None
    for k in range(1, len(means)):
        if mean_rising <= means[k]:
            low, high = means[k - 1], means[k]
            return k - 1 + (mean_rising - low) / (high - low) if high > low else float(k)
    return float(len(means) - 1)


# ---- generators, for power studies and the bench (numpy: many decks at once) ---------------


def random_decks(rng: np.random.Generator, decks: int) -> Permutations:
    return np.asarray(np.argsort(rng.random((decks, CARDS)), axis=1), dtype=np.int16)


def riffle_decks(rng: np.random.Generator, decks: int, riffles: int) -> Permutations:
    """k GSR riffles of 0..51 = an a-shuffle (a = 2^k): the inverse of sorting the cards
    stably by a uniform digit 0..a-1 each."""
    digits = rng.integers(0, 2**riffles, (decks, CARDS))
    unshuffle = np.argsort(digits, axis=1, kind="stable")
    return np.asarray(np.argsort(unshuffle, axis=1), dtype=np.int16)


def shelf_decks(rng: np.random.Generator, decks: int, shelves: int, passes: int) -> Permutations:
    """The shelf shuffler: each card onto a uniform shelf, on top (its pile reads down) or
    under (reads up) with even odds; the shelves stacked in order. Passes compose."""
    order = np.tile(np.arange(CARDS, dtype=np.int64), (decks, 1))
    position = np.arange(CARDS)
    for _ in range(passes):
        shelf = rng.integers(0, shelves, (decks, CARDS))
        under = rng.random((decks, CARDS)) < 0.5
        key = shelf * 2 * CARDS + np.where(under, CARDS + position, CARDS - 1 - position)
        order = np.take_along_axis(order, np.argsort(key, axis=1), axis=1)
    return np.asarray(order, dtype=np.int16)


@dataclass(frozen=True)
class Alternative:
    name: str
    rising_mean: float
    rising_sd: float
    guess_mean: float
    guess_sd: float


@lru_cache(maxsize=1)
def alternatives(decks: int = 20_000, seed: int = 20261202) -> tuple[Alternative, ...]:
    """The faulty shufflers the goals name, their statistics' moments (measured, seeded)."""
    rng = np.random.default_rng(seed)
    found = []
    for name, sample in (
        ("one-pass 10-shelf", shelf_decks(rng, decks, 10, 1)),
        ("5 riffles", riffle_decks(rng, decks, 5)),
    ):
        rising = rising_sequences(sample)
        guesses = guess_scores(sample)
        found.append(
            Alternative(
                name,
                float(rising.mean()),
                float(rising.std()),
                float(guesses.mean()),
                float(guesses.std()),
            )
        )
    return tuple(found)


def power(decks: int, alpha: float = FAMILY_ALPHA / 3) -> dict[str, float]:
    """Power of the rising-sequence and guessing tests (either, at Holm's first step) against
    each alternative over `decks` decks (normal approximation with the measured moments)."""
    result = {}
    z_two = -special.ndtri(alpha / 2)  # norm.isf
    z_one = -special.ndtri(alpha)
    for alt in alternatives():
        shift = math.sqrt(decks) * (alt.rising_mean - RISING_MEAN) / math.sqrt(RISING_VARIANCE)
        scale = alt.rising_sd / math.sqrt(RISING_VARIANCE)
        rising = special.ndtr(-(z_two - shift) / scale) + special.ndtr((-z_two - shift) / scale)
        shift = math.sqrt(decks) * (alt.guess_mean - GUESS_MEAN) / math.sqrt(GUESS_VARIANCE)
        scale = alt.guess_sd / math.sqrt(GUESS_VARIANCE)
        guess = special.ndtr(-(z_one - shift) / scale)
        result[alt.name] = float(max(rising, guess))
    return result


@dataclass(eq=False)
class ShuffleStats:
    """What the shuffle audit needs of one shuffler's decks, as sums a new batch of decks adds
    to (the floor keeps them per table and serial between passes): the decks, the histogram
    of rising sequences (index r - 1), the guessing game's total score, and the card x
    position count table (input position x 52 + output position; a numpy array, as it is
    added to and tested: the floor's pass keeps 800 of them)."""

    decks: int = 0
    rising: list[int] = field(default_factory=lambda: [0] * CARDS)
    guessed: int = 0
    table: npt.NDArray[np.int64] = field(
        default_factory=lambda: np.zeros(CARDS * CARDS, dtype=np.int64)
    )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ShuffleStats):
            return NotImplemented
        return (self.decks, self.rising, self.guessed) == (
            other.decks,
            other.rising,
            other.guessed,
        ) and bool(np.array_equal(self.table, other.table))

    __hash__ = None  # type: ignore[assignment]  # mutable sums

    @classmethod
    def of(
        cls,
        decks: Permutations,
        rising: npt.NDArray[np.int64] | None = None,
        scores: npt.NDArray[np.int64] | None = None,
    ) -> ShuffleStats:
        found = cls()
        found.add(decks, rising, scores)
        return found

    def add(
        self,
        decks: Permutations,
        rising: npt.NDArray[np.int64] | None = None,
        scores: npt.NDArray[np.int64] | None = None,
    ) -> None:
        if len(decks) == 0:
            return
        rising = rising_sequences(decks) if rising is None else rising
        scores = guess_scores(decks) if scores is None else scores
        histogram = np.bincount(rising - 1, minlength=CARDS)
        self.rising = (np.asarray(self.rising, dtype=np.int64) + histogram).tolist()
        self.guessed += int(scores.sum())
        self.table = self.table + position_table(decks).ravel()
        self.decks += len(decks)

    def copy(self) -> ShuffleStats:
        return ShuffleStats(self.decks, list(self.rising), self.guessed, self.table.copy())

    def mean_rising(self) -> float:
        return sum((r + 1) * c for r, c in enumerate(self.rising)) / self.decks

    def json(self) -> dict[str, Any]:
        """As the floor keeps it: the 2,704 counts of the card x position table as one
        base64 string of little-endian int32 (a list of numbers costs ten times as much to
        write and read at every pass; int64 twice as much as int32, and a cell reaches 2^31
        only after ~10^11 decks). Beyond int32, int64 is written."""
        table = np.asarray(self.table, dtype=np.int64)
        wide = table.size and int(table.max()) > np.iinfo(np.int32).max
        counts = table.astype("<i8" if wide else "<i4").tobytes()
        return {**self.__dict__, "table": base64.b64encode(counts).decode()}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> ShuffleStats:
        table = value["table"]
        if isinstance(table, str):  # int32, or int64 (twice the bytes: older sums, or wide)
            raw = base64.b64decode(table)
            table = np.frombuffer(raw, dtype="<i4" if len(raw) == CARDS * CARDS * 4 else "<i8")
        return cls(**{**value, "table": np.array(table, dtype=np.int64)})


def tests(
    decks: Permutations | ShuffleStats,
    rising: npt.NDArray[np.int64] | None = None,
    scores: npt.NDArray[np.int64] | None = None,
) -> list[Test]:
    """The family's tests over `decks` (or their sums); `rising` and `scores` (each deck's
    rising sequences and guessing score) when already computed for a larger batch."""
    sums = decks if isinstance(decks, ShuffleStats) else ShuffleStats.of(decks, rising, scores)
    n = sums.decks
    mean_rising = sums.mean_rising()
    z = (mean_rising - RISING_MEAN) / math.sqrt(RISING_VARIANCE / n)
    riffles = equivalent_riffles(mean_rising)
    like = "more than a random deck" if riffles is None else f"like {riffles:.1f} riffles"
    found = [
        Test(
            "rising_sequences",
            z,
            float(2 * special.ndtr(-abs(z))),
            f"{mean_rising:.2f} rising sequences a deck against 26.50 ({like})",
            {"mean": mean_rising, "equivalent_riffles": riffles},
        )
    ]
    mean_score = sums.guessed / n
    z = (mean_score - GUESS_MEAN) / math.sqrt(GUESS_VARIANCE / n)
    found.append(
        Test(
            "guessing",
            z,
            float(special.ndtr(-z)),
            f"a guesser who knows the order in names {mean_score:.2f} cards a deck "
            f"against {GUESS_MEAN:.2f}",
            {"mean": mean_score},
        )
    )
    if n >= CHI_SQUARE_DECKS:
        statistic, p, df = table_chi_square(np.asarray(sums.table, dtype=np.int64), n)
        found.append(
            Test(
                "card_position",
                statistic,
                p,
                f"card x position chi-square {statistic:.0f} on {df} df",
                {"df": df},
            )
        )
    return found


def flagged(found: list[Test]) -> bool:
    """The family's verdict: Holm's step-down at `FAMILY_ALPHA`."""
    return any(holm([t.p_value for t in found]))


def audit(serial: str, decks: Permutations | ShuffleStats) -> Finding:
    """One shuffler's verdict over its decks, or their sums (`ShuffleStats`: the same)."""
    sums = decks if isinstance(decks, ShuffleStats) else ShuffleStats.of(decks)
    n = sums.decks
    if n < 2:
        return Finding(
            "shuffle", serial, False, 0.0, 1.0, f"{n} deck(s): too few to test", "", n, []
        )
    found = tests(sums)
    p_values = [t.p_value for t in found]
    rejected = holm(p_values)
    family_p = adjusted_min_p(p_values)
    flagged = any(rejected)
    rising = found[0]
    riffles = rising.extra["equivalent_riffles"]
    if flagged:
        failed = [
            f"{t.name} (p = {t.p_value:.2g}): {t.detail}"
            for t, r in zip(found, rejected, strict=True)
            if r
        ]
        verdict = "FLAGGED: the order out remembers the order in: " + "; ".join(failed)
    else:
        verdict = (
            f"consistent with a random shuffle over {n:,} decks (family p = {family_p:.3g}); "
            + (
                "rising sequences as many as a random deck's"
                if riffles is None or riffles >= 8
                else f"rising sequences like {riffles:.1f} riffles"
            )
        )
        if n < CHI_SQUARE_DECKS:
            verdict += f"; card x position waits for {CHI_SQUARE_DECKS} decks"
    by = power(n)
    power_words = (
        f"over these {n:,} decks the tests catch a one-pass 10-shelf shuffler with probability "
        f"{by['one-pass 10-shelf']:.1%} and a 5-riffle shuffler with {by['5 riffles']:.1%}; "
        f"a random shuffler is flagged in {FAMILY_ALPHA:.1%} of audits"
    )
    return Finding(
        "shuffle",
        serial,
        flagged,
        rising.statistic,
        family_p,
        verdict,
        power_words,
        n,
        found,
        {"equivalent_riffles": riffles, "power_by_alternative": by},
    )
