"""The dice shaker to the procedure: a valid throw and an invalid one are both `dice_landed`
(the procedure shakes again, and tilts at the third invalid throw in a row: H3, R10); `shake`
is the driver's own call."""

from __future__ import annotations

from drivers.adapter import DeviceAdapter, ProcedureInput
from drivers.dice_shaker.driver import DiceInvalid, DiceThrown
from drivers.events import DriverEvent


class DiceShakerAdapter(DeviceAdapter):
    def input_for(self, event: DriverEvent) -> ProcedureInput | None:
        if isinstance(event, DiceThrown):
            return ProcedureInput("dice_landed", {"dice": list(event.dice), "valid": True})
        if isinstance(event, DiceInvalid):
            # The wire reads no dice for an invalid throw, so none are sent.
            invalid = {"valid": False, "reason": event.reason, "die": event.die}
            return ProcedureInput("dice_landed", invalid)
        return super().input_for(event)
