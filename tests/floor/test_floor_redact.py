"""The floor serves a line by its own table's game's rule (issue 21 item 5): a Thirteen table's
checkpoint names its configuration under `settings` (currency, shaker, timer_in_hold), which
Pai Gow's rule would take for hands and hide from the pit; its cards stay hidden."""

from __future__ import annotations

from typing import Any

from daemon.floor.redact import visible_payload
from daemon.procedures.thirteen import ThirteenProcedure
from daemon.procedures.visibility import HIDDEN
from daemon.rules.cards import DECK


def _checkpoint() -> dict[str, Any]:
    """A Thirteen checkpoint's payload, as the table journals it, with a card dealt."""
    procedure = ThirteenProcedure(shaker="highest", timer_in_hold="running")
    checkpoint = procedure.checkpoint()
    checkpoint["state"]["dealt"] = [{"card": str(DECK[0]), "seat": 1, "face_up": False}]
    return {"procedure": checkpoint}


def test_the_pit_reads_a_thirteen_tables_settings_and_not_its_cards() -> None:
    payload = _checkpoint()
    shown, hidden = visible_payload("pit", "table.checkpoint", payload, False, "thirteen")
    settings = shown["procedure"]["config"]["settings"]
    assert settings["shaker"] == "highest" and settings["timer_in_hold"] == "running"
    assert settings["stakes"] == payload["procedure"]["config"]["settings"]["stakes"]
    assert "currency" in settings["stakes"] and settings["stakes"]["currency"] != HIDDEN
    assert hidden and shown["procedure"]["state"]["dealt"][0]["card"] == HIDDEN
    # Without its game (a table not yet known to the floor), every game's rule: nothing shown
    # that any game hides, the settings with it.
    unknown, _ = visible_payload("pit", "table.checkpoint", payload, False, None)
    assert unknown["procedure"]["state"]["dealt"][0]["card"] == HIDDEN
