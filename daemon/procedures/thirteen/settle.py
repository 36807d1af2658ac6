"""A Thirteen round settled by the rules engine: each bet on a played seat, with its holder's
arrangement against the banker's (Portaria 51/89/M Art. 7-11); and who holds a seat's cards
and who shakes, from the bets (Art. 5, 2(b))."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import ROUND_DOWN, Decimal
from typing import Any

from daemon.procedures.thirteen.game import BANKER_SEAT, ROWS
from daemon.rules import thirteen as rules13
from daemon.rules.cards import Card, parse_card


def holder(bets: Sequence[Mapping[str, Any]], seat: int) -> str | None:
    """Art. 5: the highest bettor on the seat who holds a seat at the table; the text does
    not say who holds when no bettor of the seat is seated, so the highest bettor does. Ties
    go to the earlier bet."""
    on_seat = [b for b in bets if b["seat"] == seat]
    seated = [b for b in on_seat if b["seated"]] or on_seat
    if not seated:
        return None
    best = max(seated, key=lambda b: (b["amount"], -b["seq"]))
    return str(best["player"])


def highest_bettor(bets: Sequence[Mapping[str, Any]]) -> str | None:
    """Art. 2(b): the player with the highest bet at the table shakes; seated players
    first (Art. 5 reads the same way), ties to the earlier bet."""
    totals: dict[str, list[int]] = {}
    seated: set[str] = set()
    for b in bets:
        entry = totals.setdefault(b["player"], [0, b["seq"]])
        entry[0] += b["amount"]
        if b["seated"]:
            seated.add(b["player"])
    pool = [p for p in totals if p in seated] or list(totals)
    if not pool:
        return None
    return max(pool, key=lambda p: (totals[p][0], -totals[p][1]))


def settle_thirteen(
    arrangements: Mapping[int, Mapping[str, list[str]]],
    bets: Sequence[Mapping[str, Any]],
    late: Sequence[int],
    ruleset: str | rules13.RuleSet,
) -> list[dict[str, Any]]:
    """Each bet on a played seat, settled by the rules engine with its holder's arrangement.

    The engine works in units (`bet` = the bet's 1-3 units, Art. 11); a bet's money is its
    `amount`, so its net is the engine's net scaled by amount / units (`seat_net`). A seat late
    at the bell loses the round (Art. 2(d)): its bets are lost whole, without a comparison of
    rows.
    """
    banker = _hand(arrangements[BANKER_SEAT])
    results: list[dict[str, Any]] = []
    for bet in sorted(bets, key=lambda b: (b["seat"], b["seq"])):
        seat, amount, units = int(bet["seat"]), int(bet["amount"]), int(bet["units"])
        entry: dict[str, Any] = {"seat": seat, "player": bet["player"], "amount": amount}
        if seat in late:
            entry |= {"outcome": "banker", "late": True, "net": str(Decimal(-amount))}
        else:
            result = rules13.settle(banker, _hand(arrangements[seat]), ruleset, bet=units)
            net = seat_net(result, amount, units)
            entry |= {"outcome": result.outcome, "late": False, "net": str(net)}
            entry["rules"] = result.to_json()
        results.append(entry)
    return results


def seat_net(result: rules13.Settlement, amount: int, units: int) -> Decimal:
    """The engine's net for `units`, in the money of a bet of `amount`, to `MONEY_STEP`.

    Scaled by amount / units, a commission of 0.01 unit can divide by 3 without end (a house
    rate such as 5 %: 0.07 of a 3-unit bet of 10 is 0.2333...). Art. 11's decision in
    docs/rules.md has one rounding, the commission's, down to the step in the player's favour:
    the prize scales exactly (it is a multiple of half the amount), and the commission is
    rounded down again in money, so the net is never below its exact value nor a step above.
    """
    if not result.commission:
        return result.player_net * Decimal(amount) / Decimal(units)  # a loss, a push: exact
    prize = result.prize * Decimal(amount) / Decimal(units)
    commission = (result.commission * Decimal(amount) / Decimal(units)).quantize(
        rules13.MONEY_STEP, rounding=ROUND_DOWN
    )
    return prize - commission


def _hand(rows: Mapping[str, list[str]]) -> tuple[list[Card], list[Card], list[Card]]:
    head, middle, tail = ([parse_card(c) for c in rows[row]] for row in ROWS)
    return head, middle, tail
