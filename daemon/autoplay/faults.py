"""The device faults a round may meet, injected through the simulators' control channel where
they strike (once a round), and remembered until the supervisor puts the device right."""

from __future__ import annotations

from daemon.autoplay.base import Script

# (device, fault, where it strikes): the faults a faulty round may meet.
THIRTEEN_FAULTS = (
    ("shuffler", "wrong_count", "shuffle"),
    ("shuffler", "jam", "shuffle"),
    ("shuffler", "lid_open", "betting"),
    ("shuffler", "power_lost", "shuffle"),
    ("dice_shaker", "die_out_of_cup", "shake"),
    ("dice_shaker", "die_out_of_cup*3", "shake"),
    ("dice_shaker", "unplug", "shake"),
    ("shoe_reader", "shoe_removed", "deal"),
    ("shoe_reader", "misread", "deal"),
    ("shoe_reader", "face_up", "deal"),
    ("shoe_reader", "duplicate_card", "deal"),
)
PAIGOW_FAULTS = (
    ("dice_shaker", "die_tilted", "shake"),
    ("dice_shaker", "die_out_of_cup*3", "shake"),
    ("dice_shaker", "shaker_detached", "betting"),
    ("dice_shaker", "unplug", "shake"),
)
CONDITIONS = frozenset({"lid_open", "shoe_removed", "shaker_detached", "reader_blocked"})


class FaultInjection(Script):
    """Injecting this round's fault."""

    async def inject(self, device: str, fault: str) -> None:
        self.summary.played[f"{device}:{fault}"] += 1
        if fault == "unplug":
            await self.control_request({"op": "unplug", "device": device})
            self._conditions.append((device, "unplug"))
            return
        times = 1
        if fault.endswith("*3"):
            fault, times = fault[:-2], 3
        for _ in range(times):
            await self.control_request({"op": "inject", "device": device, "fault": fault})
        if fault in CONDITIONS:
            self._conditions.append((device, fault))
            # A door or lid opened holds the table as soon as the device reports it.
            await self.wait(lambda: self.proc.phase in ("HOLD", "TILT"), f"{device}: {fault}")

    async def strike(self, where: str) -> None:
        """Inject this round's fault if it strikes here (once a round)."""
        fault = self.plan.fault
        if fault is not None and fault[2] == where and not self._struck:
            self._struck = True
            await self.inject(fault[0], fault[1])
