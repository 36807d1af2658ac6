"""Tests the proof of the trace found missing (issue 26): each kills a mutant of a guard that
every test of its article let pass. `tabled trace --prove --article A` shows them killed."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from daemon.config import load_config
from daemon.procedures.stakes import DEFAULT_UNIT
from tests.procedures.procedure_drive import (
    DEALER,
    Prefixes,
    at_phase,
    device,
    thirteen_bets,
    thirteen_table,
    thirteen_to_betting,
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

    sources = {line["name"]: line["source"] for line in map(json.loads, done.stdout.splitlines())}
    assert sources["macau-1989"] == "000 Art. 6-11 (Portaria 51/89/M)"
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
    """Art. 2(b): the deal is the reader's cards in order; a report that is neither one card
    (a string) nor a misread naming none, or whose index is not a number, is refused."""
    table = thirteen_table()
    thirteen_to_betting(table)
    thirteen_bets(table)
    table.ok("shake_dice", DEALER, {"player": "P1"})
    table.ok("dice_landed", device("dice_shaker"), {"dice": [2, 2, 2, 2]})
    shoe = device("shoe_reader")
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
