"""Playing cards of the 52-card deck used by Thirteen cards (十三张, Macau 1989, Art. 1(a)).

A card is written rank then suit: ``As``, ``Kd``, ``Th`` or ``10h``, ``9♠``. Ranks are
``2 3 4 5 6 7 8 9 T J Q K A`` (``10`` is accepted for ``T``), suits ``s h d c`` or the symbols
``♠ ♥ ♦ ♣`` (and their outline forms ``♤ ♡ ♢ ♧``), in either case. Cards may be separated by
spaces or commas, or written back to back (``AsKdTh``). A card prints in the short form, ``As``,
with ``T`` for ten, so printing and parsing round-trip.

Thirteen ignores suits when ranking (Art. 6 orders ranks only; 003 says "不計算花色"); suits
matter only for flushes. The suit order below is therefore only an order for indexes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import product

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"
_SUIT_ALIASES = {
    "s": "s",
    "h": "h",
    "d": "d",
    "c": "c",
    "♠": "s",
    "♤": "s",
    "♥": "h",
    "♡": "h",
    "♦": "d",
    "♢": "d",
    "♣": "c",
    "♧": "c",
}
_RANK_ALIASES = {ch: i + 2 for i, ch in enumerate(RANK_CHARS)} | {"10": 10}
_CARD_RE = re.compile(r"(10|[2-9TJQKA])([SHDC♠♤♥♡♦♢♣♧])", re.IGNORECASE)
_SEPARATORS = re.compile(r"[\s,]+")


class CardError(ValueError):
    """Text that is not a card, or a set of cards that breaks a rule of the deck."""


# A card's integer value is its ranking key: the sum of a row's cards names the row's ranks
# and tells a flush, with no lookup per card (daemon/rules/thirteen/ranking.py ranks a row with
# four additions, an AND and a list index). The sum of five cards stays below 2**30, one
# machine digit of a Python int, so the arithmetic takes CPython's fast paths:
# - bits 0..19, the rank part: the card's rank weight below. No two multisets of five ranks
#   (at most four of one rank) have the same sum of weights, nor two of three ranks, so the
#   rank part of a row's sum names its ranks; the largest five-card sum is 721,836 < 2**20.
#   The weights are even, so a sum's rank part is even and the slot after it is free.
# - bits 20..29, the suit part: the card's suit weight below, shifted by 20. Of the sums of
#   five suit weights, exactly those of five cards of one suit clear all of SUIT_BITS
#   (checked at import below): a row is a flush when ``sum & SUIT_BITS == 0``.
RANK_WEIGHTS = (0, 2, 10, 44, 188, 624, 1984, 4844, 11248, 25044, 39996, 86516, 158830)  # 2..A
SUIT_WEIGHTS = (104, 55, 111, 8)  # c d h s
SUIT_SHIFT = 20
RANK_FIELD_MASK = (1 << SUIT_SHIFT) - 1
SUIT_BITS = 0b11000100 << SUIT_SHIFT


def _flush_is_told() -> bool:
    """Whether ``sum & SUIT_BITS == 0`` for five cards of one suit and for no other five."""
    for counts in product(range(6), repeat=4):
        if sum(counts) == 5:
            part = sum(n * w for n, w in zip(counts, SUIT_WEIGHTS, strict=True)) << SUIT_SHIFT
            if (part & SUIT_BITS == 0) != (max(counts) == 5) or part >> 30:
                return False
    return True


if not _flush_is_told():
    raise AssertionError("the suit weights do not tell a flush")  # pragma: no cover


def _key(index: int) -> int:
    rank, suit = index // 4, index % 4
    return RANK_WEIGHTS[rank] + (SUIT_WEIGHTS[suit] << SUIT_SHIFT)


class Card(int):
    """One card, an immutable value; the 52 cards are singletons (``DECK``).

    ``card.index`` is ``(rank - 2) * 4 + suit``, 0..51, and ``Card(index)`` returns
    ``DECK[index]``. The card's ``int`` value is not its index but its ranking key (above):
    ranking is the hottest loop of the rules engine (settlement, simulators, labs' vectors,
    the house way) and adding five ints is the cheapest key there is. A card is an ``int``
    subclass rather than a dataclass for that reason; it hashes at C speed too. Cards compare
    as their ints, an order of no meaning (suits in the order s d c h, then rank); sort with
    ``key=lambda c: c.index`` for rank order.
    """

    __slots__ = ()

    def __new__(cls, index: int) -> Card:
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < 52:
            raise CardError(f"card index {index!r} is outside 0..51")
        return DECK[index]

    @property
    def index(self) -> int:
        """0..51: ``(rank - 2) * 4 + suit`` with suits in the order ``c d h s``."""
        return _INDEX[self]

    @property
    def rank(self) -> int:
        """2..14, with the ace 14 (Art. 6: A K Q J 10 9 8 7 6 5 4 3 2)."""
        return _INDEX[self] // 4 + 2

    @property
    def suit(self) -> str:
        """One of ``c d h s``."""
        return SUIT_CHARS[_INDEX[self] % 4]

    def __str__(self) -> str:
        return _NAMES[self]

    def __repr__(self) -> str:
        return f"Card({_NAMES[self]!r})"

    def __reduce__(self) -> tuple[type[Card], tuple[int]]:
        return (Card, (_INDEX[self],))


DECK: tuple[Card, ...] = tuple(int.__new__(Card, _key(i)) for i in range(52))
_INDEX: dict[int, int] = {card: i for i, card in enumerate(DECK)}
_NAMES: dict[int, str] = {
    card: RANK_CHARS[i // 4] + SUIT_CHARS[i % 4] for i, card in enumerate(DECK)
}


def card_of(rank: int, suit: str) -> Card:
    """The card of ``rank`` (2..14) and ``suit`` (``s h d c`` or a symbol)."""
    if not 2 <= rank <= 14:
        raise CardError(f"rank {rank} is outside 2..14")
    try:
        suit_index = SUIT_CHARS.index(_SUIT_ALIASES[suit.lower()])
    except KeyError:
        raise CardError(f"unknown suit {suit!r}") from None
    return DECK[(rank - 2) * 4 + suit_index]


def _spellings() -> dict[str, Card]:
    """Every way of writing one card on its own (``As``, ``aS``, ``10h``, ``T♥``): 304 names."""
    ranks = {ch: i + 2 for i, ch in enumerate(RANK_CHARS)}
    ranks |= {ch.lower(): rank for ch, rank in ranks.items()} | {"10": 10}
    suits = _SUIT_ALIASES | {alias.upper(): suit for alias, suit in _SUIT_ALIASES.items()}
    return {r + s: card_of(rank, suit) for r, rank in ranks.items() for s, suit in suits.items()}


# A card read off the wire or typed is one of these nearly always: looked up, not parsed.
_ONE_CARD = _spellings()
_ONE_NAME = {text: _NAMES[card] for text, card in _ONE_CARD.items()}


def parse_card(text: str) -> Card:
    """Exactly one card, e.g. ``"As"``, ``"10h"``, ``"9♠"``."""
    card = _ONE_CARD.get(text) if isinstance(text, str) else None
    if card is not None:
        return card
    cards = parse_cards(text)
    if len(cards) != 1:
        raise CardError(f"expected one card, got {len(cards)} in {text!r}")
    return cards[0]


def card_name(text: str) -> str | None:
    """The short name (``As``) of the one card ``text`` names, or None when ``text`` is not
    exactly one card: ``card_name("10♥") == "Th"``."""
    name = _ONE_NAME.get(text) if isinstance(text, str) else None
    if name is not None:
        return name
    try:
        return str(parse_card(text))
    except CardError:
        return None


def parse_cards(text: str | Iterable[str | Card]) -> tuple[Card, ...]:
    """Every card in ``text`` in order: ``parse_cards("As Kd Th 10c 9♠")``.

    ``text`` may also be an iterable of card strings (``["As", "Kd"]``) or of cards, as JSON
    gives them. Duplicates are kept: whether a duplicate is an error depends on the caller
    (a hand may not hold one; a list of shoe reads may).
    """
    if isinstance(text, str):
        tokens = [t for t in _SEPARATORS.split(text) if t]
    else:
        tokens = []
        for item in text:
            if isinstance(item, Card):
                tokens.append(str(item))
            elif isinstance(item, str):
                tokens.extend(t for t in _SEPARATORS.split(item) if t)
            else:
                raise CardError(f"not a card: {item!r}")
    cards: list[Card] = []
    for token in tokens:
        position = 0
        while position < len(token):
            match = _CARD_RE.match(token, position)
            if match is None:
                raise CardError(f"not a card: {token[position:]!r} in {token!r}")
            rank = _RANK_ALIASES[match.group(1).upper()]
            cards.append(card_of(rank, match.group(2)))
            position = match.end()
    return tuple(cards)


def format_cards(cards: Iterable[Card]) -> str:
    """Cards in the short form, space separated: ``"As Kd Th"``."""
    return " ".join(str(card) for card in cards)


def require_distinct(cards: Iterable[Card], what: str = "cards") -> None:
    """Raise ``CardError`` naming the first card that appears twice (one deck, Art. 1(a))."""
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            raise CardError(f"{what}: {card} appears twice")
        seen.add(card)
