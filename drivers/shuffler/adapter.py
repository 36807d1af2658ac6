"""The shuffler to the procedure: a shuffle's result is `shuffle_completed`, judged by the
procedure itself (so the faults the result reports are not fed again); `shuffle` starts a
random shuffle of the standard deck (the only shuffle the wire has, DOMAIN R2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from drivers.adapter import STANDARD_DECK, DeviceAdapter, ProcedureInput
from drivers.events import DriverEvent
from drivers.shuffler.driver import ShuffleCompleted, ShufflerDriver


class ShufflerAdapter(DeviceAdapter):
    RESULT_FAULTS: ClassVar[frozenset[str]] = frozenset(
        {"wrong_count", "foreign_card", "unreadable_card", "sort_mode"}
    )

    def input_for(self, event: DriverEvent) -> ProcedureInput | None:
        if isinstance(event, ShuffleCompleted):
            # The result names its mode ("random", "sort", "mode_7"); the sort_mode fault that
            # may come with it restates it (and does not come when it is latched already).
            payload = {
                "count": event.count,
                "mode": event.mode,
                "unreadable": event.unreadable,
                "foreign": event.foreign,
            }
            return ProcedureInput("shuffle_completed", payload)
        return super().input_for(event)

    async def send(self, command: str, args: Mapping[str, Any]) -> None:
        driver = self.driver
        if command == "shuffle" and isinstance(driver, ShufflerDriver):
            # Only a random shuffle exists on the wire; the count expected is the deck's.
            await driver.shuffle(expected=STANDARD_DECK)
            return
        await super().send(command, args)
