"""Game protection in the procedure (issue 9): a device reports only its own facts; a void of
the deal needs a misdeal on record and two supervisors; while a void waits for the second
supervisor, the round does not move; a foreign card takes the deck out of play."""

from __future__ import annotations

from typing import Any

import pytest
from procedure_drive import (
    DEALER,
    SUPERVISOR,
    at_phase,
    device,
    shuffled_deck,
    thirteen_bets,
    thirteen_deal,
    thirteen_table,
    thirteen_to_betting,
)

from daemon.procedures.common import DEVICE_FACT_FIELDS, HOUSE_DEVICE, HOUSE_VOID

SECOND = "supervisor:S2"
ART_4 = "Portaria 51/89/M Art. 4"
SHOE = device("shoe_reader")


@pytest.mark.parametrize(
    ("action", "actor", "payload", "phase"),
    [
        ("dice_landed", SHOE, {"dice": [1, 2, 3, 4]}, "SHAKING"),
        ("card_read", device("dice_shaker"), {"card": "As"}, "DEALING"),
        ("shuffle_completed", SHOE, {"count": 52, "mode": "random"}, "MACHINE_SHUFFLE"),
        ("device_healthy", SHOE, {"device": "dice_shaker"}, "HOLD"),
        ("fault_reported", SHOE, {"device": "shuffler", "fault": "jam"}, "DEALING"),
        ("door_opened", SHOE, {"device": "dice_shaker", "fault": "lid"}, "BETTING"),
        ("link_lost", SHOE, {"device": "dice_shaker"}, "BETTING"),
        ("card_read", "device", {"card": "As"}, "DEALING"),
    ],
)
def test_a_device_reports_only_its_own_facts(
    action: str, actor: str, payload: dict[str, Any], phase: str, prefixes: dict[str, Any]
) -> None:
    table = at_phase("thirteen", phase, prefixes)
    if phase == "HOLD":
        assert table.proc.faults  # held by a device whose health only it reports
    refused = table.refused(action, actor, payload)
    assert refused.violation is not None and refused.violation.article == HOUSE_DEVICE


@pytest.mark.parametrize(
    ("action", "actor", "payload", "phase"),
    [
        # A card read that claims where its card went: the procedure decides that, not the shoe.
        ("card_read", SHOE, {"card": "As", "face_up": False, "index": 1, "seat": 1}, "DEALING"),
        ("dice_landed", device("dice_shaker"), {"dice": [1, 2, 3, 4], "valid": True,
                                                "note": "x" * 4096}, "SHAKING"),
        ("shuffle_completed", device("shuffler"), {"count": 52, "mode": "random",
                                                   "order": ["As"]}, "MACHINE_SHUFFLE"),
        ("fault_reported", SHOE, {"device": "shoe_reader", "fault": "jam", "cards": "Kd"},
         "DEALING"),
    ],
)  # fmt: skip
def test_a_device_fact_carries_only_its_declared_fields(
    action: str, actor: str, payload: dict[str, Any], phase: str, prefixes: dict[str, Any]
) -> None:
    table = at_phase("thirteen", phase, prefixes)
    refused = table.refused(action, actor, payload)
    assert refused.violation is not None and refused.violation.article == HOUSE_DEVICE
    extra = sorted(set(payload) - DEVICE_FACT_FIELDS[action])
    assert refused.violation.reason.startswith(f"{action} carries no field {extra[0]}")
    assert extra[0] in refused.violation.reason_zh
    del payload[extra[0]]
    if action != "fault_reported":  # the same fact without it is taken
        table.ok(action, actor, payload)


def _arranged(deck: list[str]) -> Any:
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)
    thirteen_deal(table, deck)
    table.ok("arrange_banker", DEALER)
    assert table.proc.phase == "BANKER_ARRANGED"
    return table


@pytest.mark.article("51/89/M", "4")
def test_the_deal_is_not_voided_without_a_misdeal_on_record() -> None:
    """Issue 9: `void_deal` was accepted after the banker arranged, with no misdeal at all."""
    table = _arranged(shuffled_deck(5))
    refused = table.refused("void_deal", SUPERVISOR, {"reason": "the banker's hand looks bad"})
    assert refused.violation is not None and refused.violation.article == ART_4
    assert "void_deal" not in table.proc.legal_actions("supervisor")


@pytest.mark.article("51/89/M", "4")
def test_a_void_of_the_deal_is_two_supervisors_and_the_round_waits_for_them() -> None:
    table = thirteen_table()
    deck = shuffled_deck(8)
    thirteen_to_betting(table)
    thirteen_bets(table)
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [1, 2, 3, 4]})
    for card in deck[:7]:
        table.ok("card_read", SHOE, {"card": card})
    # A card drawn with no read (the reader's events lost): a misdeal on record.
    table.ok("fault_reported", SHOE, {"device": "shoe_reader", "fault": "2 device event(s) missed"})
    table.ok("device_healthy", SHOE, {"device": "shoe_reader"})
    table.ok("clear_tilt", SUPERVISOR, {"reason": "reader checked"})
    assert "void_deal" in table.proc.legal_actions("supervisor")
    table.refused("void_deal", SUPERVISOR, {})  # a reason, always
    proposed = table.ok("void_deal", SUPERVISOR, {"reason": "a card went unread"})
    assert proposed.events[0].name == "override.proposed"
    assert proposed.events[0].payload["misdeal"] == "2 device event(s) missed"
    # Nothing of the round moves while the void waits: not the dealer, not the reader.
    for action, actor, payload in (
        ("card_read", SHOE, {"card": deck[7]}),
        ("correct_misdeal", DEALER, {"cards": [deck[0]]}),
        ("void_deal", SECOND, {"reason": "again"}),
    ):
        refused = table.refused(action, actor, payload)
        assert refused.violation is not None
        assert refused.violation.article in (HOUSE_VOID, ART_4)
    table.refused("approve_override", SUPERVISOR, {"reason": "my own"})
    table.refused("approve_override", "dealer:D1", {"reason": "a dealer"})
    approved = table.ok("approve_override", SECOND, {"reason": "seen on camera"})
    voided = approved.events[1]
    assert voided.name == "deal.voided"
    assert (voided.payload["proposed_by"], voided.payload["approved_by"]) == (SUPERVISOR, SECOND)
    assert (voided.payload["reason"], voided.payload["approval_reason"]) == (
        "a card went unread",
        "seen on camera",
    )
    assert table.proc.phase == "HAND_SHUFFLE"
    # The new deal has no misdeal on record.
    thirteen_to_betting(table)
    assert table.proc.phase == "DEALING"
    assert "void_deal" not in table.proc.legal_actions("supervisor")


@pytest.mark.article("51/89/M", "4")
def test_a_rejected_void_leaves_the_deal_as_it_was() -> None:
    table = thirteen_table()
    deck = shuffled_deck(9)
    thirteen_to_betting(table)
    thirteen_bets(table)
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [1, 2, 3, 4]})
    for card in deck[:3]:
        table.ok("card_read", SHOE, {"card": card})
    table.ok("card_read", SHOE, {"card": deck[0]})  # a duplicate: TILT, a misdeal on record
    table.ok("device_healthy", SHOE, {"device": "shoe_reader"})
    table.ok("clear_tilt", SUPERVISOR, {"reason": "reader checked"})
    before = table.proc.snapshot()
    table.ok("void_deal", SUPERVISOR, {"reason": "duplicate"})
    table.refused("reject_override", SUPERVISOR, {"reason": "mine"})
    table.ok("reject_override", SECOND, {"reason": "a second deck card was found and removed"})
    assert table.proc.snapshot() == before


@pytest.mark.article("51/89/M", "1(a)", "2(a)")
@pytest.mark.parametrize("odd", [{"foreign": 1}, {"unreadable": 1}])
def test_a_shuffle_of_52_with_a_foreign_or_unreadable_card_is_out_of_play(
    odd: dict[str, int],
) -> None:
    table = thirteen_table()
    table.ok("confirm_hand_shuffle", DEALER)
    table.ok("shuffle_completed", device("shuffler"), {"count": 52, "mode": "random", **odd})
    assert table.proc.phase == "TILT"
    assert table.proc.snapshot()["shuffle"]["good"] is False
    table.ok("device_healthy", device("shuffler"), {"device": "shuffler"})
    table.ok("clear_tilt", SUPERVISOR, {"reason": "deck replaced"})
    assert table.proc.phase == "HAND_SHUFFLE"
    table.refused(
        "shuffle_completed", device("shuffler"), {"count": 52, "mode": "random", "foreign": -1}
    )
