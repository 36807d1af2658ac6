"""Ranking of a Thirteen row: a 3-card head and 5-card middle and tail on one scale.

The order is Art. 6 and Art. 9 II of the Macau rules of 10 March 1989 (000_*.txt), sentence
by sentence:

- Art. 6: ranks A K Q J 10 9 8 7 6 5 4 3 2; suits never rank anything.
- 黄袍麒 (royal_flush, Art. 9 II.1): "同花色的最大五张牌" — A K Q J 10 of one suit, a category of
  its own above every straight flush.
- 同花顺 (straight_flush, II.2): A-2-3-4-5 of one suit is the *largest* straight flush, then
  K-Q-J-10-9, then Q-J-10-9-8, and so on down to 6-5-4-3-2.
- 四条 (four_of_a_kind, II.3): the four ranks compare; "单牌则不计" — the fifth card is ignored.
- 夫卢 (full_house, II.4): the three of a kind compares; "对牌不计" — the pair is ignored.
- 同花 (flush, II.5): highest card, then the next, and so on.
- 顺 (straight, II.6): A-K-Q-J-10 is the largest; A-2-3-4-5 is the *second* largest; then
  K-Q-J-10-9 down to 6-5-4-3-2.
- 三条 (three_of_a_kind, II.7): the three ranks compare; "其余两张牌不计" — the other two are
  ignored. A head of three equal ranks is a 三条.
- 两对 (two_pair, II.8): the higher pair, the lower pair, then the odd card.
- 一对 (one_pair, II.9): the pair, then the other cards from the highest (in the head, the one
  other card).
- 大牌 (high_card, II.10): highest card, then the next, and so on.

The head has only three of a kind, one pair and high card (II.7, II.9; 003: "頭因為只有三張牌，
因此不算順、花"): three suited or consecutive cards in the head are a high card. A head and a
five-card row share one scale so the foul rule of Art. 7 can compare them: a row's value is its
category, then its compared ranks from the first, a missing card counting below a 2. So a head
K-K-A is below a middle K-K-A-4-3; a head equals a five-card row only for three of a kind of
the same rank, which one deck cannot deal twice.

The 003 text (Hong Kong) ranks the same way where it is explicit ("先比牌型...比點數時由最大點數的
牌比起"): compared from the largest card with A highest, A-2-3-4-5 falls between A-K-Q-J-10 and
K-Q-J-10-9, as in Macau; so one scale serves every rule set.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations_with_replacement
from threading import Lock

from daemon.rules.cards import (
    RANK_FIELD_MASK,
    RANK_WEIGHTS,
    SUIT_BITS,
    Card,
    CardError,
    parse_cards,
)

CATEGORIES: tuple[str, ...] = (
    "high_card",
    "one_pair",
    "two_pair",
    "three_of_a_kind",
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
    "royal_flush",
)
CATEGORY_NAMES_ZH: dict[str, str] = {
    "royal_flush": "黄袍麒",
    "straight_flush": "同花顺",
    "four_of_a_kind": "四条",
    "full_house": "夫卢",
    "flush": "同花",
    "straight": "顺",
    "three_of_a_kind": "三条",
    "two_pair": "两对",
    "one_pair": "一对",
    "high_card": "大牌",
}
# Each category as the console shows it: the text's name in traditional characters (zh-Hant),
# and in English.
CATEGORY_NAMES_HANT_EN: dict[str, tuple[str, str]] = {
    "royal_flush": ("黃袍麒", "royal flush"),
    "straight_flush": ("同花順", "straight flush"),
    "four_of_a_kind": ("四條", "four of a kind"),
    "full_house": ("夫盧", "full house"),
    "flush": ("同花", "flush"),
    "straight": ("順", "straight"),
    "three_of_a_kind": ("三條", "three of a kind"),
    "two_pair": ("兩對", "two pair"),
    "one_pair": ("一對", "one pair"),
    "high_card": ("大牌", "high card"),
}
HEAD_CATEGORIES = frozenset({"three_of_a_kind", "one_pair", "high_card"})

# Straight heights: A-K-Q-J-10 above A-2-3-4-5 above K-Q-J-10-9 (Art. 9 II.6).
_STRAIGHT_BROADWAY = 15
_STRAIGHT_WHEEL = 14
# Straight flushes: A-2-3-4-5 is the largest (Art. 9 II.2); A-K-Q-J-10 is 黄袍麒, a category above.
_STRAIGHT_FLUSH_WHEEL = 14
_WHEEL = frozenset({14, 2, 3, 4, 5})
_BROADWAY = frozenset({14, 13, 12, 11, 10})


@dataclass(frozen=True, slots=True, order=True)
class HandRank:
    """The rank of a row. Ordered: greater is stronger; equal means Art. 10's "相同".

    ``value`` is the whole order (category, then ``ranks`` with missing cards as 0);
    ``ranks`` are the ranks that compare, in order (e.g. ``(13,)`` for any three kings);
    ``top`` is the rank of the highest card that compares (the pair's rank for one pair, the
    ace for A-2-3-4-5), used by 003's top-card-only comparison.
    """

    value: int
    category: str = field(default="", compare=False)
    ranks: tuple[int, ...] = field(default=(), compare=False)
    size: int = field(default=5, compare=False)
    top: int = field(default=0, compare=False)
    paired: bool = field(default=False, compare=False, repr=False)  # a rank appears twice

    @property
    def category_zh(self) -> str:
        """The category as Art. 9 II names it."""
        return CATEGORY_NAMES_ZH[self.category]

    def __str__(self) -> str:
        if self.category in {"straight", "straight_flush"}:
            high = "23456789TJQKA"[self.top - 2]
            names = {15: "A-K-Q-J-10", 14: "A-2-3-4-5"}.get(self.ranks[0], f"{high}-high")
        else:
            names = " ".join("23456789TJQKA"[r - 2] for r in self.ranks)
        return f"{self.category}({names})"


def _encode(category: str, ranks: Sequence[int]) -> int:
    value = CATEGORIES.index(category)
    padded = (*ranks, 0, 0, 0, 0, 0)[:5]
    for rank_ in padded:
        value = value * 16 + rank_
    return value


def _make(category: str, ranks: tuple[int, ...], size: int, top: int) -> HandRank:
    paired = category in _PAIRED
    return HandRank(_encode(category, ranks), category, ranks, size, top, paired)


_PAIRED = frozenset({"one_pair", "two_pair", "three_of_a_kind", "full_house", "four_of_a_kind"})


def _classify(ranks: Sequence[int], flush: bool) -> HandRank:
    """The rank of a multiset of 3 or 5 ranks (2..14), suited or not."""
    size = len(ranks)
    counts: dict[int, int] = {}
    for rank_ in ranks:
        counts[rank_] = counts.get(rank_, 0) + 1
    # Groups by count then rank, largest first: (3, 8), (2, 5) for 8-8-8-5-5.
    groups = sorted(zip(counts.values(), counts, strict=True), reverse=True)
    shape = tuple(n for n, _ in groups)
    by_group = tuple(r for _, r in groups)
    if size == 3:
        if shape == (3,):
            return _make("three_of_a_kind", (by_group[0],), 3, by_group[0])
        if shape == (2, 1):
            return _make("one_pair", by_group, 3, by_group[0])
        return _make("high_card", by_group, 3, by_group[0])
    distinct = frozenset(ranks)
    straight_height = 0
    if len(distinct) == 5:
        if distinct == _BROADWAY:
            straight_height = _STRAIGHT_BROADWAY
        elif distinct == _WHEEL:
            straight_height = _STRAIGHT_WHEEL
        elif max(distinct) - min(distinct) == 4:
            straight_height = max(distinct)
    if flush and straight_height:
        if straight_height == _STRAIGHT_BROADWAY:
            return _make("royal_flush", (), 5, 14)
        height = _STRAIGHT_FLUSH_WHEEL if straight_height == _STRAIGHT_WHEEL else straight_height
        return _make("straight_flush", (height,), 5, max(distinct))
    if shape == (4, 1):
        return _make("four_of_a_kind", (by_group[0],), 5, by_group[0])
    if shape == (3, 2):
        return _make("full_house", (by_group[0],), 5, by_group[0])
    if flush:
        return _make("flush", by_group, 5, by_group[0])
    if straight_height:
        return _make("straight", (straight_height,), 5, max(distinct))
    if shape == (3, 1, 1):
        return _make("three_of_a_kind", (by_group[0],), 5, by_group[0])
    if shape == (2, 2, 1):
        return _make("two_pair", by_group, 5, by_group[0])
    if shape == (2, 1, 1, 1):
        return _make("one_pair", by_group, 5, by_group[0])
    return _make("high_card", by_group, 5, by_group[0])


# A row's table key: the rank part of the sum of its cards (a card's int value is its ranking
# key, see cards.py), with FLUSH_TAG (bit 0, free: rank parts are even) for a flush.
FLUSH_TAG = 1


def rank_key(ranks: Iterable[int]) -> int:
    """The rank part of a row's key from its ranks (2..14): the sum of their weights."""
    return sum(RANK_WEIGHTS[rank_ - 2] for rank_ in ranks)


def row_key(key_sum: int) -> int:
    """The table key of a five-card row of distinct cards from the sum of its cards."""
    return (key_sum & RANK_FIELD_MASK) | (0 if key_sum & SUIT_BITS else FLUSH_TAG)


def _build_tables() -> tuple[dict[int, HandRank], dict[int, HandRank]]:
    rows5: dict[int, HandRank] = {}
    rows3: dict[int, HandRank] = {}
    interned: dict[int, HandRank] = {}

    def put(table: dict[int, HandRank], key: int, rank_: HandRank) -> None:
        # Distinct multisets must not share a key (the weights' property, proved here).
        if key in table:
            raise AssertionError(f"rank key {key} is not unique")  # pragma: no cover
        table[key] = interned.setdefault(rank_.value, rank_)

    for combo in combinations_with_replacement(range(2, 15), 5):
        if combo[0] != combo[4]:  # not five of one rank (the combination is sorted)
            put(rows5, rank_key(combo), _classify(combo, flush=False))
        if len(set(combo)) == 5:
            put(rows5, rank_key(combo) | FLUSH_TAG, _classify(combo, flush=True))
    for triple in combinations_with_replacement(range(2, 15), 3):
        put(rows3, rank_key(triple), _classify(triple, flush=False))
    return rows5, rows3


def _build_slots(rows5: dict[int, HandRank]) -> tuple[list[HandRank | None], dict[int, HandRank]]:
    """The fast path's tables, by the rank part of a five-card sum.

    ``slots[part]`` is the rank of five different ranks that are not a flush and
    ``slots[part + 1]`` the rank of five with a repeated rank, one of the two only; so the one
    index that finds a row also says whether it needs the check for a card given twice, and
    the two share a cache line. ``flushes[part]``: the flush of five different ranks.
    """
    slots: list[HandRank | None] = [None] * (max(rows5) + 2)
    flushes: dict[int, HandRank] = {}
    for key, found in rows5.items():
        if key & FLUSH_TAG:
            flushes[key ^ FLUSH_TAG] = found
        else:
            slots[key + found.paired] = found
    # Five cards of one rank (a card given twice, at least) must not look like five different
    # ranks, which skip the check; they may look like a repeated rank, which has it.
    fives = [5 * weight for weight in RANK_WEIGHTS]
    if any(part < len(slots) and slots[part] is not None for part in fives):
        raise AssertionError("five of a rank look like five ranks")  # pragma: no cover
    return slots, flushes


# The tables, by row key: every five-card row (ROWS5) and head (ROWS3). They are built on first
# use, not at import (a daemon that never ranks a row, a Pai Gow table, starts without them),
# and filled in place, so `rank`'s fast path reads module globals that never change identity:
# before the build, `_SLOTS` is empty and every row takes the checked path, which builds them.
ROWS5: dict[int, HandRank] = {}
ROWS3: dict[int, HandRank] = {}
_SLOTS: list[HandRank | None] = []
_FLUSHES: dict[int, HandRank] = {}
_BUILDING = Lock()


def tables() -> tuple[dict[int, HandRank], dict[int, HandRank]]:
    """ROWS5 and ROWS3, built the first time they are asked for (once, whichever thread asks)."""
    if not _SLOTS:
        with _BUILDING:
            if not _SLOTS:
                rows5, rows3 = _build_tables()
                slots, flushes = _build_slots(rows5)
                ROWS5.update(rows5)
                ROWS3.update(rows3)
                _FLUSHES.update(flushes)
                _SLOTS.extend(slots)  # last: a filled `_SLOTS` says every table is there
    return ROWS5, ROWS3


def rank(cards: Sequence[Card] | str) -> HandRank:
    """The rank of a 3-card head or a 5-card row (cards, or text such as ``"As Kd Qh"``)."""
    try:
        a, b, c, d, e = cards  # type: ignore[str-unpack]
        key_sum: int = a + b + c + d + e  # type: ignore[operator,assignment]
        part = key_sum & RANK_FIELD_MASK
        found = _SLOTS[part]
        if found is not None:  # five different ranks
            if key_sum & SUIT_BITS:
                return found
            return _FLUSHES[part]
        # A repeated rank (or nothing). A card given twice repeats a rank, so only these rows
        # need the check; identity is equality for cards (52 singletons) and far cheaper.
        found = _SLOTS[part + 1]
        if found is not None and not (
            a is b
            or a is c
            or a is d
            or a is e
            or b is c
            or b is d
            or b is e
            or c is d
            or c is e
            or d is e
        ):
            return found
    except (ValueError, KeyError, TypeError, IndexError):
        pass
    return _rank_checked(cards)


def _rank_checked(cards: object) -> HandRank:
    if isinstance(cards, str):
        cards = parse_cards(cards)
    if not isinstance(cards, Iterable):
        raise CardError(f"not a row of cards: {cards!r}")
    row = tuple(cards)
    for card in row:
        if not isinstance(card, Card):
            raise CardError(f"not a card: {card!r}")
    seen: set[Card] = set()
    for card in row:
        if card in seen:
            raise CardError(f"{card} appears twice in one row")
        seen.add(card)
    key_sum = sum(row)
    rows5, rows3 = tables()
    if len(row) == 3:
        return rows3[key_sum & RANK_FIELD_MASK]
    if len(row) == 5:
        return rows5[row_key(key_sum)]
    raise CardError(f"a row has 3 or 5 cards, not {len(row)}")


def every_rank() -> list[HandRank]:
    """Every distinct rank, 3- and 5-card, weakest first (for tables and tests)."""
    values = {r.value: r for table in tables() for r in table.values()}
    return [values[v] for v in sorted(values)]
