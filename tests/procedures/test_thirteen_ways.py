"""Thirteen cards at the table beyond the Macau round: bets in table units (Art. 11), the
dealer's records of Art. 3 and 5, the house settings (who shakes, the timer in a HOLD), and
the Hong Kong ways without a banker (003 way 3, way 2's 「四人对比」) played whole."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from procedure_drive import (
    DEALER,
    SUPERVISOR,
    SYSTEM,
    Table,
    arrangement,
    device,
    identify,
    paigow_table,
    shuffled_deck,
    thirteen_bets,
    thirteen_table,
    thirteen_to_betting,
)

from daemon.config import load_config
from daemon.procedures import build
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.stakes import Stakes
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.rules import thirteen as rules13
from daemon.rules.cards import parse_cards

ART = "Portaria 51/89/M Art."
SHOE = device("shoe_reader")
ROOT = Path(__file__).resolve().parents[2]


def refused_article(table: Table, action: str, payload: dict[str, Any]) -> str:
    outcome = table.refused(action, DEALER, payload)
    assert outcome.violation is not None
    return outcome.violation.article


def thirteen(**kwargs: Any) -> ThirteenProcedure:
    proc = thirteen_table(**kwargs).proc
    assert isinstance(proc, ThirteenProcedure)
    return proc


# ---- bets in table units ------------------------------------------------------------------


@pytest.mark.article("51/89/M", "11")
def test_a_bet_is_one_two_or_three_units_and_its_money_follows_from_them() -> None:
    table = thirteen_table(stakes=Stakes(unit=50, currency="MOP", minimum=100, maximum=150))
    thirteen_to_betting(table)
    bet = {"player": "P1", "seat": 1, "units": 2, "seated": True}
    table.ok("place_bet", DEALER, bet)
    proc = table.proc
    assert isinstance(proc, ThirteenProcedure)
    assert proc.bets[0]["amount"] == 100  # two units of 50
    placed = [e for e in table.outcomes[-1].events if e.name == "bet.placed"]
    assert placed[0].payload["amount"] == 100 and placed[0].payload["units"] == 2
    table.ok("place_bet", DEALER, {**bet, "player": "P2", "units": 3, "amount": 150})
    # Refused, each a journaled violation citing Art. 11: the money is not the units', the
    # units are not 1-3, one unit is below the table's minimum.
    wrong = {**bet, "player": "P3", "amount": 120}
    assert refused_article(table, "place_bet", wrong) == f"{ART} 11"
    assert "a bet of 2 units is 100 MOP" in table.outcomes[-1].violation.reason  # type: ignore[union-attr]
    assert refused_article(table, "place_bet", {**bet, "player": "P3", "units": 4}) == f"{ART} 11"
    low = {**bet, "player": "P3", "units": 1}
    assert refused_article(table, "place_bet", low) == f"{ART} 11"
    assert "below the table minimum 100 MOP" in table.outcomes[-1].violation.reason  # type: ignore[union-attr]
    hk = thirteen_table(ruleset="hk-common", stakes=Stakes(unit=100, maximum=500))
    thirteen_to_betting(hk)
    hk.ok("place_bet", DEALER, {**bet, "units": 5})  # the Hong Kong ways bet any units
    high = {**bet, "player": "P2", "units": 6}
    assert refused_article(hk, "place_bet", high) == f"{ART} 11"
    assert "above the table maximum 500 MOP" in hk.outcomes[-1].violation.reason  # type: ignore[union-attr]


@pytest.mark.article("51/89/M", "11")
@pytest.mark.parametrize("units", [4, 5, 10])
def test_one_two_or_three_units_hold_at_a_table_with_no_limits(units: int) -> None:
    """Art. 11's 「一注、二注或三注」 is the rule's own, not the house's limits: at a table with no
    minimum and no maximum, 1 to 3 units are taken and more are refused citing Art. 11 for the
    units, by units or by their money (issue 26: the example table's maximum hid it)."""
    table = thirteen_table(stakes=Stakes(unit=50, currency="MOP"))  # no minimum, no maximum
    thirteen_to_betting(table)
    bet = {"seat": 1, "seated": True}
    for taken in (1, 2, 3):
        table.ok("place_bet", DEALER, {**bet, "player": f"P{taken}", "units": taken})
    many = {**bet, "player": "P9", "units": units}
    assert refused_article(table, "place_bet", many) == f"{ART} 11"
    reason = table.outcomes[-1].violation.reason  # type: ignore[union-attr]
    assert reason == f"a bet is 1, 2, 3 units, not {units}"
    by_money = {**many, "amount": units * 50}
    assert refused_article(table, "place_bet", by_money) == f"{ART} 11"
    assert "units, not" in table.outcomes[-1].violation.reason  # type: ignore[union-attr]
    proc = table.proc
    assert isinstance(proc, ThirteenProcedure)
    assert [b["amount"] for b in proc.bets] == [50, 100, 150]  # nothing of the refused ones


@pytest.mark.article("15/90/M", "2(7)")
def test_a_paigow_bet_is_a_whole_number_of_the_tables_units_within_its_limits() -> None:
    table = paigow_table()
    proc = table.proc
    assert isinstance(proc, PaiGowProcedure)
    proc.stakes = Stakes(unit=100, currency="MOP", minimum=200, maximum=1000)
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER, {"new_set": False})
    table.ok("move_stacks", DEALER, {"by": "player", "player": "P1", "one_hand": True})
    table.ok("move_stacks", DEALER, {"by": "banker", "player": "B", "one_hand": True})
    art = "Portaria 15/90/M Art. 2(7)"
    table.ok("place_bet", DEALER, {"player": "P1", "seat": 1, "amount": 300})
    table.ok("place_bet", DEALER, {"player": "P2", "seat": 2, "amount": 400, "units": 4})
    assert refused_article(table, "place_bet", {"player": "P3", "seat": 3, "amount": 250}) == art
    assert refused_article(table, "place_bet", {"player": "P3", "seat": 3, "amount": 100}) == art
    assert refused_article(table, "place_bet", {"player": "P3", "seat": 3, "amount": 1100}) == art
    mismatch = {"player": "P3", "seat": 3, "amount": 300, "units": 2}
    assert refused_article(table, "place_bet", mismatch) == art


# ---- Art. 3 and 5: the dealer's records --------------------------------------------------


def _dealt(table: Table, deck: list[str]) -> ThirteenProcedure:
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [1, 2, 3, 4], "valid": True})
    for card in deck:
        table.ok("card_read", SHOE, {"card": card})
    proc = table.proc
    assert isinstance(proc, ThirteenProcedure)
    return proc


@pytest.mark.article("51/89/M", "5", "2(d)")
def test_only_another_bettor_on_the_seat_advises_its_holder_once_the_banker_opened() -> None:
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)  # seat 1: P1 (3 units, holds) and P2; seat 2: P3
    proc = _dealt(table, shuffled_deck(3))
    advice = {"player": "P2", "seat": 1}
    # Before the banker opened, nobody looks at the cards (Art. 2(d)): no advice yet.
    assert refused_article(table, "advise_holder", advice) == f"{ART} 5"
    table.ok("arrange_banker", DEALER)
    table.ok("open_banker", DEALER)
    assert refused_article(table, "advise_holder", {"player": "P3", "seat": 1}) == f"{ART} 5"
    assert refused_article(table, "advise_holder", {"player": "P1", "seat": 1}) == f"{ART} 5"
    outcome = table.ok("advise_holder", DEALER, advice)
    assert [(e.name, e.payload["adviser"], e.payload["holder"]) for e in outcome.events] == [
        ("holder.advised", "P2", "P1")
    ]
    assert proc.snapshot()["advice"] == [{"seat": 1, "adviser": "P2", "holder": "P1"}]
    table.ok("player_arranged", DEALER, {"seat": 1})
    assert refused_article(table, "advise_holder", advice) == f"{ART} 5"  # already arranged


@pytest.mark.article("51/89/M", "3")
def test_cards_taken_from_the_table_or_another_seats_cards_are_recorded() -> None:
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)
    away = {"player": "P2", "seat": 1, "what": "left_table"}
    assert refused_article(table, "cards_away", away) == f"{ART} 3"  # no cards dealt yet
    proc = _dealt(table, shuffled_deck(4))
    outcome = table.ok("cards_away", DEALER, away)
    assert [e.name for e in outcome.events] == ["cards.away"]
    assert outcome.events[0].payload["holder"] == "P1"
    # P1 holds seat 1: those cards are P1's own.
    own = {"player": "P1", "seat": 1, "what": "other_seat"}
    assert refused_article(table, "cards_away", own) == f"{ART} 3"
    table.ok("cards_away", DEALER, {"player": "P3", "seat": 1, "what": "other_seat"})
    assert [a["what"] for a in proc.snapshot()["away"]] == ["left_table", "other_seat"]


# ---- house settings where the text is silent --------------------------------------------


@pytest.mark.article("51/89/M", "2(b)")
def test_who_shakes_when_the_highest_bettor_stands_is_a_setting() -> None:
    for shaker, expected in (("seated-first", "P1"), ("highest", "S")):
        table = thirteen_table(shaker=shaker)
        thirteen_to_betting(table)
        table.ok("place_bet", DEALER, {"player": "P1", "seat": 1, "units": 2, "seated": True})
        table.ok("place_bet", DEALER, {"player": "S", "seat": 2, "units": 3, "seated": False})
        other = "S" if expected == "P1" else "P1"
        assert refused_article(table, "shake_dice", {"player": other}) == f"{ART} 2(b)"
        table.ok("shake_dice", DEALER, {"player": expected})


def configured_table() -> Table:
    """The example table (config/table.toml), which sets neither house setting of Thirteen."""
    text = (ROOT / "config" / "table.toml").read_text(encoding="utf-8")
    assert "shaker =" not in text and "timer_in_hold =" not in text
    table = Table(build(load_config(ROOT / "config" / "table.toml")))
    identify(table, table.proc.devices)
    table.ok("open_table", DEALER)
    return table


@pytest.mark.article("51/89/M", "2(b)")
def test_a_table_configured_without_a_shaker_setting_has_the_seated_highest_bettor_shake() -> None:
    """「投注额最高的闲家」 names no seat: a table whose config says nothing reads it as the
    highest bettor among those seated, not a standing one."""
    table = configured_table()
    thirteen_to_betting(table)
    table.ok("place_bet", DEALER, {"player": "P1", "seat": 1, "units": 2, "seated": True})
    table.ok("place_bet", DEALER, {"player": "S", "seat": 2, "units": 3, "seated": False})
    assert refused_article(table, "shake_dice", {"player": "S"}) == f"{ART} 2(b)"
    table.ok("shake_dice", DEALER, {"player": "P1"})


@pytest.mark.article("51/89/M", "2(d)")
def test_a_table_configured_without_a_timer_setting_pauses_the_five_minutes_in_a_hold() -> None:
    """The five minutes of Art. 2(d) are the players' time to arrange: a table whose config
    says nothing gives back, after a HOLD, the time the hold took."""
    table = configured_table()
    proc = _to_players_arranging(table, shuffled_deck(5))
    deadline = proc.deadline
    assert deadline is not None
    table.ok("door_opened", SHOE, {"device": "shoe_reader", "fault": "shoe removed"})
    table.now += 1000
    table.ok("device_healthy", SHOE, {"device": "shoe_reader"})
    table.ok("clear_hold", SUPERVISOR, {"reason": "shoe back"})
    assert proc.deadline is not None and proc.deadline > deadline


def _to_players_arranging(table: Table, deck: list[str]) -> ThirteenProcedure:
    thirteen_to_betting(table)
    thirteen_bets(table)
    proc = _dealt(table, deck)
    table.ok("arrange_banker", DEALER)
    table.ok("open_banker", DEALER)
    return proc


@pytest.mark.article("51/89/M", "2(d)")
def test_the_five_minutes_pause_in_a_hold_or_run_on_as_the_house_sets() -> None:
    paused = thirteen_table()
    proc = _to_players_arranging(paused, shuffled_deck(5))
    deadline = proc.deadline
    assert deadline is not None
    paused.ok("door_opened", SHOE, {"device": "shoe_reader", "fault": "shoe removed"})
    paused.now += 1000
    paused.ok("device_healthy", SHOE, {"device": "shoe_reader"})
    paused.ok("clear_hold", SUPERVISOR, {"reason": "shoe back"})
    assert proc.deadline is not None and proc.deadline > deadline  # the time left, restored
    running = thirteen_table(timer_in_hold="running")
    proc = _to_players_arranging(running, shuffled_deck(5))
    deadline = proc.deadline
    assert deadline is not None
    running.ok("door_opened", SHOE, {"device": "shoe_reader", "fault": "shoe removed"})
    assert proc.deadline is None  # no bell while held: the players cannot place
    stops = [c.command for c in running.outcomes[-1].commands if c.device == "timer_bell"]
    assert "stop" not in stops  # the bell keeps counting
    running.now = deadline + 10
    running.ok("device_healthy", SHOE, {"device": "shoe_reader"})
    running.ok("clear_hold", SUPERVISOR, {"reason": "shoe back"})
    assert proc.deadline == deadline  # the same five minutes, already over
    assert refused_article(running, "player_arranged", {"seat": 1}) == f"{ART} 2(d)"
    running.ok("timer_expired", SYSTEM)
    assert proc.late == [1, 2]


@pytest.mark.article("51/89/M", "2(d)", "8")
def test_a_players_arrangement_is_taken_only_once_its_hand_is_opened() -> None:
    """Issue 23 item 1: a hand's cards are placed into rows only once it lies open."""
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)
    proc = _dealt(table, shuffled_deck(6))
    hand = {"seat": 1, **arrangement(proc.seat_cards(1))}
    assert refused_article(table, "enter_arrangement", hand) == f"{ART} 2(d)"
    table.ok("arrange_banker", DEALER)
    assert refused_article(table, "enter_arrangement", hand) == f"{ART} 2(d)"
    table.ok("open_banker", DEALER)
    assert refused_article(table, "enter_arrangement", hand) == f"{ART} 2(d)"
    table.ok("player_arranged", DEALER, {"seat": 1})
    table.ok("player_arranged", DEALER, {"seat": 2})
    assert refused_article(table, "enter_arrangement", hand) == f"{ART} 2(d)"
    opened = table.ok("open_hand", DEALER, {"seat": 1})
    assert opened.events[0].payload["cards"] == proc.seat_cards(1)
    table.ok("enter_arrangement", DEALER, hand)


def _swapped(rows: dict[str, Any]) -> dict[str, Any]:
    """The same hand with the middle's first card and the tail's first swapped: the dealer's
    tap into the wrong row."""
    middle, tail = list(rows["middle"]), list(rows["tail"])
    middle[0], tail[0] = tail[0], middle[0]
    return {**rows, "middle": middle, "tail": tail}


@pytest.mark.article("51/89/M", "2(d)", "8")
def test_an_open_hand_once_placed_is_final_and_only_two_supervisors_correct_it() -> None:
    """Issue 23: the dealer alone could place any open hand again (the banker's too) until the
    settlement. A placed hand is final (Art. 2(d): the banker re-arranges only until the
    players take their cards; Art. 8: each hand is judged as opened); a correction is one
    supervisor's proposal that a second, named supervisor approves, both journaled."""
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)
    proc = _dealt(table, shuffled_deck(6))
    table.ok("arrange_banker", DEALER)
    table.ok("open_banker", DEALER)
    banker = {"seat": 0, **arrangement(proc.seat_cards(0))}
    table.ok("enter_arrangement", DEALER, banker)
    # The dealer cannot place the banker's hand again, the same or otherwise.
    assert refused_article(table, "enter_arrangement", banker) == f"{ART} 2(d)"
    refused = table.refused("enter_arrangement", DEALER, _swapped(banker))
    assert refused.violation is not None and "final" in refused.violation.reason
    table.ok("player_arranged", DEALER, {"seat": 1})
    table.ok("player_arranged", DEALER, {"seat": 2})
    table.ok("open_hand", DEALER, {"seat": 1})
    hand = {"seat": 1, **arrangement(proc.seat_cards(1))}
    table.ok("enter_arrangement", DEALER, hand)
    assert refused_article(table, "enter_arrangement", _swapped(hand)) == f"{ART} 8"
    assert refused_article(table, "enter_arrangement", _swapped(banker)) == f"{ART} 2(d)"
    # Not the dealer's: a correction is a supervisor's step, with a reason.
    table.refused("correct_arrangement", DEALER, {**_swapped(hand), "reason": "mis-tapped"})
    table.refused("correct_arrangement", SUPERVISOR, _swapped(hand))  # no reason
    # Of a placed hand only, to rows other than those placed, of its own open cards.
    unplaced = {"seat": 2, **arrangement(proc.seat_cards(2)), "reason": "x y z"}
    table.refused("correct_arrangement", SUPERVISOR, unplaced)
    table.refused("correct_arrangement", SUPERVISOR, {**hand, "reason": "the same rows"})
    strangers = {"seat": 1, **arrangement(proc.seat_cards(2)), "reason": "other cards"}
    stranger = table.refused("correct_arrangement", SUPERVISOR, strangers)
    assert stranger.violation is not None and stranger.violation.article == f"{ART} 7"
    proposed = table.ok(
        "correct_arrangement", SUPERVISOR, {**_swapped(hand), "reason": "dealer mis-tapped"}
    )
    assert proposed.events[0].name == "override.proposed"
    assert proc.arrangements[1] == arrangement(proc.seat_cards(1))  # nothing changes yet
    # Pending: the round is not settled, and nobody proposes another.
    table.ok("open_hand", DEALER, {"seat": 2})
    table.ok("enter_arrangement", DEALER, {"seat": 2, **arrangement(proc.seat_cards(2))})
    assert refused_article(table, "settle_round", {}) == f"{ART} 8"
    table.refused("correct_arrangement", "supervisor:S2", {**_swapped(banker), "reason": "too"})
    # Two persons: not the proposer (under any role), not an unnamed supervisor.
    mine = table.refused("approve_override", SUPERVISOR, {"reason": "mine"})
    assert mine.violation is not None and mine.violation.article == f"{ART} 8"
    table.refused("approve_override", "dealer:S1", {"reason": "mine"})
    table.refused("approve_override", "supervisor", {"reason": "who?"})
    approved = table.ok("approve_override", "supervisor:S2", {"reason": "seen on camera"})
    corrected = [e for e in approved.events if e.name == "arrangement.corrected"]
    assert len(corrected) == 1
    said = corrected[0].payload
    assert said["proposed_by"] == SUPERVISOR and said["approved_by"] == "supervisor:S2"
    assert said["reason"] == "dealer mis-tapped" and said["approval_reason"] == "seen on camera"
    assert said["placed"] == arrangement(proc.seat_cards(1))
    assert {k: said[k] for k in ("head", "middle", "tail")} == {
        k: v for k, v in _swapped(hand).items() if k != "seat"
    }
    assert proc.arrangements[1] == {k: v for k, v in _swapped(hand).items() if k != "seat"}
    # A rejected correction changes nothing.
    table.ok("correct_arrangement", SUPERVISOR, {**_swapped(banker), "reason": "banker's too"})
    table.ok("reject_override", "supervisor:S2", {"reason": "the camera shows it right"})
    assert proc.arrangements[0] == arrangement(proc.seat_cards(0))
    table.ok("settle_round", DEALER)
    # Settled: nothing is corrected any more.
    table.refused("correct_arrangement", SUPERVISOR, {**hand, "reason": "after the fact"})


# ---- without a banker: 003 way 3 (hk-points) and way 2's 四人对比 (hk-four) -----------------


def _house(cards: list[str], rules: rules13.RuleSet) -> dict[str, list[str]]:
    head, middle, tail = rules13.house_way(parse_cards(" ".join(cards)), rules)
    return {"head": [str(c) for c in head], "middle": [str(c) for c in middle],
            "tail": [str(c) for c in tail]}  # fmt: skip


def play_without_banker(
    table: Table, seats: dict[int, str], units: int = 1, late: int | None = None
) -> ThirteenProcedure:
    proc = table.proc
    assert isinstance(proc, ThirteenProcedure) and not proc.banker_game
    thirteen_to_betting(table)
    for seat, player in seats.items():
        table.ok("place_bet", DEALER, {"player": player, "seat": seat, "units": units,
                                       "seated": True})  # fmt: skip
    first = min(seats.items())[1]
    table.ok("shake_dice", DEALER, {"player": first})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [2, 2, 3, 4], "valid": True})
    for card in shuffled_deck(11):
        table.ok("card_read", SHOE, {"card": card})
    # No banker arranges or opens: every seat arranges within the five minutes.
    assert proc.phase == "PLAYERS_ARRANGING" and proc.deadline is not None
    for seat in seats:
        if seat != late:
            table.ok("player_arranged", DEALER, {"seat": seat})
    if late is not None:
        table.now = proc.deadline
        table.ok("timer_expired", SYSTEM)
    for seat in seats:
        if seat != late:
            table.ok("open_hand", DEALER, {"seat": seat})
            table.ok("enter_arrangement", DEALER, {"seat": seat, **_house(proc.seat_cards(seat),
                                                                          proc.rules)})  # fmt: skip
    table.ok("settle_round", DEALER)
    return proc


@pytest.mark.article("003", "way 3 scoring", "way 3 stakes", "way 3 shoot", "way 3 home run")
def test_hk_points_plays_four_seats_each_against_each_at_a_money_per_point() -> None:
    table = thirteen_table(ruleset="hk-points", stakes=Stakes(unit=10, currency="HKD"))
    seats = {0: "A", 1: "B", 2: "C", 3: "D"}
    proc = play_without_banker(table, seats)
    settled = proc.settlement or []
    assert [(e["seat"], e["player"]) for e in settled] == list(seats.items())
    hands = [
        tuple(" ".join(proc.arrangements[s][row]) for row in ("head", "middle", "tail"))
        for s in seats
    ]
    expected = rules13.table_points(hands, "hk-points")  # type: ignore[arg-type]
    assert [Fraction(e["points"]) for e in settled] == list(expected.points)
    # 1分×10元: each seat's money is its points at 10 HKD, to the cent toward zero; zero sum.
    nets = [Decimal(e["net"]) for e in settled]
    assert sum(nets) == 0
    for entry, points in zip(settled, expected.points, strict=True):
        assert abs(Decimal(entry["net"]) - Decimal(points.numerator * 10) / points.denominator) < 1


@pytest.mark.article("003", "way 3 stakes")
def test_the_pot_goes_to_the_highest_score() -> None:
    table = thirteen_table(
        ruleset="hk-points", rules={"stakes": "pot"}, stakes=Stakes(unit=10, currency="HKD")
    )
    proc = play_without_banker(table, {0: "A", 1: "B", 2: "C"}, units=3)
    settled = proc.settlement or []
    best = max(Fraction(e["points"]) for e in settled)
    winners = [e for e in settled if Fraction(e["points"]) == best]
    assert sum(Decimal(e["net"]) for e in settled) == 0
    assert sum(Decimal(e["net"]) for e in winners) == 90 - 30 * len(winners)
    for entry in settled:
        if entry not in winners:
            assert Decimal(entry["net"]) == -30


@pytest.mark.article("003", "way 2 four against each other", "way 3 scoring")
def test_hk_four_plays_way_two_each_against_each_and_a_late_seat_loses_to_all() -> None:
    table = thirteen_table(ruleset="hk-four")
    proc = play_without_banker(table, {0: "A", 1: "B", 2: "C", 3: "D"}, late=2)
    settled = {e["seat"]: e for e in proc.settlement or []}
    assert settled[2]["late"] and Decimal(settled[2]["net"]) < 0
    assert sum(Decimal(e["net"]) for e in settled.values()) == 0
    hands = [
        None if s == 2 else tuple(" ".join(proc.arrangements[s][r]) for r in ("head", "middle",
                                                                             "tail"))
        for s in range(4)
    ]  # fmt: skip
    points = rules13.table_points(hands, "hk-four").points  # type: ignore[arg-type]
    assert [Decimal(settled[s]["net"]) for s in range(4)] == [p * 100 for p in points]


@pytest.mark.article("003", "way 3 scoring", "way 3 stakes")
def test_without_a_banker_a_seat_is_one_players_and_two_seats_at_least_play() -> None:
    table = thirteen_table(ruleset="hk-points")
    thirteen_to_betting(table)
    bet = {"player": "A", "seat": 0, "units": 1, "seated": True}
    table.ok("place_bet", DEALER, bet)  # seat 0 is a player's: there is no banker
    assert refused_article(table, "place_bet", {**bet, "player": "B"}) == "003 way 3 scoring"
    assert refused_article(table, "shake_dice", {"player": "A"}) == "003 way 3 scoring"
    # 1分×元: a seat is taken with one unit; the points pay.
    two = {**bet, "player": "B", "seat": 1, "units": 2}
    assert refused_article(table, "place_bet", two) == "003 way 3 stakes"
    table.ok("place_bet", DEALER, {**two, "units": 1})
    # One seat a player: A cannot take seat 2 too, nor B move onto A's seat.
    assert refused_article(table, "place_bet", {**bet, "seat": 2}) == "003 way 3 scoring"
    move = {"player": "B", "from_seat": 1, "to_seat": 0}
    assert refused_article(table, "move_bet", move) == "003 way 3 scoring"
    table.ok("move_bet", DEALER, {**move, "to_seat": 3})
    table.ok("shake_dice", DEALER, {"player": "A"})
    # In a game with a banker, seat 0 is the banker's (Art. 3).
    macau = thirteen_table()
    thirteen_to_betting(macau)
    assert refused_article(macau, "place_bet", bet) == f"{ART} 3"


def test_a_checkpoint_keeps_the_settings_and_refuses_another_configuration() -> None:
    proc = thirteen(ruleset="hk-points", rules={"stakes": "pot"}, timer_in_hold="running")
    checkpoint = proc.checkpoint()
    assert checkpoint["config"]["settings"]["rules"] == {"stakes": "pot"}
    same = ThirteenProcedure(ruleset="hk-points", rules={"stakes": "pot"}, timer_in_hold="running")
    same.restore(checkpoint)
    with pytest.raises(ValueError):
        ThirteenProcedure(ruleset="hk-points").restore(checkpoint)
