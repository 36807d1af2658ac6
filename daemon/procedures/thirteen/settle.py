"""A Thirteen round settled by the rules engine: each bet on a played seat, with its holder's
arrangement against the banker's (Portaria 51/89/M Art. 7-11); and who holds a seat's cards
and who shakes, from the bets (Art. 5, 2(b))."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import ROUND_DOWN, Decimal
from fractions import Fraction

from daemon.procedures.records import Bet, BetSettled, SeatScored
from daemon.procedures.thirteen.game import BANKER_SEAT, ROWS
from daemon.rules import thirteen as rules13
from daemon.rules.cards import Card, parse_card


def holder(bets: Sequence[Bet], seat: int) -> str | None:
    """Art. 5: the highest bettor on the seat who holds a seat at the table; the text does
    not say who holds when no bettor of the seat is seated, so the highest bettor does. Ties
    go to the earlier bet."""
    on_seat = [b for b in bets if b["seat"] == seat]
    seated = [b for b in on_seat if b["seated"]] or on_seat
    if not seated:
        return None
    best = max(seated, key=lambda b: (b["amount"], -b["seq"]))
    return str(best["player"])


def highest_bettor(bets: Sequence[Bet], seated_first: bool = True) -> str | None:
    """Art. 2(b): the player with the highest bet at the table shakes, ties to the earlier
    bet. 「投注额最高的闲家」 names no seat: by default (`shaker = "seated-first"`) seated players
    come first, as Art. 5 reads; `seated_first=False` (`shaker = "highest"`) takes the highest
    bettor, seated or standing."""
    totals: dict[str, list[int]] = {}
    seated: set[str] = set()
    for b in bets:
        entry = totals.setdefault(b["player"], [0, b["seq"]])
        entry[0] += b["amount"]
        if b["seated"]:
            seated.add(b["player"])
    pool = ([p for p in totals if p in seated] if seated_first else []) or list(totals)
    if not pool:
        return None
    return max(pool, key=lambda p: (totals[p][0], -totals[p][1]))


def settle_thirteen(
    arrangements: Mapping[int, Mapping[str, list[str]]],
    bets: Sequence[Bet],
    late: Sequence[int],
    ruleset: str | rules13.RuleSet,
) -> list[BetSettled]:
    """Each bet on a played seat, settled by the rules engine with its holder's arrangement.

    The engine works in units (`bet` = the bet's 1-3 units, Art. 11); a bet's money is its
    `amount`, so its net is the engine's net scaled by amount / units (`seat_net`). A seat late
    at the bell loses the round (Art. 2(d)): its bets are lost whole, without a comparison of
    rows.
    """
    # The banker's hand is read once, for every bet it is settled against.
    banker = rules13.read_hand(_hand(arrangements[BANKER_SEAT]), ruleset)
    results: list[BetSettled] = []
    for bet in sorted(bets, key=lambda b: (b["seat"], b["seq"])):
        seat, amount, units = int(bet["seat"]), int(bet["amount"]), int(bet["units"])
        player = bet["player"]
        if seat in late:
            results.append(
                BetSettled(
                    seat=seat,
                    player=player,
                    amount=amount,
                    outcome="banker",
                    late=True,
                    net=str(Decimal(-amount)),
                )
            )
            continue
        result = rules13.settle(banker, _hand(arrangements[seat]), ruleset, bet=units)
        net = seat_net(result, amount, units)
        results.append(
            BetSettled(
                seat=seat,
                player=player,
                amount=amount,
                outcome=result.outcome,
                late=False,
                net=str(net),
                rules=result.to_json(),
            )
        )
    return results


def settle_table(
    arrangements: Mapping[int, Mapping[str, list[str]]],
    bets: Sequence[Bet],
    late: Sequence[int],
    rules: rules13.RuleSet,
    unit: int,
) -> list[SeatScored]:
    """A round without a banker (003 way 3; way 2's 「四人对比」): each played seat scored against
    each other (`rules13.table_points`; a seat late at the bell loses to every other as a
    foul does), then paid in money by the rule set's `stakes`:

    - "per-point" (「1分×元」): a point is `unit / points_per_unit` of money; each pair pays its
      points in money, rounded toward zero to `MONEY_STEP` (in the payer's favour), so the
      seats' nets sum to zero;
    - "pot" (「分數最高者贏得底池」): every seat's bet goes into the pot and the highest score
      takes it; equal highest scores share it, each share rounded down to `MONEY_STEP` and what
      is left over to the first of them counter-clockwise from seat 0.
    """
    seats = sorted({int(b["seat"]) for b in bets})
    hands = [None if seat in late else _hand(arrangements[seat]) for seat in seats]
    table = rules13.table_points(hands, rules)
    points = {seat: table.points[i] for i, seat in enumerate(seats)}
    stake = {int(b["seat"]): int(b["amount"]) for b in bets}
    net: dict[int, Decimal] = dict.fromkeys(seats, Decimal(0))
    if rules.stakes == "pot":
        pot = sum(stake.values())
        best = max(points.values())
        winners = [seat for seat in seats if points[seat] == best]
        share = (Decimal(pot) / len(winners)).quantize(rules13.MONEY_STEP, rounding=ROUND_DOWN)
        for seat in seats:
            net[seat] = -Decimal(stake[seat])
        for seat in winners:
            net[seat] += share
        net[winners[0]] += Decimal(pot) - share * len(winners)
    else:
        value = Fraction(unit, rules.points_per_unit)
        for i, a in enumerate(seats):
            for b in seats[i + 1 :]:
                owed = _owed(table, seats.index(a), seats.index(b)) * value
                money = _toward_zero(owed)
                net[a] += money
                net[b] -= money
    shooters = {seats[s] for s, _ in table.shots}
    results: list[SeatScored] = []
    for bet in sorted(bets, key=lambda b: b["seat"]):
        seat = int(bet["seat"])
        results.append(
            {
                "seat": seat,
                "player": bet["player"],
                "amount": int(bet["amount"]),
                # Exact: whole, or a fraction as text ("20/3") after a home run's sharing.
                "points": str(points[seat]),
                "outcome": "player" if net[seat] > 0 else "loss" if net[seat] < 0 else "push",
                "late": seat in late,
                "shot": sorted(seats[v] for s, v in table.shots if seats[s] == seat),
                "shooter": seat in shooters,
                "home_run": table.home_run is not None and seats[table.home_run] == seat,
                "net": rules13.money_text(net[seat]),
            }
        )
    return results


def _owed(table: rules13.Table, i: int, j: int) -> Fraction:
    """The points seat index `i` takes from `j` (after a home run's doubling and sharing)."""
    if table.home_run is not None and table.home_run in (i, j):
        # The home run's gain is shared equally by the three others (全壘打).
        share = table.points[table.home_run] / (len(table.points) - 1)
        return share if table.home_run == i else -share
    key = (i, j) if i < j else (j, i)
    result = table.pairs.get(key)
    if result is None:
        return Fraction(0)
    taken = Fraction(result.banker_units - result.player_units)
    return taken if i < j else -taken


def _toward_zero(value: Fraction) -> Decimal:
    exact = Decimal(value.numerator) / Decimal(value.denominator)
    return exact.quantize(rules13.MONEY_STEP, rounding=ROUND_DOWN)


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
