"""House way of Thirteen: the banker's arrangement of 13 cards, found exactly and fast.

Objective (a decision of this project: the texts do not say how the banker sets a hand):
among the splits that are not a foul (Art. 7), maximise the sum over the three rows of the
probability that the row beats the same row of a uniformly random holding: a random 3-card
hand for the head, a random 5-card hand for the middle and tail, ties counting half. Equal
sums go to the larger tail, then the larger middle, then the larger head. This rewards strong
rows in every position rather than one strong tail, which is what a row-by-row comparison
against a player's hand pays for.

Special hands come first: when the rule set pays a special hand that depends on how the cards
are set (三花 / 三同花, 三顺 / 三顺子, 三同花顺) and the 13 cards can be set so, the banker sets
them so (the arrangement paying the most units, then by the objective), unless the cards hold
a special hand worth at least as much whatever the setting (一条龙, 六对半, ...).

The search is exact. Every 5-card subset (1,287) and 3-card subset (286) is ranked once with
a table lookup; tails are taken strongest first, and a tail is abandoned once twice its score
plus the best head it allows cannot beat the best split found; for a tail that survives, all
56 (middle, head) pairs are summed at C speed and only the few that could win are checked for
the foul rule. ``brute_force`` is the reference it must agree with.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from itertools import combinations, combinations_with_replacement, product, repeat
from math import comb, gcd
from operator import add, itemgetter, xor
from threading import Lock
from typing import Any

from daemon.rules.cards import RANK_FIELD_MASK, Card, CardError, parse_cards
from daemon.rules.thirteen.ranking import FLUSH_TAG, HandRank, rank_key, tables

Arrangement = tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]
# (special units, objective score, tail value, middle value, head value): larger is better.
SplitKey = tuple[int, int, int, int, int]

_GONE = -(1 << 29)  # below any score and need: marks a (middle, head) pair already looked at
_HANDS5 = comb(52, 5)
_HANDS3 = comb(52, 3)
# Scores share the denominator 2 * _HANDS5 * _HANDS3, divided by gcd(_HANDS5, _HANDS3) = 4,420
# (exact): a split's score then stays below 2**30, one-digit ints that add, compare and sort
# on CPython's fast paths.
_COMMON = gcd(_HANDS5, _HANDS3)


def _ways(ranks: Sequence[int]) -> int:
    """How many hands of one deck hold exactly these ranks, in any suits."""
    ways = 1
    for rank_ in set(ranks):
        ways *= _SUITINGS[ranks.count(rank_)]
    return ways


_SUITINGS = [comb(4, n) for n in range(6)]  # ways to hold n cards of one rank: C(4, n)


def _build_scores(
    rows5: dict[int, HandRank], rows3: dict[int, HandRank]
) -> tuple[dict[int, int], dict[int, int], dict[int, int]]:
    """Score of every rank value: 2 * (hands it beats) + (hands it ties), on one denominator."""
    count5: Counter[int] = Counter()
    for five in combinations_with_replacement(range(2, 15), 5):
        ways = _ways(five)
        if not ways:
            continue
        key = rank_key(five)
        if len(set(five)) == 5:  # four of the 4**5 suit mixes are flushes
            count5[rows5[key | FLUSH_TAG].value] += 4
            ways -= 4
        count5[rows5[key].value] += ways
    count3: Counter[int] = Counter()
    for three in combinations_with_replacement(range(2, 15), 3):
        count3[rows3[rank_key(three)].value] += _ways(three)
    assert sum(count5.values()) == _HANDS5 and sum(count3.values()) == _HANDS3  # noqa: S101 -- build-time proof of the tables

    def scores(counts: Counter[int], scale: int) -> dict[int, int]:
        below = 0
        result = {}
        for value in sorted(counts):
            result[value] = (2 * below + counts[value]) * scale
            below += counts[value]
        return result

    score5 = scores(count5, _HANDS3 // _COMMON)
    score3 = scores(count3, _HANDS5 // _COMMON)
    # The best head score that a 5-card row of a given value still allows (head <= middle).
    cap: dict[int, int] = {}
    heads = sorted(score3)
    position, best = 0, 0
    for value in sorted(score5):
        while position < len(heads) and heads[position] <= value:
            best = score3[heads[position]]
            position += 1
        cap[value] = best
    return score5, score3, cap


# One denominator for both: a row's score / SCORE_SCALE is its probability of beating a random row.
SCORE_SCALE = 2 * _HANDS5 * _HANDS3 // _COMMON
assert 3 * SCORE_SCALE < 1 << 29  # noqa: S101 -- one-digit sums, and _GONE below any need


def objective(head: HandRank, middle: HandRank, tail: HandRank) -> int:
    """The house way's score of a split (see the module docstring)."""
    _ready()
    return SCORE3[head.value] + SCORE5[middle.value] + SCORE5[tail.value]


# Static structure of 13 positions: subsets in itertools order, and for each 5-subset taken as
# the tail, the 56 (middle, head) pairs of the other eight positions.
_POS5 = list(combinations(range(13), 5))
_POS3 = list(combinations(range(13), 3))
_FULL = (1 << 13) - 1

# The house way's tables, built on first use (`_ready`) rather than at import: a daemon starts
# (and a Pai Gow table plays) without them. Public names among them (SCORE5, SCORE3, HEAD_CAP)
# build them when read from outside (the module's `__getattr__`).
SCORE5: dict[int, int]
SCORE3: dict[int, int]
HEAD_CAP: dict[int, int]
_INDEX5: dict[int, int]
_INDEX3: dict[int, int]
_MASK5: list[int]
_MIDDLES: list[tuple[int, ...]]
_HEADS: list[tuple[int, ...]]
_MIDDLE_SCORES: list[Callable[[Sequence[int]], tuple[int, ...]]]
_HEAD_SCORES: list[Callable[[Sequence[int]], tuple[int, ...]]]
_VALUE5: dict[int, int]
_VALUE3: dict[int, int]
_KEY_SCORE5: dict[int, int]
_KEY_SCORE3: dict[int, int]
_KEY_TAIL_BOUND: dict[int, int]
_FIVE_FROM: tuple[Callable[[Sequence[int]], tuple[int, ...]], ...]
_THREE_FROM: tuple[Callable[[Sequence[int]], tuple[int, ...]], ...]
_PAIR_FROM: tuple[Callable[[Sequence[int]], tuple[int, ...]], ...]
_LAZY = frozenset({"SCORE5", "SCORE3", "HEAD_CAP"})
_BUILT = False
_BUILDING = Lock()


def _ready() -> None:
    """Build the tables once, whichever thread asks first."""
    if not _BUILT:
        with _BUILDING:
            if not _BUILT:
                _build()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        _ready()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _pairs(
    index5: dict[int, int], index3: dict[int, int]
) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]]]:
    middles: list[tuple[int, ...]] = []
    heads: list[tuple[int, ...]] = []
    for tail in _POS5:
        rest = sum(1 << p for p in range(13) if p not in tail)
        # The middles' masks in the order of combinations(rest, 5), at C speed (the bits are
        # distinct: their sum is their union); each head is what the middle leaves of the rest.
        masks = list(map(sum, combinations([1 << p for p in range(13) if rest >> p & 1], 5)))
        middles.append(tuple(map(index5.__getitem__, masks)))
        heads.append(tuple(map(index3.__getitem__, map(xor, repeat(rest), masks))))
    return middles, heads


def _hand13(cards13: Sequence[Card] | str) -> tuple[Card, ...]:
    cards = parse_cards(cards13) if isinstance(cards13, str) else tuple(cards13)
    if len(cards) != 13:
        raise CardError(f"a Thirteen hand has 13 cards, not {len(cards)}")
    for card in cards:
        if not isinstance(card, Card):
            raise CardError(f"not a card: {card!r}")
    if len(set(cards)) != 13:
        duplicate = next(c for c in cards if cards.count(c) > 1)
        raise CardError(f"{duplicate} appears twice in one hand")
    # Strongest first, so rows print as players read them.
    return tuple(sorted(cards, key=lambda c: c.index, reverse=True))


def _build() -> None:
    global SCORE5, SCORE3, HEAD_CAP, _INDEX5, _INDEX3, _MASK5, _MIDDLES, _HEADS  # noqa: PLW0603
    global _MIDDLE_SCORES, _HEAD_SCORES, _VALUE5, _VALUE3, _KEY_SCORE5, _KEY_SCORE3  # noqa: PLW0603
    global _KEY_TAIL_BOUND, _FIVE_FROM, _THREE_FROM, _PAIR_FROM, _BUILT  # noqa: PLW0603
    rows5, rows3 = tables()
    SCORE5, SCORE3, HEAD_CAP = _build_scores(rows5, rows3)
    _INDEX5 = {sum(1 << p for p in c): i for i, c in enumerate(_POS5)}
    _INDEX3 = {sum(1 << p for p in c): i for i, c in enumerate(_POS3)}
    _MASK5 = [sum(1 << p for p in c) for c in _POS5]
    _MIDDLES, _HEADS = _pairs(_INDEX5, _INDEX3)
    # Gathering the 56 scores of a tail's middles (heads) with one C call each.
    _MIDDLE_SCORES = [itemgetter(*middles) for middles in _MIDDLES]
    _HEAD_SCORES = [itemgetter(*heads) for heads in _HEADS]

    # Per table key: the rank value and the score, so evaluating a hand is two C-level maps.
    _VALUE5 = {key: hand.value for key, hand in rows5.items()}
    _VALUE3 = {key: hand.value for key, hand in rows3.items()}
    _KEY_SCORE5 = {key: SCORE5[hand.value] for key, hand in rows5.items()}
    _KEY_SCORE3 = {key: SCORE3[hand.value] for key, hand in rows3.items()}
    # Per five-card key: twice its score plus the best head it allows, the bound of a tail.
    _KEY_TAIL_BOUND = {
        key: 2 * SCORE5[hand.value] + HEAD_CAP[hand.value] for key, hand in rows5.items()
    }

    # Each 5-subset as (its first two positions, its last three) and each 3-subset as (first,
    # last two), so a hand's subset sums are two C-level gathers and an add, not a Python loop.
    pos2 = list(combinations(range(13), 2))
    index2 = {c: i for i, c in enumerate(pos2)}
    index3_of = {c: i for i, c in enumerate(_POS3)}
    _FIVE_FROM = (
        itemgetter(*(index2[c[:2]] for c in _POS5)),
        itemgetter(*(index3_of[c[2:]] for c in _POS5)),
    )
    _THREE_FROM = (itemgetter(*(c[0] for c in _POS3)), itemgetter(*(index2[c[1:]] for c in _POS3)))
    _PAIR_FROM = (itemgetter(*(c[0] for c in pos2)), itemgetter(*(c[1] for c in pos2)))
    _BUILT = True  # last: the other threads read the tables once this is set


class _Evaluated:
    """Every row candidate of one hand, ranked: values and scores by subset index."""

    def __init__(self, cards: tuple[Card, ...]) -> None:
        suits = Counter(card.suit for card in cards)
        # For each suit that could make a flush: its positions and its number of cards.
        self.flush_suits = [
            (sum(1 << p for p, card in enumerate(cards) if card.suit == suit), count)
            for suit, count in suits.items()
            if count >= 5
        ]
        # A card's int value is its ranking key; its rank part keys every row but a flush.
        keys = [c & RANK_FIELD_MASK for c in cards]
        sums2 = list(map(add, _PAIR_FROM[0](keys), _PAIR_FROM[1](keys)))
        keys3 = list(map(add, _THREE_FROM[0](keys), _THREE_FROM[1](sums2)))
        keys5 = list(map(add, _FIVE_FROM[0](sums2), _FIVE_FROM[1](keys3)))
        for positions, _ in self.flush_suits:
            # The few five-card flushes: their rank keys tagged.
            members = [p for p in range(13) if positions >> p & 1]
            for combo in combinations(members, 5):
                keys5[_INDEX5[sum(1 << p for p in combo)]] |= FLUSH_TAG
        self.cards = cards
        self.keys5 = keys5
        self.keys3 = keys3
        self.score5 = list(map(_KEY_SCORE5.__getitem__, keys5))
        self.score3 = list(map(_KEY_SCORE3.__getitem__, keys3))

    def arrangement(self, tail: int, middle: int, head: int) -> Arrangement:
        c = self.cards
        return (
            tuple(c[p] for p in _POS3[head]),
            tuple(c[p] for p in _POS5[middle]),
            tuple(c[p] for p in _POS5[tail]),
        )


_NO_FLUSH_LEFT = 1 << 128  # _sameness's tag for the first flush suit that the rest cannot flush


def _sameness(key: int, mask: int, flush_suits: list[tuple[int, int]]) -> int:
    """Equal for tails whose complements split into rows of the same values.

    Same ranks in the tail (``key``) leave the same ranks in the rest; a suit matters only
    while the rest still holds five of it (a possible flush), and then which of its cards the
    tail took matters too.
    """
    for bit, (positions, count) in enumerate(flush_suits):
        taken = mask & positions
        if count - taken.bit_count() >= 5:
            key |= taken << 64
        else:
            key |= 1 << (128 + bit)
    return key


def _search(ev: _Evaluated, strict: bool) -> tuple[SplitKey, tuple[int, int, int]]:
    score5, score3, keys5, keys3 = ev.score5, ev.score3, ev.keys5, ev.keys3
    value5, value3 = _VALUE5, _VALUE3  # by key: only the few rows compared need a value
    best_head = max(score3)
    best: SplitKey = (0, -1, 0, 0, 0)
    choice = (0, 0, 0)
    seen: set[int] = set()

    def visit(tail: int) -> None:
        nonlocal best, choice
        t_score = score5[tail]
        sums = list(map(add, _MIDDLE_SCORES[tail](score5), _HEAD_SCORES[tail](score3)))
        need = best[1] - t_score
        top = max(sums)
        if top < need:
            return  # most tails end here
        t_value = value5[keys5[tail]]
        middles, heads = _MIDDLES[tail], _HEADS[tail]
        while top >= need:
            k = sums.index(top)
            sums[k] = _GONE
            m_value, h_value = value5[keys5[middles[k]]], value3[keys3[heads[k]]]
            if (h_value < m_value < t_value) if strict else (h_value <= m_value <= t_value):
                key = (0, t_score + top, t_value, m_value, h_value)
                if key > best:
                    best, choice = key, (tail, middles[k], heads[k])
                # A valid pair with this sum: only equal sums (a better tie-break) remain.
                need = top
            top = max(sums)

    # Tails strongest first (one C-level sort of all 1,287 is cheaper than filtering them
    # first): the strongest gives a good split to prune with, and the bound below only falls.
    candidates = sorted(range(len(score5)), key=score5.__getitem__, reverse=True)
    tail_bound, masks, flush_suits = _KEY_TAIL_BOUND, _MASK5, ev.flush_suits
    # One suit that can flush (most hands that have any): _sameness inlined.
    one_suit, most_taken = flush_suits[0] if len(flush_suits) == 1 else (0, 0)
    most_taken -= 5  # a tail taking at most this many of it leaves a possible flush
    for tail in candidates:
        # Middle <= tail and head <= middle bound everything a tail can still reach; tails
        # come in falling score, so the bound only falls.
        key = keys5[tail]
        if tail_bound[key] < best[1] or 2 * score5[tail] + best_head < best[1]:
            break
        if one_suit:
            taken = masks[tail] & one_suit
            same = key | (taken << 64 if taken.bit_count() <= most_taken else _NO_FLUSH_LEFT)
        else:
            same = _sameness(key, masks[tail], flush_suits) if flush_suits else key
        if same not in seen:
            seen.add(same)
            visit(tail)
    if best[1] < 0:
        # Only with strict: best 5, best 5 of the rest, then the rest never fouls otherwise.
        raise CardError("no split of these cards avoids a foul")
    return best, choice


# The rank windows of a five-card straight: A-2-3-4-5 up to 10-J-Q-K-A.
_WINDOWS = [(14, 2, 3, 4, 5), *(tuple(range(low, low + 5)) for low in range(2, 11))]


def _flush_and_run_subsets(cards: tuple[Card, ...]) -> tuple[list[int], list[int]]:
    """Indices of the 5-subsets that are flushes and of those that are straights (either
    includes straight flushes), built from the suits and ranks rather than all 1,287."""
    by_suit: dict[str, list[int]] = {}
    by_rank: dict[int, list[int]] = {}
    for position, card in enumerate(cards):
        by_suit.setdefault(card.suit, []).append(position)
        by_rank.setdefault(card.rank, []).append(position)
    flushes = [
        _INDEX5[sum(1 << p for p in combo)]
        for positions in by_suit.values()
        if len(positions) >= 5
        for combo in combinations(positions, 5)
    ]
    runs = [
        _INDEX5[sum(1 << p for p in combo)]
        for window in _WINDOWS
        if all(rank_ in by_rank for rank_ in window)
        for combo in product(*(by_rank[rank_] for rank_ in window))
    ]
    return flushes, runs


def _special_search(
    ev: _Evaluated,
    strict: bool,
    units_of: Callable[[Arrangement], int],
) -> tuple[SplitKey, tuple[int, int, int]] | None:
    """The best arrangement holding a setting-dependent special hand, if any."""
    flushes, runs = _flush_and_run_subsets(ev.cards)
    if len(flushes) + len(runs) < 2:
        return None
    value5 = {i: _VALUE5[ev.keys5[i]] for i in (*flushes, *runs)}
    value3 = _VALUE3
    best: tuple[SplitKey, tuple[int, int, int]] | None = None
    for group in (flushes, runs):
        for x, first in enumerate(group):
            for second in group[x + 1 :]:
                if _MASK5[first] & _MASK5[second]:
                    continue
                tail, middle = (
                    (first, second) if value5[first] >= value5[second] else (second, first)
                )
                head = _INDEX3[_FULL ^ _MASK5[first] ^ _MASK5[second]]
                t_value, m_value, h_value = value5[tail], value5[middle], value3[ev.keys3[head]]
                if (strict and not h_value < m_value < t_value) or h_value > m_value:
                    continue
                units = units_of(ev.arrangement(tail, middle, head))
                if not units:
                    continue
                score = ev.score5[tail] + ev.score5[middle] + ev.score3[head]
                key = (units, score, t_value, m_value, h_value)
                if best is None or key > best[0]:
                    best = (key, (tail, middle, head))
    return best


def house_way(
    cards13: Sequence[Card] | str,
    strict: bool = False,
    special_units: Callable[[Arrangement], int] | None = None,
    fixed_units: int | Callable[[], int] = 0,
) -> Arrangement:
    """The banker's (head, middle, tail) for ``cards13``.

    ``strict``: equal rows are a foul. ``special_units(arrangement)``: the units of the
    setting-dependent special hand an arrangement holds (0 for none); ``fixed_units``: the
    units of the special hand the cards hold whatever the setting (or a function giving them,
    called only when the cards can be set as a setting-dependent special hand).
    """
    _ready()
    ev = _Evaluated(_hand13(cards13))
    try:
        _, choice = _search(ev, strict)
    except CardError:
        # Equal rows in every split (a freak of "equal rows foul"): set it as the rules
        # without that setting would, rather than refuse the banker a hand.
        strict = False
        _, choice = _search(ev, strict)
    if special_units is not None:
        special = _special_search(ev, strict, special_units)
        if special is not None and special[0][0] > (
            fixed_units() if callable(fixed_units) else fixed_units
        ):
            choice = special[1]
    return ev.arrangement(*choice)


def brute_force(
    cards13: Sequence[Card] | str,
    strict: bool = False,
    special_units: Callable[[Arrangement], int] | None = None,
) -> tuple[SplitKey, Arrangement]:
    """Every one of the 72,072 splits, ranked with the public ``rank``: the reference."""
    from daemon.rules.thirteen.ranking import rank  # noqa: PLC0415 -- the public entry, on purpose

    cards = _hand13(cards13)
    best: tuple[SplitKey, Arrangement] | None = None
    ranked: dict[frozenset[Card], HandRank] = {}

    def rank_of(row: tuple[Card, ...]) -> HandRank:
        key = frozenset(row)
        if key not in ranked:
            ranked[key] = rank(row)
        return ranked[key]

    for tail in combinations(cards, 5):
        rest = [c for c in cards if c not in tail]
        t = rank_of(tail)
        for middle in combinations(rest, 5):
            head = tuple(c for c in rest if c not in middle)
            m, h = rank_of(middle), rank_of(head)
            if (strict and not h < m < t) or (not strict and (h > m or m > t)):
                continue
            units = 0
            if special_units is not None and {m.category, t.category} & {
                "flush",
                "straight",
                "straight_flush",
                "royal_flush",
            }:
                units = special_units((head, middle, tail))
            key = (units, objective(h, m, t), t.value, m.value, h.value)
            if best is None or key > best[0]:
                best = (key, (head, middle, tail))
    assert best is not None  # noqa: S101 -- some split never fouls: best tail, best middle, rest
    return best
