"""What every part of the script shares: who acts, how a step is taken or attempted, how the
script waits for the table, and the state one round's script keeps."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from daemon.autoplay.control import AutoplayError, SimControl
from daemon.autoplay.equipment import devices_down
from daemon.autoplay.summary import Summary
from daemon.table import Table
from drivers.clock import SimulationClock

DEALER = "D1"
SUPERVISOR = "S1"
SECOND_SUPERVISOR = "S2"  # approves what undoes a round once a card of it is known (H5)
PLAYERS = ("P1", "P2", "P3", "P4", "P5", "P6")
ARRANGEMENT_SECONDS = 300.0
WAIT = 15.0  # real seconds a device may take to answer before the script gives up

SUPERVISOR_ACTIONS = frozenset({"clear_hold", "clear_tilt", "void_round", "void_deal"})


class Held(Exception):
    """A step was refused because a fault held the table meanwhile: supervise, then go on."""


@dataclass
class Plan:
    """What one round meets."""

    fault: tuple[str, str, str] | None = None
    violations: bool = False
    late: bool = False
    foul: bool = False


class Script:
    """The state of a scripted table and the steps every part of the script takes."""

    def __init__(
        self,
        table: Table,
        control: SimControl,
        *,
        rounds: int,
        seed: int | None = None,
        fault_share: float = 0.25,
        violation_share: float = 0.3,
        late_share: float = 0.1,
        foul_share: float = 0.15,
        entered_share: float = 0.5,
        clock: SimulationClock | None = None,
        progress: Callable[[str], None] | None = None,
        pace: float = 0.0,
    ) -> None:
        self.table = table
        self.control = control
        self.rounds = rounds
        self.rng = random.Random(seed)
        self.fault_share = fault_share
        self.violation_share = violation_share
        self.late_share = late_share
        self.foul_share = foul_share
        # The share of misread cards the dealer saw and enters by hand for a supervisor to
        # approve (the override); the others cannot be established and the deal is voided.
        self.entered_share = entered_share
        self.clock = clock
        self.progress = progress or (lambda _line: None)
        # Real seconds the dealer takes before each step (`tabled floor demo`'s tables play at
        # a person's pace, each its own); 0: as fast as the table answers.
        self.pace = pace
        self.summary = Summary(table.config.game, table.config.table_id)
        self.plan = Plan()
        self._struck = False
        self._conditions: list[tuple[str, str]] = []
        self._untrusted_deal = False
        self._misread_card: str | None = None
        self._settled = False
        self._tiles: list[str] = []
        self._tile_cursor = 0
        self._hands: dict[int, list[str]] = {}
        self._last_seen: dict[int, str] = {}

    @property
    def proc(self) -> Any:
        return self.table.procedure

    # ---- acting -----------------------------------------------------------------------------

    async def act(
        self, action: str, payload: dict[str, Any] | None = None, *, role: str = "dealer"
    ) -> dict[str, Any]:
        """A step the script takes as legal: AutoplayError if the table refuses it."""
        person = SUPERVISOR if role == "supervisor" else DEALER
        await self.take_time()
        result = await self.table.act(action, person, role, payload or {})
        if not result["accepted"]:
            if self.proc.phase in ("HOLD", "TILT") and action not in SUPERVISOR_ACTIONS:
                raise Held(action)
            raise AutoplayError(f"{action} refused in {self.proc.phase}: {result['violation']}")
        return result

    async def void(self, action: str, reason: str) -> dict[str, Any]:
        """`void_round` or `void_deal`: proposed by S1, approved by S2 when the table asks for
        a second supervisor (a card of the round is known); the table's answer to the last."""
        result = await self.table.act(action, SUPERVISOR, "supervisor", {"reason": reason})
        if not result["accepted"]:
            return result
        self.summary.supervisor[action] += 1
        pending = getattr(self.proc, "override", None)
        if pending is None or pending.get("kind") != action:
            return result
        approval = {"reason": f"autoplay: {reason} (checked by a second supervisor)"}
        result = await self.table.act("approve_override", SECOND_SUPERVISOR, "supervisor", approval)
        if result["accepted"]:
            self.summary.supervisor["approve_override"] += 1
        return result

    async def attempt(self, action: str, payload: dict[str, Any], what: str) -> None:
        """An attempted violation: the table must refuse it (and journal it)."""
        await self.take_time()
        result = await self.table.act(action, DEALER, "dealer", payload)
        if result["accepted"]:
            raise AutoplayError(f"the table accepted an attempted violation: {what}")
        self.summary.attempted[what] += 1

    async def take_time(self) -> None:
        """The dealer's pace: a real pause before a step (none at pace 0)."""
        if self.pace > 0:
            await asyncio.sleep(self.pace)

    async def wait(self, predicate: Callable[[], bool], what: str) -> None:
        if not await self.table.wait_for(predicate, WAIT):
            down = "; ".join(devices_down(self.table))
            raise AutoplayError(
                f"waited {WAIT:.0f} s for {what}; phase {self.proc.phase}"
                + (f"; {down}" if down else "")
            )

    async def control_request(self, request: dict[str, Any]) -> dict[str, Any]:
        reply = await self.control.request(request)
        if not reply.get("ok"):
            raise AutoplayError(f"simulator control {request}: {reply.get('error')}")
        return reply


__all__ = ["AutoplayError", "Held", "Plan", "Script"]
