"""The pit supervisor: puts the devices right, waits for them to report healthy, then clears the
HOLD or TILT (or voids the round when it cannot be cleared). Once a card of the round is known a
void is two supervisors' (tabled H5): S1 proposes it, a second supervisor approves it."""

from __future__ import annotations

from daemon.autoplay.base import SUPERVISOR, AutoplayError, Script


class Supervisor(Script):
    async def supervise(self) -> None:
        """Put the devices right, wait for them to report healthy, then clear (or void)."""
        for device, fault in self._conditions:
            if fault == "unplug":
                await self.control_request({"op": "plug", "device": device})
            else:
                await self.control_request({"op": "clear", "device": device, "fault": fault})
        self._conditions.clear()
        faults = self.proc.faults
        suspended = self.proc.suspended
        if any(f.get("fault") == "link lost" for f in faults.values()):
            # The driver reconnects with backoff; the link coming up marks the device healthy.
            await self.wait(
                lambda: all(f.get("healthy") for f in self.proc.faults.values()),
                "a lost link to come back",
            )
        action = "clear_tilt" if self.proc.phase == "TILT" else "clear_hold"
        for _ in range(20):
            if self.proc.phase not in ("HOLD", "TILT"):
                return
            action = "clear_tilt" if self.proc.phase == "TILT" else "clear_hold"
            result = await self.table.act(
                action, SUPERVISOR, "supervisor", {"reason": "autoplay: device put right"}
            )
            if result["accepted"]:
                self.summary.supervisor[action] += 1
                # A card the reader got wrong mid-deal (misread, duplicate, out of phase, a read
                # lost) leaves a deal that cannot be put right in order: it is voided (Art. 4).
                shoe = faults.get("shoe_reader")
                if suspended == "DEALING" and shoe is not None and shoe.get("kind") == "tilt":
                    # Voided only with a misdeal on record (Art. 4); a reader that was blocked
                    # or restarted lost no card, and the deal goes on. A misread card the
                    # dealer saw may be entered by hand instead (the deal put right in order),
                    # if a supervisor approves it.
                    voidable = "void_deal" in self.proc.legal_actions("supervisor")
                    entered = (
                        getattr(self.proc, "misread", None) is not None
                        and self._misread_card is not None
                        and self.rng.random() < self.entered_share
                    )
                    self._untrusted_deal = voidable and not entered
                    if not entered:
                        self._misread_card = None
                return
            await self.table.wait_for(lambda: False, 0.05)
        result = await self.void("void_round", "autoplay: cannot clear")
        if not result["accepted"]:
            raise AutoplayError(f"the supervisor can neither clear nor void: {result}")
        self.summary.voided += 1
