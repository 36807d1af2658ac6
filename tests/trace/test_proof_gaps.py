"""Tests the proof of the trace found missing (issue 26): each kills a mutant of a guard that
every test of its article let pass. `tabled trace --prove --article A` shows them killed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from daemon.config import ConfigError, load_config, parse_config
from daemon.procedures.stakes import DEFAULT_UNIT
from tests.procedures.procedure_drive import (
    DEALER,
    Prefixes,
    arrangement,
    at_phase,
    device,
    paigow_betting,
    paigow_deal,
    paigow_play,
    paigow_round,
    paigow_shake,
    paigow_table,
    shuffled_deck,
    thirteen_bets,
    thirteen_deal,
    thirteen_table,
    thirteen_to_betting,
    tile_groups,
)

ROOT = Path(__file__).resolve().parents[2]
PREFIXES = Prefixes()


@pytest.mark.article("51/89/M", "7", "8", "9 I", "9 II", "10", "11")
@pytest.mark.article("003", "way 1 rows", "way 1 foul")
@pytest.mark.article("15/90/M", "5(3)", "6(3)", "8")
@pytest.mark.parametrize(
    ("game", "article"),
    [("thirteen", "Portaria 51/89/M Art. 7-11"), ("paigow", "Portaria 15/90/M Art. 5(3), 6(3), 8")],
)
def test_the_settlement_takes_no_payload_of_its_own(game: str, article: str) -> None:
    """The rules engine settles from the round as played: `settle_round` carries nothing, and a
    payload naming a winner or an amount is refused citing the settlement's articles."""
    phase = "SETTLING" if game == "thirteen" else "OPENED"
    table = at_phase(game, phase, PREFIXES)
    for smuggled in ({"winner": "P1"}, {"amount": 1000}, {"result": {"1": "win"}}):
        refused = table.refused("settle_round", DEALER, smuggled)
        assert refused.violation is not None and refused.violation.article == article
        assert "unknown field" in refused.violation.reason


@pytest.mark.article("51/89/M", "11")
def test_a_table_without_a_unit_bets_in_units_of_the_default_unit(tmp_path: Path) -> None:
    """Art. 11's units are of the table's unit value; a table that names none has 100 (MOP)."""
    config = tmp_path / "table.toml"
    text = (ROOT / "config" / "table.toml").read_text(encoding="utf-8")
    kept = [line for line in text.splitlines() if not line.startswith("unit")]
    config.write_text("\n".join(kept), "utf-8")
    loaded = load_config(config)
    assert loaded.unit == DEFAULT_UNIT == 100
    from daemon.procedures import build  # noqa: PLC0415 - after the config, as `tabled run`

    proc = build(loaded)
    assert proc.stakes.unit == 100


@pytest.mark.article("51/89/M", "6", "7", "8", "9 I", "9 II", "10", "11")
def test_each_rule_set_names_the_text_it_implements() -> None:
    """`tabled rules thirteen rulesets` says where each rule set comes from: macau-1989 is Art.
    6-11 of Portaria 51/89/M, the others the Hong Kong ways of seed 003."""
    done = subprocess.run(
        [sys.executable, "-m", "daemon", "rules", "thirteen", "rulesets"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    import json  # noqa: PLC0415

    listed = {line["name"]: line for line in map(json.loads, done.stdout.splitlines())}
    sources = {name: line["source"] for name, line in listed.items()}
    assert sources["macau-1989"] == "000 Art. 6-11 (Portaria 51/89/M)"
    # What the text decides, as the rule set publishes it: two fouled hands are the banker's
    # (Art. 7), two fixed combinations push (9 I), a row of equal hands is the banker's (10,
    # 夹棍), a bet is 1-3 units and a winner is paid half the bet (11).
    macau = listed["macau-1989"]
    assert (macau["both_foul"], macau["both_special"], macau["row_tie"]) == (
        "banker",
        "push",
        "banker",
    )
    assert (macau["bets"], macau["prize"]) == ([1, 2, 3], "half-bet")
    assert all(
        source.startswith("003 ") for name, source in sources.items() if name != "macau-1989"
    )


@pytest.mark.article("51/89/M", "2(a)")
def test_the_shufflers_report_is_read_as_numbers() -> None:
    """Art. 2(a): the machine's count is a number; a report whose count, mode or foreign and
    unreadable cards are not what the shuffler sends is refused, not taken as a deck."""
    table = thirteen_table()
    table.ok("confirm_hand_shuffle", DEALER)
    shuffler = device("shuffler")
    for wrong in (
        {"count": "52", "mode": "random"},
        {"count": 52, "mode": 1},
        {"count": 52, "mode": "random", "foreign": "two"},
        {"count": 52, "mode": "random", "unreadable": -1},
    ):
        refused = table.refused("shuffle_completed", shuffler, wrong)
        assert refused.violation is not None
        assert refused.violation.article == "Portaria 51/89/M Art. 2(a)", wrong
    table.ok("shuffle_completed", shuffler, {"count": 52, "mode": "random"})


@pytest.mark.article("51/89/M", "3")
def test_players_bet_on_seats_1_to_3_never_the_bankers() -> None:
    """Art. 3: four seats, the banker's among them; players bet on the other three."""
    table = thirteen_table()
    thirteen_to_betting(table)
    bet = {"player": "P1", "units": 1, "seated": True}
    refused = table.refused("place_bet", DEALER, {**bet, "seat": 0})
    assert refused.violation is not None
    assert (refused.violation.article, refused.violation.reason) == (
        "Portaria 51/89/M Art. 3",
        "seat 0 is the banker's: players bet on seats 1-3",
    )
    for seat in (1, 2, 3):
        table.ok("place_bet", DEALER, {**bet, "player": f"P{seat}", "seat": seat})


@pytest.mark.article("51/89/M", "2(c)")
@pytest.mark.article("003", "way 1 bets")
def test_a_bet_moves_only_from_its_seat_to_another_before_the_shake() -> None:
    """Before the shake a bet may move (Art. 2(c) forbids it only after): from the seat it is
    on, to another seat the player has no bet on, never the banker's."""
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)  # P1 and P2 on seat 1, P3 on seat 2
    art = "Portaria 51/89/M Art. 2(c)"
    for wrong, reason in (
        ({"player": "P1", "from_seat": 3, "to_seat": 2}, "P1 has no bet on seat 3"),
        ({"player": "P1", "from_seat": 1, "to_seat": 1}, "P1 already bets on seat 1"),
        ({"player": "P9", "from_seat": 1, "to_seat": 2}, "P9 has no bet on seat 1"),
    ):
        refused = table.refused("move_bet", DEALER, wrong)
        assert refused.violation is not None
        assert (refused.violation.article, refused.violation.reason) == (art, reason)
    table.ok("move_bet", DEALER, {"player": "P1", "from_seat": 1, "to_seat": 3})


@pytest.mark.article("51/89/M", "2(b)")
def test_the_shoe_readers_report_is_a_card_or_a_misread() -> None:
    """Art. 2(b): the deal is the reader's cards in order, after the dice; a report that is
    neither one card (a string) nor a misread naming none, or whose index is not a number, is
    refused, and so is a card read before the dice name the first seat."""
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)
    shoe = device("shoe_reader")
    early = table.refused("card_read", shoe, {"card": "As"}).violation
    assert early is not None and (early.article, early.reason) == (
        "Portaria 51/89/M Art. 2(b)",
        "card_read is not allowed in phase BETTING",
    )
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [2, 2, 2, 2]})
    for wrong in (
        {"card": 5},
        {"misread": True, "card": "As"},
        {"card": "As", "index": "one"},
        {"card": "As", "index": 0},
    ):
        refused = table.refused("card_read", shoe, wrong)
        assert refused.violation is not None
        assert refused.violation.article == "Portaria 51/89/M Art. 2(b)", wrong
    assert table.proc.snapshot()["dealt"] == []


@pytest.mark.article("51/89/M", "3", "7", "8")
@pytest.mark.article("003", "way 1 rows", "way 1 foul")
@pytest.mark.parametrize("ruleset", ["macau-1989", "hk-common"])
def test_each_hand_is_opened_then_placed_in_rows_before_the_settlement(ruleset: str) -> None:
    """Art. 8: each played hand is opened against the banker's; Art. 7: its open cards are then
    placed in three rows, its own cards each once. The settlement waits for both, hand by
    hand; a seat nobody bet on has no hand to open or place (Art. 3)."""
    art = "Portaria 51/89/M Art. "
    table = thirteen_table(ruleset=ruleset)
    thirteen_to_betting(table)
    thirteen_bets(table)  # seats 1 and 2; nobody on seat 3
    thirteen_deal(table, shuffled_deck(7))
    table.ok("arrange_banker", DEALER)
    table.ok("open_banker", DEALER)
    table.ok("enter_arrangement", DEALER, {"seat": 0, **arrangement(table.proc.seat_cards(0))})
    for seat in (1, 2):
        table.ok("player_arranged", DEALER, {"seat": seat})

    def refusal(action: str, payload: dict[str, Any] | None = None) -> tuple[str, str]:
        violation = table.refused(action, DEALER, payload).violation
        assert violation is not None
        return violation.article, violation.reason

    three = arrangement(table.proc.seat_cards(1))
    assert refusal("open_hand", {"seat": 3}) == (
        f"{art}8",
        "no bet on seat 3: its cards are not played",
    )
    seat_3 = {"seat": 3, **arrangement(table.proc.seat_cards(3))}
    assert refusal("enter_arrangement", seat_3) == (
        f"{art}3",
        "no bet on seat 3: its cards are not played",
    )
    assert refusal("settle_round") == (f"{art}8", "open seat 1's hand first, then place its cards")
    table.ok("open_hand", DEALER, {"seat": 1})
    assert refusal("open_hand", {"seat": 1}) == (f"{art}8", "seat 1's hand is already open")
    assert refusal("settle_round") == (f"{art}8", "open seat 2's hand first, then place its cards")
    table.ok("open_hand", DEALER, {"seat": 2})
    assert refusal("settle_round") == (f"{art}7", "seat 1's open cards are not yet placed in rows")
    stranger = table.proc.seat_cards(3)[0]
    head = three["head"]
    for rows, reason in (
        ({**three, "head": ["Zz", *head[1:]]}, "head: Zz is not a card (e.g. As, Td, 9h)"),
        ({**three, "head": [stranger, *head[1:]]}, f"{stranger} is not in seat 1's open hand"),
        ({**three, "head": [head[1], *head[1:]]}, f"{head[1]} is placed twice"),
    ):
        assert refusal("enter_arrangement", {"seat": 1, **rows}) == (f"{art}7", reason)
    table.ok("enter_arrangement", DEALER, {"seat": 1, **three})
    assert refusal("settle_round") == (f"{art}7", "seat 2's open cards are not yet placed in rows")
    table.ok("enter_arrangement", DEALER, {"seat": 2, **arrangement(table.proc.seat_cards(2))})
    settled = table.ok("settle_round", DEALER)
    (event,) = [e for e in settled.events if e.name == "round.settled"]
    # Each bet settled by the rules engine from the rows as placed.
    bets = [(b["seat"], b["player"]) for b in event.payload["settlement"]]
    assert bets == [(1, "P1"), (1, "P2"), (2, "P3")]


@pytest.mark.article("15/90/M", "2(4)", "3(1)")
@pytest.mark.parametrize("hands", [1, 2, 3, 5, 6, 7, 9, 16])
def test_a_paigow_table_of_other_than_eight_or_four_hands_does_not_start(hands: int) -> None:
    """Art. 2(4), 3(1): eight hands or four, the banker's included; the config of a table with
    any other count is refused at start-up, naming the article, and eight and four are built."""
    devices = {"dice_shaker": {"port": "sim://dice_shaker"}}
    with pytest.raises(ConfigError) as refused:
        parse_config({"table": {"game": "paigow", "paigow_hands": hands}, "devices": devices})
    assert str(refused.value).endswith(f"table.paigow_hands: {hands} (Art. 2(4) allows 8 or 4)")
    from daemon.procedures import build  # noqa: PLC0415 - after the config, as `tabled run`

    for allowed in (8, 4):
        config = parse_config(
            {"table": {"game": "paigow", "paigow_hands": allowed}, "devices": devices}
        )
        assert getattr(build(config), "hands", None) == allowed


@pytest.mark.article("15/90/M", "2(4)", "3(2)")
def test_the_largest_bettor_on_a_door_holds_its_tiles_the_earlier_on_a_tie() -> None:
    """Art. 3(2): a guest may bet on several doors and several guests on one; the largest bet
    holds the door (a tie: the earlier bet). The holders close with the bets at the shake and
    the door is set by its holder. Art. 2(4): at most eight doors, 0-7, declared as the bet's
    bounds (what the API and the console offer too)."""
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    table.ok("move_stacks", DEALER, {"by": "player", "player": "P1", "one_hand": True})
    beyond = table.refused("place_bet", DEALER, {"player": "P1", "seat": 8, "amount": 100})
    assert beyond.violation is not None
    assert (beyond.violation.article, beyond.violation.field, beyond.violation.reason) == (
        "Portaria 15/90/M Art. 3(2)",
        "seat",
        "seat must be 0..7, got 8",
    )
    for player, seat, amount in (
        ("P1", 1, 100),
        ("P2", 1, 300),  # larger: holds door 1
        ("P3", 2, 200),  # first of two equal bets: holds door 2
        ("P4", 2, 200),
        ("P1", 3, 50),  # P1 on a second door, alone there: holds it
    ):
        table.ok("place_bet", DEALER, {"player": player, "seat": seat, "amount": amount})
    table.ok("place_stake", DEALER, {"amount": 1000})
    table.ok("head_tiles_out", DEALER)
    shaken = table.ok("shake_dice", DEALER, {"player": "B"})
    (closed,) = [e for e in shaken.events if e.name == "bets.closed"]
    assert closed.payload["holders"] == {"1": "P2", "2": "P3", "3": "P1"}
    table.ok("dice_landed", device("dice_shaker"), {"dice": [2, 2, 3, 3]})
    paigow_deal(table)
    set_by = {}
    for seat in (1, 2, 3):
        (event,) = table.ok("set_hand", DEALER, {"seat": seat}).events[:1]
        set_by[seat] = event.payload["holder"]
    assert set_by == {1: "P2", 2: "P3", 3: "P1"}


@pytest.mark.article("15/90/M", "5(1)")
def test_a_void_round_does_not_count_toward_the_banks_two() -> None:
    """Art. 5(1): the banker holds the bank two rounds played. A round voided after the dice
    (two supervisors, H5) returns its bets and counts for nothing: the bank stays, and passes
    only after a second round is played."""
    table = paigow_table()
    paigow_round(table, seed=0)
    table.ok("next_round", DEALER)
    table.ok("confirm_tile_shuffle", DEALER)
    stake = max(table.proc.snapshot()["min_stake"], 1)
    paigow_betting(table, stake=stake)
    paigow_shake(table)
    shaker = device("dice_shaker")
    table.ok("door_opened", shaker, {"device": "dice_shaker", "fault": "lid"})
    table.ok("device_healthy", shaker, {"device": "dice_shaker"})
    table.ok("void_round", "supervisor:S1", {"reason": "the lid opened"})
    voided = table.ok("approve_override", "supervisor:S2", {"reason": "seen on camera"})
    names = [e.name for e in voided.events]
    assert names.index("round.voided") < names.index("bets.returned")
    snap = table.proc.snapshot()
    assert (snap["banker"], snap["bank_rounds"], snap["round"]) == ("B", 1, 3)
    assert (snap["bets"], snap["stake"], snap["dice"]) == ([], None, None)
    if table.proc.phase == "SHUFFLE":
        table.ok("confirm_tile_shuffle", DEALER)
    paigow_play(table, tile_groups(1), stake=stake)
    assert table.proc.snapshot()["bank_rounds"] == 2
    table.ok("next_round", DEALER)
    assert table.proc.phase == "BANK_OFFER"
    again = table.refused("take_bank", DEALER, {"player": "B", "seat": 0})
    assert again.violation is not None
    assert again.violation.article == "Portaria 15/90/M Art. 5(1)"


@pytest.mark.article("15/90/M", "2(2)", "2(7)", "6(1)")
def test_the_shake_waits_for_a_bet_and_each_played_door_sets_once() -> None:
    """Art. 2(2): the dice are the banker's shake's, none before it. Art. 2(7): the bets are
    placed before the shake, so a shake with none is refused. Art.
    6(1): the holder of each door bet on sets its tiles, once; a door nobody bet on has no
    hand to set."""
    art = "Portaria 15/90/M Art. "
    table = paigow_table()
    table.ok("take_bank", DEALER, {"player": "B", "seat": 0})
    table.ok("confirm_tile_shuffle", DEALER)
    table.ok("place_stake", DEALER, {"amount": 1000})
    table.ok("head_tiles_out", DEALER)
    early = table.refused("dice_landed", device("dice_shaker"), {"dice": [2, 2, 3, 3]}).violation
    assert early is not None and (early.article, early.reason) == (
        f"{art}2(2)",
        "dice_landed is not allowed in phase BETTING",
    )
    empty = table.refused("shake_dice", DEALER, {"player": "B"}).violation
    assert empty is not None and (empty.article, empty.reason) == (
        f"{art}2(7)",
        "the players' bets are placed before the shake; there is none",
    )
    table.ok("place_bet", DEALER, {"player": "P1", "seat": 1, "amount": 100})
    table.ok("place_bet", DEALER, {"player": "P2", "seat": 2, "amount": 100})
    table.ok("shake_dice", DEALER, {"player": "B"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [2, 2, 3, 3]})
    paigow_deal(table)
    unplayed = table.refused("set_hand", DEALER, {"seat": 5}).violation
    assert unplayed is not None and (unplayed.article, unplayed.reason) == (
        f"{art}6(1)",
        "no bet on door 5: its tiles are not played",
    )
    table.ok("set_hand", DEALER, {"seat": 1})
    twice = table.refused("set_hand", DEALER, {"seat": 1}).violation
    assert twice is not None and (twice.article, twice.reason) == (
        f"{art}6(1)",
        "door 1 has set its hand",
    )
    table.ok("set_hand", DEALER, {"seat": 2})
    assert table.proc.phase == "BANKER_SETTING"


@pytest.mark.article("51/89/M", "4")
def test_a_restart_during_a_redeal_is_held_for_a_supervisor() -> None:
    """Art. 4: a deal voided for a misdeal is dealt again with the bets and dice standing, so
    the hand shuffle of the redeal is inside the round: a table restarted there is held for a
    supervisor, where one restarted at a new round's hand shuffle plays on."""
    fresh = thirteen_table()
    resumed = fresh.ok("recovered", "system", {"stopped": "clean"})
    assert resumed.events[0].payload["held"] is False
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)
    deck = shuffled_deck(3)
    thirteen_deal(table, deck[:10])
    table.ok("card_read", device("shoe_reader"), {"card": deck[3]})  # a second copy: a misdeal
    assert table.proc.phase == "TILT"
    table.ok("device_healthy", device("shoe_reader"), {"device": "shoe_reader"})
    table.ok("clear_tilt", "supervisor:S1", {"reason": "reader checked"})
    table.ok("void_deal", "supervisor:S1", {"reason": "a duplicate card in the shoe"})
    table.ok("approve_override", "supervisor:S2", {"reason": "seen on camera"})
    assert table.proc.phase == "HAND_SHUFFLE" and table.proc.snapshot()["bets"]
    held = table.ok("recovered", "system", {"stopped": "clean"})
    assert held.events[0].payload["held"] is True
    assert table.proc.phase == "HOLD"


@pytest.mark.article("003", "way 3 stakes")
def test_a_points_table_whose_minimum_is_above_one_unit_does_not_start() -> None:
    """「1分×元」: with money per point a seat is taken with one unit, so a table of the points
    way whose minimum bet is above one unit would refuse every seat: its config is refused."""
    devices = {
        name: {"port": f"sim://{name}"} for name in ("shuffler", "shoe_reader", "dice_shaker")
    }
    table = {"ruleset": "hk-points", "unit": 100}
    with pytest.raises(ConfigError) as refused:
        parse_config({"table": {**table, "min_bet": 200}, "devices": devices})
    assert str(refused.value).endswith(
        "table.min_bet: 200 is above one unit (100); with money per point a seat is taken "
        "with one unit"
    )
    assert parse_config({"table": {**table, "min_bet": 100}, "devices": devices}).min_bet == 100
