"""Taiwan Pai Gow (Portaria 15/90/M): the legal path and each article's refusals."""

from __future__ import annotations

import pytest
from procedure_drive import (
    DEALER,
    Table,
    bad_setting,
    device,
    good_setting,
    paigow_betting,
    paigow_deal,
    paigow_open,
    paigow_play,
    paigow_round,
    paigow_set,
    paigow_shake,
    paigow_table,
    tile_groups,
)

from daemon.procedures.visibility import Seen, redact_state
from daemon.table.publish.views import console_snapshot

ART = "Portaria 15/90/M Art."


@pytest.mark.article("15/90/M", "2(3)", "5(3)", "6(3)")
def test_a_whole_round_is_settled_by_the_rules_engine() -> None:
    table = paigow_table()
    paigow_round(table)
    snap = table.proc.snapshot()
    assert snap["phase"] == "ROUND_OVER"
    settlement = snap["settlement"]
    assert [d["seat"] for d in settlement["doors"]] == settlement["order"]
    assert sorted(settlement["order"]) == [1, 2]
    assert {d["outcome"] for d in settlement["doors"]} <= {"banker", "player", "push"}
    # Art. 5(3): the bank wins or loses at most its stake.
    assert -1000 <= settlement["bank_result"] <= 1000
    names = [e.name for o in table.outcomes for e in o.events]
    for fact in ("bank.taken", "bets.closed", "dice.landed", "hand.set", "round.settled"):
        assert fact in names
    closed = next(e for o in table.outcomes for e in o.events if e.name == "bets.closed")
    assert closed.commit


@pytest.mark.article("15/90/M", "2(2)")
def test_the_dice_total_names_the_first_hand_from_the_banker() -> None:
    table = paigow_table()
    paigow_round(table)
    # 10 counted from the banker (as one) over eight doors reaches door 1 (Art. 2(2)).
    assert table.proc.snapshot()["first_hand"] == 1


@pytest.mark.article("15/90/M", "2(6)", "2(7)", "2(8)", "5(3)")
def test_bets_and_stacks_close_at_the_shake() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    table.ok("head_tiles_out", DEALER)
    table.ok("shake_dice", DEALER, {"player": "B"})
    for action, payload in (
        ("place_bet", {"player": "P3", "seat": 3, "amount": 10}),
        ("withdraw_bet", {"player": "P1", "seat": 1}),
        ("move_bet", {"player": "P1", "from_seat": 1, "to_seat": 4}),
        ("move_stacks", {"by": "player", "player": "P1", "one_hand": True}),
        ("place_stake", {"amount": 5000}),
    ):
        outcome = table.refused(action, DEALER, payload)
        assert outcome.violation is not None
        assert outcome.violation.article.startswith(ART)
        assert outcome.violation.phase == "SHAKING"


@pytest.mark.article("15/90/M", "2(2)", "5(3)")
def test_only_the_banker_shakes_after_the_stake() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    table.ok("place_bet", DEALER, {"player": "P1", "seat": 1, "amount": 100})
    no_stake = table.refused("shake_dice", DEALER, {"player": "B"})
    assert no_stake.violation is not None and no_stake.violation.article == f"{ART} 5(3)"
    table.ok("place_stake", DEALER, {"amount": 500})
    table.ok("head_tiles_out", DEALER)
    for_him = table.refused("shake_dice", DEALER, {"player": "P1"})
    assert for_him.violation is not None and for_him.violation.article == f"{ART} 2(2)"
    table.ok("shake_dice", DEALER, {"player": "B"})


@pytest.mark.article("15/90/M", "2(6)")
def test_stacks_two_players_one_hand_then_the_banker() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    move = "move_stacks"
    two_hands = table.refused(move, DEALER, {"by": "player", "player": "P1", "one_hand": False})
    assert two_hands.violation is not None and two_hands.violation.article == f"{ART} 2(6)"
    table.ok(move, DEALER, {"by": "player", "player": "P1", "one_hand": True})
    table.ok(move, DEALER, {"by": "player", "player": "P2", "one_hand": True})
    table.ok(move, DEALER, {"by": "player", "player": "P1", "one_hand": True})
    table.refused(move, DEALER, {"by": "player", "player": "P3", "one_hand": True})
    table.ok(move, DEALER, {"by": "banker", "player": "B", "one_hand": True})
    table.refused(move, DEALER, {"by": "player", "player": "P2", "one_hand": True})
    table.refused(move, DEALER, {"by": "banker", "player": "P2", "one_hand": True})


@pytest.mark.article("15/90/M", "2(2)", "2(5)")
def test_a_tilted_die_is_shaken_again_and_a_third_is_a_tilt() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    table.ok("head_tiles_out", DEALER)
    table.ok("shake_dice", DEALER, {"player": "B"})
    shaker = device("dice_shaker")
    # Art. 2(2): four dice of 1-6 name the first door; any other reading is refused.
    for wrong in ([1, 2, 3, 7], [1, 2, 3], [0, 2, 3, 4]):
        refused = table.refused("dice_landed", shaker, {"dice": wrong})
        assert refused.violation is not None and refused.violation.article == f"{ART} 2(2)"
    bad_die = table.refused("dice_landed", shaker, {"valid": False, "die": 9})
    assert bad_die.violation is not None and bad_die.violation.article == f"{ART} 2(5)"
    again = table.ok("dice_landed", shaker, {"dice": [1, 1, 1, 1], "valid": False, "reason": "t"})
    assert [c.command for c in again.commands] == ["shake"]
    assert table.proc.phase == "SHAKING"
    table.ok("dice_landed", shaker, {"dice": [1, 1, 1, 1], "valid": False})
    table.ok("dice_landed", shaker, {"dice": [1, 1, 1, 1], "valid": False})
    assert table.proc.phase == "TILT"
    table.ok("device_healthy", shaker, {"device": "dice_shaker"})
    table.ok("clear_tilt", "supervisor:S1", {})
    assert table.proc.phase == "SHAKING"
    assert table.proc.snapshot()["dice"] is None
    # The throw that stands names the first door: 10 counted from the banker's door 0.
    table.ok("dice_landed", shaker, {"dice": [2, 2, 3, 3]})
    assert table.proc.phase == "DEALING"
    assert table.proc.snapshot()["first_hand"] == 1


@pytest.mark.article("15/90/M", "6(2)")
def test_a_wrongly_set_hand_is_reset_by_the_croupier_before_settling() -> None:
    groups = next(g for seed in range(200) if bad_setting((g := tile_groups(seed))[1]) is not None)
    wrong = bad_setting(groups[1])
    assert wrong is not None
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    paigow_shake(table)
    paigow_deal(table)
    paigow_set(table)
    paigow_open(table, dict(enumerate(groups)), {1: wrong})
    opened = next(e for o in table.outcomes for e in o.events if e.name == "hands.opened")
    assert opened.payload["wrongly_set"] == [1]
    unsettled = table.refused("settle_round", DEALER)
    assert unsettled.violation is not None and unsettled.violation.article == f"{ART} 6(2)"
    table.refused("reset_hand", DEALER, {"seat": 1, **wrong})
    table.refused("reset_hand", DEALER, {"seat": 2, **good_setting(groups[2])})
    table.ok("reset_hand", DEALER, {"seat": 1, **good_setting(groups[1])})
    table.ok("settle_round", DEALER)


@pytest.mark.article("15/90/M", "4")
def test_a_tile_dealt_face_up_stays_valid_and_is_journaled() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    paigow_shake(table)  # 10: door 1 is dealt first
    not_yet = table.refused("tile_face_up", DEALER, {"seat": 3, "tile": "天牌"})
    assert not_yet.violation is not None and not_yet.violation.article == f"{ART} 4"
    shown = table.ok("tile_face_up", DEALER, {"seat": 1, "tile": "天牌"})
    assert shown.events[0].name == "tile.face_up" and shown.events[0].payload["tile"] == "6-6"
    refused = table.refused("tile_face_up", DEALER, {"seat": 1, "tile": "天牌 地牌"})
    assert refused.violation is not None and refused.violation.article == f"{ART} 4"
    paigow_deal(table)
    assert table.proc.snapshot()["face_up"] == [{"seat": 1, "tile": "6-6", "by_name": True}]


@pytest.mark.article("15/90/M", "1(1)")
def test_tiles_beyond_one_set_are_refused() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    paigow_shake(table)
    paigow_deal(table)
    paigow_set(table)
    table.ok("open_hand", DEALER, {"seat": 0, "front": "4-5 3-6", "back": "6-6 6-6"})
    table.refused("open_hand", DEALER, {"seat": 1, "front": "1-2 2-4", "back": "6-6 1-1"})
    table.refused("open_hand", DEALER, {"seat": 1, "front": "1-2 2-4 1-1", "back": "1-1"})
    table.ok("open_hand", DEALER, {"seat": 1, "front": "1-2 2-4", "back": "1-1 1-1"})
    table.refused("open_hand", DEALER, {"seat": 2, "front": "1-3 1-3", "back": "1-1 5-5"})


@pytest.mark.article("15/90/M", "3(2)", "5(1)", "5(2)", "5(4)")
def test_the_bank_passes_after_two_rounds_unless_every_door_agrees() -> None:
    table = paigow_table()
    paigow_round(table, seed=0)
    carried = table.proc.snapshot()["settlement"]["banker_carried"]
    table.ok("next_round", DEALER)
    assert table.proc.phase == "SHUFFLE"
    table.ok("confirm_tile_shuffle", DEALER)
    if carried > 1:
        low = table.refused("place_stake", DEALER, {"amount": carried - 1})
        assert low.violation is not None and low.violation.article == f"{ART} 5(4)"
    paigow_play(table, tile_groups(1), stake=max(carried, 1))
    table.refused("extend_bank", DEALER, {"consents": ["P1"]})
    table.ok("extend_bank", DEALER, {"consents": ["P1", "P2"]})
    table.ok("next_round", DEALER)
    assert table.proc.snapshot()["banker"] == "B"
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_play(table, tile_groups(2), stake=max(table.proc.snapshot()["min_stake"], 1))
    table.ok("next_round", DEALER)
    assert table.proc.phase == "BANK_OFFER"
    again = table.refused("take_bank", DEALER, {"player": "B", "seat": 0})
    assert again.violation is not None and again.violation.article == f"{ART} 5(1)"
    table.ok("decline_bank", DEALER, {"player": "P1"})
    never_bet = table.refused("take_bank", DEALER, {"player": "P9", "seat": 2})
    assert never_bet.violation is not None and never_bet.violation.article == f"{ART} 5(2)"
    table.ok("take_bank", DEALER, {"player": "P2", "seat": 2})
    table.ok("confirm_tile_shuffle", DEALER)
    banker_door = table.refused("place_bet", DEALER, {"player": "P1", "seat": 2, "amount": 5})
    assert banker_door.violation is not None


@pytest.mark.article("15/90/M", "1(1)", "2(4)", "3(1)")
def test_four_hands_keep_the_other_half_for_the_next_round() -> None:
    table = paigow_table(hands=4)
    groups = tile_groups(3)
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_play(table, groups)
    shown = [e for o in table.outcomes for e in o.events if e.name == "tiles.shown_face_up"]
    assert len(shown) == 1 and len(shown[0].payload["tiles"]) == 12
    table.ok("next_round", DEALER)
    assert table.proc.phase == "BETTING"  # no shuffle: the kept hands are dealt
    # The first half's tiles lie face up for everyone: the table's audience is served them,
    # in the state and in the record that showed them.
    used = table.proc.snapshot()["used_tiles"]
    assert sorted(used) == sorted(shown[0].payload["tiles"])
    assert redact_state("paigow", table.proc.snapshot(), "dealer")["used_tiles"] == used
    record = {"round": 1, "event": "tiles.shown_face_up", "payload": dict(shown[0].payload)}
    assert Seen("paigow").redact(record, "dealer")["payload"]["tiles"] == used
    stake = max(table.proc.snapshot()["min_stake"], 1)
    paigow_betting(table, stake)
    paigow_shake(table)
    paigow_deal(table)
    paigow_set(table)
    # A tile used in the first half cannot come back in the second.
    reused = groups[1]
    refused = table.refused("open_hand", DEALER, {"seat": 0, **good_setting(reused)})
    assert refused.violation is not None
    paigow_open(table, {0: groups[6], 1: groups[4], 2: groups[5]})
    # The console's table, as a dealer is served it: each hand of the second half is open
    # from its opening, by Pai Gow's rule.
    view = console_snapshot(table.proc.snapshot(), now=table.now, wall_now=1_796_000_000.0)
    served = redact_state("paigow", view, "dealer")
    for seat, group in ((0, groups[6]), (1, groups[4]), (2, groups[5])):
        assert sorted(served["seats"][seat]["cards"]) == sorted(group), seat
    table.ok("settle_round", DEALER)
    table.ok("next_round", DEALER)
    assert table.proc.phase == "BANK_OFFER"


def test_unknown_actions_and_wrong_roles_are_violations_not_exceptions() -> None:
    table: Table = paigow_table()
    unknown = table.refused("deal_extra_tiles", DEALER, {})
    assert unknown.violation is not None and unknown.violation.article.startswith("tabled H2")
    by_device = table.refused("take_bank", device("dice_shaker"), {"player": "B", "seat": 0})
    assert by_device.violation is not None and by_device.violation.article.startswith("tabled")
    malformed = table.refused("take_bank", DEALER, {"player": ["B"], "seat": "zero"})
    assert malformed.violation is not None and malformed.violation.article == f"{ART} 5(1)"


def test_a_name_shared_by_two_faces_resolves_to_both_across_front_and_back() -> None:
    # 杂九 names both 4-5 and 3-6: once in front and once behind, it is the two different nines.
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    paigow_shake(table)
    paigow_deal(table)
    paigow_set(table)
    table.ok("open_hand", DEALER, {"seat": 0, "front": "杂九 地牌", "back": "杂九 天牌"})
    set_event = next(e for o in table.outcomes for e in o.events if e.name == "hand.opened")
    assert sorted([*set_event.payload["front"], *set_event.payload["back"]]) == sorted(
        ["3-6", "4-5", "1-1", "6-6"]
    )
