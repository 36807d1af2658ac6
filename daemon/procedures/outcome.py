"""What a procedure is fed and what it answers, as values: an `Input` as the runtime journals
it, and its `Outcome` (accepted or refused with its `Violation`, the `JournalEvent`s to append
and the `DeviceCommand`s to issue). The engine (`daemon.procedures.engine`) makes them; the
runtime, recovery and the tests read them (re-exported by `daemon.procedures.base`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from daemon.procedures import checkpoint as codec


@dataclass(frozen=True)
class Violation:
    actor: str
    action: str
    phase: str
    article: str
    reason: str
    field: str | None = None  # the payload field whose value broke the article, when one did
    reason_zh: str = ""  # the reason in Chinese (`Refused.zh`), for the bilingual console

    def as_payload(self) -> dict[str, Any]:
        out = {
            "actor": self.actor,
            "role": role_of(self.actor),
            "action": self.action,
            "phase": self.phase,
            "article": self.article,
            "reason": self.reason,
        }
        if self.reason_zh:
            out["reason_zh"] = self.reason_zh
        if self.field is not None:
            out["field"] = self.field
        return out


# Frozen records made several times an input (an Input, its Outcome, its events): their
# `__init__` sets the instance's dict at once, not one `object.__setattr__` a field as a frozen
# dataclass's own does (about 0.5 us less each); eq, hash, repr and frozenness stay the
# dataclass's.
_set_attribute = object.__setattr__


@dataclass(frozen=True, init=False)
class JournalEvent:
    name: str
    payload: Mapping[str, Any]
    commit: bool

    def __init__(self, name: str, payload: Mapping[str, Any], commit: bool) -> None:
        _set_attribute(self, "__dict__", {"name": name, "payload": payload, "commit": commit})


@dataclass(frozen=True)
class DeviceCommand:
    device: str
    command: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, init=False)
class Input:
    """One input as the runtime journals it, so that recovery can feed it again."""

    action: str
    actor: str
    payload: Mapping[str, Any]
    now: float

    def __init__(self, action: str, actor: str, payload: Mapping[str, Any], now: float) -> None:
        _set_attribute(
            self, "__dict__", {"action": action, "actor": actor, "payload": payload, "now": now}
        )

    def as_payload(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "actor": self.actor,
            "payload": codec.clone(dict(self.payload)),
            "now": self.now,
        }

    @classmethod
    def from_payload(cls, data: Mapping[str, Any]) -> Input:
        return cls(
            action=str(data["action"]),
            actor=str(data["actor"]),
            payload=dict(data.get("payload") or {}),
            now=float(data["now"]),
        )


@dataclass(frozen=True, init=False)
class Outcome:
    accepted: bool
    phase: str
    violation: Violation | None
    events: tuple[JournalEvent, ...]
    commands: tuple[DeviceCommand, ...]

    def __init__(
        self,
        accepted: bool,
        phase: str,
        violation: Violation | None,
        events: tuple[JournalEvent, ...],
        commands: tuple[DeviceCommand, ...],
    ) -> None:
        _set_attribute(self, "__dict__", {
            "accepted": accepted, "phase": phase, "violation": violation, "events": events,
            "commands": commands,
        })  # fmt: skip


def role_of(actor: str) -> str:
    return actor.split(":", 1)[0]
