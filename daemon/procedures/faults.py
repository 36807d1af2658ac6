"""HOLD and TILT: the faults that stop play in every game until a supervisor clears them.

TILT is a device fault (jam, wrong card count, misread, invalid dice more than twice in a row);
HOLD is a door, lid or shoe open, or a link lost. Both remember the phase they suspended. A
device reports healthy (`device_healthy`), then only a supervisor clears (`clear_hold`,
`clear_tilt`) to resume that exact phase, or voids the round (`void_round`). The transitions
are data (`common.fault_transitions`); this is the code each action runs.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, Literal

from daemon.procedures.common import HOUSE_FAULTS
from daemon.procedures.engine import Engine
from daemon.procedures.payload import Refused, text


class WithFaults(Engine):
    def _suspend(self, now: float) -> None:
        if self.suspended is None:
            self.suspended = self.phase
            self.resume_to = self.phase
            self._on_suspend(now)

    def _check_fault_reported(self, payload: Mapping[str, Any], now: float) -> None:
        text(payload, "device", HOUSE_FAULTS)
        text(payload, "fault", HOUSE_FAULTS)

    def _apply_fault_reported(self, payload: Mapping[str, Any], now: float) -> None:
        self._latch(payload["device"], payload["fault"], "tilt", now)
        self.emit("table.tilted", device=payload["device"], fault=payload["fault"])

    _check_door_opened = _check_fault_reported

    def _apply_door_opened(self, payload: Mapping[str, Any], now: float) -> None:
        self._latch(payload["device"], payload["fault"], "hold", now)
        self.emit("table.held", device=payload["device"], fault=payload["fault"])

    def _check_link_lost(self, payload: Mapping[str, Any], now: float) -> None:
        text(payload, "device", HOUSE_FAULTS)

    def _apply_link_lost(self, payload: Mapping[str, Any], now: float) -> None:
        self._latch(payload["device"], "link lost", "hold", now)
        self.emit("table.held", device=payload["device"], fault="link lost")

    def _apply_recovered(self, payload: Mapping[str, Any], now: float) -> None:
        # Nothing is broken, but nobody has looked: a supervisor clears before play goes on.
        self._suspend(now)
        self.faults["table"] = {"fault": "restart", "kind": "hold", "healthy": True, "since": now}
        self.emit("table.recovered", phase=self.suspended)

    def _latch(self, device: str, fault: str, kind: Literal["hold", "tilt"], now: float) -> None:
        self._suspend(now)
        self.faults[device] = {"fault": fault, "kind": kind, "healthy": False, "since": now}

    def tilt(self, device: str, fault: str, now: float, resume_to: str | None = None) -> None:
        """A fault found in a device's own fact (wrong count, misread): the caller's transition
        must lead to TILT. `resume_to` overrides the phase a supervisor's clear returns to."""
        self._latch(device, fault, "tilt", now)
        if resume_to is not None:
            self.resume_to = resume_to
        self.emit("table.tilted", device=device, fault=fault)

    def _check_device_healthy(self, payload: Mapping[str, Any], now: float) -> None:
        device = text(payload, "device", HOUSE_FAULTS)
        if device not in self.faults:
            raise Refused(HOUSE_FAULTS, f"{device} has no fault to clear")

    def _apply_device_healthy(self, payload: Mapping[str, Any], now: float) -> None:
        self.faults[payload["device"]]["healthy"] = True
        self.emit("device.healthy", device=payload["device"])

    def _check_clear(self, kind: str) -> None:
        sick = sorted(d for d, f in self.faults.items() if not f["healthy"])
        if sick:
            raise Refused(HOUSE_FAULTS, f"{', '.join(sick)} has not reported healthy")
        if kind == "hold" and any(f["kind"] == "tilt" for f in self.faults.values()):
            raise Refused(HOUSE_FAULTS, "a TILT is cleared with clear_tilt")

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
            faults=copy.deepcopy(self.faults),
        )
        self._target = target
        self.faults, self.suspended, self.resume_to = {}, None, None
        if exact:
            self._on_resume(str(target), now)
        else:
            self._on_redirect(str(target), now)

    def _check_void_round(self, payload: Mapping[str, Any], now: float) -> None:
        sick = sorted(d for d, f in self.faults.items() if not f["healthy"])
        if sick:
            raise Refused(HOUSE_FAULTS, f"{', '.join(sick)} has not reported healthy")
        text(payload, "reason", HOUSE_FAULTS)

    def _apply_void_round(self, payload: Mapping[str, Any], now: float) -> None:
        self.emit(
            "round.voided",
            reason=payload["reason"],
            suspended=self.suspended,
            faults=copy.deepcopy(self.faults),
        )
        self.faults, self.suspended, self.resume_to = {}, None, None
        self._on_void(now)
