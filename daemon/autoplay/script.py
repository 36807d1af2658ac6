"""The round loop: plan what each round meets, play it through the game's scripted dealer (the
supervisor stepping in whenever the table holds or tilts), and count it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from daemon.autoplay.base import AutoplayError, Held, Plan
from daemon.autoplay.faults import PAIGOW_FAULTS, THIRTEEN_FAULTS
from daemon.autoplay.paigow import PaiGowDealer
from daemon.autoplay.summary import Summary
from daemon.autoplay.supervisor import Supervisor
from daemon.autoplay.thirteen import ThirteenDealer


class Autoplay(ThirteenDealer, PaiGowDealer, Supervisor):
    """N scripted rounds on `table` (see the package's docstring)."""

    # ---- the run ------------------------------------------------------------------------------

    async def run(self) -> Summary:
        game = self.table.config.game
        for number in range(1, self.rounds + 1):
            self.plan = self._plan()
            self._struck = False
            self._settled = False
            started = time.perf_counter()
            if game == "thirteen":
                await self._play(self._thirteen_step)
            else:
                await self._play(self._paigow_step)
            elapsed = time.perf_counter() - started
            self.summary.rounds += 1
            self.summary.seconds.append(elapsed)
            self.progress(
                f"round {number}/{self.rounds}: {self.proc.phase} in {elapsed:.3f} s"
                + (f", fault {self.plan.fault[0]}:{self.plan.fault[1]}" if self.plan.fault else "")
            )
        return self.finish()

    def finish(self) -> Summary:
        return self.summary.read(self.table)

    def _plan(self) -> Plan:
        faults = THIRTEEN_FAULTS if self.table.config.game == "thirteen" else PAIGOW_FAULTS
        rng = self.rng
        return Plan(
            fault=rng.choice(faults) if rng.random() < self.fault_share else None,
            violations=rng.random() < self.violation_share,
            late=rng.random() < self.late_share,
            foul=rng.random() < self.foul_share,
        )

    async def _play(self, step: Callable[[str], Any]) -> None:
        steps = 0
        while not self._settled:
            steps += 1
            if steps > 2000:
                raise AutoplayError(f"the round does not end; phase {self.proc.phase}")
            phase = self.proc.phase
            try:
                if phase in ("HOLD", "TILT"):
                    await self.supervise()
                else:
                    await step(phase)
            except Held:
                continue  # a device fault came in between two steps; the supervisor is next
