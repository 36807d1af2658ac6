"""Two-person steps: a dealer proposes what a device could not provide (or a correction the
regulation allows); the table holds it pending and changes nothing until a supervisor approves
or rejects it, with a reason; both actors are journaled (house rule H4).

Two supervisors (a proposer and a second, named one who approves) for what undoes a round
(`void_round`, `void_deal`, H5), for what corrects an open hand's rows once placed (the
`CORRECTIONS`: a hand is final once open, so the dealer alone never places it again), and for
a device replaced by another of the same approved build (`replace_device`): a device whose
serial is not the one the table identified is never healthy (DOMAIN R4,
daemon.table.devices) until a supervisor proposes it in its place and a second approves;
`device.replaced` names both, the old serial and the new. Any other difference (make, model,
firmware, its hash) or a build the approved list does not name cannot be proposed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final

from daemon.procedures.checkpoint import clone
from daemon.procedures.common import (
    CORRECTIONS,
    HOUSE_FAULTS,
    HOUSE_OVERRIDE,
    HOUSE_VOID,
    VOIDS,
)
from daemon.procedures.engine import Hooks, bind
from daemon.procedures.faults import WithFaults
from daemon.procedures.payload import Refused, text
from daemon.procedures.records import (
    GameProposal,
    Identity,
    Proposal,
    Proposed,
    Replacement,
    VoidRound,
)

REPLACE: Final = "replace_device"  # the override kind of a device replaced (its proposal's action)
# What a replacement keeps: the same make, model and firmware (and its hash); the serial differs.
REPLACEABLE = ("make", "model", "serial", "firmware", "firmware_hash")


def _person(actor: str) -> str | None:
    """The person behind `role:id`, or None when the actor names no one."""
    return actor.split(":", 1)[1] if ":" in actor else None


def _decided(pending: Proposal) -> dict[str, Any]:
    """A pending proposal as its decision journals it: the proposer's reason (a void's) is
    `proposal_reason`, beside the decider's own `reason`."""
    out = {k: v for k, v in pending.items() if k not in ("since", "reason")}
    if "reason" in pending:
        out["proposal_reason"] = pending.get("reason")
    return out


class WithOverrides(WithFaults):
    # A dealer proposes what a device could not provide, or a correction the regulation allows;
    # the table holds it pending and changes nothing until a supervisor approves it (or rejects
    # it), with a reason; both actors are journaled. A game keeps its pending proposal in
    # `self.override` and applies an approved one in `_apply_override`. Nothing that breaks the
    # regulation is ever proposed: each proposal action checks its own article first.

    #
    # What undoes a round once a card of it is known (`void_deal`, `void_round`) goes the same
    # way between two supervisors (tabled H5): one proposes it with a reason, a second, named
    # supervisor approves it with a reason (or either rejects it... but not the proposer), and
    # until then nothing of the round moves but the faults and the decision itself.

    override: Proposal | None = None
    identified: dict[str, Identity]  # the game's (daemon.procedures.base)
    ENGINE_STATE: ClassVar[tuple[str, ...]] = (*WithFaults.ENGINE_STATE, "override")

    def __init__(self, table_id: str = "T01") -> None:
        self.override = None
        super().__init__(table_id)

    # What a pending void does not hold back: the faults (a door still opens), the decision,
    # and clearing a HOLD or TILT (which lets a void proposed there lapse).
    WHILE_VOID_PENDING: ClassVar[frozenset[str]] = frozenset(
        {
            "approve_override",
            "reject_override",
            "fault_reported",
            "door_opened",
            "link_lost",
            "recovered",
            "device_healthy",
            "device_identified",
            "clear_hold",
            "clear_tilt",
            "hold_table",
        }
    )

    def _actor(self) -> str:
        """Who asks for the action being taken (`system` for what the table does itself)."""
        return self._input.actor if self._input is not None else "system"

    def proposed(self, article: str, now: float) -> Proposed:
        """What every proposal made now holds after its `kind`: the rule it keeps, who
        proposes it, since when."""
        return Proposed(article=article, proposed_by=self._actor(), since=now)

    def propose(self, proposal: Proposal) -> None:
        """Hold `proposal` pending a supervisor's decision (its `kind`, then `proposed`, then
        its details), and journal it."""
        self.override = clone(proposal)
        self.emit("override.proposed", **clone(self.override))

    def _pending(self) -> Proposal:
        """The proposal decided on (the transition table admits a decision only then)."""
        if self.override is None:
            raise RuntimeError("the procedure reached a phase without the state it requires")
        return self.override

    def _ready_approve_override(self) -> bool:
        return self.override is not None

    _ready_reject_override = _ready_approve_override

    def _check_decision(self, payload: Mapping[str, Any]) -> None:
        if self.override is None:
            raise Refused(
                HOUSE_OVERRIDE,
                "no proposal is pending a supervisor's decision",
                zh="沒有待主任決定的提議",
            )
        void = self.override["kind"] in VOIDS
        article = HOUSE_VOID if void else HOUSE_OVERRIDE
        if self.override["kind"] in CORRECTIONS:
            article = self.override["article"]  # the game's article the correction keeps
        text(payload, "reason", article)
        # Two persons: whoever proposed does not decide, under whatever role they sign in.
        actor, proposer = self._admitting or "", self.override["proposed_by"]
        if actor == proposer or _person(actor) == _person(proposer) is not None:
            raise Refused(
                article, "the one who proposes does not decide on it", zh="提出者不可自行決定"
            )
        if void and _person(actor) is None:
            raise Refused(
                article,
                "a void is decided by a named supervisor (supervisor:<id>)",
                zh="作廢須由具名主任（supervisor:<id>）決定",
            )
        if self.override["kind"] == REPLACE and _person(actor) is None:
            raise Refused(
                HOUSE_FAULTS,
                "a replacement is decided by a named supervisor (supervisor:<id>)",
                zh="更換設備須由具名主任（supervisor:<id>）決定",
            )
        if self.override["kind"] in CORRECTIONS and _person(actor) is None:
            raise Refused(
                article,
                "a correction is decided by a named supervisor (supervisor:<id>)",
                zh="更正須由具名主任（supervisor:<id>）決定",
            )

    def _check_approve_override(self, payload: Mapping[str, Any], now: float) -> None:
        self._check_decision(payload)
        pending = self._pending()
        if pending["kind"] == "void_round" or pending["kind"] == "void_deal":
            if pending["phase"] != self.phase:
                raise Refused(
                    HOUSE_VOID,
                    f"the {pending['kind']} was proposed in {pending['phase']}; the table is "
                    f"in {self.phase}: it is approved where it was proposed",
                    zh=f"{pending['kind']} 於 {pending['phase']} 提出；賭枱現處於 "
                    f"{self.phase}：須在提出的階段批准",
                )
            if pending["kind"] == "void_round":
                self._check_void_round_now(payload)
            else:
                self._check_void_deal_now(now)
            return
        if pending["kind"] == REPLACE:
            # The device proposed is still the one on the line, and still of the approved build.
            if self._replacement(pending["device"])[1] != pending["new"]:
                raise Refused(
                    HOUSE_FAULTS,
                    "another device is on the line since it was proposed",
                    zh="提出後線上已換了另一部設備",
                )
            return
        self._check_override(pending, now)

    def _check_reject_override(self, payload: Mapping[str, Any], now: float) -> None:
        self._check_decision(payload)

    def _apply_approve_override(self, payload: Mapping[str, Any], now: float) -> None:
        pending = self._pending()
        self.override = None
        approved_by = self._actor()
        reason = payload["reason"]
        self.emit("override.approved", **_decided(pending), approved_by=approved_by, reason=reason)
        if pending["kind"] == REPLACE:
            device, old, new = pending["device"], pending["old"], pending["new"]
            self.identified[device] = clone(new)
            self.emit(
                "device.replaced",
                device=device,
                old_serial=old.get("serial"),
                new_serial=new.get("serial"),
                make=new.get("make"),
                model=new.get("model"),
                firmware=new.get("firmware"),
                firmware_hash=new.get("firmware_hash"),
                reason=pending["reason"],
                proposed_by=pending["proposed_by"],
                approved_by=approved_by,
                approval_reason=reason,
            )
            return
        if pending["kind"] == "void_round" or pending["kind"] == "void_deal":
            decided = {
                "reason": pending["reason"],
                "proposed_by": pending["proposed_by"],
                "approved_by": approved_by,
                "approval_reason": payload["reason"],
            }
            if pending["kind"] == "void_round":
                self._void_round(now, **decided)
            else:
                self._void_deal(now, **decided)
            return
        self._apply_override(pending, now)

    def _apply_reject_override(self, payload: Mapping[str, Any], now: float) -> None:
        pending = self._pending()
        self.override = None
        self.emit(
            "override.rejected",
            **_decided(pending),
            rejected_by=self._actor(),
            reason=payload["reason"],
        )

    # ---- a device replaced by another of its approved build ---------------------------------

    def _replacement(self, device: str) -> tuple[Identity, Identity]:
        """The identity the table holds for `device` and the one now on the line, when the two
        differ by the serial alone and the build is approved; else Refused."""
        known = self.identified.get(device)
        if known is None:
            raise Refused(
                HOUSE_FAULTS,
                f"{device} is not an identified device of this table",
                zh=f"{device} 不是本枱已識別的設備",
            )
        held = self.faults.get(device)
        new = held.get("identity") if held is not None else None
        if not isinstance(new, dict):
            raise Refused(
                HOUSE_FAULTS,
                f"{device}: no other device is on the line in its place",
                zh=f"{device}：線上沒有另一部設備代替它",
            )
        if not new.get("approved") or new.get("approval") == "not listed":
            raise Refused(
                HOUSE_FAULTS,
                f"{device}: the device on the line is not approved",
                zh=f"{device}：線上的設備未獲批准",
            )
        changed = sorted(k for k in REPLACEABLE if known.get(k) != new.get(k))
        if changed != ["serial"]:
            what = ", ".join(k for k in changed if k != "serial") or "nothing"
            raise Refused(
                HOUSE_FAULTS,
                f"{device}: a replacement is the same make, model and firmware with another "
                f"serial; {what} differs",
                zh=f"{device}：更換的設備須為相同品牌、型號及韌體，只是序號不同；{what} 不同",
            )
        return known, new

    def _ready_replace_device(self) -> bool:
        return self.override is None

    def _check_replace_device(self, payload: Mapping[str, Any], now: float) -> None:
        device = text(payload, "device", HOUSE_FAULTS)
        text(payload, "reason", HOUSE_FAULTS)
        if self.override is not None:
            raise Refused(
                HOUSE_FAULTS,
                f"a {self.override['kind']} proposal is pending: decide on it first",
                zh=f"有待決定的提議（{self.override['kind']}）：請先作決定",
            )
        self._replacement(device)

    def _apply_replace_device(self, payload: Mapping[str, Any], now: float) -> None:
        device = payload["device"]
        old, new = self._replacement(device)
        self.propose(
            Replacement(
                kind=REPLACE,
                **self.proposed(HOUSE_FAULTS, now),
                device=device,
                reason=payload["reason"],
                old=clone(old),
                new=clone(new),
                old_serial=old.get("serial"),
                new_serial=new.get("serial"),
            )
        )

    # ---- voids -------------------------------------------------------------------------------

    def _pending_refusal(self, action: str) -> Refused | None:
        pending = self.override
        if pending is None or pending["kind"] not in VOIDS:
            return None
        if action in self.WHILE_VOID_PENDING:
            return None
        what = "deal" if pending["kind"] == "void_deal" else "round"
        return Refused(
            HOUSE_VOID,
            f"a void of the {what} proposed by {pending['proposed_by']} waits for a second "
            f"supervisor: {action} waits for the decision",
            zh=f"{pending['proposed_by']} 提出的作廢（{'發牌' if what == 'deal' else '本局'}）"
            f"待第二位主任決定：{action} 須等候決定",
        )

    def _ready_void_round(self) -> bool:
        return self.override is None

    def _check_void_round(self, payload: Mapping[str, Any], now: float) -> None:
        self._check_void_round_now(payload)
        if self.override is not None:
            raise Refused(
                HOUSE_VOID,
                f"a {self.override['kind']} proposal is pending: decide on it first",
                zh=f"有待決定的提議（{self.override['kind']}）：請先作決定",
            )

    def _apply_void_round(self, payload: Mapping[str, Any], now: float) -> None:
        actor = self._actor()
        if not self.cards_known():
            # Nothing of the round is known to anyone: one supervisor voids it (H5).
            self._void_round(now, reason=payload["reason"], decided_by=actor)
            return
        self.propose(
            VoidRound(
                kind="void_round",
                **self.proposed(HOUSE_VOID, now),
                reason=payload["reason"],
                phase=self.phase,
                suspended=self.suspended,
            )
        )
        self._target = "PROPOSED"

    def _check_void_deal_now(self, now: float) -> None:
        """What a void of the deal needs whoever decides it (the game's)."""
        raise Refused(HOUSE_VOID, "this game has no void of the deal", zh="此遊戲沒有作廢發牌")

    def _void_deal(self, now: float, **decided: Any) -> None:
        raise NotImplementedError

    def _resume(self, now: float) -> None:
        pending = self.override
        if pending is not None and pending["kind"] == "void_round":
            # The round resumes: the void proposed while it was held lapses, journaled.
            self.override = None
            self.emit("override.lapsed", **_decided(pending))
        super()._resume(now)

    def _check_override(self, pending: GameProposal, now: float) -> None:
        """The proposal still holds when the supervisor decides (raise Refused if not)."""

    def _apply_override(self, pending: GameProposal, now: float) -> None:
        raise NotImplementedError

    # Each action's check, effect and readiness, bound here by name once and for all (the
    # engine merges the layers' tables, the game's last: `Engine.hooks`).
    HOOKS: ClassVar[Mapping[str, Hooks]] = bind(
        approve_override=Hooks(
            check=_check_approve_override,
            apply=_apply_approve_override,
            ready=_ready_approve_override,
        ),
        reject_override=Hooks(
            check=_check_reject_override, apply=_apply_reject_override, ready=_ready_reject_override
        ),
        replace_device=Hooks(
            check=_check_replace_device, apply=_apply_replace_device, ready=_ready_replace_device
        ),
        void_round=Hooks(check=_check_void_round, apply=_apply_void_round, ready=_ready_void_round),
    )
