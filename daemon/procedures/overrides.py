"""Two-person steps: a dealer proposes what a device could not provide (or a correction the
regulation allows); the table holds it pending and changes nothing until a supervisor approves
or rejects it, with a reason; both actors are journaled (house rule H4)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from daemon.procedures.common import HOUSE_OVERRIDE
from daemon.procedures.faults import WithFaults
from daemon.procedures.payload import Refused, need, text


def _person(actor: str) -> str | None:
    """The person behind `role:id`, or None when the actor names no one."""
    return actor.split(":", 1)[1] if ":" in actor else None


class WithOverrides(WithFaults):
    # A dealer proposes what a device could not provide, or a correction the regulation allows;
    # the table holds it pending and changes nothing until a supervisor approves it (or rejects
    # it), with a reason; both actors are journaled. A game keeps its pending proposal in
    # `self.override` and applies an approved one in `_apply_override`. Nothing that breaks the
    # regulation is ever proposed: each proposal action checks its own article first.

    override: dict[str, Any] | None = None

    def propose(self, kind: str, article: str, now: float, **details: Any) -> None:
        actor = self._input.actor if self._input is not None else "system"
        self.override = {
            "kind": kind,
            "article": article,
            "proposed_by": actor,
            "since": now,
            **copy.deepcopy(details),
        }
        self.emit("override.proposed", **copy.deepcopy(self.override))

    def _ready_approve_override(self) -> bool:
        return self.override is not None

    _ready_reject_override = _ready_approve_override

    def _check_decision(self, payload: Mapping[str, Any]) -> None:
        if self.override is None:
            raise Refused(HOUSE_OVERRIDE, "no proposal is pending a supervisor's decision")
        text(payload, "reason", HOUSE_OVERRIDE)
        # Two persons: whoever proposed does not decide, under whatever role they sign in.
        actor, proposer = self._admitting or "", str(self.override["proposed_by"])
        if actor == proposer or _person(actor) == _person(proposer) is not None:
            raise Refused(HOUSE_OVERRIDE, "the one who proposes does not decide on it")

    def _check_approve_override(self, payload: Mapping[str, Any], now: float) -> None:
        self._check_decision(payload)
        self._check_override(need(self.override), now)

    def _check_reject_override(self, payload: Mapping[str, Any], now: float) -> None:
        self._check_decision(payload)

    def _apply_approve_override(self, payload: Mapping[str, Any], now: float) -> None:
        pending = need(self.override)
        self.override = None
        self.emit(
            "override.approved",
            **{k: v for k, v in pending.items() if k != "since"},
            approved_by=self._input.actor if self._input is not None else "system",
            reason=payload["reason"],
        )
        self._apply_override(pending, now)

    def _apply_reject_override(self, payload: Mapping[str, Any], now: float) -> None:
        pending = need(self.override)
        self.override = None
        self.emit(
            "override.rejected",
            **{k: v for k, v in pending.items() if k != "since"},
            rejected_by=self._input.actor if self._input is not None else "system",
            reason=payload["reason"],
        )

    def _check_override(self, pending: Mapping[str, Any], now: float) -> None:
        """The proposal still holds when the supervisor decides (raise Refused if not)."""

    def _apply_override(self, pending: Mapping[str, Any], now: float) -> None:
        raise NotImplementedError
