"""HOLD and TILT: the faults that stop play in every game until a supervisor clears them.

TILT is a device fault (jam, wrong card count, misread, invalid dice more than twice in a row);
HOLD is a door, lid or shoe open, or a link lost. Both remember the phase they suspended. A
device reports healthy (`device_healthy`), then only a supervisor clears (`clear_hold`,
`clear_tilt`) to resume that exact phase, or voids the round (`void_round`). The transitions
are data (`common.fault_transitions`); this is the code each action runs.

What one supervisor may do alone (tabled H5, docs/security.md): hold the table (`hold_table`:
an emergency, a dispute, a suspicion; nothing is undone), clear a HOLD or TILT once the devices
are healthy (the round resumes exactly where it stopped, or a deck out of play is replaced), and
void a round of which no card is known yet (before the deal: the bets are returned, nobody has
seen an outcome). Once a card of the round is known, a void is a proposal that a second, named
supervisor approves (`daemon.procedures.overrides`); a settled round is never voided.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from daemon.procedures.checkpoint import clone
from daemon.procedures.common import HOUSE_FAULTS, HOUSE_VOID
from daemon.procedures.engine import Engine, Hooks, bind
from daemon.procedures.payload import Refused, text


def shuffle_fault(
    count: int, mode: str, foreign: int, unreadable: int, deck: int = 52
) -> str | None:
    """What is wrong with a shuffler's result, or None for a good one: the deck's count of known,
    distinct, genuine cards in random mode (DOMAIN R1-R2). The count alone does not say it: a
    foreign card counted among 52 is still a foreign card."""
    if foreign:
        return f"{foreign} foreign card(s)"
    if unreadable:
        return f"{unreadable} unreadable card(s)"
    if count != deck:
        return f"count {count}"
    if mode != "random":
        return f"mode {mode}"
    return None


class WithFaults(Engine):
    # A card fault the shoe reader reports of the deal (a card drawn out of phase or unread, a
    # second copy): a misdeal on record, which lets the deal be voided (Art. 4).
    DEAL_FAULTS: ClassVar[frozenset[tuple[str, str]]] = frozenset(
        {
            ("shoe_reader", "card_out_of_phase"),
            ("shoe_reader", "misread"),
            ("shoe_reader", "duplicate_card"),
        }
    )

    def _suspend(self, now: float) -> None:
        if self.suspended is None:
            self.suspended = self.phase
            self.resume_to = self.phase
            self._on_suspend(now)

    def _check_fault_reported(self, payload: Mapping[str, Any], now: float) -> None:
        text(payload, "device", HOUSE_FAULTS)
        text(payload, "fault", HOUSE_FAULTS)

    def _apply_fault_reported(self, payload: Mapping[str, Any], now: float) -> None:
        if self._deal_fault(payload["device"], payload["fault"]):
            self.misdeal = {"round": self.round_id, "fault": payload["fault"], "since": now}
        self._latch(payload["device"], payload["fault"], "tilt", now)
        identity = payload.get("identity")
        if isinstance(identity, Mapping):
            # The device now on the line, when it is not the one identified (a new serial):
            # what a replacement two supervisors approve would put in its place (`overrides`).
            on_line = {k: v for k, v in identity.items() if k != "device"}
            self.faults[payload["device"]]["identity"] = clone(on_line)
        self.emit("table.tilted", device=payload["device"], fault=payload["fault"])

    def _deal_fault(self, device: str, fault: str) -> bool:
        """A fault that leaves the deal under way without a record of where each card went: a
        card fault of the reader's, or reader events lost (a read among them)."""
        if self.phase != "DEALING":
            return False
        lost = device == "shoe_reader" and fault.endswith("event(s) missed")
        return lost or (device, fault) in self.DEAL_FAULTS

    _check_door_opened = _check_fault_reported

    def _apply_door_opened(self, payload: Mapping[str, Any], now: float) -> None:
        self._latch(payload["device"], payload["fault"], "hold", now)
        self.emit("table.held", device=payload["device"], fault=payload["fault"])

    def _check_link_lost(self, payload: Mapping[str, Any], now: float) -> None:
        text(payload, "device", HOUSE_FAULTS)

    def _apply_link_lost(self, payload: Mapping[str, Any], now: float) -> None:
        self._latch(payload["device"], "link lost", "hold", now)
        self.emit("table.held", device=payload["device"], fault="link lost")

    # The phases with no round on the table (nothing bet, dealt or shown), by game; a game
    # may narrow it (`between_rounds`).
    BETWEEN_ROUNDS: ClassVar[frozenset[str]] = frozenset()

    def between_rounds(self) -> bool:
        """Whether no round is in play: none begun, or the last one settled."""
        return self.phase in type(self).BETWEEN_ROUNDS and not self.faults

    def ready_after_restart(self, event: object) -> bool:
        return self._restart_ready

    _restart_ready = False

    def _apply_recovered(self, payload: Mapping[str, Any], now: float) -> None:
        # The runtime says how the last run ended (`stopped`: "clean" when its journal ends
        # with the table's own stop); the procedure says whether a round was in play.
        clean = payload.get("stopped") == "clean"
        self._restart_ready = clean and self.suspended is None and self.between_rounds()
        if self._restart_ready:
            reason = "stopped cleanly between rounds: ready to play"
            self.emit("table.recovered", phase=self.phase, held=False, reason=reason)
            return
        # Nothing is broken, but nobody has looked: a supervisor clears before play goes on.
        if clean:
            why = f"the table was stopped inside a round ({self.phase})"
        else:
            why = f"the table did not stop cleanly (a crash or power cut, in {self.phase})"
        reason = f"restarted: {why}; a supervisor checks the table before play goes on"
        self._suspend(now)
        self.faults["table"] = {"fault": reason, "kind": "hold", "healthy": True, "since": now}
        self.emit("table.recovered", phase=self.suspended, held=True, reason=reason)

    def _latch(self, device: str, fault: str, kind: Literal["hold", "tilt"], now: float) -> None:
        self._suspend(now)
        before = self.faults.get(device)
        self.faults[device] = {"fault": fault, "kind": kind, "healthy": False, "since": now}
        if before is not None and "identity" in before and fault != "link lost":
            # Still the same unit on the line (a restart, a door): what it is stays known. Once
            # its link is lost, the unit that comes back says again what it is.
            self.faults[device]["identity"] = before["identity"]

    def tilt(
        self,
        device: str,
        fault: str,
        now: float,
        resume_to: str | None = None,
        *,
        misdeal: bool = False,
    ) -> None:
        """A fault found in a device's own fact (wrong count, misread): the caller's transition
        must lead to TILT. `resume_to` overrides the phase a supervisor's clear returns to.
        `misdeal`: the fault leaves a deal the reader's record cannot put right (a duplicate
        card, a read lost), the misdeal on record that lets the deal be voided (Art. 4)."""
        if misdeal:
            self.misdeal = {"round": self.round_id, "fault": fault, "since": now}
        self._latch(device, fault, "tilt", now)
        if resume_to is not None:
            self.resume_to = resume_to
        self.emit("table.tilted", device=device, fault=fault)

    def _check_device_healthy(self, payload: Mapping[str, Any], now: float) -> None:
        device = text(payload, "device", HOUSE_FAULTS)
        if device not in self.faults:
            raise Refused(
                HOUSE_FAULTS, f"{device} has no fault to clear", zh=f"{device} 沒有待解除的故障"
            )

    def _apply_device_healthy(self, payload: Mapping[str, Any], now: float) -> None:
        self.faults[payload["device"]]["healthy"] = True
        self.emit("device.healthy", device=payload["device"])

    def _check_clear(self, kind: str) -> None:
        sick = sorted(d for d, f in self.faults.items() if not f["healthy"])
        if sick:
            raise Refused(
                HOUSE_FAULTS,
                f"{', '.join(sick)} has not reported healthy",
                zh=f"{', '.join(sick)} 尚未回報恢復正常",
            )
        if kind == "hold" and any(f["kind"] == "tilt" for f in self.faults.values()):
            raise Refused(
                HOUSE_FAULTS,
                "a TILT is cleared with clear_tilt",
                zh="故障停機（TILT）以「解除故障」解除",
            )

    def _check_clear_hold(self, payload: Mapping[str, Any], now: float) -> None:
        self._check_clear("hold")

    def _check_clear_tilt(self, payload: Mapping[str, Any], now: float) -> None:
        self._check_clear("tilt")

    def _apply_clear_hold(self, payload: Mapping[str, Any], now: float) -> None:
        self._resume(now)

    _apply_clear_tilt = _apply_clear_hold

    def _resume(self, now: float) -> None:
        target, exact = self.resume_to, self.resume_to == self.suspended
        self.emit(
            "table.resumed",
            phase=target,
            suspended=self.suspended,
            exact=exact,
            faults=clone(self.faults),
        )
        self._target = target
        self.faults, self.suspended, self.resume_to = {}, None, None
        if exact:
            self._on_resume(str(target), now)
        else:
            self._on_redirect(str(target), now)

    def _check_hold_table(self, payload: Mapping[str, Any], now: float) -> None:
        text(payload, "reason", HOUSE_FAULTS)

    def _apply_hold_table(self, payload: Mapping[str, Any], now: float) -> None:
        # Nothing is broken and nothing is undone: the round stands still until a supervisor
        # (this one or another) clears the HOLD, and resumes exactly where it stopped.
        actor = self._input.actor if self._input is not None else "system"
        self._suspend(now)
        self.faults["table"] = {
            "fault": f"held by {actor}: {payload['reason']}",
            "kind": "hold",
            "healthy": True,
            "since": now,
        }
        reason = payload["reason"]
        self.emit("table.held", device="table", fault="held by a supervisor", reason=reason)

    def cards_known(self) -> bool:
        """Whether a card (or tile) of the round may be known to someone at the table: from the
        deal on, or once a deal of it was voided. Before that a void returns the bets and
        nobody has seen an outcome."""
        names = [p.name for p in type(self).Phase]
        phase = self.suspended or self.phase
        if getattr(self, "voided_deals", None):
            return True
        if "DEALING" not in names:
            return True
        return names.index(phase) >= names.index("DEALING")

    def _check_void_round_now(self, payload: Mapping[str, Any]) -> None:
        """What a void needs whoever decides it: healthy devices, a reason, an unsettled round."""
        sick = sorted(d for d, f in self.faults.items() if not f["healthy"])
        if sick:
            raise Refused(
                HOUSE_FAULTS,
                f"{', '.join(sick)} has not reported healthy",
                zh=f"{', '.join(sick)} 尚未回報恢復正常",
            )
        text(payload, "reason", HOUSE_FAULTS)
        if self.suspended == "ROUND_OVER":
            raise Refused(
                HOUSE_VOID,
                "the round is settled: a settled round is never voided",
                zh="本局已結算：已結算的一局永不作廢",
            )

    def _void_round(self, now: float, **decided: Any) -> None:
        """The round is void: journaled with who decided it and why, then the game's reset."""
        self.emit(
            "round.voided",
            suspended=self.suspended,
            faults=clone(self.faults),
            **decided,
        )
        self.faults, self.suspended, self.resume_to = {}, None, None
        self._target = "VOIDED"
        self._on_void(now)

    # Each action's check, effect and readiness, bound here by name once and for all (the
    # engine merges the layers' tables, the game's last: `Engine.hooks`).
    HOOKS: ClassVar[Mapping[str, Hooks]] = bind(
        fault_reported=Hooks(check=_check_fault_reported, apply=_apply_fault_reported),
        door_opened=Hooks(check=_check_door_opened, apply=_apply_door_opened),
        link_lost=Hooks(check=_check_link_lost, apply=_apply_link_lost),
        recovered=Hooks(apply=_apply_recovered),
        device_healthy=Hooks(check=_check_device_healthy, apply=_apply_device_healthy),
        clear_hold=Hooks(check=_check_clear_hold, apply=_apply_clear_hold),
        clear_tilt=Hooks(check=_check_clear_tilt, apply=_apply_clear_tilt),
        hold_table=Hooks(check=_check_hold_table, apply=_apply_hold_table),
    )
