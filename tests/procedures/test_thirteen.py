"""Thirteen cards (Portaria 51/89/M): the legal path and each article's refusals."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from procedure_drive import (
    DEALER,
    SUPERVISOR,
    SYSTEM,
    Table,
    arrangement,
    device,
    shuffled_deck,
    thirteen_bets,
    thirteen_deal,
    thirteen_round,
    thirteen_table,
    thirteen_to_betting,
)

from daemon.procedures.thirteen import ThirteenProcedure, settle_thirteen
from daemon.rules import thirteen as rules

ART = "Portaria 51/89/M Art."
SHOE = device("shoe_reader")


def article(table: Table, action: str, payload: dict[str, object] | None = None) -> str:
    outcome = table.refused(action, DEALER, payload)
    assert outcome.violation is not None
    return outcome.violation.article


@pytest.mark.article("51/89/M", "2(b)", "5", "11")
def test_a_whole_round_deals_13_to_each_seat_and_settles_by_the_rules_engine() -> None:
    table = thirteen_table()
    deck = shuffled_deck(7)
    thirteen_round(table, deck)
    proc = table.proc
    assert isinstance(proc, ThirteenProcedure)
    snap = proc.snapshot()
    assert snap["phase"] == "ROUND_OVER"
    assert [len(seat["cards"]) for seat in snap["seats"]] == [13, 13, 13, 13]
    # Dice 1+2+3+4 = 10: the first card goes to the seat the rules engine names, then one at a
    # time counter-clockwise, in the order the shoe reader read them.
    assert snap["first_seat"] == rules.first_seat_from_dice(10)
    assert [d["seat"] for d in snap["dealt"]] == rules.deal_order(snap["first_seat"])
    assert [d["card"] for d in snap["dealt"]] == deck
    # Art. 5: P1 (300) holds seat 1 over P2 (100); both bets are settled on P1's arrangement.
    assert snap["seats"][1]["holder"] == "P1"
    settled = snap["settlement"]
    assert [(s["seat"], s["player"]) for s in settled] == [(1, "P1"), (1, "P2"), (2, "P3")]
    banker = proc.arrangements[0]
    for entry in settled:
        hand = proc.arrangements[entry["seat"]]
        units = {"P1": 3, "P2": 1, "P3": 2}[entry["player"]]
        expected = rules.settle(
            (" ".join(banker["head"]), " ".join(banker["middle"]), " ".join(banker["tail"])),
            (" ".join(hand["head"]), " ".join(hand["middle"]), " ".join(hand["tail"])),
            "macau-1989",
            bet=units,
        )
        assert entry["rules"] == expected.to_json()
        assert Decimal(entry["net"]) == expected.player_net * entry["amount"] / units
    names = [e.name for o in table.outcomes for e in o.events]
    assert names.count("card.dealt") == 52
    assert all(e.commit for o in table.outcomes for e in o.events if e.name == "card.dealt")
    for fact in ("deck.cut", "bets.closed", "dice.landed", "banker.opened", "round.settled"):
        assert fact in names


def test_commands_drive_the_devices() -> None:
    table = thirteen_table()
    shuffle = table.ok("confirm_hand_shuffle", DEALER)
    assert [(c.device, c.command, dict(c.args)) for c in shuffle.commands] == [
        ("shuffler", "shuffle", {"mode": "random"})
    ]
    table.ok("shuffle_completed", device("shuffler"), {"count": 52})
    table.ok("confirm_cut", DEALER, {"by": "player", "player": "P1", "cards": 10, "one_hand": True})
    loaded = table.ok("load_shoe", DEALER)
    assert [(c.device, c.command) for c in loaded.commands] == [("shoe_reader", "arm")]
    thirteen_bets(table)
    shaken = table.ok("shake_dice", DEALER, {"player": "P1"})
    assert [(c.device, c.command) for c in shaken.commands] == [("dice_shaker", "shake")]


@pytest.mark.article("51/89/M", "1(b)", "1(c)", "1(d)")
def test_the_table_opens_only_with_every_device_identified_and_approved() -> None:
    table = Table(ThirteenProcedure())
    assert article(table, "open_table") == f"{ART} 1"
    for name in ("shuffler", "shoe_reader", "dice_shaker"):
        table.ok("device_identified", device(name), {"device": name, "approved": True})
    table.ok("device_identified", device("timer_bell"), {"device": "timer_bell", "approved": False})
    assert article(table, "open_table") == f"{ART} 1"
    roulette = table.refused(
        "device_identified", device("roulette"), {"device": "roulette", "approved": True}
    )
    assert roulette.violation is not None and roulette.violation.article == f"{ART} 1"
    assert roulette.violation.reason == "roulette is not equipment of this table"
    table.ok("device_identified", device("timer_bell"), {"device": "timer_bell", "approved": True})
    table.ok("open_table", DEALER)


@pytest.mark.parametrize(("count", "mode"), [(51, "random"), (53, "random"), (52, "sort")])
@pytest.mark.article("51/89/M", "1(a)", "2(a)")
def test_a_wrong_count_or_mode_takes_the_deck_out_of_play(count: int, mode: str) -> None:
    table = thirteen_table()
    table.ok("confirm_hand_shuffle", DEALER)
    tilted = table.ok("shuffle_completed", device("shuffler"), {"count": count, "mode": mode})
    assert table.proc.phase == "TILT"
    assert [e.name for e in tilted.events] == ["deck.machine_shuffled", "table.tilted"]
    table.refused("confirm_cut", DEALER, {"by": "dealer", "cards": 20, "one_hand": True})
    table.ok("device_healthy", device("shuffler"), {"device": "shuffler"})
    table.ok("clear_tilt", SUPERVISOR, {"reason": "deck replaced"})
    assert table.proc.phase == "HAND_SHUFFLE"


@pytest.mark.article("51/89/M", "2(a)")
def test_the_cut_is_one_hand_of_at_least_ten_by_a_player_or_else_the_dealer() -> None:
    table = thirteen_table()
    table.ok("confirm_hand_shuffle", DEALER)
    table.ok("shuffle_completed", device("shuffler"), {"count": 52})
    cut = "confirm_cut"
    assert article(table, cut, {"by": "player", "player": "P", "cards": 9, "one_hand": True}) == (
        f"{ART} 2(a)"
    )
    table.refused(cut, DEALER, {"by": "player", "player": "P", "cards": 43, "one_hand": True})
    table.refused(cut, DEALER, {"by": "player", "player": "P", "cards": 20, "one_hand": False})
    table.refused(cut, DEALER, {"by": "dealer", "cards": 20, "one_hand": True})
    table.refused(cut, DEALER, {"by": "house", "cards": 20, "one_hand": True})
    table.ok(cut, DEALER, {"by": "dealer", "players_declined": True, "cards": 42, "one_hand": True})


@pytest.mark.article("51/89/M", "2(b)", "2(c)", "3", "5", "11")
def test_the_highest_seated_bettor_shakes_and_bets_close_at_the_shake() -> None:
    table = thirteen_table()
    thirteen_to_betting(table)
    assert article(table, "shake_dice", {"player": "P1"}) == f"{ART} 2(b)"  # no bets yet
    bet = "place_bet"
    assert article(table, bet, {"player": "X", "seat": 0, "amount": 5, "units": 1, "seated": True})
    assert article(
        table, bet, {"player": "X", "seat": 1, "amount": 5, "units": 4, "seated": True}
    ) == (f"{ART} 11")
    thirteen_bets(table)
    table.ok(bet, DEALER, {"player": "S", "seat": 3, "amount": 300, "units": 3, "seated": False})
    table.ok(bet, DEALER, {"player": "S", "seat": 2, "units": 3, "seated": False})
    assert table.proc.snapshot()["seats"][3]["holder"] == "S"  # no seated bettor on seat 3
    assert table.proc.snapshot()["seats"][2]["holder"] == "P3"  # P3 is seated
    table.ok("move_bet", DEALER, {"player": "P3", "from_seat": 2, "to_seat": 3})
    table.ok("withdraw_bet", DEALER, {"player": "P3", "seat": 3})
    table.ok(bet, DEALER, {"player": "P3", "seat": 2, "amount": 200, "units": 2, "seated": True})
    # S bet most but stands; P1 is the highest bettor holding a seat.
    assert article(table, "shake_dice", {"player": "S"}) == f"{ART} 2(b)"
    assert article(table, "shake_dice", {"player": "P2"}) == f"{ART} 2(b)"
    table.ok("shake_dice", DEALER, {"player": "P1"})
    late = {"player": "P4", "seat": 3, "amount": 5, "units": 1, "seated": True}
    # Art. 2(c): the bets closed at the shake; whatever the phase, a bet after it breaks that.
    assert article(table, bet, late) == f"{ART} 2(c)"
    table.ok("dice_landed", device("dice_shaker"), {"dice": [1, 2, 3, 4]})
    assert article(table, bet, late) == f"{ART} 2(c)"
    table.ok("door_opened", SHOE, {"device": "shoe_reader", "fault": "shoe removed"})
    assert table.proc.phase == "HOLD"
    assert article(table, bet, late) == f"{ART} 2(c)"
    assert article(table, "withdraw_bet", {"player": "P1", "seat": 1}) == f"{ART} 2(c)"
    assert article(table, "withdraw_bet", {"player": "P1", "seat": 1}) == f"{ART} 2(c)"
    assert article(table, "move_bet", {"player": "P1", "from_seat": 1, "to_seat": 3}) == (
        f"{ART} 2(c)"
    )


@pytest.mark.article("51/89/M", "1(c)", "2(b)", "2(c)")
def test_an_invalid_dice_result_is_shaken_again_and_never_edited() -> None:
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)
    table.ok("shake_dice", DEALER, {"player": "P1"})
    shaker = device("dice_shaker")
    # Art. 2(b): the dice name the first seat; a reading that is not four dice of 1-6 is refused.
    for wrong in ([1, 2, 3, 7], [1, 2, 3], [0, 2, 3, 4], [1, 2, 3, "4"]):
        refused = table.refused("dice_landed", shaker, {"dice": wrong})
        assert refused.violation is not None and refused.violation.article == f"{ART} 2(b)"
    assert table.proc.phase == "SHAKING"
    again = table.ok("dice_landed", shaker, {"dice": [6, 6, 6, 1], "valid": False, "reason": "s"})
    assert [c.command for c in again.commands] == ["shake"]
    table.ok("dice_landed", shaker, {"dice": [2, 2, 2, 2]})
    assert table.proc.phase == "DEALING"
    # The result stands: a second result is not taken.
    table.refused("dice_landed", shaker, {"dice": [6, 6, 6, 6]})
    assert table.proc.snapshot()["dice"] == [2, 2, 2, 2]


def test_an_invalid_throw_without_dice_is_shaken_again_and_the_third_tilts() -> None:
    """The wire reads no dice for an invalid throw: the procedure takes it without them, asks
    for a new shake, and tilts at the third in a row (H3, R10); nothing is made up."""
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)
    table.ok("shake_dice", DEALER, {"player": "P1"})
    shaker = device("dice_shaker")
    table.refused("dice_landed", shaker, {"valid": False, "die": 9})
    table.refused("dice_landed", shaker, {"valid": True})
    for count in (1, 2):
        again = table.ok("dice_landed", shaker, {"valid": False, "reason": "die_tilted", "die": 2})
        assert [c.command for c in again.commands] == ["shake"]
        invalid = again.events[0].payload
        assert invalid["count"] == count and invalid["reason"] == "die_tilted"
        assert "dice" not in invalid
        assert table.proc.phase == "SHAKING"
    third = table.ok("dice_landed", shaker, {"valid": False, "reason": "die_out_of_cup"})
    assert table.proc.phase == "TILT"
    assert third.commands == ()
    assert table.proc.faults["dice_shaker"]["fault"] == "3 invalid throws in a row"
    table.ok("device_healthy", shaker, {"device": "dice_shaker"})
    cleared = table.ok("clear_tilt", SUPERVISOR, {})
    assert [c.command for c in cleared.commands] == ["shake"]
    table.ok("dice_landed", shaker, {"dice": [3, 3, 3, 3]})
    assert table.proc.phase == "DEALING"
    assert [s["valid"] for s in table.proc.snapshot()["shakes"]] == [False] * 3 + [True]


def test_leaving_the_deal_disarms_the_shoe_reader() -> None:
    """The reader is armed only while dealing: leaving DEALING (a HOLD, or the deal done)
    tells it, so a card drawn then is out of phase; resuming arms it for the rest."""
    table = thirteen_table()
    deck = shuffled_deck(3)
    thirteen_to_betting(table)
    thirteen_bets(table)
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [1, 2, 3, 4]})
    table.ok("card_read", SHOE, {"card": deck[0]})
    held = table.ok("door_opened", SHOE, {"device": "shoe_reader", "fault": "shoe removed"})
    assert [(c.device, c.command) for c in held.commands] == [("shoe_reader", "disarm")]
    table.ok("device_healthy", SHOE, {"device": "shoe_reader"})
    resumed = table.ok("clear_hold", SUPERVISOR, {})
    assert [(c.command, dict(c.args)) for c in resumed.commands] == [("arm", {"cards": 51})]
    for card in deck[1:-1]:
        assert table.ok("card_read", SHOE, {"card": card}).commands == ()
    last = table.ok("card_read", SHOE, {"card": deck[-1]})
    assert table.proc.phase == "BANKER_ARRANGING"
    assert [(c.device, c.command) for c in last.commands] == [("shoe_reader", "disarm")]


@pytest.mark.article("51/89/M", "1(a)", "4")
def test_misreads_and_duplicates_tilt_and_face_up_cards_stay_valid() -> None:
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [1, 1, 1, 1]})
    face_up = table.ok("card_read", SHOE, {"card": "A♠", "face_up": True})
    assert face_up.events[0].payload == {
        "round": 1,
        "actor": SHOE,
        "card": "As",
        "seat": rules.first_seat_from_dice(4),
        "index": 1,
        "face_up": True,
    }
    for bad in ("As", "Zz"):
        table.ok("card_read", SHOE, {"card": bad})
        assert table.proc.phase == "TILT"
        table.ok("device_healthy", SHOE, {"device": "shoe_reader"})
        table.ok("clear_tilt", SUPERVISOR, {})
        assert table.proc.phase == "DEALING"
    assert len(table.proc.snapshot()["dealt"]) == 1
    table.ok("card_read", SHOE, {"card": "Kd", "index": 3})  # read #2 was lost
    assert table.proc.phase == "TILT"
    assert table.proc.snapshot()["faults"]["shoe_reader"]["fault"] == "read #3 where #2 was due"
    table.ok("device_healthy", SHOE, {"device": "shoe_reader"})
    table.ok("clear_tilt", SUPERVISOR, {})
    table.ok("card_read", SHOE, {"card": "Kd", "index": 2})
    second = rules.deal_order(rules.first_seat_from_dice(4))[1]
    assert table.proc.snapshot()["dealt"][1] == {"card": "Kd", "seat": second, "face_up": False}


@pytest.mark.article("51/89/M", "2(c)", "4")
def test_a_misdeal_is_corrected_in_order_or_voided_and_dealt_again() -> None:
    table = thirteen_table()
    deck = shuffled_deck(11)
    thirteen_to_betting(table)
    thirteen_bets(table)
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [1, 2, 3, 4]})
    for card in deck[:10]:
        table.ok("card_read", SHOE, {"card": card})
    corrected = table.ok("correct_misdeal", DEALER, {"cards": deck[3:5]})
    assert corrected.events[0].name == "deal.corrected"
    assert article(table, "correct_misdeal", {"cards": [deck[20]]}) == f"{ART} 4"
    table.refused("void_deal", DEALER, {"reason": "cards mixed"})  # a supervisor's decision
    # Corrected, so no misdeal is on record: the dealt cards stand (Art. 4 voids only what
    # cannot be put right).
    uncalled = table.refused("void_deal", SUPERVISOR, {"reason": "cards mixed"})
    assert uncalled.violation is not None and uncalled.violation.article == f"{ART} 4"
    table.ok("card_read", SHOE, {"card": deck[2]})  # a second copy: the deck is not one deck
    assert table.proc.phase == "TILT"
    table.ok("device_healthy", SHOE, {"device": "shoe_reader"})
    table.ok("clear_tilt", SUPERVISOR, {"reason": "reader checked"})
    table.ok("void_deal", SUPERVISOR, {"reason": "a duplicate card in the shoe"})
    assert table.proc.phase == "DEALING"  # proposed; a second supervisor decides (H5)
    table.refused("approve_override", SUPERVISOR, {"reason": "mine"})
    table.refused("card_read", SHOE, {"card": deck[10]})  # the deal waits for the decision
    table.ok("approve_override", "supervisor:S2", {"reason": "seen on camera"})
    snap = table.proc.snapshot()
    assert snap["phase"] == "HAND_SHUFFLE" and snap["dealt"] == []
    assert len(snap["voided_deals"]) == 1 and snap["dice"] == [1, 2, 3, 4]
    assert len(snap["bets"]) == 3  # Art. 2(c): the bets stand
    thirteen_to_betting(table)
    assert table.proc.phase == "DEALING"  # straight back to the deal, same first seat
    for card in shuffled_deck(12):
        table.ok("card_read", SHOE, {"card": card})
    assert table.proc.phase == "BANKER_ARRANGING"


@pytest.mark.article("51/89/M", "2(d)", "3")
def test_the_banker_rearranges_until_the_opening_then_five_minutes_run() -> None:
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)
    thirteen_deal(table, shuffled_deck(3))
    proc = table.proc
    assert isinstance(proc, ThirteenProcedure)
    banker, seat1 = proc.seat_cards(0), proc.seat_cards(1)
    assert article(table, "open_banker") == f"{ART} 2(d)"
    # Art. 2(d): the banker arranges face down and says so: no card is named, so no refusal
    # can tell whether cards someone guessed are the banker's.
    assert article(table, "enter_arrangement", {"seat": 0, **arrangement(banker)}) == (
        f"{ART} 2(d)"
    )
    guessed = table.refused("enter_arrangement", DEALER, {"seat": 0, **arrangement(seat1)})
    right = table.refused("enter_arrangement", DEALER, {"seat": 0, **arrangement(banker)})
    assert guessed.violation is not None and right.violation is not None
    assert guessed.violation.reason == right.violation.reason
    said = table.ok("arrange_banker", DEALER)
    assert said.events[0].payload["rearranged"] is False
    assert "head" not in said.events[0].payload
    again = table.ok("arrange_banker", DEALER)
    assert again.events[0].payload["rearranged"] is True
    assert article(table, "enter_arrangement", {"seat": 1, **arrangement(seat1)}) == (f"{ART} 2(d)")
    opened = table.ok("open_banker", DEALER)
    assert opened.events[0].payload["cards"] == banker
    assert proc.snapshot()["timer"]["deadline"] == table.now + 300
    assert [(c.device, c.command, dict(c.args)) for c in opened.commands] == [
        ("timer_bell", "start", {"seconds": 300.0})
    ]
    assert article(table, "arrange_banker") == f"{ART} 2(d)"
    # The banker's hand is open: the dealer places its cards, which must be those 13.
    wrong = table.refused("enter_arrangement", DEALER, {"seat": 0, **arrangement(seat1)})
    assert wrong.violation is not None and wrong.violation.article == f"{ART} 7"
    table.ok("enter_arrangement", DEALER, {"seat": 0, **arrangement(banker)})
    # A player's hand is not open while the players arrange: nothing of it is entered.
    table.refused("enter_arrangement", DEALER, {"seat": 1, **arrangement(seat1)})
    table.refused("player_arranged", DEALER, {"seat": 3})
    table.ok("player_arranged", DEALER, {"seat": 1})
    table.refused("player_arranged", DEALER, {"seat": 1})
    early = table.refused("timer_expired", SYSTEM, {})
    assert early.violation is not None and early.violation.article == f"{ART} 2(d)"
    table.now += 298  # the input lands exactly at the deadline: too late
    late = table.refused("player_arranged", DEALER, {"seat": 2})
    assert late.violation is not None and "five minutes" in late.violation.reason
    expired = table.ok("timer_expired", SYSTEM, {})
    assert expired.events[0].payload["late"] == [2]
    assert [(c.device, c.command) for c in expired.commands] == [("timer_bell", "ring")]
    # Art. 8: each hand not late is opened against the banker's, then its cards placed.
    assert article(table, "settle_round") == f"{ART} 8"
    table.refused("open_hand", DEALER, {"seat": 2})  # late at the bell: loses unopened
    table.ok("open_hand", DEALER, {"seat": 1})
    assert article(table, "settle_round") == f"{ART} 7"
    table.ok("enter_arrangement", DEALER, {"seat": 1, **arrangement(seat1)})
    table.ok("settle_round", DEALER)
    settled = proc.snapshot()["settlement"]
    assert [s["late"] for s in settled] == [False, False, True]
    assert Decimal(settled[2]["net"]) == -200


@pytest.mark.article("51/89/M", "2(d)")
def test_all_arranged_before_the_bell_stops_it() -> None:
    table = thirteen_table()
    thirteen_round(table, shuffled_deck(9))
    stops = [c for o in table.outcomes for c in o.commands if c.command == "stop"]
    assert len(stops) == 1 and stops[0].device == "timer_bell"


def test_an_unknown_ruleset_or_setting_is_refused_at_start_up() -> None:
    with pytest.raises(ValueError, match="nosuch"):
        ThirteenProcedure(ruleset="nosuch")
    with pytest.raises(ValueError, match="shaker"):
        ThirteenProcedure(shaker="anyone")
    with pytest.raises(ValueError, match="unknown setting"):
        ThirteenProcedure(rules={"nosuch": 1})
    assert not ThirteenProcedure(ruleset="hk-points").banker_game


@given(seed=st.integers(0, 10_000), total=st.integers(4, 24))
@pytest.mark.article("51/89/M", "2(b)")
def test_any_deck_and_any_dice_deal_every_card_once_in_the_engines_order(
    seed: int, total: int
) -> None:
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)
    table.ok("shake_dice", DEALER, {"player": "P1"})
    dice, extra = [1, 1, 1, 1], total - 4
    for index in range(4):
        dice[index] += min(5, extra)
        extra -= min(5, extra)
    table.ok("dice_landed", device("dice_shaker"), {"dice": dice})
    deck = shuffled_deck(seed)
    for card in deck:
        table.ok("card_read", SHOE, {"card": card})
    snap = table.proc.snapshot()
    assert snap["phase"] == "BANKER_ARRANGING"
    assert [d["seat"] for d in snap["dealt"]] == rules.deal_order(rules.first_seat_from_dice(total))
    assert sorted(c for seat in snap["seats"] for c in seat["cards"]) == sorted(deck)


def _misread_at_card_five(table: Table, deck: list[str]) -> None:
    thirteen_to_betting(table)
    thirteen_bets(table)
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [1, 2, 3, 4]})
    for i, card in enumerate(deck[:4], start=1):
        table.ok("card_read", SHOE, {"card": card, "index": i})
    table.ok("card_read", SHOE, {"card": "??", "index": 5})
    assert table.proc.phase == "TILT"
    table.ok("device_healthy", SHOE, {"device": "shoe_reader"})
    resumed = table.ok("clear_tilt", SUPERVISOR, {})
    # The misread card has left the shoe: the reader is armed for the 47 left.
    assert [(c.command, dict(c.args)) for c in resumed.commands] == [("arm", {"cards": 47})]


@pytest.mark.article("51/89/M", "4")
def test_a_misread_card_entered_by_the_dealer_waits_for_a_supervisors_approval() -> None:
    """Art. 4 (the deal put right in its order) as a two-person step: the dealer enters the
    card the reader could not name, nothing changes until a supervisor approves it with a
    reason, and the card then takes the misread one's place with both actors journaled."""
    table = thirteen_table()
    deck = shuffled_deck(5)
    _misread_at_card_five(table, deck)
    proc = table.proc
    assert isinstance(proc, ThirteenProcedure)
    before = proc.snapshot()
    # Only a supervisor decides, only with a reason, and only what is pending.
    assert (
        article(table, "approve_override", {"reason": "seen"})
        == "tabled H2 (each action belongs to one role; unknown actions are refused)"
    )
    table.refused("approve_override", SUPERVISOR, {"reason": "seen"})  # nothing pending
    table.refused("propose_card", DEALER, {"card": deck[0]})  # already dealt
    table.refused("propose_card", DEALER, {"card": "Zz"})
    table.refused("propose_card", SUPERVISOR, {"card": deck[4]})
    proposed = table.ok("propose_card", DEALER, {"card": deck[4], "note": "shown face up"})
    assert [e.name for e in proposed.events] == ["override.proposed"]
    pending = proposed.events[0].payload
    assert (pending["kind"], pending["card"], pending["index"]) == ("enter_card", deck[4], 5)
    assert pending["proposed_by"] == DEALER and pending["read"] == "??"
    after = proc.snapshot()
    assert after["dealt"] == before["dealt"] and after["override"]["card"] == deck[4]
    # While it is pending, the reader's next card waits, and a second proposal is refused.
    table.refused("card_read", SHOE, {"card": deck[5], "index": 6})
    table.refused("propose_card", DEALER, {"card": deck[5]})
    table.refused("approve_override", SUPERVISOR, {})  # a reason is required
    # The dealer who proposed cannot decide, even signed in as a supervisor.
    same = table.refused("approve_override", "supervisor:D1", {"reason": "mine"})
    assert same.violation is not None and "proposes" in same.violation.reason
    table.refused("approve_override", SUPERVISOR, {"reason": ""})
    approved = table.ok("approve_override", SUPERVISOR, {"reason": "card seen on camera 4"})
    names = [e.name for e in approved.events]
    assert names == ["override.approved", "card.dealt"]
    decision = approved.events[0].payload
    assert decision["proposed_by"] == DEALER and decision["approved_by"] == SUPERVISOR
    assert decision["reason"] == "card seen on camera 4" and decision["actor"] == SUPERVISOR
    dealt = approved.events[1].payload
    assert (dealt["card"], dealt["index"]) == (deck[4], 5)
    assert dealt["entered"] == {"by": DEALER, "approved_by": SUPERVISOR}
    snap = proc.snapshot()
    assert snap["override"] is None and snap["misread"] is None
    assert [d["card"] for d in snap["dealt"]] == deck[:5]
    assert snap["dealt"][4]["seat"] == rules.deal_order(snap["first_seat"])[4]
    # The reader goes on from #6, and the deal completes in order.
    for i, card in enumerate(deck[5:], start=6):
        table.ok("card_read", SHOE, {"card": card, "index": i})
    assert proc.phase == "BANKER_ARRANGING"
    assert [d["card"] for d in proc.snapshot()["dealt"]] == deck


@pytest.mark.article("51/89/M", "4")
def test_a_rejected_proposal_changes_nothing_and_reads_are_never_overridden() -> None:
    table = thirteen_table()
    deck = shuffled_deck(6)
    _misread_at_card_five(table, deck)
    before = table.proc.snapshot()
    table.ok("propose_card", DEALER, {"card": deck[9]})
    rejected = table.ok("reject_override", SUPERVISOR, {"reason": "that card is in the shoe"})
    decision = rejected.events[0].payload
    assert rejected.events[0].name == "override.rejected"
    assert decision["rejected_by"] == SUPERVISOR and decision["proposed_by"] == DEALER
    after = table.proc.snapshot()
    assert after["dealt"] == before["dealt"] and after["override"] is None
    assert after["misread"] == before["misread"]
    table.refused("reject_override", SUPERVISOR, {"reason": "again"})
    # The dealer may propose again; or two supervisors void the deal (Art. 4's last resort),
    # once the pending proposal is decided.
    table.ok("propose_card", DEALER, {"card": deck[4]})
    table.refused("void_deal", SUPERVISOR, {"reason": "cannot be put right"})
    table.ok("reject_override", SUPERVISOR, {"reason": "the card cannot be established"})
    table.ok("void_deal", SUPERVISOR, {"reason": "cannot be put right"})
    table.ok("approve_override", "supervisor:S2", {"reason": "agreed"})
    snap = table.proc.snapshot()
    assert snap["override"] is None and snap["misread"] is None and snap["dealt"] == []


@pytest.mark.article("51/89/M", "2(c)", "4")
def test_no_override_exists_for_what_the_devices_read_or_the_regulation_forbids() -> None:
    """A card the reader named, the dice, a bet after the shake: nothing to propose."""
    table = thirteen_table()
    deck = shuffled_deck(8)
    thirteen_to_betting(table)
    thirteen_bets(table)
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.refused("propose_card", DEALER, {"card": deck[0]})  # not dealing yet
    table.ok("dice_landed", device("dice_shaker"), {"dice": [1, 2, 3, 4]})
    table.ok("card_read", SHOE, {"card": deck[0]})
    refusal = table.refused("propose_card", DEALER, {"card": deck[1]})
    assert refusal.violation is not None and "not edited" in refusal.violation.reason
    assert (
        article(
            table, "place_bet", {"player": "P9", "seat": 1, "amount": 5, "units": 1, "seated": True}
        )
        == f"{ART} 2(c)"
    )
    table.refused("approve_override", SUPERVISOR, {"reason": "please"})


def test_the_override_steps_are_offered_only_when_they_can_be_taken() -> None:
    """A console shows what may be tapped: entering a card by hand only while a misread waits
    and nothing is proposed, and the supervisor's decision only while a proposal is pending."""
    table = thirteen_table()
    deck = shuffled_deck(9)
    overrides = {"propose_card", "approve_override", "reject_override"}
    thirteen_to_betting(table)
    thirteen_bets(table)
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [1, 2, 3, 4]})
    table.ok("card_read", SHOE, {"card": deck[0], "index": 1})
    assert table.proc.phase == "DEALING"
    for role in ("dealer", "supervisor"):
        assert not overrides & set(table.proc.legal_actions(role))
    table.ok("card_read", SHOE, {"card": "??", "index": 2})
    table.ok("device_healthy", SHOE, {"device": "shoe_reader"})
    table.ok("clear_tilt", SUPERVISOR, {})
    assert "propose_card" in table.proc.legal_actions("dealer")
    assert not overrides & set(table.proc.legal_actions("supervisor"))
    table.ok("propose_card", DEALER, {"card": deck[1]})
    assert "propose_card" not in table.proc.legal_actions("dealer")
    assert overrides - {"propose_card"} <= set(table.proc.legal_actions("supervisor"))
    table.ok("reject_override", SUPERVISOR, {"reason": "not that card"})
    assert "propose_card" in table.proc.legal_actions("dealer")
    assert not overrides & set(table.proc.legal_actions("supervisor"))
    table.ok("propose_card", DEALER, {"card": deck[1]})
    table.ok("approve_override", SUPERVISOR, {"reason": "seen on camera"})
    assert table.proc.phase == "DEALING"
    for role in ("dealer", "supervisor"):
        assert not overrides & set(table.proc.legal_actions(role))


@pytest.mark.parametrize(
    ("commission", "amount", "net"),
    [
        # 1.5 units won, 0.075 -> 0.07 commission: 1.43 units of a 10 bet on 3 units is
        # 4.7666...; the commission in money 0.2333... is rounded down, so 5 - 0.23.
        ("0.05", 10, "4.77"),
        # 0.0375 -> 0.03: 1.47 units, 3 | 147, the division is exact and nothing rounds.
        ("0.025", 10, "4.9"),
        ("0.05", 7, "3.34"),  # 1.43 * 7 / 3 = 3.33666...: 3.5 less 0.1633... -> 0.16
    ],
)
@pytest.mark.article("51/89/M", "11")
def test_a_seats_net_is_money_to_the_step_the_commission_rounded_down(
    commission: str, amount: int, net: str
) -> None:
    """Art. 11 (docs/rules.md): the only rounding is the commission's, down to
    `MONEY_STEP`, in the player's favour; scaling a 3-unit bet's net to its money can divide
    by 3 without end, so the seat's commission is rounded down in money as well."""
    rules_set = rules.ruleset("macau-1989", commission=commission)
    low = {"head": ["2C", "3D", "5H"], "middle": ["6S", "7C", "9D", "TH", "QS"]}
    banker = {**low, "tail": ["4C", "8D", "JH", "KS", "2D"]}
    player = {
        "head": ["AS", "AH", "KD"],
        "middle": ["AC", "AD", "KC", "KH", "3C"],
        "tail": ["QH", "QC", "QD", "JS", "JC"],
    }
    bet = {"seat": 1, "seq": 1, "player": "P1", "amount": amount, "units": 3}
    [entry] = settle_thirteen({0: banker, 1: player}, [bet], [], rules_set)
    assert entry["outcome"] == "player"
    assert Decimal(entry["net"]) == Decimal(net)
    assert Decimal(entry["net"]) == Decimal(entry["net"]).quantize(rules.MONEY_STEP)
    exact = Decimal(entry["rules"]["player_net"]) * amount / 3
    assert Decimal(0) <= Decimal(entry["net"]) - exact < rules.MONEY_STEP
