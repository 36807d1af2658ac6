"""Thirteen cards: the settlement of a hand against the banker's (Art. 8-11) and of an
hk-points table, each seat against each (003 way 3).

The package's docstring (`daemon.rules.thirteen`) lists the articles and where each lives; a
hand's rows, fouls and fixed combinations are `hands`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from fractions import Fraction
from typing import Literal

from daemon.rules.cards import SUIT_CHARS, CardError, format_cards
from daemon.rules.thirteen.deal import SEATS
from daemon.rules.thirteen.hands import (
    Arrangement,
    Hand,
    best_special,
    fouled,
    parse_rows,
    row_ranks,
    rules_of,
)
from daemon.rules.thirteen.ranking import CATEGORIES, HandRank
from daemon.rules.thirteen.rulesets import ROWS, RulesError, RuleSet

Side = Literal["banker", "player"]
# Art. 11's commission is rounded down to a hundredth of a unit, in the player's favour (the
# text gives no rule; with whole bets and the 2 % of the text it is always exact).
MONEY_STEP = Decimal("0.01")


# --- settlement (Art. 8-11) -------------------------------------------------------------------


@dataclass(frozen=True)
class RowResult:
    """One row compared: who takes it and the units (points) it is worth."""

    row: str
    winner: str  # "banker" | "player" | "push"
    units: int
    banker_rank: HandRank
    player_rank: HandRank


@dataclass(frozen=True)
class Settlement:
    """A player's hand settled against the banker's (or, for ``hk-points``, two players').

    ``player_net`` is the player's money for ``bet``: the prize less the commission on a win,
    minus the loss on a loss, zero on a push. ``rows`` is empty when a special hand or a
    double foul decides the hand without comparing rows.
    """

    ruleset: str
    rows: tuple[RowResult, ...]
    banker_units: int
    player_units: int
    outcome: str  # "banker" | "player" | "push"
    foul: str | None  # "banker" | "player" | "both" | None
    special: str | None  # the special hand that decided the hand
    banker_special: str | None
    player_special: str | None
    shot: str | None  # hk-points 打枪: the side that won all three rows
    bet: int
    prize: Decimal
    commission: Decimal
    player_net: Decimal

    def to_json(self) -> dict[str, object]:
        return {
            "ruleset": self.ruleset,
            "outcome": self.outcome,
            "banker_units": self.banker_units,
            "player_units": self.player_units,
            "rows": [
                {
                    "row": r.row,
                    "winner": r.winner,
                    "units": r.units,
                    "banker": r.banker_rank.category,
                    "player": r.player_rank.category,
                }
                for r in self.rows
            ],
            "foul": self.foul,
            "special": self.special,
            "banker_special": self.banker_special,
            "player_special": self.player_special,
            "shot": self.shot,
            "bet": self.bet,
            "prize": money_text(self.prize),
            "commission": money_text(self.commission),
            "player_net": money_text(self.player_net),
        }


def money_text(amount: Decimal) -> str:
    """An amount as plain decimal text without trailing zeros: "0.49", "30", "-4.5"."""
    text = f"{amount.normalize():f}"
    return "0" if text == "-0" else text


def _compare(banker: HandRank, player: HandRank, rules: RuleSet) -> int:
    """> 0 when the banker's row is larger, < 0 when the player's, 0 when equal."""
    if rules.tie_break == "top-card":
        b = (CATEGORIES.index(banker.category), banker.top)
        p = (CATEGORIES.index(player.category), player.top)
        return (b > p) - (b < p)
    return (banker > player) - (banker < player)


def _row_results(
    banker: Sequence[HandRank],
    player: Sequence[HandRank],
    rules: RuleSet,
    foul: str | None,
) -> tuple[RowResult, ...]:
    results = []
    for row, b, p in zip(ROWS, banker, player, strict=True):
        if foul == "player":
            order = 1
        elif foul == "banker":
            order = -1
        else:
            order = _compare(b, p, rules)
            # 003 binds the top-card comparison to its tie rule: "倘若相同，一律由莊家勝". With
            # points scoring there is no banker: a tie is 平手, 0 (003 third way, 算分 5).
            to_banker = rules.row_tie == "banker" or rules.tie_break == "top-card"
            if order == 0 and to_banker and rules.scoring == "banker":
                order = 1
        if order == 0:
            results.append(RowResult(row, "push", 0, b, p))
            continue
        winner, hand = ("banker", b) if order > 0 else ("player", p)
        worth = rules.row_units(row, hand.category)
        if rules.scoring == "points":
            worth = 1 + rules.bonus[row].get(hand.category, 0)
        results.append(RowResult(row, winner, worth, b, p))
    return tuple(results)


def _check_bet(bet: int, rules: RuleSet) -> None:
    if isinstance(bet, bool) or not isinstance(bet, int) or bet < 1:
        raise RulesError(f"a bet is a positive whole number of units, not {bet!r}")
    if rules.bets is not None and bet not in rules.bets:
        allowed = ", ".join(map(str, rules.bets))
        raise RulesError(f"{rules.name} takes bets of {allowed} units, not {bet}")


# The rows of a hand not set when the bell rang (Art. 2(d): 「视为输了此局」): lower than any row.
LATE = HandRank(value=-1, category="late", size=0)
_LATE_RANKS = (LATE, LATE, LATE)


def _side(
    hand: Hand | None, rules: RuleSet
) -> tuple[Arrangement | None, tuple[HandRank, HandRank, HandRank], bool]:
    """A side's rows, ranks and foul; a late side (None) has no rows and loses like a foul."""
    if hand is None:
        return None, _LATE_RANKS, True
    rows = parse_rows(*hand)
    ranks = row_ranks(rows)
    return rows, ranks, fouled(ranks, rules)


def _special_of(
    rows: Arrangement | None, ranks: Sequence[HandRank], foul: bool, rules: RuleSet
) -> tuple[str, int] | None:
    if rows is None or (foul and rules.foul_voids_special):
        return None
    return best_special(rows, ranks, rules)


@dataclass(frozen=True)
class ReadHand:
    """A hand read once under a rule set (`read_hand`): its rows, their ranks, its foul and its
    special hand, what `settle` reads of each side. The banker's hand, settled against every
    seat of a round, is read once rather than once a bet."""

    rules: RuleSet
    rows: Arrangement | None
    ranks: tuple[HandRank, HandRank, HandRank]
    foul: bool
    special: tuple[str, int] | None


def read_hand(hand: Hand | None, ruleset: str | RuleSet = "macau-1989") -> ReadHand:
    """``hand`` read under ``ruleset`` (None: late at the bell); CardError as `settle` raises."""
    rules = rules_of(ruleset)
    rows, ranks, foul = _side(hand, rules)
    return ReadHand(rules, rows, ranks, foul, _special_of(rows, ranks, foul, rules))


def _read(hand: Hand | ReadHand | None, rules: RuleSet) -> ReadHand:
    if isinstance(hand, ReadHand):
        return hand if hand.rules is rules else read_hand(hand.rows, rules)
    return read_hand(hand, rules)


def settle(
    banker: Hand | ReadHand | None,
    player: Hand | ReadHand | None,
    ruleset: str | RuleSet = "macau-1989",
    bet: int = 1,
) -> Settlement:
    """Settle ``player``'s (head, middle, tail) against ``banker``'s (Art. 7-11).

    A side given as None was late at the bell (Art. 2(d)): it loses every row as a foul does,
    and holds no special hand; the other side's rows and special hand win what they are worth
    (used by the rule sets without a banker, where each seat settles against each). A side
    may come read already (`read_hand`): the same settlement, without reading it again.
    """
    rules = rules_of(ruleset)
    _check_bet(bet, rules)
    b_read, p_read = _read(banker, rules), _read(player, rules)
    b_rows, b_ranks, b_foul = b_read.rows, b_read.ranks, b_read.foul
    p_rows, p_ranks, p_foul = p_read.rows, p_read.ranks, p_read.foul
    if b_rows is not None and p_rows is not None:
        both = set(b_rows[0] + b_rows[1] + b_rows[2]) & set(p_rows[0] + p_rows[1] + p_rows[2])
        if both:
            # Listed by suit (c d h s), then rank: the order the message has always had.
            listed = sorted(both, key=lambda card: (SUIT_CHARS.index(card.suit), card.rank))
            raise CardError(f"one deck deals each card once: {format_cards(listed)} in both")
    b_special, p_special = b_read.special, p_read.special
    foul = {(True, True): "both", (True, False): "banker", (False, True): "player"}.get(
        (b_foul, p_foul)
    )
    rows: tuple[RowResult, ...] = ()
    special: str | None = None
    shot: str | None = None
    b_units = p_units = 0
    if b_special or p_special:
        foul = None if (b_special and p_special) else foul
        if b_special and p_special:
            if rules.both_special == "banker-pays":
                special, p_units = p_special
            elif rules.both_special == "larger-wins" and b_special[1] != p_special[1]:
                if b_special[1] > p_special[1]:
                    special, b_units = b_special
                else:
                    special, p_units = p_special
        elif p_special:
            special, p_units = p_special
        elif b_special:
            special, b_units = b_special
    elif foul == "both" and rules.both_foul == "push":
        pass
    else:
        side = "player" if foul == "both" else foul  # Art. 7: the seat's foul loses to the banker
        rows = _row_results(b_ranks, p_ranks, rules, side)
        b_units = sum(r.units for r in rows if r.winner == "banker")
        p_units = sum(r.units for r in rows if r.winner == "player")
        winners = {r.winner for r in rows}
        if rules.scoring == "points" and len(winners) == 1 and winners != {"push"}:
            shot = winners.pop()
            b_units *= rules.shoot_multiplier
            p_units *= rules.shoot_multiplier
    outcome = "player" if p_units > b_units else "banker" if b_units > p_units else "push"
    if foul == "both" and rules.both_foul == "banker" and not (b_special or p_special):
        outcome = "banker"
    prize, commission, net = _money(outcome, p_units - b_units, bet, rules)
    return Settlement(
        ruleset=rules.name,
        rows=rows,
        banker_units=b_units,
        player_units=p_units,
        outcome=outcome,
        foul=foul,
        special=special,
        banker_special=b_special[0] if b_special else None,
        player_special=p_special[0] if p_special else None,
        shot=shot,
        bet=bet,
        prize=prize,
        commission=commission,
        player_net=net,
    )


def _money(
    outcome: str, difference: int, bet: int, rules: RuleSet
) -> tuple[Decimal, Decimal, Decimal]:
    zero = Decimal(0)
    if outcome == "push":
        return zero, zero, zero
    if rules.prize == "half-bet":
        if outcome == "banker":
            return zero, zero, Decimal(-bet)
        prize = Decimal(bet) / 2
    else:
        prize = Decimal(difference * bet)
        if rules.prize == "half-units":
            prize /= 2
        if outcome == "banker":
            return zero, zero, prize
    commission = (prize * rules.commission).quantize(MONEY_STEP, rounding=ROUND_DOWN)
    return prize, commission, prize - commission


# --- four players each against each (003 third way) -------------------------------------------


@dataclass(frozen=True)
class Table:
    """A round of ``hk-points``: each seat's points, who shot whom, the home run (全垒打)."""

    points: tuple[Fraction, ...]
    pairs: dict[tuple[int, int], Settlement]  # (i, j), i < j: i as "banker", j as "player"
    shots: tuple[tuple[int, int], ...]  # (shooter, shot)
    home_run: int | None


def table_points(hands: Sequence[Hand | None], ruleset: str | RuleSet = "hk-points") -> Table:
    """Score every seat against every other seat (003 third way, 算分 5, 打槍, 全壘打; or way 2's
    「四人对比」, each pair's difference of units). A hand given as None was late at the bell
    and loses to every other as a foul does; two late hands are even."""
    rules = rules_of(ruleset)
    if rules.scoring == "banker":
        raise RulesError(f"{rules.name} settles against the banker; use settle()")
    if not 2 <= len(hands) <= SEATS:
        raise RulesError(f"2 to 4 seats play, not {len(hands)}")
    seats = len(hands)
    owed = [[Fraction(0)] * seats for _ in range(seats)]  # owed[i][j]: points i takes from j
    pairs: dict[tuple[int, int], Settlement] = {}
    shots: list[tuple[int, int]] = []
    for i in range(seats):
        for j in range(i + 1, seats):
            if hands[i] is None and hands[j] is None:
                continue
            result = settle(hands[i], hands[j], rules)
            pairs[(i, j)] = result
            owed[i][j] = Fraction(result.banker_units - result.player_units)
            owed[j][i] = -owed[i][j]
            if result.shot == "banker":
                shots.append((i, j))
            elif result.shot == "player":
                shots.append((j, i))
    home_run = None
    if seats == SEATS:
        for i in range(seats):
            if sum(1 for shooter, _ in shots if shooter == i) == seats - 1:
                home_run = i
                gain = rules.home_run_multiplier * sum(owed[i], Fraction(0))
                for j in range(seats):
                    if j != i:
                        owed[i][j] = gain / (seats - 1)
                        owed[j][i] = -owed[i][j]
    points = tuple(sum(owed[i], Fraction(0)) for i in range(seats))
    return Table(points=points, pairs=pairs, shots=tuple(shots), home_run=home_run)
