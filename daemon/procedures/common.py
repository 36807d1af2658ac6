"""What both games declare alike: the fault actions (HOLD and TILT from every phase, and back),
the supervisor's half of a two-person step, and the house rules that govern them where the
regulation is silent (documented in docs/procedures.md). Data only: the code that plays them is
`daemon.procedures.faults` and `daemon.procedures.overrides`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, Final

from transitions import EventData

from daemon.procedures.payload import Refused
from daemon.procedures.spec import Action, Param

HOUSE_FAULTS = "tabled H1 (faults disable play until a supervisor clears them)"
HOUSE_ROLES = "tabled H2 (each action belongs to one role; unknown actions are refused)"
HOUSE_DICE = "tabled H3 (an invalid dice result is shaken again; the third in a row is a TILT)"
HOUSE_OVERRIDE = (
    "tabled H4 (an override is a dealer's proposal a supervisor decides, with a reason)"
)
HOUSE_VOID = (
    "tabled H5 (once a card of the round is known, a void is one supervisor's proposal "
    "and another's approval, each with a reason)"
)
HOUSE_DEVICE = "tabled H6 (a device reports only its own facts)"

# The device whose result each device fact is (DOMAIN R4: a fact is taken only from the device
# of that kind); the facts that name a device in their payload (`device`) must name the sender.
DEVICE_OF_FACT: dict[str, str] = {
    "shuffle_completed": "shuffler",
    "dice_landed": "dice_shaker",
    "card_read": "shoe_reader",
}

# The fields each device fact may carry, as the adapters (drivers/*/adapter.py, a plug-in's
# included) and the table's device host (daemon/table/devices.py) build them. A device's payload
# is read by the procedure's own checks, not by declared parameters; a field beyond these is
# refused, so nothing a device adds (a `seat` that claims where a card went, bulk) reaches the
# journal as the table's fact.
_IDENTITY_FIELDS = frozenset(
    {"device", "approved", "approval", "make", "model", "serial", "firmware", "firmware_hash",
     "kind", "driver", "package_sha256"}
)  # fmt: skip
DEVICE_FACT_FIELDS: dict[str, frozenset[str]] = {
    "device_identified": _IDENTITY_FIELDS,
    "shuffle_completed": frozenset({"count", "mode", "unreadable", "foreign"}),
    "dice_landed": frozenset({"dice", "valid", "reason", "die"}),
    "card_read": frozenset({"card", "face_up", "index", "misread"}),
    "fault_reported": frozenset({"device", "fault", "identity"}),
    "door_opened": frozenset({"device", "fault"}),
    "link_lost": frozenset({"device", "reason"}),
    "device_healthy": frozenset({"device"}),
}


def check_device_fact(action: str, actor: str, payload: Mapping[str, Any]) -> None:
    """Refuse a device fact that is not the sending device's own: `device:<name>` reports its
    own results, its own faults and its own health, never another device's."""
    _, _, name = actor.partition(":")
    if not name:
        raise Refused(
            HOUSE_DEVICE,
            f"a device fact names its device (device:<name>): {actor!r}",
            zh=f"設備事實須註明其設備（device:<名稱>）：{actor!r}",
        )
    kind = DEVICE_OF_FACT.get(action)
    if kind is not None and name != kind:
        raise Refused(
            HOUSE_DEVICE,
            f"{action} is the {kind}'s to report, not {name}'s",
            "device",
            zh=f"{action} 應由 {kind} 報告，不是 {name}",
        )
    if not (type(payload) is dict or isinstance(payload, Mapping)):
        return  # refused by the engine's own check, citing the action's article
    fields = DEVICE_FACT_FIELDS.get(action, frozenset())
    unknown = sorted(str(key)[:40] for key in payload if key not in fields)
    if unknown:
        raise Refused(
            HOUSE_DEVICE,
            f"{action} carries no field {', '.join(unknown)} (known: {', '.join(sorted(fields))})",
            "device",
            zh=f"{action} 沒有欄位 {', '.join(unknown)}（可用：{', '.join(sorted(fields))}）",
        )
    if "device" in payload and payload["device"] != name:
        raise Refused(
            HOUSE_DEVICE,
            f"device:{name} reports for itself, not for {str(payload['device'])[:40]!r}",
            "device",
            zh=f"device:{name} 只報告自己，不代 {str(payload['device'])[:40]!r} 報告",
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
            "hold_table",
            _SUPERVISOR,
            HOUSE_FAULTS,
            "a supervisor holds the table (an emergency, a dispute); any supervisor clears it",
            label_en="Hold table",
            label_zh="暫停賭枱",
            params={},
        ),
        Action(
            "replace_device",
            _SUPERVISOR,
            HOUSE_FAULTS,
            "propose the device on the line in place of the one identified: the same approved "
            "make, model and firmware with another serial; a second supervisor approves",
            label_en="Replace device",
            label_zh="更換設備",
            params={
                "device": Param(
                    "str", min_length=1, max_length=64, label_en="Device", label_zh="設備"
                )
            },
        ),
        Action(
            "void_round",
            _SUPERVISOR,
            HOUSE_VOID,
            f"void the round in HOLD or TILT ({regulation}); once a card of it is known, a "
            "proposal that a second supervisor approves",
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
            "approve the pending proposal (a dealer's correction, another supervisor's void; "
            "a reason is required)",
            label_en="Approve override",
            label_zh="批准更正",
            params={},
        ),
        Action(
            "reject_override",
            _SUPERVISOR,
            article,
            "reject the pending proposal (a reason is required)",
            label_en="Reject override",
            label_zh="駁回更正",
            params={},
        ),
    ]


# override kind -> (English, Chinese) of what the supervisor is asked to approve
OVERRIDES: dict[str, tuple[str, str]] = {
    "enter_card": ("Enter card by hand", "人手輸入牌"),
    "replace_device": ("Replace a device", "更換設備"),
    "void_deal": ("Void the deal", "作廢此次發牌"),
    "void_round": ("Void the round", "作廢本局"),
    "correct_arrangement": ("Correct a placed hand", "更正已排入三道的牌"),
}
# The proposals that undo a round: a second, different supervisor approves them.
VOIDS: Final = ("void_deal", "void_round")
# The proposals that change what a round's settlement reads once it lies open to everyone (an
# open hand's rows, final once placed): a supervisor's, a second named supervisor approves.
CORRECTIONS: Final = ("correct_arrangement",)


class _Decided:
    """A transition condition: the void (`void_round`, or its approval) went the given way
    (`VOIDED`: the round is void now; `PROPOSED`: it waits for a second supervisor)."""

    def __init__(self, outcome: str) -> None:
        self.outcome = outcome
        self.__name__ = outcome.lower()

    def __call__(self, event: EventData) -> bool:
        return getattr(event.model, "_target", None) == self.outcome


VOIDED, PROPOSED = _Decided("VOIDED"), _Decided("PROPOSED")


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
        # A restart after a clean stop between rounds plays on (the reason is journaled);
        # after a stop or a crash inside a round a supervisor looks first (HOLD).
        *(
            {"trigger": "recovered", "source": p, "dest": p, "conditions": "ready_after_restart"}
            for p in ordinary
        ),
        {
            "trigger": "recovered",
            "source": ordinary,
            "dest": hold,
            "unless": "ready_after_restart",
        },
        {"trigger": "recovered", "source": hold, "dest": hold},
        {"trigger": "recovered", "source": tilt, "dest": tilt},
        {"trigger": "device_healthy", "source": hold, "dest": hold},
        {"trigger": "device_healthy", "source": tilt, "dest": tilt},
        {"trigger": "hold_table", "source": ordinary, "dest": hold},
    ]
    for trigger, source in (("clear_hold", hold), ("clear_tilt", tilt)):
        rows += [
            {"trigger": trigger, "source": source, "dest": p, "conditions": _ResumesTo(p)}
            for p in ordinary
        ]
    # A void: at once when no card of the round is known, else a proposal that stays in HOLD or
    # TILT until a second supervisor approves it (`approve_override`) or rejects it.
    for trigger in ("void_round", "approve_override"):
        for dest, condition in restart:
            rows.append(
                {
                    "trigger": trigger,
                    "source": [hold, tilt],
                    "dest": dest,
                    "conditions": [VOIDED, condition],
                }
            )
    rows += [
        {"trigger": "void_round", "source": hold, "dest": hold, "conditions": PROPOSED},
        {"trigger": "void_round", "source": tilt, "dest": tilt, "conditions": PROPOSED},
        {"trigger": "reject_override", "source": hold, "dest": hold},
        {"trigger": "reject_override", "source": tilt, "dest": tilt},
        # A device replaced (`overrides`): proposed and approved where the table is held (an
        # approval that voids nothing, tried after the voids' rows, stays where it is).
        {"trigger": "replace_device", "source": hold, "dest": hold},
        {"trigger": "replace_device", "source": tilt, "dest": tilt},
        {"trigger": "approve_override", "source": hold, "dest": hold},
        {"trigger": "approve_override", "source": tilt, "dest": tilt},
    ]
    return rows
