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


# A card's integer value is its ranking key, so that the sum of a row's cards, masked once,
# is the key of the row's rank (daemon/rules/thirteen_rank.py) with no lookup per card:
# - bits 0..38: one 3-bit count field per rank, the card adding 1 to its rank's field;
# - bits 39..62: one 6-bit field per suit, the card adding 7 to its suit's field: four cards
#   of a suit make 28 and five make 35, so only a flush sets a field's top bit.
RANK_FIELD_MASK = (1 << 39) - 1
FLUSH_BITS = sum(1 << (39 + 6 * suit + 5) for suit in range(4))


def _key(index: int) -> int:
    rank, suit = index // 4 + 2, index % 4
    return (1 << (3 * (rank - 2))) + (7 << (39 + 6 * suit))


class Card(int):
    """One card, an immutable value; the 52 cards are singletons (``DECK``).

    ``card.index`` is ``(rank - 2) * 4 + suit``, 0..51, and ``Card(index)`` returns
    ``DECK[index]``. The card's ``int`` value is not its index but its ranking key (above):
    ranking is the hottest loop of the rules engine (settlement, simulators, labs' vectors,
    the house way) and adding five ints is the cheapest key there is. A card is an ``int``
    subclass rather than a dataclass for that reason; it hashes at C speed too. Cards compare
    as their ints: by suit, then rank; sort with ``key=lambda c: c.index`` for rank order.
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


def parse_card(text: str) -> Card:
    """Exactly one card, e.g. ``"As"``, ``"10h"``, ``"9♠"``."""
    cards = parse_cards(text)
    if len(cards) != 1:
        raise CardError(f"expected one card, got {len(cards)} in {text!r}")
    return cards[0]


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
