"""The timer bell's driver: the countdown and the ring as coroutines, its warnings, expiry and
ring as driver events. Wire layout in `drivers.timer_bell.messages`.

The bell's countdown is a convenience for the people at the table; the daemon's own clock stays
the authority (DOMAIN R8). The driver keeps the deadline it asked for on its injected clock,
and logs how far the bell's expiry lands from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from drivers.base import DeviceDriver
from drivers.events import CommandRefused, DeviceError, DeviceFault, DriverEvent
from drivers.messages import COMMON_MESSAGES, DeviceEvent, Message, NakReason, message_set
from drivers.timer_bell.messages import (
    BELL_MESSAGES,
    FAULT_NAMES,
    BellRangEvent,
    CancelTimer,
    GetRemaining,
    Remaining,
    Ring,
    RingCause,
    StartTimer,
    TimerExpiredEvent,
    TimerWarningEvent,
)


@dataclass(frozen=True, slots=True)
class TimerWarning(DriverEvent):
    remaining: int  # seconds left by the bell's count


@dataclass(frozen=True, slots=True)
class TimerExpired(DriverEvent):
    """The bell's countdown ran out. The table acts on its own clock's deadline, not on this."""


@dataclass(frozen=True, slots=True)
class BellRang(DriverEvent):
    cause: str  # "expiry" or "command"


class TimerBellDriver(DeviceDriver):
    DEVICE: ClassVar[str] = "timer_bell"
    MESSAGES: ClassVar[Mapping[int, type[Message]]] = message_set(COMMON_MESSAGES, BELL_MESSAGES)
    FAULTS: ClassVar[Mapping[int, str]] = FAULT_NAMES

    def __init__(self, port: str, **kwargs: Any) -> None:
        super().__init__(port, **kwargs)
        self.deadline: float | None = None  # the host's own deadline, on the injected clock

    async def start_timer(self, seconds: int, warn_before: int = 0) -> None:
        """Start the bell's countdown. A countdown already running is a double start: it is
        reported as DeviceFault("double_start", 0) and CommandRefused(BUSY) is raised."""
        if not 1 <= seconds <= 0xFFFF or not 0 <= warn_before < seconds:
            raise ValueError(
                f"countdown of {seconds} s warning {warn_before} s before: seconds 1-65535, "
                "the warning 0 (none) or less than the countdown"
            )
        try:
            await self._command(StartTimer(seconds, warn_before))
        except CommandRefused as refused:
            if refused.reason == NakReason.BUSY:
                self._log.error("timer_bell.double_start", seconds=seconds)
                self._emit(DeviceFault(self.name, "double_start", 0))
            raise
        self.deadline = self.clock.now() + seconds
        # debug, like every accepted command: the table logs each command it sends
        self._log.debug("timer_bell.started", seconds=seconds, warn_before=warn_before)

    async def cancel_timer(self) -> None:
        await self._command(CancelTimer())
        self.deadline = None
        self._log.debug("timer_bell.cancelled")

    async def remaining(self) -> float | None:
        """Seconds left by the bell's count, or None when no countdown runs."""
        reply = await self._command(GetRemaining())
        if not isinstance(reply, Remaining):
            raise DeviceError(f"expected Remaining, the device answered {type(reply).__name__}")
        return reply.remaining_ms / 1000 if reply.running else None

    async def ring(self) -> None:
        await self._command(Ring())

    def _translate(self, event: DeviceEvent) -> Iterable[DriverEvent]:
        if isinstance(event, TimerWarningEvent):
            self._log.info("timer_bell.warning", remaining=event.remaining)
            return [TimerWarning(self.name, event.remaining)]
        if isinstance(event, TimerExpiredEvent):
            deadline, self.deadline = self.deadline, None
            drift = None if deadline is None else round(self.clock.now() - deadline, 3)
            self._log.info("timer_bell.expired", drift=drift)
            return [TimerExpired(self.name)]
        if isinstance(event, BellRangEvent):
            cause = RingCause(event.cause).name.lower()
            self._log.info("timer_bell.rang", cause=cause)
            return [BellRang(self.name, cause)]
        return super()._translate(event)
