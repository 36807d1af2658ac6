"""HOLD and TILT from every phase of each game; only a supervisor clears, after the device is
healthy; the exact phase resumes, or the round is void."""

from __future__ import annotations

from typing import Any

import pytest
from procedure_drive import SUPERVISOR, at_phase, device

from daemon.procedures.base import HOUSE_FAULTS, Procedure
from daemon.procedures.common import HOUSE_VOID
from daemon.procedures.paigow import PaiGowProcedure
from daemon.procedures.thirteen import ThirteenProcedure

SECOND = "supervisor:S2"
GAMES: dict[str, type[Procedure]] = {"thirteen": ThirteenProcedure, "paigow": PaiGowProcedure}
ORDINARY = [
    (game, phase.name)
    for game, cls in GAMES.items()
    for phase in cls.Phase
    if phase.name not in ("HOLD", "TILT")
]
FAULTS = [
    ("door_opened", {"device": "dice_shaker", "fault": "shaker detached"}, "HOLD", "clear_hold"),
    ("link_lost", {"device": "dice_shaker"}, "HOLD", "clear_hold"),
    ("fault_reported", {"device": "dice_shaker", "fault": "jam"}, "TILT", "clear_tilt"),
]


def _without_timer(snapshot: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in snapshot.items() if k != "timer"}


@pytest.mark.parametrize(("game", "phase"), ORDINARY)
@pytest.mark.parametrize(("fault", "payload", "held", "clear"), FAULTS)
def test_a_fault_suspends_any_phase_and_a_supervisor_resumes_it_exactly(
    *,
    game: str,
    phase: str,
    fault: str,
    payload: dict[str, Any],
    held: str,
    clear: str,
    prefixes: dict[str, Any],
) -> None:
    table = at_phase(game, phase, prefixes)
    before = table.proc.snapshot()
    outcome = table.ok(fault, device("dice_shaker"), payload)
    held_at = table.now
    assert table.proc.phase == held
    assert outcome.events[0].name == ("table.tilted" if held == "TILT" else "table.held")
    snap = table.proc.snapshot()
    assert snap["suspended"] == phase and "dice_shaker" in snap["faults"]

    # Play is refused while suspended, and nobody but a supervisor clears.
    for action in GAMES[game].ACTIONS:
        if action in table.proc.legal_actions("dealer"):
            pytest.fail(f"{action} offered to the dealer in {held}")
    refused = table.refused(clear, SUPERVISOR, {})
    assert refused.violation is not None and refused.violation.article == HOUSE_FAULTS
    table.refused(clear, "dealer:D1", {})
    wrong_clear = "clear_hold" if clear == "clear_tilt" else "clear_tilt"
    table.refused(wrong_clear, SUPERVISOR, {})

    table.ok("device_healthy", device("dice_shaker"), {"device": "dice_shaker"})
    table.refused("device_healthy", device("dice_shaker"), {"device": "shuffler"})
    assert table.proc.phase == held  # healthy is not resumed: a person must clear it
    resumed = table.ok(clear, SUPERVISOR, {})
    assert table.proc.phase == phase
    assert resumed.events[0].name == "table.resumed"
    assert resumed.events[0].payload["phase"] == phase
    after = table.proc.snapshot()
    assert after["faults"] == {} and after["suspended"] is None
    assert _without_timer(after) == _without_timer(before)
    if before.get("timer", {}).get("deadline") is not None:
        # The five minutes stood still while the table was held.
        remaining_before = before["timer"]["deadline"] - held_at
        remaining_after = after["timer"]["deadline"] - table.now
        assert remaining_after == pytest.approx(remaining_before)


def _known(game: str, phase: str) -> bool:
    """From the deal on, a card or tile of the round may be known to someone at the table."""
    names = [p.name for p in GAMES[game].Phase]
    return names.index(phase) >= names.index("DEALING")


@pytest.mark.parametrize(("game", "phase"), ORDINARY)
@pytest.mark.article("51/89/M", "4")
def test_a_second_fault_while_held_escalates_and_void_restarts_the_round(
    game: str, phase: str, prefixes: dict[str, Any]
) -> None:
    table = at_phase(game, phase, prefixes)
    round_before = table.proc.snapshot()["round"]
    table.ok("door_opened", device("shoe_reader"), {"device": "shoe_reader", "fault": "removed"})
    table.ok("fault_reported", device("shuffler"), {"device": "shuffler", "fault": "jam"})
    assert table.proc.phase == "TILT"
    table.ok("device_healthy", device("shuffler"), {"device": "shuffler"})
    table.refused("void_round", SUPERVISOR, {"reason": "jam"})  # the shoe is still out
    table.ok("device_healthy", device("shoe_reader"), {"device": "shoe_reader"})
    table.refused("void_round", SUPERVISOR, {})  # a void says why
    if phase == "ROUND_OVER":
        # A settled round stands: voiding it would undo its settlement.
        settled = table.refused("void_round", SUPERVISOR, {"reason": "after the fact"})
        assert settled.violation is not None and settled.violation.article == HOUSE_VOID
        return
    first = table.ok("void_round", SUPERVISOR, {"reason": "shoe removed mid-round"})
    if _known(game, phase):
        # Cards are known: one supervisor only proposes; another, named, approves (H5).
        assert first.events[0].name == "override.proposed" and table.proc.phase == "TILT"
        assert "void_round" not in table.proc.legal_actions("supervisor")
        table.refused("approve_override", SUPERVISOR, {"reason": "I am sure"})
        table.refused("approve_override", "supervisor", {"reason": "nobody named"})
        table.refused("void_round", "supervisor:S2", {"reason": "again"})
        voided = table.ok("approve_override", SECOND, {"reason": "seen on camera"})
        assert [e.name for e in voided.events][:2] == ["override.approved", "round.voided"]
        decided = voided.events[1].payload
        assert (decided["proposed_by"], decided["approved_by"]) == (SUPERVISOR, SECOND)
        assert decided["reason"] == "shoe removed mid-round"
        assert decided["approval_reason"] == "seen on camera"
    else:
        voided = first
        assert voided.events[0].name == "round.voided"
        assert voided.events[0].payload["decided_by"] == SUPERVISOR
    snap = table.proc.snapshot()
    assert snap["faults"] == {} and snap["suspended"] is None and snap["override"] is None
    if not snap["opened"]:
        assert table.proc.phase == "EQUIPMENT_CHECK"
    elif game == "thirteen":
        assert table.proc.phase == "HAND_SHUFFLE"
        assert snap["round"] == round_before + 1
        assert snap["bets"] == [] and snap["dealt"] == []
    else:
        assert table.proc.phase in ("BANK_OFFER", "SHUFFLE")
        assert snap["bets"] == []


@pytest.mark.parametrize("game", sorted(GAMES))
@pytest.mark.article("51/89/M", "4")
def test_a_void_proposed_in_hold_lapses_when_the_round_is_cleared_and_resumes(
    game: str, prefixes: dict[str, Any]
) -> None:
    """The attack of issue 9: open a lid, HOLD, void a round that is going badly. One supervisor
    can only propose; clearing resumes the round exactly and the proposal lapses, journaled."""
    phase = "SETTLING" if game == "thirteen" else "OPENED"
    table = at_phase(game, phase, prefixes)
    before = table.proc.snapshot()
    table.ok("door_opened", device("dice_shaker"), {"device": "dice_shaker", "fault": "lid"})
    table.ok("device_healthy", device("dice_shaker"), {"device": "dice_shaker"})
    table.ok("void_round", SUPERVISOR, {"reason": "the lid opened"})
    assert table.proc.snapshot()["override"]["kind"] == "void_round"
    table.refused("approve_override", SUPERVISOR, {"reason": "approve my own"})
    resumed = table.ok("clear_hold", SUPERVISOR, {"reason": "lid closed"})
    assert [e.name for e in resumed.events][:1] == ["override.lapsed"]
    assert table.proc.phase == phase
    assert _without_timer(table.proc.snapshot()) == _without_timer(before)
    table.refused("approve_override", SECOND, {"reason": "too late"})


@pytest.mark.parametrize(("game", "phase"), ORDINARY)
def test_a_lone_supervisor_holds_the_table_and_any_supervisor_resumes_it(
    game: str, phase: str, prefixes: dict[str, Any]
) -> None:
    """The emergency a lone supervisor has: HOLD the table (nothing is undone), with a reason."""
    table = at_phase(game, phase, prefixes)
    before = table.proc.snapshot()
    table.refused("hold_table", "dealer:D1", {"reason": "dispute"})
    table.refused("hold_table", SUPERVISOR, {})
    held = table.ok("hold_table", SUPERVISOR, {"reason": "a dispute at seat 2"})
    assert held.events[0].name == "table.held" and table.proc.phase == "HOLD"
    assert held.events[0].payload["reason"] == "a dispute at seat 2"
    table.refused("hold_table", SUPERVISOR, {"reason": "again"})
    table.ok("clear_hold", SUPERVISOR, {"reason": "settled"})
    assert table.proc.phase == phase
    assert _without_timer(table.proc.snapshot()) == _without_timer(before)


def test_a_link_lost_mid_deal_is_never_resumed_silently(prefixes: dict[str, Any]) -> None:
    table = at_phase("thirteen", "DEALING", prefixes)
    table.ok("link_lost", "system", {"device": "shoe_reader"})
    reader = device("shoe_reader")
    table.refused("card_read", reader, {"card": "As"})
    table.ok("device_healthy", reader, {"device": "shoe_reader"})
    table.refused("card_read", reader, {"card": "As"})
    assert table.proc.phase == "HOLD"
    table.ok("clear_hold", SUPERVISOR, {"reason": "link back, reader re-synced"})
    assert table.proc.phase == "DEALING"


@pytest.mark.parametrize(("game", "phase"), ORDINARY)
def test_after_a_restart_the_replayed_round_waits_in_hold_for_a_supervisor(
    game: str, phase: str, prefixes: dict[str, Any]
) -> None:
    table = at_phase(game, phase, prefixes)
    before = table.proc.snapshot()
    recovered = table.ok("recovered", "system", {})
    assert recovered.events[0].name == "table.recovered"
    assert recovered.events[0].payload["phase"] == phase
    assert table.proc.phase == "HOLD"
    table.refused("recovered", "dealer:D1", {})
    table.ok("clear_hold", SUPERVISOR, {})
    assert table.proc.phase == phase
    assert _without_timer(table.proc.snapshot()) == _without_timer(before)


@pytest.mark.parametrize(
    ("game", "phase", "device_name", "command"),
    [
        ("thirteen", "MACHINE_SHUFFLE", "shuffler", "shuffle"),
        ("thirteen", "SHAKING", "dice_shaker", "shake"),
        ("thirteen", "DEALING", "shoe_reader", "arm"),
        ("paigow", "SHAKING", "dice_shaker", "shake"),
    ],
)
def test_a_device_awaited_when_the_table_stopped_is_asked_again_on_resume(
    game: str, phase: str, device_name: str, command: str, prefixes: dict[str, Any]
) -> None:
    table = at_phase(game, phase, prefixes)
    table.ok("link_lost", "system", {"device": device_name})
    table.ok("device_healthy", device(device_name), {"device": device_name})
    resumed = table.ok("clear_hold", SUPERVISOR, {})
    assert [(c.device, c.command) for c in resumed.commands] == [(device_name, command)]
