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


@dataclass(frozen=True)
class JournalEvent:
    name: str
    payload: Mapping[str, Any]
    commit: bool


@dataclass(frozen=True)
class DeviceCommand:
    device: str
    command: str
    args: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Input:
    """One input as the runtime journals it, so that recovery can feed it again."""

    action: str
    actor: str
    payload: Mapping[str, Any]
    now: float

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


@dataclass(frozen=True)
class Outcome:
    accepted: bool
    phase: str
    violation: Violation | None
    events: tuple[JournalEvent, ...]
    commands: tuple[DeviceCommand, ...]


def role_of(actor: str) -> str:
    return actor.split(":", 1)[0]
