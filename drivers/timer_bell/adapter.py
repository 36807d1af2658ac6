"""The timer bell to the procedure: told, never asked (the table's own clock is the authority,
DOMAIN R8), so none of its events is an input. `start` (re)starts the countdown with a warning
a minute before; `stop` cancels it; `ring` is the driver's own call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drivers.adapter import DeviceAdapter
from drivers.timer_bell.driver import TimerBellDriver


class TimerBellAdapter(DeviceAdapter):
    async def send(self, command: str, args: Mapping[str, Any]) -> None:
        driver = self.driver
        if command == "start" and isinstance(driver, TimerBellDriver):
            seconds = max(1, round(float(args.get("seconds", 0))))
            # A countdown still running would make this a double start: cancel it first.
            await driver.cancel_timer()
            await driver.start_timer(seconds, warn_before=min(60, seconds - 1))
            return
        if command == "stop" and isinstance(driver, TimerBellDriver):
            await driver.cancel_timer()
            return
        await super().send(command, args)
