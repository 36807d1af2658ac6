"""Thirteen cards: a hand of 13 set in three rows, read by the rules: its rows (head 3, middle
5, tail 5), whether it is a foul (Art. 7), the fixed combination it holds (Art. 9 I; 003
报到), and the house way's entry point that sets 13 cards for the banker.

The package's docstring (`daemon.rules.thirteen`) lists the articles and where each lives; the
settlement of hands against each other is `settlement`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from daemon.rules.cards import Card, CardError, parse_cards
from daemon.rules.thirteen.ranking import HandRank, rank
from daemon.rules.thirteen.rulesets import RuleSet, ruleset

Row = Sequence[Card] | str
Hand = tuple[Row, Row, Row]
Arrangement = tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]


# --- arrangements ---------------------------------------------------------------------------


def parse_rows(
    head: Sequence[Card] | str, middle: Sequence[Card] | str, tail: Sequence[Card] | str
) -> Arrangement:
    rows: list[tuple[Card, ...]] = []
    for name, row, size in (("head", head, 3), ("middle", middle, 5), ("tail", tail, 5)):
        cards = parse_cards(row) if isinstance(row, str) else tuple(row)
        for card in cards:
            if not isinstance(card, Card):
                raise CardError(f"{name}: not a card: {card!r}")
        if len(cards) != size:
            raise CardError(f"the {name} has {size} cards, not {len(cards)}")
        rows.append(cards)
    seen: set[Card] = set()
    for card in (*rows[0], *rows[1], *rows[2]):
        if card in seen:
            raise CardError(f"{card} appears twice in one hand")
        seen.add(card)
    return rows[0], rows[1], rows[2]


def row_ranks(rows: Arrangement) -> tuple[HandRank, HandRank, HandRank]:
    return rank(rows[0]), rank(rows[1]), rank(rows[2])


def fouled(ranks: tuple[HandRank, HandRank, HandRank], rules: RuleSet) -> bool:
    head, middle, tail = ranks
    if rules.equal_rows_foul:
        return not (head < middle < tail)
    return head > middle or middle > tail


def is_foul(
    head: Sequence[Card] | str,
    middle: Sequence[Card] | str,
    tail: Sequence[Card] | str,
    ruleset: str | RuleSet = "macau-1989",
) -> bool:
    """Whether the rows break Art. 7 (摆乌龙): a row larger than the row after it.

    The foul rule compares by every card whatever the rule set's tie-break: the tie-break
    option of 003 is how a row is compared with the banker's, not how a hand is set.
    """
    return fouled(row_ranks(parse_rows(head, middle, tail)), rules_of(ruleset))


def rules_of(name: str | RuleSet) -> RuleSet:
    return name if isinstance(name, RuleSet) else ruleset(name)


# --- special hands (Art. 9 I; 003 报到) -------------------------------------------------------

_FIVE_RUNS = frozenset({"straight", "straight_flush", "royal_flush"})
_FIVE_FLUSHES = frozenset({"flush", "straight_flush", "royal_flush"})


def _head_run(head: Sequence[Card], excluded: frozenset[frozenset[int]]) -> bool:
    ranks = frozenset(card.rank for card in head)
    if len(ranks) != 3 or ranks in excluded:
        return False
    if ranks == frozenset({14, 2, 3}):  # the ace as 1, as Art. 9 II.6 lets it in A-2-3-4-5
        return True
    return max(ranks) - min(ranks) == 2


def _suited(cards: Sequence[Card]) -> bool:
    return len({card.suit for card in cards}) == 1


def _special_names(rows: Arrangement, ranks: Sequence[HandRank], rules: RuleSet) -> list[str]:
    """Every special hand of ``rules`` that this arrangement holds."""
    head, middle, tail = rows
    cards = (*head, *middle, *tail)
    counts = Counter(card.rank for card in cards)
    distinct = len(counts) == 13
    suits = {card.suit for card in cards}
    three_flushes = _suited(head) and all(r.category in _FIVE_FLUSHES for r in ranks[1:])
    three_runs = _head_run(head, rules.excluded_head_runs) and all(
        r.category in _FIVE_RUNS for r in ranks[1:]
    )
    held = {
        "一条龙": distinct,
        "杂龙": distinct,
        "青龙": distinct and len(suits) == 1,
        "至尊清龙": distinct and len(suits) == 1,
        "六对半": sum(n // 2 for n in counts.values()) == 6,
        "三花": three_flushes,
        "三同花": three_flushes,
        "三顺": three_runs,
        "三顺子": three_runs,
        "四套三条": sum(1 for n in counts.values() if n >= 3) == 4,
        "凑一色": suits <= {"s", "c"} or suits <= {"h", "d"},
        "全小": max(counts) <= 8,
        "全大": min(counts) >= 8,
        "三分天下": sum(1 for n in counts.values() if n == 4) == 3,
        "三同花顺": three_runs
        and _suited(head)
        and all(r.category != "straight" for r in ranks[1:]),
        "十二皇族": min(counts) >= 11,
    }
    return [name for name, _ in rules.specials if held[name]]


def best_special(
    rows: Arrangement, ranks: Sequence[HandRank], rules: RuleSet
) -> tuple[str, int] | None:
    units = dict(rules.specials)
    best: tuple[str, int] | None = None
    for name in _special_names(rows, ranks, rules):
        if best is None or units[name] > best[1]:
            best = (name, units[name])
    return best


def special_hand(
    head: Sequence[Card] | str,
    middle: Sequence[Card] | str,
    tail: Sequence[Card] | str,
    ruleset: str | RuleSet = "macau-1989",
) -> str | None:
    """The special hand (fixed combination, 报到) the arrangement holds, or None.

    When several qualify, the one worth the most units; among equals, the first the text
    lists. 三花 and 三顺 are judged on the rows as set: the player declares them by setting
    them (Art. 9 I: "三道中每道...").
    """
    rows = parse_rows(head, middle, tail)
    found = best_special(rows, row_ranks(rows), rules_of(ruleset))
    return None if found is None else found[0]


# --- house way ------------------------------------------------------------------------------

# Special hands that hold or not depending on how the cards are set.
_SET_DEPENDENT = frozenset({"三花", "三同花", "三顺", "三顺子", "三同花顺"})


def house_way(cards13: Sequence[Card] | str, ruleset: str | RuleSet = "macau-1989") -> Arrangement:
    """The banker's (head, middle, tail) for 13 cards; never a foul.

    The objective (documented in ``house`` and docs/rules.md): a special hand that
    depends on the setting when the rule set pays it, else the split maximising the summed
    probabilities of each row beating a random row, ties to the larger tail, middle, head.
    """
    # Imported here: its tables cost ~0.1 s and only the house way needs them.
    from daemon.rules.thirteen import house as thirteen_house  # noqa: PLC0415

    rules = rules_of(ruleset)
    units = dict(rules.specials)
    cards = parse_cards(cards13) if isinstance(cards13, str) else tuple(cards13)
    special_units = None

    def fixed() -> int:
        """The units of the special hand the cards hold however set (asked only when needed)."""
        arbitrary = (tuple(cards[:3]), tuple(cards[3:8]), tuple(cards[8:]))
        held = _special_names(arbitrary, row_ranks(arbitrary), rules)
        return max((units[n] for n in held if n not in _SET_DEPENDENT), default=0)

    if len(cards) == 13 and _SET_DEPENDENT & units.keys():

        def special_units(arrangement: Arrangement) -> int:
            # Every setting-dependent special hand has a suited head (三花, 三同花, 三同花顺) or
            # a head run (三顺, 三顺子, 三同花顺): without either, none is held.
            head = arrangement[0]
            if not (_suited(head) or _head_run(head, rules.excluded_head_runs)):
                return 0
            held = _special_names(arrangement, row_ranks(arrangement), rules)
            return max((units[n] for n in held if n in _SET_DEPENDENT), default=0)

    return thirteen_house.house_way(cards, rules.equal_rows_foul, special_units, fixed)
