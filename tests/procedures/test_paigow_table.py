"""Taiwan Pai Gow (Portaria 15/90/M) at the table: each rule set played, co-banking, the deal's
order, the head tiles before the dice, hands set face down and opened by the croupier, a face-up
tile held by the hand opened, the bank passed at the same door, a new tile set, and the
settlement's order with the banker away from seat 0."""

from __future__ import annotations

from typing import Any

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
    paigow_set,
    paigow_shake,
    paigow_table,
    tile_groups,
)

from daemon.procedures.paigow import PaiGowProcedure
from daemon.rules import paigow

ART = "Portaria 15/90/M Art."


def events(table: Table, name: str) -> list[dict[str, Any]]:
    return [bare(e.payload) for o in table.outcomes for e in o.events if e.name == name]


def bare(payload: dict[str, Any]) -> dict[str, Any]:
    """An event's own fields, without what every event carries (round, actor, action)."""
    return {k: v for k, v in payload.items() if k not in ("round", "actor", "action")}


def article(outcome: Any) -> str:
    assert outcome.violation is not None
    return str(outcome.violation.article)


def both_bad() -> list[list[str]]:
    """A shuffle where the banker's four tiles and door 1's both allow a wrong setting."""
    return next(
        g
        for seed in range(500)
        if bad_setting((g := tile_groups(seed))[0]) is not None and bad_setting(g[1]) is not None
    )


def to_opening(table: Table, ruleset_groups: list[list[str]]) -> None:
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    paigow_shake(table)
    paigow_deal(table)
    paigow_set(table)


# ---- the rule sets at the table (Art. 6(2)) -------------------------------------------------


@pytest.mark.article("15/90/M", "6(2)")
def test_macau_1990_resets_the_player_and_lets_the_banker_set_freely() -> None:
    groups = both_bad()
    table = paigow_table(ruleset="macau-1990")
    to_opening(table, groups)
    wrong = {0: bad_setting(groups[0]), 1: bad_setting(groups[1])}
    paigow_open(table, dict(enumerate(groups)), {k: v for k, v in wrong.items() if v})
    assert events(table, "hands.opened")[0]["wrongly_set"] == [1]
    refused = table.refused("reset_hand", DEALER, {"seat": 0, **good_setting(groups[0])})
    assert article(refused) == f"{ART} 6(2)"
    assert article(table.refused("settle_round", DEALER)) == f"{ART} 6(2)"
    table.ok("reset_hand", DEALER, {"seat": 1, **good_setting(groups[1])})
    table.ok("settle_round", DEALER)
    settlement = table.proc.snapshot()["settlement"]
    # The banker's hand stands as set (opened smaller pair first), not re-set by the engine.
    banker = settlement["banker_hand"]
    assert sorted(banker["front"] + banker["back"]) == sorted(
        str(t) for t in paigow.parse_tiles(" ".join(groups[0]))
    )
    assert paigow.correct_setting(
        (
            tuple(paigow.parse_tiles(" ".join(banker["front"]))),  # type: ignore[arg-type]
            tuple(paigow.parse_tiles(" ".join(banker["back"]))),  # type: ignore[arg-type]
        )
    ).correction == ("back_not_largest")


@pytest.mark.article("15/90/M", "6(2)")
def test_banker_corrected_has_the_croupier_reset_the_bankers_hand_with_an_event() -> None:
    groups = both_bad()
    table = paigow_table(ruleset="macau-1990-banker-corrected")
    to_opening(table, groups)
    wrong = {0: bad_setting(groups[0]), 1: bad_setting(groups[1])}
    paigow_open(table, dict(enumerate(groups)), {k: v for k, v in wrong.items() if v})
    assert events(table, "hands.opened")[0]["wrongly_set"] == [0, 1]
    table.ok("reset_hand", DEALER, {"seat": 1, **good_setting(groups[1])})
    assert article(table.refused("settle_round", DEALER)) == f"{ART} 6(2)"
    still_wrong = table.refused("reset_hand", DEALER, {"seat": 0, **(wrong[0] or {})})
    assert article(still_wrong) == f"{ART} 6(2)"
    reset = table.ok("reset_hand", DEALER, {"seat": 0, **good_setting(groups[0])})
    event = reset.events[0]
    assert event.name == "hand.reset" and event.payload["banker"] is True
    assert event.payload["before"] == table.proc.snapshot()["resets"][-1]["before"]
    table.ok("settle_round", DEALER)
    settlement = table.proc.snapshot()["settlement"]
    assert settlement["banker_hand"] == {
        "front": good_setting(groups[0])["front"].split(),
        "back": good_setting(groups[0])["back"].split(),
    }


@pytest.mark.article("15/90/M", "6(2)")
def test_free_setting_settles_a_hand_without_its_largest_back_pair() -> None:
    groups = both_bad()
    table = paigow_table(ruleset="macau-1990-free-setting")
    to_opening(table, groups)
    wrong = bad_setting(groups[1])
    assert wrong is not None
    paigow_open(table, dict(enumerate(groups)), {1: wrong})
    assert events(table, "hands.opened")[0]["wrongly_set"] == []
    refused = table.refused("reset_hand", DEALER, {"seat": 1, **good_setting(groups[1])})
    assert article(refused) == f"{ART} 6(2)"
    table.ok("settle_round", DEALER)
    door = table.proc.snapshot()["settlement"]["doors"][0]
    assert door["seat"] == 1 and door["correction"] != "back_not_largest"
    assert sorted([door["front"], door["back"]]) == sorted(
        [wrong["front"].split(), wrong["back"].split()]
    )


# ---- Art. 6(1)-(2): set face down, opened by the croupier -------------------------------------


@pytest.mark.article("15/90/M", "6(1)", "6(2)")
def test_hands_are_set_face_down_and_their_tiles_enter_only_when_opened() -> None:
    groups = tile_groups(4)
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    paigow_shake(table)
    paigow_deal(table)
    with_tiles = table.refused("set_hand", DEALER, {"seat": 1, **good_setting(groups[1])})
    assert article(with_tiles) == f"{ART} 6(1)"
    set_event = table.ok("set_hand", DEALER, {"seat": 1}).events[0]
    assert bare(set_event.payload) == {"seat": 1, "holder": "P1"}
    early = table.refused("set_banker", DEALER)  # door 2 has not set
    assert early.violation is not None
    table.ok("set_hand", DEALER, {"seat": 2})
    table.ok("set_banker", DEALER)
    snap = table.proc.snapshot()
    assert [s["setting"] for s in snap["seats"]] == [None] * 8
    assert [s["seat"] for s in snap["seats"] if s["set"]] == [0, 1, 2]
    # The banker's hand is opened first, then the doors from 头门 counter-clockwise.
    door_first = table.refused("open_hand", DEALER, {"seat": 1, **good_setting(groups[1])})
    assert article(door_first) == f"{ART} 6(2)"
    paigow_open(table, dict(enumerate(groups)))
    assert [e["seat"] for e in events(table, "hand.opened")] == [0, 1, 2]
    assert table.proc.phase == "OPENED"


@pytest.mark.article("15/90/M", "6(2)")
def test_a_house_may_open_the_doors_before_the_bankers_hand(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = paigow_table()
    proc = table.proc
    assert isinstance(proc, PaiGowProcedure)
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    paigow_shake(table)
    assert proc.opening_order() == [0, 1, 2]
    house = paigow.PaiGowRules(banker_opened_first=False)
    monkeypatch.setitem(paigow.RULESETS, "macau-1990", house)
    assert proc.opening_order() == [1, 2, 0]
    groups = tile_groups(2)
    paigow_deal(table)
    paigow_set(table)
    banker_first = table.refused("open_hand", DEALER, {"seat": 0, **good_setting(groups[0])})
    assert article(banker_first) == f"{ART} 6(2)"
    paigow_open(table, dict(enumerate(groups)))
    assert [e["seat"] for e in events(table, "hand.opened")] == [1, 2, 0]


# ---- Art. 4 and issue 9: a face-up tile is held by the hand opened there ----------------------


@pytest.mark.article("15/90/M", "4")
def test_a_face_up_tile_must_be_in_the_hand_opened_at_its_door() -> None:
    groups = tile_groups(6)
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    paigow_shake(table)  # 10: door 1 first
    shown = paigow.parse_tiles(groups[1][0])[0]
    # Named by its pips: that very face; by its name: either face of the name.
    table.ok("tile_face_up", DEALER, {"seat": 1, "tile": str(shown)})
    table.ok("deal_hand", DEALER, {"seat": 1})
    table.ok("tile_face_up", DEALER, {"seat": 2, "tile": paigow.parse_tiles(groups[2][0])[0].name})
    paigow_deal(table)
    paigow_set(table)
    table.ok("open_hand", DEALER, {"seat": 0, **good_setting(groups[0])})
    other = next(t for t in groups[3] if paigow.parse_tiles(t)[0].name != shown.name)
    lacking = [t for t in groups[1] if t != groups[1][0]] + [other]
    swapped = table.refused(
        "open_hand",
        DEALER,
        {"seat": 1, "front": " ".join(lacking[:2]), "back": " ".join(lacking[2:])},
    )
    assert article(swapped) == f"{ART} 4"
    assert "face up" in swapped.violation.reason  # type: ignore[union-attr]
    table.ok("open_hand", DEALER, {"seat": 1, **good_setting(groups[1])})
    table.ok("open_hand", DEALER, {"seat": 2, **good_setting(groups[2])})
    table.ok("settle_round", DEALER)


# ---- Art. 2(3): the deal runs counter-clockwise from the door the dice name --------------------


@pytest.mark.article("15/90/M", "2(2)", "2(3)")
def test_the_deal_runs_counter_clockwise_from_the_door_the_dice_name() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 3})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    paigow_shake(table, dice=[1, 2, 3, 6])  # 12 from the banker (door 3) as one: door 6
    proc = table.proc
    assert isinstance(proc, PaiGowProcedure)
    assert proc.deal_order() == [6, 7, 0, 1, 2, 3, 4, 5]
    skipped = table.refused("deal_hand", DEALER, {"seat": 7 - 1 + 2})
    assert article(skipped) == f"{ART} 2(3)"
    clockwise = table.refused("deal_hand", DEALER, {"seat": 5})
    assert article(clockwise) == f"{ART} 2(3)"
    for seat in (6, 7, 0, 1, 2, 3, 4):
        table.ok("deal_hand", DEALER, {"seat": seat})
        assert proc.phase == "DEALING"
    table.ok("deal_hand", DEALER, {"seat": 5})
    assert proc.phase == "SETTING"
    assert [e["seat"] for e in events(table, "hand.dealt")] == [6, 7, 0, 1, 2, 3, 4, 5]
    assert events(table, "tiles.dealt") == [{"hands": 8, "first_hand": 6}]


@pytest.mark.article("15/90/M", "2(2)")
def test_when_the_banker_takes_the_first_tiles_the_next_door_is_the_first_hand() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    paigow_shake(table, dice=[1, 2, 3, 3])  # 9 comes back to the banker
    proc = table.proc
    assert isinstance(proc, PaiGowProcedure)
    assert proc.deal_order()[0] == 0
    assert proc.door_seats() == [1, 2]  # 头门 is the door on the banker's right


# ---- Art. 5(3): the stake, the head tiles out, then the dice ----------------------------------


@pytest.mark.article("15/90/M", "5(3)")
def test_the_head_tiles_go_out_after_the_stake_and_before_the_dice() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    table.ok("move_stacks", DEALER, {"by": "player", "player": "P1", "one_hand": True})
    table.ok("place_bet", DEALER, {"player": "P1", "seat": 1, "amount": 100})
    assert article(table.refused("head_tiles_out", DEALER)) == f"{ART} 5(3)"
    table.ok("place_stake", DEALER, {"amount": 500})
    assert article(table.refused("shake_dice", DEALER, {"player": "B"})) == f"{ART} 5(3)"
    out = table.ok("head_tiles_out", DEALER)
    assert out.events[0].name == "tiles.head_out"
    assert article(table.refused("head_tiles_out", DEALER)) == f"{ART} 5(3)"
    moved = table.refused("move_stacks", DEALER, {"by": "banker", "player": "B", "one_hand": True})
    assert article(moved) == f"{ART} 5(3)"
    table.ok("place_bet", DEALER, {"player": "P2", "seat": 2, "amount": 50})  # bets: until the dice
    table.ok("shake_dice", DEALER, {"player": "B"})


# ---- Art. 5(5): co-banking --------------------------------------------------------------------

# Every door holds two 宝 (both pairs beat a hand of no pair); the banker's tiles pair nothing.
WINNING = {
    3: ["6-6", "6-6", "1-1", "1-1"],
    6: ["4-4", "4-4", "1-3", "1-3"],
    0: ["5-5", "5-5", "3-3", "3-3"],
}
BANKER = ["1-2", "1-4", "3-4", "2-6"]


def away_from_seat_0(table: Table, stake: int, co: list[dict[str, Any]] | None = None) -> None:
    """The banker at seat 5; bets on doors 0, 3 and 6, 100 each; the doors all win."""
    table.ok("take_bank", DEALER, {"player": "B", "seat": 5})
    table.ok("confirm_tile_shuffle", DEALER)
    for player, seat in (("P1", 0), ("P2", 3), ("P3", 6)):
        table.ok("place_bet", DEALER, {"player": player, "seat": seat, "amount": 100})
    table.ok("place_stake", DEALER, {"amount": stake})
    for share in co or []:
        table.ok("co_bank", DEALER, share)
    paigow_shake(table, dice=[1, 1, 1, 2])  # 5 from door 5 as one: door 1 takes the first tiles
    paigow_deal(table)
    paigow_set(table)
    paigow_open(table, {5: BANKER, **WINNING})
    table.ok("settle_round", DEALER)


@pytest.mark.article("15/90/M", "2(3)", "5(3)")
def test_with_the_banker_at_seat_5_the_doors_settle_counter_clockwise_from_the_first_hand() -> None:
    table = paigow_table()
    away_from_seat_0(table, stake=150)
    settlement = table.proc.snapshot()["settlement"]
    # 头门 is door 1 (no bet); then 2, 3, 4, 6, 7, 0: the doors played settle 3, 6, 0.
    assert settlement["order"] == [3, 6, 0]
    assert [d["outcome"] for d in settlement["doors"]] == ["player"] * 3
    # The stake of 150 pays the first door in full, the second in part, the third nothing.
    assert [d["won"] for d in settlement["doors"]] == [100, 50, 0]
    assert [d["limited"] for d in settlement["doors"]] == [False, True, True]
    assert settlement["bank_result"] == -150


@pytest.mark.article("15/90/M", "5(5)")
def test_co_bankers_join_the_bank_the_main_banker_first() -> None:
    table = paigow_table()
    co = [
        {"player": "P9", "amount": 100},
        {"player": "house", "amount": 100, "house": True},
    ]
    away_from_seat_0(table, stake=150, co=co)
    settlement = table.proc.snapshot()["settlement"]
    assert settlement["bank_stake"] == 350
    assert [d["won"] for d in settlement["doors"]] == [100, 100, 100]
    assert settlement["bank_result"] == -300
    # 正庄先行: the main banker's 150 is lost first, then P9's 100, then 50 of the house's.
    assert settlement["banker_net"] == -150
    assert [(c["player"], c["result"], c["house"]) for c in settlement["co_bankers"]] == [
        ("P9", -100, False),
        ("house", -50, True),
    ]
    closed = events(table, "bets.closed")[0]
    assert [c["player"] for c in closed["co_bankers"]] == ["P9", "house"]


@pytest.mark.article("15/90/M", "5(5)")
def test_a_co_banker_bets_on_no_door_and_the_banker_does_not_co_bank() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    table.ok("place_bet", DEALER, {"player": "P1", "seat": 1, "amount": 100})
    bettor = table.refused("co_bank", DEALER, {"player": "P1", "amount": 100})
    assert article(bettor) == f"{ART} 5(5)"
    banker = table.refused("co_bank", DEALER, {"player": "B", "amount": 100})
    assert article(banker) == f"{ART} 5(5)"
    table.ok("co_bank", DEALER, {"player": "P4", "amount": 200})
    twice = table.refused("co_bank", DEALER, {"player": "P4", "amount": 300})
    assert article(twice) == f"{ART} 5(5)"
    then_bets = table.refused("place_bet", DEALER, {"player": "P4", "seat": 2, "amount": 10})
    assert article(then_bets) == f"{ART} 5(5)"
    table.ok("place_stake", DEALER, {"amount": 500})
    table.ok("head_tiles_out", DEALER)
    table.ok("shake_dice", DEALER, {"player": "B"})
    late = table.refused("co_bank", DEALER, {"player": "P5", "amount": 100})
    assert article(late) == f"{ART} 5(5)"


# ---- Art. 5(1)-(2): the bank passed, the consents of every guest -------------------------------


@pytest.mark.article("15/90/M", "5(1)", "5(2)")
def test_the_bank_passes_to_the_next_door_and_consents_are_by_guest() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    # P1 and P3 both bet on door 1, P2 on door 2.
    table.ok("move_stacks", DEALER, {"by": "player", "player": "P1", "one_hand": True})
    table.ok("place_bet", DEALER, {"player": "P3", "seat": 1, "amount": 20})
    paigow_play(table, tile_groups(8))
    table.ok("next_round", DEALER)
    table.ok("confirm_tile_shuffle", DEALER)
    stake = max(table.proc.snapshot()["min_stake"], 1)
    table.ok("place_bet", DEALER, {"player": "P3", "seat": 1, "amount": 20})
    paigow_play(table, tile_groups(9), stake=stake)
    # One voice a door is not enough: P3 bets on door 1 beside P1 and must agree too.
    one_a_door = table.refused("extend_bank", DEALER, {"consents": ["P1", "P2"]})
    assert article(one_a_door) == f"{ART} 5(1)"
    assert "P3" in one_a_door.violation.reason  # type: ignore[union-attr]
    table.ok("next_round", DEALER)
    assert table.proc.phase == "BANK_OFFER"
    again = table.refused("take_bank", DEALER, {"player": "B", "seat": 0})
    assert article(again) == f"{ART} 5(1)"
    # The same door does not keep it under another name (issue 26).
    same_door = table.refused("take_bank", DEALER, {"player": "P3", "seat": 0})
    assert article(same_door) == f"{ART} 5(1)"
    table.ok("decline_bank", DEALER, {"player": "P1"})  # door 1's turn, declined: door 2's
    never_bet = table.refused("take_bank", DEALER, {"player": "P8", "seat": 2})
    assert article(never_bet) == f"{ART} 5(2)"
    # 「交与下一人」: the next door's guest, who has bet before, takes it.
    taken = table.ok("take_bank", DEALER, {"player": "P3", "seat": 2})
    assert bare(taken.events[0].payload) == {"player": "P3", "seat": 2}
    assert table.proc.snapshot()["banker"] == "P3"


# ---- Art. 2(1): a new set -------------------------------------------------------------------


@pytest.mark.article("15/90/M", "1(1)", "2(1)", "2(4)")
def test_a_new_set_is_journaled_and_the_set_check_starts_again_with_it() -> None:
    table = paigow_table(hands=4)
    groups = tile_groups(3)
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    shuffled = table.ok("confirm_tile_shuffle", DEALER, {"new_set": False})
    assert bare(shuffled.events[0].payload) == {"new_set": False}
    paigow_play(table, groups)
    table.ok("next_round", DEALER)  # four hands: the kept half, no shuffle
    stake = max(table.proc.snapshot()["min_stake"], 1)
    paigow_play(table, [groups[4], groups[5], groups[6], groups[7]], stake=stake)
    table.ok("next_round", DEALER)
    table.ok("decline_bank", DEALER, {"player": "P1"})  # door 1's turn, declined: door 2's
    table.ok("take_bank", DEALER, {"player": "P2", "seat": 2})
    new = table.ok("confirm_tile_shuffle", DEALER, {"new_set": True})
    assert bare(new.events[0].payload) == {"new_set": True}
    snap = table.proc.snapshot()
    assert (snap["set_number"], snap["new_sets"], snap["used_tiles"]) == (2, 1, [])
    # The first round's tiles are all in the new set again.
    table.ok("move_stacks", DEALER, {"by": "player", "player": "P1", "one_hand": True})
    table.ok("place_bet", DEALER, {"player": "P1", "seat": 1, "amount": 100})
    table.ok("place_stake", DEALER, {"amount": 1000})
    paigow_shake(table, banker="P2")
    paigow_deal(table)
    table.ok("set_hand", DEALER, {"seat": 1})
    table.ok("set_banker", DEALER)
    paigow_open(table, {2: groups[0], 1: groups[1]})
    table.ok("settle_round", DEALER)


def test_a_replayed_round_with_every_new_step_reproduces_the_snapshot() -> None:
    table = paigow_table()
    away_from_seat_0(table, stake=150, co=[{"player": "P9", "amount": 100}])
    replayed = PaiGowProcedure()
    for item in table.inputs:
        replayed.handle(item.action, item.actor, dict(item.payload), item.now)
    assert replayed.snapshot() == table.proc.snapshot()
    assert device("dice_shaker") in {i.actor for i in table.inputs}


@pytest.mark.article("15/90/M", "5(5)")
def test_a_house_that_does_not_co_bank_refuses_the_house_share(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(paigow.RULESETS, "macau-1990", paigow.PaiGowRules(house_co_banks=False))
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    house = table.refused("co_bank", DEALER, {"player": "house", "amount": 500, "house": True})
    assert article(house) == f"{ART} 5(5)"
    table.ok("co_bank", DEALER, {"player": "P7", "amount": 500})  # guests still may


@pytest.mark.article("15/90/M", "4")
def test_a_face_up_name_and_a_face_up_pip_of_one_name_both_find_their_tile() -> None:
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    paigow_betting(table)
    paigow_shake(table)  # 10: door 1 first
    table.ok("tile_face_up", DEALER, {"seat": 1, "tile": "杂九"})  # either nine
    table.ok("tile_face_up", DEALER, {"seat": 1, "tile": "4-5"})  # this very nine
    paigow_deal(table)
    paigow_set(table)
    table.ok("open_hand", DEALER, {"seat": 0, "front": "1-1 1-1", "back": "6-6 6-6"})
    one_nine = {"seat": 1, "front": "4-5 2-2", "back": "5-5 5-5"}
    assert article(table.refused("open_hand", DEALER, one_nine)) == f"{ART} 4"
    table.ok("open_hand", DEALER, {"seat": 1, "front": "4-5 3-6", "back": "5-5 5-5"})
