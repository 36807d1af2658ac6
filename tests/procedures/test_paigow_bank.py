"""Portaria 15/90/M Art. 5(1)(2): the bank goes round the doors, one door after another in the
order the rule set states (counter-clockwise by default, the order of Art. 2(3)); the door that
held it does not keep it under another name; a guest offered it may decline and pass it on, as
the rule set says (to the next door, or to any door), to someone who has bet before. Each
refusal cites its article."""

from __future__ import annotations

from typing import Any

import pytest
from procedure_drive import (
    DEALER,
    Table,
    paigow_deal,
    paigow_open,
    paigow_set,
    paigow_shake,
    paigow_table,
    tile_groups,
)

from daemon.procedures.paigow import PaiGowProcedure
from daemon.rules import paigow

ART = "Portaria 15/90/M Art."


def proc(table: Table) -> PaiGowProcedure:
    assert isinstance(table.proc, PaiGowProcedure)
    return table.proc


def refusal(table: Table, action: str, payload: dict[str, Any]) -> tuple[str, str]:
    outcome = table.refused(action, DEALER, payload)
    assert outcome.violation is not None
    return outcome.violation.article, outcome.violation.reason


def hold_the_bank(table: Table, banker: str, seat: int, bettors: tuple[str, str]) -> None:
    """`banker` takes the bank at door `seat` and plays its two rounds, `bettors` betting on
    the two doors after it; the table is then offering the bank again."""
    table.ok("take_bank", DEALER, {"player": banker, "seat": seat})
    hands = proc(table).hands
    groups = tile_groups(seat)
    for n in range(2):
        if proc(table).phase == "SHUFFLE":
            table.ok("confirm_tile_shuffle", DEALER)
        table.ok("move_stacks", DEALER, {"by": "banker", "player": banker, "one_hand": True})
        for step, player in enumerate(bettors, start=1):
            bet = {"player": player, "seat": (seat + step) % hands, "amount": 100}
            table.ok("place_bet", DEALER, bet)
        table.ok("place_stake", DEALER, {"amount": max(proc(table).min_stake, 1000)})
        paigow_shake(table, banker=banker)
        paigow_deal(table)
        paigow_set(table)
        # Four hands: the second round plays the kept half of the set (Art. 2(4)).
        paigow_open(table, dict(enumerate(groups[4:] if hands == 4 and n else groups)))
        table.ok("settle_round", DEALER)
        table.ok("next_round", DEALER)
    assert proc(table).phase == "BANK_OFFER"


@pytest.mark.article("15/90/M", "5(1)")
def test_the_bank_passes_to_the_next_door_counter_clockwise_and_no_door_keeps_it() -> None:
    table = paigow_table()
    hold_the_bank(table, "B", 0, ("P1", "P2"))
    assert proc(table).snapshot()["bank_door"] == 1  # seats are numbered counter-clockwise
    passed = [e for e in table.outcomes[-1].events if e.name == "bank.passed"]
    assert passed[0].payload["door"] == 1
    # Out of order: door 3 is not next.
    art, reason = refusal(table, "take_bank", {"player": "C", "seat": 3})
    expected = "the bank passes counter-clockwise to door 1, not door 3"
    assert (art, reason) == (f"{ART} 5(1)", expected)
    # The same door under another name.
    art, reason = refusal(table, "take_bank", {"player": "C", "seat": 0})
    assert art == f"{ART} 5(1)" and reason.startswith("door 0 has just held the bank")
    # The same person at the next door.
    art, reason = refusal(table, "take_bank", {"player": "B", "seat": 1})
    assert art == f"{ART} 5(1)" and reason.startswith("B has just held the bank")
    assert proc(table).banker is None
    hold_the_bank(table, "C", 1, ("P1", "P2"))
    assert proc(table).snapshot()["bank_door"] == 2
    assert refusal(table, "take_bank", {"player": "D", "seat": 1})[0] == f"{ART} 5(1)"
    # B's door may have it again in its turn: only the door that just held it is passed over.
    table.ok("take_bank", DEALER, {"player": "D", "seat": 2})


@pytest.mark.article("15/90/M", "5(2)")
def test_a_guest_declining_passes_the_bank_to_the_next_door_and_one_who_has_bet_takes_it() -> None:
    table = paigow_table(hands=4)
    hold_the_bank(table, "B", 3, ("P1", "P2"))  # bets on doors 0 and 1
    assert proc(table).snapshot()["bank_door"] == 0  # after door 3, round the table
    art, reason = refusal(table, "decline_bank", {"player": "B"})
    assert art == f"{ART} 5(2)" and "just held the bank" in reason
    declined = table.ok("decline_bank", DEALER, {"player": "P1"})
    payload = declined.events[0].payload
    assert (payload["door"], payload["next_door"]) == (0, 1)
    # 「把庄交与下一人」: the next door's now, not the door that declined.
    art, reason = refusal(table, "take_bank", {"player": "P1", "seat": 0})
    assert art == f"{ART} 5(2)" and "to door 1, not door 0" in reason
    # 「但该人必须在此之前曾经投注」: who takes it has bet before.
    art, reason = refusal(table, "take_bank", {"player": "P9", "seat": 1})
    assert art == f"{ART} 5(2)" and "P9 has not" in reason
    table.ok("decline_bank", DEALER, {"player": "P2"})
    # Door 2, then past door 3 (the last bank's) to door 0 again.
    assert proc(table).snapshot()["bank_door"] == 2
    table.ok("decline_bank", DEALER, {"player": "P3"})
    assert proc(table).snapshot()["bank_door"] == 0
    taken = table.ok("take_bank", DEALER, {"player": "P2", "seat": 0})
    assert taken.events[0].payload["seat"] == 0
    assert proc(table).snapshot()["declined"] == []


@pytest.mark.article("15/90/M", "5(1)", "5(2)")
def test_a_rule_set_going_clockwise_and_passing_to_any_door(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rules = paigow.PaiGowRules(bank_order="clockwise", declined_bank_to="any-door")
    monkeypatch.setitem(paigow.RULESETS, "macau-1990", rules)
    table = paigow_table()
    hold_the_bank(table, "B", 0, ("P1", "P2"))
    assert proc(table).snapshot()["bank_door"] == 7  # clockwise: the door on the other side
    art, reason = refusal(table, "take_bank", {"player": "P1", "seat": 1})
    assert (art, reason) == (f"{ART} 5(1)", "the bank passes clockwise to door 7, not door 1")
    table.ok("decline_bank", DEALER, {"player": "P5"})
    assert proc(table).snapshot()["bank_door"] == 7  # any-door: the turn does not move on
    # Passed on, it may go to any door but the last bank's, to one who has bet before.
    assert refusal(table, "take_bank", {"player": "P2", "seat": 0})[0] == f"{ART} 5(1)"
    assert refusal(table, "take_bank", {"player": "P9", "seat": 4})[0] == f"{ART} 5(2)"
    table.ok("take_bank", DEALER, {"player": "P2", "seat": 4})
