"""What both games declare alike: the fault actions (HOLD and TILT from every phase, and back),
the supervisor's half of a two-person step, and the house rules that govern them where the
regulation is silent (documented in docs/procedures.md). Data only: the code that plays them is
`daemon.procedures.faults` and `daemon.procedures.overrides`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum
from typing import Any

from transitions import EventData

from daemon.procedures.spec import Action

HOUSE_FAULTS = "tabled H1 (faults disable play until a supervisor clears them)"
HOUSE_ROLES = "tabled H2 (each action belongs to one role; unknown actions are refused)"
HOUSE_DICE = "tabled H3 (an invalid dice result is shaken again; the third in a row is a TILT)"
HOUSE_OVERRIDE = (
    "tabled H4 (an override is a dealer's proposal a supervisor decides, with a reason)"
)

_DEVICE, _SUPERVISOR = frozenset({"device"}), frozenset({"supervisor"})


def common_actions(regulation: str) -> list[Action]:
    """The fault actions every game shares."""
    return [
        Action(
            "fault_reported",
            _DEVICE,
            HOUSE_FAULTS,
            "a device reports a fault",
            label_en="Device fault",
            label_zh="設備故障",
        ),
        Action(
            "door_opened",
            _DEVICE,
            HOUSE_FAULTS,
            "a door, lid or shoe is opened/removed",
            label_en="Door opened",
            label_zh="門已打開",
        ),
        Action(
            "link_lost",
            frozenset({"device", "system"}),
            HOUSE_FAULTS,
            "a device link is lost",
            label_en="Link lost",
            label_zh="連線中斷",
        ),
        Action(
            "recovered",
            frozenset({"system"}),
            HOUSE_FAULTS,
            "the daemon restarted and replayed its journal",
            label_en="Restarted",
            label_zh="系統重啟",
        ),
        Action(
            "device_healthy",
            _DEVICE,
            HOUSE_FAULTS,
            "a device reports healthy again",
            label_en="Device healthy",
            label_zh="設備恢復正常",
        ),
        Action(
            "clear_hold",
            _SUPERVISOR,
            HOUSE_FAULTS,
            "resume after a HOLD",
            label_en="Clear HOLD",
            label_zh="解除暫停",
            params={},
        ),
        Action(
            "clear_tilt",
            _SUPERVISOR,
            HOUSE_FAULTS,
            "resume after a TILT",
            label_en="Clear TILT",
            label_zh="解除故障",
            params={},
        ),
        Action(
            "void_round",
            _SUPERVISOR,
            HOUSE_FAULTS,
            f"void the round in HOLD or TILT ({regulation})",
            label_en="Void round",
            label_zh="作廢本局",
            params={},
        ),
    ]


def override_actions(article: str) -> list[Action]:
    """The supervisor's half of a two-person step (see `daemon.procedures.overrides`)."""
    return [
        Action(
            "approve_override",
            _SUPERVISOR,
            article,
            "approve the dealer's pending proposal (a reason is required)",
            label_en="Approve override",
            label_zh="批准更正",
            params={},
        ),
        Action(
            "reject_override",
            _SUPERVISOR,
            article,
            "reject the dealer's pending proposal (a reason is required)",
            label_en="Reject override",
            label_zh="駁回更正",
            params={},
        ),
    ]


# override kind -> (English, Chinese) of what the supervisor is asked to approve
OVERRIDES: dict[str, tuple[str, str]] = {
    "enter_card": ("Enter card by hand", "人手輸入牌"),
}


class _ResumesTo:
    """A transition condition: the suspended round resumes in this phase."""

    def __init__(self, phase: Enum) -> None:
        self.phase = phase
        self.__name__ = f"resumes_to_{phase.name}"

    def __call__(self, event: EventData) -> bool:
        return getattr(event.model, "_target", None) == self.phase.name


def fault_transitions(
    phases: Iterable[Enum], hold: Enum, tilt: Enum, restart: Sequence[tuple[Enum, str]]
) -> list[dict[str, Any]]:
    """HOLD and TILT from every phase, and back to each phase, as transition data.

    `restart` lists (phase, condition) pairs for `void_round`, tried in order.
    """
    ordinary = [p for p in phases if p not in (hold, tilt)]
    rows: list[dict[str, Any]] = [
        {"trigger": "fault_reported", "source": [*ordinary, hold], "dest": tilt},
        {"trigger": "fault_reported", "source": tilt, "dest": tilt},
        {"trigger": "door_opened", "source": ordinary, "dest": hold},
        {"trigger": "door_opened", "source": hold, "dest": hold},
        {"trigger": "door_opened", "source": tilt, "dest": tilt},
        {"trigger": "link_lost", "source": ordinary, "dest": hold},
        {"trigger": "link_lost", "source": hold, "dest": hold},
        {"trigger": "link_lost", "source": tilt, "dest": tilt},
        {"trigger": "recovered", "source": [*ordinary, hold], "dest": hold},
        {"trigger": "recovered", "source": tilt, "dest": tilt},
        {"trigger": "device_healthy", "source": hold, "dest": hold},
        {"trigger": "device_healthy", "source": tilt, "dest": tilt},
    ]
    for trigger, source in (("clear_hold", hold), ("clear_tilt", tilt)):
        rows += [
            {"trigger": trigger, "source": source, "dest": p, "conditions": _ResumesTo(p)}
            for p in ordinary
        ]
    for dest, condition in restart:
        rows.append(
            {"trigger": "void_round", "source": [hold, tilt], "dest": dest, "conditions": condition}
        )
    return rows
