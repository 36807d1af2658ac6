"""The engine takes an input whole or not at all: an action is validated completely (role,
phase, declared parameters, the game's own checks, and a transition that will take it) before
the round is changed; one that no row of the table takes is refused and changes nothing."""

from __future__ import annotations

import logging
from typing import Any, ClassVar

import pytest
from procedure_drive import (
    DEALER,
    SUPERVISOR,
    Table,
    device,
    identify,
    paigow_round,
    paigow_table,
    shuffled_deck,
    thirteen_round,
    thirteen_table,
)

from daemon.procedures.base import Procedure
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.thirteen import DEVICES, ThirteenProcedure
from daemon.procedures.thirteen.transitions import TRANSITIONS


class _Hole(ThirteenProcedure):
    """Thirteen with a hole in its table: the cut's only row has a condition that never holds,
    while `_apply_confirm_cut` records the cut before the machine is asked."""

    TRANSITIONS: ClassVar[list[dict[str, Any]]] = [
        {**row, "conditions": "never"} if row["trigger"] == "confirm_cut" else row
        for row in TRANSITIONS
    ]

    def never(self, event: object) -> bool:
        return False


def test_the_machine_narrates_each_step_when_its_log_is_asked_for(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """`--log-level debug` brings `transitions`' narration of each step back (daemon/logging.py):
    the machine fires every transition and tells each step while its logger is at DEBUG;
    otherwise silently, to the same phase."""
    identified = {"device": "shuffler", "approved": True}
    with caplog.at_level(logging.WARNING, logger="transitions"):
        quiet = ThirteenProcedure()
        assert quiet.handle("device_identified", device("shuffler"), identified, 1.0).accepted
    assert not [r for r in caplog.records if r.name.startswith("transitions")]
    with caplog.at_level(logging.DEBUG, logger="transitions"):
        told = ThirteenProcedure()
        assert told.handle("device_identified", device("shuffler"), identified, 1.0).accepted
    narrated = [r.getMessage() for r in caplog.records if r.name == "transitions.core"]
    assert any("Initiating transition from state EQUIPMENT_CHECK" in m for m in narrated)
    assert told.snapshot() == quiet.snapshot()


def test_a_trigger_no_row_takes_is_refused_and_changes_nothing() -> None:
    table = Table(_Hole())
    identify(table, DEVICES)
    table.ok("open_table", DEALER)
    table.ok("confirm_hand_shuffle", DEALER)
    table.ok("shuffle_completed", device("shuffler"), {"count": 52, "mode": "random"})
    before, kept = table.proc.snapshot(), table.proc.checkpoint()
    outcome = table.feed(
        "confirm_cut", DEALER, {"by": "player", "player": "P1", "cards": 20, "one_hand": True}
    )
    assert not outcome.accepted
    assert outcome.violation is not None
    assert outcome.violation.article == "Portaria 51/89/M Art. 2(a)"
    assert "no transition" in outcome.violation.reason
    assert [e.name for e in outcome.events] == ["table.violation"]
    assert outcome.commands == ()
    assert table.proc.snapshot() == before
    assert table.proc.checkpoint() == kept
    assert table.proc.cut is None  # type: ignore[attr-defined]  # the cut _apply_ had recorded
    # and the round goes on as if the refused input had never come
    table.ok("fault_reported", device("shuffler"), {"device": "shuffler", "fault": "jam"})
    assert table.proc.phase == "TILT"


def test_a_clear_of_a_tilt_the_round_cannot_resume_from_is_taken_back() -> None:
    """`clear_tilt`'s rows are all conditional (where the round resumes): a resume target that
    no row names (here forced to TILT itself) is refused with the round left as it was."""
    table = Table(ThirteenProcedure())
    identify(table, DEVICES)
    table.ok("open_table", DEALER)
    table.ok("fault_reported", device("shuffler"), {"device": "shuffler", "fault": "jam"})
    table.ok("device_healthy", device("shuffler"), {"device": "shuffler"})
    table.proc.resume_to = "TILT"
    before = table.proc.snapshot()
    outcome = table.feed("clear_tilt", SUPERVISOR, {"reason": "jam cleared"})
    assert not outcome.accepted
    assert table.proc.snapshot() == before
    table.proc.resume_to = "HAND_SHUFFLE"
    table.ok("clear_tilt", SUPERVISOR, {"reason": "jam cleared"})
    assert table.proc.phase == "HAND_SHUFFLE"


def _played() -> list[Procedure]:
    thirteen = thirteen_table()
    thirteen_round(thirteen, shuffled_deck(1))
    paigow = paigow_table()
    paigow_round(paigow, seed=1)
    return [thirteen.proc, paigow.proc, ThirteenProcedure(), PaiGowProcedure()]


def test_a_checkpoint_names_every_piece_of_state_and_nothing_else() -> None:
    """Checkpoints read and write the state each layer declares (`STATE`), not whatever the
    object holds: this is where a new attribute that was forgotten shows up."""
    for proc in _played():
        kept = {
            k
            for k, v in vars(proc).items()
            if not k.startswith("_")
            and k not in ("machine", "state", *type(proc).CONFIG_ATTRS)
            and not callable(v)
        }
        assert kept == set(type(proc).state_names()), type(proc).__name__
        checkpoint = proc.checkpoint()
        fresh = type(proc)()
        fresh.restore(checkpoint)
        assert fresh.snapshot() == proc.snapshot()
        stale = {**checkpoint, "state": {**checkpoint["state"], "extra": 1}}
        with pytest.raises(ValueError, match="extra"):
            type(proc)().restore(stale)
